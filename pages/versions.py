"""Versions page: a model across its versions — the metric with its 95% CI at each version, each version's
paired test against the previous one and against a reference version, and what changed between two versions.

Sections rerun on their own (``st.fragment``): the test, the correction or the reference redraw only the
tests; the two versions compared redraw only "what changed".
"""

from __future__ import annotations

import streamlit as st

from dashboard import charts, ui
from dashboard import kept as K
from dashboard import reproduce as R
from dashboard import state as S
from dashboard import tables as T
from dashboard import versions as V
from dashboard import workspaces as WS
from evalcore import workspace as W

TESTS, CORRECTIONS = ui.TESTS, ui.CORRECTIONS
UP_IDS, DOWN_IDS = "ver_improved_ids", "ver_regressed_ids"
#: What versions A and B show until the user chooses them (:func:`dashboard.versions.default_a` and ``default_b``).
AB_HELP = ("Until you choose, B is the newest version and A the one before it, following the checkpoints as they are "
           "added. Choose one and the other pairs with it: A the version just before the B you chose; B the newest "
           "other than the A you chose (the one before it when A is the newest). Versions you choose are kept (a "
           "reload, a restart, a link).")


def empty_state(ctx: S.Context, sr: V.Series) -> None:
    """No model with two versions: say how to record them (and offer the demo's checkpoints)."""
    if sr.left_out:  # first what hides the series the user recorded
        ui.show_warning("Runs with a model are left out for low coverage: " + ", ".join(repr(r) for r in sr.left_out)
                        + ". Include them at the top of the page (\"Include anyway in ★ and tests\") to see their "
                        "version series.")
    st.info("No model has two or more versions among the evaluated runs. A run joins a model's version series "
            "through its run info: a model name, and a step (a number: epoch, training step) or a version label. "
            "Set them on the Data page (run info), or record them from Python as a training script does:",
            icon=":material/timeline:")
    st.code(V.PYTHON_SNIPPET, language="python")
    if sr.singles:
        st.caption("Models with a single evaluated version so far:")
        st.text(", ".join(sr.singles))
    if ctx.ws.is_demo:
        st.button("Add the demo model's training checkpoints", key="ver_demo_series", type="primary",
                  icon=":material/add_chart:", on_click=V.add_demo_checkpoints,
                  help="Six earlier epochs of the demo's strong-128d model (synthetic), with their model, version "
                       "and step: a version series to explore here and on every page.")
    st.page_link(ui.PAGES["data"], label="Go to the Data page", icon=":material/upload_file:")


@st.fragment
def tests_section(ctx: S.Context, sr: V.Series, model: str, names: dict[str, str], metric: str, k: int) -> None:
    """Each version against the previous one and against the reference version (reruns on its own)."""
    st.subheader("Each version tested")
    runs = list(names)
    c1, c2, c3 = st.columns(3)
    with c1:
        reference = ui.bound_selectbox("Reference version", runs, S.SEL_VERSION_REFERENCE, scope="versions",
                                       format_func=names.get, default=runs[0], follow=True,
                                       help="Every version is also tested against this one.")
    ui.say_legacy((S.SEL_VERSION_REFERENCE,), (reference,), what="The reference version", offered=names,
               chosen=st.session_state.get(S.SEL_VERSION_REFERENCE) is not None, label=lambda r: names.get(r, r),
               restore=lambda old: st.session_state.update({S.SEL_VERSION_REFERENCE: old[0]}), button="Use it again",
               key="ver_ref_legacy")
    with c2:
        test = ui.test_picker("versions")
    with c3:
        correction = ui.correction_picker("versions", help="Applied within each table: across its pairs of this metric@k.")
    out = V.tests(ctx, sr, model, metric, k, reference, test, correction)
    if not out.ok:
        ui.show_error(out.error, prefix="The tests failed")
        return
    config = {"version": st.column_config.TextColumn("version", pinned=True),
              "difference": st.column_config.NumberColumn("difference", format="%+.4f"),
              "significant": st.column_config.CheckboxColumn("significant", width=76)}
    st.caption("Against the previous version")
    ui.dataframe(T.display_table(V.tests_view(out.value, names, "previous", higher_is_better=W.higher_is_better(metric))), hide_index=True, key="ver_prev",
                 column_config=config)
    st.caption("Against the reference version")
    ui.dataframe(T.display_table(V.tests_view(out.value, names, "reference", higher_is_better=W.higher_is_better(metric))), hide_index=True, key="ver_ref",
                 column_config=config)
    st.caption(f"Difference = the version − the one it is tested against (mean of the per-query differences, paired "
               f"by query id); 95% CI: percentile bootstrap, {S.TEST_RESAMPLES:,} resamples of the queries "
               f"(seed {S.CI_SEED}), the same "
               f"for every pair. p adjusted: {CORRECTIONS[correction]} correction within each table (the "
               f"{ui.plural(len(runs) - 1, 'pair')} of this model at this metric@k); significant when below 0.05. "
               "Reproduce with " + R.python_tests_call("evalcore.workspace.version_tests", test, correction) + ".")


@st.fragment
def changes_section(ctx: S.Context, names: dict[str, str], metric: str, k: int, label: str) -> None:
    """Two versions query by query: the queries that improved and regressed most (reruns on its own)."""
    if st.session_state.pop(V.GOTO, False):
        st.switch_page(ui.PAGES["queries"])
    st.subheader("Version A vs B: what changed")
    runs = list(names)
    c1, c2, c3 = st.columns([2, 2, 1])
    with c1:  # (only the user's choices are kept: S.SEL_VERSION_B is B as chosen, or None)
        run_a = ui.bound_selectbox("Version A", runs, S.SEL_VERSION_A, scope="versions", format_func=names.get,
                                   default=V.default_a(runs, st.session_state.get(S.SEL_VERSION_B)), follow=True,
                                   help=AB_HELP)
    with c2:
        run_b = ui.bound_selectbox("Version B", [r for r in runs if r != run_a], S.SEL_VERSION_B, scope="versions",
                                   format_func=names.get, default=V.default_b(runs, run_a), follow=True,
                                   help=AB_HELP)
    with c3:
        K.start("ver_top", S.SEL_VERSIONS_VIEW, "top", V.TOP, K.number(1, 100, integer=True), follow=True)
        top = int(st.number_input("Queries listed", min_value=1, max_value=100, step=1, key="ver_top",
                                  on_change=K.chose, args=("ver_top", S.SEL_VERSIONS_VIEW, "top")))
    ui.say_legacy((S.SEL_VERSION_A, S.SEL_VERSION_B), (run_a, run_b), chosen=V.ab_chosen(), what="Versions A and B",
               label=lambda r: names.get(r, r), restore=V.choose_ab, button="Compare them again", key="ver_legacy",
               offered=names)
    if V.ab_chosen():  # (else it follows them already)
        st.button("Follow the newest versions", key="ver_follow", on_click=V.follow_newest, icon=":material/update:",
                  help="Forgets the versions you chose: B the newest version and A the one before it again, "
                       "following the checkpoints as they are added.")
    out = V.changes(ctx, metric, k, run_a, run_b, top)
    if not out.ok:
        ui.show_error(out.error, prefix="The comparison failed")
        return
    ch = out.value
    m1, m2, m3 = st.columns(3)
    m1.metric("improved", ch.n_improved)
    m2.metric("unchanged", ch.n_unchanged)
    m3.metric("regressed", ch.n_regressed)
    st.caption(f"Queries where version B's {label} is better than / equal to / worse than version A's"
               + ("" if ch.higher_is_better else " (lower is better for this metric)")
               + (f"; {ui.plural(ch.n_unpaired, 'query', 'queries')} only one of them has are left out."
                  if ch.n_unpaired else "."))
    with_domains = bool((ch.per_query["domain"].astype(str) != "").any())  # (none: no empty column)
    l1, l2 = st.columns(2)
    for col, what, frame, key, ids_key in ((l1, "Improved most", ch.improved, "ver_improved", UP_IDS),
                                           (l2, "Regressed most", ch.regressed, "ver_regressed", DOWN_IDS)):
        with col:
            st.caption(what + " (select a row to open its drill-down)")
            st.session_state[ids_key] = frame["query_id"].astype(str).tolist()
            ui.dataframe(T.display_table(V.change_list(frame, domains=with_domains)), hide_index=True, key=key,
                         selection_mode="single-row",
                         on_select=lambda key=key, ids_key=ids_key: V.on_row_selected(key, ids_key, run_a, run_b),
                         column_config={"query_id": st.column_config.TextColumn("query_id", pinned=True),
                                        "B − A": st.column_config.NumberColumn("B − A", format="%+.4f")})
    listed = list(dict.fromkeys([*st.session_state[UP_IDS], *st.session_state[DOWN_IDS]]))
    if not listed:
        st.caption("No query changed between these two versions.")
        return
    o1, o2 = st.columns([2, 1], vertical_alignment="bottom")
    with o1:
        qid = st.selectbox("Query", listed, key="ver_query", help="A query of the two lists above.")
    with o2:
        st.button("Open its drill-down", key="ver_open", type="primary", on_click=V.open_query,
                  args=(qid, run_a, run_b))


ui.page_setup()
if st.session_state.pop(V.GOTO, False):
    st.switch_page(ui.PAGES["queries"])

st.title("Versions")
WS.watch()  # versions a training script adds meanwhile appear without a click
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)
sr = V.series(ctx)
for w in sr.warnings:  # e.g. model labels that differ only in case (two series)
    ui.show_warning(w)
if not sr.models():
    empty_state(ctx, sr)
    st.stop()

c1, c2, c3 = st.columns([2, 2, 1])
with c1:
    model = ui.bound_selectbox("Model", sr.models(), S.SEL_VERSION_MODEL, scope="versions", keep_other=True,
                               help="Models with two or more evaluated versions (runs with that model in their "
                                    "run info). A model you chose that has fewer for now stays your choice.")
metric, k = ui.metric_k_picker(ctx, "versions", columns=(c2, c3))
if (kept_model := st.session_state.get(S.SEL_VERSION_MODEL)) is not None and kept_model != model:
    st.caption(ui.md_escape(f"The model you chose, {kept_model!r}, has fewer than two evaluated versions for now: "
                            "shown again when it has two."))
label = ui.label_of(metric, k)
names = V.version_names(sr, model)
if len({S.aspect_of(ctx, r) for r in names}) > 1:
    ui.show_warning("The versions of this model are evaluated against different ground-truth aspects: a change "
                    "between them mixes the model and the ground truth.")
why, unsure = W.unsure_order(sr.table, model)
if unsure:
    ui.show_warning(V.unsure_order_text(why, unsure, model))
if sr.left_out:
    st.caption("Left out for low coverage (include them at the top of the page):")
    st.text(", ".join(sr.left_out))

out = V.curve(ctx, sr, model, metric, k)
if not out.ok:
    ui.show_error(out.error, prefix="The curve failed")
    st.stop()
cv = out.value
st.subheader(f"{label} across the versions")
look = V.model_looks(ctx).get(model)  # the model's hue on every chart (its versions on the Overview's curves)
ui.chart(charts.version_curve(cv.frame, x=cv.x, labels=cv.labels, by_step=cv.by_step, model=model,
                              metric_label=label, higher_is_better=W.higher_is_better(metric),
                              color=look.color if look is not None else None),
         key="ver_curve", name="versions_curve")
st.caption(("x = the versions' steps. " if cv.by_step else "x = the versions in order (step, else version label, "
            "else the order they were loaded; " + ("some versions share a step). " if why == "same step" else
                                                   "not every version has a step). "))
           + f"Line: mean {label} over the queries; band: {S.ci_caption()}.")

if len(sr.models()) > 1:
    K.start("ver_all_models", S.SEL_VERSIONS_VIEW, "all_models", False, K.flag, follow=True)
if len(sr.models()) > 1 and st.toggle("Every model on one chart", key="ver_all_models", on_change=K.chose,
                                      args=("ver_all_models", S.SEL_VERSIONS_VIEW, "all_models"),
                                      help="One line per model (its mean at each version), to compare how the "
                                           "models move; their bands and tests are each model's own, above."):
    every = [(m, V.curve(ctx, sr, m, metric, k)) for m in sr.models()]
    for m, o in every:
        if not o.ok:
            ui.show_error(o.error, prefix="The curve failed")
            st.text(f"(model: {m})")
    drawn = [(m, o.value.frame, o.value.labels, o.value.x if o.value.by_step else None) for m, o in every if o.ok]
    ui.chart(charts.models_curves(drawn, metric_label=label, higher_is_better=W.higher_is_better(metric),
                                  styles=V.model_looks(ctx)),
             key="ver_all_curve", name="versions_all_models")
    st.caption("x = the steps when every model's versions have them, else each model's versions in order "
               f"(1 = its first). Line: mean {label} over the queries of each model's versions.")

tests_section(ctx, sr, model, names, metric, k)
changes_section(ctx, names, metric, k, label)

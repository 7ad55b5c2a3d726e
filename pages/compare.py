"""Compare page: paired significance between runs, Tukey's HSD, per-query scatter, drill-down into a query.

Sections rerun on their own (``st.fragment``): changing the baseline redraws the table and the
pair view, not the runs × runs matrix; changing run B or the query redraws only the pair view.
"""

from __future__ import annotations

import html

import streamlit as st

from dashboard import analysis as A
from dashboard import charts, persist, ui
from dashboard import drilldown as D
from dashboard import picker as P
from dashboard import reproduce as R
from dashboard import state as S
from dashboard import tables as T
from dashboard import versions as VS
from evalcore import workspace as W
from evalcore.stats import win_tie_loss

GOTO = "compare_goto_query"
TESTS, CORRECTIONS = ui.TESTS, ui.CORRECTIONS
HSD_DESIGNS = {"paired": "paired by query (two-way ANOVA)", "independent": "independent groups (as ranx)"}
HSD_SHOWN = ["run_a", "run_b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "statistic", "p_value",
             "significant", "note"]


def on_point_selected() -> None:
    """Scatter selection: remember the query and open its drill-down (switch_page runs in the script, below)."""
    sel = st.session_state.get("cmp_scatter")
    points = (sel or {}).get("selection", {}).get("points", []) if sel else []
    for p in points:
        cd = p.get("customdata")
        if isinstance(cd, list):
            cd = cd[0] if cd else None
        if cd is not None:
            st.session_state[S.SEL_QUERY] = html.unescape(str(cd))  # the chart's text is escaped (ptext)
            st.session_state[S.SEL_RUN_A] = st.session_state.get(S.SEL_BASELINE)
            st.session_state[GOTO] = True
            return


def goto_drilldown(run_a: str, run_b: str) -> None:
    st.session_state[S.SEL_RUN_A] = run_a
    st.session_state[S.SEL_RUN_B] = run_b
    st.session_state[GOTO] = True


@st.fragment
def pair_view(ctx: S.Context, runs: list[str], metric: str, k: int, label: str, run_a: str) -> None:
    """Run B against the baseline, query by query; the drill-down picker (reruns on its own)."""
    if st.session_state.pop(GOTO, False):
        st.switch_page(ui.PAGES["queries"])
    st.subheader("Per query: run A vs run B")
    others = [r for r in runs if r != run_a]
    c1, c2 = st.columns(2)
    with c1:
        st.caption("Run A (x axis)")
        st.text(f"the baseline: {run_a}")
    # run A of this view is the baseline: the shared selection (the drill-down, the URL) says so too
    st.session_state[S.SEL_RUN_A] = run_a
    with c2:
        run_b = ui.bound_selectbox("Run B (y axis)", others, S.SEL_RUN_B, scope="compare")
    pair_key = f"{ctx.eval_key}:{metric}:{k}:{run_a}:{run_b}"
    pf = S.memo("pair:" + pair_key,
                lambda: D.pair_frame(S.metric_slice(ctx, metric, k), metric=metric, k=k, run_a=run_a, run_b=run_b))
    higher = W.higher_is_better(metric)
    w, t, lo = S.memo("wtl:" + pair_key, lambda: win_tie_loss(pf["a"], pf["b"]))
    w, lo = T.better_worse(w, lo, higher_is_better=higher)
    m1, m2, m3 = st.columns(3)
    m1.metric("B wins", w)
    m2.metric("ties", t)
    m3.metric("B loses", lo)
    st.caption("Counts of queries where run B's value is " + ("above / equal to / below run A's." if higher else
               "below / equal to / above run A's (lower is better for this metric).")
               + (T.one_sided_text(*S.memo("onesided:" + pair_key, lambda: D.one_sided(
                   S.metric_slice(ctx, metric, k), metric=metric, k=k, run_a=run_a, run_b=run_b)))
                  if T.paired_only(metric) else ""))
    s1, s2 = st.columns([3, 2])
    with s1:
        ui.chart(S.memo("fig:scatter:" + pair_key,
                        lambda: charts.pair_scatter(pf, run_a=run_a, run_b=run_b, metric_label=label)),
                 key="cmp_scatter", name="per_query_scatter", on_select=on_point_selected, selection_mode="points")
        st.caption(f"Points {'above' if higher else 'below'} the diagonal: B is better on that query. Click a point "
                   "to open its drill-down."
                   + (f" {len(pf):,} queries: grey = how many queries fall there; the points are the "
                      f"{charts.SCATTER_POINTS} where the runs differ most." if len(pf) > charts.SCATTER_POINTS
                      else T.overlap_text(len(pf), *S.memo("overlap:" + pair_key, lambda: charts.shared_points(pf)))))
    with s2:
        ui.chart(S.memo("fig:hist:" + pair_key,
                        lambda: charts.diff_histogram(pf, run_a=run_a, run_b=run_b, metric_label=label)),
                 key="cmp_hist", name="difference_histogram")

    worst = S.memo("worst:" + pair_key,  # (B's worst: the lowest B − A, the highest where lower is better)
                   lambda: pf.assign(worse=-pf["difference"] if not higher else pf["difference"]).sort_values(
                       ["worse", "query_id"], kind="mergesort")["query_id"].tolist())
    st.caption(f"Drill-down: the {ui.plural(len(worst), 'query', 'queries')} sorted by B − A, worst first")
    # another pair (or metric@k) chosen here: the box starts at its worst query (it kept the earlier one). A pair
    # changed on another page is no choice made here: the query chosen there stays (cmp_shown_pair is dropped when
    # the page is entered, below)
    shown_pair = f"{metric}:{k}:{run_a}:{run_b}"
    if st.session_state.get("cmp_shown_pair", shown_pair) != shown_pair and worst:
        st.session_state[S.SEL_QUERY] = worst[0]
    st.session_state["cmp_shown_pair"] = shown_pair
    P.query_box(worst, scope="compare", label="Query (B − A, worst first)")
    # a callback: the flag is set before the rerun, which takes it and switches page (switching here left
    # the flag behind, and the next visit to Compare bounced to Queries)
    st.button("Open its drill-down", key="cmp_open", type="primary", on_click=goto_drilldown, args=(run_a, run_b))


@st.fragment
def tukey_hsd(ctx: S.Context, runs: list[str], metric: str, k: int) -> None:
    """Tukey's HSD of the compared runs (reruns on its own when the design changes)."""
    st.subheader("All runs at once: Tukey's HSD")
    design = ui.bound_selectbox("Design", list(HSD_DESIGNS), S.SEL_HSD_DESIGN, scope="compare",
                                format_func=HSD_DESIGNS.get,
                                help="Paired: queries are blocks (two-way ANOVA error), the design of the paired "
                                     "tests above. Independent: the runs' values as independent groups "
                                     "(scipy.stats.tukey_hsd), as ranx.")
    hsd = A.hsd(ctx, metric, k, design, runs=runs)
    if hsd.ok:
        ui.dataframe(T.display_table(hsd.value[HSD_SHOWN].rename(columns={
            "diff": "difference (B − A)", "ci_low": "95% CI low", "ci_high": "95% CI high", "statistic": "q",
            "p_value": "p-value"})), hide_index=True, key="cmp_hsd", column_config={
                "run_a": st.column_config.TextColumn("run_a", pinned=True)})
        st.caption("Every pair of the compared runs tested at once with the studentized range q; the p-values hold "
                   "a family-wise error rate of 0.05 over all the pairs of this metric@k (no further correction); "
                   "the intervals are simultaneous. Only queries with a value for every run take part (n).")
    else:
        ui.show_error(hsd.error, prefix="Tukey's HSD failed")


@st.fragment
def against_baseline(ctx: S.Context, runs: list[str], metric: str, k: int, label: str, cmp, mkey: str) -> None:
    """The table of every run against the chosen baseline, then the pair view (reruns on its own)."""
    # a baseline not among the runs compared (an earlier checkpoint chosen on the Overview...): another one shown,
    # the user's choice kept for the other pages until one is chosen here
    baseline = ui.bound_selectbox("Baseline", runs, S.SEL_BASELINE, scope="compare", keep_other=True,
                                  help="The run the table below compares every other run with; run A of the "
                                       "per-query view.")
    cov = S.coverage(ctx).set_index("run")["coverage"]
    rows = S.memo(f"vsbase:{mkey}:{baseline}", lambda: D.against_baseline(cmp, baseline))
    shown = S.memo(f"vsbase_shown:{mkey}:{baseline}", lambda: T.baseline_view(rows, coverage=cov, label=label,
                                                                            higher_is_better=W.higher_is_better(metric)))
    ui.dataframe(T.display_table(shown), hide_index=True, key="cmp_table", column_config={
        "run": st.column_config.TextColumn("run", pinned=True),
        "run − baseline": st.column_config.NumberColumn("run − baseline", format="%+.4f"),
        "p adjusted": st.column_config.NumberColumn("p adjusted", width=72),  # no format: it reads as a p-value
        "significant": st.column_config.CheckboxColumn("significant", width=76),
    })
    st.caption(T.baseline_caption(rows["baseline mean"], metric=metric))
    st.caption(f"95% CI of the difference: percentile bootstrap, {S.TEST_RESAMPLES:,} resamples of the queries "
               f"(seed {S.CI_SEED}), the same for every pair. p adjusted: the test's p-value after the correction across all pairs; "
               "significant when below 0.05. The interval is neither the test nor corrected for the other pairs: "
               "it can exclude 0 next to a run that is not significant (the note says why). Wins/ties/losses: "
               "queries where the run beats / equals / loses to the baseline.")
    pair_view(ctx, runs, metric, k, label, baseline)


ui.page_setup()
if st.session_state.pop(GOTO, False):
    st.switch_page(ui.PAGES["queries"])
if "cmp_runs" not in st.session_state:
    # the page is entered (Streamlit drops the state of a widget not drawn in the last run: "Runs compared" was
    # not on the screen): the pair and the query may have been chosen on another page, the pair view starts there
    st.session_state.pop("cmp_shown_pair", None)

st.title("Compare runs")
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)

in_use = S.aspects_in_use(ctx)
aspect, mix = None, False
if len(in_use) > 1:
    a1, a2 = st.columns([3, 2])
    with a1:
        aspect = ui.bound_selectbox("Compare the runs evaluated against the aspect", in_use, S.SEL_ASPECT,
                                    scope="compare")
    with a2:
        if "cmp_mix" not in st.session_state:  # entering the page: the user's choice, kept (a reload, a restart)
            st.session_state["cmp_mix"] = st.session_state.get(S.SEL_MIX_ASPECTS) is True
        mix = st.toggle("Compare across aspects anyway", key="cmp_mix",
                        on_change=lambda: st.session_state.update({S.SEL_MIX_ASPECTS: st.session_state["cmp_mix"]}),
                        help="Runs judged against different ground truths: their differences mix the runs and "
                             "the ground truths.")
    if mix:
        ui.show_warning("Comparing runs evaluated against different ground-truth aspects: a difference mixes the "
                        "runs and the ground truths.")
comparable = S.comparable_runs(ctx, aspect=aspect, mix=mix)
# the runs tested: every pair of them is one family of the correction (as the Versions page tests one model's)
# The user's choice is a shared selection (S.SEL_CMP_RUNS: another visit, a reload, a new tab, the workspace's
# ui_state); runs renamed since follow it (dataops.follow_rename), runs gone are dropped. When the comparable runs
# change (another aspect, a run logged or let in), the choice keeps its runs still there (a run logged meanwhile is
# offered, not added: the family of the correction stays the user's); untouched, or with fewer than two of them
# here, the default is shown (the choice stays, for the runs it was made among: another aspect's look erased it).
own = st.session_state.get(S.SEL_CMP_RUNS)
if "cmp_runs" not in st.session_state or st.session_state.get("cmp_runs_of") != comparable:
    if own is not None:  # runs removed from the workspace leave the choice (a run of another aspect stays in it)
        names = {r.name for r in ctx.ws.runs}
        own = st.session_state[S.SEL_CMP_RUNS] = [r for r in own if r in names]
    before = [r for r in (own or []) if r in comparable]
    if own is not None and len(before) >= 2:
        seen = st.session_state.get("cmp_runs_of")  # None: not in this session (a logged run cannot be told)
        st.session_state["cmp_runs_new"] = [] if seen is None else [
            r for r in comparable if r not in seen or r in st.session_state.get("cmp_runs_new", [])]
        st.session_state["cmp_runs"] = before
    else:  # (a choice among other runs, another aspect's, stays the user's: it comes back with those runs)
        st.session_state["cmp_runs"] = VS.default_compared(comparable, ctx.ws.runs)
        st.session_state["cmp_runs_new"] = []
    st.session_state["cmp_runs_of"] = comparable
chosen = set(st.multiselect(
    "Runs compared", comparable, key="cmp_runs",
    on_change=lambda: st.session_state.update({S.SEL_CMP_RUNS: list(st.session_state["cmp_runs"]),
                                               "cmp_runs_new": []}),
    help="Every pair of these runs is tested, and the correction for multiple comparisons runs over those pairs: "
         "the more runs, the more pairs and the stricter each test. With more than "
         f"{VS.COMPARE_ALL_UP_TO} runs the latest version of each model is chosen at first."))
persist.publish()  # the workspace remembers the choice (publish runs on every rerun of any page too)
new_runs = [r for r in st.session_state.get("cmp_runs_new", []) if r in comparable and r not in chosen]
if new_runs:
    st.caption("New since your choice, not compared: " + ", ".join(ui.md_escape(r) for r in new_runs)
               + " (add them above).")
runs = [r for r in comparable if r in chosen]
if len(comparable) >= 2 and len(runs) < 2:
    st.info("Choose at least two runs to compare.", icon=":material/info:")
    st.stop()
if len(runs) < 2:
    st.info("Fewer than two runs to compare" + (" (runs left out for low coverage can be included above)"
                                               if S.excluded_runs(ctx) else "") + ".", icon=":material/info:")
    st.stop()

c1, c2, c3, c4 = st.columns(4)
metric, k = ui.metric_k_picker(ctx, "compare", columns=(c1, c2))
with c3:
    test = ui.test_picker("compare")
with c4:
    correction = ui.correction_picker("compare", help="Multiple-comparison correction across all pairs of the runs "
                                                      "compared.")
label = ui.label_of(metric, k)

out = A.comparison(ctx, metric, k, test, correction, runs=runs)
if not out.ok:
    ui.show_error(out.error, prefix="Comparison failed")
    st.stop()
cmp = out.value
mkey = f"{ctx.eval_key}:{metric}:{k}:{test}:{correction}:{runs}"
matrix = S.memo("matrix:" + mkey, lambda: D.compare_matrix(cmp, runs))

st.subheader("Every pair of runs")
higher = W.higher_is_better(metric)
ui.chart(S.memo("fig:matrix:" + mkey, lambda: charts.compare_heatmap(matrix, metric_label=label,
                                                                    higher_is_better=higher)),
         key="cmp_matrix", name="pairs_matrix")
st.caption("Cell = row run − column run (mean of the per-query differences). Colour = which run is better and "
           "whether the difference is significant: deep blue / red = the row run is significantly better / worse; "
           "pale = not significant. "
           f"p = {TESTS[test]} p-value after {CORRECTIONS[correction]} correction across the "
           f"{ui.plural(len(runs) * (len(runs) - 1) // 2, 'pair')} of the {len(runs)} runs compared; "
           "* = significant at 0.05 after correction; p-values below 0.001 read <0.001." + charts.heat_text_note(len(runs)))
st.caption(R.compare_caption(R.compare_metric(metric, k), test, correction, runs=runs))  # the runs tested, in order

against_baseline(ctx, runs, metric, k, label, cmp, mkey)
tukey_hsd(ctx, runs, metric, k)

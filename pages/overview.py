"""Overview page: the leaderboard (mean and 95% CI per run × chosen metric@k), curves, diversity, exports."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import streamlit as st

from dashboard import analysis as A
from dashboard import charts, ui
from dashboard import exports as X
from dashboard import kept as K
from dashboard import persist as P
from dashboard import precision_recall as PR
from dashboard import reproduce as R
from dashboard import state as S
from dashboard import tables as T
from dashboard import versions as VS
from evalcore import workspace as W
from evalcore.aggregate import AGGREGATE_COLUMNS
from evalcore.coverage import coverage_text

#: The page's view options (CI in the cells, log k, bands, precision-recall, diversity k and α), one kept selection:
#: each shows its default, computed on every run (bands: up to three runs drawn), until the user sets it; then it is
#: kept (another page, a reload, a restart). Streamlit dropped them on leaving the page.
OV = S.SEL_OVERVIEW


def view(wkey: str, field: str, default: object, valid: Callable[[Any], bool]) -> None:
    """Start the view option ``wkey`` at the user's kept value, else its default (:func:`dashboard.kept.start`)."""
    K.start(wkey, OV, field, default, valid, follow=True)


def coincide_notes(frame: Any, key: str, *, drawn: list[str], x: str, same: str) -> None:
    """One caption per group of drawn runs whose lines coincide (:func:`dashboard.tables.coinciding_runs` on ``x``):
    two identical runs (a TREC file of an embedding run and the run itself) draw one line, which the chart hides."""
    for names in S.memo(key, lambda: T.coinciding_runs(frame[frame["run"].astype(str).isin(set(drawn))], x=x)):
        st.caption(ui.md_escape(f"{', '.join(names[:-1])} and {names[-1]} have {same}: their lines coincide (only "
                                "the last one drawn shows)."))


ui.page_setup()
st.title("Overview")
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)
if ctx.ws.is_demo:
    st.caption("Built-in demo: synthetic data. Load your own files on the Data page.")
ui.aspect_note(ctx)

summ = S.summary(ctx)
pairs = S.metric_k_pairs(ctx)
metrics = list(dict.fromkeys(m for m, _ in pairs))
ks = sorted({k for _, k in pairs})
runs = ctx.run_names
compared = S.comparable_runs(ctx, mix=True)  # ★ among runs with enough coverage, within each aspect
groups = {r: S.aspect_of(ctx, r) for r in runs}

# ---------------------------------------------------------------- leaderboard
st.subheader("Leaderboard")
labels = {ui.label_of(m, k): (m, k) for m, k in pairs}
defaults = [ui.label_of(m, k) for m, k in T.default_columns(pairs)]
c1, c2 = st.columns([4, 1])
with c1:
    # the user's columns are a shared selection (another page, a reload, a new tab); those no longer computed drop
    if "ov_columns" in st.session_state:  # the widget of this visit: its value, even emptied
        st.session_state["ov_columns"] = [c for c in st.session_state["ov_columns"] if c in labels]
    else:  # entering the page: the saved choice, else the default columns
        st.session_state["ov_columns"] = [c for c in st.session_state.get(S.SEL_OV_COLUMNS) or [] if c in labels
                                          ] or defaults
    chosen = st.multiselect("Columns (metric@k)", list(labels), key="ov_columns",
                            on_change=lambda: st.session_state.update({S.SEL_OV_COLUMNS: st.session_state["ov_columns"]}),
                            help="Every metric at every k is computed; choose what the table shows.")
with c2:
    view("ov_with_ci", "with_ci", True, K.flag)
    with_ci = st.toggle("95% CI in the cells", key="ov_with_ci", on_change=K.chose, args=("ov_with_ci", OV, "with_ci"))
cols = [labels[c] for c in chosen] or [labels[defaults[0]]]
text, best = S.memo(f"ovt:{ctx.eval_key}:{cols}:{compared}:{with_ci}",
                    lambda: T.overview_table(summ, columns=cols, runs=runs, eligible=compared, groups=groups,
                                             with_ci=with_ci))
cov = S.coverage(ctx).set_index("run")
lead = text.copy()
lead.insert(0, "coverage", [coverage_text(int(cov.loc[r, "n_with_results"]), int(cov.loc[r, "n_ground_truth"]))
                            for r in runs])
if len(S.aspects_in_use(ctx)) > 1:
    lead.insert(0, "aspect", [str(groups[r]) for r in runs])
st.dataframe(lead, key="overview_table", height=ui.rows_height(len(lead)), column_config={
    "_index": st.column_config.TextColumn("run", pinned=True),
    "coverage": st.column_config.TextColumn("coverage",
                                            help="Ground-truth queries the run returned results for"),
})
excluded = S.excluded_runs(ctx)
st.caption("★ = best run of the column among the compared runs" + (" of the same aspect" if len(
    S.aspects_in_use(ctx)) > 1 else "") + " (highest mean; lowest for first_rel_rank; none for the counts, "
    "judged@k and RBP's residual)" + (f"; not compared (low coverage): {len(excluded)} run(s)" if excluded else "")
    + f". Cells: mean over {ui.md_escape(ui.evaluated_text(ctx))} [{S.ci_caption()}]; the counts (num_ret, num_rel, num_rel_ret, "
    "num_q) are their total over the queries, as trec_eval's summary line, and gm_map the geometric mean of AP "
    "with its interval. Coverage: queries the run answered / ground-truth queries; a missing query counts as 0. "
    + R.overview_caption(ctx.settings, **R.evaluation_options(ctx)))
with st.expander("All numbers (mean, std, sem, CI, median, n) as a table"):
    ui.dataframe(T.display_table(summ.drop(columns=[c for c in AGGREGATE_COLUMNS if c in summ.columns])),
                 hide_index=True, key="overview_numbers", pin=("run",))
    declared = summ[summ["aggregation"] != "mean"] if "aggregation" in summ.columns else summ.iloc[:0]
    if len(declared):
        st.caption("Metrics summarised otherwise than by the mean (the mean above is that of the per-query values; "
                   "for gm_map, of their logs):")
        ui.dataframe(T.display_table(declared[["run", "metric", "k", "n", *AGGREGATE_COLUMNS]]), hide_index=True,
                     key="overview_declared")
X.leaderboard_exports(ctx, summ, cols, runs, compared)

# ---------------------------------------------------------------- reading guide
guide_k = 10 if 10 in ks else min((k for k in ks if k > 0), key=lambda k: (abs(k - 10), k), default=None)
# nDCG with exponential gains (seed 001's) where it is the nDCG computed: its runs placed in the bands too
guide_ndcg = "ndcg_exp" if "ndcg_exp" in metrics and "ndcg" not in metrics else "ndcg"
if guide_k is not None:
    with st.expander(f"How to read nDCG@{guide_k} and Recall@{guide_k}", icon=":material/lightbulb:"):
        st.caption(
            f"**nDCG@{guide_k}** (normalised discounted cumulative gain; Järvelin & Kekäläinen, ACM TOIS 2002) = "
            f"DCG@{guide_k} / IDCG@{guide_k}, DCG@k = Σ_i gain_i / log2(i + 1) over the top k, gain = the "
            + ("item's grade" if guide_ndcg == "ndcg" else "2^grade − 1 (ndcg_exp)")
            + "; IDCG = the DCG of the ideal order. **Recall@k** = relevant items in the top k / all "
            "relevant items. The bands below are common rules of thumb for @10"
            + ("" if guide_k == 10 else f" (shown at @{guide_k}, the computed k nearest to 10)")
            + "; they depend on the task and on how the ground truth was built, so compare runs rather than "
              "read a band in isolation.")
        gc = st.columns(2)
        for col, (label, frame) in zip(gc, T.reading_guide_frames().items(), strict=True):
            m = label.split("@")[0]
            with col:
                st.dataframe(frame.rename(columns={label: f"{m}@10"}), hide_index=True)  # (the bands: nDCG's)
                m = guide_ndcg if m == "ndcg" else m
                sel = summ[(summ["metric"].astype(str) == m) & (summ["k"] == guide_k)]
                rows = [{"run": str(r.run), f"{m}@{guide_k}": round(float(r.mean), 4),
                         "band": T.reading_band(label, r.mean)} for r in sel.itertuples(index=False)]
                if rows:
                    st.dataframe(rows, hide_index=True)

# ---------------------------------------------------------------- curves
st.subheader("Metrics vs k")
drawn = ui.runs_shown(ctx, runs, scope="overview", label="Runs drawn")  # (the curves and the precision-recall)
curve_metrics = [m for m in metrics if any(k > 0 for mm, k in pairs if mm == m)]
if curve_metrics:
    c1, c2, c3 = st.columns([2, 1, 1])
    with c1:
        # the chart's own choice: it starts at the metric of the other pages (Compare, Queries...) and follows it
        # until a metric is chosen here, which changes no other page (it changed their metric@k, and a metric
        # without a cutoff chosen there, which has no curve, was replaced by nDCG on merely visiting this page)
        shared = st.session_state.get(S.SEL_METRIC)
        metric = ui.bound_selectbox(
            "Metric", curve_metrics, S.SEL_OV_CURVE_METRIC, scope="overview", follow=True,
            default=shared if shared in curve_metrics else "ndcg" if "ndcg" in curve_metrics else None,
            help="The metric of the curves: the one chosen on the other pages (Compare, Queries, Versions...) until "
                 "you choose one here; a metric chosen here is the curves' own and is kept, the other pages keep "
                 "theirs.")
    with c2:
        view("ov_logx", "log_x", True, K.flag)
        log_x = st.toggle("Log k axis", key="ov_logx", on_change=K.chose, args=("ov_logx", OV, "log_x"))
    with c3:
        view("ov_bands", "bands", len(drawn) <= 3, K.flag)
        bands = st.toggle("95% CI bands", key="ov_bands", on_change=K.chose, args=("ov_bands", OV, "bands"),
                          help="Off by default beyond three runs (overlapping bands hide each other).")
    curve = S.memo(f"curve:{ctx.eval_key}:{metric}", lambda: T.curve_frame(summ, metric))
    low = S.low_coverage(ctx)
    skey, looks = VS.drawn_styles(ctx, drawn, low)  # a model's checkpoints along one hue, light to dark
    fig = S.memo(f"fig:curves:{ctx.eval_key}:{metric}:{log_x}:{bands}:{skey}",
                 lambda: charts.curves(curve, metric_label=metric, log_x=log_x, runs=drawn, bands=bands, flagged=low,
                                       styles=looks))
    ui.chart(fig, key="overview_curves", name=f"{metric}_vs_k")
    st.caption((f"{len(drawn)} of the {len(runs)} runs drawn (Runs drawn, above; the leaderboard has them all). "
                if len(drawn) < len(runs) else "")
               + "Click a run in the legend to hide its line" + (" and band" if bands else "") + ". "
               + ("Bands: " + S.ci_caption() + ". " if bands else "")
               + ("Dotted: a run with low coverage (each query it does not answer counts as 0)." if low else ""))
    coincide_notes(curve, f"coincide:{ctx.eval_key}:{metric}:{drawn}", drawn=drawn, x="k",
                   same="the same mean at every k")
else:
    st.info("The chosen metrics have no cutoff; no curve to draw.")

# ---------------------------------------------------------------- precision-recall
st.subheader("Precision–recall")
view("ov_pr", "pr", PR.in_settings(ctx), K.flag)
show_pr = st.toggle("Draw the precision–recall curve", key="ov_pr", on_change=K.chose, args=("ov_pr", OV, "pr"),
                    help="trec_eval's interpolated precision at the recall levels 0, 0.1, …, 1 (iprec_at_recall), "
                         "computed for this curve when it is not among the chosen metrics.")
if show_pr:
    with st.spinner("Interpolated precision at 11 recall levels…"):
        pr_out = PR.pr_data(ctx)
    for w in pr_out.warnings:
        if w not in ctx.eval_warnings:  # (those are said at the top of the page)
            ui.show_warning(w)
    if not pr_out.ok:
        ui.show_error(pr_out.error, prefix="Precision–recall curve not computed")
    else:
        pr = pr_out.value
        low = S.low_coverage(ctx)
        skey, looks = VS.drawn_styles(ctx, drawn, low)
        ui.chart(S.memo(f"fig:pr:{ctx.eval_key}:{skey}", lambda: charts.pr_curves(pr, runs=drawn, flagged=low,
                                                                                 styles=looks)),
                 key="overview_pr", name="precision_recall")
        st.caption(("One line per run drawn (Runs drawn, above)" if len(drawn) < len(runs) else "One line per run")
                   + ": at each recall level x, the mean over the evaluated queries of the interpolated "
                   "precision — the best precision at any rank where the run has reached recall x (trec_eval's "
                   "iprec_at_recall; 0 where it never does). Hover for the 95% CI and n.")
        coincide_notes(pr, f"coincide:pr:{ctx.eval_key}:{drawn}", drawn=drawn, x="recall",
                       same="the same interpolated precision at every recall level")

# ---------------------------------------------------------------- diversity
st.subheader("Diversity of the embedding runs")
if ctx.reference is not None:  # α-nDCG@k is judged against the reference's top-k at that k
    div_ks = [k for k in ks if k >= 2]
else:
    div_ks = sorted({k for k in ks if k >= 2} | {10})
if not any(W.has_embeddings(src) for src in ctx.ws.runs if src.name in ctx.runs):
    st.caption("ILD and α-nDCG need the items' vectors: they are shown here for runs built from embeddings "
               "(none is loaded).")
elif not div_ks:
    st.caption("Diversity needs a cutoff k of at least 2 (ILD@1 is always 0).")
else:
    dc1, dc2 = st.columns([1, 4])
    with dc1:
        # default: a cutoff the settings evaluate (10 if evaluated, else the largest below 10, else the smallest),
        # as `evaluate --diversity` uses the --k given; the keyed widget keeps a user's own choice
        evaluated = [k for k in div_ks if k in ks]
        below = [k for k in evaluated if k < 10]
        div_default = (10 if 10 in evaluated else below[-1] if below else evaluated[0] if evaluated
                       else 10 if 10 in div_ks else div_ks[0])
        view("ov_div_k", "div_k", div_default, K.one_of(div_ks))
        div_k = st.selectbox("Cutoff k of the diversity", div_ks, key="ov_div_k", on_change=K.chose,
                             args=("ov_div_k", OV, "div_k"),
                             help="From 2: a list of one item has no pair (ILD@1 is always 0).")
        view("ov_div_alpha", "div_alpha", W.DIVERSITY_ALPHA, lambda v: isinstance(v, float) and K.number(0.0, 1.0)(v))
        div_alpha = st.number_input("α of α-nDCG", min_value=0.0, max_value=1.0, step=0.1, format="%.2f",
                                    key="ov_div_alpha", on_change=K.chose, args=("ov_div_alpha", OV, "div_alpha"),
                                    help="1: plain nDCG (no penalty for redundancy); 0: only novel items count; "
                                         f"{W.DIVERSITY_ALPHA:g}: the seed's balance (the CLI's --diversity-alpha).")
    with st.spinner("Computing the diversity of the embedding runs…"):
        div = A.diversity(ctx, int(div_k), float(div_alpha))
    for name, message in div.errors.items():
        ui.show_error(message, prefix="Diversity not computed for a run")
        st.text(f"(run: {name})")
    if div.runs:
        dtext, _ = T.overview_table(div.summary, columns=[(m, int(div_k)) for m in W.diversity_metrics(div_alpha)],
                                    runs=list(div.runs), mark_best=False)
        st.dataframe(dtext, key="overview_diversity", column_config={"_index": st.column_config.TextColumn(
            "run", pinned=True)})
    with dc2:
        st.caption(
            f"Per run, mean [95% CI] over the evaluated queries. **ILD@{div_k}** (intra-list diversity; Ziegler "
            "et al., WWW 2005) = 2 / (|R|(|R| − 1)) · Σ_{i<j} (1 − cos(d_i, d_j)) over the |R| ≤ "
            f"{div_k} items listed, the mean pairwise cosine distance between the top {div_k} items, in the run's own "
            "embedding space (higher = more varied lists; 0 = near-duplicates, and also for a query with fewer than "
            "2 items listed, which counts 0 in the mean; each run is measured in its own space, so compare ILD "
            "across models with care). "
            f"**α-nDCG@{div_k}** (after Clarke et al., SIGIR 2008, with similarity in place of their sub-topics; "
            f"α = {float(div_alpha):g}) = Σ_i grade_i · (α + (1 − α) · novelty_i) / log2(i + 1) / IDCG, "
            "novelty_i = 1 − the item's highest cosine to an item ranked above it, clipped to [0, 1]; IDCG = "
            "nDCG's ideal, against the same ground truth as nDCG@k. So α-nDCG@k ≤ nDCG@k (linear gains), and the "
            "gap is the penalty for redundant results. "
            + R.diversity_caption(ctx.settings, k=int(div_k), alpha=float(div_alpha), **R.diversity_options(
                R.evaluation_options(ctx), runs=div.runs)))
    if div.without:
        st.text("No embeddings, not shown: " + ", ".join(div.without))

# ---------------------------------------------------------------- downloads
st.subheader("Downloads")
max_k = max(ctx.settings.k)
d1, d2, d3 = st.columns(3)
with d1:
    st.download_button("Report (JSON)", data=S.report_json(ctx, top_k=max_k), file_name="report.json",
                       mime="application/json", key="dl_report", on_click="ignore",
                       help="Metadata, coverage, aggregates per run, per-query values and top-k lists.")
with d2:
    st.download_button("Per-query table (CSV)", data=S.per_query_csv(ctx), file_name="per_query.csv",
                       mime="text/csv", key="dl_perquery", on_click="ignore",
                       help="run, query_id, domain, metric, k, value: every number of the dashboard is an "
                            "aggregation of this table.")
with d3:  # one button per run; beyond a few runs one, for the run chosen (137 buttons were a column as long as the page)
    listed = runs if len(runs) <= VS.COMPARE_ALL_UP_TO else [st.selectbox("Results per k of the run", runs,
                                                                            key="dl_results_run")]
    for i, run in enumerate(listed):
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", run) or "run"
        st.download_button(f"Results per k of {ui.md_escape(run)} (CSV)", data=S.results_csv(ctx, run),
                           file_name=f"{safe}_results.csv", mime="text/csv", key=f"dl_results_{i}",
                           on_click="ignore", help="Per k, mean and standard deviation of each metric.")

locked = P.locked()  # a folder this user cannot write: not recorded there (the Data page offers a copy)
if st.button("Record this evaluation in the workspace", key="ov_record", icon=":material/save:",
             disabled=locked is not None,
             help="Stores the per-query table, its settings and coverage in the workspace's catalogue (once per "
                  "distinct input), for Workspace.evaluations() / load_evaluation() in Python and "
                  "'evalcore workspace list'." + ("" if locked is None else f" Not here: {P.locked_text(locked)}.")):
    marked = P.evaluation_to_record(ctx.evaluation, ctx.ws)  # the inputs it was computed from, not those at the click
    done = P.write(lambda store: store.record_evaluation(marked, key="dashboard:" + ctx.eval_key))
    if done.ok:
        st.success(f"Recorded as evaluation {done.value} of the workspace: "
                   f"Workspace.open(...).load_evaluation({done.value}) reads it back."
                   + (f" The demo is read-only: it was saved in a copy of it, {ui.md_escape(done.created)}."
                      if done.created else ""), icon=":material/check_circle:")
    else:
        ui.show_error(done.error, prefix="Not recorded")

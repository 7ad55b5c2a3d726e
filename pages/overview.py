"""Overview page: mean and 95% CI per run × metric@k, metric-vs-k curves, downloads."""

from __future__ import annotations

import re

import streamlit as st

from dashboard import charts, ui
from dashboard import precision_recall as PR
from dashboard import state as S
from dashboard import tables as T
from evalcore import workspace as W
from evalcore.aggregate import AGGREGATE_COLUMNS

ui.page_setup()
st.title("Overview")
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)
if ctx.ws.is_demo:
    st.caption("Built-in demo: synthetic data. Load your own files on the Data page.")

summ = S.summary(ctx)
pairs = S.metric_k_pairs(ctx)
metrics = list(dict.fromkeys(m for m, _ in pairs))
ks = sorted({k for _, k in pairs})

# ---------------------------------------------------------------- table
st.subheader("Mean and 95% confidence interval per run")
c1, c2 = st.columns([2, 3])
with c1:
    show_metrics = st.multiselect("Metrics in the table", metrics, default=metrics, key="ov_metrics")
with c2:
    show_ks = st.multiselect("Cutoffs in the table", ks, default=ks, key="ov_ks",
                             format_func=lambda k: "no cutoff" if k == 0 else str(k))
cols = [(m, k) for m, k in pairs if m in show_metrics and k in show_ks]
text, best = S.memo(f"ovt:{ctx.eval_key}:{cols}",
                    lambda: T.overview_table(summ, columns=cols, runs=ctx.run_names))
st.dataframe(text, key="overview_table")
st.caption("★ = best run of the column (highest mean; lowest for first_rel_rank; none for the counts, judged@k and "
           "RBP's residual). Cells: mean [95% CI of the mean, Student t] over the evaluated queries of evalcore's "
           "per-query table; the counts (num_ret, num_rel, num_rel_ret, num_q) are their total over the queries, "
           "as trec_eval's summary line, and gm_map the geometric mean of AP with its interval.")
cov = ctx.evaluation.coverage
notes = []
for row in cov.itertuples(index=False):
    bits = []
    if row.n_missing:
        bits.append(f"{row.n_missing} ground-truth queries absent from the run (scored 0)")
    if row.n_ignored:
        bits.append(f"{row.n_ignored} run queries not in the evaluated ground truth (ignored)")
    if row.n_no_relevant:
        bits.append(f"{row.n_no_relevant} queries without a relevant document")
    if bits:
        notes.append(f"{row.run}: " + "; ".join(bits))
if notes:
    with st.expander("Coverage notes"):
        st.text("\n".join(notes))
with st.expander("All numbers (mean, std, sem, CI, median, n) as a table"):
    st.dataframe(T.display_table(summ.drop(columns=list(AGGREGATE_COLUMNS))), hide_index=True, key="overview_numbers")
    declared = summ[summ["aggregation"] != "mean"]
    if len(declared):
        st.caption("Metrics summarised otherwise than by the mean (the mean above is that of the per-query values; "
                   "for gm_map, of their logs):")
        st.dataframe(T.display_table(declared[["run", "metric", "k", "n", *AGGREGATE_COLUMNS]]), hide_index=True,
                     key="overview_declared")

# ---------------------------------------------------------------- reading guide
labels = {ui.label_of(m, k) for m, k in pairs}
guide = T.reading_guide_frames()
with st.expander("How to read nDCG@10 and Recall@10 (reading guide of seed 002)", icon=":material/lightbulb:"):
    st.caption("Rules of thumb from the user's metrics guide (seed 002); they depend on the task and on how the "
               "ground truth was built, so compare runs rather than reading the bands in isolation.")
    gc = st.columns(2)
    for col, (label, frame) in zip(gc, guide.items(), strict=True):
        with col:
            st.dataframe(frame, hide_index=True)
            if label in labels:
                m, k = label.split("@")
                sel = summ[(summ["metric"].astype(str) == m) & (summ["k"] == int(k))]
                rows = [{"run": str(r.run), label: round(float(r.mean), 4), "band": T.reading_band(label, r.mean)}
                        for r in sel.itertuples(index=False)]
                st.dataframe(rows, hide_index=True)

# ---------------------------------------------------------------- curves
st.subheader("Metrics vs k")
curve_metrics = [m for m in metrics if any(k > 0 for mm, k in pairs if mm == m)]
if curve_metrics:
    c1, c2, c3 = st.columns([2, 1, 1])
    with c1:
        metric = ui.bound_selectbox("Metric", curve_metrics, S.SEL_METRIC, scope="overview",
                                    default="ndcg" if "ndcg" in curve_metrics else None)
    with c2:
        log_x = st.toggle("Log k axis", value=True, key="ov_logx")
    with c3:
        st.caption("Click a run in the legend to hide its line and band.")
    curve = S.memo(f"curve:{ctx.eval_key}:{metric}", lambda: T.curve_frame(summ, metric))
    fig = S.memo(f"fig:curves:{ctx.eval_key}:{metric}:{log_x}",
                 lambda: charts.curves(curve, metric_label=metric, log_x=log_x, runs=ctx.run_names))
    st.plotly_chart(fig, key="overview_curves")
else:
    st.info("The chosen metrics have no cutoff; no curve to draw.")

# ---------------------------------------------------------------- precision-recall
st.subheader("Precision–recall")
show_pr = st.toggle("Draw the precision–recall curve", value=PR.in_settings(ctx), key="ov_pr",
                    help="trec_eval's interpolated precision at the recall levels 0, 0.1, …, 1 (iprec_at_recall), "
                         "computed for this curve when it is not among the chosen metrics.")
if show_pr:
    with st.spinner("Interpolated precision at 11 recall levels…"):
        pr = PR.pr_data(ctx)
    if isinstance(pr, str):
        ui.show_error(pr, prefix="Precision–recall curve not computed")
    else:
        st.plotly_chart(S.memo(f"fig:pr:{ctx.eval_key}", lambda: charts.pr_curves(pr, runs=ctx.run_names)),
                        key="overview_pr")
        st.caption("One line per run: at each recall level x, the mean over the evaluated queries of the interpolated "
                   "precision — the best precision at any rank where the run has reached recall x (trec_eval's "
                   "iprec_at_recall; 0 where it never does). Hover for the 95% CI and n.")

# ---------------------------------------------------------------- diversity
st.subheader("Diversity of the embedding runs")
div_ks = [k for k in ks if k > 0]
if not any(W.has_embeddings(src) for src in ctx.ws.runs if src.name in ctx.runs):
    st.caption("ILD and α-nDCG need the items' vectors: they are shown here for runs built from embeddings "
               "(none is loaded).")
else:
    dc1, dc2 = st.columns([1, 4])
    with dc1:
        div_k = st.selectbox("Cutoff k of the diversity", div_ks, index=div_ks.index(10) if 10 in div_ks else 0,
                             key="ov_div_k")
    with st.spinner("Computing the diversity of the embedding runs…"):
        div = S.diversity(ctx, int(div_k))
    for name, message in div.errors.items():
        ui.show_error(message, prefix="Diversity not computed for a run")
        st.text(f"(run: {name})")
    if div.runs:
        dtext, _ = T.overview_table(div.summary, columns=[(m, int(div_k)) for m in W.DIVERSITY_METRICS],
                                    runs=list(div.runs), mark_best=False)
        st.dataframe(dtext, key="overview_diversity")
    with dc2:
        st.caption(
            f"Per run, mean [95% CI] over the evaluated queries of: **ILD@{div_k}** (intra-list diversity, seed 002 "
            f"§6) — the mean pairwise cosine distance 1 − cos between the top {div_k} items, in the run's own "
            "embedding space (higher = more varied lists; 0 = near-duplicates). Each run is measured in its own "
            f"space, so compare ILD across models with care. **α-nDCG@{div_k}** (α = {W.DIVERSITY_ALPHA:g}, seed "
            "002 §7) — nDCG with the ground truth's grades as gains, each relevant item's gain scaled by "
            "α + (1 − α) · novelty, novelty = 1 − its highest cosine to an item ranked above it; same ideal as "
            "nDCG, so α-nDCG ≤ nDCG and the gap is the penalty for redundant results. Only runs built from "
            "embeddings have these (as `--diversity` on the command line).")
    if div.without:
        st.text("No embeddings, not shown: " + ", ".join(div.without))

# ---------------------------------------------------------------- downloads
st.subheader("Downloads")
max_k = max(ctx.settings.k)
d1, d2, d3 = st.columns(3)
with d1:
    st.download_button("Report (JSON)", data=S.report_json(ctx, top_k=max_k), file_name="report.json",
                       mime="application/json", key="dl_report",
                       help="Seed 001 §8 layout: metadata, coverage, aggregates per run, per-query values and "
                            "top-k lists.")
with d2:
    st.download_button("Per-query table (CSV)", data=S.per_query_csv(ctx), file_name="per_query.csv",
                       mime="text/csv", key="dl_perquery",
                       help="run, query_id, domain, metric, k, value: every number of the dashboard is an "
                            "aggregation of this table.")
with d3:
    for i, run in enumerate(ctx.run_names):
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", run) or "run"
        st.download_button(f"Per-k results CSV of run {i + 1}", data=S.results_csv(ctx, run),
                           file_name=f"{safe}_results.csv", mime="text/csv", key=f"dl_results_{i}",
                           help="Seed 000's {model}_results.csv: per k, mean and std of each metric.")
    st.text("Runs, in order: " + ", ".join(f"{i + 1} = {r}" for i, r in enumerate(ctx.run_names)))

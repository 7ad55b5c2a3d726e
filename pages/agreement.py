"""Agreement page: how close the runs' rankings are to one another (the student to the teacher)."""

from __future__ import annotations

import streamlit as st

from dashboard import analysis as A
from dashboard import charts, ui
from dashboard import kept as K
from dashboard import reproduce as R
from dashboard import state as S
from dashboard import tables as T
from evalcore import workspace as W
from evalcore.agreement import agreement_matrix, rbo_name

MEASURES = {"overlap": "overlap@k (Jaccard of the top-k sets)", "rbo": "RBO (rank-biased overlap, extrapolated)",
            "kendall_tau": "Kendall's τ over the shared items"}

ui.page_setup()
st.title("Agreement between runs")
st.caption("For each pair of runs and each evaluated query, how similar the two top-k lists are — regardless of "
           "the ground truth. overlap@k = |A∩B| / |A∪B| of the top-k sets; RBO_ext(p) (Webber et al. 2010, "
           "extrapolated, eq. 32) weighs the top of the lists, depth d by p^(d−1); Kendall's τ (τ-b) compares the "
           "order of the items both top-k lists hold (undefined with fewer than 2). Lists are ranked by the tie "
           "rule of the settings. Means over the queries where the value is defined.")
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)
runs = ui.runs_shown(ctx, ui.need_runs(ctx, what="compare their rankings"), scope="agreement")
if len(runs) < 2:
    st.info("Choose at least two runs to compare their rankings.", icon=":material/info:")
    st.stop()

c1, c2, c3 = st.columns(3)
with c1:
    # (the measure and p the user set are kept: another page, a reload, a restart; Streamlit dropped them)
    K.start("ag_measure", S.SEL_AGREEMENT, "measure", "overlap", K.one_of(MEASURES), follow=True)
    measure = st.selectbox("Measure", list(MEASURES), format_func=MEASURES.get, key="ag_measure",
                           on_change=K.chose, args=("ag_measure", S.SEL_AGREEMENT, "measure"))
with c2:
    ks = list(ctx.settings.k)  # the k shared with the other pages (10 at first, as there)
    k = ui.bound_selectbox("Cutoff k", ks, S.SEL_K, scope="agreement", default=10 if 10 in ks else ks[-1],
                           format_func=lambda x: "no cutoff" if x == 0 else str(x), keep_other=True)
with c3:
    K.start("ag_p", S.SEL_AGREEMENT, "p", A.DEFAULT_P, lambda v: isinstance(v, float) and K.number(0.01, 0.99)(v),
            follow=True)
    p = st.number_input("RBO persistence p", min_value=0.01, max_value=0.99, step=0.05, key="ag_p",
                        disabled=measure != "rbo", on_change=K.chose, args=("ag_p", S.SEL_AGREEMENT, "p"),
                        help="RBO only. Depth d weighs p^(d−1): 0.9 puts 86% of the weight on the top 10.")
    p = round(float(p), 6)  # the widget's steps add float noise (0.8 + 0.05 = 0.8500000000000001): p as shown

n_runs = len(runs)
what = MEASURES[measure].split(" (")[0]
with st.spinner(f"{what}: comparing the top-{k} lists of {n_runs} runs ({n_runs * (n_runs - 1) // 2} pairs) on "
                f"{len(A.evaluated_queries(ctx)):,} queries…"):  # seconds to tens of seconds at 14 x 20,000
    out = A.agreement(ctx, p, int(k), measure, runs=runs)
if not out.ok:
    ui.show_error(out.error, prefix="Agreement failed")
    st.stop()
for w in out.warnings:  # e.g. a run that lists none of some evaluated queries (there an empty list)
    ui.show_warning(w)
name = rbo_name(p) if measure == "rbo" else measure
matrix = S.memo(S._key("agmatrix", ctx.eval_key, p, name, k, runs), lambda: agreement_matrix(
    out.value.summary, measure=name, k=int(k), runs=runs))
label = f"{name}@{k}"
st.subheader("Runs × runs")
ui.chart(charts.agreement_heatmap(matrix, measure_label=label, lo=-1.0 if measure == "kendall_tau" else 0.0),
         key="ag_heatmap", name="agreement_matrix")
st.caption("The diagonal is each run against itself (1 wherever defined).")
summ = out.value.summary
sel = summ[(summ["measure"].astype(str) == name) & (summ["k"] == int(k))
           & (summ["run_a"].astype(str) != summ["run_b"].astype(str))]
ui.dataframe(T.display_table(sel[["run_a", "run_b", "n", "n_undefined", "mean", "std"]]), hide_index=True,
             key="ag_table", pin=("run_a", "run_b"), column_config={  # (the measure named: mean of what?)
                 "mean": st.column_config.NumberColumn(f"mean {label}", format="%.4f"),
                 "std": st.column_config.NumberColumn(f"std of {label}", format="%.4f")})
st.caption("n = queries with a value; n_undefined = queries where it is undefined (both lists empty; for τ, "
           "fewer than 2 shared items), left out of the mean. " + R.agreement_caption(
               measure=measure, k=int(k), p=p, ties=ctx.settings.ties, sample_size=ctx.settings.sample_size,
               sample_seed=ctx.settings.seed, judgments=ctx.ws.ground_truth.kind not in ("reference", "demo")
               and ctx.ws.ground_truth.demo_seed is None, aspect=(ctx.run_aspect.get(runs[0]) or ctx.aspects[0])
               if len(ctx.aspects) > 1 else None, embedding_depth=ctx.settings.depth if any(
                   W.has_embeddings(src) for src in ctx.ws.runs if src.name in runs) else None))
st.download_button("Per-query agreement (CSV)", data=lambda: out.value.table.to_csv(index=False).encode("utf-8"),
                   file_name=f"agreement_{measure}@{k}_per_query.csv", mime="text/csv", key="ag_download")

# ---------------------------------------------------------------- seed 000: the reference model's similarities
st.subheader("Similarity agreement with the reference model")
gt = ctx.ws.ground_truth
if gt.kind not in ("reference", "demo") and gt.demo_seed is None:  # the demo's reference model is built in
    st.caption("Shown when the ground truth is a reference model's embeddings (a teacher model for distillation): Spearman ρ and mean "
               "absolute error between the reference's and each model's cosine similarities on sampled pairs.")
    st.stop()
sim = A.similarity(ctx)
if not sim.ok:
    ui.show_error(sim.error, prefix="Similarity agreement failed")
    st.stop()
for w in sim.warnings:  # e.g. reference ids absent from a model, pairs drawn among few items
    ui.show_warning(w)
if sim.value.empty:
    st.caption("No run here has embeddings of its own (ranked files and fusions have none).")
    st.stop()
ui.dataframe(T.display_table(sim.value), hide_index=True, key="ag_similarity")
st.caption(f"The distillation metrics of a student against its teacher: on {A.SIMILARITY_PAIRS:,} item pairs "
           f"drawn with seed "
           f"{A.SIMILARITY_SEED} (the same pairs for every model), Spearman ρ between the reference's and the "
           "model's cosine similarities (1 = same order) and their mean absolute difference (0 = equal). "
           + R.similarity_caption(ground_truth=R.ground_truth_kind(gt)))

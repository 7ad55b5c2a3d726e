"""Fusion page: weighted reciprocal rank fusion of loaded runs (Cormack et al., SIGIR 2009, with weights), added
as a run everywhere."""

from __future__ import annotations

import dataclasses

import streamlit as st

from dashboard import state as S
from dashboard import tables as T
from dashboard import ui
from evalcore import workspace as W

ui.page_setup()
st.title("Fusion (weighted RRF)")
st.caption("Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009), weighted: "
           "`RRF(q, d) = Σ_S w_S / (c + rank_S(q, d))`; with top-N, only the first N items of each run take part "
           "(absent items contribute 0). Equal fused scores are ordered by the tie rule of the settings.")
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)
ws = ctx.ws
loaded = [r for r in ws.runs if r.name in ctx.runs]
if not loaded:
    st.stop()
by_name = {r.name: r for r in loaded}
like = S.comparable_runs(ctx, aspect=st.session_state.get(S.SEL_ASPECT))  # one aspect, enough coverage
names = st.multiselect("Runs to fuse", list(by_name), default=[r.name for r in loaded
                                                                if r.kind != "fused" and r.name in like][:3],
                       key="fu_runs", help="By default: runs evaluated against the same ground-truth aspect, with "
                                           "enough coverage.")
mixed = {S.aspect_of(ctx, n) for n in names}
if len(mixed) > 1:
    ui.show_warning("These runs are evaluated against different ground-truth aspects ("
                    + ", ".join(sorted(str(a) for a in mixed)) + "); the fused run is evaluated against the first "
                    "one's. Fuse runs of one aspect to compare like with like.")
low = [n for n in names if n in set(S.low_coverage(ctx))]
if low:
    ui.show_warning("Low coverage among the fused runs: " + ", ".join(low) + ".")
weights = []
if names:
    cols = st.columns(min(len(names), 4))
    for i, n in enumerate(names):
        with cols[i % len(cols)]:
            st.text(n)
            weights.append(st.number_input("Weight", min_value=0.0, value=1.0, step=0.1, key=f"fu_w_{by_name[n].uid}"))
c1, c2, c3 = st.columns(3)
with c1:
    c = st.number_input("c", min_value=0.0, value=60.0, step=1.0, key="fu_c")
with c2:
    top_n = st.number_input("Top-N per run (0 = whole lists)", min_value=0, value=0, step=10, key="fu_topn")
with c3:
    name = st.text_input("Name of the fused run", value="rrf", key="fu_name")
if not names:
    st.info("Choose at least one run.", icon=":material/info:")
    st.stop()
if not any(w > 0 for w in weights):
    ui.show_error("at least one weight must be positive", prefix="Invalid weights")
    st.stop()

# preview: the fused run evaluated next to its inputs (a temporary workspace; every step cached)
preview_ws, uid = W.add_fused_run(ws, [by_name[n].uid for n in names], weights, c=c, top_n=int(top_n) or None,
                                  name=ws.unique_name(name or "rrf"))
keep = {by_name[n].uid for n in names} | {uid}
preview_ws = dataclasses.replace(preview_ws, runs=tuple(r for r in preview_ws.runs if r.uid in keep))
pctx = S.context(ws=preview_ws)
if uid in pctx.run_errors:
    ui.show_error(pctx.run_errors[uid], prefix="Fusion failed")
    st.stop()
if not pctx.ready:
    ui.show_error(pctx.eval_error or "evaluation failed", prefix="Fusion failed")
    st.stop()
summ = S.summary(pctx)
metric, k = ui.metric_k_picker(pctx, "fusion")
label = ui.label_of(metric, k)
text, best = T.overview_table(summ, runs=pctx.run_names, eligible=S.comparable_runs(pctx, mix=True),
                              groups={r: S.aspect_of(pctx, r) for r in pctx.run_names})
st.subheader("The fused run next to its inputs")
st.dataframe(text, key="fu_table", column_config={"_index": st.column_config.TextColumn("run", pinned=True)})
st.caption(f"★ = best of the column. Mean [{S.ci_caption()}] over the evaluated queries.")
sel = summ[(summ["metric"].astype(str) == metric) & (summ["k"] == k)]
st.dataframe(T.display_table(sel[["run", "n", "mean", "ci_low", "ci_high"]]), hide_index=True, key="fu_metric")

if st.button("Add the fused run to every page", type="primary", key="fu_add"):
    new_ws, new_uid = W.add_fused_run(S.get_ws(), [by_name[n].uid for n in names], weights, c=c,
                                      top_n=int(top_n) or None, name=S.get_ws().unique_name(name or "rrf"))
    S.set_ws(new_ws)
    st.success("Added; it now appears on every page (remove or rename it on the Data page).",
               icon=":material/check_circle:")

"""Queries page: every query's metric per run, and the drill-down of one query (lists side by side)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import drilldown as D
from dashboard import state as S
from dashboard import tables as T
from dashboard import ui

IDS_KEY = "queries_table_ids"
MAX_OPTIONS = 2000


def on_row_selected() -> None:
    sel = st.session_state.get("queries_table")
    rows = (sel or {}).get("selection", {}).get("rows", []) if sel else []
    ids = st.session_state.get(IDS_KEY, [])
    if rows and rows[0] < len(ids):
        st.session_state[S.SEL_QUERY] = ids[rows[0]]


ui.page_setup()
st.title("Queries")
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)
runs = ctx.run_names
rel = ctx.settings.rel_threshold

c1, c2, c3, c4 = st.columns(4)
metric, k = ui.metric_k_picker(ctx, "queries", columns=(c1, c2))
with c3:
    run_a = ui.bound_selectbox("Run A", runs, S.SEL_RUN_A, scope="queries",
                               default=st.session_state.get(S.SEL_BASELINE))
with c4:
    run_b = ui.bound_selectbox("Run B", [r for r in runs if r != run_a] or runs, S.SEL_RUN_B, scope="queries")
label = ui.label_of(metric, k)

qt = S.memo(f"qt:{ctx.eval_key}:{metric}:{k}:{run_a}:{run_b}",
            lambda: D.query_table(S.metric_slice(ctx, metric, k), metric=metric, k=k, runs=runs, run_a=run_a,
                                  run_b=run_b))

# ---------------------------------------------------------------- table of queries
st.subheader(f"All queries: {label}")
f1, f2, f3, f4 = st.columns([2, 2, 2, 1])
domains = sorted(d for d in qt["domain"].unique() if d)
with f1:
    pick_domains = st.multiselect("Domains", domains, key="q_domains", disabled=not domains)
with f2:
    search = st.text_input("Search query id", key="q_search")
sort_options = [D.DIFF_COLUMN, *runs, "query_id"]
with f3:
    sort_by = st.selectbox("Sort by", sort_options, key="q_sort",
                           format_func=lambda c: "difference B − A" if c == D.DIFF_COLUMN else c)
with f4:
    ascending = st.toggle("Worst first", value=True, key="q_asc", help="Ascending: lowest values first.")
shown = D.filter_queries(qt, domains=pick_domains, search=search, sort_by=sort_by, ascending=ascending)
st.session_state[IDS_KEY] = shown["query_id"].tolist()
st.dataframe(T.display_table(shown.rename(columns={D.DIFF_COLUMN: "difference B − A"})), hide_index=True,
             key="queries_table",
             on_select=on_row_selected, selection_mode="single-row", height=320)
st.caption(f"{len(shown)} of {len(qt)} queries. Select a row (or use the box below) to open its drill-down. "
           "Difference = run B − run A on this query; – = the run has no value for it.")

# ---------------------------------------------------------------- one query
options = (shown["query_id"].tolist() or qt["query_id"].tolist())[:MAX_OPTIONS]  # search/filter reach the rest
current = st.session_state.get(S.SEL_QUERY)
if current in qt["query_id"].values and current not in options:
    options = [current, *options]
qid = ui.bound_selectbox("Query", options, S.SEL_QUERY, scope="queries")
if qid is None:
    st.stop()
qrels = ctx.qrels_for(run_a)
view = S.memo(f"qv:{ctx.eval_key}:{qid}:{k}:{ctx.settings.ties}",
              lambda: D.query_view(qrels, ctx.runs, qid, k=k if k > 0 else 10, ties=ctx.settings.ties, rel_threshold=rel,
                                   metadata=ctx.metadata))
st.subheader("Drill-down")
row = qt[qt["query_id"] == qid]
info = [f"query: {qid}", f"domain: {view.domain or '(none)'}"]
for r in runs:
    if not row.empty:
        v = row.iloc[0][r]
        info.append(f"{label} of {r}: " + ("– (no value)" if pd.isna(v) else f"{v:.4f}"))
st.text("\n".join(info))
if ctx.metadata is not None:
    meta = ctx.metadata[ctx.metadata["doc_id"] == qid]
    if not meta.empty:
        st.caption("Query item")
        st.text(f"{meta.iloc[0]['title']}\n{meta.iloc[0]['text']}".strip())

st.caption("Ground truth (best grade first) and where each run placed each judged item")
gt_cols = ["label", "doc_id", "grade", "relevant"] + (["title"] if "title" in view.ground_truth else []) \
    + [f"placed by {r}" for r in runs]
st.dataframe(view.ground_truth[gt_cols], hide_index=True, key="q_groundtruth")

st.caption(f"Top {view.k} of each run, side by side (✔ relevant, with its grade; ✗ judged not relevant; "
           "blank: not judged)")
per_row = min(len(runs), 3)
for start in range(0, len(runs), per_row):
    cols = st.columns(per_row)
    for col, r in zip(cols, runs[start:start + per_row], strict=False):
        with col:
            st.text(f"{r} ({view.depth.get(r, 0)} ranked)")
            lst = view.lists[r]
            show = ["rank", "doc_id", "score", "hit", "label"] + (["title"] if "title" in lst else [])
            st.dataframe(lst[show], hide_index=True, key=f"q_list_{start}_{r}")

if run_a != run_b:
    st.caption("Items one run has in its top k and the other lacks")
    d1, d2 = st.columns(2)
    with d1:
        st.text(f"in {run_a}, not in {run_b}")
        st.dataframe(T.display_table(view.only_in(run_a, run_b)), hide_index=True, key="q_only_a")
    with d2:
        st.text(f"in {run_b}, not in {run_a}")
        st.dataframe(T.display_table(view.only_in(run_b, run_a)), hide_index=True, key="q_only_b")

if ctx.metadata is not None and (ctx.metadata["text"].astype(str) != "").any():
    docs = list(dict.fromkeys([*view.ground_truth["doc_id"], *[d for r in runs for d in view.lists[r]["doc_id"]]]))
    doc = st.selectbox("Read an item's text", docs, key="q_doc")
    meta = ctx.metadata[ctx.metadata["doc_id"] == doc]
    if not meta.empty:
        st.text(f"{meta.iloc[0]['title']}\n\n{meta.iloc[0]['text']}")

"""Queries page: every query's metric per run (searchable, sortable, in pages), and one query as a diff of
the runs' lists (each run against its own ground truth)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import diffview as V
from dashboard import drilldown as D
from dashboard import kept as K
from dashboard import persist, ui
from dashboard import picker as P
from dashboard import reproduce as R
from dashboard import state as S
from dashboard import tables as T
from dashboard import texts as X

IDS_KEY = "queries_table_ids"
DOC_KEY = "q_doc"


def on_row_selected() -> None:
    sel = st.session_state.get("queries_table")
    rows = (sel or {}).get("selection", {}).get("rows", []) if sel else []
    ids = st.session_state.get(IDS_KEY, [])
    if rows and rows[0] < len(ids):
        st.session_state[S.SEL_QUERY] = ids[rows[0]]


@st.fragment
def document_reader(ctx: S.Context, docs: list[str]) -> None:
    """The text of one listed or judged document, on demand (reruns on its own)."""
    if ctx.metadata is None or not docs:
        st.caption("Load document metadata (titles, texts) on the Data page to read the documents here.")
        return
    current = st.session_state.get(DOC_KEY)
    if current not in docs:
        current = docs[0]
    st.session_state["w_q_doc"] = current
    names = X.titles(ctx)
    doc = st.selectbox("Read a document", docs, key="w_q_doc",
                       format_func=lambda d: f"{d} — {names[d]}" if names.get(d) else d,
                       on_change=lambda: st.session_state.__setitem__(DOC_KEY, st.session_state["w_q_doc"]))
    found = X.document(ctx, doc)
    st.text(f"{found[0]}\n\n{found[1]}".strip() if found else "(no title or text for this document)")


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

# every run's value per query, once per server and metric@k; the pair's difference added (choosing run A or B
# pivoted the whole table again: 1.5-2.3 s at 137 runs x 5,000 queries)
wide = S.shared(f"qwide:{ctx.eval_key}:{metric}:{k}", lambda: D.query_table(S.metric_slice(ctx, metric, k),
                                                                            metric=metric, k=k, runs=runs))
qt = S.memo(f"qt:{ctx.eval_key}:{metric}:{k}:{run_a}:{run_b}",
            lambda: D.with_difference(wide, run_a=run_a, run_b=run_b))

# ---------------------------------------------------------------- table of queries (one page at a time)
st.subheader(f"All queries: {label}")
f1, f2, f3, f4, f5 = st.columns([2, 2, 2, 1.4, 1])
domains = sorted(d for d in qt["domain"].unique() if d)
with f1:
    pick_domains = st.multiselect("Domains", domains, key="q_domains", disabled=not domains)
with f2:  # kept with the shared selections (another page, a reload, a new tab), as the query it found
    if "q_search" not in st.session_state:
        saved = st.session_state.get(S.SEL_Q_SEARCH)
        st.session_state["q_search"] = saved if isinstance(saved, str) else ""
    search = st.text_input("Search query id", key="q_search", placeholder="part of an id",
                           help="Case-insensitive; an exact id opens that query below.")
    st.session_state[S.SEL_Q_SEARCH] = search or None
    persist.publish()
sort_options = [D.DIFF_COLUMN, *runs, "query_id"]
with f3:
    sort_by = st.selectbox("Sort by", sort_options, key="q_sort",
                           format_func=lambda c: "difference B − A" if c == D.DIFF_COLUMN else c)
with f4:
    ascending = st.toggle("Ascending", value=True, key="q_asc", help="On: lowest values first (worst first).")
skey = f"{ctx.eval_key}:{metric}:{k}:{run_a}:{run_b}:{pick_domains}:{sort_by}:{ascending}"
ordered = S.memo("qsorted:" + skey, lambda: D.filter_queries(qt, domains=pick_domains, sort_by=sort_by,
                                                            ascending=ascending))
matches, exact = P.search_ids(ordered["query_id"].tolist(), search)
if search:
    ordered = ordered[ordered["query_id"].isin(set(matches))].reset_index(drop=True)
# a new exact match opens its query; a search restored by a reload does not replace the query chosen since
if exact is not None and st.session_state.get("q_search_exact", exact) != exact:
    st.session_state[S.SEL_QUERY] = exact
st.session_state["q_search_exact"] = exact
n_pages = P.page_count(len(ordered))
with f5:
    page = st.number_input("Page", min_value=1, max_value=n_pages, value=1, step=1, key=f"q_page_{n_pages}",
                           help=f"{n_pages:,} pages of {P.PAGE_ROWS} queries")
shown = P.page_of(ordered, int(page))
st.session_state[IDS_KEY] = shown["query_id"].tolist()
# the difference and runs A and B first (with many runs they sat off-screen, right of every other run)
front = ["query_id", *(["domain"] if domains else []), D.DIFF_COLUMN, run_a, run_b]
listed = shown[[c for c in dict.fromkeys([*front, *shown.columns]) if c in shown.columns
                and (domains or c != "domain")]]  # no domain mapping: no empty column
ui.dataframe(T.display_table(listed.rename(columns={D.DIFF_COLUMN: "difference B − A"})), hide_index=True,
             key="queries_table", on_select=on_row_selected, selection_mode="single-row",
             column_config={"query_id": st.column_config.TextColumn("query_id", pinned=True)})
st.caption(P.rows_caption(page=int(page), n_shown=len(shown), n_matching=len(ordered), n_total=len(qt),
                          n_pages=n_pages, search=search, domains=bool(pick_domains))
           + ("" if ordered.empty else " Select a row to open its drill-down. Difference = run B − run A on this "
                                       "query; – = the run has no value for it. "
              + R.queries_caption(ctx.settings, **R.evaluation_options(ctx))))
aspect_a, aspect_b = S.aspect_of(ctx, run_a), S.aspect_of(ctx, run_b)
if aspect_a != aspect_b:  # (seed 001: a space judged on content, another on vibes; Compare tests like with like)
    st.info(f"Run A and run B are judged against different ground-truth aspects ({ui.md_escape(run_a)}: "
            f"{ui.md_escape(str(aspect_a))}; {ui.md_escape(run_b)}: {ui.md_escape(str(aspect_b))}): their difference "
            "compares two ground truths, not only two rankings.", icon=":material/call_split:")

# ---------------------------------------------------------------- one query
ids = ordered["query_id"].tolist() or qt["query_id"].tolist()
current = st.session_state.get(S.SEL_QUERY)
options = P.options_around(ids, current if current in set(qt["query_id"]) else None)
if current in set(qt["query_id"]) and current not in set(options):
    options = [current, *options[:-1]]
qid = ui.bound_selectbox("Query", options, S.SEL_QUERY, scope="queries",
                         help="The table's filter and sort order; search an id above to reach any query.")
if qid is None:
    st.stop()

st.subheader("Drill-down")
said = X.query_text(ctx, qid)
row = qt[qt["query_id"] == qid]
info = [f"query: {qid}"] + ([f"domain: {row.iloc[0]['domain'] or '(none)'}" if not row.empty else "domain: (none)"]
                            if domains else [])
with st.container(border=True):
    st.caption("Query" + (f" ({said[0]})" if said else ""))
    st.text(said[1] if said else "(no text for this query: load a queries file — BEIR queries.jsonl, or a "
                                 "TSV/CSV of id and text — on the Data page)")
    st.text("\n".join(info))

# A and B are the Run A / Run B pickers' (always); C and D, up to two more runs beside them
more_options = [r for r in runs if r not in (run_a, run_b)]
if any(r not in more_options for r in st.session_state.get("q_more_runs", [])):  # a picker took one of them
    st.session_state["q_more_runs"] = [r for r in st.session_state["q_more_runs"] if r in more_options]
K.start("q_more_runs", S.SEL_QUERIES_VIEW, "more", [], lambda v: isinstance(v, list), follow=True,  # (kept: another
        clean=lambda v: [r for r in v if r in more_options][:2] if isinstance(v, list) else None)  # page, a reload)
more = st.multiselect("More runs side by side (C, D)", more_options, key="q_more_runs", max_selections=2,
                      on_change=K.chose, args=("q_more_runs", S.SEL_QUERIES_VIEW, "more"),
                      disabled=not more_options, help="Run A and run B are always shown; two more fit a wide window.")
shown_runs = list(dict.fromkeys([run_a, run_b, *more]))
depth_k = k if k > 0 else 10
# each run against the ground truth its metric at k was computed against (a reference model's: its top-k at k);
# with a reference model, where each listed item sits among its neighbours (its deepest ranking)
ref = ctx.reference
diff = S.memo(f"diff:{ctx.eval_key}:{qid}:{k}:{depth_k}:{shown_runs}:{ctx.settings.ties}", lambda: V.query_diff(
    {r: ctx.qrels_at(r, k) for r in shown_runs}, {r: ctx.runs[r] for r in shown_runs}, qid, k=depth_k,
    ties=ctx.settings.ties, rel_threshold=rel, titles=X.titles(ctx),
    aspects={r: S.aspect_of(ctx, r) for r in shown_runs},
    reference_order=None if ref is None else V.reference_order(ref.fixed if ref.fixed is not None else ref.deepest,
                                                               qid)))
ref_ranked = any("ref #" in lst.columns for lst in diff.lists.values())
tied = ref is not None and ref.mode == "tied" and k > 0
st.caption(f"Top {depth_k} of each run. Grade: ✔ relevant (grade ≥ {rel}), ✗ judged not relevant, · not judged — "
           + (f"against the reference model's top {k}, the ground truth of {label} (· = not in it). " if tied else
              "each run against its own ground truth. ")
           + ("ref # = the item's rank among the reference model's neighbours of this query (> N: beyond the N it "
              "ranked). " if ref_ranked else "")
           + "A document listed by several runs has the same colour "
           "everywhere; 'elsewhere' = its rank in the other runs (– = not in their lists).")
titled = bool(X.titles(ctx))  # without document metadata, no empty title column
list_columns = [c for c in V.LIST_COLUMNS if titled or c != "title"]
if ref_ranked:
    list_columns.insert(list_columns.index("doc_id"), "ref #")
cols = st.columns(len(shown_runs), gap="small")
for col, r in zip(cols, shown_runs, strict=True):
    with col:
        v = row.iloc[0][r] if not row.empty else float("nan")
        aspect = diff.aspects.get(r)
        st.text(f"{diff.codes[r]} · {r}\n{label}: " + ("–" if pd.isna(v) else f"{v:.4f}")
                + (f"\naspect: {aspect}" if aspect else "") + f"\n{diff.depth.get(r, 0):,} ranked")
        st.dataframe(V.style_list(diff.lists[r], diff.colours, columns=list_columns), hide_index=True,
                     key=f"q_list_{diff.codes[r]}",
                     column_config={
                         "rank": st.column_config.NumberColumn("#", width=30),
                         "grade": st.column_config.TextColumn("grade", width=50),
                         "ref #": st.column_config.TextColumn("ref #", width=50, help="Rank among the reference "
                                                              "model's neighbours of this query"),
                         "doc_id": st.column_config.TextColumn("doc"),
                         "elsewhere": st.column_config.TextColumn("elsewhere", help="Rank of the same document "
                                                                  "in the other runs (– = not in their lists)"),
                         "score": st.column_config.NumberColumn("score", width=62),
                         "title": st.column_config.TextColumn("title"),
                     })

for aspect, group, gt in diff.truth:
    st.caption("Ground truth" + (f" ({aspect})" if aspect else "") + ", best grade first, and the rank each run "
               "gave each judged item (> N = not in its list of N)" + (": " + ", ".join(
                   f"{diff.codes[r]}" for r in group) if len(diff.truth) > 1 else ""))
    st.dataframe(V.style_truth(gt if titled else gt.drop(columns=["title"]), diff.colours), hide_index=True,
                 key=f"q_truth_{diff.codes[group[0]]}",
                 column_config={"ref #": st.column_config.TextColumn("ref #", width=50, help="Rank among the "
                                                                   "reference model's neighbours of this query"),
                                "doc_id": st.column_config.TextColumn("doc"),
                                "grade": st.column_config.NumberColumn("grade", width=52),
                                **{f"rank in {r}": st.column_config.TextColumn(f"{diff.codes[r]} · {r}",
                                                                               help=f"rank in run {r}")
                                   for r in group}})

docs = list(dict.fromkeys([*[d for r in shown_runs for d in diff.lists[r]["doc_id"]],
                           *[d for _, _, gt in diff.truth for d in gt["doc_id"]]]))
document_reader(ctx, docs)

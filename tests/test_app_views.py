"""Issue 10 under ``AppTest``: views a user can trust (one test or more per item of the issue)."""

from __future__ import annotations

import io
import json
import re
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import test_app as T
from demo_oracle import oracle_demo
from streamlit.testing.v1 import AppTest

from dashboard import state as S
from dashboard import ui
from dashboard.tables import P_VALUE_COLUMNS
from evalcore import workspace as W
from evalcore.evaluate import evaluate
from evalcore.intervals import summarize_with_intervals
from evalcore.io import load_qrels, load_run
from evalcore.stats import compare

APP, goto, unescape = T.APP, T.goto, T.unescape
FIX = Path(__file__).resolve().parent / "fixtures"
TIMEOUT = 120
CONTENT = "5_most_similar_movies_content_ordered"
OVERALL = "5_most_similar_movies_overall_ordered"
VIBES = "5_most_similar_movies_vibes_ordered"


def start(ws: W.Snapshot | None = None, page: str | None = None) -> AppTest:
    at = T.start(ws)
    if page:
        goto(at, page)
    return at


def frames(at: AppTest) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame)]


def frame_with(at: AppTest, *columns: str) -> pd.DataFrame:
    for f in frames(at):
        if set(columns) <= set(map(str, f.columns)):
            return f
    raise AssertionError(f"no table with columns {columns}: {[list(f.columns) for f in frames(at)]}")


def overview(at: AppTest) -> pd.DataFrame:
    return next(f for f in frames(at) if f.index.name == "run" and "coverage" in f.columns)


def traces(at: AppTest) -> list[dict]:
    """The plotly traces of the page as dicts, typed arrays ({dtype, bdata}) decoded to numpy."""
    import base64

    def decode(v):
        if isinstance(v, dict) and "bdata" in v and "dtype" in v:
            a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
            return a.reshape([int(x) for x in str(v["shape"]).split(",")]) if "shape" in v else a
        if isinstance(v, dict):
            return {k: decode(x) for k, x in v.items()}
        if isinstance(v, list):
            return [decode(x) for x in v]
        return v

    return [decode(tr) for ch in at.get("plotly_chart") for tr in json.loads(ch.proto.spec)["data"]]


def trec(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


# ------------------------------------------------------------------------------------------ item 1


def seed001_run(aspect_key: str) -> bytes:
    """A run that ranks, for every movie, the neighbours of one aspect's list first (in its order)."""
    movies = json.loads((FIX / "seed001_movies.json").read_text())
    ids = [m["movie_id"] for m in movies]
    lines = []
    for m in movies:
        order = list(m[aspect_key]) + [i for i in ids if i != m["movie_id"] and i not in m[aspect_key]]
        lines += [f"{m['movie_id']} Q0 {d} {r + 1} {10 - r} x" for r, d in enumerate(order)]
    return trec(lines)


def seed001_workspace() -> W.Snapshot:
    gt = W.Blob.of("seed001_movies.json", (FIX / "seed001_movies.json").read_bytes())
    ws = W.set_ground_truth(W.Snapshot(), gt)
    ws, _ = W.add_ranked_run(ws, W.Blob.of("content_run.trec", seed001_run(CONTENT)), aspect=CONTENT)
    ws, _ = W.add_ranked_run(ws, W.Blob.of("vibes_run.trec", seed001_run(VIBES)), aspect=VIBES)
    return ws


def test_drilldown_shows_each_runs_own_aspect_grades():
    at = start(seed001_workspace(), "queries")
    at.selectbox(key="w_queries_sel_metric").select("ndcg").run()
    qid = "tt0000001"
    at.text_input(key="q_search").input(qid).run()
    assert at.selectbox(key="w_queries_sel_query").value == qid
    content = load_qrels((FIX / "seed001_movies.json").read_bytes(), aspect=CONTENT)
    overall = load_qrels((FIX / "seed001_movies.json").read_bytes(), aspect=OVERALL)
    grades = {}
    for name, q in (("content", content), ("overall", overall)):
        f = q.to_frame()
        f = f[f["query_id"] == qid]
        grades[name] = dict(zip(f["doc_id"], f["relevance"], strict=True))
    lists = [f for f in frames(at) if list(f.columns)[:3] == ["rank", "grade", "doc_id"]]
    assert len(lists) == 2
    shown = dict(zip(lists[0]["doc_id"], lists[0]["grade"], strict=True))  # run A: the content run
    assert shown == {d: f"✔ {g}" for d, g in grades["content"].items()}
    assert shown != {d: f"✔ {g}" for d, g in grades["overall"].items()}  # the defect: overall grades
    assert any(t.value.startswith("A · content_run") and f"aspect: {CONTENT}" in t.value for t in at.text)
    truths = [f for f in frames(at) if "rank in content_run" in f.columns]
    assert truths and dict(zip(truths[0]["doc_id"], truths[0]["grade"], strict=True)) == grades["content"]
    # the ground-truth table of the other aspect is there too, with the vibes grades
    vib = next(f for f in frames(at) if "rank in vibes_run" in f.columns)
    vq = load_qrels((FIX / "seed001_movies.json").read_bytes(), aspect=VIBES).to_frame()
    vq = vq[vq["query_id"] == qid]
    assert dict(zip(vib["doc_id"], vib["grade"], strict=True)) == dict(zip(vq["doc_id"], vq["relevance"],
                                                                           strict=True))


# ------------------------------------------------------------------------------------------ item 2


def test_query_text_from_a_queries_file_on_top_of_the_drilldown():
    at = start(seed001_workspace(), "data")
    text = "A movie about <b>*friendship*</b> [and] $money$"
    lines = "\n".join(json.dumps({"_id": m, "text": f"{text} {m}"}) for m in ("tt0000001", "tt0000002"))
    at.file_uploader(key="up_queries").set_value(("queries.jsonl", lines.encode(), "application/json")).run()
    assert not at.exception and not at.error
    assert at.session_state["ws"].queries_blob.name == "queries.jsonl"
    goto(at, "queries")
    at.text_input(key="q_search").input("tt0000002").run()
    assert any(t.value == f"{text} tt0000002" for t in at.text)  # plain text, never Markdown
    assert not any("friendship" in m.value for m in [*at.markdown, *at.caption])


# ------------------------------------------------------------------------------------------ item 3


def many_queries(n: int, seed: int = 0) -> tuple[bytes, bytes, bytes]:
    rng = np.random.default_rng(seed)
    ids = [f"q{i:05d}" for i in range(n)]
    qrels = [f"{q} 0 d{int(rng.integers(0, 50))} 1" for q in ids]
    run_a = [f"{q} Q0 d{int(d)} {r + 1} {5 - r} a" for q in ids for r, d in enumerate(rng.choice(50, 3, replace=False))]
    run_b = [f"{q} Q0 d{int(d)} {r + 1} {5 - r} b" for q in ids for r, d in enumerate(rng.choice(50, 3, replace=False))]
    return trec(qrels), trec(run_a), trec(run_b)


def test_the_picker_reaches_the_last_of_5000_queries():
    qrels, a, b = many_queries(5000)
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(3,), metrics=("ndcg",))), W.Blob.of("q.txt", qrels))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("a.trec", a))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("b.trec", b))
    at = start(ws, "queries")
    last = "q04999"
    # by id search: the exact id opens it
    at.text_input(key="q_search").input(last).run()
    assert at.selectbox(key="w_queries_sel_query").value == last
    assert any(t.value.startswith(f"query: {last}") for t in at.text)
    # by sorting: query id, descending, puts it first on the first page
    at.text_input(key="q_search").input("").run()
    at.selectbox(key="q_sort").select("query_id").run()
    at.toggle(key="q_asc").set_value(False).run()
    table = frame_with(at, "query_id", "a", "b")
    assert table["query_id"].iloc[0] == last and len(table) == 50
    # and by paging, ascending: the last page ends with it
    at.toggle(key="q_asc").set_value(True).run()
    pages = next(n for n in at.number_input if n.key.startswith("q_page_"))
    pages.set_value(100).run()
    assert frame_with(at, "query_id", "a", "b")["query_id"].iloc[-1] == last
    assert any("Rows 4,951–5,000 of 5,000" in c.value for c in at.caption)
    # the Compare page's picker: every query by search
    goto(at, "compare")
    at.text_input(key="compare_qsearch").input(last).run()
    assert at.selectbox(key="w_compare_sel_query").value == last
    assert len(at.selectbox(key="w_compare_sel_query").options) <= 500  # one page of options, not 5,000


# ------------------------------------------------------------------------------------------ item 4


def coverage_workspace() -> str:
    """A stored workspace (its name): runs answering all, 40% and none of the queries. The ground truth comes
    last: 'nomatch' (none of its query ids is a query of it) would be refused after it, and is flagged at 0%."""
    qids = [f"q{i}" for i in range(30)]
    qrels = trec([f"{q} 0 d1 1" for q in qids] + [f"{q} 0 d2 1" for q in qids])
    weak = trec([f"{q} Q0 d{j} {r + 1} {9 - r} w" for q in qids for r, j in enumerate((3, 4, 1))])  # d1 at rank 3
    partial = trec([f"{q} Q0 d{j} {r + 1} {10 - r} p" for q in qids[:12] for r, j in enumerate((1, 2))])
    nomatch = trec([f"Q-{i} Q0 d1 1 1.0 n" for i in range(30)])
    ws = W.Snapshot()
    for name, data in (("weak", weak), ("partial", partial), ("nomatch", nomatch)):
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", data))
    name = T.store_snapshot(ws)
    with W.WorkspaceRoot().open(name) as stored:
        stored.set_ground_truth(qrels, source_name="qrels.txt")
    return name


def start_stored(name: str, page: str) -> AppTest:
    at = T.open_app(name)
    goto(at, page)
    return at


def test_a_search_without_match_says_so_and_shows_the_search_as_text():
    n = oracle_demo(0).qrels.n_queries
    at = start(None, "queries")
    typed = "*zz* [x](y) <b>"
    at.text_input(key="q_search").input(typed).run()
    assert not at.exception and frame_with(at, "query_id").empty
    shown = [c.value for c in at.caption if "Rows" in c.value or "No query" in c.value]
    assert shown == [f"No query matches the search “{ui.md_escape(typed)}” ({n:,} queries in all)."]
    at.text_input(key="q_search").input("").run()  # all again: the rows are counted as before
    rows = min(n, 50)
    assert any(c.value.startswith(f"Rows 1–{rows:,} of {n:,} queries, page 1 of {-(-n // 50):,}. Select a row")
               for c in at.caption)


def test_low_coverage_is_flagged_everywhere_and_left_out_of_stars_and_tests():
    at = start_stored(coverage_workspace(), "overview")
    warn = [unescape(w.value) for w in at.warning if "Low coverage" in w.value]
    assert warn and "partial: results for 12/30 (40%)" in warn[0] and "nomatch: results for 0/30 (0%)" in warn[0]
    text = overview(at)
    assert list(text["coverage"]) == ["30/30 (100%)", "12/30 (40%)", "0/30 (0%)"]
    # partial has the highest mean (perfect on its 12 queries) but is not compared: weak gets the ★
    assert text.loc["weak", "ndcg@10"].startswith("★") and not text.loc["partial", "ndcg@10"].startswith("★")
    assert float(text.loc["partial", "ndcg@10"].split()[0]) > float(text.loc["weak", "ndcg@10"].split()[1])
    assert "[" in text.loc["partial", "ndcg@10"]
    for page in ("compare", "queries", "domains", "fusion", "data"):
        goto(at, page)
        assert any("Low coverage" in w.value for w in at.warning), page
    goto(at, "compare")
    assert any("Fewer than two runs to compare" in i.value for i in at.info)  # only weak is left
    # the curves mark them too: dotted, "(low coverage)" in the legend (a run answering no query is a line at 0)
    goto(at, "overview")
    lines = {t["name"]: t["line"].get("dash") for t in traces(at) if t.get("mode") == "lines+markers"}
    assert lines == {"weak": "solid", "partial (low coverage)": "dot", "nomatch (low coverage)": "dot"}, lines
    at.toggle(key="ov_pr").set_value(True).run()  # the precision-recall curve as well
    pr = [t for t in traces(at) if t.get("mode") == "lines+markers" and "recall" in t.get("hovertemplate", "")]
    assert {t["name"]: t["line"].get("dash") for t in pr} == lines
    at.toggle(key="ov_pr").set_value(False).run()
    goto(at, "compare")
    # the user includes the partial run: it gets its ★ and its test
    at.multiselect(key="w_coverage_sel_include_low").set_value(["partial"]).run()
    table = frame_with(at, "run", "run − baseline", "p adjusted")
    assert list(table["run"]) == ["partial"]
    goto(at, "overview")
    text = overview(at)
    assert text.loc["partial", "ndcg@10"].startswith("★") and not text.loc["weak", "ndcg@10"].startswith("★")
    assert not text.loc["nomatch", "ndcg@10"].startswith("★")


def test_the_coverage_threshold_is_a_setting():
    at = start_stored(coverage_workspace(), "data")
    at.number_input(key="set_mincov").set_value(30)
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert at.session_state["ws"].settings.min_coverage == 0.3
    goto(at, "overview")
    warn = [unescape(w.value) for w in at.warning if "Low coverage" in w.value]
    assert "nomatch" in warn[0] and "partial" not in warn[0]


# ------------------------------------------------------------------------------------------ item 5


def test_runs_of_different_aspects_are_compared_like_with_like():
    ws = seed001_workspace()
    ws, _ = W.add_ranked_run(ws, W.Blob.of("content_b.trec", seed001_run(OVERALL)), aspect=CONTENT)
    at = start(ws, "overview")
    assert any("different ground-truth aspects" in i.value for i in at.info)
    text = overview(at)
    assert list(text["aspect"]) == [CONTENT, VIBES, CONTENT]
    col = "ndcg@10"
    stars = text[col].str.startswith("★")
    assert stars["vibes_run"]  # alone in its aspect: best there
    assert stars[["content_run", "content_b"]].sum() == 1
    goto(at, "compare")
    assert at.selectbox(key="w_compare_sel_aspect").value == CONTENT
    table = frame_with(at, "run", "run − baseline", "p adjusted")
    assert set(table["run"]) | {at.selectbox(key="w_compare_sel_baseline").value} == {"content_run", "content_b"}
    at.toggle(key="cmp_mix").set_value(True).run()
    assert any("different ground-truth aspects" in unescape(w.value) for w in at.warning)
    table = frame_with(at, "run", "run − baseline", "p adjusted")
    assert len(table) == 2
    goto(at, "fusion")
    assert set(at.multiselect(key="fu_runs").value) == {"content_run", "content_b"}


# ------------------------------------------------------------------------------------------ item 6


def two_query_workspace() -> W.Snapshot:
    qrels = trec(["q1 0 d1 1", "q2 0 d1 1", "q3 0 d9 1"])
    run = trec(["q1 Q0 d1 1 2.0 a", "q2 Q0 d5 1 2.0 a", "q3 Q0 d9 1 1.0 a"])
    twin = run.replace(b" a\n", b" b\n")
    other = trec(["q1 Q0 d5 1 2.0 c", "q2 Q0 d1 1 2.0 c", "q3 Q0 d2 1 1.0 c"])
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(1, 10), metrics=("ndcg", "recall"))),
                            W.Blob.of("qrels.txt", qrels))
    for name, data in (("A", run), ("B", twin), ("C", other), ("D", other)):
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", data))
    return ws


def test_every_ci_within_the_metric_range_and_identical_runs_get_identical_cis():
    snap = two_query_workspace()
    at = start(snap, "overview")
    nums = frame_with(at, "run", "metric", "k", "ci_low", "ci_high")
    assert (nums["ci_low"] >= 0).all() and (nums["ci_high"] <= 1).all()
    t_cis = summarize_with_intervals(_table(snap), method="t")
    assert (t_cis["ci_low"] < 0).any()  # Student t would have left [0, 1] here
    by_run = nums.set_index(["run", "metric", "k"])
    for m, k in (("ndcg", 10), ("recall", 1)):
        assert tuple(by_run.loc[("A", m, k), ["ci_low", "ci_high"]]) == tuple(by_run.loc[("B", m, k),
                                                                                         ["ci_low", "ci_high"]])
    assert any("percentile bootstrap" in c.value and "same for every run" in c.value for c in at.caption)
    # twins draw one line over the other: the page says so, once per group
    same = [unescape(c.value) for c in at.caption if "have the same mean at every k" in c.value]
    assert same == ["A and B have the same mean at every k: their lines coincide (only the last one drawn shows).",
                    "C and D have the same mean at every k: their lines coincide (only the last one drawn shows)."]
    # bands off by default beyond three runs, one toggle to show them
    toggle = at.toggle(key="ov_bands")
    assert toggle.value is False
    fills = [tr for tr in traces(at) if tr.get("fill")]
    assert not fills
    toggle.set_value(True).run()
    fills = [tr for tr in traces(at) if tr.get("fill")]
    assert len(fills) == 4
    # Compare: identical runs get identical difference CIs against any baseline
    goto(at, "compare")
    at.selectbox(key="w_compare_sel_baseline").select("C").run()
    table = frame_with(at, "run", "95% CI (bootstrap)").set_index("run")
    assert table.loc["A", "95% CI (bootstrap)"] == table.loc["B", "95% CI (bootstrap)"]


def _table(ws: W.Snapshot) -> pd.DataFrame:
    """evalcore's table of the files the workspace was made from."""
    qrels = load_qrels(ws.ground_truth.blob.data)
    runs = {r.name: load_run(r.blob.data, name=r.name) for r in ws.runs}
    return evaluate(qrels, runs, metrics=["ndcg", "recall"], k=[1, 10]).table


def test_no_error_bar_where_a_domain_has_one_query():
    gt = W.Blob.of("g.json", (FIX / "seed003_graded.json").read_bytes())
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(3,), metrics=("ndcg",))), gt)
    qrels = load_qrels(gt.data)
    for name, seed in (("r1", 1), ("r2", 2)):
        rng = np.random.default_rng(seed)
        docs = list(qrels.to_frame()["doc_id"].unique())
        lines = [f"{q} Q0 {d} {i + 1} {10 - i} t" for q in qrels.query_ids for i, d in enumerate(rng.permutation(docs))]
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", trec(lines)))
    at = start(ws, "domains")
    bars = [tr for tr in traces(at) if tr["type"] == "bar"]
    assert bars
    for tr in bars:  # every domain of this file has a single query: no error bar
        assert np.isnan(np.asarray(tr["error_y"]["array"], dtype=float)).all()


def test_heatmap_colours_follow_sign_and_significance():
    from dashboard.charts import HEAT_CLASSES

    at = start(None, "compare")
    at.selectbox(key="w_compare_sel_metric").select("recall").run()
    at.selectbox(key="w_compare_sel_k").select("50").run()
    heat = next(tr for tr in traces(at) if tr["type"] == "heatmap")
    z = np.asarray(heat["z"])
    runs = [unescape(y) for y in heat["y"]]
    demo = oracle_demo(0)
    ev = evaluate(demo.qrels, demo.runs, metrics=["recall"], k=[50])
    cmp = compare(ev.table, metric="recall", k=50, runs=runs, n_resamples=1000, ci_method="percentile",
                  resampling="shared")
    seen = set()
    for row in cmp.itertuples(index=False):
        i, j = runs.index(row.run_a), runs.index(row.run_b)
        want = int(np.sign(row.diff)) * (2 if row.significant else 1)  # cell (b, a) reads b − a
        assert z[j, i] == want and z[i, j] == -want
        seen.add(abs(want))
    assert seen == {1, 2}, "the demo at recall@50 has significant pairs and a non-significant one (+0.021)"
    colours = dict(zip(heat["colorbar"]["tickvals"], heat["colorbar"]["ticktext"], strict=True))
    assert colours == {v: t for v, (_, t) in HEAT_CLASSES.items()}


# ------------------------------------------------------------------------------------------ items 8, 9


def test_no_internal_wording_and_the_guide_uses_a_computed_k():
    name = f"demo-k-{uuid.uuid4().hex[:8]}"  # the demo with other settings: a copy of it (the demo is read-only)
    with W.WorkspaceRoot().copy(W.Workspace.demo(), name) as ws:
        ws.set_settings(k=(1, 5, 20), metrics=("ndcg", "recall"))
    at = T.open_app(name)
    for page in ("data", "overview", "compare", "queries", "domains", "fusion"):
        goto(at, page)
        texts = [e.value for e in [*at.markdown, *at.caption, *at.info, *at.warning, *at.title, *at.subheader,
                                   *at.header]]
        texts += [str(getattr(w, "help", "") or "") + str(w.label) for w in [*at.selectbox, *at.radio, *at.button,
                                                                             *at.multiselect, *at.toggle]]
        texts += [e.label for e in at.expander]
        bad = [t for t in texts if re.search(r"seed 00\d|§", t, flags=re.I)]
        assert not bad, (page, bad)
    goto(at, "overview")
    assert any(e.label == "How to read nDCG@5 and Recall@5" for e in at.expander)
    box = at.selectbox(key="ov_div_k")
    # k = 1, 5, 20 evaluated: the diversity's default is 5, the largest below 10 (was 10: nobody evaluated it)
    assert box.value == 5 and box.options == ["5", "10", "20"]  # 10 stays offered; not 1 (ILD@1 is always 0)
    box.select(10).run()
    assert at.run().selectbox(key="ov_div_k").value == 10  # a user's own choice is kept, evaluated or not


def test_overview_columns_are_chosen_and_the_run_column_pinned():
    at = start()
    text = overview(at)
    assert list(text.columns) == ["coverage", "ndcg@10", "recall@10", "mrr@10", "map@10", "recall@100"]
    at.multiselect(key="ov_columns").set_value(["map@100", "ndcg@3"]).run()
    assert list(overview(at).columns) == ["coverage", "map@100", "ndcg@3"]
    cfg = next(json.loads(d.proto.columns) for d in at.dataframe if "coverage" in d.proto.columns)
    assert cfg["_index"]["pinned"] is True
    goto(at, "compare")
    cfg = next(json.loads(d.proto.columns) for d in at.dataframe if "significant" in d.proto.columns)
    assert cfg["run"]["pinned"] is True
    table = frame_with(at, "run", "run − baseline", "95% CI (bootstrap)", "p adjusted", "significant")
    assert list(table.columns)[:5] == ["run", "run − baseline", "95% CI (bootstrap)", "p adjusted", "significant"]


# ------------------------------------------------------------------------------------------ item 10


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"


def test_a_bad_ground_truth_keeps_the_demo():
    at = start(None, "data")
    before = at.session_state["ws"]
    at.file_uploader(key="up_gt").set_value(("picture.png", PNG, "image/png")).run()
    assert not at.exception
    errs = [unescape(e.value) for e in at.error]
    assert any("picture.png" in e and "binary" in e and "nothing was changed" in e for e in errs), errs
    assert at.session_state["ws"] is before and before.is_demo
    assert not any(t.value == "trec" for t in at.text)  # no "Detected format: trec" beside the error
    # a bad run file on the demo does not clear it either
    at.file_uploader(key="up_runs").set_value([("bad.trec", b"q1 Q0 d1 1 high x\n", "text/plain")]).run()
    assert at.session_state["ws"].is_demo and len(at.session_state["ws"].runs) == 3
    assert any("bad.trec" in unescape(e.value) and "the demo was kept" in unescape(e.value) for e in at.error)


def test_sidebar_marks_a_failed_file_in_the_same_run_and_counts_read_well():
    ws = W.set_ground_truth(W.Snapshot(), W.Blob.of("q.txt", trec(["q1 0 d1 1"])))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("one.trec", trec(["q1 Q0 d1 1 1.0 x"])))
    at = start(ws, "data")
    # issue 9: a file that does not load is reported next to the uploader and not stored (nor listed)
    at.file_uploader(key="up_runs").set_value([("picture.png", PNG, "image/png")]).run()
    assert any("picture.png" in unescape(e.value) and "binary" in unescape(e.value) for e in at.error)
    side = "\n".join(t.value for t in at.sidebar.text)
    assert "picture.png" not in side and "run: one [ranked]\n" in side + "\n"
    # a stored run that fails when it is built (its items hold the query but none of its relevant documents)
    T.stored(at).add_embedding_run("elsewhere", np.eye(3, dtype=np.float32), ["q1", "x2", "x3"])
    at.run()
    side = "\n".join(t.value for t in at.sidebar.text)
    assert "run: elsewhere [embedding] (not loaded)" in side and "run: one [ranked]\n" in side + "\n"
    assert any("none of the 1 relevant documents of the ground truth is in the corpus" in unescape(e.value)
               for e in at.error)
    main = [c.value for c in at.caption]
    assert "1 query, 1 ranked item" in main
    assert not any(c.startswith("detected:") and "trec" in c for c in main[main.index("1 query, 1 ranked item"):])
    assert "queries evaluated: 1 of 1" in side


def test_cancel_stops_a_long_step_and_retry_runs_it():
    rng = np.random.default_rng(0)
    buf = io.BytesIO()
    ids = np.array([f"i{j}" for j in range(60)])
    np.savez(buf, ids=ids, embeddings=rng.normal(size=(60, 8)).astype(np.float32))
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(5,), metrics=("ndcg",))),
                            W.Blob.of("ref.npz", buf.getvalue()), kind="reference")
    ws, _ = W.add_embedding_run(ws, W.Blob.of("m.npz", buf.getvalue()), name="m")
    at = T.open_app(T.store_snapshot(ws), **{S.CANCEL_KEY: True})  # what the Cancel button's click leaves behind
    goto(at, "data")
    assert any("cancelled" in unescape(e.value) for e in at.error)
    assert at.button(key="retry_cancelled")
    at.button(key="retry_cancelled").click().run()
    assert not at.exception and not any("cancelled" in unescape(e.value) for e in at.error)
    goto(at, "overview")
    assert "m" in overview(at).index


# ------------------------------------------------------------------------------------------ item 11


def test_leaderboard_export_cell_by_cell():
    from test_leaderboard import check_demo_exports

    at = start(None, "overview")
    at.toggle(key="ov_lb_preview").set_value(True).run()
    md = next(c.value for c in at.code if c.language == "markdown")
    tex = next(c.value for c in at.code if c.language == "latex")
    check_demo_exports(md, tex, at.selectbox(key="w_overview_sel_baseline").value)


def test_every_chart_saves_as_png_or_svg():
    """Every chart's camera button saves the format chosen in the sidebar, under the chart's own file name."""
    import json

    at = start(None, "overview")
    pages = {"overview": 1, "compare": 3, "domains": 2}

    def configs() -> list[dict]:
        return [json.loads(c.proto.config)["toImageButtonOptions"] for c in at.get("plotly_chart")]

    for page, n in pages.items():
        goto(at, page)
        got = configs()
        assert len(got) == n and all(c["format"] == "png" and c["scale"] == 2 for c in got), (page, got)
        assert len({c["filename"] for c in got}) == n and all(c["filename"] for c in got)
    at.segmented_control(key="w_sel_image_format").set_value("svg").run()
    for page, n in pages.items():
        goto(at, page)
        got = configs()
        assert len(got) == n and all(c["format"] == "svg" for c in got), (page, got)


def test_a_ci_excluding_zero_next_to_not_significant_says_why():
    from dashboard.tables import ci_test_notes

    nan = float("nan")
    got = ci_test_notes(
        ["", "", "low coverage", "", "", "", ""],
        [-0.07, 0.01, 0.02, -0.03, 0.01, nan, 0.01],
        [-0.001, 0.05, 0.06, 0.02, 0.05, 0.2, 0.05],
        [0.03, 0.2, 0.2, 0.5, 0.01, 0.5, nan],
        [False, False, False, False, True, False, False])
    assert got[0] == "the CI excludes 0 and p < 0.05 before the correction, not after"
    assert got[1] == "the CI excludes 0 but the test's p ≥ 0.05 (the bootstrap interval is not the test)"
    assert got[2] == "low coverage; " + got[1]  # an existing note is kept first
    assert got[3:] == ["", "", "", ""]  # CI covers 0; significant; no interval; no p-value


def test_coinciding_runs_need_the_same_mean_at_every_same_k():
    from dashboard.tables import coinciding_runs

    def rows(run, ks, means):
        return [{"run": run, "k": k, "mean": m} for k, m in zip(ks, means, strict=True)]

    curve = pd.DataFrame(rows("a", [1, 10], [0.5, 0.7]) + rows("b", [10, 1], [0.7, 0.5])  # other row order
                         + rows("c", [1, 10], [0.5, 0.71]) + rows("d", [1], [0.5]) + rows("e", [1, 10], [0.5, 0.7]))
    assert coinciding_runs(curve) == [["a", "b", "e"]]
    assert coinciding_runs(curve[curve["run"].isin(["c", "d"])]) == []


def test_matrix_text_has_no_signed_zero():
    from dashboard.drilldown import compare_matrix, signed3

    assert [signed3(v) for v in (0.0123, -0.3, 0.0, -0.0, -0.0004, 0.0004)] == [
        "+0.012", "-0.300", "0.000", "0.000", "0.000", "0.000"]
    cmp = pd.DataFrame({"run_a": ["A", "A"], "run_b": ["B", "C"], "diff": [0.0, 0.25], "p_value": [1.0, 0.01],
                        "p_adjusted": [1.0, 0.02], "significant": [False, True]})
    text = compare_matrix(cmp, ["A", "B", "C"])["text"]
    assert text.loc["B", "A"].split("\n")[0] == text.loc["A", "B"].split("\n")[0] == "0.000"
    assert text.loc["C", "A"].split("\n")[0] == "+0.250" and text.loc["A", "C"].split("\n")[0] == "-0.250"


def test_float_columns_keep_four_decimals_and_own_formats_win():
    def formats(at, key_cols):
        for d in at.dataframe:
            value = d.value
            if isinstance(value, pd.DataFrame) and set(key_cols) <= set(value.columns):
                cfg = json.loads(d.proto.columns or "{}")
                return value, {c: cfg.get(c, {}).get("type_config", {}).get("format") for c in value.columns}
        raise AssertionError(f"no table with {key_cols}")

    at = goto(T.start(), "domains")
    value, fmt = formats(at, ["strong-128d", "weak-64d", "lexical"])  # mean per run and domain
    floats = [c for c in value.columns if pd.api.types.is_float_dtype(value[c].dtype)]
    assert floats and all(fmt[c] == "%.4f" for c in floats), fmt  # 0.5700, not 0.57
    assert fmt["n_queries"] is None  # counts stay as they are
    at = goto(at, "compare")
    value, fmt = formats(at, ["run", "run − baseline", "p adjusted"])
    assert fmt["run − baseline"] == "%+.4f"  # its own format (signed) wins
    assert all(fmt[c] == "%.4f" for c in value.columns if pd.api.types.is_float_dtype(value[c].dtype)
               and c not in ("run − baseline", *P_VALUE_COLUMNS)), fmt
    assert fmt["p adjusted"] is None and fmt["p-value"] is None  # numbers that read as p-values (no format)


def test_no_empty_domain_or_title_columns_without_their_files():
    def columns(at) -> list[list[str]]:
        return [list(map(str, d.value.columns)) for d in at.dataframe if isinstance(d.value, pd.DataFrame)]

    at = start(two_query_workspace(), "queries")  # no domain mapping, no document metadata
    assert not at.exception
    shown = columns(at)
    assert shown and not any("domain" in c for c in shown) and not any("title" in c for c in shown), shown
    assert not any("domain:" in t.value for t in at.text)
    at = goto(T.start(), "queries")  # the demo has both
    shown = columns(at)
    assert any("domain" in c for c in shown) and any("title" in c for c in shown), shown
    assert any("domain:" in t.value for t in at.text)

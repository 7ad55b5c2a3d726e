"""The Streamlit dashboard under ``streamlit.testing.v1.AppTest``.

Uploads go through the real ``st.file_uploader`` widgets (``AppTest`` supports
``file_uploader(...).set_value((name, bytes, mime))`` since Streamlit 1.5x).
The pure upload pipeline is also tested without Streamlit in ``test_workspace.py``.

Note: with a ``pages/`` folder, ``AppTest`` re-runs the current page file
directly after the first run (Streamlit's ``pages/``-directory mode); every page
therefore starts with ``ui.page_setup()``, and the tests work either way.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from demo_oracle import oracle_demo
from snapshot_store import store_snapshot  # (importing it points the user's folders away)
from streamlit.testing.v1 import AppTest

from dashboard import persist as P
from dashboard import tables as T
from evalcore import workspace as W
from evalcore.evaluate import evaluate
from evalcore.intervals import summarize_with_intervals
from evalcore.io import load_qrels, load_run
from evalcore.workspace.demo import DEMO_RUN_NAMES

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGES = ["data", "overview", "compare", "versions", "queries", "domains", "fusion", "agreement"]
TIMEOUT = 90

QUERIES = [f"q{i}" for i in range(15)]
DOCS = [f"d{j}" for j in range(40)]


# ------------------------------------------------------------------------------------------ data


def trec_qrels(seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    lines = [f"{q} 0 {d} {g}" for q in QUERIES
             for d, g in zip(rng.choice(DOCS, 4, replace=False), (3, 2, 1, 0), strict=True)]
    return ("\n".join(lines) + "\n").encode()


def scored(seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    return {q: {d: float(round(s, 4)) for d, s in zip(DOCS, rng.random(len(DOCS)), strict=True)} for q in QUERIES}


def trec_run(seed: int) -> bytes:
    lines = [f"{q} Q0 {d} {r + 1} {s} tag" for q, docs in scored(seed).items()
             for r, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1])[:20])]
    return ("\n".join(lines) + "\n").encode()


def csv_run(seed: int) -> bytes:
    rows = [f"{q},{d},{s}" for q, docs in scored(seed).items() for d, s in docs.items()]
    return ("query_id,doc_id,score\n" + "\n".join(rows) + "\n").encode()


def json_run(seed: int) -> bytes:
    return json.dumps(scored(seed)).encode()


def npz(ids, dim: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(ids), embeddings=rng.normal(size=(len(ids), dim)).astype(np.float32))
    return buf.getvalue()


# ------------------------------------------------------------------------------------------ helpers


def open_app(name: str = P.DEMO, **state) -> AppTest:
    """An AppTest session opened on the workspace ``name`` (the URL's ``?ws=``), ``state`` set before its first run."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["ws"] = name
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def stored(at: AppTest) -> W.Workspace:
    """The workspace the session shows, opened from its folder (what another process would see)."""
    return W.Workspace.open(P.path_of(at.session_state[P.ACTIVE]), create=False)


def start(workspace: W.Snapshot | None = None) -> AppTest:
    """A session on the built-in demo, or on a new workspace holding ``workspace``."""
    return open_app(P.DEMO if workspace is None else store_snapshot(workspace))


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def unescape(md: str) -> str:
    return re.sub(r"\\(.)", r"\1", md)


def errors(at: AppTest) -> list[str]:
    return [unescape(e.value) for e in at.error]


def overview_text(at: AppTest) -> pd.DataFrame:
    for df in at.dataframe:
        v = df.value
        if isinstance(v, pd.DataFrame) and v.index.name == "run":
            return v
    raise AssertionError("no overview table")


def numbers_table(at: AppTest) -> pd.DataFrame:
    for df in at.dataframe:
        v = df.value
        if isinstance(v, pd.DataFrame) and {"run", "metric", "k", "mean", "ci_low", "ci_high"} <= set(v.columns):
            return v
    raise AssertionError("no numbers table")


def shown(element) -> pd.DataFrame:
    """The cells a table element shows: its values, the p-value columns as a ``pandas.Styler``'s text (``0.387`` /
    ``<0.001`` / ``1``: :func:`dashboard.tables.p_values_read`), a missing value in any column as the placeholder the
    browser draws there ("None" unless one is given)."""
    value = element.value.copy()
    raw = element.proto.arrow_data.styler.display_values
    if raw:
        text = pa.ipc.open_stream(io.BytesIO(raw)).read_all().to_pandas()
        for col in T.p_value_columns(value):
            value[col] = text[col].to_numpy(dtype=object)
    placeholder = element.proto.placeholder if element.proto.HasField("placeholder") else "None"
    missing = element.value.isna()
    for col in value.columns[missing.any().to_numpy()]:
        value[col] = np.where(missing[col].to_numpy(), placeholder, value[col].to_numpy(dtype=object))
    return value


def _strings(obj):
    """Every string Plotly may draw inside a figure's JSON (``customdata`` included: hovers show it)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def clear_demo(at: AppTest) -> AppTest:
    goto(at, "data")
    at.button(key="clear_demo").click().run()
    assert not at.exception
    return at


def empty_data_page() -> AppTest:
    """A session without the demo, on the Data page (what "Clear demo" gives; tested above)."""
    return goto(start(W.Snapshot()), "data")


# ------------------------------------------------------------------------------------------ demo


@pytest.fixture(scope="module")
def demo_app() -> AppTest:
    return start()


def test_opens_on_the_demo_and_every_page_runs(demo_app):
    at = demo_app
    assert at.session_state["ws"].is_demo
    assert any("synthetic" in c.value.lower() for c in at.caption)  # the overview says so
    for page in PAGES:
        goto(at, page)
        assert not errors(at), (page, errors(at))
        assert at.title[0].value
    goto(at, "data")
    assert any("synthetic" in i.value.lower() for i in at.info)
    assert at.button(key="clear_demo")
    goto(at, "overview")
    assert len(at.get("plotly_chart")) == 1
    labels = [b.label for b in at.get("download_button")]
    # report, per-query table, one per run (named after it), the leaderboard (2)
    assert {"Markdown", "LaTeX", "Report (JSON)", "Per-query table (CSV)"} <= set(labels)
    assert [unescape(lab) for lab in labels if lab.startswith("Results per k of")] == [
        f"Results per k of {r} (CSV)" for r in DEMO_RUN_NAMES]
    assert any(e.label == "How to read nDCG@10 and Recall@10" for e in at.expander)
    goto(at, "compare")
    assert len(at.get("plotly_chart")) == 3  # matrix, scatter, histogram
    goto(at, "domains")
    assert any("linguistics" in unescape(w.value) and "too small" in w.value for w in at.warning)
    assert len(at.get("plotly_chart")) == 2
    flips = next(d.value for d in at.dataframe if "domain difference" in getattr(d.value, "columns", []))
    assert "mathematics" in set(flips["domain"])  # the weak model wins there, against the overall result
    goto(at, "queries")
    assert any(t.value.startswith("query: ") for t in at.text)


def test_overview_numbers_equal_evalcore(demo_app):
    at = goto(demo_app, "overview")
    demo = oracle_demo(0)
    s = W.Settings().validated()
    ev = evaluate(demo.qrels, demo.runs, metrics=list(s.metrics), k=list(s.k), ties=s.ties)
    expected = summarize_with_intervals(ev.table)  # the API's defaults: the pages' numbers
    shown = numbers_table(at)
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), expected.reset_index(drop=True))
    at.multiselect(key="ov_columns").set_value([f"{m}@{k}" for m in s.metrics for k in s.k]).run()
    text = overview_text(at)
    assert list(text.index) == list(DEMO_RUN_NAMES)
    assert list(text["coverage"]) == ["300/300 (100%)"] * 3
    exp = expected.assign(run=expected["run"].astype(str), metric=expected["metric"].astype(str))
    for row in exp.itertuples(index=False):
        cell = text.loc[row.run, f"{row.metric}@{row.k}"]
        assert cell.lstrip("★ ") == f"{row.mean:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}]"
        best = exp[(exp["metric"] == row.metric) & (exp["k"] == row.k)]["mean"].max()
        assert cell.startswith("★") == (row.mean == best)


def test_interactions_never_recompute(demo_app, monkeypatch):
    """Changing k, the query or the baseline only filters: no parsing, ranking or evaluation."""
    calls = {"build_run": 0, "evaluate_workspace": 0, "prepare_qrels": 0}
    for name in calls:
        original = getattr(W, name)

        def counting(*a, _name=name, _orig=original, **kw):
            calls[_name] += 1
            return _orig(*a, **kw)

        monkeypatch.setattr(W, name, counting)
    at = goto(demo_app, "overview")
    at.selectbox(key="w_overview_sel_ov_curve_metric").select("recall").run()
    at = goto(at, "compare")
    at.selectbox(key="w_compare_sel_k").select(5).run()
    at.selectbox(key="w_compare_sel_baseline").select("lexical").run()
    at = goto(at, "queries")
    q = at.selectbox(key="w_queries_sel_query")
    q.select(q.options[3]).run()
    assert not at.exception
    assert calls == {"build_run": 0, "evaluate_workspace": 0, "prepare_qrels": 0}


def test_compare_pair_is_the_baseline_and_run_b_everywhere(demo_app):
    # run A of Compare's pair view is the baseline: the URL and the drill-down get (baseline, run B), never
    # a stale run A from another page (which repeated a run in the URL and flipped B - A on Queries)
    at = goto(demo_app, "queries")
    at.selectbox(key="w_queries_sel_run_a").select("weak-64d").run()
    at = goto(at, "compare")
    at.selectbox(key="w_compare_sel_baseline").select("strong-128d").run()
    at.selectbox(key="w_compare_sel_run_b").select("weak-64d").run()
    assert not at.exception
    assert at.query_params["run"] == ["strong-128d", "weak-64d"]
    at = goto(at, "queries")
    assert at.selectbox(key="w_queries_sel_run_a").value == "strong-128d"
    assert at.selectbox(key="w_queries_sel_run_b").value == "weak-64d"


def diversity_text(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame)
                and d.value.index.name == "run" and any(str(c).startswith("ild@") for c in d.value.columns))


def test_overview_shows_diversity_of_the_embedding_runs(demo_app):
    from evalcore.diversity import diversity_table
    from evalcore.io import Embeddings

    at = goto(demo_app, "overview")
    assert at.selectbox(key="ov_div_k").value == 10
    text = diversity_text(at)
    assert list(text.index) == ["strong-128d", "weak-64d"]  # the embedding models; lexical is a ranked run
    assert list(text.columns) == ["ild@10", "alpha_ndcg(alpha=0.5)@10"]
    assert any("No embeddings, not shown: lexical" in t.value for t in at.text)
    assert any("ILD@10" in c.value and "novelty" in c.value and "Clarke et al." in c.value for c in at.caption)
    demo = oracle_demo(0)
    for run in text.index:
        t = diversity_table(demo.runs[run], Embeddings.from_arrays(demo.item_ids, demo.embeddings[run]),
                            k_values=[10], qrels=demo.qrels, ties="trec")
        s = summarize_with_intervals(t).assign(metric=lambda d: d["metric"].astype(str)).set_index("metric")
        for m in ("ild", "alpha_ndcg(alpha=0.5)"):
            r = s.loc[m]
            assert text.loc[run, f"{m}@10"] == f"{r['mean']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
    at.selectbox(key="ov_div_k").select(5).run()
    assert not at.exception and list(diversity_text(at).columns) == ["ild@5", "alpha_ndcg(alpha=0.5)@5"]
    # α of α-nDCG: the column, its values and the caption follow it; 1 is nDCG's own mean
    at.number_input(key="ov_div_alpha").set_value(1.0).run()
    text = diversity_text(at)
    assert not at.exception and list(text.columns) == ["ild@5", "alpha_ndcg(alpha=1)@5"]
    assert any("α = 1)" in c.value for c in at.caption)
    run = text.index[0]
    t = diversity_table(demo.runs[run], Embeddings.from_arrays(demo.item_ids, demo.embeddings[run]), k_values=[5],
                        alpha=1.0, qrels=demo.qrels, ties="trec")
    r = summarize_with_intervals(t).assign(metric=lambda d: d["metric"].astype(str)).set_index("metric").loc[
        "alpha_ndcg(alpha=1)"]
    assert text.loc[run, "alpha_ndcg(alpha=1)@5"] == f"{r['mean']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"


P_TEXT = re.compile(r"^(<0\.001|0\.0*[1-9]\d{0,3}|1|–)$")  # at most 4 significant digits


def test_no_none_cells_and_readable_p_values(demo_app):
    """No table of the demo shows a None/NaN cell; p-values read 0.387 / <0.001, never 3.87e-1."""
    at = demo_app
    for page in PAGES:
        goto(at, page)
        for el in at.dataframe:
            if not isinstance(el.value, pd.DataFrame):
                continue
            v = shown(el)
            assert not v.isna().any().any(), (page, v.columns[v.isna().any()].tolist(), v.head(3))
            for col in set(v.columns) & set(T.P_VALUE_COLUMNS):
                assert pd.api.types.is_float_dtype(el.value[col].dtype), (page, col)  # numbers, shown as text
                assert v[col].map(lambda x: isinstance(x, str) and bool(P_TEXT.match(x))).all(), (page, col, v[col])
        for chart in at.get("plotly_chart"):
            assert not any(re.search(r"p=\d(\.\d+)?e-?\d", t) for t in _strings(json.loads(chart.proto.spec)))
    goto(at, "compare")
    table = next(shown(d) for d in at.dataframe if "p adjusted" in getattr(d.value, "columns", []))
    assert (table["p adjusted"] == "<0.001").any()  # the demo's models differ clearly
    goto(at, "domains")
    sig = next(shown(d) for d in at.dataframe if "p_adjusted" in getattr(d.value, "columns", []))
    # (a tested domain may carry a note too: why its interval excludes 0 while it is not significant)
    untested = sig[sig["note"].astype(str).str.startswith("too small to test")]
    assert len(untested) and (untested[["ci_low", "ci_high", "p_value", "p_adjusted"]] == "–").all().all()


def test_compare_opens_the_query_drilldown(demo_app):
    at = goto(demo_app, "compare")
    box = at.selectbox(key="w_compare_sel_query")
    target = box.options[1]
    box.select(target).run()
    at.button(key="cmp_open").click().run()
    assert not at.exception
    assert at.title[0].value == "Queries"
    assert at.session_state["sel_query"] == target
    assert at.selectbox(key="w_queries_sel_query").value == target
    assert any(t.value.startswith(f"query: {target}") for t in at.text)
    # ground truth with each run's rank of each judged item, and each run's list side by side
    gt = next(d.value for d in at.dataframe if "rank in lexical" in getattr(d.value, "columns", [])
              or "rank in strong-128d" in getattr(d.value, "columns", []))
    rank_cols = [c for c in gt.columns if c.startswith("rank in ")]
    assert rank_cols and all(gt[c].str.match(r"^(\d+|> 100)$").all() for c in rank_cols)
    lists = [d.value for d in at.dataframe if list(getattr(d.value, "columns", []))[:3] == ["rank", "grade", "doc_id"]]
    assert len(lists) == 2  # run A and run B side by side by default
    assert "compare_goto_query" not in at.session_state  # back to Compare stays on Compare
    assert goto(at, "compare").title[0].value == "Compare runs"


def test_fusion_adds_a_run_everywhere():
    at = goto(start(), "fusion")
    assert not errors(at)
    table = next(d.value for d in at.dataframe if getattr(d.value, "index", pd.Index([])).name == "run")
    assert len(table) == 4  # three inputs + the preview
    at.button(key="fu_add").click().run()
    ws = at.session_state["ws"]
    assert [r.kind for r in ws.runs].count("fused") == 1
    at = goto(at, "overview")
    assert "rrf" in overview_text(at).index


# ------------------------------------------------------------------------------------------ uploads


def test_uploads_of_several_formats_and_a_bad_file():
    at = clear_demo(start())  # the one-click "Clear demo"
    assert not at.session_state["ws"].runs
    at.file_uploader(key="up_gt").set_value(("qrels.txt", trec_qrels(), "text/plain")).run()
    assert not at.exception and not errors(at)
    assert any(t.value == "trec" for t in at.text)  # detected format shown
    at.file_uploader(key="up_runs").set_value([
        ("bm25.trec", trec_run(1), "text/plain"),
        ("dense.csv", csv_run(2), "text/csv"),
        ("splade.json", json_run(3), "application/json"),
        ("broken.trec", b"q1 Q0 d1 1 notanumber x\n", "text/plain"),
    ]).run()
    assert not at.exception
    errs = errors(at)
    assert len(errs) == 1 and "broken.trec" in errs[0] and "notanumber" in errs[0]
    # an embedding run through the form (item-to-item over the ground truth's queries)
    items = QUERIES + DOCS
    at.text_input(key="emb_name").input("emb")
    at.file_uploader(key="up_emb").set_value(("emb.npz", npz(items, 8, 4), "application/octet-stream"))
    at.button[[b.label for b in at.button].index("Add embedding run")].click().run()
    assert not at.exception
    ws = at.session_state["ws"]
    # issue 9: a file that does not load is reported and not stored; the others stay loaded
    assert [r.name for r in ws.runs] == ["bm25", "dense", "splade", "emb"]
    assert not errors(at) and any(
        "added embedding run emb (from emb.npz)" in s.value.replace("\\", "") for s in at.success)
    assert stored(at).run_names() == ["bm25", "dense", "splade", "emb"]

    at = goto(at, "overview")
    text = overview_text(at)
    assert list(text.index) == ["bm25", "dense", "splade", "emb"]
    runs = {"bm25": load_run(trec_run(1)), "dense": load_run(csv_run(2), label="dense.csv"),
            "splade": load_run(json_run(3), label="splade.json")}
    s = W.Settings().validated()
    ev = evaluate(load_qrels(trec_qrels()), runs, metrics=list(s.metrics), k=list(s.k), ties=s.ties)
    expected = summarize_with_intervals(ev.table)  # resamples shared by every run: the same with "emb" or not
    shown = numbers_table(at)
    shown = shown[shown["run"].astype(str) != "emb"].reset_index(drop=True)
    pd.testing.assert_frame_equal(shown.assign(run=shown["run"].astype(str), metric=shown["metric"].astype(str)),
                                  expected.assign(run=expected["run"].astype(str),
                                                  metric=expected["metric"].astype(str)),
                                  check_categorical=False)

    # rename and remove on the Data page
    at = goto(at, "data")
    uid = ws.runs[0].uid
    at.text_input(key=f"name_{uid}").input("BM25").run()
    assert at.session_state["ws"].runs[0].name == "BM25"
    at.button(key=f"rm_{ws.runs[2].uid}").click().run()
    assert [r.name for r in at.session_state["ws"].runs] == ["BM25", "dense", "emb"]
    assert not errors(at)


def test_bad_ground_truth_is_reported_and_runs_are_kept():
    at = empty_data_page()
    at.file_uploader(key="up_runs").set_value([("bm25.trec", trec_run(1), "text/plain")]).run()
    at.file_uploader(key="up_gt").set_value(("qrels.txt", b"q1 0 d1 high\n", "text/plain")).run()
    assert not at.exception
    errs = errors(at)
    assert any("qrels.txt" in e and "high" in e and "nothing was changed" in e for e in errs), errs
    assert [r.name for r in at.session_state["ws"].runs] == ["bm25"]
    assert at.session_state["ws"].ground_truth is None  # the file that does not load was not taken
    at = goto(at, "overview")  # no traceback: a message and a link back to the Data page
    assert any("No ground truth loaded" in i.value for i in at.info)


def test_ordered_list_ground_truth_with_aspects():
    rng = np.random.default_rng(0)
    ids = [f"tt{i:04d}" for i in range(12)]
    gt = [{"movie_id": m, **{f"5_most_similar_movies_{a}_ordered": list(rng.choice([x for x in ids if x != m], 5,
                                                                                     replace=False))
                             for a in ("overall", "content", "vibes")}} for m in ids]
    at = empty_data_page()
    at.file_uploader(key="up_gt").set_value(("movies.json", json.dumps(gt).encode(), "application/json")).run()
    assert not errors(at)
    assert any(t.value == "ordered_lists" for t in at.text)
    at.text_input(key="emb_name").input("content")
    at.file_uploader(key="up_emb").set_value(("content.npz", npz(ids, 6, 1), "application/octet-stream"))
    at.button[[b.label for b in at.button].index("Add embedding run")].click().run()
    uid = at.session_state["ws"].runs[0].uid
    aspect_box = at.selectbox(key=f"aspect_{uid}")
    assert aspect_box.options == ["5_most_similar_movies_overall_ordered", "5_most_similar_movies_content_ordered",
                                  "5_most_similar_movies_vibes_ordered"]
    aspect_box.select("5_most_similar_movies_content_ordered").run()
    assert at.session_state["ws"].runs[0].aspect == "5_most_similar_movies_content_ordered"
    assert not errors(at)
    # side files: a domain mapping and document metadata
    doms = "query_id,domain\n" + "".join(f"{m},{'drama' if i % 2 else 'comedy'}\n" for i, m in enumerate(ids))
    meta = "doc_id,title,text\n" + "".join(f"{m},Title of {m},Plot of {m}\n" for m in ids)
    at.file_uploader(key="up_domains").set_value(("domains.csv", doms.encode(), "text/csv")).run()
    at.file_uploader(key="up_meta").set_value(("meta.csv", meta.encode(), "text/csv")).run()
    assert not errors(at)
    at = goto(at, "overview")
    assert list(overview_text(at).index) == ["content"]
    at = goto(at, "domains")
    sizes = next(d.value for d in at.dataframe if list(getattr(d.value, "columns", [])) == ["domain", "n_queries"])
    assert sizes.set_index("domain")["n_queries"].to_dict() == {"comedy": 6, "drama": 6}
    at = goto(at, "queries")
    gt = next(d.value for d in at.dataframe if "rank in content" in getattr(d.value, "columns", []))
    assert gt["title"].str.startswith("Title of tt").all()


def test_settings_change_the_evaluation():
    at = goto(start(), "data")
    at.multiselect(key="set_k").set_value([5, 10])
    at.multiselect(key="set_metrics").set_value(["ndcg", "precision"])
    at.number_input(key="set_sample").set_value(50)
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert not errors(at)
    s = at.session_state["ws"].settings
    assert s.k == (5, 10) and s.metrics == ("ndcg", "precision") and s.sample_size == 50
    at = goto(at, "overview")
    nums = numbers_table(at)
    assert set(nums["n"]) == {50}
    assert sorted({f"{m}@{k}" for m, k in zip(nums["metric"].astype(str), nums["k"], strict=True)}) == \
        ["ndcg@10", "ndcg@5", "precision@10", "precision@5"]


def test_parameterised_metrics_flow_to_every_page():
    at = goto(start(), "data")
    at.multiselect(key="set_k").set_value([5, 10])
    at.multiselect(key="set_metrics").set_value(["ndcg"])
    at.text_input(key="set_extra_metrics").input("recall(rel=2), P(rel = 2)@5")
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert not at.exception and not errors(at)
    assert at.session_state["ws"].settings.metrics == ("ndcg", "recall(rel=2)", "precision(rel=2)@5")
    assert at.text_input(key="set_extra_metrics").value == "recall(rel=2), precision(rel=2)@5"  # kept, canonical

    at = goto(at, "overview")
    demo = oracle_demo(0)
    ev = evaluate(demo.qrels, demo.runs, metrics=["ndcg", "recall(rel=2)", "P(rel=2)@5"], k=[5, 10], ties="trec")
    expected = summarize_with_intervals(ev.table)
    pd.testing.assert_frame_equal(numbers_table(at).reset_index(drop=True), expected.reset_index(drop=True))
    at.multiselect(key="ov_columns").set_value(["ndcg@10", "recall(rel=2)@5", "recall(rel=2)@10",
                                                "precision(rel=2)@5"]).run()
    assert {"recall(rel=2)@5", "recall(rel=2)@10", "precision(rel=2)@5"} <= set(overview_text(at).columns)
    assert "precision(rel=2)@10" not in overview_text(at).columns  # a fixed cutoff stays fixed
    for page in ("compare", "queries", "domains"):
        goto(at, page)
        box = at.selectbox(key=f"w_{page}_sel_metric")
        assert {"recall(rel=2)", "precision(rel=2)"} <= set(box.options)
        box.select("precision(rel=2)").run()
        assert not at.exception and not errors(at), (page, errors(at))
        assert at.selectbox(key=f"w_{page}_sel_k").options == ["5"]  # the only cutoff of P(rel=2)@5
    goto(at, "fusion")
    fused = next(d.value for d in at.dataframe if getattr(d.value, "index", pd.Index([])).name == "run")
    assert "precision(rel=2)@5" in fused.columns


@pytest.mark.parametrize(("text", "message"), [
    ("recall(rel=2), foo@3", "unknown measure 'foo@3'"),
    ("ndcg(rel=2)", "measure 'ndcg' takes no parameter 'rel'"),
    ("recall(rel=x)", "rel must be an integer"),
])
def test_bad_parameterised_metric_is_an_error_message(text, message):
    at = goto(start(), "data")
    before = at.session_state["ws"].settings
    at.text_input(key="set_extra_metrics").input(text)
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert not at.exception
    errs = errors(at)
    assert len(errs) == 1 and errs[0].startswith("Settings not applied: ") and message in errs[0], errs
    assert at.session_state["ws"].settings == before
    assert len(errs[0]) < 400 and "bpref" not in errs[0]  # not the catalogue of every measure (3,000 characters)


def test_user_text_is_never_markdown():
    """Ids and names with Markdown/HTML reach only plain-text elements, or are escaped."""
    marker = "Z*x*_<b>y</b>[l](javascript:alert(1))$m$:red[t]"
    qrels = f"{marker} 0 d1 1\nq2 0 d2 1\n".encode()
    at = empty_data_page()
    at.file_uploader(key="up_gt").set_value(("g.txt", qrels, "text/plain")).run()
    at.file_uploader(key="up_runs").set_value([
        (f"{marker}.trec", f"{marker} Q0 d1 1 1.0 t\nq2 Q0 d2 1 1.0 t\n".encode(), "text/plain"),
        ("other.trec", f"{marker} Q0 d2 1 1.0 t\nq2 Q0 d2 1 1.0 t\n".encode(), "text/plain"),
        (f"bad{marker}.trec", f"{marker} Q0 d1 1 oops t\n".encode(), "text/plain"),
    ]).run()
    assert not at.exception
    # the refused file's message, shown once next to the uploader (issue 9: it is not stored)
    assert any(marker in unescape(e) for e in errors(at))  # escaped in the message, readable once rendered
    assert all(marker not in e.value for e in at.error)
    escaped_in_charts = False
    for page in PAGES:
        goto(at, page)
        for chart in at.get("plotly_chart"):  # Plotly renders <b>, <a href>...: ids must arrive escaped
            texts = [t for t in _strings(json.loads(chart.proto.spec)) if "y</b>" in t or "y&lt;/b&gt;" in t]
            assert not any("<b>y</b>" in t for t in texts), (page, texts[:3])
            escaped_in_charts |= any("&lt;b&gt;y&lt;/b&gt;" in t for t in texts)
        md = [*at.markdown, *at.caption, *at.error, *at.warning, *at.info, *at.success, *at.title, *at.header,
              *at.subheader]
        for el in md:
            assert marker not in el.value, (page, el.value)
        for w in [*at.selectbox, *at.multiselect, *at.text_input, *at.button, *at.number_input, *at.toggle]:
            assert marker not in str(w.label), (page, w.label)
    assert escaped_in_charts  # the query id is in the Compare scatter, as text

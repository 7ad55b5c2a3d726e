"""The persistent workspace (issue #9): API -> store -> API round trips, evaluation, damage, schema.

Oracles: :func:`evalcore.evaluate` and :func:`evalcore.embedding_run` on the same data, and
the dashboard's in-memory pipeline (``Snapshot`` + ``evalcore.workspace.pipeline``, the
``resolve`` helper of ``tests/test_workspace.py``) on the same bytes. Nothing here compares
against numbers copied from the store's own output.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_workspace import QUERIES, SETTINGS, csv_run, npz, ordered_lists, trec_qrels, trec_run
from test_workspace import resolve as snapshot_resolve

from evalcore import Qrels, Run, Workspace, embedding_run, evaluate
from evalcore import workspace as W
from evalcore.errors import (
    CorruptArtifactError,
    DuplicateIdError,
    EvalcoreError,
    EvalcoreWarning,
    OptionError,
    SchemaVersionError,
    ValueTypeError,
    WorkspaceError,
)
from evalcore.io import Embeddings, load_qrels, load_run
from evalcore.workspace import codecs
from evalcore.workspace.store import SCHEMA_VERSION

METRICS = ["ndcg", "recall", "mrr", "map"]


def tie_heavy(seed: int, n_q: int = 15, n_d: int = 30) -> tuple[Qrels, dict[str, Run]]:
    """Random judgments and runs whose scores take 3 values (many ties), with a query absent from a run."""
    rng = np.random.default_rng(seed)
    judg = {f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in rng.choice(n_d, 6, replace=False)}
            for i in range(n_q)}
    judg["q_empty"] = {}
    qrels = Qrels.from_dict(judg, domains={f"q{i}": "ab"[i % 2] for i in range(n_q)})
    runs = {}
    for name in ("bm25", "dense"):
        res = {f"q{i}": {f"d{j}": float(rng.integers(0, 3)) / 7 for j in rng.choice(n_d, 12, replace=False)}
               for i in range(n_q - 1)}
        res["q_only_in_run"] = {"d1": 1.0}
        runs[name] = Run.from_dict(res, name=name)
    return qrels, runs


def assert_same_run(a: Run, b: Run) -> None:
    assert a.name == b.name
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert np.array_equal(a.q, b.q)
    assert a.doc_ids.tolist() == b.doc_ids.tolist()
    assert a.scores.dtype == b.scores.dtype == np.float64
    assert a.scores.tobytes() == b.scores.tobytes()  # bit for bit


def assert_same_qrels(a: Qrels, b: Qrels) -> None:
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert np.array_equal(a.q, b.q) and a.doc_ids.tolist() == b.doc_ids.tolist()
    assert a.grades.tobytes() == b.grades.tobytes()
    assert (a.domains is None) == (b.domains is None)
    if a.domains is not None:
        assert a.domains.tolist() == b.domains.tolist()


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    return Workspace.open(tmp_path / "ws")


# ------------------------------------------------------------------------------------------ stored data


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_codecs_round_trip_bit_for_bit(tmp_path: Path, seed: int) -> None:
    qrels, runs = tie_heavy(seed)
    codecs.write_qrels(qrels, tmp_path / "q.parquet")
    assert_same_qrels(qrels, codecs.read_qrels(tmp_path / "q.parquet"))
    no_dom = Qrels(qrels.query_ids, qrels.q, qrels.doc_ids, qrels.grades, None)
    codecs.write_qrels(no_dom, tmp_path / "q2.parquet")
    assert codecs.read_qrels(tmp_path / "q2.parquet").domains is None
    run = runs["bm25"]
    codecs.write_run(run, tmp_path / "r.parquet")
    back = codecs.read_run(tmp_path / "r.parquet", name="bm25")
    assert_same_run(run, back)
    for ties in ("trec", "docid_asc", "input"):  # same ranking under every tie rule, "input" reads the row order
        assert back.ranked_lists(ties=ties) == run.ranked_lists(ties=ties)
    rng = np.random.default_rng(seed)
    vec = rng.normal(size=(50, 7)).astype(np.float64)
    codecs.write_vectors(np.asfortranarray(vec), tmp_path / "v.npy")
    stored = codecs.read_vectors(tmp_path / "v.npy")
    assert isinstance(stored, np.memmap) and stored.dtype == np.float32 and stored.flags.c_contiguous
    assert stored.tobytes() == vec.astype(np.float32).tobytes()
    ev = evaluate(qrels, runs, metrics=METRICS, k=[1, 5, 10])
    codecs.write_results(ev.table, tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(codecs.read_results(tmp_path / "t.parquet"), ev.table)


@pytest.mark.parametrize("layout", ["plain", "row_groups", "dictionary_overflow"])
def test_stored_runs_of_any_parquet_layout_read_back_the_same(tmp_path: Path, layout: str) -> None:
    """Runs are read with their document ids dictionary-encoded: a file written without dictionary
    pages (as earlier versions could), or in several row groups (one dictionary each), reads back
    the same run; a duplicated (query, document) row in a stored file is a clear error."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, runs = tie_heavy(3)
    run = runs["bm25"]
    codecs.write_run(run, tmp_path / "r.parquet")
    table = pq.read_table(tmp_path / "r.parquet")
    # "dictionary_overflow": earlier versions' default, a dictionary page too small for the ids, so each row
    # group falls back to plain strings part way (reading rebuilds a dictionary per row group)
    options = {"plain": {"use_dictionary": False}, "row_groups": {"row_group_size": 7},
               "dictionary_overflow": {"row_group_size": 40, "dictionary_pagesize_limit": 64}}[layout]
    pq.write_table(table, tmp_path / "other.parquet", **options)
    assert pq.ParquetFile(tmp_path / "other.parquet").metadata.num_row_groups == (
        1 if layout == "plain" else -(-table.num_rows // options["row_group_size"]))
    back = codecs.read_run(tmp_path / "other.parquet", name="bm25")
    assert_same_run(run, back)
    assert back.ranked_lists(ties="trec") == run.ranked_lists(ties="trec")
    doubled = pa.concat_tables([table, table.slice(table.num_rows - 1)])  # the last row once more
    pq.write_table(doubled, tmp_path / "dup.parquet", **options)
    with pytest.raises(DuplicateIdError, match="listed twice"):
        codecs.read_run(tmp_path / "dup.parquet", name="bm25")
    docs = table.column("doc_id").to_pylist()
    docs[-1] = None  # a data row without its document id
    holed = table.set_column(table.column_names.index("doc_id"), "doc_id", pa.array(docs, type=pa.string()))
    pq.write_table(holed, tmp_path / "hole.parquet", **options)
    with pytest.raises(ValueTypeError, match="document id is missing"):
        codecs.read_run(tmp_path / "hole.parquet", name="bm25")
    queries = table.column("query_id").to_pylist()
    n_head = len(run.query_ids)
    for where, value, message in ((n_head, None, "query id is missing"),
                                  (-1, "no-such-query", "'no-such-query' has rows but no header row")):
        bad = list(queries)
        bad[where] = value
        broken = table.set_column(0, "query_id", pa.array(bad, type=pa.string()))
        pq.write_table(broken, tmp_path / "broken.parquet", **options)
        with pytest.raises(ValueTypeError, match=message):
            codecs.read_run(tmp_path / "broken.parquet", name="bm25")


def test_a_large_stored_run_read_in_batches_sharing_a_dictionary_reads_back_the_same(tmp_path: Path) -> None:
    """A run of 150,000 rows (60,000 document ids, more than Parquet's default dictionary page holds)
    is handed over by arrow in several batches that share their row group's dictionary: the codes of
    every batch map to one vocabulary, and the run reads back the same."""
    import pyarrow.parquet as pq

    rng = np.random.default_rng(11)
    nq, depth = 1500, 100
    query_ids = np.array([f"q{i}" for i in range(nq)], dtype=object)
    docs = np.stack([rng.choice(60_000, depth, replace=False) for _ in range(nq)])  # 100 distinct ids a query
    vocab = np.array([f"document-{d:08d}-of-a-large-corpus" for d in range(60_000)], dtype=object)
    run = Run.from_codes(query_ids, np.repeat(np.arange(nq), depth), vocab, docs.ravel(),
                         rng.random(nq * depth).round(3), name="big")
    codecs.write_run(run, tmp_path / "big.parquet")
    assert pq.ParquetFile(tmp_path / "big.parquet").metadata.num_row_groups == 1
    column = pq.read_table(tmp_path / "big.parquet", read_dictionary=["doc_id"]).column("doc_id")
    assert column.num_chunks > 1
    assert_same_run(run, codecs.read_run(tmp_path / "big.parquet", name="big"))


def test_stored_qrels_with_a_query_without_header_row_is_a_clear_error(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    qrels, _ = tie_heavy(5)
    codecs.write_qrels(qrels, tmp_path / "q.parquet")
    table = pq.read_table(tmp_path / "q.parquet")
    queries = table.column("query_id").to_pylist()
    queries[-1] = "no-such-query"
    pq.write_table(table.set_column(0, "query_id", pa.array(queries, type=pa.string())), tmp_path / "b.parquet")
    with pytest.raises(ValueTypeError, match="'no-such-query' has rows but no header row"):
        codecs.read_qrels(tmp_path / "b.parquet")


def test_stored_runs_do_not_depend_on_the_order_of_parquet_dictionaries(tmp_path: Path) -> None:
    """Query ids are read dictionary-encoded: a file whose dictionary lists the queries in another
    order than its header rows (and holds an unused entry) still gives the header's query order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, runs = tie_heavy(4)
    run = runs["bm25"]
    codecs.write_run(run, tmp_path / "r.parquet")
    table = pq.read_table(tmp_path / "r.parquet")
    values = table.column("query_id").to_pylist()
    vocab = ["unused", *reversed(list(dict.fromkeys(values)))]
    at = {v: i for i, v in enumerate(vocab)}
    shuffled = pa.DictionaryArray.from_arrays(pa.array([at[v] for v in values], type=pa.int32()),
                                              pa.array(vocab, type=pa.string()))
    pq.write_table(table.set_column(0, "query_id", shuffled), tmp_path / "d.parquet")
    back = codecs.read_run(tmp_path / "d.parquet", name="bm25")
    assert_same_run(run, back)
    assert back.ranked_lists(ties="trec") == run.ranked_lists(ties="trec")


def test_runs_and_ground_truth_from_files_equal_the_readers(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_bytes(trec_qrels(3))
    (tmp_path / "a.trec").write_bytes(trec_run(1, tag="tagA"))
    ws.set_ground_truth(tmp_path / "q.txt")
    ws.add_run("a", tmp_path / "a.trec", model="bm25", version="v1", step=3, tags=["baseline", "x"])
    ws.add_run("b", csv_run(2), source_name="b.csv")  # bytes + the file name (as the dashboard uploads)
    assert_same_qrels(ws.load_qrels(), load_qrels(tmp_path / "q.txt"))
    assert_same_run(ws.load_run("a"), load_run(tmp_path / "a.trec", name="a"))
    assert_same_run(ws.load_run("b"), load_run(csv_run(2), label="b.csv", name="b"))
    frame = ws.runs()
    assert frame.columns.tolist() == W.RUN_COLUMNS
    row = frame.iloc[0]
    assert (row["name"], row["kind"], row["model"], row["version"], row["step"]) == ("a", "ranked", "bm25", "v1", 3.0)
    assert row["tags"] == ("baseline", "x") and row["source_name"] == "a.trec"
    import hashlib

    assert row["source_sha256"] == hashlib.sha256(trec_run(1, tag="tagA")).hexdigest()
    assert frame.iloc[1]["source_name"] == "b.csv" and pd.isna(frame.iloc[1]["step"])
    assert row["n_queries"] == len(QUERIES) and str(frame["created_at"].dtype).startswith("datetime64")
    assert ws.ground_truth()["name"] == "q.txt" and ws.ground_truth()["kind"] == "qrels"


def test_evaluate_equals_the_engine_bit_for_bit(ws: Workspace) -> None:
    qrels, runs = tie_heavy(5)
    ws.set_ground_truth(qrels, name="toy")
    for name, run in runs.items():
        ws.add_run(name, run)
    for ties in ("trec", "input"):
        got = ws.evaluate(metrics=METRICS + ["P(rel=2)@5"], k=[1, 3, 10], ties=ties)
        want = evaluate(qrels, runs, metrics=METRICS + ["P(rel=2)@5"], k=[1, 3, 10], ties=ties)
        pd.testing.assert_frame_equal(got.table, want.table)
        pd.testing.assert_frame_equal(got.coverage, want.coverage)
        assert got.settings["errors"] == {}
    got = ws.evaluate(metrics=METRICS, k=[1, 3, 10], judged_only=True)  # trec_eval -J, here or stored as a setting
    pd.testing.assert_frame_equal(got.table, evaluate(qrels, runs, metrics=METRICS, k=[1, 3, 10],
                                                      judged_only=True).table)
    ws.set_settings(judged_only=True, metrics=tuple(METRICS), k=(1, 3, 10))
    pd.testing.assert_frame_equal(ws.evaluate().table, got.table)


def test_evaluation_is_recorded_once_and_reads_back(ws: Workspace) -> None:
    qrels, runs = tie_heavy(6)
    ws.set_ground_truth(qrels)
    ws.add_run("bm25", runs["bm25"])
    generation = ws.generation
    ev = ws.evaluate(metrics=["ndcg"], k=[5])
    ws.evaluate(metrics=["ndcg"], k=[5])  # same inputs: one record
    assert ws.generation == generation  # recording an evaluation is not a change a page shows
    frame = ws.evaluations()
    assert len(frame) == 1 and frame.iloc[0]["runs"] == ("bm25",) and frame.iloc[0]["k"] == (5,)
    back = ws.load_evaluation()
    pd.testing.assert_frame_equal(back.table, ev.table)
    pd.testing.assert_frame_equal(back.coverage, ev.coverage)
    ws.evaluate(metrics=["ndcg"], k=[10])
    assert len(ws.evaluations()) == 2
    assert ws.evaluate(metrics=["ndcg"], k=[5], record=False).table.equals(ev.table)
    with pytest.raises(OptionError, match="no evaluation with id 99"):
        ws.load_evaluation(99)


def test_an_evaluation_read_back_says_which_runs_changed_since(ws: Workspace) -> None:
    """A recorded evaluation is of the runs as they were: after a run is re-recorded (or a fusion's
    input), removed, or the ground truth replaced, reading it back says so (settings["stale"], a
    warning, the listing's ``stale``) instead of presenting old numbers as the current runs'."""
    qrels, runs = tie_heavy(6)
    ws.set_ground_truth(qrels)
    ws.add_run("bm25", runs["bm25"], model="lex", step=1)
    ws.add_run("other", runs["bm25"].renamed("other"))
    ws.add_fused_run("mix", ["bm25", "other"])
    first = ws.record_evaluation(ws.evaluate(metrics=["ndcg"], k=[5], record=False))
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalcoreWarning)  # nothing changed: no warning
        assert "stale" not in ws.load_evaluation(first).settings
    assert ws.evaluations().set_index("id").loc[first, "stale"] == {}
    rng = np.random.default_rng(0)
    changed = Run.from_records(list(runs["bm25"].query_ids[runs["bm25"].q]), list(runs["bm25"].doc_ids),
                               rng.random(len(runs["bm25"])), name="bm25")
    ws.add_run("bm25", changed, model="lex", step=1, replace=True)
    with pytest.warns(EvalcoreWarning, match=r"evaluation \d+ was computed before these changed: bm25 \(re-recorded\), "
                                             r"mix \(re-recorded\)"):
        back = ws.load_evaluation(first)
    assert back.settings["stale"] == {"bm25": "re-recorded", "mix": "re-recorded"}  # the fusion of it too
    ws.remove_run("other")  # (and the fusion built on it)
    other_qrels, _ = tie_heavy(7)
    ws.set_ground_truth(other_qrels, name="another")
    assert ws.evaluations().set_index("id").loc[first, "stale"] == {
        "bm25": "re-recorded", "other": "removed", "mix": "removed", "(ground truth)": "replaced"}
    second = ws.record_evaluation(ws.evaluate(metrics=["ndcg"], k=[5], record=False))
    assert ws.evaluations().set_index("id").loc[second, "stale"] == {}


def test_embedding_runs_equal_embedding_run_and_are_ranked_once(ws: Workspace, monkeypatch) -> None:
    rng = np.random.default_rng(3)
    qrels, _ = tie_heavy(3)
    doc_ids = [f"d{j}" for j in range(30)]
    docs = rng.normal(size=(30, 16)).astype(np.float32)
    q_ids = list(qrels.query_ids)[:-1] + ["unjudged"]
    queries = rng.normal(size=(len(q_ids), 16)).astype(np.float32)
    items = [f"q{i}" for i in range(15)] + doc_ids  # item-to-item: queries are items
    item_vecs = rng.normal(size=(len(items), 8))
    ws.set_ground_truth(qrels)
    ws.add_embedding_run("qd", docs, doc_ids, query_embeddings=queries, query_ids=q_ids, model="e5", step=1)
    ws.add_embedding_run("i2i", item_vecs, items, model="e5", step=2)
    ws.set_settings(depth=20, k=(5, 10), metrics=("ndcg", "recall"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        want_qd = embedding_run(Embeddings.from_arrays(doc_ids, docs), Embeddings.from_arrays(q_ids, queries),
                                qrels=qrels, k=20, name="qd")
        want_i2i = embedding_run(Embeddings.from_arrays(items, item_vecs), qrels=qrels, k=20, name="i2i")
        assert_same_run(ws.load_run("qd"), want_qd)
        assert_same_run(ws.load_run("i2i"), want_i2i)
        ev = ws.evaluate()
        want = evaluate(qrels, {"qd": want_qd, "i2i": want_i2i}, metrics=["ndcg", "recall"], k=[5, 10])
    pd.testing.assert_frame_equal(ev.table, want.table)
    d, q = ws.load_embeddings("qd")
    assert isinstance(d.vectors, np.memmap) and d.vectors.tobytes() == docs.tobytes() and q.ids.tolist() == q_ids
    # a second evaluation reads the stored rankings: exact top-k is not called again
    import evalcore.embedding_runs as ER

    def fail(*a, **k):
        raise AssertionError("ranked again")

    monkeypatch.setattr(ER, "embedding_run", fail)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        pd.testing.assert_frame_equal(ws.evaluate(record=False).table, want.table)
        with pytest.raises(AssertionError, match="ranked again"):  # another depth: a new ranking
            ws.evaluate(depth=25, record=False)


def test_same_numbers_as_the_dashboard_pipeline(ws: Workspace) -> None:
    """Aspects, sampling, item-to-item embeddings and a fusion: the store and the in-memory pipeline agree."""
    ids = [f"tt{i:04d}" for i in range(12)]
    snap = W.Snapshot(settings=replace(SETTINGS, sample_size=8, seed=3, ties="docid_asc"))
    snap = W.set_ground_truth(snap, W.Blob.of("gt.json", ordered_lists()))
    overall, content = (next(a for a in W.ground_truth_aspects(snap.ground_truth) if part in a)
                        for part in ("overall", "content"))
    snap, u1 = W.add_embedding_run(snap, W.Blob.of("a.npz", npz(ids, 8, 1)), aspect=content)
    snap, u2 = W.add_embedding_run(snap, W.Blob.of("b.npz", npz(ids, 8, 2)), aspect=overall)
    snap, _ = W.add_fused_run(snap, [u1, u2], [0.7, 0.3], name="rrf")
    _, _, want = snapshot_resolve(snap)
    ws.set_ground_truth(ordered_lists(), source_name="gt.json")
    assert ws.aspects() == tuple(W.ground_truth_aspects(snap.ground_truth))
    ws.add_embedding_run("a", npz(ids, 8, 1), source_name="a.npz", aspect="content")  # a unique part of its name
    ws.add_embedding_run("b", npz(ids, 8, 2), source_name="b.npz", aspect=overall)
    ws.add_fused_run("rrf", {"a": 0.7, "b": 0.3})
    ws.set_settings(snap.settings)
    got = ws.evaluate()
    pd.testing.assert_frame_equal(got.table, want.table)
    assert got.settings["aspects"] == want.settings["aspects"] == {"a": content, "b": overall, "rrf": content}
    with pytest.raises(EvalcoreError, match="unknown aspect 'plot'"):
        ws.add_run("c", csv_run(1), aspect="plot")


def test_reference_ground_truth_matches_the_dashboard_pipeline(ws: Workspace) -> None:
    ids = [f"i{j}" for j in range(40)]
    for mode in ("tied", "fixed"):
        settings = replace(SETTINGS, gt_mode=mode, gt_depth=4, sample_size=10)
        snap = W.Snapshot(settings=settings)
        snap = W.set_ground_truth(snap, W.Blob.of("ref.npz", npz(ids, 6, 9)), kind="reference")
        snap, _ = W.add_embedding_run(snap, W.Blob.of("m.npz", npz(ids, 6, 4)))
        _, _, want = snapshot_resolve(snap)
        ws.set_reference(npz(ids, 6, 9), source_name="ref.npz")
        ws.add_embedding_run("m", npz(ids, 6, 4), source_name="m.npz", replace=True)
        ws.set_settings(settings)
        pd.testing.assert_frame_equal(ws.evaluate().table, want.table)
    assert ws.ground_truth()["kind"] == "reference"
    assert ws.load_reference().ids.tolist() == ids
    with pytest.raises(OptionError, match="reference model"):
        ws.load_qrels()


@pytest.mark.parametrize("mode", ["tied", "fixed"])
def test_reference_neighbours_are_searched_once_and_read_back_exactly(ws: Workspace, monkeypatch, mode) -> None:
    """A stored reference's neighbours are kept in the workspace: a restarted process (a new Workspace, the
    process caches cleared) evaluates the same numbers without searching again; tie-heavy vectors."""
    import evalcore.embedding_runs as ER
    from evalcore.workspace import artifacts
    from evalcore.workspace.rankings import _neighbours_of, _neighbours_run

    rng = np.random.default_rng(11)
    ids = [f"i{j:02d}" for j in range(40)]
    vecs = rng.integers(-1, 2, size=(40, 4)).astype(np.float32)  # few distinct directions: many exact ties
    vecs[vecs.sum(axis=1) == 0] += 1  # no all-zero rows
    ref = Embeddings.from_arrays(ids, vecs)
    settings = replace(SETTINGS, gt_mode=mode, gt_depth=6, sample_size=15, seed=2)
    ws.set_reference(vecs, ids, name="ref")
    ws.add_embedding_run("m", rng.normal(size=(40, 4)).astype(np.float32), ids)
    ws.set_settings(settings)
    first = ws.evaluate(record=False)
    # what is kept reads back as the search found it, padding and ties included
    idx, qids = ER.reference_neighbours(ref, depth=50, query_ids=ids[:7])
    back, back_q = _neighbours_of(_neighbours_run(idx, ref, qids), ref, min(50, len(ref) - 1))
    np.testing.assert_array_equal(back, idx)
    assert back_q.tolist() == qids.tolist()
    direct = ER.reference_ground_truth(ref, k=[1, 3, 5], mode=mode, depth=4, query_ids=ids[:7])
    rebuilt = ER.reference_ground_truth_from_neighbours(ref, back, back_q, k=[1, 3, 5], mode=mode, depth=4)
    assert_same_qrels(rebuilt.deepest, direct.deepest)
    # a restart after a gc: no search, the same numbers
    assert ws.gc(age=0)["rankings"] == 0  # kept while the reference is there
    artifacts.clear_cache()

    def fail(*a, **k):
        raise AssertionError("searched again")

    monkeypatch.setattr(ER, "_reference_top", fail)  # the one search behind every reference ground truth
    again = Workspace.open(ws.path).evaluate(record=False)
    pd.testing.assert_frame_equal(again.table, first.table)
    with pytest.raises(AssertionError, match="searched again"):  # another sample: a new search
        Workspace.open(ws.path).evaluate(record=False, sample_size=12)


# ------------------------------------------------------------------------------------------ editing


def test_add_remove_rename_replace(ws: Workspace) -> None:
    qrels, runs = tie_heavy(1)
    ws.set_ground_truth(qrels)
    ws.add_run("a", runs["bm25"])
    ws.add_run("b", runs["dense"])
    ws.add_fused_run("f", ["a", "b"], weights=[2, 1], c=10, top_n=5)
    ws.add_fused_run("ff", {"f": 1.0, "a": 1.0})
    with pytest.raises(OptionError, match="already exists"):
        ws.add_run("a", runs["dense"])
    ws.add_run("a", runs["dense"], replace=True)  # replaced in place, fusions keep it
    assert ws.run_names() == ["a", "b", "f", "ff"]
    assert_same_run(ws.load_run("a"), runs["dense"].renamed("a"))
    ws.rename_run("a", "A")
    assert ws.runs().set_index("name").loc["f", "inputs"] == ("A", "b")
    ev = ws.evaluate(metrics=["ndcg"], k=[5], ties="docid_asc")
    assert set(ev.runs) == {"A", "b", "f", "ff"}
    assert ws.remove_run("A") == ["A", "f", "ff"]  # fusions built on it go too
    assert ws.run_names() == ["b"]
    for bad in ("", "a\tb", "x\ny", 5):
        with pytest.raises(OptionError):
            ws.add_run(bad, runs["bm25"])
    with pytest.raises(OptionError, match="no run named"):
        ws.remove_run("nope")
    with pytest.raises(OptionError, match="step"):
        ws.add_run("s", runs["bm25"], step="three")
    with pytest.raises(OptionError, match="fuses? is not|no run named"):
        ws.add_fused_run("g", ["b", "missing"])
    ws.set_run_info("b", model="m", version="2", step=7, tags="t")
    row = ws.runs().iloc[0]
    assert (row["model"], row["version"], row["step"], row["tags"]) == ("m", "2", 7.0, ("t",))


def test_generation_counts_changes_only(ws: Workspace) -> None:
    qrels, runs = tie_heavy(2)
    g0 = ws.generation
    ws.set_ground_truth(qrels, name="g")
    g1 = ws.generation
    ws.set_ground_truth(qrels, name="g")  # the same ground truth again: no change
    assert g1 == g0 + 1 and ws.generation == g1
    ws.add_run("a", runs["bm25"])
    ws.set_settings(k=(5,))
    ws.set_ui_state(selected=["a"], metric="ndcg@5")
    assert ws.generation == g1 + 2
    assert ws.ui_state() == {"selected": ["a"], "metric": "ndcg@5"}
    ws.set_ui_state(metric=None)
    assert ws.ui_state() == {"selected": ["a"]}
    other = Workspace.open(ws.path)  # another handle (another process would see the same)
    assert other.generation == ws.generation and other.settings().k == (5,)
    with pytest.raises(OptionError, match="unknown settings"):
        ws.set_settings(colour="red")


def test_side_files_apply_domains(ws: Workspace) -> None:
    qrels, runs = tie_heavy(4)
    ws.set_ground_truth(qrels)
    ws.add_run("bm25", runs["bm25"])
    ws.set_domains(b"query_id,domain\nq0,x\nq1,y\n", name="d.csv")
    ws.set_metadata({"d1": {"title": "T", "text": "body"}}, name="meta")
    assert ws.domains() == {"q0": "x", "q1": "y"}
    assert ws.metadata().to_dict("records") == [{"doc_id": "d1", "title": "T", "text": "body"}]
    table = ws.evaluate(metrics=["ndcg"], k=[5]).table
    # the mapping overrides per query; the queries it does not list keep the qrels' own domains (tie_heavy's a, b)
    own = dict(zip(qrels.query_ids.tolist(), qrels.domain_of().tolist(), strict=True))
    assert set(own.values()) - {""} and set(own) - {"q0", "q1"}
    want = evaluate(qrels.with_domains({**own, "q0": "x", "q1": "y"}), runs["bm25"], metrics=["ndcg"], k=[5]).table
    pd.testing.assert_frame_equal(table, want)
    assert set(ws.side_files()) == {"domains", "metadata"}
    ws.remove_side_file("domains")
    assert ws.domains() is None


# ------------------------------------------------------------------------------------------ damage and schema


def _artifact_of(ws: Workspace, name: str) -> Path:
    rec = ws.run_record(name)
    return ws.objects.path(rec.artifact, "parquet")


def test_a_flipped_byte_is_reported_by_name_and_the_rest_still_loads(ws: Workspace) -> None:
    qrels, runs = tie_heavy(7)
    ws.set_ground_truth(qrels)
    ws.add_run("good", runs["bm25"])
    ws.add_run("bad", runs["dense"])
    ws.load_run("bad")  # read (and hash-checked) once before the damage
    path = _artifact_of(ws, "bad")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    st = path.stat()
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # even on a coarse clock, the file changed
    fresh = Workspace.open(ws.path)
    assert fresh.run_names() == ["good", "bad"]  # listing reads the catalogue only
    with pytest.raises(CorruptArtifactError) as err:
        fresh.load_run("bad")
    assert "run 'bad'" in str(err.value) and path.name in str(err.value) and "damaged" in str(err.value)
    with pytest.warns(EvalcoreWarning, match="run 'bad' not evaluated"):
        ev = fresh.evaluate(metrics=["ndcg"], k=[5])
    assert ev.runs == ["good"] and "bad" in ev.settings["errors"]
    assert_same_run(fresh.load_run("good"), runs["bm25"].renamed("good"))
    problems = fresh.verify()
    assert len(problems) == 1 and path.name in problems[0]
    with pytest.raises(CorruptArtifactError, match=path.name):
        fresh.export(ws.path.parent / "x.zip")
    assert not (ws.path.parent / "x.zip").exists()


def test_a_missing_artifact_is_reported(ws: Workspace) -> None:
    qrels, runs = tie_heavy(8)
    ws.set_ground_truth(qrels)
    ws.add_run("a", runs["bm25"])
    ws.add_run("b", runs["dense"])
    _artifact_of(ws, "a").unlink()
    with pytest.raises(CorruptArtifactError, match="run 'a'.*missing"):
        ws.load_run("a")
    with pytest.warns(EvalcoreWarning):
        assert ws.evaluate(metrics=["ndcg"], k=[5]).runs == ["b"]


def test_a_newer_schema_is_refused_and_left_untouched(ws: Workspace) -> None:
    ws.set_ground_truth(tie_heavy(0)[0])
    db = ws.path / "catalogue.sqlite"
    ws.close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = db.read_bytes()
    for read_only in (False, True):
        with pytest.raises(SchemaVersionError, match=rf"newer evalcore \(schema {SCHEMA_VERSION + 1} > "):
            Workspace.open(ws.path, read_only=read_only)
    assert db.read_bytes() == before


def test_not_a_workspace(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "catalogue.sqlite").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(WorkspaceError, match="catalogue"):
        Workspace.open(tmp_path / "w")
    with pytest.raises(WorkspaceError, match="no workspace here"):
        Workspace.open(tmp_path / "absent", create=False)
    assert not (tmp_path / "absent").exists()
    home = tmp_path / "home"  # a folder of the user's own files is never turned into a workspace
    home.mkdir()
    (home / "notes.txt").write_text("mine")
    with pytest.raises(WorkspaceError, match="holds other files and no evalcore workspace"):
        Workspace.open(home)
    assert sorted(p.name for p in home.iterdir()) == ["notes.txt"]
    (tmp_path / "empty").mkdir()
    assert Workspace.open(tmp_path / "empty").run_names() == []  # an empty folder is fine


def test_fusion_warnings_name_the_users_runs(ws: Workspace) -> None:
    """A fused input lacking queries is named as the user named it (not an internal placeholder)."""
    qrels, runs = tie_heavy(2)
    ws.set_ground_truth(qrels)
    d = runs["dense"].to_dict()
    partial = Run.from_dict({q: d[q] for q in sorted(d)[:-2]}, name="dense")
    ws.add_run("bm25 full", runs["bm25"])
    ws.add_run("dense partial", partial)
    ws.add_fused_run("f", ["bm25 full", "dense partial"])
    with pytest.warns(EvalcoreWarning, match=r"run 'dense partial' lacks 2") as got:
        ws.evaluate(metrics=["ndcg"], k=[5], record=False)
    assert not any("in0" in str(w.message) or "in1" in str(w.message) for w in got)

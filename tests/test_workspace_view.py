"""The dashboard's view of a stored workspace (``evalcore.workspace.stored``), fusions of any method in the
store, the query-texts side file and the schema migration that brought it.

Oracles: the store's own API on the same workspace (``Workspace.load_run``, ``runs()``), the engine's
``evalcore.fusion.fuse`` on the same runs, and the readers on the same bytes.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from test_workspace import QUERIES, csv_run, npz, trec_qrels, trec_run
from test_workspace_store import assert_same_run

from evalcore import Workspace
from evalcore import workspace as W
from evalcore.errors import OptionError
from evalcore.fusion import canonical_norm, fuse
from evalcore.io import load_queries
from evalcore.workspace.store import MIGRATIONS, SCHEMA_VERSION
from evalcore.workspace.stored import snapshot_of


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = Workspace.open(tmp_path / "ws")
    ws.set_ground_truth(trec_qrels(), source_name="qrels.txt")
    ws.add_run("bm25", trec_run(1), source_name="bm25.trec", model="bm25", version="k1=1.2", step=1)
    ws.add_run("dense", csv_run(2), source_name="dense.csv")
    ws.add_embedding_run("emb", npz(QUERIES + [f"d{j}" for j in range(40)], 8, 3), source_name="emb.npz",
                         model="e5", version="epoch 5", step=5)
    ws.add_fused_run("mix", {"bm25": 1.0, "dense": 0.5}, c=10)
    return ws


def test_snapshot_of_a_workspace(ws: Workspace) -> None:
    snap = snapshot_of(ws)
    runs = ws.runs()
    assert [r.name for r in snap.runs] == list(runs["name"])
    assert [r.kind for r in snap.runs] == list(runs["kind"])
    for src, row in zip(snap.runs, runs.itertuples(index=False), strict=True):
        assert (src.model, src.version) == (row.model, row.version)
        assert src.step == (None if np.isnan(row.step) else row.step)
        assert src.uid == f"r{src.store.record.id}" and src.blob is None
    mix = snap.runs[-1]
    assert mix.fusion.inputs == (snap.runs[0].uid, snap.runs[1].uid) and mix.fusion.weights == (1.0, 0.5)
    assert (mix.fusion.c, mix.fusion.method, mix.fusion.norm) == (10.0, "rrf", "none")
    assert snap.ground_truth.label == "qrels.txt" and snap.ground_truth.format == "trec"
    assert snap.generation == ws.generation and snap.settings == ws.settings()
    # a content key is the data's, not the name's: a rename keeps it, other data changes it
    before = {r.name: r.content_key() for r in snap.runs}
    ws.rename_run("dense", "dense-v2")
    after = {r.name: r.content_key() for r in snapshot_of(ws).runs}
    assert after["dense-v2"] == before["dense"] and len(set(after.values())) == 4


def test_the_pipeline_reads_stored_runs_as_the_store_does(ws: Workspace) -> None:
    snap = snapshot_of(ws)
    settings = snap.settings.validated()
    qrels = W.prepare_qrels(snap.ground_truth, aspect=None, sample=None, domains=None, settings=settings)
    assert qrels.query_ids.tolist() == ws.load_qrels().query_ids.tolist()
    built = {}
    for src in snap.runs:
        inputs = {u: built[u] for u in src.fusion.inputs} if src.kind == "fused" else None
        built[src.uid] = W.build_run(src, qrels=qrels, settings=settings, inputs=inputs)
        assert_same_run(built[src.uid], ws.load_run(src.name))
    emb = next(s for s in snap.runs if s.kind == "embedding")
    assert W.has_embeddings(emb) and not W.has_embeddings(snap.runs[0])
    vectors = W.run_embeddings(emb).vectors
    assert isinstance(vectors, np.memmap)  # read memory-mapped from the workspace
    assert np.array_equal(np.asarray(vectors), np.asarray(ws.load_embeddings("emb")[0].vectors))


@pytest.mark.parametrize(("method", "norm"), [("combsum", "minmax"), ("combmnz", "zscore"), ("wsum", "sum"),
                                              ("isr", "none"), ("bordafuse", "none")])
def test_a_stored_fusion_of_any_method_equals_fuse(ws: Workspace, method: str, norm: str) -> None:
    ws.add_fused_run("f", {"bm25": 2.0, "dense": 1.0}, method=method, norm=norm, top_n=10)
    runs = [ws.load_run("bm25").renamed("in0"), ws.load_run("dense").renamed("in1")]
    want = fuse(runs, method=method, norm=norm, top_n=10, ties=ws.settings().ties, name="f",
                weights=[2.0, 1.0] if method in ("rrf", "wsum") else None)
    assert_same_run(ws.load_run("f"), want)
    spec = next(r for r in snapshot_of(ws).runs if r.name == "f").fusion
    assert (spec.method, spec.norm, spec.top_n) == (method, canonical_norm(norm), 10)


def test_fusion_options_are_checked_and_rrf_keeps_its_record(ws: Workspace) -> None:
    with pytest.raises(OptionError, match="fuses ranks"):
        ws.add_fused_run("f", ["bm25", "dense"], method="rrf", norm="minmax")
    with pytest.raises(OptionError):
        ws.add_fused_run("f", ["bm25", "dense"], method="nonsense")
    # weighted RRF is recorded as it always was (its content key, hence its cached results, unchanged)
    assert set(ws.run_record("mix").options) == {"inputs", "weights", "c", "top_n", "ties", "aspect"}


def test_query_texts_are_a_side_file(ws: Workspace, tmp_path: Path) -> None:
    data = b'{"_id": "q1", "text": "first"}\n{"_id": "q2", "text": "second <b>"}\n'
    gen = ws.generation
    ws.set_query_texts(data, name="queries.jsonl")
    assert ws.generation == gen + 1
    info = ws.side_files()["queries"]
    assert info["name"] == "queries.jsonl"
    blob = snapshot_of(ws).queries_blob
    assert blob.name == "queries.jsonl" and blob.sha256 == info["artifact"]
    assert W.load_query_texts(blob) == load_queries(data, label="queries.jsonl")
    ws.remove_side_file("queries")
    assert "queries" not in ws.side_files() and snapshot_of(ws).queries_blob is None
    with pytest.raises(OptionError, match="unknown side file"):
        ws.remove_side_file("texts")


def test_a_schema_1_workspace_is_migrated_with_its_side_files(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == 2
    path = tmp_path / "old"
    path.mkdir()
    conn = sqlite3.connect(path / "catalogue.sqlite", isolation_level=None)
    MIGRATIONS[0](conn)  # what evalcore wrote before version 2
    conn.execute("INSERT INTO artifacts VALUES ('ab', 'side', 'parquet', 1, 'now')")
    conn.execute("INSERT INTO side_files VALUES ('domains', 'd.csv', NULL, 'ab', 'now')")
    conn.execute("PRAGMA user_version = 1")
    with pytest.raises(sqlite3.IntegrityError):  # version 1 refuses a third side file
        conn.execute("INSERT INTO side_files VALUES ('queries', 'q', NULL, 'ab', 'now')")
    conn.close()
    with Workspace.open(path, create=False) as ws:
        assert ws.side_files() == {"domains": {"name": "d.csv", "source_sha256": None, "artifact": "ab"}}
        ws.set_query_texts({"q1": "text"})
        assert set(ws.side_files()) == {"domains", "queries"}
    check = sqlite3.connect(path / "catalogue.sqlite")
    assert check.execute("PRAGMA user_version").fetchone()[0] == 2
    assert check.execute("PRAGMA foreign_key_check").fetchall() == []

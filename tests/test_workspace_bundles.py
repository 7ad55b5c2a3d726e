"""The workspace store: export/import bundles, gc, default locations, named workspaces, the demo."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_workspace import npz
from test_workspace_store import _artifact_of

from evalcore import Qrels, Run, Workspace, evaluate
from evalcore import workspace as W
from evalcore.errors import (
    CorruptArtifactError,
    EvalcoreError,
    EvalcoreWarning,
    OptionError,
    ReadOnlyWorkspaceError,
    SchemaVersionError,
    WorkspaceError,
)
from evalcore.io import Embeddings, load_embeddings
from evalcore.workspace import artifacts
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



# ------------------------------------------------------------------------------------------ bundles


def _catalogue_dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path / "catalogue.sqlite")
    try:
        return [*conn.iterdump(), f"user_version={conn.execute('PRAGMA user_version').fetchone()[0]}"]
    finally:
        conn.close()


def _objects(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted((path / "objects").glob("*/*"))}


def test_export_import_round_trip_bit_for_bit(ws: Workspace, tmp_path: Path) -> None:
    qrels, runs = tie_heavy(9)
    ws.add_run("a", runs["bm25"], model="m", step=1)
    # an item-to-item run whose items hold none of the queries (it fails to evaluate, and so does its fusion):
    # stored before the ground truth, which would refuse it
    ws.add_embedding_run("e", np.random.default_rng(0).normal(size=(30, 4)), [f"d{j}" for j in range(30)])
    ws.set_ground_truth(qrels, name="gt")
    ws.add_fused_run("f", ["a", "e"])
    ws.set_settings(k=(5, 10))
    with pytest.warns(EvalcoreWarning):
        ev = ws.evaluate()
    bundle = ws.export(tmp_path / "out" / "ws.zip")
    dest = tmp_path / "imported"
    back = Workspace.import_bundle(bundle, dest)
    assert _catalogue_dump(dest) == _catalogue_dump(ws.path)
    assert _objects(dest) == _objects(ws.path)
    assert back.verify() == []
    pd.testing.assert_frame_equal(back.load_evaluation().table, ev.table)
    with pytest.raises(WorkspaceError, match="not empty"):
        Workspace.import_bundle(bundle, dest)
    copy = ws.copy_to(tmp_path / "copy")
    assert _catalogue_dump(copy.path) == _catalogue_dump(ws.path) and _objects(copy.path) == _objects(ws.path)


def test_import_checks_every_member(ws: Workspace, tmp_path: Path) -> None:
    import json
    import zipfile

    ws.set_ground_truth(tie_heavy(0)[0])
    ws.add_run("a", tie_heavy(0)[1]["bm25"])
    bundle = ws.export(tmp_path / "ws.zip")
    with zipfile.ZipFile(bundle) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    obj = next(n for n in members if n.startswith("objects/"))

    def rewrite(name: str, change) -> Path:
        out = tmp_path / name
        with zipfile.ZipFile(out, "w") as z:
            for n, data in members.items():
                z.writestr(n, change(n, data))
        return out

    flipped = rewrite("flipped.zip", lambda n, d: bytes([d[0] ^ 1]) + d[1:] if n == obj else d)
    with pytest.raises(CorruptArtifactError, match=obj):
        Workspace.import_bundle(flipped, tmp_path / "t1")
    assert not (tmp_path / "t1" / "catalogue.sqlite").exists()

    def newer(n: str, d: bytes) -> bytes:
        if n != "evalcore-bundle.json":
            return d
        m = json.loads(d)
        m["schema"] = SCHEMA_VERSION + 1
        return json.dumps(m).encode()

    with pytest.raises(SchemaVersionError, match="newer evalcore"):
        Workspace.import_bundle(rewrite("newer.zip", newer), tmp_path / "t2")
    assert not (tmp_path / "t2").exists()
    members["../evil.txt"] = b"x"
    with pytest.raises(WorkspaceError, match="unexpected member"):
        Workspace.import_bundle(rewrite("evil.zip", lambda n, d: d), tmp_path / "t3")
    assert not (tmp_path / "evil.txt").exists()


def test_gc_removes_only_unreferenced_old_files(ws: Workspace) -> None:
    qrels, runs = tie_heavy(3)
    ws.set_ground_truth(qrels)
    ws.add_run("a", runs["bm25"])
    ws.add_run("b", runs["dense"])
    gone = _artifact_of(ws, "a")
    ws.remove_run("a")
    assert ws.gc() == {"rankings": 0, "artifacts": 1, "files": 0}  # the file is too young to go
    assert gone.exists()
    assert ws.gc(age=0)["files"] == 1 and not gone.exists()
    assert ws.verify() == [] and ws.run_names() == ["b"]


# ------------------------------------------------------------------------------------------ locations, roots, demo


def test_default_locations(monkeypatch, tmp_path: Path) -> None:
    from evalcore.workspace import locations as L

    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "env-ws"))
    assert Workspace.open().path == tmp_path / "env-ws" and L.is_workspace(tmp_path / "env-ws")
    monkeypatch.delenv("EVALCORE_WORKSPACE")
    monkeypatch.setenv("EVALCORE_WORKSPACES", str(tmp_path / "root"))
    assert L.default_path() == tmp_path / "root" / "default"
    monkeypatch.delenv("EVALCORE_WORKSPACES")
    if os.name == "posix" and not L.sys.platform == "darwin":
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
        assert L.default_path() == tmp_path / "xdg" / "evalcore" / "workspaces" / "default"
        monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
        assert L.default_root() == Path.home() / ".local/share/evalcore/workspaces"


def test_workspace_root(tmp_path: Path) -> None:
    root = W.WorkspaceRoot(tmp_path / "root")
    assert root.names() == []
    a = root.create("alpha")
    a.set_ground_truth(tie_heavy(0)[0], name="gt")
    root.create("beta")
    (root.path / "not-a-workspace").mkdir()
    assert root.names() == ["alpha", "beta"]
    with pytest.raises(WorkspaceError, match="already exists"):
        root.create("alpha")
    for bad in ("", "a/b", "..", ".hidden", "x\ty", "c:d"):
        with pytest.raises(WorkspaceError):
            root.path_of(bad)
    root.rename("beta", "gamma")
    assert root.names() == ["alpha", "gamma"]
    table = root.table()
    assert table.set_index("name").loc["alpha", "ground_truth"] == "gt"
    (root.path / "gamma" / "notes.txt").write_text("mine")
    with pytest.raises(WorkspaceError, match="also holds"):
        root.delete("gamma")
    root.delete("alpha")
    assert root.names() == ["gamma"] and not (root.path / "alpha").exists()


def test_a_script_writing_after_its_workspace_was_renamed_is_refused_and_nothing_is_lost(tmp_path: Path) -> None:
    """The dashboard renames a workspace while a training script has it open: the script's next adds reported
    success, the renamed catalogue listed them, but their files went into a re-created folder under the old name
    (verify(): missing artifacts). Now the write is refused, nothing is re-created, the renamed one is intact."""
    root = W.WorkspaceRoot(tmp_path / "root")
    qrels, runs = tie_heavy(1)
    (r1, run1), (r2, run2) = list(runs.items())[:2]
    script = root.create("exp")
    script.set_ground_truth(qrels, name="gt")
    script.add_run(r1, run1, model="m", step=1)
    root.rename("exp", "exp-renamed")
    for write in (lambda: script.add_run(r2, run2, model="m", step=2),
                  lambda: script.set_run_info(r1, tags=["x"])):
        with pytest.raises(WorkspaceError, match="the workspace folder 'exp' is gone .*open the workspace again"):
            write()
    assert sorted(os.listdir(root.path)) == ["exp-renamed"]  # no orphan "exp" folder
    artifacts.clear_cache()
    again = root.open("exp-renamed")
    assert again.run_names() == [r1] and again.verify() == [] and again.run_record(r1).tags == ()


def test_demo_is_read_only_with_the_demo_numbers_and_copies(tmp_path: Path) -> None:
    from evalcore.workspace.demo import cached_demo

    demo = Workspace.demo(cache_dir=tmp_path / "cache")
    assert demo.read_only and demo.run_names() == ["strong-128d", "weak-64d", "lexical"]
    assert Workspace.demo(cache_dir=tmp_path / "cache").path == demo.path  # built once
    d = cached_demo(0)
    s = W.Settings()
    want = evaluate(d.qrels, d.runs, metrics=list(s.metrics), k=list(s.k))
    pd.testing.assert_frame_equal(demo.evaluate().table, want.table)
    assert len(demo.evaluations()) == 0  # nothing recorded in a read-only workspace
    for change in (lambda: demo.add_run("x", d.runs["lexical"]), lambda: demo.remove_run("lexical"),
                   lambda: demo.set_settings(k=(1,)), lambda: demo.set_ui_state(a=1)):
        with pytest.raises(ReadOnlyWorkspaceError):
            change()
    root = W.WorkspaceRoot(tmp_path / "root")
    mine = root.copy(demo, "my demo")
    assert not mine.read_only and mine.run_names() == demo.run_names()
    mine.remove_run("lexical")
    assert demo.run_names() == ["strong-128d", "weak-64d", "lexical"]
    assert root.names() == ["my demo"]


def test_order_versions() -> None:
    frame = pd.DataFrame({
        "name": ["c", "a", "b", "x", "d", "e"],
        "model": ["m", "m", "m", None, "n", "m"],
        "version": ["epoch 10", "epoch 9", "epoch 2", None, "v", "epoch 1"],
        "step": [np.nan, np.nan, 2.0, np.nan, 1.0, 5.0],
        "created_at": pd.to_datetime([f"2026-01-0{i}" for i in range(1, 7)], utc=True),
    })
    out = W.order_versions(frame)
    assert out["name"].tolist() == ["b", "e", "a", "c", "d", "x"]
    assert out["version_index"].tolist() == [0, 1, 2, 3, 0, 0]
    assert out["group"].tolist() == ["m", "m", "m", "m", "n", "x"]


def test_public_names() -> None:
    import evalcore
    from evalcore import workspace  # noqa: F401  (imports evalcore.evaluate, the module)

    assert evalcore.Workspace is W.Workspace
    from evalcore import evaluate as fn

    assert callable(fn) and fn.__name__ == "evaluate"  # the function, not the module of the same name


def test_process_cache_serves_one_copy(ws: Workspace) -> None:
    qrels, runs = tie_heavy(1)
    ws.add_embedding_run("e", np.ones((3, 2)), ["x", "y", "z"])  # (before the ground truth, which has no such query)
    ws.set_ground_truth(qrels)
    ws.add_run("a", runs["bm25"])
    other = Workspace.open(ws.path)
    before = ws.load_run("a").scores
    assert other.load_run("a").scores is before  # shared arrays, one copy per process
    assert ws.load_embeddings("e")[0].vectors is other.load_embeddings("e")[0].vectors
    artifacts.clear_cache()
    assert other.load_run("a").scores is not before  # read again after the cache is cleared
    with pytest.raises(OptionError, match="ranked run"):
        ws.load_embeddings("a")
    assert load_embeddings(ws.objects.path(ws.run_record("e").artifact, "npy"),
                           ids_src=b"x\ny\nz\n").ids.tolist() == ["x", "y", "z"]


def test_embedding_inputs_from_files(ws: Workspace, tmp_path: Path) -> None:
    from evalcore.io import save_embeddings
    from evalcore.workspace.artifacts import sha256_file

    rng = np.random.default_rng(12)
    ids = [f"d{j}" for j in range(20)]
    vec = rng.normal(size=(20, 5)).astype(np.float32)
    save_embeddings(Embeddings.from_arrays(ids, vec), tmp_path / "v.npy")  # + v_ids.txt beside it
    ws.add_embedding_run("beside", tmp_path / "v.npy")
    ws.add_embedding_run("listed", tmp_path / "v.npy", ids[::-1])  # ids given as a list
    ws.add_embedding_run("npz", npz(ids, 3, 1), source_name="x.npz")
    docs, queries = ws.load_embeddings("beside")
    assert queries is None and docs.ids.tolist() == ids and docs.vectors.tobytes() == vec.tobytes()
    assert ws.load_embeddings("listed")[0].ids.tolist() == ids[::-1]
    frame = ws.runs().set_index("name")
    assert frame.loc["beside", "source_sha256"] == sha256_file(tmp_path / "v.npy")
    assert frame.loc["npz", "source_name"] == "x.npz" and frame.loc["npz", "dim"] == 3
    with pytest.raises(OptionError, match="need their ids"):
        ws.add_embedding_run("x", vec)
    with pytest.raises(EvalcoreError, match="ids"):
        ws.add_embedding_run("x", vec, ids[:3])
    for bad in (5, 2.5):  # not a sequence: named, not a bare TypeError
        with pytest.raises(OptionError, match=f"run 'x': ids must be a sequence of strings .*not {type(bad).__name__}"):
            ws.add_embedding_run("x", vec, bad)
    with pytest.raises(OptionError, match=r"run 'x' \(queries\): ids must be a sequence"):
        ws.add_embedding_run("x", vec, ids, query_embeddings=vec, query_ids=7)


def test_gc_interrupted_while_removing_files_leaves_a_consistent_workspace(ws: Workspace, monkeypatch) -> None:
    qrels, runs = tie_heavy(4)
    ws.set_ground_truth(qrels)
    ws.add_run("a", runs["bm25"])
    ws.add_run("b", runs["dense"])
    ws.add_run("c", tie_heavy(5)[1]["bm25"])
    ws.remove_run("a")
    ws.remove_run("b")
    real_unlink = Path.unlink
    calls = []

    def dies_after_one(self, *args, **kwargs):  # the process "dies" after removing one file
        if calls:
            raise KeyboardInterrupt
        calls.append(self)
        return real_unlink(self, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", dies_after_one)
    with pytest.raises(KeyboardInterrupt):
        ws.gc(age=0)
    monkeypatch.setattr(Path, "unlink", real_unlink)
    assert len(calls) == 1
    fresh = Workspace.open(ws.path)
    assert fresh.verify() == [] and fresh.run_names() == ["c"]  # every artifact row still has its file
    assert fresh.gc(age=0)["files"] == 1


def test_export_to_a_directory_or_below_a_file_names_the_path(ws: Workspace, tmp_path: Path) -> None:
    """export(DIR) raised IsADirectoryError about an internal '.part' file; below a file, 'File exists'."""
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(WorkspaceError, match=r"out is a directory: give the bundle's file name, e\.g\. .*workspace\.zip"):
        ws.export(folder)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(WorkspaceError, match=r"cannot write .*afile/x\.zip: .*afile is a file, not a folder"):
        ws.export(tmp_path / "afile" / "x.zip")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "out", "ws"] and not list(folder.iterdir())  # no .part
    assert ws.export(tmp_path / "new" / "w.zip").is_file()  # a missing folder is made

"""Nothing the user loaded is lost: the workspace under a gc racing a writer, kills, and processes sharing it.

Each test runs real processes on real files (children of the fork server of
``tests/test_workspace_concurrency.py``, workers in ``tests/workspace_workers.py``). A writer paused at a step of
its change (``workspace_workers.pause_in_change``) says where it is and waits for the parent's go; nothing waits on
a sleep.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import workspace_workers as WW
from test_workspace_concurrency import DEADLINE, _leftovers, _recv, ctx  # noqa: F401 (ctx: a fixture)

from evalcore import Workspace

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL, flock and fork servers are POSIX")


def _paused(ctx, path: Path, op: str, window: str, nth: int = 1):  # noqa: F811 - ctx is the fixture's value
    """A writer making ``op``, paused at its ``nth`` arrival at ``window``: (process, its duplex pipe end)."""
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=WW.pause_in_change, args=(str(path), op, window, nth, child), daemon=True)
    proc.start()
    child.close()
    msg = _recv(parent, f"its arrival at {window}")
    assert msg == ("at", window, nth), msg
    return proc, parent


def _resume(proc, conn) -> list[str]:
    """Let the paused writer finish; its final run names (its error's traceback fails the test)."""
    conn.send(("go",))
    msg = _recv(conn, "the end of its change")
    proc.join(DEADLINE)
    conn.close()
    assert msg[0] == "finished", msg[1]
    assert proc.exitcode == 0
    return msg[1]


def _copy(template: Path, path: Path) -> Path:
    shutil.copytree(template, path, ignore=shutil.ignore_patterns("*-shm", "writer.lock"))
    return path


def _same_run(a, b) -> None:
    """Two Runs hold the same queries, documents and scores, bit for bit."""
    fa, fb = a.to_frame(), b.to_frame()
    assert fa.columns.tolist() == fb.columns.tolist() and len(fa) == len(fb)
    for col in fa.columns:
        va, vb = fa[col].to_numpy(), fb[col].to_numpy()
        assert (va.tobytes() == vb.tobytes()) if va.dtype.kind == "f" else va.tolist() == vb.tolist(), col


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, list[str]]:
    """A workspace (``workspace_workers.crash_workspace``: runs r0, e0, f0; the removed runs x0 and x1, whose
    artifacts are left unreferenced) and those two artifacts' hashes, x0's first. Each test changes a copy."""
    path = tmp_path_factory.mktemp("durable") / "ws"
    return path, WW.crash_workspace(str(path))


# ---------------------------------------------------------------- a gc racing an add


@pytest.mark.parametrize(("window", "nth", "removed"), [("open", 2, True), ("kept-existing", 1, False)],
                         ids=["before-it-is-held", "while-it-is-held"])
def test_a_gc_removing_an_old_orphan_an_add_is_reusing_does_not_fail_the_add(ctx, template, tmp_path: Path,  # noqa: F811
                                                                             window: str, nth: int,
                                                                             removed: bool) -> None:
    """A run removed two hours ago is added again (a training script restarted on the same checkpoint) while
    ``evalcore workspace gc`` runs with its default age: the add finds the old file of those very bytes and keeps
    it. A gc before the add holds it removes it (unreferenced, old): the add writes it again; a gc once the add holds
    it (checking its bytes) leaves it. Before, the add died with ``FileNotFoundError`` (its ``os.utime`` of the file
    the gc had just removed)."""
    path = _copy(template[0], tmp_path / "ws")
    sha = template[1][0]
    x0 = path / "objects" / sha[:2] / f"{sha}.parquet"
    two_hours_ago = time.time() - 7200
    os.utime(x0, (two_hours_ago, two_hours_ago))
    proc, conn = _paused(ctx, path, "re-add x0", window, nth)
    Workspace.open(path).gc()  # the command's gc (default age: one hour)
    assert x0.exists() != removed
    names = _resume(proc, conn)
    assert "x0" in names
    ws = Workspace.open(path)
    assert ws.verify() == [] and x0.exists()
    _same_run(ws.load_run("x0"), WW.random_run(np.random.default_rng(100), "x0"))


def test_a_gc_leaves_the_temporary_file_of_an_add_under_way(ctx, template, tmp_path: Path) -> None:  # noqa: F811
    """``gc(age=0)`` (every unreferenced file, however young) while an add has written its temporary file and not
    yet hashed it: the gc leaves that file (the add holds it), the add records its run, whole. Before, the gc removed
    it and the add died with ``FileNotFoundError`` opening it."""
    path = _copy(template[0], tmp_path / "ws")
    proc, conn = _paused(ctx, path, "add_run", "tmp-written")
    assert _leftovers(path)[0] == 1  # the add's temporary file
    Workspace.open(path).gc(age=0)
    assert _leftovers(path)[0] == 1  # left to the add
    names = _resume(proc, conn)
    assert "r1" in names
    ws = Workspace.open(path)
    assert ws.verify() == []
    _same_run(ws.load_run("r1"), WW.random_run(np.random.default_rng(1), "r1"))
    ws.gc(age=0)
    assert _leftovers(path) == (0, 0)


def test_a_gc_leaves_the_catalogue_copy_of_an_export_under_way(ctx, template, tmp_path: Path) -> None:  # noqa: F811
    """``gc(age=0)`` while ``export`` has written its copy of the catalogue into ``tmp/`` and not yet read it: the gc
    leaves it, the bundle is whole and imports bit for bit. Before, the gc removed it and the export died with
    SQLite's ``no such table: artifacts`` (a traceback), reading an empty database created in its place."""
    path = _copy(template[0], tmp_path / "ws")
    proc, conn = _paused(ctx, path, "export", "snapshot-written")
    Workspace.open(path).gc(age=0)
    _resume(proc, conn)
    copy = Workspace.import_bundle(tmp_path / "bundle.zip", tmp_path / "imported")
    ws = Workspace.open(path)
    assert copy.run_names() == ws.run_names()
    assert copy.verify() == []
    for name in ("r0", "e0"):
        assert copy.run_record(name).artifacts == ws.run_record(name).artifacts  # the same bytes (named by hash)
    ws.gc(age=0)
    assert _leftovers(path) == (0, 0)


# ---------------------------------------------------------------- killed while evaluating and recording, or setting


#: (change, window, nth arrival, how many of its transactions were committed when killed there). ``evaluate`` makes
#: two: the embedding run e0's ranking kept, then the evaluation recorded (each artifact written before its own).
KILLS = [
    ("evaluate", "before-commit", 1, 0),
    ("evaluate", "committed", 1, 1),
    ("evaluate", "before-commit", 2, 1),
    ("evaluate", "committed", 2, 2),
    ("set_settings", "begun", 1, 0),
    ("set_settings", "before-commit", 1, 0),
    ("set_settings", "committed", 1, 1),
]


@pytest.mark.parametrize(("op", "window", "nth", "done"), KILLS, ids=[f"{k[0]}-{k[1]}{k[2]}" for k in KILLS])
def test_a_process_killed_while_evaluating_or_setting_loses_nothing(ctx, template, tmp_path: Path, op: str,  # noqa: F811
                                                                    window: str, nth: int, done: int) -> None:
    """SIGKILL at each step of ``evaluate`` (ranking kept, evaluation recorded) and of ``set_settings``: the workspace
    opens with every run as it was, the settings all old or all new, the evaluation absent or whole (its table read
    back equal to a fresh evaluation, bit for bit), nothing half-written visible; a gc leaves no leftover."""
    from test_workspace_concurrency import _start

    path = _copy(template[0], tmp_path / "ws")
    ws = Workspace.open(path)
    before = {r.name: r for r in ws.run_records()}
    old_settings = ws.settings()
    ws.close()
    proc, conn = _start(ctx, WW.stop_in_change, str(path), op, window, nth)
    try:
        assert _recv(conn, f"its arrival at {window}") == ("at", window, nth)
    finally:
        proc.kill()
        proc.join(DEADLINE)
        conn.close()
    assert proc.exitcode == -9

    ws = Workspace.open(path)
    assert {r.name: r for r in ws.run_records()} == before  # every run as it was, to the record
    assert ws.verify() == []  # every artifact row has its file, with its bytes
    if op == "set_settings":
        got = ws.settings()
        new = dataclasses.replace(old_settings, k=(3, 7), metrics=("ndcg", "map"), ties="docid_asc")
        assert got == (new if done else old_settings) and new != old_settings
    else:
        recorded = ws.evaluations()
        assert len(recorded) == (1 if done == 2 else 0)
        fresh = ws.evaluate(metrics=["ndcg", "recall"], k=[5], record=False)
        if done == 2:
            kept = ws.load_evaluation()
            pd.testing.assert_frame_equal(kept.table, fresh.table, check_exact=True)
    ws.gc(age=0)
    assert _leftovers(path) == (0, 0)
    ws.close()


# ---------------------------------------------------------------- a training script and a dashboard at once


def test_a_training_script_and_a_dashboard_share_the_workspace(ctx, tmp_path: Path) -> None:  # noqa: F811
    """A training script adds each checkpoint (embeddings, then a ranked run) while a dashboard process lists, reads,
    evaluates and records at each change, removes a run and runs ``evalcore workspace gc``: neither sees an error,
    the gc command exits 0, every checkpoint but the removed one is there and reads back bit for bit, every run
    evaluates, every artifact matches its hash. The path has blanks and non-ASCII letters."""
    from test_workspace_concurrency import _start

    path = tmp_path / "exp ü 実験 #1"
    Workspace.open(path).set_ground_truth(WW.ground_truth(), name="gt")
    n = 6
    board, b_conn = _start(ctx, WW.dashboard, str(path), f"ckpt{n - 1}-top", "ckpt1")
    train, t_conn = _start(ctx, WW.trainer, str(path), n)
    while (msg := _recv(t_conn, "the training script"))[0] == "added":
        pass
    assert msg[0] == "final", msg[1]
    got = _recv(b_conn, "the dashboard")
    assert got[0] == "final", got[1]
    for proc in (train, board):
        proc.join(DEADLINE)
        assert proc.exitcode == 0
    _, names, n_evaluations, gc_status, gc_err = got
    assert (gc_status, gc_err) == (0, "")
    expected = [name for i in range(n) for name in (f"ckpt{i}", f"ckpt{i}-top") if name != "ckpt1"]
    assert names == expected
    assert n_evaluations >= 1
    ws = Workspace.open(path)
    assert ws.run_names() == expected
    assert ws.verify() == []
    for i in range(n):
        if i != 1:
            vectors = ws.load_embeddings(f"ckpt{i}")[0].vectors
            assert np.asarray(vectors).tobytes() == WW.checkpoint_vectors(i).tobytes()
        _same_run(ws.load_run(f"ckpt{i}-top"), WW.checkpoint_run(i))
    ev = ws.evaluate(metrics=["ndcg"], k=[5], record=False)
    assert ev.settings["errors"] == {} and list(ev.runs) == expected


def test_readers_go_on_while_a_writer_holds_the_workspace_mid_transaction(ctx, template, tmp_path: Path) -> None:  # noqa: F811
    """A writer stopped inside its transaction (the writer lock and SQLite's write lock held, its rows inserted, not
    committed): another process's reader opens the workspace, lists, reads and evaluates every run, read-only too,
    and sees none of the pending change; a second writer waits for it (no "database is locked"), then both changes
    are there."""
    import threading

    path = _copy(template[0], tmp_path / "ws")
    before = Workspace.open(path).run_names()
    proc, conn = _paused(ctx, path, "add_run", "before-commit")
    for ws in (Workspace.open(path), Workspace.open(path, read_only=True)):
        assert ws.run_names() == before  # the pending run r1 is not visible
        for name in before:
            ws.load_embeddings(name) if name == "e0" else ws.load_run(name)
        ev = ws.evaluate(metrics=["ndcg"], k=[5], record=False)
        assert ev.settings["errors"] == {} and list(ev.runs) == before
        ws.close()
    second: dict[str, object] = {}

    def write() -> None:
        try:
            second["settings"] = Workspace.open(path).set_settings(k=(2, 4))
        except BaseException as e:  # noqa: BLE001 - reported below
            second["error"] = e

    thread = threading.Thread(target=write)
    thread.start()
    assert "r1" in _resume(proc, conn)
    thread.join(DEADLINE)
    assert not thread.is_alive() and "error" not in second, second
    ws = Workspace.open(path)
    assert ws.run_names() == [*before, "r1"] and ws.settings().k == (2, 4)
    assert ws.verify() == []


# ---------------------------------------------------------------- an import killed


@pytest.mark.parametrize("nth", [1, 4, "catalogue"])
def test_an_import_killed_leaves_no_workspace_and_is_done_again_whole(ctx, template, tmp_path: Path,  # noqa: F811
                                                                      nth) -> None:
    """``workspace import`` killed before its first, a middle one and its last rename (the catalogue's, which makes the
    folder a workspace): the folder is no workspace (nothing half-imported opens), importing again into it completes
    from what was left, bit for bit; its gc then removes the killed import's leftovers."""
    from test_workspace_concurrency import _start

    from evalcore.errors import WorkspaceError

    src = Workspace.open(_copy(template[0], tmp_path / "ws"))
    src.export(tmp_path / "bundle.zip")
    n_files = len(list((src.path / "objects").glob("*/*")))
    at = n_files + 1 if nth == "catalogue" else nth
    assert at <= n_files + 1
    proc, conn = _start(ctx, WW.stop_in_change, str(src.path), "import", "import-rename", at)
    try:
        assert _recv(conn, "its arrival at a rename") == ("at", "import-rename", at)
    finally:
        proc.kill()
        proc.join(DEADLINE)
        conn.close()
    target = tmp_path / "imported"
    with pytest.raises(WorkspaceError, match="no workspace here"):
        Workspace.open(target, create=False)
    copy = Workspace.import_bundle(tmp_path / "bundle.zip", target)
    assert [r.artifacts for r in copy.run_records()] == [r.artifacts for r in src.run_records()]
    assert copy.verify() == []
    assert copy.evaluate(metrics=["ndcg"], k=[5], record=False).table.equals(
        src.evaluate(metrics=["ndcg"], k=[5], record=False).table)
    copy.gc(age=0)
    assert _leftovers(target)[0] == 0


def test_a_gc_between_an_adds_staging_and_its_commit_leaves_its_files(ctx, template, tmp_path: Path) -> None:  # noqa: F811
    """``gc(age=0)`` each time an add has written its files into ``objects/`` and waits for the writer lock to record
    them: the gc leaves them (the add holds them until its transaction ends) and the run is stored at its first
    attempt. Before, each gc removed the unrecorded file, the add wrote it again, and at the third time it gave up
    ("artifacts kept vanishing while being recorded"): a busy gc made a training script's add fail."""
    path = _copy(template[0], tmp_path / "ws")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=WW.pause_in_change, args=(str(path), "add_run", "staged", 0, child), daemon=True)
    proc.start()
    child.close()
    pauses = 0
    while (msg := _recv(parent, "the add"))[0] == "at":
        pauses += 1
        assert _leftovers(path)[1] == 1  # the add's file, not yet recorded
        Workspace.open(path).gc(age=0)
        assert _leftovers(path)[1] == 1, "the gc removed the file the add is about to record"
        parent.send(("go",))
    proc.join(DEADLINE)
    parent.close()
    assert msg[0] == "finished", msg[1]
    assert pauses == 1 and "r1" in msg[1]
    ws = Workspace.open(path)
    assert ws.verify() == []
    _same_run(ws.load_run("r1"), WW.random_run(np.random.default_rng(1), "r1"))


def test_a_read_in_one_thread_goes_on_while_another_thread_holds_the_writer_lock(template, tmp_path: Path) -> None:
    """One process, two threads (a dashboard's sessions, a notebook): while one holds ``exclusive()``, the other reads
    and evaluates the fused run over an embedding run (its ranking computed, not kept: the lock is taken) and ends
    while the lock is still held. Before, the reader waited for the other thread's lock however long it was held
    (the thread lock ignored the wait given)."""
    import threading

    path = _copy(template[0], tmp_path / "ws")
    holder = Workspace.open(path)
    result: dict[str, object] = {}

    def read() -> None:
        try:
            ws = Workspace.open(path)
            result["run"] = ws.load_run("f0")
            result["ev"] = ws.evaluate(metrics=["ndcg"], k=[5], record=False)
        except BaseException as e:  # noqa: BLE001 - reported below
            result["error"] = e

    with holder.exclusive():
        reader = threading.Thread(target=read)
        reader.start()
        reader.join(DEADLINE)  # (only a reader waiting for the lock reaches the deadline)
        assert not reader.is_alive(), "the reader waited for the writer lock held by another thread"
    assert "error" not in result, result
    assert result["ev"].settings["errors"] == {} and set(result["ev"].runs) == {"r0", "e0", "f0"}
    assert Workspace.open(path).load_run("f0").to_frame().equals(result["run"].to_frame())

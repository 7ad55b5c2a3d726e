"""The store under concurrency and crashes (issue #9, "Must show").

* a writer process stopped AT each step of a change (each crash window of the write protocol: an artifact's
  temporary file written, before its rename, renamed, before the writer lock, inside the SQLite transaction
  before each of its statements, committed with the lock still held; gc between its two transactions and
  between two file removals), then killed with SIGKILL: the workspace opens, nothing committed before is
  lost, the change is wholly absent before its COMMIT and wholly present after it, the leftovers are exactly
  those of that window and none of them stops the next writes;
* a writer killed with SIGKILL at random moments, seeded trials on one workspace: wherever the kill lands
  (also inside a step: a Parquet write, SQLite's commit), the workspace opens and lists the runs of the
  committed changes (the change under way wholly present or wholly absent), every run evaluates, every
  artifact matches its hash;
* a writer and a reader process at once, and two writers at once: no error, no lost run.

Children come from a multiprocessing fork server that imported evalcore once
(``tests/workspace_workers.py``). A stopped writer installs wrappers around the store's steps in its own
process only (``workspace_workers.stop_in_change``), says where it stopped, then blocks until killed. Nothing
waits on a sleep: each side waits for the messages (or the state) it expects; the random test's pause only
chooses where its kill lands, and nothing it asserts depends on where that is.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import signal
import sqlite3
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import workspace_workers as WW

from evalcore import Workspace
from evalcore.errors import EvalcoreWarning

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and fork servers are POSIX")

#: Random-moment kills: each checks the invariants wherever it lands; the windows themselves are covered, each
#: for certain, by test_a_writer_killed_at_each_step_of_a_change.
TRIALS = 20
DEADLINE = 120.0  # seconds; only a hung child ever reaches it


@pytest.fixture(scope="module")
def ctx():
    """The fork-server context, its server started with evalcore and the workers imported.

    The server is started here with PYTHONPATH naming the project and ``tests/`` (Python
    3.11's fork server does not apply the parent's ``sys.path`` to its preloads).
    """
    import os
    from multiprocessing import forkserver, spawn

    # each child imports the parent's main module first: that must be the test session's (pytest), never a
    # script of the project that an AppTest run left as __main__ (conftest.py's _own_main_module)
    main = spawn.get_preparation_data("workspace_workers").get("init_main_from_path")
    here = Path(__file__).resolve().parent
    assert main is None or here.parent not in Path(main).resolve().parents, f"children would run {main} first"
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(["workspace_workers"])
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(here), str(here.parent), *([old] if old else [])])
    try:
        forkserver.ensure_running()
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    return context


def _recv(conn, what: str):
    if not conn.poll(DEADLINE):
        raise AssertionError(f"no message from the child ({what}) within {DEADLINE:.0f} s")
    return conn.recv()


def _check(path: Path, candidates: list[set[str]]) -> set[str]:
    """The workspace opens, lists one of the candidate states, every run evaluates, every artifact is whole."""
    ws = Workspace.open(path)
    names = set(ws.run_names())
    assert names in candidates, f"listed {sorted(names)}, expected one of {[sorted(c) for c in candidates]}"
    conn = sqlite3.connect(path / "catalogue.sqlite")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    assert ws.verify() == []
    if names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EvalcoreWarning)
            ev = ws.evaluate(metrics=["ndcg", "recall"], k=[5], record=False)
        assert ev.settings["errors"] == {}
        assert set(ev.runs) == names
    ws.close()
    return names


def test_writer_killed_at_random_moments(ctx, tmp_path: Path) -> None:
    """Changes of every kind (adds, fusions, renames, removals, a new ground truth, a recorded evaluation and a gc),
    killed wherever the pause lands, inside a step too (a Parquet write, SQLite's commit). Nothing asserted
    depends on where the kills land: each is checked against the states the writer had announced."""
    path = tmp_path / "ws"
    Workspace.open(path).set_ground_truth(WW.ground_truth(), name="gt")
    rng = np.random.default_rng(20260509)
    state: set[str] = set()
    mid_change = applied = 0
    for trial in range(TRIALS):
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=WW.writer, args=(str(path), 1000 + trial, child), daemon=True)
        proc.start()
        child.close()
        assert _recv(parent, "ready") == ("ready",)
        pending = None
        n_done = int(rng.integers(0, 4))
        while n_done:
            msg = _recv(parent, "progress")
            if msg[0] == "begin":
                assert msg[1] == state, "the writer saw another state than the committed one"
                pending = msg
            else:
                state, pending = pending[2], None
                n_done -= 1
        time.sleep(float(rng.uniform(0.0, 0.04)))  # chooses the kill's moment; nothing waits on it
        proc.kill()
        proc.join(DEADLINE)
        assert proc.exitcode == -9
        while parent.poll():  # messages sent before the kill
            try:
                msg = parent.recv()
            except EOFError:
                break
            if msg[0] == "begin":
                assert msg[1] == state
                pending = msg
            elif msg[0] == "done":
                state, pending = pending[2], None
        parent.close()
        candidates = [state] if pending is None else [state, pending[2]]
        found = _check(path, candidates)
        if pending is not None:
            mid_change += 1
            applied += found == pending[2] and found != state
        state = found
    print(f"{TRIALS} kills, {mid_change} during a change, {applied} of those found committed")


def _start(ctx, target, *args):
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=target, args=(*args, child), daemon=True)
    proc.start()
    child.close()
    return proc, parent


def test_a_writer_and_a_reader_at_once(ctx, tmp_path: Path) -> None:
    path = tmp_path / "ws"
    Workspace.open(path).set_ground_truth(WW.ground_truth(), name="gt")
    n = 24
    expected = [f"r{i}" for i in range(n)]
    reader, r_conn = _start(ctx, WW.read_until, str(path), expected)
    writer, w_conn = _start(ctx, WW.add_runs, str(path), "r", n, 5)
    added = []
    while True:
        msg = _recv(w_conn, "writer")
        assert msg[0] != "error", msg[1]
        if msg[0] == "final":
            break
        added.append(msg[1])
    got = _recv(r_conn, "reader")
    assert got[0] != "error", got[1]
    writer.join(DEADLINE)
    reader.join(DEADLINE)
    assert (writer.exitcode, reader.exitcode) == (0, 0)
    assert added == expected and msg[1] == expected
    assert got[1] == expected  # the reader ends on the writer's final list: nothing lost
    assert got[3] >= n  # it loaded every run at least once while they were being written
    assert Workspace.open(path).run_names() == expected


def test_two_writers_at_once(ctx, tmp_path: Path) -> None:
    path = tmp_path / "ws"
    Workspace.open(path).set_ground_truth(WW.ground_truth(), name="gt")
    procs = [_start(ctx, WW.add_runs, str(path), prefix, 15, seed) for prefix, seed in (("a", 1), ("b", 2))]
    for proc, conn in procs:
        while True:
            msg = _recv(conn, "writer")
            assert msg[0] != "error", msg[1]
            if msg[0] == "final":
                break
        proc.join(DEADLINE)
        assert proc.exitcode == 0
    names = Workspace.open(path).run_names()
    assert sorted(names) == sorted([f"a{i}" for i in range(15)] + [f"b{i}" for i in range(15)])
    _check(path, [set(names)])


# ---------------------------------------------------------------- a writer killed at each step of its change
#: (change, window, nth arrival, committed when killed there, temporary files left, object files left without
#: an artifact row). The windows are described in ``workspace_workers._stop_before``; an add writes its
#: artifacts before its transaction, so every window between their rename and the COMMIT leaves them unrecorded.
STEPS = [
    ("add_run", "tmp-written", 1, False, 1, 0),
    ("add_run", "before-rename", 1, False, 1, 0),
    ("add_run", "renamed", 1, False, 0, 1),
    ("add_run", "staged", 1, False, 0, 1),
    ("add_run", "locked", 1, False, 0, 1),
    ("add_run", "begun", 1, False, 0, 1),
    ("add_run", "before-row", 1, False, 0, 1),  # its artifact row inserted, the run's row not
    ("add_run", "before-bump", 1, False, 0, 1),
    ("add_run", "before-commit", 1, False, 0, 1),
    ("add_run", "committed", 1, True, 0, 0),
    ("add_embedding_run", "renamed", 1, False, 0, 1),  # the vectors in place, the ids not begun
    ("add_embedding_run", "tmp-written", 2, False, 1, 1),  # the ids' temporary file written
    ("add_embedding_run", "kept-existing", 1, False, 1, 1),  # the ids are e0's bytes: kept, temporary not removed
    ("add_embedding_run", "before-commit", 1, False, 0, 1),
    ("add_embedding_run", "committed", 1, True, 0, 0),
    ("remove_run", "locked", 1, False, 0, 0),
    ("remove_run", "before-row", 2, False, 0, 0),  # r0's row deleted in the transaction, the fusion f0's not yet
    ("remove_run", "before-commit", 1, False, 0, 0),
    ("remove_run", "committed", 1, True, 0, 0),
    ("gc", "before-commit", 1, False, 0, 0),  # x0's and x1's artifact rows deleted in the transaction
    ("gc", "committed", 1, True, 0, 2),  # their rows gone, their two files not yet
    ("gc", "staged", 2, True, 0, 2),  # between gc's two transactions, the lock released
    ("gc", "unlink", 2, True, 0, 1),  # one of the two files removed
]
#: The run names each change leaves.
AFTER = {"add_run": lambda names: names | {"r1"}, "add_embedding_run": lambda names: names | {"e1"},
         "remove_run": lambda names: names - {"r0", "f0"}, "gc": lambda names: names}
ADDED = {"add_run": "r1", "add_embedding_run": "e1"}


@pytest.fixture(scope="module")
def crash_workspace(tmp_path_factory):
    """The workspace each stopped writer changes (a copy per test): its folder, its run records, its artifact
    rows, the artifacts of the removed runs x0 and x1 (what gc drops)."""
    path = tmp_path_factory.mktemp("crash") / "ws"
    dropped = WW.crash_workspace(str(path))
    ws = Workspace.open(path)
    records = {r.name: r for r in ws.run_records()}
    ws.close()
    assert len(set(dropped)) == 2 and set(records) == {"r0", "e0", "f0"}
    return path, records, _artifact_rows(path), set(dropped)


def _artifact_rows(path: Path) -> set[str]:
    conn = sqlite3.connect(path / "catalogue.sqlite")
    try:
        return {r[0] for r in conn.execute("SELECT sha256 FROM artifacts")}
    finally:
        conn.close()


def _leftovers(path: Path) -> tuple[int, int]:
    """(files in tmp/, object files without an artifact row)."""
    tmp = path / "tmp"
    rows = _artifact_rows(path)
    objects = [p for p in (path / "objects").glob("*/*") if p.is_file()]
    return (len(list(tmp.iterdir())) if tmp.is_dir() else 0,
            sum(p.name.split(".", 1)[0] not in rows for p in objects))


def _writer_lock_is_free(path: Path) -> bool:
    import fcntl

    fd = os.open(path / "writer.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


@pytest.mark.parametrize(("op", "window", "nth", "committed", "tmp_left", "unrecorded"), STEPS,
                         ids=[f"{s[0]}-{s[1]}{'' if s[2] == 1 else s[2]}" for s in STEPS])
def test_a_writer_killed_at_each_step_of_a_change(ctx, crash_workspace, tmp_path: Path, op: str, window: str,
                                                   nth: int, committed: bool, tmp_left: int, unrecorded: int) -> None:
    template, before, rows_before, dropped = crash_workspace
    path = tmp_path / "ws"
    shutil.copytree(template, path, ignore=shutil.ignore_patterns("*-shm", "writer.lock"))
    proc, conn = _start(ctx, WW.stop_in_change, str(path), op, window, nth)
    try:
        assert _recv(conn, f"its arrival at {window}") == ("at", window, nth)  # the window was really reached
    finally:
        proc.kill()
        proc.join(DEADLINE)
        conn.close()
    assert proc.exitcode == -signal.SIGKILL

    # as the kill left it: the lock released by the kernel, the catalogue whole, the change all or nothing
    assert _writer_lock_is_free(path)
    ws = Workspace.open(path)
    names = set(ws.run_names())
    assert names == (AFTER[op](set(before)) if committed else set(before))
    for name in names & set(before):  # nothing committed before is lost or changed
        assert ws.run_record(name) == before[name]
    assert ws.verify() == []  # every artifact row has its file, with its bytes
    added = ADDED.get(op)
    new_rows = set(ws.run_record(added).artifacts) if committed and added else set()
    assert _artifact_rows(path) == (rows_before - dropped if committed and op == "gc" else rows_before | new_rows)
    assert _leftovers(path) == (tmp_left, unrecorded)  # exactly this window's leftovers

    # nothing left behind stops the next writes: the same change again (a no-op when it was committed: the stored
    # run is that change's, to the byte), another change, a gc that leaves no leftover
    generation = ws.generation
    if not (committed and op == "remove_run"):
        WW.change(ws, op)
    if added:
        assert (ws.generation == generation) == committed
    ws.add_run("later", WW.random_run(np.random.default_rng(7), "later"))
    ws.gc(age=0)
    assert _leftovers(path) == (0, 0)
    ws.close()
    _check(path, [AFTER[op](set(before)) | {"later"}])

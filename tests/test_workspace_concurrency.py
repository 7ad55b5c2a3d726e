"""The store under concurrency and crashes (issue #9, "Must show").

* a writer process killed with SIGKILL at random moments, 60 seeded trials on one
  workspace: every time the workspace opens, the runs listed are exactly those of the
  committed changes (the change under way when the process died is wholly present or
  wholly absent), every listed run evaluates, every artifact matches its hash;
* a writer and a reader process at once, and two writers at once: no error, no lost run.

Children come from a multiprocessing fork server that imported evalcore once
(``tests/workspace_workers.py``). The kill lands at a random moment of the writer's
work: after a random number of its committed changes plus a random delay. Nothing waits
on a sleep: each side waits for the messages (or the state) it expects.
"""

from __future__ import annotations

import multiprocessing as mp
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

TRIALS = 60
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
        time.sleep(float(rng.uniform(0.0, 0.04)))
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
    # the kills did land inside changes (a change takes far longer than the gap between two)
    assert mid_change >= TRIALS // 2, f"only {mid_change} of {TRIALS} kills landed during a change"
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

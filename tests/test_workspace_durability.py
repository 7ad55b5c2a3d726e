"""Nothing the user loaded is lost: the workspace under a gc racing a writer, kills, and processes sharing it.

Each test runs real processes on real files (children of the fork server of
``tests/test_workspace_concurrency.py``, workers in ``tests/workspace_workers.py``). A writer paused at a step of
its change (``workspace_workers.pause_in_change``) says where it is and waits for the parent's go; nothing waits on
a sleep.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
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


def test_a_gc_removing_an_old_orphan_an_add_is_reusing_does_not_fail_the_add(ctx, template,  # noqa: F811
                                                                             tmp_path: Path) -> None:
    """A run removed two hours ago is added again (a training script restarted on the same checkpoint) while
    ``evalcore workspace gc`` runs with its default age: the add finds the old file of those very bytes and keeps
    it, the gc removes it as unreferenced in between. Before, the add died with ``FileNotFoundError`` (its
    ``os.utime`` of the file just removed); now it writes the file again and records the run."""
    path = _copy(template[0], tmp_path / "ws")
    sha = template[1][0]
    x0 = path / "objects" / sha[:2] / f"{sha}.parquet"
    two_hours_ago = time.time() - 7200
    os.utime(x0, (two_hours_ago, two_hours_ago))
    proc, conn = _paused(ctx, path, "re-add x0", "kept-existing")
    counts = Workspace.open(path).gc()  # the command's gc (default age: one hour)
    assert counts["files"] >= 1 and not x0.exists()  # it did remove the file the add is keeping
    names = _resume(proc, conn)
    assert "x0" in names
    ws = Workspace.open(path)
    assert ws.verify() == []
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

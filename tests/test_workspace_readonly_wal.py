"""A workspace in a folder this process cannot write, whose WAL still holds changes, is read whole.

The folder of a writer that was killed, or one copied while a writer had it open, keeps its latest changes in
``catalogue.sqlite-wal``. In a folder the reader cannot write, SQLite cannot read that WAL without a
``-shm`` file it may create, and ``immutable=1`` would show the catalogue without those changes; such a
folder was refused ("holds changes not yet merged into the catalogue ... open a writable copy of it once").
It is now read through a private copy of the catalogue (:mod:`evalcore.workspace.readcopy`), and must show
exactly what a writable open of the same files shows: the same catalogue, row for row, and the same
evaluation, bit for bit, by the Python API, the command line and the dashboard; a writer that keeps changing
the folder is followed; the copies never pile up.

The readers run in children without root's permission override (``setpriv``), so the folder's mode bits
apply to them as to any other user, while this process (root, when the suite runs as root) can still write
the folder: a colleague's shared folder, which the colleague writes and the reader may only read.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from readonly_reader import chmod_tree, dump, unprivileged

from evalcore import Qrels, Run, Workspace
from evalcore.errors import WorkspaceError
from evalcore.workspace import readcopy

ROOT = Path(__file__).resolve().parents[1]
READER = Path(__file__).resolve().parent / "readonly_reader.py"
QUERIES = [f"q{i}" for i in range(12)]
DOCS = [f"d{j}" for j in range(30)]


def _qrels() -> Qrels:
    return Qrels.from_dict({q: {f"d{j}": 1 + (j % 2) for j in range(i, i + 3)} for i, q in enumerate(QUERIES)})


def _run(seed: int) -> Run:
    rng = np.random.default_rng(seed)
    return Run.from_dict({q: {d: float(rng.random()) for d in rng.choice(DOCS, 10, replace=False)} for q in QUERIES})


def _build(folder: Path) -> Workspace:
    """A workspace whose first run is in the catalogue file and whose later ones sit in the WAL only: returns
    the writer that added them, still open (its connection keeps them in the WAL)."""
    with Workspace.open(folder) as ws:
        ws.set_ground_truth(_qrels())
        ws.add_run("r1", _run(1))
    ws = Workspace.open(folder)
    ws.add_run("r2", _run(2), model="m", version="v2", step=2)
    items = QUERIES + DOCS
    vectors = np.random.default_rng(3).normal(size=(len(items), 8)).astype(np.float32)
    ws.add_embedding_run("e", vectors, items, model="m", version="v3", step=3)
    return ws


def _runs_in_the_file_alone(folder: Path) -> list[str]:
    """The runs of the catalogue file read without its WAL (what ``immutable=1`` shows)."""
    conn = sqlite3.connect(f"file:{folder / 'catalogue.sqlite'}?immutable=1", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT name FROM runs ORDER BY position")]
    finally:
        conn.close()


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    """Size and modification time of every file in ``folder``."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


class Reader:
    """A child reading ``folder`` without permission to write it (see ``tests/readonly_reader.py``)."""

    def __init__(self, folder: Path, out: Path, tmpdir: Path) -> None:
        out.mkdir(exist_ok=True)
        tmpdir.mkdir(exist_ok=True)
        self.stderr = open(out / "stderr.txt", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(unprivileged([sys.executable, str(READER), str(folder), str(out)]), cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True,
                                     env={**os.environ, "TMPDIR": str(tmpdir)})
        self.out = out
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)

    def ask(self, command: str) -> dict:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        if not self.selector.select(timeout=300):
            raise AssertionError(f"no answer to {command!r}")
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError((self.out / "stderr.txt").read_text())
        return json.loads(line)

    def stop(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=120)
        self.stderr.close()
        return code


def _cli(args: list[str], *, privileged: bool = False) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "evalcore", *args]
    return subprocess.run(cmd if privileged else unprivileged(cmd), cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


# ------------------------------------------------------------------------------------------ read whole


def _killed_writer(folder: Path) -> None:
    """The writer is killed (``kill -9``) after its last change: the WAL and its ``-shm`` stay behind."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
        from test_workspace_readonly_wal import _build
        _build(__import__("pathlib").Path({str(folder)!r}))
        os.kill(os.getpid(), signal.SIGKILL)
        """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr


@pytest.mark.parametrize("how", ["writer killed", "copied without -shm while the writer had it open"])
def test_unmerged_changes_of_a_read_only_folder_are_read_as_a_writable_open_shows_them(tmp_path: Path, how: str):
    folder = tmp_path / "W"
    if how == "writer killed":
        _killed_writer(folder)
        assert (folder / "catalogue.sqlite-shm").exists()
    else:
        writer = _build(tmp_path / "live")
        shutil.copytree(writer.path, folder, ignore=shutil.ignore_patterns("*-shm"))
        writer.close()
        assert not (folder / "catalogue.sqlite-shm").exists()
    assert (folder / "catalogue.sqlite-wal").stat().st_size > 0
    assert _runs_in_the_file_alone(folder) == ["r1"]  # r2 and e are in the WAL only
    shutil.copytree(folder, tmp_path / "writable")  # what a writable open of the same files shows
    ref = Workspace.open(tmp_path / "writable")
    expected = {"read_only": True, "runs": ["r1", "r2", "e"], "generation": ref.generation, "dump": dump(ref)}
    assert ref.run_names() == expected["runs"]
    files = _files(folder)
    chmod_tree(folder, writable=False)
    reader = Reader(folder, tmp_path / "out", tmp_path / "tmp")
    try:
        got = reader.ask("api")
        assert got == {"held": expected, "fresh": expected}
        assert reader.ask("evaluate") == {}
        pd.testing.assert_frame_equal(pd.read_pickle(tmp_path / "out" / "table.pkl"),
                                      ref.evaluate(record=False).table, check_exact=True)
        assert reader.ask("copy") == {"runs": expected["runs"]}  # the way to a writable copy: every run
        if how == "writer killed":  # the command line
            listed = _cli(["workspace", "list", "--workspace", str(folder)])
            assert (listed.returncode, listed.stderr) == (0, "")
            rows = [line.split("\t")[:4] for line in listed.stdout.splitlines()]  # name, kind, model, version
            assert rows == [[r.name, r.kind, r.model or "", r.version or ""] for r in ref.run_records()]
        else:  # many opens share one copy; each is removed once nothing reads it
            one = reader.ask("copies")["copies"]
            assert len(one) == 1
            assert reader.ask("cycle 30") == {"copies": one}  # every open shares the held workspace's copy
        assert reader.ask("close") == {"copies": []}
        assert reader.ask("cycle 30") == {"copies": []}
        assert reader.stop() == 0
    finally:
        chmod_tree(folder, writable=True)
    assert _files(folder) == files  # nothing was written there
    assert list((tmp_path / "tmp").iterdir()) == []


@contextlib.contextmanager
def _writing(folder: Path) -> Iterator[None]:
    """Around a change of the writer: as root the folder stays read-only (the reader may not write it, root
    still may, as its owner would), else it is writable for the change only (the reader keeps reading it as a
    folder it cannot write: that was decided when it was opened)."""
    if os.geteuid() == 0:
        yield
        return
    chmod_tree(folder, writable=True)
    try:
        yield
    finally:
        chmod_tree(folder, writable=False)


def test_a_writer_elsewhere_is_followed_by_the_api_and_the_dashboard(tmp_path: Path):
    """The reader keeps a workspace (and the dashboard its cached one) open while a process that may write the
    folder changes it: the change counter and the runs follow, before and after a checkpoint of the WAL."""
    folder = tmp_path / "shared"
    writer = Workspace.open(folder)
    writer.set_ground_truth(_qrels())
    writer.add_run("r1", _run(1))
    chmod_tree(folder, writable=False)
    reader = Reader(folder, tmp_path / "out", tmp_path / "tmp")
    try:
        first = reader.ask("api")
        assert first["held"]["runs"] == first["fresh"]["runs"] == ["r1"]
        assert first["held"]["generation"] == writer.generation
        assert reader.ask("app") == {"exception": [], "runs": ["r1"]}

        with _writing(folder):
            writer.add_run("r2", _run(2))
        second = reader.ask("api")
        for view in second.values():
            assert (view["runs"], view["generation"]) == (["r1", "r2"], writer.generation)
        assert writer.generation > first["held"]["generation"]
        assert reader.ask("app") == {"exception": [], "runs": ["r1", "r2"]}

        with _writing(folder):
            writer.catalogue.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        assert (folder / "catalogue.sqlite-wal").stat().st_size == 0  # everything in the catalogue file now
        third = reader.ask("api")
        assert third["held"] == third["fresh"] == second["held"]
        with _writing(folder):
            writer.add_run("r3", _run(3))
        fourth = reader.ask("api")
        for view in fourth.values():
            assert (view["runs"], view["generation"]) == (["r1", "r2", "r3"], writer.generation)
        assert len(reader.ask("copies")["copies"]) <= 2  # the held workspace's and the dashboard's, at most
        assert reader.stop() == 0
    finally:
        chmod_tree(folder, writable=True)
        writer.close()
    assert list((tmp_path / "tmp").iterdir()) == []  # the process ended: its copies are gone


# ------------------------------------------------------------------------------------------ no copies left behind


def test_the_copy_of_a_killed_reader_is_removed_by_the_next_one(tmp_path: Path):
    writer = _build(tmp_path / "live")
    folder = tmp_path / "W"
    shutil.copytree(writer.path, folder)
    writer.close()
    chmod_tree(folder, writable=False)
    try:
        killed = Reader(folder, tmp_path / "out", tmp_path / "tmp")
        assert killed.ask("api")["held"]["runs"] == ["r1", "r2", "e"]
        left = killed.ask("copies")["copies"]
        assert len(left) == 1
        killed.proc.kill()
        killed.proc.wait(timeout=60)
        killed.stderr.close()
        assert [p.name for p in (tmp_path / "tmp").iterdir()] == left  # kill -9: nothing could remove it
        later = Reader(folder, tmp_path / "out", tmp_path / "tmp")
        assert later.ask("api")["held"]["runs"] == ["r1", "r2", "e"]
        now = later.ask("copies")["copies"]
        assert len(now) == 1 and now != left  # the dead process's copy is swept
        assert later.stop() == 0
    finally:
        chmod_tree(folder, writable=True)
    assert list((tmp_path / "tmp").iterdir()) == []


# ------------------------------------------------------------------------------------------ copies and errors


def test_a_copy_is_made_again_while_the_catalogue_changes_under_it(tmp_path: Path, monkeypatch):
    ws = _build(tmp_path / "W")
    db = ws.path / "catalogue.sqlite"
    calls = []

    def change_once() -> None:  # a writer commits between the copy and its check, once
        calls.append(1)
        if len(calls) == 1:
            ws.add_run("late", _run(9))

    copy = readcopy.read_copy(db, _between=change_once)
    assert len(calls) == 2
    conn = sqlite3.connect(f"file:{copy.path}?mode=ro", uri=True)
    try:
        assert [r[0] for r in conn.execute("SELECT name FROM runs ORDER BY position")] == ["r1", "r2", "e", "late"]
        assert conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0] == ws.generation
    finally:
        conn.close()
    folder = copy.folder
    del copy, conn
    assert not folder.exists()

    monkeypatch.setattr(readcopy, "ATTEMPTS", 3)
    n = iter(range(10_000))
    with pytest.raises(WorkspaceError) as e:
        readcopy.read_copy(db, _between=lambda: ws.set_settings(k=[1 + next(n)]))
    assert "kept changing" in str(e.value) and str(ws.path) in str(e.value) and "\n" not in str(e.value)
    ws.close()


def test_errors_are_one_line_naming_the_folder_and_without_a_private_folder_a_merged_catalogue_still_opens(
        tmp_path: Path):
    """No writable temporary folder: changes in the WAL are one clear line (naming TMPDIR), a catalogue without
    any is read in place as before; a catalogue this user may not read is one line naming it."""
    writer = _build(tmp_path / "live")
    folder = tmp_path / "W"
    shutil.copytree(writer.path, folder)
    unreadable = tmp_path / "unreadable"
    shutil.copytree(writer.path, unreadable)
    writer.close()  # its last connection: the WAL is merged into the catalogue file of "live"
    merged = tmp_path / "merged"
    shutil.copytree(writer.path, merged)
    nowhere, temp = tmp_path / "no-temp", tmp_path / "tmp"
    nowhere.mkdir()
    temp.mkdir()
    for p in (folder, merged, nowhere, unreadable):
        chmod_tree(p, writable=False)
    (unreadable / "catalogue.sqlite").chmod(0)
    script = textwrap.dedent(f"""
        import json, tempfile
        from evalcore import Workspace
        out = {{}}
        for name, temp in (("W", {str(nowhere)!r}), ("merged", {str(nowhere)!r}), ("unreadable", {str(temp)!r})):
            tempfile.tempdir = temp  # "no-temp": the only temporary folder, and it cannot be written
            try:
                out[name] = Workspace.open({str(tmp_path)!r} + "/" + name).run_names()
            except Exception as e:
                out[name] = f"{{type(e).__name__}}: {{e}}"
        print(json.dumps(out))
        """)
    try:
        done = subprocess.run(unprivileged([sys.executable, "-c", script]), cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
    finally:
        (unreadable / "catalogue.sqlite").chmod(0o444)
        for p in (folder, merged, nowhere, unreadable):
            chmod_tree(p, writable=True)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["merged"] == ["r1", "r2", "e"]
    assert got["W"].startswith(f"WorkspaceError: {folder}: this read-only folder holds changes not yet merged")
    assert "TMPDIR" in got["W"]
    assert got["unreadable"] == f"WorkspaceError: {unreadable}: cannot read catalogue.sqlite (Permission denied)"
    assert not any("\n" in text for text in got.values())
    assert list(temp.iterdir()) == []

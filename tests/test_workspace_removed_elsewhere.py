"""A run removed by another process (or another Workspace object on the same folder), its file collected by ``gc``
since, is said to be removed when this process reads it, not as damage to the workspace.

Before, ``Workspace.load_run`` (and ``ranked_run`` of a record read earlier: the dashboard's list of runs) of a run
this process had listed, removed elsewhere with a ``gc`` after it, said "run 'a': its stored file objects/... is
missing", which reads as a damaged workspace; the catalogue was not asked again. A run whose file is gone while the
catalogue still lists it is still said to be missing (that is damage), and a run stored again under its name
meanwhile is read as it is now.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_app import trec_qrels, trec_run

from evalcore import load_run
from evalcore.cli.main import main
from evalcore.errors import CorruptArtifactError, OptionError
from evalcore.workspace import Workspace

REMOVED = r"run 'a' was removed from the workspace by another process after this one listed it; its runs are now \['b'\]"


@pytest.fixture
def folder(tmp_path) -> Path:
    (tmp_path / "qrels.txt").write_bytes(trec_qrels())
    for seed, name in enumerate("abc", start=1):
        (tmp_path / f"{name}.trec").write_bytes(trec_run(seed))
    ws = Workspace(tmp_path / "ws")
    ws.set_ground_truth(tmp_path / "qrels.txt")
    ws.add_run("a", tmp_path / "a.trec")
    ws.add_run("b", tmp_path / "b.trec")
    return tmp_path


def remove_and_collect(ws: Workspace, name: str) -> None:
    """``name`` removed and its file collected, as ``evalcore workspace gc`` does an hour later."""
    ws.remove_run(name)
    assert ws.gc(age=0)["files"] >= 1


def removed_between_listing_and_reading(reader: Workspace, writer: Workspace, monkeypatch, then=None) -> None:
    """Make ``writer`` remove run 'a' (and gc; then ``then``) just after ``reader`` read its record: the moment
    another process's change falls between this one's two reads, without waiting on a clock."""
    listed = reader.run_record

    def run_record(name):
        rec = listed(name)
        if name == "a" and not getattr(run_record, "done", False):
            run_record.done = True
            remove_and_collect(writer, "a")
            if then is not None:
                then()
        return rec

    monkeypatch.setattr(reader, "run_record", run_record)


def test_load_run_says_the_run_was_removed_elsewhere(folder, monkeypatch):
    reader, writer = Workspace(folder / "ws"), Workspace(folder / "ws")
    assert reader.run_names() == ["a", "b"]
    removed_between_listing_and_reading(reader, writer, monkeypatch)
    with pytest.raises(OptionError, match=REMOVED):
        reader.load_run("a")


def test_a_listed_record_read_after_removal_and_gc_says_removed(folder):
    reader, writer = Workspace(folder / "ws"), Workspace(folder / "ws")
    rec = {r.name: r for r in reader.run_records()}["a"]  # listed (as the dashboard's sidebar lists the runs)
    remove_and_collect(writer, "a")
    with pytest.raises(OptionError, match=REMOVED):
        reader.ranked_run(rec)


def test_a_run_stored_again_meanwhile_is_read_as_it_is_now(folder, monkeypatch):
    reader, writer = Workspace(folder / "ws"), Workspace(folder / "ws")
    removed_between_listing_and_reading(reader, writer, monkeypatch,
                                        then=lambda: writer.add_run("a", folder / "c.trec"))
    got = reader.load_run("a")
    assert got.name == "a"
    assert got.to_dict() == load_run(folder / "c.trec").to_dict() != load_run(folder / "a.trec").to_dict()


def test_a_file_missing_under_a_listed_run_is_still_damage(folder):
    ws = Workspace(folder / "ws")
    rec = ws.run_record("a")
    path = next(p for p in (folder / "ws").rglob(f"{rec.artifact}*") if p.is_file())
    path.unlink()
    with pytest.raises(CorruptArtifactError, match="is missing"):
        Workspace(folder / "ws").load_run("a")


def test_another_process_that_listed_the_run_hears_it_was_removed(folder):
    """Two processes: the second lists the runs and keeps the record; this one removes 'a' and runs ``evalcore
    workspace gc`` (its files aged past gc's hour by their times, not by waiting); the second then reads it."""
    code = ("import sys\n"
            "from evalcore.workspace import Workspace\n"
            f"ws = Workspace({str(folder / 'ws')!r})\n"
            "rec = {r.name: r for r in ws.run_records()}['a']\n"
            "print('listed', flush=True)\n"
            "sys.stdin.readline()\n"
            "try:\n"
            "    ws.ranked_run(rec)\n"
            "except Exception as e:\n"
            "    print(type(e).__name__, e, flush=True)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "listed", child.stderr.read()
        Workspace(folder / "ws").remove_run("a")
        old = time.time() - 2 * 3600
        for p in (folder / "ws").rglob("*"):
            if p.is_file() and "objects" in p.parts:
                os.utime(p, (old, old))
        assert main(["workspace", "gc", "--workspace", str(folder / "ws")]) == 0
        out, err = child.communicate("go\n", timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert out.startswith("OptionError run 'a' was removed from the workspace by another process"), (out, err)
    assert "missing" not in out

"""A folder or a glob of run files added at once (``Workspace.add_run_files``): before it, a folder given to the
Data page's local path was refused and 12 run files were added one at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.errors import InputFormatError, OptionError
from evalcore.workspace import Workspace
from evalcore.workspace.runfiles import list_run_files

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


def _run(tag: str, top: str = "d1") -> bytes:
    return f"q1 Q0 {top} 1 3.0 {tag}\nq1 Q0 d9 2 2.0 {tag}\nq2 Q0 d3 1 1.0 {tag}\n".encode()


def _folder(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir()
    for i in (1, 2, 10):
        (runs / f"run-{i}.trec").write_bytes(_run(f"r{i}"))
    (runs / "broken.trec").write_bytes(_run("b") + b"q2 Q0 d4 two 0.5\n")  # line 4: 5 columns
    (runs / ".hidden.trec").write_bytes(_run("h"))
    (runs / "q_ids.txt").write_text("q1\nq2\n")
    (runs / "README.md").write_text("these are my runs\n")
    (runs / "sub").mkdir()
    return runs


def _ws(tmp_path: Path) -> Workspace:
    ws = Workspace.open(tmp_path / "ws")
    ws.set_ground_truth(QRELS, source_name="qrels.txt")
    return ws


def test_a_folder_adds_each_good_file_and_names_each_bad_or_left_out_one(tmp_path):
    runs = _folder(tmp_path)
    ws = _ws(tmp_path)
    ws.add_run("run-2", _run("stored", top="d2"), source_name="run-2.trec")  # a name clash, kept as it is
    before = ws.load_run("run-2").to_frame()
    seen = []
    out = ws.add_run_files(runs, progress=lambda done, total, f: seen.append((done, total, Path(f).name)))
    # name order with digit runs as numbers; the clash named as one file added alone would be
    assert [(Path(a.file).name, a.run) for a in out.added] == [
        ("run-1.trec", "run-1"), ("run-2.trec", "run-2 (2)"), ("run-10.trec", "run-10")]
    assert [Path(f.file).name for f in out.failed] == ["broken.trec"]
    assert "broken.trec, line 4" in out.failed[0].error
    assert {Path(p).name: why for p, why in out.left_out} == {
        ".hidden.trec": "hidden", "q_ids.txt": "an ids file", "README.md": "not a run file",
        "sub": "a subfolder (not searched)"}
    assert sorted(ws.run_names()) == ["run-1", "run-10", "run-2", "run-2 (2)"]
    assert ws.load_run("run-2").to_frame().equals(before)  # what was stored is untouched
    assert ws.runs().set_index("name").loc["run-10", "source_name"] == "run-10.trec"
    assert seen[0] == (0, 4, "broken.trec") and seen[-1][:2] == (4, 4) and len(seen) == 5


def test_a_glob_takes_the_files_it_matches_and_the_same_bytes_are_named(tmp_path):
    runs = _folder(tmp_path)
    ws = _ws(tmp_path)
    ws.add_run("first", runs / "run-1.trec")
    out = ws.add_run_files(str(runs / "run-*.trec"))
    # run-1.trec's very bytes are already run 'first': named, not stored a second time
    assert [a.run for a in out.added] == ["first", "run-2", "run-10"]
    assert [a.new for a in out.added] == [False, True, True]
    assert out.added[0].same == ("first",) and out.added[1].same == ()
    assert ws.run_names() == ["first", "run-2", "run-10"]
    assert not out.failed and not out.left_out


def test_nothing_to_add_is_an_error_and_changes_nothing(tmp_path):
    runs = _folder(tmp_path)
    ws = _ws(tmp_path)
    with pytest.raises(InputFormatError, match=r"none of its 1 run files loaded .*broken\.trec, line 4"):
        ws.add_run_files(str(runs / "broken*"))
    with pytest.raises(OptionError, match="no file matches"):
        ws.add_run_files(str(runs / "*.tsv"))
    with pytest.raises(OptionError, match=r"no run file in .*every file there is left out \(q_ids.txt: an ids"):
        ws.add_run_files(str(runs / "q_*"))
    assert ws.run_names() == []


def test_which_files_are_run_files(tmp_path):
    for name in ("a.trec", "b.run.gz", "c.csv", "d.json", "e.npy", "f.npz", "g.ids.txt", "LICENSE", "notes.txt",
                 "h.txt"):
        (tmp_path / name).write_bytes(b"x")
    taken, left = list_run_files(tmp_path)
    assert [Path(p).name for p in taken] == ["a.trec", "b.run.gz", "c.csv", "d.json", "h.txt"]
    assert {Path(p).name for p, _ in left} == {"e.npy", "f.npz", "g.ids.txt", "LICENSE", "notes.txt"}

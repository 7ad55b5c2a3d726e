"""A run file is one run of a workspace, whichever entry point adds it: the dashboard (an upload, a path, a folder)
and ``Workspace.add_run_files`` name a file by its stem, ``evaluate --run FILE`` by its TREC run tag, and a file
whose very bytes the workspace already holds as a run is not stored a second time under the other name: it is
that run (said in one line).

Before, ``evaluate --workspace WS --run bm25.trec`` on a workspace filled from the dashboard stored the same
content again as run 'tag' (its TREC tag) beside 'bm25', and uploading or adding by path a file the command line
had recorded stored it again as 'bm25'.
"""

from __future__ import annotations

import uuid

import test_app as T

from evalcore import Workspace
from evalcore import workspace as W
from evalcore.cli import main

TAG = "tag"  # the run tag of T.trec_run's lines


def _files(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "bm25.trec").write_bytes(T.trec_run(1))
    (tmp_path / "qrels.txt").write_bytes(T.trec_qrels())
    return runs, tmp_path / "qrels.txt"


def _evaluate(qrels, run, ws_dir) -> int:
    return main(["evaluate", "--qrels", str(qrels), "--run", str(run), "--k", "5", "--workspace", str(ws_dir)])


def test_the_command_line_names_a_file_the_workspace_holds_as_it_is_stored(tmp_path, capsys):
    runs, qrels = _files(tmp_path)
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(qrels)
    assert [a.run for a in ws.add_run_files(runs).added] == ["bm25"]  # (as an upload names it)
    capsys.readouterr()
    assert _evaluate(qrels, runs / "bm25.trec", tmp_path / "W") == 0
    out, err = capsys.readouterr()
    assert Workspace.open(tmp_path / "W").run_names() == ["bm25"]  # not stored again as 'tag'
    lines = [ln for ln in err.splitlines() if "bm25.trec" in ln]
    assert len(lines) == 1 and "as run 'bm25'" in lines[0] and "not stored again" in lines[0], err
    assert "bm25" in out and TAG not in out.split()  # evaluated (printed) under the stored name
    recorded = Workspace.open(tmp_path / "W").load_evaluation()
    assert sorted(set(recorded.table["run"].astype(str))) == ["bm25"]
    # NAME=FILE is the user's choice: kept
    assert main(["evaluate", "--qrels", str(qrels), "--run", f"copy={runs / 'bm25.trec'}", "--k", "5",
                 "--workspace", str(tmp_path / "W")]) == 0
    assert Workspace.open(tmp_path / "W").run_names() == ["bm25", "copy"]


def test_a_folder_does_not_store_again_a_file_the_command_line_recorded(tmp_path, capsys):
    runs, qrels = _files(tmp_path)
    (runs / "dense.trec").write_bytes(T.trec_run(2).replace(b" tag\n", b" dense\n"))
    assert _evaluate(qrels, runs / "bm25.trec", tmp_path / "W") == 0
    ws = Workspace.open(tmp_path / "W")
    assert ws.run_names() == [TAG]
    out = ws.add_run_files(runs)
    assert [(a.run, a.new, a.same) for a in out.added] == [(TAG, False, (TAG,)), ("dense", True, ())]
    assert ws.run_names() == [TAG, "dense"]


def test_the_data_page_does_not_store_again_a_file_the_command_line_recorded(tmp_path, capsys):
    runs, qrels = _files(tmp_path)
    name = f"same-{uuid.uuid4().hex[:10]}"
    ws = W.WorkspaceRoot().create(name)
    assert _evaluate(qrels, runs / "bm25.trec", ws.path) == 0
    at = T.goto(T.open_app(name), "data")
    said = "already in the workspace, not stored again: bm25.trec (the same file as run 'tag')"
    # added from its path
    at.text_input(key="path_main").input(str(runs / "bm25.trec"))
    at.button[[b.label for b in at.button].index("Add from this path")].click().run()
    assert not at.exception and not T.errors(at)
    assert said in [T.unescape(s.value) for s in at.success]
    assert Workspace.open(ws.path).run_names() == [TAG]
    # uploaded
    box = next(u for u in at.get("file_uploader") if str(u.key).startswith("up_runs"))
    box.set_value([("bm25.trec", T.trec_run(1), "text/plain")]).run()
    assert not at.exception and not T.errors(at)
    assert said in [T.unescape(s.value) for s in at.success]
    assert Workspace.open(ws.path).run_names() == [TAG]

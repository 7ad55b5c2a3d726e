"""The Data page's local path takes a folder or a glob of run files (before: "a folder ... is for the command line",
and a user with 12 run files added them one at a time), and its "What" defaults to a ranked run file once a ground
truth is stored (before: "ground truth" always)."""

from __future__ import annotations

import uuid

import test_app as T

from evalcore import workspace as W

goto, unescape = T.goto, T.unescape


def _page(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for seed in (1, 2, 3):
        (runs / f"model-{seed}.trec").write_bytes(T.trec_run(seed))
    (runs / "bad.trec").write_bytes(T.trec_run(4) + b"q1 Q0 d1 x\n")
    (runs / "q_ids.txt").write_text("q1\n")
    name = f"folder-{uuid.uuid4().hex[:10]}"
    ws = W.WorkspaceRoot().create(name)
    ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
    ws.add_run("model-1", T.trec_run(1), source_name="model-1.trec")
    return runs, ws, goto(T.open_app(name), "data")


def _add(at, path):
    at.text_input(key="path_main").input(str(path))
    at.button[[b.label for b in at.button].index("Add from this path")].click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_folder_of_run_files_is_added_from_the_path_field(tmp_path):
    runs, ws, at = _page(tmp_path)
    assert at.radio(key="path_kind").value == "ranked"  # a ground truth is stored: runs come next
    _add(at, runs)
    assert sorted(ws.run_names()) == ["model-1", "model-2", "model-3"]  # model-1.trec again: not stored twice
    ok = [unescape(s.value) for s in at.success]
    assert any("added 2 run(s) from" in s and "model-2.trec" in s for s in ok), ok
    assert "already in the workspace, not stored again: model-1.trec (the same file as run 'model-1')" in ok, ok
    errors = T.errors(at)
    assert any(e.startswith("Not loaded (bad.trec; the other files are added)") and f"bad.trec, line {len(T.trec_run(4).splitlines()) + 1}" in e
               for e in errors), errors
    warned = [unescape(w.value) for w in at.warning]
    assert any("left out 1 file(s)" in w and "q_ids.txt (an ids file)" in w for w in warned), warned


def test_a_glob_and_a_run_name_given_with_it(tmp_path):
    runs, ws, at = _page(tmp_path)
    at.text_input(key="path_name").input("mine")
    _add(at, runs / "model-[23].trec")
    assert any("names one run" in e for e in T.errors(at)), T.errors(at)
    assert ws.run_names() == ["model-1"]
    at.text_input(key="path_name").input("")
    _add(at, runs / "model-[23].trec")
    assert sorted(ws.run_names()) == ["model-1", "model-2", "model-3"] and not T.errors(at)
    # the user's own choice of "What" is kept while the ground truth stays the same
    at.radio(key="path_kind").set_value("qrels").run()
    at = goto(goto(at, "overview"), "data")
    assert at.radio(key="path_kind").value == "qrels"


def test_many_bad_files_are_not_a_wall_of_errors(tmp_path):
    runs, ws, at = _page(tmp_path)
    many = tmp_path / "many"
    many.mkdir()
    (many / "good.trec").write_bytes(T.trec_run(5))
    for i in range(1, 13):
        (many / f"bad-{i}.trec").write_bytes(b"q1 Q0 d1\n")
    _add(at, many)
    errors = T.errors(at)
    assert [e.split(";")[0] for e in errors[:10]] == [f"Not loaded (bad-{i}.trec" for i in range(1, 11)]
    assert len(errors) == 11 and errors[10] == "Not loaded: 2 more run files did not load: bad-11.trec, bad-12.trec"
    assert sorted(ws.run_names()) == ["good", "model-1"]

"""A ground truth replaced is kept and can be used again (a review: uploading a valid ground truth whose ids
match no run replaced the loaded one, every run became "(not loaded)", and only uploading the old file again
brought them back)."""

from __future__ import annotations

import test_app as T
from test_app_store import python_workspace

from evalcore import workspace as W
from evalcore.errors import OptionError


def test_an_earlier_ground_truth_is_used_again_from_the_data_page():
    name, ws = python_workspace()
    at = T.goto(T.open_app(name), "data")
    assert not at.exception and not [e for e in at.expander if "Earlier ground truths" in e.label]
    other = b"".join(f"m{i} 0 x{i} 1\n".encode() for i in range(5))  # ids none of the runs answers
    at.file_uploader(key="up_gt").set_value(("movies.txt", other, "text/plain")).run()
    assert not at.exception
    assert ws.ground_truth()["name"] == "movies.txt"
    assert [e for e in at.expander if e.label == "Earlier ground truths (1)"]
    box = at.selectbox(key="gt_earlier")
    assert len(box.options) == 1 and box.options[0].startswith("qrels.txt (qrels, "), box.options
    at.button(key="gt_use_earlier").click().run()
    assert not at.exception
    assert ws.ground_truth()["name"] == "qrels.txt"
    at = T.goto(at, "overview")
    assert list(T.overview_text(at).index) == ["bm25", "dense", "e5-ep5", "e5-ep25"]  # every run evaluated again
    assert [g["name"] for g in ws.ground_truths()] == ["movies.txt", "qrels.txt"]


def test_the_api_lists_and_reactivates_ground_truths(tmp_path):
    ws = W.Workspace.open(tmp_path / "W")
    ws.set_ground_truth(b"q1 0 d1 1\nq2 0 d2 1\n", source_name="a.txt")
    ws.set_ground_truth(b"x1 0 d1 1\n", source_name="b.txt")
    first, second = ws.ground_truths()[1], ws.ground_truths()[0]
    assert (first["name"], first["active"], first["n_queries"]) == ("a.txt", False, 2)
    assert (second["name"], second["active"]) == ("b.txt", True)
    before = ws.generation
    ws.use_ground_truth(first["id"])
    assert ws.ground_truth()["name"] == "a.txt" and ws.load_qrels().n_queries == 2 and ws.generation > before
    now = ws.generation
    ws.use_ground_truth(first["id"])  # already active: nothing changes
    assert ws.generation == now
    try:
        ws.use_ground_truth(99)
    except OptionError as e:
        assert "no ground truth 99" in str(e) and str([first["id"], second["id"]]) in str(e)
    else:
        raise AssertionError("an unknown id was accepted")


def test_the_data_page_says_which_stored_runs_answer_none_of_the_new_ground_truth():
    """Uploading a ground truth that the stored runs do not answer warned only in the server's log (a Python
    warning); the Data page now says it next to the uploader, a few runs named, then "and N more", as plain text.
    Bringing an earlier ground truth back says it alike."""
    from evalcore.workspace.idchecks import NAMED_RUNS

    marker = "Z*x*_<b>y</b>$m$"
    name, ws = python_workspace()  # bm25, dense, e5-ep5, e5-ep25 answer q0..q14
    for i in range(3):
        ws.add_run(f"{marker}{i}", T.trec_run(10 + i))
    ws.set_settings(k=(1, 5, 10, 20))  # (within the runs' 20 documents: no warning of shallow runs either)
    at = T.goto(T.open_app(name), "data")
    assert not at.warning
    other = b"".join(f"m{i} 0 x{i} 1\n".encode() for i in range(5))  # ids none of the runs answers
    at.file_uploader(key="up_gt").set_value(("movies.txt", other, "text/plain")).run()
    assert not at.exception and ws.ground_truth()["name"] == "movies.txt"
    told = [T.unescape(w.value) for w in at.warning if "answer none" in T.unescape(w.value)]
    assert len(told) == 1, [w.value for w in at.warning]
    named = ", ".join(repr(n) for n in ws.run_names()[:NAMED_RUNS])
    assert told[0].startswith(f"stored runs {named} and {len(ws.run_names()) - NAMED_RUNS} more answer none of the "
                              "queries of the ground truth 'movies.txt'"), told[0]
    assert all(marker not in w.value for w in at.warning)  # the names arrive escaped, never as Markdown
    at.run()
    assert not [w for w in at.warning if "answer none" in w.value]  # said once
    # a run answering only movies.txt, then the earlier ground truth back: that run is named
    ws.add_run("movies-run", b"m0 Q0 x0 1 1.0 t\nm1 Q0 x1 2 0.5 t\n", source_name="movies-run.trec")
    at.run()
    at.button(key="gt_use_earlier").click().run()
    assert not at.exception and ws.ground_truth()["name"] == "qrels.txt"
    told = [T.unescape(w.value) for w in at.warning if "answers none" in T.unescape(w.value)]
    assert len(told) == 1 and told[0].startswith("stored run 'movies-run' answers none of the queries of the ground "
                                                 "truth 'qrels.txt'"), told

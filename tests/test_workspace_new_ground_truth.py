"""When another ground truth becomes a workspace's active one (``set_ground_truth``, ``set_reference``,
``use_ground_truth``; ``evaluate --workspace`` too), one warning names the stored runs answering none of its
queries; they stay stored (not an error: changing the ground truth is legitimate). Before: nothing was said,
and those runs evaluated to 0 or failed later.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from coverage_support import DOCS, QIDS, XIDS, qrels_of, run_of, warned

from evalcore import Run, Workspace
from evalcore.cli import main
from evalcore.io import Embeddings
from evalcore.io.trec import write_trec_qrels, write_trec_run

RNG = np.random.default_rng(4)


def _only(messages: list[str]) -> str:
    assert len(messages) == 1, messages
    return messages[0]


def test_setting_another_ground_truth_names_the_stored_runs_answering_none_of_it(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(qrels_of(QIDS), name="A")
    ws.add_run("lex", run_of(QIDS, "lex"))
    ws.add_embedding_run("items", RNG.normal(size=(30, 4)), QIDS + DOCS)  # item-to-item: its items are q*, d*
    ws.add_run("both", run_of(QIDS + XIDS, "both"))
    ws.add_fused_run("mix", ["lex", "items"])  # answers what its inputs answer: none of B
    ws.add_fused_run("mix2", ["lex", "both"])
    names = ws.run_names()
    msg = _only(warned(ws.set_ground_truth, qrels_of(XIDS), name="B"))
    assert msg.startswith("stored runs 'lex', 'items', 'mix' answer none of the queries of the ground truth 'B', "
                          "now the active one (ids like 'q0', 'q1' in 'lex'; the ground truth's queries like "
                          "'x0', 'x1')")
    assert "\n" not in msg
    assert ws.run_names() == names  # not an error: every run stays
    assert warned(ws.set_ground_truth, qrels_of(XIDS), name="B") == []  # the same one again: nothing changes
    ws.add_run("xonly", run_of(XIDS, "xonly"))
    a = next(g["id"] for g in ws.ground_truths() if g["name"] == "A")
    assert _only(warned(ws.use_ground_truth, a)).startswith(
        "stored run 'xonly' answers none of the queries of the ground truth 'A', now the active one")
    assert warned(ws.set_ground_truth, qrels_of(QIDS[:3] + XIDS[:1]), name="C") == []  # every run answers some


def test_the_first_ground_truth_and_a_reference_are_checked_alike(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "W")
    ws.add_run("ints", Run.from_dict({7: {"d1": 1.0}, 8: {"d2": 1.0}}, name="ints"))  # before any ground truth
    ws.add_run("good", run_of(QIDS, "good"))
    assert _only(warned(ws.set_ground_truth, qrels_of(QIDS), name="qrels")).startswith(
        "stored run 'ints' answers none of the queries of the ground truth 'qrels'")
    ref = Embeddings.from_arrays(XIDS + DOCS, RNG.normal(size=(24, 4)))
    msg = _only(warned(ws.set_reference, ref, name="teacher"))
    assert msg.startswith("stored runs 'ints', 'good' answer none of the queries of the ground truth 'teacher'")


def test_evaluate_workspace_names_the_runs_left_answering_none_of_its_new_ground_truth(tmp_path: Path,
                                                                                     capsys) -> None:
    """With --replace and another ground truth: the runs the command records (or replaces) are not named,
    the runs it leaves there are, once."""
    write_trec_qrels(qrels_of(XIDS), tmp_path / "B.txt")
    write_trec_run(run_of(XIDS, "new"), tmp_path / "new.trec")
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(qrels_of(QIDS), name="A")
    ws.add_run("lex", run_of(QIDS, "lex"))
    ws.add_run("old", run_of(QIDS, "old"))  # replaced by the command with a run answering B
    capsys.readouterr()
    base = ["evaluate", "--qrels", str(tmp_path / "B.txt"), "--run", f"old={tmp_path / 'new.trec'}", "--k", "5",
            "--workspace", str(ws.path)]
    assert main([*base, "--replace"]) == 0
    warned = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning: stored run")]
    assert warned == ["warning: stored run 'lex' answers none of the queries of the ground truth 'B.txt', now the "
                      "active one (ids like 'q0', 'q1'; the ground truth's queries like 'x0', 'x1'): evaluated "
                      "against it, every value is 0, or, for an embedding run, nothing; it stays stored for the "
                      "ground truth it answers"]
    assert ws.run_names() == ["lex", "old"]
    assert main(base) == 0  # the same ground truth again: nothing said
    assert "warning: stored run" not in capsys.readouterr().err

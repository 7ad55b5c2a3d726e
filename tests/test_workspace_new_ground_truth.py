"""When another ground truth becomes a workspace's active one (``set_ground_truth``, ``set_reference``,
``use_ground_truth``; ``evaluate --workspace`` too), one warning names the stored runs answering none of its
queries; they stay stored (not an error: changing the ground truth is legitimate). Before: nothing was said,
and those runs evaluated to 0 or failed later.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
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


def test_many_runs_answering_none_are_named_a_few_then_counted(tmp_path: Path) -> None:
    """Seven runs answering none: the warning names the first five and counts the others (it named all of them,
    one unreadable line at a hundred checkpoints); the list returned still has them all."""
    from evalcore.workspace.idchecks import NAMED_RUNS, runs_answering_none

    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(qrels_of(QIDS), name="A")
    names = [f"ckpt-{i}" for i in range(NAMED_RUNS + 2)]
    for n in names:
        ws.add_run(n, run_of(QIDS, n))
    msg = _only(warned(ws.set_ground_truth, qrels_of(XIDS), name="B"))
    shown = ", ".join(repr(n) for n in names[:NAMED_RUNS])
    assert msg.startswith(f"stored runs {shown} and 2 more answer none of the queries of the ground truth 'B'"), msg
    assert repr(names[NAMED_RUNS]) not in msg
    assert [n for n, _ in runs_answering_none(ws)] == names


def test_the_check_reads_the_query_ids_of_stored_runs_not_the_runs(tmp_path: Path, monkeypatch) -> None:
    """Setting a ground truth used to parse every stored ranked run whole (document ids, scores: ~0.2 s per run of
    2 M rows) to learn its query ids; now only the header rows of the query id column are read (the file still
    verified), and the warning is the same."""
    from evalcore.workspace import codecs
    from evalcore.workspace.artifacts import clear_cache

    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(qrels_of(QIDS), name="A")
    ws.add_run("lex", run_of(QIDS, "lex"))
    ws.add_run("both", run_of(QIDS + XIDS, "both"))
    ws.add_run("lex2", run_of(QIDS[3:], "lex2"))
    clear_cache()  # a fresh process: nothing parsed yet
    parsed: list[str] = []
    whole = codecs.read_run
    monkeypatch.setattr(codecs, "read_run", lambda path, **kw: parsed.append(str(path)) or whole(path, **kw))
    msg = _only(warned(ws.set_ground_truth, qrels_of(XIDS), name="B"))
    assert msg.startswith("stored runs 'lex', 'lex2' answer none of the queries of the ground truth 'B', now the "
                          "active one (ids like 'q0', 'q1' in 'lex'; the ground truth's queries like 'x0', 'x1')"), msg
    assert parsed == []


def test_a_damaged_run_is_still_left_to_the_evaluation(tmp_path: Path) -> None:
    from evalcore.workspace.artifacts import clear_cache

    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(qrels_of(QIDS), name="A")
    ws.add_run("lex", run_of(QIDS, "lex"))
    ws.add_run("bad", run_of(QIDS[1:], "bad"))  # (other content: another artifact)
    path = ws.objects.path(ws.run_record("bad").artifact, "parquet")
    path.write_bytes(path.read_bytes()[:-40] + b"\0" * 40)
    clear_cache()
    assert _only(warned(ws.set_ground_truth, qrels_of(XIDS), name="B")).startswith(
        "stored run 'lex' answers none of the queries of the ground truth 'B'")


@pytest.mark.parametrize("group_rows", [None, 3, 7])
def test_reading_the_query_ids_alone_gives_the_run_s_query_ids(tmp_path: Path, monkeypatch, group_rows) -> None:
    """Parquet column projection (codecs.read_run_query_ids) against the whole read, on real files: one row group,
    and row groups of 3 or 7 rows (the header rows spread over several groups, each with its own dictionary)."""
    import pyarrow.parquet as pq

    from evalcore.workspace import codecs

    if group_rows is not None:
        monkeypatch.setattr(codecs, "_GROUP_ROWS", group_rows)
    runs = [run_of(["z9", "a1", "m5", "b2", "q0"], "mixed"),
            Run.from_dict({"only": {"d1": 1.0}}, name="one"),
            Run.from_dict({7: {"d1": 1.0, "d2": 0.5}, 3: {"d2": 2.0}}, name="ints")]
    for i, run in enumerate(runs):
        path = tmp_path / f"r{i}.parquet"
        codecs.write_run(run, path)
        if group_rows is not None and len(run) + run.n_queries > group_rows:
            assert pq.ParquetFile(path).metadata.num_row_groups > 1
        want = codecs.read_run(path).query_ids
        got = codecs.read_run_query_ids(path)
        assert got.tolist() == want.tolist() == [str(q) for q in run.query_ids], run.name
        # a file without the footer's statistics (not one evalcore writes) is read whole, with the same answer
        bare = tmp_path / f"bare{i}.parquet"
        pq.write_table(pq.read_table(path), bare, write_statistics=False)
        assert codecs.read_run_query_ids(bare).tolist() == want.tolist()

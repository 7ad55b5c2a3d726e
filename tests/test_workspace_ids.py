"""Ids the Workspace API refuses before anything is written: a run none of whose query ids is a query of the
ground truth (a wrong id array), and ids holding a control character (tab, line break, NUL...), which would
break the TREC / CSV files exported later. The same on ``evaluate --workspace``."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from raw_support import raw_qrels, raw_run

from evalcore import Qrels, Run, Workspace
from evalcore.cli import main
from evalcore.errors import InputFormatError, MissingIdsError
from evalcore.io import Embeddings, save_embeddings
from evalcore.io.trec import write_trec_qrels, write_trec_run
from evalcore.retrieval import sample_queries

QIDS = [f"q{i}" for i in range(6)]
DOCS = [f"d{j}" for j in range(12)]
RNG = np.random.default_rng(3)
VECS = RNG.normal(size=(len(DOCS), 4)).astype(np.float32)
QVECS = RNG.normal(size=(len(QIDS), 4)).astype(np.float32)
QRELS = Qrels.from_dict({q: {DOCS[i]: 1, DOCS[i + 1]: 2} for i, q in enumerate(QIDS)})


def _run(query_ids, name: str = "r", docs=DOCS) -> Run:
    return Run.from_dict({q: {d: float(len(docs) - j) for j, d in enumerate(docs[:4])} for q in query_ids}, name=name)


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(QRELS, name="qrels")
    ws.add_run("bm25", _run(QIDS, "bm25"))
    return ws


def _state(ws: Workspace) -> tuple:
    """The catalogue's rows and the artifact files: what a refused call must leave as it was."""
    conn = sqlite3.connect(ws.path / "catalogue.sqlite")
    try:
        rows = tuple(conn.execute(sql).fetchall() for sql in (
            "SELECT * FROM runs ORDER BY id", "SELECT * FROM ground_truths", "SELECT * FROM ground_truth_parts",
            "SELECT * FROM artifacts", "SELECT value FROM meta WHERE key = 'generation'"))
    finally:
        conn.close()
    return rows, sorted(p.name for p in (ws.path / "objects").rglob("*") if p.is_file())


def _refused(ws: Workspace, error: type[Exception], call) -> str:
    before = _state(ws)
    with pytest.raises(error) as info:
        call()
    text = str(info.value)
    assert "\n" not in text and len(text) < 400
    assert _state(ws) == before
    return text


# ------------------------------------------------------------------ none of the run's queries in the ground truth
def test_embedding_run_with_integer_query_ids_against_text_queries_is_refused(ws: Workspace) -> None:
    text = _refused(ws, MissingIdsError, lambda: ws.add_embedding_run(
        "e5", VECS, DOCS, query_embeddings=QVECS, query_ids=np.arange(len(QIDS))))
    assert text.startswith("run 'e5': none of its query ids (6) is a query of the ground truth 'qrels'")
    assert "'0', '1', '2'" in text and "'q0', 'q1', 'q2'" in text  # a few ids of each side


def test_document_ids_passed_as_query_ids_are_refused(ws: Workspace) -> None:
    text = _refused(ws, MissingIdsError, lambda: ws.add_embedding_run(
        "e5", VECS, DOCS, query_embeddings=VECS, query_ids=DOCS))
    assert "'d0'" in text and "'q0'" in text


def test_item_to_item_run_whose_items_hold_no_query_is_refused(ws: Workspace) -> None:
    text = _refused(ws, MissingIdsError, lambda: ws.add_embedding_run("items", VECS, DOCS))
    assert text.startswith("run 'items': none of its item ids (12) is a query of the ground truth 'qrels'")


@pytest.mark.parametrize("form", ["Run", "TREC bytes"])
def test_ranked_run_answering_no_query_is_refused(ws: Workspace, tmp_path: Path, form: str) -> None:
    run = _run(["x1", "x2"], "other")
    src: object = run
    if form == "TREC bytes":
        write_trec_run(run, tmp_path / "other.trec")
        src = (tmp_path / "other.trec").read_bytes()
    text = _refused(ws, MissingIdsError, lambda: ws.add_run("other", src))
    assert "'x1'" in text and "'q0'" in text


def test_against_a_reference_ground_truth_its_items_are_the_queries(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "R")
    ws.set_reference(VECS, DOCS)
    _refused(ws, MissingIdsError, lambda: ws.add_embedding_run("e5", VECS, DOCS, query_embeddings=QVECS,
                                                                query_ids=QIDS))
    ws.add_embedding_run("e5", VECS, DOCS)  # item-to-item over the reference's own items
    assert ws.run_names() == ["e5"]


def test_a_run_answering_some_queries_is_stored_and_evaluated_with_the_others_missing(ws: Workspace) -> None:
    ws.add_run("half", _run(QIDS[:3] + ["x1"], "half"))
    ws.add_embedding_run("e5", VECS, DOCS, query_embeddings=QVECS[:2], query_ids=[QIDS[0], "x9"])
    assert ws.run_names() == ["bm25", "half", "e5"]
    with pytest.warns(UserWarning, match=r"run 'e5': 5 of 6 ground-truth queries are not in"):
        ev = ws.evaluate(metrics=["ndcg"], k=[5], record=False)
    missing = {row["run"]: row["n_missing"] for row in ev.coverage_rows}
    assert missing == {"bm25": 0, "half": 3, "e5": 5}


def test_the_queries_compared_are_the_whole_ground_truth_not_the_evaluated_sample(ws: Workspace) -> None:
    ws.set_settings(sample_size=2, seed=1)
    sampled = set(ws.resolve(runs=["bm25"]).qrels[None].query_ids.tolist())
    others = [q for q in QIDS if q not in sampled]
    ws.add_run("others", _run(others, "others"))  # none of the sample, but queries of the ground truth
    assert "others" in ws.run_names()


def test_without_a_ground_truth_there_is_nothing_to_check(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "E")
    ws.add_embedding_run("e5", VECS, DOCS, query_embeddings=QVECS, query_ids=np.arange(len(QIDS)))
    ws.add_run("r", _run(["x1"]))
    assert ws.run_names() == ["e5", "r"]


# ------------------------------------------------------------------ control characters in ids
BROKEN = ["a\nb", "a\rb", "a\tb", "a\x00b", "a\x1fb", "a\x7fb", "a\x85b", "a\u2028b"]


def _with(ids: list[str], row: int, bad: str) -> list[str]:
    return [bad if i == row else x for i, x in enumerate(ids)]


def _check_message(text: str, what: str, bad: str, row: int) -> None:
    assert re.search(rf"{what} {re.escape(repr(bad))} \(row {row}, counted from 0\) holds a control character", text)


@pytest.mark.parametrize("bad", BROKEN)
def test_embedding_ids_with_a_control_character_are_refused(ws: Workspace, bad: str) -> None:
    text = _refused(ws, InputFormatError, lambda: ws.add_embedding_run("e5", VECS, _with(DOCS, 7, bad),
                                                                        query_embeddings=QVECS, query_ids=QIDS))
    assert text.startswith("run 'e5': ")
    _check_message(text, "document id", bad, 7)
    text = _refused(ws, InputFormatError, lambda: ws.add_embedding_run("e5", VECS, DOCS, query_embeddings=QVECS,
                                                                        query_ids=_with(QIDS, 4, bad)))
    _check_message(text, "query id", bad, 4)


@pytest.mark.parametrize("bad", ["q\n1", "q\t1", "q\x001"])
def test_run_rows_with_a_control_character_are_refused(ws: Workspace, bad: str) -> None:
    run = raw_run(["q0", "q0", "q1", "q1", "q1"], ["d0", "d1", "d0", "d1", bad], [3.0, 2.0, 3.0, 2.0, 1.0])
    _check_message(_refused(ws, InputFormatError, lambda: ws.add_run("r", run)), "document id", bad, 4)
    run = raw_run(["q0", "q0", bad, bad], ["d0", "d1", "d0", "d1"], [3.0, 2.0, 3.0, 2.0])
    _check_message(_refused(ws, InputFormatError, lambda: ws.add_run("r", run)), "query id", bad, 2)


@pytest.mark.parametrize("bad", ["q\r1", "q\x1e1"])
def test_judgments_and_reference_ids_with_a_control_character_are_refused(ws: Workspace, bad: str) -> None:
    qrels = raw_qrels(["q0", bad], ["d0", "d1"], [1, 1])
    text = _refused(ws, InputFormatError, lambda: ws.set_ground_truth(qrels))
    assert text.startswith("the ground truth: query id ")
    _check_message(text, "query id", bad, 1)
    _check_message(_refused(ws, InputFormatError, lambda: ws.set_reference(VECS, _with(DOCS, 2, bad))), "id", bad, 2)


def test_ids_given_as_a_sequence_beside_a_vectors_file_are_checked_alike(ws: Workspace, tmp_path: Path) -> None:
    np.save(tmp_path / "docs.npy", VECS)
    text = _refused(ws, InputFormatError, lambda: ws.add_embedding_run(
        "e5", tmp_path / "docs.npy", _with(DOCS, 3, "d\t3"), query_embeddings=QVECS, query_ids=QIDS))
    _check_message(text, "id", "d\t3", 3)


def test_spaces_and_other_text_in_ids_stay_accepted(ws: Workspace) -> None:
    ids = _with(_with(DOCS, 0, "doc 0"), 1, "dé1·")
    ws.add_embedding_run("e5", VECS, ids, query_embeddings=QVECS, query_ids=QIDS)
    assert list(ws.load_embeddings("e5")[0].ids[:2]) == ["doc 0", "dé1·"]


# ------------------------------------------------------------------ the command line records what the API accepts
@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"qrels": tmp_path / "qrels.txt", "good": tmp_path / "good.trec", "none": tmp_path / "none.trec"}
    write_trec_qrels(QRELS, paths["qrels"])
    write_trec_run(_run(QIDS, "good"), paths["good"])
    write_trec_run(_run(["x1", "x2"], "none"), paths["none"])
    return paths


def _evaluate(files: dict[str, Path], ws: Path, *runs: str, extra: tuple[str, ...] = ()) -> int:
    return main(["evaluate", "--qrels", str(files["qrels"]), *[a for r in runs for a in ("--run", r)],
                 "--metrics", "ndcg", "--k", "5", "--workspace", str(ws), *extra])


def test_cli_refuses_to_record_a_run_answering_no_query_and_records_nothing(files, tmp_path, capsys) -> None:
    code = _evaluate(files, tmp_path / "W", f"good={files['good']}", f"none={files['none']}")
    err = capsys.readouterr().err
    assert code == 2
    assert "error: run 'none': none of its query ids (2) is a query of the ground truth 'qrels.txt'" in err
    assert not (tmp_path / "W").exists()  # not even the ground truth or the run 'good' before it


def test_cli_refuses_an_id_with_a_control_character_before_recording(files, tmp_path, capsys) -> None:
    (tmp_path / "tab.json").write_text('{"q0": {"d0": 1.0}, "q1": {"d\\t1": 2.0}}', encoding="utf-8")
    code = _evaluate(files, tmp_path / "W", f"good={files['good']}", f"tab={tmp_path / 'tab.json'}")
    err = capsys.readouterr().err
    assert code == 2
    # the run file's reader refuses it (naming the file and the line), before the workspace's own check
    assert err == (f"error: {tmp_path / 'tab.json'}, line 1: document id 'd\\t1' holds a control character (U+0009, a "
                   "tab); ids and names may not hold a tab, a line break, NUL or any other control character\n")
    assert not (tmp_path / "W").exists()


def test_cli_records_a_run_answering_queries_outside_the_sample_as_the_api_does(files, tmp_path) -> None:
    picked = set(np.asarray(QIDS, dtype=object)[sample_queries(np.asarray(QIDS, dtype=object), 2, seed=5)].tolist())
    write_trec_run(_run([q for q in QIDS if q not in picked], "others"), tmp_path / "others.trec")
    code = _evaluate(files, tmp_path / "W", f"others={tmp_path / 'others.trec'}",
                     extra=("--n-samples", "2", "--seed", "5"))
    assert code == 0
    assert Workspace.open(tmp_path / "W").run_names() == ["others"]


def test_cli_embedding_run_answering_no_query_was_and_stays_an_error(files, tmp_path, capsys) -> None:
    save_embeddings(Embeddings.from_arrays(DOCS, VECS), tmp_path / "docs.npy")
    save_embeddings(Embeddings.from_arrays([f"x{i}" for i in range(len(QIDS))], QVECS), tmp_path / "queries.npy")
    code = main(["evaluate", "--qrels", str(files["qrels"]), "--emb",
                 f"e5={tmp_path / 'docs.npy'},{tmp_path / 'queries.npy'}", "--metrics", "ndcg", "--k", "5",
                 "--workspace", str(tmp_path / "W")])
    assert code == 2 and "none of the 6 ground-truth queries is in the embeddings" in capsys.readouterr().err
    assert not (tmp_path / "W").exists()


@pytest.mark.parametrize("value", ["no", "false", 1, 0, None])
def test_exclude_self_of_the_search_and_of_embedding_runs_is_a_real_bool(value: object) -> None:
    # bool("false") is True: the search would have dropped each query's own item when asked not to
    from evalcore.embedding_runs import embedding_run
    from evalcore.errors import OptionError
    from evalcore.retrieval import exact_topk

    vecs = np.eye(3, dtype=np.float32)
    ids = np.array(["a", "b", "c"])
    with pytest.raises(OptionError, match=r"exclude_self must be True or False"):
        exact_topk(vecs, vecs, 2, corpus_ids=ids, query_ids=ids, exclude_self=value)
    if value is not None:  # None is embedding_run's default (True item-to-item, False against queries)
        with pytest.raises(OptionError, match=r"exclude_self must be True or False"):
            embedding_run(Embeddings(ids, vecs), k=2, exclude_self=value)
    # numpy booleans are booleans
    top = exact_topk(vecs, vecs, 2, corpus_ids=ids, query_ids=ids, exclude_self=np.bool_(True))
    assert not (np.asarray(top.indices)[:, 0] == np.arange(3)).any()

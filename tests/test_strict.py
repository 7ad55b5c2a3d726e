"""Strict mode (``--strict``, ``strict=True``): coverage problems stop the evaluation instead of warning.

Seed 001 §8 step 2 ("verify all movie IDs in Q exist in each embedding dict") and §1.3 ("fail fast"):
a training pipeline or CI wants an evaluation whose ground truth is not fully covered to stop with an
error, not to report quietly lowered scores. The coverage problems (``evalcore.errors.COVERAGE_PROBLEMS``):

1. a ground-truth query a run does not answer (the command line's warning; ``evaluate`` counts it);
2. a ground-truth query absent from an embedding run's (query) embeddings (or from a reference);
3. a relevant document absent from an embedding run's corpus;
4. reference ids absent from a model (the similarity agreement).

For each: strict mode raises an error worded as one — what is wrong (the run, the count, a few ids), what refused
it (``--strict`` / ``strict=True``) and what happens without it — and writes nothing; without it, the same warning
as before. Other warnings stay warnings.
"""

from __future__ import annotations

import json
import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pytest

from evalcore import Qrels, Run, Workspace, evaluate
from evalcore.cli import main
from evalcore.coverage import missing_queries_message
from evalcore.embedding_runs import embedding_run, reference_agreement, reference_neighbours
from evalcore.errors import (
    COVERAGE_PROBLEMS,
    EvalcoreWarning,
    MissingIdsError,
    OptionError,
    coverage_problem,
    strict_coverage,
    warn,
)
from evalcore.io import Embeddings, save_embeddings
from evalcore.io.trec import write_trec_qrels, write_trec_run

FIX = Path(__file__).resolve().parent / "fixtures"
STRICT, CLI_STRICT = "strict=True", "--strict"


def _refusal(msg: str, switch: str, *parts: str, without: str) -> None:
    """``msg`` reads as an error: the problem (holding each of ``parts``: the run, the count, the ids), then
    "refused because of" the switch and, in parentheses, what happens ``without`` it; not a warning's words."""
    problem, sep, tail = msg.partition(f"; refused because of {switch} (without it ")
    assert sep and tail == f"{without})", msg
    for part in parts:
        assert part in problem, (part, msg)
    assert "partial coverage" not in msg and "an error because" not in msg and "\n" not in msg


def _emb(ids, dim: int = 4, seed: int = 0, source: str = "e.npz") -> Embeddings:
    vecs = np.random.default_rng(seed).normal(size=(len(ids), dim)).astype(np.float32)
    return Embeddings.from_arrays(list(ids), vecs, source=source)


def _warned(fn, *args, **kwargs) -> list[str]:
    """The EvalcoreWarning messages ``fn`` gives (it must not raise)."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn(*args, **kwargs)
    return [str(w.message) for w in got if issubclass(w.category, EvalcoreWarning)]


def _raised(exc: type[Exception], fn, *args, **kwargs) -> str:
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    return str(info.value)


def _lines(text: str, start: str) -> list[str]:
    return [ln[len(start):] for ln in text.splitlines() if ln.startswith(start)]


def _kept_rankings(ws: Workspace) -> int:
    """Embedding-run rankings the workspace keeps (its ``derived`` table)."""
    with sqlite3.connect(ws.path / "catalogue.sqlite") as conn:
        return conn.execute("SELECT COUNT(*) FROM derived").fetchone()[0]


# ----------------------------------------------------------------------------- the switch itself
def test_the_list_is_explicit_and_other_warnings_stay_warnings():
    assert len(COVERAGE_PROBLEMS) == 4
    with strict_coverage():
        with pytest.warns(EvalcoreWarning, match="a tie note"):
            warn("a tie note")  # not a coverage problem
        _refusal(_raised(MissingIdsError, coverage_problem, "3 ids lack: they count 0",
                         refusal=("3 ids lack", "they count 0")), STRICT, "3 ids lack", without="they count 0")
        assert _raised(MissingIdsError, coverage_problem, "3 ids lack") == "3 ids lack; refused because of strict=True"
    with pytest.warns(EvalcoreWarning, match="^3 ids lack: they count 0$"):  # outside: the warning, as before
        coverage_problem("3 ids lack: they count 0", refusal=lambda: pytest.fail("only strict mode words an error"))


def test_a_caller_that_is_not_strict_inside_a_strict_one_stays_strict_and_the_flag_is_checked():
    with strict_coverage(True, switch="--strict"), strict_coverage(False):
        assert _raised(MissingIdsError, coverage_problem, "x") == "x; refused because of --strict"
    qrels = Qrels.from_dict({"q1": {"d1": 1}})
    run = Run.from_dict({"q1": {"d1": 1.0}}, name="r")
    for bad in ("yes", 1, None):
        assert "strict must be True or False" in _raised(OptionError, evaluate, qrels, run, strict=bad)
    evaluate(qrels, run, strict=np.bool_(True))  # numpy's bool is a bool


# ----------------------------------------------------------------------------- 1. queries a run does not answer
def test_evaluate_strict_stops_on_ground_truth_queries_a_run_does_not_answer():
    qrels = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d1": 2}})
    part = Run.from_dict({"q1": {"d1": 1.0}}, name="part")  # answers 1 of the 4
    other = Run.from_dict({"Q1": {"d1": 1.0}, "Q2": {"d2": 1.0}}, name="other")  # none: ids in upper case
    assert _warned(evaluate, qrels, part, k=1) == []  # without strict: counted, not warned about (as before)
    assert evaluate(qrels, part).coverage.loc[0, "n_missing"] == 3
    msg = _raised(MissingIdsError, evaluate, qrels, {"full": Run.from_dict({q: {"d1": 1.0} for q in
                                                                           ("q1", "q2", "q3", "q4")}),
                                                     "part": part}, strict=True)
    _refusal(msg, STRICT, "run 'part' does not answer 3 of the 4 ground-truth queries", "(e.g. 'q2', 'q3')",
             without="they count 0 in its values and tests")
    msg = _raised(MissingIdsError, evaluate, qrels, other, strict=True)
    _refusal(msg, STRICT, "run 'other' does not answer any of the 4 ground-truth queries",
             "(its query ids look like 'Q1', 'Q2'; the ground truth's like 'q1', 'q2')", without="every value is 0")
    evaluate(qrels, Run.from_dict({q: {"d9": 1.0} for q in ("q1", "q2", "q3", "q4")}), strict=True)  # all answered


@pytest.fixture()
def trec_files(tmp_path: Path) -> dict[str, Path]:
    """20 queries; run ``half`` answers the first 10, run ``full`` all of them."""
    qids = [f"q{i}" for i in range(20)]
    qrels = Qrels.from_dict({q: {f"d{i}": 1, f"d{i + 1}": 2} for i, q in enumerate(qids)})
    paths = {"qrels": tmp_path / "qrels.txt", "half": tmp_path / "half.trec", "full": tmp_path / "full.trec"}
    write_trec_qrels(qrels, paths["qrels"])
    write_trec_run(Run.from_dict({q: {f"d{i}": 2.0, "d0": 1.0} for i, q in enumerate(qids[:10])}, name="half"),
                   paths["half"])
    write_trec_run(Run.from_dict({q: {f"d{i + 1}": 2.0, "d0": 1.0} for i, q in enumerate(qids)}, name="full"),
                   paths["full"])
    return paths


def test_cli_evaluate_strict_exits_2_with_the_warning_as_error_and_writes_nothing(trec_files, tmp_path, capsys):
    base = ["evaluate", "--qrels", str(trec_files["qrels"]), "--run", f"half={trec_files['half']}",
            "--run", f"full={trec_files['full']}", "--metrics", "recall", "--k", "2"]  # (k within the lists)
    assert main([*base, "--out", str(tmp_path / "loose")]) == 0
    warned = _lines(capsys.readouterr().err, "warning: ")
    assert warned == [missing_queries_message("half", 20, 10)]  # as before: 10 of the 20 count 0
    assert (tmp_path / "loose" / "report.json").exists()

    out, ws = tmp_path / "out", tmp_path / "ws"
    assert main([*base, "--strict", "--out", str(out), "--workspace", str(ws)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.endswith("\n")  # one line, worded as an error, no traceback
    _refusal(err[len("error: "):-1], CLI_STRICT, "run 'half' does not answer 10 of the 20 ground-truth queries",
             "(e.g. 'q10', 'q11')", without="they count 0 in its values and tests")
    assert not out.exists() and not ws.exists()  # nothing written, nothing recorded

    assert main([*base[:3], "--run", f"full={trec_files['full']}", "--metrics", "recall", "--strict", "--out", str(out)]) == 0
    assert (out / "report.json").exists()  # full coverage: strict changes nothing


def test_cli_compare_strict_exits_2_and_writes_no_table(trec_files, tmp_path, capsys):
    base = ["compare", "--qrels", str(trec_files["qrels"]), "--run", f"half={trec_files['half']}",
            "--run", f"full={trec_files['full']}", "--metric", "recall@2"]
    assert main([*base, "--out", str(tmp_path / "loose.csv")]) == 0
    warned = _lines(capsys.readouterr().err, "warning: ")
    assert warned == [missing_queries_message("half", 20, 10)]
    assert main([*base, "--strict", "--out", str(tmp_path / "strict.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.endswith("\n")
    _refusal(err[len("error: "):-1], CLI_STRICT, "run 'half' does not answer 10 of the 20", "(e.g. 'q10', 'q11')",
             without="they count 0 in its values and tests")
    assert not (tmp_path / "strict.csv").exists()


def test_cli_usage_errors_keep_exit_2_and_only_commands_checking_coverage_take_strict(trec_files, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:  # argparse's usage error
        main(["fuse", "--run", f"a={trec_files['half']}", "--run", f"b={trec_files['full']}", "--strict",
              "--out", str(tmp_path / "f.trec")])
    assert info.value.code == 2 and "unrecognized arguments: --strict" in capsys.readouterr().err
    assert main(["evaluate", "--qrels", str(trec_files["qrels"]), "--run", f"full={trec_files['full']}",
                 "--k", "0", "--strict"]) == 2  # a bad option: as before
    assert "error: " in capsys.readouterr().err


def test_workspace_evaluate_strict_stops_on_a_ranked_run_and_records_nothing(tmp_path):
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d1": 1}}))
    docs = _emb(["d1", "d2", "q1", "q2", "q3"])
    ws.add_embedding_run("items", docs.vectors, list(docs.ids))  # item-to-item, every query there
    ws.add_run("part", Run.from_dict({"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}, name="part"))
    generation = ws.generation
    msg = _raised(MissingIdsError, ws.evaluate, metrics=["recall"], k=[1], strict=True)
    _refusal(msg, STRICT, "run 'part' does not answer 1 of the 3 ground-truth queries (e.g. 'q3')",
             without="they count 0 in its values and tests")
    assert ws.evaluations().empty and ws.generation == generation
    assert _kept_rankings(ws) == 0  # checked before anything was ranked
    # without strict: the same words as a warning (as the command line's; it said nothing before)
    assert _warned(ws.evaluate, metrics=["recall"], k=[1]) == [missing_queries_message("part", 3, 1)]
    assert len(ws.evaluations()) == 1


# ----------------------------------------------------------------------------- 2. queries absent from embeddings
def test_embedding_run_strict_stops_on_ground_truth_queries_absent_from_the_embeddings():
    qrels = Qrels.from_dict({"a": {"b": 1}, "zz": {"a": 1}, "yy": {"c": 1}})
    docs = _emb(["a", "b", "c", "d"])
    warned = _warned(embedding_run, docs, qrels=qrels, k=2, name="x")
    assert warned == ["run 'x': 2 of 3 ground-truth queries are not in e.npz (e.g. ['zz', 'yy']); "
                      "they are scored 0 (partial coverage)"]
    _refusal(_raised(MissingIdsError, embedding_run, docs, qrels=qrels, k=2, name="x", strict=True), STRICT,
             "run 'x': 2 of 3 ground-truth queries are not in e.npz (e.g. ['zz', 'yy'])", without="they are scored 0")
    queries = _emb(["a", "zz"], source="q.npz")  # queries against a corpus: the query file lacks 'yy'
    warned = _warned(embedding_run, docs, queries, qrels=qrels, k=2, name="x")
    assert warned == ["run 'x': 1 of 3 ground-truth queries are not in q.npz (e.g. ['yy']); "
                      "they are scored 0 (partial coverage)"]
    _refusal(_raised(MissingIdsError, embedding_run, docs, queries, qrels=qrels, k=2, name="x", strict=True), STRICT,
             "run 'x': 1 of 3 ground-truth queries are not in q.npz (e.g. ['yy'])", without="they are scored 0")


def test_reference_query_ids_absent_from_the_reference():
    ref = _emb(["a", "b", "c"], source="ref.npz")
    warned = _warned(reference_neighbours, ref, depth=1, query_ids=["a", "q9"])
    assert warned == ["run 'reference': 1 of 2 queries are not in ref.npz (e.g. ['q9']); "
                      "they are scored 0 (partial coverage)"]
    _refusal(_raised(MissingIdsError, reference_neighbours, ref, depth=1, query_ids=["a", "q9"], strict=True),
             STRICT, "run 'reference': 1 of 2 queries are not in ref.npz (e.g. ['q9'])", without="they are scored 0")


def _seed001_space(root: Path, name: str, drop: str | None = None) -> Path:
    ids = [e["movie_id"] for e in json.loads((FIX / "seed001_movies.json").read_text())]
    keep = [i for i in ids if i != drop]
    path = root / f"{name}.npz"
    save_embeddings(Embeddings.from_arrays(keep, np.random.default_rng(len(name)).normal(size=(len(keep), 8))), path)
    return path


def test_cli_seed001_a_movie_absent_from_one_embedding_space_stops_a_strict_run(tmp_path, capsys):
    """Seed 001 §8 step 2: every movie id of Q must be in each embedding space."""
    anchor, content = _seed001_space(tmp_path, "anchor"), _seed001_space(tmp_path, "content", drop="tt0000004")
    base = ["evaluate", "--qrels", str(FIX / "seed001_movies.json"), "--emb", f"anchor={anchor}",
            "--emb", f"content={content}", "--aspect", "anchor=overall", "--aspect", "content=content",
            "--metrics", "recall", "ndcg_exp", "--k", "5", "--ties", "docid_asc"]
    assert main([*base, "--out", str(tmp_path / "loose")]) == 0
    warned = _lines(capsys.readouterr().err, "warning: ")
    assert warned[0] == (f"run 'content': 1 of 6 ground-truth queries are not in {content} (e.g. ['tt0000004']); "
                         "they are scored 0 (partial coverage)")
    out, ws = tmp_path / "out", tmp_path / "ws"
    assert main([*base, "--strict", "--out", str(out), "--workspace", str(ws)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.endswith("\n")
    _refusal(err[len("error: "):-1], CLI_STRICT, f"run 'content': 1 of 6 ground-truth queries are not in {content}",
             "(e.g. ['tt0000004'])", without="they are scored 0")
    assert not out.exists() and not ws.exists()


def _workspace_with_partial_embeddings(path: Path) -> Workspace:
    ws = Workspace.open(path)
    ws.set_ground_truth(Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 2}}))
    docs = _emb(["d1", "d2", "d3", "d4"])
    ws.add_embedding_run("full", docs.vectors, list(docs.ids), query_embeddings=_emb(["q1", "q2", "q3"]).vectors,
                         query_ids=["q1", "q2", "q3"])
    queries = _emb(["q1", "q2"], seed=1)  # q3 missing
    ws.add_embedding_run("e5", docs.vectors, list(docs.ids), query_embeddings=queries.vectors,
                         query_ids=list(queries.ids))
    ws.add_run("bm25", Run.from_dict({q: {"d1": 1.0, "d4": 0.5} for q in ("q1", "q2", "q3")}, name="bm25"))  # covered
    return ws


def test_workspace_evaluate_strict_stops_on_an_embedding_run_even_with_a_kept_ranking(tmp_path):
    ws = _workspace_with_partial_embeddings(tmp_path / "W")
    generation = ws.generation
    msg = _raised(MissingIdsError, ws.evaluate, metrics=["recall"], k=[2], strict=True)
    _refusal(msg, STRICT, "run 'e5': 1 of 3 ground-truth queries are not in ", "(e.g. ['q3'])",
             without="they are scored 0")
    assert ws.evaluations().empty and ws.generation == generation
    assert _kept_rankings(ws) == 0  # not even the full run's: checked before anything was ranked
    warned = _warned(ws.evaluate, metrics=["recall"], k=[2])  # ranks, keeps the rankings, records
    problem = msg.partition("; refused because of")[0]
    assert warned == [f"{problem}; they are scored 0 (partial coverage)"]  # the warning's words, as before
    assert len(ws.evaluations()) == 1 and _kept_rankings(ws) == 2
    # the kept ranking must not let a strict evaluation through
    assert _raised(MissingIdsError, ws.evaluate, metrics=["recall"], k=[2], strict=True) == msg
    assert len(ws.evaluations()) == 1


def test_a_ranking_kept_by_the_command_line_does_not_let_a_strict_evaluation_through(tmp_path, capsys):
    """``evaluate --workspace`` keeps an embedding run's ranking without its warnings."""
    qrels, docs, queries = tmp_path / "qrels.txt", tmp_path / "docs.npz", tmp_path / "queries.npz"
    write_trec_qrels(Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 2}}), qrels)
    save_embeddings(_emb(["d1", "d2", "d3", "d4"]), docs)
    save_embeddings(_emb(["q1", "q2"], seed=1), queries)
    assert main(["evaluate", "--qrels", str(qrels), "--emb", f"e5={docs},{queries}", "--metrics", "recall",
                 "--k", "2", "--ties", "docid_asc", "--workspace", str(tmp_path / "W")]) == 0
    assert _lines(capsys.readouterr().err, "warning: ") == [
        f"run 'e5': 1 of 3 ground-truth queries are not in {queries} (e.g. ['q3']); they are scored 0 (partial coverage)"]
    ws = Workspace.open(tmp_path / "W")
    assert len(ws.evaluations()) == 1
    # the workspace names the stored file by its name (the command line by its path)
    _refusal(_raised(MissingIdsError, ws.evaluate, strict=True), STRICT,
             "run 'e5': 1 of 3 ground-truth queries are not in queries.npz (e.g. ['q3'])", without="they are scored 0")
    assert len(ws.evaluations()) == 1


# ----------------------------------------------------------------------------- 3. relevant documents absent
def test_embedding_run_strict_stops_on_relevant_documents_absent_from_the_corpus():
    docs = _emb(["a", "b", "c", "d"], source="corpus.npz")
    queries = _emb(["q1", "q2"], seed=1, source="queries.npz")
    qrels = Qrels.from_dict({"q1": {"a": 1, "gone": 1}, "q2": {"c": 1}})
    warned = _warned(embedding_run, docs, queries, qrels=qrels, k=2, name="x")
    assert warned == ["run 'x': 1 of 3 relevant documents are not in the corpus corpus.npz (e.g. ['gone']); "
                      "they can never be retrieved"]
    _refusal(_raised(MissingIdsError, embedding_run, docs, queries, qrels=qrels, k=2, name="x", strict=True), STRICT,
             "run 'x': 1 of 3 relevant documents are not in the corpus corpus.npz (e.g. ['gone'])",
             without="the run is evaluated without them: they can never be retrieved")


def test_cli_strict_stops_on_relevant_documents_absent_from_the_corpus(tmp_path, capsys):
    qrels, docs, queries = tmp_path / "qrels.txt", tmp_path / "docs.npz", tmp_path / "queries.npz"
    write_trec_qrels(Qrels.from_dict({"q1": {"d1": 1, "d9": 1}, "q2": {"d2": 1}}), qrels)  # d9: not in the corpus
    save_embeddings(_emb(["d1", "d2", "d3"]), docs)
    save_embeddings(_emb(["q1", "q2"], seed=1), queries)
    base = ["evaluate", "--qrels", str(qrels), "--emb", f"e5={docs},{queries}", "--metrics", "recall",
            "--k", "2", "--ties", "docid_asc"]
    assert main(base) == 0
    warned = _lines(capsys.readouterr().err, "warning: ")
    assert warned == [f"run 'e5': 1 of 3 relevant documents are not in the corpus {docs} (e.g. ['d9']); "
                      "they can never be retrieved"]
    out = tmp_path / "out"
    assert main([*base, "--strict", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.endswith("\n")
    _refusal(err[len("error: "):-1], CLI_STRICT, f"run 'e5': 1 of 3 relevant documents are not in the corpus {docs}",
             "(e.g. ['d9'])", without="the run is evaluated without them: they can never be retrieved")
    assert not out.exists()


# ----------------------------------------------------------------------------- 4. reference ids absent from a model
def test_reference_agreement_strict_stops_on_reference_ids_absent_from_a_model():
    ref = _emb([f"i{j}" for j in range(6)], source="ref.npz")
    model = _emb([f"i{j}" for j in range(5)], seed=3)  # lacks i5
    warned = _warned(reference_agreement, ref, {"m": model}, n_pairs=20)
    assert warned == ["similarity agreement uses the 5 of 6 reference ids present in every model"]
    _refusal(_raised(MissingIdsError, reference_agreement, ref, {"m": model}, n_pairs=20, strict=True), STRICT,
             "similarity agreement: 1 of the 6 reference ids are not in every model (e.g. ['i5'])",
             without="it uses the 5 present in every model")


# ----------------------------------------------------------------------------- other warnings
def test_strict_keeps_the_other_warnings_warnings(tmp_path, capsys):
    """Zero vectors, the tie note and a depth below k are not coverage problems: a strict command goes on."""
    qrels, docs, queries = tmp_path / "qrels.txt", tmp_path / "docs.npz", tmp_path / "queries.npz"
    write_trec_qrels(Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}}), qrels)
    vecs = np.ones((4, 3), dtype=np.float32)  # every score equal: a tie note under --ties trec
    vecs[3] = 0.0  # one zero vector
    with pytest.warns(EvalcoreWarning, match="1 all-zero vectors"):
        save_embeddings(Embeddings.from_arrays(["d1", "d2", "d3", "d4"], vecs), docs)
    save_embeddings(_emb(["q1", "q2"], dim=3), queries)
    out = tmp_path / "out"
    assert main(["evaluate", "--qrels", str(qrels), "--emb", f"e5={docs},{queries}", "--metrics", "recall",
                 "--k", "3", "--emb-depth", "2", "--strict", "--out", str(out)]) == 0
    warned = "\n".join(_lines(capsys.readouterr().err, "warning: "))
    for part in ("all-zero vectors", "have equal scores", "shallow run 'e5': it was ranked by an exact search to depth 2"):
        assert part in warned
    assert (out / "report.json").exists()

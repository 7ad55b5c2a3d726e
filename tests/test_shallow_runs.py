"""A run shallower than the cutoffs it is evaluated at is said once per run and evaluation, never silently.

Before: a run whose lists hold 10 documents, evaluated at k = 100, gave P@100 and Recall@100 without a word (correct
by the definitions, a missing rank counting as non-relevant, but not comparable with a deep run's: most likely a
run truncated by mistake). Now :func:`evalcore.evaluate` (and so the command line, ``Workspace.evaluate`` and the
dashboard) warns once per such run, naming it, its deepest list and the largest k; not for a run returning fewer
documents for a few queries, not for an exact search's run (embeddings: a list shorter than k holds the whole
corpus), not in judged-only mode for the unjudged documents it removes.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from evalcore import Qrels, Run, evaluate
from evalcore.cli import main
from evalcore.embedding_runs import embedding_run
from evalcore.errors import EvalcoreWarning
from evalcore.evaluation_notes import SHALLOW_PREFIX
from evalcore.fusion import fuse, random_run
from evalcore.fusion_search import search_weights
from evalcore.io import Embeddings
from evalcore.io.trec import write_trec_qrels, write_trec_run
from evalcore.random_baseline import EXHAUSTIVE
from evalcore.workspace import Workspace

QUERIES = [f"q{i}" for i in range(12)]
DOCS = [f"d{j}" for j in range(300)]


def qrels() -> Qrels:
    rng = np.random.default_rng(0)
    return Qrels.from_dict({q: {str(d): int(g) for d, g in zip(rng.choice(DOCS, 5, replace=False), (3, 2, 1, 1, 0),
                                                              strict=True)} for q in QUERIES})


def run_of(depths: dict[str, int] | int, name: str, seed: int = 1) -> Run:
    """A run listing ``depths[q]`` documents for query q (an int: every query)."""
    rng = np.random.default_rng(seed)
    depths = {q: depths for q in QUERIES} if isinstance(depths, int) else depths
    return Run.from_dict({q: {str(d): float(n - r) for r, d in enumerate(rng.choice(DOCS, n, replace=False))}
                          for q, n in depths.items()}, name=name)


def shallow_notes(call: Callable, *args, **kwargs) -> list[str]:
    """The shallow-run warnings the call gives (as EvalcoreWarning), in order."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        call(*args, **kwargs)
    for w in got:
        if str(w.message).startswith(SHALLOW_PREFIX):
            assert issubclass(w.category, EvalcoreWarning)
    return [str(w.message) for w in got if str(w.message).startswith(SHALLOW_PREFIX)]


def test_a_run_cut_at_10_evaluated_at_100_is_said_once_with_its_name_depth_and_k():
    q = qrels()
    deep, cut = run_of(150, "deep"), run_of(10, "cut")
    notes = shallow_notes(evaluate, q, [deep, cut], metrics=["P", "recall", "ndcg", "map"], k=[10, 100])
    assert len(notes) == 1, notes  # one per run and evaluation, not one per metric or k
    assert notes[0].startswith("shallow run 'cut': it lists at most 10 documents per query, but the largest k "
                               "evaluated is 100: ranks 11 to 100 count as non-relevant")
    assert "not comparable with those of a run listing 100 documents" in notes[0]
    assert shallow_notes(evaluate, q, [deep, cut], metrics=["P", "recall"], k=[5, 10]) == []  # k within its lists


def test_most_lists_shorter_than_k_is_said_a_few_short_ones_are_not():
    q = qrels()
    most = {qq: (200 if i < 4 else 10) for i, qq in enumerate(QUERIES)}  # 8 of 12 lists cut at 10
    few = {qq: (200 if i >= 3 else 10) for i, qq in enumerate(QUERIES)}  # 3 of 12 short: fewer matches, say
    half = {qq: (200 if i % 2 else 10) for i, qq in enumerate(QUERIES)}  # exactly half: not "most"
    notes = shallow_notes(evaluate, q, [run_of(most, "most"), run_of(few, "few"), run_of(half, "half")],
                          metrics=["P"], k=[100])
    assert notes == ["shallow run 'most': 8 of its 12 lists hold fewer than 100 documents (median length 10, the "
                     "deepest 200), the largest k evaluated: the ranks they leave empty count as non-relevant, so "
                     "its values at the larger k are not comparable with those of a run listing 100 documents; was "
                     "the run cut short?"]


def test_unanswered_queries_are_left_to_the_coverage_count_and_metrics_without_a_cutoff_say_nothing():
    q = qrels()
    partial = run_of({qq: 200 for qq in QUERIES[:5]}, "partial")  # 7 queries unanswered, deep lists otherwise
    assert shallow_notes(evaluate, q, partial, metrics=["P"], k=[100]) == []
    cut = run_of(10, "cut")
    assert shallow_notes(evaluate, q, cut, metrics=["map@all", "bpref", "rprec", "iprec_at_recall"], k=[100]) == []
    notes = shallow_notes(evaluate, q, cut, metrics=["P@50", "bpref"], k=[5])  # a fixed cutoff counts
    assert len(notes) == 1 and "the largest k evaluated is 50" in notes[0]


def test_judged_only_counts_the_lists_as_given_not_after_dropping_unjudged_documents():
    q = qrels()
    deep = run_of(150, "deep")  # 150 documents, at most 5 of them judged per query
    assert shallow_notes(evaluate, q, deep, metrics=["P"], k=[100], judged_only=True) == []
    assert len(shallow_notes(evaluate, q, run_of(20, "cut"), metrics=["P"], k=[100], judged_only=True)) == 1


def test_strict_mode_keeps_it_a_warning():
    assert len(shallow_notes(evaluate, qrels(), run_of(10, "cut"), metrics=["P"], k=[100], strict=True)) == 1


# ------------------------------------------------------------------------------------------ exact searches


def small_corpus(seed: int = 3) -> tuple[Embeddings, Embeddings]:
    """The judged documents (fewer than 60) as a corpus, and every query."""
    rng = np.random.default_rng(seed)
    ids = sorted(set(qrels().doc_ids.tolist()))
    docs = Embeddings.from_arrays(ids, rng.normal(size=(len(ids), 8)))
    queries = Embeddings.from_arrays(QUERIES, rng.normal(size=(len(QUERIES), 8)))
    return docs, queries


def test_an_embedding_run_over_a_corpus_smaller_than_k_is_not_shallow_nor_its_fusion():
    q = qrels()
    docs, queries = small_corpus()
    a = embedding_run(docs, queries, qrels=q, k=100, name="a")  # every list holds the whole corpus
    b = embedding_run(docs, queries, qrels=q, k=100, name="b")
    assert a.search_depth == 100 and int(np.bincount(a.q).max()) == len(docs) < 60
    assert shallow_notes(evaluate, q, [a, b.renamed("b2")], metrics=["P", "recall"], k=[10, 100]) == []
    assert shallow_notes(evaluate, q, fuse([a, b], method="rrf", name="f"), metrics=["P"], k=[100]) == []
    cut = fuse([a, b], method="rrf", top_n=5, name="cut")  # top_n cuts the inputs: no longer whole lists
    assert cut.search_depth is None
    assert len(shallow_notes(evaluate, q, cut, metrics=["P"], k=[100])) == 1


def test_a_random_baseline_listing_every_candidate_is_not_shallow_a_cut_one_is():
    """Seed 001's random baseline (:func:`evalcore.fusion.random_run`) lists every candidate of each query: over
    fewer candidates than k its lists are whole, not cut short. Before, it was not marked as such (no search_depth)
    and was called shallow; a baseline cut by its ``depth`` below k still is."""
    q = qrels()
    few = DOCS[:6]  # fewer candidates than k = 10
    whole = random_run(QUERIES, few, name="random")
    assert whole.search_depth == EXHAUSTIVE and int(np.bincount(whole.q).max()) == len(few)
    assert shallow_notes(evaluate, q, whole, metrics=["P", "ndcg"], k=[5, 10]) == []
    own = {qq: DOCS[i:i + 2 + i % 4] for i, qq in enumerate(QUERIES)}  # each query its own few candidates (2..5)
    per_query = random_run(QUERIES, own, name="own")
    assert per_query.search_depth == EXHAUSTIVE
    assert shallow_notes(evaluate, q, per_query, metrics=["P"], k=[10]) == []
    items = random_run(QUERIES, QUERIES, exclude_self=True, name="items")  # item-to-item: 11 candidates each
    assert items.search_depth == EXHAUSTIVE and shallow_notes(evaluate, q, items, metrics=["P"], k=[100]) == []
    assert random_run(QUERIES, few, depth=6, name="deep enough").search_depth == EXHAUSTIVE  # nothing cut
    cut = random_run(QUERIES, DOCS, depth=5, name="cut")  # 300 candidates, 5 kept: shallow by choice at k = 10
    assert cut.search_depth is None
    notes = shallow_notes(evaluate, q, cut, metrics=["P"], k=[10])
    assert len(notes) == 1 and notes[0].startswith("shallow run 'cut': it lists at most 5 documents per query")
    assert shallow_notes(evaluate, q, cut, metrics=["P"], k=[5]) == []


def test_a_workspace_evaluation_says_it_once_and_an_embedding_run_read_back_stays_an_exact_search(tmp_path):
    ws = Workspace.open(tmp_path / "W")
    q = qrels()
    ws.set_ground_truth(q, name="qrels")
    ws.add_run("cut", run_of(10, "cut"))
    docs, queries = small_corpus()
    ws.add_embedding_run("emb", docs, query_embeddings=queries)
    ws.set_settings(k=(10, 100), metrics=("P", "ndcg"))
    for _ in range(2):  # the second evaluation reads the embedding run's kept ranking back
        notes = shallow_notes(ws.evaluate, record=False)
        assert len(notes) == 1 and notes[0].startswith("shallow run 'cut': it lists at most 10 documents"), notes


def test_a_weight_search_does_not_name_its_trial_fusions():
    q = qrels()
    notes = shallow_notes(search_weights, q, [run_of(10, "a"), run_of(10, "b", seed=2)], metric="P@100",
                          strategy="random", n_trials=3)
    assert notes == [], notes  # (its inputs' own evaluation says they are shallow)


# ------------------------------------------------------------------------------------------ the command line


def test_the_command_line_says_it_once_on_stderr_and_carries_on(tmp_path: Path, capsys):
    q = qrels()
    write_trec_qrels(q, tmp_path / "qrels.txt")
    write_trec_run(run_of(10, "cut"), tmp_path / "cut.trec")
    write_trec_run(run_of(150, "deep"), tmp_path / "deep.trec")
    code = main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--run", f"cut={tmp_path / 'cut.trec'}",
                 "--run", f"deep={tmp_path / 'deep.trec'}", "--metrics", "P", "recall", "ndcg", "--k", "10", "100"])
    out, err = capsys.readouterr()
    assert code == 0
    lines = [line for line in err.splitlines() if "shallow" in line]
    assert lines == [line for line in lines if line.startswith("warning: shallow run 'cut': it lists at most 10 ")]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "deep" not in "".join(lines)
    assert re.search(r"^cut: 12 queries evaluated", out, re.M)


@pytest.mark.parametrize("depth", [None, "40"])
def test_the_command_lines_embedding_runs_are_not_called_shallow_unless_cut_by_emb_depth(tmp_path: Path, capsys,
                                                                                          depth):
    """Ranked to max(100, largest k) by default (its run over a corpus smaller than k is not called shallow), to
    --emb-depth when given: below the largest k, the user reads it once, naming the run, its depth and k. Before,
    the command said "--emb-depth 40 is below the largest cutoff 100" and a Python caller heard nothing; the
    evaluation now says it for every caller, so the command's own line is gone (not two messages for one cause)."""
    q = qrels()
    write_trec_qrels(q, tmp_path / "qrels.txt")
    docs, queries = small_corpus()
    np.savez(tmp_path / "docs.npz", ids=np.asarray(docs.ids, dtype=str), embeddings=docs.vectors)
    np.savez(tmp_path / "q.npz", ids=np.asarray(queries.ids, dtype=str), embeddings=queries.vectors)
    code = main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--emb",
                 f"e5={tmp_path / 'docs.npz'},{tmp_path / 'q.npz'}", "--metrics", "P", "--k", "10", "100",
                 *(["--emb-depth", depth] if depth else [])])
    err = capsys.readouterr().err
    assert code == 0
    lines = [line for line in err.splitlines() if "depth" in line or "shallow" in line]
    if depth is None:
        assert lines == [], err
    else:
        assert len(lines) == 1, err
        assert lines[0].startswith("warning: shallow run 'e5': it was ranked by an exact search to depth 40 (its "
                                   "top 40 per query), but the largest k evaluated is 100: ranks 41 to 100"), err


def test_an_embedding_run_searched_below_the_largest_k_is_named_once_from_python():
    """Before, an embedding run searched at k = 10 and evaluated at k = 100 gave no warning from Python (its search
    depth made it never shallow); now it is named with its search depth and the largest k, once, as a cut file
    run is; its fusion too. Searched at 10 over a corpus of 6 documents, its lists hold the corpus: not named."""
    q = qrels()
    docs, queries = small_corpus()  # more than 10 documents
    a = embedding_run(docs, queries, qrels=q, k=10, name="a")
    notes = shallow_notes(evaluate, q, [a, run_of(150, "deep")], metrics=["P", "recall", "ndcg"], k=[10, 100])
    assert notes == ["shallow run 'a': it was ranked by an exact search to depth 10 (its top 10 per query), but "
                     "the largest k evaluated is 100: ranks 11 to 100 count as non-relevant where the corpus held "
                     "more candidates, so its values at k > 10 are not comparable with those of a run listing 100 "
                     "documents; search to depth 100 at least"]
    assert shallow_notes(evaluate, q, a, metrics=["P"], k=[5, 10]) == []  # k within its search
    assert len(shallow_notes(evaluate, q, a, metrics=["P"], k=[11])) == 1  # (one rank past it: "rank 11")
    b = embedding_run(docs, queries, qrels=q, k=10, name="b")
    fused = fuse([a, b], method="rrf", name="f")
    assert fused.search_depth == 10
    notes = shallow_notes(evaluate, q, fused, metrics=["P"], k=[100])
    assert len(notes) == 1 and notes[0].startswith("shallow run 'f': it was ranked by an exact search to depth 10")
    tiny = Embeddings.from_arrays(docs.ids[:6], docs.vectors[:6])  # fewer documents than its search depth
    whole = embedding_run(tiny, queries, qrels=q, k=10, name="whole")
    assert shallow_notes(evaluate, q, whole, metrics=["P"], k=[100]) == []


def test_a_random_baseline_of_few_candidates_fused_with_a_deep_search_is_not_shallow():
    """A random baseline over every candidate searches to any depth: fused with an embedding run searched to 100,
    the fusion's search depth is 100, not the baseline's few candidates."""
    q = qrels()
    docs, queries = small_corpus()
    deep = embedding_run(docs, queries, qrels=q, k=100, name="deep")
    fused = fuse([deep, random_run(QUERIES, DOCS[:6], name="random")], method="rrf", name="f")
    assert fused.search_depth == 100
    assert shallow_notes(evaluate, q, fused, metrics=["P"], k=[100]) == []


# ------------------------------------------------------------------------------------------ stored runs


def test_a_stored_run_keeps_its_search_depth_across_a_fresh_workspace_and_an_older_record_still_opens(tmp_path):
    """Before, ``add_run`` of a marked run (a random baseline over every candidate, a fusion of whole embedding
    rankings) stored only its lists: read back unmarked, its whole lists over few candidates were called shallow
    by the workspace's (and the dashboard's) evaluation. Now the record keeps its search depth; a record from
    before (no depth kept) opens and reads back unmarked, and the same run added again records its depth."""
    import sqlite3

    q = qrels()
    docs, queries = small_corpus()
    baseline = random_run(QUERIES, DOCS[:6], name="random")  # 6 candidates, k up to 100
    fused = fuse([embedding_run(docs, queries, qrels=q, k=100, name=n) for n in ("a", "b")], method="rrf",
                 name="f")
    assert int(np.bincount(fused.q).max()) < 100 and fused.search_depth == 100
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(q, name="qrels")
    ws.add_run("random", baseline)
    ws.add_run("fused", fused)
    ws.add_run("cut", run_of(10, "cut"))
    ws.set_settings(k=(10, 100), metrics=("P", "ndcg"))
    fresh = Workspace.open(tmp_path / "W")  # a new object: read from SQLite and Parquet
    assert fresh.load_run("random").search_depth == EXHAUSTIVE and fresh.load_run("fused").search_depth == 100
    assert fresh.load_run("cut").search_depth is None
    notes = shallow_notes(fresh.evaluate, record=False)
    assert len(notes) == 1 and notes[0].startswith("shallow run 'cut': "), notes

    with sqlite3.connect(tmp_path / "W" / "catalogue.sqlite") as conn:  # a record written before depths were kept
        conn.execute("UPDATE runs SET options = '{}' WHERE name = 'random'")
    conn.close()
    old = Workspace.open(tmp_path / "W")
    assert old.load_run("random").search_depth is None
    assert sorted(n[:22] for n in shallow_notes(old.evaluate, record=False)) == ["shallow run 'cut': it ",
                                                                                 "shallow run 'random': "]
    old.add_run("random", baseline)  # the very same run again: its depth is recorded, not "other content"
    again = Workspace.open(tmp_path / "W")
    assert again.load_run("random").search_depth == EXHAUSTIVE and again.run_names() == ["random", "fused", "cut"]
    with pytest.raises(Exception, match="already exists with other content"):
        again.add_run("random", random_run(QUERIES, DOCS[:6], seed=7, name="random"))

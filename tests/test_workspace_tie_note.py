"""``Workspace.evaluate()`` says, as the command line and every dashboard page do, when an embedding run has
equal scores (the search ranks them by id ascending) and the tie rule ``trec`` re-orders them by id descending.

Before: ``evaluate --emb ... --ties trec`` warned and the dashboard's sidebar showed the note, but a training
script calling ``ws.evaluate()`` with the stored settings (whose default tie rule is ``trec``) got numbers of the
re-ordered lists without a word.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from coverage_support import DOCS, QIDS, qrels_of, warned

from evalcore import Workspace


def _tied_vectors() -> tuple[np.ndarray, np.ndarray]:
    """Documents in pairs of identical vectors: every query sees equal scores."""
    rng = np.random.default_rng(7)
    base = rng.normal(size=(len(DOCS) // 2, 4))
    return np.repeat(base, 2, axis=0), rng.normal(size=(len(QIDS), 4))


def _workspace(tmp_path: Path) -> Workspace:
    docs, queries = _tied_vectors()
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(qrels_of(QIDS))
    ws.add_embedding_run("tied", docs, DOCS, query_embeddings=queries, query_ids=QIDS)
    rng = np.random.default_rng(8)
    ws.add_embedding_run("distinct", rng.normal(size=(len(DOCS), 4)), DOCS,
                         query_embeddings=rng.normal(size=(len(QIDS), 4)), query_ids=QIDS)
    return ws


def test_evaluate_with_trec_ties_names_the_embedding_runs_with_equal_scores(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert ws.settings().ties == "trec"  # (the stored default)
    notes = [m for m in warned(ws.evaluate, k=[5], record=False) if "equal scores" in m]
    assert len(notes) == 1
    assert "'tied'" in notes[0] and "'distinct'" not in notes[0]
    assert "docid_asc" in notes[0]


def test_no_tie_note_when_the_tie_rule_keeps_the_searchs_order(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert not [m for m in warned(ws.evaluate, k=[5], ties="docid_asc", record=False) if "equal scores" in m]

"""The sidebar says when the tie rule re-orders an embedding run's equal scores (a review: with the default
rule ``trec`` the dashboard silently evaluated 59 of 500 exact-tie top-5 lists of a seed-001 run by id
descending, against the guide's id ascending; the command line warned, no page did)."""

from __future__ import annotations

import io

import numpy as np
from test_app_views import start

from dashboard.ui import md_escape
from evalcore import workspace as W
from evalcore.io import load_qrels


def _npz(ids: list[str], vectors: np.ndarray) -> W.Blob:
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(ids), embeddings=vectors.astype(np.float32))
    return W.Blob.of("items.npz", buf.getvalue())


def _workspace(*, ties: str, duplicate: bool) -> W.Snapshot:
    rng = np.random.default_rng(4)
    ids = [f"m{i:02d}" for i in range(30)]
    vectors = rng.normal(size=(30, 6))
    if duplicate:
        vectors[7] = vectors[3]  # the same vector twice: equal cosines to every other item
    qrels = "".join(f"{ids[i]} 0 {ids[(i + 1) % 30]} 1\n" for i in range(30)).encode()
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(5,), metrics=("mrr",), ties=ties)),
                            W.Blob.of("gt.txt", qrels))
    ws, _ = W.add_embedding_run(ws, _npz(ids, vectors), name="anchor <b>1</b>")
    assert load_qrels(qrels).n_queries == 30
    return ws


def _notes(at) -> list[str]:
    return [w.value for w in at.sidebar.warning if "Equal scores of" in w.value]


def test_the_sidebar_warns_when_trec_reorders_an_embedding_runs_ties():
    at = start(_workspace(ties="trec", duplicate=True), "overview")
    assert not at.exception
    notes = _notes(at)
    assert len(notes) == 1 and md_escape("anchor <b>1</b>") in notes[0] and "docid_asc" in notes[0]
    # the rule that keeps the search's order, or a run without equal scores: nothing to say
    assert not _notes(start(_workspace(ties="docid_asc", duplicate=True), "overview"))
    assert not _notes(start(_workspace(ties="trec", duplicate=False), "overview"))

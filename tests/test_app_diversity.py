"""Overview's diversity table on uploaded embedding runs (AppTest; the demo's case is in test_app.py)."""

from __future__ import annotations

import pytest
from test_app import DOCS, QUERIES, diversity_text, errors, npz, start, trec_qrels, trec_run

from evalcore import workspace as W


def test_diversity_of_uploaded_embeddings_and_none_without():
    items = QUERIES + DOCS
    ws = W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("bm25.trec", trec_run(1)))
    at = start(ws)
    assert not errors(at)
    assert any("none is loaded" in c.value for c in at.caption)
    with pytest.raises(StopIteration):
        diversity_text(at)
    ws, _ = W.add_embedding_run(ws, W.Blob.of("emb.npz", npz(items, 8, 4)), name="emb")
    at = start(ws)
    assert not errors(at)
    assert list(diversity_text(at).index) == ["emb"]
    assert any("No embeddings, not shown: bm25" in t.value for t in at.text)


def test_diversity_of_two_runs_with_the_same_embeddings():
    """Two runs of the same file under two names: each has its row (the cached table was keyed by the content
    only, so the second name showed the first one's table and vanished from the table)."""
    items = QUERIES + DOCS
    ws = W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))
    blob = npz(items, 8, 4)
    ws, _ = W.add_embedding_run(ws, W.Blob.of("emb.npz", blob), name="emb")
    ws, _ = W.add_embedding_run(ws, W.Blob.of("emb.npz", blob), name="emb_copy")
    at = start(ws)
    assert not errors(at)
    text = diversity_text(at)
    assert list(text.index) == ["emb", "emb_copy"]
    assert text.loc["emb"].tolist() == text.loc["emb_copy"].tolist()

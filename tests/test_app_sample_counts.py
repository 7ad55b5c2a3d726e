"""Data page with a query sample: a ranked run showed its file's count ("15 queries"), an embedding run the sample's
("6 queries"), with nothing saying why; each count now says which queries it counts."""

from __future__ import annotations

import dataclasses

import test_app as T

from evalcore import workspace as W


def test_with_a_query_sample_each_run_says_which_queries_it_counts():
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(sample_size=6, seed=7)),
                            W.Blob.of("qrels.txt", T.trec_qrels()))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("bm25.trec", T.trec_run(1)), name="bm25")
    ws, _ = W.add_embedding_run(ws, W.Blob.of("emb.npz", T.npz(T.QUERIES + T.DOCS, 8, 3)), name="emb")
    at = T.goto(T.start(ws), "data")
    assert not at.exception and not T.errors(at)
    n = len(T.QUERIES)
    captions = [T.unescape(c.value) for c in at.caption]
    sample = f"the query sample (of the ground truth's {n}, seed 7)"
    assert f"{n} queries in the file, 6 of them in {sample}, 300 ranked items" in captions  # bm25: 15 × 20
    assert any(c.startswith(f"6 queries (ranked for {sample} only), ") for c in captions), captions
    # without a sample: the plain count, as before
    at = T.goto(T.start(dataclasses.replace(ws, settings=W.Settings())), "data")
    captions = [T.unescape(c.value) for c in at.caption]
    assert f"{n} queries, 300 ranked items" in captions

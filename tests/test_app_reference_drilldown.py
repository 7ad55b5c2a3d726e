"""The Queries drill-down with a reference model as the ground truth (a browser review's finding)."""

from __future__ import annotations

import io

import numpy as np
from test_app_views import frame_with, frames, start

from evalcore import workspace as W


def _npz_of(ids: list[str], vectors: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(ids), embeddings=vectors.astype(np.float32))
    return buf.getvalue()


def _queries_page(*, seed: int, n: int, noise: float):
    """(ids, reference vectors, the Queries page): a reference model of ``n`` items as the ground truth (tied,
    k 3 and 10) and a "student" = the reference plus Gaussian noise of scale ``noise``."""
    rng = np.random.default_rng(seed)
    ids = [f"i{i:03d}" for i in range(n)]
    ref = rng.normal(size=(n, 8))
    student = ref + rng.normal(scale=noise, size=ref.shape)
    settings = W.Settings(k=(3, 10), metrics=("ndcg",), gt_mode="tied")
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("ref.npz", _npz_of(ids, ref)), kind="reference")
    ws, _ = W.add_embedding_run(ws, W.Blob.of("student.npz", _npz_of(ids, student)), name="student")
    return ids, ref, start(ws, "queries")


def test_drilldown_with_a_reference_marks_what_the_metric_at_k_counts():
    """A reference model as the ground truth, mode "tied" (at each k, relevant = the reference's top-k):
    the drill-down's ✔ marks and its ground-truth table are those of the chosen k — what nDCG@k
    counted — not those of the deepest cutoff (a student with no hit in the reference's top 3 showed ✔)."""
    ids, ref, at = _queries_page(seed=3, n=60, noise=1.2)
    at.selectbox(key="w_queries_sel_k").select(3).run()
    assert not at.exception and not at.error
    unit = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    hits = beyond = 0
    for qid in at.selectbox(key="w_queries_sel_query").options[:6]:
        at.selectbox(key="w_queries_sel_query").select(qid).run()
        q = ids.index(qid)
        cos = unit @ unit[q]
        cos[q] = -np.inf  # an item is not its own neighbour
        top3 = {ids[i] for i in np.argsort(-cos)[:3]}
        top10 = {ids[i] for i in np.argsort(-cos)[:10]}
        truth = frame_with(at, "rank in student")
        assert set(truth["doc_id"]) == top3
        listed = next(f for f in frames(at) if {"rank", "grade", "doc_id"} <= set(f.columns))
        marked = set(listed.loc[listed["grade"].astype(str).str.startswith("✔"), "doc_id"])
        assert marked == set(listed["doc_id"]) & top3
        hits += bool(marked)
        beyond += bool(set(listed["doc_id"]) & (top10 - top3))  # what the deepest cutoff would have marked
    assert hits and beyond  # the case is not trivial either way


def test_drilldown_gives_each_listed_item_its_rank_among_the_reference_neighbours():
    """A review: a student's near misses (the teacher's #11, #12) and far misses (#46) all read "· not judged".
    Each list now has "ref #" (the rank among the reference's neighbours, "> N" beyond the N it ranked), and the
    ground-truth rows are labelled by that rank."""
    ids, ref, at = _queries_page(seed=4, n=80, noise=0.8)
    assert not at.exception and not at.error
    unit = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    beyond = inside = 0
    for qid in at.selectbox(key="w_queries_sel_query").options[:5]:
        at.selectbox(key="w_queries_sel_query").select(qid).run()
        q = ids.index(qid)
        cos = unit @ unit[q]
        cos[q] = -np.inf
        order = [ids[i] for i in np.lexsort((np.array(ids), -cos))][:10]  # score desc, then id (the tie rule)
        listed = next(f for f in frames(at) if "ref #" in f.columns)
        expected = [str(order.index(d) + 1) if d in order else "> 10" for d in listed["doc_id"]]
        assert listed["ref #"].tolist() == expected
        beyond += expected.count("> 10")
        inside += len(expected) - expected.count("> 10")
        truth = frame_with(at, "rank in student")
        assert truth["ref #"].tolist() == [str(order.index(d) + 1) for d in truth["doc_id"]]
    assert beyond and inside

"""Candidate pools of parallel workers: the shared lower bound of the k-th best score.

Each worker's pool bounds its own k-th best approximate score (``thr``) and its
``ceil(k / P)``-th best (``part``, ``P`` pools); the pools see disjoint corpus
rows, so the smallest ``part`` bounds the k-th best of everything seen.  The
oracle here is the exact k-th largest of every score pushed into any pool.
"""

from __future__ import annotations

import numpy as np
import pytest
from retrieval_support import forced_blocks

from evalcore.retrieval import exact_topk
from evalcore.retrieval.pools import _Candidates, _kth_lower_bound


def _kth_largest(rows: np.ndarray, k: int) -> np.ndarray:
    """The k-th largest entry of each row (-inf when the row holds fewer than k)."""
    if rows.shape[1] < k:
        return np.full(rows.shape[0], -np.inf)
    return -np.sort(-rows, axis=1)[:, k - 1].astype(np.float64)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("share", [1, 3, 7, 10])
def test_kth_lower_bound_bounds_both_ranks(seed, share):
    rng = np.random.default_rng(seed)
    kk = 10
    for m in (10, 39, 40, 41, 97, 400):  # g = 1 (narrow rows), then groups of up to 4 columns with a remainder
        scores = np.round(rng.standard_normal((30, m)), 1).astype(np.float32)  # many ties
        kth, sth = _kth_lower_bound(scores, kk, share)
        assert (kth <= _kth_largest(scores, kk)).all()
        assert (sth <= _kth_largest(scores, share)).all()
        assert (sth >= kth).all()
    same = _kth_lower_bound(scores, kk)
    np.testing.assert_array_equal(same[0], same[1])


def _pools(n_pools: int, nrows: int, kk: int, table: np.ndarray) -> list[_Candidates]:
    """Pools with zero tolerance whose 'canonical' scores are the pushed scores themselves (``table``)."""

    def rescore(rows, cand):
        return np.where(cand >= 0, table[rows[:, None], np.maximum(cand, 0)], -np.inf).astype(np.float32)

    id_rank = np.arange(table.shape[1])
    pools = [_Candidates(nrows, kk, np.zeros(nrows), rescore, id_rank, np.int64) for _ in range(n_pools)]
    for p in pools:
        p.peers = [q for q in pools if q is not p]
    return pools


@pytest.mark.parametrize("n_pools", [2, 3, 5])
@pytest.mark.parametrize("kk", [1, 4, 10, 11])
@pytest.mark.parametrize("seed", [0, 1])
def test_shared_bound_never_exceeds_the_kth_best_of_all_pools(n_pools, kk, seed):
    rng = np.random.default_rng(seed)
    nrows, width, n_blocks = 40, 30, 24
    table = np.round(rng.standard_normal((nrows, width * n_blocks)), 1).astype(np.float32)  # tie-heavy
    pools = _pools(n_pools, nrows, kk, table)
    mask = np.empty((nrows, width), dtype=np.bool_)
    seen: list[int] = []
    tighter = 0
    for b in rng.permutation(n_blocks):  # blocks in any order, to any pool
        pool = pools[rng.integers(n_pools)]
        block = table[:, b * width : (b + 1) * width]
        pool.push_block(block.copy(), int(b * width), mask)
        seen.extend(range(b * width, (b + 1) * width))
        truth = _kth_largest(table[:, seen], kk)
        for p in pools:
            assert (p.bound() <= truth).all()
        best_own = np.max([p.thr for p in pools], axis=0)
        tighter += int((pools[0].bound() > best_own).sum())
    # the shared part does tighten the bound beyond every pool's own threshold (k = 1: share = k, it cannot)
    assert tighter > 0 if kk > 1 else tighter == 0


def test_rows_answered_elsewhere_stay_closed_in_every_pool():
    table = np.ones((3, 20), dtype=np.float32)
    pools = _pools(2, 3, 2, table)
    for p in pools:
        p.skip_rows(np.array([1]))
    pools[0].push_block(table[:, :10].copy(), 0, np.empty((3, 10), dtype=np.bool_))
    assert np.isposinf(pools[1].bound()[1])
    assert (pools[0].fill[[0, 2]] > 0).all() and pools[0].fill[1] == 0


@pytest.mark.parametrize("threads,k", [(2, 7), (3, 10), (3, 1), (4, 5)])
def test_many_workers_give_the_single_worker_lists_on_ties(threads, k):
    rng = np.random.default_rng(threads * 100 + k)
    q = np.round(rng.standard_normal((60, 16)), 0).astype(np.float32)
    c = np.round(rng.standard_normal((3000, 16)), 0).astype(np.float32)  # many exact ties
    ids = np.array([f"d{i}" for i in rng.permutation(3000)])
    one = exact_topk(q, c, k, corpus_ids=ids, threads=1)
    with forced_blocks((60, 40)):  # 75 corpus blocks shared by the workers
        many = exact_topk(q, c, k, corpus_ids=ids, threads=threads)
    np.testing.assert_array_equal(many.indices, one.indices)
    np.testing.assert_array_equal(many.scores, one.scores)

"""Worker pools of the exact search: the result does not depend on which worker read which block.

``normalized=True`` uses rows as they are; when they are not unit vectors the
float32 BLAS error grows with their norms, and every candidate pool's tolerance
must cover the norms of the rows *that pool* filtered.  The data here make that
matter: every corpus row of norm ~1000 has the same exact cosine with the query
up to a few float32 steps, while the BLAS scores scatter over more steps than
that, so a pool whose tolerance is sized for norm-1 rows drops true top-k items.
The oracle is the float64 product of the rows as given, rounded to float32,
ordered by (score desc, id asc).
"""

from __future__ import annotations

import numpy as np
import pytest
from retrieval_support import forced_blocks

from evalcore.retrieval import exact_topk
from evalcore.retrieval.backends import SearchResult
from evalcore.retrieval.blocks import _CorpusReader, _QueryBlock

BLOCK = 50  # corpus rows per block


def _near_tie_data(seed: int, n_blocks: int = 40, k: int = 5):
    """One query; block 0 holds the largest norm (far from the query), block 1 small rows, every other block
    rows of norm ~1000 whose exact scores lie within ~5 float32 steps of 600.  Shuffled ids."""
    rng = np.random.default_rng(seed)
    d, n = 384, BLOCK * n_blocks
    q = rng.standard_normal((1, d))
    q /= np.linalg.norm(q)
    w = rng.standard_normal((n, d))
    w -= (w @ q.T) * q
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    c = ((600 + rng.uniform(0, 3e-4, (n, 1))) * q + 800 * w).astype(np.float32)
    c[:BLOCK] = rng.standard_normal((BLOCK, d)) * 0.01
    c[0] = -1e4 * q
    c[BLOCK : 2 * BLOCK] = rng.standard_normal((BLOCK, d)) / 10
    ids = np.array([f"d{i:05d}" for i in rng.permutation(n)])
    q32 = q.astype(np.float32)
    sims = (q32.astype(np.float64) @ c.astype(np.float64).T).astype(np.float32)
    rank = np.argsort(np.argsort(ids))
    oracle = np.lexsort((np.broadcast_to(rank, sims.shape), -sims), axis=1)[:, :k]
    return q32, c, ids, oracle, k


class _TwoPoolsInOrder:
    """A backend doing the local search's per-block work with two worker pools in a fixed order:
    pool 0 reads corpus block 0 (the largest norm) first, pool 1 every other block afterwards."""

    def search(self, task):
        reader = _CorpusReader(task, BLOCK, 2**20)
        block = _QueryBlock(task, 0, task.queries.shape[0], reader)
        pools = [block.new_pool(), block.new_pool()]
        scores = np.empty(block.m * BLOCK, dtype=np.float32)
        masks = np.empty(block.m * BLOCK, dtype=np.bool_)
        for b, cs in enumerate(range(0, task.corpus.shape[0], BLOCK)):
            block.search_block(cs, True, pools[0 if b == 0 else 1], scores, masks)
        top_i, top_s = block.finish(pools, 0, block.m)
        block.answer_zero_queries(top_i, top_s)
        return SearchResult(top_i, top_s, 0)


@pytest.mark.parametrize("seed", [1, 2])
def test_unnormalised_rows_with_normalized_true_do_not_depend_on_the_worker_that_read_them(seed):
    q, c, ids, oracle, k = _near_tie_data(seed)
    one = exact_topk(q, c, k, corpus_ids=ids, normalized=True, threads=1)
    np.testing.assert_array_equal(one.indices, oracle)
    # deterministic: the pool that never saw the largest norm still covers the norms it filtered
    two = exact_topk(q, c, k, corpus_ids=ids, normalized=True, backend=_TwoPoolsInOrder())
    np.testing.assert_array_equal(two.indices, one.indices)
    np.testing.assert_array_equal(two.scores, one.scores)


def test_unnormalised_rows_with_normalized_true_same_with_threads():
    q, c, ids, oracle, k = _near_tie_data(1)
    with forced_blocks((1, BLOCK)):
        for _ in range(5):  # which worker takes which block varies from run to run
            got = exact_topk(q, c, k, corpus_ids=ids, normalized=True, threads=2)
            np.testing.assert_array_equal(got.indices, oracle)

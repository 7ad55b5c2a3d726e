"""Tests of evalcore.retrieval: input checks and helpers (normalise, blocks, sampling, agreement)."""

from __future__ import annotations

import numpy as np
import pytest
from retrieval_support import (
    shuffled_ids,
)
from scipy.stats import spearmanr

from evalcore.errors import (
    DuplicateIdError,
    EmptyInputError,
    EvalcoreWarning,
    NonFiniteValueError,
    OptionError,
    ShapeMismatchError,
)
from evalcore.retrieval import (
    count_zero_rows,
    exact_topk,
    load_npy_mmap,
    normalize,
    planning,
    sample_pairs,
    sample_queries,
    similarity_agreement,
    topk_to_long,
)

# --------------------------------------------------------------------------- input checks


def test_dimension_mismatch_names_both():
    with pytest.raises(ShapeMismatchError, match=r"queries have 3 dimensions but the corpus has 4"):
        exact_topk(np.ones((2, 3)), np.ones((5, 4)), 2, corpus_ids=list("abcde"))


def test_nan_reports_count_and_first_row():
    c = np.ones((6, 3))
    c[2, 1] = np.nan
    c[4, 0] = np.inf
    ids = ["r0", "r1", "r2", "r3", "r4", "r5"]
    with pytest.raises(NonFiniteValueError, match=r"corpus has 2 row\(s\).*first at row 2 \(id 'r2'\)"):
        exact_topk(np.ones((1, 3)), c, 2, corpus_ids=ids)
    with pytest.raises(NonFiniteValueError, match=r"queries has 2 row\(s\).*first at row 2 \(id 'r2'\)"):
        exact_topk(c, np.ones((3, 3)), 2, corpus_ids=["a", "b", "c"], query_ids=ids)
    with pytest.raises(NonFiniteValueError, match="first at row 2"):
        normalize(c)


def test_nan_in_memmap_found_while_streaming(tmp_path):
    c = np.ones((5000, 4), dtype=np.float32)
    c[4321, 3] = np.nan
    np.save(tmp_path / "c.npy", c)
    with pytest.raises(NonFiniteValueError, match=r"1 row\(s\).*first at row 4321 \(id 'x4321'\)"):
        exact_topk(np.ones((2, 4)), load_npy_mmap(tmp_path / "c.npy"), 3,
                   corpus_ids=[f"x{i}" for i in range(5000)], block_bytes=100_000)


@pytest.mark.parametrize("k", [0, -3, 2.5, True, "5"])
def test_bad_k(k):
    with pytest.raises(OptionError, match="k must be a positive integer"):
        exact_topk(np.ones((1, 2)), np.ones((3, 2)), k, corpus_ids=["a", "b", "c"])


def test_ids_rows_mismatch():
    with pytest.raises(ShapeMismatchError, match="the corpus has 3 rows but corpus_ids has 2 ids"):
        exact_topk(np.ones((1, 2)), np.ones((3, 2)), 1, corpus_ids=["a", "b"])
    with pytest.raises(ShapeMismatchError, match="queries have 2 rows but query_ids has 1 ids"):
        exact_topk(np.ones((2, 2)), np.ones((3, 2)), 1, corpus_ids=["a", "b", "c"], query_ids=["q"])


def test_other_input_errors():
    with pytest.raises(DuplicateIdError, match="'b' twice"):
        exact_topk(np.ones((1, 2)), np.ones((3, 2)), 1, corpus_ids=["b", "a", "b"])
    with pytest.raises(OptionError, match="needs query_ids"):
        exact_topk(np.ones((1, 2)), np.ones((3, 2)), 1, corpus_ids=["a", "b", "c"], exclude_self=True)
    with pytest.raises(EmptyInputError):
        exact_topk(np.ones((1, 2)), np.ones((0, 2)), 1, corpus_ids=[])
    with pytest.raises(ShapeMismatchError, match="2-D"):
        exact_topk(np.ones(2), np.ones((3, 2)), 1, corpus_ids=["a", "b", "c"])
    with pytest.raises(OptionError, match="block_bytes"):
        exact_topk(np.ones((1, 2)), np.ones((3, 2)), 1, corpus_ids=["a", "b", "c"], block_bytes=0)


def test_no_queries_gives_empty_result():
    got = exact_topk(np.ones((0, 2)), np.ones((3, 2)), 2, corpus_ids=["a", "b", "c"])
    assert got.indices.shape == (0, 2)
    assert all(a.size == 0 for a in topk_to_long(got))


# --------------------------------------------------------------------------- helpers


def test_normalize_and_zero_rows():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1e-3, 0.0]])
    y = normalize(x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, [[0.6, 0.8], [0, 0], [1, 0]], rtol=1e-6)
    assert x[0, 0] == 3.0  # not in place
    assert count_zero_rows(x) == 1
    np.testing.assert_allclose(normalize(np.array([0.0, 2.0])), [0, 1])
    with pytest.raises(OptionError):
        normalize(x, eps=-1)


def test_block_bytes_bounds_blocks_and_progress_counts_them():
    rng = np.random.default_rng(0)
    q, c = rng.standard_normal((300, 4)), rng.standard_normal((3000, 4))
    ids = shuffled_ids(rng, 3000)
    calls = []
    small = exact_topk(q, c, 5, corpus_ids=ids, block_bytes=200_000,
                       progress=lambda done, total: calls.append((done, total)))
    total = calls[-1][1]
    assert total > 4  # the small budget really split the work
    assert calls == [(i + 1, total) for i in range(total)]
    big = exact_topk(q, c, 5, corpus_ids=ids)
    # scores too, bit for bit: callers (embedding runs) rely on block-size independence
    np.testing.assert_array_equal(small.indices, big.indices)
    np.testing.assert_array_equal(small.scores, big.scores)
    for nq, n, d, k, budget in ((5000, 10**6, 384, 100, 256 * 2**20), (10, 50, 3, 5, 1), (300, 3000, 4, 5, 200_000),
                                 (5000, 5000, 1536, 100, 256 * 2**20)):
        for workers in (1, 2, 8):
            bq, bc = planning._plan_blocks(nq, n, d, k, budget, workers)
            assert 1 <= bq <= nq and 1 <= bc <= n
            if bq > 1:
                # per worker: a normalised corpus block, a score block with its mask, a pool per query row
                per_worker = 16 * bc * d + 5 * bq * bc + bq * 24 * (2 * k + 256)
                assert workers * per_worker + bq * 12 * d <= budget
            if n >= 1000:  # the workers get equal shares of the corpus blocks
                assert -(-n // bc) % workers == 0


def test_topk_to_long_rank_order():
    rng = np.random.default_rng(6)
    c = rng.standard_normal((20, 3))
    ids = shuffled_ids(rng, 20)
    got = exact_topk(c[:4], c, 5, corpus_ids=ids, query_ids=ids[:4], exclude_self=True)
    qid, doc, score = topk_to_long(got)
    assert qid.shape == doc.shape == score.shape == (20,)
    np.testing.assert_array_equal(qid, np.repeat(ids[:4], 5))
    np.testing.assert_array_equal(doc, ids[got.indices].ravel())
    assert (np.diff(score.reshape(4, 5), axis=1) <= 0).all()


def test_sample_queries_reproduces_seed_000():
    for n, m, seed in ((5000, 500, 42), (100, 7, 0), (10, 9, 3)):
        np.random.seed(seed)
        expected = np.random.choice(n, m, replace=False)
        np.testing.assert_array_equal(sample_queries(np.arange(n).astype(str), m, seed=seed), expected)
    np.testing.assert_array_equal(sample_queries(["a", "b", "c"], 3, seed=1), [0, 1, 2])
    np.testing.assert_array_equal(sample_queries(["a", "b", "c"], 10, seed=1), [0, 1, 2])
    with pytest.raises(OptionError):
        sample_queries(["a"], -1, seed=0)


def test_similarity_agreement_matches_scipy_on_same_pairs():
    rng = np.random.default_rng(9)
    ref = rng.standard_normal((300, 16))
    model = ref[:, :8] + 0.5 * rng.standard_normal((300, 8))
    res = similarity_agreement(ref, model, n_pairs=2000, seed=4)
    i, j = sample_pairs(300, 2000, seed=4)
    assert (i != j).all()

    def cos(e):
        a, b = e[i], e[j]
        return (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)

    assert res["n_pairs"] == 2000
    assert res["spearman"] == pytest.approx(spearmanr(cos(ref), cos(model)).statistic, abs=1e-6)
    assert res["mae"] == pytest.approx(np.mean(np.abs(cos(ref) - cos(model))), abs=1e-6)
    assert 0.2 < res["spearman"] < 0.99
    same = similarity_agreement(ref, ref.copy(), n_pairs=500, seed=1)
    assert same["spearman"] == pytest.approx(1.0) and same["mae"] == 0.0
    with pytest.raises(ShapeMismatchError):
        similarity_agreement(ref, model[:10])




def test_more_pairs_than_distinct_pairs_warns():
    """1,000,000 pairs of 4 items were reported as such: only 12 ordered pairs exist."""
    rng = np.random.default_rng(0)
    ref, model = rng.normal(size=(4, 5)), rng.normal(size=(4, 3))
    with pytest.warns(EvalcoreWarning, match=r"1,000 pairs drawn \(with replacement\) among only 12 distinct ordered"):
        assert similarity_agreement(ref, model, n_pairs=1000, seed=0)["n_pairs"] == 1000
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalcoreWarning)
        similarity_agreement(ref, model, n_pairs=12, seed=0)  # no more than there are: no warning

"""Tests of evalcore.retrieval (exact cosine top-k): agreement with an oracle, ties, memory maps, scoring.

The oracle is a brute-force reference written here independently: the full
similarity matrix (float64 products of the float32-normalised vectors, rounded
to float32) and, per query, ``np.lexsort((id_rank, -scores))``.
"""
from __future__ import annotations

import hashlib
import os
import warnings
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from retrieval_support import (
    BLOCKS,
    assert_same,
    brute_topk,
    ref_normalize,
    shuffled_ids,
    topk,
)

from evalcore.errors import (
    EvalcoreWarning,
    OptionError,
    ShapeMismatchError,
    UnsafeFileError,
)
from evalcore.retrieval import (
    exact_topk,
    load_npy_mmap,
    normalize,
    pools,
    scoring,
    topk_to_long,
)

# --------------------------------------------------------------------------- agreement with brute force


@pytest.mark.parametrize(
    "nq, n, d, k",
    [(1, 1, 1, 1), (7, 50, 3, 5), (33, 400, 16, 10), (20, 1000, 64, 100), (5, 30, 8, 500), (64, 257, 5, 1)],
)
@pytest.mark.parametrize("blocks", [(3, 7), (16, 50), None])
def test_matches_brute_force_random(nq, n, d, k, blocks):
    rng = np.random.default_rng(nq * 1000 + n + d)
    q = rng.standard_normal((nq, d)).astype(np.float32)
    c = rng.standard_normal((n, d)).astype(np.float32)
    ids = shuffled_ids(rng, n)
    got = topk(q, c, k, corpus_ids=ids, blocks=blocks)
    assert_same(got, brute_topk(q, c, k, ids))
    assert got.k == min(k, n)


@pytest.mark.parametrize("blocks", BLOCKS)
def test_exact_ties_integer_vectors(blocks):
    # low-dimensional small-integer vectors: many documents share exactly the same cosine
    rng = np.random.default_rng(3)
    n = 150 if blocks == (1, 1) else 600
    c = rng.integers(-2, 3, size=(n, 3)).astype(np.float32)
    q = rng.integers(-2, 3, size=(40, 3)).astype(np.float32)
    ids = shuffled_ids(rng, n)
    got = topk(q, c, 25, corpus_ids=ids, blocks=blocks)
    ref = brute_topk(q, c, 25, ids)
    assert_same(got, ref)
    # the data really has ties at the k boundary (else the test proves nothing)
    ref_i, ref_s = ref
    full = ref_normalize(q).astype(np.float64) @ ref_normalize(c).astype(np.float64).T
    kth = ref_s[:, -1]
    assert (np.sum(full.astype(np.float32) == kth[:, None], axis=1) > 1).sum() > 10


def test_power_of_two_norms_tie_exactly():
    # norms 2 and 4 divide exactly: documents at the same cosine tie bit for bit
    basis = np.array([[2, 0, 0, 0], [0, 2, 0, 0], [1, 1, 1, 1], [1, -1, 1, 1], [0, 0, 4, 0], [0, 0, 0, -2]], float)
    rng = np.random.default_rng(0)
    c = basis[rng.integers(0, len(basis), 300)]
    q = basis[[0, 2, 3, 5]]
    ids = shuffled_ids(rng, 300)
    for blocks in BLOCKS:
        got = topk(q, c, 120, corpus_ids=ids, blocks=blocks)
        assert_same(got, brute_topk(q, c, 120, ids))


@pytest.mark.parametrize("blocks", BLOCKS)
def test_duplicates_straddle_k_and_block_boundaries(blocks):
    rng = np.random.default_rng(11)
    base = rng.standard_normal((30, 12)).astype(np.float32)
    # every vector appears 8 times, rows spread out so copies land in different blocks
    c = base[rng.permutation(np.repeat(np.arange(30), 8))]
    q = np.vstack([base[:10], rng.standard_normal((10, 12)).astype(np.float32)])
    ids = shuffled_ids(rng, c.shape[0])
    seen = []
    got = topk(q, c, 12, corpus_ids=ids, blocks=blocks, progress=lambda a, b: seen.append((a, b)))
    assert_same(got, brute_topk(q, c, 12, ids))
    # a query equal to a base vector has its 8 copies first, in id order
    for r in range(10):
        copies = np.flatnonzero((c == base[r]).all(axis=1))
        expected = copies[np.argsort(ids[copies])]
        np.testing.assert_array_equal(got.indices[r, :8], expected)
        assert np.unique(got.scores[r, :8]).size == 1
    if blocks is not None:
        assert seen[-1][1] > 3  # many blocks really were used


def test_massive_ties_bounded_pool():
    # 900 copies of one vector, far more than k: the exact pruning path keeps the smallest ids
    rng = np.random.default_rng(5)
    v = rng.standard_normal(8).astype(np.float32)
    c = np.vstack([np.tile(v, (900, 1)), rng.standard_normal((300, 8)).astype(np.float32)])
    perm = rng.permutation(c.shape[0])
    c = c[perm]
    ids = shuffled_ids(rng, c.shape[0])
    q = np.vstack([v, -v, rng.standard_normal(8).astype(np.float32)])
    for blocks in ((2, 50), (3, 1000), None):
        got = topk(q, c, 7, corpus_ids=ids, blocks=blocks)
        assert_same(got, brute_topk(q, c, 7, ids))


def test_threads_give_identical_results():
    rng = np.random.default_rng(12)
    c = rng.integers(-2, 3, size=(1500, 6)).astype(np.float32)  # many exact ties
    q = np.vstack([c[:150], rng.standard_normal((150, 6)).astype(np.float32)])
    ids = shuffled_ids(rng, 1500)
    ref = brute_topk(q, c, 40, ids)
    for blocks in ((300, 97), None):
        for threads in (1, 2, 5):
            got = topk(q, c, 40, corpus_ids=ids, blocks=blocks, threads=threads)
            assert_same(got, ref)
    with pytest.raises(OptionError, match="threads"):
        exact_topk(q, c, 4, corpus_ids=ids, threads=0)


def test_backend_keyword_names_the_local_search_only():
    rng = np.random.default_rng(36)
    c, q = rng.standard_normal((500, 6)), rng.standard_normal((20, 6))
    ids = shuffled_ids(rng, 500)
    assert_same(exact_topk(q, c, 5, corpus_ids=ids, backend=None), brute_topk(q, c, 5, ids))
    with pytest.raises(OptionError, match="backend"):
        exact_topk(q, c, 5, corpus_ids=ids, backend="dask")


@pytest.mark.parametrize("normalized", [False, True])
def test_shards_searched_apart_merge_into_the_same_topk(normalized):
    # what a distributed backend does: each shard (a range of corpus blocks) runs the
    # per-block work and finishes its own top-k; the union, ordered by the one exact
    # order, is the top-k of the whole corpus, indices and scores bit for bit
    from evalcore.retrieval.backends import SearchTask
    from evalcore.retrieval.blocks import _CorpusReader, _QueryBlock
    from evalcore.retrieval.inputs import _id_ranks

    rng = np.random.default_rng(37)
    c = rng.integers(-2, 3, size=(2000, 6)).astype(np.float32)  # many exact ties across shards
    q = np.vstack([c[:30], rng.standard_normal((30, 6)).astype(np.float32)])
    c[0] = 0  # a zero corpus row
    q[5] = 0  # a zero query
    if normalized:
        c, q = normalize(c), normalize(q)
    ids = shuffled_ids(rng, 2000)
    qids = ids[rng.integers(0, 2000, size=60)]
    id_rank, order = _id_ranks(ids, "corpus_ids")
    self_pos = np.searchsorted(ids[order], qids)
    task = SearchTask(queries=q, corpus=c, corpus_ids=ids, id_rank=id_rank, id_order=order,
                      self_pos=order[self_pos], kk=12, normalized=normalized, eps=1e-12,
                      block_bytes=2**20, progress=None)
    bc, parts, zeros = 150, [], 0
    for shard in (range(0, 900, bc), range(900, 2000, bc)):
        reader = _CorpusReader(task, bc, 2**20)  # each shard's own reader (denominators, page release)
        block = _QueryBlock(task, 0, 60, reader)
        pool = block.new_pool()
        scores, masks = np.empty(60 * bc, np.float32), np.empty(60 * bc, np.bool_)
        zeros += sum(block.search_block(cs, True, pool, scores, masks) for cs in shard)
        parts.append(block.finish([pool], 0, 60))
    cand = np.hstack([i for i, _ in parts])
    best, neg = pools._exact_order(np.hstack([s for _, s in parts]), cand, cand >= 0, id_rank, 12)
    top_i, top_s = np.take_along_axis(cand, best, axis=1), -np.take_along_axis(neg, best, axis=1)
    block.answer_zero_queries(top_i, top_s)  # once, after the merge
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        whole = exact_topk(q, c, 12, corpus_ids=ids, query_ids=qids, exclude_self=True, normalized=normalized)
    np.testing.assert_array_equal(top_i, whole.indices)
    np.testing.assert_array_equal(top_s, whole.scores)
    assert zeros == 1 and (top_s[5] == 0).all()


def test_sparse_selection_path_with_late_ties():
    # many corpus blocks and a small k: after a few blocks most rows get no
    # candidate, and the engine switches to its row-maximum pre-check
    rng = np.random.default_rng(13)
    c = rng.standard_normal((6000, 5)).astype(np.float32)
    q = rng.standard_normal((80, 5)).astype(np.float32)
    c[5990:] = q[:10]  # each of the first 10 queries meets an exact copy in the last block
    c[4000:4010] = q[:10]  # ... and a tied copy much earlier
    ids = shuffled_ids(rng, 6000)
    modes = []
    real_push = pools._Candidates.push_block

    def spy(self, *args):
        modes.append(self.sparse)
        return real_push(self, *args)

    with mock.patch.object(pools._Candidates, "push_block", spy):
        got = topk(q, c, 3, corpus_ids=ids, blocks=(80, 100), threads=1)
    assert any(modes) and not all(modes)
    assert_same(got, brute_topk(q, c, 3, ids))
    for r in range(10):
        assert set(got.indices[r, :2]) == {5990 + r, 4000 + r}


def test_item_to_item_excludes_self():
    rng = np.random.default_rng(8)
    for blocks in BLOCKS:
        n = 40 if blocks == (1, 1) else 120
        c = rng.integers(-1, 2, size=(n, 4)).astype(np.float32)
        c[~c.any(axis=1), 0] = 1  # no zero vectors here
        ids = shuffled_ids(rng, n)
        got = topk(c, c, 30, corpus_ids=ids, query_ids=ids, exclude_self=True, blocks=blocks)
        assert_same(got, brute_topk(c, c, 30, ids, ids, exclude_self=True))
        assert not (got.indices == np.arange(n)[:, None]).any()


def test_k_larger_than_corpus():
    rng = np.random.default_rng(1)
    c = rng.standard_normal((9, 5))
    q = rng.standard_normal((4, 5))
    ids = shuffled_ids(rng, 9)
    got = exact_topk(q, c, 50, corpus_ids=ids)
    assert got.k == 9
    assert_same(got, brute_topk(q, c, 50, ids))
    selfs = exact_topk(c, c, 50, corpus_ids=ids, query_ids=ids, exclude_self=True)
    assert selfs.k == 8
    assert_same(selfs, brute_topk(c, c, 50, ids, ids, exclude_self=True))


def test_exclude_self_with_queries_missing_from_corpus_pads():
    c = np.eye(4)
    ids = np.array(["a", "b", "c", "d"])
    q = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
    got = exact_topk(q, c, 10, corpus_ids=ids, query_ids=["a", "zz"], exclude_self=True)
    assert got.k == 4
    np.testing.assert_array_equal(got.indices[0], [1, 2, 3, -1])  # "a" excluded, row padded
    assert got.scores[0, -1] == -np.inf
    np.testing.assert_array_equal(got.indices[1], [1, 0, 2, 3])
    qid, doc, score = topk_to_long(got)
    assert list(qid) == ["a"] * 3 + ["zz"] * 4
    assert list(doc) == ["b", "c", "d", "b", "a", "c", "d"]
    assert score.dtype == np.float32 and score[3] == pytest.approx(1.0)


def test_zero_vectors_warn_and_rank_by_id():
    c = np.array([[1.0, 0], [0, 0], [0, 1.0], [1.0, 1.0]])
    ids = np.array(["d", "c", "b", "a"])
    q = np.array([[0.0, 0.0], [1.0, 0.0]])
    with pytest.warns(EvalcoreWarning) as rec:
        got = exact_topk(q, c, 3, corpus_ids=ids)
    text = " ".join(str(w.message) for w in rec)
    assert "1 query vector" in text and "1 corpus vector" in text
    # the zero query scores 0 everywhere: ids ascending
    np.testing.assert_array_equal(got.doc_ids()[0], ["a", "b", "c"])
    np.testing.assert_array_equal(got.scores[0], [0, 0, 0])
    assert_same(got, brute_topk(q, c, 3, ids))


def test_normalized_flag_and_dtypes_agree():
    rng = np.random.default_rng(2)
    c = rng.standard_normal((200, 6))  # float64 input
    q = rng.standard_normal((10, 6))
    ids = shuffled_ids(rng, 200)
    a = exact_topk(q, c, 15, corpus_ids=ids)
    b = exact_topk(normalize(q), normalize(c), 15, corpus_ids=ids, normalized=True)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.scores, b.scores)
    ints = rng.integers(-3, 4, size=(50, 3)).astype(np.int16)
    ids2 = shuffled_ids(rng, 50)
    got = topk(ints, ints, 5, corpus_ids=ids2, query_ids=ids2, exclude_self=True)
    assert_same(got, brute_topk(ints, ints, 5, ids2, ids2, exclude_self=True))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    nq=st.integers(1, 6),
    n=st.integers(1, 40),
    d=st.integers(1, 5),
    k=st.integers(1, 45),
    blocks=st.sampled_from(BLOCKS + [(2, 3), (6, 1)]),
    exclude=st.booleans(),
)
def test_property_matches_brute_force(data, nq, n, d, k, blocks, exclude):
    values = st.integers(-3, 3) if data.draw(st.booleans()) else st.floats(-2, 2, width=32)
    c = np.array(data.draw(st.lists(st.lists(values, min_size=d, max_size=d), min_size=n, max_size=n)), np.float32)
    ids = np.array(data.draw(st.permutations([f"i{x}" for x in range(n)])))
    if exclude:
        q, qids = c[:nq], ids[:nq]
        nq = q.shape[0]
    else:
        q = np.array(data.draw(st.lists(st.lists(values, min_size=d, max_size=d), min_size=nq, max_size=nq)),
                     np.float32)
        qids = None
    got = topk(q, c, k, corpus_ids=ids, query_ids=qids, exclude_self=exclude, blocks=blocks)
    assert_same(got, brute_topk(q, c, k, ids, qids, exclude_self=exclude))


# --------------------------------------------------------------------------- memory-mapped corpus


def test_memmap_corpus_identical_and_untouched(tmp_path):
    rng = np.random.default_rng(21)
    c = rng.standard_normal((3000, 24)).astype(np.float32)
    c[100:140] = c[5]  # exact duplicates across blocks
    q = rng.standard_normal((37, 24)).astype(np.float32)
    q[0] = c[5]
    ids = shuffled_ids(rng, 3000)
    path = tmp_path / "corpus.npy"
    np.save(path, c)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    mtime = os.stat(path).st_mtime_ns
    mm = load_npy_mmap(path)
    assert isinstance(mm, np.memmap) and not mm.flags.writeable
    for blocks in ((8, 300), None):
        ram = topk(q, c, 50, corpus_ids=ids, blocks=blocks)
        mapped = topk(q, mm, 50, corpus_ids=ids, blocks=blocks)
        np.testing.assert_array_equal(ram.indices, mapped.indices)
        np.testing.assert_array_equal(ram.scores, mapped.scores)
    assert_same(mapped, brute_topk(q, c, 50, ids))
    np.testing.assert_array_equal(np.asarray(mm), c)  # still readable after page release
    del mm
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert os.stat(path).st_mtime_ns == mtime


def _definition_scores(qn, cand, corpus32):
    """The canonical score, written out: float64 products of the float32 vectors, numpy's pairwise
    sum over each row, rounded to float32 (no BLAS)."""
    prod = corpus32[np.maximum(cand, 0)].astype(np.float64) * qn.astype(np.float64)[:, None, :]
    return np.add.reduce(prod, axis=2).astype(np.float32)


@pytest.mark.parametrize("kind", ["dense", "sparse_integers", "near_duplicates"])
def test_certified_rescoring_equals_the_definition(kind):
    # the fast path (float64 BLAS + a proof that its float32 rounding is the definition's)
    # must give the definition bit for bit, also where the proof fails and the definition runs
    rng = np.random.default_rng(31)
    d = 96
    if kind == "dense":
        c = normalize(rng.standard_normal((400, d)))
        q = normalize(rng.standard_normal((60, d)))
    elif kind == "sparse_integers":  # many exact zeros and exact ties: the proof fails for those
        c = normalize(rng.integers(-1, 2, size=(400, d)) * (rng.random((400, d)) < 0.05))
        q = normalize(rng.integers(-1, 2, size=(60, d)) * (rng.random((60, d)) < 0.05))
    else:  # scores within a few ulps of each other
        base = rng.standard_normal(d)
        c = normalize(base + 1e-6 * rng.standard_normal((400, d)))
        q = normalize(base + 1e-6 * rng.standard_normal((60, d)))
    cand = rng.integers(-1, 400, size=(60, 37))
    expected = _definition_scores(q, cand, c)
    valid = cand >= 0
    for chunk in (1, 4096, 2**24):
        got = scoring._canonical_scores(q, cand, c, None, chunk, bound=1.0 + 2**-20)
        np.testing.assert_array_equal(got[valid], expected[valid])
        # a bound so large that nothing is proven: every pair takes the definition's own path
        slow = scoring._canonical_scores(q, cand, c, None, chunk, bound=1e30)
        np.testing.assert_array_equal(slow[valid], expected[valid])
    if kind == "sparse_integers":
        assert (expected[valid] == 0).mean() > 0.5  # the exact-zero case really was exercised


def test_round_proven_rejects_every_interval_touching_a_boundary():
    s = np.float32(0.7)
    up = np.nextafter(s, np.float32(1))
    mid = (np.float64(s) + np.float64(up)) / 2  # the rounding boundary between s and up
    e = 1e-13
    v = np.array([np.float64(s), mid, mid - e / 2, mid + e / 2, mid - 3 * e, mid + 3 * e, 1e39, np.nan])
    rounded, ok = scoring._round_proven(v, e)
    assert ok.tolist() == [True, False, False, False, True, True, False, False]
    assert rounded[4] == s and rounded[5] == up
    # exact zero: float32 boundaries around 0 are subnormal, nothing of width e fits
    assert not scoring._round_proven(np.zeros(1), e)[1][0]


@settings(max_examples=300, deadline=None)
@given(st.floats(-2, 2, allow_nan=False), st.floats(1e-18, 1e-9), st.floats(-1, 1))
def test_round_proven_is_sound(v, e, t):
    # whatever is proven holds for every value in the interval (checked at a point inside it)
    rounded, ok = scoring._round_proven(np.array([v]), e)
    if ok[0]:
        x = np.float64(v) + t * e
        assert np.float32(x) == rounded[0]
        assert np.float32(np.float64(v) - e) == rounded[0] == np.float32(np.float64(v) + e)


def test_canonical_scores_divide_by_the_denominators_like_normalize():
    rng = np.random.default_rng(32)
    raw = (rng.standard_normal((300, 40)) * 7).astype(np.float32)
    den = scoring._denominators(scoring._sumsq(raw), 1e-12)
    q = normalize(rng.standard_normal((20, 40)))
    cand = rng.integers(0, 300, size=(20, 15))
    got = scoring._canonical_scores(q, cand, raw, den, 2**20, bound=1.0 + 2**-20)
    np.testing.assert_array_equal(got, _definition_scores(q, cand, normalize(raw)))


def test_progress_runs_on_the_calling_thread_and_its_error_stops_the_workers():
    import threading

    rng = np.random.default_rng(33)
    q, c = rng.standard_normal((50, 8)), rng.standard_normal((4000, 8))
    ids = shuffled_ids(rng, 4000)
    caller = threading.get_ident()
    seen = []
    exact_topk(q, c, 5, corpus_ids=ids, block_bytes=60_000, threads=2,
               progress=lambda done, total: seen.append((threading.get_ident(), done, total)))
    assert len(seen) > 4 and {t for t, _, _ in seen} == {caller}
    assert [d for _, d, _ in seen] == list(range(1, len(seen) + 1))

    class Cancelled(Exception):
        pass

    def cancel(done, total):
        if done == 2:
            raise Cancelled

    before = threading.active_count()
    with pytest.raises(Cancelled):
        exact_topk(q, c, 5, corpus_ids=ids, block_bytes=60_000, threads=2, progress=cancel)
    assert threading.active_count() == before  # the workers were stopped and joined


@pytest.mark.parametrize("threads", [1, 2])
def test_progress_follows_each_block(threads):
    # with one worker too, progress is reported block by block, not all at the end
    rng = np.random.default_rng(35)
    q, c = rng.standard_normal((40, 6)), rng.standard_normal((3000, 6))
    log = []
    real_push = pools._Candidates.push_block

    def spy(self, *args):
        log.append("block")
        return real_push(self, *args)

    with mock.patch.object(pools._Candidates, "push_block", spy):
        exact_topk(q, c, 5, corpus_ids=shuffled_ids(rng, 3000), block_bytes=60_000, threads=threads,
                   progress=lambda done, total: log.append("progress"))
    n = log.count("block")
    assert n > 4 and log.count("progress") == n
    if threads == 1:
        assert log == ["block", "progress"] * n
    else:  # reported as the blocks finish: never more reports than finished blocks
        assert all(log[:i].count("progress") <= log[:i].count("block") for i in range(len(log) + 1))


def test_blas_thread_limit_is_restored():
    import threadpoolctl  # a runtime dependency of the engine

    before = [(i["filepath"], i["num_threads"]) for i in threadpoolctl.threadpool_info()]
    rng = np.random.default_rng(34)
    exact_topk(rng.standard_normal((300, 16)), rng.standard_normal((2000, 16)), 5,
               corpus_ids=shuffled_ids(rng, 2000), threads=2)
    assert [(i["filepath"], i["num_threads"]) for i in threadpoolctl.threadpool_info()] == before


def test_caller_arrays_not_modified():
    rng = np.random.default_rng(4)
    c = rng.standard_normal((100, 7)).astype(np.float32)
    q = rng.standard_normal((5, 7)).astype(np.float32)
    c0, q0 = c.copy(), q.copy()
    exact_topk(q, c, 10, corpus_ids=np.arange(100))
    normalize(c)
    np.testing.assert_array_equal(c, c0)
    np.testing.assert_array_equal(q, q0)


def test_load_npy_mmap_refuses_object_arrays(tmp_path):
    path = tmp_path / "obj.npy"
    np.save(path, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(UnsafeFileError, match="unpickling"):
        load_npy_mmap(path)
    np.save(tmp_path / "one.npy", np.zeros(3))
    with pytest.raises(ShapeMismatchError, match="2-D"):
        load_npy_mmap(tmp_path / "one.npy")



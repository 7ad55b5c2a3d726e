"""Pieces of the `evaluate --emb` path made faster in issue #12: same answers as before."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evalcore.data import Run
from evalcore.io import load_embeddings
from evalcore.ranking import has_equal_scores as _has_ties
from evalcore.retrieval import exact_topk
from evalcore.retrieval.blocks import _PageReleaser, _resident_bytes
from evalcore.retrieval.scoring import _canonical_scores


def _old_has_ties(run: Run) -> bool:  # the definition before the one-pass version
    order = np.lexsort((run.scores, run.q))
    q, s = run.q[order], run.scores[order]
    return bool(np.any((q[1:] == q[:-1]) & (s[1:] == s[:-1])))


@pytest.mark.parametrize("seed", range(40))
def test_has_ties_matches_the_sorting_definition(seed):
    rng = np.random.default_rng(seed)
    n_q, depth = int(rng.integers(1, 6)), int(rng.integers(1, 8))
    q = np.repeat(np.arange(n_q), depth)
    scores = np.round(rng.random(len(q)), int(rng.integers(1, 4)))  # few decimals: ties now and then
    if seed % 2:  # a ranked run, as the search builds it: scores descending within each query
        scores = -np.sort(-scores.reshape(n_q, depth), axis=1).ravel()
    if seed % 5 == 0:  # rows shuffled: not grouped by query
        perm = rng.permutation(len(q))
        q, scores = q[perm], scores[perm]
    run = Run.from_records([f"q{x}" for x in q], [f"d{i}" for i in range(len(q))], scores)
    assert _has_ties(run) == _old_has_ties(run)


@pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(mmap, "MADV_DONTNEED")
                    or _resident_bytes() is None, reason="needs madvise and /proc/self/statm")
def test_page_releaser_keeps_a_corpus_within_its_budget_mapped(tmp_path):
    path = tmp_path / "c.npy"
    size = 32 * 2**20
    np.save(path, np.ones((size // 4 // 256, 256), dtype=np.float32))
    for budget, dropped in ((None, True), (4 * 2**20, True), (2**30, False)):
        arr = np.load(path, mmap_mode="r")
        rel = _PageReleaser(arr, budget=budget)
        assert rel.ok
        float(arr.sum())  # every page mapped in
        before = _resident_bytes()
        rel.everything()
        after = _resident_bytes()
        assert (before - after > size // 2) is dropped, (budget, before, after)
        del rel, arr


def _sorting_has_repeats(keys: np.ndarray, groups: np.ndarray) -> bool:  # the definition: a (group, key) twice
    pairs = np.stack([groups.astype(np.uint64), keys])
    sk = pairs[:, np.lexsort(pairs[::-1])]
    return bool(np.any((sk[:, 1:] == sk[:, :-1]).all(axis=0)))


@pytest.mark.parametrize("seed", range(60))
def test_grouped_repeat_check_matches_the_sorting_definition(seed):
    from evalcore.data import _NO_KEY, _has_repeats

    rng = np.random.default_rng(seed)
    n_groups = int(rng.integers(1, 30))
    lengths = rng.integers(1, [2, 8, 60][seed % 3], size=n_groups)
    equal = seed % 5 == 1
    if equal:
        lengths[:] = 6  # every group equally long (a top-k run): the reshaped path
    groups = np.repeat(np.arange(n_groups), lengths)
    keys = rng.integers(0, 12 if equal else [5, 1000, 2**62][seed % 3], size=len(groups)).astype(np.uint64)
    if seed % 4 == 0:
        keys[rng.integers(len(keys), size=2)] = _NO_KEY  # the padding value as a real key (once or twice)
    if seed % 7 == 0:
        groups = rng.permutation(groups)  # not listed group by group: the global sort decides
    any_twice = bool(len(np.unique(keys)) < len(keys))
    exact = _sorting_has_repeats(keys, groups)
    got = _has_repeats(keys, groups)
    # never misses a (group, key) twice; says more only as "a key twice" (callers then check exactly)
    assert got == exact or (got and any_twice)
    assert _has_repeats(keys) == any_twice


def test_grouped_repeat_check_ignores_keys_shared_by_two_groups():
    from evalcore.data import _has_repeats

    keys = np.array([1, 2, 1, 2, 3], dtype=np.uint64)
    assert not _has_repeats(keys, np.array([0, 0, 1, 1, 1]))  # query by query: no pair twice
    assert _has_repeats(keys, np.array([0, 1, 0, 1, 1]))  # not grouped: the key check decides
    assert _has_repeats(keys, np.array([0, 0, 1, 1, 0]))
    assert _has_repeats(np.array([5, 5], dtype=np.uint64), np.array([3, 3]))
    # groups of equal length: a repeat away from its twin counts, one shared by two groups does not
    three = np.array([0, 0, 0, 1, 1, 1])
    assert _has_repeats(np.array([1, 2, 1, 3, 4, 5], dtype=np.uint64), three)
    assert not _has_repeats(np.array([1, 2, 3, 3, 2, 1], dtype=np.uint64), three)


def _unaligned_npz(tmp_path, vecs: np.ndarray) -> Path:
    """An ``np.savez`` archive whose vectors start at an address that is not a multiple of 4."""
    for extra in range(8):  # the ids member's length moves the vectors' offset
        path = tmp_path / f"u{extra}.npz"
        ids = np.array([f"d{i}" + "x" * extra for i in range(len(vecs))])
        np.savez(path, ids=ids, embeddings=vecs)
        if not load_embeddings(path, mmap=True).vectors.flags.aligned:
            return path
    raise AssertionError("no unaligned layout found")  # pragma: no cover


def test_search_on_an_unaligned_npz_map_equals_the_search_on_the_array(tmp_path):
    rng = np.random.default_rng(11)
    vecs = rng.standard_normal((700, 24)).astype(np.float32)
    vecs[300:310] = vecs[0]  # exact ties: id order decides
    path = _unaligned_npz(tmp_path, vecs)
    mapped = load_embeddings(path, mmap=True)
    assert isinstance(mapped.vectors, np.memmap) and not mapped.vectors.flags.aligned
    q = rng.standard_normal((40, 24)).astype(np.float32)
    for threads in (1, 2):
        a = exact_topk(q, mapped.vectors, 25, corpus_ids=mapped.ids, block_bytes=2**16, threads=threads)
        b = exact_topk(q, np.array(mapped.vectors), 25, corpus_ids=mapped.ids, block_bytes=2**16, threads=threads)
        np.testing.assert_array_equal(a.indices, b.indices)
        np.testing.assert_array_equal(a.scores, b.scores)
    cand = rng.integers(-1, 700, size=(40, 30))
    qn = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
    ok = cand >= 0
    got = _canonical_scores(qn, cand, mapped.vectors, None, 2**12)
    want = _canonical_scores(qn, cand, np.array(mapped.vectors), None, 2**12)
    np.testing.assert_array_equal(got[ok], want[ok])


_BLAS_PROBE = """
import os, sys
from threadpoolctl import threadpool_info
from evalcore.cli.main import _blas_own_threads_off
before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
with _blas_own_threads_off(sys.argv[1:]):
    inside = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    env = os.environ.get("OPENBLAS_NUM_THREADS")
print(max(before), max(inside), env)
"""


@pytest.mark.parametrize("words, limited", [
    (["evaluate", "--qrels", "q"], True), (["topk", "--docs", "d"], True),
    (["evaluate", "--dask", "local:2"], False), (["evaluate", "--dask=local:2"], False), (["compare"], False),
])
def test_search_commands_run_blas_single_threaded(words, limited):
    # the search runs its own threads; BLAS's idle threads would only spin (CPU time for nothing)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                            "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", _BLAS_PROBE, *words], capture_output=True, text=True, env=env,
                         cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert out.returncode == 0, out.stderr
    before, inside, var = out.stdout.split()
    if int(before) < 2:
        pytest.skip("this machine gives BLAS one thread anyway: nothing to limit")
    assert (int(inside), var) == ((1, "1") if limited else (int(before), "None"))

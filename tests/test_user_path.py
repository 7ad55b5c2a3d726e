"""Pieces of the `evaluate --emb` path made faster in issue #12: same answers as before."""

from __future__ import annotations

import mmap
import sys

import numpy as np
import pytest

from evalcore.cli.inputs import _has_ties
from evalcore.data import Run
from evalcore.retrieval.blocks import _PageReleaser, _resident_bytes


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

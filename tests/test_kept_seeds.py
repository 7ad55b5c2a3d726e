"""A kept result is never served for another seed or number of resamples.

The dashboard keeps its seeded results in its caches: the summaries and the diversity summary on disk, as
Parquet under a content key (``EVALCORE_CACHE``), the comparisons in Streamlit's cache and every result in the
session's memo. The comparisons' keys held neither the seed nor (for the diversity summary) the resamples, and the
seed was not even passed: with the default seed changed (0 to 42 here) a kept result of the old seed could have
been served as the new one's. Here each result is computed, then the dashboard's seed (and count) is changed as a
new default would change it, and the result asked for again must be the one of the new seed.
"""

from __future__ import annotations

import numpy as np
import pytest
import streamlit as st
from test_app import npz
from test_same_numbers import ITEMS, context, same, snapshot

from dashboard import analysis as A
from dashboard import drilldown as D
from dashboard import state as S
from evalcore import workspace as W
from evalcore.intervals import summarize_with_intervals
from evalcore.stats import compare, compare_by_domain

OTHER_SEED = 7


@pytest.fixture
def disk_cache(tmp_path, monkeypatch):
    """The disk cache of results on (in tmp_path), and every in-memory cache empty, before and after."""
    monkeypatch.setenv("EVALCORE_CACHE", str(tmp_path / "cache"))
    st.cache_data.clear()
    S.clear_caches()
    yield tmp_path / "cache"
    st.cache_data.clear()
    S.clear_caches()


def restart() -> None:
    """What a new server has of an earlier one: the disk cache only."""
    st.cache_data.clear()
    S.clear_caches()


def test_a_kept_summary_is_not_served_for_another_seed_or_count(disk_cache, monkeypatch):
    ctx = context(snapshot())
    first = S.summary(ctx)
    assert any(disk_cache.glob("summary-*.parquet"))  # kept on disk
    table = ctx.evaluation.table
    for name, value in (("CI_SEED", OTHER_SEED), ("N_RESAMPLES", 200)):
        monkeypatch.setattr(S, name, value)
        restart()
        shown = S.summary(context(snapshot()))
        want = summarize_with_intervals(table, aggregates=True, seed=S.CI_SEED, n_resamples=S.N_RESAMPLES)
        key = ["run", "metric", "k"]
        np.testing.assert_allclose(shown.sort_values(key)["ci_low"].to_numpy(float),
                                   want.sort_values(key)["ci_low"].to_numpy(float), rtol=0, atol=1e-15)
        assert not np.array_equal(shown["ci_low"].to_numpy(float), first["ci_low"].to_numpy(float))


def test_a_kept_comparison_is_not_served_for_another_seed(disk_cache, monkeypatch):
    ctx = context(snapshot())
    default = S.CI_SEED
    first = A.comparison(ctx, "ndcg", 10, "permutation", "holm").value
    monkeypatch.setattr(S, "CI_SEED", OTHER_SEED)
    S.clear_caches()  # a new session of the same server: Streamlit's cache is still there
    ctx = context(snapshot())
    shown = A.comparison(ctx, "ndcg", 10, "permutation", "holm").value
    want = compare(S.metric_slice(ctx, "ndcg", 10), metric="ndcg", k=10, test="permutation", seed=OTHER_SEED,
                   n_resamples=S.TEST_RESAMPLES, ci_method=S.CI_METHOD, resampling=S.RESAMPLING)
    same(shown, want, ["ci_low", "ci_high", "p_value"])
    assert not np.array_equal(shown["p_value"].to_numpy(float), first["p_value"].to_numpy(float))
    # the Domains page's tests likewise (computed before with the default seed by the Domains page of a session)
    monkeypatch.setattr(S, "CI_SEED", default)
    S.clear_caches()
    A.domain_comparison(context(snapshot()), "ndcg", 10, "a", "permutation", "holm", 2)
    monkeypatch.setattr(S, "CI_SEED", OTHER_SEED)
    S.clear_caches()
    shown = A.domain_comparison(context(snapshot()), "ndcg", 10, "a", "permutation", "holm", 2).value
    want = compare_by_domain(D._plain(S.metric_slice(ctx, "ndcg", 10)), metric="ndcg", k=10, baseline="a",
                             test="permutation", min_queries=2, seed=OTHER_SEED, n_resamples=S.TEST_RESAMPLES,
                             ci_method=S.CI_METHOD, resampling=S.RESAMPLING)
    same(shown, want, ["ci_low", "ci_high", "p_value"])


def test_a_kept_diversity_summary_is_not_served_for_another_seed(disk_cache, tmp_path, monkeypatch):
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(5,), metrics=("ndcg",))),
                            W.Blob.of("ref.npz", npz(ITEMS, 12, 1)), kind="reference")
    ws, _ = W.add_embedding_run(ws, W.Blob.of("m.npz", npz(ITEMS, 6, 2)), name="m")
    first = A.diversity(context(ws), 5).summary
    assert len(first) and any(disk_cache.glob("diversity_summary-*.parquet"))
    monkeypatch.setattr(S, "CI_SEED", OTHER_SEED)
    restart()
    shown = A.diversity(context(ws), 5).summary
    np.testing.assert_array_equal(shown["mean"].to_numpy(float), first["mean"].to_numpy(float))
    assert not np.array_equal(shown["ci_low"].to_numpy(float), first["ci_low"].to_numpy(float))

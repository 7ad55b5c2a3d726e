"""Tested pairs kept on disk (:mod:`evalcore.workspace.pairstore`): a new process tests only the pairs no earlier
process tested, and every table is the one computed from nothing, bit for bit (real Parquet files of the disk cache
of results)."""

from __future__ import annotations

from collections import OrderedDict

import pandas as pd
import pytest
from test_versions import info, tie_heavy_table

from evalcore.stats import tables
from evalcore.workspace import derived, pairstore
from evalcore.workspace.versions import version_series, version_tests

RUNS = [f"v{i}" for i in range(8)]


@pytest.fixture
def tested(monkeypatch, tmp_path) -> list:
    """One item per pair tested (not found in the memo) from here on, with a disk cache of the test's own."""
    monkeypatch.setenv(derived.ENV_CACHE, str(tmp_path / "results"))
    got: list = []
    real = tables._tested_pair

    def counted(*a, **kw):
        got.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(tables, "_tested_pair", counted)
    _new_process(monkeypatch)
    return got


def _new_process(monkeypatch) -> None:
    monkeypatch.setattr(tables, "_PAIRS", OrderedDict())


@pytest.mark.parametrize("resampling, test", [("shared", "t"), ("per_pair", "permutation")])
def test_a_new_process_tests_the_new_pairs_only_and_gives_the_tables_computed_from_nothing(
        tested, monkeypatch, tmp_path, resampling, test):
    """Seven versions tested in one process; in a new one, an eighth: its two pairs are tested, the others read back
    (with their own intervals when not shared, their notes, their NaN), and both families equal, column for column
    and bit for bit, the tests of a process with nothing kept."""
    table = tie_heavy_table(RUNS, missing=0.05, seed=21).astype({"run": "category", "query_id": "category"})
    kw = dict(model="m", metric="ndcg", k=10, reference="v2", test=test, n_resamples=200, ci_method="percentile",
              resampling=resampling)
    shorter = version_series(info(RUNS[:-1], ["m"] * 7, steps=list(range(7))))
    longer = version_series(info(RUNS, ["m"] * 8, steps=list(range(8))))
    with pairstore.kept_pairs():
        version_tests(table[table["run"] != "v7"], shorter, **kw)
    assert len(tested) == 2 * 6 - 1

    _new_process(monkeypatch)
    tested.clear()
    with pairstore.kept_pairs():
        got = version_tests(table, longer, **kw)
    assert len(tested) == 2  # (v6, v7) and (v2, v7)

    _new_process(monkeypatch)
    monkeypatch.setenv(derived.ENV_CACHE, str(tmp_path / "nothing-kept"))
    tested.clear()
    want = version_tests(table, longer, **kw)
    assert len(tested) == 2 * 7 - 1
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got["ci_low"].notna().all()


def test_a_damaged_or_absent_cache_only_means_testing(tested, monkeypatch, tmp_path):
    """A damaged file of kept pairs, or the cache turned off: every pair is tested and the result is the same."""
    table = tie_heavy_table(RUNS[:4], seed=3)
    series = version_series(info(RUNS[:4], ["m"] * 4, steps=list(range(4))))
    kw = dict(model="m", metric="ndcg", k=10, n_resamples=100, ci_method="percentile", resampling="shared")
    with pairstore.kept_pairs():
        want = version_tests(table, series, **kw)
    files = list((tmp_path / "results").glob(f"{pairstore.KIND}-*.parquet"))
    assert len(files) == 1 and len(tested) == 2 * 3 - 1
    files[0].write_bytes(b"not parquet")
    for env in (str(tmp_path / "results"), "off"):
        monkeypatch.setenv(derived.ENV_CACHE, env)
        _new_process(monkeypatch)
        tested.clear()
        with pairstore.kept_pairs():
            got = version_tests(table, series, **kw)
        assert len(tested) == 2 * 3 - 1
        pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_rows_that_do_not_name_a_pair_are_not_remembered(monkeypatch):
    """:func:`evalcore.stats.tables.remember_pairs` ignores a frame without its columns and a row whose key does not
    read back (another format): a miss, never an error."""
    _new_process(monkeypatch)
    assert tables.remember_pairs(pd.DataFrame({"key": ["x"]})) == 0
    row = {c: [0] for c in tables.PAIR_ROW_COLUMNS} | {"key": ["zz|(1,"], "test": ["t"], "note": [""]}
    assert tables.remember_pairs(pd.DataFrame(row)) == 0
    assert tables.remember_pairs(pd.DataFrame(row | {"key": ["00|5"]})) == 0
    assert tables.remember_pairs(pd.DataFrame(row | {"key": ["00|(1, None, False, ())"], "n": ["many"]})) == 0
    assert len(tables._PAIRS) == 0


@pytest.mark.parametrize("page", ["compare", "domains"])
def test_the_compare_and_domains_tests_of_a_restarted_server_read_the_kept_pairs(tested, monkeypatch, page):
    """The Compare page's and the Domains page's tests (``dashboard.cache``), like the Versions page's: a restarted
    server (Streamlit's caches and the memo emptied) tests no pair an earlier one tested, and its table is the one
    computed from nothing."""
    import streamlit as st

    from dashboard import cache as C

    table = tie_heavy_table(RUNS[:4], missing=0.05, seed=3).astype({"run": "category", "query_id": "category"})
    opts = dict(n_resamples=200, ci_method="percentile", seed=42, resampling="shared")

    def call():
        if page == "compare":
            return C._c_compare("k", table, "ndcg", 10, "t", "holm", **opts)
        return C._c_compare_domains("k", table, "ndcg", 10, "v0", "t", "holm", 2, **opts)

    first = call()
    assert first.ok and len(tested) > 0
    st.cache_data.clear()
    _new_process(monkeypatch)
    tested.clear()
    again = call()
    assert again.ok and len(tested) == 0  # every pair read back
    pd.testing.assert_frame_equal(again.value, first.value)

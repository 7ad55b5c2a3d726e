"""The Compare page of a restarted server: Tukey's HSD of the runs compared is read back from the disk cache of
results (its p-values are one numerical integral per pair: ~1 s a metric@k at 10 runs), not computed again, and
the table shown is the one the first server computed and the engine's from scratch (real workspace, real
SQLite/Parquet, real disk cache)."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_derived_cache import APP, _calls, _restart

from evalcore import stats
from evalcore import workspace as W
from evalcore.workspace import derived as D


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A disk cache of results of the test's own."""
    f = tmp_path / "results"
    monkeypatch.setenv(D.ENV_CACHE, str(f))
    return f


def compare_page() -> AppTest:
    """A new session on the Compare page at ndcg@10 (a pasted link)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["metric"] = "ndcg@10"
    at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def hsd_table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "q" in d.value.columns and "p-value" in d.value.columns)


def test_a_restarted_compare_page_reads_tukey_s_hsd_back(folder, ranked_workspace):
    _restart()
    with pytest.MonkeyPatch.context() as mp:
        computed = _calls(mp, stats, "tukey_hsd", lambda *a, **kw: kw["design"])
        first = hsd_table(compare_page())
    assert computed == ["paired"] and len(first) == 3  # the 3 pairs of bm25, dense, hybrid
    assert list(folder.glob("hsd-*.parquet"))

    _restart()
    with pytest.MonkeyPatch.context() as mp:
        computed = _calls(mp, stats, "tukey_hsd", lambda *a, **kw: kw["design"])
        again = compare_page()
        assert computed == []  # (computed again after each restart)
    pd.testing.assert_frame_equal(hsd_table(again), first, check_exact=True)
    with W.Workspace.open(ranked_workspace) as ws:  # from scratch: the engine's HSD of the API's evaluation
        scratch = stats.tukey_hsd(ws.evaluate().table, metric="ndcg", k=10, runs=list(first["run_a"][:1]) + list(
            first["run_b"][:2]), design="paired")
    shown = hsd_table(again)
    pd.testing.assert_series_equal(shown["p-value"].reset_index(drop=True), scratch["p_value"], check_names=False,
                                   check_exact=True)
    assert list(shown["run_a"]) == list(scratch["run_a"]) and list(shown["run_b"]) == list(scratch["run_b"])
    _restart()

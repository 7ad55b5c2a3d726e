"""The Overview of a restarted server (a training run's checkpoints reopened the next morning) reads each run's kept
evaluation and summary and nothing more: no row is stacked into the whole per-query table, no per-query DataFrame
is built, no summary computed; every table and chart it shows is the one the first server computed, and its
numbers are the Python API's from scratch (real workspace, real SQLite/Parquet, real disk cache)."""

from __future__ import annotations

import pandas as pd
import pytest
import test_app as T
from streamlit.testing.v1 import AppTest
from test_derived_cache import APP, _calls, _restart

from evalcore import stacked
from evalcore import workspace as W
from evalcore.intervals import summarize_with_intervals
from evalcore.results import ResultColumns
from evalcore.workspace import derived as D


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A disk cache of results of the test's own."""
    f = tmp_path / "results"
    monkeypatch.setenv(D.ENV_CACHE, str(f))
    return f


@pytest.fixture
def checkpoints(tmp_path, monkeypatch):
    """Five checkpoints of one model and a baseline, stored ranked runs."""
    path = tmp_path / "ckpts"
    with W.Workspace.open(path) as ws:
        ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
        for i in range(5):
            ws.add_run(f"enc/step{i}", T.trec_run(20 + i), source_name=f"s{i}.trec", model="enc",
                       version=f"step {i}", step=i)
        ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(path))
    return path


def overview() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown(at: AppTest) -> list:
    """Every table of the page and the spec of every chart."""
    return [*(d.value for d in at.dataframe), *(c.proto.spec for c in at.get("plotly_chart"))]


def _refuse(*a, **kw):
    raise AssertionError("computed, though kept")


def test_a_restarted_overview_stacks_no_row_and_shows_the_numbers_computed_from_scratch(folder, checkpoints):
    _restart()
    first = overview()
    want = shown(first)
    assert len(want) >= 3

    _restart()
    with pytest.MonkeyPatch.context() as mp:
        stacks = _calls(mp, stacked.StackedEvaluation, "_build", lambda self: self.runs)
        framed = _calls(mp, ResultColumns, "to_table", lambda self: len(self))
        import evalcore.intervals as I

        mp.setattr(I, "summarize_with_intervals", _refuse)
        mp.setattr(W, "build_run", _refuse)
        again = overview()
        assert stacks == []  # (it stacked the 6 runs' rows to find the queries the resamples are drawn over)
        assert set(framed) <= {0}  # (it made the whole table a DataFrame for the dtypes of three of its columns)
    got = shown(again)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        if isinstance(a, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        else:
            assert a == b
    with W.Workspace.open(checkpoints) as ws:  # from scratch: the API's evaluation and its summary (the pages' defaults)
        scratch = summarize_with_intervals(ws.evaluate().table)
    pd.testing.assert_frame_equal(T.numbers_table(again).reset_index(drop=True), scratch.reset_index(drop=True),
                                  check_exact=True)
    _restart()

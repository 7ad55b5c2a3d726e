"""The dashboard evaluates only what changed, reading the stored runs where it evaluates them: a checkpoint a
training script adds is looked up alone and appended, a run removed or renamed looks nothing up, and a first
evaluation reads and keeps each run in the worker thread that evaluates it; every number as a fresh session
computes it (real workspaces and a real disk cache, as tests/test_derived_cache.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import test_app as T
from streamlit.testing.v1 import AppTest
from test_derived_cache import APP, _calls, _restart, leaderboard

from dashboard import state as S
from evalcore import workspace as W
from evalcore.workspace import derived as D


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A disk cache of results of the test's own."""
    f = tmp_path / "results"
    monkeypatch.setenv(D.ENV_CACHE, str(f))
    return f


def _same_evaluation(got, want) -> None:
    """The same evaluation bit for bit: every array (and its dtype), names, coverage rows, settings."""
    a, b = got.columns, want.columns
    assert (a.runs, a.domains, a.metrics) == (b.runs, b.domains, b.metrics) and np.array_equal(a.query_ids, b.query_ids)
    for field in ("run", "query", "domain", "metric", "k", "value"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), field
    assert got.coverage_rows == want.coverage_rows and got.settings == want.settings


def _session_evaluation(at: AppTest):
    """The evaluation the session's pages show (its memo's latest)."""
    return [v for k, v in at.session_state[S.MEMO_KEY].items() if k.startswith("eval:")][-1].value


def _fresh_evaluation():
    """The evaluation a new session of a restarted server makes of the workspace (read back from the disk)."""
    _restart()
    fresh = AppTest.from_file(APP, default_timeout=120)
    fresh.run()
    assert not fresh.exception
    return _session_evaluation(fresh), leaderboard(fresh)


def test_a_checkpoint_added_reads_its_own_kept_evaluation_only(folder, ranked_workspace, monkeypatch):
    """A training script adds a run while the dashboard is open: the refreshed session reads the kept evaluation
    of that run only (it read every run's before: 9 here, 138 on a workspace of 137 checkpoints), appends its rows
    to the evaluation it holds, and shows exactly what a fresh session computes from the disk."""
    with W.Workspace.open(ranked_workspace) as ws:  # 8 runs: their stack has room for 2 more (a quarter)
        for seed in range(4, 9):
            ws.add_run(f"epoch {seed}", T.trec_run(seed), source_name=f"e{seed}.trec")
    _restart()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    before = _session_evaluation(at)
    with W.Workspace.open(ranked_workspace) as ws:
        ws.add_run("late", T.trec_run(9), source_name="late.trec")
    looked_up = _calls(monkeypatch, D, "load_evaluation", lambda key, **kw: key)
    at.button(key="ws_refresh").click().run()
    assert not at.exception
    assert len(set(looked_up)) == 1  # the new run's (a miss: it is evaluated, then kept)
    now = _session_evaluation(at)
    assert now.runs == ["bm25", "dense", "hybrid", *(f"epoch {s}" for s in range(4, 9)), "late"]
    assert np.shares_memory(before.columns.value, now.columns.value)  # appended, not stacked again
    shown = leaderboard(at)
    fresh, fresh_shown = _fresh_evaluation()
    _same_evaluation(now, fresh)
    pd.testing.assert_frame_equal(shown, fresh_shown)
    _restart()


def test_a_first_evaluation_reads_and_keeps_each_stored_run_in_the_worker_evaluating_it(folder, ranked_workspace,
                                                                                        monkeypatch):
    """Nothing kept yet (a cold first open of 137 stored runs): each stored run is read, evaluated and kept by one
    worker thread, so the reading and keeping of a run overlap another's evaluation (the script's thread read
    every run first, one after the other, and kept each evaluation after all were made); the numbers are those
    of the workspace's evaluation of all the runs at once."""
    import threading

    import evalcore._threads as threads

    monkeypatch.setattr(threads, "usable_cores", lambda: 2)  # two workers, whatever the machine
    _restart()
    where = lambda *a, **kw: threading.current_thread().name  # noqa: E731
    reads = _calls(monkeypatch, W, "build_run", where)
    kept = _calls(monkeypatch, D, "store_evaluation", where)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    assert len(reads) == len(kept) == 3
    assert all(name.startswith("evalcore-evaluate") for name in reads + kept), reads + kept
    with W.Workspace.open(ranked_workspace) as ws:
        runs = [ws.load_run(n) for n in ("bm25", "dense", "hybrid")]
        settings, qrels = ws.settings().validated(), ws.load_qrels()
    want = W.evaluate_workspace({None: qrels}, [(r, None) for r in runs], settings)
    got = _session_evaluation(at)
    pd.testing.assert_frame_equal(got.table, want.table)
    assert got.coverage_rows == want.coverage_rows
    _restart()


def test_a_run_removed_or_renamed_reads_no_kept_evaluation(folder, ranked_workspace, monkeypatch):
    """The other runs' rows come from the evaluation the session holds: removing or renaming a run reads none of
    the kept evaluations again, and gives what a fresh session computes."""
    _restart()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    looked_up = _calls(monkeypatch, D, "load_evaluation", lambda key, **kw: key)
    with W.Workspace.open(ranked_workspace) as ws:
        ws.remove_run("dense")
        ws.rename_run("bm25", "bm25 (tuned)")
    at.button(key="ws_refresh").click().run()
    assert not at.exception and looked_up == []
    now = _session_evaluation(at)
    assert now.runs == ["bm25 (tuned)", "hybrid"]
    fresh, _ = _fresh_evaluation()
    _same_evaluation(now, fresh)
    _restart()

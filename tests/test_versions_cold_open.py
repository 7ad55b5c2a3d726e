"""The Versions page of a restarted server (a training run's checkpoints, reopened the next morning): it reads each
kept evaluation once, stacks none of their rows, reads no run, tests no pair and draws no resample; a first open
with nothing kept evaluates each run once and keeps the page's curve and tests with the evaluations; a checkpoint
added reads the new run's rows only. Every table the page shows is the one a fresh computation gives (real
workspace, real SQLite/Parquet, real disk cache, as tests/test_derived_cache.py)."""

from __future__ import annotations

import pandas as pd
import pytest
import test_app as T
from streamlit.testing.v1 import AppTest
from test_derived_cache import APP, _calls, _names_passed, _restart

from dashboard import state as S
from dashboard import tables as TB
from evalcore import workspace as W
from evalcore.results import ResultColumns
from evalcore.workspace import derived as D

STEPS = [100, 200, 300, 400, 500, 600]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A disk cache of results of the test's own."""
    f = tmp_path / "results"
    monkeypatch.setenv(D.ENV_CACHE, str(f))
    return f


@pytest.fixture
def checkpoints(tmp_path, monkeypatch):
    """Six checkpoints of "enc" (stored ranked runs with steps), a baseline without a model, a fusion of two runs."""
    path = tmp_path / "ckpts"
    with W.Workspace.open(path) as ws:
        ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
        for i, step in enumerate(STEPS):
            ws.add_run(f"enc/step{step}", T.trec_run(10 + i), source_name=f"s{step}.trec", model="enc",
                       version=f"step {step}", step=step)
        ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
        ws.add_fused_run("fused", ["bm25", "enc/step600"])
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(path))
    return path


def versions_page() -> AppTest:
    """A new session opened on the Versions page of "enc" at ndcg@10 (a pasted link)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["metric"] = "ndcg@10"
    at.query_params["model"] = "enc"
    at.switch_page("pages/versions.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [s.value for s in at.subheader][:3] == ["ndcg@10 across the versions", "Each version tested",
                                                    "Version A vs B: what changed"]
    return at


def tables(at: AppTest) -> list[pd.DataFrame]:
    """The page's tables (tests against the previous version and the reference, what changed) and its curve."""
    charts = at.get("plotly_chart")
    assert charts
    return [*(d.value for d in at.dataframe), pd.DataFrame({"spec": [c.proto.spec for c in charts]})]


def same_tables(got: list[pd.DataFrame], want: list[pd.DataFrame]) -> None:
    assert len(got) == len(want) >= 5
    for a, b in zip(got, want, strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def _evaluation(at: AppTest):
    return [v for k, v in at.session_state[S.MEMO_KEY].items() if k.startswith("eval:")][-1].value


def _refuse(*a, **kw):
    raise AssertionError("computed, though kept")


def test_a_restarted_versions_page_reads_what_is_kept_once_and_computes_only_what_it_shows(folder, checkpoints):
    """Nothing kept: each run is evaluated once, and the page's curve and tests are kept with the evaluations.
    Restarted: each kept evaluation is read once; no run is read (the fusion's inputs neither), no run evaluated,
    no row stacked into the whole table (nor its DataFrame built), no pair tested, no resample drawn; the tables
    and the curve are those the first server computed."""
    _restart()
    with pytest.MonkeyPatch.context() as mp:
        evaluated = _names_passed(mp, "evaluate_one")
        first = tables(versions_page())
    assert sorted(evaluated) == sorted(["bm25", "fused", *(f"enc/step{s}" for s in STEPS)])
    kinds = {p.name.rsplit("-", 1)[0] for p in folder.glob("*.parquet")}
    assert {"evaluation", "version_curve", "version_tests"} <= kinds

    _restart()
    with pytest.MonkeyPatch.context() as mp:
        read = _calls(mp, D, "load_evaluation", lambda key, **kw: key)
        for name in ("build_run", "evaluate_several", "version_tests", "version_curve"):
            mp.setattr(W, name, _refuse)
        framed = _framed(mp)
        at = versions_page()
        assert len(read) == len(set(read)) == 8
        ev = _evaluation(at)
        assert sorted(ev.runs) == sorted(["bm25", "fused", *(f"enc/step{s}" for s in STEPS)])
        assert not ev.stacked and not ev.has_table
        assert framed == [8 * len(T.QUERIES)]  # one DataFrame: ndcg@10 of each run (the slice), not 8 runs' table
    same_tables(tables(at), first)
    _restart()


def _framed(monkeypatch) -> list[int]:
    """The rows of each per-query table made a DataFrame (:meth:`evalcore.results.ResultColumns.to_table`) from
    here on."""
    return _calls(monkeypatch, ResultColumns, "to_table", lambda self: len(self))


def _results(monkeypatch, name: str) -> list:
    """What each call of ``dashboard.state.<name>`` gives from here on (the call itself goes through)."""
    got: list = []
    real = getattr(S, name)

    def call(*a, **kw):
        got.append(real(*a, **kw))
        return got[-1]

    monkeypatch.setattr(S, name, call)
    return got


def test_a_checkpoint_added_on_the_versions_page_reads_its_own_rows_only(folder, checkpoints):
    """A training script adds a checkpoint while the page is open: the refreshed page takes the metric@k slice and
    the metric@k pairs of the runs it holds and reads the new run's rows only for them (it scanned the whole
    table for each: 19 M rows at 137 checkpoints); both are what the whole table gives, and every table shown is
    a fresh session's."""
    _restart()
    at = versions_page()
    with W.Workspace.open(checkpoints) as ws:
        ws.add_run("enc/step700", T.trec_run(99), source_name="s700.trec", model="enc", version="step 700", step=700)
    with pytest.MonkeyPatch.context() as mp:
        counted = _calls(mp, TB, "metric_k_pairs_coded", lambda names, codes, ks, **kw: len(codes))
        slices, pairs = _results(mp, "metric_slice"), _results(mp, "metric_k_pairs")
        framed = _framed(mp)
        at.button(key="ws_refresh").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert framed == [len(T.QUERIES)]  # the new run's ndcg@10 rows, not the whole table's
        ev = _evaluation(at)
        n_pairs = len(pairs[-1])
        assert sum(counted) <= len(T.QUERIES) * n_pairs + n_pairs, counted  # its rows; the pairs known: one row each
        assert "enc/step700" in ev.runs and not ev.stacked
    pd.testing.assert_frame_equal(slices[-1], TB.metric_slice(ev.table, "ndcg", 10), check_exact=True)
    assert pairs[-1] == TB.metric_k_pairs(ev.table)
    shown = tables(at)
    _restart()
    same_tables(shown, tables(versions_page()))
    _restart()


def _tested(monkeypatch) -> list:
    """One item per pair tested from here on (:func:`evalcore.stats.tables._tested_pair`: not found in the memo)."""
    from evalcore.stats import tables as ST

    return _calls(monkeypatch, ST, "_tested_pair", lambda *a, **kw: 1)


def _tests_computed(monkeypatch) -> list[pd.DataFrame]:
    """The frame of each :func:`evalcore.workspace.version_tests` computed from here on."""
    got: list[pd.DataFrame] = []
    real = W.version_tests

    def call(*a, **kw):
        got.append(real(*a, **kw))
        return got[-1]

    monkeypatch.setattr(W, "version_tests", call)
    return got


def _restart_engine(monkeypatch) -> None:
    """:func:`_restart`, and the engine's per-process memo of tested pairs empty (a new process)."""
    from collections import OrderedDict

    from evalcore.stats import tables as ST

    _restart()
    monkeypatch.setattr(ST, "_PAIRS", OrderedDict())


def test_the_first_checkpoint_added_after_a_restart_tests_its_two_new_pairs_only(folder, checkpoints, tmp_path,
                                                                                monkeypatch):
    """A restarted server (Streamlit's caches and the memo of tested pairs empty) and a training script adding a
    checkpoint: the page tests the new version against the previous one and against the reference, not every
    pair of the model again (246 pairs at 137 checkpoints), and every table is the one a server with nothing kept
    computes (the shared resamples and the correction computed again over each family)."""
    _restart_engine(monkeypatch)
    versions_page()
    _restart_engine(monkeypatch)
    with W.Workspace.open(checkpoints) as ws:
        ws.add_run("enc/step700", T.trec_run(99), source_name="s700.trec", model="enc", version="step 700", step=700)
    with pytest.MonkeyPatch.context() as mp:
        tested, frames = _tested(mp), _tests_computed(mp)
        shown = tables(versions_page())
    assert len(tested) == 2  # (step600, step700) and (step100, step700)

    monkeypatch.setenv(D.ENV_CACHE, str(tmp_path / "nothing-kept"))
    _restart_engine(monkeypatch)
    with pytest.MonkeyPatch.context() as mp:
        tested, scratch_frames = _tested(mp), _tests_computed(mp)
        scratch = tables(versions_page())
    assert len(tested) == 2 * len(STEPS) - 1  # every pair of the 7 versions; (step100, step200) in both families
    same_tables(shown, scratch)
    assert len(frames) == len(scratch_frames) == 2  # each family's engine frame, every column to the bit
    for got, want in zip(frames, scratch_frames, strict=True):
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert got["ci_low"].notna().all() and got["p_adjusted"].notna().all()
    _restart()

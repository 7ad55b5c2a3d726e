"""Which interval a report.json carries, and that the dashboard's download carries the one its pages show.

A browser review found the Overview's "Report (JSON)" with Student-t intervals under the same names
as the leaderboard's percentile-bootstrap ones, and no field saying which.
"""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import numpy as np
import pytest

from dashboard import state as S
from evalcore.aggregate import summarize
from evalcore.data import Qrels, Run
from evalcore.errors import OptionError
from evalcore.evaluate import evaluate
from evalcore.intervals import summarize_with_intervals
from evalcore.report import build_report


def _evaluation(seed: int = 0):
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(40)]
    qrels = Qrels.from_records(*zip(*[(q, f"d{d}", int(rng.integers(0, 3))) for q in queries
                                       for d in rng.choice(30, 5, replace=False)], strict=True))
    runs = {}
    for name in ("a", "b"):
        rows = [(q, f"d{d}", float(rng.integers(0, 5))) for q in queries for d in rng.choice(30, 12, replace=False)]
        runs[name] = Run.from_records(*zip(*rows, strict=True), name=name)
    return evaluate(qrels, runs, metrics=["ndcg", "recall", "num_rel_ret"], k=[5, 10]), runs


def _cells(report: dict, summary) -> list[tuple]:
    out = []
    for row in summary.itertuples(index=False):
        label = str(row.metric) if int(row.k) == 0 else f"{row.metric}@{int(row.k)}"
        got = report["aggregates"][str(row.run)][label]
        out.append((got["ci_low"], got["ci_high"], got["aggregate_ci_low"], row.ci_low, row.ci_high,
                    row.aggregate_ci_low))
    return out


def _same(a: float | None, b: float) -> bool:
    return (a is None and np.isnan(b)) or a == b


def test_report_says_which_interval_it_carries():
    ev, runs = _evaluation()
    t = build_report(ev, runs, include_per_query=False)
    assert t["metadata"]["ci"] == {"method": "t", "confidence": 0.95}
    for lo, hi, agg, slo, shi, sagg in _cells(t, summarize(ev.table, aggregates=True)):
        assert _same(lo, slo) and _same(hi, shi) and _same(agg, sagg)
    boot = build_report(ev, runs, include_per_query=False, ci_method="bootstrap", n_resamples=300, seed=7)
    assert boot["metadata"]["ci"]["method"] == "bootstrap" and boot["metadata"]["ci"]["n_resamples"] == 300
    shown = summarize_with_intervals(ev.table, method="bootstrap", n_resamples=300, seed=7, aggregates=True)
    cells = _cells(boot, shown)
    for lo, hi, agg, slo, shi, sagg in cells:
        assert _same(lo, slo) and _same(hi, shi) and _same(agg, sagg)
    assert any(c[0] != d[0] for c, d in zip(cells, _cells(t, summarize(ev.table, aggregates=True)), strict=True))
    with pytest.raises(OptionError, match="unknown ci_method 'wald'; supported: bootstrap, t"):
        build_report(ev, runs, ci_method="wald")


def test_the_dashboards_report_carries_the_intervals_its_pages_show():
    ev, runs = _evaluation(1)
    ctx = SimpleNamespace(evaluation=ev, runs=runs, settings=SimpleNamespace(sample_size=0, seed=42),
                          ws=SimpleNamespace(ground_truth=None, runs=()))
    report = json.loads(S.report_json(ctx, top_k=5)())
    assert report["metadata"]["ci"]["method"] == S.MEAN_CI == "bootstrap"
    # what the Overview's leaderboard shows (dashboard.state.summary -> cache._c_summary)
    shown = summarize_with_intervals(ev.table, by=("run", "metric", "k"), method=S.MEAN_CI, n_resamples=S.N_RESAMPLES,
                                     seed=S.CI_SEED, aggregates=True)
    for lo, hi, agg, slo, shi, sagg in _cells(report, shown):
        assert _same(lo, slo) and _same(hi, shi) and _same(agg, sagg)


def test_the_dashboards_report_carries_each_fused_runs_recipe():
    """A review: the Overview's "Report (JSON)" had no weights or c of a fused run (seed 001 Step 8 asks for
    them; ``evaluate --out`` writes them)."""
    from evalcore import workspace as W
    from evalcore.fusion import fuse
    from evalcore.io.trec import write_trec_run

    _, runs = _evaluation(2)
    snap = W.Snapshot()
    uids = []
    for name, run in runs.items():
        buf = io.StringIO()
        write_trec_run(run, buf)
        snap, uid = W.add_ranked_run(snap, W.Blob.of(f"{name}.trec", buf.getvalue().encode()), name=name)
        uids.append(uid)
    snap, _ = W.add_fused_run(snap, uids, [1.0, 0.25], c=30.0, top_n=8, name="mix")
    runs = {**runs, "mix": fuse(list(runs.values()), weights=[1.0, 0.25], c=30.0, top_n=8, ties="trec", name="mix")}
    qrels = Qrels.from_records(*zip(*[(q, "d1", 1) for q in runs["a"].query_ids], strict=True))
    ev = evaluate(qrels, runs, metrics=["ndcg"], k=[5])
    ctx = SimpleNamespace(evaluation=ev, runs=runs, ws=SimpleNamespace(ground_truth=None, runs=snap.runs),
                          settings=SimpleNamespace(sample_size=0, seed=42, ties="trec", depth=100))
    meta = json.loads(S.report_json(ctx, top_k=5)())["metadata"]
    assert meta["fusion"] == {"mix": {"runs": {"a": 1.0, "b": 0.25}, "c": 30.0, "top_n": 8, "ties": "trec",
                                      "method": "rrf", "norm": "none"}}



def test_the_dashboards_report_is_what_build_report_gives():
    """The download writes its per-query part as text (a review: 602 MB took 45 s and +4.7 GB through a dict)."""
    ev, runs = _evaluation(3)
    ctx = SimpleNamespace(evaluation=ev, runs=runs, settings=SimpleNamespace(sample_size=0, seed=42),
                          ws=SimpleNamespace(ground_truth=None, runs=()))
    got = json.loads(S.report_json(ctx, top_k=7)())
    want = build_report(ev, runs, top_k=7, metadata={"dashboard": True, "query_sample": "all", "seed": 42,
                                                     "ground_truth": dict.fromkeys(ev.runs), "command": "dashboard",
                                                     "n_samples": None, "sample_seed": None},
                        ci_method=S.MEAN_CI, n_resamples=S.N_RESAMPLES, seed=S.CI_SEED)
    for rep in (got, want):
        rep["metadata"].pop("timestamp")
    assert got == json.loads(json.dumps(want, allow_nan=False))
    assert any(len(v["topK"]) == 7 for per_run in got["per_query"].values() for v in per_run.values())

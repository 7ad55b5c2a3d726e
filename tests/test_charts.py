"""Chart styles: many runs never share a look (a review found 18 runs drawn in 10 colours, pairs alike)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard import charts as C


def _curve(runs: list[str]) -> pd.DataFrame:
    rows = [{"run": r, "k": k, "n": 50, "mean": 0.5 + 0.01 * i, "ci_low": 0.45, "ci_high": 0.55}
            for i, r in enumerate(runs) for k in (1, 10, 100)]
    return pd.DataFrame(rows)


def test_eighteen_runs_on_metrics_vs_k_all_look_different():
    runs = [f"s{d}-ep{e}" for d in (32, 64, 128) for e in range(1, 7)]
    fig = C.curves(_curve(runs), metric_label="ndcg", runs=runs, bands=False)
    looks = [(t.line.color, t.marker.symbol, t.line.dash) for t in fig.data]
    assert len(looks) == 18 and len(set(looks)) == 18
    # up to ten runs keep the plain look: solid lines, round markers, ten colours
    assert {lk[1:] for lk in looks[:10]} == {("circle", "solid")} and len({lk[0] for lk in looks[:10]}) == 10
    pr = C.pr_curves(_curve(runs).rename(columns={"k": "recall"}), runs=runs)
    assert len({(t.line.color, t.marker.symbol, t.line.dash) for t in pr.data}) == 18


def test_low_coverage_stays_dotted_whatever_the_position():
    runs = [f"r{i}" for i in range(12)]
    fig = C.curves(_curve(runs), metric_label="ndcg", runs=runs, bands=False, flagged=["r11"])
    by = {t.name: t for t in fig.data}
    assert by["r11 (low coverage)"].line.dash == "dot" and by["r10"].line.dash == "dash"


def test_domain_bars_of_many_runs_differ_by_colour_or_pattern():
    runs = [f"r{i}" for i in range(14)]
    dom = pd.DataFrame([{"run": r, "domain": d, "aggregate": 0.5, "aggregate_ci_low": 0.4, "aggregate_ci_high": 0.6,
                         "n": 10} for r in runs for d in ("a", "b")])
    fig = C.domain_bars(dom, metric_label="ndcg", runs=runs)
    looks = [(t.marker.color, t.marker.pattern.shape) for t in fig.data]
    assert len(set(looks)) == 14
    assert np.all([lk[1] == "" for lk in looks[:10]])


def test_versions_by_whole_steps_are_ticked_at_the_steps():
    """Five epochs were ticked 1, 1.5, 2, ... (a review); whole steps now get a tick each, other steps plotly's."""
    frame = pd.DataFrame({"mean": [0.1, 0.2, 0.3, 0.4, 0.5], "ci_low": 0.0, "ci_high": 1.0, "n": 10,
                          "run": [f"e{i}" for i in range(5)], "version": [None] * 5})
    for x, ticked in (([1, 2, 3, 4, 5], [1.0, 2.0, 3.0, 4.0, 5.0]), ([0.5, 1, 1.5, 2, 2.5], None)):
        fig = C.version_curve(frame, x=x, labels=[f"epoch {v}" for v in x], by_step=True, model="m",
                              metric_label="ndcg@10")
        assert (list(fig.layout.xaxis.tickvals) if fig.layout.xaxis.tickvals is not None else None) == ticked

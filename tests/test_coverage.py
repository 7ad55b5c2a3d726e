"""Coverage of each run (issue 10, item 4): queries answered / ground-truth queries."""

from __future__ import annotations

import pytest

from evalcore.coverage import coverage_text, low_coverage, run_coverage
from evalcore.data import Qrels, Run
from evalcore.errors import OptionError
from evalcore.evaluate import evaluate


def data():
    qrels = Qrels.from_dict({f"q{i}": {"d1": 1, "d2": 0} for i in range(10)})
    full = Run.from_dict({f"q{i}": {"d1": 2.0, "d3": 1.0} for i in range(10)}, name="full")
    part = Run.from_dict({f"q{i}": {"d2": 2.0, "d1": 1.0} for i in range(8)}, name="part")
    none = Run.from_dict({f"Q-{i}": {"d1": 2.0} for i in range(10)}, name="none")  # ids that match nothing
    return qrels, {"full": full, "part": part, "none": none}


def test_coverage_per_run():
    qrels, runs = data()
    ev = evaluate(qrels, runs, metrics=["ndcg"], k=[5])
    cov = run_coverage(ev.coverage).set_index("run")
    assert cov.loc["full", "coverage"] == 1.0 and cov.loc["part", "coverage"] == 0.8
    assert cov.loc["none", "coverage"] == 0.0 and cov.loc["none", "n_with_results"] == 0
    assert (cov["n_ground_truth"] == 10).all()
    # the defect this guards against: the run without a single matching query is scored 0 everywhere
    t = ev.table
    assert (t.loc[t["run"] == "none", "value"] == 0).all()
    assert low_coverage(ev.coverage) == ["part", "none"]
    assert low_coverage(ev.coverage, threshold=0.5) == ["none"]
    assert low_coverage(ev.coverage, threshold=0.0) == []
    assert list(run_coverage(ev.coverage, runs=["none", "full"])["run"]) == ["none", "full"]


def test_text_and_errors():
    assert coverage_text(30, 30) == "30/30 (100%)"
    assert coverage_text(0, 7) == "0/7 (0%)"
    assert coverage_text(15, 30) == "15/30 (50%)" and coverage_text(29, 30) == "29/30 (96%)"  # floored
    # a share strictly between 0% and 1% (or 99% and 100%) never reads as an end of the range
    assert coverage_text(1, 300) == "1/300 (<1%)" and coverage_text(3, 300) == "3/300 (1%)"
    assert coverage_text(2997, 3000) == "2997/3000 (>99%)" and coverage_text(297, 300) == "297/300 (99%)"
    assert coverage_text(1, 100) == "1/100 (1%)" and coverage_text(99, 100) == "99/100 (99%)"
    for total in (1, 2, 7, 99, 100, 101, 300, 3000):
        for n in range(total + 1):
            pct = coverage_text(n, total).split("(")[1].rstrip(")")
            assert (pct == "0%") == (n == 0) and (pct == "100%") == (n == total), (n, total)
            if pct not in ("<1%", ">99%"):
                assert int(pct[:-1]) <= 100 * n / total < int(pct[:-1]) + 1, (n, total)  # floored
    qrels, runs = data()
    ev = evaluate(qrels, runs, metrics=["ndcg"], k=[5])
    with pytest.raises(OptionError, match="in \\[0, 1\\]"):
        low_coverage(ev.coverage, threshold=1.5)
    with pytest.raises(OptionError, match="no coverage row"):
        run_coverage(ev.coverage, runs=["nope"])

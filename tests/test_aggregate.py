"""Tests of evalcore.aggregate: summaries of the long per-query table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalcore.aggregate import (
    best_per_column,
    mean_pm_std_text,
    metric_at_k_label,
    summarize,
    wide_per_query,
)
from evalcore.errors import OptionError

COLUMNS = ["run", "query_id", "domain", "metric", "k", "value"]


def make_table(
    values: dict[str, dict[str, float]],
    *,
    metric: str = "ndcg",
    k: int = 10,
    domains: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Long per-query table from {run: {query: value}} for one metric@k."""
    rows = [
        (run, q, (domains or {}).get(q, ""), metric, k, float(v))
        for run, per_q in values.items()
        for q, v in per_q.items()
    ]
    return pd.DataFrame(rows, columns=COLUMNS).astype({"k": "int64", "value": "float64"})


def random_table(seed: int = 0) -> pd.DataFrame:
    """Several runs x metric@k with uneven group sizes (one group of size 1)."""
    rng = np.random.default_rng(seed)
    parts = []
    sizes = {"bm25": 37, "dense": 23, "solo": 1}
    doms = ["bio", "med", ""]
    for metric, k in [("ndcg", 10), ("recall(rel=2)", 100), ("mrr", 0)]:
        for run, n in sizes.items():
            qs = {f"q{i:03d}": float(rng.random()) for i in range(n)}
            parts.append(
                make_table({run: qs}, metric=metric, k=k,
                           domains={q: doms[i % 3] for i, q in enumerate(qs)})
            )  # fmt: skip
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------- summarize


def test_summarize_matches_numpy_and_scipy():
    table = random_table(1)
    out = summarize(table, confidence=0.9)
    assert list(out.columns) == [
        "run", "metric", "k", "n", "mean", "std", "sem", "ci_low", "ci_high", "median"
    ]
    assert len(out) == 9
    for row in out.itertuples(index=False):
        v = table.loc[
            (table.run == row.run) & (table.metric == row.metric) & (table.k == row.k), "value"
        ].to_numpy()
        assert row.n == len(v)
        assert row.mean == pytest.approx(np.mean(v), rel=1e-12)
        assert row.median == pytest.approx(np.median(v), rel=1e-12)
        if len(v) > 1:
            assert row.std == pytest.approx(np.std(v, ddof=1), rel=1e-12)
            assert row.sem == pytest.approx(sps.sem(v), rel=1e-12)
            lo, hi = sps.t.interval(0.9, len(v) - 1, loc=np.mean(v), scale=sps.sem(v))
            assert row.ci_low == pytest.approx(lo, rel=1e-12)
            assert row.ci_high == pytest.approx(hi, rel=1e-12)
        else:
            # documented: a single value has std 0 and a point "interval"
            assert row.std == 0.0 and row.sem == 0.0
            assert row.ci_low == row.ci_high == row.mean


def test_summarize_hand_example():
    t = make_table({"a": {"q1": 1.0, "q2": 0.0, "q3": 0.5}})
    row = summarize(t).iloc[0]
    assert row["n"] == 3 and row["mean"] == pytest.approx(0.5)
    assert row["std"] == pytest.approx(0.5)  # sqrt((0.25 + 0.25 + 0) / 2)
    assert row["sem"] == pytest.approx(0.5 / math.sqrt(3))
    half = 4.302652729911275 * 0.5 / math.sqrt(3)  # t_{0.975, 2} from tables
    assert row["ci_low"] == pytest.approx(0.5 - half, rel=1e-9)
    assert row["ci_high"] == pytest.approx(0.5 + half, rel=1e-9)


def test_summarize_row_order_does_not_matter():
    table = random_table(2)
    shuffled = table.sample(frac=1.0, random_state=7).reset_index(drop=True)
    pd.testing.assert_frame_equal(summarize(table), summarize(shuffled))
    by = ("run", "domain", "metric", "k")
    pd.testing.assert_frame_equal(summarize(table, by=by), summarize(shuffled, by=by))


def test_summarize_by_domain():
    table = random_table(3)
    out = summarize(table, by=("run", "domain", "metric", "k"))
    sub = out[(out.run == "bm25") & (out.metric == "ndcg") & (out.domain == "bio")].iloc[0]
    v = table.loc[(table.run == "bm25") & (table.metric == "ndcg") & (table.domain == "bio"), "value"]
    assert sub["n"] == len(v) and sub["mean"] == pytest.approx(v.mean())
    assert set(out["domain"]) == {"bio", "med", ""}
    assert out.groupby(["run", "metric", "k"])["n"].sum().to_dict() == (
        table.groupby(["run", "metric", "k"]).size().to_dict()
    )


def test_summarize_does_not_mutate_input():
    table = random_table(4)
    before = table.copy(deep=True)
    summarize(table, by=("run", "domain", "metric", "k"))
    wide_per_query(table, metric="ndcg", k=10)
    mean_pm_std_text(table)
    pd.testing.assert_frame_equal(table, before)


@pytest.mark.parametrize("confidence", [0, 1, 1.5, -0.1, "x"])
def test_summarize_bad_confidence(confidence):
    with pytest.raises(OptionError):
        summarize(random_table(), confidence=confidence)


def test_summarize_invalid_tables():
    t = make_table({"a": {"q1": 0.5, "q2": 0.1}})
    with pytest.raises(OptionError, match="lacks column"):
        summarize(t.drop(columns="metric"))
    bad = t.copy()
    bad.loc[1, "value"] = np.nan
    with pytest.raises(OptionError, match="non-finite") as exc:
        summarize(bad)
    assert exc.value.query == "q2"
    dup = pd.concat([t, t.iloc[[0]]], ignore_index=True)
    with pytest.raises(OptionError, match="more than once"):
        summarize(dup)
    with pytest.raises(OptionError):
        summarize(t, by=())
    with pytest.raises(OptionError):
        summarize([1, 2, 3])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- best / labels


def test_best_per_column_marks_ties_and_direction():
    summary = pd.DataFrame(
        {
            "run": ["a", "b", "c", "a", "b", "c"],
            "metric": ["ndcg"] * 3 + ["mae"] * 3,
            "k": [10, 10, 10, 0, 0, 0],
            "mean": [0.5, 0.7, 0.7, 0.2, 0.1, 0.3],
        }
    )
    out = best_per_column(summary)
    assert out["is_best"].tolist() == [False, True, True, False, False, True]
    out = best_per_column(summary, higher_is_better={"mae": False})
    assert out["is_best"].tolist() == [False, True, True, False, True, False]
    out = best_per_column(summary, tolerance=0.25)
    assert out["is_best"].tolist() == [True, True, True, True, True, True]
    assert "is_best" not in summary.columns


def test_metric_at_k_label():
    assert metric_at_k_label("ndcg", 10) == "ndcg@10"
    assert metric_at_k_label("recall(rel=2)", 5) == "recall(rel=2)@5"
    assert metric_at_k_label("mrr", 0) == "mrr"
    assert metric_at_k_label("mrr", None) == "mrr"
    assert metric_at_k_label("p", np.int64(3)) == "p@3"
    with pytest.raises(OptionError):
        metric_at_k_label("ndcg", -1)
    with pytest.raises(OptionError):
        metric_at_k_label("ndcg", 2.5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- wide


def test_wide_per_query_pairs_by_query_id():
    t = make_table(
        {"a": {"q1": 0.1, "q2": 0.2, "q3": 0.3}, "b": {"q3": 0.9, "q1": 0.7}},
        domains={"q1": "bio", "q3": "med"},
    )
    t = t.sample(frac=1.0, random_state=3)
    w = wide_per_query(t, metric="ndcg", k=10)
    assert list(w.columns) == ["domain", "a", "b"]
    assert w.index.tolist() == ["q1", "q2", "q3"]
    assert w.loc["q1", "b"] == 0.7 and w.loc["q3", "b"] == 0.9
    assert math.isnan(w.loc["q2", "b"])
    assert w["domain"].tolist() == ["bio", "", "med"]
    w2 = wide_per_query(t, metric="ndcg", k=10, runs=["b", "a"])
    assert list(w2.columns) == ["domain", "b", "a"]
    with pytest.raises(OptionError, match="available"):
        wide_per_query(t, metric="ndcg", k=10, runs=["zzz"])
    with pytest.raises(OptionError, match="ndcg@5"):
        wide_per_query(t, metric="ndcg", k=5)


def test_wide_conflicting_domains():
    t = make_table({"a": {"q1": 0.1}, "b": {"q1": 0.2}})
    t.loc[0, "domain"] = "bio"
    t.loc[1, "domain"] = "med"
    with pytest.raises(OptionError, match="conflicting"):
        wide_per_query(t, metric="ndcg", k=10)
    t.loc[1, "domain"] = ""  # unknown on one row only is fine
    assert wide_per_query(t, metric="ndcg", k=10).loc["q1", "domain"] == "bio"


# --------------------------------------------------------------------------- text


def test_mean_pm_std_text_reproduces_seed_cell():
    # seed 000 prints "0.156±0.363" at k=1 for base_st: a binary metric over 500
    # queries with 78 hits: mean 78/500 = 0.156, std sqrt(.156 * .844) = 0.3629
    values = {f"q{i}": (1.0 if i < 78 else 0.0) for i in range(500)}
    t1 = make_table({"base_st": values}, metric="recall", k=1)
    t2 = make_table({"base_st": values}, metric="ndcg", k=1)
    t3 = make_table({"base_st": {q: 0.5 for q in values}}, metric="ndcg", k=10)
    table = pd.concat([t1, t2, t3], ignore_index=True)
    text = mean_pm_std_text(table, metric_labels={"recall": "Recall", "ndcg": "NDCG"}, ddof=0)
    lines = text.splitlines()
    assert lines[0] == "base_st:"
    assert lines[1].split() == ["k", "Recall", "NDCG"]
    assert set(lines[2].replace(" ", "")) == {"-"}
    assert lines[3].split() == ["1", "0.156±0.363", "0.156±0.363"]
    assert lines[4].split() == ["10", "-", "0.500±0.000"]
    # columns are aligned: each cell starts where its header starts
    assert lines[3].index("0.156") == lines[1].index("Recall")
    assert lines[4].index("0.500") == lines[1].index("NDCG")


def test_mean_pm_std_text_blocks_order_and_title():
    t = pd.concat(
        [
            make_table({"z_run": {"q1": 0.2, "q2": 0.4}}, metric="mrr", k=0),
            make_table({"a_run": {"q1": 1.0, "q2": 0.0}}, metric="mrr", k=0),
        ],
        ignore_index=True,
    )
    text = mean_pm_std_text(t, title="EVALUATION RESULTS")
    lines = text.splitlines()
    assert lines[0] == "EVALUATION RESULTS" and set(lines[1]) == {"="}
    assert text.index("z_run:") < text.index("a_run:")  # order of first appearance
    # sample std (ddof=1) of [1, 0] is sqrt(0.5)
    assert "0.500±0.707" in text
    assert any(line.split()[:1] == ["all"] for line in lines)
    text = mean_pm_std_text(t, runs=["a_run"], digits=2)
    assert "z_run" not in text and "0.50±0.71" in text
    with pytest.raises(OptionError):
        mean_pm_std_text(t, runs=["nope"])
    with pytest.raises(OptionError):
        mean_pm_std_text(t, ddof=2)


def test_an_evaluation_instead_of_its_table_says_what_to_pass():
    from evalcore.errors import OptionError
    from evalcore.evaluation import Evaluation

    table = pd.DataFrame({"run": ["a"], "query_id": ["q"], "metric": ["ndcg"], "k": [1], "value": [1.0]})
    with pytest.raises(OptionError, match=r"got Evaluation \(pass its \.table"):
        summarize(Evaluation(table, pd.DataFrame({"run": ["a"]})))

"""Confidence intervals that stay in the metric's range, on resamples shared by every run (issue 10, item 6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.aggregate import summarize
from evalcore.defaults import SEED
from evalcore.errors import OptionError
from evalcore.intervals import (
    _BATCH,
    bootstrap_means,
    mean_intervals,
    percentile_interval,
    queries_drawn,
    resample_counts,
    summarize_with_intervals,
)
from evalcore.stats import compare, compare_by_domain


def long_table(values: dict[str, list[float]], *, metric: str = "ndcg", k: int = 10, qids=None,
               domains=None) -> pd.DataFrame:
    rows = []
    for run, vals in values.items():
        ids = qids or [f"q{i:03d}" for i in range(len(vals))]
        for i, (q, v) in enumerate(zip(ids, vals, strict=True)):
            rows.append({"run": run, "query_id": q, "domain": domains[i] if domains else "", "metric": metric,
                         "k": k, "value": float(v)})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------ worked examples


def test_counts_are_draws_with_replacement_and_reproducible():
    w = resample_counts(7, 120, seed=3)
    assert w.shape == (120, 7) and (w.sum(axis=1) == 7).all() and (w >= 0).all()
    np.testing.assert_array_equal(w, resample_counts(7, 120, seed=3))
    assert not np.array_equal(w, resample_counts(7, 120, seed=4))
    # the documented draw: default_rng(seed).integers(0, n, (50, n)) per block of 50 resamples, in order
    rng = np.random.default_rng(3)
    idx = np.concatenate([rng.integers(0, 7, size=(50, 7)), rng.integers(0, 7, size=(50, 7)),
                          rng.integers(0, 7, size=(20, 7))])
    np.testing.assert_array_equal(w, np.stack([np.bincount(r, minlength=7) for r in idx]))


def test_two_query_ndcg_interval_stays_in_range_where_student_t_does_not():
    t = long_table({"A": [0.0, 1.0]})
    s = summarize(t)
    assert s.loc[0, "ci_low"] < -1 and s.loc[0, "ci_high"] > 2  # the defect: t leaves [0, 1]
    b = mean_intervals(t, n_resamples=500)
    assert 0.0 <= b.loc[0, "ci_low"] <= 0.5 <= b.loc[0, "ci_high"] <= 1.0
    assert b.loc[0, "mean"] == 0.5 and b.loc[0, "n"] == 2


def test_no_interval_for_one_query():
    out = mean_intervals(long_table({"A": [0.3], "B": [0.1, 0.9]}))
    a = out[out["run"] == "A"].iloc[0]
    assert a["n"] == 1 and np.isnan(a["ci_low"]) and np.isnan(a["ci_high"]) and a["mean"] == 0.3
    t = mean_intervals(long_table({"A": [0.3]}), method="t")
    assert np.isnan(t.loc[0, "ci_low"])


def test_t_method_equals_summarize():
    rng = np.random.default_rng(1)
    t = long_table({"A": rng.random(30).round(2).tolist(), "B": rng.random(30).round(1).tolist()})
    got = mean_intervals(t, method="t")
    exp = summarize(t)
    np.testing.assert_allclose(got["ci_low"], exp["ci_low"], rtol=1e-12)
    np.testing.assert_allclose(got["ci_high"], exp["ci_high"], rtol=1e-12)
    np.testing.assert_allclose(got["mean"], exp["mean"], rtol=1e-12)


# ------------------------------------------------------------------------------------------ oracle


def test_bootstrap_equals_an_explicit_resampling_oracle():
    rng = np.random.default_rng(7)
    n = 23
    vals = {"A": rng.integers(0, 4, n) / 3, "B": rng.integers(0, 3, n) / 2}
    qids = [f"q{i:02d}" for i in rng.permutation(n)]  # ids not in row order: resampled in sorted id order
    t = long_table({r: v.tolist() for r, v in vals.items()}, qids=qids)
    got = mean_intervals(t, n_resamples=300, seed=11).set_index("run")
    w = resample_counts(n, 300, seed=11)
    order = np.argsort(qids)
    for run, v in vals.items():
        means = np.array([np.repeat(v[order], row).mean() for row in w])
        lo, hi = np.quantile(means, [0.025, 0.975])
        assert got.loc[run, "ci_low"] == pytest.approx(lo, abs=1e-12)
        assert got.loc[run, "ci_high"] == pytest.approx(hi, abs=1e-12)


def test_groups_missing_queries_use_the_same_counts_restricted():
    x = np.array([[0.2, 0.0], [0.9, 0.5], [0.4, 0.0]])
    present = np.array([[True, False], [True, True], [True, False]])
    means = bootstrap_means(x, present, n_resamples=60, seed=2)
    w = resample_counts(3, 60, seed=2).astype(float)
    np.testing.assert_allclose(means[:, 0], w @ x[:, 0] / 3)
    only = w[:, 1] > 0
    np.testing.assert_allclose(means[only, 1], 0.5)
    assert np.isnan(means[~only, 1]).all()
    lo, hi = percentile_interval(means)
    assert lo[1] == hi[1] == 0.5


@pytest.mark.parametrize("seed", range(3))
def test_groups_with_every_query_divide_by_n_exactly_as_by_the_drawn_counts(seed):
    """With no query missing, each resample's count is n: the means equal those divided by the
    counts' own product (bit for bit), the path of groups with missing queries."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    x = rng.integers(0, 4, size=(n, 3)) / 3
    present = np.ones((n, 3), dtype=bool)
    means = bootstrap_means(x, present, n_resamples=120, seed=seed)
    w = resample_counts(n, 120, seed=seed).astype(float)

    def by_blocks(values, mask):  # the products of blocks of resamples, as bootstrap_means draws them
        return np.concatenate([(w[b:b + _BATCH] @ np.where(mask, values, 0.0)) / (w[b:b + _BATCH] @ mask)
                               for b in range(0, len(w), _BATCH)])

    assert np.array_equal(means, by_blocks(x, present.astype(float)))
    present[0, 1] = False  # one query missing from one group: the counts' product decides there
    partial = bootstrap_means(x, present, n_resamples=120, seed=seed)
    assert np.array_equal(partial, by_blocks(x, present.astype(float)))


# ------------------------------------------------------------------------------------------ invariants


@pytest.mark.parametrize("seed", range(6))
def test_every_interval_within_the_observed_range_on_tie_heavy_data(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    t = long_table({r: (rng.integers(0, 3, n) / 2).tolist() for r in ("A", "B", "C")})
    out = mean_intervals(t, n_resamples=200, seed=seed)
    for row in out.itertuples(index=False):
        v = t.loc[t["run"] == row.run, "value"]
        assert v.min() - 1e-12 <= row.ci_low <= row.mean + 1e-12
        assert row.mean - 1e-12 <= row.ci_high <= v.max() + 1e-12
        assert 0.0 <= row.ci_low and row.ci_high <= 1.0


def test_identical_runs_get_identical_intervals_and_row_order_does_not_matter():
    rng = np.random.default_rng(5)
    v = (rng.integers(0, 5, 40) / 4).tolist()
    t = long_table({"A": (rng.random(40)).tolist(), "C": v, "D": v})
    out = mean_intervals(t).set_index("run")
    assert out.loc["C", "ci_low"] == out.loc["D", "ci_low"] and out.loc["C", "ci_high"] == out.loc["D", "ci_high"]
    shuffled = mean_intervals(t.sample(frac=1.0, random_state=3)).set_index("run")
    pd.testing.assert_frame_equal(out, shuffled)


def test_domains_group():
    t = long_table({"A": [0.1, 0.5, 0.9, 0.3]}, domains=["x", "x", "y", "y"])
    out = mean_intervals(t, by=("run", "domain", "metric", "k"))
    assert list(out["domain"]) == ["x", "y"] and list(out["n"]) == [2, 2]
    assert (out["ci_low"] >= [0.1, 0.3]).all() and (out["ci_high"] <= [0.5, 0.9]).all()


@pytest.mark.parametrize(("kw", "message"), [
    ({"method": "wald"}, "method must be one of"),
    ({"n_resamples": 0}, "n_resamples must be an integer >= 1"),
    ({"confidence": 1.5}, "confidence must be in (0, 1)"),
    ({"by": ("run", "query_id")}, "by must name"),
])
def test_bad_options(kw, message):
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mean_intervals(long_table({"A": [0.1, 0.2]}), **kw)


# ------------------------------------------------------------------------------------------ comparisons


def test_shared_resamples_give_identical_runs_identical_difference_intervals():
    rng = np.random.default_rng(9)
    n = 60
    base = rng.random(n).round(2)
    twin = np.clip(base + rng.normal(0, 0.2, n), 0, 1).round(2)
    # A is the baseline; C and D are identical. Sorted by name the pairs read (A, C) and (D, A'): the second
    # one has the baseline as run B, so the page flips it.
    t = long_table({"C": twin.tolist(), "D": twin.tolist(), "E": base.tolist()})
    per_pair = compare(t, metric="ndcg", k=10, n_resamples=500, ci_method="percentile")
    shared = compare(t, metric="ndcg", k=10, n_resamples=500, ci_method="percentile", resampling="shared")
    row = {(r.run_a, r.run_b): r for r in shared.itertuples(index=False)}
    ce, de = row[("C", "E")], row[("D", "E")]
    assert (ce.ci_low, ce.ci_high) == (de.ci_low, de.ci_high)
    # the same intervals as an oracle over the sorted query ids (compare's default seed: evalcore.defaults.SEED)
    w = resample_counts(n, 500, seed=SEED)
    d = base - twin  # E - C, queries already in sorted id order
    means = np.array([np.repeat(d, r).mean() for r in w])
    assert ce.ci_low == pytest.approx(np.quantile(means, 0.025), abs=1e-12)
    assert ce.ci_high == pytest.approx(np.quantile(means, 0.975), abs=1e-12)
    # the tests themselves are unchanged
    np.testing.assert_array_equal(per_pair["p_value"], shared["p_value"])
    flip = compare(t.assign(run=t["run"].replace({"C": "Z"})), metric="ndcg", k=10, n_resamples=500,
                   ci_method="percentile", resampling="shared")
    ez = flip[(flip["run_a"] == "E") & (flip["run_b"] == "Z")].iloc[0]  # Z - E = -(E - C)
    assert (ez.ci_low, ez.ci_high) == pytest.approx((-ce.ci_high, -ce.ci_low), abs=1e-12)


def test_shared_resamples_by_domain_and_option_checks():
    rng = np.random.default_rng(4)
    n = 40
    a = rng.random(n).round(1)
    b = np.clip(a + 0.1, 0, 1)
    doms = ["x" if i % 2 else "y" for i in range(n)]
    t = long_table({"A": a.tolist(), "B": b.tolist(), "C": b.tolist()}, domains=doms)
    out = compare_by_domain(t, metric="ndcg", k=10, baseline="A", min_queries=2, n_resamples=300,
                            ci_method="percentile", resampling="shared")
    for dom in ("x", "y"):
        rows = out[out["domain"] == dom].set_index("run_b")
        assert tuple(rows.loc["B", ["ci_low", "ci_high"]]) == tuple(rows.loc["C", ["ci_low", "ci_high"]])
    with pytest.raises(OptionError, match="ci_method='percentile'"):
        compare(t, metric="ndcg", k=10, resampling="shared")
    with pytest.raises(OptionError, match="resampling must be one of"):
        compare(t, metric="ndcg", k=10, resampling="pooled")


def test_shared_resamples_change_only_the_intervals_and_keep_degenerate_rows():
    """resampling='shared' skips each pair's own bootstrap: every other column is the per-pair result's;
    a pair with one paired query and a domain too small to test keep NaN; a constant difference its mean."""
    rng = np.random.default_rng(12)
    n = 50
    a = rng.random(n).round(2)
    b = np.clip(a + rng.normal(0, 0.2, n), 0, 1).round(2)
    t = long_table({"A": a.tolist(), "B": b.tolist(), "C": (a + 0.25).tolist()})
    lonely = long_table({"L": [0.5]}, qids=["q000"])  # one query shared with the others
    t = pd.concat([t, lonely], ignore_index=True)
    kw = dict(metric="ndcg", k=10, n_resamples=300, ci_method="percentile")
    per_pair = compare(t, **kw)
    shared = compare(t, **kw, resampling="shared")
    others = [c for c in per_pair.columns if c not in ("ci_low", "ci_high")]
    pd.testing.assert_frame_equal(per_pair[others], shared[others])
    by = shared.set_index(["run_a", "run_b"])
    assert by.loc[("A", "L"), ["ci_low", "ci_high"]].isna().all()  # n = 1
    assert by.loc[("A", "C"), "ci_low"] == pytest.approx(0.25, abs=1e-12)  # constant difference
    assert by.loc[("A", "C"), "ci_high"] == pytest.approx(0.25, abs=1e-12)
    assert by.loc[("A", "B"), "ci_low"] < by.loc[("A", "B"), "diff"] < by.loc[("A", "B"), "ci_high"]
    doms = ["x"] * 3 + ["y"] * (n - 3)
    td = long_table({"A": a.tolist(), "B": b.tolist()}, domains=doms)
    out = compare_by_domain(td, metric="ndcg", k=10, baseline="A", min_queries=5, n_resamples=300,
                            ci_method="percentile", resampling="shared").set_index("domain")
    assert np.isnan(out.loc["x", "ci_low"]) and np.isnan(out.loc["x", "ci_high"])
    assert out.loc["y", "ci_low"] < out.loc["y", "ci_high"]


def test_declared_aggregates_follow_the_bootstrap_interval():
    """aggregates=True: a mean's interval is the bootstrap one, gm_map's is its exp, a total has none."""
    rng = np.random.default_rng(5)
    rows = []
    for q in range(30):
        for run in ("a", "b"):
            rows.append((run, f"q{q}", "", "ndcg", 10, float(rng.random())))
            rows.append((run, f"q{q}", "", "gm_map", 0, float(np.log(max(rng.random(), 1e-5)))))
            rows.append((run, f"q{q}", "", "num_ret", 0, float(rng.integers(0, 100))))
    table = pd.DataFrame(rows, columns=["run", "query_id", "domain", "metric", "k", "value"])
    plain = summarize_with_intervals(table, n_resamples=500, seed=3)
    agg = summarize_with_intervals(table, n_resamples=500, seed=3, aggregates=True)
    pd.testing.assert_frame_equal(agg[plain.columns], plain)  # the same summary, with the aggregate columns added
    by = agg.set_index(["run", "metric"])
    for run in ("a", "b"):
        nd, gm, cnt = by.loc[(run, "ndcg")], by.loc[(run, "gm_map")], by.loc[(run, "num_ret")]
        assert (nd["aggregate"], nd.aggregate_ci_low, nd.aggregate_ci_high) == (nd["mean"], nd.ci_low, nd.ci_high)
        assert np.isclose(gm["aggregate"], np.exp(gm["mean"]))
        assert (gm.aggregate_ci_low, gm.aggregate_ci_high) == (np.exp(gm.ci_low), np.exp(gm.ci_high))
        assert gm.aggregate_ci_low <= gm["aggregate"] <= gm.aggregate_ci_high
        assert cnt["aggregate"] == table[(table.run == run) & (table.metric == "num_ret")]["value"].sum()
        assert np.isnan(cnt.aggregate_ci_low) and np.isnan(cnt.aggregate_ci_high)


# ------------------------------------------------------------------------------------------ run by run


def evaluation_table(seed: int) -> pd.DataFrame:
    """evaluate's categorical table of three tie-heavy runs with NaN first_rel_rank; r2 lacks queries (its rows
    of a quarter of the queries are left out, as a run evaluated on part of the queries would be)."""
    from evalcore.data import Qrels, Run
    from evalcore.evaluate import evaluate

    rng = np.random.default_rng(seed)
    qrels = Qrels.from_records([f"q{q}" for q in range(30) for _ in range(3)],
                               [f"d{d}" for _ in range(30) for d in rng.choice(40, 3, replace=False)],
                               rng.integers(0, 3, 90).tolist())
    runs = []
    for j in range(3):
        qs, ds, ss = [], [], []
        for q in range(30):
            docs = rng.choice(40, int(rng.integers(1, 12)), replace=False)
            qs += [f"q{q}"] * len(docs)
            ds += [f"d{x}" for x in docs]
            ss += rng.integers(0, 3, len(docs)).tolist()
        runs.append(Run.from_records(qs, ds, ss, name=f"r{j}"))
    table = evaluate(qrels, runs, metrics=["ndcg", "recall", "first_rel_rank", "num_rel_ret"], k=[3, 10]).table
    lacking = (table["run"] == "r2") & table["query_id"].isin([f"q{q}" for q in range(0, 30, 4)])
    return table[~lacking].reset_index(drop=True)


@pytest.mark.parametrize("seed", range(3))
def test_run_by_run_with_the_whole_tables_queries_equals_the_whole_summary(seed):
    table = evaluation_table(seed)
    whole = summarize_with_intervals(table, n_resamples=200, seed=seed, aggregates=True)
    universe = sorted(set(table.loc[np.isfinite(table["value"]), "query_id"].astype(str)))
    parts = [summarize_with_intervals(table[table["run"] == r], n_resamples=200, seed=seed, aggregates=True,
                                      query_ids=universe) for r in table["run"].cat.categories]
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), whole)
    # a part alone (its own queries) draws over fewer queries: other intervals for the run lacking queries
    alone = summarize_with_intervals(table[table["run"] == "r2"], n_resamples=200, seed=seed)
    assert not np.allclose(alone["ci_low"], parts[2]["ci_low"], equal_nan=True)
    # plain string columns: the same numbers
    plain = table.astype({"run": str, "query_id": str, "metric": str, "domain": str})
    got = summarize_with_intervals(plain[plain["run"] == "r2"], n_resamples=200, seed=seed, query_ids=universe)
    want = parts[2].astype({"metric": str}).set_index(["metric", "k"])
    got = got.set_index(["metric", "k"]).loc[want.index]
    assert np.array_equal(got["ci_low"].to_numpy(), want["ci_low"].to_numpy(), equal_nan=True)


def test_query_ids_must_hold_every_query_of_the_table():
    t = long_table({"A": [0.1, 0.5, 0.9]})
    with pytest.raises(OptionError, match="'q002' of the table is not among query_ids"):
        mean_intervals(t, query_ids=["q000", "q001"])


@pytest.mark.parametrize("seed", range(4))
def test_queries_drawn_match_the_obvious_form(seed):
    rng = np.random.default_rng(seed)
    ids = np.array([f"q{i}" for i in rng.permutation(50)], dtype=object)  # a vocabulary out of order
    codes = rng.integers(0, 40, 500)  # ten ids never used
    values = np.where(rng.random(500) < 0.3, np.nan, rng.random(500))
    values[codes == codes[0]] = np.nan  # one used id has no finite value
    want = tuple(sorted(set(ids[codes[np.isfinite(values)]].tolist())))
    for chunk in (1, 7, 1 << 20):
        assert queries_drawn(ids, codes, values, chunk=chunk) == want
    assert ids[codes[0]] not in want and queries_drawn(ids, codes[:0], values[:0]) == ()


@pytest.mark.parametrize("seed", range(2))
def test_queries_drawn_are_the_default_draw(seed):
    """Given as query_ids, the queries of a whole evaluation table change nothing: they are its default draw."""
    from evalcore.results import ResultColumns

    table = evaluation_table(seed)
    cols = ResultColumns.from_table(table)
    drawn = queries_drawn(cols.query_ids, cols.query, cols.value)
    pd.testing.assert_frame_equal(mean_intervals(table, n_resamples=200, seed=seed),
                                  mean_intervals(table, n_resamples=200, seed=seed, query_ids=drawn))


# ------------------------------------------------------------------------------------------ one pass, NaN groups


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("method", ["bootstrap", "t"])
def test_summary_with_intervals_is_the_summary_with_the_intervals_of_mean_intervals(seed, method):
    """summarize_with_intervals checks and groups the table once: its rows are summarize's, its intervals
    mean_intervals', group for group (tie-heavy runs, NaN first_rel_rank, a run lacking queries)."""
    table = evaluation_table(seed)
    got = summarize_with_intervals(table, method=method, n_resamples=150, seed=seed, aggregates=True)
    base = summarize(table, aggregates=True)
    plain = [c for c in base.columns if c not in ("ci_low", "ci_high", "aggregate_ci_low", "aggregate_ci_high")]
    pd.testing.assert_frame_equal(got[plain], base[plain])
    ci = mean_intervals(table, method=method, n_resamples=150, seed=seed)
    at = got.set_index(["run", "metric", "k"]).loc[pd.MultiIndex.from_frame(ci[["run", "metric", "k"]])]
    assert np.array_equal(at["ci_low"].to_numpy(), ci["ci_low"].to_numpy(), equal_nan=True)
    assert np.array_equal(at["ci_high"].to_numpy(), ci["ci_high"].to_numpy(), equal_nan=True)
    assert len(ci) == len(got)  # every group here has a finite value


def test_a_run_that_never_finds_a_relevant_document_keeps_its_row_without_interval():
    """first_rel_rank is NaN on every query of a run that retrieves nothing relevant: its summary row says
    n = 0, no mean, no interval (it used to fail: "interval groups do not match the summary's"); the other
    runs' rows are those of the table without it; mean_intervals has no row for it."""
    from evalcore.data import Qrels, Run
    from evalcore.evaluate import evaluate

    qrels = Qrels.from_records(["q1", "q1", "q2", "q3"], ["d1", "d2", "d3", "d4"], [1, 2, 1, 1])
    good = Run.from_records(["q1", "q1", "q2", "q3", "q3"], ["x", "d2", "d3", "y", "d4"], [3, 2, 1, 2, 1],
                            name="good")
    blind = Run.from_records(["q1", "q2", "q3"], ["x", "y", "z"], [1, 1, 1], name="blind")
    table = evaluate(qrels, [good, blind], metrics=["first_rel_rank", "ndcg"], k=[10]).table
    for method in ("bootstrap", "t"):
        got = summarize_with_intervals(table, method=method, n_resamples=100, aggregates=True)
        row = got[(got["run"] == "blind") & (got["metric"] == "first_rel_rank")].iloc[0]
        assert row["n"] == 0 and np.isnan(row["mean"]) and np.isnan(row["median"])
        assert all(np.isnan(row[c]) for c in ("ci_low", "ci_high", "aggregate", "aggregate_ci_low",
                                              "aggregate_ci_high"))
        nd = got[(got["run"] == "blind") & (got["metric"] == "ndcg")].iloc[0]
        assert nd["n"] == 3 and nd["mean"] == 0.0 and nd["ci_low"] == nd["ci_high"] == 0.0
        alone = summarize_with_intervals(table[table["run"] == "good"], method=method, n_resamples=100,
                                         aggregates=True)
        pd.testing.assert_frame_equal(got[got["run"] == "good"].reset_index(drop=True), alone)
        ci = mean_intervals(table, method=method, n_resamples=100)
        assert not ((ci["run"] == "blind") & (ci["metric"] == "first_rel_rank")).any()
        assert len(ci) == len(got) - 1

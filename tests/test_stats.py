"""Tests of evalcore.stats: paired tests, corrections, comparisons paired by query id."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalcore.errors import OptionError
from evalcore.stats import (
    NOTE_NO_QUERY,
    NOTE_TOO_FEW,
    NOTE_TOO_SMALL,
    PairedTestResult,
    adjust_pvalues,
    compare,
    compare_by_domain,
    compare_many,
    paired_test,
    win_tie_loss,
)
from evalcore.stats.paired import sign_flip_test

COLUMNS = ["run", "query_id", "domain", "metric", "k", "value"]
NR = 2000  # resamples in tests (fast)


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


def scipy_rng(func, seed):
    """The seeded-generator keyword the installed SciPy accepts."""
    import inspect

    key = "rng" if "rng" in inspect.signature(func).parameters else "random_state"
    return {key: np.random.default_rng(seed)}


def mean_diff(x, y, axis=-1):
    return np.mean(y - x, axis=axis)


def random_runs(n_queries=40, seed=0, shifts=None):
    """{run: {query: value}} with realistic, clipped, partly tied values."""
    rng = np.random.default_rng(seed)
    shifts = shifts or {"bm25": 0.0, "dense": 0.08, "hybrid": 0.12}
    base = rng.random(n_queries) * 0.8
    out = {}
    for run, s in shifts.items():
        v = np.clip(base + s + rng.normal(0, 0.15, n_queries), 0, 1)
        out[run] = {f"q{i:03d}": float(np.round(x, 2)) for i, x in enumerate(v)}
    return out


# --------------------------------------------------------------------------- paired_test vs scipy


@pytest.fixture
def ab():
    rng = np.random.default_rng(42)
    a = rng.random(30)
    b = np.clip(a + rng.normal(0.05, 0.1, 30), 0, 1)
    return a, b


def test_t_equals_ttest_rel(ab):
    a, b = ab
    r = paired_test(a, b, test="t", n_resamples=NR, seed=1)
    ref = sps.ttest_rel(b, a)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert r.n == 30 and r.test == "t" and r.note == ""
    assert r.mean_a == pytest.approx(a.mean()) and r.mean_b == pytest.approx(b.mean())
    assert r.diff == pytest.approx((b - a).mean())
    assert r.diff > 0 and r.statistic > 0  # b better -> positive


@pytest.mark.parametrize("zero_method", ["wilcox", "zsplit", "pratt"])
def test_wilcoxon_equals_scipy(zero_method):
    rng = np.random.default_rng(5)
    a = np.round(rng.random(60), 1)  # rounding creates zero differences and ties
    b = np.round(np.clip(a + rng.normal(0.05, 0.2, 60), 0, 1), 1)
    assert np.any(a == b)
    r = paired_test(a, b, test="wilcoxon", zero_method=zero_method, n_resamples=NR)
    ref = sps.wilcoxon(b, a, zero_method=zero_method)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("n", [8, 10])  # 2**n <= NR: every sign vector, as scipy enumerates them
def test_permutation_exact_equals_scipy(n):
    rng = np.random.default_rng(n)
    a = np.round(rng.random(n), 1)  # rounding: zero differences and ties among |d|
    b = np.round(np.clip(a + rng.normal(0.05, 0.2, n), 0, 1), 1)
    r = paired_test(a, b, test="permutation", n_resamples=NR, seed=11)
    ref = sps.permutation_test((a, b), mean_diff, permutation_type="samples", vectorized=True, n_resamples=NR)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.statistic == pytest.approx(np.mean(b - a), rel=1e-12)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def sign_flip_oracle(d: np.ndarray, n_resamples: int, seed: int) -> float:
    """The documented draw, one sign vector at a time, counted with fractions-free integer sums."""
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.integers(0, 2, size=(min(50, n_resamples - s), len(d)), dtype=np.int8)
                           for s in range(0, n_resamples, 50)])
    scale = 10**6  # the test's differences have 6 decimals: exact integer arithmetic
    di = np.round(d * scale).astype(np.int64)
    obs = int(di.sum())
    null = [int(np.where(row == 1, di, -di).sum()) for row in rows]
    le, ge = sum(v <= obs for v in null), sum(v >= obs for v in null)
    return min(1.0, 2 * min((le + 1) / (n_resamples + 1), (ge + 1) / (n_resamples + 1)))


@pytest.mark.parametrize("n", [30, 400])
def test_permutation_random_sign_flips(n):
    """Random case: the documented draw (an integer oracle), scipy's p within Monte Carlo error, the seed."""
    rng = np.random.default_rng(n)
    a = np.round(rng.random(n), 6)
    b = np.round(np.clip(a + rng.normal(0.03, 0.2, n), 0, 1), 6)
    b[: n // 5] = a[: n // 5]  # zero differences: flips that change nothing must count as ties
    r = paired_test(a, b, test="permutation", n_resamples=NR, seed=11)
    assert r.p_value == sign_flip_oracle(b - a, NR, 11)
    big = 20_000
    ref = sps.permutation_test((a, b), mean_diff, permutation_type="samples", vectorized=True, n_resamples=big,
                               **scipy_rng(sps.permutation_test, 5))
    se = math.sqrt(max(ref.pvalue * (1 - ref.pvalue), 1e-4) * (1 / NR + 1 / big))
    assert abs(r.p_value - ref.pvalue) < 5 * se
    assert paired_test(a, b, test="permutation", n_resamples=NR, seed=11) == r
    assert sign_flip_test(b - a, n_resamples=NR, seed=11) == (r.statistic, r.p_value)
    with pytest.raises(OptionError, match="at least one"):
        sign_flip_test([], n_resamples=NR)


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_bootstrap_ci_equals_scipy(ab, method):
    a, b = ab
    r = paired_test(a, b, n_resamples=NR, seed=7, confidence=0.9, ci_method=method)
    ref = sps.bootstrap(
        (a, b), mean_diff, paired=True, vectorized=True, n_resamples=NR, confidence_level=0.9,
        method=method, **scipy_rng(sps.bootstrap, 7),
    )  # fmt: skip
    assert r.ci_low == pytest.approx(ref.confidence_interval.low, rel=1e-12)
    assert r.ci_high == pytest.approx(ref.confidence_interval.high, rel=1e-12)
    assert r.ci_low < r.diff < r.ci_high
    other = paired_test(a, b, n_resamples=NR, seed=8, confidence=0.9, ci_method=method)
    assert (other.ci_low, other.ci_high) != (r.ci_low, r.ci_high)


def test_effect_size_hand_formula():
    a = [0.2, 0.5, 0.1, 0.9, 0.4]
    b = [0.3, 0.5, 0.4, 0.8, 0.9]
    d = [y - x for x, y in zip(a, b, strict=True)]
    mean = sum(d) / len(d)
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1))
    r = paired_test(a, b, n_resamples=NR)
    assert r.effect_size == pytest.approx(mean / sd, rel=1e-12)
    assert (r.wins, r.ties, r.losses) == (3, 1, 1)


def test_win_tie_loss_tolerance():
    a = [0.5, 0.5, 0.5, 0.5]
    b = [0.5, 0.51, 0.4, 0.9]
    assert win_tie_loss(a, b) == (2, 1, 1)
    assert win_tie_loss(a, b, tolerance=0.02) == (1, 2, 1)
    assert win_tie_loss(a, b, tolerance=1.0) == (0, 4, 0)
    with pytest.raises(OptionError):
        win_tie_loss(a, b, tolerance=-1)
    r = paired_test(a, b, tie_tolerance=0.02, n_resamples=NR)
    assert (r.wins, r.ties, r.losses) == (1, 2, 1)


def test_series_are_aligned_by_index(ab):
    a, b = ab
    ids = [f"q{i}" for i in range(len(a))]
    sa = pd.Series(a, index=ids)
    sb = pd.Series(b, index=ids).sample(frac=1.0, random_state=1)
    assert paired_test(sa, sb, n_resamples=NR) == paired_test(a, b, n_resamples=NR)
    with pytest.raises(OptionError, match="differ"):
        paired_test(sa, sb.rename(index={"q0": "zz"}), n_resamples=NR)


def test_result_is_frozen(ab):
    r = paired_test(*ab, n_resamples=NR)
    assert isinstance(r, PairedTestResult)
    with pytest.raises(AttributeError):
        r.p_value = 0.5  # type: ignore[misc]
    assert r.to_dict()["p_value"] == r.p_value


# --------------------------------------------------------------------------- degenerate cases


@pytest.mark.parametrize("test", ["t", "wilcoxon", "permutation"])
def test_identical_runs(test):
    a = [0.1, 0.5, 0.5, 1.0, 0.0]
    r = paired_test(a, list(a), test=test, n_resamples=NR)
    assert (r.statistic, r.p_value, r.effect_size) == (0.0, 1.0, 0.0)
    assert (r.ci_low, r.ci_high, r.diff) == (0.0, 0.0, 0.0)
    assert (r.wins, r.ties, r.losses) == (0, 5, 0)
    assert "zero" in r.note


def test_float_noise_counts_as_identical():
    a = [0.3, 0.3, 0.3]
    b = [0.1 + 0.2] * 3  # 0.30000000000000004
    r = paired_test(a, b, n_resamples=NR)
    assert r.p_value == 1.0 and r.statistic == 0.0 and r.effect_size == 0.0
    assert "zero" in r.note


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_constant_difference(sign):
    a = np.array([0.1, 0.2, 0.3, 0.5, 0.6])
    b = a + sign * 0.25  # constant up to floating-point noise
    r = paired_test(a, b, test="t", n_resamples=NR)
    assert r.statistic == sign * math.inf and r.p_value == 0.0
    assert r.effect_size == sign * math.inf
    assert r.ci_low == pytest.approx(sign * 0.25) and r.ci_high == pytest.approx(sign * 0.25)
    assert "constant" in r.note
    # wilcoxon and permutation computed normally by scipy
    w = paired_test(a, b, test="wilcoxon", n_resamples=NR)
    assert w.p_value == pytest.approx(sps.wilcoxon(b, a).pvalue)
    assert w.effect_size == sign * math.inf and "constant" in w.note
    p = paired_test(a, b, test="permutation", n_resamples=NR)
    assert p.p_value == pytest.approx(2 / 2**5)  # exact: only the all-same-sign flips
    assert p.statistic == pytest.approx(sign * 0.25)


@pytest.mark.parametrize("test", ["t", "wilcoxon", "permutation"])
def test_single_query_not_testable(test):
    r = paired_test([0.2], [0.7], test=test, n_resamples=NR)
    assert r.n == 1 and r.note == NOTE_TOO_FEW
    assert r.mean_a == 0.2 and r.mean_b == 0.7 and r.diff == pytest.approx(0.5)
    assert all(math.isnan(v) for v in (r.p_value, r.statistic, r.ci_low, r.ci_high, r.effect_size))
    assert (r.wins, r.ties, r.losses) == (1, 0, 0)


def test_no_query_not_testable():
    r = paired_test([], [], n_resamples=NR)
    assert r.n == 0 and r.note == NOTE_NO_QUERY  # not a small sample: nothing to pair
    assert math.isnan(r.p_value) and math.isnan(r.mean_a) and math.isnan(r.diff)
    assert (r.wins, r.ties, r.losses) == (0, 0, 0)


def test_all_ties_with_tolerance_still_tested():
    a = [0.50, 0.60, 0.70, 0.80]
    b = [0.505, 0.595, 0.705, 0.80]
    r = paired_test(a, b, tie_tolerance=0.01, n_resamples=NR)
    assert (r.wins, r.ties, r.losses) == (0, 4, 0)
    assert r.p_value == pytest.approx(sps.ttest_rel(b, a).pvalue)


@pytest.mark.parametrize(
    "a, b",
    [([0.1, np.nan], [0.2, 0.3]), ([0.1, 0.2], [np.inf, 0.3]), ([0.1, 0.2], [0.2]),
     ([[0.1, 0.2]], [[0.2, 0.3]]), (["x", "y"], [0.1, 0.2])],
)  # fmt: skip
def test_bad_inputs(a, b):
    with pytest.raises(OptionError):
        paired_test(a, b, n_resamples=NR)


@pytest.mark.parametrize(
    "kw",
    [{"test": "anova"}, {"n_resamples": 0}, {"seed": -1}, {"seed": 1.5}, {"confidence": 1.0},
     {"zero_method": "x"}, {"ci_method": "bca"}],
)  # fmt: skip
def test_bad_options(kw):
    with pytest.raises(OptionError):
        paired_test([0.1, 0.2, 0.3], [0.2, 0.2, 0.5], **kw)


# --------------------------------------------------------------------------- corrections


def test_holm_and_bonferroni_hand_examples():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04,
    # then running maximum -> 0.02, 0.03, 0.06, 0.06; back in input order:
    np.testing.assert_allclose(adjust_pvalues(p, method="holm"), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(adjust_pvalues(p, method="bonferroni"), [0.04, 0.16, 0.12, 0.02])
    np.testing.assert_allclose(adjust_pvalues(p, method="none"), p)
    # capped at 1
    np.testing.assert_allclose(adjust_pvalues([0.5, 0.6], method="holm"), [1.0, 1.0])
    np.testing.assert_allclose(adjust_pvalues([0.5, 0.6], method="bonferroni"), [1.0, 1.0])


def test_nan_left_out_of_correction():
    out = adjust_pvalues([0.01, np.nan, 0.04], method="holm")  # m = 2, not 3
    np.testing.assert_allclose(out, [0.02, np.nan, 0.04])
    out = adjust_pvalues([0.01, np.nan, 0.04], method="bonferroni")
    np.testing.assert_allclose(out, [0.02, np.nan, 0.08])
    assert np.isnan(adjust_pvalues([np.nan], method="bh")).all()
    assert adjust_pvalues([], method="holm").shape == (0,)
    with pytest.raises(OptionError):
        adjust_pvalues([0.1, 1.2])
    with pytest.raises(OptionError):
        adjust_pvalues([0.1], method="fdr")


def holm_rejects(p, alpha):
    """Textbook step-down Holm: reject H_(1..i) while p_(j) <= alpha / (m - j + 1)."""
    order = np.argsort(p)
    m = len(p)
    rejected = np.zeros(m, dtype=bool)
    for j, idx in enumerate(order):
        if p[idx] <= alpha / (m - j):
            rejected[idx] = True
        else:
            break
    return rejected


def test_holm_equals_step_down_procedure_and_is_monotone():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.random(12) ** 3
        adj = adjust_pvalues(p, method="holm")
        for alpha in (0.01, 0.05, 0.1, 0.2):
            np.testing.assert_array_equal(adj <= alpha, holm_rejects(p, alpha))
        order = np.argsort(p)
        assert np.all(np.diff(adj[order]) >= 0)  # monotone in the raw p-values
        assert np.all(adj >= p) and np.all(adj <= 1)
        assert np.all(adj <= adjust_pvalues(p, method="bonferroni") + 1e-15)
        bh = adjust_pvalues(p, method="bh")
        np.testing.assert_allclose(bh, sps.false_discovery_control(p, method="bh"))
        assert np.all(bh <= adj + 1e-15)


# --------------------------------------------------------------------------- compare


@pytest.fixture
def runs3():
    return random_runs(40, seed=1)


def test_compare_pairs_match_paired_test(runs3):
    table = make_table(runs3)
    out = compare(table, metric="ndcg", k=10, n_resamples=NR, correction="none")
    assert list(zip(out.run_a, out.run_b, strict=True)) == [
        ("bm25", "dense"), ("bm25", "hybrid"), ("dense", "hybrid")
    ]
    for row in out.itertuples(index=False):
        qs = sorted(runs3[row.run_a])
        a = [runs3[row.run_a][q] for q in qs]
        b = [runs3[row.run_b][q] for q in qs]
        ref = sps.ttest_rel(b, a)
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-10)
        assert row.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert row.n == 40 and row.n_unpaired == 0 and row.k == 10 and row.metric == "ndcg"
        assert row.diff == pytest.approx(np.mean(b) - np.mean(a))
        assert row.p_adjusted == row.p_value and row.correction == "none"
        assert row.wins + row.ties + row.losses == 40


def test_compare_is_paired_by_query_id_not_position(runs3):
    table = make_table(runs3)
    kw = dict(metric="ndcg", k=10, n_resamples=NR, seed=3)
    for test in ("t", "permutation", "wilcoxon"):
        ref = compare(table, test=test, **kw)
        # 1. shuffle every row
        shuffled = table.sample(frac=1.0, random_state=9).reset_index(drop=True)
        pd.testing.assert_frame_equal(compare(shuffled, test=test, **kw), ref)
        # 2. reorder the rows of one run only
        dense = table[table.run == "dense"].iloc[::-1]
        reordered = pd.concat([table[table.run != "dense"], dense], ignore_index=True)
        pd.testing.assert_frame_equal(compare(reordered, test=test, **kw), ref)
        # 3. rename every query (consistently in all runs), changing their sort order
        renamed = table.assign(query_id=table.query_id.map(lambda q: "id-" + q[::-1]))
        pd.testing.assert_frame_equal(compare(renamed, test=test, **kw), ref)
    # positional pairing would differ: a run whose values are reversed in position
    # but kept with their ids must give the same result as above (checked in 2),
    # and a run whose ids are permuted must not.
    perm = table.copy()
    mask = perm.run == "dense"
    perm.loc[mask, "query_id"] = perm.loc[mask, "query_id"].to_numpy()[::-1]
    other = compare(perm, test="t", **kw)
    assert not np.isclose(other.p_value[0], compare(table, test="t", **kw).p_value[0])


def test_compare_unpaired_queries_counted(runs3):
    runs = {r: dict(v) for r, v in runs3.items()}
    del runs["dense"]["q005"]
    runs["dense"]["extra"] = 0.5
    table = make_table(runs)
    out = compare(table, metric="ndcg", k=10, n_resamples=NR).set_index(["run_a", "run_b"])
    assert out.loc[("bm25", "dense"), "n"] == 39
    assert out.loc[("bm25", "dense"), "n_unpaired"] == 2
    assert out.loc[("bm25", "hybrid"), "n"] == 40
    assert out.loc[("bm25", "hybrid"), "n_unpaired"] == 0
    qs = [q for q in runs["bm25"] if q in runs["dense"]]
    ref = sps.ttest_rel([runs["dense"][q] for q in qs], [runs["bm25"][q] for q in qs])
    assert out.loc[("bm25", "dense"), "p_value"] == pytest.approx(ref.pvalue, rel=1e-10)


def test_compare_baseline_and_correction(runs3):
    table = make_table(runs3)
    out = compare(table, metric="ndcg", k=10, baseline="dense", n_resamples=NR, alpha=0.05)
    assert list(zip(out.run_a, out.run_b, strict=True)) == [("dense", "bm25"), ("dense", "hybrid")]
    assert out["diff"][0] < 0  # bm25 is worse than dense by construction
    np.testing.assert_allclose(out.p_adjusted, adjust_pvalues(out.p_value, method="holm"))
    np.testing.assert_array_equal(out.significant, out.p_adjusted < 0.05)
    assert (out.correction == "holm").all() and (out.test == "t").all()
    bonf = compare(table, metric="ndcg", k=10, baseline="dense", correction="bonferroni",
                   n_resamples=NR)  # fmt: skip
    np.testing.assert_allclose(bonf.p_adjusted, np.minimum(1, 2 * bonf.p_value))
    sub = compare(table, metric="ndcg", k=10, runs=["hybrid", "bm25"], n_resamples=NR)
    assert list(zip(sub.run_a, sub.run_b, strict=True)) == [("hybrid", "bm25")]


def test_compare_untestable_pair_left_out_of_correction():
    table = make_table(
        {
            "a": {"q1": 0.1, "q2": 0.4, "q3": 0.3, "q4": 0.8},
            "b": {"q1": 0.3, "q2": 0.5, "q3": 0.2, "q4": 0.9},
            "c": {"q1": 0.9, "x": 0.1},  # shares one query with a and b
        }
    )
    out = compare(table, metric="ndcg", k=10, n_resamples=NR, correction="bonferroni")
    out = out.set_index(["run_a", "run_b"])
    for pair in [("a", "c"), ("b", "c")]:
        assert out.loc[pair, "n"] == 1 and out.loc[pair, "note"] == NOTE_TOO_FEW
        assert np.isnan(out.loc[pair, "p_value"]) and np.isnan(out.loc[pair, "p_adjusted"])
        assert not out.loc[pair, "significant"]
        assert out.loc[pair, "n_unpaired"] == 4
    # only one testable pair: Bonferroni with m = 1 leaves it unchanged
    assert out.loc[("a", "b"), "p_adjusted"] == pytest.approx(out.loc[("a", "b"), "p_value"])


def test_compare_errors(runs3):
    table = make_table(runs3)
    with pytest.raises(OptionError, match="available"):
        compare(table, metric="ndcg", k=5, n_resamples=NR)
    with pytest.raises(OptionError, match="available"):
        compare(table, metric="ndcg", k=10, runs=["bm25", "nope"], n_resamples=NR)
    with pytest.raises(OptionError):
        compare(table, metric="ndcg", k=10, baseline="nope", n_resamples=NR)
    with pytest.raises(OptionError):
        compare(table, metric="ndcg", k=10, correction="fdr", n_resamples=NR)
    with pytest.raises(OptionError):
        compare(table, metric="ndcg", k=10, alpha=0, n_resamples=NR)
    bad = table.copy()
    bad.loc[3, "value"] = np.inf
    with pytest.raises(OptionError, match="non-finite"):
        compare(bad, metric="ndcg", k=10, n_resamples=NR)
    with pytest.raises(OptionError, match="more than once"):
        compare(pd.concat([table, table.iloc[[0]]]), metric="ndcg", k=10, n_resamples=NR)


def test_compare_does_not_mutate_input(runs3):
    table = make_table(runs3, domains={f"q{i:03d}": "d" for i in range(40)})
    before = table.copy(deep=True)
    compare(table, metric="ndcg", k=10, n_resamples=NR)
    compare_by_domain(table, metric="ndcg", k=10, baseline="bm25", n_resamples=NR)
    pd.testing.assert_frame_equal(table, before)


# --------------------------------------------------------------------------- compare_many


def test_compare_many_corrects_across_everything():
    parts = []
    for i, (metric, k) in enumerate([("ndcg", 10), ("recall", 100), ("mrr", 0)]):
        parts.append(make_table(random_runs(30, seed=10 + i), metric=metric, k=k))
    table = pd.concat(parts, ignore_index=True)
    out = compare_many(table, n_resamples=NR)
    assert len(out) == 3 * 3
    assert list(dict.fromkeys(zip(out.metric, out.k, strict=True))) == [
        ("mrr", 0), ("ndcg", 10), ("recall", 100)
    ]
    np.testing.assert_allclose(out.p_adjusted, adjust_pvalues(out.p_value, method="holm"))
    # the raw p-values are those of the single-metric comparisons ...
    single = pd.concat(
        [compare(table, metric=m, k=k, n_resamples=NR) for m, k in [("mrr", 0), ("ndcg", 10),
                                                                     ("recall", 100)]],
        ignore_index=True,
    )  # fmt: skip
    np.testing.assert_allclose(out.p_value, single.p_value)
    # ... but the correction covers all 9 tests, not 3 at a time
    assert np.all(out.p_adjusted >= single.p_adjusted - 1e-15)
    assert np.any(out.p_adjusted > single.p_adjusted)
    some = compare_many(table, metrics_k=[("ndcg", 10), ("mrr", 0)], baseline="bm25",
                        correction="bh", n_resamples=NR)  # fmt: skip
    assert len(some) == 4
    np.testing.assert_allclose(some.p_adjusted, sps.false_discovery_control(some.p_value))
    with pytest.raises(OptionError):
        compare_many(table, metrics_k=[("ndcg", 3)], n_resamples=NR)


# --------------------------------------------------------------------------- compare_by_domain


def test_compare_by_domain():
    runs = random_runs(30, seed=4)
    domains = {q: ("bio" if i < 26 else "law") for i, q in enumerate(sorted(runs["bm25"]))}
    table = make_table(runs, domains=domains)
    out = compare_by_domain(table, metric="ndcg", k=10, baseline="bm25", n_resamples=NR,
                            min_queries=5)  # fmt: skip
    assert list(out.columns[:3]) == ["domain", "run_a", "run_b"]
    assert list(zip(out.domain, out.run_b, strict=True)) == [
        ("bio", "dense"), ("bio", "hybrid"), ("law", "dense"), ("law", "hybrid")
    ]
    law = out[out.domain == "law"]
    assert (law.n == 4).all()
    assert law.note.str.startswith(NOTE_TOO_SMALL).all()
    assert law.p_value.isna().all() and law.p_adjusted.isna().all() and not law.significant.any()
    assert law["diff"].notna().all()  # descriptive columns are kept
    bio = out[out.domain == "bio"].reset_index(drop=True)
    assert (bio.n == 26).all() and (bio.note == "").all()
    # equals the plain comparison restricted to the domain's queries
    ref = compare(table[table.domain == "bio"], metric="ndcg", k=10, baseline="bm25",
                  n_resamples=NR)  # fmt: skip
    np.testing.assert_allclose(bio.p_value, ref.p_value)
    np.testing.assert_allclose(bio.ci_low, ref.ci_low)
    np.testing.assert_allclose(bio.p_adjusted, adjust_pvalues(bio.p_value, method="holm"))
    # with a lower threshold the small domain is tested and enters the correction
    out3 = compare_by_domain(table, metric="ndcg", k=10, baseline="bm25", n_resamples=NR,
                             min_queries=3)  # fmt: skip
    assert out3.p_value.notna().all()
    np.testing.assert_allclose(out3.p_adjusted, adjust_pvalues(out3.p_value, method="holm"))
    with pytest.raises(OptionError):
        compare_by_domain(table, metric="ndcg", k=10, baseline="bm25", min_queries=1)


def test_compare_by_domain_missing_run_in_domain():
    table = make_table(
        {"base": {"q1": 0.1, "q2": 0.2, "q3": 0.3}, "new": {"q1": 0.2, "q2": 0.2}},
        domains={"q1": "a", "q2": "a", "q3": "b"},
    )
    out = compare_by_domain(table, metric="ndcg", k=10, baseline="base", min_queries=2,
                            n_resamples=NR).set_index("domain")  # fmt: skip
    assert out.loc["b", "n"] == 0 and out.loc["b", "n_unpaired"] == 1
    assert out.loc["b", "note"].startswith(NOTE_TOO_SMALL)
    assert out.loc["a", "n"] == 2 and out.loc["a", "wins"] == 1 and out.loc["a", "ties"] == 1


def test_bca_undefined_falls_back_to_percentile(ab, monkeypatch):
    import evalcore.stats as st

    real = st.paired._bootstrap_ci

    def fake(x, y, n_resamples, seed, confidence, method, batch):
        if method == "BCa":
            return float("nan"), float("nan")
        return real(x, y, n_resamples, seed, confidence, method, batch)

    monkeypatch.setattr(st.paired, "_bootstrap_ci", fake)
    a, b = ab
    r = st.paired_test(a, b, n_resamples=NR, seed=2)
    ref = sps.bootstrap(
        (a, b), mean_diff, paired=True, vectorized=True, n_resamples=NR, method="percentile",
        **scipy_rng(sps.bootstrap, 2),
    )  # fmt: skip
    assert r.ci_low == pytest.approx(ref.confidence_interval.low)
    assert r.ci_high == pytest.approx(ref.confidence_interval.high)
    assert "percentile" in r.note


def test_scipy_stats_is_imported_only_by_the_first_test_that_needs_it() -> None:
    """``import evalcore.workspace`` (a training script's hook) does not import scipy.stats (~0.6 s);
    the first significance test does, and gives what scipy gives."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys\n"
        "from evalcore import Workspace\nimport evalcore.workspace, evalcore.stats\n"
        "print('scipy.stats' in sys.modules)\n"
        "from evalcore.stats import paired_test\n"
        "r = paired_test([0.1, 0.5, 0.3, 0.9, 0.4], [0.2, 0.7, 0.3, 1.0, 0.8], test='t')\n"
        "from scipy.stats import ttest_rel\n"
        "print('scipy.stats' in sys.modules, r.p_value == ttest_rel([0.2, 0.7, 0.3, 1.0, 0.8], "
        "[0.1, 0.5, 0.3, 0.9, 0.4]).pvalue)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(Path(__file__).resolve().parents[1]))
    assert out.stdout.split() == ["False", "True", "True"], out.stdout + out.stderr

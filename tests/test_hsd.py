"""Tukey's HSD across many runs (issue 11 item 10).

* ``design="independent"`` equals ranx (``ranx.compare(..., stat_test="tukey")`` end to end, and
  ``ranx.statistical_tests.tukey_hsd_test``) and scipy's ``tukey_hsd`` intervals;
* ``design="paired"``: with two runs it is the paired t-test (scipy ``ttest_rel``); with more,
  its residual mean square equals the two-way ANOVA's, computed here as the residual of a
  least-squares fit with run and query indicator columns; query offsets do not change it;
* table handling: complete blocks, dropped queries, degenerate cases, options.
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalcore import Qrels, Run, evaluate
from evalcore.errors import OptionError
from evalcore.stats import HSD_COLUMNS, tukey_hsd, tukey_hsd_values

pytestmark = pytest.mark.filterwarnings("ignore:unsafe cast from uint64:Warning")  # ranx's numba code


def long_table(values: np.ndarray, runs: list[str], queries: list[str] | None = None) -> pd.DataFrame:
    n, m = values.shape
    queries = queries or [f"q{i}" for i in range(n)]
    return pd.DataFrame({
        "run": np.repeat(runs, n), "query_id": queries * m, "domain": "", "metric": "ndcg", "k": 10,
        "value": values.T.reshape(-1),
    })  # fmt: skip


def test_independent_design_equals_ranx_end_to_end():
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(1)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(30, 8, replace=False)} for i in range(40)}
    runs = {}
    for r in range(4):
        runs[f"r{r}"] = {q: {f"d{j}": float(rng.random() + 0.05 * r * (f"d{j}" in qrels[q]))
                             for j in rng.choice(30, 15, replace=False)} for q in qrels}  # fmt: skip
    report = ranx.compare(ranx.Qrels(qrels), [ranx.Run(d, name=n) for n, d in runs.items()],
                          metrics=["recall@10"], stat_test="tukey")  # fmt: skip
    ev = evaluate(Qrels.from_dict(qrels), {n: Run.from_dict(d, name=n) for n, d in runs.items()},
                  metrics=["recall"], k=[10])  # fmt: skip
    res = tukey_hsd(ev.table, metric="recall", k=10, runs=list(runs), design="independent")
    assert len(res) == 6
    for row in res.itertuples(index=False):
        theirs = report.comparisons[row.run_a, row.run_b]["recall@10"]["p_value"]
        assert math.isclose(row.p_value, theirs, rel_tol=1e-12, abs_tol=1e-15)


def test_independent_design_equals_ranx_function_and_scipy_intervals():
    tukey_hsd_test = pytest.importorskip("ranx.statistical_tests").tukey_hsd_test
    x = np.random.default_rng(2).random((25, 5)) + np.arange(5) * 0.05
    names = [f"r{j}" for j in range(5)]
    ours = tukey_hsd_values(x, design="independent", confidence=0.9)
    for rec in tukey_hsd_test(names, list(x.T), max_p=0.05):
        i, j = names.index(rec["control"]), names.index(rec["treatment"])
        assert math.isclose(ours["p_value"][i, j], rec["p-value"], rel_tol=1e-12, abs_tol=1e-15)
    ci = stats.tukey_hsd(*x.T).confidence_interval(0.9)
    assert np.allclose(ours["ci_low"], ci.low.T, rtol=0, atol=1e-12)
    assert np.allclose(ours["diff"], x.mean(axis=0)[None, :] - x.mean(axis=0)[:, None], atol=1e-15)
    # two groups: the pooled two-sample t-test
    two = tukey_hsd_values(x[:, :2], design="independent")
    assert math.isclose(two["p_value"][0, 1], stats.ttest_ind(x[:, 1], x[:, 0]).pvalue, rel_tol=1e-9)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_paired_design_with_two_runs_is_the_paired_t_test(seed):
    rng = np.random.default_rng(seed)
    x = rng.random((int(rng.integers(5, 60)), 2))
    x[:, 1] += rng.normal(0.05, 0.1, len(x))
    res = tukey_hsd_values(x, design="paired")
    t = stats.ttest_rel(x[:, 1], x[:, 0])
    assert math.isclose(res["p_value"][0, 1], t.pvalue, rel_tol=1e-9)
    assert math.isclose(res["statistic"][0, 1], math.sqrt(2) * abs(t.statistic), rel_tol=1e-12)
    assert res["df"] == len(x) - 1


def test_paired_design_uses_the_two_way_anova_error():
    rng = np.random.default_rng(6)
    n, m = 30, 4
    x = rng.random((n, m)) + rng.normal(0, 1, (n, 1))  # strong query effects
    # residual mean square of y ~ run + query by least squares on indicator columns
    design = np.hstack([np.ones((n * m, 1)), np.kron(np.ones((n, 1)), np.eye(m))[:, 1:],
                        np.kron(np.eye(n), np.ones((m, 1)))[:, 1:]])  # fmt: skip
    y = x.reshape(-1)
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    df = (n - 1) * (m - 1)
    mse = float(((y - design @ beta) ** 2).sum() / df)
    res = tukey_hsd_values(x, design="paired", confidence=0.95)
    assert math.isclose(res["mse"], mse, rel_tol=1e-10)
    means = x.mean(axis=0)
    q = abs(means[3] - means[1]) / math.sqrt(mse / n)
    assert math.isclose(res["p_value"][1, 3], stats.studentized_range.sf(q, m, df), rel_tol=1e-9)
    half = stats.studentized_range.ppf(0.95, m, df) * math.sqrt(mse / n)
    assert math.isclose(res["ci_high"][1, 3] - res["ci_low"][1, 3], 2 * half, rel_tol=1e-9)
    # query offsets leave the paired design unchanged, the independent one not
    shifted = x + rng.normal(0, 5, (n, 1))
    assert np.allclose(tukey_hsd_values(shifted)["p_value"], res["p_value"], atol=1e-9)
    assert not np.allclose(tukey_hsd_values(shifted, design="independent")["p_value"],
                           tukey_hsd_values(x, design="independent")["p_value"], atol=1e-3)  # fmt: skip
    # pairing finds what the independent design misses here
    assert res["p_value"].min() <= tukey_hsd_values(x, design="independent")["p_value"].min()
    # one p-value per pair, the same both ways; the diagonal is 1; every entry is scipy's sf
    np.testing.assert_array_equal(res["p_value"], res["p_value"].T)
    assert (np.diag(res["p_value"]) == 1.0).all()
    for a, b in zip(*np.triu_indices(m, 1), strict=True):
        assert res["p_value"][a, b] == np.clip(stats.studentized_range.sf(res["statistic"][a, b], m, df), 0, 1)
    # the critical value is remembered per (confidence, m, df): a second metric@k gives the same half-width
    again = tukey_hsd_values(x * 0.5, design="paired", confidence=0.95)
    assert math.isclose(again["ci_high"][1, 3] - again["ci_low"][1, 3], half * 2 * 0.5, rel_tol=1e-9)


def test_table_front_complete_blocks_and_columns():
    rng = np.random.default_rng(7)
    x = rng.random((20, 3))
    table = long_table(x, ["a", "b", "c"])
    table = table.drop(index=table.index[(table["run"] == "c") & (table["query_id"] == "q0")])
    res = tukey_hsd(table, metric="ndcg", k=10)
    assert list(res.columns) == list(HSD_COLUMNS)
    assert list(zip(res["run_a"], res["run_b"], strict=True)) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert (res["n"] == 19).all() and (res["n_dropped"] == 1).all()
    direct = tukey_hsd_values(x[1:], design="paired")
    assert np.allclose(res["p_value"], [direct["p_value"][0, 1], direct["p_value"][0, 2], direct["p_value"][1, 2]])
    assert np.allclose(res["diff"], res["mean_b"] - res["mean_a"])
    assert (res["significant"] == (res["p_value"] < 0.05)).all()


def test_degenerate_cases():
    base = np.random.default_rng(8).random((10, 1))
    shifted = np.hstack([base, base + 0.1, base])  # constant shifts: no error variance
    res = tukey_hsd(long_table(shifted, ["a", "b", "c"]), metric="ndcg", k=10)
    assert list(res["p_value"]) == [0.0, 1.0, 0.0] and "no error variance" in res["note"].iloc[0]
    one = tukey_hsd(long_table(np.array([[0.1, 0.2]]), ["a", "b"]), metric="ndcg", k=10)
    assert math.isnan(one["p_value"].iloc[0]) and "not testable" in one["note"].iloc[0]
    assert not one["significant"].iloc[0]


def test_options_are_checked():
    table = long_table(np.random.default_rng(9).random((5, 2)), ["a", "b"])
    with pytest.raises(OptionError, match="design"):
        tukey_hsd(table, metric="ndcg", k=10, design="welch")
    with pytest.raises(OptionError, match="have no"):
        tukey_hsd(table, metric="ndcg", k=10, runs=["a", "zz"])
    with pytest.raises(OptionError, match="two distinct runs"):
        tukey_hsd(table, metric="ndcg", k=10, runs=["a"])
    with pytest.raises(OptionError, match="finite"):
        tukey_hsd_values(np.array([[0.0, np.nan], [1.0, 2.0]]))


# ------------------------------------------------------------------ the table front on integer codes
#: Look-alike ids (sorted as strings, "01" < "1" < "q10" < "q2"), non-ASCII, spaces.
LOOKALIKE = ["q10", "q2", "1", "01", " q", "é", "Q2", "q1", "a b", "Z"]


def tie_heavy_table(seed: int, *, kind: str, complete: bool = False
                    ) -> tuple[pd.DataFrame, dict[tuple[str, str], float], list[str]]:
    """A metric@k slice of tie-heavy values (a few levels), some (run, query) missing unless ``complete``, another
    metric@k beside it; ``kind``: ``"category"`` (categories in no sorted order, unused ones), ``"object"`` (plain
    strings). Returns the table, its ndcg@10 values by (run, query) and the run names."""
    rng = np.random.default_rng(seed)
    runs = [f"r{j}" for j in rng.permutation(int(rng.integers(2, 5)))]
    queries = [*LOOKALIKE, *(f"t{i}" for i in range(int(rng.integers(0, 20))))]
    levels = rng.choice([0.0, 1 / 3, 0.5, 1.0, 0.1, 0.7], size=int(rng.integers(2, 5)), replace=False)
    values = {(r, q): float(rng.choice(levels)) for r in runs for q in queries if complete or rng.random() > 0.1}
    rows = [(r, q, "", "ndcg", 10, v) for (r, q), v in values.items()]
    rows += [(r, q, "", "map", 0, float(rng.random())) for r in runs for q in queries]
    order = rng.permutation(len(rows))
    table = pd.DataFrame([rows[i] for i in order], columns=["run", "query_id", "domain", "metric", "k", "value"])
    if kind == "category":
        table["run"] = pd.Categorical(table["run"], categories=rng.permutation([*runs, "unused"]).tolist())
        table["query_id"] = pd.Categorical(table["query_id"], categories=rng.permutation([*queries, "zz"]).tolist())
        table["metric"] = table["metric"].astype("category")
    return table, values, runs


def complete_matrix(values: dict[tuple[str, str], float], use: list[str]) -> tuple[np.ndarray, int]:
    """From plain Python: the values of the runs ``use`` (columns, in that order) on the queries with a value for
    every one of them (rows, in the order of their ids as strings: the pivot's), and how many queries lack one."""
    queries = sorted({q for _, q in values})  # every query of the slice (of any run)
    complete = [q for q in queries if all((r, q) in values for r in use)]
    return np.array([[values[r, q] for r in use] for q in complete], dtype=np.float64), len(queries) - len(complete)


def bits(v: float) -> int:
    return int(np.float64(v).view(np.int64))


def column_means(x: np.ndarray, order: str) -> list[float]:
    """Each column's mean as numpy sums it in that memory order: ``"C"`` (rows contiguous) query after query, left to
    right; ``"F"`` (columns contiguous) numpy's pairwise sum of the contiguous column."""
    if order == "C":
        return [functools.reduce(operator.add, x[:, j].tolist()) / len(x) for j in range(x.shape[1])]
    return [float(np.add.reduce(np.ascontiguousarray(x[:, j]))) / len(x) for j in range(x.shape[1])]


@pytest.mark.parametrize(("seed", "kind", "design", "given"), [
    (0, "category", "paired", False), (2, "object", "paired", True), (4, "category", "independent", True),
    (7, "category", "paired", True),  # (no query dropped: the other memory order)
])  # (each case ~1-4 s: the p-values and intervals are numerical integrals and root searches)
def test_on_codes_the_table_front_gives_the_kernel_the_same_matrix_bit_for_bit(seed, kind, design, given):
    """Tie-heavy data, look-alike ids: every number of the table is the kernel's (tukey_hsd_values) on the matrix
    built in plain Python, to the last bit; the independent design's p-values and intervals are scipy's own.

    The kernel's sums run in the memory order of the matrix it is given (along a contiguous axis numpy adds
    pairwise, across rows one row after another), and the table gives it the matrix as its frame lays it out (as
    before: columns contiguous when no query was dropped): the table is the kernel's on that matrix in one of the
    two orders, every column of it, means included."""
    table, values, runs = tie_heavy_table(seed, kind=kind, complete=seed == 7)
    use = runs[::-1] if given else None
    res = tukey_hsd(table, metric="ndcg", k=10, runs=use, design=design)
    names = sorted(runs) if use is None else use
    x, n_dropped = complete_matrix(values, names)
    assert n_dropped == 0 if seed == 7 else n_dropped > 0
    pairs = [(a, b) for a in range(len(names)) for b in range(a + 1, len(names))]
    assert list(zip(res["run_a"], res["run_b"], strict=True)) == [(names[a], names[b]) for a, b in pairs]
    assert all(type(r) is str for r in [*res["run_a"], *res["run_b"]])
    assert (res["n"] == len(x)).all() and (res["n_dropped"] == n_dropped).all() and len(x) >= 2

    def same(order: str, kernel: dict | None) -> bool:
        means = column_means(x, order)
        for row, (a, b) in zip(res.itertuples(index=False), pairs, strict=True):
            got = [row.mean_a, row.mean_b, row.diff]
            if [bits(v) for v in got] != [bits(means[a]), bits(means[b]), bits(means[b] - means[a])]:
                return False
            if kernel is not None and ([bits(getattr(row, c)) for c in ("p_value", "ci_low", "ci_high", "statistic")]
                                       != [bits(kernel[c][a, b]) for c in ("p_value", "ci_low", "ci_high", "statistic")]
                                       or row.df != kernel["df"] or row.note != kernel["note"]):
                return False
        return True

    layout = {"C": np.ascontiguousarray, "F": np.asfortranarray}
    orders = [o for o in ("C", "F") if same(o, None)]  # the means first (cheap); then the kernel in that order
    assert any(same(o, tukey_hsd_values(layout[o](x), design=design)) for o in orders), orders
    if design == "independent":  # scipy's entries are about mean_a - mean_b: transposed
        sp = stats.tukey_hsd(*x.T)
        ci = sp.confidence_interval(0.95)
        for row, (a, b) in zip(res.itertuples(index=False), pairs, strict=True):
            assert bits(row.p_value) == bits(sp.pvalue[b, a])
            assert bits(row.ci_low) == bits(ci.low[b, a]) and bits(row.ci_high) == bits(ci.high[b, a])


def test_categorical_and_plain_string_tables_give_the_same_table():
    """Invariant: how the ids are held (categories with unused ones and any order, or strings) changes nothing."""
    coded, _, runs = tie_heavy_table(5, kind="category")
    plain = coded.assign(run=coded["run"].astype(str), query_id=coded["query_id"].astype(str))
    pd.testing.assert_frame_equal(tukey_hsd(coded, metric="ndcg", k=10, runs=runs),
                                  tukey_hsd(plain, metric="ndcg", k=10, runs=runs), check_exact=True)


def test_no_row_of_a_categorical_table_becomes_a_string(monkeypatch):
    """The run and query names are read from the categories, each once: no ``astype(str)`` of a column (one Python
    string per row: ~0.1-0.2 s a column on the dashboard's 690,000-row slices)."""
    table, _, _ = tie_heavy_table(11, kind="category")
    real = pd.Series.astype
    converted: list[int] = []

    def spy(self, dtype, *args, **kwargs):
        if dtype is str:
            converted.append(len(self))
        return real(self, dtype, *args, **kwargs)

    monkeypatch.setattr(pd.Series, "astype", spy)
    res = tukey_hsd(table, metric="ndcg", k=10, design="paired")
    assert len(res) and converted == []


def test_run_names_come_out_as_strings_whatever_the_column_holds():
    x = np.random.default_rng(12).random((6, 2))
    table = long_table(x, ["a", "b"]).assign(run=np.repeat([7, 10], 6))  # integers: their text, sorted as text
    table["query_id"] = pd.Categorical(np.tile(np.arange(6), 2))  # integer categories
    res = tukey_hsd(table, metric="ndcg", k=10)
    assert (res["run_a"].tolist(), res["run_b"].tolist()) == (["10"], ["7"])
    assert type(res["run_a"].iloc[0]) is str and res["n"].iloc[0] == 6

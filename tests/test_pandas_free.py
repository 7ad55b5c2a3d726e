"""The command line's evaluate path without pandas: the group-statistics kernel, the results held as codes,
the pandas-free helpers, and the promise itself (a plain `evaluate` never imports pandas)."""

from __future__ import annotations

import io
import math
import os
import statistics
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import private_data
import pytest

from evalcore import Qrels, Run, evaluate
from evalcore._columns import arrow_numbers, arrow_strings, factorize_strings, positions_in, strings
from evalcore.aggregate import mean_pm_std_text, summarize
from evalcore.report import _results_by_k_csv, build_report, results_by_k
from evalcore.results import ResultColumns, group_stats

ROOT = Path(__file__).resolve().parents[1]


def _random_groups(seed: int, n: int = 3000, g: int = 40):
    rng = np.random.default_rng(seed)
    values = rng.choice([0.0, 0.1, 1 / 3, 0.5, 1.0, 2.0 / 7], size=n) + rng.normal(0, 1e-3, n) * (rng.random(n) < 0.5)
    values[rng.random(n) < 0.05] = np.nan
    groups = rng.integers(0, g, n)
    return values, groups, g


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ddof", [0, 1])
def test_group_stats_against_exact_arithmetic(seed, ddof):
    values, groups, g = _random_groups(seed)
    got = group_stats(values, groups, g, ddof=ddof)
    for i in range(g):
        x = values[(groups == i) & ~np.isnan(values)]
        assert got.n[i] == len(x)
        if len(x) == 0:
            assert math.isnan(got.mean[i]) and got.std[i] == 0.0 and got.total[i] == 0.0
            continue
        exact_mean = sum(Fraction(v) for v in x) / len(x)
        assert abs(got.mean[i] - float(exact_mean)) <= np.spacing(abs(float(exact_mean)))  # within one ulp
        assert got.total[i] == math.fsum(x)  # the correctly rounded sum
        assert got.median[i] == statistics.median(x.tolist())
        if len(x) > ddof:
            var = sum((Fraction(v) - exact_mean) ** 2 for v in x) / (len(x) - ddof)
            assert got.std[i] == pytest.approx(math.sqrt(var), rel=1e-13, abs=1e-15)
        else:
            assert got.std[i] == 0.0


@pytest.mark.parametrize("value", [0.1, 1 / 3, 0.0, 2.0 / 7, 1e-300, 0.5])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 39, 1000])
def test_group_of_equal_values_has_that_mean_and_no_spread(value, n):
    got = group_stats(np.full(n, value), np.zeros(n, dtype=np.int64), 1)
    assert (got.mean[0], got.std[0], got.median[0]) == (value, 0.0, value)


def test_mean_comes_from_the_correctly_rounded_sum():
    # a pairwise float sum of these gives 3.3833333333333337 and a mean one ulp above the exact one (a reviewer
    # saw such an ulp turn a printed 0.068 into 0.067); the exact sum, rounded once, gives the exact mean here
    values = np.array([0.05, 0.1, 0.1, 0.2, 0.2, 0.3, 1 / 3, 0.7, 0.7, 0.7])
    exact = float(sum(Fraction(v) for v in values) / len(values))
    assert float(np.add.reduce(values)) / len(values) != exact  # the precondition: the plain sum is off
    got = group_stats(values, np.zeros(len(values), dtype=np.int64), 1)
    assert got.mean[0] == exact


def test_group_stats_do_not_depend_on_row_order():
    values, groups, g = _random_groups(7)
    a = group_stats(values, groups, g)
    perm = np.random.default_rng(1).permutation(len(values))
    b = group_stats(values[perm], groups[perm], g)
    for name in ("n", "total", "mean", "std", "median"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_group_stats_rejects_bad_codes():
    with pytest.raises(ValueError, match="group codes"):
        group_stats(np.array([1.0]), np.array([3]), 2)
    with pytest.raises(ValueError, match="one length"):
        group_stats(np.array([1.0, 2.0]), np.array([0]), 1)


def _evaluation():
    rng = np.random.default_rng(3)
    qrels = Qrels.from_dict({f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(40, 6, replace=False)}
                             for i in range(60)})
    runs = [Run.from_dict({f"q{i}": {f"d{j}": float(rng.integers(0, 5)) for j in rng.choice(40, 15, replace=False)}
                           for i in range(0, 60, 1 + s)}, name=f"r{s}") for s in range(3)]
    return evaluate(qrels, runs, metrics=["ndcg", "recall", "map", "first_rel_rank", "num_ret"], k=[5, 10])


def test_evaluation_columns_and_table_are_one_table():
    ev = _evaluation()
    assert not ev.has_table  # evaluate builds the columns; the DataFrame only when asked
    table = ev.table
    back = ResultColumns.from_table(table)
    for name in ("run", "query", "domain", "metric", "k"):
        np.testing.assert_array_equal(getattr(back, name), getattr(ev.columns, name))
    np.testing.assert_array_equal(back.value, ev.columns.value)
    assert back.runs == ev.columns.runs and back.metrics == ev.columns.metrics
    assert list(table.columns) == ["run", "query_id", "domain", "metric", "k", "value"]
    assert ev.coverage.to_dict("records") == ev.coverage_rows
    more = ev.with_settings({"x": 1})
    assert more.settings["x"] == 1 and "x" not in ev.settings and more.columns is ev.columns


def test_summarize_and_report_agree_to_the_bit():
    ev = _evaluation()
    summ = summarize(ev.table, aggregates=True)
    rep = build_report(ev, include_per_query=False)["aggregates"]
    rows = [(r.run, r.metric, r.k) for r in summ.itertuples(index=False)]
    labels = [(run, lab) for run, d in rep.items() for lab in d]
    assert labels == [(str(r), m if k == 0 else f"{m}@{k}") for r, m, k in rows]  # same order
    for r in summ.itertuples(index=False):
        e = rep[str(r.run)][r.metric if r.k == 0 else f"{r.metric}@{r.k}"]
        for f in ("mean", "std", "sem", "ci_low", "ci_high", "aggregate"):
            a, b = getattr(r, f), e[f]
            assert (b is None and math.isnan(a)) or a == b, (r, f)


def test_summary_text_restricted_to_some_metrics_lists_only_their_k():
    ev = _evaluation()
    text = mean_pm_std_text(ev.table, metrics=["first_rel_rank"], runs=["r0"])
    rows = [line.split()[0] for line in text.splitlines()[3:] if line.strip()]
    assert rows == ["all"]  # not 5 and 10, the cutoffs of the other metrics


def test_results_csv_text_equals_pandas_writer():
    ev = _evaluation()
    for run in ev.runs:
        buf = io.StringIO()
        results_by_k(ev, run).to_csv(buf, index=False)
        assert _results_by_k_csv(ev.columns, run) == buf.getvalue()


def test_factorize_and_positions_equal_pandas():
    rng = np.random.default_rng(0)
    ids = np.asarray([f"x{i}é" for i in rng.integers(0, 500, 3000)], dtype=object)
    codes, uniq = factorize_strings(ids)
    pc, pu = pd.factorize(ids, sort=False)
    np.testing.assert_array_equal(codes, pc)
    assert uniq.tolist() == list(pu)
    wanted = np.asarray(["x3é", "nope", "x17é"], dtype=object)
    np.testing.assert_array_equal(positions_in(uniq, wanted), pd.Index(uniq).get_indexer(wanted))


def test_arrow_builders_round_trip():
    items = ["a", "", "ünï", 'q"1', "x" * 300]
    assert strings(arrow_strings(items)).tolist() == items
    v = np.array([0.5, np.nan, 1.0])
    arr = arrow_numbers(v, valid=~np.isnan(v))
    assert arr.null_count == 1 and arr.to_pylist() == [0.5, None, 1.0]
    assert arrow_numbers(np.array([1, 2], dtype=np.int16)).to_pylist() == [1, 2]


_PROBE = """
import sys
from evalcore.cli.main import main
code = main(sys.argv[1:])
print("PANDAS", "pandas" in sys.modules)
sys.exit(code)
"""


def _private_folders() -> dict[str, str]:
    """The test session's own data-folder variables (tests/private_data.py): the child's CLI never resolves the
    user's folders."""
    names = (*private_data.SET, *private_data.UNSET, private_data.MARKER)
    return {k: v for k, v in os.environ.items() if k in names}


def _probe(tmp_path: Path, *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=ROOT, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **_private_folders()}, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_plain_evaluate_never_imports_pandas(tmp_path):
    rng = np.random.default_rng(2)
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 d{j} {int(rng.integers(0, 3))}\n"
                                                for i in range(30) for j in rng.choice(50, 4, replace=False)))
    (tmp_path / "run.txt").write_text("".join(f"q{i} Q0 d{j} {r + 1} {1 - r / 10:.1f} x\n"
                                              for i in range(30) for r, j in enumerate(rng.choice(50, 10, False))))
    ids = np.array([f"d{i}" for i in range(50)])
    np.savez(tmp_path / "docs.npz", ids=ids, embeddings=rng.normal(size=(50, 8)).astype(np.float32))
    np.savez(tmp_path / "queries.npz", ids=np.array([f"q{i}" for i in range(30)]),
             embeddings=rng.normal(size=(30, 8)).astype(np.float32))
    common = ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--metrics", "ndcg", "map", "--k", "5", "10"]
    text = _probe(tmp_path, *common, "--run", f"bm25={tmp_path / 'run.txt'}", "--out", str(tmp_path / "a"))
    assert "PANDAS False" in text and "bm25:" in text
    text = _probe(tmp_path, *common, "--emb", f"m={tmp_path / 'docs.npz'},{tmp_path / 'queries.npz'}",
                  "--out", str(tmp_path / "b"))
    assert "PANDAS False" in text
    for name in ("per_query.csv", "report.json", "m_results.csv"):
        assert (tmp_path / "b" / name).stat().st_size > 0
    # a bare --emb DOCS,QUERIES (named after its documents file) neither
    text = _probe(tmp_path, *common, "--emb", f"{tmp_path / 'docs.npz'},{tmp_path / 'queries.npz'}")
    assert "PANDAS False" in text and "docs:" in text
    # an option that needs pandas still works (it is imported then)
    text = _probe(tmp_path, *common, "--run", f"bm25={tmp_path / 'run.txt'}", "--workspace", str(tmp_path / "ws"))
    assert "PANDAS True" in text


def test_t_intervals_of_the_dashboard_equal_the_summary_to_the_bit():
    from evalcore.intervals import mean_intervals

    ev = _evaluation()
    table = ev.table[ev.table["metric"] != "first_rel_rank"]  # (NaN-free: mean_intervals drops non-finite values)
    summ = summarize(table)
    got = mean_intervals(table, method="t")
    np.testing.assert_array_equal(got["mean"].to_numpy(), summ["mean"].to_numpy())
    many = summ["n"].to_numpy() > 1
    for col in ("ci_low", "ci_high"):
        np.testing.assert_array_equal(got[col].to_numpy()[many], summ[col].to_numpy()[many])


def test_positions_take_the_last_of_repeated_names():
    np.testing.assert_array_equal(positions_in(["a", "b", "a"], ["a", "b", "c"]), [2, 1, -1])

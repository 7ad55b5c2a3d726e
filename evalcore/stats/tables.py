"""Paired comparisons of runs from the long per-query table, with multiple-comparison corrections.

:func:`compare`, :func:`compare_many` and :func:`compare_by_domain` pair the runs by
``query_id``, test each pair with :func:`evalcore.stats.paired.paired_test` and correct the
p-values jointly (:func:`evalcore.stats.paired.adjust_pvalues`).
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from typing import Any

import numpy as np
import pandas as pd

from .._categorical import distinct_strings, isin_strings, pivot_strings
from ..aggregate import _query_domains, _select_metric_k, _validate_table, metric_at_k_label
from ..defaults import MIN_DOMAIN_QUERIES, SEED, TEST_CI_METHOD, TEST_RESAMPLES, TEST_RESAMPLING
from ..errors import OptionError
from ..intervals import bootstrap_means, percentile_interval
from ..results import exact_mean
from .paired import (
    _CI_METHODS,
    _ZERO_METHODS,
    CORRECTIONS,
    NOTE_TOO_SMALL,
    TESTS,
    PairedTestResult,
    _check_choice,
    _check_int,
    _check_prob,
    _check_tolerance,
    _paired_arrays,
    _paired_test,
    adjust_pvalues,
    win_tie_loss,
)

__all__ = ["COMPARE_COLUMNS", "RESAMPLING", "compare", "compare_many", "compare_by_domain"]

#: Bootstrap resampling schemes of the comparisons (see :func:`compare_many`).
RESAMPLING: tuple[str, ...] = ("per_pair", "shared")

COMPARE_COLUMNS: tuple[str, ...] = (
    "run_a", "run_b", "metric", "k", "n", "n_unpaired", "mean_a", "mean_b", "diff",
    "ci_low", "ci_high", "effect_size", "statistic", "p_value", "p_adjusted", "significant",
    "wins", "ties", "losses", "test", "correction", "note",
)  # fmt: skip


# --------------------------------------------------------------------------- tables


def _check_runs(runs: Sequence[str] | None) -> list[str] | None:
    if runs is None:
        return None
    runs = [runs] if isinstance(runs, str) else [str(r) for r in runs]
    if len(set(runs)) != len(runs):
        raise OptionError(f"runs lists a run twice: {runs}")
    return runs


def _wide(sel: pd.DataFrame) -> pd.DataFrame:
    """query_id x run values of one metric@k (NaN where a run lacks the query)."""
    return pivot_strings(sel, index="query_id", columns="run", values="value")


def _check_pairs(pairs: Sequence[tuple[str, str]] | None, baseline: str | None) -> list[tuple[str, str]] | None:
    """``pairs`` as a list of (str, str): each two distinct runs, no pair twice; not with a baseline."""
    if pairs is None:
        return None
    if baseline is not None:
        raise OptionError("give either baseline or pairs, not both")
    out: list[tuple[str, str]] = []
    for p in pairs:
        if isinstance(p, str) or len(p) != 2:
            raise OptionError(f"each pair must be two run names (run_a, run_b), got {p!r}")
        a, b = str(p[0]), str(p[1])
        if a == b:
            raise OptionError(f"a pair compares a run with itself: {(a, b)}")
        out.append((a, b))
    if not out:
        raise OptionError("pairs is empty: give at least one (run_a, run_b)")
    if len(set(out)) != len(out):
        raise OptionError(f"pairs lists a pair twice: {out}")
    return out


def _pairs(runs: list[str], baseline: str | None) -> list[tuple[str, str]]:
    if baseline is None:
        return list(itertools.combinations(runs, 2))
    return [(baseline, r) for r in runs if r != baseline]


def _test_pair(
    wide: pd.DataFrame, run_a: str, run_b: str, *, min_queries: int | None, kw: dict[str, Any],
    bootstrap: bool = True,
) -> tuple[PairedTestResult, int]:
    """Test one pair of columns of ``wide``; return the result and n_unpaired.

    ``kw``: options checked by :func:`_common_options`; ``bootstrap=False`` (shared resampling) leaves
    the pair's own bootstrap interval out (:func:`_shared_cis` gives the interval).

    Queries present for only one of the runs are dropped (and counted).  The
    pairs are put in a canonical order (sorted by value of A, then B) before
    testing, so that the results, random resamples included, depend only on
    the multiset of pairs, not on query ids or row order.
    """
    va = wide[run_a].to_numpy(dtype=float) if run_a in wide else np.full(len(wide), np.nan)
    vb = wide[run_b].to_numpy(dtype=float) if run_b in wide else np.full(len(wide), np.nan)
    key = (hashlib.blake2b(np.ascontiguousarray(va).tobytes() + np.ascontiguousarray(vb).tobytes(),
                           digest_size=20).digest(), len(va), min_queries, bootstrap, tuple(sorted(kw.items())))
    with _PAIRS_LOCK:
        hit = _PAIRS.get(key)
        if hit is not None:
            _PAIRS.move_to_end(key)
            return hit
    out = _tested_pair(va, vb, min_queries=min_queries, kw=kw, bootstrap=bootstrap)
    with _PAIRS_LOCK:
        _PAIRS[key] = out
        while len(_PAIRS) > _PAIRS_KEPT:
            _PAIRS.popitem(last=False)
    fresh = getattr(_FRESH, "keys", None)
    if fresh is not None:
        fresh.append(key)
    return out


#: The latest pairs tested, by their values and options (:func:`_test_pair`): a pair's result is a function of its
#: two columns of values (NaN where a run lacks the query) and the options only, so a test table computed again
#: with one more run (a checkpoint added) tests the new pairs only, and a pair tested again gives the very same
#: result (its frozen :class:`PairedTestResult`).
_PAIRS: OrderedDict = OrderedDict()
_PAIRS_KEPT = 8192
_PAIRS_LOCK = threading.Lock()
#: While :func:`fresh_pairs` runs (in this thread): the memo keys of the pairs tested, not found in :data:`_PAIRS`.
_FRESH = threading.local()
#: The columns of :func:`pair_rows` (``key``: :func:`_key_text` of the memo key, then the pair's result).
PAIR_ROW_COLUMNS: tuple[str, ...] = ("key", "n_unpaired", *(f.name for f in fields(PairedTestResult)))


def _key_text(key: tuple) -> str:
    """A memo key of :data:`_PAIRS` as text: the hex digest of the two value columns, then the rest's repr (their
    length, ``min_queries``, ``bootstrap`` and every option), the same in every process."""
    return key[0].hex() + "|" + repr(key[1:])


@contextmanager
def fresh_pairs() -> Iterator[list]:
    """A list that receives, in this thread and until the block ends, the memo key of each pair tested (each pair
    whose result was not in the memo); :func:`pair_rows` gives their results as rows to keep elsewhere."""
    before = getattr(_FRESH, "keys", None)
    _FRESH.keys = got = []
    try:
        yield got
    finally:
        _FRESH.keys = before
        if before is not None:
            before.extend(got)


def pair_rows(keys: Sequence[tuple]) -> pd.DataFrame:
    """:data:`PAIR_ROW_COLUMNS` of the pairs of ``keys`` still in the memo (the raw result of each pair: its test,
    its own interval when not shared, before any correction), to keep and give back to :func:`remember_pairs`."""
    with _PAIRS_LOCK:
        held = [(k, _PAIRS[k]) for k in dict.fromkeys(keys) if k in _PAIRS]
    return pd.DataFrame([{"key": _key_text(k), "n_unpaired": int(n), **res.to_dict()} for k, (res, n) in held],
                        columns=list(PAIR_ROW_COLUMNS))


def remember_pairs(rows: pd.DataFrame) -> int:
    """Put the pairs of ``rows`` (:func:`pair_rows`, kept by an earlier process) in the memo, so that a pair with
    the same values and options is not tested again: its result is the one kept, field for field (the pairs
    already in the memo stay). Returns how many were added. Rows without the columns are ignored."""
    if not isinstance(rows, pd.DataFrame) or [c for c in PAIR_ROW_COLUMNS if c not in rows.columns]:
        return 0
    names = [f.name for f in fields(PairedTestResult)]
    ints = {"n", "wins", "ties", "losses"}
    added = 0
    with _PAIRS_LOCK:
        known = {_key_text(k): k for k in _PAIRS}
        for rec in rows[list(PAIR_ROW_COLUMNS)].itertuples(index=False, name=None):
            text = str(rec[0])
            if text in known:
                continue
            digest, _, rest = text.partition("|")
            try:
                key = (bytes.fromhex(digest), *ast.literal_eval(rest))
                hash(key)
                res = PairedTestResult(**{n: int(v) if n in ints else str(v) if n in ("test", "note") else float(v)
                                          for n, v in zip(names, rec[2:], strict=True)})
                n_unpaired = int(rec[1])
            except (ValueError, SyntaxError, TypeError):  # another format: a miss
                continue
            _PAIRS[key] = (res, n_unpaired)
            known[text] = key
            added += 1
        while len(_PAIRS) > _PAIRS_KEPT:
            _PAIRS.popitem(last=False)
    return added


def _tested_pair(va: np.ndarray, vb: np.ndarray, *, min_queries: int | None, kw: dict[str, Any],
                 bootstrap: bool) -> tuple[PairedTestResult, int]:
    """:func:`_test_pair` of the values of the two runs (NaN: no value for the query)."""
    has_a, has_b = ~np.isnan(va), ~np.isnan(vb)
    both = has_a & has_b
    n_unpaired = int(np.count_nonzero(has_a ^ has_b))
    xa, xb = va[both], vb[both]
    order = np.lexsort((xb, xa))
    xa, xb = xa[order], xb[order]
    if min_queries is not None and len(xa) < min_queries:
        w, t, lo = win_tie_loss(xa, xb, tolerance=kw["tie_tolerance"])
        nan = float("nan")
        n = len(xa)
        res = PairedTestResult(
            n=n, mean_a=exact_mean(xa), mean_b=exact_mean(xb), diff=exact_mean(xb - xa), ci_low=nan, ci_high=nan,
            effect_size=nan,
            statistic=nan, p_value=nan, wins=w, ties=t, losses=lo, test=kw["test"],
            note=f"{NOTE_TOO_SMALL}: {n} paired queries < min_queries={min_queries}",
        )  # fmt: skip
        return res, n_unpaired
    return _paired_test(*_paired_arrays(xa, xb), **kw, bootstrap=bootstrap), n_unpaired


def _shared_cis(wide: pd.DataFrame, rows: list[dict[str, Any]], domains: np.ndarray | None,
                kw: dict[str, Any]) -> None:
    """Give each testable row the percentile interval over resamples shared by every pair.

    ``wide``: query_id x run values (index sorted by query id: the resampled units);
    ``domains``: each query's domain when ``rows`` are per domain. Rows without an
    interval (fewer than 2 paired queries, a domain too small to test) keep NaN.
    """
    if not rows or not len(wide):
        return
    cols, masks = [], []
    for r in rows:
        a = wide[r["run_a"]].to_numpy(dtype=float) if r["run_a"] in wide else np.full(len(wide), np.nan)
        b = wide[r["run_b"]].to_numpy(dtype=float) if r["run_b"] in wide else np.full(len(wide), np.nan)
        present = ~np.isnan(a) & ~np.isnan(b)
        if domains is not None:
            present &= domains == r["domain"]
        cols.append(np.where(present, b - a, 0.0))
        masks.append(present)
    means = bootstrap_means(np.stack(cols, axis=1), np.stack(masks, axis=1),
                            n_resamples=kw["n_resamples"], seed=kw["seed"])
    low, high = percentile_interval(means, kw["confidence"])
    for i, r in enumerate(rows):
        if r["n"] >= 2 and not str(r["note"]).startswith(NOTE_TOO_SMALL):
            r["ci_low"], r["ci_high"] = float(low[i]), float(high[i])


def _finish(rows: list[dict[str, Any]], columns: Sequence[str], correction: str, alpha: float) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=[c for c in columns if c not in ("p_adjusted", "significant", "correction")])
    p = out["p_value"].to_numpy(dtype=float) if len(out) else np.array([], dtype=float)
    adj = adjust_pvalues(p, method=correction)
    pos = list(out.columns).index("p_value") + 1
    out.insert(pos, "p_adjusted", adj)
    out.insert(pos + 1, "significant", np.where(np.isnan(adj), False, adj < alpha).astype(bool))
    out.insert(list(out.columns).index("test") + 1, "correction", correction)
    for col in ("n", "n_unpaired", "wins", "ties", "losses", "k"):
        out[col] = out[col].astype(np.int64)
    return out[list(columns)].reset_index(drop=True)


def _common_options(
    test: str, correction: str, alpha: float, n_resamples: int, seed: int, confidence: float,
    zero_method: str, tie_tolerance: float, ci_method: str, resampling: str = TEST_RESAMPLING,
) -> tuple[dict[str, Any], float]:
    _check_choice("resampling", resampling, RESAMPLING)
    if resampling == "shared" and ci_method != "percentile":
        raise OptionError(f"resampling='shared' gives percentile intervals: pass ci_method='percentile' "
                          f"(got {ci_method!r})")
    _check_choice("test", test, TESTS)
    _check_choice("correction", correction, CORRECTIONS)
    alpha = _check_prob("alpha", alpha)
    kw = dict(
        test=test, n_resamples=_check_int("n_resamples", n_resamples, minimum=1),
        seed=_check_int("seed", seed, minimum=0), confidence=_check_prob("confidence", confidence),
        zero_method=_check_choice("zero_method", zero_method, _ZERO_METHODS),
        tie_tolerance=_check_tolerance(tie_tolerance),
        ci_method=_check_choice("ci_method", ci_method, _CI_METHODS),
    )  # fmt: skip
    return kw, alpha


def compare_many(
    table: pd.DataFrame,
    *,
    metrics_k: Sequence[tuple[str, int]] | None = None,
    runs: Sequence[str] | None = None,
    baseline: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = TEST_RESAMPLES,
    seed: int = SEED,
    confidence: float = 0.95,
    zero_method: str = "wilcox",
    tie_tolerance: float = 0.0,
    ci_method: str = TEST_CI_METHOD,
    resampling: str = TEST_RESAMPLING,
) -> pd.DataFrame:
    r"""Paired comparisons of runs over several metric@k, corrected jointly.

    For every metric@k of ``metrics_k`` and every pair of runs (all pairs
    ``(A, B)`` with A before B in ``runs``, or ``(baseline, B)`` for every
    other run B, or exactly the given ``pairs``), the per-query values are
    paired by ``query_id`` and tested with :func:`paired_test` (``diff`` = mean of B − A).  The multiple
    comparison ``correction`` (:func:`adjust_pvalues`) is applied once across
    ALL rows (all pairs × metric@k); untestable rows (p-value NaN) are left out
    of it and keep ``p_adjusted`` NaN, ``significant`` False and their note.

    Parameters
    ----------
    table : DataFrame
        The long per-query table (:mod:`evalcore.aggregate`).  Not modified.
    metrics_k : sequence of (metric, k), optional
        Metric@k to compare; default every (metric, k) of the table, sorted.
    runs : sequence of str, optional
        Runs compared, in this order; default every run having values for the
        metric@k, sorted by name.  A listed run without values for a metric@k
        raises :class:`OptionError`.
    baseline : str, optional
        Compare every run against this one only (``run_a`` = baseline).
    pairs : sequence of (run_a, run_b), optional
        Compare exactly these pairs, in this order (e.g. each version of a model
        against the previous one); not with ``baseline``. ``runs`` defaults to the
        runs they name (in order of appearance); with ``runs`` given, every run of
        a pair must be listed (the shared resamples are drawn over the queries of
        ``runs``).
    test : {"t", "wilcoxon", "permutation"}, default "t"
    correction : {"holm", "bonferroni", "bh", "none"}, default "holm"
    alpha : float, default 0.05
        ``significant`` is ``p_adjusted < alpha``.
    n_resamples, seed, confidence, zero_method, tie_tolerance, ci_method
        Passed to :func:`paired_test` (defaults: :mod:`evalcore.defaults`, 10,000 resamples,
        seed 42, BCa).  Each pair uses ``seed`` itself, so a
        pair's result does not depend on which other pairs are compared.
    resampling : {"per_pair", "shared"}, default "per_pair"
        Resamples of the bootstrap CI of ``diff``. ``"per_pair"``: each pair's own
        (:func:`paired_test`, pairs in a canonical value order). ``"shared"``: the
        same resamples of the metric@k's queries (sorted by id) for every pair
        (:func:`evalcore.intervals.resample_counts`), so that two runs with
        identical per-query values get identical intervals against any run;
        resample ``b`` gives :math:`\sum_q w_{bq} d_q / \sum_q w_{bq}` over the
        pair's paired queries and the interval is the percentile interval
        (``ci_method`` must be ``"percentile"``).

    Returns
    -------
    DataFrame
        One row per (metric@k, pair) with columns ``run_a, run_b, metric, k, n,
        n_unpaired, mean_a, mean_b, diff, ci_low, ci_high, effect_size,
        statistic, p_value, p_adjusted, significant, wins, ties, losses, test,
        correction, note``.  ``n`` counts the paired queries, ``n_unpaired``
        the queries that only one of the two runs has (dropped).
    """
    kw, alpha = _common_options(test, correction, alpha, n_resamples, seed, confidence,
                                zero_method, tie_tolerance, ci_method, resampling)  # fmt: skip
    _validate_table(table)
    runs = _check_runs(runs)
    pairs = _check_pairs(pairs, baseline)
    if pairs is not None:
        named = list(dict.fromkeys(r for p in pairs for r in p))
        if runs is None:
            runs = named
        elif not set(named) <= set(runs):
            raise OptionError(f"pairs name run(s) {sorted(set(named) - set(runs))} that runs does not list")
    if baseline is not None:
        baseline = str(baseline)
        if runs is not None and baseline not in runs:
            runs = [baseline, *runs]
    if metrics_k is None:
        mk = table[["metric", "k"]].drop_duplicates()
        metrics_k = sorted((str(m), int(kv)) for m, kv in mk.itertuples(index=False))
    else:
        metrics_k = [(str(m), 0 if kv is None else kv) for m, kv in metrics_k]
        if len(set(metrics_k)) != len(metrics_k):
            raise OptionError(f"metrics_k lists a metric@k twice: {metrics_k}")
    rows: list[dict[str, Any]] = []
    for metric, k in metrics_k:
        sel = _select_metric_k(table, metric, k)
        present = sorted(distinct_strings(sel["run"]))
        use = present if runs is None else runs
        missing = [r for r in use if r not in present]
        if baseline is not None and baseline not in present:
            missing = sorted({*missing, baseline})
        if missing:
            raise OptionError(
                f"run(s) {missing} have no {metric_at_k_label(metric, k)!r} values; "
                f"available: {present}"
            )
        wide = _wide(sel[isin_strings(sel["run"], use)])
        start = len(rows)
        for run_a, run_b in (pairs if pairs is not None else _pairs(use, baseline)):
            res, n_unpaired = _test_pair(wide, run_a, run_b, min_queries=None, kw=kw,
                                         bootstrap=resampling != "shared")
            rows.append({"run_a": run_a, "run_b": run_b, "metric": metric, "k": int(k),
                         "n_unpaired": n_unpaired, **res.to_dict()})  # fmt: skip
        if resampling == "shared":
            _shared_cis(wide, rows[start:], None, kw)
    return _finish(rows, COMPARE_COLUMNS, correction, alpha)


def compare(
    table: pd.DataFrame,
    *,
    metric: str,
    k: int | None,
    runs: Sequence[str] | None = None,
    baseline: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = TEST_RESAMPLES,
    seed: int = SEED,
    confidence: float = 0.95,
    zero_method: str = "wilcox",
    tie_tolerance: float = 0.0,
    ci_method: str = TEST_CI_METHOD,
    resampling: str = TEST_RESAMPLING,
) -> pd.DataFrame:
    """Paired comparisons of runs on one metric@k (see :func:`compare_many`).

    Every pair of runs (or every run against ``baseline``, or the given
    ``pairs``) is paired by ``query_id`` (queries missing for one side are dropped and counted in
    ``n_unpaired``), tested with :func:`paired_test`, and the p-values of the
    pairs are corrected with ``correction``.

    Parameters
    ----------
    table : DataFrame
        The long per-query table.  Not modified.
    metric : str
        Canonical metric name.
    k : int or None
        Cutoff (``0``/``None`` = no cutoff).
    runs, baseline, pairs, test, correction, alpha, n_resamples, seed, confidence, \
zero_method, tie_tolerance, ci_method, resampling
        As in :func:`compare_many`.

    Returns
    -------
    DataFrame
        Same columns as :func:`compare_many`, one row per pair.
    """
    return compare_many(
        table, metrics_k=[(metric, k)], runs=runs, baseline=baseline, pairs=pairs, test=test,
        correction=correction, alpha=alpha, n_resamples=n_resamples, seed=seed,
        confidence=confidence, zero_method=zero_method, tie_tolerance=tie_tolerance,
        ci_method=ci_method, resampling=resampling,
    )  # fmt: skip


def compare_by_domain(
    table: pd.DataFrame,
    *,
    metric: str,
    k: int | None,
    baseline: str,
    runs: Sequence[str] | None = None,
    test: str = "t",
    min_queries: int = MIN_DOMAIN_QUERIES,
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = TEST_RESAMPLES,
    seed: int = SEED,
    confidence: float = 0.95,
    zero_method: str = "wilcox",
    tie_tolerance: float = 0.0,
    ci_method: str = TEST_CI_METHOD,
    resampling: str = TEST_RESAMPLING,
) -> pd.DataFrame:
    """Per-domain paired comparison of every run against a baseline.

    The queries are split by their domain (the ``domain`` column; ``""`` =
    unknown forms its own group, a query with two different non-empty domains
    raises :class:`OptionError`).  In each domain, each run is paired with the
    baseline by ``query_id`` and tested with :func:`paired_test`.  A domain
    with fewer than ``min_queries`` paired queries is not tested: its row keeps
    the descriptive columns (n, means, diff, wins/ties/losses) but
    ``statistic``, ``p_value``, CI and ``effect_size`` are NaN and ``note``
    starts with ``"too small to test"``.  The correction is applied across all
    tested domain × run rows.

    Parameters
    ----------
    table : DataFrame
        The long per-query table.  Not modified.
    metric, k : str, int or None
        The metric@k compared.
    baseline : str
        Run every other run is compared with (``run_a``).
    runs : sequence of str, optional
        Runs compared to the baseline; default all runs with values.
    min_queries : int, default 5
        Minimum number of paired queries for a domain to be tested (>= 2).
    test, correction, alpha, n_resamples, seed, confidence, zero_method, \
tie_tolerance, ci_method, resampling
        As in :func:`compare_many` (shared resamples: over all the metric@k's
        queries, each domain using them restricted to its queries).

    Returns
    -------
    DataFrame
        Columns ``domain`` then those of :func:`compare_many`; rows sorted by
        domain, then run in ``runs`` order.
    """
    kw, alpha = _common_options(test, correction, alpha, n_resamples, seed, confidence,
                                zero_method, tie_tolerance, ci_method, resampling)  # fmt: skip
    min_queries = _check_int("min_queries", min_queries, minimum=2)
    _validate_table(table)
    sel = _select_metric_k(table, metric, k)
    k = 0 if k is None else int(k)
    present = sorted(distinct_strings(sel["run"]))
    baseline = str(baseline)
    checked = _check_runs(runs)
    use = present if checked is None else checked
    if baseline not in use:
        use = [baseline, *use]
    missing = [r for r in use if r not in present]
    if missing:
        raise OptionError(
            f"run(s) {missing} have no {metric_at_k_label(metric, k)!r} values; available: {present}"
        )
    sel = sel[isin_strings(sel["run"], use)]
    domains = _query_domains(sel)
    wide = _wide(sel)
    rows: list[dict[str, Any]] = []
    for dom in sorted(set(domains)):
        sub = wide.loc[domains.index[domains.to_numpy() == dom]]
        for run_a, run_b in _pairs(use, baseline):
            res, n_unpaired = _test_pair(sub, run_a, run_b, min_queries=min_queries, kw=kw,
                                         bootstrap=resampling != "shared")
            rows.append({"domain": dom, "run_a": run_a, "run_b": run_b, "metric": metric,
                         "k": k, "n_unpaired": n_unpaired, **res.to_dict()})  # fmt: skip
    if resampling == "shared":
        _shared_cis(wide, rows, domains.reindex(wide.index).to_numpy(), kw)
    return _finish(rows, ("domain", *COMPARE_COLUMNS), correction, alpha)

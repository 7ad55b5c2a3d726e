r"""Confidence intervals of per-query means that stay inside a metric's range, on shared resamples.

:func:`evalcore.aggregate.summarize` gives the Student-t interval
:math:`\bar x \pm t\,s/\sqrt n`. For a metric bounded to [0, 1] (nDCG, recall, ...)
on few or skewed queries that interval leaves the range (an nDCG CI of
[-0.6, 1.6] on two queries). This module gives intervals that cannot:

``method="bootstrap"`` (the default) — the **percentile bootstrap** of the mean
(Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13). Each
resample draws the :math:`n` queries with replacement; the interval is the
:math:`(1-c)/2` and :math:`(1+c)/2` quantiles of the resampled means. Every
resampled mean is a weighted mean of observed values, so the interval lies in
``[min x_i, max x_i]``, hence in the metric's range, whatever the metric.

The resamples are **shared**: one table of resampling counts per call,
drawn over the table's query ids in sorted order (:func:`resample_counts`), is
applied to every group (every run, metric, k, domain). Two runs with identical
per-query values therefore get identical intervals, and differences between runs
are judged on the same resampled query sets. A group that lacks some queries
(a domain; a measure undefined on some queries) uses the same counts restricted
to its queries: resample :math:`b` gives :math:`\sum_q w_{bq} x_q / \sum_q w_{bq}`
over the group's queries, and resamples that draw none of them are left out.

``method="t"`` — the Student-t interval of :func:`~evalcore.aggregate.summarize`
(unbounded), for comparison with tools that report it.

Both give no interval (NaN) for :math:`n < 2`: one query says nothing about the
spread.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from ._lazy import pd
from .aggregate import _group_rows, _summary_by, _summary_frame, _validate_table
from .defaults import MEAN_CI_METHOD, MEAN_RESAMPLES, SEED
from .errors import OptionError
from .results import GroupStats, group_stats
from .summaries import check_confidence as _check_confidence
from .summaries import t_interval

__all__ = ["CI_METHODS", "DEFAULT_RESAMPLES", "CI_DESCRIPTIONS", "resample_counts", "mean_intervals", "queries_drawn",
           "bootstrap_means", "percentile_interval", "summarize_with_intervals"]

#: Interval methods of :func:`mean_intervals`.
CI_METHODS: tuple[str, ...] = ("bootstrap", "t")
#: Resamples of the bootstrap interval by default (:data:`evalcore.defaults.MEAN_RESAMPLES`).
DEFAULT_RESAMPLES = MEAN_RESAMPLES
#: One-line description of each method (for captions).
CI_DESCRIPTIONS: dict[str, str] = {
    "bootstrap": "percentile bootstrap of the mean ({n:,} resamples of the queries, the same for every run; "
                 "always inside the metric's range)",
    "t": "Student t interval of the mean (mean ± t·s/√n; not bounded to the metric's range)",
}

_BATCH = 50  # resamples per block (fixed: the counts never depend on memory)
_CELLS = 4_000_000  # queries x groups per block of groups


def _check_resamples(n_resamples: int, seed: int) -> tuple[int, int]:
    for name, v, lo in (("n_resamples", n_resamples, 1), ("seed", seed, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise OptionError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(n_resamples), int(seed)


def resample_counts(n: int, n_resamples: int, *, seed: int = SEED) -> np.ndarray:
    """How often each of ``n`` items is drawn in each bootstrap resample, shape ``(n_resamples, n)``.

    Resample ``b`` draws ``n`` items uniformly with replacement
    (``numpy.random.default_rng(seed)``, blocks of 50 resamples drawn in order),
    so row ``b`` sums to ``n``. The same ``(n, n_resamples, seed)`` always gives
    the same counts.

    Parameters
    ----------
    n : int
        Number of items (queries), >= 1.
    n_resamples : int
        Number of resamples, >= 1.
    seed : int, default 42 (:data:`evalcore.defaults.SEED`)

    Returns
    -------
    ndarray of int32, shape (n_resamples, n)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise OptionError(f"n must be an integer >= 1, got {n!r}")
    n_resamples, seed = _check_resamples(n_resamples, seed)
    return np.concatenate(list(_count_blocks(int(n), n_resamples, seed)), axis=0)


@functools.lru_cache(maxsize=1)
def _count_blocks(n: int, n_resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """The counts of :func:`resample_counts` in blocks of ``_BATCH`` resamples (read-only arrays).

    The latest counts are kept: a dashboard summarizes run after run over the same queries
    (drawing 1,000 resamples of 20,000 queries takes ~0.12 s; they hold 80 MB).
    """
    rng = np.random.default_rng(seed)
    blocks = []
    for start in range(0, n_resamples, _BATCH):
        b = min(_BATCH, n_resamples - start)
        idx = rng.integers(0, n, size=(b, n))
        flat = (idx + (np.arange(b) * n)[:, None]).ravel()
        block = np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.int32)
        block.setflags(write=False)
        blocks.append(block)
    return tuple(blocks)


def bootstrap_means(values: np.ndarray, present: np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES,
                    seed: int = SEED) -> np.ndarray:
    r"""Resampled means of several groups over the same resamples of ``n`` queries.

    Parameters
    ----------
    values : ndarray, shape (n, g)
        Value of each query (row) in each group (column); ignored where not ``present``.
    present : ndarray of bool, shape (n, g)
        Whether the group has a value for the query.
    n_resamples, seed
        See :func:`resample_counts` (the counts used here).

    Returns
    -------
    ndarray, shape (n_resamples, g)
        :math:`\sum_q w_{bq} x_{qg} / \sum_q w_{bq}` over the present queries;
        NaN where resample ``b`` draws none of group ``g``'s queries.
    """
    x = np.where(present, values, 0.0).astype(np.float64)
    m = np.asarray(present, dtype=np.float64)
    n, g = x.shape
    everywhere = bool(np.all(present))  # then each resample draws n present queries for every group
    out = np.empty((n_resamples, g), dtype=np.float64)
    row = 0
    for w in _count_blocks(n, n_resamples, seed):
        wf = w.astype(np.float64)
        s = wf @ x
        c = np.full_like(s, float(n)) if everywhere else wf @ m  # the same (exact) counts, without a product
        with np.errstate(invalid="ignore", divide="ignore"):
            out[row:row + len(w)] = np.where(c > 0, s / np.where(c > 0, c, 1.0), np.nan)
        row += len(w)
    return out


def percentile_interval(means: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of resampled statistics, per column (NaN resamples left out).

    ``means`` of shape ``(n_resamples, g)``; returns ``(low, high)`` of shape ``(g,)``:
    the ``(1 - c)/2`` and ``(1 + c)/2`` quantiles (linear interpolation), NaN for a column
    without any finite resample.
    """
    c = _check_confidence(confidence)
    means = np.asarray(means, dtype=np.float64)
    if means.ndim != 2:
        raise OptionError(f"means must be a 2-D array (n_resamples, groups), got shape {means.shape}")
    ok = np.isfinite(means).any(axis=0)
    low = np.full(means.shape[1], np.nan)
    high = np.full(means.shape[1], np.nan)
    if ok.any():
        sub = means[:, ok]
        quantile = np.quantile if np.isfinite(sub).all() else np.nanquantile
        q = quantile(sub, [(1 - c) / 2, (1 + c) / 2], axis=0)
        low[ok], high[ok] = q[0], q[1]
    return low, high


def _sorted_string_codes(col: pd.Series) -> tuple[np.ndarray, int]:
    """``pd.factorize(col.astype(str), sort=True)``'s codes and count; a categorical column without
    converting every row to a string (1.7 s for 5.6 M rows): its categories in use, sorted as strings."""
    if isinstance(col.dtype, pd.CategoricalDtype) and not col.isna().any():
        codes = col.cat.codes.to_numpy()
        used = np.unique(codes)
        names = np.asarray(col.cat.categories.astype(str), dtype=object)[used]
        if len(set(names.tolist())) == len(names):  # else two categories print alike: merge them as factorize
            rank = np.empty(len(used), dtype=np.int64)
            rank[np.argsort(names, kind="stable")] = np.arange(len(used))
            lookup = np.zeros(len(col.cat.categories), dtype=np.int64)
            lookup[used] = rank
            return lookup[codes], len(used)
    codes, uniques = pd.factorize(col.astype(str), sort=True)
    return codes, len(uniques)


def _codes_among(col: pd.Series, query_ids: Sequence[str]) -> tuple[np.ndarray, int]:
    """Codes of ``col``'s query ids among ``query_ids`` sorted as strings, and their count; every id of
    ``col`` must be there (:class:`OptionError` names the first that is not)."""
    universe = pd.Index(sorted({str(x) for x in query_ids}), dtype=object)
    if isinstance(col.dtype, pd.CategoricalDtype) and not col.isna().any():
        codes = universe.get_indexer(col.cat.categories.astype(str))[col.cat.codes.to_numpy()]
    else:
        codes = universe.get_indexer(col.astype(str))
    if (codes < 0).any():
        raise OptionError(f"query {str(col.iloc[int(np.argmax(codes < 0))])!r} of the table is not among query_ids")
    return codes, len(universe)


def queries_drawn(query_ids: np.ndarray, codes: np.ndarray, values: np.ndarray, *,
                  chunk: int = 1 << 20) -> tuple[str, ...]:
    """The queries :func:`mean_intervals` draws a whole table's resamples over: those with a finite value,
    sorted as strings (``query_ids[codes[i]]`` is row i's query, as in :class:`evalcore.results.ResultColumns`).

    Given as ``query_ids`` to summarize a table's parts one at a time; counted a chunk at a time.

    >>> queries_drawn(np.array(["b", "a", "c"], dtype=object), np.array([0, 2, 0]), np.array([1.0, np.nan, 0.0]))
    ('b',)
    """
    seen = np.zeros(len(query_ids), dtype=bool)
    for i in range(0, len(codes), chunk):
        finite = np.isfinite(values[i : i + chunk])
        seen |= np.bincount(codes[i : i + chunk][finite], minlength=len(query_ids)).astype(bool)
    return tuple(sorted(str(q) for q in np.asarray(query_ids, dtype=object)[seen]))


def mean_intervals(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("run", "metric", "k"),
    method: str = MEAN_CI_METHOD,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = SEED,
    query_ids: Sequence[str] | None = None,
) -> pd.DataFrame:
    r"""Mean and confidence interval of the per-query values of each group (see the module docstring).

    Parameters
    ----------
    table : DataFrame
        The long per-query table ``run, query_id, domain, metric, k, value``. Not modified.
        NaN values (``first_rel_rank`` where nothing relevant was found) are left out.
    by : sequence of str, default ("run", "metric", "k")
        Grouping columns (e.g. with ``"domain"``).
    method : {"bootstrap", "t"}, default "bootstrap"
    confidence : float, default 0.95
    n_resamples : int, default 1000 (:data:`evalcore.defaults.MEAN_RESAMPLES`)
        Bootstrap resamples (shared by every group).
    seed : int, default 42 (:data:`evalcore.defaults.SEED`)
        Seed of the resampling counts (:func:`resample_counts`).
    query_ids : sequence of str, optional
        The queries the resamples are drawn over, in sorted order (default: the
        table's queries with a finite value, :func:`queries_drawn`). Give a whole
        table's to summarize its parts one at a time (e.g. run by run): each part
        then gets the rows the whole table would.

    Returns
    -------
    DataFrame
        One row per group, sorted by ``by``: the ``by`` columns, ``n``, ``mean``,
        ``ci_low``, ``ci_high`` (NaN when ``n < 2``).

    Raises
    ------
    OptionError
        Bad table, columns or options.
    """
    by = _interval_by(by, method)
    c = _check_confidence(confidence)
    n_resamples, seed = _check_resamples(n_resamples, seed)
    _validate_table(table, required=[*by, "query_id", "value"])
    data, keys, gid = _group_rows(table, by, extra=("query_id",))
    vals = data["value"].to_numpy(dtype=np.float64)
    stats = group_stats(vals, gid, len(keys))  # the mean every summary shows (evalcore.results), to the bit
    low, high = _interval_bounds(method, stats, data["query_id"], vals, gid, confidence=c, n_resamples=n_resamples,
                                 seed=seed, query_ids=query_ids)
    found = stats.n > 0  # groups with a finite value (a group whose values are all NaN has no row here)
    out = keys[found].reset_index(drop=True)
    out["n"] = stats.n[found].astype(np.int64)
    out["mean"] = stats.mean[found]
    out["ci_low"] = low[found]
    out["ci_high"] = high[found]
    return out


def _interval_by(by: Sequence[str] | str, method: str) -> list[str]:
    """:func:`mean_intervals`' ``by`` as a list, and ``method``, checked."""
    by = [by] if isinstance(by, str) else list(by)
    if not by or "value" in by or "query_id" in by or len(set(by)) != len(by):
        raise OptionError(f"by must name distinct grouping columns other than value and query_id, got {by}")
    if method not in CI_METHODS:
        raise OptionError(f"method must be one of {list(CI_METHODS)}, got {method!r}")
    return by


def _interval_bounds(method: str, stats: GroupStats, query_col: pd.Series, vals: np.ndarray, gid: np.ndarray, *,
                     confidence: float, n_resamples: int, seed: int,
                     query_ids: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
    """``(ci_low, ci_high)`` of each group's mean by ``method`` (rows: query, value, group number; ``stats``
    of those groups), NaN where a group has fewer than 2 finite values."""
    g = len(stats.n)
    if method == "t":
        low, high, _ = t_interval(stats, confidence=confidence)
    else:
        low, high = _bootstrap_bounds(query_col, vals, gid, g, confidence=confidence, n_resamples=n_resamples,
                                      seed=seed, query_ids=query_ids)
    small = stats.n < 2
    return np.where(small, np.nan, low), np.where(small, np.nan, high)


def _bootstrap_bounds(query_col: pd.Series, vals: np.ndarray, gid: np.ndarray, g: int, *, confidence: float,
                      n_resamples: int, seed: int, query_ids: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap interval of the mean of each of ``g`` groups over the rows with a finite value,
    resampling ``query_ids`` (default: the queries of those rows, sorted as strings)."""
    low = np.full(g, np.nan)
    high = np.full(g, np.nan)
    finite = np.isfinite(vals)
    if not finite.all():
        query_col, vals, gid = query_col[finite], vals[finite], gid[finite]
    if not g or not len(vals):
        return low, high
    qcodes, nq = _sorted_string_codes(query_col) if query_ids is None else _codes_among(query_col, query_ids)
    step = max(1, _CELLS // max(nq, 1))
    for s in range(0, g, step):
        sel = (gid >= s) & (gid < s + step)
        x = np.zeros((nq, min(step, g - s)))
        present = np.zeros(x.shape, dtype=bool)
        x[qcodes[sel], gid[sel] - s] = vals[sel]
        present[qcodes[sel], gid[sel] - s] = True
        means = bootstrap_means(x, present, n_resamples=n_resamples, seed=seed)
        low[s:s + x.shape[1]], high[s:s + x.shape[1]] = percentile_interval(means, confidence)
    return low, high


def summarize_with_intervals(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("run", "metric", "k"),
    method: str = MEAN_CI_METHOD,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = SEED,
    aggregates: bool = False,
    query_ids: Sequence[str] | None = None,
) -> pd.DataFrame:
    """:func:`evalcore.aggregate.summarize` with ``ci_low`` / ``ci_high`` from :func:`mean_intervals`.

    Same columns and rows as ``summarize`` (``n, mean, std, sem, ci_low, ci_high, median``,
    and with ``aggregates=True`` the declared aggregate columns); only the interval differs:
    by default the shared-resample percentile bootstrap (inside the metric's range), NaN
    where ``n < 2``. The aggregate's interval follows it: the same interval for a mean,
    its ``exp`` for a geometric mean (``gm_map``, whose per-query values are logs), none
    for a total. ``query_ids``: see :func:`mean_intervals`.
    """
    by = _summary_by(by, aggregates=aggregates)
    _interval_by(by, method)
    c = _check_confidence(confidence)
    n_resamples, seed = _check_resamples(n_resamples, seed)
    _validate_table(table, required=[*by, "query_id", "value"])
    data, keys, gid = _group_rows(table, by, extra=("query_id",))  # one check, one grouping for both
    vals = data["value"].to_numpy(dtype=np.float64)
    stats = group_stats(vals, gid, len(keys))
    out = _summary_frame(keys, stats, confidence=c, aggregates=aggregates)
    out["ci_low"], out["ci_high"] = _interval_bounds(method, stats, data["query_id"], vals, gid, confidence=c,
                                                     n_resamples=n_resamples, seed=seed, query_ids=query_ids)
    if aggregates:
        kind = out["aggregation"].to_numpy(dtype=object)
        for side in ("low", "high"):
            v = out[f"ci_{side}"].to_numpy(dtype=float)
            out[f"aggregate_ci_{side}"] = np.where(kind == "sum", np.nan, np.where(kind == "gmean", np.exp(v), v))
    return out

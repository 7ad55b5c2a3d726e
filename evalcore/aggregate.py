"""Aggregations of the per-query result table.

Every number evalcore shows is an aggregation of ONE long per-query table with
the columns

======== ======= =====================================================
column   dtype   meaning
======== ======= =====================================================
run      str     name of the run (system) that was evaluated
query_id str     query identifier
domain   str     domain of the query, ``""`` when unknown (optional)
metric   str     canonical metric name, e.g. ``"ndcg"``, ``"recall(rel=2)"``
k        int     cutoff; ``0`` means "no cutoff" (whole ranking)
value    float   the metric value of that run on that query at that k
======== ======= =====================================================

with one row per run x query x metric x k.  This module turns it into
summaries (mean, standard deviation, confidence interval...), wide per-query
views paired by query id and the plain-text "mean±std" report of the CLI.

All functions are pure: they never modify the table they are given, options are
keyword-only, and invalid tables or options raise :class:`~evalcore.errors.OptionError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ._categorical import distinct_strings, isin_strings, pivot_strings
from ._lazy import pd
from .errors import OptionError
from .metrics import NAN_METRICS
from .results import GroupStats, ResultColumns, group_stats
from .summaries import check_confidence, columns_mean_pm_std_text, declared_aggregates, t_interval

__all__ = [
    "TABLE_COLUMNS",
    "KEY_COLUMNS",
    "summarize",
    "best_per_column",
    "metric_at_k_label",
    "wide_per_query",
    "mean_pm_std_text",
]

#: Columns of the long per-query table, in their canonical order.
TABLE_COLUMNS: tuple[str, ...] = ("run", "query_id", "domain", "metric", "k", "value")
#: Columns that identify a row; each combination must appear at most once.
KEY_COLUMNS: tuple[str, ...] = ("run", "query_id", "metric", "k")

SUMMARY_COLUMNS: tuple[str, ...] = ("n", "mean", "std", "sem", "ci_low", "ci_high", "median")
#: columns :func:`summarize` adds with ``aggregates=True``
AGGREGATE_COLUMNS: tuple[str, ...] = ("aggregation", "aggregate", "aggregate_ci_low", "aggregate_ci_high")


# --------------------------------------------------------------------------- helpers




def _validate_table(
    table: pd.DataFrame, *, required: Iterable[str] = ("run", "query_id", "metric", "k", "value")
) -> None:
    """Check the long per-query table; raise :class:`OptionError` naming the fault.

    Checks that ``table`` is a DataFrame, that the ``required`` columns exist,
    that ``value`` is numeric and finite, and that no (run, query_id, metric, k)
    combination appears twice (a duplicate would silently be counted twice in
    every mean).
    """
    if not isinstance(table, pd.DataFrame):
        hint = " (pass its .table: the per-query table)" if hasattr(table, "table") else ""
        raise OptionError(f"table must be a pandas DataFrame, got {type(table).__name__}{hint}")
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise OptionError(
            f"table lacks column(s) {missing}; expected columns {list(TABLE_COLUMNS)}"
        )
    if "value" in table.columns:
        values = table["value"]
        if not (pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)):
            raise OptionError(f"table column 'value' must be numeric, got dtype {values.dtype}")
        arr = values.to_numpy(dtype=float)
        bad = ~np.isfinite(arr)
        if bad.any() and "metric" in table.columns:
            # NaN is a defined value of first_rel_rank ("no relevant document retrieved"): allowed
            # there and left out of means (n counts the queries where one was found)
            base = table["metric"].astype(str).str.split("(", n=1).str[0].to_numpy()
            bad &= ~(np.isnan(arr) & np.isin(base, list(NAN_METRICS)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            row = table.iloc[i]
            where = ", ".join(
                f"{c}={row[c]!r}" for c in ("run", "query_id", "metric", "k") if c in table.columns
            )
            raise OptionError(
                f"table holds {int(bad.sum())} non-finite value(s); first: {arr[i]!r} at {where}",
                query=str(row["query_id"]) if "query_id" in table.columns else None,
            )
    key = [c for c in KEY_COLUMNS if c in table.columns]
    if len(key) == len(KEY_COLUMNS) and len(table):
        i = _first_duplicate(table, key)
        if i is not None:
            row = table.iloc[i]
            raise OptionError(
                "table lists run={!r} query_id={!r} metric={!r} k={!r} more than once".format(
                    row["run"], row["query_id"], row["metric"], row["k"]
                ),
                query=str(row["query_id"]),
            )


def _column_codes(col: pd.Series) -> tuple[np.ndarray, int]:
    """Integer codes of a column's values (equal values, NaN included, share a code) and their count."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy().astype(np.int64) + 1, len(col.cat.categories) + 1
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    return codes.astype(np.int64) + 1, len(uniques) + 1


def _first_duplicate(table: pd.DataFrame, key: Sequence[str]) -> int | None:
    """The first row (in table order) whose ``key`` values an earlier row has, or None.

    ``table.duplicated(subset=key).argmax()``, on integer codes (categorical columns as they are
    coded): ~4x faster on the 5.6 M rows of 14 runs x 20,000 queries x 20 metric@k.
    """
    parts = [_column_codes(table[c]) for c in key]
    if float(np.prod([float(n) for _, n in parts])) >= 2.0**62:  # no room for one int64 key: pandas
        dup = table.duplicated(subset=list(key), keep="first").to_numpy()
        return int(np.flatnonzero(dup)[0]) if dup.any() else None
    packed = np.zeros(len(table), dtype=np.int64)
    for codes, n in parts:
        packed = packed * n + codes
    order = np.argsort(packed, kind="stable")  # equal keys keep table order: the later ones are the repeats
    srt = packed[order]
    repeats = order[1:][srt[1:] == srt[:-1]]
    return int(repeats.min()) if len(repeats) else None


def _select_metric_k(table: pd.DataFrame, metric: str, k: int | None) -> pd.DataFrame:
    """Rows of ``table`` for one metric@k (``k=None`` means ``k == 0``)."""
    kk = 0 if k is None else k
    if isinstance(kk, bool) or not isinstance(kk, (int, np.integer)) or kk < 0:
        raise OptionError(f"k must be a non-negative integer (0 = no cutoff), got {k!r}")
    sel = table[(table["metric"] == metric) & (table["k"] == int(kk))]
    if sel.empty:
        pairs = table[["metric", "k"]].drop_duplicates().itertuples(index=False)
        have = sorted({metric_at_k_label(str(m), int(kv)) for m, kv in pairs})
        raise OptionError(
            f"no row for {metric_at_k_label(metric, int(kk))!r} in the table; "
            f"available: {', '.join(have) if have else '(empty table)'}"
        )
    return sel


def _query_domains(sel: pd.DataFrame) -> pd.Series:
    """Domain of each query in ``sel`` (index query_id, sorted).

    A query's domain is its non-empty domain; ``""`` when every row leaves it
    unknown.  Two different non-empty domains for one query raise
    :class:`OptionError`.
    """
    if "domain" not in sel.columns:
        q = np.unique(sel["query_id"].to_numpy(dtype=object).astype(str))
        return pd.Series([""] * len(q), index=pd.Index(q, name="query_id"), dtype=object)
    dom = sel[["query_id", "domain"]].copy()
    dom["domain"] = dom["domain"].astype(object).fillna("").astype(str)
    known = dom[dom["domain"] != ""].drop_duplicates()
    multi = known["query_id"].duplicated(keep=False)
    if multi.any():
        qid = known.loc[multi, "query_id"].iloc[0]
        doms = sorted(known.loc[known["query_id"] == qid, "domain"])
        raise OptionError(f"query {qid!r} has conflicting domains {doms}", query=str(qid))
    out = pd.Series("", index=pd.Index(np.unique(dom["query_id"].astype(str)), name="query_id"),
                    dtype=object)
    out.loc[known["query_id"].astype(str).to_numpy()] = known["domain"].to_numpy()
    return out


def _ordered_unique(values: Sequence | np.ndarray | pd.Series) -> list:
    """Unique values in order of first appearance."""
    return list(pd.unique(pd.Series(values, dtype=object)))


# --------------------------------------------------------------------------- public API


def metric_at_k_label(metric: str, k: int | None) -> str:
    """Display label of a metric at a cutoff.

    Parameters
    ----------
    metric : str
        Canonical metric name, e.g. ``"ndcg"`` or ``"recall(rel=2)"``.
    k : int or None
        Cutoff.  ``0`` or ``None`` mean "no cutoff".

    Returns
    -------
    str
        ``f"{metric}@{k}"`` (e.g. ``"ndcg@10"``), or just ``metric`` when ``k``
        is ``0``/``None``.

    Raises
    ------
    OptionError
        If ``k`` is negative or not an integer.
    """
    if k is None:
        return str(metric)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        # allow integral floats coming out of pandas (e.g. 10.0)
        if isinstance(k, (float, np.floating)) and float(k).is_integer():
            k = int(k)
        else:
            raise OptionError(f"k must be an integer or None, got {k!r}")
    if k < 0:
        raise OptionError(f"k must be >= 0 (0 = no cutoff), got {k}")
    return str(metric) if int(k) == 0 else f"{metric}@{int(k)}"


def summarize(
    table: pd.DataFrame,
    *,
    by: Sequence[str] = ("run", "metric", "k"),
    confidence: float = 0.95,
    aggregates: bool = False,
) -> pd.DataFrame:
    r"""Per-group descriptive statistics of the per-query values.

    For each group :math:`G` of ``by`` with values :math:`x_1..x_n` (one per
    query):

    * ``n`` = :math:`n` (for ``first_rel_rank``, whose value is NaN when no
      relevant document was retrieved, the queries where one was found)
    * ``mean`` :math:`\bar x = \frac1n\sum_i x_i`
    * ``std`` = sample standard deviation
      :math:`s = \sqrt{\frac{1}{n-1}\sum_i (x_i-\bar x)^2}` (``ddof=1``);
      defined as ``0.0`` when :math:`n = 1` (no spread can be observed)
    * ``sem`` = :math:`s/\sqrt n` (``0.0`` when :math:`n = 1`)
    * ``ci_low``, ``ci_high`` = Student-t confidence interval of the mean,
      :math:`\bar x \pm t_{(1+c)/2,\;n-1}\, s/\sqrt n` with ``c = confidence``
      (``scipy.stats.t.ppf``).  When :math:`n = 1` the t quantile is undefined
      (zero degrees of freedom) and the interval is reported as the point
      ``[mean, mean]``: a single query carries no information about the
      variability, so no honest width exists; read it together with ``n``.
    * ``median``

    Every figure comes from :func:`evalcore.results.group_stats` (a group's
    values in ascending order, numpy's pairwise sum, a two-pass deviation): the
    command line's mean ± std, ``report.json`` and ``{run}_results.csv`` give the
    very same numbers.

    With ``aggregates=True`` (``by`` must hold ``metric``), four more columns
    give each metric's *declared* aggregate (:data:`evalcore.metrics.AGGREGATION`),
    the figure to show for it:

    * ``aggregation``: ``"mean"``, ``"sum"`` or ``"gmean"``;
    * ``aggregate``: ``mean`` for "mean"; :math:`\sum_i x_i` for "sum" (the
      counts ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_q``, as
      trec_eval's summary line); :math:`\exp(\bar x)` for "gmean" (``gm_map``,
      whose per-query values are logs: the geometric mean);
    * ``aggregate_ci_low``, ``aggregate_ci_high``: the interval of the
      aggregate: ``ci_low``/``ci_high`` for "mean"; their ``exp`` for "gmean"
      (the t interval on the log scale, carried back); NaN for "sum" (a total
      over the given queries is reported without an interval).

    ``mean``, ``std``, ``sem``, ``ci_*`` and ``median`` stay those of the
    per-query values (for ``gm_map``: on the log scale).

    Parameters
    ----------
    table : DataFrame
        The long per-query table (see module docstring).  Not modified.
    by : sequence of str, default ("run", "metric", "k")
        Grouping columns, e.g. ``("run", "domain", "metric", "k")``.
    confidence : float, default 0.95
        Confidence level of the interval, in (0, 1).
    aggregates : bool, default False
        Add the declared aggregate of each metric (see above).

    Returns
    -------
    DataFrame
        One row per group, sorted by the ``by`` columns, with the ``by``
        columns followed by ``n, mean, std, sem, ci_low, ci_high, median``
        (and ``aggregation, aggregate, aggregate_ci_low, aggregate_ci_high``).
        The result does not depend on the order of the table's rows.

    Raises
    ------
    OptionError
        Missing columns, non-finite values, duplicated rows, bad ``by`` or
        ``confidence``.
    """
    by = _summary_by(by, aggregates=aggregates)
    c = check_confidence(confidence)
    _validate_table(table, required=[*by, "value"])
    data, keys, gid = _group_rows(table, by)
    stats = group_stats(data["value"].to_numpy(dtype=float), gid, len(keys))
    return _summary_frame(keys, stats, confidence=c, aggregates=aggregates)


def _summary_by(by: Sequence[str] | str, *, aggregates: bool) -> list[str]:
    """:func:`summarize`'s ``by`` as a list, checked (:class:`OptionError` names the fault)."""
    by = [by] if isinstance(by, str) else list(by)
    if not by:
        raise OptionError("by must name at least one column")
    if len(set(by)) != len(by):
        raise OptionError(f"by lists a column twice: {by}")
    if "value" in by:
        raise OptionError("by cannot contain 'value'")
    if aggregates and "metric" not in by:
        raise OptionError("aggregates=True needs 'metric' among the by columns (each metric declares its own)")
    return by


def _group_rows(table: pd.DataFrame, by: Sequence[str], *,
                extra: Sequence[str] = ()) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """``(data, keys, gid)``: ``table``'s ``by``, ``extra`` and ``value`` columns (a copy; a ``domain`` among
    ``by`` as plain strings, missing = ``""``), one row of ``by`` values per group sorted by them
    (:func:`summarize`'s rows), and each row's group number in ``keys``."""
    data = table[[*by, *extra, "value"]].copy()
    if "domain" in by:
        data["domain"] = data["domain"].astype(object).fillna("").astype(str)
    grouped = data.groupby(list(by), sort=True, dropna=False, observed=True)
    keys = grouped.size().reset_index()[list(by)]
    return data, keys, grouped.ngroup().to_numpy()


def _summary_frame(keys: pd.DataFrame, stats: GroupStats, *, confidence: float, aggregates: bool) -> pd.DataFrame:
    """``keys`` (one row per group) followed by the :data:`SUMMARY_COLUMNS` (see :func:`summarize`)."""
    out = keys.reset_index(drop=True).copy()
    low, high, sem = t_interval(stats, confidence=confidence)
    for name, col in (("n", stats.n), ("mean", stats.mean), ("std", stats.std), ("sem", sem), ("ci_low", low),
                      ("ci_high", high), ("median", stats.median)):
        out[name] = col
    if aggregates:
        for name, col in declared_aggregates(out["metric"].astype(str).tolist(), stats, low, high).items():
            out[name] = col
    return out


def best_per_column(
    summary: pd.DataFrame,
    *,
    higher_is_better: bool | Mapping[str, bool] = True,
    value: str = "mean",
    within: Sequence[str] = ("metric", "k"),
    tolerance: float = 0.0,
) -> pd.DataFrame:
    r"""Mark the best run of each metric@k.

    Within each group of ``within`` (by default one group per metric@k), the
    row(s) whose ``value`` column is best get ``is_best = True``.  Ties are all
    marked: every row with :math:`|v - v^*| \le` ``tolerance`` is best, where
    :math:`v^*` is the group's maximum (or minimum when lower is better).

    Parameters
    ----------
    summary : DataFrame
        Typically the output of :func:`summarize`.  Not modified.
    higher_is_better : bool or mapping of metric name to bool, default True
        Direction of "better".  A mapping gives it per metric (metrics it does
        not list default to ``True``); it requires a ``metric`` column.
    value : str, default "mean"
        Column compared.
    within : sequence of str, default ("metric", "k")
        Columns defining the groups compared.
    tolerance : float, default 0.0
        Absolute tolerance for ties (exact equality by default).

    Returns
    -------
    DataFrame
        A copy of ``summary`` with a boolean column ``is_best``.
    """
    if not isinstance(summary, pd.DataFrame):
        raise OptionError(f"summary must be a pandas DataFrame, got {type(summary).__name__}")
    within = [within] if isinstance(within, str) else list(within)
    missing = [col for col in [*within, value] if col not in summary.columns]
    if missing:
        raise OptionError(f"summary lacks column(s) {missing}")
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise OptionError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if isinstance(higher_is_better, Mapping) and "metric" not in summary.columns:
        raise OptionError("a per-metric higher_is_better needs a 'metric' column")
    out = summary.copy()
    v = out[value].to_numpy(dtype=float)
    if isinstance(higher_is_better, Mapping):
        sign = np.array(
            [1.0 if bool(higher_is_better.get(m, True)) else -1.0 for m in out["metric"]]
        )
    else:
        sign = np.full(len(out), 1.0 if higher_is_better else -1.0)
    signed = pd.Series(v * sign, index=out.index)
    if within:
        best = signed.groupby([out[c] for c in within], dropna=False, sort=False).transform("max")
    else:
        best = pd.Series(signed.max(), index=out.index)
    out["is_best"] = (np.abs(signed - best) <= tolerance) & np.isfinite(signed)
    return out


def wide_per_query(
    table: pd.DataFrame,
    *,
    metric: str,
    k: int | None,
    runs: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per-query values of one metric@k, one column per run, paired by query id.

    Parameters
    ----------
    table : DataFrame
        The long per-query table.  Not modified.
    metric : str
        Canonical metric name.
    k : int or None
        Cutoff (``0``/``None`` = no cutoff).
    runs : sequence of str, optional
        Runs to include, in this column order.  Default: every run of the
        metric@k, sorted by name.

    Returns
    -------
    DataFrame
        Index ``query_id`` (sorted; the union of the queries of the selected
        runs), a ``domain`` column (``""`` when unknown) and one float column
        per run.  A query a run has no value for is ``NaN`` in that run's
        column.  Rows are aligned on query ids, never on positions, so the
        order of the table's rows does not matter.

    Raises
    ------
    OptionError
        Unknown metric@k, unknown run, a run named ``"domain"``, invalid table.
    """
    _validate_table(table)
    sel = _select_metric_k(table, metric, k)
    present = sorted(distinct_strings(sel["run"]))
    if runs is None:
        runs = present
    else:
        if isinstance(runs, str):
            runs = [runs]
        runs = [str(r) for r in runs]
        if len(set(runs)) != len(runs):
            raise OptionError(f"runs lists a run twice: {runs}")
        unknown = [r for r in runs if r not in present]
        if unknown:
            raise OptionError(
                f"run(s) {unknown} have no {metric_at_k_label(metric, k)!r} values; "
                f"available: {present}"
            )
    if "domain" in runs:
        raise OptionError("a run named 'domain' clashes with the domain column")
    sel = sel[isin_strings(sel["run"], runs)]
    domains = _query_domains(sel)
    wide = pivot_strings(sel, index="query_id", columns="run", values="value")
    wide = wide.reindex(index=domains.index, columns=list(runs)).astype(float)
    wide.columns.name = None
    wide.insert(0, "domain", domains.to_numpy())
    return wide


def mean_pm_std_text(
    table: pd.DataFrame,
    *,
    runs: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    metric_labels: Mapping[str, str] | None = None,
    digits: int = 3,
    ddof: int = 1,
    title: str | None = None,
) -> str:
    r"""Plain-text "mean±std" report: one block per run, rows = k, columns = metrics.

    The layout is that of the user's reference evaluation script (seed 000)::

        base_st:
          k      recall          ndcg
          ------ --------------- ---------------
          1      0.156±0.363     0.156±0.363
          10     0.215±0.138     0.234±0.149

    Each cell is :math:`\bar x \pm s` over the queries of that run, metric and
    k, rounded to ``digits`` decimals.  A metric not computed at a k shows
    ``-``; ``k = 0`` (no cutoff) is shown as ``all``.  A metric whose declared
    aggregation is not the mean (:data:`evalcore.metrics.AGGREGATION`) shows
    that aggregate alone: ``1500 (sum)`` for the counts, ``0.105 (gm)`` for
    ``gm_map`` (the geometric mean, ``exp`` of the mean of its per-query logs).

    Parameters
    ----------
    table : DataFrame
        The long per-query table.  Not modified.
    runs, metrics : sequence of str, optional
        Which runs (blocks) and metrics (columns) to show, in this order.
        Default: all, in order of first appearance in the table (so that the
        CLI's order of metrics is kept).
    metric_labels : mapping, optional
        Column headers per metric name (e.g. ``{"ndcg": "NDCG"}``); default the
        metric name.
    digits : int, default 3
        Decimals of mean and standard deviation.
    ddof : int, default 1
        Delta degrees of freedom of the standard deviation: ``1`` (sample std,
        as in :func:`summarize`; seed 000's printed table is that: its
        ``0.234±0.424`` over 500 queries is 117 hits with ddof 1, where ddof 0
        gives 0.423) or ``0`` (population std, ``numpy.std``'s default).  A
        single query shows std 0.
    title : str, optional
        When given, printed first followed by a line of ``=``.

    Returns
    -------
    str
        The report, ending with a newline.
    """
    _validate_table(table)
    return columns_mean_pm_std_text(ResultColumns.from_table(table), runs=runs, metrics=metrics,
                                    metric_labels=metric_labels, digits=digits, ddof=ddof, title=title)

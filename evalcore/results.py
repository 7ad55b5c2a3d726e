"""The per-query results table as integer codes, and the one group-statistics kernel.

:class:`ResultColumns` is the long per-query table ``run, query_id, domain,
metric, k, value`` (see :mod:`evalcore.aggregate`) held as numpy arrays: a code
per row into each of the ``runs``, ``query_ids``, ``domains`` and ``metrics``
vocabularies, the cutoff and the value.  :func:`evalcore.evaluate.evaluate`
builds it; ``Evaluation.table`` is the same table as a pandas DataFrame, built
on first use (the command line writes its summary and its files from the
columns and never imports pandas on that path).

:func:`group_stats` computes the count, sum, mean, standard deviation and
median of the values of each group.  Every summary evalcore shows goes through
it (:func:`evalcore.aggregate.summarize`, the CLI's mean ± std, ``report.json``,
``{run}_results.csv``), so they agree to the bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ResultColumns", "GroupStats", "group_stats", "exact_mean", "first_appearance"]


@dataclass(frozen=True)
class GroupStats:
    """Per-group statistics of :func:`group_stats`, arrays of shape ``(G,)``."""

    n: np.ndarray  # int64: values that are not NaN
    total: np.ndarray  # float64: their sum (0.0 when n = 0)
    mean: np.ndarray  # float64: total / n (NaN when n = 0)
    std: np.ndarray  # float64: sample deviation with ``ddof``; 0.0 when n <= ddof
    median: np.ndarray  # float64 (NaN when n = 0)


def exact_mean(values: np.ndarray) -> float:
    """The mean as every summary gives it (:func:`group_stats`): the correctly rounded sum (``math.fsum``: the
    same bits whatever the order of the values) divided by n; NaN for no value.

    >>> exact_mean(np.array([0.1, 0.2, 0.3])) == exact_mean(np.array([0.3, 0.1, 0.2]))
    True
    """
    v = np.asarray(values, dtype=np.float64)
    return math.fsum(v.tolist()) / len(v) if len(v) else float("nan")


def group_stats(values: np.ndarray, groups: np.ndarray, n_groups: int, *, ddof: int = 1) -> GroupStats:
    r"""Count, sum, mean, standard deviation and median of ``values`` per group.

    For the non-NaN values :math:`x_1 \le \dots \le x_n` of a group:

    * ``total`` = their sum, correctly rounded (``math.fsum``: exact whatever the
      order or the number of values);
    * ``mean`` :math:`\bar x` = ``total`` / :math:`n` (one more rounding); a
      group of equal values has exactly that value as its mean;
    * ``std`` = :math:`\sqrt{\sum_i (x_i - \bar x)^2 / (n - \mathrm{ddof})}`
      (two passes, numpy's pairwise sum of the ascending values), ``0.0`` when
      :math:`n \le \mathrm{ddof}` and, exactly, when all values are equal;
    * ``median`` = the middle value, or the mean of the two middle values.

    No result depends on the order of the rows.  A group with no value (all
    NaN, e.g. ``first_rel_rank`` where no relevant document was retrieved) has
    ``n = 0``, ``total = 0.0``, ``mean`` and ``median`` NaN, ``std = 0.0``.

    Parameters
    ----------
    values : ndarray of float, shape (N,)
    groups : ndarray of int, shape (N,)
        Group of each value, in ``[0, n_groups)``.
    n_groups : int
        G; groups without rows get ``n = 0``.
    ddof : int, default 1
        Delta degrees of freedom of ``std``.

    Examples
    --------
    >>> s = group_stats(np.array([3.0, 1.0, np.nan, 2.0]), np.array([0, 0, 1, 0]), 2)
    >>> s.n.tolist(), s.mean.tolist()[0], s.std.tolist(), s.median.tolist()[0]
    ([3, 0], 2.0, [1.0, 0.0], 2.0)
    >>> float(group_stats(np.full(3, 0.1), np.zeros(3, int), 1).std[0])  # equal values: no spread at all
    0.0
    """
    values = np.asarray(values, dtype=np.float64)
    groups = np.asarray(groups, dtype=np.int64)
    if values.shape != groups.shape or values.ndim != 1:
        raise ValueError(f"values and groups must be 1-d of one length, got {values.shape} and {groups.shape}")
    if len(groups) and (int(groups.min()) < 0 or int(groups.max()) >= n_groups):
        raise ValueError(f"group codes must be in [0, {n_groups})")
    if len(groups) > 1 and not bool(np.all(groups[1:] >= groups[:-1])):
        order = np.argsort(groups, kind="stable")
        values, groups = values[order], groups[order]
    bounds = np.searchsorted(groups, np.arange(n_groups + 1), side="left").tolist()
    n = np.zeros(n_groups, dtype=np.int64)
    total = np.zeros(n_groups)
    mean = np.full(n_groups, np.nan)
    std = np.zeros(n_groups)
    median = np.full(n_groups, np.nan)
    for g in range(n_groups):
        seg = np.sort(values[bounds[g] : bounds[g + 1]])  # NaN sort last
        m = len(seg)
        if m and np.isnan(seg[-1]):  # NaN sort last: keep the others
            m -= int(np.count_nonzero(np.isnan(seg)))
            seg = seg[:m]
        if m == 0:
            continue
        n[g] = m
        total[g] = s = math.fsum(seg.tolist())
        if seg[0] == seg[m - 1]:  # all equal: that value, no spread (a rounded sum / n need not give it back)
            mean[g] = median[g] = seg[0] + 0.0  # (-0.0 -> 0.0, as a sum gives)
            continue
        mean[g] = mu = s / m
        if m > ddof:
            dev = seg - mu
            std[g] = np.sqrt(float(np.add.reduce(dev * dev)) / (m - ddof))
        median[g] = seg[m // 2] if m % 2 else (seg[m // 2 - 1] + seg[m // 2]) / 2.0
    return GroupStats(n, total, mean, std, median)


def first_appearance(codes: np.ndarray) -> np.ndarray:
    """The distinct values of ``codes`` in order of first appearance."""
    uniq, first = np.unique(np.asarray(codes), return_index=True)
    return uniq[np.argsort(first, kind="stable")]


@dataclass(frozen=True)
class ResultColumns:
    """The long per-query table as codes (see the module docstring); ``N`` rows.

    Attributes
    ----------
    runs, domains, metrics : tuple of str
        Vocabularies (the DataFrame's categories, in their order).
    query_ids : ndarray of object (str)
        Query vocabulary.
    run, query, domain, metric : ndarray of int, shape (N,)
        Each row's code into its vocabulary.
    k : ndarray of int32, shape (N,)
        Cutoff (0: none).
    value : ndarray of float64, shape (N,)
    """

    runs: tuple[str, ...]
    query_ids: np.ndarray
    domains: tuple[str, ...]
    metrics: tuple[str, ...]
    run: np.ndarray
    query: np.ndarray
    domain: np.ndarray
    metric: np.ndarray
    k: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return len(self.value)

    def to_table(self) -> Any:
        """The pandas DataFrame ``run, query_id, domain, metric, k, value`` (categoricals, as ``evaluate`` gives)."""
        import pandas as pd

        return pd.DataFrame({
            "run": pd.Categorical.from_codes(self.run, categories=list(self.runs)),
            "query_id": pd.Categorical.from_codes(self.query, categories=pd.Index(self.query_ids.astype(str))),
            "domain": pd.Categorical.from_codes(self.domain, categories=pd.Index(list(self.domains), dtype=object)),
            "metric": pd.Categorical.from_codes(self.metric, categories=list(self.metrics)),
            "k": self.k,
            "value": self.value,
        }, copy=False)  # k and value shared with the columns (they are one table: nothing writes into either)

    @classmethod
    def from_table(cls, table: Any, *, sort: bool = True) -> ResultColumns:
        """Codes of a long per-query DataFrame: a categorical column keeps its categories and their order, any
        other is factorised in sorted order (``sort=True``: code order is the order ``groupby(sort=True)``
        gives) or in order of first appearance."""
        import pandas as pd

        def coded(name: str) -> tuple[np.ndarray, list]:
            col = table[name] if name in table.columns else pd.Series("", index=table.index)
            if isinstance(col.dtype, pd.CategoricalDtype):
                return col.cat.codes.to_numpy(), [str(x) for x in col.cat.categories]
            if name == "domain":
                col = col.astype(object).fillna("")
            codes, uniq = pd.factorize(col.astype(str), sort=sort)
            return codes, [str(x) for x in uniq]

        run, runs = coded("run")
        query, qids = coded("query_id")
        domain, domains = coded("domain")
        metric, metrics = coded("metric")
        return cls(tuple(runs), np.asarray(qids, dtype=object), tuple(domains), tuple(metrics),
                   run.astype(np.int64), query.astype(np.int64), domain.astype(np.int64), metric.astype(np.int64),
                   table["k"].to_numpy(), table["value"].to_numpy(dtype=np.float64))

    def group_codes(self, by: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """A code per row for the combinations of the ``by`` columns, and those combinations (``(G, len(by))``
        int64, each column the vocabulary code or the ``k``), sorted row by row."""
        code = np.zeros(len(self.value), dtype=np.int64)
        uniques = []
        for b in by:  # mixed radix over each column's distinct values (sorted)
            col = np.asarray(getattr(self, {"query_id": "query"}.get(b, b)), dtype=np.int64)
            uniq, inv = np.unique(col, return_inverse=True)
            code = code * len(uniq) + inv.reshape(-1)
            uniques.append(uniq)
        present, inverse = np.unique(code, return_inverse=True)
        keys = np.zeros((len(present), len(by)), dtype=np.int64)
        rest = present.copy()
        for j in range(len(by) - 1, -1, -1):
            size = len(uniques[j])
            keys[:, j] = uniques[j][rest % size]
            rest //= size
        return inverse.reshape(-1).astype(np.int64), keys

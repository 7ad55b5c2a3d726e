r"""Tukey's HSD: all pairs of many runs at once, with a family-wise error rate.

``m`` runs evaluated on the same ``n`` queries give a matrix :math:`x_{qj}`
(query q, run j). Every pair of runs is compared with the studentized range
distribution (``scipy.stats.studentized_range``), whose family-wise error rate
over all :math:`m(m-1)/2` pairs is ``alpha`` — no further correction.

Two designs (option ``design``):

``"paired"`` (default)
    Queries are blocks: a two-way ANOVA without replication (run × query) takes
    the query effects out of the error. With run means :math:`\bar x_{\cdot j}`,
    query means :math:`\bar x_{q\cdot}` and grand mean :math:`\bar x`, the
    residual mean square is
    :math:`MSE = \sum_{q,j} (x_{qj} - \bar x_{q\cdot} - \bar x_{\cdot j} + \bar x)^2 / ((n-1)(m-1))`;
    for a pair, :math:`q = |\bar x_{\cdot b} - \bar x_{\cdot a}| / \sqrt{MSE/n}`,
    p-value :math:`P(Q_{m,(n-1)(m-1)} > q)`, simultaneous interval
    :math:`\bar d \pm q_{1-\alpha; m,(n-1)(m-1)} \sqrt{MSE/n}`. This is the HSD
    test IR evaluation uses for runs over topics (Carterette 2012; Sakai 2014):
    per-query scores of different runs are paired by query, and query difficulty
    dominates their variance. With two runs it is exactly the paired t-test
    (:math:`q = \sqrt2\,|t|`, same p-value).
``"independent"``
    One-way ANOVA: the runs' per-query values are treated as independent groups
    — ``scipy.stats.tukey_hsd(*columns)``, which is what ranx's ``compare(...,
    stat_test="tukey")`` computes (``ranx.statistical_tests.tukey_hsd_test``).
    It ignores the pairing, so query difficulty inflates the error and it finds
    fewer differences; it is there to reproduce ranx.

``scipy.stats.tukey_hsd`` is used where its design fits (independent groups);
SciPy has no repeated-measures HSD, so the paired design computes the MSE above
and takes the distribution from ``scipy.stats.studentized_range``.

Only queries with a value for every run compared are used (complete blocks);
the others are counted in ``n_dropped``. Significance is ``p_value < alpha``
(ranx uses ``<=``).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._categorical import distinct_strings, pivot_strings
from .._lazy import sps as _sps
from ..aggregate import _select_metric_k, _validate_table, metric_at_k_label
from ..errors import OptionError
from .paired import _CONSTANT_RTOL, _check_choice, _check_prob

__all__ = ["HSD_DESIGNS", "HSD_COLUMNS", "tukey_hsd_values", "tukey_hsd"]

#: Designs of :func:`tukey_hsd`.
HSD_DESIGNS: tuple[str, ...] = ("paired", "independent")
HSD_COLUMNS: tuple[str, ...] = (
    "run_a", "run_b", "metric", "k", "n", "n_dropped", "mean_a", "mean_b", "diff", "ci_low", "ci_high",
    "statistic", "df", "p_value", "significant", "design", "note",
)  # fmt: skip


@functools.lru_cache(maxsize=256)
def _studentized_range_ppf(confidence: float, m: int, df: float) -> float:
    """``studentized_range.ppf(confidence, m, df)``, remembered: a root search over numerical integrals
    (~0.15 s) that depends only on these three numbers, the same for every metric@k of one set of runs."""
    return float(_sps.studentized_range.ppf(confidence, m, df))


def tukey_hsd_values(values: Any, *, design: str = "paired", confidence: float = 0.95) -> dict[str, Any]:
    r"""Tukey's HSD on a complete matrix of per-query values (see the module docstring).

    Parameters
    ----------
    values : array-like, shape (n_queries, n_runs)
        Finite values, n_runs >= 2, n_queries >= 2.
    design : {"paired", "independent"}
    confidence : float
        Level of the simultaneous intervals.

    Returns
    -------
    dict
        ``diff``, ``statistic``, ``p_value``, ``ci_low``, ``ci_high``: float
        arrays (n_runs, n_runs) where entry ``[a, b]`` concerns
        :math:`\bar x_b - \bar x_a` (``statistic`` is the studentized range
        :math:`q`); ``df`` (error degrees of freedom), ``mse`` and ``note``.
    """
    _check_choice("design", design, HSD_DESIGNS)
    confidence = _check_prob("confidence", confidence)
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[0] < 2:
        raise OptionError(f"Tukey's HSD needs at least 2 queries and 2 runs, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise OptionError("Tukey's HSD needs finite values")
    n, m = x.shape
    means = x.mean(axis=0)
    diff = means[None, :] - means[:, None]
    if design == "independent":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = _sps.tukey_hsd(*x.T)
            ci = res.confidence_interval(confidence_level=confidence)
        df = float(n * m - m)
        mse = float(((x - means) ** 2).sum() / df)
        # scipy's entries [i, j] are about mean_i - mean_j: transpose to ours (mean_b - mean_a)
        out = {"p_value": res.pvalue.T.copy(), "ci_low": ci.low.T.copy(), "ci_high": ci.high.T.copy()}
        resid = x - means
    else:
        resid = x - x.mean(axis=1, keepdims=True) - means[None, :] + x.mean()
        df = float((n - 1) * (m - 1))
        mse = float((resid**2).sum() / df)
        out = {}
    se = math.sqrt(mse / n)
    scale = max(1.0, float(np.max(np.abs(x))))
    note = ""
    if float(np.max(np.abs(resid))) <= _CONSTANT_RTOL * scale:
        # no error variance: every difference is exact (q infinite) unless it is zero
        zero = np.abs(diff) <= _CONSTANT_RTOL * scale
        out["statistic"] = np.where(zero, 0.0, np.inf)
        out["p_value"] = np.where(zero, 1.0, 0.0)
        out["ci_low"] = out["ci_high"] = diff.copy()
        note = "no error variance (residuals are 0): q is inf with p-value 0 where runs differ, 0 with 1 where not"
    else:
        out["statistic"] = np.abs(diff) / se
        if design == "paired":
            iu = np.triu_indices(m, 1)  # q is symmetric: one sf per pair (each costs a numerical integral)
            p = np.ones((m, m))
            p[iu] = np.clip(_sps.studentized_range.sf(out["statistic"][iu], m, df), 0.0, 1.0)
            out["p_value"] = np.minimum(p, p.T)
            half = _studentized_range_ppf(confidence, m, df) * se
            out["ci_low"], out["ci_high"] = diff - half, diff + half
    np.fill_diagonal(out["p_value"], 1.0)
    return {"diff": diff, **out, "df": df, "mse": mse, "note": note}


def tukey_hsd(
    table: pd.DataFrame,
    *,
    metric: str,
    k: int | None,
    runs: Sequence[str] | None = None,
    design: str = "paired",
    alpha: float = 0.05,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Tukey's HSD of every pair of runs on one metric@k of the long per-query table.

    Parameters
    ----------
    table : DataFrame
        The long per-query table (:mod:`evalcore.aggregate`). Not modified.
    metric, k : str, int or None
        The metric@k compared (``k`` 0/None = no cutoff).
    runs : sequence of str, optional
        Runs compared, in this order (default: every run with values, sorted).
    design : {"paired", "independent"}, default "paired"
    alpha : float, default 0.05
        ``significant`` is ``p_value < alpha`` (family-wise over all pairs).
    confidence : float, default 0.95
        Level of the simultaneous intervals.

    Returns
    -------
    DataFrame
        One row per pair (``run_a`` before ``run_b``) with columns
        :data:`HSD_COLUMNS`: ``diff = mean_b - mean_a``, its simultaneous
        interval, ``statistic`` the studentized range q, ``df`` its error degrees
        of freedom, ``n`` the queries used and ``n_dropped`` those lacking a value
        for some run. With fewer than 2 usable queries the test columns are NaN
        and ``note`` says why. ``mean_a = Σ_q x_qa / n`` over the ``n`` complete
        queries (in the order of their ids as strings), as :func:`tukey_hsd_values`
        takes its means; run names are ``str`` whatever the table holds (their text).

    The names are read from a categorical column's categories and its rows placed
    by their integer codes (:func:`evalcore._categorical.pivot_strings`), not
    turned into one string per row.
    """
    _check_choice("design", design, HSD_DESIGNS)
    alpha = _check_prob("alpha", alpha)
    _validate_table(table)
    k = 0 if k is None else int(k)
    sel = _select_metric_k(table, metric, k)
    present = sorted(distinct_strings(sel["run"]))
    use = present if runs is None else [str(r) for r in runs]
    missing = [r for r in use if r not in present]
    if missing:
        raise OptionError(f"run(s) {missing} have no {metric_at_k_label(metric, k)!r} values; available: {present}")
    if len(use) < 2 or len(set(use)) != len(use):
        raise OptionError(f"Tukey's HSD needs at least two distinct runs, got {use}")
    # the query x run values (rows: the query ids sorted as strings), the ids read from the categories and the
    # rows placed by their integer codes, not one string per row; then the very frame operations as before (the
    # frame's memory order, which decides numpy's order of summation in the means and the kernel, with them)
    wide = pivot_strings(sel, index="query_id", columns="run", values="value")[use]
    complete = wide.dropna()
    n, n_dropped = len(complete), len(wide) - len(complete)
    means = complete.mean().to_numpy() if n else np.full(len(use), np.nan)
    nan = float("nan")
    if n >= 2:
        res = tukey_hsd_values(complete.to_numpy(), design=design, confidence=confidence)
        note = res["note"]
    else:
        res = None
        note = "not testable: fewer than 2 queries with a value for every run"
    rows: list[dict[str, Any]] = []
    for a in range(len(use)):
        for b in range(a + 1, len(use)):
            get = (lambda key, a=a, b=b: float(res[key][a, b])) if res is not None else (lambda key: nan)
            p = get("p_value")
            rows.append({
                "run_a": use[a], "run_b": use[b], "metric": str(metric), "k": k, "n": n, "n_dropped": n_dropped,
                "mean_a": float(means[a]), "mean_b": float(means[b]), "diff": float(means[b] - means[a]),
                "ci_low": get("ci_low"), "ci_high": get("ci_high"), "statistic": get("statistic"),
                "df": res["df"] if res is not None else nan, "p_value": p,
                "significant": bool(p < alpha) if math.isfinite(p) else False, "design": design, "note": note,
            })  # fmt: skip
    return pd.DataFrame(rows, columns=list(HSD_COLUMNS))

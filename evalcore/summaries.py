"""Summaries of the per-query results held as codes (:class:`~evalcore.results.ResultColumns`), without pandas.

The Student-t interval of group means, each metric's declared aggregate and the
CLI's "mean ± std" text, for :mod:`evalcore.aggregate` (which gives them for
DataFrames) and for the command line (which writes its summary and its files
from the columns).  Every statistic comes from :func:`evalcore.results.group_stats`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .errors import OptionError
from .results import GroupStats, ResultColumns, first_appearance, group_stats

__all__ = ["t_interval", "declared_aggregates", "columns_mean_pm_std_text", "check_confidence"]


def check_confidence(confidence: float) -> float:
    """``confidence`` as a float in (0, 1), else :class:`OptionError`."""
    try:
        c = float(confidence)
    except (TypeError, ValueError):
        raise OptionError(f"confidence must be a number in (0, 1), got {confidence!r}") from None
    if not (0.0 < c < 1.0):
        raise OptionError(f"confidence must be in (0, 1), got {confidence!r}")
    return c


def t_interval(stats: GroupStats, *, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Student-t interval of each group's mean: ``(ci_low, ci_high, sem)`` (see :func:`evalcore.aggregate.summarize`).

    :math:`\bar x \pm t_{(1+c)/2,\;n-1}\, s/\sqrt n`; the point ``[mean, mean]`` and ``sem = 0`` when
    :math:`n \le 1`.
    """
    c = check_confidence(confidence)
    n, mean, std = stats.n, stats.mean, stats.std
    sem = np.where(n > 1, std / np.sqrt(np.maximum(n, 1)), 0.0)
    from scipy.special import (
        stdtrit,  # = scipy.stats.t.ppf, lighter import (lazy: the CLI starts faster)
    )

    tq = stdtrit(np.maximum(n - 1, 1), 0.5 + c / 2.0)
    half = np.where(n > 1, tq * sem, 0.0)
    return mean - half, mean + half, sem


def declared_aggregates(metrics: Sequence[str], stats: GroupStats, low: np.ndarray,
                        high: np.ndarray) -> dict[str, np.ndarray]:
    """The :data:`evalcore.aggregate.AGGREGATE_COLUMNS` of groups whose metric is ``metrics[i]`` (see :func:`evalcore.aggregate.summarize`)."""
    from .metrics import aggregation_of

    kind = np.array([aggregation_of(str(m)) for m in metrics], dtype=object)
    is_sum, is_gm = kind == "sum", kind == "gmean"

    def carried(v: np.ndarray) -> np.ndarray:  # the log scale carried back for "gmean", NaN for "sum"
        out_v = np.where(is_sum, np.nan, v)
        np.exp(v, out=out_v, where=is_gm)
        return out_v

    return {"aggregation": kind, "aggregate": np.where(is_sum, stats.total, carried(stats.mean)),
            "aggregate_ci_low": carried(low), "aggregate_ci_high": carried(high)}


def columns_mean_pm_std_text(
    cols: ResultColumns,
    *,
    runs: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    metric_labels: Mapping[str, str] | None = None,
    digits: int = 3,
    ddof: int = 1,
    title: str | None = None,
) -> str:
    """:func:`mean_pm_std_text` of the table held as :class:`~evalcore.results.ResultColumns` (no pandas)."""
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 0 <= digits <= 12:
        raise OptionError(f"digits must be an integer in [0, 12], got {digits!r}")
    if ddof not in (0, 1):
        raise OptionError(f"ddof must be 0 or 1, got {ddof!r}")
    all_runs = [cols.runs[i] for i in first_appearance(cols.run).tolist()]
    all_metrics = [cols.metrics[i] for i in first_appearance(cols.metric).tolist()]
    runs = all_runs if runs is None else [str(r) for r in ([runs] if isinstance(runs, str) else runs)]
    metrics = (
        all_metrics
        if metrics is None
        else [str(m) for m in ([metrics] if isinstance(metrics, str) else metrics)]
    )
    for name, wanted, have in (("run", runs, all_runs), ("metric", metrics, all_metrics)):
        unknown = [w for w in wanted if w not in have]
        if unknown:
            raise OptionError(f"unknown {name}(s) {unknown}; available: {have}")
    labels = {m: str((metric_labels or {}).get(m, m)) for m in metrics}

    groups, keys = cols.group_codes(("run", "metric", "k"))
    stats = group_stats(cols.value, groups, len(keys), ddof=ddof)
    found = {(cols.runs[r], cols.metrics[m], int(kv)): (mu, sd, tot)
             for (r, m, kv), mu, sd, tot in zip(keys.tolist(), stats.mean.tolist(), stats.std.tolist(),
                                               stats.total.tolist(), strict=True)
             if cols.runs[r] in runs and cols.metrics[m] in metrics}
    from .metrics import aggregation_of

    def cell(r: str, m: str, kv: int) -> str:
        hit = found.get((r, m, kv))
        if hit is None:
            return "-"
        kind = aggregation_of(m)
        if kind == "sum":
            total = float(hit[2])
            return f"{total:.0f} (sum)" if total.is_integer() else f"{total:.{digits}f} (sum)"
        if kind == "gmean":
            return f"{np.exp(hit[0]):.{digits}f} (gm)"
        return f"{hit[0]:.{digits}f}±{hit[1]:.{digits}f}"

    lines: list[str] = []
    if title:
        lines += [title, "=" * max(70, len(title)), ""]
    for r in runs:
        ks = sorted({kv for (rr, _, kv) in found if rr == r})
        cells = {(kv, m): cell(r, m, kv) for kv in ks for m in metrics}
        widths = {
            m: max(15, len(labels[m]), *(len(cells[(kv, m)]) for kv in ks)) for m in metrics
        }
        kw = max(6, *(len(str(kv)) for kv in ks)) if ks else 6
        lines.append(f"{r}:")
        lines.append(("  " + "k".ljust(kw) + "".join(" " + labels[m].ljust(widths[m]) for m in metrics)).rstrip())
        lines.append("  " + "-" * kw + "".join(" " + "-" * widths[m] for m in metrics))
        for kv in ks:
            klabel = "all" if kv == 0 else str(kv)
            row = "  " + klabel.ljust(kw) + "".join(" " + cells[(kv, m)].ljust(widths[m]) for m in metrics)
            lines.append(row.rstrip())
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"

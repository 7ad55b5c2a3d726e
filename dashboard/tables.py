"""Tables and frames reshaped for display (no metric math): every number is an aggregate of evalcore's
per-query table (:mod:`evalcore.aggregate`, :mod:`evalcore.stats`) that these helpers only lay out.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "plain_table",
    "metric_k_pairs",
    "metric_k_pairs_coded",
    "metric_slice",
    "slice_frame",
    "appended_slice",
    "metric_k_pairs_parts",
    "overview_table",
    "default_columns",
    "P_VALUE_COLUMNS",
    "p_value_columns",
    "p_values_read",
    "display_table",
    "baseline_view",
    "curve_frame",
    "pr_frame",
    "READING_GUIDE",
    "band_range",
    "reading_band",
    "reading_guide_frames",
]


import numpy as np
import pandas as pd

from evalcore.metrics import NAN_METRICS, metric_base

# ------------------------------------------------------------------------------------------ display helpers


def plain_table(table: pd.DataFrame) -> pd.DataFrame:
    """The per-query table with ``domain`` as plain strings (``""`` = unknown).

    :func:`evalcore.stats.compare_by_domain` and ``summarize(by=domain)`` fill
    missing domains with ``""``, which a categorical column without that
    category refuses; this copy avoids it.  The strings are gathered from the
    categories by code (converting the column value by value took ~0.4 s at
    8 million rows).
    """
    domain = table["domain"]
    if isinstance(domain.dtype, pd.CategoricalDtype):
        names = np.empty(len(domain.cat.categories) + 1, dtype=object)
        names[:-1] = [str(c) for c in domain.cat.categories]
        names[-1] = ""  # code -1: no domain
        return table.assign(domain=names[domain.cat.codes.to_numpy()])
    return table


def metric_k_pairs(table: pd.DataFrame) -> list[tuple[str, int]]:
    """Every (metric, k) of the table, metrics in table order, k ascending."""
    metric = table["metric"]
    if isinstance(metric.dtype, pd.CategoricalDtype):
        names = [str(c) for c in metric.cat.categories]
        codes = metric.cat.codes.to_numpy()
    else:
        codes, uniq = pd.factorize(metric, sort=False)
        names = [str(c) for c in uniq]
    return metric_k_pairs_coded(names, codes, table["k"].to_numpy())


def metric_k_pairs_coded(names: Sequence[str], codes: np.ndarray, ks: np.ndarray, *,
                         chunk: int = 1 << 20) -> list[tuple[str, int]]:
    """:func:`metric_k_pairs` of a table held as codes: ``names[codes[i]]`` is row i's metric, ``ks[i]`` its k.

    Rows are read a chunk at a time (no table-sized temporary: on a small VM a fresh 64 MB array costs
    more than the counting), each (metric, k) counted with ``bincount`` when the keys are small.
    """
    codes, ks = np.asarray(codes), np.asarray(ks)
    if codes.size == 0:
        return []
    span = int(ks.max()) + 1
    small = int(ks.min()) >= 0 and int(codes.min()) >= 0 and (int(codes.max()) + 1) * span < 1 << 24
    seen = np.zeros((int(codes.max()) + 1) * span if small else 0, dtype=bool)
    found, order = [], {}  # order: metric code -> rank of its first appearance
    for i in range(0, codes.size, chunk):
        for c in pd.unique(codes[i : i + chunk]):
            order.setdefault(int(c), len(order))
        keys = codes[i : i + chunk].astype(np.int64) * span + ks[i : i + chunk]
        if small:
            seen |= np.bincount(keys, minlength=seen.size).astype(bool)
        else:
            found.append(np.unique(keys))
    pairs = np.flatnonzero(seen) if small else np.unique(np.concatenate(found))
    out = sorted(((int(p // span), int(p % span)) for p in pairs), key=lambda x: (order[x[0]], x[1]))
    return [(str(names[c]), k) for c, k in out]


def metric_k_pairs_parts(names: Sequence[str], parts: Iterable[tuple[np.ndarray, np.ndarray]], *,
                         known: Sequence[tuple[str, int]] = ()) -> list[tuple[str, int]]:
    """:func:`metric_k_pairs_coded` of a table held in parts (``(metric codes, k)`` of each, in table order), after
    rows whose pairs are ``known`` (that function's result for them): each part's pairs (counted a chunk at a
    time, as that function counts) joined to those so far, the metrics in order of first appearance — those
    seen before first, then the part's new ones in its order —, k ascending. A part whose arrays are those of a
    part before (the same memory: the kept evaluations of 137 runs of one layout) adds nothing and is not counted
    again."""
    pairs = list(known)
    seen = set()
    for codes, ks in parts:
        codes, ks = np.asarray(codes), np.asarray(ks)
        place = tuple((a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str) for a in (codes, ks))
        if place in seen:
            continue
        seen.add(place)
        more = metric_k_pairs_coded(names, codes, ks)
        order = {m: i for i, m in enumerate(dict.fromkeys(m for m, _ in [*pairs, *more]))}
        pairs = sorted(set(pairs) | set(more), key=lambda p: (order[p[0]], p[1]))
    return pairs


def metric_slice(table: pd.DataFrame, metric: str, k: int) -> pd.DataFrame:
    """The rows of one metric@k (``domain`` as plain strings): what per-query views of that metric@k read."""
    sel = table[(table["metric"] == metric).to_numpy() & (table["k"].to_numpy() == int(k))]
    return plain_table(sel)


def slice_frame(rows: Any, positions: np.ndarray) -> pd.DataFrame:
    """:func:`metric_slice` from the rows it selects (:func:`evalcore.stacked.metric_rows`: their columns and their
    positions in the whole table, its index there): the same frame, without the whole table."""
    frame = rows.to_table()
    frame.index = pd.Index(np.asarray(positions, dtype=np.int64))
    return plain_table(frame)


def appended_slice(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame | None:
    """The slice of a table that is a table ``before`` was sliced from with rows appended, ``after`` the appended
    rows' slice (whose runs are the whole's: ``before``'s, then the new ones): the two stacked, ``before``'s run
    codes read against the whole's runs. None when ``before``'s runs are not the first of ``after``'s, or their
    other categories differ."""
    runs = after["run"].cat.categories
    old = before["run"].cat.categories
    if len(old) > len(runs) or not runs[:len(old)].equals(old):
        return None
    for col in ("query_id", "metric"):
        if not before[col].cat.categories.equals(after[col].cat.categories):
            return None
    head = before.assign(run=pd.Categorical.from_codes(before["run"].cat.codes.to_numpy(), categories=runs))
    return pd.concat([head, after])


def overview_table(
    summary: pd.DataFrame,
    *,
    columns: Iterable[tuple[str, int]] | None = None,
    runs: Sequence[str] | None = None,
    digits: int = 3,
    mark_best: bool = True,
    eligible: Collection[str] | None = None,
    groups: Mapping[str, object] | None = None,
    with_ci: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs × metric@k display table from a summary (:func:`evalcore.intervals.summarize_with_intervals`).

    Returns ``(text, best)``: ``text`` cells read ``"0.412 [0.391, 0.433]"``
    (mean and 95% CI; ``"0.412 [n < 2]"`` where no interval exists, ``"– [n = 0]"`` where no query
    has a value; the mean alone with ``with_ci=False``), ``"★ "`` prefixed on the best run of each column
    (:func:`evalcore.aggregate.best_per_column`, ties all marked; lower is
    better for ``first_rel_rank``); ``best`` is the boolean mask of the same shape.
    ``mark_best=False`` leaves the cells unmarked (for measures without a
    "better" direction, such as intra-list diversity); ``best`` is still returned.
    The best run is sought among ``eligible`` runs only (default all; a run left out
    for low coverage never gets ★) and within each group of ``groups`` (run ->
    ground-truth aspect: like is compared with like).

    A summary made with ``aggregates=True`` shows each metric's declared
    aggregate instead of the mean: the total of a count (``"1500"``, no
    interval), the geometric mean of ``gm_map`` with its interval. The
    descriptive metrics (:data:`evalcore.metrics.DESCRIPTIVE`: counts, judged@k,
    RBP's residual) mark no best run.
    """
    from evalcore.aggregate import best_per_column, metric_at_k_label
    from evalcore.metrics import DESCRIPTIVE, LOWER_IS_BETTER

    s = summary.copy()
    s["run"] = s["run"].astype(str)
    s["metric"] = s["metric"].astype(str)
    if "aggregate" not in s.columns:
        s = s.assign(aggregation="mean", aggregate=s["mean"], aggregate_ci_low=s["ci_low"],
                     aggregate_ci_high=s["ci_high"])
    cols = list(columns) if columns is not None else metric_k_pairs(s)
    runs = list(runs) if runs is not None else list(dict.fromkeys(s["run"]))
    pool = s if eligible is None else s[s["run"].isin({str(r) for r in eligible})]
    pool = pool.assign(group=[str((groups or {}).get(r)) for r in pool["run"]])
    base = pool["metric"].str.split("(", n=1).str[0]
    lower = {m: False for m in pool["metric"][base.isin(LOWER_IS_BETTER)].unique()}  # + parameterised
    marked = best_per_column(pool, higher_is_better=lower, within=("metric", "k", "group"), value="aggregate")
    marked = marked[~marked["metric"].str.split("(", n=1).str[0].isin(DESCRIPTIVE)]
    best_keys = set(marked.loc[marked["is_best"], ["run", "metric", "k"]].itertuples(index=False, name=None))
    text = pd.DataFrame(index=pd.Index(runs, name="run"), dtype=object)
    best = pd.DataFrame(False, index=text.index, columns=[])
    fmt = f"{{:.{digits}f}}"
    idx = s.set_index(["run", "metric", "k"])
    for m, k in cols:
        label = metric_at_k_label(m, k)
        vals, marks = [], []
        for r in runs:
            key = (r, m, k)
            if key not in idx.index:
                vals.append("–")
                marks.append(False)
                continue
            row = idx.loc[key]
            if row["aggregation"] == "sum":
                total = float(row["aggregate"])
                cell = f"{total:.0f}" if total.is_integer() else fmt.format(total)
            elif not np.isfinite(float(row["aggregate"])):  # no value on any query (first_rel_rank: none found)
                cell = "– [n = 0]" if with_ci else "–"
            else:
                cell = fmt.format(row["aggregate"])
                if with_ci:
                    lo, hi = float(row["aggregate_ci_low"]), float(row["aggregate_ci_high"])
                    cell += f" [{fmt.format(lo)}, {fmt.format(hi)}]" if np.isfinite(lo) and np.isfinite(hi) \
                        else " [n < 2]"
            is_best = (r, m, int(k)) in best_keys
            if mark_best and is_best:
                cell = "★ " + cell
            vals.append(cell)
            marks.append(is_best)
        text[label] = vals
        best[label] = marks
    return text, best


def default_columns(pairs: Sequence[tuple[str, int]], *, prefer_k: int = 10, limit: int = 6) -> list[tuple[str, int]]:
    """Sensible default metric@k columns of the Overview: each metric at ``prefer_k`` (or the computed k
    nearest to it; a metric without cutoff as is), then recall at the deepest k, at most ``limit``."""
    by_metric: dict[str, list[int]] = {}
    for m, k in pairs:
        by_metric.setdefault(m, []).append(int(k))
    out: list[tuple[str, int]] = []
    for m, ks in by_metric.items():
        ks_cut = [k for k in ks if k > 0] or ks
        out.append((m, min(ks_cut, key=lambda k: (abs(k - prefer_k), k))))
    if "recall" in by_metric:
        deepest = max(by_metric["recall"])
        if ("recall", deepest) not in out:
            out.append(("recall", deepest))
    return out[:limit]


#: Columns :func:`display_table` formats as p-values.
P_VALUE_COLUMNS: tuple[str, ...] = ("p-value", "p adjusted", "p_value", "p_adjusted")


def display_table(
    frame: pd.DataFrame,
    *,
    p_columns: Iterable[str] = P_VALUE_COLUMNS,
    blank: str = "–",
    digits: int = 4,
    p_as_text: bool = False,
    gaps_as_text: bool = False,
) -> pd.DataFrame:
    """A copy of a table made for reading: numbers stay numbers (aligned and sorted as numbers), no "None" / "NaN"
    cells drawn.

    * Columns named in ``p_columns`` stay numbers (float, NaN when missing): :func:`dashboard.ui.dataframe`
      shows them through :func:`p_values_read` as :func:`dashboard.drilldown.format_p_value` writes them
      (``"0.387"``, ``"<0.001"``, ``blank`` when missing), aligned and sorted as numbers; with
      ``p_as_text=True`` they become that text here.
    * Every other number column holding a missing value (None, NaN, ``pd.NA``: a run without that query, an
      unjudged item's grade, an untested domain's CI) stays a number column: whole numbers as integers
      (nullable ``Int64``: ``37``, not ``37.0000``), other numbers as floats (NaN), shown by
      :func:`dashboard.ui.dataframe` with ``digits`` decimals (or the page's own column format) and its
      placeholder ``–`` in the gaps; with ``gaps_as_text=True`` they become text here (``"37"``,
      ``"0.1235"``, ``blank``), as before, for places that show text.
    * Text (and boolean) columns holding a missing value get ``blank`` there.
    * Columns without a missing value are left untouched.

    Parameters
    ----------
    frame : DataFrame
        Not modified; its index is kept.
    p_columns : iterable of str, default :data:`P_VALUE_COLUMNS`
    blank : str, default "–"
        Text of a missing value (the placeholder :func:`dashboard.ui.dataframe` gives number columns is ``–``).
    digits : int, default 4
        Decimals of non-integer numbers made text (``gaps_as_text=True``).
    p_as_text : bool, default False
        True: the p-value columns become text (left-aligned and sorted as text in a table: only for
        places that show text, not for ``ui.dataframe``).
    gaps_as_text : bool, default False
        True: the other number columns with a missing value become text (same caveat).

    Returns
    -------
    DataFrame
    """
    from dashboard.drilldown import format_p_value

    out = frame.copy()
    pcols = set(p_columns)
    for col in out.columns:
        values = out[col]
        if col in pcols:
            if p_as_text:
                out[col] = [format_p_value(v, missing=blank) for v in values]
            else:
                out[col] = pd.to_numeric(values, errors="coerce").astype(np.float64)
            continue
        missing = values.isna().to_numpy()
        if not missing.any():
            continue
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            out[col] = [blank if m else v for v, m in zip(values.astype(object), missing, strict=True)]
            continue
        present = values[~missing].to_numpy(dtype=np.float64)
        whole = bool(np.all(np.isfinite(present) & (present == np.round(present))))
        if gaps_as_text:
            fmt = (lambda v: str(int(v))) if whole else (lambda v: f"{v:.{digits}f}")
            out[col] = [blank if m else fmt(float(v)) for v, m in zip(values.astype(object), missing, strict=True)]
        else:  # a number column: right-aligned, sorted by value, the table's placeholder in the gaps
            numbers = pd.to_numeric(values, errors="coerce").astype(np.float64)
            integers = whole and present.size > 0 and bool(np.all(np.abs(present) < 2.0 ** 53))  # none: float
            out[col] = numbers.astype("Int64") if integers else numbers
    return out


def p_value_columns(frame: pd.DataFrame, *, p_columns: Iterable[str] = P_VALUE_COLUMNS) -> list[Any]:
    """The columns of ``frame`` that hold p-values as numbers (named in ``p_columns``, of a float dtype)."""
    names = set(p_columns)
    return [c for c in frame.columns
            if isinstance(c, str) and c in names and pd.api.types.is_float_dtype(frame[c].dtype)]


def p_values_read(frame: pd.DataFrame, *, p_columns: Iterable[str] = P_VALUE_COLUMNS, blank: str = "–") -> Any:
    """A ``pandas.Styler`` of ``frame`` (from :func:`display_table` with ``p_as_text=False``) whose p-value
    columns read as :func:`dashboard.drilldown.format_p_value` writes them (``"0.387"``, ``"<0.001"``,
    ``blank`` when missing) while their values stay numbers: the table aligns them as numbers and sorts them
    by value (as text, ``"1"`` sat left of the numbers and ``"<0.001"`` sorted after ``"0.9"``). Shown with a
    number column *without* a format (a format would replace the text)."""
    from dashboard.drilldown import format_p_value

    cols = p_value_columns(frame, p_columns=p_columns)
    return frame.style.format({c: (lambda v: format_p_value(v, missing=blank)) for c in cols})


def pr_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """The precision–recall curve: interpolated precision at each recall level, per run.

    Rows of ``summary`` (:func:`evalcore.aggregate.summarize` with
    ``aggregates=True``) whose metric is ``iprec_at_recall(recall=x)`` at the
    evaluation's threshold (no ``rel``), as columns ``run, recall, mean,
    ci_low, ci_high, n`` sorted by run then recall: evalcore's means over the
    queries, the recall level read from the metric's name.
    """
    from evalcore.measures import parse_measure

    # (only those names parsed: parsing another one again, e.g. 'hits', repeated its note at every rerun)
    names = {m: parse_measure(m) for m in summary["metric"].astype(str).unique() if m.startswith("iprec_at_recall")}
    levels = {m: float(x.param("recall")) for m, x in names.items()
              if x.name == "iprec_at_recall" and x.rel is None and x.params}
    s = summary[summary["metric"].astype(str).isin(levels)]
    out = pd.DataFrame({"run": s["run"].astype(str).to_numpy(),
                        "recall": s["metric"].astype(str).map(levels).to_numpy(dtype=float),
                        "mean": s["mean"].to_numpy(dtype=float), "ci_low": s["ci_low"].to_numpy(dtype=float),
                        "ci_high": s["ci_high"].to_numpy(dtype=float), "n": s["n"].to_numpy()})
    return out.sort_values(["run", "recall"], kind="mergesort").reset_index(drop=True)


def paired_only(metric: str) -> bool:
    """Whether a pair of runs is compared on fewer queries than each has: a metric with no value where a run
    finds no relevant document (``first_rel_rank``), so each pair's means are over its own queries."""
    return metric_base(metric) in NAN_METRICS


def one_sided_text(only_a: int, only_b: int) -> str:
    """What the pair's counts leave out for a :func:`paired_only` metric (see ``drilldown.one_sided``).

    >>> one_sided_text(0, 3)
    ' Not counted: 3 queries where only B finds a relevant document (none where only A does).'
    """
    def part(n: int, who: str) -> str:
        return f"{n:,} {'query' if n == 1 else 'queries'} where only {who} finds a relevant document"

    if not only_a and not only_b:
        return " Every query where one run finds a relevant document, the other does too."
    if not only_a:
        return f" Not counted: {part(only_b, 'B')} (none where only A does)."
    if not only_b:
        return f" Not counted: {part(only_a, 'A')} (none where only B does)."
    return f" Not counted: {part(only_a, 'A')}, {part(only_b, 'B')}."


def baseline_caption(baseline_means: Any, *, metric: str = "") -> str:
    """The caption above the runs-against-the-baseline table: the baseline's mean (for gm_map, of ln AP), or
    why there is none.  ``baseline_means``: the table's "baseline mean" column (one value per row: the same
    on every row, except for a :func:`paired_only` metric, where each row's is over the pair's own queries,
    and the caption says so instead of giving one).

    >>> baseline_caption([3.5, 2.0], metric="first_rel_rank")[:60]
    'Against the baseline. Means over the n queries where both ru'
    """
    values = np.atleast_1d(np.asarray([] if baseline_means is None else baseline_means, dtype=float))
    if not len(values):
        return "Against the baseline. "
    if paired_only(metric):
        if not np.isfinite(values).any():
            return ("Against the baseline (no query where both the baseline and a run find a relevant document: "
                    "no mean). ")
        return ("Against the baseline. Means over the n queries where both runs find a relevant document "
                "(each row its own; the Overview's mean is over each run's own queries). ")
    if not np.isfinite(values[0]):
        return "Against the baseline (the baseline has no value on any query: no mean). "
    what = "mean ln AP" if metric_base(metric) == "gm_map" else "mean"
    return f"Against the baseline ({what} of the baseline: {values[0]:.4f}). "


def better_worse(wins: Any, losses: Any, *, higher_is_better: bool = True) -> tuple[Any, Any]:
    """``(wins, losses)`` with a win a better value: the tests count a win where the run's value is above
    (B − A > 0), which for ``first_rel_rank`` (lower is better) is a loss."""
    return (wins, losses) if higher_is_better else (losses, wins)


def wtl_cells(wins: Any, ties: Any, losses: Any, *, higher_is_better: bool = True) -> list[str]:
    """``"wins / ties / losses"`` of a run against another, a win being a better value (:func:`better_worse`).

    >>> wtl_cells([10], [0], [6], higher_is_better=False)
    ['6 / 0 / 10']
    """
    w, lo = better_worse(wins, losses, higher_is_better=higher_is_better)
    return [f"{a} / {b} / {c}" for a, b, c in zip(w, ties, lo, strict=True)]


def baseline_view(rows: pd.DataFrame, *, coverage: Mapping[str, float] | pd.Series, label: str,
                  higher_is_better: bool = True) -> pd.DataFrame:
    """The Compare table, key columns first: run, run − baseline, its 95% CI (one text cell), p adjusted,
    significant; then the run's mean (for a :func:`paired_only` metric, and the baseline's, on the pair's
    n queries), its coverage, wins/ties/losses (a win: a better value, see :func:`wtl_cells`), effect size,
    raw p-value, n, note.

    ``rows``: :func:`dashboard.drilldown.against_baseline` output.
    """
    cov = dict(coverage)
    notes = ci_test_notes(rows["note"], rows["ci_low"], rows["ci_high"], rows["p_value"], rows["significant"])
    view = pd.DataFrame({
        "run": rows["run"].astype(str),
        "run − baseline": rows["difference"].astype(float),
        "95% CI (bootstrap)": ci_cells(rows["ci_low"], rows["ci_high"]),
        "p adjusted": rows["p_adjusted"],
        "significant": rows["significant"].astype(bool),
        (f"mean ln AP ({label})" if metric_base(label) == "gm_map" else f"mean {label}"):
            rows["mean"].astype(float),
        "coverage": [f"{cov[r]:.0%}" if r in cov else "–" for r in rows["run"].astype(str)],
        "wins / ties / losses": wtl_cells(rows["wins"], rows["ties"], rows["losses"],
                                          higher_is_better=higher_is_better),
        "effect size dz": rows["effect_size"].astype(float),
        "p-value": rows["p_value"],
        "n": rows["n"].astype(int),
        "note": notes,
    })
    if paired_only(label):  # each pair's own queries: the baseline's mean on them, beside the run's
        view.insert(6, f"baseline mean {label}", rows["baseline mean"].astype(float).to_numpy())
    return view


def ci_cells(ci_low, ci_high) -> list[str]:
    """A difference's interval as one text cell per row, ``"[-0.0686, -0.0005]"`` (``"–"`` without one)."""
    return [f"[{lo:+.4f}, {hi:+.4f}]" if np.isfinite(lo) and np.isfinite(hi) else "–"
            for lo, hi in zip(np.asarray(ci_low, dtype=float), np.asarray(ci_high, dtype=float), strict=True)]


def ci_test_notes(notes, ci_low, ci_high, p_values, significant) -> list[str]:
    """Each row's note, plus why a 95% bootstrap interval that excludes 0 sits next to "not significant":
    the test rejects before the correction for the other pairs but not after, or the test itself does not
    reject (the interval comes from the bootstrap, not from the test, and is not corrected)."""
    out = []
    raws = pd.to_numeric(pd.Series(list(p_values), dtype=object), errors="coerce").to_numpy(dtype=float)
    for note, lo, hi, raw, sig in zip(notes, ci_low, ci_high, raws, significant, strict=True):
        note, lo, hi = ("" if note is None else str(note)), float(lo), float(hi)
        why = ""
        if not bool(sig) and np.isfinite(lo) and np.isfinite(hi) and not lo <= 0 <= hi and raw == raw:
            why = ("the CI excludes 0 and p < 0.05 before the correction, not after" if raw < 0.05 else
                   "the CI excludes 0 but the test's p ≥ 0.05 (the bootstrap interval is not the test)")
        out.append(f"{note}; {why}" if note and why else (note or why))
    return out


def coinciding_runs(curve: pd.DataFrame, *, x: str = "k") -> list[list[str]]:
    """Groups (two or more runs, in first-appearance order) whose curves are the same: the same mean at
    the same ``x``, every ``x`` (rounded to 12 decimals). Their lines are drawn on top of each other, so the
    chart cannot show it.

    ``curve``: :func:`curve_frame` output (``x="k"``), or :func:`pr_frame` output (``x="recall"``).
    """
    seen: dict[tuple, list[str]] = {}
    for run, d in curve.groupby("run", sort=False):
        d = d.sort_values(x, kind="mergesort")
        seen.setdefault((tuple(d[x].tolist()), tuple(d["mean"].round(12).tolist())), []).append(str(run))
    return [names for names in seen.values() if len(names) > 1]


def curve_frame(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows of one metric with a cutoff (k > 0), sorted by run then k: the data of a metric-vs-k curve."""
    s = summary[(summary["metric"].astype(str) == metric) & (summary["k"] > 0)].copy()
    s["run"] = s["run"].astype(str)
    return s.sort_values(["run", "k"], kind="mergesort").reset_index(drop=True)


#: Seed 002's "Metric Interpretation Guidelines" (nDCG@10 and Recall@10 bands), shown as a hint:
#: label -> [(low, high, band, reading)], low inclusive, high exclusive (the guide's "0.7 - 0.9" and
#: "0.5 - 0.7" share an edge: 0.7 is "Very Good", and the table says so with half-open ranges).
READING_GUIDE: dict[str, list[tuple[float, float, str, str]]] = {
    "ndcg@10": [
        (0.9, np.inf, "Excellent", "Near-perfect ranking"),
        (0.7, 0.9, "Very Good", "Strong performance"),
        (0.5, 0.7, "Good", "Acceptable for most tasks"),
        (0.3, 0.5, "Fair", "Room for improvement"),
        (-np.inf, 0.3, "Poor", "Needs significant work"),
    ],
    "recall@10": [
        (0.8, np.inf, "Excellent", "Finding most relevant docs"),
        (0.6, 0.8, "Good", "Missing some relevant docs"),
        (0.4, 0.6, "Fair", "Missing many relevant docs"),
        (-np.inf, 0.4, "Poor", "Low coverage"),
    ],
}


def band_range(lo: float, hi: float) -> str:
    """``"0.7 ≤ x < 0.9"``, ``"x ≥ 0.9"``, ``"x < 0.3"``: the half-open range [lo, hi) of a value x."""
    if np.isinf(lo):
        return f"x < {hi:g}"
    if np.isinf(hi):
        return f"x ≥ {lo:g}"
    return f"{lo:g} ≤ x < {hi:g}"


def reading_band(label: str, value: float | None) -> str | None:
    """Seed 002's band of a value of ``ndcg@10`` / ``recall@10`` (None for other metric@k)."""
    bands = READING_GUIDE.get(label)
    if bands is None or value is None or not np.isfinite(value):
        return None
    for lo, hi, name, _ in bands:
        if lo <= value < hi:
            return name
    return None


def reading_guide_frames() -> dict[str, pd.DataFrame]:
    """Seed 002's two guide tables as frames (static text; each value of x falls in one range)."""
    return {label: pd.DataFrame([{label: band_range(lo, hi), "band": b, "reading": m} for lo, hi, b, m in bands])
            for label, bands in READING_GUIDE.items()}


def overlap_text(n_queries: int, places: int, most: int, a: float, b: float) -> str:
    """Compare's scatter caption on queries drawn over each other (:func:`dashboard.charts.shared_points`): one
    point may stand for hundreds of queries (binary relevance: (0, 0), (1, 1)); empty when every query has a point
    of its own. Plain text (numbers only)."""
    if places >= n_queries:
        return ""
    return (f" The {n_queries:,} queries are drawn at {places:,} places: queries with the same two values share a "
            f"point ({most:,} at A = {a:.4g}, B = {b:.4g}); the histogram counts them.")

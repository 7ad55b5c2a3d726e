"""Report artifacts: ``report.json`` (seed 001 §8), ``per_query.csv``, ``{run}_results.csv`` (seed 000)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ._lazy import pd
from .data import Run
from .defaults import REPORT_CI_METHOD, SEED
from .errors import OptionError
from .evaluate import Evaluation
from .intervals import DEFAULT_RESAMPLES
from .results import ResultColumns, first_appearance, group_stats

__all__ = ["build_report", "report_json_text", "sample_metadata", "write_outputs", "write_per_query_csv", "results_by_k"]

_INDENT_ROWS = 50_000  # report.json is indented (indent=1) up to this many table rows


def _label(metric: str, k: int) -> str:
    return metric if int(k) == 0 else f"{metric}@{int(k)}"


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def results_by_k(evaluation: Evaluation, run: str) -> pd.DataFrame:
    """Seed 000's ``{model}_results.csv``: one row per k, mean and std of each metric.

    Columns: ``k, <metric>_mean, <metric>_std, ...`` (std: sample, ddof=1). Metrics without
    a cutoff (``map@all``, ``bpref``, ``first_rel_rank``...) are in the row ``k = 0``, as in
    ``per_query.csv`` (their cells at the other k are empty, and theirs at k = 0 for the rest).
    """
    cols = evaluation.columns
    header, ks, cells = _results_by_k(cols, run)
    out = pd.DataFrame(cells.reshape(len(ks), len(header) - 1), columns=header[1:], dtype=float)
    out.insert(0, "k", np.asarray(ks, dtype=cols.k.dtype))
    return out


def _results_by_k(cols: ResultColumns, run: str) -> tuple[list[str], list[int], np.ndarray]:
    """Header, k of each row and the ``(rows, 2 * metrics)`` mean/std cells of :func:`results_by_k` (NaN: empty)."""
    ri = cols.runs.index(run) if run in cols.runs else -1
    rows = np.flatnonzero(cols.run == ri)
    sub = dataclasses.replace(cols, run=cols.run[rows], query=cols.query[rows], domain=cols.domain[rows],
                              metric=cols.metric[rows], k=cols.k[rows], value=cols.value[rows])
    metric_codes = first_appearance(sub.metric).tolist()  # the evaluation's order of metrics
    header = ["k"] + [f"{cols.metrics[m]}_{s}" for m in metric_codes for s in ("mean", "std")]
    groups, keys = sub.group_codes(("k", "metric"))
    stats = group_stats(sub.value, groups, len(keys), ddof=1)
    ks = sorted({int(k) for k in keys[:, 0].tolist()})
    cells = np.full((len(ks), 2 * len(metric_codes)), np.nan)
    col_of = {m: i for i, m in enumerate(metric_codes)}
    row_of = {k: i for i, k in enumerate(ks)}
    for (k, m), mean, std in zip(keys.tolist(), stats.mean.tolist(), stats.std.tolist(), strict=True):
        cells[row_of[k], 2 * col_of[m]] = mean
        cells[row_of[k], 2 * col_of[m] + 1] = std
    return header, ks, cells


def _results_by_k_csv(cols: ResultColumns, run: str) -> str:
    """:func:`results_by_k` as CSV text: floats in their shortest round-trip form, empty for NaN."""
    header, ks, cells = _results_by_k(cols, run)
    lines = [",".join(_csv_field(h) for h in header)]
    for k, row in zip(ks, cells.tolist(), strict=True):
        lines.append(",".join([str(k), *("" if v != v else float.__repr__(v) for v in row)]))
    return "\n".join(lines) + "\n"


def _csv_field(text: str) -> str:
    """A CSV field as pandas writes it (quoted only when it holds a separator, a quote or a line break)."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\r\n') else text


def sample_metadata(*, n_samples: int | None, sample_seed: int, seed: int) -> dict[str, Any]:
    """The seed and sample keys of ``report.json``'s metadata, one meaning wherever it is written (``evaluate --out``
    and the dashboard's "Report (JSON)"):

    ``seed``
        the seed of the intervals' resamples (``metadata.ci.seed`` when ``ci.method`` is ``bootstrap``; ``evaluate
        --seed``, the dashboard's 42), written whatever the interval method;
    ``n_samples``
        the size of the query sample, ``null`` when every ground-truth query is evaluated;
    ``sample_seed``
        the seed the query sample was drawn with (``evaluate --sample-seed``, else ``--seed``; the Data page's sample
        seed), ``null`` without a sample.

    >>> sample_metadata(n_samples=500, sample_seed=7, seed=42)
    {'n_samples': 500, 'seed': 42, 'sample_seed': 7}
    >>> sample_metadata(n_samples=0, sample_seed=7, seed=42)
    {'n_samples': None, 'seed': 42, 'sample_seed': None}
    """
    n = int(n_samples) if n_samples else None
    return {"n_samples": n, "seed": int(seed), "sample_seed": int(sample_seed) if n else None}


def ground_truth_metadata(runs: Sequence[str], source: Any, *, per_run: Mapping[str, Any] | None = None
                          ) -> dict[str, str | None]:
    """``report.json``'s ``metadata.ground_truth``, one shape wherever it is written (``evaluate --out`` and the
    dashboard's "Report (JSON)"): each run's name mapped to the source of the ground truth it was judged against
    (the path given on the command line, the file's name in the workspace, a reference model's label).

    ``per_run`` (an evaluation's ``settings["ground_truth"]``, :func:`evalcore.combine.evaluate_per_ground_truth`)
    gives each run's own source; a run it does not name, or every run without it, gets ``source``. Before, the
    dashboard wrote one string and ``evaluate --out`` a per-run mapping when runs were judged against different
    aspects (and nothing otherwise): a consumer reading ``metadata.ground_truth[run]`` failed on one of the two.

    >>> ground_truth_metadata(["a", "b"], "qrels.txt")
    {'a': 'qrels.txt', 'b': 'qrels.txt'}
    >>> ground_truth_metadata(["a", "b"], "x", per_run={"a": "lists.json"})
    {'a': 'lists.json', 'b': 'x'}
    """
    given = dict(per_run) if isinstance(per_run, Mapping) else {}
    out: dict[str, str | None] = {}
    for run in runs:
        value = given.get(str(run), source)
        out[str(run)] = None if value is None else str(value)
    return out


def build_report(
    evaluation: Evaluation,
    runs: Mapping[str, Run] | None = None,
    *,
    top_k: int = 10,
    metadata: Mapping[str, Any] | None = None,
    include_per_query: bool = True,
    ci_method: str = REPORT_CI_METHOD,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = SEED,
) -> dict[str, Any]:
    """Report following seed 001 §8, generalised to any runs, metrics and k.

    ``ci_low`` / ``ci_high`` are 95% intervals of the mean: Student t (``ci_method="t"``,
    :func:`evalcore.aggregate.summarize`) or the percentile bootstrap on ``n_resamples``
    resamples of the queries shared by every run (``"bootstrap"``, ``seed``; by default 1,000 and 42, the
    dashboard's, :func:`evalcore.intervals.summarize_with_intervals`); ``metadata.ci`` says which.

    Layout::

        {"metadata": {k, metrics, ties, rel_threshold, timestamp, runs, ci, ...},
         "coverage": {run: {n_missing, n_ignored, ...}},
         "aggregates": {run: {"ndcg@10": {"mean", "std", "sem", "ci_low", "ci_high", "n",
                                          "aggregation", "aggregate", "aggregate_ci_low",
                                          "aggregate_ci_high"}, ...}},
         "per_query": {query_id: {run: {"ndcg@10": value, ..., "topK": [doc ids]}}}}

    ``aggregate`` is each metric's declared summary figure (the mean; the sum
    of the counts; the geometric mean for ``gm_map``), see
    :func:`evalcore.aggregate.summarize`.
    """
    from .intervals import CI_METHODS

    if ci_method not in CI_METHODS:
        raise OptionError(f"unknown ci_method {ci_method!r}; supported: {', '.join(CI_METHODS)}")
    if ci_method == "t":
        aggregates = _t_aggregates(evaluation)
        ci: dict[str, Any] = {"method": "t", "confidence": 0.95}
    else:
        from .intervals import summarize_with_intervals

        summ = summarize_with_intervals(evaluation.table, method=ci_method, n_resamples=n_resamples, seed=seed,
                                        aggregates=True)
        ci = {"method": ci_method, "confidence": 0.95, "n_resamples": int(n_resamples), "seed": int(seed),
              "resampling": "shared by every run"}
        aggregates = {}
        for row in summ.itertuples(index=False):
            aggregates.setdefault(str(row.run), {})[_label(str(row.metric), int(row.k))] = _aggregate_entry(
                row.mean, row.std, row.sem, row.ci_low, row.ci_high, row.n, row.aggregation, row.aggregate,
                row.aggregate_ci_low, row.aggregate_ci_high)
    meta = {
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "K": max(evaluation.settings.get("k", [0]) or [0]),
        **evaluation.settings,
        "runs": evaluation.runs,
        "ci": ci,
        "tool": "evalcore",
    }
    if metadata:
        meta.update(dict(metadata))
    report: dict[str, Any] = {
        "metadata": meta,
        "coverage": {str(r["run"]): {k: (int(v) if isinstance(v, (int, np.integer)) else v)
                                     for k, v in r.items() if k != "run"}
                     for r in evaluation.coverage_rows},
        "aggregates": aggregates,
    }
    if include_per_query:
        report["per_query"] = _per_query(evaluation, runs, top_k=top_k)
    return report


def _aggregate_entry(mean: float, std: float, sem: float, low: float, high: float, n: int, aggregation: str,
                     aggregate: float, agg_low: float, agg_high: float) -> dict[str, Any]:
    return {"mean": _num(mean), "std": _num(std), "sem": _num(sem), "ci_low": _num(low), "ci_high": _num(high),
            "n": int(n), "aggregation": str(aggregation), "aggregate": _num(aggregate),
            "aggregate_ci_low": _num(agg_low), "aggregate_ci_high": _num(agg_high)}


def _t_aggregates(evaluation: Evaluation) -> dict[str, dict[str, Any]]:
    """``{run: {"ndcg@10": entry}}`` with Student-t intervals: :func:`evalcore.aggregate.summarize`'s
    figures (``aggregates=True``), in its order, computed from the columns (no pandas)."""
    from .summaries import declared_aggregates, t_interval

    if evaluation.has_table:  # (a table from elsewhere: checked; plain string columns grouped in sorted order,
        from .aggregate import _validate_table  # as summarize does)

        _validate_table(evaluation.table)
        cols = ResultColumns.from_table(evaluation.table, sort=True)
    else:
        cols = evaluation.columns
    groups, keys = cols.group_codes(("run", "metric", "k"))
    stats = group_stats(cols.value, groups, len(keys))
    low, high, sem = t_interval(stats)
    agg = declared_aggregates([cols.metrics[m] for m in keys[:, 1].tolist()], stats, low, high)
    out: dict[str, dict[str, Any]] = {}
    for i, (r, m, k) in enumerate(keys.tolist()):
        out.setdefault(cols.runs[r], {})[_label(cols.metrics[m], k)] = _aggregate_entry(
            stats.mean[i], stats.std[i], sem[i], low[i], high[i], stats.n[i], agg["aggregation"][i],
            agg["aggregate"][i], agg["aggregate_ci_low"][i], agg["aggregate_ci_high"][i])
    return out


def _per_query(evaluation: Evaluation, runs: Mapping[str, Run] | None, *, top_k: int) -> dict[str, Any]:
    """``{query: {run: {"ndcg@10": v, ..., "topK": [...]}}}`` (see :mod:`evalcore.report_json`)."""
    from .report_json import per_query_dict, per_query_entries

    return per_query_dict(per_query_entries(_entries_source(evaluation), runs, top_k=top_k,
                                            ties=evaluation.settings.get("ties", "trec")))


def _entries_source(evaluation: Evaluation) -> Any:
    """What :func:`~evalcore.report_json.per_query_entries` reads: the table when there is one (plain string
    query ids keep their order of first appearance), else the columns."""
    return evaluation.table if evaluation.has_table else evaluation.columns


def write_per_query_csv(evaluation: Evaluation, path: str | os.PathLike) -> None:
    """Write the long table ``run, query_id, domain, metric, k, value``.

    Floats are written in their shortest round-trip form (exact when read back
    with ``float_precision="round_trip"``), NaN as an empty field, strings in
    double quotes (RFC 4180). Written by arrow's CSV writer (several times faster
    than pandas' for large tables).
    """
    _refuse_broken(evaluation, path)
    _write_csv(_per_query_arrow(evaluation), path)


def _refuse_broken(evaluation: Evaluation, dest: Any) -> None:
    """The run names, query ids and domains of the per-query table, as the readers check them (a name holding a
    control character would not read back: :func:`evalcore.io.source.refuse_broken_ids`; nor would an empty run
    name or query id, or one with ASCII white space around it: :func:`evalcore.io.source.refuse_unstripped_writes`)."""
    from .io.source import refuse_broken_writes, refuse_unstripped_writes

    cols = evaluation.columns
    refuse_broken_writes(dest, ("run name", list(cols.runs)), ("query id", cols.query_ids),
                         ("domain", list(cols.domains)))
    # (read_per_query_csv strips ASCII white space around a run name or query id, as every id reader)
    refuse_unstripped_writes(dest, ("run name", list(cols.runs)), ("query id", cols.query_ids))


def _per_query_arrow(evaluation: Evaluation) -> Any:
    """The per-query table as an arrow table (categorical columns dictionary-encoded), built from the columns
    without pandas."""
    import pyarrow as pa

    from ._columns import arrow_numbers, arrow_strings

    cols = evaluation.columns
    coded = {"run": (cols.run, list(cols.runs)), "query_id": (cols.query, cols.query_ids.tolist()),
             "domain": (cols.domain, list(cols.domains)), "metric": (cols.metric, list(cols.metrics))}
    arrays = [pa.DictionaryArray.from_arrays(arrow_numbers(codes), arrow_strings([str(x) for x in names]))
              for codes, names in coded.values()]
    arrays.append(arrow_numbers(cols.k))
    arrays.append(arrow_numbers(cols.value, valid=~np.isnan(cols.value)))
    return pa.Table.from_arrays(arrays, names=[*coded, "k", "value"])


def _write_csv(table: Any, path: str | os.PathLike) -> None:
    import pyarrow.csv as pacsv

    pacsv.write_csv(table, str(path), write_options=pacsv.WriteOptions(quoting_style="needed"))


def report_json_text(evaluation: Evaluation, runs: Mapping[str, Run] | None = None, *, top_k: int = 10,
                     metadata: Mapping[str, Any] | None = None, indent: int | None = 1,
                     ci_method: str = REPORT_CI_METHOD,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = SEED) -> str:
    """``json.dumps(build_report(...), indent=indent, ensure_ascii=False, allow_nan=False)``, the per-query
    part written directly as text (:mod:`evalcore.report_json`; same text, several times faster and a
    fraction of the memory of the dict); options as :func:`build_report`."""
    from .report_json import per_query_dict, per_query_entries, per_query_text, report_text

    rep = build_report(evaluation, runs, top_k=top_k, metadata=metadata, include_per_query=False,
                       ci_method=ci_method, n_resamples=n_resamples, seed=seed)
    pq = per_query_entries(_entries_source(evaluation), runs, top_k=top_k,
                           ties=evaluation.settings.get("ties", "trec"))
    if pq.labels and pq.distinct:
        return report_text(rep, per_query_text(pq, indent=indent), indent=indent)
    rep["per_query"] = per_query_dict(pq)  # names a dict would merge: let json.dumps write what it holds
    return json.dumps(rep, indent=indent, ensure_ascii=False, allow_nan=False)


def _safe_filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "run"


def _check_result_files(runs: Sequence[str]) -> None:
    """No two runs share a ``{run}_results.csv`` (one would silently replace the other)."""
    seen: dict[str, str] = {}
    for run in runs:
        key = _safe_filename(str(run)).casefold()
        if key in seen:
            raise OptionError(f"runs {seen[key]!r} and {str(run)!r} would both be written to "
                              f"{_safe_filename(str(run))}_results.csv: give them names that differ in letters or "
                              "digits (--run NAME=FILE)")
        seen[key] = str(run)


def write_outputs(
    evaluation: Evaluation,
    out_dir: str | os.PathLike,
    *,
    runs: Mapping[str, Run] | None = None,
    top_k: int = 10,
    metadata: Mapping[str, Any] | None = None,
    ci_method: str = REPORT_CI_METHOD,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = SEED,
) -> list[Path]:
    """Write ``per_query.csv``, ``report.json`` and ``{run}_results.csv`` into ``out_dir``.

    ``ci_method``, ``n_resamples``, ``seed``: the intervals of report.json (:func:`build_report`; the Student t
    interval by default, ``"bootstrap"`` for the dashboard's).

    A run's file name keeps letters, digits, ``_.-`` of its name (others become ``_``); two runs whose
    names give one file name (``a/b`` and ``a_b``; ``A`` and ``a``, one file on a case-insensitive disk)
    are an :class:`OptionError` before anything is written.
    """
    from concurrent.futures import ThreadPoolExecutor

    _check_result_files(evaluation.runs)
    _refuse_broken(evaluation, Path(out_dir) / "per_query.csv")

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "per_query.csv", out / "report.json"]
    indent = 1 if len(evaluation.columns) <= _INDENT_ROWS else None  # big reports: no indent (smaller)
    # arrow's CSV writer runs without the GIL: per_query.csv is written (from an arrow table built
    # here, which nothing else touches) while report.json is built
    with ThreadPoolExecutor(1) as pool:
        csv_done = pool.submit(_write_csv, _per_query_arrow(evaluation), written[0])
        text = report_json_text(evaluation, runs, top_k=top_k, metadata=metadata, indent=indent, ci_method=ci_method,
                                n_resamples=n_resamples, seed=seed)
        csv_done.result()
    written[1].write_text(text, encoding="utf-8")
    for run_name in evaluation.runs:
        p = out / f"{_safe_filename(run_name)}_results.csv"
        p.write_text(_results_by_k_csv(evaluation.columns, run_name), encoding="utf-8")
        written.append(p)
    return written

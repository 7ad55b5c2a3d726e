"""Report artifacts: ``report.json`` (seed 001 §8), ``per_query.csv``, ``{run}_results.csv`` (seed 000)."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ._lazy import pd
from .data import Run
from .evaluate import Evaluation

__all__ = ["build_report", "write_outputs", "write_per_query_csv", "results_by_k"]


def _label(metric: str, k: int) -> str:
    return metric if int(k) == 0 else f"{metric}@{int(k)}"


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def results_by_k(evaluation: Evaluation, run: str) -> pd.DataFrame:
    """Seed 000's ``{model}_results.csv``: one row per k, mean and std of each metric.

    Columns: ``k, <metric>_mean, <metric>_std, ...`` (std: sample, ddof=1).
    Metrics without a cutoff are left out (they have no k).
    """
    t = evaluation.table
    t = t[(t["run"] == run) & (t["k"] > 0)]
    g = t.groupby(["k", "metric"], observed=True)["value"]
    agg = pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=1).fillna(0.0)}).reset_index()
    wide = agg.pivot(index="k", columns="metric", values=["mean", "std"])
    wide.columns = [f"{m}_{s}" for s, m in wide.columns]
    metrics = list(dict.fromkeys(agg["metric"].astype(str)))
    cols = [c for m in metrics for c in (f"{m}_mean", f"{m}_std")]
    return wide[cols].reset_index()


def build_report(
    evaluation: Evaluation,
    runs: Mapping[str, Run] | None = None,
    *,
    top_k: int = 10,
    metadata: Mapping[str, Any] | None = None,
    include_per_query: bool = True,
) -> dict[str, Any]:
    """Report following seed 001 §8, generalised to any runs, metrics and k.

    Layout::

        {"metadata": {k, metrics, ties, rel_threshold, timestamp, runs, ...},
         "coverage": {run: {n_missing, n_ignored, ...}},
         "aggregates": {run: {"ndcg@10": {"mean", "std", "sem", "ci_low", "ci_high", "n",
                                          "aggregation", "aggregate", "aggregate_ci_low",
                                          "aggregate_ci_high"}, ...}},
         "per_query": {query_id: {run: {"ndcg@10": value, ..., "topK": [doc ids]}}}}

    ``aggregate`` is each metric's declared summary figure (the mean; the sum
    of the counts; the geometric mean for ``gm_map``), see
    :func:`evalcore.aggregate.summarize`.
    """
    from .aggregate import summarize

    table = evaluation.table
    summ = summarize(table, aggregates=True)
    aggregates: dict[str, dict[str, Any]] = {}
    for row in summ.itertuples(index=False):
        aggregates.setdefault(str(row.run), {})[_label(str(row.metric), int(row.k))] = {
            "mean": _num(row.mean), "std": _num(row.std), "sem": _num(row.sem),
            "ci_low": _num(row.ci_low), "ci_high": _num(row.ci_high), "n": int(row.n),
            "aggregation": str(row.aggregation), "aggregate": _num(row.aggregate),
            "aggregate_ci_low": _num(row.aggregate_ci_low), "aggregate_ci_high": _num(row.aggregate_ci_high),
        }
    meta = {
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "K": max(evaluation.settings.get("k", [0]) or [0]),
        **evaluation.settings,
        "runs": evaluation.runs,
        "tool": "evalcore",
    }
    if metadata:
        meta.update(dict(metadata))
    report: dict[str, Any] = {
        "metadata": meta,
        "coverage": {str(r["run"]): {k: (int(v) if isinstance(v, (int, np.integer)) else v)
                                     for k, v in r.items() if k != "run"}
                     for r in evaluation.coverage.to_dict("records")},
        "aggregates": aggregates,
    }
    if include_per_query:
        report["per_query"] = _per_query(evaluation, runs, top_k=top_k)
    return report


def _codes_of(col: pd.Series) -> tuple[np.ndarray, list[str]]:
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy(), [str(x) for x in col.cat.categories]
    codes, uniq = pd.factorize(col.astype(str))
    return codes, [str(x) for x in uniq]


def _per_query(evaluation: Evaluation, runs: Mapping[str, Run] | None, *, top_k: int) -> dict[str, Any]:
    """``{query: {run: {"ndcg@10": v, ..., "topK": [...]}}}`` built column-wise (no per-row pandas work)."""
    from .ranking import rank_order

    table = evaluation.table
    mk = table[["metric", "k"]].drop_duplicates()
    labels = [_label(str(m), int(k)) for m, k in mk.itertuples(index=False)]
    lab_index = pd.MultiIndex.from_frame(mk.astype({"metric": str}))
    lab_codes = lab_index.get_indexer(pd.MultiIndex.from_arrays([table["metric"].astype(str), table["k"]]))
    q_codes, q_names = _codes_of(table["query_id"])
    r_codes, r_names = _codes_of(table["run"])
    values = np.full((len(r_names), len(q_names), len(labels)), np.nan)
    present = np.zeros((len(r_names), len(q_names)), dtype=bool)
    values[r_codes, q_codes, lab_codes] = table["value"].to_numpy(dtype=np.float64)
    present[r_codes, q_codes] = True
    per_query: dict[str, dict[str, dict[str, Any]]] = {}
    for ri, run_name in enumerate(r_names):
        qs = np.flatnonzero(present[ri])
        block = values[ri, qs]
        has_nan = np.isnan(block).any(axis=1)
        rows = block.tolist()
        for qi, row, nan in zip(qs.tolist(), rows, has_nan.tolist(), strict=True):
            if nan:
                row = [None if v != v else v for v in row]
            per_query.setdefault(q_names[qi], {})[run_name] = dict(zip(labels, row, strict=True))
    if runs:
        ties = evaluation.settings.get("ties", "trec")
        for run_name, run in runs.items():
            if run_name not in r_names:
                continue
            order, pos = rank_order(run, ties=ties)
            keep = order[pos < top_k]
            qidx = run.q[keep]
            if len(qidx) == 0:
                continue
            docs = run.docs_at(keep).tolist()
            bounds = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]]).tolist()
            for qi, a, b in zip(qidx[bounds].tolist(), bounds, [*bounds[1:], len(docs)], strict=True):
                entry = per_query.get(str(run.query_ids[qi]))
                if entry is not None and run_name in entry:
                    entry[run_name]["topK"] = docs[a:b]
    return per_query


def write_per_query_csv(evaluation: Evaluation, path: str | os.PathLike) -> None:
    """Write the long table ``run, query_id, domain, metric, k, value``.

    Floats are written in their shortest round-trip form (exact when read back
    with ``float_precision="round_trip"``), NaN as an empty field, strings in
    double quotes (RFC 4180). Written by arrow's CSV writer (several times faster
    than pandas' for large tables).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    cols = {}
    for name in evaluation.table.columns:
        col = evaluation.table[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            cats = pa.array(col.cat.categories.astype(str).to_numpy(dtype=object), type=pa.string())
            cols[name] = pa.DictionaryArray.from_arrays(pa.array(col.cat.codes.to_numpy()), cats)
        elif col.dtype.kind == "f":
            v = col.to_numpy()
            cols[name] = pa.array(v, mask=np.isnan(v))
        elif col.dtype.kind in "iub":
            cols[name] = pa.array(col.to_numpy())
        else:
            cols[name] = pa.array(col.astype(str).to_numpy(dtype=object), type=pa.string())
    pacsv.write_csv(pa.table(cols), str(path), write_options=pacsv.WriteOptions(quoting_style="needed"))


def _safe_filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "run"


def write_outputs(
    evaluation: Evaluation,
    out_dir: str | os.PathLike,
    *,
    runs: Mapping[str, Run] | None = None,
    top_k: int = 10,
    metadata: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write ``per_query.csv``, ``report.json`` and ``{run}_results.csv`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    p = out / "per_query.csv"
    write_per_query_csv(evaluation, p)
    written.append(p)
    rep = build_report(evaluation, runs, top_k=top_k, metadata=metadata)
    p = out / "report.json"
    indent = 1 if len(evaluation.table) <= 50_000 else None  # the C encoder (no indent) for big reports
    p.write_text(json.dumps(rep, indent=indent, ensure_ascii=False, allow_nan=False), encoding="utf-8")
    written.append(p)
    for run_name in evaluation.runs:
        p = out / f"{_safe_filename(run_name)}_results.csv"
        results_by_k(evaluation, run_name).to_csv(p, index=False)
        written.append(p)
    return written

"""One evaluation from several: stacked per-query tables, runs against their own ground truths.

* :func:`concat_tables` / :func:`concat_evaluations` — stack long per-query tables
  (categories united), e.g. the aspects of seed 001 or the per-k ground truths of
  a reference model;
* :func:`stack_run_evaluations` — evaluations of single runs against one ground truth
  stacked into the evaluation of all of them (what one ``evaluate`` call gives);
* :func:`evaluate_per_ground_truth` — each run against its own ground truth;
* :func:`with_diversity` — an evaluation with diversity rows appended.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._lazy import pd
from .data import Qrels, Run
from .errors import OptionError
from .evaluate import Evaluation, evaluate

__all__ = ["concat_tables", "concat_evaluations", "stack_run_evaluations", "append_run_evaluations",
           "evaluate_per_ground_truth", "with_diversity"]


def _union_cat(parts: list[pd.Series]) -> pd.Categorical:
    from pandas.api.types import union_categoricals

    cats = [p if isinstance(p.dtype, pd.CategoricalDtype) else p.astype("category") for p in parts]
    return union_categoricals(cats, ignore_order=True)


def concat_tables(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Stack long per-query tables (``run, query_id, domain, metric, k, value``), uniting the categories.

    A (run, query, metric, k) appearing twice is an :class:`OptionError`.
    """
    tables = list(tables)
    cols = {c: _union_cat([t[c] for t in tables]) for c in ("run", "query_id", "domain", "metric")}
    table = pd.DataFrame({
        **cols,
        "k": np.concatenate([t["k"].to_numpy().astype(np.int32) for t in tables]),
        "value": np.concatenate([t["value"].to_numpy(dtype=np.float64) for t in tables]),
    })
    dup = table.duplicated(["run", "query_id", "metric", "k"])
    if dup.any():
        r = table[dup].iloc[0]
        raise OptionError(f"run {r['run']!r} has two values for {r['metric']}@{r['k']} on query {r['query_id']!r}; "
                          "give the evaluations distinct run names")
    return table


def concat_evaluations(evaluations: Sequence[Evaluation], *, settings: Mapping[str, Any] | None = None) -> Evaluation:
    """One :class:`Evaluation` from several (different runs, ground truths or cutoffs).

    Tables are stacked (categories united, first-seen order kept); coverage
    keeps one row per run (the first; repeated runs — one evaluation per k in
    the tied reference mode — take the maximum of each count). Settings: those
    of the first, ``k`` and ``measures`` united, then ``settings`` on top.
    A (run, query, metric, k) appearing twice is an error.
    """
    evs = list(evaluations)
    if not evs:
        raise OptionError("nothing to concatenate")
    if len(evs) == 1 and not settings:
        return evs[0]
    table = concat_tables([e.table for e in evs])
    cov = pd.concat([e.coverage for e in evs], ignore_index=True)
    if cov["run"].duplicated().any():
        num = [c for c in cov.columns if c != "run" and pd.api.types.is_numeric_dtype(cov[c])]
        order = list(dict.fromkeys(cov["run"]))
        cov = cov.groupby("run", sort=False)[num].max().reindex(order).reset_index()
    merged = dict(evs[0].settings)
    merged["k"] = sorted({int(x) for e in evs for x in e.settings.get("k", [])})
    merged["measures"] = list(dict.fromkeys(m for e in evs for m in e.settings.get("measures", [])))
    if settings:
        merged.update(dict(settings))
    return Evaluation(table, cov, merged)


def stack_run_evaluations(evaluations: Sequence[Evaluation], *, names: Sequence[str] | None = None) -> Evaluation:
    """The evaluation of several runs from evaluations of one run each (``evaluate`` of one run against
    one ground truth, with the same options): exactly what ``evaluate`` of all the runs at once gives.

    ``evaluate`` evaluates each run on its own and stacks the rows run after run, so the runs' codes
    are stacked here (run codes shifted, nothing else changes; no table is built).  ``names``
    renames the runs, in order (default: their own names; they must be distinct).

    Raises
    ------
    OptionError
        An evaluation holds several runs, or they differ in queries, domains, metrics or
        options (``settings``, the ground truth's source among them), or two runs share a
        name.  Two ground truths with the same queries, domains and source cannot be told
        apart here: the caller passes evaluations against one ground truth.
    """
    evs = list(evaluations)
    if not evs:
        raise OptionError("nothing to stack")
    cols = [e.columns for e in evs]
    first = cols[0]
    for e, c in zip(evs, cols, strict=True):
        if len(c.runs) != 1:
            raise OptionError(f"stack_run_evaluations takes evaluations of one run each, not {list(c.runs)}")
        if e.settings != evs[0].settings or c.domains != first.domains or c.metrics != first.metrics or not (
                c.query_ids is first.query_ids or np.array_equal(c.query_ids, first.query_ids)):
            raise OptionError("stack_run_evaluations: the evaluations differ in ground truth, queries, domains, "
                              "metrics or options (concat_evaluations stacks such tables)")
    runs = tuple(str(n) for n in names) if names is not None else tuple(c.runs[0] for c in cols)
    if len(runs) != len(evs) or len(set(runs)) != len(runs):
        raise OptionError(f"stack_run_evaluations: {len(evs)} runs need distinct names, got {list(runs)}")
    return _stacked(evs, runs, None)


def _stacked(evs: list[Evaluation], runs: tuple[str, ...], onto: Evaluation | None) -> Evaluation:
    """The stack of ``evs`` (checked) named ``runs``; with ``onto`` (a stack named ``runs[:len(onto.runs)]``), the
    rows of ``evs`` appended after its rows (:func:`append_run_evaluations`)."""
    from .results import ResultColumns

    cols = [e.columns for e in evs]
    first = cols[0] if onto is None else onto.columns
    dtype = np.result_type(first.run.dtype, np.min_scalar_type(len(runs)))
    start = 0 if onto is None else len(onto.columns.runs)
    run = [np.full(len(c), start + i, dtype=dtype) for i, c in enumerate(cols)]

    def stacked(field: str, parts: list[np.ndarray] | None = None) -> np.ndarray:
        parts = parts if parts is not None else [getattr(c, field) for c in cols]
        return np.concatenate(parts) if onto is None else _grown(getattr(onto.columns, field), parts)

    columns = ResultColumns(runs, first.query_ids, first.domains, first.metrics, stacked("run", run), stacked("query"),
                            stacked("domain"), stacked("metric"), stacked("k"), stacked("value"))
    coverage = [{**e.coverage_rows[0], "run": name} for e, name in zip(evs, runs[start:], strict=True)]
    if onto is not None:
        return Evaluation(None, None, dict(onto.settings), columns, [*onto.coverage_rows, *coverage])
    return Evaluation(None, None, dict(evs[0].settings), columns, coverage)


def append_run_evaluations(stacked: Evaluation, evaluations: Sequence[Evaluation], *,
                           names: Sequence[str]) -> Evaluation:
    """``stack_run_evaluations([*the evaluations stacked into stacked, *evaluations], names=[*stacked's runs,
    *names])``, without copying the rows of ``stacked`` when it can: what the dashboard does when a training script
    adds a checkpoint to 137 others (19 M rows stacked; the new run's 140,000 are appended).

    ``stacked`` is a :func:`stack_run_evaluations` or :func:`append_run_evaluations` result (settings, queries,
    domains and metrics of the evaluations stacked into it). Its arrays are views of buffers with room after
    their rows: the new rows are written there and the result's arrays are longer views of the same buffers,
    when no other evaluation wrote after ``stacked``'s rows already (else, or without room, everything is copied
    into new buffers with room). Rows of an evaluation are never written after it is returned, so ``stacked``
    stays what it was. The result is equal, array for array, to the stack of all (tested).

    Raises
    ------
    OptionError
        As :func:`stack_run_evaluations` (evaluations of several runs, or differing from ``stacked`` in ground
        truth, queries, domains, metrics or options; names taken).
    """
    evs = list(evaluations)
    names = tuple(str(n) for n in names)
    first = stacked.columns
    if len(names) != len(evs) or len(set(names) | set(first.runs)) != len(names) + len(first.runs):
        raise OptionError(f"append_run_evaluations: {len(evs)} runs need distinct names not among the stacked "
                          f"runs, got {list(names)}")
    for e in evs:
        c = e.columns
        if len(c.runs) != 1:
            raise OptionError(f"append_run_evaluations takes evaluations of one run each, not {list(c.runs)}")
        if e.settings != stacked.settings or c.domains != first.domains or c.metrics != first.metrics or not (
                c.query_ids is first.query_ids or np.array_equal(c.query_ids, first.query_ids)):
            raise OptionError("append_run_evaluations: the evaluations differ from the stacked ones in ground truth, "
                              "queries, domains, metrics or options")
    if not evs:
        return stacked
    return _stacked(evs, (*first.runs, *names), stacked)


#: Room a buffer of :func:`append_run_evaluations` keeps after its rows, as a fraction of them (checkpoints added
#: one at a time to 137: the rows are copied again after 34 more, then after 43 more...; 25% more memory at most).
_ROOM = 0.25
#: id(buffer) -> (weak reference to it, rows of it some evaluation holds): where the next rows may be written.
_TAILS: dict[int, tuple[weakref.ref, int]] = {}
_TAILS_LOCK = threading.Lock()


def _grown(old: np.ndarray, parts: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate([old, *parts])`` as a view of a buffer with room: ``old``'s own buffer when ``old`` is its
    first rows up to where anything was written (then only ``parts`` are copied), else a new one."""
    dtype = np.result_type(old, *parts)
    n, m = len(old), sum(len(p) for p in parts)
    with _TAILS_LOCK:
        base = old.base
        entry = _TAILS.get(id(base)) if isinstance(base, np.ndarray) else None
        if (entry is not None and entry[0]() is base and entry[1] == n and base.dtype == dtype and base.ndim == 1
                and len(base) >= n + m and old.ctypes.data == base.ctypes.data and old.strides == base.strides):
            buf = base
        else:
            buf = np.empty(n + m + max(int((n + m) * _ROOM), 1), dtype=dtype)
            buf[:n] = old
        at = n
        for p in parts:
            buf[at:at + len(p)] = p
            at += len(p)
        for gone in [key for key, (ref, _) in _TAILS.items() if ref() is None]:
            del _TAILS[gone]
        _TAILS[id(buf)] = (weakref.ref(buf), n + m)
    view = buf[:n + m]
    view.flags.writeable = False
    return view


def evaluate_per_ground_truth(
    ground_truth: Mapping[str, Qrels],
    runs: Mapping[str, Run],
    **options: Any,
) -> Evaluation:
    """Evaluate each run against its own ground truth (``ground_truth[run name]``), as one Evaluation.

    Runs sharing a :class:`Qrels` object are evaluated together. Seed 001:
    each embedding space against its aspect, the fused run against
    ``overall``. ``options`` go to :func:`evalcore.evaluate.evaluate`;
    ``settings["ground_truth"]`` maps each run to its ground truth's source.
    """
    missing = [n for n in runs if n not in ground_truth]
    if missing:
        raise OptionError(f"no ground truth given for runs {missing}")
    groups: dict[int, tuple[Qrels, dict[str, Run]]] = {}
    for name, run in runs.items():
        q = ground_truth[name]
        groups.setdefault(id(q), (q, {}))[1][name] = run
    parts = [evaluate(q, rs, **options) for q, rs in groups.values()]
    gt = {name: ground_truth[name].source for name in runs}
    sources = list(dict.fromkeys(str(s) for s in gt.values()))
    ev = concat_evaluations(parts, settings={"ground_truth": gt, "qrels": "; ".join(sources)})
    if len(parts) == 1 or ev.runs == list(runs):
        return ev
    # the runs in their given order (they were grouped by ground truth: `evaluate --aspect` listed and wrote a run
    # judged against a later aspect after the runs of the first, where the dashboard keeps the workspace's order)
    table = ev.table.assign(run=ev.table["run"].cat.reorder_categories([str(n) for n in runs]))
    return Evaluation(table, ev.coverage, ev.settings)


def with_diversity(evaluation: Evaluation, tables: Sequence[pd.DataFrame]) -> Evaluation:
    """``evaluation`` with diversity rows (from :func:`diversity_table`) appended to its table."""
    if not tables:
        return evaluation
    settings = dict(evaluation.settings)
    settings["diversity"] = list(dict.fromkeys(str(m) for t in tables for m in t["metric"].unique()))
    return Evaluation(concat_tables([evaluation.table, *tables]), evaluation.coverage, settings)

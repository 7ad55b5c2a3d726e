"""An evaluation of many runs held as the evaluations of its runs, stacked into one table at its first full read.

A workspace of 137 checkpoints x 5,000 queries x 28 metric@k is a per-query table of 19 M rows. The dashboard
keeps each run's evaluation on its own (:mod:`evalcore.workspace.derived`) and stacked them into that table as
soon as they were read (467 MB written, 0.4-3 s on a shared 2-core machine), though a page such as Versions
reads the 5,000 rows of one metric@k of each run. :class:`StackedEvaluation` is the evaluation
:func:`evalcore.combine.stack_run_evaluations` (or :func:`~evalcore.combine.append_run_evaluations`) gives, its
rows stacked at the first read of ``columns`` or ``table`` — the very arrays those functions make; until then
:func:`metric_rows`, :func:`metric_k_codes` and :func:`row_count` read its parts, and ``runs``, ``coverage``
and ``settings`` need nothing stacked.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .errors import OptionError
from .evaluation import Evaluation, _Derived
from .results import ResultColumns

__all__ = ["StackedEvaluation", "row_count", "vocabulary", "metric_rows", "metric_k_codes", "run_evaluations"]


class StackedEvaluation(Evaluation):
    """The stack of ``parts`` (evaluations of one run each, against one ground truth with the same options; the
    first may be a stack of several runs) named ``runs``, built at the first read of ``columns`` or ``table``.

    Built, it is ``append_run_evaluations(parts[0], parts[1:], names=...)`` when the first part holds several runs
    (their rows are appended after the first part's without copying those, when its buffers have room), else
    ``append_run_evaluations(stack_run_evaluations(parts[:1]), parts[1:])`` (a stack with room for a quarter more
    rows), equal array for array to ``stack_run_evaluations(parts)``; the parts are then let go. A part that is a
    stack not built yet gives its own parts. Checked as those functions check (:class:`OptionError`). Built once
    whatever the threads reading it.
    """

    columns: ResultColumns = _Derived(lambda ev: ev._stack())  # type: ignore[assignment]

    def __init__(self, parts: Sequence[Evaluation], runs: Sequence[str], *,
                 settings: Mapping[str, Any] | None = None) -> None:
        flat: list[Evaluation] = []
        for i, part in enumerate(parts):
            if isinstance(part, StackedEvaluation) and part._parts is not None:
                if i:
                    raise OptionError("a stack of several runs can only be the first part of a StackedEvaluation")
                flat.extend(part._parts)
            else:
                flat.append(part)
        if not flat:
            raise OptionError("nothing to stack")
        runs = tuple(str(r) for r in runs)
        columns = [p.columns for p in flat]
        first = columns[0]
        base = dict(flat[0].settings)
        for i, (p, c) in enumerate(zip(flat, columns, strict=True)):
            if i and len(c.runs) != 1:
                raise OptionError(f"a StackedEvaluation stacks evaluations of one run each after its first part, "
                                  f"not {list(c.runs)}")
            if p.settings != base or c.domains != first.domains or c.metrics != first.metrics or not (
                    c.query_ids is first.query_ids or np.array_equal(c.query_ids, first.query_ids)):
                raise OptionError("the evaluations stacked differ in ground truth, queries, domains, metrics or "
                                  "options (concat_evaluations stacks such tables)")
        sizes = [len(c.runs) for c in columns]
        if len(runs) != sum(sizes) or len(set(runs)) != len(runs):
            raise OptionError(f"{sum(sizes)} stacked runs need distinct names, got {list(runs)}")
        rows: list[dict[str, Any]] = []
        for p, start, n in zip(flat, np.cumsum([0, *sizes[:-1]]).tolist(), sizes, strict=True):
            own = p.coverage_rows if n > 1 else p.coverage_rows[:1]
            rows += [{**row, "run": name} for row, name in zip(own, runs[start:start + n], strict=True)]
        object.__setattr__(self, "settings", dict(settings) if settings is not None else base)
        d = self.__dict__
        d["_coverage_rows"] = rows
        d["_parts"] = tuple(flat)
        d["_part_columns"] = tuple(columns)
        d["_row_starts"] = np.cumsum([0, *[len(c) for c in columns]]).tolist()
        d["_run_starts"] = np.cumsum([0, *sizes]).tolist()
        d["_runs"] = runs
        d["_lock"] = threading.Lock()

    @property
    def stacked(self) -> bool:
        """Whether the rows are stacked already (``columns`` was read)."""
        return self.__dict__.get("_columns") is not None

    @property
    def runs(self) -> list[str]:
        return list(self._runs)

    @property
    def _parts(self) -> tuple[Evaluation, ...] | None:
        return self.__dict__.get("_parts")

    def _stack(self) -> ResultColumns:
        from .combine import append_run_evaluations, stack_run_evaluations

        with self._lock:
            done = self.__dict__.get("_columns")
            if done is not None:
                return done
            parts, runs = self.__dict__["_parts"], self._runs
            n0 = len(self.__dict__["_part_columns"][0].runs)
            first = parts[0]
            if n0 == 1:
                onto = stack_run_evaluations([first], names=runs[:1])
            else:  # (its own names may be older ones: the same rows under these)
                onto = Evaluation(None, None, dict(first.settings),
                                  dataclasses.replace(first.columns, runs=runs[:n0]), first.coverage_rows)
            columns = append_run_evaluations(onto, parts[1:], names=runs[n0:]).columns
            self.__dict__["_columns"] = columns
            for name in ("_parts", "_part_columns"):  # (their rows are in the stack now)
                self.__dict__[name] = None
            return columns

    def with_settings(self, extra: Mapping[str, Any]) -> Evaluation:
        """The same evaluation with ``extra`` added to its settings (still not stacked when this one is not)."""
        with self._lock:
            parts = self.__dict__.get("_parts")
            if parts is None:
                return super().with_settings(extra)
            return StackedEvaluation(parts, self._runs, settings={**self.settings, **extra})

    def __repr__(self) -> str:
        return (f"StackedEvaluation({len(self._runs)} runs, {row_count(self):,} rows, "
                f"{'stacked' if self.stacked else 'not stacked yet'})")


def _pieces(evaluation: Evaluation, start: int) -> Iterator[tuple[ResultColumns, int, int, int]]:
    """``(columns, first row, row offset, run offset)`` of each part holding rows from ``start`` on: rows
    ``first:`` of ``columns`` are rows ``offset + first:`` of the whole, its run codes the whole's less
    ``run offset``."""
    parts = evaluation.__dict__.get("_part_columns") if isinstance(evaluation, StackedEvaluation) else None
    if parts is None:
        yield evaluation.columns, max(0, start), 0, 0
        return
    rows, runs = evaluation._row_starts, evaluation._run_starts
    for c, r0, u0 in zip(parts, rows, runs, strict=False):
        if r0 + len(c) > start:
            yield c, max(0, start - r0), r0, u0


def row_count(evaluation: Evaluation) -> int:
    """Rows of the evaluation's per-query table (nothing stacked)."""
    if isinstance(evaluation, StackedEvaluation) and evaluation.__dict__.get("_part_columns") is not None:
        return int(evaluation._row_starts[-1])
    return len(evaluation.columns)


def vocabulary(evaluation: Evaluation) -> ResultColumns:
    """Columns holding the evaluation's vocabularies (query ids, domains, metrics; not its runs: ``runs``), nothing
    stacked."""
    parts = evaluation.__dict__.get("_part_columns") if isinstance(evaluation, StackedEvaluation) else None
    return parts[0] if parts is not None else evaluation.columns


def metric_k_codes(evaluation: Evaluation, *, start: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(metric codes, k)`` of the rows from ``start`` on, part after part (their concatenation is
    ``columns.metric[start:]``, ``columns.k[start:]``; nothing stacked)."""
    for c, lo, _, _ in _pieces(evaluation, start):
        yield c.metric[lo:], c.k[lo:]


def metric_rows(evaluation: Evaluation, metric: str, k: int, *, start: int = 0) -> tuple[ResultColumns, np.ndarray]:
    """The rows of one metric@k from row ``start`` on, and their positions in the whole table.

    Equal, array for array, to the rows of ``evaluation.columns`` where ``metric`` and ``k`` are those, from
    ``start`` on, as columns with the evaluation's vocabularies (``runs``, query ids, domains, metrics); read from
    the parts of a :class:`StackedEvaluation` not stacked yet (5,000 rows of each of 137 runs, not 19 M). No row
    (an empty selection) for a metric the evaluation does not hold.
    """
    vocab = vocabulary(evaluation)
    runs = tuple(evaluation.runs)
    code = vocab.metrics.index(metric) if metric in vocab.metrics else -1
    stacked = not isinstance(evaluation, StackedEvaluation) or evaluation.__dict__.get("_part_columns") is None
    run_type = evaluation.columns.run.dtype if stacked else np.result_type(vocab.run.dtype,
                                                                          np.min_scalar_type(len(runs)))
    fields: dict[str, list[np.ndarray]] = {f: [] for f in ("run", "query", "domain", "metric", "k", "value")}
    where: list[np.ndarray] = []
    for c, lo, r0, u0 in _pieces(evaluation, start):
        sel = np.flatnonzero((c.metric[lo:] == code) & (c.k[lo:] == k)) + lo
        where.append(sel + r0)
        fields["run"].append(c.run[sel].astype(run_type) + np.asarray(u0, dtype=run_type))
        for f in ("query", "domain", "metric", "k", "value"):
            fields[f].append(getattr(c, f)[sel])
    if not where:  # (no row from start on)
        where = [np.zeros(0, dtype=np.int64)]
        fields = {f: [getattr(vocab, f)[:0].astype(run_type if f == "run" else getattr(vocab, f).dtype)]
                  for f in fields}
    cat = {f: np.concatenate(v) for f, v in fields.items()}
    out = ResultColumns(runs, vocab.query_ids, vocab.domains, vocab.metrics, cat["run"], cat["query"], cat["domain"],
                        cat["metric"], cat["k"], cat["value"])
    return out, np.concatenate(where).astype(np.int64, copy=False)


def run_evaluations(evaluation: StackedEvaluation) -> dict[str, Evaluation] | None:
    """Each run's evaluation by name when ``evaluation`` is a stack not built yet (its parts, under the names of
    the stack, sharing their rows; a first part of several runs split run by run), else None."""
    parts = evaluation.__dict__.get("_parts")
    if parts is None:
        return None
    out: dict[str, Evaluation] = {}
    runs, rows = evaluation.runs, evaluation.coverage_rows
    for part, u0 in zip(parts, evaluation._run_starts, strict=False):
        c = part.columns
        n = len(c.runs)
        if n == 1:
            out[runs[u0]] = Evaluation(None, None, dict(part.settings), dataclasses.replace(c, runs=(runs[u0],)),
                                       [dict(rows[u0])])
            continue
        bounds = np.searchsorted(c.run, np.arange(n + 1)).tolist()
        for i in range(n):
            lo, hi = bounds[i], bounds[i + 1]
            one = ResultColumns((runs[u0 + i],), c.query_ids, c.domains, c.metrics, np.zeros(hi - lo, dtype=np.int16),
                                c.query[lo:hi], c.domain[lo:hi], c.metric[lo:hi], c.k[lo:hi], c.value[lo:hi])
            out[runs[u0 + i]] = Evaluation(None, None, dict(part.settings), one, [dict(rows[u0 + i])])
    return out

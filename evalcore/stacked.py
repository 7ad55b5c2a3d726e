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

__all__ = ["StackedEvaluation", "row_count", "vocabulary", "metric_rows", "metric_k_codes", "run_columns",
           "queries_drawn", "empty_table"]


class StackedEvaluation(Evaluation):
    """The stack of ``parts`` named ``runs``, built at the first read of ``columns`` or ``table``: evaluations of
    one run each against one ground truth with the same options, the first of which may hold several runs (a
    stack, built or not).

    Built, it is ``append_run_evaluations(parts[0], parts[1:], names=...)`` when the first part holds several
    runs (the first part built first, then the others' rows written after its rows, in its buffers when they have
    room: a checkpoint added to a stack shares its rows), else ``append_run_evaluations(stack_run_evaluations(
    parts[:1]), parts[1:])`` (a stack with room for a quarter more rows); equal, array for array, to
    ``stack_run_evaluations`` of every run (tested). The parts are then let go. Checked as those functions check
    (:class:`OptionError`); built once whatever the threads reading it, and however many stacks not built are
    nested as first parts (one after the other, not by recursion).
    """

    columns: ResultColumns = _Derived(lambda ev: ev._stack())  # type: ignore[assignment]

    def __init__(self, parts: Sequence[Evaluation], runs: Sequence[str], *,
                 settings: Mapping[str, Any] | None = None) -> None:
        parts = tuple(parts)
        if not parts:
            raise OptionError("nothing to stack")
        runs = tuple(str(r) for r in runs)
        first = vocabulary(parts[0])
        base = dict(parts[0].settings)
        sizes = []
        for i, p in enumerate(parts):
            if i and (isinstance(p, StackedEvaluation) and not p.stacked or len(p.columns.runs) != 1):
                raise OptionError(f"a StackedEvaluation stacks evaluations of one run each after its first part, "
                                  f"not {list(p.runs)}")
            c = vocabulary(p) if i == 0 else p.columns
            n = len(p.runs) if i == 0 else 1
            if p.settings != base or c.domains != first.domains or c.metrics != first.metrics or not (
                    c.query_ids is first.query_ids or np.array_equal(c.query_ids, first.query_ids)):
                raise OptionError("the evaluations stacked differ in ground truth, queries, domains, metrics or "
                                  "options (concat_evaluations stacks such tables)")
            sizes.append(n)
        if len(runs) != sum(sizes) or len(set(runs)) != len(runs):
            raise OptionError(f"{sum(sizes)} stacked runs need distinct names, got {list(runs)}")
        rows = [{**row, "run": name} for row, name in zip(parts[0].coverage_rows, runs[:sizes[0]], strict=True)]
        rows += [{**p.coverage_rows[0], "run": name} for p, name in zip(parts[1:], runs[sizes[0]:], strict=True)]
        object.__setattr__(self, "settings", dict(settings) if settings is not None else base)
        d = self.__dict__
        d["_coverage_rows"] = rows
        d["_parts"] = parts
        d["_row_starts"] = np.cumsum([0, row_count(parts[0]), *[len(p.columns) for p in parts[1:]]]).tolist()
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

    def _stack(self) -> ResultColumns:
        chain = []  # this stack, then the stacks not built nested as first parts: built innermost first
        node: Evaluation = self
        while isinstance(node, StackedEvaluation) and (parts := node.__dict__.get("_parts")) is not None:
            chain.append(node)
            node = parts[0]
        for ev in reversed(chain):
            ev._build()
        return self.__dict__["_columns"]

    def _build(self) -> None:
        """Stack the rows (the first part is built: :meth:`_stack` builds the nested ones first)."""
        from .combine import append_run_evaluations, stack_run_evaluations

        with self._lock:
            if self.__dict__.get("_columns") is not None:
                return
            parts, runs, n0 = self.__dict__["_parts"], self._runs, self._run_starts[1]
            first = parts[0]
            if n0 == 1:
                onto = stack_run_evaluations([first], names=runs[:1])
            else:  # (its own names may be older ones: the same rows under these)
                onto = Evaluation(None, None, dict(first.settings),
                                  dataclasses.replace(first.columns, runs=runs[:n0]), first.coverage_rows)
            self.__dict__["_columns"] = append_run_evaluations(onto, parts[1:], names=runs[n0:]).columns
            self.__dict__["_parts"] = None  # (their rows are in the stack now)

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


def _leaves(evaluation: Evaluation) -> list[tuple[ResultColumns, int, int]]:
    """``(columns, row offset, run offset)`` of the built pieces of ``evaluation``, in row order: its own columns
    when stacked (or not a :class:`StackedEvaluation`), else its parts' (those of a nested stack not built, in
    place of it): rows ``i`` of a piece's columns are rows ``offset + i`` of the whole, its run codes the whole's
    less the run offset."""
    tails: list[list[tuple[ResultColumns, int, int]]] = []
    node, r0, u0 = evaluation, 0, 0
    while True:
        parts = node.__dict__.get("_parts") if isinstance(node, StackedEvaluation) else None
        if parts is None:
            head = [(node.columns, r0, u0)]
            break
        rows, runs = node._row_starts, node._run_starts
        tails.append([(p.columns, r0 + r, u0 + u) for p, r, u in zip(parts[1:], rows[1:], runs[1:], strict=False)])
        node = parts[0]  # (at the same offsets)
    for tail in reversed(tails):
        head += tail
    return head


def row_count(evaluation: Evaluation) -> int:
    """Rows of the evaluation's per-query table (nothing stacked)."""
    if isinstance(evaluation, StackedEvaluation) and evaluation.__dict__.get("_parts") is not None:
        return int(evaluation._row_starts[-1])
    return len(evaluation.columns)


def vocabulary(evaluation: Evaluation) -> ResultColumns:
    """Columns holding the evaluation's vocabularies (query ids, domains, metrics; not its runs: ``runs``), nothing
    stacked."""
    node = evaluation
    while isinstance(node, StackedEvaluation) and (parts := node.__dict__.get("_parts")) is not None:
        node = parts[0]
    return node.columns


def queries_drawn(evaluation: Evaluation) -> tuple[str, ...]:
    """The queries of the evaluation with a finite value somewhere in its table, sorted as strings: what
    :func:`evalcore.intervals.queries_drawn` gives of ``evaluation.columns``, read piece by piece (nothing stacked;
    a restarted Overview of 100+ kept runs stacked millions of rows for it)."""
    from .intervals import queries_drawn as drawn

    seen: set[str] = set()
    for c, _, _ in _leaves(evaluation):
        seen.update(drawn(c.query_ids, c.query, c.value))
    return tuple(sorted(seen))


def empty_table(evaluation: Evaluation) -> Any:
    """The per-query DataFrame ``evaluation.table`` with no row: its columns and their dtypes (the categoricals'
    categories included), nothing stacked and no row made a DataFrame. ``k`` and ``value`` have the dtype the
    stacked arrays have (that of the concatenation of the pieces')."""
    if evaluation.has_table:
        return evaluation.table.iloc[:0]
    pieces = [c for c, _, _ in _leaves(evaluation)]
    vocab, none = pieces[0], np.zeros(0, dtype=np.int64)
    return ResultColumns(tuple(evaluation.runs), vocab.query_ids, vocab.domains, vocab.metrics, none, none, none, none,
                         np.concatenate([c.k[:0] for c in pieces]), np.concatenate([c.value[:0] for c in pieces])
                         ).to_table()


def _from(evaluation: Evaluation, start: int) -> Iterator[tuple[ResultColumns, int, int, int]]:
    """``(columns, first row, row offset, run offset)`` of the pieces holding rows from ``start`` on."""
    for c, r0, u0 in _leaves(evaluation):
        if r0 + len(c) > start:
            yield c, max(0, start - r0), r0, u0


def metric_k_codes(evaluation: Evaluation, *, start: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(metric codes, k)`` of the rows from ``start`` on, piece after piece (their concatenation is
    ``columns.metric[start:]``, ``columns.k[start:]``; nothing stacked)."""
    for c, lo, _, _ in _from(evaluation, start):
        yield c.metric[lo:], c.k[lo:]


def metric_rows(evaluation: Evaluation, metric: str, k: int, *, start: int = 0) -> tuple[ResultColumns, np.ndarray]:
    """The rows of one metric@k from row ``start`` on, and their positions in the whole table.

    Equal, array for array, to the rows of ``evaluation.columns`` where ``metric`` and ``k`` are those, from
    ``start`` on, as columns with the evaluation's vocabularies (``runs``, query ids, domains, metrics); read from
    the parts of a :class:`StackedEvaluation` not stacked yet (5,000 rows of each of 137 runs, not 19 M). No row
    (an empty selection) for a metric the evaluation does not hold.
    """
    pieces = _leaves(evaluation)
    vocab, runs = pieces[0][0], tuple(evaluation.runs)
    code = vocab.metrics.index(metric) if metric in vocab.metrics else -1
    run_type = vocab.run.dtype if len(pieces) == 1 else np.result_type(vocab.run.dtype, np.min_scalar_type(len(runs)))
    fields: dict[str, list[np.ndarray]] = {f: [getattr(vocab, f)[:0]] for f in ("query", "domain", "metric", "k",
                                                                               "value")}
    fields["run"] = [vocab.run[:0].astype(run_type)]
    where = [np.zeros(0, dtype=np.int64)]
    found: dict[tuple, np.ndarray] = {}  # the rows of pieces sharing their metric and k arrays (kept runs of one layout)
    for c, r0, u0 in pieces:
        if r0 + len(c) <= start:
            continue
        lo = max(0, start - r0)
        same = (_place(c.metric), _place(c.k), lo)
        sel = found.get(same)
        if sel is None:
            sel = found[same] = np.flatnonzero((c.metric[lo:] == code) & (c.k[lo:] == k)) + lo
        where.append(sel + r0)
        fields["run"].append(c.run[sel].astype(run_type) + np.asarray(u0, dtype=run_type))
        for f in ("query", "domain", "metric", "k", "value"):
            fields[f].append(getattr(c, f)[sel])
    cat = {f: np.concatenate(v) for f, v in fields.items()}
    out = ResultColumns(runs, vocab.query_ids, vocab.domains, vocab.metrics, cat["run"], cat["query"], cat["domain"],
                        cat["metric"], cat["k"], cat["value"])
    return out, np.concatenate(where).astype(np.int64, copy=False)


def _place(a: np.ndarray) -> tuple:
    """Where ``a``'s values are in memory (address, length, stride, dtype): two arrays at one place hold the same
    values (the arrays of evaluations are never written)."""
    return a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str


def run_columns(evaluation: StackedEvaluation) -> dict[str, ResultColumns] | None:
    """Each run's rows by name when ``evaluation`` is a stack not built yet (its parts' columns under the names of
    the stack, sharing their rows, run codes 0; a first piece of several runs split run by run), else None."""
    if evaluation.__dict__.get("_parts") is None:
        return None
    runs = evaluation.runs
    out: dict[str, ResultColumns] = {}
    for c, _, u0 in _leaves(evaluation):
        n = len(c.runs)
        bounds = np.searchsorted(c.run, np.arange(n + 1)).tolist() if n > 1 else [0, len(c)]
        for i in range(n):
            lo, hi = bounds[i], bounds[i + 1]
            out[runs[u0 + i]] = ResultColumns((runs[u0 + i],), c.query_ids, c.domains, c.metrics,
                                              np.zeros(hi - lo, dtype=np.int16), c.query[lo:hi], c.domain[lo:hi],
                                              c.metric[lo:hi], c.k[lo:hi], c.value[lo:hi])
    return out

"""The evaluation of a workspace's runs from evaluations of one run each (kept by content key).

:func:`evaluate_workspace` evaluates every run at once.  A run's rows depend only on that run,
its aspect's ground truth and the settings, so the dashboard keeps each run's evaluation on
its own (:mod:`evalcore.workspace.derived`, by the run's content key) and joins them:
adding a run to a workspace of 14 evaluates one run, not 15, and a fusion's preview evaluates
the fused run only.  :func:`evaluate_each` gives exactly what :func:`evaluate_workspace` gives
for the same runs (tested).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .._threads import in_caller_context
from ..combine import stack_run_evaluations
from ..data import Qrels, Run
from ..evaluate import Evaluation, worker_count
from ..results import ResultColumns
from ..stacked import StackedEvaluation, run_columns
from .model import Settings, capture
from .pipeline import evaluate_runs, join_aspects

__all__ = ["evaluate_one", "evaluate_several", "evaluate_each", "run_parts"]


def evaluate_one(qrels: Qrels, run: Run, settings: Settings) -> Evaluation:
    """The evaluation of one run against its aspect's ground truth (the unit :func:`evaluate_each` joins)."""
    return evaluate_runs(qrels, {run.name: run}, settings)


def evaluate_several(jobs: Sequence[tuple[Qrels, Run | Callable[[], Run | None]]], settings: Settings, *,
                     workers: int | None = None,
                     done: Callable[[int, Evaluation, tuple[str, ...]], None] | None = None) -> list[Evaluation | None]:
    """``[evaluate_one(qrels, run, settings) for qrels, run in jobs]``, the runs evaluated by up to
    ``workers`` threads at once (default: the cores this process may use).

    A run's evaluation is mostly numpy work that releases the GIL: at 14 runs x 20,000 queries x 100,
    two threads on two cores take ~0.55x the time of one run after the other. The runs' own caches
    (rank order, document codes) are filled by the thread evaluating them; a run listed twice may be
    prepared twice, never wrongly. The worker threads carry the caller's context: warnings collected
    there (:func:`evalcore.errors.collected_warnings`, as :func:`~evalcore.workspace.capture` does) get
    the workers' messages; otherwise they are emitted from the workers.

    A job's run may be a call that reads it (a stored run): the worker evaluating it reads it, so one run is
    read while another is evaluated, and the caller holds no run (137 stored runs of 500,000 rows, ~1.4 GB,
    were all read first, one after the other). A call that gives None is no job (its evaluation is None).
    ``done(i, evaluation, messages)``, when given, is called by the worker as soon as job ``i`` is evaluated,
    with the messages its evaluation gave (collected: they reach the caller through ``done``), e.g. to keep it
    on disk while the other runs are evaluated.

    >>> evaluate_several([], Settings())
    []
    """
    workers = worker_count(workers, len(jobs))

    def one(i: int, job: tuple[Qrels, Run | Callable[[], Run | None]]) -> Evaluation | None:
        qrels, run = job
        if not isinstance(run, Run):
            run = run()
            if run is None:
                return None
        if done is None:
            return evaluate_one(qrels, run, settings)
        evaluation, messages = capture(evaluate_one, qrels, run, settings)
        done(i, evaluation, tuple(messages))
        return evaluation

    if workers <= 1:
        return [one(i, job) for i, job in enumerate(jobs)]
    with ThreadPoolExecutor(workers, thread_name_prefix="evalcore-evaluate") as pool:
        return list(pool.map(in_caller_context(one), range(len(jobs)), jobs))


def evaluate_each(qrels_by_aspect: Mapping[str | None, Qrels],
                  items: Sequence[tuple[str, str | None, Callable[[], Evaluation]]], *,
                  previous: Evaluation | None = None) -> Evaluation:
    """:func:`evaluate_workspace` of the runs ``items`` lists as ``(name, aspect, evaluation of that run)``.

    Each call gives :func:`evaluate_one`'s evaluation of the run (from a cache or computed; the name
    inside may be an earlier one: ``name`` is the run's name here).  Runs sharing an aspect are stacked
    (:func:`evalcore.combine.stack_run_evaluations`), the aspects joined as :func:`evaluate_workspace`
    joins them; ``qrels_by_aspect`` only names the aspects.  With one aspect for all, the result is a
    :class:`evalcore.stacked.StackedEvaluation`: its rows are stacked at the first read of its ``columns`` or
    ``table`` (with room after them: a run added later is appended without a copy), and a page that reads one
    metric@k of its runs (:func:`evalcore.stacked.metric_rows`) reads them from each run's evaluation.

    ``previous``: what this function gave for items of which ``items`` are a continuation — the caller
    vouches that the first ``len(previous.runs)`` items are those runs (names, aspects and evaluations:
    the dashboard compares their content keys). When every run has one aspect and the names agree, only the
    other items are called, their rows appended after the previous ones without copying those
    (:func:`evalcore.combine.append_run_evaluations`, when ``previous`` is stacked; else its runs' evaluations
    are taken as they are): a checkpoint added to 137 asks for one evaluation and copies its rows only. The
    result is the same as without ``previous`` (tested); any other ``previous`` is not used.
    """
    groups: dict[str | None, list[tuple[str, Evaluation]]] = {a: [] for _, a, _ in items}
    for name, aspect, _ in items:
        if aspect not in qrels_by_aspect:
            raise KeyError(f"no ground truth for the aspect {aspect!r} of run {name!r}")
    names = [name for name, _, _ in items]
    onto = _continued(previous, items)
    if onto is not None:
        start = len(onto.runs)
        evs = [(items[0][1], StackedEvaluation([onto, *[evaluation() for _, _, evaluation in items[start:]]], names))]
        return join_aspects(evs, names)
    for name, aspect, evaluation in items:
        groups[aspect].append((name, evaluation()))
    if len(groups) == 1:  # stacked when first read in full (with room after the rows: see StackedEvaluation)
        [(aspect, part)] = groups.items()
        return join_aspects([(aspect, StackedEvaluation([e for _, e in part], names))], names)
    evs = [(a, stack_run_evaluations([e for _, e in part], names=[n for n, _ in part])) for a, part in groups.items()]
    return join_aspects(evs, names)


def _continued(previous: Evaluation | None, items: Sequence[tuple[str, str | None, Any]]) -> Evaluation | None:
    """``previous`` without its ``aspects`` setting (the stack :func:`join_aspects` marked) when ``items`` continue
    it: one aspect for all, ``previous``'s runs the first names, at least one more; else None."""
    if previous is None or len({a for _, a, _ in items}) != 1:
        return None
    runs = list(previous.runs)
    aspects = previous.settings.get("aspects")
    if not runs or len(runs) >= len(items) or [n for n, _, _ in items[:len(runs)]] != runs or not isinstance(
            aspects, dict) or set(aspects.values()) != {items[0][1]} or list(aspects) != runs:
        return None
    settings = {k: v for k, v in previous.settings.items() if k != "aspects"}
    if isinstance(previous, StackedEvaluation) and not previous.stacked:
        return StackedEvaluation([previous], runs, settings=settings)  # (nothing stacked: it is its first part)
    return Evaluation(None, None, settings, previous.columns, previous.coverage_rows)


def run_parts(evaluation: Evaluation) -> dict[str, Evaluation] | None:
    """The evaluation of each run that :func:`evaluate_each` stacked into ``evaluation`` (one aspect for all), by
    name: views of its rows, with the settings, coverage row and run codes (int16, :func:`evalcore.evaluate`'s) each
    had, to stack again in another order or without some (a run removed or renamed asks no evaluation again);
    None for another evaluation (several aspects, runs not stacked run after run)."""
    aspects = evaluation.settings.get("aspects")
    if not isinstance(aspects, dict) or len(set(aspects.values())) > 1 or list(aspects) != list(evaluation.runs):
        return None
    settings = {k: v for k, v in evaluation.settings.items() if k != "aspects"}
    own = run_columns(evaluation) if isinstance(evaluation, StackedEvaluation) else None
    if own is not None:  # not stacked yet: each run's own evaluation (nothing stacked)
        return {name: Evaluation(None, None, dict(settings), part, [dict(row)])
                for (name, part), row in zip(own.items(), evaluation.coverage_rows, strict=True)}
    c = evaluation.columns
    if len(c.run) and not bool(np.all(c.run[1:] >= c.run[:-1])):
        return None
    bounds = np.searchsorted(c.run, np.arange(len(c.runs) + 1))
    out = {}
    for i, (name, row) in enumerate(zip(c.runs, evaluation.coverage_rows, strict=True)):
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        part = ResultColumns((name,), c.query_ids, c.domains, c.metrics, np.zeros(hi - lo, dtype=np.int16),
                             c.query[lo:hi], c.domain[lo:hi], c.metric[lo:hi], c.k[lo:hi], c.value[lo:hi])
        out[name] = Evaluation(None, None, dict(settings), part, [dict(row)])
    return out

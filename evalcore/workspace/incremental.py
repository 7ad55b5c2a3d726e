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

from .._threads import in_caller_context
from ..combine import stack_run_evaluations
from ..data import Qrels, Run
from ..evaluate import Evaluation, worker_count
from .model import Settings
from .pipeline import evaluate_runs, join_aspects

__all__ = ["evaluate_one", "evaluate_several", "evaluate_each"]


def evaluate_one(qrels: Qrels, run: Run, settings: Settings) -> Evaluation:
    """The evaluation of one run against its aspect's ground truth (the unit :func:`evaluate_each` joins)."""
    return evaluate_runs(qrels, {run.name: run}, settings)


def evaluate_several(jobs: Sequence[tuple[Qrels, Run]], settings: Settings, *,
                     workers: int | None = None) -> list[Evaluation]:
    """``[evaluate_one(qrels, run, settings) for qrels, run in jobs]``, the runs evaluated by up to
    ``workers`` threads at once (default: the cores this process may use).

    A run's evaluation is mostly numpy work that releases the GIL: at 14 runs x 20,000 queries x 100,
    two threads on two cores take ~0.55x the time of one run after the other. The runs' own caches
    (rank order, document codes) are filled by the thread evaluating them; a run listed twice may be
    prepared twice, never wrongly. The worker threads carry the caller's context: warnings collected
    there (:func:`evalcore.errors.collected_warnings`, as :func:`~evalcore.workspace.capture` does) get
    the workers' messages; otherwise they are emitted from the workers.

    >>> evaluate_several([], Settings())
    []
    """
    workers = worker_count(workers, len(jobs))
    if workers <= 1:
        return [evaluate_one(q, r, settings) for q, r in jobs]
    with ThreadPoolExecutor(workers, thread_name_prefix="evalcore-evaluate") as pool:
        return list(pool.map(in_caller_context(lambda job: evaluate_one(job[0], job[1], settings)), jobs))


def evaluate_each(qrels_by_aspect: Mapping[str | None, Qrels],
                  items: Sequence[tuple[str, str | None, Callable[[], Evaluation]]]) -> Evaluation:
    """:func:`evaluate_workspace` of the runs ``items`` lists as ``(name, aspect, evaluation of that run)``.

    Each call gives :func:`evaluate_one`'s evaluation of the run (from a cache or computed; the name
    inside may be an earlier one: ``name`` is the run's name here).  Runs sharing an aspect are stacked
    (:func:`evalcore.combine.stack_run_evaluations`), the aspects joined as :func:`evaluate_workspace`
    joins them; ``qrels_by_aspect`` only names the aspects.
    """
    groups: dict[str | None, list[tuple[str, Evaluation]]] = {a: [] for _, a, _ in items}
    for name, aspect, evaluation in items:
        if aspect not in qrels_by_aspect:
            raise KeyError(f"no ground truth for the aspect {aspect!r} of run {name!r}")
        groups[aspect].append((name, evaluation()))
    evs = [(a, stack_run_evaluations([e for _, e in part], names=[n for n, _ in part])) for a, part in groups.items()]
    return join_aspects(evs, [name for name, _, _ in items])

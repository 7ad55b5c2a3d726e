"""evalcore.combine.stack_run_evaluations: evaluations of one run each, stacked, are exactly the evaluation of
all the runs at once (what the dashboard uses to evaluate only the runs it has not evaluated before)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore import workspace as W
from evalcore.combine import append_run_evaluations, stack_run_evaluations
from evalcore.data import Qrels, Run
from evalcore.errors import OptionError
from evalcore.evaluate import evaluate


def case(seed: int) -> tuple[Qrels, dict[str, Run]]:
    """Tie-heavy runs (scores on a coarse grid), queries missing from some runs, runs listing queries without
    judgments, domains (one query without), grades 0-3."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in range(25)]
    docs = [f"d{j}" for j in range(60)]
    rows = [(q, d, int(rng.integers(0, 4))) for q in qids[:-2] for d in rng.choice(docs, 6, replace=False)]
    domains = {q: ("news" if i % 3 else "web") for i, q in enumerate(qids[1:])}
    qrels = Qrels.from_records(*zip(*rows, strict=True), domains=domains, extra_queries=qids[-2:])
    runs = {}
    for r in range(int(rng.integers(2, 6))):
        listed = [q for q in qids + ["unjudged"] if rng.random() < 0.85]
        recs = [(q, d, float(rng.integers(0, 4))) for q in listed for d in rng.choice(docs, 15, replace=False)]
        runs[f"run{r}"] = Run.from_records(*zip(*recs, strict=True), name=f"run{r}")
    return qrels, runs


OPTIONS = [dict(), dict(judged_only=True), dict(ties="docid_asc", no_relevant="skip"),
           dict(rel_threshold=2, ties="input")]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("options", OPTIONS)
def test_stacked_runs_are_the_evaluation_of_all_at_once(seed, options):
    qrels, runs = case(seed)
    kw = dict(metrics=["ndcg", "recall", "map", "p", "mrr"], k=[1, 5, 10, 20], **options)
    whole = evaluate(qrels, runs, **kw)
    parts = [evaluate(qrels, {name: run}, **kw) for name, run in runs.items()]
    got = stack_run_evaluations(parts)
    pd.testing.assert_frame_equal(got.table, whole.table)
    pd.testing.assert_frame_equal(got.coverage, whole.coverage)
    assert got.settings == whole.settings
    a, b = got.columns, whole.columns
    assert (a.runs, a.domains, a.metrics) == (b.runs, b.domains, b.metrics)
    for field in ("run", "query", "domain", "metric", "k", "value"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), field


def test_names_rename_the_runs_in_order():
    qrels, runs = case(0)
    parts = [evaluate(qrels, {"same": run}, metrics=["ndcg"], k=[5]) for run in runs.values()]
    got = stack_run_evaluations(parts, names=list(runs))
    want = evaluate(qrels, runs, metrics=["ndcg"], k=[5])
    pd.testing.assert_frame_equal(got.table, want.table)
    assert list(got.coverage["run"]) == list(runs)


def test_what_cannot_be_stacked_is_refused():
    qrels, runs = case(1)
    a, b = list(runs.values())[:2]
    one = evaluate(qrels, {"a": a}, metrics=["ndcg"], k=[5])
    with pytest.raises(OptionError, match="distinct names"):
        stack_run_evaluations([one, evaluate(qrels, {"a": b}, metrics=["ndcg"], k=[5])])
    with pytest.raises(OptionError, match="differ"):
        stack_run_evaluations([one, evaluate(qrels, {"b": b}, metrics=["ndcg"], k=[10])])
    with pytest.raises(OptionError, match="differ"):
        stack_run_evaluations([one, evaluate(qrels, {"b": b}, metrics=["ndcg"], k=[5], judged_only=True)])
    other = Qrels.from_records(["zz"], ["d0"], [1])  # other queries
    with pytest.raises(OptionError, match="differ"):
        stack_run_evaluations([one, evaluate(other, {"b": b}, metrics=["ndcg"], k=[5])])
    named = Qrels.from_records(*zip(*qrels.to_frame()[["query_id", "doc_id", "relevance"]].itertuples(index=False),
                                    strict=True), source="other.txt", extra_queries=list(qrels.query_ids))
    with pytest.raises(OptionError, match="differ"):  # the same queries from another file: settings["qrels"]
        stack_run_evaluations([one, evaluate(named, {"b": b}, metrics=["ndcg"], k=[5])])
    with pytest.raises(OptionError, match="one run each"):
        stack_run_evaluations([evaluate(qrels, {"a": a, "b": b}, metrics=["ndcg"], k=[5])])
    with pytest.raises(OptionError, match="nothing"):
        stack_run_evaluations([])


@pytest.mark.parametrize("seed", range(3))
def test_the_workspace_evaluation_of_runs_one_by_one_is_that_of_all(seed):
    """evalcore.workspace.evaluate_each (the dashboard's path) against evaluate_workspace, aspects included."""
    qrels, runs = case(seed)
    other, _ = case(seed + 10)
    settings = W.Settings(metrics=("ndcg", "recall"), k=(1, 10)).validated()
    for qmap, aspects in (({None: qrels}, [None] * len(runs)),
                          ({"a": qrels, "b": other}, ["a" if i % 2 else "b" for i in range(len(runs))])):
        pairs = list(zip(runs.values(), aspects, strict=True))
        whole = W.evaluate_workspace(qmap, pairs, settings)
        got = W.evaluate_each(qmap, [(run.name, aspect, lambda run=run, aspect=aspect, qmap=qmap:
                                      W.evaluate_one(qmap[aspect], run.renamed("earlier name"), settings))
                                     for run, aspect in pairs])
        pd.testing.assert_frame_equal(got.table, whole.table)
        pd.testing.assert_frame_equal(got.coverage, whole.coverage)
        assert got.settings == whole.settings


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("workers", [None, 1, 2, 3])
def test_runs_evaluated_by_several_threads_are_those_evaluated_one_after_the_other(seed, workers):
    """evalcore.workspace.evaluate_several (threads) gives evaluate_one's evaluation of each job, in order: fresh
    runs (their caches filled by the threads), one run listed twice (two threads may prepare it at once), two
    ground truths."""
    qrels, runs = case(seed)
    other, _ = case(seed + 10)
    settings = W.Settings(metrics=("ndcg", "recall", "map"), k=(1, 5, 10)).validated()
    _, fresh = case(seed)  # the same runs, never evaluated: their rank orders are computed in the threads
    first = next(iter(fresh.values()))
    jobs = [(qrels if i % 2 else other, r) for i, r in enumerate(fresh.values())] + [(qrels, first), (other, first)]
    want = [W.evaluate_one(q, r, settings) for q, r in
            [(qrels if i % 2 else other, r) for i, r in enumerate(runs.values())] + [(qrels, runs[first.name]),
                                                                                   (other, runs[first.name])]]
    got = W.evaluate_several(jobs, settings, workers=workers)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        pd.testing.assert_frame_equal(g.table, w.table)
        pd.testing.assert_frame_equal(g.coverage, w.coverage)
        assert g.settings == w.settings


def test_an_error_in_a_thread_reaches_the_caller_and_bad_worker_counts_are_refused():
    qrels, runs = case(0)
    bad = Run.from_records(["q0"], ["d0"], [1.0], name="bad")
    settings = W.Settings(metrics=("ndcg", "no_such_metric"), k=(10,))
    with pytest.raises(Exception, match="no_such_metric"):
        W.evaluate_several([(qrels, r) for r in [*runs.values(), bad]], settings, workers=2)
    for workers in (0, -1, 1.5, True):
        with pytest.raises(OptionError, match="workers"):
            W.evaluate_several([(qrels, bad)], W.Settings(), workers=workers)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("options", OPTIONS)
def test_evaluate_gives_the_same_table_whatever_its_threads(seed, options):
    """evalcore.evaluate(workers=...): runs evaluated by several threads give the table of one run after the
    other, row for row; progress is told in the runs' order, from the calling thread."""
    import threading

    qrels, runs = case(seed)
    kw = dict(metrics=["ndcg", "recall", "map", "P", "bpref", "rprec"], k=[1, 5, 10], **options)
    want = evaluate(qrels, runs, workers=1, **kw)
    for workers in (2, 3, None):
        _, fresh = case(seed)  # never evaluated: each thread fills its run's caches
        told = []
        got = evaluate(qrels, fresh, workers=workers,
                       progress=lambda done, total, told=told: told.append((done, total, threading.current_thread())),
                       **kw)
        pd.testing.assert_frame_equal(got.table, want.table)
        pd.testing.assert_frame_equal(got.coverage, want.coverage)
        assert [(d, t) for d, t, _ in told] == [(i + 1, len(runs)) for i in range(len(runs))]
        assert {th for _, _, th in told} == {threading.current_thread()}


def test_evaluate_raises_a_thread_s_error_and_refuses_bad_worker_counts(monkeypatch):
    import importlib

    E = importlib.import_module("evalcore.evaluate")  # (the package's name `evaluate` is the function)
    qrels, runs = case(1)
    real = E._compute
    calls = []

    def failing(q, prep, *a, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom in a worker")
        return real(q, prep, *a, **kw)

    monkeypatch.setattr(E, "_compute", failing)
    with pytest.raises(RuntimeError, match="boom in a worker"):
        evaluate(qrels, runs, workers=2)
    for workers in (0, -2, 2.5, True, "2"):
        with pytest.raises(OptionError, match="workers"):
            evaluate(qrels, runs, workers=workers)


# ------------------------------------------------------------------------------------------ appending


def same_evaluation(got, want) -> None:
    """Equal array for array (dtypes too), coverage rows and settings: the same evaluation bit for bit."""
    a, b = got.columns, want.columns
    assert (a.runs, a.domains, a.metrics) == (b.runs, b.domains, b.metrics)
    assert np.array_equal(a.query_ids, b.query_ids)
    for field in ("run", "query", "domain", "metric", "k", "value"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), field
    assert got.coverage_rows == want.coverage_rows and got.settings == want.settings


@pytest.mark.parametrize("seed", range(4))
def test_runs_appended_one_by_one_are_the_stack_of_all_and_share_its_rows(seed):
    """A training script adds checkpoints one at a time: each append equals stacking every run at once, leaves the
    earlier stacks as they were, and, while the buffer has room (a quarter of its rows: two more runs after
    eight), writes the new run's rows only, the earlier ones staying where they are."""
    qrels, runs = case(seed)
    kw = dict(metrics=["ndcg", "map"], k=[1, 10])
    every = list(runs.values())
    parts = {f"r{i}": evaluate(qrels, {f"r{i}": every[i % len(every)]}, **kw) for i in range(12)}
    names = list(parts)
    stacks = [append_run_evaluations(stack_run_evaluations([parts["r0"]]), [parts[n] for n in names[1:8]],
                                     names=names[1:8])]
    for name in names[8:]:
        stacks.append(append_run_evaluations(stacks[-1], [parts[name]], names=[name]))
    for i, st in enumerate(stacks):  # each, also the earlier ones after later appends, is the stack of its runs
        same_evaluation(st, stack_run_evaluations([parts[n] for n in names[: i + 8]]))
    shared = [np.shares_memory(a.columns.value, b.columns.value) and np.shares_memory(a.columns.query, b.columns.query)
              for a, b in zip(stacks, stacks[1:], strict=False)]
    assert shared == [True, True, False, True]  # 8 runs + room for 2; the 11th copied, with room for 2.75 more
    # two continuations of one stack (a run removed, then another added; two sessions): the second is copied
    other = append_run_evaluations(stacks[0], [parts["r11"]], names=["another"])
    assert not np.shares_memory(other.columns.value, stacks[1].columns.value)
    same_evaluation(stacks[1], stack_run_evaluations([parts[n] for n in names[:9]]))
    same_evaluation(other, stack_run_evaluations([*(parts[n] for n in names[:8]), parts["r11"]],
                                                 names=[*names[:8], "another"]))
    assert not other.columns.value.flags.writeable  # a shared buffer is never written through an evaluation
    with pytest.raises(OptionError, match="distinct names"):
        append_run_evaluations(stacks[0], [parts["r11"]], names=["r0"])
    with pytest.raises(OptionError, match="differ"):
        append_run_evaluations(stacks[0], [evaluate(qrels, {"x": every[0]}, metrics=["ndcg"], k=[1, 10])],
                               names=["x"])


@pytest.mark.parametrize("seed", range(3))
def test_the_workspace_evaluation_continued_or_regrouped_is_that_of_all(seed):
    """evaluate_each(previous=...) (a checkpoint added) asks for the new runs only and gives what evaluating
    them all gives; run_parts gives each run's rows back, stacked again without one (a run removed)."""
    qrels, runs = case(seed)
    settings = W.Settings(metrics=("ndcg", "recall"), k=(1, 10)).validated()
    asked: list[str] = []

    def item(run):
        def evaluation():
            asked.append(run.name)
            return W.evaluate_one(qrels, run, settings)
        return (run.name, None, evaluation)

    every = list(runs.values())
    first = W.evaluate_each({None: qrels}, [item(r) for r in every[:-1]])
    asked.clear()
    got = W.evaluate_each({None: qrels}, [item(r) for r in every], previous=first)
    assert asked == [every[-1].name]
    whole = W.evaluate_workspace({None: qrels}, [(r, None) for r in every], settings)
    same_evaluation(got, whole)
    # not a continuation (names differ): previous is not used
    asked.clear()
    renamed = W.evaluate_each({None: qrels}, [("x", None, item(every[0])[2]), *[item(r) for r in every[1:]]],
                              previous=first)
    assert asked == [r.name for r in every]
    assert renamed.runs[0] == "x"
    parts = W.run_parts(got)
    assert list(parts) == [r.name for r in every]
    kept = [r for r in every if r is not every[0]]
    again = W.evaluate_each({None: qrels}, [(r.name, None, lambda r=r: parts[r.name]) for r in kept])
    same_evaluation(again, W.evaluate_workspace({None: qrels}, [(r, None) for r in kept], settings))
    two = W.evaluate_workspace({"a": qrels, "b": qrels}, [(r, "a" if i % 2 else "b") for i, r in enumerate(every)],
                               settings)
    assert W.run_parts(two) is None  # several aspects: not stacked run after run


@pytest.mark.parametrize("workers", [1, 2])
def test_runs_read_by_the_workers_are_evaluated_and_handed_over_as_done(workers):
    """A job's run may be a call that reads it (in the worker evaluating it); done(i, evaluation, messages) is
    called for each as it is evaluated; a call giving None is no job."""
    qrels, runs = case(2)
    settings = W.Settings(metrics=("ndcg", "recall"), k=(1, 10), rel_threshold=9).validated()  # a warning
    every = list(runs.values())
    seen: dict[int, tuple] = {}
    jobs = [(qrels, (lambda r=r: r)) for r in every] + [(qrels, lambda: None)]
    got = W.evaluate_several(jobs, settings, workers=workers, done=lambda i, ev, msgs: seen.setdefault(i, (ev, msgs)))
    assert got[-1] is None and sorted(seen) == list(range(len(every)))
    for i, run in enumerate(every):
        want, msgs = W.capture(W.evaluate_one, qrels, run, settings)
        assert seen[i][0] is got[i] and seen[i][1] == tuple(msgs) and msgs
        same_evaluation(got[i], want)


def test_the_ground_truth_s_id_index_is_built_once_for_every_run_evaluated_against_it(monkeypatch):
    """Evaluating run after run against one ground truth (the dashboard's 137 checkpoints) looks their document
    and query ids up in the ground truth's index built once (~7 ms a run at 50,000 documents), not once per run;
    the tables are those of a ground truth evaluated afresh for each run."""
    import importlib

    E = importlib.import_module("evalcore.evaluate")  # (the module: the package's attribute is the function)
    qrels, runs = case(3)
    built: list[int] = []
    real = E.name_index if hasattr(E, "name_index") else None

    def counted(names):
        built.append(len(names))
        return real(names)

    monkeypatch.setattr(E, "name_index", counted, raising=False)
    kw = dict(metrics=["ndcg", "map"], k=[1, 10])
    got = [evaluate(qrels, {n: r}, **kw) for n, r in runs.items()]
    assert sorted(built) == sorted([qrels.n_queries, len(set(qrels.doc_ids.tolist()))])  # once each
    for (name, run), ev in zip(runs.items(), got, strict=True):
        fresh, _ = case(3)  # the same ground truth, no index built yet
        same_evaluation(ev, evaluate(fresh, {name: run}, **kw))

"""evalcore.stacked: the evaluation of many runs held as each run's evaluation, stacked at its first full read —
then exactly what stack_run_evaluations / append_run_evaluations give; before, one metric@k's rows, the metric@k
pairs, the row count, runs, coverage and each run's rows read from the parts, equal to the stacked table's."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest
from test_stack_runs import case, same_evaluation

from evalcore import stacked as S
from evalcore import workspace as W
from evalcore.combine import append_run_evaluations, stack_run_evaluations
from evalcore.errors import OptionError
from evalcore.evaluate import evaluate
from evalcore.evaluation import Evaluation

KW = dict(metrics=["ndcg", "map", "p"], k=[1, 5, 10])


def parts_of(seed: int, n: int = 7, **options) -> tuple[list, list[str], object]:
    """``n`` evaluations of one run each (runs of ``case(seed)`` over and over, some empty of rows for the tie
    options), their names, and the ground truth."""
    qrels, runs = case(seed)
    every = list(runs.values())
    names = [f"v{i}" for i in range(n)]
    return [evaluate(qrels, {"same name": every[i % len(every)]}, **KW, **options) for i in range(n)], names, qrels


def whole_rows(ev, metric: str, k: int, start: int = 0) -> tuple[dict, np.ndarray]:
    """The rows of metric@k from ``start`` on of the stacked table, as the obvious mask gives them."""
    c = ev.columns
    code = c.metrics.index(metric) if metric in c.metrics else -1
    mask = (c.metric == code) & (c.k == k)
    mask[:start] = False
    return {f: getattr(c, f)[mask] for f in ("run", "query", "domain", "metric", "k", "value")}, np.flatnonzero(mask)


@pytest.mark.parametrize("seed", range(3))
def test_a_stack_read_whole_is_the_stack_of_its_runs_and_nothing_is_stacked_before(seed):
    parts, names, _ = parts_of(seed)
    lazy = S.StackedEvaluation(parts, names)
    want = stack_run_evaluations(parts, names=names)
    assert lazy.runs == names and lazy.coverage_rows == want.coverage_rows and lazy.settings == want.settings
    assert S.row_count(lazy) == len(want.columns)
    assert lazy.coverage.equals(want.coverage)
    assert "not stacked" in repr(lazy) and not lazy.stacked  # none of the above stacked anything
    same_evaluation(lazy, want)
    assert lazy.stacked and lazy.table.equals(want.table)
    assert lazy.__dict__["_parts"] is None  # let go: their rows are in the stack


@pytest.mark.parametrize("seed", range(3))
def test_one_metric_at_k_is_read_from_the_parts_as_the_stacked_table_holds_it(seed):
    """Every metric@k (one the evaluation lacks too), from row 0 and from any row on: the same arrays (dtypes
    too) and positions, from a stack not built (nothing stacked), a built one and a plain evaluation."""
    parts, names, _ = parts_of(seed)
    want = stack_run_evaluations(parts, names=names)
    n = len(want.columns)
    rng = np.random.default_rng(seed)
    starts = [0, 1, int(rng.integers(1, n)), len(parts[0].columns), n - 1, n]
    lazy = S.StackedEvaluation(parts, names)
    built = S.StackedEvaluation(parts, names)
    built.columns  # noqa: B018 - stacked now
    for metric, k in [("ndcg", 5), ("map", 0), ("p", 10), ("map", 1), ("recall", 5), ("ndcg", 7)]:
        for start in starts:
            rows, where = whole_rows(want, metric, k, start)
            for ev in (lazy, built, want):
                got, at = S.metric_rows(ev, metric, k, start=start)
                assert np.array_equal(at, where) and at.dtype == np.int64, (metric, k, start)
                for f, x in rows.items():
                    y = getattr(got, f)
                    assert y.dtype == x.dtype and np.array_equal(y, x, equal_nan=True), (f, metric, k, start)
                assert got.runs == tuple(names) and got.metrics == want.columns.metrics
                assert np.array_equal(got.query_ids, want.columns.query_ids)
        codes = list(S.metric_k_codes(lazy, start=starts[2]))
        assert np.array_equal(np.concatenate([c for c, _ in codes]), want.columns.metric[starts[2]:])
        assert np.array_equal(np.concatenate([k for _, k in codes]), want.columns.k[starts[2]:])
    assert not lazy.stacked


@pytest.mark.parametrize("seed", range(3))
def test_the_queries_drawn_and_the_table_s_dtypes_are_read_from_the_parts_as_the_stacked_table_gives_them(seed):
    """What a restarted Overview needs of the whole table (the queries with a finite value, over which its
    resamples are drawn; the dtypes of its columns) read from a stack not built, nested or not (nothing stacked,
    no row made a DataFrame), equal to what the stacked table gives; and from a built one and plain evaluations."""
    from evalcore.intervals import queries_drawn

    qrels, runs = case(seed)
    every = list(runs.values())  # first_rel_rank: NaN where a run finds nothing relevant (a query not drawn then)
    parts = [evaluate(qrels, {"r": every[i % len(every)]}, metrics=["ndcg", "first_rel_rank"], k=[1, 5])
             for i in range(5)]
    names = [f"v{i}" for i in range(5)]
    want = stack_run_evaluations(parts, names=names)
    cols = want.columns
    drawn = queries_drawn(cols.query_ids, cols.query, cols.value)
    assert 0 < len(drawn) <= len(cols.query_ids)
    lazy = S.StackedEvaluation(parts, names)
    nested = S.StackedEvaluation([S.StackedEvaluation(parts[:4], names[:4]), parts[4]], names)
    built = S.StackedEvaluation(parts, names)
    built.columns  # noqa: B018 - stacked now
    tabled = Evaluation(want.table, want.coverage, want.settings)
    for ev in (lazy, nested, built, want, tabled):
        assert S.queries_drawn(ev) == drawn
        empty = S.empty_table(ev)
        assert len(empty) == 0 and list(empty.columns) == list(want.table.columns)
        assert empty.dtypes.equals(want.table.dtypes)
    assert not lazy.stacked and not nested.stacked


@pytest.mark.parametrize("seed", range(3))
def test_a_stack_continued_is_the_stack_of_all_and_appends_in_place_once_built(seed):
    """A checkpoint added: a stack not built continued by a run stays unbuilt and reads whole as the stack of all,
    the first stack built with it, the rows of the one appended into its buffers (one copy of the rows: two
    evaluations a session and the server's caches hold); a built one continued is appended into its buffers too.
    Stacks nested deeper than Python's recursion limit build one after the other."""
    parts, names, _ = parts_of(seed, n=9)
    lazy = S.StackedEvaluation(parts[:8], names[:8])
    more = S.StackedEvaluation([lazy, parts[8]], names)
    assert not lazy.stacked and not more.stacked and S.row_count(more) == S.row_count(lazy) + len(parts[8].columns)
    same_evaluation(more, stack_run_evaluations(parts, names=names))
    same_evaluation(lazy, stack_run_evaluations(parts[:8], names=names[:8]))
    assert np.shares_memory(lazy.columns.value, more.columns.value)
    built = S.StackedEvaluation(parts[:8], names[:8])
    eight = built.columns
    grown = S.StackedEvaluation([built, parts[8]], names)
    same_evaluation(grown, stack_run_evaluations(parts, names=names))
    assert np.shares_memory(eight.value, grown.columns.value)  # 8 runs stacked with room for 2 more
    appended = append_run_evaluations(append_run_evaluations(stack_run_evaluations(parts[:1], names=names[:1]),
                                                             parts[1:8], names=names[1:8]), [parts[8]],
                                      names=names[8:])
    same_evaluation(grown, appended)
    deep = S.StackedEvaluation(parts[:1], names[:1])
    for i in range(2000):  # a training script adding 2,000 checkpoints to an open page that never reads them whole
        deep = S.StackedEvaluation([deep, parts[1 + i % 8]], [*deep.runs, f"c{i}"])
    rows, _ = S.metric_rows(deep, "ndcg", 5, start=S.row_count(deep) - len(parts[1].columns))
    assert rows.runs[-1] == "c1999" and not deep.stacked and len(S.run_columns(deep)) == 2001
    want = stack_run_evaluations([parts[0], *(parts[1 + i % 8] for i in range(2000))], names=deep.runs)
    same_evaluation(deep, want)


def test_parts_sharing_their_layout_arrays_give_each_its_own_rows():
    """Kept evaluations of one layout share their query, domain, metric and k arrays (evalcore.workspace.derived):
    one metric@k's rows of each are still its own (values, run codes, positions), as the stacked table's."""
    parts, names, _ = parts_of(0, n=1)
    rng = np.random.default_rng(0)
    first = parts[0]
    shared = [first] + [Evaluation(None, None, dict(first.settings), dataclasses.replace(
        first.columns, value=rng.random(len(first.columns))), first.coverage_rows) for _ in range(5)]
    names = [f"v{i}" for i in range(6)]
    lazy = S.StackedEvaluation(shared, names)
    want = stack_run_evaluations(shared, names=names)
    for metric, k in [("ndcg", 5), ("map", 0), ("p", 10)]:
        for start in (0, 7, len(first.columns) + 3):
            rows, where = whole_rows(want, metric, k, start)
            got, at = S.metric_rows(lazy, metric, k, start=start)
            assert np.array_equal(at, where)
            for f, x in rows.items():
                assert np.array_equal(getattr(got, f), x, equal_nan=True), f


def test_each_run_s_evaluation_is_its_part_before_stacking_and_its_rows_after():
    """W.run_parts (a run removed or renamed reads no kept evaluation): the same per run from a stack not built
    (the parts, under the stack's names) as from the built one, also when its first part is a stack."""
    parts, names, qrels = parts_of(1, n=5)
    settings = {**parts[0].settings}
    items = [(n, None, lambda p=p: p) for n, p in zip(names, parts, strict=True)]
    first = W.evaluate_each({None: qrels}, items[:3])
    assert isinstance(first, S.StackedEvaluation) and not first.stacked
    first_built = W.evaluate_each({None: qrels}, items[:3])
    first_built.columns  # noqa: B018
    whole = W.evaluate_each({None: qrels}, items)
    whole.columns  # noqa: B018 - stacked: run_parts gives views of its rows
    want = W.run_parts(whole)
    for prev in (first, first_built):
        now = W.evaluate_each({None: qrels}, items, previous=prev)
        assert not now.stacked
        got = W.run_parts(now)
        assert list(got) == names
        for name in names:
            same_evaluation(got[name], want[name])
            assert got[name].settings == settings
    assert not first.stacked


def test_what_cannot_be_stacked_is_refused():
    parts, names, qrels = parts_of(0, n=3)
    two = stack_run_evaluations(parts[:2], names=names[:2])
    with pytest.raises(OptionError, match="first part"):
        S.StackedEvaluation([parts[0], S.StackedEvaluation(parts[1:], names[1:])], names)
    with pytest.raises(OptionError, match="one run each"):
        S.StackedEvaluation([parts[0], two], names)
    other = evaluate(qrels, {"x": case(0)[1]["run0"]}, metrics=["ndcg"], k=[1, 5, 10])
    with pytest.raises(OptionError, match="differ"):
        S.StackedEvaluation([parts[0], other], names[:2])
    with pytest.raises(OptionError, match="distinct names"):
        S.StackedEvaluation(parts, ["a", "a", "b"])
    with pytest.raises(OptionError, match="distinct names"):
        S.StackedEvaluation(parts, ["a", "b"])
    with pytest.raises(OptionError, match="nothing"):
        S.StackedEvaluation([], [])


def test_settings_added_keep_it_unstacked_and_threads_stack_it_once():
    parts, names, _ = parts_of(2)
    lazy = S.StackedEvaluation(parts, names).with_settings({"aspects": {n: None for n in names}})
    assert isinstance(lazy, S.StackedEvaluation) and not lazy.stacked
    assert lazy.settings == {**parts[0].settings, "aspects": {n: None for n in names}}
    got: list = []
    ready = threading.Barrier(4)

    def read() -> None:
        ready.wait()
        got.append(lazy.columns)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(c is got[0] for c in got)
    same_evaluation(lazy.with_settings({}), stack_run_evaluations(parts, names=names).with_settings(
        {"aspects": {n: None for n in names}}))

"""Pure helpers of the dashboard: the runs read on demand (dashboard.lazyruns) and the display reshaping of
the per-query table (dashboard.tables.plain_table, metric_k_pairs), against the obvious pandas forms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard import tables as T
from dashboard.lazyruns import LazyRuns

# ------------------------------------------------------------------------------------------ LazyRuns


def lazy(names, *, fail=(), ready=None, reader=None):
    calls: list[str] = []
    failures: list[str] = []

    def load(name):
        calls.append(name)
        return None if name in fail else f"run {name}"

    runs = LazyRuns(names, load, ready=ready, on_failure=failures.append, reader=reader)
    return runs, calls, failures


def test_names_order_and_membership_read_nothing():
    runs, calls, _ = lazy(["b", "a", "c"])
    assert list(runs) == ["b", "a", "c"] and len(runs) == 3
    assert "a" in runs and "z" not in runs
    assert [n for n in ["a", "z"] if n in runs] == ["a"]
    assert calls == []


def test_each_run_is_read_once_at_its_first_lookup():
    runs, calls, _ = lazy(["a", "b"])
    assert runs["b"] == "run b" and runs["b"] == "run b" and runs.get("b") == "run b"
    assert calls == ["b"]
    assert runs.loaded() == {"b": "run b"}
    assert dict(runs) == {"a": "run a", "b": "run b"} and calls == ["b", "a"]


def test_runs_in_memory_already_are_not_read():
    runs, calls, _ = lazy(["a", "b"], ready={"a": "kept a", "other": "not listed"})
    assert runs["a"] == "kept a" and calls == []
    assert "other" not in runs and runs.loaded() == {"a": "kept a"}


def test_a_run_that_fails_to_read_is_reported_then_missing():
    runs, calls, failures = lazy(["a", "b"], fail={"a"})
    with pytest.raises(KeyError):
        runs["a"]
    assert failures == ["a"] and runs.get("a") is None and failures == ["a", "a"]
    assert runs["b"] == "run b"


def test_an_unknown_name_is_a_key_error_without_reading():
    runs, calls, failures = lazy(["a"])
    with pytest.raises(KeyError):
        runs["z"]
    assert calls == [] and failures == []


def test_deferred_gives_the_runs_read_and_calls_for_the_others():
    runs, calls, _ = lazy(["a", "b"], reader=lambda name: (lambda: f"read {name} elsewhere"))
    runs["a"]
    out = runs.deferred()
    assert out["a"] == "run a" and callable(out["b"]) and out["b"]() == "read b elsewhere"
    assert calls == ["a"]
    plain, calls2, _ = lazy(["a", "b"])  # without a reader: every run is read now
    assert plain.deferred() == {"a": "run a", "b": "run b"} and calls2 == ["a", "b"]


# ------------------------------------------------------------------------------------------ table reshaping


def random_table(seed: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    metrics = ["recall", "ndcg", "map", "unused"]
    domains = ["x", "y", "", "z"]
    dom = pd.Categorical(rng.choice(["x", "y", ""], n), categories=domains)
    dom[rng.random(n) < 0.2] = np.nan  # no domain
    return pd.DataFrame({
        "run": pd.Categorical(rng.choice(["a", "b"], n)),
        "query_id": pd.Categorical(rng.choice([f"q{i}" for i in range(30)], n)),
        "domain": dom,
        "metric": pd.Categorical(rng.choice(metrics[:3], n), categories=metrics),
        "k": rng.choice([0, 1, 5, 10, 100], n).astype(np.int32),
        "value": rng.random(n),
    })


def obvious_pairs(table: pd.DataFrame) -> list[tuple[str, int]]:
    first = list(dict.fromkeys(table["metric"].astype(str)))  # metrics in order of first appearance
    pairs = set(zip(table["metric"].astype(str), table["k"].astype(int), strict=True))
    return sorted(pairs, key=lambda p: (first.index(p[0]), p[1]))


@pytest.mark.parametrize("seed", range(8))
def test_plain_table_gives_the_domains_as_strings(seed):
    table = random_table(seed)
    got = T.plain_table(table)
    want = table.assign(domain=table["domain"].astype(object).fillna("").astype(str))
    pd.testing.assert_frame_equal(got, want)
    assert table["domain"].isna().any()  # the input is not changed
    assert T.plain_table(want) is want  # plain strings already: the table itself


@pytest.mark.parametrize("seed", range(8))
def test_metric_k_pairs_match_the_obvious_form(seed):
    table = random_table(seed)
    assert T.metric_k_pairs(table) == obvious_pairs(table)
    codes = table["metric"].cat.codes.to_numpy()
    names = list(table["metric"].cat.categories)
    for chunk in (1, 7, 1 << 20):  # read a chunk at a time: the same pairs however the rows are cut
        assert T.metric_k_pairs_coded(names, codes, table["k"].to_numpy(), chunk=chunk) == obvious_pairs(table)
    plain = table.assign(metric=table["metric"].astype(str))  # not categorical
    assert T.metric_k_pairs(plain) == obvious_pairs(table)


def test_metric_k_pairs_with_keys_too_large_to_count_and_an_empty_table():
    table = random_table(0).assign(k=lambda t: t["k"].astype(np.int64) * 10**9)
    assert T.metric_k_pairs(table) == obvious_pairs(table)
    assert T.metric_k_pairs(table.iloc[:0]) == []


@pytest.mark.parametrize("seed", range(8))
def test_metric_k_pairs_of_a_table_in_parts_are_those_of_the_whole(seed):
    """A table read part after part (each run's evaluation; some parts empty), or its first rows' pairs known and
    the other rows read: the pairs of the whole, in the same order."""
    table = random_table(seed)
    codes, ks = table["metric"].cat.codes.to_numpy(), table["k"].to_numpy()
    names = list(table["metric"].cat.categories)
    rng = np.random.default_rng(seed)
    cuts = sorted(rng.integers(0, len(table), 6).tolist())
    bounds = [0, *cuts, cuts[-1], len(table)]  # (one part empty)
    parts = [(codes[a:b], ks[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    assert T.metric_k_pairs_parts(names, parts) == obvious_pairs(table)
    known = T.metric_k_pairs(table.iloc[:cuts[2]])
    assert T.metric_k_pairs_parts(names, parts[3:], known=known) == obvious_pairs(table)
    assert T.metric_k_pairs_parts(names, []) == [] and T.metric_k_pairs_parts(names, [], known=known) == known


def test_parts_sharing_their_arrays_are_counted_once(monkeypatch):
    """The kept evaluations of 137 runs of one layout share their metric and k arrays: counted once, the same pairs
    (a part holding other rows in arrays of the same length is counted)."""
    table = random_table(3)
    codes, ks = table["metric"].cat.codes.to_numpy(), table["k"].to_numpy()
    names = list(table["metric"].cat.categories)
    other = codes.copy()
    other[:5] = 3  # the metric "unused", in a part of its own arrays
    counted: list = []
    real = T.metric_k_pairs_coded
    monkeypatch.setattr(T, "metric_k_pairs_coded", lambda names, c, k, **kw: counted.append((c, k)) or real(
        names, c, k, **kw))
    got = T.metric_k_pairs_parts(names, [(codes, ks)] * 50 + [(other, ks)] + [(codes, ks)] * 3)
    assert len(counted) == 2
    # each part counted in place, a chunk at a time (no table-sized copy: 19 M rows of a stacked table took 1 s)
    assert counted[0][0] is codes and counted[1][0] is other and all(k is ks for _, k in counted)
    assert got == obvious_pairs(pd.concat([table, table.assign(metric=pd.Categorical.from_codes(
        other, categories=table["metric"].cat.categories))]))


@pytest.mark.parametrize("seed", range(3))
def test_a_metric_slice_from_its_rows_or_appended_is_the_whole_table_s(seed):
    """slice_frame of evalcore.stacked.metric_rows (the rows read from each run's evaluation) is metric_slice of the
    stacked table, index and categories included (a query without a domain, a metric absent); appended_slice of
    the slice of the first runs and the rows of the runs added is the slice of all; not when the runs differ."""
    from test_stack_runs import case

    from evalcore.evaluate import evaluate
    from evalcore.stacked import StackedEvaluation, metric_rows, row_count

    qrels, runs = case(seed)
    every = list(runs.values())
    parts = [evaluate(qrels, {"r": every[i % len(every)]}, metrics=["ndcg", "map"], k=[1, 5]) for i in range(6)]
    names = [f"v{i}" for i in range(6)]
    before = StackedEvaluation(parts[:4], names[:4])
    after = StackedEvaluation([before, *parts[4:]], names)
    n = row_count(before)
    chosen = (("ndcg", 5), ("map", 0), ("map", 1), ("recall", 5))
    sliced = {mk: T.slice_frame(*metric_rows(before, *mk)) for mk in chosen}
    got = {mk: T.slice_frame(*metric_rows(after, *mk)) for mk in chosen}
    appended = {mk: T.appended_slice(sliced[mk], T.slice_frame(*metric_rows(after, *mk, start=n))) for mk in chosen}
    assert not after.stacked and not before.stacked
    for mk in chosen:
        want = T.metric_slice(after.table, *mk)
        for frame in (got[mk], appended[mk]):
            pd.testing.assert_frame_equal(frame, want, check_exact=True)
            assert frame.index.equals(want.index)
        assert T.appended_slice(want, sliced[mk]) is None  # (the first's runs are not the first of the second's)
    assert (T.metric_slice(after.table, "ndcg", 5)["domain"] == "").any()


def test_wins_count_a_better_value_whatever_the_direction():
    """The tests count a win where B is above A; for first_rel_rank a win is below."""
    from dashboard import versions as V
    from evalcore import workspace as W
    from evalcore.data import Qrels, Run
    from evalcore.stats import compare

    assert T.wtl_cells([3, 0], [1, 2], [1, 5]) == ["3 / 1 / 1", "0 / 2 / 5"]
    assert T.wtl_cells([3, 0], [1, 2], [1, 5], higher_is_better=False) == ["1 / 1 / 3", "5 / 2 / 0"]
    qrels = Qrels.from_dict({f"q{i}": {f"r{i}": 1} for i in range(5)})
    first = Run.from_dict({f"q{i}": {f"r{i}": 3.0, "x": 2.0} for i in range(5)}, name="v1")  # rank 1 everywhere
    later = Run.from_dict({f"q{i}": {"x": 3.0, f"r{i}": 2.0} if i < 4 else {f"r{i}": 3.0} for i in range(5)},
                          name="v2")  # rank 2 on four queries: worse
    from evalcore.evaluate import evaluate

    table = evaluate(qrels, [first, later], metrics=["first_rel_rank"], k=[10]).table
    series = W.version_series(pd.DataFrame({"name": ["v1", "v2"], "model": ["m", "m"], "version": [None, None],
                                            "step": [1.0, 2.0]}))
    rows = W.version_tests(table, series, model="m", metric="first_rel_rank", k=0, n_resamples=200)
    view = V.tests_view(rows, {"v1": "v1", "v2": "v2"}, "previous", higher_is_better=False)
    assert view["wins / ties / losses"].tolist() == ["0 / 1 / 4"]  # v2 loses on four queries, ties on one
    raw = compare(table, metric="first_rel_rank", k=0)
    assert (int(raw["wins"].iloc[0]), int(raw["losses"].iloc[0])) == (4, 0)  # (the tests' count: v2 above v1)


def test_version_change_list_has_a_domain_column_only_when_queries_have_domains():
    from dashboard import versions as DV

    frame = pd.DataFrame({"query_id": ["q1", "q2"], "difference": [0.5, 0.25], "a": [0.1, 0.2], "b": [0.6, 0.45],
                          "domain": ["bio", ""]})
    assert list(DV.change_list(frame).columns) == ["query_id", "B − A", "A", "B", "domain"]
    assert DV.change_list(frame)["domain"].tolist() == ["bio", ""]
    assert list(DV.change_list(frame, domains=False).columns) == ["query_id", "B − A", "A", "B"]

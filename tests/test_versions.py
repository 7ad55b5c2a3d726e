"""evalcore.workspace.versions against independent computations (numpy, scipy.stats directly, sorted()),
plus invariants; compare(pairs=...); the demo's checkpoint series."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalcore import workspace as W
from evalcore.errors import OptionError
from evalcore.intervals import mean_intervals
from evalcore.stats import compare
from evalcore.workspace.versions import (
    AGAINST,
    SERIES_COLUMNS,
    version_changes,
    version_curve,
    version_series,
    version_tests,
)

VALUES = np.array([0.0, 0.25, 0.5, 0.5, 1.0])  # few distinct values: many ties


def tie_heavy_table(runs: list[str], *, n_queries: int = 40, seed: int = 0, missing: float = 0.0,
                    metrics=(("ndcg", 10), ("recall", 5))) -> pd.DataFrame:
    """A per-query table of tie-heavy values; each run drifts upward with its index (a training series)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, run in enumerate(runs):
        for j in range(n_queries):
            if missing and rng.random() < missing:
                continue
            for metric, k in metrics:
                v = float(np.clip(rng.choice(VALUES) + (0.25 if rng.random() < i / (2 * len(runs)) else 0.0), 0, 1))
                rows.append((run, f"q{j:03d}", f"d{j % 3}", metric, k, v))
    return pd.DataFrame(rows, columns=["run", "query_id", "domain", "metric", "k", "value"])


def info(names, models, versions=None, steps=None) -> pd.DataFrame:
    n = len(names)
    return pd.DataFrame({"name": names, "model": models, "version": versions or [None] * n,
                         "step": steps or [None] * n})


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment, written out (independent of evalcore.stats.adjust_pvalues)."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = np.empty(m), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


# ------------------------------------------------------------------------------------------ series


def test_series_orders_by_step_then_label_then_loading_order():
    frame = info(["c", "a", "b", "x", "solo", "z2", "z10", "z1", "late", "early"],
                 ["m", "m", "m", None, "one", "lab", "lab", "lab", "t", "t"],
                 versions=[None, None, None, None, None, "v2", "v10", "v1", None, None],
                 steps=[30, 10, 20, None, 5, None, None, None, None, None])
    s = version_series(frame)
    assert list(s.columns) == SERIES_COLUMNS
    by = {m: g["run"].tolist() for m, g in s.groupby("model", sort=False)}
    assert list(by) == ["lab", "m", "t"]  # models by name; a single version and no model: no series
    assert by["m"] == ["a", "b", "c"]  # by step
    assert by["lab"] == ["z1", "z2", "z10"]  # natural order of the labels
    assert by["t"] == ["late", "early"]  # neither: the order they were loaded
    assert s.groupby("model")["position"].apply(list).to_dict() == {"lab": [0, 1, 2], "m": [0, 1, 2], "t": [0, 1]}
    assert version_series(frame, min_versions=1)["model"].tolist().count("one") == 1
    # created_at, when given, is the fallback order
    timed = frame.assign(created_at=pd.to_datetime([f"2024-01-0{d}" for d in (1, 2, 3, 4, 5, 6, 7, 8, 9, 1)]))
    assert version_series(timed).query("model == 't'")["run"].tolist() == ["early", "late"]


def test_unsure_order_names_the_versions_placed_by_a_weaker_key():
    frame = info(["a", "b", "nostep", "z1", "z2", "nolabel", "late", "early"],
                 ["m", "m", "m", "lab", "lab", "lab", "t", "t"],
                 versions=[None, None, "v9", "v1", "v2", None, None, None],
                 steps=[10, 20, None, None, None, None, None, None])
    s = version_series(frame)
    assert s.query("model == 'm'")["run"].tolist()[-1] == "nostep"  # what the answer says
    assert W.unsure_order(s, "m") == ("step", ["nostep"])
    assert s.query("model == 'lab'")["run"].tolist()[-1] == "nolabel"
    assert W.unsure_order(s, "lab") == ("version label", ["nolabel"])
    assert W.unsure_order(s, "t") == ("", [])  # nobody has a step or a label: loading order throughout
    every = version_series(frame.assign(step=[10, 20, 30, 1, 2, 3, 1, 2]))
    assert all(W.unsure_order(every, m) == ("", []) for m in ("m", "lab", "t"))
    # a step given to every version but shared: those versions follow their labels among themselves
    shared = version_series(frame.assign(step=[10, 10, 30, 1, 1, 1, 5, 6]))
    assert W.unsure_order(shared, "m") == ("same step", ["a", "b"])
    assert W.unsure_order(shared, "lab") == ("same step", ["z1", "z2", "nolabel"])
    assert W.unsure_order(shared, "t") == ("", [])
    # no steps, every version labelled, a label shared: the loading order decides between them
    relabelled = version_series(frame.assign(version=[None, None, None, "v1", "v1", "v2", None, None]))
    assert W.unsure_order(relabelled, "lab") == ("same version label", ["z1", "z2"])


def test_series_accepts_the_workspace_runs_frame(tmp_path):
    from evalcore.io import load_run

    ws = W.Workspace.open(tmp_path / "ws")
    text = "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\n"
    for name, step in (("late", 9.0), ("early", 2.0)):
        ws.add_run(name, load_run(text.encode(), format="trec"), model="enc", step=step)
    s = version_series(ws.runs())
    assert s["run"].tolist() == ["early", "late"] and s["step"].tolist() == [2.0, 9.0]


def test_series_with_coverage_leaves_out_low_coverage_versions_as_the_page_does(tmp_path):
    """A checkpoint whose queries were encoded for 60 of 200 queries: its 140 missing queries count 0,
    so its tests would report a huge, 'significant' regression. With ``coverage=`` the series leaves it
    out (warning with its coverage), as the Versions page does; ``include=`` keeps it."""
    from evalcore.errors import EvalcoreWarning

    rng = np.random.default_rng(4)
    docs, qids = [f"d{i}" for i in range(300)], [f"q{i}" for i in range(200)]
    qrels = "".join(f"{q} 0 d{i} 1\n" for i, q in enumerate(qids))
    (tmp_path / "qrels.txt").write_text(qrels)
    ws = W.Workspace.open(tmp_path / "ws")
    ws.set_ground_truth(tmp_path / "qrels.txt")
    d = rng.normal(size=(300, 16)).astype(np.float32)
    q = d[:200] + 0.3 * rng.normal(size=(200, 16)).astype(np.float32)
    for ep, n in ((1, 200), (2, 200), (3, 60)):
        ws.add_embedding_run(f"ep{ep}", d + 0.5 / ep * rng.normal(size=d.shape).astype(np.float32), docs,
                             query_embeddings=q[:n], query_ids=qids[:n], model="dense", version=f"epoch {ep}", step=ep)
    with pytest.warns(EvalcoreWarning, match="partial coverage"):
        ev = ws.evaluate(metrics=["ndcg"], k=[10], record=False)
    assert version_series(ws.runs())["run"].tolist() == ["ep1", "ep2", "ep3"]  # without coverage: every version
    with pytest.warns(EvalcoreWarning, match=r"low coverage .*: ep3 \(60/200 \(30%\)\)"):
        s = version_series(ws.runs(), coverage=ev.coverage)
    assert s["run"].tolist() == ["ep1", "ep2"]
    tests = version_tests(ev.table, s, model="dense", metric="ndcg", k=10)
    assert "ep3" not in set(tests["run_b"]) | set(tests["run_a"])
    kept = version_series(ws.runs(), coverage=ev.coverage, include=["ep3"])
    assert kept["run"].tolist() == ["ep1", "ep2", "ep3"]
    assert version_series(ws.runs(), coverage=ev.coverage, min_coverage=0.0)["run"].tolist() == ["ep1", "ep2", "ep3"]


@pytest.mark.parametrize("frame, message", [
    (pd.DataFrame({"name": ["a"], "model": ["m"]}), "lacks column"),
    (info(["a", "a"], ["m", "m"]), "more than once"),
    (info(["a", "b"], ["m", "m"], steps=["one", 2]), "step column must hold numbers"),
])
def test_series_input_errors(frame, message):
    with pytest.raises(OptionError, match=message):
        version_series(frame)
    with pytest.raises(OptionError, match="min_versions"):
        version_series(info(["a"], ["m"]), min_versions=0)


def test_series_does_not_depend_on_row_order():
    frame = info([f"r{i}" for i in range(8)], ["m"] * 8, steps=[7, 3, 5, 1, 0, 6, 2, 4])
    a = version_series(frame)
    b = version_series(frame.sample(frac=1.0, random_state=3).reset_index(drop=True))
    pd.testing.assert_frame_equal(a, b)


# ------------------------------------------------------------------------------------------ curve


def test_curve_means_are_the_per_query_means_and_intervals_the_shared_ones():
    runs = [f"v{i}" for i in range(6)]
    table = tie_heavy_table([*runs, "other"], missing=0.1, seed=4)
    s = version_series(info(runs[::-1], ["m"] * 6, steps=[50, 40, 30, 20, 10, 0]))
    c = version_curve(table, s, model="m", metric="ndcg", k=10, n_resamples=300, seed=2)
    assert c["run"].tolist() == runs
    for row in c.itertuples(index=False):
        vals = table[(table["run"] == row.run) & (table["metric"] == "ndcg")]["value"].to_numpy()
        assert row.n == len(vals) and row.mean == pytest.approx(vals.mean(), abs=1e-15)
        assert vals.min() <= row.ci_low <= row.mean <= row.ci_high <= vals.max()
    # the intervals are those of every run of the metric@k at once (resamples shared with the other views)
    ref = mean_intervals(table[table["metric"] == "ndcg"], by=("run",), n_resamples=300, seed=2).set_index("run")
    np.testing.assert_array_equal(c["ci_low"].to_numpy(), ref.loc[runs, "ci_low"].to_numpy())
    np.testing.assert_array_equal(c["ci_high"].to_numpy(), ref.loc[runs, "ci_high"].to_numpy())


def test_a_version_without_a_value_has_n_0_and_no_mean():
    """first_rel_rank of a version that finds no relevant document is NaN on every query: its point has
    n = 0 and no mean or interval (a KeyError before); the other versions keep theirs."""
    runs = ["v0", "v1", "v2"]
    table = tie_heavy_table(runs, seed=5)
    frr = table[table["metric"] == "ndcg"].assign(metric="first_rel_rank", k=0)
    frr["value"] = np.where(frr["run"] == "v0", np.nan, np.floor(frr["value"] * 10) + 1)
    s = version_series(info(runs, ["m"] * 3, steps=[0, 1, 2]))
    c = version_curve(frr, s, model="m", metric="first_rel_rank", k=0, n_resamples=200, seed=1)
    assert c["run"].tolist() == runs and c["n"].tolist()[0] == 0 and c["n"].dtype == np.int64
    assert np.isnan(c.loc[0, ["mean", "ci_low", "ci_high"]].to_numpy(dtype=float)).all()
    ref = mean_intervals(frr, by=("run",), n_resamples=200, seed=1).set_index("run").loc[runs[1:]]
    np.testing.assert_array_equal(c["mean"].to_numpy()[1:], ref["mean"].to_numpy())
    np.testing.assert_array_equal(c["ci_low"].to_numpy()[1:], ref["ci_low"].to_numpy())
    assert c["n"].tolist()[1:] == ref["n"].tolist()


def test_curve_errors():
    table = tie_heavy_table(["a", "b"])
    s = version_series(info(["a", "b"], ["m", "m"], steps=[1, 2]))
    with pytest.raises(OptionError, match="model 'nope' has 0 version"):
        version_curve(table, s, model="nope", metric="ndcg", k=10)
    with pytest.raises(OptionError, match="no row for 'ndcg@3'"):
        version_curve(table, s, model="m", metric="ndcg", k=3)
    s2 = version_series(info(["a", "zz"], ["m", "m"], steps=[1, 2]))
    with pytest.raises(OptionError, match=r"\['zz'\] have no 'ndcg@10' values"):
        version_curve(table, s2, model="m", metric="ndcg", k=10)


# ------------------------------------------------------------------------------------------ tests


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_tests_against_scipy_directly(test):
    runs = [f"v{i}" for i in range(7)]
    table = tie_heavy_table(runs, missing=0.08, seed=11)
    s = version_series(info(runs, ["m"] * 7, steps=list(range(7))))
    out = version_tests(table, s, model="m", metric="ndcg", k=10, reference="v2", test=test, correction="holm",
                        n_resamples=200)
    assert list(out["against"]) == [AGAINST[0]] * 6 + [AGAINST[1]] * 6
    prev, ref = out[out["against"] == "previous"], out[out["against"] == "reference"]
    assert list(zip(prev["run_a"], prev["run_b"], strict=True)) == list(zip(runs[:-1], runs[1:], strict=True))
    assert set(ref["run_a"]) == {"v2"} and list(ref["run_b"]) == [r for r in runs if r != "v2"]
    assert out["position"].tolist() == [*range(1, 7), 0, 1, 3, 4, 5, 6]
    nd = table[table["metric"] == "ndcg"]
    for family in (prev, ref):
        ps = []
        for row in family.itertuples(index=False):
            a = nd[nd["run"] == row.run_a].set_index("query_id")["value"]
            b = nd[nd["run"] == row.run_b].set_index("query_id")["value"]
            both = a.index.intersection(b.index)
            x, y = a.loc[both].to_numpy(), b.loc[both].to_numpy()
            assert row.n == len(both) and row.n_unpaired == len(a.index.symmetric_difference(b.index))
            assert row.diff == pytest.approx(np.mean(y - x), abs=1e-12)
            p = sps.ttest_rel(y, x).pvalue if test == "t" else sps.wilcoxon(y, x).pvalue
            assert row.p_value == pytest.approx(p, rel=1e-9)
            ps.append(p)
        # Holm within the family (its six pairs), not across both tables
        np.testing.assert_allclose(family["p_adjusted"].to_numpy(), holm(np.array(ps)), rtol=1e-9)
        assert (family["significant"].to_numpy() == (holm(np.array(ps)) < 0.05)).all()


def test_tests_default_reference_and_errors():
    runs = ["a", "b", "c"]
    table = tie_heavy_table(runs)
    s = version_series(info(runs, ["m"] * 3, steps=[1, 2, 3]))
    out = version_tests(table, s, model="m", metric="recall", k=5, n_resamples=100)
    assert set(out.loc[out["against"] == "reference", "run_a"]) == {"a"}  # the first version
    with pytest.raises(OptionError, match="reference 'zz' is not a version of model 'm'"):
        version_tests(table, s, model="m", metric="recall", k=5, reference="zz")
    with pytest.raises(OptionError, match="correction must be one of"):
        version_tests(table, s, model="m", metric="recall", k=5, correction="sidak")


@pytest.mark.parametrize("coded", [False, True])
def test_each_family_alone_gives_that_family_s_rows_bit_for_bit(coded):
    """The dashboard keeps each family on its own (a new reference recomputes the reference's tests only): a
    family computed alone has the very rows of both computed together, and the two alone stack to both."""
    runs = [f"v{i}" for i in range(9)]
    table = tie_heavy_table(runs, missing=0.1, seed=3)
    if coded:  # as the dashboard's tables hold ids: categories (and one run that is no version)
        table = table.astype({"run": pd.CategoricalDtype([*runs[::-1], "other"]), "query_id": "category"})
    s = version_series(info(runs, ["m"] * 9, steps=list(range(9))))
    kw = dict(model="m", metric="ndcg", k=10, reference="v4", n_resamples=300, ci_method="percentile",
              resampling="shared")
    both = version_tests(table, s, **kw)
    prev = version_tests(table, s, **kw, against=["previous"])
    ref = version_tests(table, s, **kw, against="reference")
    pd.testing.assert_frame_equal(pd.concat([prev, ref], ignore_index=True), both, check_exact=True)
    assert set(prev["against"]) == {"previous"} and set(ref["against"]) == {"reference"}
    # the previous version's tests do not depend on the reference
    pd.testing.assert_frame_equal(version_tests(table, s, **{**kw, "reference": "v0"}, against=["previous"]), prev,
                                  check_exact=True)
    for bad in ([], ["previous", "previous"], ["prev"], 3):
        with pytest.raises(OptionError, match="against must name one or both of"):
            version_tests(table, s, **kw, against=bad)


@pytest.mark.parametrize("test", ["t", "permutation"])
def test_a_version_added_tests_its_new_pairs_only_and_changes_no_number(test, monkeypatch):
    """A checkpoint added to a model: the tests of the longer series test the two new pairs only (against the
    previous version, against the reference), not every pair again, and every number is the one computed
    from nothing (the pairs' results are kept by their values; the shared resamples and the correction are
    computed again over each family)."""
    from collections import OrderedDict

    from evalcore.stats import tables

    runs = [f"v{i}" for i in range(8)]
    table = tie_heavy_table(runs, missing=0.05, seed=21).astype({"run": "category", "query_id": "category"})
    kw = dict(model="m", metric="ndcg", k=10, reference="v2", test=test, n_resamples=200, ci_method="percentile",
              resampling="shared")
    monkeypatch.setattr(tables, "_PAIRS", OrderedDict(), raising=False)
    tested = []
    real = tables._paired_test

    def counted(*args, **options):
        tested.append(1)
        return real(*args, **options)

    monkeypatch.setattr(tables, "_paired_test", counted)
    shorter = version_series(info(runs[:-1], ["m"] * 7, steps=list(range(7))))
    longer = version_series(info(runs, ["m"] * 8, steps=list(range(8))))
    version_tests(table[table["run"] != "v7"], shorter, **kw)
    assert len(tested) == 2 * 6 - 1  # (v2, v3) is in both families: tested once
    tested.clear()
    got = version_tests(table, longer, **kw)
    assert len(tested) == 2  # (v6, v7) and (v2, v7)
    monkeypatch.setattr(tables, "_PAIRS", OrderedDict(), raising=False)
    pd.testing.assert_frame_equal(got, version_tests(table, longer, **kw), check_exact=True)
    assert len(tested) == 2 + 2 * 7 - 1


def test_compare_pairs_equals_each_pair_alone():
    runs = ["a", "b", "c", "d"]
    table = tie_heavy_table(runs, seed=5)
    pairs = [("a", "b"), ("c", "b"), ("a", "d")]
    many = compare(table, metric="ndcg", k=10, pairs=pairs, correction="none", n_resamples=200)
    assert list(zip(many["run_a"], many["run_b"], strict=True)) == pairs
    for row, (a, b) in zip(many.itertuples(index=False), pairs, strict=True):
        one = compare(table, metric="ndcg", k=10, runs=[a, b], correction="none", n_resamples=200).iloc[0]
        assert (one["run_a"], one["run_b"]) == (a, b)
        for col in ("diff", "p_value", "ci_low", "ci_high", "wins", "losses"):
            assert getattr(row, col) == one[col]


@pytest.mark.parametrize("kw, message", [
    ({"pairs": [("a", "b")], "baseline": "a"}, "either baseline or pairs"),
    ({"pairs": [("a", "a")]}, "with itself"),
    ({"pairs": [("a", "b"), ("a", "b")]}, "pair twice"),
    ({"pairs": []}, "pairs is empty"),
    ({"pairs": ["ab"]}, "two run names"),
    ({"pairs": [("a", "c")], "runs": ["a", "b"]}, r"name run\(s\) \['c'\] that runs does not list"),
])
def test_compare_pairs_errors(kw, message):
    with pytest.raises(OptionError, match=message):
        compare(tie_heavy_table(["a", "b", "c"]), metric="ndcg", k=10, **kw)


# ------------------------------------------------------------------------------------------ changes


def _independent_changes(table, metric, k, a, b, top, higher=True):
    sel = table[(table["metric"] == metric) & (table["k"] == k)]
    va = dict(zip(sel[sel["run"] == a]["query_id"], sel[sel["run"] == a]["value"], strict=True))
    vb = dict(zip(sel[sel["run"] == b]["query_id"], sel[sel["run"] == b]["value"], strict=True))
    gains = {q: (vb[q] - va[q]) * (1 if higher else -1) for q in va if q in vb}
    up = sorted((q for q, g in gains.items() if g > 0), key=lambda q: (-gains[q], q))[:top]
    down = sorted((q for q, g in gains.items() if g < 0), key=lambda q: (gains[q], q))[:top]
    counts = (sum(g > 0 for g in gains.values()), sum(g == 0 for g in gains.values()),
              sum(g < 0 for g in gains.values()))
    return up, down, counts, len(set(va) ^ set(vb)), gains


def test_changes_against_an_independent_sort():
    table = tie_heavy_table(["v1", "v2"], n_queries=120, missing=0.05, seed=8)
    ch = version_changes(table, metric="ndcg", k=10, run_a="v1", run_b="v2", top=7)
    up, down, counts, unpaired, gains = _independent_changes(table, "ndcg", 10, "v1", "v2", 7)
    assert len(up) == len(down) == 7 and unpaired > 0 and counts[1] > 0  # the data exercise every case
    assert ch.improved["query_id"].tolist() == up and ch.regressed["query_id"].tolist() == down
    assert (ch.n_improved, ch.n_unchanged, ch.n_regressed) == counts and ch.n_unpaired == unpaired
    assert ch.higher_is_better and len(ch.per_query) == sum(counts)
    np.testing.assert_allclose(ch.per_query.set_index("query_id")["difference"].loc[list(gains)],
                               [gains[q] for q in gains])
    assert (ch.improved["b"] - ch.improved["a"] == ch.improved["difference"]).all()
    assert set(ch.per_query["change"]) <= {"improved", "unchanged", "regressed"}
    # swapping A and B swaps the lists and the counts
    back = version_changes(table, metric="ndcg", k=10, run_a="v2", run_b="v1", top=7)
    assert back.improved["query_id"].tolist() == down and back.regressed["query_id"].tolist() == up
    assert (back.n_improved, back.n_regressed) == (ch.n_regressed, ch.n_improved)


def test_changes_of_a_lower_is_better_metric_and_a_tolerance():
    t = tie_heavy_table(["v1", "v2"], n_queries=50, seed=2, metrics=(("first_rel_rank", 0),))
    t["value"] = (t["value"] * 8 + 1).round()
    ch = version_changes(t, metric="first_rel_rank", k=0, run_a="v1", run_b="v2", top=5)
    up, down, counts, _, _ = _independent_changes(t, "first_rel_rank", 0, "v1", "v2", 5, higher=False)
    assert up and down
    assert not ch.higher_is_better
    assert ch.improved["query_id"].tolist() == up and ch.regressed["query_id"].tolist() == down
    assert (ch.n_improved, ch.n_unchanged, ch.n_regressed) == counts
    assert (ch.improved["difference"] < 0).all()  # a lower rank is the improvement
    wide = version_changes(t, metric="first_rel_rank", k=0, run_a="v1", run_b="v2", tolerance=2.0)
    assert (wide.per_query.loc[wide.per_query["change"] == "unchanged", "gain"].abs() <= 2.0).all()
    assert wide.n_unchanged >= ch.n_unchanged


@pytest.mark.parametrize("kw, message", [
    ({"run_a": "v1", "run_b": "v1"}, "the same run"),
    ({"run_a": "v1", "run_b": "nope"}, "have no 'ndcg@10' values"),
    ({"top": 0}, "top must be an integer >= 1"),
    ({"tolerance": -1}, "tie_tolerance must be a finite number >= 0"),
])
def test_changes_errors(kw, message):
    args = {"run_a": "v1", "run_b": "v2", **kw}
    with pytest.raises(OptionError, match=message):
        version_changes(tie_heavy_table(["v1", "v2"]), metric="ndcg", k=10, **args)


# ------------------------------------------------------------------------------------------ the demo's series


def test_demo_checkpoints_are_a_series_and_leave_the_demo_alone():
    from evalcore.workspace.demo import DEMO_RUN_NAMES, cached_demo
    from evalcore.workspace.demo_series import (
        CHECKPOINT_EPOCHS,
        SERIES_MODEL,
        demo_series,
        with_demo_checkpoints,
    )

    assert set(cached_demo(0).runs) == set(DEMO_RUN_NAMES)
    ws = with_demo_checkpoints(W.demo_workspace(0))
    assert with_demo_checkpoints(ws) == ws  # twice: nothing more
    assert with_demo_checkpoints(W.Snapshot()) == W.Snapshot()  # not the demo: unchanged
    frame = pd.DataFrame([(r.name, r.model, r.version, r.step) for r in ws.runs],
                         columns=["name", "model", "version", "step"])
    s = version_series(frame)
    assert set(s["model"]) == {SERIES_MODEL}
    assert s["step"].tolist() == [*map(float, CHECKPOINT_EPOCHS), 25.0] and s["run"].iloc[-1] == SERIES_MODEL
    src = next(r for r in ws.runs if r.step == 1.0)
    run = W.build_run(src, qrels=None, settings=W.Settings(), inputs=None, progress=None)
    assert run.name == src.name and run.to_frame()["query_id"].nunique() == 300
    assert W.has_embeddings(src) and W.run_embeddings(src).vectors.shape == (2000, 128)
    again = demo_series.__wrapped__(0)  # built again, not from the cache: the same data
    pd.testing.assert_frame_equal(again.runs[src.name].to_frame(), demo_series(0).runs[src.name].to_frame())


def test_models_come_in_natural_order():
    """student-32d, student-64d, student-128d (the dropdown read 128d, 32d, 64d: plain text order)."""
    info = pd.DataFrame({"name": ["a", "b", "c", "d"], "model": ["student-128d", "student-32d", "Student-64d", None],
                         "version": [None] * 4, "step": [1.0, 1.0, 1.0, None]})
    series = W.version_series(info, min_versions=1)
    assert W.version_models(series) == ["student-32d", "Student-64d", "student-128d"]


def test_labels_with_unicode_digits_that_are_not_numbers_are_ordered():
    """'²' and '①' are digits to str.isdigit but not numbers to int(); Arabic-Indic '١٠' is a decimal 10."""
    frame = pd.DataFrame({"name": ["a", "b", "c", "d", "e"], "model": ["bert", "bert", "bert²", "bert", "bert"],
                          "version": ["v1²", "v1", "①", "v١٠", "v2"], "step": [None] * 5,
                          "created_at": pd.to_datetime(["2024-01-01"] * 5, utc=True)})
    ordered = W.order_versions(frame)
    assert list(ordered[ordered.group == "bert"].version) == ["v1", "v1²", "v2", "v١٠"]
    series = W.version_series(frame, min_versions=1)
    assert set(W.version_models(series)) == {"bert", "bert²"}


def test_a_model_in_two_unicode_forms_is_one_model(tmp_path):
    """'modèle' composed (NFC) and decomposed (NFD, e.g. from a macOS file name): stored as one form,
    and labels stored before in the other form still join the same model."""
    from evalcore import Qrels, Run, Workspace

    nfc, nfd = "mod\u00e8le", "mode\u0300le"
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(Qrels.from_dict({"q1": {"d1": 1}}), name="gt")
    ws.add_run("r1", Run.from_dict({"q1": {"d1": 1.0}}), model=nfc, step=1, version=nfd)
    ws.add_run("r2", Run.from_dict({"q1": {"d2": 1.0}}), model=nfd, step=2)
    assert list(ws.runs().model) == [nfc, nfc] and ws.run_record("r1").version == "mod\u00e8le"
    old = pd.DataFrame({"name": ["a", "b"], "model": [nfc, nfd], "version": [None, None], "step": [1.0, 2.0],
                        "created_at": pd.to_datetime(["2024-01-01"] * 2, utc=True)})
    ordered = W.order_versions(old)
    assert ordered.group.nunique() == 1 and list(ordered.version_index) == [0, 1]
    assert W.version_models(W.version_series(old, min_versions=1)) == [nfc]


def test_a_version_label_may_be_a_numpy_integer_as_a_loop_over_np_arange_gives():
    """``for epoch in np.arange(5): ws.add_run(..., version=epoch)`` was refused: "version must be text, got int64"."""
    from evalcore.workspace.inputs import check_label

    assert check_label(np.int64(3), "version") == "3" == check_label(3, "version")
    assert check_label(np.uint8(12), "version") == "12"
    for bad in (np.float64(3.0), np.bool_(True), True, 2.5):
        with pytest.raises(OptionError, match="version must be text"):
            check_label(bad, "version")


def test_model_labels_differing_only_in_case_are_named_in_a_warning(tmp_path):
    """A training script that logged one epoch as model 'E5' and the others as 'e5': 'E5' alone was silently
    no series (min_versions=2) and its epoch missing from e5's curve; now a warning names both spellings."""
    from evalcore import Qrels, Run, Workspace
    from evalcore.errors import EvalcoreWarning

    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(Qrels.from_dict({"q1": {"d1": 1}}), name="gt")
    for step, model in enumerate(["e5", "e5", "E5", "e5"]):
        ws.add_run(f"ep{step}", Run.from_dict({"q1": {f"d{step}": 1.0}}), model=model, step=step)
    with pytest.warns(EvalcoreWarning, match=r"differ only in case.*'E5' and 'e5'.*set_run_info"):
        series = W.version_series(ws.runs())
    assert list(series.run) == ["ep0", "ep1", "ep3"]  # still separate models (a label is the user's)
    ws.set_run_info("ep2", model="e5")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalcoreWarning)
        assert list(W.version_series(ws.runs()).run) == ["ep0", "ep1", "ep2", "ep3"]

"""The disk cache of derived results (evalcore.workspace.derived) and the dashboard reading it after a restart.

Every test uses a cache folder of its own (the suite turns the cache off elsewhere, conftest.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
import test_app as T
from demo_oracle import oracle_demo
from streamlit.testing.v1 import AppTest

from evalcore import workspace as W
from evalcore.evaluation import Evaluation
from evalcore.intervals import summarize_with_intervals
from evalcore.workspace import derived as D

APP = str(Path(__file__).resolve().parents[1] / "app.py")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    f = tmp_path / "results"
    monkeypatch.setenv(D.ENV_CACHE, str(f))
    return f


def demo_evaluation():
    demo = oracle_demo(0)
    return W.evaluate_workspace({None: demo.qrels}, [(r, None) for r in demo.runs.values()], W.Settings().validated())


def random_table(seed: int) -> pd.DataFrame:
    """A per-query table with domains, an unused category of each kind and look-alike ids."""
    rng = np.random.default_rng(seed)
    n = 500
    runs = ["b", "a", "unused run"]
    qids = [f"q{i}" for i in range(40)] + ["1", "01", " q", "é"]
    return pd.DataFrame({
        "run": pd.Categorical(rng.choice(runs[:2], n), categories=runs),
        "query_id": pd.Categorical(rng.choice(qids, n), categories=qids),
        "domain": pd.Categorical(rng.choice(["x", "y", ""], n), categories=["y", "x", "", "z"]),
        "metric": pd.Categorical(rng.choice(["ndcg", "recall"], n), categories=["recall", "ndcg", "map"]),
        "k": rng.choice([0, 5, 10], n).astype(np.int32),
        "value": np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),
    })


# ------------------------------------------------------------------------------------------ the store


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(D.ENV_CACHE, str(tmp_path / "c"))
    assert D.cache_dir() == tmp_path / "c"
    for off in ("off", "0", "none", "OFF"):
        monkeypatch.setenv(D.ENV_CACHE, off)
        assert D.cache_dir() is None
        assert not D.store_frame("summary", "k", pd.DataFrame({"a": [1]}))
        assert D.load_frame("summary", "k") is None
    monkeypatch.delenv(D.ENV_CACHE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.name == "posix" and not os.uname().sysname == "Darwin":
        assert D.cache_dir() == tmp_path / "xdg" / "evalcore" / "results"


def test_an_evaluation_reads_back_equal(folder):
    ev = demo_evaluation()
    assert D.store_evaluation("key", ev, ("a warning",))
    got, warnings = D.load_evaluation("key")
    pd.testing.assert_frame_equal(got.table, ev.table)
    pd.testing.assert_frame_equal(got.coverage, ev.coverage)
    assert got.settings == ev.settings and warnings == ("a warning",)
    for name in ("run", "query", "domain", "metric", "k", "value"):
        assert getattr(got.columns, name).dtype == getattr(ev.columns, name).dtype
    assert D.load_evaluation("another key") is None


def test_a_kept_evaluation_reads_back_in_place(folder):
    """One run of 5,000 queries x 28 metric@k (140,000 rows, more than one batch of the dataset reader): its columns
    read back equal, as the arrays Arrow decoded (one chunk per column: not concatenated into copies, 0.33 s of a
    cold open of 137 kept runs), read-only, as a stack's are."""
    from evalcore.results import ResultColumns

    rng = np.random.default_rng(0)
    n = 5_000 * 28
    cols = ResultColumns(("run",), np.array([f"q{i}" for i in range(5_000)], dtype=object), ("", "web"),
                         ("ndcg", "map", "recall", "mrr"), np.zeros(n, dtype=np.int16),
                         np.tile(np.arange(5_000, dtype=np.int32), 28), rng.integers(0, 2, n).astype(np.int32),
                         np.repeat(np.arange(4, dtype=np.int16), 7 * 5_000), np.tile(np.repeat(np.arange(1, 8,
                         dtype=np.int32), 5_000), 4), rng.random(n))
    ev = Evaluation(None, None, {"k": list(range(1, 8))}, cols, [{"run": "run", "n_evaluated": 5_000}])
    assert D.store_evaluation("big", ev)
    got, _ = D.load_evaluation("big")
    for name in ("run", "query", "domain", "metric", "k", "value"):
        a, b = getattr(got.columns, name), getattr(cols, name)
        assert a.dtype == b.dtype and np.array_equal(a, b) and not a.flags.writeable, name


def test_runs_of_one_layout_share_its_columns_read_once(folder, monkeypatch):
    """The kept evaluations of runs against one ground truth with the same settings (a training run's checkpoints)
    have the same query, domain, metric and k codes: read for the first, shared by the next while one holds them
    (their values and run codes read from each file); equal to what was kept, array for array."""
    import gc

    from evalcore.evaluate import evaluate
    from evalcore.io import load_qrels, load_run

    qrels = load_qrels(T.trec_qrels(), format="trec")
    evs = [evaluate(qrels, {f"r{i}": load_run(T.trec_run(i), format="trec", name=f"r{i}")}, metrics=["ndcg", "map"],
                    k=[1, 5]) for i in range(3)]
    for i, ev in enumerate(evs):
        assert D.store_evaluation(f"run{i}", ev)
    asked: list = []  # the columns read from each file (None: all)
    real = D._read

    def spy(path, columns=None):
        return real(path) if columns is None else real(path, lambda meta: asked.append(columns(meta)) or asked[-1])

    monkeypatch.setattr(D, "_read", spy)
    first, second = D.load_evaluation("run0")[0], D.load_evaluation("run1")[0]
    assert asked == [None, ["run", "value"]]
    for name in ("query", "domain", "metric", "k"):
        assert getattr(second.columns, name) is getattr(first.columns, name)
    same(first, evs[0])
    same(second, evs[1])
    del first, second
    gc.collect()
    same(D.load_evaluation("run2")[0], evs[2])  # (no evaluation holds the layout any more: read again)
    assert asked[-1] is None


def same(got, want) -> None:
    for name in ("run", "query", "domain", "metric", "k", "value"):
        a, b = getattr(got.columns, name), getattr(want.columns, name)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), name


def test_a_random_evaluation_with_unused_categories_reads_back_equal(folder):
    for seed in range(3):
        table = random_table(seed)
        ev = Evaluation(table, pd.DataFrame({"run": ["a", "b"], "n": [1, 2]}), {"m": [1, 2]})
        assert D.store_evaluation(f"k{seed}", ev)
        got, _ = D.load_evaluation(f"k{seed}")
        pd.testing.assert_frame_equal(got.table, ev.table)  # categories, their order and unused ones; NaN values
        assert list(got.table["domain"].cat.categories) == ["y", "x", "", "z"]


def test_what_cannot_be_kept_exactly_is_not_kept(folder):
    ev = demo_evaluation()
    assert not D.store_evaluation("tuple", ev.with_settings({"k": (1, 2)}))  # would read back as a list
    assert D.load_evaluation("tuple") is None
    for frame in (pd.DataFrame({"a": ["x", np.nan]}),  # text with a missing number (None is kept: below)
                  pd.DataFrame({"a": [1, 2]}, index=[3, 4]),  # an index of its own
                  pd.DataFrame({"a": pd.to_datetime(["2026-01-01"])})):  # a type not handled
        assert not D.store_frame("f", "k", frame)
        assert D.load_frame("f", "k") is None


def test_texts_with_none_read_back_as_they_were(folder):
    """A version label left empty is None among texts (the Versions page's curve): kept, read back None, not "None"
    or NaN; a column of texts only still reads back as texts."""
    frame = pd.DataFrame({"version": ["step 1", None, "ünï ✓", None], "run": ["a", "b", "c", "d"],
                          "step": [1.0, np.nan, 3.0, 4.0]})
    assert D.store_frame("f", "none", frame)
    got = D.load_frame("f", "none")
    pd.testing.assert_frame_equal(got, frame)
    assert got["version"].tolist() == ["step 1", None, "ünï ✓", None]
    assert D.store_frame("f", "all none", frame.assign(version=[None] * 4))
    assert D.load_frame("f", "all none")["version"].tolist() == [None] * 4


def test_summaries_read_back_equal(folder):
    table = demo_evaluation().table
    for by, aggregates in ((("run", "metric", "k"), True), (("run", "domain", "metric", "k"), False)):
        s = summarize_with_intervals(table, by=by, method="bootstrap", n_resamples=200, seed=0, aggregates=aggregates)
        assert D.store_frame("summary", str(by), s)
        pd.testing.assert_frame_equal(D.load_frame("summary", str(by)), s)


def test_another_engine_never_reads_a_result(folder, monkeypatch):
    ev = demo_evaluation()
    assert D.store_evaluation("key", ev)
    monkeypatch.setattr(D, "code_fingerprint", lambda: "another engine")
    assert D.load_evaluation("key") is None


def test_the_fingerprint_covers_every_source_file():
    package = Path(D.__file__).resolve().parents[1]
    assert D.code_fingerprint() == D.code_fingerprint()
    assert len(list(package.rglob("*.py"))) > 50  # the whole package is read, not one module


def test_a_damaged_file_is_a_miss_and_is_removed(folder):
    frame = pd.DataFrame({"a": [1.5, 2.5]})
    assert D.store_frame("f", "k", frame)
    (path,) = folder.glob("f-*.parquet")
    path.write_bytes(path.read_bytes()[:50])
    assert D.load_frame("f", "k") is None
    assert not path.exists()


def test_a_failed_write_leaves_no_file(folder, monkeypatch):
    import pyarrow.parquet as pq

    def broken(table, where, **kw):
        Path(where).write_bytes(b"PAR1 half")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    assert not D.store_frame("f", "k", pd.DataFrame({"a": [1.0]}))
    assert list(folder.iterdir()) == []


def test_the_folder_is_kept_under_its_size_least_recently_used_first(folder):
    frame = pd.DataFrame({"a": np.random.default_rng(0).random(20_000)})
    for i in range(3):
        assert D.store_frame("f", f"k{i}", frame)
    paths = {i: D._path(folder, "f", f"k{i}") for i in range(3)}
    for i, p in paths.items():  # k0 oldest, then k2, then k1 (read last: recently used)
        os.utime(p, (1000 + i, 1000 + i))
    os.utime(paths[1], (5000, 5000))
    size = paths[0].stat().st_size
    assert D.store_frame("f", "k3", frame, max_bytes=3 * size + size // 2)
    assert not paths[0].exists() and paths[1].exists() and paths[2].exists()
    assert D.load_frame("f", "k3") is not None


# ------------------------------------------------------------------------------------------ the dashboard


def leaderboard(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame) and "run" in d.value.columns)


def test_a_restarted_dashboard_reads_the_evaluation_instead_of_computing_it(folder, monkeypatch):
    """First server: computes and keeps. A restart (the server's caches cleared): the same pages from the disk,
    with the engine's evaluation, summaries and diversity made to fail if called."""
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    first = leaderboard(at)
    kinds = sorted({p.name.rsplit("-", 1)[0] for p in folder.glob("*.parquet")})
    assert kinds == ["diversity", "diversity_summary", "evaluation", "summary"]

    st.cache_data.clear()
    st.cache_resource.clear()

    def refuse(*a, **kw):
        raise AssertionError("computed again")

    import evalcore.intervals as I

    monkeypatch.setattr(W, "evaluate_workspace", refuse)
    monkeypatch.setattr(W, "run_diversity", refuse)
    monkeypatch.setattr(I, "summarize_with_intervals", refuse)
    again = AppTest.from_file(APP, default_timeout=120)
    again.run()
    assert not again.exception
    pd.testing.assert_frame_equal(leaderboard(again), first)
    st.cache_data.clear()
    st.cache_resource.clear()


def _restart() -> None:
    """What a restarted server starts from: no Streamlit cache, no parsed or verified artifact."""
    from evalcore.workspace import artifacts

    st.cache_data.clear()
    st.cache_resource.clear()
    with artifacts._lock:
        artifacts._parsed.clear()
        artifacts._verified.clear()


def _calls(monkeypatch, module, attr: str, record) -> list:
    """``record(*args, **kw)`` of each call of ``module.<attr>`` from here on (the call itself goes through)."""
    seen: list = []
    real = getattr(module, attr)

    def counted(*args, **kw):
        seen.append(record(*args, **kw))
        return real(*args, **kw)

    monkeypatch.setattr(module, attr, counted)
    return seen


def _names_passed(monkeypatch, attr: str) -> list[str]:
    """Names of the runs passed to ``W.<attr>`` from here on: ``build_run`` (the dashboard reads or builds a
    run; its source is the first argument) or ``evaluate_one`` (it evaluates one run; the second; called by
    ``W.evaluate_several`` from its module)."""
    from evalcore.workspace import incremental

    module = incremental if attr == "evaluate_one" else W
    return _calls(monkeypatch, module, attr, lambda *a, **kw: (a[0] if attr == "build_run" else a[1]).name)


def _summarized(monkeypatch) -> list[list[str]]:
    """The runs of each table summarized from here on (:func:`evalcore.intervals.summarize_with_intervals`)."""
    import evalcore.intervals as I

    return _calls(monkeypatch, I, "summarize_with_intervals", lambda table, **kw: sorted(set(table["run"].astype(str))))


def _names_passed_to_prepare(monkeypatch) -> list[tuple[str, ...]]:
    """The input names of each fusion prepared (:func:`evalcore.workspace.prepare_fusion`) from here on."""
    return _calls(monkeypatch, W, "prepare_fusion",
                  lambda src, inputs, settings=None: tuple(inputs[u].name for u in src.fusion.inputs))


def test_a_restarted_overview_reads_no_run_and_a_page_that_shows_runs_reads_those(folder, ranked_workspace,
                                                                                  monkeypatch):
    """The evaluation on disk holds every number of the Overview: after a restart its runs are not read
    (14 stored runs of 2,000,000 rows took ~3 s of a ~7 s restart); the Queries page reads the runs it lists."""
    _restart()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    first = leaderboard(at)
    assert sorted(set(first["run"])) == ["bm25", "dense", "hybrid"]

    _restart()
    reads = _names_passed(monkeypatch, "build_run")
    again = AppTest.from_file(APP, default_timeout=120)
    again.run()
    assert not again.exception
    pd.testing.assert_frame_equal(leaderboard(again), first)
    assert reads == []
    again.switch_page("pages/queries.py").run()
    assert not again.exception and not again.error
    shown = [again.selectbox(key=k).value for k in ("w_queries_sel_run_a", "w_queries_sel_run_b")]
    assert sorted(reads) == sorted(set(shown)) and len(set(shown)) == 2
    again.switch_page("pages/data.py").run()  # lists every run with its size: reads the last one
    assert not again.exception and sorted(reads) == ["bm25", "dense", "hybrid"]
    _restart()


def test_a_run_that_no_longer_reads_leaves_the_evaluation_and_is_reported(folder, ranked_workspace, monkeypatch):
    """The evaluation on disk names a run whose stored file was damaged since: the first page that reads it
    reruns without it (its message on the Data page and in the sidebar), the other runs evaluated again."""
    _restart()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    src = next(r for r in at.session_state["ws"].runs if r.name == "dense")
    sha = src.store.record.artifact
    damaged = ranked_workspace / "objects" / sha[:2] / f"{sha}.parquet"
    damaged.write_bytes(b"not a parquet file")

    _restart()
    again = AppTest.from_file(APP, default_timeout=120)
    again.run()
    assert not again.exception
    assert sorted(set(leaderboard(again)["run"])) == ["bm25", "dense", "hybrid"]  # from the disk: nothing read yet
    again.session_state["sel_run_a"] = "dense"
    again.switch_page("pages/queries.py").run()  # reads "dense": fails, the page runs again without it
    assert not again.exception
    assert "dense" not in again.selectbox(key="w_queries_sel_run_a").options
    assert again.selectbox(key="w_queries_sel_run_a").value in ("bm25", "hybrid")
    assert again.session_state["_failed_runs"] == {src.uid}
    again.switch_page("pages/overview.py").run()
    assert not again.exception
    assert sorted(set(leaderboard(again)["run"])) == ["bm25", "hybrid"]
    again.switch_page("pages/data.py").run()
    assert not again.exception
    [message] = T.errors(again)
    assert "run 'dense'" in message and "is damaged" in message
    loaded = next(t.value for t in again.sidebar.text if t.value.startswith("ground truth:"))
    assert "run: dense [ranked] (not loaded)" in loaded.splitlines()
    assert "run: bm25 [ranked]" in loaded.splitlines()
    _restart()


def test_a_run_added_later_is_the_only_one_evaluated(folder, ranked_workspace, monkeypatch):
    """Each run's evaluation is kept on its own: a fourth run added by a script is the only one evaluated (and
    read) when the page is refreshed, and the numbers are those of the workspace's evaluation of all four."""
    _restart()
    evaluated = _names_passed(monkeypatch, "evaluate_one")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception and sorted(evaluated) == ["bm25", "dense", "hybrid"]
    assert len(list(folder.glob("evaluation-*.parquet"))) == 3  # each run's; the whole is their stack, not kept
    with W.Workspace.open(ranked_workspace) as ws:
        ws.add_run("late", T.trec_run(9), source_name="late.trec")
    evaluated.clear()
    reads = _names_passed(monkeypatch, "build_run")
    summarized = _summarized(monkeypatch)
    at.button(key="ws_refresh").click().run()
    assert not at.exception
    assert evaluated == ["late"] and reads == ["late"] and summarized == [["late"]]
    assert len(list(folder.glob("evaluation-*.parquet"))) == 4
    with W.Workspace.open(ranked_workspace) as ws:
        want = summarize_with_intervals(ws.evaluate().table)  # the API's defaults, as the pages
    pd.testing.assert_frame_equal(T.numbers_table(at).reset_index(drop=True), want.reset_index(drop=True))
    _restart()


def test_the_fusion_preview_evaluates_the_fused_run_only(folder, ranked_workspace, monkeypatch):
    _restart()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    evaluated = _names_passed(monkeypatch, "evaluate_one")
    summarized = _summarized(monkeypatch)
    at.switch_page("pages/fusion.py").run()
    assert not at.exception and not at.error
    assert evaluated == ["rrf"]  # its inputs' evaluations come from the disk
    assert summarized == [["rrf"]]  # and their summaries
    table = next(d.value for d in at.dataframe if d.key == "fu_table" or "rrf" in getattr(d.value, "index", []))
    assert {"bm25", "dense", "hybrid", "rrf"} <= set(table.index)
    _restart()


def test_moving_rrf_c_or_a_weight_fuses_again_without_preparing_again(folder, ranked_workspace, monkeypatch):
    """The Fusion page keeps its inputs' prepared fusion: c and the weights only change the values (the union of
    the runs' lists, ~2 s of the preview at 3 runs x 20,000 queries, is made once); another method prepares again.
    The fused run's numbers are those of evalcore.fusion.fuse with the page's c and weights."""
    from evalcore.fusion import fuse
    from evalcore.workspace.pipeline import evaluate_runs

    _restart()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    prepared = _names_passed_to_prepare(monkeypatch)
    at.switch_page("pages/fusion.py").run()
    assert not at.exception and not at.error and prepared == [("bm25", "dense", "hybrid")]
    at.number_input(key="fu_c").set_value(5.0).run()
    uids = {r.name: r.uid for r in at.session_state["ws"].runs}
    at.number_input(key=f"fu_w_{uids['dense']}").set_value(2.5).run()
    assert not at.exception and prepared == [("bm25", "dense", "hybrid")]
    with W.Workspace.open(ranked_workspace) as ws:
        runs = [ws.load_run(n) for n in ("bm25", "dense", "hybrid")]
        means = []
        for c, w in ((5.0, [1.0, 2.5, 1.0]), (60.0, [1.0, 1.0, 1.0])):
            fused = fuse(runs, method="rrf", c=c, weights=w, ties="trec", name="rrf")
            table = evaluate_runs(ws.load_qrels(), {"rrf": fused}, W.Settings()).table
            means.append(table[(table["metric"] == "ndcg") & (table["k"] == 10)]["value"].mean())
    shown = next(d.value for d in at.dataframe if "rrf" in getattr(d.value, "index", [])).loc["rrf", "ndcg@10"]
    assert f"{means[0]:.3f}" != f"{means[1]:.3f}" and shown.startswith(f"{means[0]:.3f} [")  # c = 5, not 60
    at.selectbox(key="fu_method").set_value("isr").run()
    assert not at.exception and prepared == [("bm25", "dense", "hybrid")] * 2
    _restart()


def test_naming_the_fused_run_evaluates_nothing_again(folder, ranked_workspace, monkeypatch):
    """A run's evaluation is kept by its content, not its name: typing a name for the fused run shows it under
    that name without fusing, evaluating or summarizing anything again."""
    _restart()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/fusion.py").run()
    assert not at.exception and not at.error
    evaluated = _names_passed(monkeypatch, "evaluate_one")
    prepared = _names_passed_to_prepare(monkeypatch)
    summarized = _summarized(monkeypatch)
    at.text_input(key="fu_name").set_value("my fusion").run()
    assert not at.exception and not at.error
    table = next(d.value for d in at.dataframe if "my fusion" in getattr(d.value, "index", []))
    assert {"bm25", "dense", "hybrid", "my fusion"} == set(table.index)
    assert evaluated == [] and prepared == [] and summarized == [["my fusion"]]
    _restart()


def test_fusions_tried_on_the_fusion_page_are_not_all_kept(folder, ranked_workspace, monkeypatch):
    """Each c or weight tried is a fused run with its rank order and evaluation alignment (~250 MB at 3 runs x
    20,000 queries x 100) and an evaluation: only the latest few stay in memory, the others are freed."""
    import gc
    import weakref

    from dashboard import cache as C
    from dashboard import state as S

    _restart()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    built: list[weakref.ref] = []
    real = W.build_run

    def tracked(src, **kw):
        run = real(src, **kw)
        if src.kind == "fused":
            built.append(weakref.ref(run))
        return run

    monkeypatch.setattr(W, "build_run", tracked)
    at.switch_page("pages/fusion.py").run()
    for c in range(10, 20):
        at.number_input(key="fu_c").set_value(float(c)).run()
        assert not at.exception and not at.error
    gc.collect()
    alive = sum(r() is not None for r in built)
    assert len(built) == 11 and alive <= C.FUSED_RUNS_KEPT <= 3
    assert built[-1]() is not None  # the one shown is kept
    evaluations = [k for k in at.session_state[S.MEMO_KEY] if k.startswith("eval:")]
    assert len(evaluations) == S.EVALUATIONS_KEPT <= 6
    _restart()


@pytest.mark.parametrize("cache", ["on", "off"])
def test_a_run_that_fails_when_first_evaluated_is_left_out(cache, folder, ranked_workspace, monkeypatch):
    """No evaluation kept yet and a stored run damaged: the evaluation, which reads every run, meets the failure
    and is made again without that run (with the disk cache, run by run; without, all at once)."""
    monkeypatch.setenv(D.ENV_CACHE, "off")  # the stored file of "hybrid", found without keeping an evaluation
    probe = AppTest.from_file(APP, default_timeout=120)
    probe.run()
    sha = next(r for r in probe.session_state["ws"].runs if r.name == "hybrid").store.record.artifact
    if cache == "on":
        monkeypatch.setenv(D.ENV_CACHE, str(folder))
    _restart()
    (ranked_workspace / "objects" / sha[:2] / f"{sha}.parquet").write_bytes(b"damaged")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    assert sorted(set(leaderboard(at)["run"])) == ["bm25", "dense"]
    loaded = next(t.value for t in at.sidebar.text if t.value.startswith("ground truth:"))
    assert "run: hybrid [ranked] (not loaded)" in loaded.splitlines()
    _restart()


@pytest.mark.parametrize("entry", ["per_run", "whole"])
def test_two_threads_evaluating_the_same_run_compute_it_once(folder, monkeypatch, entry):
    """Two overlapping reruns (a second widget changed while the first change's rerun still computes) that
    need the same run's evaluation: the second waits for the first and reads what it kept, instead of
    computing it again beside it. Whatever the interleaving, the evaluation is computed once: through the
    runs' evaluations kept one by one (``per_run``, the dashboard's path with the disk cache) and through a
    whole evaluation kept under one key (``whole``: a reference model as ground truth)."""
    import threading
    import time

    from dashboard import cache as C
    from evalcore.workspace import incremental

    demo = oracle_demo(0)
    run = next(iter(demo.runs.values()))
    settings = W.Settings().validated()
    started, release = threading.Event(), threading.Event()
    computed: list[str] = []
    real = incremental.evaluate_one

    def evaluate_one(qrels, r, s):
        me = threading.current_thread().name
        computed.append(me)
        if me == "first":
            started.set()
            release.wait(60)
        return real(qrels, r, s)

    monkeypatch.setattr(incremental, "evaluate_one", evaluate_one)
    if entry == "per_run":
        def call() -> C.Outcome:
            each = [(run.name, None, "eval1:x", lambda: run)]
            return C.Outcome(C._evaluate_each({None: demo.qrels}, each, settings))
    else:
        def call() -> C.Outcome:
            return C._kept_evaluation("eval1:x", lambda: C.Outcome(incremental.evaluate_one(demo.qrels, run, settings)))

    got = {}
    a = threading.Thread(target=lambda: got.update(a=call()), name="first")
    a.start()
    assert started.wait(60)
    b = threading.Thread(target=lambda: got.update(b=call()), name="second")
    b.start()
    # the second thread is either waiting for the key (counted in its entry) or has computed beside the first
    deadline = time.monotonic() + 60
    while not ("second" in computed or C._FLIGHTS.get("eval1:x", [None, 0])[1] == 2):
        if time.monotonic() > deadline:
            raise AssertionError("the second thread neither waited for the key nor computed")
        time.sleep(0.01)
    release.set()
    a.join(60)
    b.join(60)
    assert computed == ["first"]
    pd.testing.assert_frame_equal(got["b"].value.table, got["a"].value.table)
    assert C._FLIGHTS == {}  # nothing left behind

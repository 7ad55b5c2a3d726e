"""Wrongly typed options of the Workspace API: each a one-line OptionError naming the option, before
anything is written (no TypeError/ValueError/OverflowError traceback, no run stored that can never
be evaluated)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from evalcore import Qrels, Run, Workspace
from evalcore.errors import OptionError
from evalcore.workspace import WorkspaceRoot

QIDS = [f"q{i}" for i in range(8)]


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    rng = np.random.default_rng(0)
    docs = [f"d{j}" for j in range(30)]
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(Qrels.from_dict({q: {d: 1 for d in rng.choice(docs, 3, replace=False)} for q in QIDS}))
    for name in ("bm25", "dense"):
        ws.add_run(name, Run.from_dict({q: {d: float(rng.random()) for d in rng.choice(docs, 10, replace=False)}
                                        for q in QIDS}, name=name))
    ws.evaluate(metrics=["ndcg"], k=[5])
    return ws


def _state(ws: Workspace) -> tuple:
    conn = sqlite3.connect(ws.path / "catalogue.sqlite")
    try:
        return tuple(conn.execute(sql).fetchall() for sql in (
            "SELECT * FROM runs ORDER BY id", "SELECT id, active FROM ground_truths", "SELECT id FROM evaluations",
            "SELECT * FROM settings", "SELECT key FROM derived", "SELECT value FROM meta WHERE key = 'generation'"))
    finally:
        conn.close()


def _run(name: str) -> Run:
    return Run.from_dict({"q0": {"d1": 1.0}}, name=name)


BAD = {
    "step beyond any float": lambda ws: ws.add_run("x", _run("x"), step=10**400),
    "tags a number": lambda ws: ws.add_run("x", _run("x"), tags=5),
    "fusion weight NaN": lambda ws: ws.add_fused_run("f", {"bm25": float("nan"), "dense": 1.0}),
    "fusion weight text": lambda ws: ws.add_fused_run("f", ["bm25", "dense"], weights=["a", 1]),
    "fusion weights all 0": lambda ws: ws.add_fused_run("f", ["bm25", "dense"], weights=[0, 0]),
    "fusion c <= -1": lambda ws: ws.add_fused_run("f", ["bm25", "dense"], c=-60),
    "fusion c infinite": lambda ws: ws.add_fused_run("f", ["bm25", "dense"], c=float("inf")),
    "fusion top_n text": lambda ws: ws.add_fused_run("f", ["bm25", "dense"], top_n="x"),
    "fusion inputs one string": lambda ws: ws.add_fused_run("f", "bm25"),
    "evaluate k text": lambda ws: ws.evaluate(k="ten"),
    "evaluate rel_threshold text": lambda ws: ws.evaluate(rel_threshold="a"),
    "evaluate depth text": lambda ws: ws.evaluate(depth="deep"),
    "evaluate runs a number": lambda ws: ws.evaluate(runs=5),
    "set_settings k text": lambda ws: ws.set_settings(k=["ten"]),
    "load_evaluation text id": lambda ws: ws.load_evaluation("abc"),
    "use_ground_truth text id": lambda ws: ws.use_ground_truth("zz"),
    "use_ground_truth float id": lambda ws: ws.use_ground_truth(1.5),
    "gc age text": lambda ws: ws.gc(age="x"),
    "gc age negative": lambda ws: ws.gc(age=-5),
    "gc age NaN": lambda ws: ws.gc(age=float("nan")),
    # a yes/no option is True or False: bool("false") is true, so "false" replaced, 0 kept nothing out...
    "add_run replace 'yes'": lambda ws: ws.add_run("bm25", _run("bm25"), replace="yes"),
    "add_run replace 1": lambda ws: ws.add_run("bm25", _run("bm25"), replace=1),
    "add_run replace 'false'": lambda ws: ws.add_run("new", _run("new"), replace="false"),
    "add_run replace None": lambda ws: ws.add_run("new", _run("new"), replace=None),
    "add_embedding_run replace 'no'": lambda ws: ws.add_embedding_run(
        "emb", np.eye(3, dtype=np.float32), ["d0", "d1", "d2"], replace="no"),
    "add_fused_run replace 0": lambda ws: ws.add_fused_run("f", ["bm25", "dense"], replace=0),
    "evaluate record 'no'": lambda ws: ws.evaluate(metrics=["recall"], k=[3], record="no"),
    "evaluate judged_only 'yes'": lambda ws: ws.evaluate(metrics=["ndcg"], k=[5], judged_only="yes"),
    "resolve judged_only 1": lambda ws: ws.resolve(judged_only=1),
    "set_settings judged_only 'false'": lambda ws: ws.set_settings(judged_only="false"),
    "open read_only 'no'": lambda ws: Workspace.open(ws.path, read_only="no"),
    "open create 'false'": lambda ws: Workspace.open(ws.path.parent / "absent", create="false"),
    "WorkspaceRoot.open create 'yes'": lambda ws: WorkspaceRoot(ws.path.parent).open("other", create="yes"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_wrongly_typed_option_is_one_line_and_changes_nothing(ws: Workspace, case: str) -> None:
    before = _state(ws)
    folders = sorted(p.name for p in ws.path.parent.iterdir())
    with pytest.raises(OptionError) as info:
        BAD[case](ws)
    assert "\n" not in str(info.value) and len(str(info.value)) < 300
    assert _state(ws) == before
    assert sorted(p.name for p in ws.path.parent.iterdir()) == folders  # no workspace created either


@pytest.mark.parametrize("case", [c for c in BAD if "replace" in c or "record" in c or "judged_only" in c
                                  or "read_only" in c or "create" in c])
def test_a_yes_no_option_names_itself_and_the_value(ws: Workspace, case: str) -> None:
    with pytest.raises(OptionError, match=r"^(replace|record|judged_only|read_only|create) must be True or False, "
                                          r"got (str|int|NoneType) "):
        BAD[case](ws)


def test_numpy_booleans_are_yes_no_values(ws: Workspace) -> None:
    ws.add_run("bm25", _run("bm25"), replace=np.bool_(True))
    assert ws.run_record("bm25").n_rows == 1
    n_evaluations = len(ws.evaluations())
    ev = ws.evaluate(metrics=["ndcg"], k=[5], judged_only=np.bool_(True), record=np.bool_(False))
    assert ev.settings["judged_only"] is True and len(ws.evaluations()) == n_evaluations
    assert Workspace.open(ws.path, read_only=np.bool_(True)).read_only


def test_one_run_name_as_a_string_is_that_run(ws: Workspace) -> None:
    ev = ws.evaluate(runs="bm25", metrics=["ndcg"], k=[5], record=False)
    assert list(ev.runs) == ["bm25"]
    assert list(ws.resolve(runs="dense").runs) == ["dense"]


def test_ids_as_text_of_an_integer_still_work(ws: Workspace) -> None:
    eid = int(ws.evaluations()["id"].iloc[-1])
    assert ws.load_evaluation(str(eid)).runs == ws.load_evaluation(eid).runs
    ws.use_ground_truth(str(ws.ground_truth()["id"]))  # the active one: nothing changes

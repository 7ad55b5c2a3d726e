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
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_wrongly_typed_option_is_one_line_and_changes_nothing(ws: Workspace, case: str) -> None:
    before = _state(ws)
    with pytest.raises(OptionError) as info:
        BAD[case](ws)
    assert "\n" not in str(info.value) and len(str(info.value)) < 300
    assert _state(ws) == before


def test_one_run_name_as_a_string_is_that_run(ws: Workspace) -> None:
    ev = ws.evaluate(runs="bm25", metrics=["ndcg"], k=[5], record=False)
    assert list(ev.runs) == ["bm25"]
    assert list(ws.resolve(runs="dense").runs) == ["dense"]


def test_ids_as_text_of_an_integer_still_work(ws: Workspace) -> None:
    eid = int(ws.evaluations()["id"].iloc[-1])
    assert ws.load_evaluation(str(eid)).runs == ws.load_evaluation(eid).runs
    ws.use_ground_truth(str(ws.ground_truth()["id"]))  # the active one: nothing changes

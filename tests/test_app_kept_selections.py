"""The kept selections are trimmed: entries naming runs, models, aspects or queries gone, keys of older dashboards
and the selections of deleted workspaces no longer stay for ever, and the user's file of selections (read-only
workspaces, the demo) is kept under a size, the least recently written workspaces forgotten first. Before, every
entry accumulated (dashboard.persist wrote, nothing removed)."""

from __future__ import annotations

import json
import shutil
import sqlite3

import test_app as T
from test_app_store import python_workspace

from dashboard import legacy, selections
from dashboard import persist as P
from dashboard import state as S
from evalcore import workspace as W
from evalcore.workspace import localstate
from evalcore.workspace.store import dumps

STALE = {
    S.SEL_RUN_A: "gone", S.SEL_RUN_B: "dense", S.SEL_BASELINE: "gone-too", S.SEL_INCLUDE_LOW: ["gone"],
    S.SEL_CMP_RUNS: ["bm25", "gone", "e5-ep5"], S.SEL_VERSION_MODEL: "retired", S.SEL_QUERY: "no-such-query",
    S.SEL_ASPECT: "overall", S.SEL_TEST: "wilcoxon", "sel_from_an_older_dashboard": [1, 2],
    P.SEL_FUSION: {"runs": ["bm25", "gone"], "weights": {"gone": 0.5, "bm25": 1.0}, "method": "rrf"},
    P.SEL_FUSION_SEARCH: {"key": "k", "runs": ["gone", "bm25"], "values": [0.1]},
}
TRIMMED = {
    S.SEL_RUN_B: "dense", S.SEL_CMP_RUNS: ["bm25", "e5-ep5"], S.SEL_TEST: "wilcoxon",
    P.SEL_FUSION: {"runs": ["bm25"], "weights": {"bm25": 1.0}, "method": "rrf"},
}


def test_a_workspace_s_kept_selections_lose_what_is_gone_when_it_is_opened():
    name, ws = python_workspace()  # runs bm25, dense, e5-ep5, e5-ep25 (model e5), queries q0..q14, no aspects
    # (a key of the user's own: left alone; the marker: kept by this dashboard, not one before it, test_app_legacy_state)
    ws.set_ui_state(**STALE, mine="set from Python", **{legacy.FORMAT_KEY: legacy.FORMAT})
    at = T.goto(T.open_app(name), "overview")
    assert not at.exception and not T.errors(at)
    kept = ws.ui_state()  # written back: the catalogue holds none of what is gone (the page added its own choices)
    for gone in ("gone", "retired", "no-such-query", "overall", "older_dashboard", P.SEL_FUSION_SEARCH):
        assert gone not in json.dumps(kept), (gone, kept)
    assert {k: kept[k] for k in TRIMMED} == TRIMMED and kept["mine"] == "set from Python"
    assert at.session_state[S.SEL_CMP_RUNS] == ["bm25", "e5-ep5"] and S.SEL_RUN_A not in at.session_state
    # what still exists stays
    ws.set_ui_state(**{S.SEL_QUERY: "q3", S.SEL_VERSION_MODEL: "e5", S.SEL_RUN_A: "bm25"})
    T.open_app(name)
    kept = ws.ui_state()
    assert (kept[S.SEL_QUERY], kept[S.SEL_VERSION_MODEL], kept[S.SEL_RUN_A]) == ("q3", "e5", "bm25")


def test_the_demo_s_kept_selections_are_trimmed_and_deleted_workspaces_forgotten(tmp_path):
    """A read-only workspace keeps its selections in the user's file: there, the demo's are trimmed as a
    workspace's are, and the selections of a read-only workspace whose folder was deleted are forgotten."""
    demo_key = localstate.identity("", demo_seed=S.DEMO_SEED)
    W.Workspace.open(tmp_path / "mounted").close()
    here, gone = localstate.identity(tmp_path / "mounted"), localstate.identity(tmp_path / "deleted")
    W.Workspace.open(tmp_path / "deleted").close()
    assert localstate.write(demo_key, {S.SEL_RUN_A: "not-a-demo-run", S.SEL_TEST: "wilcoxon", "sel_retired": 1})
    assert localstate.write(here, {S.SEL_TEST: "t"}) and localstate.write(gone, {S.SEL_TEST: "t"})
    shutil.rmtree(tmp_path / "deleted")
    at = T.open_app(P.DEMO)
    assert not at.exception
    kept = localstate.read(demo_key)
    assert kept[S.SEL_TEST] == "wilcoxon" and S.SEL_RUN_A not in kept and "sel_retired" not in kept
    assert localstate.read(gone) == {} and localstate.read(here) == {S.SEL_TEST: "t"}
    assert set(localstate.workspaces()) == {demo_key, here}


def test_the_file_of_selections_forgets_the_least_recently_written_workspaces_beyond_its_bounds(tmp_path):
    store = tmp_path / "ui_state.sqlite"

    def write(ws: str, values: dict, **bounds) -> bool:
        return localstate.write(ws, values, path=store, **bounds)

    for ws in ("a", "b", "c"):
        assert write(ws, {"sel_k": 1}, max_workspaces=3)
    assert write("b", {"sel_k": 2}, max_workspaces=3)  # b written again: a, then c are the oldest
    assert write("d", {"sel_k": 1}, max_workspaces=3)
    assert localstate.workspaces(path=store) == ["c", "b", "d"]  # a forgotten
    assert write("e", {"sel_k": 1}, max_workspaces=3)
    assert localstate.workspaces(path=store) == ["b", "d", "e"]
    # bytes: the values' JSON text in all
    big = "x" * 400
    assert write("f", {"sel_q": big}, max_workspaces=10, max_bytes=1000)  # ~1,000 bytes: b, d (the oldest) go
    assert localstate.workspaces(path=store)[-1] == "f"
    assert sum(len(dumps(v)) for w in localstate.workspaces(path=store)
               for v in localstate.read(w, path=store).values()) <= 1000
    assert write("g", {"sel_q": big}, max_workspaces=10, max_bytes=1000)
    assert "f" in localstate.workspaces(path=store) and localstate.read("g", path=store) == {"sel_q": big}
    # one workspace's own selections beyond the bound: not kept, what it had stays
    assert not write("g", {"sel_q": "y" * 2000}, max_workspaces=10, max_bytes=1000)
    assert localstate.read("g", path=store) == {"sel_q": big}
    with sqlite3.connect(store) as conn:  # a real SQLite file, nothing more in it than what is read
        assert conn.execute("SELECT COUNT(DISTINCT workspace) FROM ui_state").fetchone()[0] == len(
            localstate.workspaces(path=store))


def test_trimming_is_a_pure_function_of_what_exists():
    before = {**STALE}
    out = selections.trimmed(STALE, known=P.SELECTIONS, runs=["bm25", "dense", "e5-ep5"], models=["e5"], aspects=(),
                             queries={"q1"}, fusion=P.SEL_FUSION, fusion_search=P.SEL_FUSION_SEARCH)
    assert out == TRIMMED and STALE == before  # (never mutated)
    assert selections.trimmed({S.SEL_CMP_RUNS: [], S.SEL_QUERY: "q9"}, known=P.SELECTIONS, runs=[], models=[],
                              aspects=(), queries=None, fusion=P.SEL_FUSION, fusion_search=P.SEL_FUSION_SEARCH) == {
        S.SEL_CMP_RUNS: [], S.SEL_QUERY: "q9"}  # an empty choice stays one; queries unknown: not checked
    assert selections.changes(STALE, out)[S.SEL_RUN_A] is None

"""Issue 9 under ``AppTest``: the dashboard lives on the persistent store.

Python API -> store -> dashboard (runs added with ``Workspace.add_run`` / ``add_embedding_run`` appear on
the Overview with the numbers of ``Workspace.evaluate``); a bad upload changes nothing stored; the
workspace picker (create, switch, rename, delete with confirmation); the read-only demo and its copy;
"Add from a local path" memory-maps a ``.npy``; the change counter the Data page polls sees a run added
by another process; selections come back from the URL and from the workspace.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import test_app as T
from streamlit.testing.v1 import AppTest

from dashboard import persist as P
from evalcore import workspace as W
from evalcore.intervals import summarize_with_intervals

ROOT = Path(__file__).resolve().parents[1]
unescape, goto = T.unescape, T.goto


def new_workspace() -> tuple[str, W.Workspace]:
    name = f"store-{uuid.uuid4().hex[:10]}"
    return name, W.WorkspaceRoot().create(name)


def python_workspace() -> tuple[str, W.Workspace]:
    """A workspace filled from Python as a training script would: a ground truth, two ranked runs and
    two embedding runs (versions of one model)."""
    name, ws = new_workspace()
    ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
    ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec", tags=("baseline",))
    ws.add_run("dense", T.csv_run(2), source_name="dense.csv", model="dense", version="v1")
    items = T.QUERIES + T.DOCS
    rng = np.random.default_rng(7)
    for step in (5, 25):
        ws.add_embedding_run(f"e5-ep{step}", rng.normal(size=(len(items), 8)).astype(np.float32), items,
                             model="e5", version=f"epoch {step}", step=step)
    return name, ws


def url(at: AppTest, key: str) -> list[str]:
    """The values of a query parameter of the session's URL."""
    value = at.query_params.get(key)
    return [] if value is None else [value] if isinstance(value, str) else list(value)


# ------------------------------------------------------------------------------------------ Python API -> dashboard


def test_runs_added_from_python_appear_with_the_numbers_of_evaluate():
    name, ws = python_workspace()
    ev = ws.evaluate()
    at = goto(T.open_app(name), "overview")
    assert not T.errors(at)
    assert list(T.overview_text(at).index) == ["bm25", "dense", "e5-ep5", "e5-ep25"]
    expected = summarize_with_intervals(ev.table)  # the API's defaults: the pages' numbers
    pd.testing.assert_frame_equal(T.numbers_table(at).reset_index(drop=True), expected.reset_index(drop=True))
    # the snapshot carries each run's model, version label and step, as Workspace.runs() has them
    snap = at.session_state["ws"]
    got = pd.DataFrame([(r.name, r.kind, r.model, r.version, r.step) for r in snap.runs],
                       columns=["name", "kind", "model", "version", "step"])
    want = ws.runs()[["name", "kind", "model", "version", "step"]].astype(object)
    pd.testing.assert_frame_equal(got.astype(object).where(got.notna(), None), want.where(want.notna(), None))


def test_the_overview_records_its_evaluation_in_the_workspace():
    """"Record this evaluation": the per-query table the dashboard shows, stored once in the catalogue,
    read back by the Python API with the same numbers; on the read-only demo it goes to a copy."""
    name, ws = python_workspace()
    at = goto(T.open_app(name), "overview")
    shown = at.session_state["ws"]  # the snapshot the page evaluated
    assert not T.errors(at) and ws.evaluations().empty and shown is not None
    at.button(key="ov_record").click().run()
    assert not at.exception and not T.errors(at)
    assert any("Recorded as evaluation 1" in s.value for s in at.success)
    stored = W.Workspace.open(P.path_of(name)).load_evaluation()
    expected = ws.evaluate(record=False)
    pd.testing.assert_frame_equal(stored.table, expected.table)
    at.button(key="ov_record").click().run()  # the same input again: the same record
    assert any("Recorded as evaluation 1" in s.value for s in at.success)
    assert len(W.Workspace.open(P.path_of(name)).evaluations()) == 1
    demo = goto(T.open_app(), "overview")
    demo.button(key="ov_record").click().run()
    assert not demo.exception and any("copy" in s.value for s in demo.success)


def test_run_info_edited_on_the_data_page_is_saved():
    name, ws = python_workspace()
    at = goto(T.open_app(name), "data")
    uid = next(r.uid for r in at.session_state["ws"].runs if r.name == "bm25")
    at.text_input(key=f"model_{uid}").input("bm25-family").run()
    at.text_input(key=f"version_{uid}").input("k1=0.9").run()
    at.number_input(key=f"step_{uid}").set_value(3.0).run()
    assert not at.exception and not T.errors(at)
    row = ws.runs().set_index("name").loc["bm25"]
    assert (row["model"], row["version"], row["step"]) == ("bm25-family", "k1=0.9", 3.0)
    src = at.session_state["ws"].run_by_uid(uid)
    assert (src.model, src.version, src.step) == ("bm25-family", "k1=0.9", 3.0)
    at.text_input(key=f"version_{uid}").input("").run()  # cleared: no version label
    assert ws.runs().set_index("name").loc["bm25", "version"] is None


# ------------------------------------------------------------------------------------------ bad uploads


def test_a_bad_upload_changes_nothing_stored():
    name, ws = python_workspace()
    at = goto(T.open_app(name), "data")
    before = (ws.generation, ws.runs().drop(columns=["created_at"]), sorted(ws.objects.files()))
    at.file_uploader(key="up_gt").set_value(("qrels.txt", b"q1 0 d1 high\n", "text/plain")).run()
    at.file_uploader(key="up_runs").set_value([("bad.trec", b"q1 Q0 d1 1 oops x\n", "text/plain")]).run()
    at.file_uploader(key="up_domains").set_value(("domains.csv", b"\x00\x01binary", "text/csv")).run()
    assert not at.exception
    assert any("domains.csv" in e for e in T.errors(at)), T.errors(at)  # the last one's message, next to it
    after = (ws.generation, ws.runs().drop(columns=["created_at"]), sorted(ws.objects.files()))
    assert after[0] == before[0] and after[2] == before[2]
    pd.testing.assert_frame_equal(after[1], before[1])
    assert ws.ground_truth()["source_name"] == "qrels.txt" and ws.side_files() == {}


def test_each_refused_file_is_reported_next_to_its_uploader():
    name, _ = python_workspace()
    at = goto(T.open_app(name), "data")
    at.file_uploader(key="up_runs").set_value([("bad.trec", b"q1 Q0 d1 1 oops x\n", "text/plain")]).run()
    assert any("bad.trec" in e and "oops" in e and "nothing was changed" in e for e in T.errors(at)), T.errors(at)
    at.file_uploader(key="up_gt").set_value(("qrels.txt", b"q1 0 d1 high\n", "text/plain")).run()
    assert any("qrels.txt" in e and "high" in e for e in T.errors(at)), T.errors(at)


# ------------------------------------------------------------------------------------------ picker


def test_picker_creates_switches_renames_and_deletes_with_confirmation():
    at = T.open_app()
    new = f"alpha-{uuid.uuid4().hex[:6]}"
    at.text_input(key="ws_new_name").input(new)
    at.button(key="ws_create").click().run()
    assert not at.exception
    assert at.session_state[P.ACTIVE] == new and W.WorkspaceRoot().exists(new)
    assert not at.session_state["ws"].runs and not at.session_state["ws"].is_demo
    assert url(at, "ws") == [new]
    at.selectbox(key="ws_pick").select(P.DEMO).run()
    assert at.session_state["ws"].is_demo and url(at, "ws") == [P.DEMO]
    at.selectbox(key="ws_pick").select(new).run()
    assert at.session_state[P.ACTIVE] == new
    renamed = new + "-renamed"
    at.text_input(key="ws_rename_to").input(renamed)
    at.button(key="ws_rename").click().run()
    assert at.session_state[P.ACTIVE] == renamed and url(at, "ws") == [renamed]
    assert W.WorkspaceRoot().exists(renamed) and not W.WorkspaceRoot().exists(new)
    at.button(key="ws_delete").click().run()  # asks first
    assert at.button(key="ws_delete_yes") and W.WorkspaceRoot().exists(renamed)
    at.button(key="ws_delete_no").click().run()
    assert W.WorkspaceRoot().exists(renamed) and not any(b.key == "ws_delete_yes" for b in at.button)
    at.button(key="ws_delete").click().run()
    at.button(key="ws_delete_yes").click().run()
    assert not at.exception
    assert not W.WorkspaceRoot().exists(renamed)
    assert at.session_state[P.ACTIVE] == P.default_name() and renamed not in at.selectbox(key="ws_pick").options
    bad = T.open_app()
    bad.text_input(key="ws_new_name").input("no/slash")
    bad.button(key="ws_create").click().run()
    assert any("no '/'" in unescape(e.value) for e in bad.sidebar.error)


def test_renaming_a_workspace_to_its_name_or_creating_one_that_exists_reads_plainly():
    """Renaming to its own name said 'a workspace or folder named X already exists', and the sidebar's
    workspace errors began with the server's folder path."""
    name, _ = python_workspace()
    at = T.open_app(name)
    at.text_input(key="ws_rename_to").input(name)
    at.button(key="ws_rename").click().run()
    assert not at.exception and not at.sidebar.error
    assert f"The workspace is already named {name!r}." in [unescape(s.value) for s in at.sidebar.success]
    assert at.session_state[P.ACTIVE] == name
    at.text_input(key="ws_new_name").input(name)
    at.button(key="ws_create").click().run()
    said = [unescape(e.value) for e in at.sidebar.error]
    assert said == [f"a workspace or folder named {name!r} already exists"], said  # no folder path in front


def test_a_workspace_deleted_elsewhere_is_reported_and_the_session_moves_on():
    name, _ = python_workspace()
    at = T.open_app(name)
    W.WorkspaceRoot().delete(name)
    at.run()
    assert not at.exception
    assert at.session_state[P.ACTIVE] != name
    assert any("cannot be opened" in unescape(e.value) for e in at.sidebar.error)


def test_a_url_naming_no_workspace_opens_the_default_with_a_message():
    at = T.open_app("does-not-exist")
    assert at.session_state[P.ACTIVE] == P.default_name()
    assert any("There is no workspace named" in unescape(w.value) for w in at.sidebar.warning)


# ------------------------------------------------------------------------------------------ the demo


def test_the_demo_is_read_only_and_copies_to_a_new_workspace():
    at = goto(T.open_app(), "data")
    demo = W.Workspace.demo()
    before = (demo.generation, demo.settings())
    at.button(key="copy_demo").click().run()
    copy = at.session_state[P.ACTIVE]
    assert copy.startswith("demo-copy") and not at.session_state["ws"].is_demo
    stored = T.stored(at)
    assert not stored.read_only and stored.run_names() == list(T.DEMO_RUN_NAMES)
    # a change made on the demo goes into a copy; the demo stays as it was
    at = goto(T.open_app(), "data")
    at.number_input(key="set_sample").set_value(50)
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert not at.exception and not T.errors(at)
    assert at.session_state[P.ACTIVE] not in (P.DEMO, copy) and at.session_state["ws"].settings.sample_size == 50
    assert T.stored(at).settings().sample_size == 50
    assert (demo.generation, demo.settings()) == before
    # an upload on the demo starts a new, empty workspace for the user's files
    at = goto(T.open_app(), "data")
    at.file_uploader(key="up_gt").set_value(("qrels.txt", T.trec_qrels(), "text/plain")).run()
    assert at.session_state[P.ACTIVE].startswith("my-workspace") and not at.session_state["ws"].runs
    assert T.stored(at).ground_truth()["source_name"] == "qrels.txt"
    assert (demo.generation, demo.settings()) == before


def test_a_fresh_machine_opens_the_demo_and_an_empty_default_does_too(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACES", str(tmp_path / "fresh"))
    at = AppTest.from_file(T.APP, default_timeout=T.TIMEOUT)
    at.run()  # no ?ws=
    assert not at.exception and at.session_state["ws"].is_demo
    assert url(at, "ws") == [P.DEMO]
    W.WorkspaceRoot().create("default").close()
    at = AppTest.from_file(T.APP, default_timeout=T.TIMEOUT)
    at.run()
    assert at.session_state["ws"].is_demo  # empty: still the demo
    with W.WorkspaceRoot().open("default") as ws:
        ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
    at = AppTest.from_file(T.APP, default_timeout=T.TIMEOUT)
    at.run()
    assert at.session_state[P.ACTIVE] == "default" and not at.session_state["ws"].is_demo


def test_a_demo_that_cannot_be_stored_is_shown_from_memory(tmp_path, monkeypatch):
    (tmp_path / "not-a-folder").write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))  # the demo's cache cannot be made
    P._demo.clear()
    try:
        at = T.open_app()
        assert any("could not be stored" in unescape(e.value) for e in at.sidebar.error)
        goto(at, "overview")
        assert not at.exception and at.session_state["ws"].is_demo
        assert list(T.overview_text(at).index) == list(T.DEMO_RUN_NAMES)
    finally:
        P._demo.clear()


def test_evalcore_workspace_opens_that_folder(tmp_path, monkeypatch):
    folder = tmp_path / "my-model"
    with W.Workspace.open(folder) as ws:
        ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
        ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(folder))
    at = AppTest.from_file(T.APP, default_timeout=T.TIMEOUT)
    at.run()
    assert not at.exception
    assert at.session_state[P.ACTIVE] == "my-model" and [r.name for r in at.session_state["ws"].runs] == ["bm25"]
    assert at.selectbox(key="ws_pick").options[1] == "my-model"
    assert not any(b.key == "ws_delete" for b in at.button)  # EVALCORE_WORKSPACE's folder: not deleted here


# ------------------------------------------------------------------------------------------ a local path


def test_add_from_a_local_path_memory_maps_a_npy(tmp_path, monkeypatch):
    import evalcore.io as io

    items = T.QUERIES + T.DOCS
    vectors = np.random.default_rng(3).normal(size=(len(items), 16)).astype(np.float32)
    npy = tmp_path / "big.npy"
    np.save(npy, vectors)
    (tmp_path / "big_ids.txt").write_text("\n".join(items) + "\n")
    seen, read_whole = [], []
    original, read_bytes = io.load_embeddings, Path.read_bytes

    def spy(src, *args, **kwargs):
        out = original(src, *args, **kwargs)
        seen.append((str(src), isinstance(out.vectors, np.memmap)))
        return out

    def spy_read(self):
        read_whole.append(str(self))
        return read_bytes(self)

    monkeypatch.setattr(io, "load_embeddings", spy)
    monkeypatch.setattr(Path, "read_bytes", spy_read)
    name, ws = new_workspace()
    ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
    at = goto(T.open_app(name), "data")
    at.radio(key="path_kind").set_value("embedding")
    at.text_input(key="path_main").input(str(npy))
    at.button[[b.label for b in at.button].index("Add from this path")].click().run()
    assert not at.exception and not T.errors(at)
    assert [r.name for r in at.session_state["ws"].runs] == ["big"]
    assert (str(npy), True) in seen  # memory-mapped, never read into memory whole
    assert str(npy) not in read_whole
    docs, queries = ws.load_embeddings("big")
    assert queries is None and np.array_equal(np.asarray(docs.vectors), vectors) and list(docs.ids) == items
    goto(at, "overview")
    assert "big" in T.overview_text(at).index
    # a path that is not a file: a message, nothing stored
    at = goto(at, "data")
    at.text_input(key="path_main").input(str(tmp_path / "missing.npy"))
    at.button[[b.label for b in at.button].index("Add from this path")].click().run()
    assert any("no file at" in e and "missing.npy" in e for e in T.errors(at)), T.errors(at)
    assert ws.run_names() == ["big"]
    # a folder: said so; the message is below the path form (which the user is looking at), not at the top
    at.text_input(key="path_main").input(str(tmp_path))
    at.button[[b.label for b in at.button].index("Add from this path")].click().run()
    shown = _outline(at.main)
    where = [i for i, (kind, text) in enumerate(shown) if kind == "error" and "is a folder, not a file" in text]
    heads = {text: i for i, (kind, text) in enumerate(shown) if kind in ("header", "subheader")}
    assert len(where) == 1 and heads["Embedding run"] < where[0] < heads["Loaded runs"], shown
    assert "evalcore topk --docs DIR" in shown[where[0]][1]  # shards: where they go instead
    assert ws.run_names() == ["big"]


def _outline(node, out: list | None = None) -> list[tuple[str, str]]:
    """(element type, text) of every element of an AppTest tree, in page order."""
    out = [] if out is None else out
    children = getattr(node, "children", None)
    if children is not None and not hasattr(node, "value"):
        for k in sorted(children):
            _outline(children[k], out)
    else:
        out.append((str(getattr(node, "type", "")), T.unescape(str(getattr(node, "value", "")))))
    return out


# ------------------------------------------------------------------------------------------ changes from elsewhere


def _poll_app() -> None:
    """What the Data page's fragment checks every few seconds, then the start of a run (the app's sync)."""
    import streamlit as st

    from dashboard import persist as P

    st.text(f"changed: {P.changed_on_disk()}")
    snap = P.sync()
    st.text("runs: " + ", ".join(r.name for r in snap.runs))


def test_the_change_counter_sees_a_run_added_by_another_process():
    name, ws = python_workspace()
    at = AppTest.from_function(_poll_app, default_timeout=T.TIMEOUT)
    at.query_params["ws"] = name
    at.run()
    at.run()
    assert [t.value for t in at.text] == ["changed: False", "runs: bm25, dense, e5-ep5, e5-ep25"]
    code = ("import sys; from evalcore import Workspace; ws = Workspace.open(sys.argv[1], create=False); "
            "ws.add_run('late', sys.argv[2].encode())")
    subprocess.run([sys.executable, "-c", code, str(ws.path), T.trec_run(9).decode()], check=True, cwd=ROOT,
                   timeout=120)
    at.run()
    assert [t.value for t in at.text] == ["changed: True", "runs: bm25, dense, e5-ep5, e5-ep25, late"]
    at.run()
    assert at.text[0].value == "changed: False"


def test_the_refresh_button_shows_a_run_added_meanwhile():
    name, ws = python_workspace()
    at = goto(T.open_app(name), "overview")
    ws.add_run("late", T.trec_run(9))
    at.button(key="ws_refresh").click().run()
    assert "late" in T.overview_text(at).index


# ------------------------------------------------------------------------------------------ selections


def test_selections_come_back_from_the_url_and_from_the_workspace():
    name, ws = python_workspace()
    at = goto(T.open_app(name), "queries")
    at.selectbox(key="w_queries_sel_metric").select("recall").run()
    at.selectbox(key="w_queries_sel_k").select(5).run()
    at.selectbox(key="w_queries_sel_run_a").select("dense").run()
    box = at.selectbox(key="w_queries_sel_query")
    box.select(box.options[4]).run()
    target = box.options[4]
    link = {k: url(at, k) for k in at.query_params}
    assert link["metric"] == ["recall@5"] and link["query"] == [target] and link["run"][0] == "dense"
    assert link["ws"] == [name]
    assert ws.ui_state()["sel_query"] == target
    # the same URL in a new tab: the same view
    fresh = AppTest.from_file(T.APP, default_timeout=T.TIMEOUT)
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    goto(fresh, "queries")
    assert fresh.selectbox(key="w_queries_sel_query").value == target
    assert (fresh.selectbox(key="w_queries_sel_metric").value, fresh.selectbox(key="w_queries_sel_k").value) == \
        ("recall", 5)
    assert any(t.value.startswith(f"query: {target}") for t in fresh.text)
    # only the workspace in the URL: where it was left (its ui_state)
    again = goto(T.open_app(name), "queries")
    assert again.selectbox(key="w_queries_sel_query").value == target
    assert again.selectbox(key="w_queries_sel_run_a").value == "dense"


def test_versions_selections_come_back_from_the_url_and_from_the_workspace():
    """The Versions page's model, reference version and versions A/B are in the URL and the ui_state."""
    name, ws = python_workspace()
    items = T.QUERIES + T.DOCS
    ws.add_embedding_run("e5-ep50", np.random.default_rng(8).normal(size=(len(items), 8)).astype(np.float32), items,
                         model="e5", version="epoch 50", step=50)
    at = goto(T.open_app(name), "versions")
    assert not T.errors(at)
    at.selectbox(key="w_versions_sel_version_reference").select("e5-ep25").run()
    # (B first: once A is e5-ep50, B's default is e5-ep5 already, and picking what is shown is no choice)
    at.selectbox(key="w_versions_sel_version_b").select("e5-ep5").run()
    at.selectbox(key="w_versions_sel_version_a").select("e5-ep50").run()
    link = {k: url(at, k) for k in at.query_params}
    assert (link["model"], link["reference"], link["version_a"], link["version_b"]) == \
        (["e5"], ["e5-ep25"], ["e5-ep50"], ["e5-ep5"])
    state = ws.ui_state()
    assert (state["sel_version_reference"], state["sel_version_a"], state["sel_version_b"]) == \
        ("e5-ep25", "e5-ep50", "e5-ep5")
    chosen = {"w_versions_sel_version_model": "e5", "w_versions_sel_version_reference": "e5-ep25",
              "w_versions_sel_version_a": "e5-ep50", "w_versions_sel_version_b": "e5-ep5"}
    # the same URL in a new tab: the same view
    fresh = AppTest.from_file(T.APP, default_timeout=T.TIMEOUT)
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    goto(fresh, "versions")
    assert {key: fresh.selectbox(key=key).value for key in chosen} == chosen
    # only the workspace in the URL: where it was left (its ui_state)
    again = goto(T.open_app(name), "versions")
    assert {key: again.selectbox(key=key).value for key in chosen} == chosen


@pytest.mark.parametrize(("label", "metric", "k"), [("ndcg@10", "ndcg", 10), ("recall@5", "recall", 5),
                                                   ("precision(rel=2)@5", "precision(rel=2)", 5)])
def test_metric_labels_of_the_url_are_read_back(label, metric, k):
    name, ws = python_workspace()
    ws.set_settings(metrics=("ndcg", "recall", "precision(rel=2)"), k=(5, 10))
    at = AppTest.from_file(T.APP, default_timeout=T.TIMEOUT)
    at.query_params["ws"] = name
    at.query_params["metric"] = label
    at.run()
    goto(at, "compare")
    assert (at.selectbox(key="w_compare_sel_metric").value, at.selectbox(key="w_compare_sel_k").value) == \
        (metric, k)

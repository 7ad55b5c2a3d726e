"""The dashboard on a workspace in a folder the user cannot write (a colleague's shared folder, a read-only mount, an
unpacked archive): it says so and why, disables every control that would change it, offers the copy the demo
offers, and everything that only reads works (every page, downloads, the page choices kept in the user's data
folder).

Before, only the built-in demo was read-only to the dashboard: such a workspace showed all its editing controls,
and each change was silently made in a new workspace named "demo-copy" ("saved in the new workspace 'demo-copy';
the demo is unchanged"), an upload in a new, empty one; "Delete this workspace" hid the folder under another name
without removing it.

Mode bits do not bind root: when the suite runs as root, each test runs itself again in a child without root's
permission override (``setpriv``, :func:`readonly_reader.unprivileged`), where the folder made read-only really is
read-only to the dashboard; run as any other user, in this process. Each test checks that it is so before
anything else.

Which controls change the workspace is derived from the pages, not listed: on the Data page (and the sidebar's
workspace controls) every control changes the workspace except the few named in :data:`READING` (a new control
there must be disabled on a read-only workspace, or named there); on the other pages, a button changes the
workspace when clicking it on a writable copy of the same workspace changes that copy's catalogue.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
import test_app as T
from readonly_reader import chmod_tree, dump, unprivileged
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import element_tree as et

from dashboard import persist as P
from dashboard import state as S
from evalcore import workspace as W
from evalcore.workspace import localstate

ROOT = Path(__file__).resolve().parents[1]
#: Set in the child a test runs itself in (as root): the test's body runs there.
CHILD = "EVALCORE_TEST_UNPRIVILEGED_CHILD"
ITEMS = [f"tt{i:02d}" for i in range(12)]
ASPECTS = ("5_most_similar_movies_overall_ordered", "5_most_similar_movies_content_ordered")
PAGES = [p for p in T.PAGES if p != "data"]

#: The controls of the Data page and of the sidebar that change nothing stored; every other one does.
READING = {
    "gt_kind_choice",  # which of the two ground-truth forms is shown
    "gt_aspect",  # the aspect previewed
    "data_find_run", "data_runs_page",  # (beyond 10 runs) which runs are listed
    "load_demo", "retry_cancelled",
    "ws_pick", "ws_refresh", "ws_new_name", "ws_create", "w_sel_image_format",  # another workspace; chart images
}
#: The copy of the session's workspace, offered where it is read-only.
COPY = {"copy_current", "ws_copy_current"}
#: Changes not offered at all on a read-only workspace (rather than shown disabled).
HIDDEN = {"gt_earlier", "gt_use_earlier", "ws_rename_to", "ws_rename", "ws_delete"}
READ_ONLY_LINE = "this workspace is read-only (its folder cannot be written by this user): copy it"


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str] | None:
    """None where this module's tests run in this process: mode bits bind it (not root, or the child). As root,
    the module's tests selected in this session run once, together, in a child without root's permission
    override; then each test's outcome there by its name ("" when it passed, else pytest's report of it)."""
    if os.geteuid() != 0 or os.environ.get(CHILD):
        return None
    ids = [item.nodeid for item in request.session.items if getattr(item, "module", None) is request.module]
    base = tmp_path_factory.mktemp("unprivileged")
    report = base / "report.xml"
    cmd = unprivileged([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={base / 'tmp'}",
                        f"--junitxml={report}", *ids])
    done = subprocess.run(cmd, cwd=ROOT, env={**os.environ, CHILD: "1"}, capture_output=True, text=True, timeout=900)
    assert report.is_file(), done.stdout[-6000:] + done.stderr[-3000:]
    out = {}
    for case in ElementTree.parse(report).iter("testcase"):
        problems = [f"{p.tag}: {p.get('message', '')}\n{p.text or ''}" for p in case
                    if p.tag in ("failure", "error", "skipped")]  # (a skip is no pass)
        out[case.get("name")] = "\n".join(problems)
    return out


def runs_here(request: pytest.FixtureRequest, outcomes: dict[str, str] | None) -> bool:
    """Whether the test's body runs in this process; else (as root) it passed in the child (asserted here)."""
    if outcomes is None:
        return True
    name = request.node.name
    assert name in outcomes, f"{name} did not run in the child: {sorted(outcomes)}"
    assert outcomes[name] == "", outcomes[name][-12000:]
    return False


def build(path: Path) -> None:
    """A workspace with something behind every control of the Data page: a ground truth with two aspects (an
    earlier one kept), an embedding, a ranked and a fused run (models, versions, steps, aspects), the three side
    files."""
    rng = np.random.default_rng(0)
    lists = [{"movie_id": m, **{a: [str(x) for x in rng.choice([x for x in ITEMS if x != m], 5, replace=False)]
                               for a in ASPECTS}} for m in ITEMS]
    qrels = "".join(f"{q} 0 {d} 1\n" for q in ITEMS for d in ITEMS[:3] if d != q)
    trec = "".join(f"{q} Q0 {d} {r + 1} {10 - r} x\n" for q in ITEMS
                   for r, d in enumerate([x for x in ITEMS if x != q][:8]))
    with W.Workspace.open(path) as ws:
        ws.set_ground_truth(qrels.encode(), source_name="first.txt")  # kept as an earlier ground truth
        ws.set_ground_truth(json.dumps(lists).encode(), source_name="movies.json")
        ws.add_embedding_run("emb", rng.normal(size=(12, 6)).astype(np.float32), ITEMS, model="m", version="v1",
                             step=1)
        ws.add_run("ranked", trec.encode(), source_name="ranked.trec", model="m", version="v2", step=2,
                   aspect=ASPECTS[1])
        ws.add_fused_run("fused", ["emb", "ranked"], weights=[0.5, 0.5])
        ws.set_domains({q: "even" if i % 2 == 0 else "odd" for i, q in enumerate(ITEMS)}, name="domains.csv")
        ws.set_metadata(("doc_id,title\n" + "".join(f"{d},Title {d}\n" for d in ITEMS)).encode(), name="meta.csv")
        ws.set_query_texts({q: f"text of {q}" for q in ITEMS}, name="queries.tsv")


class Setup:
    """Workspaces ``shared`` (made read-only) and ``twin`` (a writable copy of it) in a root of their own."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = tmp_path / "workspaces"
        monkeypatch.setenv("EVALCORE_WORKSPACES", str(self.root))
        P.forget_open_workspaces()
        self.shared, self.twin = self.root / "shared", self.root / "twin"
        build(self.shared)
        shutil.copytree(self.shared, self.twin)
        chmod_tree(self.shared, writable=False)
        with pytest.raises(PermissionError):  # the folder really is read-only to this process
            (self.shared / "probe").touch()
        with W.Workspace.open(self.shared) as ws:
            assert ws.read_only and ws.read_only_reason == "its folder cannot be written by this user"
        self.files = self.state()

    def state(self) -> dict[str, tuple[int, int]]:
        """Size and modification time of every file of the read-only folder."""
        return {str(p.relative_to(self.shared)): (p.stat().st_size, p.stat().st_mtime_ns)
                for p in self.shared.rglob("*")}

    def unchanged(self) -> None:
        """Nothing was written into the read-only folder, and no workspace was made in the root."""
        assert self.state() == self.files
        assert W.WorkspaceRoot().names() == ["shared", "twin"]

    def done(self) -> None:
        chmod_tree(self.shared, writable=True)  # (the temporary folder can be removed)


def controls(at: AppTest) -> dict[str, bool]:
    """Every widget the page shows (main area and sidebar) by its key (numbered keys without their number):
    whether it is disabled."""
    out = {}
    for area in (at.main, at.sidebar):
        for node in area:
            if isinstance(node, et.Widget):
                key = node.key or f"{node.type}:{node.id}"
                out[re.sub(r"^(data_runs_page)_\d+$", r"\1", key)] = bool(getattr(node.proto, "disabled", False))
    return out


def data_page_controls(at: AppTest) -> dict[str, bool]:
    """The Data page's controls with either ground-truth form shown."""
    T.goto(at, "data")
    seen = controls(at)
    first, other = at.radio(key="gt_kind_choice").options
    at.radio(key="gt_kind_choice").set_value(other).run()
    seen.update(controls(at))
    at.radio(key="gt_kind_choice").set_value(first).run()
    return seen


def errors(at: AppTest) -> list[str]:
    return [T.unescape(e.value) for e in [*at.error, *at.sidebar.error]]


def open_on(name: str) -> AppTest:
    at = AppTest.from_file(T.APP, default_timeout=T.TIMEOUT)
    at.query_params["ws"] = name
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[P.ACTIVE] == name
    return at


# ------------------------------------------------------------------------------------------ the Data page


def test_the_data_page_says_the_workspace_is_read_only_and_why_and_disables_every_change(request, outcomes, tmp_path,
                                                                                          monkeypatch):
    if not runs_here(request, outcomes):
        return
    s = Setup(tmp_path, monkeypatch)
    try:
        _data_page(s)
    finally:
        s.done()


def _data_page(s: Setup) -> None:
    writable = data_page_controls(open_on("twin"))
    editing = {k for k in writable if k not in READING | COPY}
    assert {"up_gt", "up_gt_ref", "up_runs", "up_emb", "path_main", "name_r1", "rm_r2", "aspect_r3", "step_r1",
            "up_queries", "side_rm_meta", "set_k", "FormSubmitter:settings_form-Apply settings", "gt_use_earlier",
            "ws_delete"} <= editing  # (what the page shows is what is checked: these show it does show them)
    at = open_on("shared")
    shown = data_page_controls(at)
    enabled = {k for k, off in shown.items() if not off}
    assert enabled <= READING | COPY, sorted(enabled - READING - COPY)  # a control that changes it: disabled
    assert COPY <= enabled and set(shown) - set(writable) == COPY
    assert editing - set(shown) <= HIDDEN, sorted(editing - set(shown) - HIDDEN)
    said = [T.unescape(w.value) for w in at.warning]
    assert any(w.startswith("**This workspace is read-only**: its folder cannot be written by this user.")
               for w in said), said
    assert str(s.shared) in [t.value for t in at.text]
    assert any("Read-only: its folder cannot be written by this user" in T.unescape(c.value)
               for c in at.sidebar.caption)
    assert not errors(at)
    assert T.stored(at).read_only  # (the session's workspace)


# ------------------------------------------------------------------------------------------ the other pages


def test_every_page_reads_it_downloads_work_choices_are_kept_and_its_changes_are_disabled(request, outcomes,
                                                                                          tmp_path, monkeypatch):
    if not runs_here(request, outcomes):
        return
    s = Setup(tmp_path, monkeypatch)
    try:
        _other_pages(s)
    finally:
        s.done()


def contents(path: Path) -> list[str]:
    """The catalogue of the workspace in ``path`` as SQL, without the page choices it keeps for the dashboard
    (``ui:`` settings: a read-only workspace's are kept in the user's data folder)."""
    with W.Workspace.open(path) as ws:
        return [line for line in dump(ws).splitlines() if not line.startswith("INSERT INTO \"settings\" VALUES('ui:")]


def _buttons(at: AppTest) -> dict[str, bool]:
    """The main area's buttons by key: whether each is disabled (downloads apart)."""
    return {b.key: bool(b.proto.disabled) for b in at.main.button}


def _other_pages(s: Setup) -> None:
    # the buttons that change a workspace: those whose click changes the writable twin's catalogue
    twin = open_on("twin")
    before = contents(s.twin)
    changes: dict[str, set[str]] = {}
    for page in PAGES:
        for key in _buttons(T.goto(twin, page)):
            T.goto(twin, page).button(key=key).click().run()
            assert not twin.exception, (page, key, [e.value for e in twin.exception])
            after = contents(s.twin)
            if after != before:
                changes.setdefault(page, set()).add(key)
                before = after
    assert {"ov_record", "fu_add"} <= set().union(*changes.values())  # (the derivation finds what is there)
    at = open_on("shared")
    for page in PAGES:
        T.goto(at, page)
        assert not errors(at), (page, errors(at))
        shown = _buttons(at)
        for key in changes.get(page, ()):  # each change: disabled, saying why
            assert shown[key], (page, key)
        for key in [k for k, off in shown.items() if not off]:  # whatever else there is works, and writes nothing
            T.goto(at, page).button(key=key).click().run()
            assert not at.exception and not errors(at), (page, key, errors(at))
            s.unchanged()
    fusion = T.goto(at, "fusion")
    assert any("Not added to every page: this workspace is read-only" in T.unescape(c.value) for c in fusion.caption)
    overview = T.goto(at, "overview")
    assert "this workspace is read-only" in overview.button(key="ov_record").help
    downloads = overview.get("download_button")
    assert len(downloads) >= 4 and not any(d.proto.disabled for d in downloads)  # report, per-query, per run
    # the page choices: kept in the user's data folder, back in a new session
    T.goto(at, "compare").selectbox(key="w_compare_sel_test").set_value("wilcoxon").run()
    assert not errors(at)
    kept = localstate.read(localstate.identity(s.shared))
    assert kept[S.SEL_TEST] == "wilcoxon"
    again = T.goto(open_on("shared"), "compare")
    assert again.selectbox(key="w_compare_sel_test").value == "wilcoxon" and not errors(again)
    s.unchanged()


# ------------------------------------------------------------------------------------------ the way to change it


def _refusals() -> None:
    """Run by AppTest.from_function: what persist does when asked to change a read-only workspace anyway."""
    import streamlit as st

    from dashboard import persist as P

    st.session_state[P.ACTIVE] = "shared"
    done = P.write(lambda ws: ws.set_settings(sample_size=5))
    st.text(f"write: {done.ok} {done.created} {done.error}")
    for name, action in (("rename", lambda: P.rename("elsewhere")), ("delete", lambda: P.delete("shared"))):
        try:
            action()
            st.text(f"{name}: done")
        except Exception as e:  # noqa: BLE001 - the test reads it
            st.text(f"{name}: {type(e).__name__}: {e}")


def test_it_is_copied_to_a_workspace_that_can_be_changed_and_never_changed_itself(request, outcomes, tmp_path,
                                                                                   monkeypatch):
    if not runs_here(request, outcomes):
        return
    s = Setup(tmp_path, monkeypatch)
    try:
        _copies(s)
    finally:
        s.done()


def _copies(s: Setup) -> None:
    refusals = AppTest.from_function(_refusals, default_timeout=T.TIMEOUT)
    refusals.run()
    said = [t.value for t in refusals.text]
    assert said[0].startswith("write: False None " + READ_ONLY_LINE), said  # before: a copy named "demo-copy"
    assert said[1] == "rename: WorkspaceError: this workspace cannot be renamed here (its folder cannot be written " \
                      "by this user): rename its folder outside the dashboard", said
    assert said[2] == "delete: WorkspaceError: this workspace cannot be deleted here (its folder cannot be written " \
                      "by this user): nothing was removed", said  # before: hidden as .deleting-..., not removed
    s.unchanged()
    with W.Workspace.open(s.shared) as ws:
        source = {"runs": [(r.name, r.kind, r.model, r.version, r.step, r.aspect) for r in ws.run_records()],
                  "settings": ws.settings(), "side": ws.side_files(), "gt": ws.ground_truth()["source_name"]}
    at = open_on("shared")
    T.goto(at, "data").button(key="copy_current").click().run()
    assert not at.exception and not errors(at)
    assert at.session_state[P.ACTIVE] == "shared-copy" and not P.locked()
    copy = T.stored(at)
    assert not copy.read_only and copy.path == s.root / "shared-copy"
    assert source == {"runs": [(r.name, r.kind, r.model, r.version, r.step, r.aspect) for r in copy.run_records()],
                      "settings": copy.settings(), "side": copy.side_files(), "gt": copy.ground_truth()["source_name"]}
    # an ordinary workspace now (other warnings, e.g. the shallow fused run of this data, may stand)
    assert not at.file_uploader(key="up_gt").proto.disabled and not [w for w in at.warning if "read-only" in w.value]
    at.number_input(key="set_sample").set_value(5)
    at.button(key="FormSubmitter:settings_form-Apply settings").click().run()
    assert not errors(at) and T.stored(at).settings().sample_size == 5
    # the sidebar offers the same copy
    side = open_on("shared")
    side.sidebar.button(key="ws_copy_current").click().run()
    assert side.session_state[P.ACTIVE] == "shared-copy-2" and not T.stored(side).read_only
    assert s.state() == s.files and W.WorkspaceRoot().names() == ["shared", "shared-copy", "shared-copy-2", "twin"]


# ------------------------------------------------------------------------------------------ its folder's mode changes


def test_a_folder_made_writable_or_read_only_is_noticed_on_the_next_run(request, outcomes, tmp_path, monkeypatch):
    """The owner of a shared folder gives (or takes away) the write permission while the dashboard has it open: the
    next run of the page (the same session, the same server's caches) shows it writable (read-only). Before, the
    workspace object opened once per server kept the read-only state it found first, until the server restarted."""
    if not runs_here(request, outcomes):
        return
    s = Setup(tmp_path, monkeypatch)
    try:
        _mode_changes(s)
    finally:
        s.done()


def _says_read_only(at: AppTest) -> bool:
    return any(T.unescape(w.value).startswith("**This workspace is read-only**") for w in at.warning)


def _mode_changes(s: Setup) -> None:
    at = T.goto(open_on("shared"), "data")
    assert _says_read_only(at) and controls(at)["set_k"]  # (disabled)
    chmod_tree(s.shared, writable=True)
    at.run()
    assert not at.exception and not errors(at), errors(at)
    assert not _says_read_only(at) and not controls(at)["set_k"]
    assert not P.workspace("shared").read_only
    chmod_tree(s.shared, writable=False)
    at.run()
    assert not at.exception and not errors(at), errors(at)
    assert _says_read_only(at) and controls(at)["set_k"]
    assert P.workspace("shared").read_only_reason == "its folder cannot be written by this user"

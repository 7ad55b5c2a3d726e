"""The dashboard while another process writes to its workspace (a training script, ``evalcore evaluate --workspace``
recording a long evaluation holds the writer lock): a kept selection is not lost and does not hold the page up (saved
at a later run once the lock is free); a user's change says that another process is writing, in one line ending in
"try again", and changes nothing; done again once the lock is free, it is done. Before, every one of these waited
120 s for the lock (the page frozen, the AppTest run timed out).

The writer is a real second process holding the lock (``Workspace.exclusive``) until the test closes its stdin.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_app as T
from test_app_store import python_workspace

from dashboard import busy, legacy
from dashboard import state as S
from evalcore import workspace as W

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the writer lock between processes is a flock")

ROOT = Path(__file__).resolve().parents[1]
HOLD = """
import sys
from evalcore import Workspace
ws = Workspace.open(sys.argv[1], create=False)
with ws.exclusive():
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


@contextlib.contextmanager
def another_writer(path: Path) -> Iterator[int]:
    """A second process holding the workspace's writer lock for the block; its pid."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)
    try:
        assert proc.stdout.readline().strip() == "held"
        yield proc.pid
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


def sidebar_captions(at) -> list[str]:
    return [T.unescape(c.value) for c in at.sidebar.caption]


def test_a_kept_selection_is_kept_in_the_session_while_another_process_writes_and_saved_once_it_is_done():
    name, ws = python_workspace()
    at = T.goto(T.open_app(name), "compare")
    assert at.selectbox(key="w_compare_sel_hsd_design").value != "independent"
    with another_writer(ws.path) as pid:
        at.selectbox(key="w_compare_sel_hsd_design").set_value("independent").run()
        assert not at.exception and not T.errors(at)
        assert at.selectbox(key="w_compare_sel_hsd_design").value == "independent"  # the page shows the choice
        note = [c for c in sidebar_captions(at) if "kept in this session" in c]
        assert len(note) == 1 and f"another process (pid {pid}) is writing to this workspace" in note[0], note
        assert W.Workspace.open(ws.path, create=False).ui_state().get(S.SEL_HSD_DESIGN) != "independent"
        T.goto(at, "overview")  # another page meanwhile: still the choice, still not saved
        assert at.session_state[S.SEL_HSD_DESIGN] == "independent"
    at.run()  # a later run, the lock free: saved
    assert W.Workspace.open(ws.path, create=False).ui_state()[S.SEL_HSD_DESIGN] == "independent"
    assert not [c for c in sidebar_captions(at) if "kept in this session" in c]
    again = T.goto(T.open_app(name), "compare")  # a new session reads it back
    assert again.selectbox(key="w_compare_sel_hsd_design").value == "independent"


def test_recording_while_another_process_writes_says_so_in_one_line_and_records_once_it_is_done(monkeypatch):
    name, ws = python_workspace()
    at = T.goto(T.open_app(name), "overview")
    monkeypatch.setattr(busy, "ACTION_WAIT", 0.0)  # (gives up at once: the wait itself has its Cancel button)
    with another_writer(ws.path) as pid:
        at.button(key="ov_record").click().run()
        assert not at.exception
        errs = T.errors(at)
        assert len(errs) == 1 and errs[0].startswith(f"Not recorded: another process (pid {pid}) has been writing "
                                                     "to this workspace"), errs
        assert "try again when it is done" in errs[0] and "\n" not in errs[0] and "Traceback" not in errs[0]
        assert W.Workspace.open(ws.path, create=False).evaluations().empty
    at.button(key="ov_record").click().run()
    assert not at.exception and not T.errors(at)
    assert any("Recorded as evaluation" in s.value for s in at.success)
    assert len(W.Workspace.open(ws.path, create=False).evaluations()) == 1


def test_settings_applied_while_another_process_writes_are_refused_in_one_line_and_applied_after(monkeypatch):
    name, ws = python_workspace()
    at = T.goto(T.open_app(name), "data")
    before = ws.settings()
    monkeypatch.setattr(busy, "ACTION_WAIT", 0.0)
    with another_writer(ws.path) as pid:
        at.number_input(key="set_sample").set_value(7)
        at.button[[b.label for b in at.button].index("Apply settings")].click().run()
        assert not at.exception
        errs = T.errors(at)
        assert len(errs) == 1 and f"another process (pid {pid}) has been writing to this workspace" in errs[0], errs
        assert "try again when it is done" in errs[0]
        assert W.Workspace.open(ws.path, create=False).settings() == before
    at.number_input(key="set_sample").set_value(7)
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert not at.exception and not T.errors(at)
    assert W.Workspace.open(ws.path, create=False).settings().sample_size == 7


def test_the_wait_hook_sees_the_other_process_and_the_change_goes_through_once_it_is_done(tmp_path):
    """The engine's side (:func:`evalcore.workspace.writelock.while_waiting`): a change waiting for the lock calls
    the hook with the holder's pid; here the hook lets the holder go on its first call, and the change is made."""
    from evalcore.workspace.writelock import while_waiting

    ws = W.Workspace.open(tmp_path / "ws")
    seen: list[str] = []
    with contextlib.ExitStack() as stack:
        pid = stack.enter_context(another_writer(ws.path))
        proc_done = stack.pop_all()

        def hook(holder: str, waited: float) -> None:
            if not seen:
                proc_done.close()  # the writer ends: the lock is free
            seen.append(holder)

        with while_waiting(hook):
            ws.set_ui_state(x=1)
    assert seen and seen[0] == f"another process (pid {pid})"
    assert ws.ui_state()["x"] == 1


def test_a_hook_that_raises_stops_the_wait_and_nothing_is_written(tmp_path):
    from evalcore.workspace.writelock import while_waiting

    ws = W.Workspace.open(tmp_path / "ws")

    class Stop(Exception):
        pass

    def hook(holder: str, waited: float) -> None:
        raise Stop(holder)

    with another_writer(ws.path) as pid:
        with while_waiting(hook), pytest.raises(Stop, match=f"pid {pid}"):
            ws.set_ui_state(x=1)
    assert "x" not in ws.ui_state()
    ws.set_ui_state(x=2)  # the workspace takes changes again
    assert ws.ui_state()["x"] == 2



def test_a_workspace_opened_while_another_process_writes_trims_its_kept_selections_once_the_lock_is_free():
    """Opening a workspace trims what it keeps (a run gone) and writes that back: with the lock held by another
    process the page opens all the same, and the trim is written at a later run (before, the session took the trim
    as written, so the catalogue kept the run gone)."""
    name, ws = python_workspace()
    ws.set_ui_state(**{S.SEL_RUN_A: "gone", S.SEL_TEST: "wilcoxon", legacy.FORMAT_KEY: legacy.FORMAT})
    with another_writer(ws.path):
        at = T.goto(T.open_app(name), "overview")
        assert not at.exception and not T.errors(at)
        assert S.SEL_RUN_A not in at.session_state and at.session_state[S.SEL_TEST] == "wilcoxon"
        assert W.Workspace.open(ws.path, create=False).ui_state()[S.SEL_RUN_A] == "gone"  # (not written yet)
    at.run()
    kept = W.Workspace.open(ws.path, create=False).ui_state()
    assert S.SEL_RUN_A not in kept and kept[S.SEL_TEST] == "wilcoxon", kept

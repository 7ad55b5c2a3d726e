"""In a real browser, while another process holds the workspace's writer lock (as a training script or
``evalcore evaluate --workspace`` recording does): "Record this evaluation" says, where it was clicked, that another
process (its pid) is writing, with a Cancel button; Cancel stops it (nothing recorded, said in the sidebar); clicked
again and the other process done, it is recorded. Before, the page froze silently for up to 2 minutes.

AppTest cannot click during a run (the wait): hence the browser. Every wait is on what the page shows, never a sleep.
"""

from __future__ import annotations

import contextlib

import browser_support as B
import pytest
import test_browser as TB
from browser_fixtures import STEP
from test_app_busy_writer import another_writer

from evalcore import workspace as W

pytestmark = pytest.mark.browser

WAITING = "which is writing to this workspace"


def waiting_shown(page, pid: int) -> None:
    """The page, still running (waiting for the lock), shows the waiting line naming the process."""
    page.get_by_text(f"Waiting for another process (pid {pid}), {WAITING}").first.wait_for(timeout=STEP * 1000)


def test_recording_waits_visibly_for_another_process_can_be_cancelled_and_records_once_it_is_done(server, page,
                                                                                                  tmp_path):
    files = TB.write_inputs(tmp_path)
    name = "busy-writer"
    ws = W.WorkspaceRoot().create(name)
    ws.set_ground_truth(files["qrels"])
    for key in ("strong", "weak"):
        ws.add_run(f"run_{key}", files[key])
    page.goto(server.url + f"/?ws={name}", wait_until="commit")
    B.wait_for(page, main=["Metrics vs k", "Record this evaluation"], timeout=STEP)
    record = page.get_by_role("button", name="Record this evaluation in the workspace")

    with another_writer(ws.path) as pid:  # Cancel: nothing recorded, even once the lock is free
        record.click()
        waiting_shown(page, pid)
        page.locator(".st-key-ws_wait_cancel button").first.click()
        B.wait_for(page, sidebar=["Cancelled while waiting for another process"], absent=[WAITING], timeout=STEP)
    assert W.Workspace.open(ws.path, create=False).evaluations().empty
    # other settings: another evaluation to record, so that one the cancelled wait made late would be a second one
    ws.set_settings(k=(5, 10))
    page.reload(wait_until="commit")
    B.wait_for(page, main=["Metrics vs k", "Record this evaluation"], sidebar=["k: 5, 10"], timeout=STEP)

    with contextlib.ExitStack() as stack:  # waiting, then the other process done: recorded
        pid = stack.enter_context(another_writer(ws.path))
        record.click()
        waiting_shown(page, pid)
    B.wait_for(page, main=["Recorded as evaluation"], absent=[WAITING], timeout=STEP)
    recorded = W.Workspace.open(ws.path, create=False).evaluations()
    assert len(recorded) == 1, recorded  # the cancelled one never was
    TB.no_exception(page, "the Overview after waiting")
    assert not page.page_errors

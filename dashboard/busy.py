"""The dashboard while another process writes to its workspace (a training script, ``evalcore evaluate --workspace``
recording a long evaluation): it holds the workspace's writer lock (:mod:`evalcore.workspace.writelock`) for as long
as it writes, which a change of the dashboard must wait for.

* **Kept selections** (:func:`save_selections`, called by :func:`dashboard.persist.publish` on every run): saved
  when the lock is free within :data:`KEEP_WAIT` seconds; else they stay in the session, the sidebar says so
  (:func:`kept_note`), and a later run saves them once the lock is free (without waiting again meanwhile: a page is
  never held up more than once, by about a second).
* **User actions** (record an evaluation, add a file, apply settings...: :func:`dashboard.persist.write`) wait, and
  while they wait the page says that another process (its pid) is writing, with a Cancel button
  (:func:`shown_while_waiting`: the wait stops before its next try of the lock, even while the click's rerun has not
  yet stopped the run, and the sidebar says so); after :data:`ACTION_WAIT` seconds they give up with one line ending in
  "try again when it is done". Nothing is changed by a change that did not get the lock.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import streamlit as st

from evalcore.workspace.core import DERIVED_WAIT
from evalcore.workspace.store import BUSY_DEADLINE
from evalcore.workspace.writelock import WriterBusy, while_waiting

#: Seconds a run waits for the writer lock to save the kept selections (then they are saved at a later run).
KEEP_WAIT = DERIVED_WAIT
#: Seconds a user's change (record, add, settings...) waits for another writer, the wait shown with a Cancel button.
ACTION_WAIT = BUSY_DEADLINE
#: Who held the writer lock when the session's kept selections could not be saved (absent once they are).
UNSAVED = "_ws_selections_unsaved"
#: The wait the user cancelled (its token; :func:`shown_while_waiting`).
CANCELLED = "_ws_wait_cancelled"
#: A message for the sidebar after a wait the user cancelled.
CANCELLED_TEXT = "Cancelled while waiting for another process writing to this workspace: nothing was changed."


def save_selections(ws: Any, delta: dict[str, Any]) -> bool:
    """Save ``delta`` into ``ws``'s ui_state unless another process holds the writer lock for more than
    :data:`KEEP_WAIT` seconds (no wait at all when the previous try of this session found it busy); whether saved.
    Unsaved, the session keeps the selections and :data:`UNSAVED` names the writer."""
    state = st.session_state
    try:
        with ws.exclusive(wait=0.0 if UNSAVED in state else KEEP_WAIT):
            ws.set_ui_state(**delta)
    except WriterBusy as e:
        state[UNSAVED] = e.holder
        kept_note()
        return False
    if state.pop(UNSAVED, None) is not None:
        kept_note()
    return True


_LOCAL = threading.local()  # the sidebar's place of the note of this script run (its thread)


def forget_note() -> None:
    """At the start of a run: the note's place of the previous run is not this run's (:func:`note_here`)."""
    _LOCAL.slot = None


def note_here() -> None:
    """The sidebar's place of the note of kept selections not yet saved (:func:`kept_note`), drawn now."""
    _LOCAL.slot = st.sidebar.empty()
    kept_note()


def kept_note() -> None:
    """In the sidebar, while the session's selections wait to be saved: why, and that they are not lost (drawn again
    by every :func:`save_selections`, so it goes once they are saved)."""
    slot = getattr(_LOCAL, "slot", None)
    if slot is None:
        return
    holder = st.session_state.get(UNSAVED)
    if holder:
        slot.caption(f"Your choices are kept in this session: {holder} is writing to this workspace; they are "
                     "saved in it once it is done.")
    else:
        slot.empty()


def _cancel(token: str) -> None:
    """Cancel's callback: the wait ``token`` stops at its next poll (whichever run it is in), nothing changed."""
    st.session_state[CANCELLED] = token
    st.session_state.setdefault("_ws_notices", []).append(("info", CANCELLED_TEXT))


def busy_text(holder: str, waited: float) -> str:
    """The one line of a change that gave up waiting for ``holder``."""
    return (f"{holder} has been writing to this workspace for {waited:.0f} s (a training script or `evalcore "
            "evaluate --workspace`?); try again when it is done")


@contextlib.contextmanager
def shown_while_waiting() -> Iterator[None]:
    """Inside, a wait for the writer lock another process holds is shown where this is entered: which process,
    for how long, a Cancel button (the wait stops at its next poll, nothing is changed: :data:`CANCELLED`; the click's
    rerun also stops the run at its next line drawn); after :data:`ACTION_WAIT` seconds the change gives up
    (:class:`WriterBusy`, :func:`busy_text`)."""
    slot = st.empty()
    token = uuid.uuid4().hex
    drawn: dict[str, Any] = {}

    def hook(holder: str, waited: float) -> None:
        if st.session_state.get(CANCELLED) == token:  # (checked before every try of the lock)
            busy = WriterBusy(f"cancelled while waiting for {holder} writing to this workspace")
            busy.holder = holder
            raise busy
        if waited >= ACTION_WAIT:
            busy = WriterBusy(busy_text(holder, waited))
            busy.holder = holder
            raise busy
        if "line" not in drawn:
            with slot.container():
                c1, c2 = st.columns([6, 1], vertical_alignment="center")
                drawn["line"] = c1.empty()
                c2.button("Cancel", key="ws_wait_cancel", on_click=_cancel, args=(token,),
                          icon=":material/stop_circle:", help="Stop waiting: nothing is changed")
        second = int(waited)
        if drawn.get("second") != second:
            drawn["second"] = second
            drawn["line"].info(f"Waiting for {holder}, which is writing to this workspace (a training script or "
                               f"`evalcore evaluate --workspace`?): this change is made as soon as it is done "
                               f"(waited {second} s; at most {ACTION_WAIT:.0f} s).", icon=":material/hourglass_top:")

    try:
        with while_waiting(hook):
            yield
    finally:
        slot.empty()

"""Long steps of the dashboard (ranking an embedding run, a reference model's ground truth): a progress bar
with a Cancel button while they run, and the session's cancelled state (Retry clears it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dashboard.cache import outside_cache

CANCEL_KEY = "_cancelled"
CANCELLED = "cancelled by the user (press Retry to compute it)"


def cancel() -> None:
    """Button callback: the long step under way stops at its next progress update (the click reruns the
    script), and the next runs do not start it again until :func:`retry`."""
    st.session_state[CANCEL_KEY] = True


def retry() -> None:
    st.session_state.pop(CANCEL_KEY, None)


def cancelled() -> bool:
    return bool(st.session_state.get(CANCEL_KEY))


def long_step(slot: Any, label: str, key: str, *, known: bool) -> tuple[Callable[[int, int], None] | None, bool]:
    """Before a step that may take long (a cache miss of ranking or of a reference ground truth):
    ``(progress callback, skip)``. Draws a running state in ``slot`` — a progress bar and a Cancel button;
    ``skip`` is True when the user cancelled (the step is then not started). ``known``: the step's result
    is at hand (nothing to draw, nothing to skip)."""
    if known:
        return None, False
    if cancelled():
        return None, True
    if slot is None:
        return None, False
    with slot.container():
        c1, c2 = st.columns([6, 1], vertical_alignment="center")
        bar = c1.progress(0.0, text=f"Running: {label}…")
        c2.button("Cancel", key="cancel_" + key[-16:], on_click=cancel, icon=":material/stop_circle:",
                  help="Stop this computation (nothing already loaded is lost)")

    def cb(done: int, total: int) -> None:
        frac = min(1.0, done / total) if total else 1.0
        outside_cache(bar.progress, frac, text=f"Running: {label}: {done:,}/{total:,}")

    return cb, False

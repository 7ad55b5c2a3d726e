"""Imports the dashboard warms up in the background (``dashboard.state.warm_up``, called by ``app.py``)."""

from __future__ import annotations

import importlib
import threading

_WARM: list = []


def warm_up() -> None:
    """Import the paired tests' SciPy modules in a background thread once per process (a cold import takes
    seconds on a small machine; the Compare page would otherwise pay it on its first visit)."""
    if _WARM:
        return
    _WARM.append(True)
    threading.Thread(target=lambda: importlib.import_module("scipy.stats"), daemon=True,
                     name="evalcore-warm-up").start()

"""Imports the dashboard warms up in the background (``dashboard.state.warm_up``, called by ``app.py`` once the first
page of the process is drawn)."""

from __future__ import annotations

import importlib
import threading

#: What a page other than the Overview needs first and the Overview does not: the paired tests' SciPy modules (the
#: Compare, Domains and Versions pages) and pandas' Styler with its jinja2 templates (the p-value tables, the Queries
#: page's lists). A cold import of each takes 0.5-2 s on a small machine.
MODULES = ("scipy.stats", "pandas.io.formats.style")
THREAD_NAME = "evalcore-warm-up"

_WARM: list = []


def warm_up() -> None:
    """Import :data:`MODULES` in a background thread, once per process.

    Called when the first page has been drawn, not before it: an import holds Python's lock most of the time, so a
    thread importing beside the first page's run slowed it by about as much (the newcomer's first Overview needs
    none of them); the page a user opens next finds them imported."""
    if _WARM:
        return
    _WARM.append(True)

    def imports() -> None:
        for name in MODULES:
            importlib.import_module(name)

    threading.Thread(target=imports, daemon=True, name=THREAD_NAME).start()

"""Imports started in a background thread while the command reads its input files."""

from __future__ import annotations

__all__ = ["preload", "PRELOAD_THREAD"]

PRELOAD_THREAD = "evalcore-preload"


def preload(module: str):
    """Import a module in a background thread (overlaps with file parsing, which releases the GIL).

    Returns the thread: :func:`main` joins it before returning, because an
    interpreter that exits while a thread is inside a C++ extension's import
    (pyarrow, under pandas) can abort ("terminate called without an active
    exception") after an early error.
    """
    import importlib
    import threading

    thread = threading.Thread(target=importlib.import_module, args=(module,), daemon=True, name=PRELOAD_THREAD)
    thread.start()
    return thread

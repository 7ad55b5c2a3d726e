"""Imports done in one background thread while the command reads its input files.

Importing is Python work under the GIL: two import threads only take turns
with each other (and with the command's own Python work).  So a command has at
most one loader thread, which imports the modules asked for *in the order
asked* — pandas first (:func:`evalcore.cli.main`: the evaluation needs it
first), then what a subcommand adds (``scipy.special`` for the report's
confidence intervals) — while the main thread parses files with arrow or runs
the search, which release the GIL.
"""

from __future__ import annotations

import importlib
import queue
import threading

__all__ = ["preload", "open_loader", "close_loader", "Loader", "PRELOAD_THREAD"]

PRELOAD_THREAD = "evalcore-preload"


class Loader:
    """One daemon thread importing the modules put to it, in order, until :meth:`close`.

    An import that fails is left to fail again, with its real error, where the
    module is used.  :meth:`close` waits for the imports in progress: an
    interpreter that exits while a thread is inside a C++ extension's import
    (pyarrow, under pandas) can abort ("terminate called without an active
    exception") after an early error.
    """

    def __init__(self) -> None:
        self._todo: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._work, daemon=True, name=PRELOAD_THREAD)
        self.thread.start()

    def _work(self) -> None:
        while (module := self._todo.get()) is not None:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001 - raised again, with its message, where it is used
                pass

    def add(self, module: str) -> None:
        """Import ``module`` after those already asked for."""
        self._todo.put(module)

    def stop(self) -> None:
        """Let the thread end once the imports asked for are done (without waiting for them)."""
        self._todo.put(None)

    def close(self) -> None:
        """Finish the imports asked for, then stop the thread."""
        self.stop()
        self.thread.join()


_active: list[Loader] = []  # the loader of the running command (main() opens and closes it)


def preload(module: str) -> threading.Thread | None:
    """Import ``module`` in the background: in the command's loader when one is open (after what it
    already imports; None is returned), else in a thread of its own (returned, to be joined before
    exiting).  Nothing when the module is already imported."""
    import sys

    if module in sys.modules:
        return None
    if _active:
        _active[-1].add(module)
        return None
    loader = Loader()
    loader.add(module)
    loader.stop()
    return loader.thread


def open_loader(*modules: str) -> Loader:
    """The command's loader, importing ``modules`` first; :func:`preload` adds to it until it is closed."""
    loader = Loader()
    for m in modules:
        loader.add(m)
    _active.append(loader)
    return loader


def close_loader(loader: Loader) -> None:
    """Wait for ``loader``'s imports and stop it (see :meth:`Loader.close`)."""
    if loader in _active:
        _active.remove(loader)
    loader.close()

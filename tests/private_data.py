"""The tests' own per-user folders: nothing the tests run reads or writes the user's workspaces, data folder or cache.

The dashboard and the engine keep named workspaces in ``EVALCORE_WORKSPACES`` (else the per-user data folder,
``$XDG_DATA_HOME/evalcore``), the demo's page choices in that data folder and the built-in demo and computed results
in the per-user cache folder (``$XDG_CACHE_HOME/evalcore``; see ``evalcore/workspace/locations.py``). The tests'
helpers (``test_app.store_snapshot``, ``test_app_store.new_workspace``...) create workspaces in whatever folder
those name, so a script that imports them outside pytest (an AppTest run by hand) filled the user's workspace
picker with ``test-…`` and ``store-…`` workspaces.

:func:`ensure` points those variables to a temporary folder of this process, once, unless they already point to
one (:data:`MARKER` set: a pytest session's conftest, or the parent process of a server or CLI child, which
inherits the environment). ``tests/conftest.py`` calls it when pytest loads it (before any test module is
imported), and ``test_app.py`` (imported by every module whose helpers create workspaces) when imported; the
suite's fixtures then point the variables to pytest's own temporary folders, per session and per test.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

#: Environment variable naming the private folder the data-folder variables point into (set by :func:`ensure`).
MARKER = "EVALCORE_TEST_HOME"
#: The variables that choose where evalcore reads and writes per-user data (set), and the active workspace (unset).
SET = ("EVALCORE_WORKSPACES", "XDG_DATA_HOME", "XDG_CACHE_HOME", "EVALCORE_CACHE")
UNSET = ("EVALCORE_WORKSPACE",)


def variables(base: Path) -> dict[str, str]:
    """The values of :data:`SET` (and :data:`MARKER`) for a private folder ``base``: workspaces, data and cache
    folders in it; the disk cache of results off (a test of a computation must compute)."""
    return {MARKER: str(base), "EVALCORE_WORKSPACES": str(base / "workspaces"), "XDG_DATA_HOME": str(base / "data"),
            "XDG_CACHE_HOME": str(base / "cache"), "EVALCORE_CACHE": "off"}


def point_to(base: Path, *, setenv: Callable[[str, str], None], delenv: Callable[[str], None]) -> None:
    """Point the data-folder variables into ``base`` with ``setenv`` / ``delenv`` (``os.environ``'s or a
    ``MonkeyPatch``'s)."""
    for key, value in variables(base).items():
        setenv(key, value)
    for key in UNSET:
        delenv(key)


def ensure() -> Path:
    """The private folder the data-folder variables point into: :data:`MARKER`'s when set, else a new temporary
    folder (removed when this process exits) they are pointed to now."""
    current = os.environ.get(MARKER)
    if current:
        return Path(current)
    base = Path(tempfile.mkdtemp(prefix="evalcore-tests-"))
    owner = os.getpid()

    def remove() -> None:  # not in a forked child that exits through atexit: the folder is its parent's
        if os.getpid() == owner:
            shutil.rmtree(base, ignore_errors=True)

    atexit.register(remove)
    point_to(base, setenv=os.environ.__setitem__, delenv=lambda key: os.environ.pop(key, None))
    return base

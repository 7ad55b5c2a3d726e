"""The dashboard's saved selections (``ui_state``) of read-only workspaces, kept in the user's own data folder.

A writable workspace keeps its ``ui_state`` in its catalogue (:meth:`~.sidecar.SettingsAndSideFiles.ui_state`);
a read-only one — the built-in demo, a workspace on a read-only mount — cannot, so its selections are kept
here instead: one small SQLite file, :func:`store_path` (``<data_home()>/ui_state.sqlite``:
``$XDG_DATA_HOME/evalcore`` or ``~/.local/share/evalcore`` on Linux, see :mod:`.locations`), one row per
(workspace, key), the value as JSON (never pickled). Per user, like the data folder: the workspace itself
is never written. A workspace is named by :func:`identity`: the demo by its seed (the same demo after a
new version of evalcore rebuilt it), any other by its resolved folder.

Best effort, never an error: a data folder that cannot be created or written (an unwritable home), a
damaged or locked file — :func:`read` gives ``{}`` and :func:`write` ``False``; neither raises. Reading
creates nothing.

Bounded: each :func:`write` keeps the file under :data:`MAX_WORKSPACES` workspaces and :data:`MAX_BYTES` of
values, forgetting whole workspaces, the least recently written first (the one written is kept; a write that
would make its own selections exceed :data:`MAX_BYTES` is not kept). :func:`forget_missing` forgets the
workspaces whose folder is gone (the dashboard calls it when it opens a read-only workspace).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .locations import data_home
from .store import dumps, loads

__all__ = ["FILE_NAME", "MAX_WORKSPACES", "MAX_BYTES", "store_path", "identity", "read", "write", "forget_missing",
           "workspaces"]

#: The file's name in :func:`~.locations.data_home`.
FILE_NAME = "ui_state.sqlite"
#: Seconds a write waits for another process's write (then it gives up: the selection is not kept).
BUSY_SECONDS = 1.0
#: At most this many workspaces have selections kept; beyond, the least recently written are forgotten.
MAX_WORKSPACES = 64
#: The kept values (their JSON text) take at most this many bytes in all (the Fusion page's weight search, the
#: largest, is kept up to ~1 MB); beyond, the least recently written workspaces are forgotten.
MAX_BYTES = 8 * 1024 * 1024
_SCHEMA = "CREATE TABLE IF NOT EXISTS ui_state (workspace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, " \
          "PRIMARY KEY (workspace, key))"


def store_path() -> Path:
    """Where the selections of read-only workspaces are kept (not created until something is written)."""
    return data_home() / FILE_NAME


def identity(path: str | os.PathLike, *, demo_seed: int | None = None) -> str:
    """The key of a read-only workspace's selections: ``"demo:<seed>"`` for the built-in demo (its folder's name
    changes with each new demo build), else ``"path:<its resolved folder>"``."""
    if demo_seed is not None:
        return f"demo:{int(demo_seed)}"
    try:
        folder = Path(path).expanduser().resolve()
    except OSError:
        folder = Path(path).expanduser().absolute()
    return f"path:{folder}"


def read(workspace: str, *, path: str | os.PathLike | None = None) -> dict[str, Any]:
    """The selections kept for ``workspace`` (an :func:`identity`); ``{}`` when none are, or they cannot be read."""
    file = Path(path) if path is not None else store_path()
    try:
        if not file.is_file():
            return {}
        conn = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_SECONDS)
        try:
            rows = conn.execute("SELECT key, value FROM ui_state WHERE workspace = ?", (str(workspace),)).fetchall()
        finally:
            conn.close()
        out = {}
        for key, value in rows:
            with contextlib.suppress(ValueError, TypeError):
                out[str(key)] = loads(value)
        return out
    except (OSError, sqlite3.Error, ValueError):
        return {}


def write(workspace: str, values: Mapping[str, Any], *, path: str | os.PathLike | None = None,
          max_workspaces: int = MAX_WORKSPACES, max_bytes: int = MAX_BYTES) -> bool:
    """Merge ``values`` into the selections kept for ``workspace`` (a value None removes its key), in one
    transaction, then keep the file within ``max_workspaces`` and ``max_bytes`` (see the module docstring);
    whether they were written (False when the folder or the file cannot be written, or when the selections of
    ``workspace`` alone would exceed ``max_bytes``: nothing raises)."""
    file = Path(path) if path is not None else store_path()
    try:
        rows = [(str(k), None if v is None else dumps(v)) for k, v in values.items()]
        file.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(file), timeout=BUSY_SECONDS, isolation_level=None)
        try:
            conn.execute(_SCHEMA)
            conn.execute("BEGIN IMMEDIATE")
            try:
                for key, value in rows:
                    if value is None:
                        conn.execute("DELETE FROM ui_state WHERE workspace = ? AND key = ?", (str(workspace), key))
                    else:
                        conn.execute("INSERT OR REPLACE INTO ui_state (workspace, key, value) VALUES (?, ?, ?)",
                                     (str(workspace), key, value))
                kept = _bound(conn, str(workspace), max_workspaces=max_workspaces, max_bytes=max_bytes)
                conn.execute("COMMIT" if kept else "ROLLBACK")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()
        return kept
    except (OSError, sqlite3.Error, ValueError, TypeError):
        return False


def _bound(conn: sqlite3.Connection, current: str, *, max_workspaces: int, max_bytes: int) -> bool:
    """Forget whole workspaces other than ``current``, the least recently written first (the one whose newest row
    is oldest: ``INSERT OR REPLACE`` gives a written row the highest rowid), until at most ``max_workspaces`` remain
    and their values take at most ``max_bytes``; False when ``current``'s alone take more than ``max_bytes``."""
    sizes = conn.execute("SELECT workspace, COALESCE(SUM(LENGTH(CAST(value AS BLOB))), 0), MAX(rowid) FROM ui_state "
                         "GROUP BY workspace ORDER BY MAX(rowid)").fetchall()
    total = sum(int(n) for _, n, _ in sizes)
    count = len(sizes)
    mine = sum(int(n) for w, n, _ in sizes if w == current)
    if mine > max_bytes:
        return False
    for workspace, size, _ in sizes:
        if count <= max(1, max_workspaces) and total <= max_bytes:
            break
        if workspace == current:
            continue
        conn.execute("DELETE FROM ui_state WHERE workspace = ?", (workspace,))
        count, total = count - 1, total - int(size)
    return True


def workspaces(*, path: str | os.PathLike | None = None) -> list[str]:
    """The workspaces (:func:`identity`) with kept selections, the least recently written first (``[]`` when the
    file cannot be read)."""
    file = Path(path) if path is not None else store_path()
    try:
        if not file.is_file():
            return []
        conn = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_SECONDS)
        try:
            rows = conn.execute("SELECT workspace FROM ui_state GROUP BY workspace ORDER BY MAX(rowid)").fetchall()
        finally:
            conn.close()
        return [str(r[0]) for r in rows]
    except (OSError, sqlite3.Error, ValueError):
        return []


def forget_missing(*, path: str | os.PathLike | None = None) -> list[str]:
    """Forget the selections of the workspaces whose folder is no longer a workspace (deleted, moved): the
    ``path:`` identities; the demo's (``demo:``) stay. Returns those forgotten (``[]`` also when the file cannot be
    read or written: nothing raises)."""
    from .locations import is_workspace

    gone = [w for w in workspaces(path=path) if w.startswith("path:") and not is_workspace(Path(w[len("path:"):]))]
    if not gone:
        return []
    file = Path(path) if path is not None else store_path()
    try:
        conn = sqlite3.connect(str(file), timeout=BUSY_SECONDS, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("DELETE FROM ui_state WHERE workspace = ?", [(w,) for w in gone])
            conn.execute("COMMIT")
        finally:
            conn.close()
        return gone
    except (OSError, sqlite3.Error):
        return []

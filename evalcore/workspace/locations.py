"""Where workspaces live: the default folder, the root of named workspaces, the demo's cache.

* :func:`default_path` — ``EVALCORE_WORKSPACE`` when set, else ``<root>/default``;
* :func:`default_root` — the folder holding named workspaces (the dashboard's picker):
  ``EVALCORE_WORKSPACES`` when set, else the platform's per-user data folder +
  ``evalcore/workspaces`` (``$XDG_DATA_HOME`` or ``~/.local/share`` on Linux and other
  POSIX systems, ``~/Library/Application Support`` on macOS, ``%LOCALAPPDATA%`` on
  Windows);
* :func:`cache_home` — the per-user cache folder; :func:`demo_cache_dir` — where the read-only demo workspace is built once
  (``$XDG_CACHE_HOME`` or ``~/.cache``; ``~/Library/Caches``; ``%LOCALAPPDATA%\\evalcore\\cache``);
* :func:`check_name` — a workspace name is one folder name: no path separator, no
  leading dot (hidden folders are never listed), no control character, at most 100
  characters.

Nothing here touches the disk except :func:`is_workspace` (a ``stat``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import WorkspaceError
from ..io.source import first_broken_id

__all__ = [
    "ENV_WORKSPACE",
    "ENV_ROOT",
    "CATALOGUE_NAME",
    "default_path",
    "default_root",
    "data_home",
    "cache_home",
    "demo_cache_dir",
    "check_name",
    "plain_text",
    "is_workspace",
]

#: Environment variable naming the active workspace folder.
ENV_WORKSPACE = "EVALCORE_WORKSPACE"
#: Environment variable naming the folder of named workspaces.
ENV_ROOT = "EVALCORE_WORKSPACES"
#: File name of a workspace's SQLite catalogue.
CATALOGUE_NAME = "catalogue.sqlite"
_MAX_NAME = 100


def _platform_dir(kind: str) -> Path:
    """The per-user ``"data"`` or ``"cache"`` folder of this platform (not created)."""
    home = Path.home()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / "evalcore" / ("cache" if kind == "cache" else "")
    if sys.platform == "darwin":
        sub = "Caches" if kind == "cache" else "Application Support"
        return home / "Library" / sub / "evalcore"
    var, fallback = ("XDG_CACHE_HOME", ".cache") if kind == "cache" else ("XDG_DATA_HOME", ".local/share")
    base = os.environ.get(var) or ""
    # the XDG specification: a relative path is invalid and must be ignored
    root = Path(base) if base and os.path.isabs(base) else home / fallback
    return root / "evalcore"


def data_home() -> Path:
    """The platform's per-user data folder of evalcore (see the module docstring)."""
    return _platform_dir("data")


def default_root() -> Path:
    """The folder of named workspaces: ``EVALCORE_WORKSPACES``, else ``data_home()/workspaces``."""
    env = os.environ.get(ENV_ROOT)
    return Path(env).expanduser() if env else data_home() / "workspaces"


def default_path() -> Path:
    """The workspace used when none is named: ``EVALCORE_WORKSPACE``, else ``default_root()/default``."""
    env = os.environ.get(ENV_WORKSPACE)
    return Path(env).expanduser() if env else default_root() / "default"


def cache_home() -> Path:
    """The platform's per-user cache folder of evalcore (see the module docstring; not created)."""
    return _platform_dir("cache")


def demo_cache_dir() -> Path:
    """Where the demo workspaces are built (one sub-folder per demo version and seed)."""
    return cache_home() / "demo"


def plain_text(value: object, *, what: str, limit: int, error: type[Exception]) -> str:
    """``value`` stripped, if it is text of 1 to ``limit`` characters without control characters.

    Otherwise ``error`` (an :class:`~evalcore.errors.EvalcoreError` subclass) says what is wrong,
    naming ``what`` (``"a run name"``, ``"a workspace name"``).
    """
    if not isinstance(value, str):
        raise error(f"{what} must be text, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise error(f"{what} cannot be empty")
    if len(text) > limit:
        raise error(f"{what} has at most {limit} characters ({len(text)} given)")
    if first_broken_id([text]) is not None:  # (the readers' one definition: C0, DEL, C1, U+2028/9)
        raise error(f"{what} {text!r}: no control characters (tabs, line breaks)")
    return text


def check_name(name: str) -> str:
    """A valid workspace name (stripped), or :class:`~evalcore.errors.WorkspaceError` saying why not."""
    text = plain_text(name, what="a workspace name", limit=_MAX_NAME, error=WorkspaceError)
    if any(ch in text for ch in "/\\:") or text in (".", ".."):
        raise WorkspaceError(f"workspace name {text!r}: no '/', '\\' or ':' (it is one folder name)")
    if text.startswith("."):
        raise WorkspaceError(f"workspace name {text!r}: it cannot start with a dot")
    return text


def is_workspace(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a folder holding a workspace catalogue."""
    return (Path(path) / CATALOGUE_NAME).is_file()

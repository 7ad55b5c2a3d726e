"""Named workspaces under one root folder (the dashboard's picker) and the order of versions.

* :class:`WorkspaceRoot` — list, create, open, rename, delete and copy the workspaces of a
  root folder (default :func:`~.locations.default_root`); names are single folder names
  (:func:`~.locations.check_name`);
* :meth:`WorkspaceRoot.copy` — e.g. of the read-only demo (:meth:`~.api.Workspace.demo`)
  into a new, writable workspace of the root;
* :func:`order_versions` — the runs of :meth:`~.api.Workspace.runs` grouped by model and
  ordered by step, then version label (natural order: ``epoch 9`` < ``epoch 10``), then time.
"""

from __future__ import annotations

import os
import re
import shutil
import unicodedata
import uuid
from pathlib import Path
from typing import Any

from .._lazy import pd
from ..errors import WorkspaceError
from .api import Workspace
from .locations import CATALOGUE_NAME, check_name, default_root, is_workspace
from .writelock import LOCK_NAME

__all__ = ["WorkspaceRoot", "order_versions", "ROOT_COLUMNS"]

#: Columns of :meth:`WorkspaceRoot.table`.
ROOT_COLUMNS = ["name", "path", "runs", "ground_truth", "generation"]
_WORKSPACE_ENTRIES = {CATALOGUE_NAME, CATALOGUE_NAME + "-wal", CATALOGUE_NAME + "-shm", "objects", "tmp", LOCK_NAME}


class WorkspaceRoot:
    """A folder holding named workspaces, one sub-folder each (see the module docstring).

    Rename and delete act on folders: do them when no other process writes to that workspace
    (the dashboard asks for confirmation).
    """

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_root()

    def __repr__(self) -> str:
        return f"WorkspaceRoot({str(self.path)!r})"

    def path_of(self, name: str) -> Path:
        """The folder of workspace ``name`` (validated; it need not exist)."""
        return self.path / check_name(name)

    def names(self) -> list[str]:
        """Names of the workspaces in the root, sorted (hidden folders and other folders skipped)."""
        if not self.path.is_dir():
            return []
        return sorted(p.name for p in self.path.iterdir()
                      if p.is_dir() and not p.name.startswith(".") and is_workspace(p))

    def exists(self, name: str) -> bool:
        return is_workspace(self.path_of(name))

    def table(self) -> pd.DataFrame:
        """One row per workspace: :data:`ROOT_COLUMNS` (a workspace that fails to open shows its error as ground truth)."""
        rows = []
        for name in self.names():
            try:
                with Workspace.open(self.path / name, create=False) as ws:
                    gt = ws.ground_truth()
                    rows.append({"name": name, "path": str(ws.path), "runs": len(ws.run_names()),
                                 "ground_truth": None if gt is None else gt["name"], "generation": ws.generation})
            except WorkspaceError as e:
                rows.append({"name": name, "path": str(self.path / name), "runs": None,
                             "ground_truth": f"(cannot open: {e})", "generation": None})
        return pd.DataFrame(rows, columns=ROOT_COLUMNS)

    def create(self, name: str) -> Workspace:
        """Create workspace ``name`` (an error when the folder exists)."""
        path = self.path_of(name)
        if path.exists():
            raise WorkspaceError(f"a workspace or folder named {path.name!r} already exists", file=str(path))
        return Workspace.open(path)

    def open(self, name: str, *, create: bool = False, read_only: bool = False) -> Workspace:
        """Open workspace ``name`` (``create``: create it when missing)."""
        return Workspace.open(self.path_of(name), create=create, read_only=read_only)

    def rename(self, old: str, new: str) -> Path:
        """Rename a workspace's folder; returns the new path."""
        src, dest = self.path_of(old), self.path_of(new)
        if not is_workspace(src):
            raise WorkspaceError(f"no workspace named {src.name!r}", file=str(src))
        if dest.exists():
            raise WorkspaceError(f"a workspace or folder named {dest.name!r} already exists", file=str(dest))
        os.rename(src, dest)
        return dest

    def delete(self, name: str) -> None:
        """Delete a workspace's folder (only a folder that holds nothing but a workspace)."""
        path = self.path_of(name)
        if not is_workspace(path):
            raise WorkspaceError(f"no workspace named {path.name!r}", file=str(path))
        extra = sorted({p.name for p in path.iterdir()} - _WORKSPACE_ENTRIES)
        if extra:
            raise WorkspaceError(f"the folder also holds {extra}; not deleting it", file=str(path))
        trash = self.path / f".deleting-{uuid.uuid4().hex}"
        os.rename(path, trash)  # gone from names() at once
        shutil.rmtree(trash, ignore_errors=True)

    def copy(self, ws: Workspace, name: str) -> Workspace:
        """Copy a workspace (e.g. the demo) into a new workspace ``name``; returns it, writable."""
        path = self.path_of(name)
        if path.exists():
            raise WorkspaceError(f"a workspace or folder named {path.name!r} already exists", file=str(path))
        return ws.copy_to(path)


# ------------------------------------------------------------------ versions
def _natural(text: Any) -> tuple:
    if text is None or (isinstance(text, float) and text != text):
        return (1,)
    return (0, *((0, int(t), "") if t.isdecimal() else (1, 0, t.lower()) for t in re.findall(r"\d+|\D+", str(text))))


def order_versions(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs grouped by model and ordered as versions (see the module docstring).

    Parameters
    ----------
    runs : DataFrame
        :meth:`~.api.Workspace.runs` (columns ``model, version, step, created_at`` at least).

    Returns
    -------
    DataFrame
        The same rows sorted by model (natural order, case-insensitive: ``student-32d`` <
        ``student-128d``; runs without a model last, each its own group named by the run), step (missing last), natural version label, creation time; with
        ``group`` (the model, else the run's name) and ``version_index`` (0, 1, ... within
        the group).
    """
    frame = runs.copy()
    # one group per model in any Unicode form (labels stored before they were normalised at the API's edge)
    frame["group"] = [unicodedata.normalize("NFC", m) if isinstance(m, str) and m else n
                      for m, n in zip(frame["model"], frame["name"], strict=True)]
    keys = [((0 if isinstance(m, str) and m else 1), _natural(g), g, (1, 0.0) if pd.isna(s) else (0, float(s)),
             _natural(v), str(t)) for m, g, s, v, t in zip(frame["model"], frame["group"], frame["step"],
                                                           frame["version"], frame["created_at"], strict=True)]
    order = sorted(range(len(frame)), key=lambda i: keys[i])
    frame = frame.iloc[order].reset_index(drop=True)
    frame["version_index"] = frame.groupby("group", sort=False).cumcount()
    return frame

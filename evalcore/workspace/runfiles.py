"""Many run files at once: a folder or a glob of ranked run files, one run per file.

:func:`add_run_files` (:meth:`~evalcore.workspace.Workspace.add_run_files`) reads the files one by one,
each in its own transaction, exactly as one file given alone would be read (:meth:`~.run_changes.RunChanges.add_run`):

* **which files** (:func:`list_run_files`): a folder gives the regular files directly inside it (subfolders are not
  searched); a glob (``/data/runs/*.trec``) the files it matches. Left out, and named in the outcome (never taken
  silently as runs, never silently dropped): hidden files (a name starting with ``.``), ids files (``*_ids.txt``,
  ``*.ids.txt``), a README, LICENSE or CHANGELOG and documentation or scripts (``.md``, ``.rst``, ``.pdf``,
  ``.html``, ``.py``, ``.sh``, ``.yaml``...), embeddings (``.npy``, ``.npz``: add those as an embedding run) and
  subfolders. Files are taken in name order, digit runs compared as numbers (``run-2`` before ``run-10``);
* **names**: each run is named after its file (:func:`~.model.file_stem`), or ``name (2)``... when that name is
  taken (by a stored run or a file read before it), as a single file added alone;
* **the same file again**: a file whose very bytes are already stored as a ranked run (same aspect; whatever its
  name: :meth:`~.run_changes.RunChanges.same_file_run`) is not stored a second time: its outcome names that run
  (``new`` False), as an upload of it and ``evaluate --workspace --run FILE`` do; embedding files the same way
  (:func:`add_embedding_file`: the dashboard's uploads and paths, both files of a run of queries against a corpus);
* **errors**: a file that does not load is reported with its own error (its path, line and what is wrong) and
  nothing of it is stored; every other file is still added, and the runs already stored are untouched. When no
  file could be added at all, an error is raised (listing each file's), so nothing changed.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EvalcoreError, InputFormatError, OptionError
from ..io.shards import is_shard_spec
from .artifacts import sha256_file
from .model import file_stem, free_name

__all__ = ["RunFileAdded", "RunFileFailed", "RunFilesAdded", "is_file_set", "list_run_files", "add_run_file",
           "add_embedding_file", "add_run_files",
           "left_out_reason"]

#: How many failures an error raised when no file was added lists (then "and N more").
LISTED = 5

_IDS_FILE = re.compile(r"(?i)[._]ids\.txt$")
_DOC_STEMS = ("readme", "license", "licence", "changelog", "notes", "manifest")
_DOC_SUFFIXES = frozenset((".md", ".rst", ".pdf", ".html", ".htm", ".py", ".ipynb", ".sh", ".yaml", ".yml", ".toml",
                           ".ini", ".cfg", ".log", ".png", ".jpg", ".jpeg", ".svg", ".zip", ".tar", ".pt", ".bin"))


@dataclass(frozen=True)
class RunFileAdded:
    """A file stored as run ``run``; ``same``: runs already stored from these very bytes (a file added twice).
    ``new`` False: not stored again, ``run`` is the run already holding these bytes (and ``same`` names it)."""

    file: str
    run: str
    same: tuple[str, ...] = ()
    new: bool = True


@dataclass(frozen=True)
class RunFileFailed:
    """A file that did not load (nothing of it stored): its path and the reader's one-line error."""

    file: str
    error: str


@dataclass(frozen=True)
class RunFilesAdded:
    """What :func:`add_run_files` did: the files added, those that failed, those left out (path, why)."""

    spec: str
    added: tuple[RunFileAdded, ...]
    failed: tuple[RunFileFailed, ...]
    left_out: tuple[tuple[str, str], ...]


def is_file_set(spec: str | os.PathLike) -> bool:
    """True when ``spec`` names several files: an existing folder, or a glob pattern that is not a file."""
    return is_shard_spec(os.path.expanduser(os.fspath(spec)))


def left_out_reason(path: str | os.PathLike) -> str | None:
    """Why a file of a folder (or glob) is not taken as a run file (see the module docstring), or None."""
    p = Path(path)
    name = p.name
    low = name.lower()
    if p.is_dir():
        return "a subfolder (not searched)"
    if name.startswith("."):
        return "hidden"
    if _IDS_FILE.search(name):
        return "an ids file"
    if low.endswith((".npy", ".npz")):
        return "embeddings (add them as an embedding run)"
    if low.split(".", 1)[0] in _DOC_STEMS or p.suffix.lower() in _DOC_SUFFIXES:
        return "not a run file"
    return None


def _natural(path: str) -> tuple:
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", path)), path


def list_run_files(spec: str | os.PathLike) -> tuple[list[str], list[tuple[str, str]]]:
    """The run files a folder or glob ``spec`` names (in name order) and those left out, each with why.

    Raises OptionError when ``spec`` names no file at all (an empty folder, a glob matching nothing)."""
    text = os.path.expanduser(os.fspath(spec))
    if os.path.isdir(text):
        entries = [str(p) for p in Path(text).iterdir()]
        where = f"in the folder {os.fspath(spec)!r}"
    else:
        entries = glob.glob(text)
        where = f"matches {os.fspath(spec)!r}"
    taken, left = [], []
    for path in sorted(entries, key=_natural):
        why = left_out_reason(path)
        if why is None and not os.path.isfile(path):
            why = "not a regular file"
        if why is None:
            taken.append(path)
        else:
            left.append((path, why))
    if not taken and not left:
        raise OptionError(f"no file {where}")
    return taken, left


def add_run_file(ws: Any, source: Any, *, file: str, sha256: str, format: str = "auto", aspect: str | None = None,
                 source_name: str | None = None) -> RunFileAdded:
    """One ranked run file (``source``: its path or bytes; ``file``: its name or path, ``sha256``: of its bytes)
    added as a file given alone is, by the folder add and an upload alike: not stored again when the workspace
    holds these very bytes as a ranked run against ``aspect`` (:meth:`~.run_changes.RunChanges.same_file_run`;
    ``new`` False), else stored under its file's name (:func:`~.model.file_stem`, ``name (2)``... when taken),
    ``same`` naming the runs stored from the same bytes (against other aspects). ``source_name``: the name stored
    and shown in errors (default: ``file``'s base name; an upload's name is used whole)."""
    stored = ws.same_file_run(sha256, aspect=aspect)
    if stored is not None:
        return RunFileAdded(file, stored, (stored,), new=False)
    info = ws.runs()
    same = tuple(info.loc[info["source_sha256"] == sha256, "name"].astype(str)) if len(info) else ()
    name = ws.add_run(free_name(file_stem(file), ws.run_names()), source, format=format, aspect=aspect,
                      source_name=os.path.basename(file) if source_name is None else source_name)
    return RunFileAdded(file, name, same)


def add_embedding_file(ws: Any, embeddings: Any, ids: Any = None, *, file: str, query_embeddings: Any = None,
                       query_ids: Any = None, name: str | None = None, aspect: str | None = None,
                       source_name: str | None = None, query_source_name: str | None = None) -> RunFileAdded:
    """An embedding run's files (paths or bytes: documents, optionally their ids, queries and their ids) added as
    :func:`add_run_file` adds a ranked file: without a ``name``, not stored again when the workspace holds these very
    files as an embedding run against ``aspect`` (:meth:`~.run_changes.RunChanges.same_embedding_run`; ``new``
    False, ``run`` that run), else stored under ``name``, or its documents file's name (``name (2)``... when taken),
    ``same`` naming the embedding runs stored from the same files (a name given, or other aspects). Nothing but the
    files' bytes is read when they are stored already."""
    from .inputs import embedding_files_key

    key = embedding_files_key(embeddings, ids, query_embeddings=query_embeddings, query_ids=query_ids)
    same = tuple(ws.embedding_runs_of_files(key)) if key is not None else ()
    if name is None and key is not None:
        stored = next(iter(ws.embedding_runs_of_files(key, aspect=aspect, any_aspect=False)), None)
        if stored is not None:
            return RunFileAdded(file, stored, (stored,), new=False)
    run = ws.add_embedding_run(free_name(name or file_stem(file), ws.run_names()), embeddings, ids,
                               query_embeddings=query_embeddings, query_ids=query_ids, aspect=aspect,
                               source_name=os.path.basename(file) if source_name is None else source_name,
                               query_source_name=query_source_name, files_sha256=key)
    return RunFileAdded(file, run, same)


def add_run_files(ws: Any, spec: str | os.PathLike, *, format: str = "auto", aspect: str | None = None,
                  progress: Callable[[int, int, str], None] | None = None) -> RunFilesAdded:
    """Add each run file of a folder or glob ``spec`` to workspace ``ws`` as its own run (see the module docstring).

    ``progress(done, total, file)`` is called before each file is read and once at the end (``done == total``).
    Returns a :class:`RunFilesAdded`. Raises OptionError when ``spec`` names no run file, and InputFormatError
    (listing each file's error) when none of its files could be added: then nothing was stored.
    """
    taken, left = list_run_files(spec)
    shown = os.fspath(spec)
    if not taken:
        reasons = "; ".join(f"{os.path.basename(p)}: {why}" for p, why in left[:LISTED])
        more = f"; and {len(left) - LISTED:,} more" if len(left) > LISTED else ""
        raise OptionError(f"no run file in {shown!r}: every file there is left out ({reasons}{more})")
    added: list[RunFileAdded] = []
    failed: list[RunFileFailed] = []
    for i, path in enumerate(taken):
        if progress is not None:
            progress(i, len(taken), path)
        try:
            added.append(add_run_file(ws, path, file=path, sha256=sha256_file(path), format=format, aspect=aspect))
        except OSError as e:
            failed.append(RunFileFailed(path, f"{path}: cannot be read ({e.strerror or e})"))
        except EvalcoreError as e:
            failed.append(RunFileFailed(path, str(e)))
    if progress is not None:
        progress(len(taken), len(taken), "")
    if not added:
        listed = "; ".join(f.error for f in failed[:LISTED])
        more = f"; and {len(failed) - LISTED:,} more" if len(failed) > LISTED else ""
        raise InputFormatError(f"no run added from {shown!r}: none of its {len(taken):,} run files loaded "
                               f"({listed}{more})")
    return RunFilesAdded(shown, tuple(added), tuple(failed), tuple(left))

"""Whole-workspace operations: export to one ``.zip``, import it, copy, garbage collection, verification.

A bundle is a zip file holding::

    evalcore-bundle.json        {"format": 1, "schema": N, "evalcore": "x.y.z", "created_at": ...,
                                 "artifacts": {"objects/ab/<sha256>.<ext>": size, ...}}
    catalogue.sqlite            a consistent snapshot of the catalogue (``VACUUM INTO``)
    objects/ab/<sha256>.<ext>   every artifact of the catalogue, stored as is

Import (:func:`import_bundle`) is a bit-for-bit round trip: every artifact is checked
against its SHA-256 while it is unpacked, the catalogue's content is the exported one.
It unpacks into a folder that is absent or empty (a failed import can be retried), and
the catalogue is renamed into place last, so a workspace appears whole or not at all.
Member names are checked against the layout above (nothing is written outside the folder).
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import re
import shutil
import sqlite3
import uuid
import zipfile
from pathlib import Path

from .. import __version__
from ..errors import (
    CorruptArtifactError,
    OptionError,
    SchemaVersionError,
    WorkspaceError,
    WorkspaceStorageError,
)
from .artifacts import GC_AGE, held_temporary, sha256_file
from .core import WorkspaceCore
from .locations import CATALOGUE_NAME
from .store import SCHEMA_VERSION, now
from .writelock import LOCK_NAME, storage_code, storage_full, storage_reason

try:  # pragma: no cover - the platform decides
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["export_bundle", "import_bundle", "copy_workspace", "collect_garbage", "verify_artifacts",
           "BUNDLE_FORMAT", "MANIFEST"]

BUNDLE_FORMAT = 1
MANIFEST = "evalcore-bundle.json"
_OBJECT = re.compile(r"^objects/([0-9a-f]{2})/([0-9a-f]{64})\.(parquet|npy)$")
_CHUNK = 1 << 20
_REFERENCES = ("SELECT artifact FROM ground_truth_parts UNION SELECT ids_artifact FROM ground_truth_parts "
               "UNION SELECT artifact FROM runs UNION SELECT ids_artifact FROM runs "
               "UNION SELECT query_artifact FROM runs UNION SELECT query_ids_artifact FROM runs "
               "UNION SELECT table_artifact FROM evaluations UNION SELECT artifact FROM side_files "
               "UNION SELECT artifact FROM derived")


def _artifacts(db: Path) -> list[tuple[str, str, int]]:
    conn = sqlite3.connect(str(db))
    try:
        return conn.execute("SELECT sha256, ext, size FROM artifacts ORDER BY sha256").fetchall()
    finally:
        conn.close()


def _referenced(db: Path) -> set[str]:
    """The artifacts the rows of the catalogue file ``db`` refer to (runs, ground truths, evaluations, side files,
    rankings)."""
    conn = sqlite3.connect(str(db))
    try:
        return {r[0] for r in conn.execute(_REFERENCES) if r[0]}
    finally:
        conn.close()


def _forget(db: Path, shas: set[str]) -> None:
    """Delete the artifact rows ``shas`` from the catalogue file ``db`` (an export's own copy)."""
    conn = sqlite3.connect(str(db))
    try:
        with conn:
            conn.executemany("DELETE FROM artifacts WHERE sha256 = ?", [(s,) for s in sorted(shas)])
    finally:
        conn.close()


def _fresh_target(path: Path) -> None:
    """``path`` must be absent, empty, or hold only what an interrupted import left (no catalogue)."""
    if not path.exists():
        blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        if blocking is not None:
            raise WorkspaceError(f"cannot be made: {blocking} is a file, not a folder", file=str(path))
        return
    if not path.is_dir():
        raise WorkspaceError("exists and is not a folder", file=str(path))
    left = {p.name for p in path.iterdir()}
    if CATALOGUE_NAME in left or not left <= {"objects", "tmp", LOCK_NAME}:
        raise WorkspaceError("is not empty: import or copy into a new folder", file=str(path))


def _work_dir(path: Path) -> Path:
    tmp = path / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return tmp


def _place_catalogue(src: Path, path: Path) -> None:
    """Check a catalogue file (schema, integrity) and rename it into ``path`` (the last step)."""
    conn = sqlite3.connect(str(src))
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(f"written by a newer evalcore (schema {version} > {SCHEMA_VERSION}); "
                                     "upgrade evalcore to import it", file=str(src))
        if conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            raise CorruptArtifactError("the bundled catalogue is damaged", file=str(src))
        missing = [f"objects/{s[:2]}/{s}.{e}" for s, e in conn.execute("SELECT sha256, ext FROM artifacts")
                   if not (path / "objects" / s[:2] / f"{s}.{e}").is_file()]
    except sqlite3.DatabaseError as e:
        raise WorkspaceError(f"the bundled catalogue is not a workspace catalogue ({e})", file=str(src)) from None
    finally:
        conn.close()
    if missing:
        raise CorruptArtifactError(f"{len(missing)} artifacts of the catalogue are missing, e.g. {missing[0]}",
                                   file=str(src))
    with open(src, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(src, path / CATALOGUE_NAME)


# ------------------------------------------------------------------ export / import
def export_bundle(ws: WorkspaceCore, out: str | os.PathLike) -> Path:
    """Write ``ws`` as one zip (see the module docstring); returns its path.

    Every artifact is verified while it is written: a damaged one raises
    :class:`~evalcore.errors.CorruptArtifactError` naming it, and no bundle is left; one nothing refers to whose file
    a concurrent gc removed meanwhile is left out (its row too). ``out`` is the
    bundle's file: an existing directory there, or a file among its parent folders, is a
    :class:`~evalcore.errors.WorkspaceError` naming ``out``.
    """
    out = Path(out)
    if out.is_dir():
        raise WorkspaceError(f"{out} is a directory: give the bundle's file name, e.g. {out / 'workspace.zip'}")
    blocking = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise WorkspaceError(f"cannot write {out}: {blocking} is a file, not a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    _sweep_parts(out)
    stack = contextlib.ExitStack()
    work = _work_dir(ws.path) if not ws.read_only else Path(out.parent)
    part = out.with_name(out.name + f".{uuid.uuid4().hex}.part")
    held = None
    try:
        held = _hold(part)  # locked while written: a later export tells a killed one's leftover from a live one
        # the catalogue's copy, held while it exists: a gc of the workspace (tmp/) leaves it
        db = stack.enter_context(held_temporary(work, ".sqlite", prefix="export-"))
        ws.catalogue.snapshot(db)
        arts, referenced = _artifacts(db), _referenced(db)
        gone: set[str] = set()
        with zipfile.ZipFile(part, "w", allowZip64=True) as z:
            for sha, ext, _ in arts:
                try:
                    path = ws.objects.verified(sha, ext, what=f"artifact {sha[:12]}")
                    z.write(path, f"objects/{sha[:2]}/{sha}.{ext}", compress_type=zipfile.ZIP_STORED)
                except (CorruptArtifactError, FileNotFoundError):
                    if sha in referenced or ws.objects.path(sha, ext).exists():
                        raise
                    gone.add(sha)  # nothing refers to it and a gc removed its file since the snapshot: left out
            if gone:
                _forget(db, gone)
            manifest = {"format": BUNDLE_FORMAT, "schema": SCHEMA_VERSION, "evalcore": __version__,
                        "created_at": now(),
                        "artifacts": {f"objects/{s[:2]}/{s}.{e}": n for s, e, n in arts if s not in gone}}
            z.writestr(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True), compress_type=zipfile.ZIP_DEFLATED)
            z.write(db, CATALOGUE_NAME, compress_type=zipfile.ZIP_DEFLATED)
        os.replace(part, out)
    except OSError as e:
        if isinstance(e, WorkspaceError) or e.filename is None or Path(e.filename) != part:
            raise
        raise OSError(e.errno, e.strerror, str(out)) from None  # the user's file, not our temporary name
    finally:
        stack.close()
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
        if held is not None:
            os.close(held)
    return out


_PART = re.compile(r"\.[0-9a-f]{32}\.part")
#: Seconds a leftover ``.part`` of an export must be old before another export of the same file removes it.
PART_AGE = 60.0


def _hold(part: Path) -> int | None:
    """Create ``part`` and hold an exclusive ``flock`` on it (the kernel drops it when the process ends)."""
    fd = os.open(part, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
    if fcntl is not None:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _sweep_parts(out: Path) -> None:
    """Remove the ``<out>.<hex>.part`` files exports killed while writing ``out`` left: older than
    :data:`PART_AGE` and locked by no process (a live export holds its own, :func:`_hold`)."""
    if fcntl is None:  # pragma: no cover - Windows: leftovers stay
        return
    import time

    for p in out.parent.glob(glob.escape(out.name) + ".*.part"):
        if not _PART.fullmatch(p.name[len(out.name):]):
            continue
        try:
            fd = os.open(p, os.O_RDWR)
        except OSError:
            continue
        try:
            if os.fstat(fd).st_mtime > time.time() - PART_AGE:
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: a live export's
            p.unlink()
        except OSError:
            continue
        finally:
            os.close(fd)


def _member_names(z: zipfile.ZipFile, bundle: Path) -> dict[str, zipfile.ZipInfo]:
    names = {}
    for info in z.infolist():
        if info.is_dir():
            continue
        if info.filename not in (MANIFEST, CATALOGUE_NAME) and not _OBJECT.match(info.filename):
            raise WorkspaceError(f"unexpected member {info.filename!r}: not an evalcore bundle", file=str(bundle))
        names[info.filename] = info
    if MANIFEST not in names or CATALOGUE_NAME not in names:
        raise WorkspaceError("not an evalcore bundle (no manifest or catalogue)", file=str(bundle))
    return names


def import_bundle(bundle: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Unpack a bundle into ``path`` (absent or empty); returns ``path``.

    Raises
    ------
    SchemaVersionError
        The bundle was written by a newer evalcore (checked before anything is written).
    CorruptArtifactError
        A member's bytes do not match its SHA-256 (the member is named).
    WorkspaceError
        Not a bundle, an unexpected member, or ``path`` is not empty.
    """
    bundle, path = Path(bundle), Path(path)
    try:
        z = zipfile.ZipFile(bundle)
    except (OSError, zipfile.BadZipFile) as e:
        raise WorkspaceError(f"cannot read the bundle ({e})", file=str(bundle)) from None
    with z:
        members = _member_names(z, bundle)
        try:
            manifest = json.loads(z.read(MANIFEST).decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise WorkspaceError(f"the bundle's manifest is not JSON ({e})", file=str(bundle)) from None
        if int(manifest.get("schema", 0)) > SCHEMA_VERSION or int(manifest.get("format", 0)) > BUNDLE_FORMAT:
            raise SchemaVersionError(f"written by a newer evalcore {manifest.get('evalcore')} (schema "
                                     f"{manifest.get('schema')} > {SCHEMA_VERSION}); upgrade evalcore to import it",
                                     file=str(bundle))
        _fresh_target(path)
        work = _work_dir(path)
        for name, info in members.items():
            m = _OBJECT.match(name)
            if m is None:
                continue
            dest = path / name
            if dest.is_file() and sha256_file(dest) == m.group(2):
                continue  # left by an interrupted import
            tmp = work / f"{uuid.uuid4().hex}.part"
            h = hashlib.sha256()
            with z.open(info) as src, open(tmp, "wb") as fh:
                for block in iter(lambda: src.read(_CHUNK), b""):
                    h.update(block)
                    fh.write(block)
                fh.flush()
                os.fsync(fh.fileno())
            if h.hexdigest() != m.group(2):
                tmp.unlink()
                raise CorruptArtifactError(f"bundle member {name} is damaged (its SHA-256 does not match its name)",
                                           file=str(bundle))
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, dest)
        db = work / f"import-{uuid.uuid4().hex}.sqlite"
        with z.open(members[CATALOGUE_NAME]) as src, open(db, "wb") as fh:
            shutil.copyfileobj(src, fh, _CHUNK)
    try:
        _place_catalogue(db, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            db.unlink()
    return path


def copy_workspace(ws: WorkspaceCore, new_path: str | os.PathLike) -> Path:
    """Copy ``ws`` (its catalogue snapshot and every artifact, verified) into ``new_path`` (absent or empty).

    The catalogue is placed last: ``new_path`` is a workspace once the copy is whole. A copy that fails (an
    exception, Ctrl-C) removes what it wrote there (and the folders it made); ``ws`` is only read. A process killed
    meanwhile leaves its files, and a copy into the same folder again goes on from them.

    Raises
    ------
    WorkspaceError
        ``new_path`` exists and is not an empty folder.
    WorkspaceStorageError
        ``new_path`` cannot be written: its disk (or quota) is full, or it is read-only for this user (one line
        naming ``new_path``; also an ``OSError``).
    CorruptArtifactError
        An artifact of ``ws`` is missing or damaged (named).
    """
    new_path = Path(new_path)
    _fresh_target(new_path)
    made = [p for p in (*reversed(new_path.parents), new_path, new_path / "tmp", new_path / "objects")
            if not p.exists()]  # the folders this copy makes
    wrote: list[Path] = []
    try:
        work = _work_dir(new_path)
        db = work / f"copy-{uuid.uuid4().hex}.sqlite"
        wrote.append(db)
        try:
            ws.catalogue.snapshot(db)
        except WorkspaceError as e:  # SQLite's "disk I/O error" writing db (a quota, a file too large): named here
            if not isinstance(e, OSError) and "disk I/O error" in e.message:
                raise _CatalogueNotWritten(errno.EIO, "SQLite could not write the copy of the catalogue (disk I/O "
                                                      "error: is its disk full or over its quota?)") from None
            raise
        for sha, ext, _ in _artifacts(db):
            src = ws.objects.verified(sha, ext, what=f"artifact {sha[:12]}")
            dest = new_path / "objects" / sha[:2] / f"{sha}.{ext}"
            if dest.is_file():
                continue  # left by a copy or an import that was killed
            tmp = work / f"{uuid.uuid4().hex}.part"
            wrote.append(tmp)
            shutil.copyfile(src, tmp)
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            if not dest.parent.exists():
                made.append(dest.parent)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, dest)
            wrote.append(dest)
        _place_catalogue(db, new_path)
    except BaseException as e:
        _remove(wrote, made)
        mapped = _copy_error(e, new_path)
        if mapped is None:  # (a file of ws that cannot be read is named by its own error)
            raise
        raise mapped from None
    return new_path


class _CatalogueNotWritten(OSError):
    """SQLite's ``VACUUM INTO`` could not write a copy's catalogue (its "disk I/O error": an over-quota disk, a file
    size limit; a full disk is its "database or disk is full", an ``ENOSPC``)."""


def _copy_error(error: BaseException, folder: Path) -> WorkspaceStorageError | None:
    """The one-line error of a copy into ``folder`` that could not write there (None: another error)."""
    if not isinstance(error, OSError) or not _written_here(error, folder):
        return None
    code = storage_code(error)
    if code is not None:
        reason, full = storage_reason(code), storage_full(code)
    elif isinstance(error, _CatalogueNotWritten):
        reason, full = error.strerror, True
    else:
        return None
    out = WorkspaceStorageError(f"cannot copy the workspace here: {reason}; nothing was left here and the workspace "
                                "copied from is unchanged; " + ("free some space and copy again" if full else
                                                               "copy it into a folder you can write"), file=str(folder))
    out.errno = code if code is not None else errno.EIO
    return out


def _written_here(error: OSError, folder: Path) -> bool:
    """Whether ``error`` is about ``folder``: a file in it, or no file named (a write, SQLite's ``VACUUM INTO``)."""
    names = [n for n in (error.filename, error.filename2) if n is not None]
    inside = Path(os.path.abspath(folder))
    return not names or any(Path(os.path.abspath(os.fsdecode(n))).is_relative_to(inside) for n in names)


def _remove(files: list[Path], folders: list[Path]) -> None:
    """Remove ``files`` (those there), then ``folders`` when empty, the deepest first (what a failed copy made)."""
    for f in files:
        with contextlib.suppress(OSError):
            f.unlink()
    for d in sorted(set(folders), key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            d.rmdir()  # (only empty: anything else there stays)


# ------------------------------------------------------------------ housekeeping
def collect_garbage(ws: WorkspaceCore, *, age: float | None = None) -> dict[str, int]:
    """Drop what nothing refers to: cached rankings of removed inputs, unreferenced artifacts, their files.

    Two transactions keep the rule "every artifact row has its file" true at every moment:
    the first drops stale rankings and unreferenced artifact rows; the second, holding the
    write lock (so no writer records a file meanwhile), removes the object files no row
    names and leftover temporary files. Files younger than ``age`` seconds (default one
    hour) are kept: another process may just have written them. Returns counts.
    """
    if age is not None and (isinstance(age, bool) or not isinstance(age, (int, float)) or not age >= 0):
        raise OptionError(f"gc's age is a number of seconds >= 0 (files younger are kept), got {age!r}")
    limit = GC_AGE if age is None else float(age)

    def rows(conn: sqlite3.Connection) -> dict[str, int]:
        live = {r[0] for r in conn.execute(
            "SELECT artifact FROM runs UNION SELECT ids_artifact FROM runs UNION SELECT query_artifact FROM runs "
            "UNION SELECT query_ids_artifact FROM runs UNION SELECT artifact FROM ground_truth_parts "
            "UNION SELECT ids_artifact FROM ground_truth_parts") if r[0]}
        stale = [k for k, inputs in conn.execute("SELECT key, inputs FROM derived")
                 if not set(json.loads(inputs)) <= live]
        conn.executemany("DELETE FROM derived WHERE key = ?", [(k,) for k in stale])
        referenced = {r[0] for r in conn.execute(_REFERENCES) if r[0]}
        dropped = [s for (s,) in conn.execute("SELECT sha256 FROM artifacts").fetchall() if s not in referenced]
        conn.executemany("DELETE FROM artifacts WHERE sha256 = ?", [(s,) for s in dropped])
        return {"rankings": len(stale), "artifacts": len(dropped)}

    def files(conn: sqlite3.Connection) -> int:
        known = {r[0] for r in conn.execute("SELECT sha256 FROM artifacts")}
        return len(ws.objects.gc(known, age=limit))

    out = ws.catalogue.write(rows, bump=False)
    out["files"] = ws.catalogue.write(files, bump=False)
    return out


def verify_artifacts(ws: WorkspaceCore) -> list[str]:
    """Check every artifact of the catalogue against its SHA-256; one message per missing or damaged file."""
    rows = ws.catalogue.read(lambda c: c.execute("SELECT sha256, ext, kind FROM artifacts").fetchall())
    problems = []
    for sha, ext, kind in rows:
        try:
            ws.objects.verified(sha, ext, what=f"{kind} artifact")
        except CorruptArtifactError as e:
            problems.append(str(e))
    return problems

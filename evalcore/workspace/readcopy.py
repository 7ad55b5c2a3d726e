"""A private copy of a catalogue that sits in a folder this process cannot write.

SQLite cannot read a WAL-mode database there in general: a read-only connection needs the
``-shm`` file (the WAL's index), and where it is missing (a folder copied or unpacked without it)
it cannot be created; ``immutable=1`` reads the database file alone and would silently show the
state before the changes still in the ``-wal`` file (the runs a killed writer or a copy made while a
writer had the workspace open left there). So the catalogue (``catalogue.sqlite`` and its
``-wal``, never its ``-shm``) is copied into a private temporary folder of this process and read
there; SQLite rebuilds the WAL's index in that copy, exactly as a writable open of the folder would
(crash recovery: every transaction committed in the WAL, nothing half-written). The artifacts are
read in place: they are content-addressed and never change.

* **Consistent.** The two files are copied, then read again: the copy is kept only when their
  ``stat`` (device, inode, size, times) stayed the same and the second reading has the same SHA-256
  as the copy, so it is the pair of files as they were at one moment (a writer elsewhere may be
  appending to the WAL or checkpointing it into the database meanwhile); otherwise the copy is made
  again, up to :data:`ATTEMPTS` times, then :class:`~evalcore.errors.WorkspaceError`.
* **Shared and fresh.** One copy per (catalogue, state of its two files) in a process
  (:func:`read_copy`): a dashboard that reopens the workspace on each refresh, or many threads,
  read one copy; the catalogue compares :func:`source_state` before each transaction and reads a
  new copy once the files changed (a writer elsewhere), so its change counter moves as for any
  workspace.
* **Upgraded.** A catalogue written by an older evalcore is migrated in the copy, as a writable open of the
  folder would migrate it (the catalogue passes :func:`.store.upgrade_copy` as ``prepare``): the folder reads as
  the upgraded workspace, and a copy of it (``copy_to``, the dashboard's) is current.
* **Removed.** A copy lives while a connection or an open catalogue uses it, and its folder is
  removed when the last one lets go (closed, garbage-collected) or the process ends; a process
  killed before that leaves its folder, which the next process that makes a copy removes (each
  folder holds a file lock of its owner while it lives).

Why not SQLite alone (its documentation, and SQLite 3.40 run without write permission on the folder):
``mode=ro`` reads the WAL when the ``-shm`` file exists, even one that cannot be written (since 3.22
SQLite then builds the WAL's index in its own memory: ``SQLITE_READONLY_CANTINIT``), but fails
("unable to open database file") when it is missing, and a folder copied or unpacked without it is
one of the cases here; ``nolock=1`` disables WAL altogether (same error); ``locking_mode=EXCLUSIVE``
needs no ``-shm`` but an exclusive lock on the database file, which a read-only file refuses ("disk
I/O error"); ``immutable=1`` ignores the WAL. The copy works the same in every case, takes no lock on
someone else's files (locks are where network file systems fail SQLite), and follows a writer
elsewhere. A change that leaves both files' size and times as they were (a file system with coarse
times, an NFS client's cached attributes) is seen at the next change that moves them; every copy is
a consistent state.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import WorkspaceError

try:  # pragma: no cover - the platform decides
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["ReadCopy", "read_copy", "source_state", "wal_of", "wal_may_hold_changes", "PREFIX", "ATTEMPTS"]

#: Name prefix of the private folders (in :func:`tempfile.gettempdir`).
PREFIX = "evalcore-catalogue-"
#: How many times a copy is made before a catalogue that keeps changing is an error.
ATTEMPTS = 25
_OWNER = "owner.lock"
_CHUNK = 1 << 20
_MAX_PAUSE = 0.2

def wal_of(db: Path) -> Path:
    """The WAL file of the SQLite database ``db``."""
    return db.with_name(db.name + "-wal")


def _file_state(path: Path) -> tuple[int, int, int, int, int] | None:
    """(device, inode, size, mtime in ns, ctime in ns) of a file, None when it is absent."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def source_state(db: Path) -> tuple:
    """The state of the catalogue ``db`` and its WAL (two :func:`os.stat` calls): equal states, same files."""
    return (_file_state(db), _file_state(wal_of(db)))


def wal_may_hold_changes(db: Path) -> bool:
    """Whether the WAL of ``db`` exists and is not empty (it may hold changes not yet in ``db``)."""
    state = _file_state(wal_of(db))
    return state is not None and state[2] > 0


class ReadCopy:
    """One private copy: ``path`` is the copied catalogue, ``state`` the :func:`source_state` it was copied at.

    Its folder is removed when the object is garbage-collected or the process ends (see the module docstring).
    """

    def __init__(self, source: Path, folder: Path, state: tuple, owner_fd: int | None) -> None:
        self.source = source
        self.folder = folder
        self.path = folder / source.name
        self.state = state
        self._finalizer = weakref.finalize(self, _remove, str(folder), owner_fd, os.getpid())

    @property
    def alive(self) -> bool:
        """Whether its folder has not been removed yet."""
        return self._finalizer.alive

    def __repr__(self) -> str:
        return f"ReadCopy({str(self.source)!r} -> {str(self.folder)!r})"


def _remove(folder: str, owner_fd: int | None, pid: int) -> None:
    if os.getpid() != pid:  # pragma: no cover - a forked child: the copy is its parent's
        return
    shutil.rmtree(folder, ignore_errors=True)  # before the owner lock goes: no sweeper takes it meanwhile
    if owner_fd is not None:
        try:
            os.close(owner_fd)
        except OSError:  # pragma: no cover - closed already
            pass


_copies: weakref.WeakValueDictionary[tuple[str, tuple, Any], ReadCopy] = weakref.WeakValueDictionary()
_guard = threading.Lock()
_swept = False


def read_copy(db: Path, *, prepare: Callable[[Path, Path], object] | None = None,
              _between: Callable[[], object] | None = None) -> ReadCopy:
    """A consistent private copy of the catalogue ``db`` as it is now (shared while its files do not change).

    ``prepare``, when given, is called as ``prepare(copied catalogue, db)`` once the copy is checked and before
    anyone reads it (the catalogue brings a copy written by an older evalcore to its schema there); copies made
    with and without it are not shared. Raises :class:`~evalcore.errors.WorkspaceError` (naming the workspace
    folder) when the catalogue kept changing through :data:`ATTEMPTS` copies, and :class:`OSError` when no
    private folder can be made or written (a caller may then read the folder in place). ``_between``, when
    given, is called after each copy and before it is checked (tests change the catalogue there).
    """
    db = Path(os.path.realpath(db))
    with _guard:
        found = _copies.get((str(db), source_state(db), prepare))
        if found is not None and found.alive:
            return found
        copy = _make(db, prepare=prepare, between=_between)
        _copies[(str(db), copy.state, prepare)] = copy
        return copy


def _make(db: Path, *, prepare: Callable[[Path, Path], object] | None,
          between: Callable[[], object] | None) -> ReadCopy:
    global _swept
    if not _swept:
        _swept = True
        _sweep_dead()
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    owner_fd = None
    try:
        owner_fd = _own(folder)
        pause = 0.002
        for _ in range(ATTEMPTS):
            copied = _copy_once(db, folder)
            if between is not None:
                between()
            if copied is not None and _unchanged(db, *copied):
                if prepare is not None:
                    prepare(folder / db.name, db)
                return ReadCopy(db, folder, copied[0], owner_fd)
            time.sleep(pause)  # a writer is busy: let it finish its transaction or checkpoint
            pause = min(pause * 2, _MAX_PAUSE)
        raise WorkspaceError(f"the catalogue kept changing while it was copied to be read ({ATTEMPTS} tries: "
                             "another process is writing it); try again", file=str(db.parent))
    except BaseException:
        _remove(str(folder), owner_fd, os.getpid())
        raise


def _copy_once(db: Path, folder: Path) -> tuple[tuple, tuple] | None:
    """Copy the catalogue and its WAL into ``folder``: the state before and the SHA-256 of each file copied (None:
    absent); None when the files changed meanwhile."""
    before = source_state(db)
    if before[0] is None:
        raise WorkspaceError("no workspace here (no catalogue.sqlite)", file=str(db.parent))
    for name in (db.name + "-shm", db.name + "-wal"):
        (folder / name).unlink(missing_ok=True)
    digests = tuple(_copy_file(src, folder / src.name) for src in (db, wal_of(db)))
    if digests[0] is None or source_state(db) != before:
        return None  # removed or changed meanwhile
    return before, digests


def _copy_file(src: Path, dest: Path) -> str | None:
    """Copy ``src`` to ``dest``; the SHA-256 of what was copied (None: ``src`` is absent)."""
    digest = hashlib.sha256()
    fin = _open_source(src)
    if fin is None:
        return None
    with fin, open(dest, "wb") as fout:
        while chunk := _read(fin, src):
            digest.update(chunk)
            fout.write(chunk)
    return digest.hexdigest()


def _digest(path: Path) -> str | None:
    """The SHA-256 of the source file ``path`` read again (None: absent)."""
    digest = hashlib.sha256()
    f = _open_source(path)
    if f is None:
        return None
    with f:
        while chunk := _read(f, path):
            digest.update(chunk)
    return digest.hexdigest()


def _open_source(src: Path) -> BinaryIO | None:
    """``src`` opened for reading; None when it is absent; :class:`WorkspaceError` naming it when it cannot be read
    (so that it is not taken for a temporary folder that cannot be written)."""
    try:
        return open(src, "rb")  # noqa: SIM115 - the caller closes it
    except FileNotFoundError:
        return None
    except OSError as e:
        raise WorkspaceError(f"cannot read {src.name} ({e.strerror or e})", file=str(src.parent)) from None


def _read(f: BinaryIO, path: Path) -> bytes:
    try:
        return f.read(_CHUNK)
    except OSError as e:
        raise WorkspaceError(f"cannot read {path.name} ({e.strerror or e})", file=str(path.parent)) from None


def _unchanged(db: Path, state: tuple, digests: tuple) -> bool:
    """Whether the source files still are what was copied: the same bytes read again, and the same state."""
    return tuple(_digest(src) for src in (db, wal_of(db))) == digests and source_state(db) == state


def _own(folder: Path) -> int | None:
    """Hold the folder's owner lock (the kernel releases it when this process ends, ``kill -9`` included).

    Locked under another name, then renamed: a sweeping process never finds it unlocked."""
    if fcntl is None:  # pragma: no cover - Windows: no sweeping of dead processes' folders
        return None
    fd = os.open(folder / (_OWNER + ".new"), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:  # pragma: no cover - a file system without flock: the folder is never swept
        os.close(fd)
        return None
    os.rename(folder / (_OWNER + ".new"), folder / _OWNER)
    return fd


def _sweep_dead() -> None:
    """Remove the private folders of processes that ended without removing theirs (killed)."""
    if fcntl is None:  # pragma: no cover - Windows
        return
    try:
        entries = list(Path(tempfile.gettempdir()).glob(PREFIX + "*"))
    except OSError:
        return
    for folder in entries:
        try:
            fd = os.open(folder / _OWNER, os.O_RDWR)
        except OSError:  # another user's, being made, or not ours at all
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # its owner is alive
            os.close(fd)
            continue
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)


def _forget_after_fork() -> None:  # pragma: no cover - runs in forked children
    global _guard
    _guard = threading.Lock()
    _copies.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)

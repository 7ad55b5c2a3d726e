"""Content-addressed artifact files of a workspace: atomic writes, hash-checked reads, caches.

Layout: ``DIR/objects/<first two hex digits>/<sha256>.<ext>`` where ``sha256`` is the
SHA-256 of the file's bytes; temporary files go to ``DIR/tmp/`` (same filesystem, so
the final rename is atomic).

* **Write** (:meth:`ObjectStore.put`): the file is written to ``tmp/``, flushed and
  ``fsync``-ed, hashed, then ``os.replace``-d to its final name (the folder is
  ``fsync``-ed too). A file already there under that name is kept when its bytes still
  match (its modification time is refreshed, so :meth:`ObjectStore.gc` leaves it alone),
  and replaced when they do not (a damaged copy is repaired by writing it again), or when a
  concurrent gc removes it before it is held. The file written is held (a shared ``flock``,
  :func:`held_temporary`) from its creation in ``tmp/`` until the catalogue records it
  (:meth:`ObjectStore.holding`, around a commit), and so is a file kept: gc never removes a
  file a live writer holds.
  A process killed at any moment leaves at worst an orphan in ``tmp/`` or ``objects/``.
* **Read** (:meth:`ObjectStore.verified`): the file's SHA-256 is checked the first time
  it is read in a process (the check is remembered by path, size, modification time and
  inode, so a file changed later is checked again); a missing or damaged file raises
  :class:`~evalcore.errors.CorruptArtifactError` naming what it belongs to and its path.
* **Cache** (:func:`cached`): parsed objects (runs, qrels, memory-mapped embeddings) are
  kept once per process by SHA-256 — the same bytes give the same object whichever
  workspace or session asks, so N browser tabs on one workspace cost one copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CorruptArtifactError
from .writelock import folder_gone, storage_errors

try:  # pragma: no cover - the platform decides
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["ObjectStore", "Stored", "sha256_file", "cached", "clear_cache", "held_temporary", "peek", "CACHE_ENTRIES", "GC_AGE"]

_CHUNK = 1 << 20
#: Parsed artifacts kept per process (least recently used dropped first).
CACHE_ENTRIES = 64
#: Seconds an unreferenced file must be old before :meth:`ObjectStore.gc` removes it.
GC_AGE = 3600.0

_lock = threading.RLock()
_verified: set[tuple[str, int, int, int]] = set()
_parsed: OrderedDict[tuple[str, str], Any] = OrderedDict()


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 hex digest of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _fsync_dir(path: Path) -> None:
    if os.name != "posix":  # pragma: no cover - directories cannot be opened on Windows
        return
    fd = os.open(str(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _stat_key(path: Path) -> tuple[str, int, int, int]:
    st = path.stat()
    return (str(path), st.st_size, st.st_mtime_ns, st.st_ino)


@dataclass(frozen=True)
class Stored:
    """An artifact written to the object store: its hash, kind, extension and size in bytes."""

    sha256: str
    kind: str
    ext: str
    size: int


class ObjectStore:
    """The ``objects/`` and ``tmp/`` folders of one workspace (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.objects = self.root / "objects"
        self.tmp = self.root / "tmp"
        self._holds = threading.local()  # the files held by this thread's commit (:meth:`holding`)

    def path(self, sha: str, ext: str) -> Path:
        """Where the artifact with this hash and extension lives."""
        return self.objects / sha[:2] / f"{sha}.{ext}"

    def relative(self, sha: str, ext: str) -> str:
        """The artifact's path relative to the workspace folder (for messages)."""
        return f"objects/{sha[:2]}/{sha}.{ext}"

    # ------------------------------------------------------------------ writing
    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Inside, every file :meth:`put` stores stays held (a shared ``flock`` on it) until the block ends, so that
        no gc removes it before the catalogue records it (:meth:`~.core.WorkspaceCore.commit` holds its staged
        files through its transaction). Outside such a block, :meth:`put` lets go of the file when it returns."""
        outer = getattr(self._holds, "fds", None)
        self._holds.fds = fds = []
        try:
            yield
        finally:
            self._holds.fds = outer
            for fd in fds:
                os.close(fd)

    def _keep_hold(self, fd: int) -> None:
        fds = getattr(self._holds, "fds", None)
        if fds is None:
            os.close(fd)
        else:
            fds.append(fd)

    def put(self, write: Callable[[Path], None], *, kind: str, ext: str) -> Stored:
        """Write an artifact atomically: ``write(tmp_path)`` creates the file, then it is hashed and moved.

        Returns where it is (:class:`Stored`); the caller records it in the catalogue (inside :meth:`holding`: the
        file is held until then).
        """
        if not self.root.is_dir():  # never re-create it: the catalogue went with the folder (a rename)
            raise folder_gone(self.root)
        with storage_errors(self.root):  # a full disk, a read-only folder: one line
            self.tmp.mkdir(exist_ok=True)
            with _held(self.tmp, f".{ext}.part") as (tmp, fd):
                write(tmp)
                with open(tmp, "rb+") as fh:
                    fh.flush()
                    os.fsync(fh.fileno())
                sha = sha256_file(tmp)
                size = tmp.stat().st_size
                dest = self.path(sha, ext)
                hold = _hold_existing(dest, sha, size)
                if hold is None:
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(tmp, dest)
                    _fsync_dir(dest.parent)
                    hold = os.dup(fd)  # the same open file: its hold goes on with the file renamed
                self._keep_hold(hold)
            try:
                key = _stat_key(dest)
            except FileNotFoundError:  # a gc removed it meanwhile (held by nobody): the commit writes it again
                key = None
            if key is not None:
                with _lock:
                    _verified.add(key)
        return Stored(sha, kind, ext, size)

    def put_bytes(self, data: bytes, *, kind: str, ext: str) -> Stored:
        """:meth:`put` of bytes in memory."""
        return self.put(lambda p: p.write_bytes(data), kind=kind, ext=ext)

    # ------------------------------------------------------------------ reading
    def verified(self, sha: str, ext: str, *, what: str) -> Path:
        """The artifact's path after checking its SHA-256 (once per process and file state).

        Raises
        ------
        CorruptArtifactError
            The file is missing, or its bytes do not hash to ``sha`` — the message names
            ``what`` (e.g. ``run 'bm25'``) and the file.
        """
        path = self.path(sha, ext)
        rel = self.relative(sha, ext)
        try:
            key = _stat_key(path)
        except FileNotFoundError:
            raise CorruptArtifactError(f"{what}: its stored file {rel} is missing", file=str(path)) from None
        with _lock:
            if key in _verified:
                return path
        got = sha256_file(path)
        if got != sha:
            raise CorruptArtifactError(
                f"{what}: its stored file {rel} is damaged (SHA-256 {got[:16]}..., expected {sha[:16]}...)",
                file=str(path))
        with _lock:
            _verified.add(key)
        return path

    def load(self, sha: str, ext: str, *, what: str, parse: Callable[[Path], Any], kind: str) -> Any:
        """``parse(path)`` of a verified artifact, cached per process by (kind, SHA-256)."""
        path = self.verified(sha, ext, what=what)
        return cached(kind, sha, lambda: parse(path))

    # ------------------------------------------------------------------ housekeeping
    def files(self) -> dict[str, Path]:
        """Every object file by its name (``<sha256>.<ext>``)."""
        if not self.objects.is_dir():
            return {}
        return {p.name: p for p in self.objects.glob("*/*") if p.is_file()}

    def gc(self, referenced: set[str], *, age: float = GC_AGE) -> list[Path]:
        """Remove object files whose hash is not in ``referenced`` and temporary files, both older than ``age`` s.

        Returns the removed files. Fresh files are kept: another process may be about
        to record them (see :meth:`put`); so is a temporary file a live writer holds
        (:func:`held_temporary`), whatever its age.
        """
        cutoff = time.time() - age
        removed = []
        candidates = [p for name, p in self.files().items() if name.split(".", 1)[0] not in referenced]
        if self.tmp.is_dir():
            candidates += [p for p in self.tmp.iterdir() if p.is_file()]
        with storage_errors(self.root):  # a read-only folder: one line (the files it had removed stay removed)
            for p in candidates:
                if _remove_unless_held(p, cutoff):
                    removed.append(p)
        return removed


def _hold_existing(dest: Path, sha: str, size: int) -> int | None:
    """A descriptor holding ``dest`` (a shared ``flock``) when it already holds these bytes, its modification time
    refreshed (recently used: gc keeps it); None when it is missing, other bytes, or removed by a concurrent gc (an
    old unreferenced copy) before it was held: the caller then renames its own file there."""
    try:
        fd = os.open(dest, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        _lock_shared(fd)
        if os.stat(dest).st_ino != os.fstat(fd).st_ino or os.fstat(fd).st_size != size or sha256_file(dest) != sha:
            raise FileNotFoundError  # (removed, or replaced, before it was held; or other bytes)
        os.utime(dest)
    except FileNotFoundError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lock_shared(fd: int) -> None:
    """A shared ``flock`` on ``fd``: no gc removes its file while it is held (waits for a gc checking it right now)."""
    if fcntl is not None:
        with contextlib.suppress(OSError):  # (a file system without flock: the age alone protects it)
            fcntl.flock(fd, fcntl.LOCK_SH)


@contextlib.contextmanager
def _held(folder: Path, suffix: str, *, prefix: str = "") -> Iterator[tuple[Path, int]]:
    """:func:`held_temporary`'s file and the descriptor holding it."""
    while True:
        path = folder / f"{prefix}{uuid.uuid4().hex}{suffix}"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
        _lock_shared(fd)
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:  # a gc took it between its creation and the hold: another name
            pass
        os.close(fd)
    try:
        yield path, fd
    finally:
        os.close(fd)  # (releases the hold, unless a duplicate of it is kept)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def held_temporary(folder: Path, suffix: str, *, prefix: str = "") -> Iterator[Path]:
    """A new file name in ``folder`` (``<prefix><random hex><suffix>``) whose file exists and is held (a shared
    ``flock``) until the block ends; then it is removed when still there.

    :meth:`ObjectStore.gc` never removes a held file, whatever its age, so a gc (``age=0``, or a write slower than
    its age) cannot take the file a live writer is writing; a killed writer's hold is released by the kernel, and its
    leftover is removed by the next gc. The block may write the file again by its name (the same inode: the hold
    stays). Where ``flock`` is missing (Windows) the file is only created."""
    with _held(folder, suffix, prefix=prefix) as (path, _fd):
        yield path


def _remove_unless_held(path: Path, cutoff: float) -> bool:
    """Remove ``path`` when it is older than ``cutoff`` (a time) and no process holds it (:func:`held_temporary`);
    whether it was removed."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except PermissionError:  # a file this user cannot read (nobody holds it through this user): by its age alone
        try:
            if path.stat().st_mtime >= cutoff:
                return False
            path.unlink()
            return True
        except FileNotFoundError:
            return False
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # a live writer's
            except OSError:  # pragma: no cover - a file system without flock: the age alone decides
                pass
        if os.fstat(fd).st_mtime >= cutoff:
            return False
        path.unlink()
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(fd)


def cached(kind: str, key: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per process for (kind, key) (bounded LRU, :data:`CACHE_ENTRIES`).

    Artifacts are keyed by their SHA-256: :meth:`ObjectStore.load` has just verified that
    the file holds those bytes, so one entry serves every workspace and session holding them.
    """
    full = (kind, key)
    with _lock:
        if full in _parsed:
            _parsed.move_to_end(full)
            return _parsed[full]
    value = compute()
    with _lock:
        _parsed[full] = value
        _parsed.move_to_end(full)
        while len(_parsed) > CACHE_ENTRIES:
            _parsed.popitem(last=False)
    return value


def peek(kind: str, key: str) -> Any:
    """What :func:`cached` holds for (kind, key), or None (nothing computed)."""
    full = (kind, key)
    with _lock:
        if full in _parsed:
            _parsed.move_to_end(full)
            return _parsed[full]
    return None


def clear_cache() -> None:
    """Forget every parsed artifact and every hash check of this process."""
    with _lock:
        _parsed.clear()
        _verified.clear()

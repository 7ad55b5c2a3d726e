"""One writer at a time across processes: an advisory lock on ``DIR/writer.lock``.

Every catalogue transaction that changes a workspace holds it
(:meth:`~.store.Catalogue.write`), and a caller that must check what the workspace
holds and then write without another process changing it in between holds it across
both (:meth:`~.api.Workspace.exclusive`; ``evaluate --workspace`` does). SQLite alone
serialises single transactions, not such a check-then-write sequence.

* Re-entrant within a process: threads take turns, and the thread holding the lock may
  take it again (a change made inside :meth:`~.api.Workspace.exclusive`).
* ``fcntl.flock``: the kernel releases it when the holding process ends, ``kill -9``
  included, so a killed writer never leaves the workspace locked.
* Waiting: polls with a growing pause (at most 0.25 s) and gives up after ``deadline``
  seconds with a :class:`WriterBusy` (a :class:`~evalcore.errors.WorkspaceError`) naming the holder's pid;
  a thread waiting for another thread of its process gives up after ``deadline`` seconds too. Inside
  :func:`while_waiting`, a hook is called at every poll with who holds the lock and the seconds waited (a
  dashboard shows it, and stops the wait by raising from it).
* Where ``fcntl`` is missing (Windows) or the filesystem refuses ``flock``, it only
  serialises the threads of this process; the store's ``replace=False`` checks inside
  each transaction still refuse to overwrite a run another process added meanwhile.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import WorkspaceError, WorkspaceStorageError

try:  # pragma: no cover - the platform decides
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["writer_lock", "WriterBusy", "while_waiting", "WaitHook", "LOCK_NAME", "folder_gone", "storage_code", "storage_full", "storage_reason", "storage_error",
           "storage_errors"]

#: The lock file's name inside a workspace folder.
LOCK_NAME = "writer.lock"

_MAX_PAUSE = 0.25

#: A hook called while a change waits for the writer lock: ``hook(holder, waited)``, ``holder`` naming who holds it
#: (``"another process (pid 123)"``, ``"another thread of this process"``), ``waited`` the seconds waited so far.
WaitHook = Callable[[str, float], None]
_hook: contextvars.ContextVar[WaitHook | None] = contextvars.ContextVar("evalcore_writer_wait_hook", default=None)


@contextlib.contextmanager
def while_waiting(hook: WaitHook) -> Iterator[None]:
    """Inside, every wait of this thread for the writer lock held elsewhere calls ``hook(holder, waited)`` at each
    poll (at least every 0.25 s; for another process, after each pause and before the next try of the lock): a
    caller can show that another process is writing, and stop the wait by raising from the hook (its exception
    propagates; nothing is taken, nothing written: a wait stopped while it paused never takes the lock). The wait's
    own deadline still applies (then :class:`WriterBusy`)."""
    token = _hook.set(hook)
    try:
        yield
    finally:
        _hook.reset(token)


def _waiting(holder: str, waited: float) -> None:
    hook = _hook.get()
    if hook is not None:
        hook(holder, waited)


class WriterBusy(WorkspaceError):
    """Another process held the writer lock for longer than the caller would wait (a :class:`WorkspaceError`);
    ``holder`` names it (``"another process (pid 123)"``, ``"another thread of this process"``)."""

    holder: str = "another process"


class _PathLock:
    """The lock of one workspace folder in this process: a re-entrant thread lock plus the file lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.threads = threading.RLock()
        self.depth = 0
        self.fd: int | None = None

    def acquire(self, deadline: float) -> None:
        if not self._threads_acquire(max(float(deadline), 0.0)):  # another thread of this process holds it
            busy = WriterBusy(f"another thread of this process has been changing this workspace for more than "
                              f"{deadline:.0f} s; try again when it is done", file=str(self.path.parent))
            busy.holder = "another thread of this process"
            raise busy
        try:
            if self.depth == 0:
                self.fd = _take(self.path, deadline)
            self.depth += 1
        except BaseException:
            self.threads.release()
            raise

    def _threads_acquire(self, deadline: float) -> bool:
        """The thread lock within ``deadline`` seconds; while waiting, :func:`while_waiting`'s hook at each poll."""
        if self.threads.acquire(blocking=False):
            return True
        if _hook.get() is None:
            return self.threads.acquire(timeout=deadline)
        start = time.monotonic()
        while True:
            waited = time.monotonic() - start
            if waited > deadline:
                return False
            _waiting("another thread of this process", waited)
            if self.threads.acquire(timeout=min(_MAX_PAUSE, max(deadline - waited, 0.0))):
                return True

    def release(self) -> None:
        try:
            self.depth -= 1
            if self.depth == 0 and self.fd is not None:
                fd, self.fd = self.fd, None
                try:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                finally:
                    os.close(fd)
        finally:
            self.threads.release()


def _holder(fd: int) -> str:
    """' (pid N)' from the lock file, '' when it cannot be read."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""


def folder_gone(folder: Path) -> WorkspaceError:
    """The error of a write into a workspace whose folder was renamed or removed while this process had it open
    (its catalogue connection follows a rename; files written under the old name would be lost to it)."""
    return WorkspaceError(f"the workspace folder {Path(folder).name!r} is gone (renamed or removed while this "
                          "process had it open): nothing was written; open the workspace again by its new name")


#: errno values of a folder that cannot take a write: the disk (or quota) is full, or it is read-only here
_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}
_DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}


def storage_code(error: OSError) -> int | None:
    """The errno of a write that failed for lack of space (``ENOSPC``, ``EDQUOT``, ``EFBIG``) or of permission
    (``EACCES``, ``EPERM``, ``EROFS``), else None. pyarrow's errors carry the errno only in their text."""
    code = error.errno
    if code is None:
        text = str(error)
        code = next((c for c in (*_FULL, *_DENIED) if f"[errno {c}]" in text.lower()), None)
    return code if code in _FULL or code in _DENIED else None


def storage_full(code: int) -> bool:
    """Whether :func:`storage_code`'s errno says the disk (or the quota) is full, rather than a lack of permission."""
    return code in _FULL


def storage_reason(code: int) -> str:
    """Why a folder took no write, from :func:`storage_code`'s errno."""
    if storage_full(code):
        return "no space left on its disk (or the disk quota is used up)"
    return ("its folder or files are read-only for this user" if code != errno.EROFS
            else "its file system is mounted read-only")


def copy_hint(folder: Path) -> str:
    """How to copy the workspace ``folder`` into one that can be changed (the command, the dashboard, Python)."""
    return (f"evalcore workspace copy {shlex.quote(str(folder))} DEST (the dashboard's copy action; in Python: "
            "Workspace.copy_to)")


def storage_error(error: OSError, folder: Path) -> WorkspaceStorageError | None:
    """The one-line error of a write into the workspace ``folder`` that failed for lack of space or of
    permission (None for any other ``OSError``); its ``errno`` is the failed write's. A read-only folder's names
    the command that copies it (``evalcore workspace copy``), the dashboard's copy and :meth:`copy_to`."""
    code = storage_code(error)
    if code is None:
        return None
    hint = ("free some space and try again" if storage_full(code)
            else f"open it with read_only=True to read it, or copy it to change it: {copy_hint(folder)}")
    out = WorkspaceStorageError(f"cannot write to the workspace: {storage_reason(code)}; nothing was changed, what "
                                f"it held is intact; {hint}", file=str(folder))
    out.errno = code
    return out


@contextlib.contextmanager
def storage_errors(folder: Path) -> Iterator[None]:
    """Inside, an :class:`OSError` for lack of space or permission becomes :func:`storage_error`'s error."""
    try:
        yield
    except OSError as e:
        if isinstance(e, WorkspaceError):
            raise
        mapped = storage_error(e, folder)
        if mapped is None:
            raise
        raise mapped from e


def _take(path: Path, deadline: float) -> int | None:
    """The exclusive file lock (its descriptor), None where file locks are not available."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except FileNotFoundError:  # the workspace folder was renamed or removed meanwhile
        raise folder_gone(path.parent) from None
    except OSError as e:  # a read-only folder or file system, a full disk
        mapped = storage_error(e, path.parent)
        if mapped is None:
            raise
        raise mapped from None
    start, pause = time.monotonic(), 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            waited = time.monotonic() - start
            if waited > deadline:
                holder = _holder(fd)
                os.close(fd)
                busy = WriterBusy(f"another process{holder} has been changing this workspace for more than "
                                  f"{deadline:.0f} s; try again when it is done", file=str(path.parent))
                busy.holder = f"another process{holder}"
                raise busy from None
            time.sleep(pause)
            pause = min(pause * 2, _MAX_PAUSE)
            try:  # (after the pause, before the next try: a wait stopped meanwhile never takes the lock)
                _waiting(f"another process{_holder(fd)}", time.monotonic() - start)
            except BaseException:  # the hook stopped the wait
                os.close(fd)
                raise
        except OSError:  # pragma: no cover - a filesystem without flock (some network mounts)
            os.close(fd)
            return None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except OSError:  # pragma: no cover - the pid is only a hint for the message above
        pass
    return fd


_locks: dict[str, _PathLock] = {}
_guard = threading.Lock()


def _lock_of(folder: Path) -> _PathLock:
    key = os.path.realpath(folder)
    with _guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = _PathLock(Path(key) / LOCK_NAME)
        return lock


def _forget_after_fork() -> None:  # pragma: no cover - runs in forked children
    global _guard
    _locks.clear()
    _guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


@contextlib.contextmanager
def writer_lock(folder: str | os.PathLike, *, deadline: float) -> Iterator[None]:
    """Hold the writer lock of the workspace folder ``folder`` (see the module docstring)."""
    lock = _lock_of(Path(folder))
    lock.acquire(deadline)
    try:
        yield
    finally:
        lock.release()


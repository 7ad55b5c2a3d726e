"""The SQLite catalogue of a workspace: schema, migrations, transactions, busy retries.

One file, ``DIR/catalogue.sqlite`` (stdlib :mod:`sqlite3`), in WAL mode with foreign keys
on, so many readers and one writer share it across processes:

* every change is ONE transaction opened with ``BEGIN IMMEDIATE`` (the write lock is
  taken at the start, so a transaction never fails half-way on a lock) that also bumps
  the change counter :attr:`Catalogue.generation` when it changes what a reader shows;
* reads run in a deferred transaction (one consistent snapshot of the catalogue);
* ``busy_timeout`` (30 s) plus a retry loop with exponential backoff around each
  transaction: ``database is locked`` / ``busy`` never reaches a user; after
  :data:`BUSY_DEADLINE` seconds of waiting a :class:`~evalcore.errors.WorkspaceError`
  says the workspace is busy;
* ``synchronous=FULL``: a committed change survives a crash of the process or the machine;
* every write holds the workspace's writer lock (:mod:`.writelock`), which a caller may
  also hold across a check and the writes that depend on it;
* one connection per thread and process (sqlite3 objects never cross threads; Streamlit
  runs each session in its own thread; a forked child opens its own);
* a read-only catalogue in a folder this process cannot write (a read-only mount, an
  archive, someone else's folder) is read through a private copy of it and its WAL
  (:mod:`.readcopy`), made again once those files change: SQLite itself cannot read the
  changes still in the WAL there. A catalogue of an older schema is upgraded in that copy
  (:func:`upgrade_copy`), as a writable open would upgrade it in place.

Schema version: ``PRAGMA user_version``. :data:`MIGRATIONS` lists the steps from version
0 (an empty file); opening a catalogue written by a newer evalcore raises
:class:`~evalcore.errors.SchemaVersionError` before anything is written. An older one is
migrated when it is opened for writing; opened read-only in a folder this process cannot
write, it is read upgraded through its private copy; opened with ``read_only=True`` where it
could be written, it is an error asking to open it once for writing.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from ..errors import ReadOnlyWorkspaceError, SchemaVersionError, WorkspaceError
from .readcopy import source_state

__all__ = ["Catalogue", "NoChange", "SCHEMA_VERSION", "MIGRATIONS", "BUSY_DEADLINE", "busy_deadline", "now", "dumps", "loads", "upgrade_copy"]

T = TypeVar("T")

#: Seconds a transaction keeps retrying on a locked database before giving up.
BUSY_DEADLINE = 120.0


def busy_deadline(wait: float | None) -> float:
    """``wait``, or when None the module's :data:`BUSY_DEADLINE` as it is now (a default argument would freeze
    the value it had at import time)."""
    return BUSY_DEADLINE if wait is None else float(wait)
_BUSY_TIMEOUT_MS = 30_000

_SCHEMA_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value);
CREATE TABLE artifacts (
    sha256 TEXT PRIMARY KEY, kind TEXT NOT NULL, ext TEXT NOT NULL, size INTEGER NOT NULL,
    created_at TEXT NOT NULL);
CREATE TABLE ground_truths (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('qrels', 'reference')),
    source_name TEXT, source_sha256 TEXT, format TEXT, options TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL, active INTEGER NOT NULL DEFAULT 0 CHECK (active IN (0, 1)));
CREATE UNIQUE INDEX ground_truths_one_active ON ground_truths (active) WHERE active = 1;
CREATE TABLE ground_truth_parts (
    gt_id INTEGER NOT NULL REFERENCES ground_truths (id) ON DELETE CASCADE,
    position INTEGER NOT NULL, aspect TEXT,
    artifact TEXT NOT NULL REFERENCES artifacts (sha256),
    ids_artifact TEXT REFERENCES artifacts (sha256),
    n_queries INTEGER, n_rows INTEGER,
    PRIMARY KEY (gt_id, position));
CREATE TABLE runs (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, position INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('ranked', 'embedding', 'fused')),
    model TEXT, version TEXT, step REAL, tags TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL,
    source_name TEXT, source_sha256 TEXT,
    artifact TEXT REFERENCES artifacts (sha256), ids_artifact TEXT REFERENCES artifacts (sha256),
    query_artifact TEXT REFERENCES artifacts (sha256),
    query_ids_artifact TEXT REFERENCES artifacts (sha256),
    options TEXT NOT NULL DEFAULT '{}', n_queries INTEGER, n_rows INTEGER, dim INTEGER);
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL,
    ground_truth_id INTEGER REFERENCES ground_truths (id),
    settings TEXT NOT NULL, runs TEXT NOT NULL,
    table_artifact TEXT NOT NULL REFERENCES artifacts (sha256), coverage TEXT NOT NULL);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE side_files (
    role TEXT PRIMARY KEY CHECK (role IN ('domains', 'metadata')), name TEXT, source_sha256 TEXT,
    artifact TEXT NOT NULL REFERENCES artifacts (sha256), created_at TEXT NOT NULL);
CREATE TABLE derived (
    key TEXT PRIMARY KEY, artifact TEXT NOT NULL REFERENCES artifacts (sha256),
    inputs TEXT NOT NULL DEFAULT '[]', info TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL);
INSERT INTO meta (key, value) VALUES ('generation', 0);
"""


def _migrate_to_1(conn: Any) -> None:
    conn.executescript(_SCHEMA_V1)
    conn.execute("INSERT INTO meta (key, value) VALUES ('created_at', ?)", (now(),))


def _migrate_to_2(conn: Any) -> None:
    """Version 2: a third side file, the query texts (role ``queries``); SQLite cannot change a
    CHECK constraint, so the table is rebuilt (same columns, rows kept)."""
    conn.executescript("""
CREATE TABLE side_files_v2 (
    role TEXT PRIMARY KEY CHECK (role IN ('domains', 'metadata', 'queries')), name TEXT, source_sha256 TEXT,
    artifact TEXT NOT NULL REFERENCES artifacts (sha256), created_at TEXT NOT NULL);
INSERT INTO side_files_v2 (role, name, source_sha256, artifact, created_at)
    SELECT role, name, source_sha256, artifact, created_at FROM side_files;
DROP TABLE side_files;
ALTER TABLE side_files_v2 RENAME TO side_files;
""")


#: Ordered migrations: entry i brings a catalogue from version i to version i + 1.
MIGRATIONS: tuple[Callable[[Any], None], ...] = (_migrate_to_1, _migrate_to_2)
#: The schema version this code writes.
SCHEMA_VERSION = len(MIGRATIONS)


def now() -> str:
    """The current UTC time as ISO 8601 with microseconds (``2026-05-09T07:35:25.123456+00:00``)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def dumps(value: Any) -> str:
    """Canonical JSON (sorted keys, no blanks; numpy scalars and other objects as text)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default, allow_nan=False)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return value.item()
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy array
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def loads(text: str | None, default: Any = None) -> Any:
    """Parse JSON text of a catalogue column (``default`` for NULL)."""
    return default if text is None else json.loads(text)


class NoChange(Exception):  # noqa: N818 - a signal, not an error
    """Raised inside :meth:`Catalogue.write` when nothing needs changing: the transaction is
    rolled back, :attr:`Catalogue.generation` stays, and ``write`` returns ``value``."""

    def __init__(self, value: Any = None) -> None:
        super().__init__("no change")
        self.value = value


def folder_writable(folder: Path) -> bool:
    """Whether this process may create files in ``folder`` (the WAL's files, the writer lock, artifacts)."""
    import os

    return os.access(folder, os.W_OK | os.X_OK)


def _is_busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _storage(error: sqlite3.OperationalError, folder: Path) -> WorkspaceError | None:
    """SQLite's "disk is full" / "readonly database" as the workspace's storage error (None otherwise)."""
    import errno

    from .writelock import storage_error

    text = str(error).lower()
    code = errno.ENOSPC if "disk is full" in text else errno.EACCES if "readonly database" in text else None
    return None if code is None else storage_error(OSError(code, text), folder)


class Catalogue:
    """The catalogue of one workspace folder (see the module docstring).

    Parameters
    ----------
    path : Path
        The ``catalogue.sqlite`` file.
    read_only : bool
        Refuse every write (:class:`~evalcore.errors.ReadOnlyWorkspaceError`) and open
        connections with ``PRAGMA query_only``; an old schema is then an error too.
    create : bool
        Create the file and its schema when missing (else a missing file is an error).
    """

    def __init__(self, path: Path, *, read_only: bool = False, create: bool = True) -> None:
        self.path = Path(path)
        self.read_only = bool(read_only)
        self._local = threading.local()
        if not self.path.exists() and (read_only or not create):
            raise WorkspaceError("no workspace here (no catalogue.sqlite)", file=str(self.path.parent))
        #: read through a private copy (:mod:`.readcopy`): a read-only catalogue in a folder this process cannot write
        self.detached = self.read_only and not folder_writable(self.path.parent)
        self._copy: Any = None  # the newest private copy read (kept while the catalogue is open)
        self._open_schema()

    # ------------------------------------------------------------------ connections
    def _connect(self) -> tuple[sqlite3.Connection, Any, Any]:
        """A new connection, the private copy it reads (None: the file itself) and the state it was opened at."""
        state = source_state(self.path) if self.detached else None
        uri, copy = self._target()
        try:
            conn = sqlite3.connect(uri, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=True, uri=True)
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = FULL")
            if self.read_only:
                conn.execute("PRAGMA query_only = ON")
        except sqlite3.DatabaseError as e:
            raise WorkspaceError(f"cannot open the catalogue ({e})", file=str(self.path)) from None
        return conn, copy, copy.state if copy is not None else state

    def _target(self) -> tuple[str, Any]:
        """The URI opened and the private copy behind it (None: the file itself).

        The file, or for a read-only catalogue ``mode=ro``. In a folder this process cannot write (a read-only
        mount, an archive, someone else's folder), SQLite can read a WAL-mode catalogue only when its ``-shm``
        file is there (and ``immutable=1`` would ignore the changes still in the ``-wal`` file): a private copy
        of the catalogue and its WAL is read instead (:func:`.readcopy.read_copy`). When no private copy can be
        made (no writable temporary folder) and the WAL is empty, the file is read as it is (``immutable=1``).
        """
        from .readcopy import read_copy, wal_may_hold_changes

        uri = "file:" + quote(str(self.path.resolve()))
        if not self.read_only:
            return uri + "?mode=rwc", None
        if not self.detached:
            return uri + "?mode=ro", None
        try:
            copy = read_copy(self.path, prepare=upgrade_copy)
        except OSError as e:
            if wal_may_hold_changes(self.path):
                raise WorkspaceError("this read-only folder holds changes not yet merged into the catalogue "
                                     f"(catalogue.sqlite-wal) and no private copy of it could be made to read them "
                                     f"({e.strerror or e}); set TMPDIR to a writable folder",
                                     file=str(self.path.parent)) from None
            return uri + "?mode=ro&immutable=1", None
        return "file:" + quote(str(copy.path)) + "?mode=ro", copy

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use; a forked child opens its own).

        A catalogue read through a private copy opens a new one, on a new copy, once its files changed
        (:func:`.readcopy.source_state`; checked outside transactions only)."""
        import os

        local = self._local
        conn = getattr(local, "conn", None)
        if conn is None or getattr(local, "pid", None) != os.getpid() or (
                self.detached and not conn.in_transaction and local.state != source_state(self.path)):
            if conn is not None and getattr(local, "pid", None) == os.getpid():
                conn.close()
            local.conn = local.copy = None  # so that a failed reopening is tried again, not the closed one used
            conn, copy, state = self._connect()
            local.conn, local.pid, local.copy, local.state = conn, os.getpid(), copy, state
            if copy is not None:
                self._copy = copy
        return conn

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends); a private copy nothing
        reads any more is removed."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
        self._local.copy = None
        self._copy = None

    # ------------------------------------------------------------------ transactions
    def _retry(self, body: Callable[[], T]) -> T:
        deadline = time.monotonic() + BUSY_DEADLINE
        delay = 0.005
        while True:
            try:
                return body()
            except sqlite3.OperationalError as e:
                if not _is_busy(e):
                    raise _storage(e, self.path.parent) or WorkspaceError(f"catalogue error: {e}",
                                                                          file=str(self.path)) from None
                if time.monotonic() > deadline:
                    raise WorkspaceError(f"the workspace stayed busy for {BUSY_DEADLINE:.0f} s (another process "
                                         "holds its write lock); try again", file=str(self.path)) from None
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.5)
            except sqlite3.DatabaseError as e:
                raise WorkspaceError(f"the catalogue is damaged or not a workspace ({e})",
                                     file=str(self.path)) from None

    def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` in one read transaction (a consistent snapshot); retried when busy."""
        def body() -> T:
            conn = self.connection()
            if conn.in_transaction:  # left open by an interrupted call (KeyboardInterrupt...)
                conn.execute("ROLLBACK")
            conn.execute("BEGIN")
            try:
                return fn(conn)
            finally:
                conn.execute("COMMIT")  # a read transaction: ends the snapshot

        return self._retry(body)

    def write(self, fn: Callable[[sqlite3.Connection], T], *, bump: bool = True, wait: float | None = None) -> T:
        """Run ``fn(conn)`` in one ``BEGIN IMMEDIATE`` transaction; all or nothing; retried when busy.

        ``bump`` adds one to :attr:`generation` in the same transaction. ``fn`` must not
        have effects outside the database (it may run more than once); it may raise
        :class:`NoChange` to end without changing anything. ``wait``: the seconds to wait for
        the writer lock another process holds (then :class:`~.writelock.WriterBusy`); None: :data:`BUSY_DEADLINE`,
        read when called (so that setting the module's value changes every wait that does not give its own).
        """
        from .writelock import copy_hint, writer_lock

        if self.read_only:
            raise ReadOnlyWorkspaceError("this workspace is read-only: copy it to change it: "
                                         f"{copy_hint(self.path.parent)}", file=str(self.path.parent))

        def body() -> T:
            conn = self.connection()
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.execute("BEGIN IMMEDIATE")
            try:
                out = fn(conn)
                if bump:
                    conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
                conn.execute("COMMIT")
                return out
            except NoChange as done:
                conn.execute("ROLLBACK")
                return done.value
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        with writer_lock(self.path.parent, deadline=busy_deadline(wait)):  # one writer across processes
            return self._retry(body)

    def snapshot(self, dest: Path) -> None:
        """Write a consistent copy of the catalogue to ``dest`` (``VACUUM INTO``; the source is only read).

        A connection of its own (a read-only workspace's connections refuse ``VACUUM``); in a folder this
        process cannot write, on the catalogue's private copy, so it holds the changes still in the WAL.
        """
        def body() -> None:
            target, _copy = self._target() if self.detached else (str(self.path), None)  # _copy: kept till the end
            conn = sqlite3.connect(target, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None, uri=self.detached)
            try:
                conn.execute("VACUUM INTO ?", (str(dest),))
            finally:
                conn.close()

        self._retry(body)

    @property
    def generation(self) -> int:
        """The change counter: it grows with every change of ground truth, runs, side files or settings."""
        row = self._retry(lambda: self.connection().execute(
            "SELECT value FROM meta WHERE key = 'generation'").fetchone())
        return int(row[0]) if row else 0

    # ------------------------------------------------------------------ schema
    def _version(self) -> int:
        return int(self._retry(lambda: self.connection().execute("PRAGMA user_version").fetchone()[0]))

    def _open_schema(self) -> None:
        version = self._version()
        self._check_version(version)
        if not self.read_only:
            mode = self._retry(lambda: self.connection().execute("PRAGMA journal_mode").fetchone()[0])
            if str(mode).lower() != "wal":
                self._retry(lambda: self.connection().execute("PRAGMA journal_mode = WAL").fetchone())
        if version == SCHEMA_VERSION:
            return
        if self.read_only and self.detached:  # (its private copy could not be made, and so not upgraded)
            raise WorkspaceError(f"this catalogue has schema version {version} (this evalcore reads {SCHEMA_VERSION}) "
                                 "and its folder cannot be written here, nor a private copy of the catalogue made to "
                                 "read it upgraded: set TMPDIR to a writable folder, or copy the folder to one you "
                                 "can write (cp -r --no-preserve=mode) and open the copy", file=str(self.path))
        if self.read_only:
            raise WorkspaceError(f"this catalogue has schema version {version} and needs migrating to "
                                 f"{SCHEMA_VERSION}; open it once for writing (without read_only)", file=str(self.path))
        # executescript commits implicitly: run the statements one by one inside the transaction
        self.write(lambda conn: _migrate(_Statements(conn), self.path), bump=False)

    def _check_version(self, version: int) -> None:
        _check_version(version, self.path)


def _check_version(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(f"written by a newer evalcore (schema {version} > {SCHEMA_VERSION}); "
                                 "upgrade evalcore to open it", file=str(path))


def _migrate(conn: Any, path: Path) -> None:
    """Bring the catalogue of ``conn`` (inside a write transaction) to :data:`SCHEMA_VERSION`."""
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])  # another process may have done it
    _check_version(current, path)
    if current == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        raise WorkspaceError("this SQLite file is not an evalcore catalogue", file=str(path))
    for step in MIGRATIONS[current:]:
        step(conn)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def upgrade_copy(copy: Path, source: Path) -> None:
    """Bring a private copy of a catalogue (:mod:`.readcopy`) written by an older evalcore to this code's schema,
    as opening its folder for writing would (the same :data:`MIGRATIONS`, in one transaction): a read-only folder
    of an older workspace reads as the upgraded workspace, and its copies (:meth:`~.api.Workspace.copy_to`, the
    dashboard's) are current. The folder itself is never written. A catalogue of the current schema, or of a
    newer one (refused when it is opened), is left as it is. A damaged catalogue is a
    :class:`~evalcore.errors.WorkspaceError` naming ``source``; a copy that cannot be written (its disk is full) an
    :class:`OSError`, as when no copy can be made."""
    conn = None
    try:
        conn = sqlite3.connect(f"file:{quote(str(copy))}?mode=rw", isolation_level=None, uri=True)
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) >= SCHEMA_VERSION:
            return
        conn.execute("PRAGMA foreign_keys = ON")  # as the writable open's connection
        conn.execute("BEGIN IMMEDIATE")
        try:
            _migrate(_Statements(conn), source)
            conn.execute("COMMIT")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
    except sqlite3.OperationalError as e:  # the copy cannot be written (its disk is full...): as when none is made
        raise OSError(f"cannot upgrade the private copy of the catalogue ({e})") from None
    except sqlite3.DatabaseError as e:
        raise WorkspaceError(f"the catalogue is damaged or not a workspace ({e})", file=str(source)) from None
    finally:
        if conn is not None:
            conn.close()


class _Statements:
    """A connection whose ``executescript`` runs each statement inside the open transaction.

    :meth:`sqlite3.Connection.executescript` COMMITs first; migrations must stay in the
    transaction that also sets ``user_version`` (all or nothing).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self._conn.execute(sql, params)

    def executescript(self, script: str) -> None:
        for statement in _split_sql(script):
            self._conn.execute(statement)


def _split_sql(script: str) -> list[str]:
    """Statements of a script (``sqlite3.complete_statement`` decides where each ends)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out

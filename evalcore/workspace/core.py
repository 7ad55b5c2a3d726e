"""The stored workspace's reading side: catalogue records and their artifacts as engine objects.

:class:`WorkspaceCore` opens a folder (catalogue + object store) and turns catalogue rows
into :class:`RunRecord` / :class:`GroundTruthRecord` and artifacts into
:class:`~evalcore.data.Qrels`, :class:`~evalcore.data.Run` and
:class:`~evalcore.io.Embeddings` (memory-mapped), each verified against its SHA-256 and
cached once per process (:mod:`.artifacts`). It also holds the one writing primitive,
:meth:`WorkspaceCore.commit`: artifacts first, then one catalogue transaction.
The public class is :class:`evalcore.workspace.api.Workspace`.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..data import Qrels, Run
from ..errors import (
    CorruptArtifactError,
    OptionError,
    ReadOnlyWorkspaceError,
    WorkspaceError,
    WorkspaceStorageError,
    warn,
)
from ..io.embeddings import Embeddings
from . import codecs
from .artifacts import ObjectStore, Stored
from .locations import CATALOGUE_NAME, is_workspace
from .store import Catalogue, busy_deadline, dumps, folder_writable, loads, now
from .writelock import LOCK_NAME, copy_hint, writer_lock

__all__ = ["WorkspaceCore", "check_can_create", "RunRecord", "run_records_in", "GroundTruthRecord", "PartRecord",
           "KIND_EXT", "RUN_KINDS", "qrels_key"]

T = TypeVar("T")

#: Seconds a read waits for the writer lock to keep a ranking it computed (:meth:`WorkspaceCore.store_derived`).
DERIVED_WAIT = 1.0

#: File extension of each artifact kind.
KIND_EXT: dict[str, str] = {"qrels": "parquet", "run": "parquet", "ids": "parquet", "embeddings": "npy",
                            "results": "parquet", "side": "parquet"}
RUN_KINDS = ("ranked", "embedding", "fused")
_RUN_COLUMNS = ("id, name, position, kind, model, version, step, tags, created_at, source_name, source_sha256, "
                "artifact, ids_artifact, query_artifact, query_ids_artifact, options, n_queries, n_rows, dim")


@dataclass(frozen=True)
class RunRecord:
    """One run of the catalogue (a row of ``runs``); ``options`` holds aspect, fusion spec..."""

    id: int
    name: str
    position: int
    kind: str
    model: str | None
    version: str | None
    step: float | None
    tags: tuple[str, ...]
    created_at: str
    source_name: str | None
    source_sha256: str | None
    artifact: str | None
    ids_artifact: str | None
    query_artifact: str | None
    query_ids_artifact: str | None
    options: dict = field(default_factory=dict)
    n_queries: int | None = None
    n_rows: int | None = None
    dim: int | None = None

    @classmethod
    def of(cls, row: Sequence[Any]) -> RunRecord:
        values = list(row)
        values[7] = tuple(loads(values[7], []))
        values[15] = loads(values[15], {})
        return cls(*values)

    @property
    def aspect(self) -> str | None:
        return self.options.get("aspect")

    @property
    def inputs(self) -> tuple[str, ...]:
        """Names of the runs a fused run combines (empty for other kinds)."""
        return tuple(self.options.get("inputs", ())) if self.kind == "fused" else ()

    @property
    def artifacts(self) -> tuple[str, ...]:
        return tuple(a for a in (self.artifact, self.ids_artifact, self.query_artifact, self.query_ids_artifact) if a)

    def content_key(self) -> str:
        """What the run's Run depends on besides the ground truth and settings (not its name)."""
        from .model import stable_key

        return stable_key("run", self.kind, list(self.artifacts), self.options)


@dataclass(frozen=True)
class PartRecord:
    """One stored part of a ground truth: an aspect's qrels, or a reference's vectors and ids."""

    position: int
    aspect: str | None
    artifact: str
    ids_artifact: str | None
    n_queries: int | None
    n_rows: int | None


@dataclass(frozen=True)
class GroundTruthRecord:
    """The active ground truth: ``kind`` ``"qrels"`` (parts per aspect) or ``"reference"`` (one part)."""

    id: int
    name: str
    kind: str
    source_name: str | None
    source_sha256: str | None
    format: str | None
    options: dict
    created_at: str
    parts: tuple[PartRecord, ...]

    @property
    def aspects(self) -> tuple[str, ...]:
        """Aspects of a seed-001 ground truth (``()`` when it has one unnamed part)."""
        return tuple(p.aspect for p in self.parts if p.aspect is not None)

    def part(self, aspect: str | None) -> PartRecord:
        for p in self.parts:
            if p.aspect == aspect:
                return p
        if aspect is None:
            return self.parts[0]
        raise OptionError(f"the ground truth {self.name!r} has no aspect {aspect!r}; "
                          f"its aspects are {list(self.aspects)}")


def run_records_in(conn: sqlite3.Connection) -> list[RunRecord]:
    """Every run, in display order, read through ``conn`` (inside a transaction of the caller's)."""
    rows = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY position").fetchall()
    return [RunRecord.of(r) for r in rows]


class _Vanished(Exception):
    """An artifact file disappeared between writing it and recording it (a concurrent gc)."""


_VANISHED = object()  # what one attempt of a commit returns when a staged file was gone


#: What a workspace folder holds (a creation interrupted before the catalogue existed may leave these alone)
_OWN_NAMES = frozenset({"objects", "tmp", f"{CATALOGUE_NAME}-wal", f"{CATALOGUE_NAME}-shm", f"{CATALOGUE_NAME}-journal",
                        LOCK_NAME})


def check_can_create(path: Path) -> None:
    """Refuse, before anything is done, a place where a workspace would not be created: a file, or a folder
    holding other files (:class:`~evalcore.errors.WorkspaceError` naming it); a workspace, a new or an empty
    folder pass. What opening with ``create=True`` checks, for a command that works before it opens."""
    if is_workspace(path):
        return
    if path.exists() and not path.is_dir():
        raise WorkspaceError("is a file, not a workspace folder", file=str(path))
    if path.is_dir() and any(p.name not in _OWN_NAMES for p in path.iterdir()):
        raise WorkspaceError("this folder holds other files and no evalcore workspace (catalogue.sqlite); "
                             "a workspace is created in a new or empty folder", file=str(path))


class WorkspaceCore:
    """A workspace folder opened for reading (see the module docstring)."""

    def __init__(self, path: str | Path, *, read_only: bool = False, create: bool = True) -> None:
        from .inputs import check_bool

        read_only, create = check_bool(read_only, "read_only"), check_bool(create, "create")
        self.path = Path(path).expanduser()
        if not is_workspace(self.path):
            if read_only or not create:
                raise WorkspaceError("no workspace here (no catalogue.sqlite)", file=str(self.path))
            check_can_create(self.path)
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as e:  # no permission in the parent folder, a read-only or full disk
                raise WorkspaceStorageError(f"cannot create the workspace folder ({e.strerror or e})",
                                            file=str(self.path)) from None
        self._asked_read_only = read_only
        if not read_only and not folder_writable(self.path):  # a read-only mount or folder: read it
            read_only = True
        self.catalogue = Catalogue(self.path / CATALOGUE_NAME, read_only=read_only, create=create)
        self.objects = ObjectStore(self.path)

    @property
    def read_only(self) -> bool:
        return self.catalogue.read_only

    @property
    def read_only_reason(self) -> str | None:
        """Why this workspace refuses changes, as a phrase (None: it accepts them): ``"it was opened read-only"``
        (``read_only=True``: the built-in demo), ``"its file system is mounted read-only"``, or ``"its folder
        cannot be written by this user"`` (a colleague's shared folder, an unpacked archive, a folder whose
        permissions were taken away)."""
        if not self.read_only:
            return None
        if self._asked_read_only:
            return "it was opened read-only"
        import os

        try:
            mounted = bool(os.statvfs(self.path).f_flag & os.ST_RDONLY)
        except (OSError, AttributeError):  # (no statvfs: Windows)
            mounted = False
        return "its file system is mounted read-only" if mounted else "its folder cannot be written by this user"

    @property
    def generation(self) -> int:
        """Change counter (one cheap query): it grows with every change of the ground truth, runs,
        side files or settings, by any process; equal values mean nothing a page shows has changed."""
        return self.catalogue.generation

    def close(self) -> None:
        """Close this thread's catalogue connection."""
        self.catalogue.close()

    @contextlib.contextmanager
    def exclusive(self, *, wait: float | None = None) -> Iterator[None]:
        """Hold the workspace's writer lock: no other process changes it until the block ends.

        Every change takes this lock for its own transaction; hold it across a check of what the
        workspace holds and the changes that depend on it (``evaluate --workspace`` does), so
        that no other writer slips in between. Changes made inside the block by this thread
        proceed; other threads and processes wait (:mod:`.writelock`). ``wait``: the seconds to wait for
        the lock another process holds, then :class:`~.writelock.WriterBusy` (a dashboard saving a selection
        waits a second at most, and saves it at a later run); None: :data:`.store.BUSY_DEADLINE`, read when called.

        >>> import tempfile
        >>> ws = WorkspaceCore(tempfile.mkdtemp())
        >>> with ws.exclusive():
        ...     with ws.exclusive():  # re-entrant
        ...         pass
        """
        if self.read_only:
            raise ReadOnlyWorkspaceError(f"this workspace is read-only ({self.read_only_reason}): copy it to change it: "
                                         f"{copy_hint(self.path)}", file=str(self.path))
        with writer_lock(self.path, deadline=busy_deadline(wait)):
            yield

    # ------------------------------------------------------------------ records
    def run_records(self) -> list[RunRecord]:
        """Every run, in display order."""
        return self.catalogue.read(run_records_in)

    def run_record(self, name: str) -> RunRecord:
        """The run named ``name``; :class:`~evalcore.errors.OptionError` listing the runs when there is none."""
        row = self.catalogue.read(lambda c: c.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE name = ?",
                                                      (str(name),)).fetchone())
        if row is None:
            names = [r.name for r in self.run_records()]
            raise OptionError(f"no run named {name!r} in the workspace; its runs are {names}")
        return RunRecord.of(row)

    def listing_changed(self, rec: RunRecord) -> str | None:
        """``"removed"`` or ``"replaced"`` when the catalogue no longer holds ``rec`` as it was read (the run was
        removed, or stored again under its name with another file, by another process or Workspace object since);
        None when it still does."""
        row = self.catalogue.read(lambda c: c.execute("SELECT artifact FROM runs WHERE name = ?",
                                                      (str(rec.name),)).fetchone())
        if row is None:
            return "removed"
        return None if row[0] == rec.artifact else "replaced"

    def check_still_listed(self, rec: RunRecord) -> None:
        """Raise :class:`~evalcore.errors.OptionError` when :meth:`listing_changed` says ``rec`` is no longer listed.

        Called when ``rec``'s stored file cannot be read: a run removed elsewhere and a ``gc`` after it take its file
        away, which is no damage to the workspace (only a run the catalogue still lists with that file is)."""
        changed = self.listing_changed(rec)
        if changed == "removed":
            names = [r.name for r in self.run_records()]
            raise OptionError(f"run {rec.name!r} was removed from the workspace by another process after this one "
                              f"listed it; its runs are now {names}")
        if changed == "replaced":
            raise OptionError(f"run {rec.name!r} was replaced in the workspace by another process after this one "
                              "listed it; read it again")

    def ground_truth_record(self) -> GroundTruthRecord | None:
        """The active ground truth, or None."""
        def read(c: sqlite3.Connection) -> GroundTruthRecord | None:
            row = c.execute("SELECT id, name, kind, source_name, source_sha256, format, options, created_at "
                            "FROM ground_truths WHERE active = 1").fetchone()
            if row is None:
                return None
            parts = c.execute("SELECT position, aspect, artifact, ids_artifact, n_queries, n_rows "
                              "FROM ground_truth_parts WHERE gt_id = ? ORDER BY position", (row[0],)).fetchall()
            return GroundTruthRecord(*row[:6], loads(row[6], {}), row[7], tuple(PartRecord(*p) for p in parts))

        return self.catalogue.read(read)

    def _side_row(self, role: str) -> tuple[str, str | None, str | None] | None:
        return self.catalogue.read(lambda c: c.execute(
            "SELECT artifact, name, source_sha256 FROM side_files WHERE role = ?", (role,)).fetchone())

    # ------------------------------------------------------------------ artifacts -> objects
    def _load(self, sha: str, kind: str, *, what: str, parse: Callable[[Path], Any], cache_kind: str | None = None):
        return self.objects.load(sha, KIND_EXT[kind], what=what, parse=parse, kind=cache_kind or kind)

    def read_qrels(self, part: PartRecord, *, label: str) -> Qrels:
        """One ground-truth part's Qrels (verified, cached by hash)."""
        what = f"ground truth {label!r}" + (f" (aspect {part.aspect!r})" if part.aspect else "")
        return self._load(part.artifact, "qrels", what=what, cache_kind=f"qrels:{label}",
                          parse=lambda p: codecs.read_qrels(p, source=label))

    def read_run(self, sha: str, *, name: str, what: str) -> Run:
        """A stored Run artifact, named ``name`` (arrays shared with the per-process cache)."""
        run = self._load(sha, "run", what=what, parse=lambda p: codecs.read_run(p, name=name, source=None))
        return run if run.name == name else run.renamed(name)

    def ranked_run(self, rec: RunRecord, *, name: str | None = None) -> Run:
        """The Run of a stored ranked run (named ``name``, default its own), marked with the search depth it was
        added with (``options["search_depth"]``: an exact search's, a random baseline's; absent in older records:
        unmarked)."""
        try:
            run = self.read_run(rec.artifact, name=rec.name if name is None else name, what=f"run {rec.name!r}")
        except CorruptArtifactError:
            self.check_still_listed(rec)  # (removed by another process since this one read rec: say that)
            raise
        depth = rec.options.get("search_depth")
        return run if depth is None else run.searched(int(depth))

    def read_run_query_ids(self, sha: str, *, what: str) -> np.ndarray:
        """A stored Run artifact's query ids (``read_run(...).query_ids``), verified as :meth:`read_run` does, but
        reading only its query id column's header rows (:func:`.codecs.read_run_query_ids`; cached by hash)."""
        return self._load(sha, "run", what=what, cache_kind="run_query_ids", parse=codecs.read_run_query_ids)

    def read_embeddings(self, sha: str, ids_sha: str, *, what: str, source: str | None) -> Embeddings:
        """Stored vectors (memory-mapped) and ids as Embeddings, cached per (vectors, ids) pair."""
        from .artifacts import cached

        def build() -> Embeddings:
            vectors = self._load(sha, "embeddings", what=what, parse=codecs.read_vectors)
            ids = self._load(ids_sha, "ids", what=what, parse=codecs.read_ids)
            if len(ids) != vectors.shape[0]:
                raise WorkspaceError(f"{what}: {len(ids)} stored ids for {vectors.shape[0]} vectors")
            return codecs.embeddings_of(ids, vectors, source)

        # verify both files now (a cached pair is re-checked if either file changed)
        self.objects.verified(sha, KIND_EXT["embeddings"], what=what)
        self.objects.verified(ids_sha, KIND_EXT["ids"], what=what)
        return cached("embeddings", f"{sha}+{ids_sha}+{source}", build)

    def run_embeddings(self, rec: RunRecord) -> tuple[Embeddings, Embeddings | None]:
        """An embedding run's document vectors and (None when item-to-item) query vectors."""
        if rec.kind != "embedding":
            raise OptionError(f"run {rec.name!r} is a {rec.kind} run, it has no embeddings")
        what = f"run {rec.name!r}"
        label = rec.source_name or rec.name
        docs = self.read_embeddings(rec.artifact, rec.ids_artifact, what=what, source=label)
        queries = None
        if rec.query_artifact:
            queries = self.read_embeddings(rec.query_artifact, rec.query_ids_artifact, what=what + " (queries)",
                                           source=rec.options.get("query_source") or f"{label} queries")
        return docs, queries

    def reference(self, gt: GroundTruthRecord) -> Embeddings:
        """A reference ground truth's embeddings (memory-mapped)."""
        part = gt.parts[0]
        return self.read_embeddings(part.artifact, part.ids_artifact, what=f"ground truth {gt.name!r}",
                                    source=gt.source_name or gt.name)

    def reference_ids(self) -> np.ndarray:
        """The ids of the active reference ground truth, read (and verified) without its vectors."""
        gt = self.ground_truth_record()
        if gt is None or gt.kind != "reference":
            raise OptionError("the workspace's ground truth is not a reference model")
        return self._load(gt.parts[0].ids_artifact, "ids", what=f"ground truth {gt.name!r}", parse=codecs.read_ids)

    def domains(self) -> dict[str, str] | None:
        """The stored query -> domain map, or None."""
        row = self._side_row("domains")
        if row is None:
            return None
        return self._load(row[0], "side", what=f"domains file {row[1]!r}", cache_kind="domains",
                          parse=codecs.read_domains)

    def side_name(self, role: str) -> str | None:
        """The file name a stored side file (``"domains"``, ``"metadata"``, ``"queries"``) was read from, or None."""
        row = self._side_row(role)
        return None if row is None else row[1]

    def query_texts(self) -> dict[str, str] | None:
        """The stored query id -> text map, or None."""
        row = self._side_row("queries")
        if row is None:
            return None
        return self._load(row[0], "side", what=f"query texts file {row[1]!r}", cache_kind="queries",
                          parse=codecs.read_queries)

    def metadata(self) -> Any:
        """The stored document metadata (``doc_id, title, text``), or None."""
        row = self._side_row("metadata")
        if row is None:
            return None
        return self._load(row[0], "side", what=f"metadata file {row[1]!r}", cache_kind="metadata",
                          parse=codecs.read_metadata)

    def derived_run(self, key: str, *, name: str) -> tuple[Run, list[str]] | None:
        """A cached ranking (see :mod:`.resolve`) and the warnings it gave, or None."""
        row = self.catalogue.read(lambda c: c.execute("SELECT artifact, info FROM derived WHERE key = ?",
                                                      (key,)).fetchone())
        if row is None:
            return None
        try:
            run = self.read_run(row[0], name=name, what=f"ranking of run {name!r}")
        except CorruptArtifactError as e:  # a cache: computed again from the inputs (and stored again)
            warn(f"{e}; it is a cached ranking, computed again from the run's embeddings")
            return None
        return run, list(loads(row[1], {}).get("warnings", []))

    # ------------------------------------------------------------------ writing
    def put(self, kind: str, write: Callable[[Path], None]) -> Stored:
        """Write one artifact of ``kind`` (atomically; see :meth:`ObjectStore.put`)."""
        return self.objects.put(write, kind=kind, ext=KIND_EXT[kind])

    def commit(self, stage: Callable[[], Sequence[Stored]], record: Callable[[sqlite3.Connection, list[Stored]], T],
               *, bump: bool = True, wait: float | None = None) -> T:
        """Write artifacts (``stage``), then record them and the change in ONE transaction.

        The staged files are held until the transaction ends (:meth:`.artifacts.ObjectStore.holding`): a
        concurrent :meth:`~evalcore.workspace.api.Workspace.gc` leaves them. Inside the transaction every
        staged file is still checked to exist (a file system without ``flock``); if one vanished, staging
        is done again. ``wait``: as :meth:`.store.Catalogue.write`'s.
        """
        if self.read_only:
            raise ReadOnlyWorkspaceError(f"this workspace is read-only ({self.read_only_reason}): copy it to change it: "
                                         f"{copy_hint(self.path)}", file=str(self.path))
        for _ in range(3):
            with self.objects.holding():  # the staged files held until recorded: a gc meanwhile leaves them
                out = self._commit_once(stage, record, bump=bump, wait=wait)
            if out is not _VANISHED:
                return out
        raise WorkspaceError("artifacts kept vanishing while being recorded (a concurrent clean-up?); try again",
                             file=str(self.path))

    def _commit_once(self, stage: Callable[[], Sequence[Stored]],
                     record: Callable[[sqlite3.Connection, list[Stored]], T], *, bump: bool, wait: float | None) -> Any:
        """One attempt of :meth:`commit`: its value, or ``_VANISHED`` when a staged file was gone."""
        stored = list(stage())

        def body(conn: sqlite3.Connection, stored: list[Stored] = stored) -> T:
            created = now()
            for s in stored:
                if not self.objects.path(s.sha256, s.ext).exists():
                    raise _Vanished(s.sha256)
                conn.execute("INSERT OR IGNORE INTO artifacts (sha256, kind, ext, size, created_at) "
                             "VALUES (?, ?, ?, ?, ?)", (s.sha256, s.kind, s.ext, s.size, created))
            return record(conn, stored)

        try:
            return self.catalogue.write(body, bump=bump, wait=wait)
        except _Vanished:
            return _VANISHED

    def store_derived(self, key: str, run: Run, *, inputs: Sequence[str], warnings: Sequence[str],
                      wait: float = DERIVED_WAIT) -> bool:
        """Keep a ranking computed from stored inputs (an embedding run's exact top-k), keyed by its inputs; whether
        it was kept.

        A cache that a read (an evaluation, a page, ``load_run``) fills: it waits at most ``wait`` seconds for the
        writer lock another process holds (a long recording), then leaves the ranking unkept rather than stall or
        fail the read (the caller keeps it in its process, :func:`.rankings.embedding_ranking`)."""
        from .writelock import WriterBusy

        def record(conn: sqlite3.Connection, stored: list[Stored]) -> None:
            conn.execute("INSERT OR REPLACE INTO derived (key, artifact, inputs, info, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", (key, stored[0].sha256, dumps(list(inputs)),
                                                    dumps({"warnings": list(warnings)}), now()))

        try:
            self.commit(lambda: [self.put("run", lambda p: codecs.write_run(run, p))], record, bump=False, wait=wait)
        except WriterBusy:
            return False  # (its file, written, is left to gc)
        return True


def qrels_key(qrels: Qrels) -> str:
    """A content key of the judgments (query ids, query of each row, documents, grades; not domains)."""
    hit = qrels._cache.get("content_key")
    if hit is None:
        import hashlib

        from .._lazy import pd

        h = hashlib.sha256()
        for part in (pd.util.hash_array(np.asarray(qrels.query_ids, dtype=object)), np.asarray(qrels.q, np.int64),
                     pd.util.hash_array(np.asarray(qrels.doc_ids, dtype=object)),
                     np.asarray(qrels.grades, np.int64)):
            h.update(np.ascontiguousarray(part).tobytes())
            h.update(b"|")
        hit = h.hexdigest()
        qrels._cache["content_key"] = hit
    return hit

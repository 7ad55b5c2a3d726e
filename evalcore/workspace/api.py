"""``evalcore.Workspace``: a persistent workspace shared by the Python API, the CLI and the dashboard.

A workspace is a folder::

    DIR/
      catalogue.sqlite   (+ -wal, -shm)  the catalogue: ground truths, runs, evaluations, settings
      objects/ab/<sha256>.parquet|.npy   content-addressed artifacts (qrels, runs, embeddings, tables)
      tmp/                               files being written (renamed into objects/ when complete)

Typical use, e.g. in a training loop's validation hook::

    from evalcore import Workspace
    ws = Workspace.open("runs/my-model")            # created when missing
    ws.set_ground_truth("qrels.txt")                 # any format evalcore reads
    for epoch in range(epochs):
        ...
        ws.add_embedding_run(f"e5-ep{epoch}", doc_vectors, doc_ids, query_embeddings=q_vectors,
                             query_ids=q_ids, model="e5", version=f"epoch {epoch}", step=epoch)
    ev = ws.evaluate(metrics=["ndcg", "recall"], k=[10, 100])
    ws.runs()                                        # one row per run

Every change is atomic (artifacts are written first, then ONE catalogue transaction
records them) and visible to other processes at once; :attr:`Workspace.generation` tells
a reader cheaply whether anything changed. See :mod:`.store` (catalogue and concurrency), :mod:`.artifacts`
(files), :mod:`.codecs` (how data is stored), :mod:`.resolve` (evaluation), :mod:`.bundle` (export, import,
copy), :mod:`.roots` (named workspaces, version order) and :mod:`.demostore` (the read-only demo).

Decisions: parsed data is stored, not the original bytes (to read a file with another format, add it
again with ``replace=True``); a run name is unique, adding it again is an error unless ``replace=True``
(the run keeps its place); a fused run stores its inputs by name and is computed at evaluation (renames
follow, removing an input removes it); setting the same ground truth again changes nothing (from a file of
another name: renames it), setting another keeps the old one inactive; an embedding run's exact top-k ranking
is kept keyed by its artifacts, the depth and the judged queries' content; evaluations are recorded once
per distinct input.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._lazy import pd
from ..data import Qrels, Run
from ..errors import OptionError
from ..evaluate import Evaluation
from ..io.embeddings import Embeddings
from . import codecs
from .inputs import (
    check_label,
    check_run_name,
    check_step,
    check_tags,
    embeddings_input,
    fusion_options,
    qrels_parts,
    run_input,
)
from .locations import default_path
from .resolve import Resolved, evaluate_stored, resolve
from .sidecar import SettingsAndSideFiles
from .store import NoChange, dumps, loads, now

__all__ = ["Workspace", "RUN_COLUMNS"]

#: Columns of :meth:`Workspace.runs`.
RUN_COLUMNS = ["name", "kind", "model", "version", "step", "tags", "created_at", "source_name", "source_sha256",
               "n_queries", "n_rows", "dim", "aspect", "inputs", "options"]
_UNSET: Any = object()


class Workspace(SettingsAndSideFiles):
    """A workspace folder (see the module docstring). Open one with :meth:`open`.

    Thread-safe (one catalogue connection per thread); any number of processes may read
    while one writes. A read-only workspace (the demo, :meth:`demo`) refuses every change
    with :class:`~evalcore.errors.ReadOnlyWorkspaceError`; :meth:`copy_to` makes a
    writable copy.
    """

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | Path | None = None, *, read_only: bool = False, create: bool = True) -> Workspace:
        """Open the workspace in ``path`` (None: :func:`~.locations.default_path`), creating it when missing.

        A workspace is created only in a new or empty folder: a folder of other files is
        refused (:class:`~evalcore.errors.WorkspaceError`), never filled with a catalogue.

        Parameters
        ----------
        path : str or Path, optional
        read_only : bool
            Refuse changes (and never create or migrate).
        create : bool
            Create the folder and its catalogue when missing (else
            :class:`~evalcore.errors.WorkspaceError`).

        Raises
        ------
        SchemaVersionError
            The catalogue was written by a newer evalcore (nothing is written).
        WorkspaceError
            Not a workspace (and ``create`` is False), or not an evalcore catalogue.
        """
        return cls(default_path() if path is None else path, read_only=read_only, create=create)

    @classmethod
    def demo(cls, seed: int = 0, *, cache_dir: str | Path | None = None) -> Workspace:
        """The built-in synthetic demo as a read-only workspace (built once into a cache folder).

        ``cache_dir`` defaults to :func:`~.locations.demo_cache_dir`; see
        :func:`~.demostore.ensure_demo`. With the default settings it evaluates to exactly
        the demo's numbers; :meth:`copy_to` gives a writable copy.
        """
        from .demostore import ensure_demo

        return cls.open(ensure_demo(seed, cache_dir=cache_dir, open_workspace=cls.open), read_only=True)

    @classmethod
    def import_bundle(cls, bundle: str | Path, path: str | Path) -> Workspace:
        """Unpack an :meth:`export` bundle into ``path`` (absent or empty) and open it.

        See :func:`evalcore.workspace.bundle.import_bundle`.
        """
        from .bundle import import_bundle

        return cls.open(import_bundle(bundle, path))

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r}{', read_only=True' if self.read_only else ''})"

    @property
    def name(self) -> str:
        """The folder's name."""
        return self.path.name

    # ------------------------------------------------------------------ ground truth
    def set_ground_truth(self, path_or_qrels: Any, *, name: str | None = None, format: str = "auto",
                         source_name: str | None = None) -> None:
        """Store the ground truth and make it the active one (the previous one is kept, inactive).

        Setting the active ground truth again changes nothing (the same content from a file of another name renames it).

        Parameters
        ----------
        path_or_qrels : path, bytes, stream, Qrels or mapping aspect -> Qrels
            Any format :func:`evalcore.load_qrels` reads; a seed-001 ordered-list file keeps
            every aspect (one stored part each).
        name : str, optional
            Display name (default: the file's name).
        format : str
            ``"auto"`` (detected) or one of :data:`evalcore.io.QRELS_FORMATS`.
        source_name : str, optional
            The file name to record for bytes or a stream (also used for format detection).
        """
        parts, src_name, sha, fmt = qrels_parts(path_or_qrels, format=format, label=source_name)
        label = check_label(name, "the ground truth's name") or src_name or "ground truth"
        stage = lambda: [self.put("qrels", lambda p, q=q: codecs.write_qrels(q, p)) for _, q in parts]  # noqa: E731
        counts = [(q.n_queries, len(q)) for _, q in parts]
        self._set_gt(stage, "qrels", label, src_name, sha, fmt, {},
                     lambda stored: [(a, s.sha256, None, *c) for (a, _), s, c in zip(parts, stored, counts, strict=True)])

    def set_reference(self, embeddings: Any, ids: Any = None, *, name: str | None = None,
                      source_name: str | None = None, source_sha256: str | None = None) -> None:
        """Use a reference model's embeddings as the ground truth (relevant = its nearest neighbours, as in distillation).

        Parameters
        ----------
        embeddings : ndarray (n, dim), Embeddings, path, bytes or stream
            Any layout :func:`evalcore.load_embeddings` reads (a ``.npy`` path is memory-mapped).
        ids : sequence of str, ids file, or None
            See :func:`~.inputs.embeddings_input`.
        name : str, optional
            Display name (default: the file's name, else ``"reference"``).
        source_name, source_sha256 : str, optional
            The file the vectors came from and its SHA-256, for vectors given already loaded.

        Notes
        -----
        How the neighbours become judgments (``gt_mode`` ``"tied"`` or ``"fixed"``, ``gt_depth``)
        is a setting (:meth:`set_settings`), applied at evaluation.
        """
        emb, src_name, sha = embeddings_input(embeddings, ids, what="reference embeddings", label=source_name)
        sha = sha or source_sha256
        label = check_label(name, "the ground truth's name") or src_name or "reference"

        def stage() -> list:
            return [self.put("embeddings", lambda p: codecs.write_vectors(emb.vectors, p)),
                    self.put("ids", lambda p: codecs.write_ids(emb.ids, p))]

        self._set_gt(stage, "reference", label, src_name, sha, None, {"dim": emb.dim},
                     lambda stored: [(None, stored[0].sha256, stored[1].sha256, len(emb), None)])

    def _set_gt(self, stage: Callable[[], list], kind: str, name: str, src_name: str | None, sha: str | None,
                fmt: str | None, options: dict, parts: Callable[[list], list]) -> None:
        def record(conn: sqlite3.Connection, stored: list) -> None:
            rows = parts(stored)
            active = conn.execute("SELECT id, name, kind FROM ground_truths WHERE active = 1").fetchone()
            if active is not None and active[2] == kind:
                have = conn.execute("SELECT aspect, artifact, ids_artifact FROM ground_truth_parts WHERE gt_id = ? "
                                    "ORDER BY position", (active[0],)).fetchall()
                if [tuple(r) for r in have] == [tuple(r[:3]) for r in rows]:
                    if active[1] != name:  # the same judgments, another file name: renamed (evaluations stay current)
                        conn.execute("UPDATE ground_truths SET name = ?, source_name = ?, source_sha256 = ?, format = ? "
                                     "WHERE id = ?", (name, src_name, sha, fmt, active[0]))
                        return
                    if sha and conn.execute("UPDATE ground_truths SET source_sha256 = ? WHERE id = ? AND "
                                            "source_sha256 IS NULL", (sha, active[0])).rowcount:
                        return  # the same again, now with its source's SHA-256 (recorded before without)
                    raise NoChange()  # the same ground truth again
            conn.execute("UPDATE ground_truths SET active = 0 WHERE active = 1")
            cur = conn.execute("INSERT INTO ground_truths (name, kind, source_name, source_sha256, format, options, "
                               "created_at, active) VALUES (?, ?, ?, ?, ?, ?, ?, 1)",
                               (name, kind, src_name, sha, fmt, dumps(options), now()))
            for i, (aspect, art, ids_art, nq, nr) in enumerate(rows):
                conn.execute("INSERT INTO ground_truth_parts (gt_id, position, aspect, artifact, ids_artifact, "
                             "n_queries, n_rows) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (cur.lastrowid, i, aspect, art, ids_art, nq, nr))

        self.commit(stage, record)

    def ground_truth(self) -> dict | None:
        """The active ground truth: name, kind (``qrels``/``reference``), source, format, aspects..., or None."""
        gt = self.ground_truth_record()
        if gt is None:
            return None
        return {"id": gt.id, "name": gt.name, "kind": gt.kind, "source_name": gt.source_name,
                "source_sha256": gt.source_sha256, "format": gt.format, "aspects": gt.aspects,
                "created_at": gt.created_at, "n_queries": gt.parts[0].n_queries, **gt.options}

    def aspects(self) -> tuple[str, ...]:
        """Aspects of the active ground truth (``()`` for one unnamed part, a reference, or none)."""
        gt = self.ground_truth_record()
        return gt.aspects if gt is not None and gt.kind == "qrels" else ()

    def load_qrels(self, aspect: str | None = None) -> Qrels:
        """The stored judgments of the active ground truth (an aspect's; default the first), every query.

        A reference ground truth has no stored judgments: use :meth:`resolve` (they depend on the settings).
        """
        gt = self.ground_truth_record()
        if gt is None:
            raise OptionError("the workspace has no ground truth yet")
        if gt.kind != "qrels":
            raise OptionError("the ground truth is a reference model: its judgments depend on the settings; "
                              "use resolve().qrels")
        return self.read_qrels(gt.part(aspect), label=gt.name)

    def load_reference(self) -> Embeddings:
        """A reference ground truth's embeddings (memory-mapped)."""
        gt = self.ground_truth_record()
        if gt is None or gt.kind != "reference":
            raise OptionError("the workspace's ground truth is not a reference model")
        return self.reference(gt)

    # ------------------------------------------------------------------ adding runs
    def add_run(self, name: str, path_or_run: Any, *, model: str | None = None, version: str | None = None,
                step: float | None = None, tags: Sequence[str] = (), format: str = "auto",
                aspect: str | None = None, replace: bool = False, source_name: str | None = None,
                source_sha256: str | None = None) -> str:
        """Store a ranked run; returns its name.

        Parameters
        ----------
        name : str
            Unique among the workspace's runs (1–200 characters, no tabs or line breaks).
        path_or_run : path, bytes, stream or Run
            Any format :func:`evalcore.load_run` reads; stored parsed (scores exact).
        model, version : str, optional
            The model and its version label (for the Versions view).
        step : number, optional
            Training step or epoch (orders versions; stored as float).
        tags : sequence of str
        format : str
            ``"auto"`` or one of :data:`evalcore.io.RUN_FORMATS`.
        aspect : str, optional
            The ground-truth aspect to evaluate it against (ordered lists with several aspects): its name or a unique
            part of it (``"content"``), stored as the ground truth's full name when there is
            one; default the first aspect.
        replace : bool
            Replace a run of the same name (it keeps its place). Without it, the very same run again
            (content, run info, aspect) changes nothing, as a restarted training script needs; another
            run of that name is an error.
        source_name, source_sha256 : str, optional
            Provenance to record (default: the file's name and the SHA-256 of its bytes).
        """
        name = check_run_name(name)
        meta = self._meta(model, version, step, tags)
        run, src_name, sha = run_input(path_or_run, name=name, format=format, label=source_name)
        aspect = self._aspect(aspect)
        return self._insert(name, "ranked", meta, lambda: [self.put("run", lambda p: codecs.write_run(run, p))],
                            {"aspect": aspect} if aspect else {}, src_name, source_sha256 or sha,
                            (run.n_queries, len(run), None), replace)

    def add_embedding_run(self, name: str, embeddings: Any, ids: Any = None, *, query_embeddings: Any = None,
                          query_ids: Any = None, model: str | None = None, version: str | None = None,
                          step: float | None = None, tags: Sequence[str] = (), aspect: str | None = None,
                          replace: bool = False, source_name: str | None = None,
                          source_sha256: str | None = None, query_source_name: str | None = None) -> str:
        """Store an embedding run (ranked by exact cosine top-k at evaluation); returns its name.

        Parameters
        ----------
        name : str
        embeddings : ndarray (n, dim), Embeddings, path, bytes or stream
            Document vectors (float32 stored; a ``.npy`` path is copied in blocks, never
            loaded whole).
        ids : sequence of str (n,), ids file, or None
            Document ids (required with an array).
        query_embeddings, query_ids : optional
            Query vectors and ids (same forms). Without them the run is item-to-item: the
            queries are the ground truth's query ids found among ``ids``, and each query's
            own item is excluded.
        model, version, step, tags, aspect, replace, source_name, source_sha256 :
            As in :meth:`add_run`; ``query_source_name`` names the query file.
        """
        name = check_run_name(name)
        meta = self._meta(model, version, step, tags)
        docs, src_name, sha = embeddings_input(embeddings, ids, what=f"run {name!r}", label=source_name)
        queries = None
        aspect = self._aspect(aspect)
        options: dict[str, Any] = {"aspect": aspect} if aspect else {}
        if query_embeddings is not None:
            queries, qname, _ = embeddings_input(query_embeddings, query_ids, what=f"run {name!r} (queries)",
                                                 label=query_source_name)
            if queries.dim != docs.dim:
                raise OptionError(f"run {name!r}: documents have {docs.dim} dimensions but queries {queries.dim}")
            options["query_source"] = qname
        elif query_ids is not None:
            raise OptionError(f"run {name!r}: query_ids without query_embeddings")

        def stage() -> list:
            out = [self.put("embeddings", lambda p: codecs.write_vectors(docs.vectors, p)),
                   self.put("ids", lambda p: codecs.write_ids(docs.ids, p))]
            if queries is not None:
                out += [self.put("embeddings", lambda p: codecs.write_vectors(queries.vectors, p)),
                        self.put("ids", lambda p: codecs.write_ids(queries.ids, p))]
            return out

        nq = None if queries is None else len(queries)
        return self._insert(name, "embedding", meta, stage, options, src_name, source_sha256 or sha,
                            (nq, len(docs), docs.dim), replace)

    def add_fused_run(self, name: str, inputs: Mapping[str, float] | Sequence[str], *,
                      weights: Sequence[float] | None = None, c: float = 60.0, top_n: int | None = None,
                      ties: str | None = None, aspect: str | None = None, model: str | None = None,
                      version: str | None = None, step: float | None = None, tags: Sequence[str] = (),
                      replace: bool = False, method: str = "rrf", norm: str = "none") -> str:
        """Store a fusion of runs of the workspace (by name), by default weighted RRF; returns its name.

        ``inputs`` maps run names to weights, or lists names (``weights`` then gives
        them, default 1 each; only the weighted methods use them). ``ties`` is the tie rule
        giving the inputs' ranks; None uses the evaluation's. ``method`` and ``norm`` are
        those of :func:`evalcore.fusion.fuse`. The fusion is computed at evaluation from
        its inputs; removing an input removes it too; ``aspect`` defaults to the first input's.
        """
        name = check_run_name(name)
        meta = self._meta(model, version, step, tags)
        options = fusion_options(name, inputs, weights=weights, c=c, top_n=top_n, ties=ties, method=method, norm=norm)
        names = options["inputs"]
        records = {r.name: r for r in self.run_records()}
        missing = [n for n in names if n not in records]
        if missing:
            raise OptionError(f"run {name!r}: no run named {missing} in the workspace")
        options["aspect"] = self._aspect(aspect) or records[names[0]].aspect
        return self._insert(name, "fused", meta, list, options, None, None, (None, None, None), replace)

    def _aspect(self, aspect: str | None) -> str | None:
        """The aspect to store: the active ground truth's own name for it when it has aspects."""
        if aspect is None or str(aspect).strip() == "":
            return None
        gt = self.ground_truth_record()
        if gt is None or gt.kind != "qrels" or not gt.aspects:
            return str(aspect)
        from ..io.lists import pick_aspect

        return pick_aspect(list(gt.aspects), str(aspect), label=f"ground truth {gt.name!r}")

    def _meta(self, model: Any, version: Any, step: Any, tags: Any) -> tuple:
        return check_label(model, "model"), check_label(version, "version"), check_step(step), check_tags(tags)

    def _insert(self, name: str, kind: str, meta: tuple, stage: Callable[[], list], options: dict,
                src_name: str | None, sha: str | None, counts: tuple, replace: bool) -> str:
        model, version, step, tags = meta

        def record(conn: sqlite3.Connection, stored: list) -> str:
            old = conn.execute("SELECT id, position, kind, model, version, step, tags, artifact, ids_artifact, "
                               "query_artifact, query_ids_artifact, options FROM runs WHERE name = ?",
                               (name,)).fetchone()
            arts = [s.sha256 for s in stored] + [None] * (4 - len(stored))
            if old is not None and not replace:
                if tuple(old[2:]) == (kind, model, version, step, dumps(list(tags)), *arts, dumps(options)):
                    raise NoChange(name)  # the very same run again (a restarted script): nothing to do
                raise OptionError(f"a run named {name!r} already exists with other content or run info; choose "
                                  "another name or pass replace=True")
            for n in options.get("inputs", ()):
                if not conn.execute("SELECT 1 FROM runs WHERE name = ?", (n,)).fetchone():
                    raise OptionError(f"run {name!r}: the run {n!r} it fuses is not in the workspace")
            if old is not None:
                conn.execute("DELETE FROM runs WHERE id = ?", (old[0],))
                position = old[1]
            else:
                position = conn.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM runs").fetchone()[0]
            conn.execute("INSERT INTO runs (name, position, kind, model, version, step, tags, created_at, source_name, "
                         "source_sha256, artifact, ids_artifact, query_artifact, query_ids_artifact, options, "
                         "n_queries, n_rows, dim) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (name, position, kind, model, version, step, dumps(list(tags)), now(), src_name, sha,
                          *arts, dumps(options), *counts))
            return name

        return self.commit(stage, record)

    # ------------------------------------------------------------------ editing runs
    def remove_run(self, name: str) -> list[str]:
        """Remove a run and every fused run built on it (recursively); returns the removed names."""
        def record(conn: sqlite3.Connection, stored: list) -> list[str]:
            rows = conn.execute("SELECT name, kind, options FROM runs").fetchall()
            if str(name) not in {r[0] for r in rows}:
                raise OptionError(f"no run named {name!r} in the workspace; its runs are {[r[0] for r in rows]}")
            drop = [str(name)]
            changed = True
            while changed:
                changed = False
                for n, kind, opts in rows:
                    if kind == "fused" and n not in drop and set(loads(opts, {}).get("inputs", ())) & set(drop):
                        drop.append(n)
                        changed = True
            conn.executemany("DELETE FROM runs WHERE name = ?", [(n,) for n in drop])
            return drop

        return self.commit(list, record)

    def rename_run(self, old: str, new: str) -> None:
        """Rename a run (fused runs built on it follow)."""
        new = check_run_name(new)

        def record(conn: sqlite3.Connection, stored: list) -> None:
            if not conn.execute("SELECT 1 FROM runs WHERE name = ?", (old,)).fetchone():
                raise OptionError(f"no run named {old!r} in the workspace")
            if new != old and conn.execute("SELECT 1 FROM runs WHERE name = ?", (new,)).fetchone():
                raise OptionError(f"another run is already named {new!r}")
            conn.execute("UPDATE runs SET name = ? WHERE name = ?", (new, old))
            for rid, opts in conn.execute("SELECT id, options FROM runs WHERE kind = 'fused'").fetchall():
                o = loads(opts, {})
                if old in o.get("inputs", ()):
                    o["inputs"] = [new if n == old else n for n in o["inputs"]]
                    conn.execute("UPDATE runs SET options = ? WHERE id = ?", (dumps(o), rid))

        self.commit(list, record)

    def set_run_info(self, name: str, *, model: Any = _UNSET, version: Any = _UNSET, step: Any = _UNSET,
                     tags: Any = _UNSET, aspect: Any = _UNSET) -> None:
        """Change a run's model, version, step, tags or aspect (what is not given stays).

        Only the given fields are written, in one transaction that finds the run by name, so a
        change another process made meanwhile to another field is kept; a run removed meanwhile
        gives the "no run named" error.
        """
        given = {"model": check_label(model, "model") if model is not _UNSET else _UNSET,
                 "version": check_label(version, "version") if version is not _UNSET else _UNSET,
                 "step": check_step(step) if step is not _UNSET else _UNSET,
                 "tags": dumps(list(check_tags(tags))) if tags is not _UNSET else _UNSET}
        cols = {k: v for k, v in given.items() if v is not _UNSET}
        new_aspect = self._aspect(aspect) if aspect is not _UNSET else _UNSET

        def record(conn: sqlite3.Connection, stored: list) -> None:
            row = conn.execute("SELECT options FROM runs WHERE name = ?", (str(name),)).fetchone()
            if row is None:
                names = [r[0] for r in conn.execute("SELECT name FROM runs ORDER BY position")]
                raise OptionError(f"no run named {name!r} in the workspace; its runs are {names}")
            values = dict(cols)
            if new_aspect is not _UNSET:
                options = loads(row[0], {})
                options.pop("aspect", None)
                if new_aspect:
                    options["aspect"] = new_aspect
                values["options"] = dumps(options)
            if not values:
                raise NoChange()
            conn.execute(f"UPDATE runs SET {', '.join(f'{c} = ?' for c in values)} WHERE name = ?",
                         (*values.values(), str(name)))

        self.commit(list, record)

    # ------------------------------------------------------------------ reading runs
    def runs(self) -> pd.DataFrame:
        """One row per run, in display order: :data:`RUN_COLUMNS` (``created_at`` as UTC datetime)."""
        rows = [{"name": r.name, "kind": r.kind, "model": r.model, "version": r.version, "step": r.step,
                 "tags": r.tags, "created_at": r.created_at, "source_name": r.source_name,
                 "source_sha256": r.source_sha256, "n_queries": r.n_queries, "n_rows": r.n_rows, "dim": r.dim,
                 "aspect": r.aspect, "inputs": r.inputs, "options": r.options} for r in self.run_records()]
        frame = pd.DataFrame(rows, columns=RUN_COLUMNS)
        frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True, format="ISO8601")
        frame["step"] = frame["step"].astype(float)
        return frame

    def run_names(self) -> list[str]:
        return [r.name for r in self.run_records()]

    def load_run(self, name: str) -> Run:
        """The Run of a run: read (ranked), or built as :meth:`evaluate` builds it (embedding, fused)."""
        rec = self.run_record(name)
        if rec.kind == "ranked":
            return self.read_run(rec.artifact, name=rec.name, what=f"run {rec.name!r}")
        res = self.resolve(runs=[rec.name])
        if rec.name in res.errors:
            raise OptionError(res.errors[rec.name])
        return res.runs[rec.name]

    def load_embeddings(self, name: str) -> tuple[Embeddings, Embeddings | None]:
        """An embedding run's document and (None when item-to-item) query vectors, memory-mapped."""
        return self.run_embeddings(self.run_record(name))

    # ------------------------------------------------------------------ evaluation
    def resolve(self, *, runs: Sequence[str] | None = None, progress: Callable[[int, int], None] | None = None,
                **settings: Any) -> Resolved:
        """Ground truth, sample and runs ready to evaluate (:func:`~.resolve.resolve`).

        ``settings`` override the stored ones for this call (``metrics=``, ``k=``, ``ties=``...).
        """
        return resolve(self, self._settings_with(settings), runs=runs, progress=progress)

    def evaluate(self, *, metrics: Sequence[str] | str | None = None, k: Sequence[int] | int | None = None,
                 ties: str | None = None, rel_threshold: int | None = None, no_relevant: str | None = None,
                 runs: Sequence[str] | None = None, sample_size: int | None = None, seed: int | None = None,
                 depth: int | None = None, judged_only: bool | None = None, record: bool = True,
                 progress: Callable[[int, int], None] | None = None, strict: bool = False) -> Evaluation:
        """Evaluate the stored runs against the active ground truth (every metric at every k).

        Options left None take the stored settings (:meth:`settings`; ``judged_only``:
        trec_eval's ``-J``, see :func:`evalcore.evaluate`). Embedding runs are
        ranked by exact top-k once (the ranking is kept in the workspace). A run that
        cannot be evaluated (a damaged artifact...) is left out with an
        :class:`~evalcore.errors.EvalcoreWarning` and listed in ``settings["errors"]``
        of the result. With ``record`` (and a writable workspace) the evaluation is
        stored in the catalogue, its per-query table as Parquet (once per distinct input).
        ``strict`` (default False): a ground-truth query a run does not answer or that an embedding
        run's embeddings lack, or a relevant document absent from its corpus, raises
        :class:`~evalcore.errors.MissingIdsError` (the coverage warning's message) and nothing is
        recorded (:func:`~.resolve.evaluate_stored`).
        """
        return evaluate_stored(self, self._settings_with(dict(
            metrics=metrics, k=k, ties=ties, rel_threshold=rel_threshold, no_relevant=no_relevant,
            sample_size=sample_size, seed=seed, depth=depth, judged_only=judged_only)),
            runs=runs, progress=progress, record=record, strict=strict)

    def record_evaluation(self, ev: Evaluation, *, key: str | None = None, ground_truth_id: int | None = None) -> int:
        """Store an evaluation (its table as Parquet); returns its id. The same ``key`` is stored once."""
        from .evaluations import record_evaluation

        return record_evaluation(self, ev, key=key, ground_truth_id=ground_truth_id)

    def evaluations(self) -> pd.DataFrame:
        """The stored evaluations, newest last: ``id, created_at, ground_truth, runs, metrics, k, errors``."""
        from .evaluations import list_evaluations

        return list_evaluations(self)

    def load_evaluation(self, evaluation_id: int | None = None) -> Evaluation:
        """A stored evaluation (default the newest) as an :class:`~evalcore.evaluate.Evaluation`."""
        from .evaluations import load_evaluation

        return load_evaluation(self, evaluation_id)

    # ------------------------------------------------------------------ folder operations
    def export(self, path: str | Path) -> Path:
        """Write the whole workspace as one portable ``.zip`` (:func:`~.bundle.export_bundle`)."""
        from .bundle import export_bundle

        return export_bundle(self, path)

    def copy_to(self, new_path: str | Path) -> Workspace:
        """Copy the workspace into ``new_path`` (absent or empty) and open the copy (writable)."""
        from .bundle import copy_workspace

        return Workspace.open(copy_workspace(self, new_path))

    def gc(self, *, age: float | None = None) -> dict[str, int]:
        """Remove artifacts nothing refers to any more (:func:`~.bundle.collect_garbage`)."""
        from .bundle import collect_garbage

        return collect_garbage(self, age=age)

    def verify(self) -> list[str]:
        """Check every stored artifact against its SHA-256; returns one message per problem (empty: all good)."""
        from .bundle import verify_artifacts

        return verify_artifacts(self)

"""Adding, replacing, removing, renaming and describing the runs of a workspace.

A base class of :class:`evalcore.workspace.api.Workspace` (split out to keep each module short).
Every run is checked before anything is written (its name, run info and options; see
:mod:`.inputs`), then its artifacts are written and ONE catalogue transaction records it
(:meth:`~.core.WorkspaceCore.commit`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import OptionError
from . import codecs
from .ground_truths import GroundTruths
from .idchecks import check_answers_some, check_embedding_ids, check_run_ids
from .inputs import (
    check_bool,
    check_label,
    check_run_name,
    check_step,
    check_tags,
    embedding_files_key,
    embeddings_input,
    fusion_options,
    run_input,
)
from .store import NoChange, dumps, loads, now

__all__ = ["RunChanges"]

_UNSET: Any = object()


def _without(options: dict, *keys: str) -> str:
    """``options`` without ``keys``, as stored (canonical JSON)."""
    return dumps({k: v for k, v in options.items() if k not in keys})


class RunChanges(GroundTruths):
    """Adding and editing runs (see the module docstring)."""

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

        Raises
        ------
        MissingIdsError
            None of the run's query ids is a query of the active ground truth (a wrong id array); a run
            answering some of them is stored, its evaluation scoring the others 0. Nothing is checked
            while the workspace has no ground truth.
        InputFormatError
            A query or document id holds a control character (tab, line break, NUL...).

        Nothing is written when an error is raised.
        """
        name, replace = check_run_name(name), check_bool(replace, "replace")
        meta = self._meta(model, version, step, tags)
        run, src_name, sha = run_input(path_or_run, name=name, format=format, label=source_name)
        check_run_ids(run, owner=f"run {name!r}", file=src_name)
        aspect = self._aspect(aspect)
        self._check_answers(name, run.query_ids, aspect)
        options: dict[str, Any] = {"aspect": aspect} if aspect else {}
        if run.search_depth is not None:  # (an exact search's, a random baseline's: read back marked so)
            options["search_depth"] = int(run.search_depth)
        return self._insert(name, "ranked", meta, lambda: [self.put("run", lambda p: codecs.write_run(run, p))],
                            options, src_name, source_sha256 or sha,
                            (run.n_queries, len(run), None), replace)

    def add_run_files(self, files: Any, *, format: str = "auto", aspect: str | None = None,
                      progress: Callable[[int, int, str], None] | None = None) -> Any:
        """Add every ranked run file of a folder or a glob (``/data/runs/*.trec``), one run each, named after its
        file: :func:`evalcore.workspace.runfiles.add_run_files` (which files are left out, names, errors per file;
        each file in its own transaction). Returns a :class:`~evalcore.workspace.runfiles.RunFilesAdded`."""
        from .runfiles import add_run_files

        return add_run_files(self, files, format=format, aspect=aspect, progress=progress)

    def same_file_run(self, sha256: str, *, aspect: str | None = None) -> str | None:
        """The name of the ranked run already stored from a file of these very bytes (its recorded source SHA-256,
        ``sha256``) against the same ground-truth ``aspect`` (None: the default), the first in the workspace's
        order; None when there is none.

        Every entry point that names a run after its file (an upload, a folder or glob, ``evaluate --workspace
        --run FILE``) asks it first, so that a file stored under one name (its stem on the dashboard, its TREC
        tag on the command line) is not stored a second time under the other: the stored run is used as it is.
        """
        want = self._aspect(aspect)
        for r in self.run_records():
            if r.kind == "ranked" and r.source_sha256 == str(sha256) and (r.aspect or None) == want:
                return str(r.name)
        return None

    def add_embedding_run(self, name: str, embeddings: Any, ids: Any = None, *, query_embeddings: Any = None,
                          query_ids: Any = None, model: str | None = None, version: str | None = None,
                          step: float | None = None, tags: Sequence[str] = (), aspect: str | None = None,
                          replace: bool = False, source_name: str | None = None,
                          source_sha256: str | None = None, query_source_name: str | None = None,
                          files_sha256: str | None = None) -> str:
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
        files_sha256 : str, optional
            What recognises the files the vectors were read from (:func:`~.inputs.embedding_files_key`; default:
            computed from the files given; give it with vectors passed as arrays or ``Embeddings`` read from files).
            :meth:`same_embedding_run` finds the run by it. This method stores the run whatever it says: a name
            given is a run wanted (a deliberate copy of another is stored, its artifacts shared).

        Raises
        ------
        MissingIdsError
            As in :meth:`add_run`: none of the query ids (item-to-item: none of the item ids) is a query of
            the active ground truth.
        InputFormatError
            A document or query id holds a control character (tab, line break, NUL...).
        """
        name, replace = check_run_name(name), check_bool(replace, "replace")
        meta = self._meta(model, version, step, tags)
        docs, src_name, sha = embeddings_input(embeddings, ids, what=f"run {name!r}", label=source_name,
                                               id_what="document id")
        queries, query_sha = None, None
        aspect = self._aspect(aspect)
        options: dict[str, Any] = {"aspect": aspect} if aspect else {}
        if query_embeddings is not None:
            queries, qname, query_sha = embeddings_input(query_embeddings, query_ids,
                                                         what=f"run {name!r} (queries)", label=query_source_name,
                                                         owner=f"run {name!r}", id_what="query id")
            if queries.dim != docs.dim:
                raise OptionError(f"run {name!r}: documents have {docs.dim} dimensions but queries {queries.dim}")
            options["query_source"] = qname
        elif query_ids is not None:
            raise OptionError(f"run {name!r}: query_ids without query_embeddings")
        check_embedding_ids(docs, owner=f"run {name!r}", what="document id", file=src_name)
        if queries is not None:
            check_embedding_ids(queries, owner=f"run {name!r}", what="query id", file=options.get("query_source"))
        self._check_answers(name, (docs if queries is None else queries).ids, aspect, items=queries is None)

        def stage() -> list:
            out = [self.put("embeddings", lambda p: codecs.write_vectors(docs.vectors, p)),
                   self.put("ids", lambda p: codecs.write_ids(docs.ids, p))]
            if queries is not None:
                out += [self.put("embeddings", lambda p: codecs.write_vectors(queries.vectors, p)),
                        self.put("ids", lambda p: codecs.write_ids(queries.ids, p))]
            return out

        if files_sha256 is None and sha is not None:  # (the files' hashes already taken: not read again)
            files_sha256 = embedding_files_key(embeddings, ids, query_embeddings=query_embeddings, query_ids=query_ids,
                                               docs_sha256=sha, queries_sha256=query_sha if queries else None)
        if files_sha256 is not None and files_sha256 != (source_sha256 or sha):
            options["files_sha256"] = str(files_sha256)  # (one file: its source_sha256 says it)
        nq = None if queries is None else len(queries)
        return self._insert(name, "embedding", meta, stage, options, src_name, source_sha256 or sha,
                            (nq, len(docs), docs.dim), replace)

    def same_embedding_run(self, embeddings: Any, ids: Any = None, *, query_embeddings: Any = None,
                           query_ids: Any = None, aspect: str | None = None) -> str | None:
        """The name of the embedding run already stored from these very files (the documents' file, and the
        queries' for a run of queries against a corpus; their ids files when separate: compared by their bytes,
        :func:`~.inputs.embedding_files_key`) against the same ground-truth ``aspect`` (None: the default), the
        first in the workspace's order; None when there is none, or when the inputs are not files (arrays).

        The embedding runs' :meth:`same_file_run`: the dashboard (an upload, a path without a run name) asks it
        before it stores an embedding run named after its file (:func:`~.runfiles.add_embedding_file`), so that
        the same files uploaded twice are one run; nothing is read but the files' bytes.
        """
        key = embedding_files_key(embeddings, ids, query_embeddings=query_embeddings, query_ids=query_ids)
        if key is None:
            return None
        found = self.embedding_runs_of_files(key, aspect=aspect, any_aspect=False)
        return found[0] if found else None

    def embedding_runs_of_files(self, key: str, *, aspect: str | None = None, any_aspect: bool = True) -> list[str]:
        """The embedding runs stored from the files of :func:`~.inputs.embedding_files_key` ``key`` (against
        ``aspect`` unless ``any_aspect``), in the workspace's order. A run stored before the key was recorded is
        recognised by its ``source_sha256`` when it was one file holding its ids (item-to-item, not a ``.npy``)."""
        want = None if any_aspect else self._aspect(aspect)
        out = []
        for r in self.run_records():
            if r.kind != "embedding" or (not any_aspect and (r.aspect or None) != want):
                continue
            own = r.options.get("files_sha256")
            if own is None and r.query_artifact is None and not str(r.source_name or "").lower().endswith(".npy"):
                own = r.source_sha256
            if own == str(key):
                out.append(str(r.name))
        return out

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
        name, replace = check_run_name(name), check_bool(replace, "replace")
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

    def _check_answers(self, name: str, query_ids: Any, aspect: str | None, *, items: bool = False) -> None:
        """Refuse a run none of whose query ids (an item-to-item run: item ids) is a query of the active
        ground truth (:func:`~.idchecks.check_answers_some`); without a ground truth there is nothing to check."""
        universe = self.query_universe(aspect)
        if universe is not None:
            check_answers_some(name, query_ids, universe[0], ground_truth=universe[1], items=items)

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
                same = (kind, model, version, step, dumps(list(tags)), *arts)
                # the files' key is provenance, as source_sha256: the same content from other files (saved again,
                # another format) or recorded before the key was kept is the same run (its record stays as it is)
                had = _without(loads(old[11], {}), "files_sha256")
                if tuple(old[2:11]) == same and had == _without(options, "files_sha256"):
                    raise NoChange(name)  # the very same run again (a restarted script): nothing to do
                # a record from before search depths were kept: the same run again records its depth
                if tuple(old[2:11]) != same or had != _without(options, "files_sha256", "search_depth") \
                        or "search_depth" not in options:
                    raise OptionError(f"a run named {name!r} already exists with other content or run info; "
                                      "choose another name or pass replace=True")
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

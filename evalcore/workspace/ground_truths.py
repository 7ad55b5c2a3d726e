"""The ground truth of a workspace: setting it (judgments or a reference model), reading it back.

A base class of :class:`evalcore.workspace.api.Workspace` (split out to keep each module short):
judgments are stored parsed, one Parquet part per aspect; a reference model as its vectors and
ids. Setting the active ground truth again changes nothing; setting another keeps the previous
one, inactive (:meth:`~.sidecar.SettingsAndSideFiles.use_ground_truth` brings it back).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import numpy as np

from ..data import Qrels
from ..errors import CorruptArtifactError, OptionError
from ..io.embeddings import Embeddings
from . import codecs
from .idchecks import check_embedding_ids, check_qrels_ids, warn_runs_answering_none
from .inputs import check_label, embeddings_input, qrels_parts
from .sidecar import SettingsAndSideFiles
from .sidechecks import warn_stored_side_ids
from .store import NoChange, dumps, now

__all__ = ["GroundTruths"]


class GroundTruths(SettingsAndSideFiles):
    """Setting and reading the ground truth (see the module docstring)."""

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

        Raises
        ------
        InputFormatError
            A query or document id holds a control character (tab, line break, NUL...): nothing is stored.

        Warns
        -----
        EvalcoreWarning
            When another ground truth becomes the active one (none was there, or another one was), one
            warning names the stored runs none of whose query ids is one of its queries (item-to-item
            embedding runs: none of their item ids), with a few ids of both sides
            (:func:`~.idchecks.warn_runs_answering_none`): evaluated against it they would count 0 (an
            embedding run: not be evaluated). Not an error: changing the ground truth is legitimate, and
            those runs stay stored for the ground truth they answer (:meth:`use_ground_truth` brings an
            earlier one back; :meth:`remove_run` removes a run). :meth:`add_run` refuses such a run. And the
            stored domain mapping and query texts are matched to its queries: one naming none of them, or leaving
            some without, is said (:func:`~.sidechecks.warn_stored_side_ids`).
        """
        parts, src_name, sha, fmt = qrels_parts(path_or_qrels, format=format, label=source_name)
        for aspect, q in parts:
            check_qrels_ids(q, owner="the ground truth" + (f" (aspect {aspect!r})" if aspect else ""), file=src_name)
        label = check_label(name, "the ground truth's name") or src_name or "ground truth"
        stage = lambda: [self.put("qrels", lambda p, q=q: codecs.write_qrels(q, p)) for _, q in parts]  # noqa: E731
        counts = [(q.n_queries, len(q)) for _, q in parts]
        if self._set_gt(stage, "qrels", label, src_name, sha, fmt, {},
                        lambda stored: [(a, s.sha256, None, *c) for (a, _), s, c in zip(parts, stored, counts,
                                                                                        strict=True)]):
            warn_runs_answering_none(self)
            warn_stored_side_ids(self)

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
        is a setting (:meth:`set_settings`), applied at evaluation. The reference's items are the queries:
        as in :meth:`set_ground_truth`, a warning names the stored runs answering none of them.
        """
        emb, src_name, sha = embeddings_input(embeddings, ids, what="reference embeddings", label=source_name,
                                              owner="the reference embeddings")
        check_embedding_ids(emb, owner="the reference embeddings", what="id", file=src_name)
        sha = sha or source_sha256
        label = check_label(name, "the ground truth's name") or src_name or "reference"

        def stage() -> list:
            return [self.put("embeddings", lambda p: codecs.write_vectors(emb.vectors, p)),
                    self.put("ids", lambda p: codecs.write_ids(emb.ids, p))]

        if self._set_gt(stage, "reference", label, src_name, sha, None, {"dim": emb.dim},
                        lambda stored: [(None, stored[0].sha256, stored[1].sha256, len(emb), None)]):
            warn_runs_answering_none(self)
            warn_stored_side_ids(self)

    def _set_gt(self, stage: Callable[[], list], kind: str, name: str, src_name: str | None, sha: str | None,
                fmt: str | None, options: dict, parts: Callable[[list], list]) -> bool:
        """Store a ground truth; True when it became the active one (False: the active one again, maybe renamed)."""
        def record(conn: sqlite3.Connection, stored: list) -> bool:
            rows = parts(stored)
            active = conn.execute("SELECT id, name, kind FROM ground_truths WHERE active = 1").fetchone()
            if active is not None and active[2] == kind:
                have = conn.execute("SELECT aspect, artifact, ids_artifact FROM ground_truth_parts WHERE gt_id = ? "
                                    "ORDER BY position", (active[0],)).fetchall()
                if [tuple(r) for r in have] == [tuple(r[:3]) for r in rows]:
                    if active[1] != name:  # the same judgments, another file name: renamed (evaluations stay current)
                        conn.execute("UPDATE ground_truths SET name = ?, source_name = ?, source_sha256 = ?, format = ? "
                                     "WHERE id = ?", (name, src_name, sha, fmt, active[0]))
                        return False
                    if sha and conn.execute("UPDATE ground_truths SET source_sha256 = ? WHERE id = ? AND "
                                            "source_sha256 IS NULL", (sha, active[0])).rowcount:
                        return False  # the same again, now with its source's SHA-256 (recorded before without)
                    raise NoChange(False)  # the same ground truth again
            conn.execute("UPDATE ground_truths SET active = 0 WHERE active = 1")
            cur = conn.execute("INSERT INTO ground_truths (name, kind, source_name, source_sha256, format, options, "
                               "created_at, active) VALUES (?, ?, ?, ?, ?, ?, ?, 1)",
                               (name, kind, src_name, sha, fmt, dumps(options), now()))
            for i, (aspect, art, ids_art, nq, nr) in enumerate(rows):
                conn.execute("INSERT INTO ground_truth_parts (gt_id, position, aspect, artifact, ids_artifact, "
                             "n_queries, n_rows) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (cur.lastrowid, i, aspect, art, ids_art, nq, nr))
            return True

        return bool(self.commit(stage, record))

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

    def query_universe(self, aspect: str | None = None) -> tuple[np.ndarray, str] | None:
        """The query ids a run is evaluated on, and the ground truth's name; None without a ground truth.

        Every query of the active ground truth (of ``aspect``, a stored aspect name, else the first part;
        before any sampling), or a reference model's items. None too when it cannot be read (a damaged
        artifact: :meth:`evaluate` reports that).
        """
        gt = self.ground_truth_record()
        if gt is None:
            return None
        try:
            if gt.kind == "reference":
                return np.asarray(self.reference_ids(), dtype=object), gt.name
            part = gt.part(aspect if aspect in gt.aspects else None)
            return self.read_qrels(part, label=gt.name).query_ids, gt.name
        except CorruptArtifactError:
            return None

    def load_reference(self) -> Embeddings:
        """A reference ground truth's embeddings (memory-mapped)."""
        gt = self.ground_truth_record()
        if gt is None or gt.kind != "reference":
            raise OptionError("the workspace's ground truth is not a reference model")
        return self.reference(gt)

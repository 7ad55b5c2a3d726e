"""An embedding run's exact top-k ranking, computed once and kept beside the workspace's data.

The ranking of a stored embedding run depends on its artifacts, the depth and the judged
queries (:func:`ranking_key`). :func:`embedding_ranking` reads it from the catalogue's
``derived`` table when it is there, else ranks by exact cosine top-k
(:func:`evalcore.embedding_runs.embedding_run`) and keeps it (a writable workspace: stored
as a run artifact, without bumping the generation; the read-only demo: in this process).
Used by the evaluation of a stored workspace (:mod:`.resolve`) and by the dashboard
(:mod:`.stored`), so both share one ranking.

A stored reference model's neighbours (the search behind a reference ground truth) are kept
the same way (:func:`kept_reference_neighbours`): a server restarted on a 50,000-item workspace
reads them back instead of searching again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from ..data import Qrels, Run
from ..ranking import rank_order
from .artifacts import cached, peek
from .core import GroundTruthRecord, RunRecord, WorkspaceCore, qrels_key
from .model import capture, stable_key

__all__ = ["ranking_key", "embedding_ranking", "kept_reference_neighbours"]

ProgressFn = Callable[[int, int], None]


def ranking_key(rec: RunRecord, depth: int, qrels: Qrels) -> str:
    """Key of an embedding run's ranking: its artifacts, the depth and the judged queries' content."""
    return stable_key("ranking", list(rec.artifacts), int(depth), qrels_key(qrels))


def embedding_ranking(core: WorkspaceCore, rec: RunRecord, qrels: Qrels, depth: int,
                      progress: ProgressFn | None) -> tuple[Run, list[str]]:
    """The run of an embedding run (named ``rec.name``) and the warnings its ranking gave."""
    from ..embedding_runs import embedding_run

    key = ranking_key(rec, depth, qrels)
    hit = core.derived_run(key, name=rec.name)
    if hit is not None:  # (read back: the search's depth, as when ranked)
        return hit[0].searched(depth), hit[1]

    def compute() -> tuple[Run, list[str]]:
        docs, queries = core.run_embeddings(rec)
        run, msgs = capture(embedding_run, docs, queries, qrels=qrels, k=depth, name=rec.name, progress=progress)
        return run, msgs

    if core.read_only:  # the demo: rankings are kept in this process only
        run, msgs = cached("ranking", key, compute)
        return (run if run.name == rec.name else run.renamed(rec.name)), msgs
    held = peek("ranking", key)
    if held is not None:  # computed here while another process held the writer lock: kept now if it is free
        run, msgs = held
        core.store_derived(key, run, inputs=rec.artifacts, warnings=msgs, wait=0.0)
        return (run if run.name == rec.name else run.renamed(rec.name)), msgs
    run, msgs = compute()
    if not core.store_derived(key, run, inputs=rec.artifacts, warnings=msgs):
        cached("ranking", key, lambda: (run, msgs))  # the lock stayed busy: kept in this process meanwhile
    return run, msgs


def _ids_digest(ids: np.ndarray | None) -> str | None:
    if ids is None:
        return None
    h = hashlib.sha256()
    for i in np.asarray(ids, dtype=object).tolist():
        h.update(str(i).encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def kept_reference_neighbours(core: WorkspaceCore, gt: GroundTruthRecord, reference, *, depth: int,
                              query_ids: np.ndarray | None,
                              progress: ProgressFn | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`evalcore.embedding_runs.reference_neighbours` of a stored reference, searched once per workspace.

    Keyed by the reference's artifacts, the depth and the query ids asked for. Kept as a run
    artifact in the ``derived`` table (the query items, their neighbours in order; the score of a
    row is minus its position, so the order reads back exactly), or in this process for the
    read-only demo.
    """
    from ..embedding_runs import reference_neighbours

    part = gt.parts[0]
    key = stable_key("reference-neighbours", [part.artifact, part.ids_artifact], int(depth), _ids_digest(query_ids))

    def compute() -> tuple[np.ndarray, np.ndarray]:
        return reference_neighbours(reference, depth=int(depth), query_ids=query_ids, progress=progress)

    if core.read_only:
        return cached("reference-neighbours", key, compute)
    hit = core.derived_run(key, name="reference")
    if hit is not None:
        # the search's width: every query is an item of the reference, so one item fewer is available
        return _neighbours_of(hit[0], reference, min(int(depth), len(reference) - 1))
    inputs = [a for a in (part.artifact, part.ids_artifact) if a]  # a workspace's gc drops it with them
    held = peek("reference-neighbours", key)
    if held is not None:  # searched here while another process held the writer lock: kept now if it is free
        core.store_derived(key, _neighbours_run(held[0], reference, held[1]), inputs=inputs, warnings=[], wait=0.0)
        return held
    idx, qids = compute()
    if not core.store_derived(key, _neighbours_run(idx, reference, qids), inputs=inputs, warnings=[]):
        cached("reference-neighbours", key, lambda: (idx, qids))  # the lock stayed busy: kept in this process
    return idx, qids


def _neighbours_run(idx: np.ndarray, reference, qids: np.ndarray) -> Run:
    mask = idx >= 0
    q = np.repeat(np.arange(idx.shape[0], dtype=np.int64), idx.shape[1])[mask.ravel()]
    pos = np.tile(np.arange(idx.shape[1], dtype=np.float64), idx.shape[0])[mask.ravel()]
    return Run.from_codes(np.asarray(qids, dtype=object), q, np.asarray(reference.ids, dtype=object),
                          idx[mask].astype(np.int64), -pos, name="reference", source="reference neighbours",
                          check_duplicates=False)


def _neighbours_of(run: Run, reference, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The (neighbours, query ids) a :func:`_neighbours_run` run holds, in their order, ``width`` columns."""
    qids = np.asarray(run.query_ids, dtype=object)
    order, _ = rank_order(run, ties="input")  # scores are minus positions: no ties; as stored, no sort
    q = np.asarray(run.q, dtype=np.int64)[order]
    rows = reference.rows_of(np.asarray(run.doc_vocab, dtype=object))[np.asarray(run.d)[order]]  # per distinct id
    counts = np.bincount(q, minlength=len(qids))
    width = max(width, int(counts.max(initial=0)))
    idx = np.full((len(qids), width), -1, dtype=np.int64)
    starts = np.cumsum(counts) - counts
    idx[q, np.arange(len(q)) - starts[q]] = rows
    return idx, qids

"""The dashboard's view of a persistent workspace: a :class:`~.model.Snapshot` that holds no bytes.

:func:`snapshot_of` reads a workspace's catalogue (ground truth, runs with their model,
version and step, side files, settings) into a :class:`~.model.Snapshot` whose sources
carry a :class:`~.refs.StoreRef` instead of uploaded bytes. The pipeline (:mod:`.pipeline`)
reads such sources with the functions below:

* artifacts are read through the workspace (:meth:`~.core.WorkspaceCore.read_run`,
  ``read_qrels``...): checked against their SHA-256 and parsed once per process, so every
  session showing the workspace shares one copy; embeddings are memory-mapped;
* an embedding run's ranking is the one :mod:`.rankings` keeps in the workspace (computed
  once, by the dashboard, the CLI or :meth:`~.api.Workspace.evaluate`, whichever comes first).

A stored run's ``uid`` is ``r<catalogue id>``: it survives renames and edits of its model,
version and step; a fused run names its inputs by those uids.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..data import Qrels, Run
from ..errors import OptionError, warn
from . import codecs
from .model import FusionSpec, GroundTruthSource, RunSource, Snapshot
from .rankings import embedding_ranking
from .refs import StoredFile, StoreRef

__all__ = ["snapshot_of", "run_uid", "stored_qrels", "stored_reference", "stored_run", "stored_embeddings",
           "stored_side"]


def run_uid(record: Any) -> str:
    """The dashboard's id of a stored run: ``r<catalogue id>``."""
    return f"r{record.id}"


def _fusion(record: Any, uids: dict[str, str]) -> FusionSpec:
    o = record.options
    return FusionSpec(tuple(uids.get(n, f"missing:{n}") for n in o.get("inputs", ())),
                      tuple(float(w) for w in o.get("weights", ())), float(o.get("c", 60.0)), o.get("top_n"),
                      o.get("method", "rrf"), o.get("norm", "none"), o.get("ties"))


def snapshot_of(ws: Any, *, demo_seed: int | None = None, generation: int | None = None) -> Snapshot:
    """The :class:`~.model.Snapshot` of a workspace (:class:`~.api.Workspace`) as it is now.

    Parameters
    ----------
    ws : Workspace
    demo_seed : int, optional
        Marks the built-in demo's workspace (its reference model's vectors, which the demo
        does not store, then serve the Agreement page).
    generation : int, optional
        The workspace's :attr:`~.core.WorkspaceCore.generation` read before (recorded in the
        snapshot; default: read here, before the records).
    """
    if generation is None:
        generation = ws.generation
    records = ws.run_records()
    uids = {r.name: run_uid(r) for r in records}
    runs = tuple(RunSource(uids[r.name], r.name, r.kind, aspect=r.aspect, model=r.model, version=r.version,
                           step=r.step, fusion=_fusion(r, uids) if r.kind == "fused" else None,
                           store=StoreRef(ws, r)) for r in records)
    gt_rec = ws.ground_truth_record()
    gt = None
    if gt_rec is not None:
        gt = GroundTruthSource("file" if gt_rec.kind == "qrels" else "reference", format=gt_rec.format or "auto",
                               demo_seed=demo_seed, store=StoreRef(ws, gt_rec))
    side = {role: StoredFile(info["name"] or role, info["artifact"], role, ws)
            for role, info in ws.side_files().items()}
    return Snapshot(gt, runs, domain_blob=side.get("domains"), metadata_blob=side.get("metadata"),
                    settings=ws.settings(), queries_blob=side.get("queries"), demo_seed=demo_seed,
                    generation=generation)


# ------------------------------------------------------------------ reading stored sources


def stored_qrels(gt: GroundTruthSource, aspect: str | None) -> Qrels:
    """The stored judgments of a ground truth's aspect (default the first), every query."""
    rec = gt.store.record
    if rec.kind != "qrels":
        raise OptionError("a reference model's ground truth is built per query sample")
    return gt.store.core.read_qrels(rec.part(aspect), label=rec.name)


def stored_reference(gt: GroundTruthSource) -> Any:
    """A reference ground truth's embeddings (memory-mapped)."""
    return gt.store.core.reference(gt.store.record)


def stored_run(src: RunSource, qrels: Qrels | None, depth: int,
               progress: Callable[[int, int], None] | None) -> Run:
    """The Run of a stored ranked or embedding run (a fused run is built from its inputs by the pipeline).

    An embedding run's ranking warnings (coverage...) are emitted as :class:`EvalcoreWarning`.
    """
    ref: StoreRef = src.store
    rec = ref.record
    if rec.kind == "ranked":
        return ref.core.ranked_run(rec, name=src.name)
    if rec.kind != "embedding":
        raise OptionError(f"run {src.name!r}: a {rec.kind} run is not read from the store")
    if qrels is None:
        raise OptionError("an embedding run needs the ground truth (its queries)")
    run, msgs = embedding_ranking(ref.core, rec, qrels, depth, progress)
    for m in msgs:
        warn(m)
    return run if run.name == src.name else run.renamed(src.name)


def stored_embeddings(src: RunSource) -> Any:
    """The document vectors of a stored embedding run (memory-mapped)."""
    return src.store.core.run_embeddings(src.store.record)[0]


_SIDE_READERS = {"domains": codecs.read_domains, "metadata": codecs.read_metadata, "queries": codecs.read_queries}


def stored_side(blob: StoredFile) -> Any:
    """What a stored side file holds: query id -> domain, the metadata frame, or query id -> text."""
    return blob.core.objects.load(blob.sha256, "parquet", what=f"{blob.role} file {blob.name!r}",
                                  parse=_SIDE_READERS[blob.role], kind=blob.role)

"""An embedding run's exact top-k ranking, computed once and kept beside the workspace's data.

The ranking of a stored embedding run depends on its artifacts, the depth and the judged
queries (:func:`ranking_key`). :func:`embedding_ranking` reads it from the catalogue's
``derived`` table when it is there, else ranks by exact cosine top-k
(:func:`evalcore.embedding_runs.embedding_run`) and keeps it (a writable workspace: stored
as a run artifact, without bumping the generation; the read-only demo: in this process).
Used by the evaluation of a stored workspace (:mod:`.resolve`) and by the dashboard
(:mod:`.stored`), so both share one ranking.
"""

from __future__ import annotations

from collections.abc import Callable

from ..data import Qrels, Run
from .artifacts import cached
from .core import RunRecord, WorkspaceCore, qrels_key
from .model import capture, stable_key

__all__ = ["ranking_key", "embedding_ranking"]

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
    if hit is not None:
        return hit

    def compute() -> tuple[Run, list[str]]:
        docs, queries = core.run_embeddings(rec)
        run, msgs = capture(embedding_run, docs, queries, qrels=qrels, k=depth, name=rec.name, progress=progress)
        return run, msgs

    if core.read_only:  # the demo: rankings are kept in this process only
        run, msgs = cached("ranking", key, compute)
        return (run if run.name == rec.name else run.renamed(rec.name)), msgs
    run, msgs = compute()
    core.store_derived(key, run, inputs=rec.artifacts, warnings=msgs)
    return run, msgs

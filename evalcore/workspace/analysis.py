"""Analyses over what the pipeline resolved: fusion weight search, agreement between runs, Tukey's HSD.

Each is one call for a dashboard page (pure functions of their inputs; the
dashboard caches them by content key):

* :func:`search_fusion_weights` — :func:`evalcore.fusion_search.search_weights` on the
  ground truth that scores metric@k (a reference model's top-k at that k in the
  ``tied`` mode, its graded top-N in the ``fixed`` mode, else the evaluated qrels);
* :func:`run_agreement` — :func:`evalcore.agreement.agreement` of the evaluated runs on the
  evaluated queries, with its summary;
* :func:`reference_embeddings` and :func:`similarity_agreement` — seed 000's Spearman ρ
  and MAE of pairwise cosine similarities between the reference model and every run
  with embeddings (:func:`evalcore.embedding_runs.reference_agreement`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..data import Qrels, Run
from ..defaults import FUSION_STEP, FUSION_STRATEGY, FUSION_TRIALS, SEED, SIMILARITY_PAIRS
from ..errors import OptionError
from .model import GroundTruthSource, RunSource, Settings
from .pipeline import gt_embeddings, run_embeddings

__all__ = [
    "fusion_ground_truth",
    "search_fusion_weights",
    "RunAgreement",
    "run_agreement",
    "reference_embeddings",
    "similarity_agreement",
]


def fusion_ground_truth(qrels: Qrels, reference: Any, k: int) -> Qrels:
    """The judgments metric@``k`` is scored on (see the module docstring)."""
    if reference is None:
        return qrels
    if reference.mode != "tied":
        return reference.fixed
    if int(k) not in reference.by_k:
        raise OptionError(f"with a reference model's top-k at each k (tied), k must be one of {sorted(reference.by_k)}")
    return reference.by_k[int(k)]


def search_fusion_weights(
    qrels: Qrels, reference: Any, runs: Mapping[str, Run], *, metric: str, k: int, settings: Settings,
    method: str = "rrf", norm: str = "none", strategy: str = FUSION_STRATEGY, step: float = FUSION_STEP,
    n_trials: int = FUSION_TRIALS, seed: int = SEED, tune_fraction: float | None = None, c: float = 60.0, top_n: int | None = None,
    progress: Callable[[int, int], None] | None = None,
):
    """:func:`evalcore.fusion_search.search_weights` of ``runs`` on ``metric@k`` with the settings' rules (tie rule,
    relevance threshold, no-relevant rule and judged-only, as the evaluation the pages show; ``progress(done, total)``
    after each trial). ``qrels``: the evaluated (sampled) queries' judgments."""
    from ..fusion_search import search_weights

    gt = fusion_ground_truth(qrels, reference, k)
    return search_weights(
        gt, runs, metric=f"{metric}@{int(k)}" if int(k) else metric, method=method, norm=norm,
        strategy=strategy, step=step, n_trials=n_trials, seed=seed, tune_fraction=tune_fraction, c=c,
        top_n=top_n, ties=settings.ties, rel_threshold=settings.rel_threshold, no_relevant=settings.no_relevant,
        judged_only=bool(settings.judged_only),
        progress=progress,
    )  # fmt: skip


@dataclass(frozen=True)
class RunAgreement:
    """Per-query agreement table and its summary (:mod:`evalcore.agreement`)."""

    table: pd.DataFrame
    summary: pd.DataFrame


def run_agreement(runs: Mapping[str, Run], *, query_ids: Sequence[str], k: Sequence[int], p: float,
                  ties: str, measures: Sequence[str] = ("overlap", "rbo", "kendall_tau")) -> RunAgreement:
    """Overlap@k, RBO(p) and Kendall's τ (or the ``measures`` named) of every pair of ``runs`` (and each
    run with itself)."""
    from ..agreement import agreement, summarize_agreement

    table = agreement(runs, k=list(k), p=p, ties=ties, query_ids=list(query_ids), include_self=True,
                      measures=list(measures))
    return RunAgreement(table, summarize_agreement(table))


def reference_embeddings(gt: GroundTruthSource):
    """The reference model's vectors behind the ground truth (:class:`evalcore.io.Embeddings`), or None.

    A reference-model ground truth (seed 000) and the demo (whose ground truth
    is its reference model's top-10) have them; judgment files do not.
    """
    if gt.kind == "reference":
        return gt_embeddings(gt)
    if gt.kind == "demo" or gt.demo_seed is not None:  # the demo (its reference model's vectors are not stored)
        from ..io import Embeddings
        from .demo import cached_demo

        demo = cached_demo(gt.demo_seed or 0)
        return Embeddings.from_arrays(demo.item_ids, demo.embeddings["reference"], source=demo.label)
    return None


def similarity_agreement(gt: GroundTruthSource, sources: Sequence[RunSource], *,
                         n_pairs: int = SIMILARITY_PAIRS, seed: int = SEED) -> pd.DataFrame:
    """Spearman ρ and MAE of sampled pair similarities, reference vs each run with embeddings.

    Columns ``model, spearman, mae, n_pairs, n_items``; no rows when the ground
    truth has no reference vectors or no run has embeddings.
    """
    from ..embedding_runs import reference_agreement

    ref = reference_embeddings(gt)
    models = {src.name: emb for src in sources if (emb := run_embeddings(src)) is not None}
    if ref is None or not models:
        return pd.DataFrame(columns=["model", "spearman", "mae", "n_pairs", "n_items"])
    return reference_agreement(ref, models, n_pairs=n_pairs, seed=seed)

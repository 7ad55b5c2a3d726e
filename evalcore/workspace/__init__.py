"""The dashboard's data model and pipeline, in pure Python (no Streamlit).

* :mod:`.model` — what the user loaded and chose (:class:`Workspace`: files as
  :class:`Blob`, a :class:`GroundTruthSource`, :class:`RunSource` s, :class:`Settings`)
  and the functions that edit it;
* :mod:`.pipeline` — from that to the :class:`~evalcore.evaluate.Evaluation`: each step a
  pure function of content keys, so the dashboard caches each step and never recomputes
  retrieval when only the displayed k, query, run or baseline changes::

    ground truth bytes ──load_ground_truth──> Qrels (per aspect)
                       ──query_universe──> all query ids ──sample_query_ids──> sample
    Qrels + domains + sample ──prepare_qrels──> evaluated Qrels
    run bytes / embeddings / fusion ──build_run──> Run        (retrieval only here)
    Qrels + Runs + Settings ──evaluate_workspace──> Evaluation (every k at once)

* :mod:`.demo` — the built-in synthetic demo.

Every number the dashboard shows is an aggregation of ``Evaluation.table``
(:mod:`evalcore.aggregate`, :mod:`evalcore.stats`); display reshaping lives in the
dashboard (``dashboard/tables.py``).
"""

from .model import (
    DEFAULT_K,
    METRIC_CHOICES,
    REFERENCE_MODES,
    TIE_CHOICES,
    Blob,
    FusionSpec,
    GroundTruthSource,
    RunSource,
    Settings,
    Workspace,
    add_embedding_run,
    add_fused_run,
    add_ranked_run,
    capture,
    clear_demo,
    content_hash,
    demo_workspace,
    detect_qrels,
    detect_run,
    embedding_formats,
    ground_truth_aspects,
    looks_like_embeddings,
    parse_metric_names,
    qrels_formats,
    run_formats,
    set_ground_truth,
    set_run_options,
    stable_key,
)
from .pipeline import (
    DIVERSITY_ALPHA,
    DIVERSITY_METRICS,
    build_run,
    diversity_summary,
    evaluate_workspace,
    has_embeddings,
    load_domain_map,
    load_ground_truth,
    load_metadata,
    normalize_metadata,
    prepare_qrels,
    prepare_reference,
    query_universe,
    run_diversity,
    run_embeddings,
    sample_query_ids,
)

__all__ = [
    "stable_key",
    "METRIC_CHOICES",
    "TIE_CHOICES",
    "DEFAULT_K",
    "REFERENCE_MODES",
    "content_hash",
    "Blob",
    "parse_metric_names",
    "Settings",
    "GroundTruthSource",
    "FusionSpec",
    "RunSource",
    "Workspace",
    "demo_workspace",
    "clear_demo",
    "set_ground_truth",
    "looks_like_embeddings",
    "add_ranked_run",
    "add_embedding_run",
    "add_fused_run",
    "set_run_options",
    "capture",
    "qrels_formats",
    "run_formats",
    "embedding_formats",
    "detect_qrels",
    "detect_run",
    "ground_truth_aspects",
    "load_ground_truth",
    "query_universe",
    "sample_query_ids",
    "prepare_reference",
    "prepare_qrels",
    "build_run",
    "evaluate_workspace",
    "DIVERSITY_ALPHA",
    "DIVERSITY_METRICS",
    "has_embeddings",
    "run_embeddings",
    "run_diversity",
    "diversity_summary",
    "load_domain_map",
    "load_metadata",
    "normalize_metadata",
]

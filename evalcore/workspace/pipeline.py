"""The pipeline from what the user loaded to the evaluation, in pure Python (no Streamlit).

A :class:`Snapshot` holds what the user loaded — uploaded files as
:class:`Blob` (bytes + SHA-256), a :class:`GroundTruthSource`, any number of
:class:`RunSource`, optional domain and document-metadata files — and the
:class:`Settings`. Nothing here keeps derived data: every derived object
(parsed qrels, sampled queries, rankings from embeddings, the evaluation) is a
pure function of *content keys* built from the SHA-256 of the bytes and the
options that matter, so the dashboard can cache each step by key and never
recompute retrieval when only the displayed k, query, run or baseline changes.

Pipeline (each step a function below; the dashboard wraps each in a cache)::

    ground truth bytes ──load_ground_truth──> Qrels (per aspect)
                       ──query_universe──> all query ids ──sample_query_ids──> sample
    Qrels + domains + sample ──prepare_qrels──> evaluated Qrels
    run bytes / embeddings / fusion ──build_run──> Run        (retrieval only here)
    Qrels + Runs + Settings ──evaluate_workspace──> Evaluation (every k at once)

Every number the dashboard shows is an aggregation of ``Evaluation.table``
(:mod:`evalcore.aggregate`, :mod:`evalcore.stats`); the helpers at the end of
this module only reshape those aggregates for display.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data import Qrels, Run
from ..defaults import MEAN_CI_METHOD, MEAN_RESAMPLES, SEED
from ..errors import EvalcoreError, OptionError
from ..evaluate import Evaluation, evaluate
from ..io import load_doc_metadata, load_domains, load_qrels, load_run
from .model import Blob, GroundTruthSource, RunSource, Settings
from .sidechecks import NO_DOMAIN_MATCH, label_domains
from .sidechecks import check_domain_ids as _check_domain_ids

__all__ = [
    "load_ground_truth",
    "query_universe",
    "sample_query_ids",
    "prepare_reference",
    "reference_from_embeddings",
    "prepare_qrels",
    "sample_and_label",
    "build_run",
    "prepare_fusion",
    "evaluate_workspace",
    "evaluate_runs",
    "join_aspects",
    "DIVERSITY_ALPHA",
    "DIVERSITY_METRICS",
    "diversity_metrics",
    "NO_DOMAIN_MATCH",
    "has_embeddings",
    "run_embeddings",
    "run_diversity",
    "diversity_summary",
    "load_domain_map",
    "load_metadata",
    "load_query_texts",
    "normalize_metadata",
]


# ------------------------------------------------------------------------------------------ pipeline steps


def load_ground_truth(gt: GroundTruthSource, aspect: str | None = None) -> Qrels:
    """Parse a file ground truth (or the demo's, or read a stored one) into :class:`Qrels` (every query,
    no sampling)."""
    if gt.store is not None:
        from .stored import stored_qrels

        return stored_qrels(gt, aspect)
    if gt.kind == "demo":
        from .demo import cached_demo

        return cached_demo(gt.demo_seed or 0).qrels
    if gt.kind != "file" or gt.blob is None:
        raise OptionError(f"ground truth of kind {gt.kind!r} is built per query sample (see prepare_qrels)")
    return load_qrels(gt.blob.data, format=gt.format, aspect=aspect, label=gt.blob.name)


def _load_embeddings(blob: Blob, ids_blob: Blob | None = None):
    from ..io import load_embeddings

    return load_embeddings(blob.data, ids_src=None if ids_blob is None else ids_blob.data, label=blob.name)


def gt_embeddings(gt: GroundTruthSource):
    """A reference ground truth's vectors (:class:`evalcore.io.Embeddings`; stored ones memory-mapped)."""
    if gt.store is not None:
        from .stored import stored_reference

        return stored_reference(gt)
    return _load_embeddings(gt.blob, gt.ids_blob)


def query_universe(gt: GroundTruthSource, aspect: str | None = None) -> np.ndarray:
    """Every query id of the ground truth (for a reference model: every item id)."""
    if gt.kind == "reference":
        return np.asarray(gt_embeddings(gt).ids, dtype=object)
    return np.asarray(load_ground_truth(gt, aspect).query_ids, dtype=object)


def sample_query_ids(ids: Sequence[str] | np.ndarray, n: int, seed: int) -> np.ndarray:
    """The ``n`` query ids evaluated (``n = 0`` or ``n >= len(ids)``: all, in their order).

    Drawn as seed 000 step 3 (``np.random.seed(seed); np.random.choice(N, n, replace=False)``)
    through :func:`evalcore.retrieval.sample_queries`.
    """
    ids = np.asarray(ids, dtype=object)
    if not n or n >= len(ids):
        return ids
    from ..retrieval import sample_queries

    return ids[sample_queries(ids, int(n), seed=int(seed))]


def prepare_reference(
    gt: GroundTruthSource,
    *,
    sample: np.ndarray | None,
    domains: Mapping[str, str] | None,
    settings: Settings,
    progress: Callable[[int, int], None] | None = None,
    domains_label: str | None = None,
):
    """A reference model's neighbours as ground truth (:func:`evalcore.embedding_runs.reference_ground_truth`).

    One exact top-k pass over the sampled query items; mode and depth from
    ``settings`` (``gt_mode``, ``gt_depth``, ``k``). Returns a
    :class:`~evalcore.embedding_runs.ReferenceGroundTruth` whose ``deepest``
    qrels serve the embedding runs (their queries) and the drill-down.
    """
    kept = None if gt.store is None else (gt.store.core, gt.store.record)
    return reference_from_embeddings(gt_embeddings(gt), sample=sample, domains=domains,
                                     settings=settings, progress=progress, kept=kept, domains_label=domains_label)


def reference_from_embeddings(
    ref: Any,
    *,
    sample: np.ndarray | None,
    domains: Mapping[str, str] | None,
    settings: Settings,
    progress: Callable[[int, int], None] | None = None,
    kept: tuple[Any, Any] | None = None,
    domains_label: str | None = None,
):
    """:func:`prepare_reference` of loaded :class:`~evalcore.io.Embeddings` (the stored workspace's path).

    ``kept``: the (workspace core, ground-truth record) of a stored reference, whose neighbours
    are then searched once and kept in the workspace (:func:`.rankings.kept_reference_neighbours`).
    ``domains_label``: the domain mapping's file name, for the warning that it names none of the queries.
    """
    from ..embedding_runs import (
        ReferenceGroundTruth,
        reference_depths,
        reference_ground_truth,
        reference_ground_truth_from_neighbours,
    )

    fixed = settings.gt_mode == "fixed"
    depth = settings.gt_depth if fixed else None
    query_ids = None if sample is None else list(sample)
    if kept is None:
        rg = reference_ground_truth(ref, k=list(settings.k), mode=settings.gt_mode, depth=depth,
                                    query_ids=query_ids, progress=progress)
    else:
        from .rankings import kept_reference_neighbours

        ks, gt_depth = reference_depths(list(settings.k), mode=settings.gt_mode, depth=depth)
        idx, qids = kept_reference_neighbours(kept[0], kept[1], ref, depth=max(gt_depth, max(ks)),
                                              query_ids=None if sample is None else np.asarray(query_ids, dtype=object),
                                              progress=progress)
        rg = reference_ground_truth_from_neighbours(ref, idx, qids, k=ks, mode=settings.gt_mode, depth=depth)
    if sample is not None:  # the sample's size and seed recorded as `evaluate --reference-emb --n-samples` records
        # them (report.json's metadata.reference), not the defaults (no sample, 42)
        rg = dataclasses.replace(rg, settings={**rg.settings, "n_samples": int(settings.sample_size) or None,
                                   "seed": int(settings.seed)})
    if not domains:
        return rg
    d = dict(domains)
    _check_domain_ids(rg.deepest, d, label=domains_label)
    return ReferenceGroundTruth(rg.mode, rg.ks, rg.query_ids, rg.deepest.with_domains(d),
                                {k: q.with_domains(d) for k, q in rg.by_k.items()},
                                None if rg.fixed is None else rg.fixed.with_domains(d), rg.settings)


def prepare_qrels(
    gt: GroundTruthSource,
    *,
    aspect: str | None,
    sample: np.ndarray | None,
    domains: Mapping[str, str] | None,
    settings: Settings,
    progress: Callable[[int, int], None] | None = None,
    domains_label: str | None = None,
) -> Qrels:
    """The evaluated ground truth: parsed (or built from the reference), sampled, with domains.

    For a reference model this is the deepest of its ground truths (see
    :func:`prepare_reference`, which the evaluation of that case needs).
    """
    if gt.kind == "reference":
        return prepare_reference(gt, sample=sample, domains=domains, settings=settings, progress=progress,
                                 domains_label=domains_label).deepest
    return sample_and_label(load_ground_truth(gt, aspect), sample=sample, domains=domains, domains_label=domains_label)


def sample_and_label(qrels: Qrels, *, sample: np.ndarray | None, domains: Mapping[str, str] | None,
                     domains_label: str | None = None) -> Qrels:
    """The sampled queries of parsed qrels (in the sample's order), with the domains of ``domains`` when given: per
    query, over the qrels' own domain column, which the queries it does not list keep
    (:func:`~.sidechecks.label_domains`; a mapping naming none of these queries is said, naming its file
    ``domains_label``)."""
    if sample is not None and len(sample) < qrels.n_queries:
        qrels = qrels.subset(list(sample))
    return label_domains(qrels, dict(domains), label=domains_label) if domains else qrels


def _embedding_run(src: RunSource, qrels: Qrels, depth: int, progress: Callable[[int, int], None] | None) -> Run:
    from ..embedding_runs import embedding_run

    docs = _load_embeddings(src.blob, src.ids_blob)
    queries = None if src.query_blob is None else _load_embeddings(src.query_blob, src.query_ids_blob)
    return embedding_run(docs, queries, qrels=qrels, k=depth, name=src.name, progress=progress)


def build_run(
    src: RunSource,
    *,
    qrels: Qrels | None = None,
    settings: Settings | None = None,
    inputs: Mapping[str, Run] | None = None,
    progress: Callable[[int, int], None] | None = None,
    prepared: Any = None,
) -> Run:
    """The :class:`Run` of a source, named ``src.name``.

    ``qrels`` (the evaluated, sampled ground truth) is needed by embedding runs
    (their queries); ``inputs`` (uid -> Run) by fused runs, or ``prepared``: their
    :func:`prepare_fusion` (which the weights and RRF's ``c`` do not change: a caller
    that keeps it fuses again under other weights or ``c`` without preparing again).
    """
    settings = settings or Settings()
    if src.store is not None and src.kind != "fused":
        from .stored import stored_run

        run = stored_run(src, qrels, settings.depth, progress)
    elif src.kind == "ranked":
        run = load_run(src.blob.data, format=src.format, name=src.name, label=src.blob.name)
    elif src.kind == "embedding":
        if qrels is None:
            raise OptionError("an embedding run needs the ground truth (its queries)")
        run = _embedding_run(src, qrels, settings.depth, progress)
    elif src.kind == "fused":
        from ..fusion import WEIGHTED_METHODS, check_weights

        f = src.fusion
        prepared = prepared if prepared is not None else prepare_fusion(src, inputs, settings)
        weights = check_weights(list(f.weights), prepared.names) if f.method in WEIGHTED_METHODS else None
        run = prepared.run(weights, name=src.name, c=f.c)
    elif src.kind == "demo":
        from .demo_series import demo_run

        run = demo_run(src.demo_seed or 0, src.demo_name)
    else:
        raise OptionError(f"unknown run kind {src.kind!r}")
    return run if run.name == src.name else run.renamed(src.name)


def prepare_fusion(src: RunSource, inputs: Mapping[str, Run] | None, settings: Settings | None = None) -> Any:
    """The :class:`evalcore.fusion.Prepared` fusion of a fused run's inputs (uid -> Run): all of the fusion but its
    weights and RRF's ``c`` (its inputs, method, normalisation, ``top_n`` and tie rule decide it)."""
    from ..fusion import prepare

    settings, f = settings or Settings(), src.fusion
    missing = [u for u in f.inputs if inputs is None or u not in inputs]
    if missing:
        raise OptionError("a run this fusion uses is not available (removed or failed to load)")
    names = [inputs[u].name for u in f.inputs]  # warnings name the inputs; a run listed twice gets its position
    runs = [inputs[u] if names.count(n) == 1 else inputs[u].renamed(f"{n} ({i + 1})")
            for i, (u, n) in enumerate(zip(f.inputs, names, strict=True))]
    return prepare(runs, method=f.method, norm=f.norm, c=f.c, top_n=f.top_n, ties=f.ties or settings.ties)


def _evaluate_reference(reference: Any, runs: Mapping[str, Run], settings: Settings) -> Evaluation:
    """:func:`evalcore.embedding_runs.evaluate_reference_runs`, also for measures with their own cutoff.

    In the ``"tied"`` mode every k has its own ground truth (the reference's
    top-k), evaluated once per k; a measure with a fixed cutoff (``P(rel=2)@5``)
    is evaluated once, against the ground truth of its k (which must be one of
    the k values), and one without a cutoff (``rprec``, ``first_rel_rank``)
    against the deepest one.
    """
    from ..combine import concat_evaluations
    from ..embedding_runs import evaluate_reference_runs
    from ..measures import parse_measure
    from ..metrics import K_FREE

    opts = dict(ties=settings.ties, rel_threshold=settings.rel_threshold, no_relevant=settings.no_relevant)
    if reference.mode != "tied":
        return evaluate_reference_runs(reference, runs, metrics=list(settings.metrics), **opts)
    per_k, own = [], {}
    for name in settings.metrics:
        m = parse_measure(name)
        if m.name in K_FREE:
            own.setdefault(None, []).append(name)
        elif m.k is not None:
            if m.k not in reference.by_k:
                raise OptionError(f"{name}: with a reference model's top-k at each k (tied), a fixed cutoff must be "
                                  f"one of the k values {sorted(reference.by_k)}")
            own.setdefault(m.k, []).append(name)
        else:
            per_k.append(name)
    parts = [evaluate_reference_runs(reference, runs, metrics=per_k, **opts)] if per_k else []
    for kk, names in own.items():
        qrels = reference.deepest if kk is None else reference.by_k[kk]
        parts.append(evaluate(qrels, runs, metrics=names, k=[max(reference.by_k) if kk is None else kk], **opts))
    if len(parts) == 1:
        return parts[0]
    return concat_evaluations(parts, settings={**parts[0].settings})


def evaluate_workspace(
    qrels_by_aspect: Mapping[str | None, Qrels],
    runs: Sequence[tuple[Run, str | None]],
    settings: Settings,
    *,
    reference: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> Evaluation:
    """Evaluate every run (against its aspect's ground truth) at every k at once.

    Runs sharing an aspect are evaluated in one :func:`evalcore.evaluate` call;
    the long tables of the aspects are concatenated (one row per run × query ×
    metric × k, as always). With ``reference`` (a ground truth from
    :func:`prepare_reference`), :func:`evalcore.embedding_runs.evaluate_reference_runs`
    evaluates every run against it (mode ``"tied"``: each k against its own top-k).
    """
    if not runs:
        raise OptionError("no run to evaluate")
    if reference is not None:
        if settings.judged_only:
            raise OptionError("judged-only needs judgments (a qrels file); a reference model's neighbours judge "
                              "nothing else: turn 'judged documents only' off in the settings")
        ev = _evaluate_reference(reference, {r.name: r for r, _ in runs}, settings)
        return ev.with_settings({"aspects": {r.name: None for r, _ in runs}})
    groups: dict[str | None, dict[str, Run]] = {}
    for run, aspect in runs:
        groups.setdefault(aspect, {})[run.name] = run
    evs = [(aspect, evaluate_runs(qrels_by_aspect[aspect], group, settings, progress=progress))
           for aspect, group in groups.items()]
    return join_aspects(evs, [run.name for run, _ in runs])


def evaluate_runs(qrels: Qrels, runs: Mapping[str, Run], settings: Settings, *,
                  progress: Callable[[int, int], None] | None = None) -> Evaluation:
    """:func:`evalcore.evaluate` of ``runs`` against one ground truth with the options of ``settings``."""
    return evaluate(qrels, runs, metrics=list(settings.metrics), k=list(settings.k), ties=settings.ties,
                    rel_threshold=settings.rel_threshold, no_relevant=settings.no_relevant,
                    judged_only=settings.judged_only, progress=progress)


def join_aspects(evs: Sequence[tuple[str | None, Evaluation]], order: Sequence[str]) -> Evaluation:
    """One evaluation from those of each aspect's runs (in order of first appearance), runs in ``order``;
    ``settings["aspects"]`` names each run's aspect (and ``settings["qrels"]`` each aspect's source)."""
    aspects = {r: a for a, ev in evs for r in ev.runs}
    if len(evs) == 1:
        return evs[0][1].with_settings({"aspects": aspects})
    from ..combine import concat_evaluations

    ev = concat_evaluations([e for _, e in evs], settings={
        "qrels": {str(a): e.settings.get("qrels") for a, e in evs}, "aspects": aspects})
    table = ev.table.assign(run=ev.table["run"].cat.reorder_categories(list(order)))
    return Evaluation(table, ev.coverage, ev.settings)


# ------------------------------------------------------------------------------------------ diversity

#: The default α of α-nDCG (seed 002 §7's example value; the dashboard's first value, the CLI's
#: ``--diversity-alpha`` default).
DIVERSITY_ALPHA = 0.5


def diversity_metrics(alpha: float = DIVERSITY_ALPHA) -> tuple[str, str]:
    """Names of the diversity metrics in :func:`run_diversity`'s table (``metric`` column) at ``alpha``."""
    from ..diversity import alpha_ndcg_name

    return ("ild", alpha_ndcg_name(alpha))


#: Names of the diversity metrics at the default α.
DIVERSITY_METRICS: tuple[str, str] = diversity_metrics()


def has_embeddings(src: RunSource) -> bool:
    """Whether the run's items have vectors of their own (so ILD and α-nDCG exist for it).

    True for embedding runs and for the demo's embedding models; False for
    ranked files and fused runs (their lists come without vectors).
    """
    if src.kind == "embedding":
        return src.blob is not None or src.store is not None
    if src.kind == "demo":
        from .demo_series import demo_matrix

        return demo_matrix(src.demo_seed or 0, src.demo_name) is not None
    return False


def run_embeddings(src: RunSource):
    """The document vectors behind a run (:class:`evalcore.io.Embeddings`), or None.

    An embedding run's document file (its corpus; the query file only placed
    the queries), or the demo model's matrix; None when :func:`has_embeddings`
    is False.
    """
    if not has_embeddings(src):
        return None
    if src.store is not None:
        from .stored import stored_embeddings

        return stored_embeddings(src)
    if src.kind == "embedding":
        return _load_embeddings(src.blob, src.ids_blob)
    from ..io import Embeddings
    from .demo import cached_demo
    from .demo_series import demo_matrix

    demo = cached_demo(src.demo_seed or 0)
    return Embeddings.from_arrays(demo.item_ids, demo_matrix(src.demo_seed or 0, src.demo_name), source=demo.label)


def run_diversity(
    src: RunSource,
    run: Run,
    qrels: Qrels,
    *,
    k: Iterable[int],
    ties: str,
    alpha: float = DIVERSITY_ALPHA,
    query_ids: Iterable[str] | None = None,
    judged_only: bool = False,
) -> pd.DataFrame:
    """Per-query ILD@k and α-nDCG@k of a run whose items have embeddings (seed 002 §6–7).

    :func:`evalcore.embedding_runs.diversity_table` on the run's own document
    vectors (:func:`run_embeddings`): ``ild`` is the mean pairwise ``1 − cos``
    of each top-k list, ``alpha_ndcg(alpha=A)`` nDCG (linear gains, the
    qrels' grades) with each relevant item's gain scaled by
    ``alpha + (1 − alpha) · novelty`` (novelty = 1 − its highest cosine to an
    item ranked above it) over plain nDCG's ideal.

    Parameters
    ----------
    src : RunSource
        The run's source (where its vectors come from).
    run : Run
        The run as evaluated (named like the evaluation's ``run`` column).
    qrels : Qrels
        The evaluated ground truth of the run's aspect (grades of α-nDCG; its
        queries are the rows, a query absent from the run scores 0).
    k : iterable of int
        Cutoffs (>= 1).
    ties : str
        Tie rule of the evaluation (the lists are taken in the order the
        metrics used).
    alpha : float, default :data:`DIVERSITY_ALPHA`
        α of α-nDCG, in [0, 1].
    query_ids : iterable of str, optional
        Keep only these queries (the evaluated ones: with ``no_relevant="skip"``
        the evaluation drops some).
    judged_only : bool, default False
        The settings' judged-only mode: the lists keep the judged documents only, as the
        relevance metrics' (:func:`evalcore.diversity.diversity_table`).

    Returns
    -------
    DataFrame
        The long-table schema ``run, query_id, domain, metric, k, value``.

    Raises
    ------
    OptionError
        When the run has no embeddings (a ranked file or a fused run).
    """
    from ..diversity import diversity_table

    emb = run_embeddings(src)
    if emb is None:
        raise OptionError(f"run {src.name!r} has no embeddings (a {src.kind} run): ILD and α-nDCG need the "
                          "items' vectors")
    table = diversity_table(run, emb, k_values=list(k), alpha=alpha, qrels=qrels, ties=ties, judged_only=judged_only)
    if query_ids is not None:
        keep = table["query_id"].astype(str).isin({str(q) for q in query_ids}).to_numpy()
        table = table[keep].reset_index(drop=True)
    return table


def diversity_summary(tables: Sequence[pd.DataFrame], *, ci_method: str = MEAN_CI_METHOD,
                      n_resamples: int = MEAN_RESAMPLES, seed: int = SEED) -> pd.DataFrame:
    """Mean and 95% CI of each run's diversity metrics (:func:`evalcore.intervals.summarize_with_intervals`).

    Parameters
    ----------
    tables : sequence of DataFrame
        :func:`run_diversity` outputs, one per run.
    ci_method, n_resamples, seed : default "bootstrap", 1,000, 42 (:mod:`evalcore.defaults`, as every mean's)
        Interval of the means: the percentile bootstrap on resamples shared by every run
        (inside the metric's range), or Student t; resamples and seed of the bootstrap.

    Returns
    -------
    DataFrame
        ``run, metric, k, n, mean, std, sem, ci_low, ci_high, median``; empty
        (same columns) when ``tables`` is empty.
    """
    from ..combine import concat_tables
    from ..intervals import summarize_with_intervals

    if not tables:
        return pd.DataFrame(columns=["run", "metric", "k", "n", "mean", "std", "sem", "ci_low", "ci_high", "median"])
    return summarize_with_intervals(concat_tables(tables), method=ci_method, n_resamples=n_resamples, seed=seed)


# ------------------------------------------------------------------------------------------ side files


def _stored_side(blob: Any) -> Any:
    from .stored import stored_side

    return stored_side(blob)


def load_domain_map(blob: Blob) -> dict[str, str]:
    """Query id -> domain from a mapping file (:func:`evalcore.load_domains`) or a stored one."""
    if not isinstance(blob, Blob):
        return _stored_side(blob)
    return {str(k): str(v) for k, v in load_domains(blob.data, label=blob.name).items()}


def load_query_texts(blob: Blob) -> dict[str, str]:
    """Query id -> text from a queries file (:func:`evalcore.io.load_queries`: BEIR ``queries.jsonl``,
    JSON, CSV/TSV/Parquet, ``id<TAB>text`` lines) or a stored one."""
    from ..io import load_queries

    if not isinstance(blob, Blob):
        return _stored_side(blob)
    return load_queries(blob.data, label=blob.name)


def load_metadata(blob: Blob) -> pd.DataFrame:
    """Document metadata as a frame ``doc_id, title, text`` (:func:`evalcore.load_doc_metadata`) or a stored one."""
    if not isinstance(blob, Blob):
        return _stored_side(blob)
    return normalize_metadata(load_doc_metadata(blob.data, label=blob.name), source=blob.name)


def normalize_metadata(out: Any, *, source: str | None = None) -> pd.DataFrame:
    """Any metadata shape (frame, ``{id: {title, text}}``, ``{id: title}``) -> ``doc_id, title, text``."""
    if isinstance(out, Mapping):
        rows = []
        for k, v in out.items():
            if isinstance(v, Mapping):
                rows.append({"doc_id": str(k), "title": str(v.get("title", "") or ""),
                             "text": str(v.get("text", "") or "")})
            else:
                rows.append({"doc_id": str(k), "title": str(v), "text": ""})
        return pd.DataFrame(rows, columns=["doc_id", "title", "text"])
    df = pd.DataFrame(out).copy()
    if df.index.name is not None and str(df.index.name).lower() in ("doc_id", "id", "_id", "docid"):
        df = df.reset_index()
    cols = {str(c).lower(): c for c in df.columns}
    idc = next((cols[c] for c in ("doc_id", "id", "_id", "docid", "corpus-id", "item_id", "movie_id") if c in cols),
               df.columns[0] if len(df.columns) else None)
    if idc is None:
        raise EvalcoreError("document metadata has no columns", file=source)
    title = next((cols[c] for c in ("title", "name", "value") if c in cols), None)
    text = next((cols[c] for c in ("text", "body", "abstract", "description", "content") if c in cols), None)
    return pd.DataFrame({
        "doc_id": df[idc].astype(str).to_numpy(),
        "title": df[title].fillna("").astype(str).to_numpy() if title else "",
        "text": df[text].fillna("").astype(str).to_numpy() if text else "",
    })



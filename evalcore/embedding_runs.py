"""Embeddings as runs and as ground truth (seeds 000 and 001).

* :func:`embedding_run` — exact cosine top-k (:func:`evalcore.retrieval.exact_topk`)
  turned into a :class:`~evalcore.data.Run`: item-to-item from one file
  (seeds 000/001: each query's own item excluded) or queries against a corpus.
* :func:`reference_qrels` / :func:`evaluate_against_reference` — a reference
  model's top lists as the ground truth (seed 000, "Ada-002 as reference").
* :func:`reference_agreement` — seed 000's training metrics (Spearman of
  sampled pair similarities, MAE).

ILD and α-nDCG of embedding runs (seed 002): :func:`evalcore.diversity.diversity_table`;
one evaluation from several ground truths: :mod:`evalcore.combine`.

Ties: the retrieval orders equal cosines by document id ascending (seed 001
§3). A run built here is therefore evaluated as it was ranked with
``ties="docid_asc"``; under the default ``"trec"`` rule, equal scores would be
re-ordered by id descending. The seeds use ``docid_asc``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._columns import factorize_strings, positions_in
from ._lazy import pd
from .combine import concat_evaluations
from .data import Qrels, Run
from .defaults import SEED, SIMILARITY_PAIRS
from .errors import (
    EmptyInputError,
    MissingIdsError,
    OptionError,
    ShapeMismatchError,
    check_flag,
    coverage_problem,
    quiet_warnings,
    strict_coverage,
)
from .evaluate import DEFAULT_METRICS, Evaluation, evaluate
from .io.embeddings import Embeddings, gather_rows

__all__ = [
    "embedding_run",
    "check_embedding_coverage",
    "reference_qrels",
    "evaluate_against_reference",
    "reference_ground_truth",
    "reference_ground_truth_from_neighbours",
    "reference_depths",
    "reference_neighbours",
    "evaluate_reference_runs",
    "ReferenceGroundTruth",
    "reference_agreement",
    "REFERENCE_MODES",
    "DEFAULT_BLOCK_BYTES",
]

DEFAULT_BLOCK_BYTES = 256 * 2**20
REFERENCE_MODES = ("tied", "fixed")
_ZERO_WARNING = r".*vector\(s\) are all zeros.*"  # already reported by load_embeddings


def _first(ids: Iterable[Any], n: int = 5) -> list[str]:
    out = []
    for x in ids:
        out.append(str(x))
        if len(out) >= n:
            break
    return out


def _topk(queries: np.ndarray, corpus: Embeddings, k: int, *, query_ids: np.ndarray, exclude_self: bool,
          block_bytes: int, progress: Callable[[int, int], None] | None, backend: Any = None):
    from .retrieval import exact_topk

    # shards are not scanned when loaded: then the search reports zero vectors
    quiet = quiet_warnings(_ZERO_WARNING) if isinstance(corpus.vectors, np.ndarray) else contextlib.nullcontext()
    with quiet:
        return exact_topk(queries, corpus.vectors, k, corpus_ids=corpus.ids, query_ids=query_ids,
                          exclude_self=exclude_self, block_bytes=block_bytes, progress=progress, backend=backend)


def _select_queries(source: Embeddings, wanted: np.ndarray | None, *, what: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(query ids, rows in ``source``) of the wanted ids found there; warn/raise on missing ones."""
    if wanted is None:
        return source.ids, np.arange(len(source.ids))
    wanted = np.asarray([str(x) for x in wanted], dtype=object)
    rows = source.rows_of(wanted)
    found = rows >= 0
    n_missing = int((~found).sum())
    if n_missing == len(wanted):
        raise MissingIdsError(
            f"run {name!r}: none of the {len(wanted)} {what} is in the embeddings "
            f"(e.g. {_first(wanted)}; the file has ids like {_first(source.ids, 3)})", file=source.source)
    if n_missing:
        problem = f"run {name!r}: {n_missing} of {len(wanted)} {what} are not in {source.label} " \
                  f"(e.g. {_first(wanted[~found])})"
        coverage_problem(f"{problem}; they are scored 0 (partial coverage)", refusal=(problem, "they are scored 0"))
    return wanted[found], rows[found]


def _absent(ids: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The ``ids`` not in ``kept``, in their order."""
    return ids[positions_in(kept, ids) < 0]


def _check_relevant_docs(qrels: Qrels, corpus: Embeddings, query_ids: np.ndarray, *, name: str) -> None:
    """Warn (strict mode: raise) when relevant documents of the evaluated queries are absent from the corpus;
    raise when all are."""
    rel = qrels.grades > 0
    qmask = (positions_in(query_ids, qrels.query_ids) >= 0)[qrels.q]
    docs = factorize_strings(qrels.doc_ids[rel & qmask])[1]
    if len(docs) == 0:
        return
    missing = docs[corpus.rows_of(docs) < 0]
    if len(missing) == len(docs):
        raise MissingIdsError(
            f"run {name!r}: none of the {len(docs)} relevant documents of the ground truth is in the corpus "
            f"{corpus.label} (e.g. {_first(missing)}); nothing can be found", file=corpus.source)
    if len(missing):
        problem = (f"run {name!r}: {len(missing)} of {len(docs)} relevant documents are not in the corpus "
                   f"{corpus.label} (e.g. {_first(missing)})")
        coverage_problem(f"{problem}; they can never be retrieved",
                         refusal=(problem, "the run is evaluated without them: they can never be retrieved"))


def embedding_run(
    docs: Embeddings,
    queries: Embeddings | None = None,
    *,
    qrels: Qrels | None = None,
    k: int = 100,
    name: str = "emb",
    exclude_self: bool | None = None,
    query_ids: Sequence[str] | np.ndarray | None = None,
    progress: Callable[[int, int], None] | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    backend: Any = None,
    strict: bool = False,
) -> Run:
    """Rank by exact cosine similarity and return the top ``k`` of each query as a :class:`Run`.

    Two set-ups:

    * **item-to-item** (``queries`` is None; seeds 000 and 001): the queries
      are items of ``docs`` — the ground-truth query ids found among its ids
      (``query_ids`` if given, else ``qrels.query_ids``, else every item) —
      and each query's own item is excluded (``exclude_self`` defaults to True);
    * **queries against a corpus**: ``queries`` holds the query vectors (only
      the ground-truth queries found there are ranked when ``qrels`` or
      ``query_ids`` is given); ``exclude_self`` defaults to False.

    ``backend`` is :func:`evalcore.retrieval.exact_topk`'s: ``None`` (this
    process) or a ``distributed.Client`` (a Dask cluster; ``docs`` must then be
    shards, :func:`evalcore.io.shard_embeddings`).  It changes no result.

    Scores are float32 cosines ``u/(‖u‖+ε)·v/(‖v‖+ε)`` (seed 001 §2.3) stored as
    float64; equal scores were ranked by document id ascending, so evaluate
    the run with ``ties="docid_asc"`` to keep that order. The run's
    :attr:`~evalcore.data.Run.search_depth` is ``k``: a list shorter than a
    cutoff holds every candidate, and evaluation does not call it shallow.

    Coverage: ground-truth queries missing from the embeddings and relevant
    documents missing from the corpus are counted in a warning (the queries
    then score 0); :class:`MissingIdsError` is raised only when nothing can be
    evaluated (no query found, or no relevant document in the corpus). With
    ``strict`` (default False; :func:`evalcore.errors.strict_coverage`) each of
    those two warnings is a :class:`MissingIdsError` with the same message,
    raised before anything is ranked. Zero vectors stay a warning.

    Raises
    ------
    ShapeMismatchError
        Corpus and queries differ in dimension (both dimensions and files named).
    MissingIdsError
        No ground-truth query (or no relevant document) is in the embeddings; with
        ``strict``, some is not.
    OptionError
        ``k`` < 1.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise OptionError(f"run {name!r}: depth k must be an integer >= 1, got {k!r}")
    if exclude_self is not None:
        exclude_self = check_flag(exclude_self, "exclude_self")
    qids, rows = check_embedding_coverage(docs, queries, qrels=qrels, query_ids=query_ids, name=name, strict=strict)
    qv = gather_rows((docs if queries is None else queries).vectors, rows)
    excl = (queries is None) if exclude_self is None else bool(exclude_self)
    top = _topk(qv, docs, int(k), query_ids=qids, exclude_self=excl, block_bytes=block_bytes, progress=progress,
                backend=backend)
    return _run_from_topk(top, docs, qids, name=name,  # (its lists: the top k, or every candidate: never shallow)
                          source=docs.label if queries is None else f"{queries.label} vs {docs.label}").searched(k)


def check_embedding_coverage(
    docs: Embeddings,
    queries: Embeddings | None = None,
    *,
    qrels: Qrels | None = None,
    query_ids: Sequence[str] | np.ndarray | None = None,
    name: str = "emb",
    strict: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The checks :func:`embedding_run` makes before it ranks, alone: its warnings and errors, as there.

    Returns the query ids found (in ``queries``, else in ``docs``) and their rows there. A ranking
    kept from an earlier search is checked with it in strict mode (:mod:`evalcore.workspace.rankings`).
    """
    with strict_coverage(strict):
        wanted = None
        what = "queries"
        if query_ids is not None:
            wanted = np.asarray(list(query_ids), dtype=object)
        elif qrels is not None:
            wanted = qrels.query_ids
            what = "ground-truth queries"
        if queries is not None and queries.dim != docs.dim:
            raise ShapeMismatchError(
                f"run {name!r}: dimension mismatch: corpus {docs.label} has {docs.dim} dimensions but "
                f"queries {queries.label} have {queries.dim}", file=queries.source)
        qids, rows = _select_queries(docs if queries is None else queries, wanted, what=what, name=name)
        if qrels is not None:
            _check_relevant_docs(qrels, docs, qids, name=name)
    return qids, rows


def _run_from_topk(top: Any, docs: Embeddings, qids: np.ndarray, *, name: str, source: str) -> Run:
    idx = top.indices
    mask = idx >= 0
    if not mask.any():
        raise EmptyInputError(f"run {name!r}: no document can be ranked (the corpus has {len(docs)} items)",
                              file=source)
    q = np.repeat(np.arange(idx.shape[0], dtype=np.int64), idx.shape[1])[mask.ravel()]
    return Run.from_codes(np.asarray(qids, dtype=object), q, docs.ids, idx[mask].astype(np.int64),
                          top.scores[mask].astype(np.float64), name=name, source=source, check_duplicates=False)


# ------------------------------------------------------------------ reference model as ground truth
def _reference_top(reference: Embeddings, depth: int, query_ids: Sequence[str] | np.ndarray | None, *,
                   block_bytes: int, progress: Callable[[int, int], None] | None,
                   backend: Any = None, strict: bool = False) -> tuple[Any, np.ndarray]:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise OptionError(f"reference depth must be an integer >= 1, got {depth!r}")
    wanted = None if query_ids is None else np.asarray(list(query_ids), dtype=object)
    with strict_coverage(strict):  # query ids absent from the reference: a warning, in strict mode an error
        qids, rows = _select_queries(reference, wanted, what="queries", name="reference")
    qv = gather_rows(reference.vectors, rows)
    top = _topk(qv, reference, int(depth), query_ids=qids, exclude_self=True, block_bytes=block_bytes,
                progress=progress, backend=backend)
    if top.indices.shape[1] == 0:
        raise EmptyInputError(f"the reference {reference.label} has {len(reference)} item(s): no neighbour to rank",
                              file=reference.source)
    return top, qids


def reference_neighbours(reference: Embeddings, *, depth: int, query_ids: Sequence[str] | np.ndarray | None = None,
                         block_bytes: int = DEFAULT_BLOCK_BYTES, progress: Callable[[int, int], None] | None = None,
                         backend: Any = None, strict: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The exact top-``depth`` neighbours of each query item in ``reference`` (itself excluded).

    Returns ``(neighbours, query_ids)``: rows of ``reference``, shape (n_queries, m), in order of
    cosine descending then id ascending (``-1`` pads when fewer items exist), and the query ids
    found in ``reference`` (default every item), in the order of the rows. ``query_ids`` absent
    from ``reference`` are left out with a warning; with ``strict``, a :class:`MissingIdsError`.
    """
    top, qids = _reference_top(reference, depth, query_ids, block_bytes=block_bytes, progress=progress,
                               backend=backend, strict=strict)
    return top.indices, qids


def _qrels_from_top(neighbours: np.ndarray, reference: Embeddings, qids: np.ndarray, depth: int, *,
                    graded: bool) -> Qrels:
    idx = neighbours[:, :depth]
    n = idx.shape[1]
    mask = idx >= 0
    q = np.repeat(np.arange(idx.shape[0], dtype=np.int64), n)[mask.ravel()]
    pos = np.tile(np.arange(1, n + 1, dtype=np.int64), idx.shape[0])[mask.ravel()]
    grades = (n + 1 - pos) if graded else np.ones(len(pos), dtype=np.int64)
    docs = np.asarray(reference.ids, dtype=object)[idx[mask]]
    label = f"reference {reference.label} top-{n}" + (" graded" if graded else "")
    return Qrels(np.asarray(qids, dtype=object), q, docs, grades.astype(np.int64), None, label)


def reference_qrels(
    reference: Embeddings,
    *,
    depth: int,
    query_ids: Sequence[str] | np.ndarray | None = None,
    graded: bool = True,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    progress: Callable[[int, int], None] | None = None,
    backend: Any = None,
    strict: bool = False,
) -> Qrels:
    """Ground truth from a reference model (seed 000): each query's top-``depth`` neighbours.

    Relevant documents of query ``q`` (an item of ``reference``; default every
    item, else the ``query_ids`` found there) are the ``depth`` items most
    cosine-similar to it, itself excluded, ties by id ascending. With
    ``graded`` the item at position ``pos`` (1-based) gets grade
    ``n + 1 − pos`` (``n`` = depth, capped at the number of other items), so
    the first is the most relevant; otherwise every one gets grade 1.
    ``backend`` (where the exact top-k runs) as in :func:`embedding_run`; ``strict`` as in
    :func:`reference_neighbours`.
    """
    top, qids = _reference_top(reference, depth, query_ids, block_bytes=block_bytes, progress=progress,
                               backend=backend, strict=strict)
    return _qrels_from_top(top.indices, reference, qids, int(depth), graded=graded)


def _sampled_ids(ids: np.ndarray, n_samples: int | None, seed: int) -> np.ndarray:
    if n_samples is None:
        return ids
    from .retrieval import sample_queries

    return ids[sample_queries(ids, n_samples, seed=seed)]


@dataclass(frozen=True)
class ReferenceGroundTruth:
    """The ground truth(s) a reference model gives (see :func:`reference_ground_truth`).

    ``by_k`` maps each cutoff to its binary top-k qrels (mode ``"tied"``);
    ``fixed`` is the one graded qrels of mode ``"fixed"``. ``deepest`` is the
    deepest of them (for coverage checks and item-to-item query ids).
    """

    mode: str
    ks: list[int]
    query_ids: np.ndarray
    deepest: Qrels
    by_k: dict[int, Qrels]
    fixed: Qrels | None
    settings: dict[str, Any]

    def qrels_at(self, k: int) -> Qrels:
        """The ground truth the metrics at cutoff ``k`` are computed against.

        Mode ``"fixed"``: the one graded qrels at every k. Mode ``"tied"``: the
        reference's top-``k`` (``by_k[k]``); a ``k`` that was not among the
        cutoffs raises :class:`OptionError` (its top-k was never computed).
        Per-k measures that are not part of the evaluation (α-nDCG@k of
        :func:`evalcore.diversity.diversity_table`) take their ground truth here, so that
        they are judged against the same relevant items as nDCG@k.
        """
        if self.mode == "fixed" and self.fixed is not None:
            return self.fixed
        kk = int(k)
        if kk not in self.by_k:
            raise OptionError(f"the reference's top-k ground truth exists at k in {sorted(self.by_k)}, not at {kk}")
        return self.by_k[kk]


def reference_ground_truth(
    reference: Embeddings,
    *,
    k: Iterable[int] | int,
    mode: str = "tied",
    depth: int | None = None,
    query_ids: Sequence[str] | np.ndarray | None = None,
    n_samples: int | None = None,
    seed: int = SEED,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    progress: Callable[[int, int], None] | None = None,
    backend: Any = None,
    strict: bool = False,
) -> ReferenceGroundTruth:
    """Reference neighbours as ground truth for every cutoff (one exact top-k pass).

    See :func:`evaluate_against_reference` for the modes and the query sampling;
    ``backend`` as in :func:`embedding_run`, ``strict`` as in :func:`reference_neighbours`.
    """
    ks, gt_depth = reference_depths(k, mode=mode, depth=depth)
    base = reference.ids if query_ids is None else np.asarray(list(query_ids), dtype=object)
    qids = _sampled_ids(base, n_samples, seed)
    top, qids = _reference_top(reference, max(gt_depth, max(ks)), qids, block_bytes=block_bytes,
                               progress=progress, backend=backend, strict=strict)
    return reference_ground_truth_from_neighbours(reference, top.indices, qids, k=ks, mode=mode, depth=depth,
                                                  n_samples=n_samples, seed=seed)


def reference_depths(k: Iterable[int] | int, *, mode: str = "tied", depth: int | None = None) -> tuple[list[int], int]:
    """Checked cutoffs (sorted) and the ground-truth depth of :func:`reference_ground_truth`.

    The search for the neighbours goes ``max(depth, max(ks))`` deep.
    """
    if mode not in REFERENCE_MODES:
        raise OptionError(f"unknown reference mode {mode!r}; supported: {', '.join(REFERENCE_MODES)}")
    ks = [int(k)] if isinstance(k, (int, np.integer)) else sorted({int(x) for x in k})
    if not ks or min(ks) < 1:
        raise OptionError(f"cutoffs must be integers >= 1, got {ks}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise OptionError(f"reference depth must be an integer >= 1, got {depth!r}")
    return ks, (max(ks) if (mode == "tied" or depth is None) else int(depth))


def reference_ground_truth_from_neighbours(
    reference: Embeddings,
    neighbours: np.ndarray,
    query_ids: np.ndarray,
    *,
    k: Iterable[int] | int,
    mode: str = "tied",
    depth: int | None = None,
    n_samples: int | None = None,
    seed: int = SEED,
) -> ReferenceGroundTruth:
    """:func:`reference_ground_truth` from neighbours already found (e.g. kept in a workspace).

    ``neighbours`` (n_queries, m) holds, per query of ``query_ids``, the rows of ``reference``
    in exact top-k order (score descending, id ascending; ``-1`` pads), ``m`` at least the
    search depth of :func:`reference_depths`. ``n_samples``/``seed`` are only recorded.
    """
    ks, gt_depth = reference_depths(k, mode=mode, depth=depth)
    idx = np.asarray(neighbours)
    qids = np.asarray(query_ids, dtype=object)
    if idx.ndim != 2 or idx.shape[0] != len(qids):
        raise OptionError(f"neighbours must have one row per query ({len(qids)}), got shape {idx.shape}")
    if idx.shape[1] == 0:
        raise EmptyInputError(f"the reference {reference.label} has {len(reference)} item(s): no neighbour to rank",
                              file=reference.source)
    settings = {"file": reference.source, "mode": mode, "depth": gt_depth if mode == "fixed" else "k",
                "n_samples": n_samples, "seed": seed, "n_queries": int(len(qids))}
    if mode == "fixed":
        fixed = _qrels_from_top(idx, reference, qids, gt_depth, graded=True)
        return ReferenceGroundTruth(mode, ks, qids, fixed, {}, fixed, settings)
    by_k = {kk: _qrels_from_top(idx, reference, qids, kk, graded=False) for kk in ks}
    return ReferenceGroundTruth(mode, ks, qids, by_k[max(ks)], by_k, None, settings)


def evaluate_reference_runs(
    ground_truth: ReferenceGroundTruth,
    runs: Mapping[str, Run],
    *,
    metrics: Iterable[str] = DEFAULT_METRICS,
    ties: str = "docid_asc",
    rel_threshold: int = 1,
    no_relevant: str = "zero",
    strict: bool = False,
) -> Evaluation:
    """Evaluate runs against a :class:`ReferenceGroundTruth` at its cutoffs, as one Evaluation.

    ``strict``: a reference query a run does not answer is an error, as in :func:`evalcore.evaluate`.
    """
    gt = ground_truth
    opts = dict(metrics=list(metrics), ties=ties, rel_threshold=rel_threshold, no_relevant=no_relevant,
                strict=strict)
    extra = {"reference": dict(gt.settings)}
    if gt.mode == "fixed":
        if gt.fixed is None:
            raise OptionError("a reference ground truth in mode 'fixed' needs its qrels (ReferenceGroundTruth.fixed)")
        ev = evaluate(gt.fixed, runs, k=gt.ks, **opts)
        return ev.with_settings({**extra})
    parts = [evaluate(gt.by_k[kk], runs, k=[kk], **opts) for kk in gt.ks]
    label = f"reference {gt.settings['file']} top-k at each k (tied)"
    return concat_evaluations(parts, settings={"qrels": label, **extra})


def evaluate_against_reference(
    reference: Embeddings,
    models: Mapping[str, Embeddings | Run],
    *,
    metrics: Iterable[str] = DEFAULT_METRICS,
    k: Iterable[int] | int = (1, 3, 5, 10),
    mode: str = "tied",
    depth: int | None = None,
    n_samples: int | None = None,
    seed: int = SEED,
    query_ids: Sequence[str] | np.ndarray | None = None,
    ties: str = "docid_asc",
    rel_threshold: int = 1,
    no_relevant: str = "zero",
    run_depth: int | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    progress: Callable[[int, int], None] | None = None,
    backend: Any = None,
    strict: bool = False,
) -> Evaluation:
    """Evaluate models against a reference model's neighbours (seed 000).

    Queries: every item of ``reference`` (or ``query_ids``); with
    ``n_samples``, the ones drawn as seed 000 step 3 does
    (``np.random.seed(seed); np.random.choice(n, n_samples, replace=False)``,
    :func:`evalcore.retrieval.sample_queries`).

    Modes:

    ``"tied"`` (seed 000)
        At each cutoff k, relevant = the reference's top-k (binary), and the
        model's top-k is compared with it; so R = k and at k = 1 recall, nDCG,
        MRR and MAP are the same number. Implemented as one evaluation per k
        against its own ground truth, concatenated into one table.
    ``"fixed"``
        One ground truth: the reference's top-``depth`` (default max k),
        graded by position (``depth + 1 − pos``), used at every k.

    ``models`` maps run names to embeddings (ranked item-to-item, own item
    excluded, to depth ``run_depth``, default max k) or to ready runs.
    Seed 000's MAP@k (mean precision over the hits found) is the metric
    ``map_found``; ``map`` divides by R (trec_eval).

    ``backend`` (where the exact top-k runs) as in :func:`embedding_run`.

    ``strict`` (default False): every coverage warning — query ids absent from the reference or
    from a model, the reference's neighbours absent from a model, a reference query a ready run
    does not answer — is a :class:`MissingIdsError` with the same message (:func:`embedding_run`).

    Returns one :class:`Evaluation`; ``settings["reference"]`` records the
    file, mode, depth, sample size and seed.
    """
    if not models:
        raise OptionError("give at least one model to evaluate against the reference")
    gt = reference_ground_truth(reference, k=k, mode=mode, depth=depth, query_ids=query_ids, n_samples=n_samples,
                                seed=seed, block_bytes=block_bytes, progress=progress, backend=backend, strict=strict)
    runs: dict[str, Run] = {}
    rd = int(run_depth) if run_depth is not None else max(gt.ks)
    for name, model in models.items():
        if isinstance(model, Run):
            runs[name] = model if model.name == name else model.renamed(name)
        else:
            runs[name] = embedding_run(model, qrels=gt.deepest, k=rd, name=name, block_bytes=block_bytes,
                                       progress=progress, backend=backend, strict=strict)
    return evaluate_reference_runs(gt, runs, metrics=metrics, ties=ties, rel_threshold=rel_threshold,
                                   no_relevant=no_relevant, strict=strict)


def reference_agreement(
    reference: Embeddings,
    models: Mapping[str, Embeddings],
    *,
    n_pairs: int = SIMILARITY_PAIRS,
    seed: int = SEED,
    strict: bool = False,
) -> pd.DataFrame:
    """Seed 000's training metrics per model: Spearman ρ and MAE of cosine similarities on sampled pairs.

    Items are matched by id (models may list them in another order or hold
    more); pairs are drawn among the ids common to all with
    :func:`evalcore.retrieval.similarity_agreement` (same pairs for every
    model given the seed). Columns: ``model, spearman, mae, n_pairs, n_items``. Reference ids
    absent from a model are left out with a warning; with ``strict``, a :class:`MissingIdsError`.
    """
    from .retrieval import similarity_agreement

    common = reference.ids
    for m in models.values():
        common = common[m.rows_of(common) >= 0]
    if len(common) < 2:
        raise MissingIdsError(f"fewer than 2 ids are shared by the reference {reference.label} and the models",
                              file=reference.source)
    if len(common) < len(reference):
        with strict_coverage(strict):
            coverage_problem(f"similarity agreement uses the {len(common)} of {len(reference)} reference ids "
                             "present in every model", refusal=lambda: (
                                 f"similarity agreement: {len(reference) - len(common)} of the {len(reference)} "
                                 f"reference ids are not in every model (e.g. {_first(_absent(reference.ids, common))})",
                                 f"it uses the {len(common)} present in every model"))
    ref_v = np.asarray(reference.vectors[reference.rows_of(common)])
    rows = []
    for name, m in models.items():
        res = similarity_agreement(ref_v, np.asarray(m.vectors[m.rows_of(common)]), n_pairs=n_pairs, seed=seed,
                                   ids=common)
        rows.append({"model": name, "spearman": res["spearman"], "mae": res["mae"], "n_pairs": res["n_pairs"],
                     "n_items": int(len(common))})
    return pd.DataFrame(rows, columns=["model", "spearman", "mae", "n_pairs", "n_items"])



"""Diversity metrics of seed 002: intra-list diversity (ILD) and alpha-nDCG.

:func:`diversity_table` gives both per query for a run whose documents have embeddings, in the
long per-query table schema.

Both work on ranked lists of *embedding rows*: ``lists`` is an integer array
``(n_queries, k)`` whose entries index the rows of ``embeddings_normalized``,
``-1`` marking an empty slot (e.g. the padding of :class:`evalcore.retrieval.TopK`).
Embeddings must be unit-length rows (use :func:`evalcore.retrieval.normalize`):
the dot product is taken as the cosine.  All computations are float64,
vectorised over queries in chunks of bounded memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._lazy import pd
from .data import Qrels, Run
from .errors import (
    DuplicateIdError,
    NonFiniteValueError,
    OptionError,
    ShapeMismatchError,
    ValueTypeError,
)

if TYPE_CHECKING:
    from .io.embeddings import Embeddings

__all__ = ["alpha_dcg", "alpha_ndcg", "alpha_ndcg_name", "intra_list_diversity", "diversity_table"]

_CHUNK_BYTES = 64 * 2**20


# --------------------------------------------------------------------------- checks


def _embeddings(emb) -> np.ndarray:
    arr = emb if isinstance(emb, np.ndarray) else np.asarray(emb)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueTypeError(f"embeddings must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ShapeMismatchError(f"embeddings must be a 2-D array (rows x dimensions), got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        bad = np.flatnonzero(~np.isfinite(arr).all(axis=1))
        raise NonFiniteValueError(
            f"embeddings have {bad.size} row(s) with NaN or infinite values; first at row {bad[0]}"
        )
    return arr


def _lists(lists, n_rows: int) -> np.ndarray:
    arr = np.asarray(lists)
    if arr.dtype == object:
        raise ShapeMismatchError("lists must be a rectangular integer array (n_queries, k); pad with -1")
    if arr.ndim != 2:
        raise ShapeMismatchError(f"lists must be a 2-D array (n_queries, k), got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueTypeError(f"lists must hold integer row indices, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if lo < -1 or hi >= n_rows:
            bad = lo if lo < -1 else hi
            q, r = (int(x[0]) for x in np.nonzero(arr == bad))
            raise ShapeMismatchError(
                f"lists[{q}, {r}] = {bad} is not a row of the embeddings (0..{n_rows - 1}, or -1 for padding)"
            )
    return arr


def _chunk_rows(k: int, d: int, extra: int = 0) -> int:
    return max(1, _CHUNK_BYTES // max(1, 8 * k * (d + extra) * 3))


def _gather(emb: np.ndarray, lists: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(vectors (c, k, d) float64 with zeros at padding, valid mask (c, k))."""
    valid = lists >= 0
    vec = emb[np.maximum(lists, 0)].astype(np.float64)
    vec *= valid[..., None]
    return vec, valid


# --------------------------------------------------------------------------- ILD


def intra_list_diversity(lists, embeddings_normalized) -> np.ndarray:
    """Intra-list diversity of every list (seed 002 §6), shape ``(n_queries,)``.

    ``ILD = 2 / (|R| (|R| - 1)) * sum_{i<j} (1 - cos(d_i, d_j))`` over the
    ``|R|`` non-padding entries of a list.  A list with fewer than 2 documents
    has no pair and gets ILD 0.0.  With non-negative cosines ILD lies in
    [0, 1]; negative cosines can push it up to 2.  A document listed twice
    contributes a pair of similarity 1 (dissimilarity 0).

    Vectorised as ``sum_{i<j} v_i.v_j = (||sum_i v_i||^2 - sum_i ||v_i||^2) / 2``,
    O(k d) per list.
    """
    emb = _embeddings(embeddings_normalized)
    lst = _lists(lists, emb.shape[0])
    nq, k = lst.shape
    out = np.zeros(nq, dtype=np.float64)
    if nq == 0 or k < 2:
        return out
    step = _chunk_rows(k, emb.shape[1])
    for s in range(0, nq, step):
        out[s : s + step] = _ild_chunk(*_gather(emb, lst[s : s + step]))
    return out


def _ild_chunk(vec: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """ILD of gathered lists: ``vec`` (c, k, d) float64 with zeros at padding, ``valid`` (c, k)."""
    total = vec.sum(axis=1)
    pair_sum = (np.einsum("cd,cd->c", total, total) - np.einsum("ckd,ckd->c", vec, vec)) / 2.0
    m = valid.sum(axis=1)
    n_pairs = m * (m - 1) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m >= 2, 1.0 - pair_sum / n_pairs, 0.0)


# --------------------------------------------------------------------------- alpha-nDCG


def _relevance(relevance, lists: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(grade of each listed document (nq, k), ideal grades sorted descending (nq, k)).

    ``relevance`` is a dense ``(n_queries, n_docs)`` array, a scipy.sparse
    matrix of that shape, or a sequence of ``{doc_row: grade}`` mappings, one
    per query.  Negative grades count as 0 (not relevant).
    """
    nq = lists.shape[0]
    safe = np.maximum(lists, 0)
    valid = lists >= 0
    ideal = np.zeros((nq, k), dtype=np.float64)
    if hasattr(relevance, "tocsr"):  # scipy.sparse
        mat = relevance.tocsr()
        if mat.shape[0] != nq:
            raise ShapeMismatchError(f"relevance has {mat.shape[0]} rows but there are {nq} lists")
        if (lists >= mat.shape[1]).any():
            raise ShapeMismatchError(f"lists reference document rows beyond relevance's {mat.shape[1]} columns")
        data = np.asarray(mat.data, dtype=np.float64)
        if not np.isfinite(data).all():
            raise NonFiniteValueError("relevance holds NaN or infinite grades")
        rows = np.repeat(np.arange(nq), k)
        rel = np.asarray(mat[rows, safe.ravel()], dtype=np.float64).reshape(nq, k)
        for q in range(nq):
            g = np.sort(data[mat.indptr[q] : mat.indptr[q + 1]])[::-1][:k]
            ideal[q, : g.size] = g
    elif isinstance(relevance, np.ndarray) or (
        isinstance(relevance, Sequence) and len(relevance) > 0 and not isinstance(relevance[0], Mapping)
    ):
        mat = np.asarray(relevance, dtype=np.float64)
        if mat.ndim != 2 or mat.shape[0] != nq:
            raise ShapeMismatchError(
                f"relevance must be (n_queries={nq}, n_docs) grades, got shape {mat.shape}"
            )
        if not np.isfinite(mat).all():
            raise NonFiniteValueError("relevance holds NaN or infinite grades")
        if (lists >= mat.shape[1]).any():
            raise ShapeMismatchError(f"lists reference document rows beyond relevance's {mat.shape[1]} columns")
        rel = np.take_along_axis(mat, safe, axis=1) if nq else np.zeros((0, k))
        top = min(k, mat.shape[1])
        if top:
            part = -np.partition(-mat, top - 1, axis=1)[:, :top] if top < mat.shape[1] else mat.copy()
            ideal[:, :top] = -np.sort(-part, axis=1)
    else:
        seq = list(relevance)
        if len(seq) != nq:
            raise ShapeMismatchError(f"relevance has {len(seq)} entries but there are {nq} lists")
        rel = np.zeros((nq, k), dtype=np.float64)
        for q, grades in enumerate(seq):
            if not isinstance(grades, Mapping):
                raise ValueTypeError(f"relevance[{q}] must be a mapping {{doc_row: grade}}")
            if not grades:
                continue
            keys = np.fromiter((int(x) for x in grades.keys()), dtype=np.int64, count=len(grades))
            vals = np.fromiter((float(x) for x in grades.values()), dtype=np.float64, count=len(grades))
            if not np.isfinite(vals).all():
                raise NonFiniteValueError(f"relevance[{q}] holds NaN or infinite grades", query=str(q))
            order = np.argsort(keys)
            keys, vals = keys[order], vals[order]
            pos = np.minimum(np.searchsorted(keys, safe[q]), keys.size - 1)
            rel[q] = np.where(keys[pos] == safe[q], vals[pos], 0.0)
            g = np.sort(vals)[::-1][:k]
            ideal[q, : g.size] = g
    rel = np.where(valid, np.maximum(rel, 0.0), 0.0)
    ideal = np.maximum(ideal, 0.0)
    return rel, ideal


def _check_alpha_k(alpha, k) -> tuple[float, int]:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise OptionError(f"k must be a positive integer, got {k!r}")
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise OptionError(f"alpha must be a number in [0, 1], got {alpha!r}") from None
    if not 0.0 <= a <= 1.0:
        raise OptionError(f"alpha must be in [0, 1], got {alpha!r}")
    return a, int(k)


def _prepare(lists, relevance, embeddings_normalized, alpha, k):
    a, k = _check_alpha_k(alpha, k)
    emb = _embeddings(embeddings_normalized)
    lst = _lists(lists, emb.shape[0])[:, :k]
    if lst.shape[1] < k:
        lst = np.pad(lst, ((0, 0), (0, k - lst.shape[1])), constant_values=-1)
    # a document twice in one list would earn relevance twice
    srt = np.sort(lst, axis=1)
    dup = (srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)
    if dup.any():
        q = int(np.flatnonzero(dup.any(axis=1))[0])
        doc = int(srt[q, 1:][dup[q]][0])
        raise DuplicateIdError(f"list {q} holds document row {doc} twice", query=str(q), item=str(doc))
    rel, ideal = _relevance(relevance, lst, k)
    return a, k, emb, lst, rel, ideal


def _discounts(k: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def _alpha_dcg(a: float, k: int, emb: np.ndarray, lst: np.ndarray, rel: np.ndarray) -> np.ndarray:
    nq = lst.shape[0]
    out = np.zeros(nq, dtype=np.float64)
    if nq == 0:
        return out
    disc = _discounts(k)
    step = _chunk_rows(k, emb.shape[1], extra=k)
    for s in range(0, nq, step):
        vec, valid = _gather(emb, lst[s : s + step])
        out[s : s + step] = _alpha_dcg_chunk(a, disc, vec, valid, rel[s : s + step])
    return out


def _alpha_dcg_chunk(a: float, disc: np.ndarray, vec: np.ndarray, valid: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """alpha-DCG of gathered lists (see :func:`_ild_chunk`); ``rel`` (c, k) grades, ``disc`` (k,) discounts."""
    k = vec.shape[1]
    earlier = np.tril(np.ones((k, k), dtype=bool), -1)  # [i, j]: j ranked above i
    sims = np.matmul(vec, vec.transpose(0, 2, 1))  # (c, k, k) cosines
    mask = earlier[None, :, :] & valid[:, None, :]
    max_prev = np.where(mask, sims, -np.inf).max(axis=2)
    novelty = np.where(np.isneginf(max_prev), 1.0, np.clip(1.0 - max_prev, 0.0, 1.0))
    gains = rel * (a + (1.0 - a) * novelty)
    return gains @ disc


def alpha_dcg(lists, relevance, embeddings_normalized, *, alpha: float = 0.5, k: int) -> np.ndarray:
    """alpha-DCG@k of every list (seed 002 §7), shape ``(n_queries,)``.

    ``gain_i = rel_i * (alpha + (1 - alpha) * novelty_i)`` with
    ``novelty_i = 1 - max_{j < i} cos(d_i, d_j)`` over the documents ranked
    above position ``i`` (novelty 1 for the first document), clipped to
    [0, 1] (a document cannot be more than fully novel; a negative similarity
    counts as none).  ``DCG = sum_i gain_i / log2(i + 1)``, positions ``i``
    from 1; padding slots (-1) keep their position but add nothing and are not
    "previous documents".  Grades are used linearly, negative grades count as 0.

    ``relevance``: dense ``(n_queries, n_docs)`` grades, a scipy.sparse matrix
    of that shape, or one ``{doc_row: grade}`` mapping per query (doc rows are
    rows of the embeddings).  A document listed twice in one list raises
    :class:`DuplicateIdError`.
    """
    a, k, emb, lst, rel, _ = _prepare(lists, relevance, embeddings_normalized, alpha, k)
    return _alpha_dcg(a, k, emb, lst, rel)


def alpha_ndcg(lists, relevance, embeddings_normalized, *, alpha: float = 0.5, k: int) -> np.ndarray:
    """alpha-nDCG@k of every list (seed 002 §7), shape ``(n_queries,)``.

    ``alpha-nDCG = alpha-DCG / IDCG`` (see :func:`alpha_dcg`).  The seed leaves
    the ideal undefined; here **IDCG is the DCG of the ideal relevance
    ordering with novelty 1**: all judged documents of the query sorted by
    grade (descending), cut at ``k``, ``IDCG = sum_i g_(i) / log2(i + 1)`` -
    the linear-gain IDCG of plain nDCG.  Consequences: alpha-nDCG <= 1 (gains
    never exceed grades, and no list beats the sorted grades); alpha = 1, or
    mutually orthogonal retrieved documents, give exactly linear-gain nDCG;
    redundancy (similar documents) lowers the score below nDCG.  A query
    without relevant documents (IDCG = 0) scores 0.0.
    """
    a, k, emb, lst, rel, ideal = _prepare(lists, relevance, embeddings_normalized, alpha, k)
    return _over_ideal(_alpha_dcg(a, k, emb, lst, rel), ideal, _discounts(k))


def _over_ideal(dcg: np.ndarray, ideal: np.ndarray, disc: np.ndarray) -> np.ndarray:
    """``dcg / IDCG`` per query, IDCG = ``ideal @ disc`` (0.0 where IDCG is 0)."""
    idcg = ideal @ disc
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)


# --------------------------------------------------------------------------- as a per-query table
def alpha_ndcg_name(alpha: float) -> str:
    """The metric name of α-nDCG at ``alpha`` in :func:`diversity_table`'s ``metric`` column.

    The shortest text that reads back as the same float: two different α never share a name.

    >>> alpha_ndcg_name(0.5), alpha_ndcg_name(1), alpha_ndcg_name(1 / 3)
    ('alpha_ndcg(alpha=0.5)', 'alpha_ndcg(alpha=1)', 'alpha_ndcg(alpha=0.3333333333333333)')
    """
    a = float(alpha)
    text = f"{a:g}"
    return f"alpha_ndcg(alpha={text if float(text) == a else repr(a)})"


def diversity_table(
    run: Run,
    embeddings: Embeddings,
    *,
    k_values: Iterable[int],
    alpha: float = 0.5,
    qrels: Qrels | Mapping[int, Qrels] | None = None,
    ties: str = "docid_asc",
    judged_only: bool = False,
) -> pd.DataFrame:
    """ILD@k and α-nDCG@k (seed 002 §6–7) of a run, in the long-table schema of :class:`Evaluation`.

    ``judged_only`` (trec_eval ``-J``, as :func:`~evalcore.evaluate.evaluate`'s): the lists keep only
    the documents ``qrels`` judge for their query (grade >= 0), gaps closed, so that α-nDCG@k is
    computed on the same lists as nDCG@k.

    These metrics need the documents' vectors, so they exist only for runs
    whose documents have embeddings (embedding runs, or a run over an
    embedded corpus); they are not part of :func:`evalcore.evaluate.evaluate`.

    Rows ``run, query_id, domain, metric, k, value``:

    * ``ild`` — mean pairwise ``1 − cos`` of the top k (0 for fewer than 2
      documents), :func:`evalcore.diversity.intra_list_diversity`;
    * ``alpha_ndcg(alpha=A)`` (:func:`alpha_ndcg_name`; when ``qrels`` is given) —
      :func:`evalcore.diversity.alpha_ndcg` with the qrels grades as linear
      relevance; its ideal DCG counts every judged document, embedded or not.
      Since each gain is the grade times a factor in [α, 1] over the same ideal,
      **α-nDCG@k <= nDCG@k** (linear gains, :func:`evalcore.metrics.ndcg`) on every
      query, when both are computed against the same ground truth at that k.

    ``qrels`` may also map each k to its own ground truth (a reference model's
    top-k at each k: :meth:`evalcore.embedding_runs.ReferenceGroundTruth.qrels_at`),
    which is what nDCG@k was computed against; every k must be given.

    Lists are the run's order under ``ties`` (``docid_asc`` for embedding
    runs); a listed document absent from ``embeddings`` keeps its position but
    adds nothing. Queries: the run's, or with ``qrels`` the qrels' (a query
    absent from the run scores 0, as in :func:`~evalcore.evaluate.evaluate`).
    The frame concatenates with ``Evaluation.table`` (:func:`evalcore.combine.concat_tables`,
    :func:`evalcore.combine.with_diversity`).
    """
    from .io.embeddings import gather_rows
    from .retrieval import normalize

    ks = sorted({int(x) for x in k_values})
    if not ks or ks[0] < 1:
        raise OptionError(f"k values must be integers >= 1, got {ks}")
    if isinstance(qrels, Mapping):
        missing = [kk for kk in ks if kk not in qrels]
        if missing:
            raise OptionError(f"no ground truth given for k = {missing} (qrels has k = {sorted(qrels)})")
        if len({id(qrels[kk]) for kk in ks}) > 1:
            from .combine import concat_tables

            return concat_tables([diversity_table(run, embeddings, k_values=[kk], alpha=alpha, qrels=qrels[kk],
                                                  ties=ties, judged_only=judged_only) for kk in ks])
        qrels = qrels[ks[0]]
    if judged_only:
        if qrels is None:
            raise OptionError("judged_only needs the judgments (qrels)")
        run = _judged_run(run, qrels)
    kmax = ks[-1]
    qids = np.asarray([str(x) for x in (run.query_ids if qrels is None else qrels.query_ids)], dtype=object)
    mat = _top_rows(run, embeddings, qids, depth=kmax, ties=ties)
    used = np.unique(mat[mat >= 0])
    local = np.full(mat.shape, -1, dtype=np.int64)
    local[mat >= 0] = np.searchsorted(used, mat[mat >= 0])
    vecs = normalize(gather_rows(embeddings.vectors, used)) if len(used) else np.zeros((1, embeddings.dim), np.float32)
    grades = None if qrels is None else _list_grades(qrels, embeddings, used, local)
    a = _check_alpha_k(alpha, kmax)[0] if grades is not None else 0.0
    label_a = alpha_ndcg_name(a)
    parts_m, parts_k, parts_v = [], [], []
    for kk in ks:
        ild, andcg = _both_at(local[:, :kk], vecs, a, None if grades is None else (grades[0][:, :kk],
                                                                                grades[1][:, :kk]))
        parts_m.append(np.full(len(qids), "ild", dtype=object))
        parts_k.append(np.full(len(qids), kk, dtype=np.int32))
        parts_v.append(ild)
        if andcg is not None:
            parts_m.append(np.full(len(qids), label_a, dtype=object))
            parts_k.append(np.full(len(qids), kk, dtype=np.int32))
            parts_v.append(andcg)
    n_parts = len(parts_m)
    qcol = np.tile(np.asarray(qids, dtype=object), n_parts)
    dom = qrels.domain_of() if qrels is not None else np.full(len(qids), "", dtype=object)
    metrics = ["ild"] + ([label_a] if grades is not None else [])
    return pd.DataFrame({
        "run": pd.Categorical(np.full(len(qcol), run.name, dtype=object)),
        "query_id": pd.Categorical(qcol, categories=list(dict.fromkeys(qids))),
        "domain": pd.Categorical(np.tile(np.asarray(dom, dtype=object), n_parts)),
        "metric": pd.Categorical(np.concatenate(parts_m), categories=metrics),
        "k": np.concatenate(parts_k),
        "value": np.concatenate(parts_v).astype(np.float64),
    })


def _judged_run(run: Run, qrels: Qrels) -> Run:
    """The rows of ``run`` whose document ``qrels`` judge for the query (grade >= 0)."""
    from .evaluate import judged_rows

    return run.with_rows(judged_rows(qrels, run))


def _top_rows(run: Run, embeddings: Embeddings, qids: np.ndarray, *, depth: int, ties: str) -> np.ndarray:
    """``(len(qids), depth)``: the embedding row of each query's ``depth`` best documents in evaluation order.

    ``-1`` pads a short list and marks a listed document without a vector (it keeps its
    position); a query absent from the run gets an empty list.  Documents of one list are
    distinct (a run holds a (query, document) pair once) and so are their rows (ids are unique).
    """
    from .ranking import rank_order

    mat = np.full((len(qids), depth), -1, dtype=np.int64)
    order, pos = rank_order(run, ties=ties)
    keep = pos < depth
    rows = order[keep]
    at = pd.Index(qids).get_indexer(pd.Index(np.asarray(run.query_ids, dtype=object).astype(str)))
    out_q = at[run.q[rows]]
    ok = out_q >= 0
    # the listed documents only (a lazy run keeps its ids as arrow strings: no vocabulary is built)
    mat[out_q[ok], pos[keep][ok]] = embeddings.rows_of(run.docs_at(rows[ok]))
    return mat


def _list_grades(qrels: Qrels, embeddings: Embeddings, used: np.ndarray,
                 local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(grade of each listed document, the query's judged grades sorted descending), both ``local.shape``.

    ``local`` holds positions in ``used`` (the embedding rows of the listed documents), -1 for
    none; rows are the queries of ``qrels``.  Only grades > 0 count; a judged document without a
    vector, or never listed, still counts in the ideal.
    """
    nq, k = local.shape
    positive = qrels.grades > 0
    q = qrels.q[positive]
    g = qrels.grades[positive].astype(np.float64)
    rows = embeddings.rows_of(qrels.doc_ids[positive])
    at = np.searchsorted(used, rows) if len(used) else np.zeros(len(rows), dtype=np.int64)
    found = (rows >= 0) & (at < len(used))
    found[found] &= used[at[found]] == rows[found]
    # the listed documents' grades: (query, position in used) pairs looked up among the judged ones
    width = np.int64(len(used) + 1)
    judged = q[found] * width + at[found]
    srt = np.argsort(judged, kind="stable")
    judged, judged_g = judged[srt], g[found][srt]
    listed = np.arange(nq, dtype=np.int64)[:, None] * width + np.where(local >= 0, local, len(used))
    hit = np.minimum(np.searchsorted(judged, listed), max(len(judged) - 1, 0))
    rel = np.zeros((nq, k), dtype=np.float64)
    if len(judged):
        match = (judged[hit] == listed) & (local >= 0)
        rel[match] = judged_g[hit[match]]
    # the ideal: each query's k largest grades, descending
    ideal = np.zeros((nq, k), dtype=np.float64)
    by = np.lexsort((-g, q))
    qs, gs = q[by], g[by]
    first = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]]) if len(qs) else np.zeros(0, dtype=np.int64)
    rank = np.arange(len(qs)) - np.repeat(first, np.diff(np.r_[first, len(qs)]))
    top = rank < k
    ideal[qs[top], rank[top]] = gs[top]
    return rel, ideal


def _both_at(lst: np.ndarray, emb: np.ndarray, a: float,
             grades: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray | None]:
    """ILD and (with ``grades`` = (rel, ideal)) alpha-nDCG of the lists ``lst`` (nq, k), one gather per chunk.

    The same values as :func:`intra_list_diversity` and :func:`alpha_ndcg` (the same per-chunk
    code, on the same rows): the vectors of a chunk are gathered once for both.
    """
    emb = _embeddings(emb)
    lst = _lists(lst, emb.shape[0])
    nq, k = lst.shape
    ild = np.zeros(nq, dtype=np.float64)
    dcg = None if grades is None else np.zeros(nq, dtype=np.float64)
    disc = _discounts(k)
    step = _chunk_rows(k, emb.shape[1], extra=k)
    for s in range(0, nq, step):
        vec, valid = _gather(emb, lst[s : s + step])
        if k >= 2:
            ild[s : s + step] = _ild_chunk(vec, valid)
        if dcg is not None:
            dcg[s : s + step] = _alpha_dcg_chunk(a, disc, vec, valid, grades[0][s : s + step])
    return ild, None if grades is None else _over_ideal(dcg, grades[1], disc)

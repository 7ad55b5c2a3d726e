"""Ranking metrics, every query and every cutoff k in one vectorised pass.

All metrics share one signature, ``metric(j: Judged, ks: ndarray) -> ndarray``
of shape ``(n_queries, len(ks))``, so dispatch is a table lookup
(:data:`METRICS`). ``Judged`` holds, for a block of queries, the grades of the
ranked documents as a dense integer matrix (rank i ↦ column i−1), built once
per evaluation by :mod:`evalcore.evaluate`.

Notation used in the docstrings, for one query:

* ``g_i``: grade of the document at rank i (0 when unjudged), i = 1..n (n = documents retrieved);
* ``b_i = [g_i >= θ]``: binary relevance at threshold θ (``rel_threshold``, default 1);
* ``H_k = Σ_{i<=min(k,n)} b_i``: hits in the top k;
* ``R = #{judged d : grade(d) >= θ}``: relevant documents in the qrels;
* ``disc_i = 1 / log2(i + 1)``.

Every formula guards its denominator: a 0/0 is defined as 0 (trec_eval's
convention), never NaN, except ``first_rel_rank`` where "none found" is NaN by
definition (documented there and counted by the aggregations).

The relevance threshold θ affects the *binary* metrics only (precision, recall,
recall_capped, hit_rate, mrr, map, map_found, rprec, first_rel_rank). nDCG
(both gains) always uses the raw grades, as trec_eval does with ``-l``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Judged", "METRICS", "K_FREE"]


@dataclass(frozen=True)
class Judged:
    """Grades of the ranked lists of a block of queries.

    Attributes
    ----------
    grades : int64 array (n, W)
        ``grades[q, i]`` = grade of the document at rank i+1 (0 if unjudged or
        beyond the list). W = min(largest k needed, deepest list).
    n_ret : int64 array (n,)
        Number of documents retrieved (whole list, not cut at W).
    n_rel : int64 array (n,)
        R at the threshold.
    ideal : int64 array (n, IW)
        Positive qrels grades sorted descending (0-padded); IW = min(largest k, most positives).
    first_rel : int64 array (n,)
        1-based rank of the first document with grade >= θ over the whole list; 0 if none.
    rel_threshold : int
        θ.
    """

    grades: np.ndarray
    n_ret: np.ndarray
    n_rel: np.ndarray
    ideal: np.ndarray
    first_rel: np.ndarray
    rel_threshold: int = 1

    @property
    def width(self) -> int:
        return self.grades.shape[1]


def _at(cum: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Value of a running (cumulative) matrix at each k; beyond its width, its last column.

    ``cum`` has shape (n, W). Column k-1 if k <= W else column W-1 (the list is
    exhausted). An empty width gives zeros.
    """
    n, w = cum.shape
    if w == 0:
        return np.zeros((n, len(ks)), dtype=np.float64)
    idx = np.minimum(np.asarray(ks, dtype=np.int64), w) - 1
    return cum[:, idx].astype(np.float64, copy=False)


def _hits(j: Judged) -> np.ndarray:
    return np.cumsum(j.grades >= j.rel_threshold, axis=1, dtype=np.int64)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def precision(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Precision at k (trec_eval ``P_k``).

    ``P@k = H_k / k`` — the denominator is k even when fewer than k documents
    were retrieved.
    """
    return _at(_hits(j), ks) / np.asarray(ks, dtype=np.float64)[None, :]


def recall(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Recall at k (trec_eval ``recall_k``; seeds 002, 003).

    ``recall@k = H_k / R``; 0 when R = 0.
    """
    return _safe_div(_at(_hits(j), ks), j.n_rel[:, None])


def recall_capped(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Recall at k with the denominator capped at k (seed 004; BEIR-style "capped recall").

    ``recall_capped@k = H_k / min(k, R)``; 0 when R = 0. Reaches 1 whenever the
    top k is all relevant, even if R > k.
    """
    den = np.minimum(np.asarray(ks)[None, :], j.n_rel[:, None])
    return _safe_div(_at(_hits(j), ks), den)


def hit_rate(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Hit rate / success at k (trec_eval ``success_k``).

    ``hit_rate@k = 1 if H_k > 0 else 0``.
    """
    return (_at(_hits(j), ks) > 0).astype(np.float64)


def mrr(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Reciprocal rank at k (trec_eval ``recip_rank`` when k >= depth; seeds 000–004).

    ``RR@k = 1 / r`` where r is the rank of the first document with grade >= θ,
    if r <= k; else 0. Its mean over queries is MRR@k.
    """
    r = j.first_rel[:, None].astype(np.float64)
    ok = (j.first_rel[:, None] > 0) & (j.first_rel[:, None] <= np.asarray(ks)[None, :])
    return np.where(ok, 1.0 / np.where(r > 0, r, 1.0), 0.0)


def _ap_sums(j: Judged, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = _hits(j)
    b = j.grades >= j.rel_threshold
    ranks = np.arange(1, j.width + 1, dtype=np.float64)
    prec_at_rel = np.where(b, h / ranks[None, :], 0.0)
    return _at(np.cumsum(prec_at_rel, axis=1), ks), _at(h, ks)


def average_precision(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Average precision cut at k, divided by R (trec_eval ``map_cut_k``; seed 002).

    ``AP@k = (1/R) Σ_{i<=k} b_i · H_i / i``; 0 when R = 0. With k >= depth this
    is trec_eval's ``map``.
    """
    s, _ = _ap_sums(j, ks)
    return _safe_div(s, j.n_rel[:, None])


def average_precision_found(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Average precision cut at k, divided by the hits found (seeds 000 and 004).

    ``AP_found@k = (1/H_k) Σ_{i<=k} b_i · H_i / i``; 0 when H_k = 0. It ignores
    relevant documents that were not retrieved, so it is >= ``map`` and is not
    trec_eval's MAP.
    """
    s, h = _ap_sums(j, ks)
    return _safe_div(s, h)


def _discounts(w: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, w + 2, dtype=np.float64))


def _ndcg(j: Judged, ks: np.ndarray, gain: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    g = gain(j.grades)
    dcg = _at(np.cumsum(g * _discounts(j.width)[None, :], axis=1), ks)
    ig = gain(j.ideal)
    idcg = _at(np.cumsum(ig * _discounts(j.ideal.shape[1])[None, :], axis=1), ks)
    return _safe_div(dcg, idcg)


def _linear_gain(g: np.ndarray) -> np.ndarray:
    # trec_eval (m_ndcg_cut.c): the gain of a document is its grade when > 0; a
    # negative grade is read as "unjudged in pool" (form_res_rels.c) and adds
    # nothing, like 0. Checked against trec_eval's out.test.aql (qrels.rel_level).
    return np.maximum(g, 0).astype(np.float64)


def _exp_gain(g: np.ndarray) -> np.ndarray:
    return np.where(g > 0, np.exp2(g.astype(np.float64)) - 1.0, 0.0)


def ndcg(j: Judged, ks: np.ndarray) -> np.ndarray:
    """nDCG at k with linear gain (trec_eval ``ndcg_cut_k``; seeds 000, 002).

    ``DCG@k = Σ_{i<=k} g_i / log2(i+1)``; ``IDCG@k`` is the DCG of the judged
    positive grades sorted descending, cut at k; ``nDCG@k = DCG@k / IDCG@k``
    (0 when IDCG = 0). Grades are used raw (θ does not apply). As in trec_eval,
    a negative grade gains nothing (like 0), in the DCG and in the ideal.
    """
    return _ndcg(j, ks, _linear_gain)


def ndcg_exp(j: Judged, ks: np.ndarray) -> np.ndarray:
    """nDCG at k with exponential gain (seeds 001, 003; ranx ``ndcg_burges``).

    Same as :func:`ndcg` with gain ``2^g − 1`` for g > 0 and 0 otherwise.
    """
    return _ndcg(j, ks, _exp_gain)


def rprec(j: Judged, ks: np.ndarray) -> np.ndarray:
    """R-precision (trec_eval ``Rprec``): precision at rank R.

    ``Rprec = H_R / R``; 0 when R = 0. Needs W >= R (the evaluator ensures it). ``ks`` is ignored.
    """
    h = _hits(j)
    r = j.n_rel
    if j.width == 0:
        return np.zeros((len(r), len(ks)))
    idx = np.clip(r, 1, j.width) - 1
    hr = h[np.arange(len(r)), idx].astype(np.float64)
    out = _safe_div(hr, r)
    return np.repeat(out[:, None], len(ks), axis=1)


def first_rel_rank(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Rank of the first relevant document (seed 003 "first relevant rank").

    1-based rank over the whole retrieved list of the first document with grade
    >= θ; NaN when the list holds none (aggregations report the count of such
    queries and the mean/median over the others). ``ks`` is ignored.
    """
    v = np.where(j.first_rel > 0, j.first_rel.astype(np.float64), np.nan)
    return np.repeat(v[:, None], len(ks), axis=1)


#: name -> function; one signature for every metric.
METRICS: dict[str, Callable[[Judged, np.ndarray], np.ndarray]] = {
    "precision": precision,
    "recall": recall,
    "recall_capped": recall_capped,
    "hit_rate": hit_rate,
    "mrr": mrr,
    "map": average_precision,
    "map_found": average_precision_found,
    "ndcg": ndcg,
    "ndcg_exp": ndcg_exp,
    "rprec": rprec,
    "first_rel_rank": first_rel_rank,
}

#: metrics that take no cutoff (k is recorded as 0 in the table).
K_FREE = frozenset({"rprec", "first_rel_rank"})

#: metrics whose values are not in [0, 1].
UNBOUNDED = frozenset({"first_rel_rank"})

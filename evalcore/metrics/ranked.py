"""Binary metrics at a cutoff k: precision, recall, hits, F1, reciprocal rank, AP, judged@k.

Notation: :mod:`evalcore.metrics._base`. Every function has the signature
``metric(j: Judged, ks) -> (n_queries, len(ks))``.
"""

from __future__ import annotations

import numpy as np

from ._base import Judged, at, hits_cum, ranks, relevant, safe_div

__all__ = [
    "precision", "recall", "recall_capped", "hit_rate", "hits", "f1", "mrr",
    "average_precision", "average_precision_found", "judged",
]


def precision(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Precision at k (trec_eval ``P_k``).

    ``P@k = H_k / k`` — the denominator is k even when fewer than k documents
    were retrieved.
    """
    return at(hits_cum(j), ks) / np.asarray(ks, dtype=np.float64)[None, :]


def recall(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Recall at k (trec_eval ``recall_k``; seeds 002, 003).

    ``recall@k = H_k / R``; 0 when R = 0.
    """
    return safe_div(at(hits_cum(j), ks), j.n_rel[:, None])


def recall_capped(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Recall at k with the denominator capped at k (seed 004; BEIR-style "capped recall").

    ``recall_capped@k = H_k / min(k, R)``; 0 when R = 0. Reaches 1 whenever the
    top k is all relevant, even if R > k.
    """
    den = np.minimum(np.asarray(ks)[None, :], j.n_rel[:, None])
    return safe_div(at(hits_cum(j), ks), den)


def hit_rate(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Hit rate / success at k (trec_eval ``success_k``).

    ``hit_rate@k = 1 if H_k > 0 else 0``.
    """
    return (at(hits_cum(j), ks) > 0).astype(np.float64)


def hits(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Number of relevant documents in the top k (ranx ``hits``).

    ``hits@k = H_k``, a count (0..k), not a rate. Its mean over queries is what
    ranx reports. (Until evalcore 0.1 ``hits`` was an alias of ``hit_rate``.)
    """
    return at(hits_cum(j), ks)


def f1(j: Judged, ks: np.ndarray) -> np.ndarray:
    """F1 at k: harmonic mean of P@k and recall@k (ranx ``f1``).

    ``F1@k = 2 · P@k · recall@k / (P@k + recall@k) = 2 H_k / (k + R)``; 0 when
    H_k = 0 (so also when R = 0). The precision's denominator is k, as in
    :func:`precision`.
    """
    h = at(hits_cum(j), ks)
    den = np.asarray(ks, dtype=np.float64)[None, :] + j.n_rel[:, None]
    return np.where(h > 0, safe_div(2.0 * h, den), 0.0)


def mrr(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Reciprocal rank at k (trec_eval ``recip_rank`` when k >= depth; seeds 000–004).

    ``RR@k = 1 / r`` where r is the rank of the first document with grade >= θ,
    if r <= k; else 0. Its mean over queries is MRR@k.
    """
    r = j.first_rel[:, None].astype(np.float64)
    ok = (j.first_rel[:, None] > 0) & (j.first_rel[:, None] <= np.asarray(ks)[None, :])
    return np.where(ok, 1.0 / np.where(r > 0, r, 1.0), 0.0)


def _ap_sums(j: Judged, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = hits_cum(j)
    prec_at_rel = np.where(relevant(j), h / ranks(j.width)[None, :], 0.0)
    return at(np.cumsum(prec_at_rel, axis=1), ks), at(h, ks)


def average_precision(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Average precision cut at k, divided by R (trec_eval ``map_cut_k``; seed 002).

    ``AP@k = (1/R) Σ_{i<=k} b_i · H_i / i``; 0 when R = 0. With k >= depth
    (``map@all``) this is trec_eval's ``map``.
    """
    s, _ = _ap_sums(j, ks)
    return safe_div(s, j.n_rel[:, None])


def average_precision_found(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Average precision cut at k, divided by the hits found (seeds 000 and 004).

    ``AP_found@k = (1/H_k) Σ_{i<=k} b_i · H_i / i``; 0 when H_k = 0. It ignores
    relevant documents that were not retrieved, so it is >= ``map`` and is not
    trec_eval's MAP.
    """
    s, h = _ap_sums(j, ks)
    return safe_div(s, h)


def judged(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Share of the top k that carries a judgment (ir_measures ``Judged@k``).

    ``judged@k = #{i <= min(k, n) : J_i} / min(k, n)``; 0 when n = 0. A
    document counts as judged when the qrels list it for the query, whatever
    its grade (negative and 0 included). The denominator is the number of
    documents actually in the top k, so a list shorter than k is not penalised.
    Does not depend on θ.
    """
    cum = np.cumsum(j.judged_mask(), axis=1, dtype=np.int64)
    den = np.minimum(np.asarray(ks, dtype=np.int64)[None, :], j.n_ret[:, None])
    return safe_div(at(cum, ks), den)

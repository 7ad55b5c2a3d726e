"""Metrics of the whole retrieved list (no cutoff): counts, set measures, R-precision,
bpref, infAP, GM-MAP, RBP and its residual.

Notation: :mod:`evalcore.metrics._base`. Every function has the signature
``metric(j: Judged, ks) -> (n_queries, len(ks))``; ``ks`` only sets the number
of (identical) columns. The evaluator gives these metrics the whole list
(W = depth). Where a metric is trec_eval's, the docstring names the C file it
follows; "0/0 = 0" as there.
"""

from __future__ import annotations

import numpy as np

from ._base import K_ALL, Judged, hits_all, hits_cum, per_query, relevant, safe_div
from .ranked import average_precision

__all__ = [
    "rprec", "first_rel_rank", "num_ret", "num_rel", "num_rel_ret", "num_q",
    "set_precision", "set_recall", "set_f", "bpref", "infap", "gm_map", "rbp", "rbp_residual",
    "GM_FLOOR", "INFAP_EPSILON", "RBP_P",
]

#: trec_eval's MIN_GEO_MEAN: AP below it counts as it in the geometric mean
GM_FLOOR = 1e-5
#: trec_eval's INFAP_EPSILON
INFAP_EPSILON = 1e-5
#: default persistence of RBP (ir_measures' and ranx's usual value; trec_eval's default is 0.9)
RBP_P = 0.8


def rprec(j: Judged, ks: np.ndarray) -> np.ndarray:
    """R-precision (trec_eval ``Rprec``): precision at rank R.

    ``Rprec = H_R / R``; 0 when R = 0. Needs W >= R (the evaluator ensures it). ``ks`` is ignored.
    """
    h = hits_cum(j)
    r = j.n_rel
    if j.width == 0:
        return np.zeros((len(r), len(ks)))
    idx = np.clip(r, 1, j.width) - 1
    hr = h[np.arange(len(r)), idx].astype(np.float64)
    return per_query(safe_div(hr, r), ks)


def first_rel_rank(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Rank of the first relevant document (seed 003 "first relevant rank").

    1-based rank over the whole retrieved list of the first document with grade
    >= θ; NaN when the list holds none (aggregations report the count of such
    queries and the mean/median over the others). ``ks`` is ignored.
    """
    return per_query(np.where(j.first_rel > 0, j.first_rel.astype(np.float64), np.nan), ks)


# ----------------------------------------------------------------------------- counts
def num_ret(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Documents retrieved (trec_eval ``num_ret``): ``n``. Summed over queries in summaries."""
    return per_query(j.n_ret, ks)


def num_rel(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Relevant documents in the qrels (trec_eval ``num_rel``): ``R``. Summed over queries."""
    return per_query(j.n_rel, ks)


def num_rel_ret(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Relevant documents retrieved (trec_eval ``num_rel_ret``): ``H_n``. Summed over queries."""
    return per_query(hits_all(j), ks)


def num_q(j: Judged, ks: np.ndarray) -> np.ndarray:
    """1 for every evaluated query (trec_eval ``num_q``); its sum is the number of queries."""
    return np.ones((j.n_queries, len(ks)))


# ----------------------------------------------------------------------------- set measures
def set_precision(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Precision of the whole retrieved list (trec_eval ``set_P``): ``H_n / n``; 0 when n = 0."""
    return per_query(safe_div(hits_all(j), j.n_ret), ks)


def set_recall(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Recall of the whole retrieved list (trec_eval ``set_recall``): ``H_n / R``; 0 when R = 0."""
    return per_query(safe_div(hits_all(j), j.n_rel), ks)


def set_f(j: Judged, ks: np.ndarray, *, beta: float = 1.0) -> np.ndarray:
    """F of the whole retrieved list (trec_eval ``set_F``, m_set_F.c; ir_measures ``SetF``).

    ``set_F = (β + 1) · P · Rc / (β · P + Rc)`` with ``P = H_n / n`` and
    ``Rc = H_n / R``; 0 when H_n = 0. β weighs recall against precision *as in
    trec_eval* (β = 1: harmonic mean; van Rijsbergen's F_b is β = b²).
    """
    h = hits_all(j)
    p = safe_div(h, j.n_ret)
    r = safe_div(h, j.n_rel)
    v = safe_div((beta + 1.0) * p * r, beta * p + r)
    return per_query(np.where(h > 0, v, 0.0), ks)


# ----------------------------------------------------------------------------- incomplete judgments
def bpref(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Binary preference (Buckley & Voorhees 2004; trec_eval ``bpref``, m_bpref.c).

    For each relevant retrieved document (g_i >= θ) let ``n_i`` be the number of
    judged non-relevant documents (0 <= g < θ) ranked above it; unjudged
    documents and negative grades are skipped.
    ``bpref = (1/R) Σ_{i: b_i} (1 − min(n_i, R) / min(N, R))`` where a term with
    ``n_i = 0`` is 1; 0 when R = 0.
    """
    rel = relevant(j)
    nonrel = j.judged_mask() & (j.grades >= 0) & ~rel & j.in_list()
    above = np.cumsum(nonrel, axis=1)  # inclusive; a relevant rank is never non-relevant itself
    r = j.n_rel[:, None].astype(np.float64)
    den = np.minimum(j.n_nonrel(), j.n_rel)[:, None].astype(np.float64)
    term = np.where(above > 0, 1.0 - safe_div(np.minimum(above, r), den), 1.0)
    return per_query(safe_div(np.where(rel, term, 0.0).sum(axis=1), j.n_rel), ks)


def infap(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Inferred AP (Yilmaz & Aslam 2006; trec_eval ``infAP``, m_infap.c).

    The qrels mark *sampled* judgments as trec_eval does: a document absent
    from the qrels is outside the pool, a negative grade means "in the pool but
    not sampled for judging". For each relevant retrieved document at rank
    i = j + 1, with ``r, m, u`` the relevant, judged non-relevant (0 <= g < θ)
    and pooled-unjudged (g < 0) documents ranked above it:
    ``term = 1`` when j = 0, else
    ``1/(j+1) + (j/(j+1)) · ((r + m + u)/j) · ((r + ε)/(r + m + 2ε))``, ε = 1e-5;
    ``infAP = (1/R) Σ terms``; 0 when R = 0. With complete judgments (no
    negative grade) it is close to, but not equal to, AP.
    """
    rel = relevant(j)
    jm = j.judged_mask() & j.in_list()
    nonrel = jm & (j.grades >= 0) & ~rel
    unj = jm & (j.grades < 0)

    def before(mask: np.ndarray) -> np.ndarray:
        c = np.cumsum(mask, axis=1, dtype=np.int64)
        return (c - mask).astype(np.float64)

    r, m, u = before(rel), before(nonrel), before(unj)
    fj = np.arange(j.width, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r + m + u) / fj) * (
            (r + INFAP_EPSILON) / (r + m + 2 * INFAP_EPSILON))
    term = np.where(fj == 0, 1.0, term)
    return per_query(safe_div(np.where(rel, term, 0.0).sum(axis=1), j.n_rel), ks)


def gm_map(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Per-query term of the geometric mean of AP (trec_eval ``gm_map``, m_gm_map.c).

    ``ln(max(AP, 1e-5))`` with AP over the whole list (``map@all``). This is the
    per-query value, on the log scale; a summary reports ``exp(mean)`` — the
    geometric mean of the floored APs, trec_eval's ``gm_map`` — declared as the
    measure's aggregation ("gmean"), never the plain mean of these logs.
    """
    ap = average_precision(j, np.array([K_ALL]))[:, 0]
    return per_query(np.log(np.maximum(ap, GM_FLOOR)), ks)


# ----------------------------------------------------------------------------- user models
def _powers(p: float, w: int) -> np.ndarray:
    return np.power(p, np.arange(w, dtype=np.float64))


def rbp(j: Judged, ks: np.ndarray, *, p: float = RBP_P) -> np.ndarray:
    """Rank-biased precision (Moffat & Zobel 2008; ranx ``rbp``), binary relevance at θ.

    ``RBP(p) = (1 − p) Σ_{i=1}^{n} b_i p^{i−1}`` over the whole list. Default
    p = 0.8; trec_eval's default is 0.9 (write ``rbp(p=0.9)``), and trec_eval
    grades RBP's gains on graded qrels, where this one stays binary.
    """
    return per_query((1.0 - p) * (relevant(j) * _powers(p, j.width)[None, :]).sum(axis=1), ks)


def rbp_residual(j: Judged, ks: np.ndarray, *, p: float = RBP_P) -> np.ndarray:
    """Residual of RBP: how far RBP could still rise (trec_eval ``rbp_resid``, m_rbp_resid.c).

    The weight of the unjudged documents (``u_i``: absent from the qrels or a
    negative grade) plus that of the ranks after the list, as if they were all
    relevant: ``(1 − p) Σ_{i<=n} u_i p^{i−1} + p^n`` when the list holds an
    unjudged document, 0 otherwise (trec_eval's rule: a fully judged list has
    no residual, even when it is short). Does not depend on θ.
    """
    u = j.unjudged_mask()
    s = (u * _powers(p, j.width)[None, :]).sum(axis=1)
    v = np.power(p, j.n_ret.astype(np.float64)) + (1.0 - p) * s
    return per_query(np.where(u.any(axis=1), v, 0.0), ks)

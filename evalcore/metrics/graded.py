"""Graded metrics at a cutoff k: nDCG (linear, exponential, custom gains), DCG, ERR.

Notation: :mod:`evalcore.metrics._base`. nDCG always uses the raw grades (θ
does not apply, as in trec_eval with ``-l``); DCG and ERR count the grades of
the documents with grade >= θ (ranx's ``rel_lvl``), which with the default θ = 1
is the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ._base import Judged, at, discounts, safe_div

__all__ = ["ndcg", "ndcg_exp", "dcg", "dcg_exp", "err", "ERR_MAX_GRADE"]

#: gdeval's (and so ir_measures') maximum grade in ERR's satisfaction probability
ERR_MAX_GRADE = 4


def _linear_gain(g: np.ndarray) -> np.ndarray:
    # trec_eval (m_ndcg_cut.c): the gain of a document is its grade when > 0; a
    # negative grade is read as "unjudged in pool" (form_res_rels.c) and adds
    # nothing, like 0. Checked against trec_eval's out.test.aql (qrels.rel_level).
    return np.maximum(g, 0).astype(np.float64)


def _exp_gain(g: np.ndarray) -> np.ndarray:
    return np.where(g > 0, np.exp2(g.astype(np.float64)) - 1.0, 0.0)


def _dcg_at(gains: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """``Σ_{i<=k} gains_i · disc_i`` at each k; gains has shape (n, W)."""
    return at(np.cumsum(gains * discounts(gains.shape[1])[None, :], axis=1), ks)


def _ndcg(j: Judged, ks: np.ndarray, gain: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    return safe_div(_dcg_at(gain(j.grades), ks), _dcg_at(gain(j.ideal), ks))


def _mapped_gains(grades: np.ndarray, gains: Sequence[tuple[int, float]]) -> np.ndarray:
    """Gain of each grade >= 0 under a gain map (unlisted grades keep their grade as gain)."""
    out = grades.astype(np.float64)
    for grade, value in gains:
        out[grades == grade] = value
    return out


def _ideal_from_levels(j: Judged, level_gains: np.ndarray, width: int) -> np.ndarray:
    """Ideal gains (n, width): every judged document's gain, sorted descending, positives only.

    Built from ``j.level_counts`` (judged documents per grade), so that grades
    whose mapped gain is positive are in the ideal even when their grade is 0.
    """
    n = j.n_queries
    pos = level_gains > 0
    if width == 0 or not pos.any():
        return np.zeros((n, width))
    order = np.flatnonzero(pos)[np.argsort(-level_gains[pos], kind="stable")]
    counts = j.level_counts[:, order]  # (n, L+) by gain descending
    ends = np.cumsum(counts, axis=1)  # rank (exclusive) where each level's run ends
    r = np.arange(width)
    level = (ends[:, None, :] <= r[None, :, None]).sum(axis=2)  # (n, width): index into order
    vals = np.r_[level_gains[order], 0.0]
    return vals[level]


def ndcg(j: Judged, ks: np.ndarray, *, gains: Sequence[tuple[int, float]] = ()) -> np.ndarray:
    """nDCG at k with linear gain (trec_eval ``ndcg_cut_k``; seeds 000, 002).

    ``DCG@k = Σ_{i<=k} gain(g_i) / log2(i+1)``; ``IDCG@k`` is the DCG of the
    judged documents' gains sorted descending, cut at k; ``nDCG@k = DCG@k /
    IDCG@k`` (0 when IDCG = 0). Grades are used raw (θ does not apply). As in
    trec_eval, a negative grade gains nothing (like 0), in the DCG and in the ideal.

    Default gain: the grade itself (``gain(g) = max(g, 0)``). ``gains`` maps
    grades to other gains (trec_eval's ``ndcg.1=3,2=9``, written
    ``ndcg(gains=1:3,2:9)``): a judged document with grade g >= 0 gains
    ``gains[g]`` when g is listed, g otherwise; an unjudged document or a
    negative grade gains 0. The ideal sorts every judged document by its gain
    (a grade 0 given a positive gain enters it).
    """
    if not gains:
        return _ndcg(j, ks, _linear_gain)
    lg = _mapped_gains(j.levels, gains)
    ok = j.judged_mask() & (j.grades >= 0)
    dcg_ = _dcg_at(np.where(ok, _mapped_gains(j.grades, gains), 0.0), ks)
    ideal_w = int(min(int(np.max(ks, initial=1)), int(j.level_counts.sum(axis=1).max(initial=0))))
    idcg = _dcg_at(_ideal_from_levels(j, lg, ideal_w), ks)
    return safe_div(dcg_, idcg)


def ndcg_exp(j: Judged, ks: np.ndarray) -> np.ndarray:
    """nDCG at k with exponential gain (seeds 001, 003; ranx ``ndcg_burges``).

    Same as :func:`ndcg` with gain ``2^g − 1`` for g > 0 and 0 otherwise.
    """
    return _ndcg(j, ks, _exp_gain)


def dcg(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Unnormalised DCG at k, linear gain (ranx ``dcg``).

    ``DCG@k = Σ_{i<=k} [g_i >= θ] · g_i / log2(i+1)``. Not bounded by 1.
    """
    g = j.grades
    return _dcg_at(np.where(g >= j.rel_threshold, g, 0).astype(np.float64), ks)


def dcg_exp(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Unnormalised DCG at k, exponential gain (ranx ``dcg_burges``).

    ``DCG_exp@k = Σ_{i<=k} [g_i >= θ] · (2^{g_i} − 1) / log2(i+1)``. Not bounded by 1.
    """
    g = j.grades
    return _dcg_at(np.where(g >= j.rel_threshold, _exp_gain(g), 0.0), ks)


def err(j: Judged, ks: np.ndarray, *, max_grade: int = ERR_MAX_GRADE) -> np.ndarray:
    """Expected reciprocal rank at k (Chapelle et al. 2009; ir_measures ``ERR@k`` = gdeval).

    ``R_i = [g_i >= θ] (2^{g_i} − 1) / 2^{g_max}`` is the probability that the
    document at rank i satisfies the user, g_max = ``max_grade`` (default 4,
    gdeval's ``$MAX_JUDGMENT``);
    ``ERR@k = Σ_{i<=k} (R_i / i) Π_{j<i} (1 − R_j)``. In [0, 1); the evaluator
    rejects qrels with a grade above g_max.
    """
    g = j.grades
    r = np.where(g >= j.rel_threshold, np.exp2(g.astype(np.float64)) - 1.0, 0.0) / 2.0 ** max_grade
    w = j.width
    if w == 0:
        return np.zeros((j.n_queries, len(ks)))
    # probability of reaching rank i: Π_{j<i}(1 − R_j)
    reach = np.ones_like(r)
    reach[:, 1:] = np.cumprod(1.0 - r[:, :-1], axis=1)
    contrib = r * reach / np.arange(1, w + 1, dtype=np.float64)[None, :]
    return at(np.cumsum(contrib, axis=1), ks)

"""Interpolated precision at recall levels (the precision–recall curve) and the 11-point average.

Notation: :mod:`evalcore.metrics._base`. Both follow trec_eval
(m_iprec_at_recall.c, m_11pt_avg.c) over the whole retrieved list.
"""

from __future__ import annotations

import numpy as np

from ._base import Judged, hits_all, hits_cum, lround, per_query, ranks

__all__ = ["iprec_at_recall", "eleven_pt_avg", "RECALL_LEVELS"]

#: trec_eval's eleven standard recall levels
RECALL_LEVELS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _iprec(j: Judged, levels: np.ndarray) -> np.ndarray:
    """Interpolated precision of every query at each recall level, shape (n, len(levels))."""
    n = j.n_queries
    if j.width == 0:
        return np.zeros((n, len(levels)))
    h = hits_cum(j)
    prec = h / ranks(j.width)[None, :]
    # suffix maximum: best precision at any rank >= i (ranks past the list only lower it)
    best_after = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
    need = lround(levels[None, :] * j.n_rel[:, None].astype(np.float64))  # hits to reach each level
    # first rank (0-based) where H reaches `need`; `need` 0 starts at rank 1
    first = np.stack([(h < need[:, [c]]).sum(axis=1) for c in range(need.shape[1])], axis=1)
    reached = need <= hits_all(j)[:, None]
    got = np.take_along_axis(best_after, np.minimum(first, j.width - 1), axis=1)
    return np.where(reached, got, 0.0)


def iprec_at_recall(j: Judged, ks: np.ndarray, *, recall: float) -> np.ndarray:
    """Interpolated precision at a recall level x (trec_eval ``iprec_at_recall_x``).

    ``c = lround(x · R)`` relevant documents are needed to reach recall x;
    ``iprec(x) = max_{i >= r_c} H_i / i`` where ``r_c`` is the rank of the c-th
    relevant document (rank 1 when c = 0) and i runs over the retrieved list;
    0 when fewer than c relevant documents were retrieved (so also when
    nothing relevant was). Precision interpolated this way never rises with x.
    """
    return per_query(_iprec(j, np.array([float(recall)]))[:, 0], ks)


def eleven_pt_avg(j: Judged, ks: np.ndarray) -> np.ndarray:
    """Mean interpolated precision over the 11 recall levels 0, 0.1, ..., 1 (trec_eval ``11pt_avg``).

    ``11pt_avg = (1/11) Σ_{x in 0, 0.1, ..., 1} iprec(x)``.
    """
    v = _iprec(j, np.array(RECALL_LEVELS))
    # trec_eval adds the levels from 1.0 down to 0.0
    return per_query(v[:, ::-1].sum(axis=1) / len(RECALL_LEVELS), ks)

r"""Weighted RRF values whose exact ties stay ties (used by :class:`evalcore.fusion.Prepared`).

Seed 001 §7.2 sorts the candidates by ``RRF(q, d) = Σ_S w_S / (c + rank_S(q, d))``
descending, then by ``d`` ascending. In floating point the same rational value
summed in another order can differ in its last bit: a document ranked (1, 2, 7)
by three equally weighted runs and another ranked (7, 1, 2) tie exactly, yet
``1/61 + 1/62 + 1/67`` and ``1/67 + 1/61 + 1/62`` are two different doubles, so
the tie-breaker was never reached. Here:

1. each term ``w_S / (c + rank_S)`` is one rounded division (``0`` where S does
   not list the document) and the terms of a row are added **run by run, in the
   order the runs are given, left to right, in float64**:
   ``((t_1 + t_2) + t_3) + … + t_m`` — the definition's sum as written, and
   ranx's (``ranx.fuse(method="rrf")`` adds ``sum([run.get(d, 0.0) for run in
   runs])`` in numba, left to right from 0), so the two are equal to the last bit
   wherever step 2 changes nothing;
2. within a query, rows of two or more terms whose values are closer than the
   rounding error of such a sum (and not already equal) are recomputed exactly
   (rational arithmetic on the weights, ``c`` and the ranks, all exact binary
   numbers), once per distinct rank vector, and replaced by the correctly
   rounded double of the exact value. A row of one term is one correctly rounded
   division: equal rationals are equal doubles already. Correct rounding is
   monotone: exactly equal values become equal doubles and an exact order is
   never inverted (two *different* exact values less than half a unit in the last
   place apart would round to one double; no such case is known for integer
   ranks). These rows are where a sum in a fixed order gives equal rationals
   different doubles (ranx's too: its values there depend on which run ranked the
   document where) or could invert two nearly equal values; they are rare (8 rows of
   40,791 fused from random tie-heavy runs of 2 to 12 runs differed from ranx's,
   by at most 1.8e-16 relative: a unit or two in the last place).

The near values are found with one sort of the values (not a sort by query and
value): a run of consecutive close values over all queries holds every run of
close values within one query.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["rrf_values"]


def _run_order_sum(terms: np.ndarray) -> np.ndarray:
    """Row sums of ``terms`` (m, S): column after column, in run order, left to right (never numpy's pairwise sum,
    whose order changes with the number of runs)."""
    if terms.shape[1] == 0:
        return np.zeros(terms.shape[0], dtype=np.float64)
    out = terms[:, 0].copy()
    for j in range(1, terms.shape[1]):
        out += terms[:, j]
    return out


def _exact(ranks: np.ndarray, weights: np.ndarray, c: float) -> Fraction:
    """The exact RRF value of one row of ranks (``inf``: the run does not list the document)."""
    fc = Fraction(c)
    return sum((Fraction(float(w)) / (fc + Fraction(float(r))) for w, r in zip(weights, ranks, strict=True)
                if np.isfinite(r)), Fraction(0))


def _near_rows(values: np.ndarray, q: np.ndarray, tol: float) -> np.ndarray:
    """Positions of rows whose value is within ``tol`` (relative) of another, different value of its query.

    Close values are chained over all queries in one sort; within each chain
    (a "cluster"), the rows of a query are kept when their values are not all equal.
    """
    sv = np.sort(values)
    gap = sv[1:] - sv[:-1]
    close = gap <= tol * np.abs(sv[1:])
    strict = close & (gap > 0)
    if not strict.any():
        return np.zeros(0, dtype=np.int64)
    cluster = np.r_[0, np.cumsum(~close)]  # per sorted position
    hot = np.unique(cluster[1:][strict])  # clusters holding two different values
    lo = sv[np.searchsorted(cluster, hot, side="left")]
    hi = sv[np.searchsorted(cluster, hot, side="right") - 1]
    pos = np.searchsorted(lo, values, side="right") - 1  # the hot cluster a value may lie in
    rows = np.flatnonzero((pos >= 0) & (values <= hi[np.maximum(pos, 0)]))
    if rows.size < 2:
        return np.zeros(0, dtype=np.int64)
    # keep the (cluster, query) groups whose values differ
    order = np.lexsort((q[rows], pos[rows]))
    rows = rows[order]
    key_c, key_q, v = pos[rows], q[rows], values[rows]
    start = np.r_[True, (key_c[1:] != key_c[:-1]) | (key_q[1:] != key_q[:-1])]
    group = np.cumsum(start) - 1
    g_min = np.minimum.reduceat(v, np.flatnonzero(start))
    g_max = np.maximum.reduceat(v, np.flatnonzero(start))
    return rows[(g_max > g_min)[group]]


def rrf_values(columns: np.ndarray, weights: np.ndarray, c: float, q: np.ndarray) -> np.ndarray:
    """``RRF = Σ_S w_S / (c + rank_S)`` of every row, added in run order, exact ties equal (see the module docstring).

    ``columns`` (m, S): the rank of the row's document in each run, ``inf`` where absent;
    ``weights`` (S,) finite and >= 0; ``c`` > -1; ``q`` (m,) the row's query code.
    """
    if columns.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    terms = np.asarray(weights, dtype=np.float64)[None, :] / (c + columns)  # absent: w / inf = 0
    out = _run_order_sum(terms)
    if columns.shape[1] < 2:
        return out
    # rows of two terms or more (one term: one correctly rounded division, nothing to mend)
    multi = np.flatnonzero(np.count_nonzero(np.isfinite(columns), axis=1) >= 2)
    # rounding error of S divisions and S - 1 additions, generously bounded
    tol = 4.0 * (columns.shape[1] + 1) * np.finfo(np.float64).eps
    near = multi[_near_rows(out[multi], q[multi], tol)]
    if near.size:
        ranks, inv = np.unique(columns[near], axis=0, return_inverse=True)
        exact = np.array([float(_exact(r, weights, c)) for r in ranks])
        out[near] = exact[inv.reshape(-1)]
    return out

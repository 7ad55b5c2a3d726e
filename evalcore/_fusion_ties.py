r"""Weighted RRF values whose exact ties stay ties (used by :class:`evalcore.fusion.Prepared`).

Seed 001 §7.2 sorts the candidates by ``RRF(q, d) = Σ_S w_S / (c + rank_S(q, d))``
descending, then by ``d`` ascending. In floating point the same rational value
summed in another order can differ in its last bit: a document ranked (1, 2, 7)
by three equally weighted runs and another ranked (7, 1, 2) tie exactly, yet
``1/61 + 1/62 + 1/67`` and ``1/67 + 1/61 + 1/62`` are two different doubles, so
the tie-breaker was never reached. Here:

1. each term ``w_S / (c + rank_S)`` is one rounded division and the terms of a
   row are added in ascending order, so any two rows holding the same terms (in
   any runs) get the same double;
2. within a query, values closer than the rounding error of such a sum (and not
   already equal) are recomputed exactly (rational arithmetic on the weights, ``c``
   and the ranks, all exact binary numbers) and replaced by the correctly rounded
   double of the exact value. Correct rounding is monotone: exactly equal values
   become equal doubles and an exact order is never inverted (two *different*
   exact values less than half a unit in the last place apart would round to one
   double; no such case is known for integer ranks).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["rrf_values"]


def _terms(columns: np.ndarray, weights: np.ndarray, c: float) -> np.ndarray:
    """``w_S / (c + rank_S)`` per row and run, 0 where the run does not list the document (rank inf)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = weights[None, :] / (c + columns)
    return np.where(np.isfinite(columns), t, 0.0)


def _sorted_sum(terms: np.ndarray) -> np.ndarray:
    """Row sums of ``terms`` added smallest first (the same terms in any order give the same double)."""
    t = np.sort(terms, axis=1)
    out = np.zeros(t.shape[0], dtype=np.float64)
    for j in range(t.shape[1]):
        out += t[:, j]
    return out


def _exact(row: np.ndarray, weights: np.ndarray, c: float) -> Fraction:
    """The exact RRF value of one row of ``columns``."""
    fc = Fraction(c)
    return sum((Fraction(float(w)) / (fc + Fraction(float(r))) for w, r in zip(weights, row, strict=True)
                if np.isfinite(r)), Fraction(0))


def _near_rows(values: np.ndarray, q: np.ndarray, tol: float) -> np.ndarray:
    """Rows whose value is within ``tol`` (relative) of another of its query, in a cluster not all equal."""
    order = np.lexsort((values, q))
    v, qs = values[order], q[order]
    gap = v[1:] - v[:-1]
    same_q = qs[1:] == qs[:-1]
    close = same_q & (gap <= tol * np.abs(v[1:]))
    strict = close & (gap > 0)
    if not strict.any():
        return np.zeros(0, dtype=np.int64)
    # clusters: runs of consecutive close pairs; keep those holding a strictly positive gap
    cluster = np.r_[0, np.cumsum(~close)]
    keep = np.isin(cluster, cluster[1:][strict])
    return order[keep]


def rrf_values(columns: np.ndarray, weights: np.ndarray, c: float, q: np.ndarray) -> np.ndarray:
    """``RRF = Σ_S w_S / (c + rank_S)`` of every row, exact ties equal (see the module docstring).

    ``columns`` (m, S): the rank of the row's document in each run, ``inf`` where absent;
    ``weights`` (S,) finite and >= 0; ``c`` > -1; ``q`` (m,) the row's query code.
    """
    if columns.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    out = _sorted_sum(_terms(columns, weights, c))
    # rounding error of S divisions and S - 1 additions, generously bounded
    tol = 4.0 * (columns.shape[1] + 1) * np.finfo(np.float64).eps
    for row in _near_rows(out, q, tol):
        out[row] = float(_exact(columns[row], weights, c))
    return out

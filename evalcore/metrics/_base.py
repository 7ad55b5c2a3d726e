"""What every metric reads (:class:`Judged`) and the helpers they share.

Notation used in the metric docstrings, for one query:

* ``g_i``: grade of the document at rank i (0 when unjudged), i = 1..n (n = documents retrieved);
* ``J_i``: the document at rank i has a judgment in the qrels (any grade, negative included);
* ``u_i = [not J_i or g_i < 0]``: "unjudged" as trec_eval reads it (a negative grade means "in
  the pool but not judged", form_res_rels.c; infAP's sampled judgments use it);
* ``b_i = [g_i >= θ]``: binary relevance at threshold θ (``rel_threshold``, default 1);
* ``H_k = Σ_{i<=min(k,n)} b_i``: hits in the top k;
* ``R = #{judged d : grade(d) >= θ}``: relevant documents in the qrels;
* ``N = #{judged d : 0 <= grade(d) < θ}``: judged non-relevant documents in the qrels;
* ``disc_i = 1 / log2(i + 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Judged", "K_ALL"]

#: cutoff standing for "the whole list" (``@all``, recorded as k = 0 in the table): larger than any list.
K_ALL = 1 << 62


def _empty_levels() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Judged:
    """Grades of the ranked lists of a block of queries.

    Attributes
    ----------
    grades : int64 array (n, W)
        ``grades[q, i]`` = grade of the document at rank i+1 (0 if unjudged or
        beyond the list). W = min(largest k needed, deepest list); the whole
        deepest list for the whole-list metrics.
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
    judged : bool array (n, W) or None
        ``judged[q, i]``: the document at rank i+1 has a judgment (any grade) in
        the qrels (``J_i``). None when the caller did not build it (metrics
        that need it say so).
    levels : int64 array (L,)
        The distinct grades >= 0 of the qrels, ascending.
    level_counts : int64 array (n, L) or None
        ``level_counts[q, l]``: judged documents of query q with grade ``levels[l]``.
    """

    grades: np.ndarray
    n_ret: np.ndarray
    n_rel: np.ndarray
    ideal: np.ndarray
    first_rel: np.ndarray
    rel_threshold: int = 1
    judged: np.ndarray | None = None
    levels: np.ndarray = field(default_factory=_empty_levels)
    level_counts: np.ndarray | None = None

    @property
    def width(self) -> int:
        return self.grades.shape[1]

    @property
    def n_queries(self) -> int:
        return self.grades.shape[0]

    def judged_mask(self) -> np.ndarray:
        """``J_i`` as a (n, W) bool matrix; raises when the evaluator did not build it."""
        if self.judged is None:
            raise ValueError("this metric needs Judged.judged (which documents carry a judgment)")
        return self.judged

    def unjudged_mask(self) -> np.ndarray:
        """``u_i`` (trec_eval's unjudged: not in the qrels, or a negative grade), within the list only."""
        return (~self.judged_mask() | (self.grades < 0)) & self.in_list()

    def in_list(self) -> np.ndarray:
        """(n, W) bool: rank i+1 is within the retrieved list (i < n_ret)."""
        return np.arange(self.width)[None, :] < self.n_ret[:, None]

    def n_nonrel(self) -> np.ndarray:
        """N per query: judged documents with 0 <= grade < θ (trec_eval's judged non-relevant)."""
        if self.level_counts is None:
            raise ValueError("this metric needs Judged.level_counts (judgments per grade)")
        low = (self.levels >= 0) & (self.levels < self.rel_threshold)
        return self.level_counts[:, low].sum(axis=1)


def at(cum: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Value of a running (cumulative) matrix at each k; beyond its width, its last column.

    ``cum`` has shape (n, W). Column k-1 if k <= W else column W-1 (the list is
    exhausted). An empty width gives zeros.
    """
    n, w = cum.shape
    if w == 0:
        return np.zeros((n, len(ks)), dtype=np.float64)
    idx = np.minimum(np.asarray(ks, dtype=np.int64), w) - 1
    return cum[:, idx].astype(np.float64, copy=False)


def relevant(j: Judged) -> np.ndarray:
    """``b_i`` as a (n, W) bool matrix."""
    return j.grades >= j.rel_threshold


def hits_cum(j: Judged) -> np.ndarray:
    """``H_i`` for i = 1..W, shape (n, W)."""
    return np.cumsum(relevant(j), axis=1, dtype=np.int64)


def hits_all(j: Judged) -> np.ndarray:
    """``H_n`` (relevant documents retrieved over the whole list), shape (n,). Needs W = depth."""
    return relevant(j).sum(axis=1, dtype=np.int64)


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den <= 0`` (trec_eval's 0/0 = 0)."""
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def discounts(w: int) -> np.ndarray:
    """``disc_i`` for i = 1..w."""
    return 1.0 / np.log2(np.arange(2, w + 2, dtype=np.float64))


def per_query(v: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """A per-query vector repeated for every k (metrics without a cutoff)."""
    return np.repeat(np.asarray(v, dtype=np.float64)[:, None], len(ks), axis=1)


def ranks(w: int) -> np.ndarray:
    """1..w as float64."""
    return np.arange(1, w + 1, dtype=np.float64)


def lround(x: np.ndarray) -> np.ndarray:
    """C's ``lround`` for x >= 0: nearest integer, halves away from zero (trec_eval's recall cutoffs)."""
    x = np.asarray(x, dtype=np.float64)
    t = np.trunc(x)
    return (t + (x - t >= 0.5)).astype(np.int64)

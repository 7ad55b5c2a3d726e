"""Normalisation and canonical scores: what a score *is*, whoever computes it.

Every backend normalises rows with :func:`_normalize_rows` (or the same
:func:`_sumsq` / :func:`_denominators` steps) and re-scores its candidates with
:func:`_canonical_scores`, so a score depends on the (query, document) pair only:
not on block sizes, threads, memory mapping or which machine computed it.
:func:`_blas_pair_error` bounds how far a float32 BLAS score may sit from it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

_U32 = 2.0**-24  # unit roundoff of float32
_NEG_INF = np.float32(-np.inf)


class _Releaser(Protocol):
    """Drops the pages of a memory-mapped corpus read so far (see ``blocks._PageReleaser``)."""

    def everything(self) -> None: ...


def _as_f32(block: np.ndarray) -> np.ndarray:
    return np.asarray(block, dtype=np.float32)


def _sumsq(block32: np.ndarray) -> np.ndarray:
    """Squared norms of float32 rows, float64, pairwise sum in a fixed order per row.

    The float64 squares of float32 values are exact and the reduction runs over
    each C-contiguous row independently, so equal rows get bit-identical
    results wherever they sit (block, position, chunk size).  A row with NaN or
    inf gives a non-finite result.
    """
    return np.add.reduce(np.square(block32, dtype=np.float64), axis=1)


def _denominators(sumsq: np.ndarray, eps: float) -> np.ndarray:
    """``||u|| + eps`` rounded to float32 (the divisor of seed 001 §2.3)."""
    return (np.sqrt(sumsq) + eps).astype(np.float32)


def _normalize_rows(block: np.ndarray, eps: float) -> np.ndarray:
    """Normalise a block of rows; the result of a row depends on that row only."""
    b32 = _as_f32(block)
    return np.divide(b32, _denominators(_sumsq(b32), eps)[:, None])


def _blas_pair_error(d: int) -> float:
    """Bound, per unit of ``||q|| ||c||``, of the gap between two items' float32 BLAS scores.

    ``|BLAS float32 score - canonical score| <= (gamma_d + u) |q| |c|`` per item
    (``gamma_d = d u / (1 - d u)``, ``u = 2**-24``); a pair of items: twice
    that; the factor 1.01 covers the norms' own rounding.  A candidate pool
    keeps everything within ``this * ||q|| * max ||c||`` of its threshold.
    """
    gamma = d * _U32 / (1 - d * _U32)
    return 2.0 * (gamma + _U32) * 1.01


def _round_proven(v: np.ndarray, e: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """``float32(v)`` and where it is proven to be the float32 rounding of every value within ``e`` of ``v``.

    Rounding to nearest is constant between two consecutive rounding
    boundaries (the midpoints between neighbouring float32 values), so
    ``float32(x) == float32(v)`` for all ``|x - v| <= e`` when both ends of
    that interval lie strictly inside the boundaries around ``float32(v)``.
    The float64 arithmetic of the test itself is covered by widening ``e`` by
    ``2**-50 |v|``.  Overflow (``|v|`` beyond float32) and NaN are never
    proven.

    >>> s, ok = _round_proven(np.array([0.5, 0.5 + 2.0**-25]), 1e-12)
    >>> ok.tolist()  # the second value sits on the midpoint between 0.5 and its neighbour
    [True, False]
    """
    with np.errstate(over="ignore", invalid="ignore"):
        s = v.astype(np.float32)
        s64 = s.astype(np.float64)
        below = (s64 - np.nextafter(s, _NEG_INF).astype(np.float64)) * 0.5  # to the lower boundary
        above = (np.nextafter(s, np.float32(np.inf)).astype(np.float64) - s64) * 0.5
        e = e + 2.0**-50 * np.abs(v)
        off = v - s64
        proven = (off - e > -below) & (off + e < above)
    return s, proven


def _canonical_scores(
    qn: np.ndarray,
    cand: np.ndarray,
    corpus: np.ndarray,
    den: np.ndarray | None,
    chunk_bytes: int,
    release: _Releaser | None = None,
    *,
    bound: np.ndarray | float = 1.0,
) -> np.ndarray:
    """Canonical float32 cosines of ``qn[r]`` with ``corpus[cand[r, w]]`` (see :mod:`evalcore.retrieval`).

    ``qn`` (R, d) are normalised queries, ``cand`` (R, W) corpus rows (``-1``
    = padding, whose output is meaningless).  Corpus rows are re-read and
    divided by their float32 denominators ``den`` (``None``: already unit),
    which reproduces the normalised rows bit for bit.  The canonical score is
    the float32 rounding of the float64 pairwise sum (fixed order, over each
    contiguous row) of the exact float64 products; it depends on the pair only.
    ``release`` (optional) is told after each chunk that the rows read may go.

    Computed fast and proven equal: ``v``, a float64 BLAS product, and the
    pairwise sum ``p`` are both within ``gamma_d * sum|q_i c_i| <= gamma_d *
    bound[r]`` of the exact dot product (``gamma_d = d u / (1 - d u)``, ``u =
    2**-53``, any summation order), so ``|v - p| <= 2 gamma_d bound``.  When no
    float32 rounding boundary (midpoint between neighbouring float32 values)
    lies within that distance of ``v``, ``float32(v) == float32(p)``; the few
    other pairs (measured: 4 of 512,500 on dense synthetic data, 0 of 30,600
    on SciFact's MiniLM embeddings; exact zeros of sparse data always) get the
    pairwise sum itself.  ``bound`` (scalar or one per row of
    ``qn``) must bound ``||q_r|| * ||c||`` for every candidate.
    """
    nrows, width = cand.shape
    d = qn.shape[1]
    out = np.empty((nrows, width), dtype=np.float32)
    if nrows == 0 or width == 0:
        return out
    u64 = 2.0**-53
    # twice the bound of one sum's error, inflated for the rounding of this arithmetic itself
    slack = 2.0 * (d * u64 / (1 - d * u64)) * (1 + 2.0**-20)
    bounds = np.broadcast_to(np.asarray(bound, dtype=np.float64), (nrows,))
    step = max(1, chunk_bytes // (12 * width * d))
    # the gathered rows go to one reused buffer (fresh memory would be faulted in and zeroed per chunk);
    # np.take copies a source that is not an aligned C array whole first (a .npz member mapped in place
    # is not aligned): such a source is gathered as rows of bytes, the same bits
    takes = corpus.dtype == np.float32 and corpus.flags.c_contiguous
    buf = np.empty((min(step, nrows) * width, d), dtype=np.float32) if takes else None
    src = np.asarray(corpus) if takes and corpus.flags.aligned else None
    if takes and src is None:
        src = np.asarray(corpus).view(np.uint8)
        buf_src = buf.view(np.uint8)
    else:
        buf_src = buf
    for r0 in range(0, nrows, step):
        c = cand[r0 : r0 + step]
        m = c.shape[0]
        j = np.maximum(c, 0).ravel()
        if buf is None:
            g = _as_f32(corpus[j])
        else:
            np.take(src, j, axis=0, out=buf_src[: j.size])
            g = buf[: j.size]
        if den is not None:
            g /= den[j][:, None]
        q = qn[r0 : r0 + step]
        # float64 products and sums (cast chunk by chunk inside matmul: no float64 copy of the rows)
        v = np.matmul(g.reshape(m, width, d), q[:, :, None], dtype=np.float64)[..., 0]
        s, proven = _round_proven(v, slack * bounds[r0 : r0 + m, None])
        bad = np.flatnonzero(~proven)
        if bad.size:
            # the definition itself, for the pairs too close to a rounding boundary
            prod = np.multiply(g[bad], q[bad // width], dtype=np.float64)
            s.reshape(-1)[bad] = np.add.reduce(prod, axis=1)
        out[r0 : r0 + m] = s
        if release is not None:
            release.everything()
    return out

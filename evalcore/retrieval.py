"""Exact top-k retrieval by cosine similarity, in bounded memory.

Scores follow seed 001 §2.3: every vector is normalised once,
``u / (||u|| + eps)``, and the cosine is the dot product of the normalised
vectors.  Rankings follow seed 001 §3: score descending, then corpus id
ascending (string order) for determinism.

How :func:`exact_topk` works
----------------------------
1. Queries and corpus are processed in blocks (``block_bytes`` bounds the
   per-block working set); each corpus block is read (a read-only memmap is
   streamed, never loaded whole) and normalised on the fly, and the block of
   scores is one float32 BLAS product ``Qn @ Cn.T``.
2. Per query, a running threshold (the k-th best score seen so far) discards
   almost every score with one vectorised comparison; the survivors are kept.
3. float32 BLAS results depend, in their last bits, on the shape of the
   blocks, so two identical documents may get scores that differ by one ulp.
   Step 2 therefore keeps every candidate within a proven rounding bound of
   the k-th score, and the survivors are re-scored canonically: the float64
   sum (pairwise, fixed order) of the exact float64 products of the float32
   normalised vectors, rounded to float32.  Ordering uses those scores and the
   id rank, so results (indices *and* scores) do not depend on block sizes,
   thread counts or on whether the corpus is memory-mapped, and ties are
   broken by id exactly, also across the k boundary and block boundaries.
4. Speed: one worker thread per core, each with single-threaded BLAS
   (``threadpoolctl``), takes the next free corpus block, normalises it,
   multiplies it and filters the scores into its own candidate pool, so no
   core waits for another until the end; the pools share their thresholds.
   Progress is reported from the calling thread.  At the end the pools are
   merged and re-scored row range by row range in parallel; the canonical
   scores come from a float64 BLAS product whose rounding to float32 is
   proven equal to the definition's (step 3), with the definition itself
   computed for the rare pairs too close to a rounding boundary.  Once most
   rows stop receiving candidates a cheap row maximum skips the comparison
   of the others.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import mmap
import os
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .errors import (
    DuplicateIdError,
    EmptyInputError,
    InputFormatError,
    NonFiniteValueError,
    OptionError,
    ShapeMismatchError,
    UnsafeFileError,
    ValueTypeError,
    warn,
)

__all__ = [
    "TopK",
    "count_zero_rows",
    "exact_topk",
    "load_npy_mmap",
    "normalize",
    "sample_queries",
    "sample_pairs",
    "similarity_agreement",
    "topk_to_long",
]

_U32 = 2.0**-24  # unit roundoff of float32
_CHUNK_BYTES = 32 * 2**20  # working set of the helper loops (normalise, checks)
_NEG_INF = np.float32(-np.inf)
_POOL_SLACK = 100  # pool slots beyond k before a compaction refreshes the thresholds (measured: 50-100 best)
_RESCORE_BYTES = 8 * 2**20


# --------------------------------------------------------------------------- checks


def _as_matrix(x, name: str) -> np.ndarray:
    """``x`` as a 2-D real numeric array, without copying (memmaps stay memmaps)."""
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueTypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ShapeMismatchError(f"{name} must be a 2-D array (rows x dimensions), got shape {arr.shape}")
    return arr


def _as_ids(ids, name: str) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.ndim != 1:
        raise ShapeMismatchError(f"{name} must be a 1-D sequence of ids, got shape {arr.shape}")
    if arr.dtype.kind != "U":
        arr = arr.astype(str)
    return arr


def _row_chunk(d: int, itemsize: int = 8) -> int:
    return max(1, _CHUNK_BYTES // max(1, d * itemsize))


def _nonfinite_error(x: np.ndarray, name: str, ids: np.ndarray | None, start: int = 0) -> NonFiniteValueError:
    """Count the rows of ``x[start:]`` holding NaN/inf (chunked) and describe the first one."""
    count, first = 0, None
    step = _row_chunk(x.shape[1], 1)
    for s in range(start, x.shape[0], step):
        bad = ~np.isfinite(x[s : s + step]).all(axis=1)
        nbad = int(np.count_nonzero(bad))
        if nbad and first is None:
            first = s + int(np.argmax(bad))
        count += nbad
    where = f"row {first}" + (f" (id {str(ids[first])!r})" if ids is not None else "")
    return NonFiniteValueError(
        f"{name} has {count} row(s) with NaN or infinite values; first at {where}",
        item=None if ids is None else str(ids[first]),
    )


def _check_finite(x: np.ndarray, name: str, ids: np.ndarray | None) -> None:
    if x.dtype.kind != "f":
        return
    step = _row_chunk(x.shape[1], 4)
    for s in range(0, x.shape[0], step):
        if not np.isfinite(x[s : s + step]).all():
            raise _nonfinite_error(x, name, ids, s)


def _scan_rows(x: np.ndarray, name: str, ids: np.ndarray | None) -> int:
    """One chunked pass: raise on NaN/inf, return the number of all-zero rows."""
    zeros = 0
    step = _row_chunk(x.shape[1], 12)
    for s in range(0, x.shape[0], step):
        sq = _sumsq(_as_f32(x[s : s + step]))
        if not np.isfinite(sq).all():
            raise _nonfinite_error(x, name, ids, s)
        zeros += int(np.count_nonzero(sq == 0))
    return zeros


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise OptionError(f"k must be a positive integer, got {k!r}")
    if k <= 0:
        raise OptionError(f"k must be a positive integer, got {k}")
    return int(k)


# --------------------------------------------------------------------------- normalisation


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


def normalize(x, *, eps: float = 1e-12) -> np.ndarray:
    """Return ``x / (||x|| + eps)`` row by row as a new float32 array (seed 001 §2.3).

    ``x`` is a 2-D array (rows are vectors) or a single 1-D vector; it is never
    modified.  Values are taken as float32 (like faiss); the norm is summed in
    float64 (exact squares, fixed order), ``||x|| + eps`` is rounded to float32
    and the quotient is a float32 division, so each output row depends on its
    input row only (bit for bit) - :func:`exact_topk` relies on it.  Zero
    vectors stay zero (``0 / eps``); count them with :func:`count_zero_rows`.
    Raises :class:`NonFiniteValueError` on NaN/inf.
    """
    if not (isinstance(eps, (int, float, np.floating)) and np.isfinite(eps) and eps >= 0):
        raise OptionError(f"eps must be a finite number >= 0, got {eps!r}")
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if arr.ndim == 1:
        return normalize(arr[None, :], eps=eps)[0]
    arr = _as_matrix(arr, "x")
    _check_finite(arr, "x", None)
    out = np.empty(arr.shape, dtype=np.float32)
    step = _row_chunk(arr.shape[1])
    for s in range(0, arr.shape[0], step):
        out[s : s + step] = _normalize_rows(arr[s : s + step], eps)
    return out


def count_zero_rows(x) -> int:
    """Number of all-zero rows of a 2-D array (they have cosine 0 with everything)."""
    arr = _as_matrix(x, "x")
    step = _row_chunk(arr.shape[1], 1)
    return int(sum(np.count_nonzero(~arr[s : s + step].any(axis=1)) for s in range(0, arr.shape[0], step)))


def load_npy_mmap(path: str | os.PathLike) -> np.ndarray:
    """Open a ``.npy`` file read-only and memory-mapped (``allow_pickle=False``).

    The file is not read into memory; :func:`exact_topk` streams it block by
    block.  Object arrays (which would need unpickling) are refused.
    """
    label = os.fspath(path)
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError as e:
        raise InputFormatError("file not found", file=label) from e
    except ValueError as e:
        msg = str(e)
        if "pickle" in msg.lower() or "python objects" in msg.lower():
            raise UnsafeFileError("holds Python objects (would need unpickling); refused", file=label) from e
        raise InputFormatError(f"not a readable .npy file ({msg})", file=label) from e
    except OSError as e:
        raise InputFormatError(f"cannot be read as .npy ({e})", file=label) from e
    if not isinstance(arr, np.ndarray):  # an .npz archive
        raise InputFormatError("is an .npz archive; expected a single .npy array", file=label)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueTypeError(f"must hold real numbers, got dtype {arr.dtype}", file=label)
    if arr.ndim != 2:
        raise ShapeMismatchError(f"must be a 2-D array (rows x dimensions), got shape {arr.shape}", file=label)
    return arr


# --------------------------------------------------------------------------- result type


@dataclasses.dataclass(frozen=True, eq=False)
class TopK:
    """Result of :func:`exact_topk`.

    ``indices[i, r]`` is the corpus row at rank ``r + 1`` for query ``i`` and
    ``scores[i, r]`` its cosine (float32).  The width is
    ``k' = min(k, number of candidates)``; a query with fewer candidates than
    ``k'`` (only possible with ``exclude_self`` when some queries are absent
    from the corpus) is padded at the end with index ``-1`` and score ``-inf``.
    """

    indices: np.ndarray
    scores: np.ndarray
    query_ids: np.ndarray
    corpus_ids: np.ndarray

    @property
    def k(self) -> int:
        return int(self.indices.shape[1])

    def doc_ids(self) -> np.ndarray:
        """Corpus ids of ``indices`` (empty string for padding)."""
        out = self.corpus_ids[np.maximum(self.indices, 0)]
        return np.where(self.indices >= 0, out, "")


def topk_to_long(topk: TopK) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat ``(query_id, doc_id, score)`` arrays, query by query in rank order.

    Padding (index ``-1``) is dropped.  Ranks are the positions within each
    query's run of rows, starting at 1.
    """
    mask = topk.indices >= 0
    qid = np.repeat(topk.query_ids, topk.k)[mask.ravel()]
    doc = topk.corpus_ids[topk.indices[mask]]
    return qid, doc, topk.scores[mask]


# --------------------------------------------------------------------------- top-k engine


def _id_ranks(ids: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(rank of each id in string order, argsort order); duplicates are an error."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    dup = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    if dup.size:
        bad = str(sorted_ids[dup[0]])
        rows = np.flatnonzero(ids == bad)[:2].tolist()
        raise DuplicateIdError(f"{name} holds id {bad!r} twice (rows {rows[0]} and {rows[1]})", item=str(bad))
    rank = np.empty(ids.shape[0], dtype=np.int64)
    rank[order] = np.arange(ids.shape[0], dtype=np.int64)
    return rank, order


def _pool_slot_bytes(n: int) -> int:
    """Bytes per candidate-pool slot (kept arrays + compaction temporaries), see :func:`_plan_blocks`."""
    return 24 if n < 2**31 else 28


def _plan_blocks(nq: int, n: int, d: int, kk: int, block_bytes: int, workers: int = 2) -> tuple[int, int]:
    """Rows per query block and per corpus block so the working set fits ``block_bytes``.

    ``workers`` threads each hold one corpus block being normalised (float32
    copy, float64 squares and the normalised row: ~16·d bytes per corpus row),
    one score block and its mask (5 bytes per score) and one candidate pool
    per query row: up to 2k + 256 slots of a float32 score and an int32 index
    (int64 for corpora of 2**31 rows or more), plus the temporaries of a
    compaction, 24 (28) bytes a slot; the query block itself costs 12·d bytes
    per row.  The widest query block is preferred (the corpus is
    streamed once per query block); the corpus block (1024 rows) shrinks while
    fewer than 256 queries fit, but not below 256 rows unless not even one
    query would fit.  When a wider corpus block (4096 or 2048 rows) needs no
    more query blocks than 1024 rows do, it is taken: fewer, larger steps cost
    less per-block overhead.  With several workers the corpus blocks are then
    evened out to a multiple of the workers in number (a 5,000-row corpus in
    2,048-row blocks would leave one core idle for a third of the search).
    """
    w = max(1, int(workers))
    pool_q = _pool_slot_bytes(n) * (2 * kk + 256)

    def rows_per_query_block(bc: int) -> int:
        return (block_bytes - w * 16 * bc * d) // (w * (5 * bc + pool_q) + 12 * d)

    bc = min(n, 1024)
    while True:
        bq = rows_per_query_block(bc)
        if bq >= min(nq, 256) or bc == 1 or (bq >= 1 and bc <= 256):
            bq = max(1, min(nq, bq))
            break
        bc = max(1, bc // 2)
    if bc == min(n, 1024):
        blocks = -(-nq // bq)
        for wide in (4096, 2048):
            wq = rows_per_query_block(min(n, wide))
            if min(n, wide) > bc and wq >= 1 and -(-nq // min(nq, wq)) <= blocks:
                bq, bc = min(nq, wq), min(n, wide)
                break
    if w > 1:  # as many equal corpus blocks as a multiple of the workers: no core idles at the end
        nb = -(-n // bc)
        nb = -(-nb // w) * w
        bc = -(-n // nb)
    return int(-(-nq // -(-nq // bq))), int(bc)  # equal query blocks


class _Candidates:
    """Per-query candidate pool of one query block, as padded 2-D arrays.

    Invariant: every corpus item whose canonical score could place it in the
    final top-k of its query is in the pool, or in one of its ``peers``.
    ``thr`` is a lower bound of the k-th largest approximate (BLAS) score
    seen so far, refreshed only when a row overflows (a stale threshold
    merely admits more candidates); items below ``thr - tol`` cannot qualify
    (see :func:`exact_topk`).  Pools of parallel workers (``peers``, same
    ``tol``) cut at the best threshold of any of them: the pool behind that
    threshold holds k items better than anything below the cut.  Rows that
    still overflow after that (many near-equal scores) are pruned exactly with
    canonical scores and id ranks, so the pool stays bounded even for
    massive ties.
    """

    def __init__(self, nrows: int, kk: int, tol: np.ndarray, rescore, id_rank: np.ndarray,
                 index_dtype=np.int64) -> None:
        self.kk = kk
        self.tol = tol  # (nrows,) float64 bound of |approx - canonical| for two items
        self.cap0 = kk + max(_POOL_SLACK, kk // 2)
        self.cap = self.cap0
        self.s = np.full((nrows, self.cap), _NEG_INF, dtype=np.float32)
        self.index_dtype = index_dtype  # int32 when the corpus has < 2**31 rows
        self.i = np.full((nrows, self.cap), -1, dtype=index_dtype)
        self.fill = np.zeros(nrows, dtype=np.int64)
        self.thr = np.full(nrows, -np.inf, dtype=np.float64)
        self.sparse = False  # few rows got candidates from the last block
        self.rescore = rescore  # (rows, corpus indices) -> canonical float32 scores
        self.id_rank = id_rank
        self.peers: list[_Candidates] = []  # pools whose thresholds this one may use

    def bound(self) -> np.ndarray:
        """Per row, the best threshold of this pool and its peers (a peer's may be mid-update:
        every value it ever holds is a valid bound)."""
        thr = self.thr
        for peer in self.peers:
            thr = np.maximum(thr, peer.thr)
        return thr

    def skip_rows(self, rows: np.ndarray) -> None:
        """Rows answered elsewhere (zero queries): never admit candidates."""
        self.thr[rows] = np.inf

    def cut(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """float32 cut-off per row: no score below it can reach the top-k."""
        c64 = self.bound()[rows] - self.tol[rows]
        c32 = c64.astype(np.float32)
        c32 = np.where(c32 > c64, np.nextafter(c32, _NEG_INF), c32)  # round down
        # -inf marks excluded items (self); they are never candidates.
        return np.maximum(c32, np.finfo(np.float32).min)

    def push_block(self, scores: np.ndarray, offset: int, mask_buf: np.ndarray) -> None:
        nrows, m = scores.shape
        kk = self.kk
        init = np.isneginf(self.bound())
        if m >= kk and init.any():
            # rows without a threshold yet: the block's own k-th best is one
            # (partitioned a few rows at a time: small temporaries)
            rows = np.flatnonzero(init)
            step = max(1, 2**20 // m)
            for s in range(0, rows.size, step):
                part = rows[s : s + step]
                self.thr[part] = np.partition(scores[part], m - kk, axis=1)[:, m - kk]
        cut = self.cut()
        if self.sparse:
            # most rows got no candidate from the previous block: a row maximum
            # (one cheap pass) finds the few rows worth a comparison
            hot = np.flatnonzero(scores.max(axis=1) >= cut)
            if hot.size == 0:
                return
            sub = scores[hot]
            flat = np.flatnonzero(sub >= cut[hot, None])
            r, c = np.divmod(flat, m)
            r, vals = hot[r], sub.ravel()[flat]
        else:
            mask = np.greater_equal(scores, cut[:, None], out=mask_buf)
            flat = np.flatnonzero(mask)
            if flat.size == 0:
                self.sparse = True
                return
            r, c = np.divmod(flat, m)
            vals = scores.ravel()[flat]
        # rows with a candidate (r is sorted): few of them -> sparse mode next time
        self.sparse = (np.count_nonzero(np.diff(r)) + 1) < 0.25 * nrows
        self._append(r, c + offset, vals)

    def _append(self, r: np.ndarray, idx: np.ndarray, vals: np.ndarray) -> None:
        counts = np.bincount(r, minlength=self.fill.shape[0])
        need = int((self.fill + counts).max())
        if need > self.cap:
            self._resize(need)
        starts = np.cumsum(counts) - counts
        flat = r * self.cap + self.fill[r] + (np.arange(r.size) - starts[r])  # flat indices: cheaper than 2-D
        self.s.reshape(-1)[flat] = vals
        self.i.reshape(-1)[flat] = idx
        self.fill += counts
        if need > self.cap0:
            self.compact()

    def _resize(self, cap: int) -> None:
        nrows = self.s.shape[0]
        keep = min(cap, self.cap)
        s = np.full((nrows, cap), _NEG_INF, dtype=np.float32)
        i = np.full((nrows, cap), -1, dtype=self.index_dtype)
        s[:, :keep] = self.s[:, :keep]
        i[:, :keep] = self.i[:, :keep]
        self.s, self.i, self.cap = s, i, cap

    def compact(self) -> None:
        """Refresh thresholds, drop what can no longer qualify, bound every row."""
        kk, cap = self.kk, self.cap
        kth = np.partition(self.s, cap - kk, axis=1)[:, cap - kk].astype(np.float64)
        self.thr = np.maximum(self.thr, kth)  # stays -inf while a row holds < kk items
        keep = self.s >= self.cut()[:, None]
        keep &= self.i >= 0
        fill = keep.sum(axis=1)
        over = np.flatnonzero(fill > self.cap0)
        if over.size:
            keep[over] &= self._exact_best(over, keep[over])
            fill = keep.sum(axis=1)
        flat = np.flatnonzero(keep)
        rows = flat // cap
        starts = np.cumsum(fill) - fill
        newpos = np.arange(flat.size) - starts[rows]
        width = max(self.cap0, int(fill.max(initial=0)))
        s = np.full((self.s.shape[0], width), _NEG_INF, dtype=np.float32)
        i = np.full((self.s.shape[0], width), -1, dtype=self.index_dtype)
        s[rows, newpos] = self.s.ravel()[flat]
        i[rows, newpos] = self.i.ravel()[flat]
        self.s, self.i, self.cap = s, i, width
        self.fill = fill.astype(np.int64)

    def _exact_best(self, rows: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """Mask of the exact top-kk (canonical score, id rank) among ``keep`` of ``rows``."""
        cand = np.where(keep, self.i[rows], -1)
        neg = -self.rescore(rows, cand)
        neg[~keep] = np.inf
        rank = np.where(keep, self.id_rank[np.maximum(cand, 0)], np.iinfo(np.int64).max)
        best = np.lexsort((rank, neg), axis=1)[:, : self.kk]
        out = np.zeros(keep.shape, dtype=bool)
        np.put_along_axis(out, best, True, axis=1)
        return out


class _PageReleaser:
    """Drop already-streamed pages of a read-only memory-mapped corpus from this process.

    ``madvise(MADV_DONTNEED)`` on a read-only shared file mapping only unmaps
    pages (they are re-read from the page cache if touched again), so the
    resident set stays bounded by the block size instead of growing to the
    file size.  Best effort: a no-op for in-memory arrays, writable or
    copy-on-write memmaps, or platforms without ``madvise``.
    """

    def __init__(self, arr: np.ndarray) -> None:
        self.ok = False
        mm = getattr(arr, "_mmap", None)
        if (
            mm is None
            or not hasattr(mm, "madvise")
            or not hasattr(mmap, "MADV_DONTNEED")
            or getattr(arr, "mode", None) != "r"
            or arr.flags.writeable
            or not arr.flags.c_contiguous
        ):
            return
        try:
            view = np.frombuffer(mm, dtype=np.uint8)
            base = view.ctypes.data
            del view
        except (TypeError, ValueError, BufferError):
            return
        self.mm, self.size = mm, len(mm)
        self.first = arr.ctypes.data - base  # byte offset of row 0 in the mapping
        self.row = arr.strides[0] if arr.ndim and arr.shape[0] > 1 else arr.itemsize * max(1, arr.size)
        self.ok = 0 <= self.first <= self.size

    def _advise(self, a: int, b: int) -> None:
        a -= a % mmap.PAGESIZE
        b = min(self.size, b)
        if b > a:
            try:
                self.mm.madvise(mmap.MADV_DONTNEED, a, b - a)
            except (OSError, ValueError):
                self.ok = False

    def rows(self, r0: int, r1: int) -> None:
        if self.ok:
            self._advise(self.first + r0 * self.row, self.first + r1 * self.row)

    def everything(self) -> None:
        if self.ok:
            self._advise(0, self.size)


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
    release: _PageReleaser | None = None,
    *,
    bound: np.ndarray | float = 1.0,
) -> np.ndarray:
    """Canonical float32 cosines of ``qn[r]`` with ``corpus[cand[r, w]]`` (see module doc).

    ``qn`` (R, d) are normalised queries, ``cand`` (R, W) corpus rows (``-1``
    = padding, whose output is meaningless).  Corpus rows are re-read and
    divided by their float32 denominators ``den`` (``None``: already unit),
    which reproduces the normalised rows bit for bit.  The canonical score is
    the float32 rounding of the float64 pairwise sum (fixed order, over each
    contiguous row) of the exact float64 products; it depends on the pair only.

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
    for r0 in range(0, nrows, step):
        c = cand[r0 : r0 + step]
        m = c.shape[0]
        j = np.maximum(c, 0).ravel()
        g = _as_f32(corpus[j])
        if den is not None:
            g /= den[j][:, None]
        q = qn[r0 : r0 + step]
        v = np.matmul(g.astype(np.float64).reshape(m, width, d), q.astype(np.float64)[:, :, None])[..., 0]
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


def _blas_single_thread():
    """Context manager: BLAS runs single-threaded inside (each worker thread is one core's work).

    ``threadpoolctl`` sets the limit of every BLAS library loaded in the process
    (OpenBLAS, MKL, BLIS) and restores it on exit.  The limit is process-wide:
    another thread's BLAS call made meanwhile (a second dashboard session) runs
    single-threaded too, and two overlapping calls may leave the other's
    workers on multi-threaded BLAS for a while.  That changes speed only,
    never results (scores do not depend on how BLAS splits its work).
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _merged_pool(pools: list[_Candidates], r0: int, r1: int, rescore) -> _Candidates:
    """One pool for rows ``r0:r1`` holding the candidates of every worker's pool."""
    first = pools[0]
    out = _Candidates(r1 - r0, first.kk, np.max([p.tol[r0:r1] for p in pools], axis=0), rescore, first.id_rank,
                      first.index_dtype)
    out.s = np.concatenate([p.s[r0:r1] for p in pools], axis=1)
    out.i = np.concatenate([p.i[r0:r1] for p in pools], axis=1)
    out.cap = out.s.shape[1]
    out.fill = np.count_nonzero(out.i >= 0, axis=1).astype(np.int64)
    # each worker's threshold is a lower bound of the k-th best of the union
    out.thr = np.max([p.thr[r0:r1] for p in pools], axis=0)
    return out


def _finish(pool: _Candidates) -> tuple[np.ndarray, np.ndarray]:
    """Canonical re-scoring of a pool and exact ordering: score desc, then id rank asc."""
    kk, rescore, id_rank = pool.kk, pool.rescore, pool.id_rank
    pool.compact()
    width = int(pool.fill.max(initial=0))
    cand_i = pool.i[:, :width]
    valid = cand_i >= 0
    neg = -rescore(np.arange(cand_i.shape[0]), cand_i)
    neg[~valid] = np.inf  # padding sorts last
    ranks = np.where(valid, id_rank[np.maximum(cand_i, 0)], np.iinfo(np.int64).max)
    best = np.lexsort((ranks, neg), axis=1)[:, :kk]
    top_i = np.take_along_axis(cand_i, best, axis=1)
    top_s = -np.take_along_axis(neg, best, axis=1)
    if width < kk:
        top_i = np.pad(top_i, ((0, 0), (0, kk - width)), constant_values=-1)
        top_s = np.pad(top_s, ((0, 0), (0, kk - width)), constant_values=-np.inf)
    return top_i, np.where(top_i >= 0, top_s, _NEG_INF).astype(np.float32)


class _Inline:
    """Stands in for the event queue when the only worker is the calling thread: ``put`` reports at once."""

    def __init__(self, on_step: Callable[[object], None]) -> None:
        self.put = on_step


def _run_workers(executor: ThreadPoolExecutor | None, jobs: list, events: queue.SimpleQueue | _Inline, steps: int,
                 on_step: Callable[[object], None]) -> None:
    """Run ``jobs`` (callables ``job(stop)``) in parallel; ``on_step`` runs here, once per event.

    Each job puts one event into ``events`` per finished step; ``on_step``
    (progress reporting) is called from the calling thread, so a callback
    that must run on its own thread (a Streamlit script) can.  When a job or
    ``on_step`` raises, the other jobs are told to stop (``stop.is_set()``),
    every job is waited for, and the first error is re-raised.
    """
    stop = threading.Event()
    if executor is None:  # one worker, in this thread (its events call on_step directly: see _Inline)
        for job in jobs:
            job(stop)
        return
    futures = [executor.submit(job, stop) for job in jobs]
    error: BaseException | None = None
    try:
        received = 0
        while received < steps:
            try:
                item = events.get(timeout=0.05)
            except queue.Empty:
                if all(f.done() for f in futures):
                    break  # a job failed early (its error is raised below)
                continue
            received += 1
            on_step(item)
    except BaseException as e:  # noqa: BLE001 - re-raised below, after the jobs stopped
        error = e
    finally:
        stop.set()  # harmless when every job is done; stops the others after a failure
        for f in futures:
            try:
                f.result()
            except BaseException as e:  # noqa: BLE001 - the first error wins
                error = error or e
    if error is not None:
        raise error


def exact_topk(
    queries,
    corpus,
    k: int,
    *,
    corpus_ids: Sequence[str] | np.ndarray,
    query_ids: Sequence[str] | np.ndarray | None = None,
    exclude_self: bool = False,
    block_bytes: int = 256 * 2**20,
    progress: Callable[[int, int], None] | None = None,
    normalized: bool = False,
    threads: int | None = None,
) -> TopK:
    """Exact top-``k`` corpus rows by cosine similarity for every query.

    Parameters
    ----------
    queries, corpus:
        2-D arrays (rows are vectors) of the same dimension.  ``corpus`` may be a
        read-only ``np.memmap`` / ``np.load(..., mmap_mode="r")`` larger than
        RAM: it is read block by block and never written to.
    k:
        list length; the result has ``k' = min(k, candidates)`` columns.
    corpus_ids, query_ids:
        one id per row (compared as strings).  Corpus ids must be unique; they
        break score ties (ascending, seed 001 §3).  ``query_ids`` defaults to
        the row numbers ``"0", "1", ...``.
    exclude_self:
        item-to-item retrieval (seeds 000/001): a query never retrieves the
        corpus row with its own id.  Requires ``query_ids``.
    block_bytes:
        bound of the per-block working set (score block, its mask, normalised
        blocks, candidate pool); the output (``nq x k'``) comes on top.
    progress:
        ``progress(done, total)`` is called after each (query block, corpus
        block) product.
    normalized:
        the caller guarantees rows are already unit vectors; they are used as
        they are (cast to float32).
    threads:
        worker threads (default: the CPUs available to the process, at most
        16).  With more than one, each worker multiplies, filters and
        re-scores with BLAS limited to one thread for the duration of the call
        (``threadpoolctl``, process-wide); with one, the BLAS product keeps its
        own threads.  Results do not depend on it.

    Scores are the float32 rounding of the float64 dot product of the float32
    normalised vectors, computed in a fixed order, so results do not depend on
    ``block_bytes``, threads or memory mapping, and equal vectors tie exactly.

    Raises ShapeMismatchError (dimensions, ids vs rows), NonFiniteValueError
    (NaN/inf: count and first row/id), OptionError (k <= 0, bad options),
    DuplicateIdError, EmptyInputError (empty corpus).  Warns
    (:class:`EvalcoreWarning`) when queries or corpus hold zero vectors.
    """
    eps = 1e-12
    q_arr = _as_matrix(queries, "queries")
    c_arr = _as_matrix(corpus, "corpus")
    k = _check_k(k)
    if isinstance(block_bytes, bool) or not isinstance(block_bytes, (int, np.integer)) or block_bytes <= 0:
        raise OptionError(f"block_bytes must be a positive integer, got {block_bytes!r}")
    if threads is None:
        n_threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    elif isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise OptionError(f"threads must be a positive integer, got {threads!r}")
    else:
        n_threads = int(threads)
    n_threads = max(1, min(n_threads, 16))
    if progress is not None and not callable(progress):
        raise OptionError("progress must be a callable progress(done, total)")
    nq, d = q_arr.shape
    n, dc = c_arr.shape
    if d != dc:
        raise ShapeMismatchError(
            f"dimension mismatch: queries have {d} dimensions but the corpus has {dc}"
        )
    if n == 0:
        raise EmptyInputError("the corpus has no rows")
    if d == 0:
        raise ShapeMismatchError("vectors have 0 dimensions")
    cids = _as_ids(corpus_ids, "corpus_ids")
    if cids.shape[0] != n:
        raise ShapeMismatchError(f"the corpus has {n} rows but corpus_ids has {cids.shape[0]} ids")
    if query_ids is None:
        if exclude_self:
            raise OptionError("exclude_self=True needs query_ids to know which corpus row is each query's own")
        qids = np.arange(nq).astype(str)
    else:
        qids = _as_ids(query_ids, "query_ids")
        if qids.shape[0] != nq:
            raise ShapeMismatchError(f"queries have {nq} rows but query_ids has {qids.shape[0]} ids")
    id_rank, order = _id_ranks(cids, "corpus_ids")
    index_dtype = np.int32 if n < 2**31 else np.int64

    self_pos = None
    available = n
    if exclude_self:
        pos = np.searchsorted(cids[order], qids)
        pos_c = np.minimum(pos, n - 1)
        found = (pos < n) & (cids[order][pos_c] == qids)
        self_pos = np.where(found, order[pos_c], -1)
        if nq and found.all():
            available = n - 1
    kk = min(k, available)
    if nq == 0 or kk == 0:
        return TopK(np.zeros((nq, kk), np.int64), np.zeros((nq, kk), np.float32), qids, cids)

    zero_q = _scan_rows(q_arr, "queries", qids)

    workers = n_threads
    bq, bc = _plan_blocks(nq, n, d, kk, int(block_bytes), workers)
    nqb, ncb = -(-nq // bq), -(-n // bc)
    total = nqb * ncb
    # |BLAS float32 score - canonical score| <= (gamma_d + u) |q| |c| per item;
    # a pair of items: twice that; 1.01 covers the norms' own rounding.
    gamma = d * _U32 / (1 - d * _U32)
    err = 2.0 * (gamma + _U32) * 1.01
    # one score block (and its mask) per worker
    score_bufs = [np.empty(bq * bc, dtype=np.float32) for _ in range(workers)]
    mask_bufs = [np.empty(bq * bc, dtype=np.bool_) for _ in range(workers)]
    chunk_bytes = max(1, min(int(block_bytes) // 4, _RESCORE_BYTES))  # re-scoring chunks stay cache-sized
    den = None if normalized else np.empty(n, dtype=np.float32)
    release = _PageReleaser(c_arr)
    out_i = np.empty((nq, kk), dtype=np.int64)
    out_s = np.empty((nq, kk), dtype=np.float32)
    # progress and the count of zero corpus rows are kept by the calling thread
    tally = {"done": 0, "zero_c": 0}
    # bound of corpus norms seen so far (grows only with normalized=True); shared by the workers
    cmax = [1.0]
    cmax_lock = threading.Lock()

    def prepare(cs: int, first_pass: bool):
        """Read and normalise corpus rows cs:cs+bc -> (rows, count, zero rows, max norm)."""
        c32 = _as_f32(c_arr[cs : cs + bc])
        m_c = c32.shape[0]
        zeros, bmax = 0, 0.0
        if first_pass:  # checks and denominators
            c_sumsq = _sumsq(c32)
            if not np.isfinite(c_sumsq).all():
                raise _nonfinite_error(c_arr, "corpus", cids, cs)
            zeros = int(np.count_nonzero(c_sumsq == 0))
            if normalized:
                bmax = float(np.sqrt(c_sumsq.max()))
            else:
                den[cs : cs + m_c] = _denominators(c_sumsq, eps)
        cn = np.ascontiguousarray(c32) if normalized else np.divide(c32, den[cs : cs + m_c, None])
        release.rows(cs, cs + m_c)
        return cn, m_c, zeros, bmax

    def on_step(zeros: int) -> None:
        tally["done"] += 1
        tally["zero_c"] += zeros
        if progress is not None:
            progress(tally["done"], total)

    # ``workers`` threads, each with single-threaded BLAS, take the next free
    # corpus block (read, normalise, multiply, select into its own pool): the
    # cores never wait for each other until the pools are merged
    executor = ThreadPoolExecutor(workers) if workers > 1 else None
    limiter = _blas_single_thread() if workers > 1 else contextlib.nullcontext()
    try:
        with limiter:
            for qs in range(0, nq, bq):
                q32 = np.ascontiguousarray(q_arr[qs : qs + bq], dtype=np.float32)
                m_q = q32.shape[0]
                q_sumsq = _sumsq(q32)
                if normalized:
                    qn = q32
                    qnorm = np.maximum(np.sqrt(q_sumsq), 1.0)
                else:
                    qn = np.divide(q32, _denominators(q_sumsq, eps)[:, None])
                    qnorm = np.ones(m_q)
                self_q = None if self_pos is None else self_pos[qs : qs + m_q]
                zero_rows = np.flatnonzero(q_sumsq == 0)

                def rescore(rows, cand, qn=qn, qnorm=qnorm, r0=0):
                    # bound of ||q|| ||c||: normalised rows have norm < 1 + 2**-22; with
                    # normalized=True the largest norms seen so far (every candidate's block was seen)
                    bound = qnorm[r0 + rows] * max(cmax[0], 1.0) * (1 + 2.0**-20)
                    return _canonical_scores(qn[r0 + rows], cand, c_arr, den, chunk_bytes, release, bound=bound)

                pools = []
                for _ in range(workers):
                    pool = _Candidates(m_q, kk, err * qnorm * cmax[0], rescore, id_rank, index_dtype)
                    pool.skip_rows(zero_rows)
                    pools.append(pool)
                if not normalized:  # tolerances are fixed: the workers share thresholds
                    for pool in pools:
                        pool.peers = [p for p in pools if p is not pool]
                starts = list(range(0, n, bc))
                next_block = itertools.count()  # blocks are handed out as workers get free
                first_pass = qs == 0
                # one worker runs here and reports each block at once; several report through a queue
                events = _Inline(on_step) if executor is None else queue.SimpleQueue()

                def job(stop, w, pools=pools, starts=starts, first_pass=first_pass, qn=qn, qnorm=qnorm,
                        self_q=self_q, m_q=m_q, events=events, next_block=next_block):
                    pool = pools[w]
                    while (b := next(next_block)) < len(starts):
                        if stop.is_set():
                            return
                        cs = starts[b]
                        cn, m_c, zeros, bmax = prepare(cs, first_pass)
                        if bmax > cmax[0]:  # normalized=True only
                            with cmax_lock:  # tolerances only grow: safe for every pool
                                cmax[0] = max(cmax[0], bmax)
                                pool.tol = err * qnorm * cmax[0]
                        scores = score_bufs[w][: m_q * m_c].reshape(m_q, m_c)
                        masks = mask_bufs[w][: m_q * m_c].reshape(m_q, m_c)
                        np.matmul(qn, cn.T, out=scores)
                        del cn
                        if self_q is not None:
                            hit = np.flatnonzero((self_q >= cs) & (self_q < cs + m_c))
                            scores[hit, self_q[hit] - cs] = _NEG_INF
                        pool.push_block(scores, cs, masks)
                        events.put(zeros)

                jobs = [functools.partial(job, w=w) for w in range(workers)]
                _run_workers(executor, jobs, events, len(starts), on_step)

                # the pools are merged row range by row range, re-scored and ordered in parallel
                n_lanes = max(1, min(workers, m_q // 64))
                cuts = np.linspace(0, m_q, n_lanes + 1).astype(int).tolist()

                def finish_rows(r0, r1, pools=pools, qn=qn, qnorm=qnorm):
                    lane_rescore = functools.partial(rescore, qn=qn, qnorm=qnorm, r0=r0)
                    return _finish(_merged_pool(pools, r0, r1, lane_rescore))

                calls = [functools.partial(finish_rows, r0, r1) for r0, r1 in zip(cuts[:-1], cuts[1:], strict=True)]
                if executor is None or len(calls) == 1:
                    results = [call() for call in calls]
                else:
                    results = [f.result() for f in [executor.submit(call) for call in calls]]
                for (r0, r1), (top_i, top_s) in zip(zip(cuts[:-1], cuts[1:], strict=True), results, strict=True):
                    for r in np.flatnonzero(q_sumsq[r0:r1] == 0):
                        # a zero query scores 0 against everything: the first ids in string order
                        own = -1 if self_q is None else self_q[r0 + r]
                        picks = order[: kk + 1]
                        picks = picks[picks != own][:kk]
                        top_i[r] = -1
                        top_i[r, : picks.size] = picks
                        top_s[r] = np.where(top_i[r] >= 0, np.float32(0.0), _NEG_INF)
                    out_i[qs + r0 : qs + r1] = top_i
                    out_s[qs + r0 : qs + r1] = top_s
    finally:
        if executor is not None:
            executor.shutdown(wait=True)
    zero_c = tally["zero_c"]

    if zero_q:
        warn(f"{zero_q} query vector(s) are all zeros; their cosine with every document is 0")
    if zero_c:
        warn(f"{zero_c} corpus vector(s) are all zeros; their cosine with every query is 0")
    return TopK(out_i, out_s, qids, cids)


# --------------------------------------------------------------------------- sampling, agreement


def sample_queries(ids, n: int, *, seed: int) -> np.ndarray:
    """Positions of ``n`` query ids drawn as seed 000 step 3 does.

    Returns ``np.random.RandomState(seed).choice(len(ids), n, replace=False)``,
    which is exactly what ``np.random.seed(seed); np.random.choice(len(ids), n,
    replace=False)`` gives (same generator, same stream), in that drawn order.
    When ``n >= len(ids)`` every position is returned in the original order
    ``0, 1, ..., len(ids) - 1``.  Select the ids with ``ids[positions]``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise OptionError(f"the number of sampled queries must be an integer >= 0, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise OptionError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    total = len(ids)
    if n >= total:
        return np.arange(total, dtype=np.int64)
    return np.random.RandomState(int(seed)).choice(total, int(n), replace=False).astype(np.int64)


def sample_pairs(n_items: int, n_pairs: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The item pairs :func:`similarity_agreement` compares: ``(i, j)`` arrays.

    ``n_pairs`` ordered pairs with ``i != j``, uniform and with replacement,
    drawn by ``np.random.RandomState(seed)``: ``i = randint(0, n)``,
    ``j = randint(0, n - 1)`` then ``j += (j >= i)``.
    """
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 2:
        raise OptionError(f"need at least 2 items to form pairs, got {n_items!r}")
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, (int, np.integer)) or n_pairs <= 0:
        raise OptionError(f"n_pairs must be a positive integer, got {n_pairs!r}")
    rs = np.random.RandomState(seed)
    i = rs.randint(0, n_items, size=int(n_pairs)).astype(np.int64)
    j = rs.randint(0, n_items - 1, size=int(n_pairs)).astype(np.int64)
    j += j >= i
    return i, j


def similarity_agreement(reference, model, *, n_pairs: int = 10_000, seed: int = 0, ids=None) -> dict:
    """Seed 000's training metrics: how well ``model`` similarities track ``reference``.

    ``reference`` (e.g. Ada-002) and ``model`` embed the same items, row ``i``
    of both being item ``i`` (dimensions may differ).  ``n_pairs`` ordered pairs
    ``(i, j)``, ``i != j``, are drawn uniformly with replacement by
    ``np.random.RandomState(seed)`` (:func:`sample_pairs`); on those same pairs the cosines of both
    spaces are compared.  Returns ``{"spearman": rho (scipy.stats.spearmanr),
    "mae": mean |cos_ref - cos_model|, "n_pairs": n_pairs}``.  ``ids`` (one per
    row, optional) only serves error messages.  Spearman is NaN (with a
    warning) when one side's similarities are all equal.
    """
    from scipy.stats import spearmanr

    ref = _as_matrix(reference, "reference")
    mod = _as_matrix(model, "model")
    if ref.shape[0] != mod.shape[0]:
        raise ShapeMismatchError(
            f"reference has {ref.shape[0]} rows but model has {mod.shape[0]}; rows must be the same items"
        )
    nrows = ref.shape[0]
    id_arr = None
    if ids is not None:
        id_arr = _as_ids(ids, "ids")
        if id_arr.shape[0] != nrows:
            raise ShapeMismatchError(f"the embeddings have {nrows} rows but ids has {id_arr.shape[0]} ids")
    if nrows < 2:
        raise EmptyInputError(f"need at least 2 items to form pairs, got {nrows}")
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, (int, np.integer)) or n_pairs <= 0:
        raise OptionError(f"n_pairs must be a positive integer, got {n_pairs!r}")
    _check_finite(ref, "reference", id_arr)
    _check_finite(mod, "model", id_arr)
    i, j = sample_pairs(nrows, n_pairs, seed=seed)

    def cosines(emb: np.ndarray) -> np.ndarray:
        out = np.empty(i.shape[0], dtype=np.float64)
        step = _row_chunk(emb.shape[1])
        for s in range(0, i.shape[0], step):
            a = _normalize_rows(emb[i[s : s + step]], 1e-12).astype(np.float64)
            b = _normalize_rows(emb[j[s : s + step]], 1e-12).astype(np.float64)
            out[s : s + step] = np.einsum("ij,ij->i", a, b)
        return out

    sim_ref, sim_mod = cosines(ref), cosines(mod)
    mae = float(np.mean(np.abs(sim_ref - sim_mod)))
    if np.ptp(sim_ref) == 0 or np.ptp(sim_mod) == 0:
        warn("similarities of one model are all equal on the sampled pairs; Spearman is undefined (NaN)")
        rho = float("nan")
    else:
        rho = float(spearmanr(sim_ref, sim_mod).statistic)
    return {"spearman": rho, "mae": mae, "n_pairs": int(n_pairs)}

"""The per-block work of the search, the same in every backend.

A backend creates one :class:`_CorpusReader` per process (it reads, checks and
normalises corpus blocks and re-scores candidates canonically), and per block
of queries one :class:`_QueryBlock`: its ``new_pool`` gives each worker a
candidate pool, ``search_block`` multiplies one corpus block with the queries
and pushes the scores into a pool, ``finish`` turns the pools into the exact
top-k of a range of query rows, and ``answer_zero_queries`` fills in the lists
of the all-zero queries, once, after any merging.  Which worker takes which
corpus block, and in which order, changes nothing in the result.
"""

from __future__ import annotations

import functools
import mmap
import threading

import numpy as np

from .backends import SearchTask
from .inputs import _nonfinite_error
from .pools import _answer_zero_queries, _Candidates, _finish, _merged_pool
from .scoring import (
    _NEG_INF,
    _as_f32,
    _blas_pair_error,
    _canonical_scores,
    _denominators,
    _sumsq,
)


def _resident_bytes() -> int | None:
    """This process's resident set in bytes (``/proc/self/statm``), None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * mmap.PAGESIZE
    except (OSError, ValueError, IndexError):
        return None


class _PageReleaser:
    """Drop the streamed pages of a read-only memory-mapped corpus from this process, in bounded batches.

    ``madvise(MADV_DONTNEED)`` on a read-only shared file mapping only unmaps
    pages (they are re-read from the page cache if touched again), so the
    resident set stays bounded instead of growing to the file size.  Pages are
    released only once the resident set has grown by more than ``budget``
    bytes since the last release (``None``: at every call): a corpus that fits
    in the budget stays mapped, and the candidates re-read for canonical
    scores do not fault their pages in again and again (on a 150 MB corpus,
    releasing at every block cost a third more CPU time than the search
    itself needs).  Best effort: a no-op for in-memory arrays, writable or
    copy-on-write memmaps, or platforms without ``madvise``; without
    ``/proc/self/statm`` every call releases.
    """

    def __init__(self, arr: np.ndarray, budget: int | None = None) -> None:
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
            del view
        except (TypeError, ValueError, BufferError):
            return
        self.mm, self.size = mm, len(mm)
        self.ok = True
        self.budget = budget
        self.mark = _resident_bytes() if budget is not None else None

    def _due(self) -> bool:
        if self.mark is None:
            return True
        now = _resident_bytes()
        return now is None or now - self.mark > int(self.budget)  # type: ignore[arg-type]

    def release(self) -> None:
        """Unmap every page of the corpus when the resident set outgrew the budget (at once without one)."""
        if not self.ok or not self._due():
            return
        try:
            self.mm.madvise(mmap.MADV_DONTNEED, 0, self.size)
        except (OSError, ValueError):
            self.ok = False
        if self.mark is not None:
            self.mark = _resident_bytes()

    # the two moments of a search: a corpus block streamed, a chunk of candidates re-scored
    def rows(self, r0: int, r1: int) -> None:
        self.release()

    def everything(self) -> None:
        self.release()


class _CorpusReader:
    """Reads corpus blocks of ``rows`` rows for a search: checked, normalised, pages released.

    The first pass over a block (``first_pass=True``) checks it for NaN/inf,
    counts its zero rows and keeps its float32 denominators (``den``), or with
    ``normalized`` the largest norm seen (``cmax``, shared by the workers of
    this process, grows only); later passes reuse them.  ``canonical`` re-reads
    candidates and scores them (:func:`~evalcore.retrieval.scoring._canonical_scores`).
    """

    def __init__(self, task: SearchTask, rows: int, chunk_bytes: int) -> None:
        self.corpus, self.ids = task.corpus, task.corpus_ids
        self.normalized, self.eps = task.normalized, task.eps
        self.rows = rows
        self.chunk_bytes = chunk_bytes  # re-scoring chunks stay cache-sized
        self.den = None if task.normalized else np.empty(task.corpus.shape[0], dtype=np.float32)
        self.release = _PageReleaser(task.corpus, budget=int(task.block_bytes))
        # bound of corpus norms seen so far (grows only with normalized=True); shared by the workers
        self.cmax = 1.0
        self.lock = threading.Lock()

    def read(self, cs: int, first_pass: bool) -> tuple[np.ndarray, int, int, float]:
        """Read and normalise corpus rows cs:cs+rows -> (rows, count, zero rows, max norm)."""
        c32 = _as_f32(self.corpus[cs : cs + self.rows])
        m_c = c32.shape[0]
        zeros, bmax = 0, 0.0
        if first_pass:  # checks and denominators
            c_sumsq = _sumsq(c32)
            if not np.isfinite(c_sumsq).all():
                raise _nonfinite_error(self.corpus, "corpus", self.ids, cs)
            zeros = int(np.count_nonzero(c_sumsq == 0))
            if self.normalized:
                bmax = float(np.sqrt(c_sumsq.max()))
            else:
                self.den[cs : cs + m_c] = _denominators(c_sumsq, self.eps)
        cn = np.ascontiguousarray(c32) if self.normalized else np.divide(c32, self.den[cs : cs + m_c, None])
        self.release.rows(cs, cs + m_c)
        return cn, m_c, zeros, bmax

    def canonical(self, qn: np.ndarray, qnorm: np.ndarray, r0: int, rows: np.ndarray,
                  cand: np.ndarray) -> np.ndarray:
        """Canonical scores of query rows ``r0 + rows`` of ``qn`` with the corpus rows ``cand``."""
        # bound of ||q|| ||c||: normalised rows have norm < 1 + 2**-22; with
        # normalized=True the largest norms seen so far (every candidate's block was seen)
        bound = qnorm[r0 + rows] * max(self.cmax, 1.0) * (1 + 2.0**-20)
        return _canonical_scores(qn[r0 + rows], cand, self.corpus, self.den, self.chunk_bytes, self.release,
                                 bound=bound)


class _QueryBlock:
    """Query rows ``qs:qe`` of a task, normalised, and the work of searching them.

    ``new_pool`` makes one worker's candidate pool, ``search_block`` scores one
    corpus block into such a pool, ``finish`` gives the exact top-k of rows
    ``r0:r1`` from the pools of every worker, and ``answer_zero_queries``
    fills in the lists of all-zero queries (they never get candidates).
    """

    def __init__(self, task: SearchTask, qs: int, qe: int, reader: _CorpusReader) -> None:
        q32 = np.ascontiguousarray(task.queries[qs:qe], dtype=np.float32)
        m_q = q32.shape[0]
        self.sumsq = _sumsq(q32)
        if task.normalized:
            self.qn = q32
            self.qnorm = np.maximum(np.sqrt(self.sumsq), 1.0)
        else:
            self.qn = np.divide(q32, _denominators(self.sumsq, task.eps)[:, None])
            self.qnorm = np.ones(m_q)
        self.m = m_q
        self.self_q = None if task.self_pos is None else task.self_pos[qs : qs + m_q]
        self.zero_rows = np.flatnonzero(self.sumsq == 0)
        self.err = _blas_pair_error(q32.shape[1])
        self.task, self.reader = task, reader
        self.rescore = functools.partial(reader.canonical, self.qn, self.qnorm, 0)

    def new_pool(self) -> _Candidates:
        """An empty candidate pool for these queries (zero queries never admit candidates)."""
        task = self.task
        cmax = self.reader.cmax
        pool = _Candidates(self.m, task.kk, self.err * self.qnorm * cmax, self.rescore, task.id_rank,
                           task.index_dtype, norm_bound=cmax)
        pool.skip_rows(self.zero_rows)
        return pool

    def search_block(self, cs: int, first_pass: bool, pool: _Candidates, score_buf: np.ndarray,
                     mask_buf: np.ndarray) -> int:
        """Score corpus block ``cs`` against these queries into ``pool``; returns its zero rows.

        ``score_buf`` and ``mask_buf`` (flat float32 / bool, at least
        ``m * rows`` long) are the worker's own scratch space.
        """
        reader = self.reader
        cn, m_c, zeros, bmax = reader.read(cs, first_pass)
        if bmax > reader.cmax:  # normalized=True only: the bound of the canonical re-scoring
            with reader.lock:
                reader.cmax = max(reader.cmax, bmax)
        if bmax > pool.norm_bound:  # this pool's tolerance covers every row it holds or filters (grows only)
            pool.norm_bound = bmax
            pool.tol = self.err * self.qnorm * bmax
        m_q = self.m
        scores = score_buf[: m_q * m_c].reshape(m_q, m_c)
        masks = mask_buf[: m_q * m_c].reshape(m_q, m_c)
        np.matmul(self.qn, cn.T, out=scores)
        del cn
        self_q = self.self_q
        if self_q is not None:
            hit = np.flatnonzero((self_q >= cs) & (self_q < cs + m_c))
            scores[hit, self_q[hit] - cs] = _NEG_INF
        pool.push_block(scores, cs, masks)
        return zeros

    def finish(self, pools: list[_Candidates], r0: int, r1: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k (indices, scores) of query rows ``r0:r1`` from every worker's pool.

        Zero queries come out empty (padding): answer them with
        :meth:`answer_zero_queries` once the lists of every corpus part are merged.
        """
        lane_rescore = functools.partial(self.reader.canonical, self.qn, self.qnorm, r0)
        return _finish(_merged_pool(pools, r0, r1, lane_rescore))

    def answer_zero_queries(self, top_i: np.ndarray, top_s: np.ndarray, r0: int = 0) -> None:
        """Fill in place the lists of the zero queries among rows ``r0:r0 + len(top_i)``.

        A zero query scores 0 against every corpus row, so its list is the same
        whatever part of the corpus was searched: it is filled once, from the
        ids of the whole corpus (:func:`~evalcore.retrieval.pools._answer_zero_queries`).
        """
        r1 = r0 + top_i.shape[0]
        own = None if self.self_q is None else self.self_q[r0:r1]
        _answer_zero_queries(top_i, top_s, np.flatnonzero(self.sumsq[r0:r1] == 0), own, self.task.id_order)

"""The local backend: worker threads in this process, one per core, over one corpus array.

Each of ``threads`` workers, with BLAS limited to one thread (``threadpoolctl``),
takes the next free corpus block, normalises it, multiplies it and filters the
scores into its own candidate pool (:mod:`evalcore.retrieval.blocks`); the pools
share their thresholds.  Progress is reported from the calling thread.  At the
end of each query block the pools are merged, re-scored and ordered row range
by row range in parallel.  With one worker everything runs in the calling
thread and BLAS keeps its own threads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._threads import in_caller_context
from .backends import SearchResult, SearchTask
from .blocks import _CorpusReader, _QueryBlock
from .planning import _plan_blocks, _rescore_chunk_bytes


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
    futures = [executor.submit(in_caller_context(job), stop) for job in jobs]  # (their warnings: the caller's)
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


@dataclasses.dataclass(frozen=True)
class LocalBackend:
    """Search with ``threads`` worker threads in this process (see the module docstring).

    ``threads`` >= 1 (``exact_topk`` checks it and caps it at 16).  The corpus
    is read block by block from ``task.corpus`` (array or read-only memory
    map, never loaded whole).
    """

    threads: int = 1

    def search(self, task: SearchTask) -> SearchResult:
        """Run ``task``; see :class:`~evalcore.retrieval.backends.Backend`."""
        workers = self.threads
        progress, kk = task.progress, task.kk
        nq, d = task.queries.shape
        n = task.corpus.shape[0]
        bq, bc = _plan_blocks(nq, n, d, kk, int(task.block_bytes), workers)
        nqb, ncb = -(-nq // bq), -(-n // bc)
        total = nqb * ncb
        # one score block (and its mask) per worker
        score_bufs = [np.empty(bq * bc, dtype=np.float32) for _ in range(workers)]
        mask_bufs = [np.empty(bq * bc, dtype=np.bool_) for _ in range(workers)]
        reader = _CorpusReader(task, bc, _rescore_chunk_bytes(task.block_bytes))
        out_i = np.empty((nq, kk), dtype=np.int64)
        out_s = np.empty((nq, kk), dtype=np.float32)
        # progress and the count of zero corpus rows are kept by the calling thread
        tally = {"done": 0, "zero_c": 0}

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
                    block = _QueryBlock(task, qs, qs + bq, reader)
                    m_q = block.m
                    pools = [block.new_pool() for _ in range(workers)]
                    if not task.normalized:  # tolerances are fixed: the workers share thresholds
                        for pool in pools:
                            pool.peers = [p for p in pools if p is not pool]
                    starts = list(range(0, n, bc))
                    next_block = itertools.count()  # blocks are handed out as workers get free
                    first_pass = qs == 0
                    # one worker runs here and reports each block at once; several report through a queue
                    events = _Inline(on_step) if executor is None else queue.SimpleQueue()

                    def job(stop, w, pools=pools, starts=starts, first_pass=first_pass, block=block,
                            events=events, next_block=next_block):
                        pool = pools[w]
                        while (b := next(next_block)) < len(starts):
                            if stop.is_set():
                                return
                            events.put(block.search_block(starts[b], first_pass, pool, score_bufs[w], mask_bufs[w]))

                    jobs = [functools.partial(job, w=w) for w in range(workers)]
                    _run_workers(executor, jobs, events, len(starts), on_step)

                    # the pools are merged row range by row range, re-scored and ordered in parallel
                    n_lanes = max(1, min(workers, m_q // 64))
                    cuts = np.linspace(0, m_q, n_lanes + 1).astype(int).tolist()
                    lanes = list(zip(cuts[:-1], cuts[1:], strict=True))
                    calls = [functools.partial(block.finish, pools, r0, r1) for r0, r1 in lanes]
                    if executor is None or len(calls) == 1:
                        results = [call() for call in calls]
                    else:
                        results = [f.result() for f in [executor.submit(call) for call in calls]]
                    for (r0, r1), (top_i, top_s) in zip(lanes, results, strict=True):
                        block.answer_zero_queries(top_i, top_s, r0)
                        out_i[qs + r0 : qs + r1] = top_i
                        out_s[qs + r0 : qs + r1] = top_s
        finally:
            if executor is not None:
                executor.shutdown(wait=True)
        return SearchResult(out_i, out_s, tally["zero_c"])

"""The Dask backend: exact top-k of a sharded corpus on a ``distributed`` cluster.

``exact_topk(queries, shards, k, backend=client)`` with a ``distributed.Client``
searches a :class:`~evalcore.retrieval.sharded.ShardedCorpus` (e.g.
:func:`evalcore.io.open_shards`) on the cluster's workers:

1. the queries (float32) and each query's own row (item-to-item) are
   scattered once to the workers;
2. one task per piece of a shard (:func:`~evalcore.retrieval.sharded.plan_pieces`:
   shards larger than their share are cut so every worker thread gets about
   two tasks) opens the shard file on its worker (paths travel, never
   vectors: workers must see the files at the same paths) and returns the
   piece's exact top-k with canonical scores and its ids
   (:func:`~evalcore.retrieval.sharded.search_piece`, the local backend with
   one thread; worker processes started by a nanny run BLAS single-threaded);
3. a tree of merge tasks (:func:`~evalcore.retrieval.sharded.merge_partials`:
   score descending, then id ascending) leaves one top-k, gathered by the client.

The result is the single-process search's, bit for bit (see
:mod:`evalcore.retrieval.sharded`).  Progress follows the piece tasks'
completion.  When a worker is lost, the scheduler runs its tasks again on
the others (up to ``distributed.scheduler.allowed-failures`` times); tasks are
pure functions of their inputs, so the result does not change.

``distributed`` is optional (``pip install -e '.[dask]' in evalcore's folder``) and imported
only here, when a search uses it; :func:`dask_client` opens a client for an
address (``tcp://host:8786``, or ``local:N`` for a ``LocalCluster`` of N
worker processes started and stopped with it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import EvalcoreError, OptionError
from .backends import SearchResult, SearchTask
from .sharded import (
    check_ids,
    is_sharded,
    merge_partials,
    params_of,
    plan_pieces,
    result_of,
    search_piece,
)

__all__ = ["DaskBackend", "ClusterError", "INSTALL_HINT", "dask_client", "import_distributed", "local_cluster"]

INSTALL_HINT = ("Dask is not installed: in evalcore's folder, pip install -e '.[dask]' (or pip install 'dask[distributed]'; evalcore is not on PyPI: a project of that name there is another one) to use --dask")
_LOCAL = re.compile(r"local:(\d+)")


class ClusterError(EvalcoreError):
    """The cluster cannot be used: ``distributed`` missing, scheduler unreachable, no worker."""


def import_distributed() -> Any:
    """The ``distributed`` module, or :class:`ClusterError` saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise ClusterError(INSTALL_HINT) from None
    return distributed


def is_client(obj: object) -> bool:
    """True for a ``distributed.Client`` (without importing ``distributed`` when it is not loaded)."""
    import sys

    mod = sys.modules.get("distributed")
    return mod is not None and isinstance(obj, mod.Client)


@dataclasses.dataclass(frozen=True, eq=False)
class DaskBackend:
    """Search a sharded corpus with the workers of ``client`` (see the module docstring).

    ``tasks_per_thread`` sets how finely shards are cut: about that many
    piece tasks per worker thread (shards are never joined, only cut).
    """

    client: Any
    tasks_per_thread: int = 2

    def search(self, task: SearchTask) -> SearchResult:
        if not is_sharded(task.corpus):
            raise OptionError("the Dask backend searches shard files that its workers read: give the documents "
                              "as .npy / .npz files, a directory or a glob of them (evalcore.io.open_shards), "
                              "not an array")
        from distributed import KilledWorker

        client, corpus = self.client, task.corpus
        threads = max(1, sum(client.nthreads().values()))
        n = corpus.shape[0]
        pieces = plan_pieces(corpus.shard_rows, -(-n // (threads * max(1, self.tasks_per_thread))))
        nq = task.queries.shape[0]
        queries = np.ascontiguousarray(task.queries[0:nq], dtype=np.float32)  # what _QueryBlock takes
        for attempt in range(_ATTEMPTS):
            try:
                final = self._attempt(client, corpus, pieces, queries, task)
                check_ids(final, corpus)  # the workers read the files the client read (not another copy)
                return result_of(final, task.kk)
            except _QueriesLost:
                if attempt + 1 == _ATTEMPTS:
                    raise ClusterError(f"the Dask cluster lost the queries {_ATTEMPTS} times (every worker holding "
                                       "them died or was restarted); the workers may lack memory: use a smaller "
                                       "block size or more workers") from None
            except KilledWorker as e:
                raise ClusterError(f"a search task was running on every worker that died ({e}); the workers may "
                                   "lack memory: use a smaller block size or more workers") from None
            except EvalcoreError:
                raise
            except Exception as e:  # noqa: BLE001 - the cluster's own failures, in one line (the cause is chained)
                first = (str(e).strip().splitlines() or [""])[0]
                raise ClusterError(f"the search failed on the Dask cluster ({type(e).__name__}: {first}); see the "
                                   "workers' logs: every worker needs evalcore and its dependencies installed and "
                                   "the shard files at the same absolute paths") from e
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, client: Any, corpus: Any, pieces: list, queries: np.ndarray, task: SearchTask) -> Any:
        """One search: scatter the queries, a task per piece, the tree of merges; the final Partial.
        Raises :class:`_QueriesLost` when the scattered queries were lost with the workers holding them
        (tasks that need them cannot be run again: the search is started again)."""
        from distributed import as_completed

        own = task.self_pos
        q_fut = client.scatter(queries, broadcast=True, hash=False)
        s_fut = None if own is None else client.scatter(own, broadcast=True, hash=False)
        scattered = [q_fut, *([s_fut] if s_fut is not None else [])]
        params = params_of(task, threads=1)
        futures = [client.submit(search_piece, corpus, p, q_fut, s_fut, params, pure=False) for p in pieces]
        level, merges = list(futures), []
        while len(level) > 1:  # a tree: pairs of partials merged until one is left
            pairs = zip(level[0::2], level[1::2], strict=False)  # an odd one out waits for the next level
            nxt = [client.submit(merge_partials, a, b, task.kk, pure=False) for a, b in pairs]
            merges += nxt
            level = nxt + ([level[-1]] if len(level) % 2 else [])
        try:
            done = 0
            for fut in as_completed(futures):
                if fut.status == "error":
                    fut.result()  # raises the task's error here
                if fut.status != "finished":  # cancelled: the queries lost with their workers, or another cause
                    if any(f.status != "finished" for f in scattered):
                        raise _QueriesLost
                    fut.result()  # raises why
                done += 1
                if task.progress is not None:
                    task.progress(done, len(futures))
            return level[0].result()
        except Exception as e:
            if any(f.status != "finished" for f in scattered) and not isinstance(e, EvalcoreError):
                raise _QueriesLost from None
            raise
        finally:
            client.cancel([*scattered, *futures, *merges])


class _QueriesLost(Exception):
    """The scattered queries were lost with the workers that held them."""


_ATTEMPTS = 3


def _unreachable(address: str, error: BaseException) -> ClusterError:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return ClusterError(f"cannot reach the Dask scheduler at {address} ({text})")


def _connect(distributed: Any, address: str, timeout: float) -> Any:
    """``distributed.Client(address)`` within ``timeout`` seconds (plus a margin), whatever answers there.

    The client's own ``timeout`` does not bound its handshake: a port that speaks HTTP (the scheduler's
    dashboard, a web server) kept it waiting forever, and one that answers garbage raised a MemoryError
    (a bogus frame length). Both are the one-line "cannot reach" error here.
    """
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = distributed.Client(address, timeout=timeout)
        except BaseException as e:  # noqa: BLE001 - reported below, in the caller's thread
            box["error"] = e

    thread = threading.Thread(target=connect, name="evalcore-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 2.0)
    if thread.is_alive():
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: nothing answered as a scheduler within "
                           f"{timeout:g} s (a scheduler listens on tcp://HOST:8786 by default; its dashboard's "
                           "HTTP port is not it)")
    error = box.get("error")
    if isinstance(error, (KeyboardInterrupt, SystemExit)):
        raise error
    if error is not None:
        if isinstance(error, (OSError, TimeoutError)):
            raise _unreachable(address, error) from None
        first = (str(error).strip().splitlines() or [""])[0]
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: what answered is not a Dask scheduler "
                           f"({type(error).__name__}: {first})") from None
    return box["client"]


def local_cluster(n_workers: int) -> Any:
    """A ``LocalCluster`` of ``n_workers`` processes of one thread each, for the search (use it with ``with``).

    Dask's nannies start workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which
    fixes glibc's mmap threshold: every large temporary array is then a fresh
    mapping, page-faulted anew, and the search costs 12-20% more CPU (measured
    on this project's machine).  These workers start without it (their memory
    use is bounded by ``block_bytes``); BLAS stays single-threaded
    (``OPENBLAS_NUM_THREADS=1``...).  On a cluster of your own, set
    ``distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_`` to null
    for the same effect.
    """
    import dask
    import distributed

    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                        dashboard_address=":0", silence_logs=logging.ERROR)


@contextlib.contextmanager
def dask_client(address: str, *, timeout: float = 10.0) -> Iterator[Any]:
    """A ``distributed.Client`` for ``address``, closed on exit.

    ``local:N`` starts a ``LocalCluster`` of N worker processes (one thread
    each) and stops it on exit; anything else is a scheduler address
    (``tcp://host:8786``), given ``timeout`` seconds to answer and to have at
    least one worker.  Raises :class:`ClusterError` (one line) when
    ``distributed`` is missing or the scheduler cannot be reached.
    """
    distributed = import_distributed()
    local = _LOCAL.fullmatch(address.strip())
    if address.strip().startswith("local") and local is None:
        raise OptionError(f"--dask expects local:N (N worker processes) or a scheduler address, got {address!r}")
    if local is not None:
        n = int(local.group(1))
        if n < 1:
            raise OptionError(f"local:N needs N >= 1 worker processes, got {address!r}")
        with local_cluster(n) as cluster, distributed.Client(cluster) as client:
            yield client
        return
    client = _connect(distributed, address, timeout)
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as e:
            raise ClusterError(f"the Dask scheduler at {address} has no worker ({e})") from None
        yield client
    finally:
        client.close()

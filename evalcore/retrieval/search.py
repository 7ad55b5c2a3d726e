"""The front of the search: :func:`exact_topk` checks its inputs and hands them to a backend.

How the search works is told in :mod:`evalcore.retrieval`; what a backend
receives and returns in :mod:`evalcore.retrieval.backends`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .._threads import thread_count
from ..errors import EmptyInputError, OptionError, ShapeMismatchError, check_flag, warn
from .backends import Backend, SearchTask
from .inputs import _as_ids, _as_matrix, _check_k, _id_ranks, _scan_rows
from .local import LocalBackend
from .result import TopK
from .sharded import ShardedLocalBackend, is_sharded


def _resolve_backend(backend, threads: int, sharded: bool) -> Backend:
    """The backend ``exact_topk(..., backend=...)`` names (``threads``: checked, 1-16)."""
    if backend is None:
        return ShardedLocalBackend(threads=threads) if sharded else LocalBackend(threads=threads)
    if callable(getattr(backend, "search", None)) and not isinstance(backend, type):
        return backend
    from .dask_backend import DaskBackend, is_client

    if is_client(backend):
        return DaskBackend(backend)
    raise OptionError("backend must be None (worker threads in this process), a distributed.Client "
                      f"or a backend object with a search(task) method, got {backend!r}")


def _corpus_matrix(corpus, corpus_ids) -> tuple[object, np.ndarray]:
    """(corpus, its ids): an array as given, or a sharded corpus with the ids of its shards."""
    if not is_sharded(corpus):
        return _as_matrix(corpus, "corpus"), _as_ids(corpus_ids, "corpus_ids")
    own = corpus.read_ids()
    if corpus_ids is not None:
        given = _as_ids(corpus_ids, "corpus_ids")
        if given.shape != own.shape or not np.array_equal(given, own):
            raise ShapeMismatchError("corpus_ids differ from the ids of the shards; leave corpus_ids=None "
                                     "(the shards' ids are used)")
    return corpus, own


def exact_topk(
    queries,
    corpus,
    k: int,
    *,
    corpus_ids: Sequence[str] | np.ndarray | None = None,
    query_ids: Sequence[str] | np.ndarray | None = None,
    exclude_self: bool = False,
    block_bytes: int = 256 * 2**20,
    progress: Callable[[int, int], None] | None = None,
    normalized: bool = False,
    threads: int | None = None,
    backend=None,
) -> TopK:
    """Exact top-``k`` corpus rows by cosine similarity for every query.

    Parameters
    ----------
    queries, corpus:
        2-D arrays (rows are vectors) of the same dimension.  ``corpus`` may be a
        read-only ``np.memmap`` / ``np.load(..., mmap_mode="r")`` larger than
        RAM: it is read block by block and never written to.  ``corpus`` may
        also be a corpus of shard files (:func:`evalcore.io.open_shards`, a
        :class:`~evalcore.retrieval.sharded.ShardedCorpus`): it is searched
        shard by shard and the lists merged, with the same result as the
        concatenated array; ``queries`` may be one too (item-to-item).
    k:
        list length; the result has ``k' = min(k, candidates)`` columns.
    corpus_ids, query_ids:
        one id per row (compared as strings).  Corpus ids must be unique; they
        break score ties (ascending, seed 001 §3).  A sharded corpus brings its
        own ids (``corpus_ids=None``; if given, they must be the same).  ``query_ids`` defaults to
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
    backend:
        where the search runs.  ``None`` (the default): worker threads in this
        process (:class:`evalcore.retrieval.local.LocalBackend` with
        ``threads``; a sharded corpus shard after shard,
        :class:`~evalcore.retrieval.sharded.ShardedLocalBackend`).  A
        ``distributed.Client``: the workers of a Dask cluster search a sharded
        corpus, each task reading its own shard
        (:class:`evalcore.retrieval.dask_backend.DaskBackend`; needs
        ``pip install -e '.[dask]' in evalcore's folder``).  Any object with a
        ``search(task)`` method is used as it is.  The inputs are checked
        here, once, whatever the backend; see
        :mod:`evalcore.retrieval.backends` for what a backend receives and
        returns.  Results do not depend on it.

    Scores are the float32 rounding of the float64 dot product of the float32
    normalised vectors, computed in a fixed order, so results do not depend on
    ``block_bytes``, threads or memory mapping, and equal vectors tie exactly.

    Raises ShapeMismatchError (dimensions, ids vs rows), NonFiniteValueError
    (NaN/inf: count and first row/id), OptionError (k <= 0, bad options),
    DuplicateIdError, EmptyInputError (empty corpus).  Warns
    (:class:`EvalcoreWarning`) when queries or corpus hold zero vectors.
    """
    eps = 1e-12
    q_arr = queries if is_sharded(queries) else _as_matrix(queries, "queries")
    if corpus_ids is None and not is_sharded(corpus):
        raise OptionError("corpus_ids is required (one id per corpus row)")
    c_arr, cids = _corpus_matrix(corpus, corpus_ids)
    k = _check_k(k)
    exclude_self = check_flag(exclude_self, "exclude_self")
    if isinstance(block_bytes, bool) or not isinstance(block_bytes, (int, np.integer)) or block_bytes <= 0:
        raise OptionError(f"block_bytes must be a positive integer, got {block_bytes!r}")
    n_threads = max(1, min(thread_count(threads, name="threads"), 16))
    runner = _resolve_backend(backend, n_threads, is_sharded(c_arr))
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
    task = SearchTask(queries=q_arr, corpus=c_arr, corpus_ids=cids, id_rank=id_rank, id_order=order,
                      self_pos=self_pos, kk=kk, normalized=normalized, eps=eps, block_bytes=int(block_bytes),
                      progress=progress)
    result = runner.search(task)

    if zero_q:
        warn(f"{zero_q} query vector(s) are all zeros; their cosine with every document is 0")
    if result.zero_corpus_rows:
        warn(f"{result.zero_corpus_rows} corpus vector(s) are all zeros; their cosine with every query is 0")
    return TopK(result.indices, result.scores, qids, cids)

"""The seam between :func:`evalcore.retrieval.exact_topk` and the code that runs the search.

:func:`~evalcore.retrieval.exact_topk` checks its inputs once, resolves ids
(ranks, the row each query must not retrieve) and hands a :class:`SearchTask`
to a backend; the backend returns a :class:`SearchResult`, which ``exact_topk``
turns into a :class:`~evalcore.retrieval.TopK` (and warnings about zero rows).
Backends: :class:`evalcore.retrieval.local.LocalBackend` (worker threads over
a corpus array or memory map in this process),
:class:`evalcore.retrieval.sharded.ShardedLocalBackend` (a corpus of shard
files, shard after shard, in this process) and
:class:`evalcore.retrieval.dask_backend.DaskBackend` (shards searched by the
workers of a Dask cluster); the last two search pieces of shards and merge
their lists (:mod:`evalcore.retrieval.sharded` tells why that is exact).

What any backend must do to give the same result bit for bit: run the
per-block work of :mod:`evalcore.retrieval.blocks` (one
:class:`~evalcore.retrieval.blocks._CorpusReader` per process reading corpus
rows, one :class:`~evalcore.retrieval.blocks._QueryBlock` per block of
queries, one candidate pool per worker), with corpus rows numbered as in
``task.corpus`` (row numbers index ``task.id_rank``; a reader may hold only
its own range of blocks, e.g. a memory map of the same file), finish the
pools with ``_QueryBlock.finish`` and, once every part's lists are merged,
fill in the lists of all-zero queries with ``_QueryBlock.answer_zero_queries``.  Canonical scores depend on the pair only
and :func:`~evalcore.retrieval.pools._exact_order` is the only ordering rule,
so pools or finished lists from several workers or machines, merged with
:func:`~evalcore.retrieval.pools._merged_pool` or re-ordered with
``_exact_order``, give the same top-k as one process.  Block sizes
(:mod:`evalcore.retrieval.planning`) only change speed and memory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

import numpy as np


@dataclasses.dataclass(frozen=True, eq=False)
class SearchTask:
    """Checked inputs of one exact top-k search (built by ``exact_topk`` only).

    Attributes
    ----------
    queries : (nq, d) array
        Query rows as given (any real dtype); backends normalise them block by
        block (``_QueryBlock``) unless ``normalized``.  Finite, ``nq >= 1``.
    corpus : (n, d) array or ShardedCorpus
        Corpus rows as given: an array or a read-only memory map, never
        written to, or a corpus of shard files
        (:class:`~evalcore.retrieval.sharded.ShardedCorpus`); ``n >= 1``.  Checked for NaN/inf by the backend as it
        streams the rows (first pass), so the corpus is read once.
    corpus_ids : (n,) str array
        For error messages (a non-finite corpus row).
    id_rank : (n,) int64
        Rank of each corpus row's id in string order: the tie-break.
    id_order : (n,) int64
        Corpus rows in id order (``argsort`` of the ids): the answer of a zero query.
    self_pos : (nq,) int64 or None
        Per query, the corpus row it must not retrieve (``-1``: none);
        ``None`` when ``exclude_self`` is off.
    kk : int
        Width of the result, ``min(k, candidates)``, >= 1.
    normalized : bool
        Rows are unit vectors already: used as they are (cast to float32).
    eps : float
        The ``eps`` of ``u / (||u|| + eps)``.
    block_bytes : int
        Bound of the per-block working set of the whole search.
    progress : callable or None
        ``progress(done, total)``, to be called from the calling thread.
    """

    queries: np.ndarray
    corpus: np.ndarray
    corpus_ids: np.ndarray
    id_rank: np.ndarray
    id_order: np.ndarray
    self_pos: np.ndarray | None
    kk: int
    normalized: bool
    eps: float
    block_bytes: int
    progress: Callable[[int, int], None] | None

    @property
    def index_dtype(self) -> type[np.signedinteger]:
        """Dtype of corpus row numbers inside the pools: int32 below 2**31 rows."""
        return np.int32 if self.corpus.shape[0] < 2**31 else np.int64


@dataclasses.dataclass(frozen=True, eq=False)
class SearchResult:
    """What a backend returns.

    Attributes
    ----------
    indices : (nq, kk) int64
        Corpus rows in rank order, ``-1`` padding (see :class:`~evalcore.retrieval.TopK`).
    scores : (nq, kk) float32
        Their canonical scores, ``-inf`` padding.
    zero_corpus_rows : int
        Number of all-zero corpus rows seen (each counted once).
    """

    indices: np.ndarray
    scores: np.ndarray
    zero_corpus_rows: int


class Backend(Protocol):
    """Runs a :class:`SearchTask`; the result must not depend on the backend."""

    def search(self, task: SearchTask) -> SearchResult: ...

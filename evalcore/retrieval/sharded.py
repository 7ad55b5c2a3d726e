"""Searching a corpus of shards: one search per piece of a shard, and the merge of their top-k lists.

A sharded corpus (:class:`ShardedCorpus`, e.g. :class:`evalcore.io.shards.ShardSet`)
is searched piece by piece: a piece is a range of rows of one shard, opened
where it is searched (:func:`search_piece`: in this process, or on a Dask
worker, which reads the shard file itself).  Each piece runs the local backend
(:class:`~evalcore.retrieval.local.LocalBackend`) over its rows, with corpus
rows numbered within the piece and the piece's own id ranks, and returns its
exact top-k as a :class:`Partial`: global row numbers, canonical scores and
the ids themselves.  :func:`merge_partials` merges two partials into the top-k
of their union by (score descending, id ascending).

Why this is the top-k of the whole corpus, bit for bit:

* canonical scores depend on the (query, document) pair only
  (:mod:`evalcore.retrieval.scoring`), not on the piece;
* ranks of the ids *within* a piece order any two of its ids as their ranks
  over the whole corpus do (both are string order, ids are unique), so each
  piece's list is the whole corpus's order restricted to the piece, cut at k;
* the merge compares the id strings themselves, which is the same order
  again; the top-k of a union is the top-k of the union of the parts' top-k,
  so merging in any grouping (a tree) gives the same lists;
* an all-zero query scores 0 with everything: each piece answers it with its
  own first ids in string order (its own row excluded), and their merge is the
  first ids of the whole corpus, as :meth:`_QueryBlock.answer_zero_queries`
  gives in one process.

Item-to-item: ``self_pos`` (a global row per query, ``-1``: none) becomes the
row within each piece, or ``-1`` outside it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Protocol

import numpy as np

from ..errors import EvalcoreError, ShapeMismatchError
from .backends import SearchResult, SearchTask
from .inputs import _id_ranks
from .local import LocalBackend
from .planning import _plan_blocks
from .scoring import _NEG_INF


class ShardedCorpus(Protocol):
    """A corpus stored as shards, each opened where it is searched (see :mod:`evalcore.io.shards`).

    It must pickle small (paths and sizes): Dask sends it with every task.
    """

    shape: tuple[int, int]
    shard_rows: tuple[int, ...]

    def open_shard(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(vectors (rows, d), ids (rows,) str) of shard ``i``; vectors read-only, never written."""
        ...

    def shard_label(self, i: int) -> str: ...

    def read_ids(self) -> np.ndarray: ...


def is_sharded(corpus) -> bool:
    """True for a :class:`ShardedCorpus` (it has ``open_shard`` and ``shard_rows``)."""
    return hasattr(corpus, "open_shard") and hasattr(corpus, "shard_rows")


@dataclasses.dataclass(frozen=True)
class Piece:
    """Rows ``start:stop`` of shard ``shard``; ``offset`` is the corpus row of ``start``."""

    shard: int
    start: int
    stop: int
    offset: int


def plan_pieces(shard_rows: tuple[int, ...], max_rows: int | None = None) -> list[Piece]:
    """Each shard in pieces of at most ``max_rows`` rows (``None``: whole shards), of nearly equal sizes."""
    pieces, offset = [], 0
    for i, rows in enumerate(shard_rows):
        parts = 1 if not max_rows else max(1, -(-rows // int(max_rows)))
        cuts = np.linspace(0, rows, parts + 1).astype(np.int64).tolist()
        pieces += [Piece(i, a, b, offset + a) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]
        offset += rows
    return pieces


@dataclasses.dataclass(frozen=True)
class PieceParams:
    """What every piece of one search shares (besides the queries)."""

    kk: int
    normalized: bool
    eps: float
    block_bytes: int
    threads: int = 1


@dataclasses.dataclass(frozen=True, eq=False)
class Partial:
    """The exact top-k of some pieces: ``rows`` (nq, w) int64 global corpus rows (``-1`` padding),
    ``scores`` (nq, w) float32 canonical (``-inf`` padding), ``ids`` (nq, w) str (``""`` padding),
    ``zeros``: all-zero corpus rows seen."""

    rows: np.ndarray
    scores: np.ndarray
    ids: np.ndarray
    zeros: int


def params_of(task: SearchTask, threads: int = 1) -> PieceParams:
    return PieceParams(task.kk, task.normalized, task.eps, task.block_bytes, threads)


def search_piece(corpus: ShardedCorpus, piece: Piece, queries: np.ndarray, self_pos: np.ndarray | None,
                 params: PieceParams, progress: Callable[[int, int], None] | None = None) -> Partial:
    """Exact top-k of ``queries`` (nq, d) in one piece of ``corpus``, opened here (see the module docstring)."""
    vectors, ids = corpus.open_shard(piece.shard)
    expected = corpus.shard_rows[piece.shard]
    if len(ids) != expected or vectors.shape[0] != expected:  # another file where this process opened it
        raise ShapeMismatchError(f"the shard has {vectors.shape[0]} rows and {len(ids)} ids here, but "
                                 f"{expected} where the search was planned: every Dask worker must see the same "
                                 "files as the client", file=corpus.shard_label(piece.shard))
    vectors, ids = vectors[piece.start : piece.stop], np.asarray(ids[piece.start : piece.stop], dtype=str)
    m = piece.stop - piece.start
    id_rank, id_order = _id_ranks(ids, corpus.shard_label(piece.shard))
    own = None
    if self_pos is not None:
        inside = (self_pos >= piece.offset) & (self_pos < piece.offset + m)
        own = np.where(inside, self_pos - piece.offset, -1)
    kk = min(params.kk, m)
    task = SearchTask(queries=queries, corpus=vectors, corpus_ids=ids, id_rank=id_rank, id_order=id_order,
                      self_pos=own, kk=kk, normalized=params.normalized, eps=params.eps,
                      block_bytes=params.block_bytes, progress=progress)
    try:
        res = LocalBackend(threads=params.threads).search(task)
    except EvalcoreError as e:  # a NaN row: name the shard file and the corpus row
        where = f"rows {piece.offset}-{piece.offset + m - 1} of the corpus"
        raise type(e)(f"{e.message} (the shard's {where})", file=corpus.shard_label(piece.shard),
                      item=e.item) from None
    valid = res.indices >= 0
    rows = np.where(valid, res.indices + piece.offset, -1)
    return _padded(Partial(rows, res.scores, np.where(valid, ids[np.maximum(res.indices, 0)], ""),
                           res.zero_corpus_rows), params.kk)


def _padded(p: Partial, kk: int) -> Partial:
    """``p`` widened to ``kk`` columns with padding."""
    w = p.rows.shape[1]
    if w >= kk:
        return p
    pad = ((0, 0), (0, kk - w))
    return Partial(np.pad(p.rows, pad, constant_values=-1), np.pad(p.scores, pad, constant_values=_NEG_INF),
                   np.pad(p.ids, pad, constant_values=""), p.zeros)


def merge_partials(a: Partial, b: Partial, kk: int) -> Partial:
    """The top-``kk`` of the union of two partials of disjoint pieces: score descending, then id ascending."""
    rows = np.hstack([a.rows, b.rows])
    scores = np.hstack([a.scores, b.scores])
    ids = np.hstack([a.ids, b.ids])
    neg = np.where(rows >= 0, -scores.astype(np.float64), np.inf)  # padding sorts last
    best = _order(neg, ids)[:, :kk]
    take = np.take_along_axis
    return Partial(take(rows, best, axis=1), take(scores, best, axis=1), take(ids, best, axis=1), a.zeros + b.zeros)


def _order(neg: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Per row, ``np.lexsort((ids, neg))``: by ``neg`` ascending, then id ascending, then position.

    A stable float sort (near linear on two sorted runs) gives that order in every row where no two
    finite ``neg`` are equal (the padding, ``inf`` with id ``""``, keeps its positions either way); the rows
    with an exact tie are sorted by the strings too.
    """
    order = np.argsort(neg, axis=1, kind="stable")
    sneg = np.take_along_axis(neg, order, axis=1)
    tied = np.flatnonzero(((sneg[:, 1:] == sneg[:, :-1]) & np.isfinite(sneg[:, 1:])).any(axis=1))
    if tied.size:
        order[tied] = np.lexsort((ids[tied], neg[tied]), axis=1)
    return order


def check_ids(p: Partial, corpus: ShardedCorpus) -> None:
    """Raise :class:`ShapeMismatchError` when an id read where a piece was searched is not the id of its row in
    ``corpus`` as read here (a worker that sees other files at the same paths: another row order, a stale copy),
    naming the shard file; the final lists are exact only when both read the same files."""
    valid = p.rows >= 0
    if not valid.any():
        return
    rows = p.rows[valid]
    bad = np.flatnonzero(p.ids[valid] != corpus.read_ids()[rows])
    if bad.size:
        row = int(rows[bad[0]])
        shard = int(np.searchsorted(np.cumsum(corpus.shard_rows), row, side="right"))
        raise ShapeMismatchError(
            f"corpus row {row} is id {str(corpus.read_ids()[row])!r} here but {str(p.ids[valid][bad[0]])!r} where it "
            "was searched: every Dask worker must see the same files as the client (the same content, not only "
            "the same paths)", file=corpus.shard_label(shard))


def result_of(p: Partial, kk: int) -> SearchResult:
    """The :class:`SearchResult` of the merge of every piece."""
    p = _padded(p, kk)
    rows = np.ascontiguousarray(p.rows[:, :kk], dtype=np.int64)
    scores = np.where(rows >= 0, p.scores[:, :kk], _NEG_INF).astype(np.float32)
    return SearchResult(rows, scores, p.zeros)


def _report(progress: Callable[[int, int], None], before: int, total: int, done: int, _piece_total: int) -> None:
    """A piece's progress ``(done, its total)`` as progress over every piece's blocks."""
    progress(min(before + done, total), total)


@dataclasses.dataclass(frozen=True)
class ShardedLocalBackend:
    """Search a :class:`ShardedCorpus` in this process: shard after shard, each with ``threads`` workers.

    Each shard is searched as one piece (:func:`search_piece`, memory-mapped
    when the file allows) and the lists are merged (:func:`merge_partials`),
    exactly as the Dask backend does on workers.  Progress counts the blocks
    of every shard.
    """

    threads: int = 1

    def search(self, task: SearchTask) -> SearchResult:
        corpus = task.corpus
        pieces = plan_pieces(corpus.shard_rows)
        queries = task.queries
        nq, d = queries.shape
        params = params_of(task, self.threads)
        totals = []
        for p in pieces:
            bq, bc = _plan_blocks(nq, p.stop - p.start, d, min(task.kk, p.stop - p.start), task.block_bytes,
                                  self.threads)
            totals.append(-(-nq // bq) * -(-(p.stop - p.start) // bc))
        starts = np.cumsum([0, *totals]).tolist()
        merged: Partial | None = None
        for i, piece in enumerate(pieces):
            report = None if task.progress is None else functools.partial(_report, task.progress, starts[i], starts[-1])
            part = search_piece(corpus, piece, queries, task.self_pos, params, report)
            merged = part if merged is None else merge_partials(merged, part, task.kk)
        assert merged is not None  # a ShardSet has at least one shard
        return result_of(merged, task.kk)

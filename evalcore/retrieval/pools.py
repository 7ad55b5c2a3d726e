"""Candidate pools: what a search keeps per query, and how pools become the exact top-k.

A backend pushes float32 BLAS score blocks into :class:`_Candidates` (one pool
per worker and query block); the pool keeps every item that could still reach
the top-k, whatever the rounding of those scores.  :func:`_merged_pool` joins
the pools of several workers, :func:`_finish` re-scores a pool canonically and
orders it, and :func:`_exact_order` is the one ordering rule (canonical score
descending, then id rank ascending): a backend that merges already finished
top-k lists (one per corpus shard) orders their union with it too, and gets
the same top-k bit for bit, because canonical scores depend on the pair only.
"""

from __future__ import annotations

import numpy as np

from .scoring import _NEG_INF

_POOL_SLACK = 100  # pool slots beyond k before a compaction refreshes the thresholds (measured: 50-100 best)


def _exact_order(scores: np.ndarray, cand: np.ndarray, valid: np.ndarray, id_rank: np.ndarray,
                 kk: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the positions of the best ``kk`` valid entries, and the negated scores.

    ``scores`` (R, W) are canonical float32 scores of the corpus rows ``cand``
    (R, W); entries where ``valid`` is False (padding) sort last.  Order: score
    descending, then id rank (``id_rank[cand]``) ascending (seed 001 §3).
    Returns ``(best, neg)``: ``best`` (R, min(kk, W)) column positions,
    ``neg`` = ``-scores`` with ``inf`` at invalid entries.
    """
    neg = -scores
    neg[~valid] = np.inf  # padding sorts last
    ranks = np.where(valid, id_rank[np.maximum(cand, 0)], np.iinfo(np.int64).max)
    return np.lexsort((ranks, neg), axis=1)[:, :kk], neg


def _kth_lower_bound(scores: np.ndarray, kk: int, share: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``scores`` (R, m), ``m >= kk``: lower bounds of the row's ``kk``-th and ``share``-th largest entries.

    The columns are split into ``G >= kk`` groups ``{j, j + G, j + 2G, ...}``
    of ``g`` columns each (a remainder of columns is left out): the ``kk``
    largest group maxima are ``kk`` distinct entries, so the ``kk``-th largest
    group maximum is at most the row's ``kk``-th largest entry (likewise for
    ``share <= kk``).  Partitioning the ``G`` maxima costs far less than
    partitioning the row, and the bound stays close (``g = 4``: about the 1.08
    ``kk``-th largest on random data).  Rows narrower than ``4 kk`` get the
    ``kk``-th largest itself (``g = 1``).  ``share`` None: the second result
    is the first.
    """
    m = scores.shape[1]
    g = max(1, min(4, m // (2 * kk)))
    groups = m // g
    top = scores[:, : groups * g].reshape(-1, g, groups).max(axis=1) if g > 1 else scores
    if share is None or share == kk:
        kth = np.partition(top, groups - kk, axis=1)[:, groups - kk]
        return kth, kth
    # the share-th largest is among the kk largest: a second partition of those only (numpy's
    # partition with two ranks at once is several times slower than two such calls)
    part = np.partition(top, groups - kk, axis=1)
    best = np.partition(part[:, groups - kk :], kk - share, axis=1)
    return part[:, groups - kk], best[:, kk - share]


class _Candidates:
    """Per-query candidate pool of one query block, as padded 2-D arrays.

    Invariant: every corpus item whose canonical score could place it in the
    final top-k of its query is in the pool, or in one of its ``peers``.
    ``thr`` is a lower bound of the k-th largest approximate (BLAS) score
    seen so far, refreshed only when a row overflows (a stale threshold
    merely admits more candidates); items below ``thr - tol`` cannot qualify
    (see :func:`exact_topk`).  Pools of parallel workers (``peers``, same
    ``tol``) cut at the best threshold of any of them: the pool behind that
    threshold holds k items better than anything below the cut.  Each pool
    also keeps ``part``, a lower bound of the ``share``-th largest approximate
    score it has seen (``share = ceil(k / P)`` with ``P`` pools): the pools
    see disjoint corpus rows, so together they have seen at least ``k``
    distinct items scoring at least the smallest of their ``part`` values,
    which is then a lower bound of the k-th best of the union, about twice as
    tight as any one pool's own threshold with two workers (half as many
    candidates admitted once the first blocks are done).  Rows that
    still overflow after that (many near-equal scores) are pruned exactly with
    canonical scores and id ranks, so the pool stays bounded even for
    massive ties.
    """

    def __init__(self, nrows: int, kk: int, tol: np.ndarray, rescore, id_rank: np.ndarray,
                 index_dtype=np.int64, *, norm_bound: float = 1.0) -> None:
        self.kk = kk
        self.tol = tol  # (nrows,) float64 bound of |approx - canonical| for two items
        self.norm_bound = norm_bound  # the largest corpus row norm ``tol`` covers (grows with normalized=True)
        self.cap0 = kk + max(_POOL_SLACK, kk // 2)
        self.cap = self.cap0
        self.s = np.full((nrows, self.cap), _NEG_INF, dtype=np.float32)
        self.index_dtype = index_dtype  # int32 when the corpus has < 2**31 rows
        self.i = np.full((nrows, self.cap), -1, dtype=index_dtype)
        self.fill = np.zeros(nrows, dtype=np.int64)
        self.thr = np.full(nrows, -np.inf, dtype=np.float64)
        # lower bound of the share-th best approximate score seen (share = ceil(kk / pools)); grows only
        self.part = np.full(nrows, -np.inf, dtype=np.float64)
        self.sparse = False  # few rows got candidates from the last block
        self.rescore = rescore  # (rows, corpus indices) -> canonical float32 scores
        self.id_rank = id_rank
        self.peers: list[_Candidates] = []  # pools whose thresholds this one may use

    def share(self) -> int:
        """The rank whose score ``part`` bounds: ``ceil(kk / pools)``, this pool and its peers."""
        return -(-self.kk // (len(self.peers) + 1))

    def bound(self) -> np.ndarray:
        """Per row, a lower bound of the k-th best approximate score seen by this pool and its peers:
        the best of their thresholds and of the smallest of their ``part`` values (a peer's may be
        mid-update: every value it ever holds is a valid bound)."""
        thr = self.thr
        if self.peers:
            low = self.part
            for peer in self.peers:
                thr = np.maximum(thr, peer.thr)
                low = np.minimum(low, peer.part)
            thr = np.maximum(thr, low)
        return thr

    def skip_rows(self, rows: np.ndarray) -> None:
        """Rows answered elsewhere (zero queries): never admit candidates."""
        self.thr[rows] = np.inf
        self.part[rows] = np.inf

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
        init = np.isneginf(self.thr)  # this pool's own bounds (a peer's alone leave its share unknown)
        if m >= kk and init.any():
            # rows without a threshold yet: a lower bound of the block's own k-th best is one
            # (a few rows at a time: small temporaries)
            rows = np.flatnonzero(init)
            step = max(1, 2**20 // m)
            share = self.share() if self.peers else None
            for s in range(0, rows.size, step):
                part = rows[s : s + step]
                kth, sth = _kth_lower_bound(scores[part], kk, share)
                self.thr[part] = np.maximum(self.thr[part], kth)
                self.part[part] = np.maximum(self.part[part], sth)
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
        if self.peers:
            share = self.share()
            ranked = np.partition(self.s, cap - kk, axis=1)  # then the share-th among the kk best
            sth = np.partition(ranked[:, cap - kk :], kk - share, axis=1)[:, kk - share]
            self.part = np.maximum(self.part, sth.astype(np.float64))
            kth = ranked[:, cap - kk].astype(np.float64)
        else:
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
        best, _ = _exact_order(self.rescore(rows, cand), cand, keep, self.id_rank, self.kk)
        out = np.zeros(keep.shape, dtype=bool)
        np.put_along_axis(out, best, True, axis=1)
        return out


def _merged_pool(pools: list[_Candidates], r0: int, r1: int, rescore) -> _Candidates:
    """One pool for rows ``r0:r1`` holding the candidates of every worker's pool."""
    first = pools[0]
    out = _Candidates(r1 - r0, first.kk, np.max([p.tol[r0:r1] for p in pools], axis=0), rescore, first.id_rank,
                      first.index_dtype, norm_bound=max(p.norm_bound for p in pools))
    out.s = np.concatenate([p.s[r0:r1] for p in pools], axis=1)
    out.i = np.concatenate([p.i[r0:r1] for p in pools], axis=1)
    out.cap = out.s.shape[1]
    out.fill = np.count_nonzero(out.i >= 0, axis=1).astype(np.int64)
    # each worker's threshold is a lower bound of the k-th best of the union, and so is the smallest of
    # their share bounds when each pool bounds its ceil(k / pools)-th best (see _Candidates)
    out.thr = np.max([p.thr[r0:r1] for p in pools], axis=0)
    if all(len(p.peers) == len(pools) - 1 for p in pools) and len(pools) > 1:
        out.thr = np.maximum(out.thr, np.min([p.part[r0:r1] for p in pools], axis=0))
    return out


def _finish(pool: _Candidates) -> tuple[np.ndarray, np.ndarray]:
    """Canonical re-scoring of a pool and exact ordering: score desc, then id rank asc."""
    kk, rescore, id_rank = pool.kk, pool.rescore, pool.id_rank
    pool.compact()
    width = int(pool.fill.max(initial=0))
    cand_i = pool.i[:, :width]
    valid = cand_i >= 0
    best, neg = _exact_order(rescore(np.arange(cand_i.shape[0]), cand_i), cand_i, valid, id_rank, kk)
    top_i = np.take_along_axis(cand_i, best, axis=1)
    top_s = -np.take_along_axis(neg, best, axis=1)
    if width < kk:
        top_i = np.pad(top_i, ((0, 0), (0, kk - width)), constant_values=-1)
        top_s = np.pad(top_s, ((0, 0), (0, kk - width)), constant_values=-np.inf)
    return top_i, np.where(top_i >= 0, top_s, _NEG_INF).astype(np.float32)


def _answer_zero_queries(top_i: np.ndarray, top_s: np.ndarray, rows: np.ndarray, own: np.ndarray | None,
                         id_order: np.ndarray) -> None:
    """Fill in place the answers of the all-zero queries ``rows`` of ``top_i``/``top_s`` (R, kk).

    A zero query scores 0 against everything: its list is the first ids in
    string order (``id_order``, the argsort of the corpus ids), without its
    own row (``own[r]``, ``-1`` = none; ``own=None``: no exclusion).
    """
    kk = top_i.shape[1]
    for r in rows:
        picks = id_order[: kk + 1]
        picks = picks[picks != (-1 if own is None else own[r])][:kk]
        top_i[r] = -1
        top_i[r, : picks.size] = picks
        top_s[r] = np.where(top_i[r] >= 0, np.float32(0.0), _NEG_INF)

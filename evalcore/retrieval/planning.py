"""Block planning: how many query and corpus rows one step of the search holds.

Pure arithmetic on sizes.  A backend plans with the memory budget and the
number of workers that share it on one machine; the result never changes the
scores or the order (see :mod:`evalcore.retrieval`), only speed and memory.
"""

from __future__ import annotations

_RESCORE_BYTES = 8 * 2**20


def _pool_slot_bytes(n: int) -> int:
    """Bytes per candidate-pool slot (kept arrays + compaction temporaries), see :func:`_plan_blocks`."""
    return 24 if n < 2**31 else 28


def _rescore_chunk_bytes(block_bytes: int) -> int:
    """Working set of one chunk of canonical re-scoring: cache-sized, within the budget."""
    return max(1, min(int(block_bytes) // 4, _RESCORE_BYTES))


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

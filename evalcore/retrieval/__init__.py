"""Exact top-k retrieval by cosine similarity, in bounded memory.

Scores follow seed 001 §2.3: every vector is normalised once,
``u / (||u|| + eps)``, and the cosine is the dot product of the normalised
vectors.  Rankings follow seed 001 §3: score descending, then corpus id
ascending (string order) for determinism.

How :func:`exact_topk` works
----------------------------
0. :func:`exact_topk` (:mod:`~evalcore.retrieval.search`) checks every input
   once (:mod:`~evalcore.retrieval.inputs`), resolves the ids (their ranks,
   each query's own row) and hands a task to a backend
   (:mod:`~evalcore.retrieval.backends`): worker threads in this process
   (:mod:`~evalcore.retrieval.local`), or, for a corpus of shard files,
   pieces of shards searched apart and merged
   (:mod:`~evalcore.retrieval.sharded`), in this process or on a Dask
   cluster (:mod:`~evalcore.retrieval.dask_backend`).
1. Queries and corpus are processed in blocks (``block_bytes`` bounds the
   per-block working set, :mod:`~evalcore.retrieval.planning`); each corpus
   block is read (a read-only memmap is streamed, never loaded whole) and
   normalised on the fly, and the block of scores is one float32 BLAS product
   ``Qn @ Cn.T`` (:mod:`~evalcore.retrieval.blocks`).
2. Per query, a running threshold (the k-th best score seen so far) discards
   almost every score with one vectorised comparison; the survivors are kept
   in a candidate pool (:mod:`~evalcore.retrieval.pools`).
3. float32 BLAS results depend, in their last bits, on the shape of the
   blocks, so two identical documents may get scores that differ by one ulp.
   Step 2 therefore keeps every candidate within a proven rounding bound of
   the k-th score, and the survivors are re-scored canonically
   (:mod:`~evalcore.retrieval.scoring`): the float64 sum (pairwise, fixed
   order) of the exact float64 products of the float32 normalised vectors,
   rounded to float32.  Ordering uses those scores and the id rank, so results
   (indices *and* scores) do not depend on block sizes, thread counts or on
   whether the corpus is memory-mapped, and ties are broken by id exactly,
   also across the k boundary and block boundaries.
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

Modules
-------
``search`` (:func:`exact_topk`), ``backends`` (the task a backend receives and
the result it returns), ``local`` (the threaded backend), ``sharded`` (pieces
of shards and the merge of their lists), ``dask_backend`` (the Dask backend;
``distributed`` imported only there), ``blocks`` (the
per-block work every backend runs), ``pools`` (candidate pools, merging, the
exact order), ``scoring`` (normalisation, canonical scores), ``planning``
(block sizes), ``inputs`` (checks, :func:`normalize`, :func:`load_npy_mmap`),
``result`` (:class:`TopK`), ``sampling`` (:func:`sample_queries`,
:func:`sample_pairs`, :func:`similarity_agreement`).  Imports go one way:
scoring, planning, backends and result import no other module of the package;
inputs and pools import scoring; blocks imports backends, inputs, pools and
scoring; local imports backends, blocks and planning; sharded imports backends,
inputs, local, planning and scoring; dask_backend imports backends and
sharded; search imports backends, inputs, local, sharded, dask_backend and
result; sampling imports inputs and scoring.  Nothing here imports
:mod:`evalcore.io` (which imports this package): a sharded corpus
(:class:`evalcore.io.shards.ShardSet`) is used through the
:class:`~evalcore.retrieval.sharded.ShardedCorpus` protocol.
"""

from __future__ import annotations

from .inputs import count_zero_rows, load_npy_mmap, normalize
from .result import TopK, topk_to_long
from .sampling import sample_pairs, sample_queries, similarity_agreement
from .search import exact_topk

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

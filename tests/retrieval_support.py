"""Shared helpers of the retrieval tests: an independent brute-force oracle and forced block sizes.

The oracle is the full similarity matrix (float64 products of the float32-normalised vectors,
rounded to float32) and, per query, ``np.lexsort((id_rank, -scores))``.
"""

from __future__ import annotations

import contextlib
import warnings
from unittest import mock

import numpy as np

from evalcore.errors import (
    EvalcoreWarning,
)
from evalcore.retrieval import (
    TopK,
    exact_topk,
    local,
)

# --------------------------------------------------------------------------- reference


def ref_normalize(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Seed 001 §2.3, u / (||u|| + eps), in float32 like the engine."""
    x32 = np.asarray(x, dtype=np.float32)
    norms = np.sqrt((x32.astype(np.float64) ** 2).sum(axis=1))
    return x32 / (norms + eps).astype(np.float32)[:, None]


def brute_topk(queries, corpus, k, corpus_ids, query_ids=None, exclude_self=False):
    """Full similarity matrix + lexsort((id_rank, -score)); -1/-inf padding like TopK."""
    sims = (ref_normalize(queries).astype(np.float64) @ ref_normalize(corpus).astype(np.float64).T)
    sims = sims.astype(np.float32)
    ids = [str(x) for x in corpus_ids]
    id_rank = np.empty(len(ids), dtype=np.int64)
    id_rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    allowed = np.ones(sims.shape, dtype=bool)
    if exclude_self:
        for i, q in enumerate(query_ids):
            allowed[i] &= np.array([c != str(q) for c in ids])
    all_self = exclude_self and len(query_ids) > 0 and all(str(q) in ids for q in query_ids)
    width = min(k, len(ids) - 1) if all_self else min(k, len(ids))
    out_i = np.full((sims.shape[0], width), -1, dtype=np.int64)
    out_s = np.full((sims.shape[0], width), -np.inf, dtype=np.float32)
    for i in range(sims.shape[0]):
        order = np.lexsort((id_rank, -sims[i]))
        order = order[allowed[i][order]][:width]
        out_i[i, : order.size] = order
        out_s[i, : order.size] = sims[i, order]
    return out_i, out_s


def assert_same(topk: TopK, ref) -> None:
    ref_i, ref_s = ref
    np.testing.assert_array_equal(topk.indices, ref_i)
    np.testing.assert_array_equal(topk.scores, ref_s)
    assert topk.indices.dtype == np.int64 and topk.scores.dtype == np.float32


def shuffled_ids(rng, n, prefix="d"):
    # string order differs from numeric order ("d10" < "d2") and from row order
    return np.array([f"{prefix}{x}" for x in rng.permutation(n)])


# (query rows, corpus rows) per block forced on the engine; None = its own plan.
# Tiny corpus blocks (1, 7) are narrower than k, so the top-k is assembled across
# many blocks and ties straddle block boundaries.
BLOCKS = [(1, 1), (3, 7), (16, 50), None]


def forced_blocks(blocks):
    if blocks is None:
        return contextlib.nullcontext()
    bq, bc = blocks
    return mock.patch.object(local, "_plan_blocks", lambda nq, n, d, kk, budget, workers=2: (min(nq, bq), min(n, bc)))


def topk(*args, blocks=None, **kwargs):
    with forced_blocks(blocks), warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        return exact_topk(*args, **kwargs)


# --------------------------------------------------------------------------- shards


def write_shards(folder, vectors, ids, cuts, *, kinds=None, prefix="part-"):
    """Rows cuts[i]:cuts[i+1] as shard i (.npy + X_ids.txt, or .npz); returns the shard paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
        kind = (kinds or ["npy"])[i % len(kinds or ["npy"])]
        path = folder / f"{prefix}{i}.{'npy' if kind == 'npy' else 'npz'}"
        if kind == "npy":
            np.save(path, vectors[a:b])
            (folder / f"{prefix}{i}_ids.txt").write_text("".join(f"{x}\n" for x in ids[a:b]))
        elif kind == "npz":
            np.savez(path, ids=np.asarray(ids[a:b]), embeddings=vectors[a:b])
        else:
            np.savez_compressed(path, ids=np.asarray(ids[a:b]), embeddings=vectors[a:b])
        paths.append(path)
    return paths


def tie_heavy(rng, n, d=6):
    """Small integer vectors (many exact duplicates: ties) with ids whose string order crosses the shards."""
    c = rng.integers(-2, 3, size=(n, d)).astype(np.float32)
    c[1] = 0  # an all-zero document
    ids = np.array([f"d{x}" for x in rng.permutation(n)])  # "d10" < "d2": neither row nor numeric order
    return c, ids

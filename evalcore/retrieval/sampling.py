"""Sampling (seed 000's query sample and item pairs) and the similarity agreement of two embeddings."""

from __future__ import annotations

import numpy as np

from ..defaults import SEED, SIMILARITY_PAIRS
from ..errors import EmptyInputError, OptionError, ShapeMismatchError, warn
from .inputs import _as_ids, _as_matrix, _check_finite, _row_chunk
from .scoring import _normalize_rows


def sample_queries(ids, n: int, *, seed: int) -> np.ndarray:
    """Positions of ``n`` query ids drawn as seed 000 step 3 does.

    Returns ``np.random.RandomState(seed).choice(len(ids), n, replace=False)``,
    which is exactly what ``np.random.seed(seed); np.random.choice(len(ids), n,
    replace=False)`` gives (same generator, same stream), in that drawn order.
    When ``n >= len(ids)`` every position is returned in the original order
    ``0, 1, ..., len(ids) - 1``.  Select the ids with ``ids[positions]``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise OptionError(f"the number of sampled queries must be an integer >= 0, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise OptionError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    total = len(ids)
    if n >= total:
        return np.arange(total, dtype=np.int64)
    return np.random.RandomState(int(seed)).choice(total, int(n), replace=False).astype(np.int64)


def sample_pairs(n_items: int, n_pairs: int, *, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """The item pairs :func:`similarity_agreement` compares: ``(i, j)`` arrays.

    ``n_pairs`` ordered pairs with ``i != j``, uniform and with replacement,
    drawn by ``np.random.RandomState(seed)``: ``i = randint(0, n)``,
    ``j = randint(0, n - 1)`` then ``j += (j >= i)``.
    """
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 2:
        raise OptionError(f"need at least 2 items to form pairs, got {n_items!r}")
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, (int, np.integer)) or n_pairs <= 0:
        raise OptionError(f"n_pairs must be a positive integer, got {n_pairs!r}")
    rs = np.random.RandomState(seed)
    i = rs.randint(0, n_items, size=int(n_pairs)).astype(np.int64)
    j = rs.randint(0, n_items - 1, size=int(n_pairs)).astype(np.int64)
    j += j >= i
    return i, j


def similarity_agreement(reference, model, *, n_pairs: int = SIMILARITY_PAIRS, seed: int = SEED, ids=None) -> dict:
    """Seed 000's training metrics: how well ``model`` similarities track ``reference``.

    ``reference`` (e.g. Ada-002) and ``model`` embed the same items, row ``i``
    of both being item ``i`` (dimensions may differ).  ``n_pairs`` ordered pairs
    ``(i, j)``, ``i != j``, are drawn uniformly with replacement by
    ``np.random.RandomState(seed)`` (:func:`sample_pairs`; by default 10,000 pairs and seed 42,
    :mod:`evalcore.defaults`, as everywhere else); on those same pairs the cosines of both
    spaces are compared.  Returns ``{"spearman": rho (scipy.stats.spearmanr),
    "mae": mean |cos_ref - cos_model|, "n_pairs": n_pairs}``.  ``ids`` (one per
    row, optional) only serves error messages.  Spearman is NaN (with a
    warning) when one side's similarities are all equal.
    """
    from scipy.stats import spearmanr

    ref = _as_matrix(reference, "reference")
    mod = _as_matrix(model, "model")
    if ref.shape[0] != mod.shape[0]:
        raise ShapeMismatchError(
            f"reference has {ref.shape[0]} rows but model has {mod.shape[0]}; rows must be the same items"
        )
    nrows = ref.shape[0]
    id_arr = None
    if ids is not None:
        id_arr = _as_ids(ids, "ids")
        if id_arr.shape[0] != nrows:
            raise ShapeMismatchError(f"the embeddings have {nrows} rows but ids has {id_arr.shape[0]} ids")
    if nrows < 2:
        raise EmptyInputError(f"need at least 2 items to form pairs, got {nrows}")
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, (int, np.integer)) or n_pairs <= 0:
        raise OptionError(f"n_pairs must be a positive integer, got {n_pairs!r}")
    _check_finite(ref, "reference", id_arr)
    _check_finite(mod, "model", id_arr)
    if n_pairs > nrows * (nrows - 1):
        warn(f"{int(n_pairs):,} pairs drawn (with replacement) among only {nrows * (nrows - 1):,} distinct ordered "
             f"pairs of {nrows:,} items: most are repeats")
    i, j = sample_pairs(nrows, n_pairs, seed=seed)

    def cosines(emb: np.ndarray) -> np.ndarray:
        out = np.empty(i.shape[0], dtype=np.float64)
        step = _row_chunk(emb.shape[1])
        for s in range(0, i.shape[0], step):
            a = _normalize_rows(emb[i[s : s + step]], 1e-12).astype(np.float64)
            b = _normalize_rows(emb[j[s : s + step]], 1e-12).astype(np.float64)
            out[s : s + step] = np.einsum("ij,ij->i", a, b)
        return out

    sim_ref, sim_mod = cosines(ref), cosines(mod)
    mae = float(np.mean(np.abs(sim_ref - sim_mod)))
    if np.ptp(sim_ref) == 0 or np.ptp(sim_mod) == 0:
        warn("similarities of one model are all equal on the sampled pairs; Spearman is undefined (NaN)")
        rho = float("nan")
    else:
        rho = float(spearmanr(sim_ref, sim_mod).statistic)
    return {"spearman": rho, "mae": mae, "n_pairs": int(n_pairs)}

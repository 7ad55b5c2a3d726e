"""Weighted reciprocal rank fusion (seed 001 §7) and a seeded random baseline (seed 001 §10)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .data import Run
from .errors import OptionError
from .ranking import rank_order

__all__ = ["weighted_rrf", "random_run"]


def weighted_rrf(
    runs: Sequence[Run] | Mapping[str, Run],
    *,
    weights: Mapping[str, float] | Sequence[float] | None = None,
    c: float = 60.0,
    top_n: int | None = None,
    ties: str = "docid_asc",
    name: str = "rrf",
) -> Run:
    """Fuse runs by weighted reciprocal rank.

    ``RRF(q, d) = Σ_S w_S / (c + rank_S(q, d))`` where ``rank_S`` is the
    1-based rank of d in run S (its evaluation order under ``ties``). With
    ``top_n``, only the first ``top_n`` documents of each list take part: a
    document absent from (or cut from) a list contributes 0 for that list.
    Candidates are the union of the (cut) lists of every run for the query.

    The fused run's score is the RRF value; equal RRF values are ordered by
    the tie rule used when the fused run is evaluated — ``docid_asc`` reproduces
    seed 001 §7.2 ("tie-breaker: d ascending").

    Parameters
    ----------
    runs : sequence of Run or mapping name -> Run
    weights : mapping run name -> weight, or sequence in run order; default 1 each.
        Weights must be finite and >= 0, not all 0.
    c : float, default 60
        Must be > -1 so that every denominator is positive.
    top_n : int, optional
        Truncation depth per input list.
    ties : str
        Tie rule used to rank each *input* run (see :mod:`evalcore.ranking`).
    name : str
        Name of the fused run.

    Returns
    -------
    Run

    Examples
    --------
    >>> a = Run.from_ranked_lists({"q": ["x", "y"]}, name="a")
    >>> b = Run.from_ranked_lists({"q": ["y", "z"]}, name="b")
    >>> f = weighted_rrf([a, b], weights={"a": 1.0, "b": 2.0}, c=60)
    >>> round(f.to_dict()["q"]["y"], 6) == round(1 / 62 + 2 / 61, 6)
    True
    """
    run_list = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    if not run_list:
        raise OptionError("fusion needs at least one run")
    names = [r.name for r in run_list]
    if len(set(names)) != len(names):
        raise OptionError(f"runs to fuse must have distinct names, got {names}")
    if weights is None:
        w = [1.0] * len(run_list)
    elif isinstance(weights, Mapping):
        unknown = set(weights) - set(names)
        if unknown:
            raise OptionError(f"weights given for unknown runs {sorted(unknown)}; runs are {names}")
        w = [float(weights.get(n, 1.0)) for n in names]
    else:
        w = [float(x) for x in weights]
        if len(w) != len(run_list):
            raise OptionError(f"{len(w)} weights for {len(run_list)} runs")
    if any(not np.isfinite(x) or x < 0 for x in w) or not any(x > 0 for x in w):
        raise OptionError(f"weights must be finite, >= 0 and not all 0, got {w}")
    if not np.isfinite(c) or c <= -1:
        raise OptionError(f"c must be a finite number > -1, got {c}")
    if top_n is not None and top_n < 1:
        raise OptionError(f"top_n must be >= 1, got {top_n}")

    qs, ds, contrib = [], [], []
    for run, weight in zip(run_list, w, strict=True):
        order, pos = rank_order(run, ties=ties)
        keep = np.ones(len(order), dtype=bool) if top_n is None else pos < top_n
        rows = order[keep]
        qs.append(run.query_ids[run.q[rows]])
        ds.append(run.doc_vocab[run.d[rows]])
        contrib.append(weight / (c + (pos[keep] + 1).astype(np.float64)))
    frame = pd.DataFrame({"q": np.concatenate(qs), "d": np.concatenate(ds), "s": np.concatenate(contrib)})
    fused = frame.groupby(["q", "d"], sort=False, observed=True)["s"].sum()
    qv = fused.index.get_level_values(0).to_numpy(dtype=object)
    dv = fused.index.get_level_values(1).to_numpy(dtype=object)
    return Run.from_records(qv, dv, fused.to_numpy(), name=name, check_duplicates=False)


def random_run(
    query_ids: Sequence[str],
    candidates: Sequence[str] | Mapping[str, Sequence[str]],
    *,
    depth: int | None = None,
    seed: int = 0,
    exclude_self: bool = False,
    name: str = "random",
) -> Run:
    """A seeded random baseline (seed 001 §10 "random baseline for sanity checks").

    For each query, the candidates (one shared list, or one list per query) are
    given i.i.d. uniform scores from ``numpy.random.default_rng(seed)``, queries
    drawn in the order given; with ``exclude_self`` a query is never its own
    candidate (item-to-item); ``depth`` keeps the best ``depth`` per query.
    The same arguments always give the same run.
    """
    rng = np.random.default_rng(seed)
    qs, ds, ss = [], [], []
    shared = None if isinstance(candidates, Mapping) else np.asarray(list(candidates), dtype=object)
    for qid in query_ids:
        cand = shared if shared is not None else np.asarray(list(candidates.get(qid, [])), dtype=object)
        if exclude_self:
            cand = cand[cand != qid]
        scores = rng.random(len(cand))
        if depth is not None and depth < len(cand):
            top = np.argsort(-scores, kind="stable")[:depth]
            cand_q, scores = cand[top], scores[top]
        else:
            cand_q = cand
        qs.append(np.full(len(cand_q), qid, dtype=object))
        ds.append(cand_q)
        ss.append(scores)
    if not qs or sum(len(x) for x in qs) == 0:
        raise OptionError("random baseline has no candidates")
    return Run.from_records(np.concatenate(qs), np.concatenate(ds), np.concatenate(ss), name=name)

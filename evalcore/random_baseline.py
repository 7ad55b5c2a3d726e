"""A seeded random baseline run (seed 001 §10 "random baseline for sanity checks"), importable as
:func:`evalcore.fusion.random_run` too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .data import Run
from .defaults import SEED
from .errors import OptionError

__all__ = ["EXHAUSTIVE", "random_run"]

#: The :attr:`~evalcore.data.Run.search_depth` of a run listing every candidate of every query (a search to any
#: depth gives the same lists): deeper than any cutoff, so evaluation never calls it shallow.
EXHAUSTIVE = 2**62


def random_run(
    query_ids: Sequence[str],
    candidates: Sequence[str] | Mapping[str, Sequence[str]],
    *,
    depth: int | None = None,
    seed: int = SEED,
    exclude_self: bool = False,
    name: str = "random",
) -> Run:
    """A seeded random baseline (seed 001 §10 "random baseline for sanity checks").

    For each query, the candidates (one shared list, or one list per query) are
    given i.i.d. uniform scores from ``numpy.random.default_rng(seed)`` (seed default 42,
    :data:`evalcore.defaults.SEED`), queries
    drawn in the order given; with ``exclude_self`` a query is never its own
    candidate (item-to-item); ``depth`` keeps the best ``depth`` per query.
    The same arguments always give the same run.

    A run listing every candidate of every query (no ``depth``, or none below a query's candidates) is marked so:
    its :attr:`~evalcore.data.Run.search_depth` is :data:`EXHAUSTIVE` (a search to any depth lists the same
    candidates), and evaluation does not call it shallow where a query has fewer candidates than a cutoff (a list
    cannot be longer than its candidates); not the most candidates a query has, which would read as a search cut
    at that depth. A run ``depth`` cut is not marked: evaluated at a k above ``depth`` it is shallow by choice, and
    said so.
    """
    rng = np.random.default_rng(seed)
    qs, ds, ss = [], [], []
    shared = None if isinstance(candidates, Mapping) else np.asarray(list(candidates), dtype=object)
    cut = False
    for qid in query_ids:
        cand = shared if shared is not None else np.asarray(list(candidates.get(qid, [])), dtype=object)
        if exclude_self:
            cand = cand[cand != qid]
        scores = rng.random(len(cand))
        if depth is not None and depth < len(cand):
            top = np.argsort(-scores, kind="stable")[:depth]
            cand_q, scores = cand[top], scores[top]
            cut = True
        else:
            cand_q = cand
        qs.append(np.full(len(cand_q), qid, dtype=object))
        ds.append(cand_q)
        ss.append(scores)
    if not qs or sum(len(x) for x in qs) == 0:
        raise OptionError("random baseline has no candidates")
    run = Run.from_records(np.concatenate(qs), np.concatenate(ds), np.concatenate(ss), name=name)
    return run if cut else run.searched(EXHAUSTIVE)  # every candidate listed: never shallow

"""Evaluation: runs × qrels → one long per-query table.

:func:`evaluate` is the engine's central call. It returns an
:class:`Evaluation` whose ``table`` has one row per run × qrels query ×
metric × k with columns ``run, query_id, domain, metric, k, value``. Every
aggregate (means, CIs, per-domain views, comparisons) is computed from that
table (:mod:`evalcore.aggregate`, :mod:`evalcore.stats`).

Missing data (counted per run in ``Evaluation.coverage``):

* a qrels query absent from a run is scored 0 for that run on every metric and
  counted in ``n_missing`` (trec_eval ``-c``); ``first_rel_rank`` is NaN there;
* a run query absent from the qrels is ignored and counted in ``n_ignored``;
* a qrels query with no relevant document (no grade >= θ) follows
  ``no_relevant``: ``"zero"`` (default, trec_eval) keeps it — each metric then
  takes its formula's value, 0 for all binary ones — and ``"skip"`` drops it
  from the table; either way it is counted in ``n_no_relevant``.

Judged-only mode (``judged_only=True``, trec_eval ``-J``): before scoring, every
retrieved document without a judgment of grade >= 0 is removed from the run
(documents absent from the qrels, and negative grades, which trec_eval reads as
"in the pool but not judged"); the others move up, keeping their order. Every
metric then sees the shorter list (``num_ret`` counts it, ``judged@k`` is 1).

Several runs are evaluated by up to ``workers`` threads at once (each run's
evaluation depends on that run and the qrels only; mostly numpy work, which
releases the GIL): the table is the same, row for row, whatever ``workers``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._columns import factorize_strings, name_index, positions_in
from ._threads import in_caller_context, thread_count
from .coverage import missing_queries_problem
from .data import Qrels, Run
from .errors import OptionError, strict_coverage, warn
from .evaluation import Evaluation
from .evaluation_notes import largest_cutoff, run_notes, warn_threshold_above_grades
from .measures import Measure, expand_measures
from .metrics import ALL_METRICS, K_ALL, K_FREE, WHOLE_LIST, Judged
from .ranking import _group_positions, canonical_ties, rank_order
from .results import ResultColumns

__all__ = ["Evaluation", "evaluate", "judged_rows", "DEFAULT_METRICS"]

DEFAULT_METRICS = ("ndcg", "recall", "mrr", "map")
NO_RELEVANT_POLICIES = ("zero", "skip")
TABLE_COLUMNS = ["run", "query_id", "domain", "metric", "k", "value"]
_CHUNK_CELLS = 8_000_000  # grade-matrix cells per block of queries (bounded memory)


def _as_run_map(runs: Run | Mapping[str, Run] | Sequence[Run]) -> dict[str, Run]:
    if isinstance(runs, Run):
        return {runs.name: runs}
    if isinstance(runs, Mapping):
        for n, r in runs.items():
            _check_is(r, Run, f"run {str(n)!r}", "evalcore.io.load_run(path)")
        return {str(n): (r if r.name == n else r.renamed(str(n))) for n, r in runs.items()}
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Iterable):
        _check_is(runs, Run, "runs", "evalcore.io.load_run(path)")
    out: dict[str, Run] = {}
    for r in runs:
        _check_is(r, Run, "each run", "evalcore.io.load_run(path)")
        if r.name in out:
            raise OptionError(f"two runs are named {r.name!r}; give each run a distinct name")
        out[r.name] = r
    return out


def _check_is(value: Any, kind: type, what: str, how: str) -> None:
    """:class:`OptionError` unless ``value`` is a ``kind`` (a path where a loaded object is expected...)."""
    if not isinstance(value, kind):
        raise OptionError(f"{what} must be a {kind.__name__} (read a file with {how}), got {type(value).__name__}"
                          f"{f' {value!r}' if isinstance(value, (str, os.PathLike)) else ''}")


def _cutoffs(k: Iterable[int] | int) -> list[int]:
    """``k`` as sorted distinct positive integers (a bool, a fraction or a string is refused, not rounded)."""
    items = [k] if isinstance(k, (int, np.integer)) else list(k) if isinstance(k, Iterable) and not isinstance(
        k, (str, bytes)) else [k]
    bad = [x for x in items if isinstance(x, (bool, np.bool_)) or not (
        isinstance(x, (int, np.integer)) or (isinstance(x, (float, np.floating)) and float(x).is_integer()))]
    if bad:
        raise OptionError(f"cutoffs must be integers >= 1, got {bad[0]!r}")
    ks = [int(x) for x in items]
    if not ks:
        raise OptionError("give at least one cutoff k")
    if any(x < 1 for x in ks):
        raise OptionError(f"cutoffs must be >= 1, got {sorted(set(ks))}")
    return sorted(set(ks))


def _qrels_index(qrels: Qrels) -> dict[str, Any]:
    """Dense integer view of the qrels, computed once per Qrels object."""
    hit = qrels._cache.get("index")
    if hit is not None:
        return hit
    codes, vocab = factorize_strings(qrels.doc_ids)
    v = max(len(vocab), 1)
    keys = qrels.q.astype(np.int64) * v + codes
    order = np.argsort(keys, kind="stable")
    # ideal: positive grades sorted descending inside each query
    pos_mask = qrels.grades > 0
    pq = qrels.q[pos_mask]
    pg = qrels.grades[pos_mask]
    io = np.lexsort((-pg, pq))
    pq, pg = pq[io], pg[io]
    ipos = _group_positions(pq)
    # judgments per grade >= 0 and query (nDCG gain maps, bpref's non-relevant count)
    nonneg = qrels.grades >= 0
    levels, lev = np.unique(qrels.grades[nonneg], return_inverse=True)
    nl = max(len(levels), 1)
    counts = np.bincount(qrels.q[nonneg].astype(np.int64) * nl + lev, minlength=qrels.n_queries * nl)
    hit = {
        "vocab": vocab,
        "n_vocab": v,
        "keys": keys[order],
        "key_grades": qrels.grades[order],
        "ideal_q": pq,
        "ideal_g": pg,
        "ideal_pos": ipos,
        "query_ids": qrels.query_ids,
        "levels": levels.astype(np.int64),
        "level_counts": counts.reshape(qrels.n_queries, nl)[:, : len(levels)],
    }
    qrels._cache["index"] = hit
    return hit


@dataclass(frozen=True)
class _Prepared:
    """One run aligned with the qrels: ranked rows grouped by qrels query."""

    qi: np.ndarray  # qrels query index per kept row, sorted ascending
    pos: np.ndarray  # 0-based rank per kept row
    grade: np.ndarray  # grade per kept row (0 unjudged)
    judged: np.ndarray  # bool per kept row: the qrels judge the document for the query
    n_ret: np.ndarray  # (nQ,)
    n_listed: np.ndarray  # (nQ,) documents the run lists per query (n_ret before judged-only removals)
    n_ignored: int
    n_missing: int  # qrels queries the run does not list (before judged-only removals)


def worker_count(workers: int | None, n_runs: int) -> int:
    """Threads for ``n_runs`` runs: ``workers`` (default: the cores this process may use), at most one a run."""
    return max(1, min(thread_count(workers, name="workers"), n_runs))


def _prepare(qrels: Qrels, run: Run, *, ties: str, judged_only: bool = False) -> _Prepared:
    key = ("prepared", ties, judged_only)
    hit = run._cache.get(key)
    if hit is not None and hit[0] is qrels:
        return hit[1]
    idx = _qrels_index(qrels)
    order, pos = rank_order(run, ties=ties)
    qmap = positions_in(idx["query_ids"], run.query_ids, where=_where(idx, "query_ids"))
    n_ignored = int((qmap < 0).sum())
    qi = qmap[run.q[order]]
    keep = qi >= 0
    rows = order
    if not keep.all():  # (copies only when some run queries are not in the qrels)
        qi, pos, rows = qi[keep], pos[keep], order[keep]
    grade, judged = _row_grades(qrels, run, rows, qi)
    # group rows by qrels query (runs may list queries in any order; often already in qrels order)
    if len(qi) > 1 and not bool(np.all(qi[1:] >= qi[:-1])):
        so = np.argsort(qi, kind="stable")
        qi, pos, grade, judged = qi[so], pos[so], grade[so], judged[so]
    n_missing = int(qrels.n_queries - (np.count_nonzero(qi[1:] != qi[:-1]) + 1 if len(qi) else 0))  # qi is sorted
    n_ret = n_listed = np.bincount(qi, minlength=qrels.n_queries).astype(np.int64)
    if judged_only:  # trec_eval -J: drop unjudged documents (and negative grades), close the gaps
        keep = judged & (grade >= 0)
        qi, grade, judged = qi[keep], grade[keep], judged[keep]
        pos = _group_positions(qi)
        n_ret = np.bincount(qi, minlength=qrels.n_queries).astype(np.int64)
    prep = _Prepared(qi, pos, grade, judged, n_ret, n_listed, n_ignored, n_missing)
    run._cache[key] = (qrels, prep)
    return prep


def judged_rows(qrels: Qrels, run: Run) -> np.ndarray:
    """Per row of ``run`` (bool, ``(len(run),)``): whether ``qrels`` judge its document for its query with a
    grade >= 0 — the rows ``judged_only=True`` keeps (trec_eval ``-J``)."""
    idx = _qrels_index(qrels)
    qi_all = positions_in(idx["query_ids"], run.query_ids)[run.q]
    rows = np.flatnonzero(qi_all >= 0)
    out = np.zeros(len(run), dtype=bool)
    if len(rows):
        grade, judged = _row_grades(qrels, run, rows, qi_all[rows])
        out[rows] = judged & (grade >= 0)
    return out


def _row_grades(qrels: Qrels, run: Run, rows: np.ndarray, qi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grade (0 unjudged) and judged flag of run ``rows`` whose qrels query index is ``qi``: the hash join
    when the run carries id hashes, else the join on the qrels' document codes."""
    got = _hashed_grades(qrels, run, rows, qi)
    if got is not None:
        return got
    idx = _qrels_index(qrels)
    return _coded_grades(idx, _row_doc_codes(run, idx)[rows], qi)


def _coded_grades(idx: dict[str, Any], codes: np.ndarray, qi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grade (0 when unjudged) and judged flag of each row, from its qrels document code
    (-1: in no judgment) and qrels query index."""
    grade = np.zeros(len(codes), dtype=np.int64)
    judged = codes >= 0
    if not judged.any():
        return grade, judged
    rows = None if judged.all() else np.flatnonzero(judged)
    k = qi.astype(np.int64) * idx["n_vocab"] + codes if rows is None else \
        qi[rows].astype(np.int64) * idx["n_vocab"] + codes[rows]
    # (query, document) pairs of the judgments: a bitmap of their low bits first, then an exact search
    cand = np.flatnonzero(_key_flags(idx)[k & ((1 << _BITMAP_BITS) - 1)])
    keys = idx["keys"]
    loc = np.minimum(np.searchsorted(keys, k[cand]), len(keys) - 1)
    found = keys[loc] == k[cand]
    hit = cand[found] if rows is None else rows[cand[found]]
    judged[:] = False
    judged[hit] = True
    grade[hit] = idx["key_grades"][loc[found]]
    return grade, judged


def _key_flags(idx: dict[str, Any]) -> np.ndarray:
    """Bitmap of the low :data:`_BITMAP_BITS` bits of the judgments' (query, document) keys (cached in ``idx``)."""
    flags = idx.get("key_flags")
    if flags is None:
        flags = np.zeros(1 << _BITMAP_BITS, dtype=bool)
        flags[idx["keys"] & ((1 << _BITMAP_BITS) - 1)] = True
        idx["key_flags"] = flags
    return flags


_BITMAP_BITS = 24  # prefilter of the hash join: 16 M flags, ~0.6% false hits per 100k judgments


def _qrels_pair_index(qrels: Qrels) -> dict[str, Any] | None:
    """Sorted 64-bit (query, document) keys of the judgments, with a bitmap prefilter (cached)."""
    if "pair_index" in qrels._cache:
        return qrels._cache["pair_index"]
    import pyarrow as pa

    from .data import pair_keys, string_hashes

    hit = None
    dh = qrels._cache.get("doc_hashes")
    if dh is None and len(qrels.doc_ids):
        dh = string_hashes(pa.array(qrels.doc_ids, type=pa.string()))
    if dh is not None:
        keys = pair_keys(qrels.q, dh)
        order = np.argsort(keys, kind="stable")
        flags = np.zeros(1 << _BITMAP_BITS, dtype=bool)
        flags[(keys & np.uint64((1 << _BITMAP_BITS) - 1)).astype(np.int64)] = True
        hit = {"keys": keys[order], "rows": order, "flags": flags}
    qrels._cache["pair_index"] = hit
    return hit


def _hashed_grades(
    qrels: Qrels, run: Run, rows: np.ndarray, qi: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Grades and judged flags of run rows by a hash join of (query, document) keys, every match
    verified on the strings.

    Only for runs that carry per-row document hashes (read from TREC files); None
    otherwise, or when a hash collision makes a match fail verification (the caller
    then takes the exact code path).
    """
    dh = run._cache.get("doc_hashes")
    if dh is None:
        return None
    pidx = _qrels_pair_index(qrels)
    if pidx is None:
        return None
    from .data import pair_keys

    grade = np.zeros(len(rows), dtype=np.int64)
    judged = np.zeros(len(rows), dtype=bool)
    keys = pair_keys(qi, dh[rows])
    cand = np.flatnonzero(pidx["flags"][(keys & np.uint64((1 << _BITMAP_BITS) - 1)).astype(np.int64)])
    if len(cand) == 0:
        return grade, judged
    ck = keys[cand]
    loc = np.minimum(np.searchsorted(pidx["keys"], ck), len(pidx["keys"]) - 1)
    found = pidx["keys"][loc] == ck
    cand, loc = cand[found], loc[found]
    qrow = pidx["rows"][loc]
    # verify: same query and the very same document id (a 64-bit collision falls back to exact codes)
    if not bool(np.all(qrels.q[qrow] == qi[cand])) or not _same_docs(qrels, run, qrow, rows[cand]):
        return None
    grade[cand] = qrels.grades[qrow]
    judged[cand] = True
    return grade, judged


def _same_docs(qrels: Qrels, run: Run, qrows: np.ndarray, rows: np.ndarray) -> bool:
    """Whether judgment ``qrows[i]`` and run row ``rows[i]`` name the same document, for every i (compared
    as arrow strings when both sides hold them: no Python string per row)."""
    qa, ra = qrels._cache.get("doc_arrow"), run.docs_arrow_at(rows)
    if qa is None or ra is None:
        return bool(np.all(run.docs_at(rows) == qrels.doc_ids[qrows]))
    import pyarrow.compute as pc

    from ._columns import arrow_indices

    eq = pc.equal(ra, qa.take(arrow_indices(qrows)))
    return eq.null_count == 0 and bool(pc.all(eq).as_py() is not False)


def _row_doc_codes(run: Run, idx: dict[str, Any]) -> np.ndarray:
    """Qrels document code of each run row (-1 when the document is not judged)."""
    return run.doc_codes_in(idx["vocab"], where=_where(idx, "vocab"))


def _where(idx: dict[str, Any], names: str) -> dict[str, int]:
    """``name_index(idx[names])``, built once per ground truth (not once per run evaluated against it)."""
    hit = idx.get(names + "_where")
    return hit if hit is not None else idx.setdefault(names + "_where", name_index(idx[names]))


def _first_rel(prep: _Prepared, nq: int, theta: int) -> np.ndarray:
    rel = prep.grade >= theta
    out = np.zeros(nq, dtype=np.int64)
    if rel.any():
        qr = prep.qi[rel]
        pr = prep.pos[rel]
        # rows are grouped by query and ranked within; the first relevant row per query is the min rank
        firsts = np.full(nq, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(firsts, qr, pr)
        has = firsts < np.iinfo(np.int64).max
        out[has] = firsts[has] + 1
    return out


def _judged_blocks(
    qrels: Qrels, prep: _Prepared, *, width: int, ideal_width: int, theta: int, n_rel: np.ndarray,
) -> Iterable[tuple[int, int, Judged]]:
    """Yield (lo, hi, Judged) for blocks of qrels queries with bounded memory."""
    nq = qrels.n_queries
    idx = _qrels_index(qrels)
    first = _first_rel(prep, nq, theta)
    step = max(1, _CHUNK_CELLS // max(width, ideal_width, 1))
    in_w = prep.pos < width
    qi_w, pos_w, g_w, j_w = prep.qi[in_w], prep.pos[in_w], prep.grade[in_w], prep.judged[in_w]
    iq, ig, ip = idx["ideal_q"], idx["ideal_g"], idx["ideal_pos"]
    in_iw = ip < ideal_width
    iq, ig, ip = iq[in_iw], ig[in_iw], ip[in_iw]
    for lo in range(0, nq, step):
        hi = min(nq, lo + step)
        a, b = np.searchsorted(qi_w, [lo, hi])
        grades = np.zeros((hi - lo, width), dtype=np.int64)
        grades[qi_w[a:b] - lo, pos_w[a:b]] = g_w[a:b]
        judged = np.zeros((hi - lo, width), dtype=bool)
        judged[qi_w[a:b] - lo, pos_w[a:b]] = j_w[a:b]
        c, d = np.searchsorted(iq, [lo, hi])
        ideal = np.zeros((hi - lo, ideal_width), dtype=np.int64)
        ideal[iq[c:d] - lo, ip[c:d]] = ig[c:d]
        yield lo, hi, Judged(grades, prep.n_ret[lo:hi], n_rel[lo:hi], ideal, first[lo:hi], theta, judged,
                             idx["levels"], idx["level_counts"][lo:hi])


_Key = tuple[str, int, tuple]  # (metric name, θ, parameters)


def _group_measures(measures: Sequence[Measure], theta: int) -> dict[_Key, list[Measure]]:
    groups: dict[_Key, list[Measure]] = {}
    for m in measures:
        t = theta if m.rel is None else m.rel
        groups.setdefault((m.name, t, m.params), []).append(m)
    return groups


def _eval_k(name: str, k: int | None) -> int:
    """Cutoff handed to the metric: 1 for k-free metrics, K_ALL for ``@all``."""
    if name in K_FREE or k is None:
        return 1
    return K_ALL if k == 0 else k


def _check_grades(measures: Sequence[Measure], qrels: Qrels) -> None:
    """Reject measures whose definition cannot hold the qrels' grades (ERR's g_max)."""
    top = int(qrels.grades.max(initial=0))
    for m in measures:
        if m.name == "err" and top > m.param("max_grade"):
            raise OptionError(f"{m}: the qrels hold grade {top}, above ERR's max_grade "
                              f"{m.param('max_grade')}; write err(max_grade={top})", file=qrels.source)


def _compute(
    qrels: Qrels, prep: _Prepared, groups: dict[_Key, list[Measure]], *, theta: int, base_rel: np.ndarray,
    depth: int, max_positives: int,
) -> dict[_Key, np.ndarray]:
    """Values (nQ, number of k) of every group of measures for one prepared run.

    One grade matrix per threshold θ and block of queries, shared by every
    metric using θ; its width is the largest cutoff asked for, the whole list
    for ``@all`` and the whole-list metrics, at least R for ``rprec``.
    """
    nq = qrels.n_queries
    by_theta: dict[int, list[tuple[_Key, np.ndarray]]] = {}
    for key, ms in groups.items():
        mks = sorted({0 if m.k is None else m.k for m in ms})
        by_theta.setdefault(key[1], []).append((key, np.array([_eval_k(key[0], x) for x in mks], dtype=np.int64)))
    results: dict[_Key, np.ndarray] = {}
    for t, items in by_theta.items():
        n_rel = qrels.n_relevant(t) if t != theta else base_rel
        need = 1
        for (mname, _, _), eval_ks in items:
            need = max(need, int(eval_ks.max()), depth if mname in WHOLE_LIST else 1)
            if mname == "rprec":
                need = max(need, int(n_rel.max(initial=0)))
        width = min(need, depth)
        ideal_width = min(need, max_positives)
        outs = {key: np.empty((nq, len(eval_ks)), dtype=np.float64) for key, eval_ks in items}
        for lo, hi, j in _judged_blocks(qrels, prep, width=width, ideal_width=ideal_width, theta=t, n_rel=n_rel):
            for key, eval_ks in items:
                outs[key][lo:hi] = ALL_METRICS[key[0]](j, eval_ks, **dict(key[2]))
        results.update(outs)
    return results


def evaluate(
    qrels: Qrels,
    runs: Run | Mapping[str, Run] | Sequence[Run],
    *,
    metrics: Iterable[str] | Iterable[Measure] = DEFAULT_METRICS,
    k: Iterable[int] | int = (10,),
    ties: str = "trec",
    rel_threshold: int = 1,
    no_relevant: str = "zero",
    judged_only: bool = False,
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
    strict: bool = False,
) -> Evaluation:
    """Evaluate one or many runs against graded judgments.

    Parameters
    ----------
    qrels : Qrels
    runs : Run, sequence of Run, or mapping name -> Run
    metrics : iterable of str or Measure
        Names as accepted by :func:`evalcore.measures.parse_measures` (``"ndcg"``,
        ``"recall(rel=2)"``, ``"P@5"``, ``"map@all"``, ``"bpref"``, trec_eval's
        ``"P.5,10"`` or ``"official"``...). Names without ``@k`` get every k in ``k``.
    k : int or iterable of int
        Cutoffs, each >= 1.
    ties : {"trec", "docid_asc", "input"}
        Tie rule for equal scores (see :mod:`evalcore.ranking`).
    rel_threshold : int
        θ, default 1: a document is relevant for binary metrics when grade >= θ.
        Per-measure ``(rel=N)`` overrides it. nDCG ignores it (raw grades).
    no_relevant : {"zero", "skip"}
        Policy for qrels queries with no relevant document (see module docstring).
    judged_only : bool
        trec_eval's ``-J``: remove the retrieved documents without a judgment
        (grade >= 0) before scoring (see module docstring). Default False.
    progress : callable(done, total), optional
        Called after each run, in the runs' order, in the calling thread.
    workers : int, optional
        Threads evaluating runs at once (default: the cores this process may use;
        1: one run after the other). The result does not depend on it.
    strict : bool
        A ground-truth query a run does not answer is an error (:class:`~evalcore.errors.MissingIdsError`,
        the command line's warning as its message) instead of a 0 counted in ``n_missing``; nothing is
        returned (see :func:`evalcore.errors.strict_coverage`). Default False.

    Returns
    -------
    Evaluation
        ``table`` has exactly one row per run × evaluated query × metric × k.

    Warns
    -----
    EvalcoreWarning
        A relevance threshold no grade reaches; each run shallower than the largest cutoff (most of its lists
        shorter than it; not an exact search's run), once per run (:mod:`evalcore.evaluation_notes`).

    Examples
    --------
    >>> q = Qrels.from_dict({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}})
    >>> r = Run.from_dict({"q1": {"d1": 0.9, "d4": 0.5}}, name="bm25")
    >>> ev = evaluate(q, r, metrics=["recall", "mrr"], k=[1, 10])
    >>> ev.table.groupby(["metric", "k"], observed=True)["value"].mean().round(3).tolist()
    [0.5, 0.5, 0.5, 0.5]
    >>> int(ev.coverage.loc[0, "n_missing"])   # q2 is absent from the run: scored 0
    1
    """
    _check_is(qrels, Qrels, "qrels", "evalcore.io.load_qrels(path)")
    ks = _cutoffs(k)
    ties = canonical_ties(ties)
    if no_relevant not in NO_RELEVANT_POLICIES:
        raise OptionError(f"unknown no_relevant policy {no_relevant!r}; supported: {', '.join(NO_RELEVANT_POLICIES)}")
    if int(rel_threshold) != rel_threshold or rel_threshold < 1:
        raise OptionError(f"rel_threshold must be an integer >= 1, got {rel_threshold!r}")
    theta = int(rel_threshold)
    if isinstance(metrics, (str, Measure)):
        metrics = [metrics]
    measures = expand_measures([str(m) for m in metrics], ks)
    if not measures:
        raise OptionError("give at least one metric")
    if not isinstance(judged_only, (bool, np.bool_)):
        raise OptionError(f"judged_only must be True or False, got {judged_only!r}")
    _check_grades(measures, qrels)
    warn_threshold_above_grades(qrels, theta, stacklevel=2)
    run_map = _as_run_map(runs)
    if not run_map:
        raise OptionError("give at least one run")

    nq = qrels.n_queries
    groups = _group_measures(measures, theta)
    domains = qrels.domain_of()
    base_rel = qrels.n_relevant(theta)
    no_rel_mask = base_rel == 0
    keep_q = ~no_rel_mask if no_relevant == "skip" else np.ones(nq, dtype=bool)
    keep_idx = np.flatnonzero(keep_q)
    max_positives = int(_qrels_index(qrels)["ideal_pos"].max(initial=-1)) + 1

    values: list[np.ndarray] = []
    metric_codes: list[np.ndarray] = []
    k_vals: list[np.ndarray] = []
    run_codes: list[np.ndarray] = []
    q_codes: list[np.ndarray] = []
    metric_names: list[str] = []
    cov_rows, shallow, top_k = [], [], largest_cutoff(measures)  # (runs shallower than top_k: said once each)
    n_workers = worker_count(workers, len(run_map))

    def one(run: Run) -> tuple[_Prepared, int, dict[_Key, np.ndarray]]:
        prep = _prepare(qrels, run, ties=ties, judged_only=bool(judged_only))
        depth = int(prep.n_ret.max(initial=0))
        return prep, depth, _compute(qrels, prep, groups, theta=theta, base_rel=base_rel, depth=depth,
                                     max_positives=max_positives)

    with contextlib.ExitStack() as stack:
        stack.enter_context(strict_coverage(strict))  # (or a caller's: the command line's --strict)
        pool = ThreadPoolExecutor(n_workers, thread_name_prefix="evalcore-evaluate") if n_workers > 1 else None
        if pool is not None:  # (on an error, the runs not started yet are not evaluated)
            stack.callback(pool.shutdown, cancel_futures=True)
        done = pool.map(in_caller_context(one), run_map.values()) if pool is not None else map(one, run_map.values())
        for ri, (name, (prep, depth, results)) in enumerate(zip(run_map, done, strict=True)):
            for key, ms in groups.items():
                mks = sorted({0 if m.k is None else m.k for m in ms})
                base = ms[0].base
                if base not in metric_names:
                    metric_names.append(base)
                mcode = metric_names.index(base)
                sel = results[key][keep_idx]
                for ci, kk in enumerate(mks):
                    values.append(sel[:, ci])
                    metric_codes.append(np.full(len(keep_idx), mcode, dtype=np.int16))
                    k_vals.append(np.full(len(keep_idx), kk, dtype=np.int32))
                    run_codes.append(np.full(len(keep_idx), ri, dtype=np.int16))
                    q_codes.append(keep_idx)
            cov_rows.append({
                "run": name,
                "n_qrels_queries": nq,
                "n_evaluated": int(len(keep_idx)),
                "n_missing": prep.n_missing,
                "n_ignored": prep.n_ignored,
                "n_no_relevant": int(no_rel_mask.sum()),
                "n_skipped": int(nq - len(keep_idx)),
                "depth": depth,
            })
            if prep.n_missing:  # counted; in strict mode an error (the other runs are not evaluated)
                missing_queries_problem(name, nq, prep.n_missing, run_query_ids=run_map[name].query_ids,
                                        ground_truth_query_ids=qrels.query_ids, warning=False)
            shallow += run_notes(name, run_map[name], prep.n_listed, top_k, qrels)
            if progress is not None:
                progress(ri + 1, len(run_map))
    for text in filter(None, shallow):
        warn(text)

    small = np.int32 if nq < 2**31 else np.int64  # (4 bytes a row, not 8, for the table's two biggest codes)
    qcodes = np.concatenate(q_codes).astype(small, copy=False)
    dom_names, dom_codes = np.unique(np.asarray(domains, dtype=object).astype(str), return_inverse=True)
    dom_codes = dom_codes.astype(small)
    columns = ResultColumns(
        tuple(run_map), qrels.query_ids.astype(str).astype(object), tuple(str(d) for d in dom_names),
        tuple(metric_names), np.concatenate(run_codes), qcodes, dom_codes.reshape(-1)[qcodes],
        np.concatenate(metric_codes), np.concatenate(k_vals), np.concatenate(values).astype(np.float64, copy=False))
    settings = {
        "ties": ties,
        "rel_threshold": theta,
        "no_relevant": no_relevant,
        "judged_only": bool(judged_only),
        "measures": [str(m) for m in measures],
        "k": ks,
        "qrels": qrels.source,
    }
    return Evaluation(None, None, settings, columns, cov_rows)

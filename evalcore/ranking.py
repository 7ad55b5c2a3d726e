"""Ranking order of a run: score descending, ties broken by a named rule.

Tie rules (option ``ties``):

``"trec"`` (default)
    Equal scores are ordered by document id *descending* (byte/code-point string
    order), exactly as trec_eval (and pytrec_eval) sort a run. Use it so numbers
    match trec_eval out of the box.  Scores are compared as trec_eval holds them,
    in single precision (C ``float``, ``trec_format.h``): two scores equal once
    rounded to float32 (``20.123402`` and ``20.123401``) are a tie.  Rounding
    keeps the order of distinct scores, so only such near-ties change.
``"docid_asc"`` (alias ``"seed"``)
    Equal scores are ordered by document id ascending (seed 001 §3, "tie-breaker:
    d ascending (string compare) for determinism"), as :mod:`evalcore.retrieval` does.
``"input"``
    Equal scores keep the order in which they were listed in the input.

The order never depends on hashing, dict order or platform.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .errors import OptionError


class Ranked(Protocol):
    """What :func:`rank_order` reads of a run (:class:`evalcore.data.Run` has it)."""

    q: np.ndarray
    scores: np.ndarray
    _cache: dict[Any, Any]

    def doc_order_at(self, rows: np.ndarray) -> np.ndarray: ...


TIE_RULES: dict[str, str] = {
    "trec": "score descending (in float32, as trec_eval holds it), then document id descending (trec_eval)",
    "docid_asc": "score descending, then document id ascending (seed 001 §3)",
    "input": "score descending, then the order of the input",
}
_ALIASES = {"seed": "docid_asc", "seeds": "docid_asc", "trec_eval": "trec"}
#: Tie groups are sorted by one packed int64 key (group * width + id rank) below this bound.
_PACKED_LIMIT = 2**62


def canonical_ties(ties: str) -> str:
    """Return the canonical tie-rule name or raise :class:`OptionError` listing the rules."""
    t = _ALIASES.get(ties, ties)
    if t not in TIE_RULES:
        raise OptionError(
            f"unknown tie rule {ties!r}; supported: "
            + ", ".join(f"{k} ({v})" for k, v in TIE_RULES.items())
            + "; alias seed = docid_asc"
        )
    return t


def _group_positions(q_sorted: np.ndarray) -> np.ndarray:
    """0-based position of each row inside its (contiguous) query group."""
    n = len(q_sorted)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, q_sorted[1:] != q_sorted[:-1]])
    lengths = np.diff(np.r_[starts, n])
    return np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)


def order_rows(
    q: np.ndarray, scores: np.ndarray, doc_codes: np.ndarray, doc_vocab: np.ndarray, *, ties: str = "trec",
) -> np.ndarray:
    """Row order grouping rows by ``q`` (ascending) and ranking inside each group.

    Parameters
    ----------
    q : int array (n,)
        Group (query) index of each row.
    scores : float array (n,)
    doc_codes : int array (n,)
        Index of each row's document in ``doc_vocab``.
    doc_vocab : str array
        Document ids.
    ties : str
        See the module docstring.

    Returns
    -------
    order : int64 array (n,)
        Permutation of the rows.

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([0, 0, 0]); s = np.array([1.0, 2.0, 1.0]); v = np.array(["a", "b", "c"], dtype=object)
    >>> order_rows(q, s, np.arange(3), v, ties="trec").tolist()      # tie a/c: c before a
    [1, 2, 0]
    >>> order_rows(q, s, np.arange(3), v, ties="docid_asc").tolist()
    [1, 0, 2]
    """
    vocab = np.asarray(doc_vocab, dtype=object)
    codes = np.asarray(doc_codes)
    return _order_rows(q, scores, lambda rows: code_ranks(codes[rows], vocab), ties=ties)


def code_ranks(codes: np.ndarray, vocab: np.ndarray) -> np.ndarray:
    """Dense ranks of the ids ``vocab[codes]`` in code-point order: equal ids get equal ranks.

    Parameters
    ----------
    codes : int ndarray (n,)
        Indices into ``vocab``.
    vocab : object ndarray (V,) of str
        May repeat an id (repeats rank equal).

    Returns
    -------
    int64 ndarray (n,)
        ``r[i] < r[j]`` exactly when ``vocab[codes[i]] < vocab[codes[j]]`` (Python's string order).

    Only the distinct codes present are compared as strings, each once: a million tied
    rows over a few thousand documents sort a few thousand strings (O(n + V) integer
    work besides).

    Examples
    --------
    >>> import numpy as np
    >>> code_ranks(np.array([2, 0, 2, 3]), np.array(["z", "b", "b", "ä"], dtype=object)).tolist()
    [0, 1, 0, 2]
    """
    codes = np.asarray(codes, dtype=np.int64)
    vocab = np.asarray(vocab, dtype=object)
    present = np.zeros(len(vocab), dtype=bool)
    present[codes] = True
    used = np.flatnonzero(present)
    lookup = np.zeros(len(vocab), dtype=np.int64)
    lookup[used] = dense_ranks(vocab[used])
    return lookup[codes]


def dense_ranks(values: Any) -> np.ndarray:
    """Dense ranks (0-based) of string ids in code-point order; equal ids rank equal.

    ``values``: an object ndarray of str, or an arrow string array. Sorted by arrow's
    byte-wise UTF-8 comparison (the same order as Python's ``<`` on str, a few times
    faster than sorting Python objects); ids arrow cannot hold (lone surrogates) are
    sorted by numpy instead.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from ._columns import arrow_strings, numbers

    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = np.asarray(values, dtype=object)
        try:
            values = arrow_strings(values.tolist())  # (pa.array would import pandas)
        except (pa.ArrowException, UnicodeError, TypeError, AttributeError):
            _, rank = np.unique(values, return_inverse=True)
            return np.asarray(rank, dtype=np.int64).reshape(-1)
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    return numbers(pc.rank(values, sort_keys="ascending", tiebreaker="dense")).astype(np.int64) - 1


def _sortable_ints(x: np.ndarray) -> np.ndarray:
    """int64 keys in the order of the finite float64 values ``x`` (equal values, equal keys; -0.0 = 0.0).

    >>> _sortable_ints(np.array([1.5, -2.0, -0.0, 0.0, -1.0])).argsort(kind="stable").tolist()
    [1, 4, 2, 3, 0]
    """
    i = (np.asarray(x, dtype=np.float64) + 0.0).view(np.int64)  # + 0.0 turns -0.0 into 0.0
    return i ^ ((i >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))


def _radix_ready(q: np.ndarray) -> np.ndarray:
    """``q`` as 16-bit integers when its values fit (numpy then sorts it by radix), else as it is."""
    if len(q) and int(q.min()) >= 0 and int(q.max()) < 1 << 16:
        return q.astype(np.uint16)
    return q


def _lexsort_by_query(q: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``np.lexsort((keys, q))`` (stable: rows of equal (q, key) keep their order), for int64 ``keys``.

    The rows are grouped by query with one stable radix pass when not grouped already; then each
    query's keys are sorted on their own, as the rows of a matrix padded with the largest int64
    (a query's sort costs ``log`` of its own size, not of the whole run's: ~5x faster than two global
    passes at 6 M rows of 300 per query). Where padding would more than double the work (a few
    queries far longer than the rest), two global stable passes (keys, then query).

    >>> _lexsort_by_query(np.array([1, 0, 1, 0]), np.array([5, 7, 2, 7])).tolist()
    [1, 3, 2, 0]
    """
    n = len(q)
    first = None
    if n > 1 and not bool(np.all(q[1:] >= q[:-1])):
        first = np.argsort(_radix_ready(q), kind="stable")
        q, keys = q[first], keys[first]
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if n else np.zeros(0, dtype=np.int64)
    sizes = np.diff(np.r_[starts, n])
    width = int(sizes.max()) if n else 0
    if len(starts) * width > 2 * n + 4096:  # padding would cost more than the per-query sorts save
        by_key = np.argsort(keys, kind="stable")
        order = by_key[np.argsort(_radix_ready(q[by_key]), kind="stable")]
    else:
        padded = np.full(len(starts) * width, np.iinfo(np.int64).max, dtype=np.int64)
        padded[np.arange(n) + np.repeat(np.arange(len(starts)) * width - starts, sizes)] = keys
        local = np.argsort(padded.reshape(len(starts), width), axis=1, kind="stable")
        real = local < sizes[:, None]  # stable: the padding (largest keys, placed last) stays last
        order = (local + starts[:, None])[real]
    return order if first is None else first[order]


def _order_rows(q: np.ndarray, scores: np.ndarray, doc_order_at: Callable[[np.ndarray], np.ndarray], *,
                ties: str) -> np.ndarray:
    """:func:`order_rows` with ``doc_order_at(rows)`` giving integers in the code-point order of
    the document ids of given rows (equal ids, equal integers; :func:`code_ranks`).

    Only rows inside groups of equal (query, score) ever need them.
    """
    ties = canonical_ties(ties)
    if ties == "trec":  # trec_eval's scores are C floats (beyond ±3.4e38: ±inf, as its cast gives)
        with np.errstate(over="ignore"):
            neg = -np.asarray(scores, dtype=np.float32).astype(np.float64)
    else:
        neg = -np.asarray(scores, dtype=np.float64)
    q = np.asarray(q)
    if len(q) > 1 and bool(np.all(q[1:] >= q[:-1])) and bool(
            np.all((neg[1:] >= neg[:-1]) | (q[1:] != q[:-1]))):
        # fast path: the input is already grouped by query and ranked (the common case of run files)
        order = np.arange(len(q), dtype=np.int64)
    else:
        order = _lexsort_by_query(q, _sortable_ints(neg))
    if ties == "input" or len(order) < 2:
        return order
    qs = q[order]
    ss = neg[order]
    same = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    if not same.any():
        return order
    # only rows inside tie groups need the (expensive) string order
    tied = np.zeros(len(order), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    pos = np.flatnonzero(tied)
    tied_rows = order[pos]
    codes = np.asarray(doc_order_at(tied_rows), dtype=np.int64)
    if ties == "trec":
        codes = codes.max() - codes
    # the tie groups lie in order along ``pos``: number them, then sort by (group, id)
    group = np.cumsum(~np.r_[False, same][pos])
    width = int(codes.max()) + 1
    if int(group[-1]) < _PACKED_LIMIT // width:
        sub = np.argsort(group * width + codes, kind="stable")
    else:
        sub = np.lexsort((codes, group))
    order = order.copy()
    order[pos] = tied_rows[sub]
    return order


def rank_order(run: Ranked, *, ties: str = "trec") -> tuple[np.ndarray, np.ndarray]:
    """Evaluation order of a run, cached on the run (it is immutable).

    Returns
    -------
    order : int64 array (n_rows,)
        Rows sorted by query index, then rank.
    positions : int64 array (n_rows,)
        0-based rank of ``order[i]`` inside its query.
    """
    ties = canonical_ties(ties)
    key = ("rank_order", ties)
    hit = run._cache.get(key)
    if hit is None:
        order = _order_rows(run.q, run.scores, run.doc_order_at, ties=ties)
        identity = len(order) > 0 and order[0] == 0 and bool(np.all(np.diff(order) == 1))
        hit = (order, _group_positions(run.q if identity else run.q[order]))
        run._cache[key] = hit
    return hit


def tie_reorder_text(runs: dict[str, Ranked], ties: str, *, rule: str, fix: str) -> str | None:
    """The note that runs searched with ties by id ascending (embedding runs, fusions) have equal scores which the
    tie rule ``trec`` re-orders by id descending, or None (another rule, or no run with equal scores): one text for
    the command line and the Python API, ``rule`` and ``fix`` naming the option the way each spells it.

    >>> from evalcore.data import Run
    >>> tie_reorder_text({"a": Run.from_dict({"q": {"x": 1.0}})}, "trec", rule="r", fix="f") is None
    True
    """
    if canonical_ties(ties) != "trec":
        return None
    tied = [name for name, run in runs.items() if has_equal_scores(run)]
    if not tied:
        return None
    return (f"runs {tied} have equal scores and were ranked with ties by id ascending; {rule} re-orders them by id "
            f"descending — {fix} to keep their order")


def has_equal_scores(run: Ranked) -> bool:
    """Whether two rows of one query have the same score: there the tie rule decides the order.

    >>> from evalcore.data import Run
    >>> has_equal_scores(Run.from_dict({"q": {"a": 1.0, "b": 1.0}})), has_equal_scores(Run.from_dict({"q": {"a": 1.0}}))
    (True, False)
    """
    q, s = np.asarray(run.q), np.asarray(run.scores)
    same_q = q[1:] == q[:-1]
    if not (np.all(q[1:] >= q[:-1]) and np.all((s[1:] <= s[:-1]) | ~same_q)):  # not ranked: sort first
        order = np.lexsort((s, q))
        q, s = q[order], s[order]
        same_q = q[1:] == q[:-1]
    return bool(np.any(same_q & (s[1:] == s[:-1])))


def ranked_lists(run: Any, *, ties: str = "trec", depth: int | None = None) -> dict[str, list[tuple[str, float]]]:
    """``{query: [(doc, score), ...]}`` of a :class:`evalcore.data.Run` in evaluation order (:func:`rank_order`),
    the first ``depth`` of each query (None: all); every query of the run is a key, in the run's order."""
    order, pos = rank_order(run, ties=ties)
    out: dict[str, list[tuple[str, float]]] = {str(x): [] for x in run.query_ids}
    q = run.q[order]
    keep = np.ones(len(order), dtype=bool) if depth is None else pos < depth
    docs = run.docs_at(order[keep])
    for qi, d, s in zip(q[keep].tolist(), docs.tolist(), run.scores[order][keep].tolist(), strict=True):
        out[run.query_ids[qi]].append((d, s))
    return out

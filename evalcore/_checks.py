"""Checks and conversions of the data model's input columns (for :mod:`evalcore.data`).

Ids as ``str``, (query, document) pairs listed once, integer grades, run columns
of one length; each failure is an :class:`~evalcore.errors.EvalcoreError`
naming the file, line, query or document.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._columns import pair_keys, string_hashes
from ._lazy import pd
from .errors import DuplicateIdError, EmptyInputError, ValueTypeError


def _as_str_array(values: Any) -> np.ndarray:
    arr = np.asarray(values, dtype=object)
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    out = arr.copy()
    if pd.api.types.infer_dtype(out, skipna=False) == "string":
        return out
    # ids are strings at the edges; numbers given as ids are turned into their text
    mask = np.fromiter((not isinstance(v, str) for v in out), dtype=bool, count=len(out))
    if mask.any():
        out[mask] = [str(v) for v in out[mask]]
    return out


def _check_unique_pairs(
    q: np.ndarray, docs: np.ndarray, query_ids: np.ndarray, *, source: str | None, what: str,
    lines: np.ndarray | None = None,
) -> None:
    """Raise DuplicateIdError naming the first (query, doc) pair listed twice."""
    if len(q) == 0:
        return
    dcodes, _ = pd.factorize(docs, sort=False)
    key = q.astype(np.int64) * (int(dcodes.max()) + 1) + dcodes
    dup = pd.Index(key).duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        line = int(lines[i]) if lines is not None else None
        raise DuplicateIdError(
            f"document {docs[i]!r} is listed twice for query {query_ids[q[i]]!r} in the {what}",
            file=source, line=line, query=str(query_ids[q[i]]), item=str(docs[i]),
        )


def _pair_hashes(q: np.ndarray, docs: Any) -> np.ndarray | None:
    """:func:`pair_keys` of (query code, document id) rows; None when the ids are too long to hash."""
    h = string_hashes(docs)
    return None if h is None else pair_keys(q, h)


_NO_KEY = np.uint64(np.iinfo(np.uint64).max)


def _has_repeats(keys: np.ndarray, groups: np.ndarray | None = None) -> bool:
    """Whether a key occurs twice; with ``groups`` (one code per row), only twice in one group counts.

    When ``groups`` is non-decreasing (a run or qrels file listed query by
    query) the keys of each group are sorted in their own row of a padded
    matrix (many short sorts: far cheaper than one sort of every key).
    """
    n = len(keys)
    if groups is not None and n > 1 and bool(np.all(groups[1:] >= groups[:-1])):
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        lengths = np.diff(np.r_[starts, n])
        width = int(lengths.max())
        if len(starts) * width == n:  # every group equally long (a top-k run): a reshaped copy, no padding
            mat = keys.reshape(len(starts), width).copy()
            mat.sort(axis=1)
            return bool((mat[:, 1:] == mat[:, :-1]).any())
        if len(starts) * width <= 2 * n:
            if np.count_nonzero(keys == _NO_KEY) > 1:  # the padding value itself repeated: decide by sorting
                return _has_repeats(keys)
            row = np.repeat(np.arange(len(starts)), lengths)
            mat = np.full((len(starts), width), _NO_KEY, dtype=np.uint64)
            mat[row, np.arange(n) - starts[row]] = keys
            mat.sort(axis=1)
            return bool(((mat[:, 1:] == mat[:, :-1]) & (mat[:, 1:] != _NO_KEY)).any())
    sk = np.sort(keys)
    return bool((sk[1:] == sk[:-1]).any())


def _integer_grades(g: np.ndarray, *, source: str | None, lines: np.ndarray | None) -> np.ndarray:
    if g.dtype.kind in "iub":
        return g.astype(np.int64)
    try:
        f = np.asarray(g, dtype=np.float64)
    except (TypeError, ValueError):
        f = None
    if f is None or not np.all(np.isfinite(f)) or not np.all(f == np.round(f)):
        # find the first culprit for the message
        for i, v in enumerate(g.tolist()):
            try:
                fv = float(v)
                ok = np.isfinite(fv) and fv == round(fv)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                line = int(lines[i]) if lines is not None else None
                where = f" (row {i + 1})" if line is None else ""
                raise ValueTypeError(f"grade {v!r} is not an integer{where}", file=source, line=line)
    return f.astype(np.int64)


def _check_run_columns(nq: int, nd: int, ns: int, source: str | None) -> None:
    """A run needs rows, and its query, document and score columns must be equally long."""
    if nq == 0:
        raise EmptyInputError("run has no ranked documents", file=source)
    if not (nq == nd == ns):
        raise ValueTypeError(f"query, document and score columns differ in length ({nq}, {nd}, {ns})", file=source)

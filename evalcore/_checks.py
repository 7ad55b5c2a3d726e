"""Checks and conversions of the data model's input columns (for :mod:`evalcore.data`).

Ids as ``str``, (query, document) pairs listed once, integer grades, run columns
of one length; each failure is an :class:`~evalcore.errors.EvalcoreError`
naming the file, line, query or document.

The rule no id may break (:func:`first_broken_id`, :func:`broken_id_text`,
:func:`refuse_broken_ids`: no control character, no line separator) is defined
here, the lowest layer using it: the data model's constructors refuse such ids,
and every reader and writer (:mod:`evalcore.io.source`, which re-exports these
names) and the workspace apply the same rule in the same words.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ._columns import pair_keys, string_hashes
from ._lazy import pd
from .errors import DuplicateIdError, EmptyInputError, InputFormatError, ValueTypeError


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


# ============================================================================ ids
#: What no id may hold: a control character (C0, DEL, C1: tab, line feed, carriage return, NUL...) or a
#: Unicode line / paragraph separator — each ends a record or a field of some text file evalcore writes
#: (TREC and BEIR lines, CSV rows, one id per line beside a ``.npy``), or makes it binary (NUL).
_ID_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: What ends a line for :meth:`str.splitlines` (and so for a file of one id per line read back).
LINE_BREAKS = re.compile("[\n\x0b\x0c\r\x1c-\x1e\x85\u2028\u2029]")


def first_broken_id(ids: Iterable[Any], pattern: re.Pattern[str] = _ID_BREAKING) -> int | None:
    """Position of the first id whose text holds a control character or a line separator; None when none does.

    ``ids``: a sequence (list, numpy array) of ids, or a pyarrow string array (chunked or not), whose
    data buffer is scanned in place (no Python string per id). ``pattern``: another set of characters to
    look for (one character each match, e.g. :data:`LINE_BREAKS`). One regular-expression scan of the
    ids' joined text (no Python test per id); text of ASCII characters only is first screened at C speed
    for the ASCII characters ``pattern`` matches (none: no regular expression at all).

    >>> first_broken_id(["q1", "q2", "q\\t3"]), first_broken_id(["q1", "q 2"])
    (2, None)
    """
    if _is_arrow_strings(ids):
        return _first_broken_arrow(ids, pattern)
    texts = ids.tolist() if hasattr(ids, "tolist") else list(ids)
    try:
        joined = "".join(texts)
    except TypeError:  # not all text (integers...): their text
        texts = [str(x) for x in texts]
        joined = "".join(texts)
    if joined.isascii() and _ascii_clean(joined.encode("ascii"), pattern):
        return None
    found = pattern.search(joined)
    if found is None:
        return None
    ends = itertools.accumulate(map(len, texts))
    return next(i for i, end in enumerate(ends) if end > found.start())


@functools.lru_cache(maxsize=8)
def _ascii_allowed(pattern: re.Pattern[str]) -> bytes:
    """The ASCII characters ``pattern`` does not match (derived from it: no second definition)."""
    return bytes(c for c in range(128) if not pattern.match(chr(c)))


def _ascii_clean(raw: bytes, pattern: re.Pattern[str]) -> bool:
    """Whether ASCII bytes ``raw`` hold none of the characters ``pattern`` matches (``bytes.translate``: C speed)."""
    return not raw.translate(None, _ascii_allowed(pattern))


def _is_arrow_strings(ids: Any) -> bool:
    return type(ids).__module__.startswith("pyarrow") and str(getattr(ids, "type", "")) in (
        "string", "large_string")


def _first_broken_arrow(col: Any, pattern: re.Pattern[str]) -> int | None:
    """:func:`first_broken_id` of a pyarrow string array: each chunk's data buffer, screened, then decoded once."""
    from ._columns import string_offsets

    base = 0
    for chunk in (col.chunks if hasattr(col, "chunks") else [col]):
        n = len(chunk)
        data = chunk.buffers()[2] if n else None
        if data is not None:
            off = string_offsets(chunk)
            raw = bytes(memoryview(data)[int(off[0]): int(off[-1])])
            if not (raw.isascii() and _ascii_clean(raw, pattern)):
                text = raw.decode("utf-8", errors="replace")
                found = pattern.search(text)
                if found is not None:
                    at = len(text[: found.start()].encode("utf-8", errors="replace"))  # the byte where it is
                    return base + int(np.searchsorted(off - off[0], at, side="right")) - 1
        base += n
    return None


#: Names of the control characters met most often, for the refusal (the others by their code point only).
_CHARACTER_NAMES = {0x00: "NUL", 0x09: "a tab", 0x0A: "a line feed", 0x0D: "a carriage return",
                    0x85: "a next-line character", 0x2028: "a line separator", 0x2029: "a paragraph separator"}


def broken_id_text(what: str, value: Any, *, where: str = "") -> str:
    """Why id ``value`` (a ``what``: ``"query id"``, ``"run name"``...) is refused: its ``repr`` (so the invisible
    character shows), ``where`` right after it (``" (row 3)"``), and the character's code point.

    >>> broken_id_text("query id", "q\\x001", where=" (row 2)")
    "query id 'q\\\\x001' (row 2) holds a control character (U+0000, NUL); ids and names may not hold a tab, a line break, NUL or any other control character"
    """
    text = str(value)
    found = _ID_BREAKING.search(text)
    code = "" if found is None else f"U+{ord(found.group()):04X}"
    name = "" if found is None else _CHARACTER_NAMES.get(ord(found.group()), "")
    shown = repr(text)
    if len(shown) > 120:
        shown = shown[:117] + "..."
    return (f"{what} {shown}{where} holds a control character ({code}{', ' + name if name else ''}); ids and names "
            "may not hold a tab, a line break, NUL or any other control character")


def refuse_broken_ids(ids: Any, *, what: str, file: str | None = None,
                      line: Callable[[int], int | None] | None = None,
                      where: Callable[[int], str] | None = None) -> None:
    """Raise :class:`InputFormatError` (:func:`broken_id_text`) for the first of ``ids`` holding a control character.

    The one check every reader (and writer) of ids makes. ``ids`` as :func:`first_broken_id` takes them;
    ``file`` names the file; ``line(i)`` the file line of id ``i`` (1-based; None: none), ``where(i)``
    what else places it (``" (row 4)"`` of a Parquet table, counted from 1).
    """
    i = first_broken_id(ids)
    if i is None:
        return
    value = ids[i].as_py() if _is_arrow_strings(ids) else ids[i]
    raise InputFormatError(broken_id_text(what, value, where="" if where is None else where(i)), file=file,
                           line=None if line is None else line(i))


def refuse_broken_column(ids: Any, *, what: str, place: Callable[[int], str], source: str | None = None,
                         codes: np.ndarray | None = None) -> None:
    """A constructor's check of one id column: :func:`refuse_broken_ids` for the first record whose id holds a
    control character, ``place(i)`` naming record ``i`` in the caller's terms (``" (doc_ids[4])"``).

    With ``codes``, ``ids`` are the column's distinct ids in the order of their first record and ``codes[i]``
    the id of record ``i``: only the distinct ids are scanned (one vectorised scan, :func:`first_broken_id`),
    and the record named is the first holding the refused id (so the first refused record).
    """
    i = first_broken_id(ids)
    if i is None:
        return
    row = i if codes is None else int(np.argmax(np.asarray(codes) == i))
    value = ids[i].as_py() if _is_arrow_strings(ids) else ids[i]
    raise InputFormatError(broken_id_text(what, value, where=place(row)), file=source)


def refuse_broken_name(name: Any, *, what: str = "run name", source: str | None = None) -> None:
    """A constructor's check of a name (a run's): :func:`refuse_broken_ids` of the one value."""
    refuse_broken_ids([name], what=what, file=source)


def _in_mapping(arg: str, i: int, query_ids: Any) -> str:
    """Where record ``i`` of a mapping given to ``from_dict`` is: a key, or a document listed under query ``qid``."""
    return f" (listed under query {query_ids[i]!r})" if arg == "doc_ids" else " (a key of the mapping)"


def _domains_of(query_ids: np.ndarray, domains: Any, source: str | None) -> np.ndarray:
    """The domain of each query (missing → ""), a domain holding a control character refused."""
    dom = np.asarray([str(domains.get(x, "")) for x in query_ids], dtype=object)
    refuse_broken_column(dom, what="domain", source=source, place=lambda i: f" (the domain of query {query_ids[i]!r})")
    return dom

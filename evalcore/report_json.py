"""The per-query part of ``report.json``, built column-wise and written as JSON text directly.

``report.json`` (see :func:`evalcore.report.build_report`) ends with
``"per_query": {query: {run: {"ndcg@10": value, ..., "topK": [doc ids]}}}``:
one entry per (query, run) of the results table, by far its largest part.
:func:`per_query_entries` gathers those entries into arrays
(:class:`PerQuery`); from them :func:`per_query_dict` builds the nested dict and
:func:`per_query_text` writes the exact text ``json.dumps`` gives for that
dict (``ensure_ascii=False``, ``indent=None`` or an int), without building it:
one ``%``-formatting of a template repeated once per entry, the floats in
``repr`` form as ``json`` writes them.  :func:`report_text` puts it into the
rest of the report.

Order (what ``json.dumps`` of the dict gives): queries in order of first
appearance (runs in table order, then query code order), runs of a query in
table order, labels in table order, ``topK`` last.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring as _enc
from typing import Any

import numpy as np

from ._columns import positions_in, strings
from ._lazy import pd
from .data import Run
from .results import ResultColumns, first_appearance

__all__ = ["PerQuery", "per_query_entries", "per_query_dict", "per_query_text", "report_text"]


def _label(metric: str, k: int) -> str:
    return metric if int(k) == 0 else f"{metric}@{int(k)}"


@dataclass(frozen=True)
class PerQuery:
    """The (query, run) entries of ``per_query``, in output order.

    Attributes
    ----------
    labels : list of str, length L
        ``metric@k`` (``metric`` when k is 0), in table order.
    query_names, run_names : list of str
        Query ids in output order; run names in table order.
    entry_query, entry_run : ndarray of int64, shape (E,)
        Each entry's index into ``query_names`` (non-decreasing) and ``run_names``.
    values : ndarray of float64, shape (E, L)
        NaN where the table has no value (``null`` in JSON).
    top_docs : list of (list of str, or arrow string array)
        Per run with a ranked list: its top documents, query after query (as
        the run holds them: an arrow array for runs read from files).
    top_src, top_start, top_end : ndarray of int64, shape (E,)
        An entry's ``topK`` is ``top_docs[top_src][top_start:top_end]``; no
        ``topK`` where ``top_src`` is -1.
    """

    labels: list[str]
    query_names: list[str]
    run_names: list[str]
    entry_query: np.ndarray
    entry_run: np.ndarray
    values: np.ndarray
    top_docs: list[Any]
    top_src: np.ndarray
    top_start: np.ndarray
    top_end: np.ndarray

    @property
    def distinct(self) -> bool:
        """No two queries, runs or labels share a name (else a dict would merge them)."""
        return all(len(set(x)) == len(x) for x in (self.labels, self.query_names, self.run_names))

    def top(self, e: int) -> list[str] | None:
        """The ``topK`` list of entry ``e`` (None when it has none)."""
        src = int(self.top_src[e])
        if src < 0:
            return None
        docs = self.top_docs[src][int(self.top_start[e]) : int(self.top_end[e])]
        return docs if isinstance(docs, list) else strings(docs).tolist()


def per_query_entries(table: pd.DataFrame | ResultColumns, runs: Mapping[str, Run] | None, *, top_k: int,
                      ties: str = "trec") -> PerQuery:
    """Gather the entries of ``per_query`` from the long results table (a DataFrame or its
    :class:`~evalcore.results.ResultColumns`) and each run's top ``top_k``."""
    from .ranking import rank_order

    cols = table if isinstance(table, ResultColumns) else ResultColumns.from_table(table, sort=False)
    # labels: the (metric, k) pairs in order of first appearance
    lab_codes, _ = cols.group_codes(("metric", "k"))
    first = first_appearance(lab_codes)
    rank_of = np.empty(len(first), dtype=np.int64)
    rank_of[first] = np.arange(len(first))
    at = np.unique(lab_codes, return_index=True)[1][first]
    labels = [_label(cols.metrics[int(cols.metric[i])], int(cols.k[i])) for i in at.tolist()]
    lab_codes = rank_of[lab_codes]
    q_codes, q_names = cols.query, [str(x) for x in cols.query_ids.tolist()]
    r_codes, r_names = cols.run, list(cols.runs)
    n_r, n_q = len(r_names), len(q_names)
    none = np.zeros(0, np.int64)
    if n_r == 0 or n_q == 0:
        return PerQuery(labels, [], r_names, none, none, np.zeros((0, len(labels))), [], none, none, none)
    values = np.full((n_r, n_q, len(labels)), np.nan)
    present = np.zeros((n_r, n_q), dtype=bool)
    values[r_codes, q_codes, lab_codes] = cols.value
    present[r_codes, q_codes] = True
    # queries by first appearance: the first run holding them, then their code
    seen = present.any(axis=0)
    q_order = np.lexsort((np.arange(n_q), np.argmax(present, axis=0)))
    q_order = q_order[seen[q_order]]
    q_pos = np.full(n_q, -1, dtype=np.int64)
    q_pos[q_order] = np.arange(len(q_order))
    rr, qq = np.nonzero(present)
    order = np.lexsort((rr, q_pos[qq]))
    e_run, e_q = rr[order].astype(np.int64), qq[order]
    n_e = len(e_run)
    entry_of = np.full((n_r, n_q), -1, dtype=np.int64)
    entry_of[e_run, e_q] = np.arange(n_e)
    top_docs: list[Any] = []
    top_src, top_start, top_end = np.full(n_e, -1, np.int64), np.zeros(n_e, np.int64), np.zeros(n_e, np.int64)
    for run_name, run in (runs or {}).items():
        ri = positions_in(r_names, [run_name])[0]
        if ri < 0:
            continue
        rank, pos = rank_order(run, ties=ties)
        keep = rank[pos < top_k]
        qidx = run.q[keep]
        if len(qidx) == 0:
            continue
        bounds = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]])
        codes = positions_in(q_names, [str(x) for x in run.query_ids[qidx[bounds]].tolist()])
        e = np.where(codes >= 0, entry_of[ri, np.maximum(codes, 0)], -1)
        hit = e >= 0
        top_src[e[hit]] = len(top_docs)
        top_start[e[hit]] = bounds[hit]
        top_end[e[hit]] = np.r_[bounds[1:], len(qidx)][hit]
        arrow = run.docs_arrow_at(keep)
        top_docs.append(arrow if arrow is not None else run.docs_at(keep).tolist())
    return PerQuery(labels, [q_names[i] for i in q_order.tolist()], r_names, q_pos[e_q], e_run,
                    values[e_run, e_q], top_docs, top_src, top_start, top_end)


def per_query_dict(pq: PerQuery) -> dict[str, dict[str, dict[str, Any]]]:
    """``{query: {run: {"ndcg@10": value or None, ..., "topK": [...]}}}``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    rows = pq.values.tolist()
    has_nan = np.isnan(pq.values).any(axis=1).tolist() if pq.values.size else [False] * len(rows)
    for e, (qi, ri, row, nan) in enumerate(zip(pq.entry_query.tolist(), pq.entry_run.tolist(), rows, has_nan,
                                               strict=True)):
        if nan:
            row = [None if v != v else v for v in row]
        entry: dict[str, Any] = dict(zip(pq.labels, row, strict=True))
        top = pq.top(e)
        if top is not None:
            entry["topK"] = top
        out.setdefault(pq.query_names[qi], {})[pq.run_names[ri]] = entry
    return out


def _layout(indent: int | None, level: int) -> tuple[str, str, str]:
    """(opening, separator, closing) of a container at nesting ``level``, as ``json.dumps`` writes them."""
    if indent is None:
        return "", ", ", ""
    inner = "\n" + " " * (indent * (level + 1))
    return inner, "," + inner, "\n" + " " * (indent * level)


def _floats(values: np.ndarray) -> np.ndarray:
    """``json.dumps`` text of float64 values (``repr``; NaN -> ``null``), as an object array of the same shape;
    ValueError on infinities.  Each distinct value (bit pattern: -0.0 is not 0.0) is formatted once.
    """
    if np.isinf(values).any():
        raise ValueError("Out of range float values are not JSON compliant")
    bits, codes = _factorize_int64(np.ascontiguousarray(values).reshape(-1).view(np.int64))
    text = [("null" if v != v else float.__repr__(v)) for v in np.asarray(bits).view(np.float64).tolist()]
    return np.asarray(text, dtype=object)[codes.reshape(values.shape)]


def _factorize_int64(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct values, code of each value)`` of an int64 array: arrow's hash-based dictionary encoding
    (several times faster than sorting them; no pandas)."""
    import pyarrow.compute as pc

    from ._columns import arrow_numbers, numbers

    enc = pc.dictionary_encode(arrow_numbers(values))
    return numbers(enc.dictionary), numbers(enc.indices).astype(np.int64)


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def _joined(items: Any, sep: str) -> tuple[str, np.ndarray]:
    """``sep.join(json strings of items)`` and where each item starts in it (one more: the end + len(sep)).

    ``items``: a list of str, or an arrow string array (then, when every id is ASCII without a character
    JSON escapes, the text is assembled from its bytes, with no Python string per item).
    """
    if not isinstance(items, list):
        got = _joined_ascii(items, sep)
        if got is not None:
            return got
        items = strings(items).tolist()
    if _NEEDS_ESCAPE.search("".join(items)) is None:  # as json.dumps writes them: "item"
        text = '"' + ('"' + sep + '"').join(items) + '"' if items else ""
        lengths = np.fromiter(map(len, items), np.int64, len(items)) + 2
    else:
        encoded = list(map(_enc, items))
        text = sep.join(encoded)
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
    starts = np.zeros(len(items) + 1, np.int64)
    np.cumsum(lengths + len(sep), out=starts[1:])
    return text, starts


def _joined_ascii(arr: Any, sep: str) -> tuple[str, np.ndarray] | None:
    """:func:`_joined` of an arrow string array from its bytes; None unless every byte is printable ASCII
    other than ``"`` and ``\\`` (nothing to escape, one byte per character)."""
    from ._columns import string_offsets

    chunk = arr.combine_chunks() if hasattr(arr, "combine_chunks") else arr
    n = len(chunk)
    if n == 0 or chunk.null_count or not sep.isascii():
        return None
    off = string_offsets(chunk)
    buf = chunk.buffers()[2]
    raw = np.frombuffer(buf, dtype=np.uint8)[int(off[0]) : int(off[-1])] if buf is not None else np.zeros(0, np.uint8)
    if raw.size and (int(raw.max()) >= 0x80 or int(raw.min()) < 0x20 or bool(np.any((raw == 0x22) | (raw == 0x5C)))):
        return None
    lens = np.diff(off)
    sep_b = np.frombuffer(sep.encode("ascii"), dtype=np.uint8)
    starts = np.zeros(n + 1, np.int64)
    np.cumsum(lens + 2 + len(sep_b), out=starts[1:])
    out = np.empty(int(starts[-1]), dtype=np.uint8)
    begin = starts[:-1]
    out[begin] = 0x22  # the opening quote
    out[np.repeat(begin + 1 - (off[:-1] - off[0]), lens) + np.arange(raw.size)] = raw
    out[begin + 1 + lens] = 0x22  # the closing quote
    for j, byte in enumerate(sep_b.tolist()):
        out[begin + 2 + lens + j] = byte
    return out[: out.size - len(sep_b)].tobytes().decode("ascii"), starts


def per_query_text(pq: PerQuery, *, indent: int | None = None, level: int = 1) -> str:
    """``json.dumps(per_query_dict(pq), ensure_ascii=False, allow_nan=False, indent=indent)`` as a value
    nested at ``level`` (the ``per_query`` of a report is at level 1).

    Raises ValueError on infinite values (as ``json.dumps(..., allow_nan=False)``).
    """
    n = len(pq.entry_query)
    if n == 0:
        return "{}"
    o1, s1, c1 = _layout(indent, level)  # {query: ...}
    o2, s2, c2 = _layout(indent, level + 1)  # {run: ...}
    o3, s3, c3 = _layout(indent, level + 2)  # {label: value, ..., "topK": [...]}
    o4, s4, c4 = _layout(indent, level + 3)  # [doc, ...]
    labels = [_enc(x).replace("%", "%%") for x in pq.labels]
    width = len(labels) + 4
    # one entry: <prefix><run>: {<label>: <value>, ...<topK>}<suffix>
    template = "%s%s: {" + o3 + s3.join(lab + ": %s" for lab in labels) + "%s" + c3 + "}%s"
    q = pq.entry_query
    first = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    # the entries as a grid of text pieces, one row per entry, read out row by row into the template
    grid = np.empty((n, width), dtype=object)
    grid[:, 0] = s2  # the next run of the same query
    names = [pq.query_names[qi] for qi in q[first].tolist()]
    if _NEEDS_ESCAPE.search("".join(names)) is None:
        heads = [f'{s1}"{name}": {{{o2}' for name in names]
    else:
        heads = [s1 + _enc(name) + ": {" + o2 for name in names]
    heads[0] = heads[0][len(s1) :]
    grid[first, 0] = heads
    run_text = np.array([_enc(x) for x in pq.run_names] or [""], dtype=object)
    grid[:, 1] = run_text[pq.entry_run]
    grid[:, 2 : 2 + len(labels)] = _floats(pq.values)
    grid[:, width - 2] = ""
    for src, docs in enumerate(pq.top_docs):
        text, starts = _joined(docs, s4)
        es = np.flatnonzero(pq.top_src == src)
        a, b = starts[pq.top_start[es]].tolist(), (starts[pq.top_end[es]] - len(s4)).tolist()
        head, tail = s3 + '"topK": [' + o4, c4 + "]"
        grid[es, width - 2] = [head + text[i:j] + tail for i, j in zip(a, b, strict=True)]
    grid[:, width - 1] = ""
    grid[np.r_[first[1:] - 1, n - 1], width - 1] = c2 + "}"
    return "{" + o1 + (template * n) % tuple(grid.ravel().tolist()) + c1 + "}"


def report_text(report: Mapping[str, Any], per_query: str, *, indent: int | None) -> str:
    """``json.dumps({**report, "per_query": <per_query>}, ensure_ascii=False, allow_nan=False, indent=indent)``
    where ``per_query`` is already JSON text (:func:`per_query_text`)."""
    if "per_query" in report:
        raise ValueError("report already holds per_query")
    opening, sep, closing = _layout(indent, 0)
    if not report:
        return "{" + opening + '"per_query": ' + per_query + closing + "}"
    head = json.dumps(dict(report), indent=indent, ensure_ascii=False, allow_nan=False)
    cut = len(head) - len(closing) - 1  # head ends with <closing>}
    return head[:cut] + sep + '"per_query": ' + per_query + head[cut:]

"""Side files: query domains and document metadata (titles, texts), from tables or JSON."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._lazy import pd
from ..errors import (
    ConflictingValueError,
    DuplicateIdError,
    EmptyInputError,
    InputFormatError,
    MissingColumnError,
    ValueTypeError,
)
from .columns import (
    DOMAIN_COLUMNS,
    META_ID_COLUMNS,
    QUERY_COLUMNS,
    TEXT_COLUMNS,
    TITLE_COLUMNS,
    norm_column,
    pick_column,
)
from .detect import _ext, _head, _is_json
from .jsonfmt import (
    _at,
    _cell,
    _id_text,
    _key,
    _no_dup_keys,
    _records,
    _shape,
    parse_json,
    refuse_broken,
    refuse_other_file,
)
from .source import ASCII_WS, Source, decode_text, read_source, source_filename
from .tables import _domains_of, _first_true, _id_column, _require, _Table, _table, sniff_separator

__all__ = ["read_table_domains", "read_table_metadata", "metadata_frame", "read_json_domains", "read_json_metadata", "load_domains", "load_doc_metadata"]


def read_table_domains(data: bytes, *, fmt: str, label: str) -> dict[str, str]:
    """query -> domain from a table with a header (query + domain columns) or a header-less 2-column table."""

    def build(tbl: _Table) -> dict[str, str]:
        jq = pick_column(tbl.names, QUERY_COLUMNS)
        jdom = pick_column(tbl.names, DOMAIN_COLUMNS)
        if jq is None and jdom is None and len(tbl.names) == 2 and not tbl.rows_are_lines:
            tbl = _prepend_header_row(tbl)
            jq, jdom = 0, 1
        if jq is None:
            jq = _require(tbl, "query id", QUERY_COLUMNS)
        if jdom is None:
            jdom = _require(tbl, "domain", DOMAIN_COLUMNS)
        if tbl.n_rows == 0:
            raise EmptyInputError("no rows after the header", file=tbl.label, line=tbl.header_line)
        qs = _id_column(tbl, jq, "query id").to_numpy(zero_copy_only=False).astype(object)
        return _domains_of(tbl, qs, jdom) or {}

    return _table(data, label, fmt, build)


def _prepend_header_row(tbl: _Table) -> _Table:
    import pyarrow as pa

    cols = [pa.concat_arrays([pa.array([str(n).strip(ASCII_WS)], type=pa.string()), c.cast(pa.string())])
            for n, c in zip(tbl.names, tbl.columns, strict=True)]
    lines = None
    if tbl.lines is not None:
        lines = np.r_[np.int64(tbl.header_line or 1), tbl.lines]
    elif tbl.header_line is not None:
        raise _HeaderlessNeedsLines
    return _Table([f"column {k + 1}" for k in range(len(cols))], cols, tbl.label, lines=lines,
                  header_line=None)


class _HeaderlessNeedsLines(InputFormatError):
    """Internal: make the fast path hand a header-less table over to the exact path."""

    def __init__(self) -> None:
        super().__init__("header-less table")


def read_table_metadata(data: bytes, *, fmt: str, label: str) -> pd.DataFrame:
    """Document metadata (``doc_id`` → title, text, other columns) from a CSV / TSV / Parquet table."""

    def build(tbl: _Table) -> pd.DataFrame:
        jid = _require(tbl, "document id", META_ID_COLUMNS)
        if tbl.n_rows == 0:
            raise EmptyInputError("no rows after the header", file=tbl.label, line=tbl.header_line)
        ids = _id_column(tbl, jid, "document id").to_numpy(zero_copy_only=False).astype(object)
        records: dict[str, Any] = {}
        for j, n in enumerate(tbl.names):
            if j == jid:
                continue
            col = tbl.columns[j]
            try:
                records[str(n)] = col.to_pylist()
            except Exception as e:  # noqa: BLE001 - exotic Parquet types
                raise ValueTypeError(f"column {n!r} cannot be read ({type(e).__name__})", file=tbl.label) from None
        return metadata_frame(ids, records, label=tbl.label, line_of=tbl.line,
                              where=tbl.where)

    return _table(data, label, fmt, build)


def metadata_frame(ids: Sequence[str] | np.ndarray, columns: dict[str, list[Any]], *, label: str,
                   line_of: Callable[[int], int | None] = lambda i: None,
                   where: Callable[[int], str] = lambda i: "") -> pd.DataFrame:
    """``DataFrame`` indexed by ``doc_id`` with ``title`` and ``text`` first (``""`` when absent)."""
    ids = np.asarray(list(ids), dtype=object)
    dup = pd.Index(ids).duplicated()
    i = _first_true(dup)
    if i is not None:
        raise DuplicateIdError(f"document id {ids[i]!r} has two rows{where(i)}", file=label, line=line_of(i),
                               item=str(ids[i]))
    names = list(columns)
    title = pick_column(names, TITLE_COLUMNS)
    text = pick_column(names, TEXT_COLUMNS)
    out: dict[str, Any] = {}
    for role, j in (("title", title), ("text", text)):
        vals = columns[names[j]] if j is not None else [""] * len(ids)
        out[role] = ["" if v is None else str(v) for v in vals]
    for j, n in enumerate(names):
        if j in (title, text) or n in out:
            continue
        out[n] = columns[n]
    frame = pd.DataFrame(out, index=pd.Index(ids, name="doc_id", dtype=object))
    return frame




def read_json_domains(data: bytes, *, label: str, filename: str | None = None) -> dict[str, str]:
    """query -> domain from ``{query: domain}`` or an array of objects with a query and a domain field."""
    doc = parse_json(data, label, filename=filename)
    v = doc.value
    out: dict[str, str] = {}
    if isinstance(v, dict) and not any(isinstance(v.get(k), list) for k in ("queries", "data")):
        _no_dup_keys(doc, v, "", what="query")
        for k, dom in v.items():
            q = _id_text(doc, k, _key("", k), "query id")
            if dom is not None and not isinstance(dom, str):
                raise _shape(doc, _key("", k), "a domain (string)", dom)
            out[q] = (dom or "").strip()
    else:
        recs = _records(doc, "an object {query: domain} or an array of objects {query_id, domain}")
        for i, r in enumerate(recs):
            base = f"[{i}]"
            if not isinstance(r, dict):
                raise _shape(doc, base, "an object {query_id, domain}", r, index=i)
            names = {norm_column(k): k for k in reversed(list(r))}
            qk = next((names[c] for c in QUERY_COLUMNS + ("source", "id") if c in names), None)
            dk = next((names[c] for c in DOMAIN_COLUMNS if c in names), None)
            if qk is None or dk is None:
                refuse_other_file(doc, "an object {query: domain} or objects {query_id, domain}",
                                  what="domain mapping")
                role = "query id" if qk is None else "domain"
                raise MissingColumnError(f"at {base}: no {role} field; the fields are {list(r)}", file=label,
                                         line=doc.line(i))
            q = _id_text(doc, r[qk], _key(base, qk), "query id", index=i)
            dom = r[dk]
            if dom is not None and not isinstance(dom, str):
                raise _shape(doc, _key(base, dk), "a domain (string)", dom, index=i)
            dom = (dom or "").strip()
            if q in out and out[q] != dom:
                raise ConflictingValueError(f"query {q!r} is given two domains, {out[q]!r} and {dom!r} "
                                            f"({_at(base)})", file=label, line=doc.line(i), query=q)
            out[q] = dom
    if not out:
        raise EmptyInputError("no query domains", file=label)
    refuse_broken(doc, list(out), "query id")
    refuse_broken(doc, list(out.values()), "domain")
    return out


def read_json_metadata(data: bytes, *, label: str, filename: str | None = None) -> pd.DataFrame:
    """Document metadata from JSON/JSONL: BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``), an array of
    objects, or ``{doc_id: {title, text}}`` / ``{doc_id: "text"}``. Nested values are kept as JSON text."""
    doc = parse_json(data, label, filename=filename)
    v = doc.value
    ids: list[str] = []
    rows: list[dict[str, Any]] = []
    if isinstance(v, dict) and not any(isinstance(v.get(k), list) for k in ("queries", "data")):
        _no_dup_keys(doc, v, "", what="document id")
        for k, body in v.items():
            ids.append(_id_text(doc, k, _key("", k), "document id"))
            if isinstance(body, dict):
                rows.append(dict(body))
            elif isinstance(body, str):
                rows.append({"text": body})
            else:
                raise _shape(doc, _key("", k), "an object {title, text} or a text", body)
    else:
        recs = _records(doc, "an array of objects {_id, title, text}")
        for i, r in enumerate(recs):
            base = f"[{i}]"
            if not isinstance(r, dict):
                raise _shape(doc, base, "an object {_id, title, text}", r, index=i)
            _no_dup_keys(doc, r, base, index=i)
            names = {norm_column(k): k for k in reversed(list(r))}
            ik = next((names[c] for c in META_ID_COLUMNS if c in names), None)
            if ik is None:
                raise MissingColumnError(f"at {base}: no document id field (accepted: "
                                         f"{', '.join(META_ID_COLUMNS)}); the fields are {list(r)}",
                                         file=label, line=doc.line(i))
            ids.append(_id_text(doc, r[ik], _key(base, ik), "document id", index=i))
            rows.append({k: x for k, x in r.items() if k != ik})
    if not ids:
        raise EmptyInputError("no documents", file=label)
    refuse_broken(doc, ids, "document id")
    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    columns = {c: [_cell(r.get(c)) for r in rows] for c in cols}
    return metadata_frame(ids, columns, label=label, line_of=lambda i: doc.line(i),
                          where=lambda i: f" (at [{i}])" if doc.lines is None else "")




# ============================================================================ side files
def _side_kind(data: bytes, filename: str | None) -> str:
    if data[:4] == b"PAR1" or _ext(filename) == "parquet":
        return "parquet"
    if _is_json(_head(data), filename):
        return "json"
    return "text"


def _read_side(src: Source, label: str | None, *, table: Callable[..., Any], json: Callable[..., Any]) -> Any:
    """Read a side file along one path: bytes -> detected kind (Parquet, JSON, CSV/TSV) -> its reader."""
    data, label = read_source(src, label=label)
    filename = source_filename(src, label)
    kind = _side_kind(data, filename)
    if kind == "parquet":
        return table(data, fmt="parquet", label=label)
    if kind == "json":
        return json(data, label=label, filename=filename)
    sep = sniff_separator(decode_text(data, label))
    return table(data, fmt="tsv" if sep == "\t" else "csv", label=label)


def load_domains(src: Source, *, label: str | None = None) -> dict[str, str]:
    """query id → domain, from a CSV/TSV (``query_id,domain`` with or without header), Parquet, or JSON
    (``{query: domain}``, or an array of objects with a query and a domain field, e.g. a seed-003 file).

    Attach it with :meth:`Qrels.with_domains`. A query given two different domains is an error.
    """
    return _read_side(src, label, table=read_table_domains, json=read_json_domains)


def load_doc_metadata(src: Source, *, label: str | None = None) -> pd.DataFrame:
    """Document metadata for display: a DataFrame indexed by ``doc_id`` with ``title`` and ``text``
    columns first (``""`` when the file has none), then the file's other columns.

    Accepts CSV/TSV/Parquet with a header (id column ``doc_id``, ``_id``, ``id``, ...; title column
    ``title``/``name``; text column ``text``/``body``/``contents``/``abstract``/...), JSON
    (``{doc_id: {title, text}}``, ``{doc_id: text}`` or an array of objects) and JSONL such as
    BEIR's ``corpus.jsonl`` (``_id``, ``title``, ``text``). Duplicate ids are an error.
    """
    return _read_side(src, label, table=read_table_metadata, json=read_json_metadata)

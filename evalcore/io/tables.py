"""Readers of the non-TREC formats: long tables (CSV/TSV/Parquet); their writers live in :mod:`.table_write`.

The JSON ground-truth schemas of the user's spec (seed 001 ordered lists, seed 003
graded judgments) live in :mod:`evalcore.io.lists`; format detection in :mod:`evalcore.io.detect`; the
single entry points (``load_qrels``, ``load_run`` ...) in :mod:`evalcore.io`.

Long tables
-----------
A header line is required. Column names are matched case-insensitively after
turning ``-``, ``.`` and blanks into ``_`` (so ``corpus-id`` is ``corpus_id``);
the first synonym present wins:

==============  ==========================================================
role            accepted column names
==============  ==========================================================
query           query_id, qid, query, queryid, q_id, topic, topic_id, question_id
document        doc_id, docid, corpus_id, document_id, doc, document, docno, did,
                passage_id, pid, item_id, item, target_id, target
grade (qrels)   relevance, rel, grade, label, judgment, judgement, qrel,
                relevance_grade, score
score (runs)    score, sim, similarity, rsv, retrieval_score, relevance_score, value
rank (runs)     rank, position, pos
domain          domain, category
==============  ==========================================================

Runs need a score or a rank column; when only a rank is given the score is
``-rank`` (rank 1 is best). When both exist the rank is ignored, as trec_eval
does. Grades must be integers (``2.0`` is accepted, ``2.5`` is not); every other
column is ignored. Cells are stripped of surrounding ASCII white space (space, tab, CR, LF, VT, FF: what
separates a TREC line's fields), so an id keeps a non-breaking or another Unicode space as every id reader
keeps it (:data:`.source.ASCII_WS`): the same ids read as TREC, CSV/TSV or Parquet. CSV is comma
separated (semicolon when the header has no comma but a semicolon), TSV tab
separated; both follow RFC 4180 quoting.

Errors name the file and the line (Parquet: the row) of the first bad record,
with one error type per problem (see :mod:`evalcore.errors`). Nothing is ever
``eval``-ed or unpickled; input arrays and streams are left as they were.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._columns import encode_strings
from .._lazy import pd
from ..data import Qrels, Run
from ..errors import (
    ColumnCountError,
    ConflictingValueError,
    DuplicateIdError,
    EmptyInputError,
    EvalcoreError,
    InputFormatError,
    MissingColumnError,
    MissingValueError,
    NonFiniteValueError,
    OptionError,
    UnreadableFileError,
    ValueTypeError,
)
from ._arrow import read_csv_bytes, read_parquet_bytes
from .columns import (
    DOC_COLUMNS,
    DOMAIN_COLUMNS,
    GRADE_COLUMNS,
    GRADE_LIMIT,
    QUERY_COLUMNS,
    RANK_COLUMNS,
    SCORE_COLUMNS,
    pick_column,
)
from .source import (
    ASCII_WS,
    decode_text,
    file_stem,
    refuse_broken_ids,
    strip_ascii_ws,
)
from .table_write import (  # noqa: F401 - the writers, re-exported where they lived
    write_qrels_csv,
    write_qrels_parquet,
    write_run_csv,
    write_run_parquet,
)

__all__ = ["first_line", "sniff_separator", "read_table_qrels", "read_table_run", "write_qrels_csv", "write_run_csv", "write_qrels_parquet", "write_run_parquet"]


# ============================================================================ tables
class _Table:
    """Columns of a parsed table as pyarrow arrays, with the means to name a row's line."""

    def __init__(self, names: list[str], columns: list[Any], label: str, *,
                 lines: np.ndarray | None = None, rows_are_lines: bool = False, header_line: int | None = 1):
        self.names = names
        self.columns = columns
        self.label = label
        self.lines = lines              # file line of each data row (text tables, slow path)
        self.rows_are_lines = rows_are_lines  # Parquet: say "row N" instead of a line
        self.header_line = header_line

    @property
    def n_rows(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def line(self, i: int) -> int | None:
        return int(self.lines[i]) if self.lines is not None else None

    def where(self, i: int) -> str:
        """`` (row N)`` for Parquet rows, empty for text rows (the line goes into the error)."""
        return f" (row {i + 1})" if self.rows_are_lines else ""


class _NeedSlowPath(Exception):
    """The fast reader could not take the file; parse it with the csv module instead."""


def _header_of(first: str, sep: str) -> list[str]:
    first = first.rstrip("\r")
    if "\r" in first:
        raise _NeedSlowPath  # a bare carriage return: let the csv module decide what a line is
    try:
        return next(csv.reader([first], delimiter=sep), [])
    except csv.Error:
        raise _NeedSlowPath from None


def _fast_table(text: str, sep: str, label: str) -> _Table:
    """pyarrow's CSV reader on a file whose header is its plain first line."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    nl = text.find("\n")
    first = text if nl < 0 else text[:nl]
    if not text or text[0] in "\r\n" or '"' in first or nl < 0:
        raise _NeedSlowPath
    if '"' in text and re.search(r'(^|' + re.escape(sep) + r')[ \t]+"', text, flags=re.M):
        raise _NeedSlowPath  # a quote after blanks: only the csv module (skipinitialspace) reads it right
    header = _header_of(first, sep)
    body = text[nl + 1:].encode("utf-8")
    if not body or body.isspace():
        raise _NeedSlowPath
    names = [f"c{i}" for i in range(len(header))]
    try:
        tbl = read_csv_bytes(
            body,  # returns once arrow has let go of it (see evalcore.io._arrow.read_csv_bytes)
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names}, strings_can_be_null=False,
                quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, ValueError, OSError):
        raise _NeedSlowPath from None
    cols = [strip_ascii_ws(tbl.column(n).combine_chunks()) for n in names]
    return _Table(header, cols, label)


def _slow_table(text: str, sep: str, label: str) -> _Table:
    """csv-module reader: exact line numbers, the reference behaviour (blank rows skipped)."""
    import pyarrow as pa

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, skipinitialspace=True)
    header: list[str] | None = None
    header_line = None
    rows: list[list[str]] = []
    lines: list[int] = []
    prev = 0
    try:
        for row in reader:
            start, prev = prev + 1, reader.line_num
            if not row or all(not c.strip(ASCII_WS) for c in row):
                continue
            if header is None:
                header, header_line = row, start
                continue
            if len(row) != len(header):
                raise ColumnCountError(
                    f"expected {len(header)} columns as in the header ({sep.join(header)[:80]!r}), "
                    f"found {len(row)}: {sep.join(row)[:80]!r}", file=label, line=start)
            rows.append(row)
            lines.append(start)
    except csv.Error as e:
        raise InputFormatError(f"cannot parse the table ({e})", file=label, line=reader.line_num) from None
    if header is None:
        raise EmptyInputError("file is empty", file=label)
    cols = [pa.array([r[j].strip(ASCII_WS) for r in rows], type=pa.string()) for j in range(len(header))]
    return _Table(header, cols, label, lines=np.asarray(lines, dtype=np.int64), header_line=header_line)


def first_line(text: str) -> str:
    """The first line holding something other than blanks (without splitting the whole text)."""
    pos = 0
    while pos < len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl < 0 else text[pos:nl]
        if line.strip():
            return line.rstrip("\r")
        if nl < 0:
            break
        pos = nl + 1
    return ""


def sniff_separator(text: str, default: str = ",") -> str:
    """Tab if the header holds one, else comma, else semicolon, else ``default``."""
    first = first_line(text)
    if "\t" in first:
        return "\t"
    if "," in first:
        return ","
    if ";" in first:
        return ";"
    return default


def _csv_separator(text: str, sep: str) -> str:
    if sep == ",":
        first = first_line(text)
        if "," not in first and ";" in first:
            return ";"
    return sep


def _with_text_table(data: bytes, label: str, sep: str, build: Callable[[_Table], Any]) -> Any:
    """Parse a text table fast, build; on any input error redo both on the exact (slow) path."""
    text = decode_text(data, label)
    sep = _csv_separator(text, sep)
    try:
        fast = _fast_table(text, sep, label)
    except _NeedSlowPath:
        fast = None
    if fast is not None:
        try:
            return build(fast)
        except EvalcoreError:
            pass  # redo on the exact path, which names the line (or accepts the file)
    return build(_slow_table(text, sep, label))


def _parquet_table(data: bytes, label: str) -> _Table:
    try:
        tbl = read_parquet_bytes(data)
        names = [str(n) for n in tbl.column_names]
        cols = []
        for c in tbl.columns:
            arr = c.combine_chunks()
            arr.validate(full=True)  # a damaged file can hold invalid UTF-8 in a string column
            cols.append(arr)
    except Exception as e:  # noqa: BLE001 - any decoder failure of a damaged file is "unreadable"
        raise UnreadableFileError(f"not a readable Parquet file ({type(e).__name__}: {str(e)[:200]})",
                                  file=label) from None
    return _Table(names, cols, label, rows_are_lines=True, header_line=None)


def _require(tbl: _Table, role: str, synonyms: Sequence[str], hint: str = "") -> int:
    j = pick_column(tbl.names, synonyms)
    if j is None:
        looks_like_data = any(re.fullmatch(r"[-+]?[0-9.]+(e[-+]?[0-9]+)?", n.strip().lower())
                              for n in tbl.names)
        extra = "; the first line looks like data: a header line is required" if looks_like_data else ""
        raise MissingColumnError(
            f"no {role} column (accepted names: {', '.join(synonyms)}); the columns are "
            f"{[str(n) for n in tbl.names]}{extra}{hint}", file=tbl.label, line=tbl.header_line)
    return j


def _first_true(mask: Any) -> int | None:
    arr = np.asarray(mask, dtype=bool)
    hit = np.flatnonzero(arr)
    return int(hit[0]) if len(hit) else None


def _id_column(tbl: _Table, j: int, what: str) -> Any:
    """Column j as a pyarrow string array; null / empty cells raise :class:`MissingValueError`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = tbl.columns[j]
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_large_string(t):
        arr = arr.cast(pa.string())
    elif pa.types.is_integer(t):
        arr = pc.cast(arr, pa.string())
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        try:
            arr = pc.cast(arr, pa.string())
        except pa.ArrowInvalid:
            raise ValueTypeError(f"column {tbl.names[j]!r} ({what}) holds bytes that are not UTF-8 text",
                                 file=tbl.label) from None
    elif not pa.types.is_string(t):
        raise ValueTypeError(f"column {tbl.names[j]!r} ({what}) holds {t} values, expected text or integer ids",
                             file=tbl.label)
    if tbl.rows_are_lines:  # (a text table's cells are stripped as parsed)
        arr = strip_ascii_ws(arr)
    bad = pc.fill_null(pc.equal(pc.utf8_length(arr), 0), True).to_numpy(zero_copy_only=False)
    i = _first_true(bad)
    if i is not None:
        raise MissingValueError(f"empty {what} in column {tbl.names[j]!r}{tbl.where(i)}",
                                file=tbl.label, line=tbl.line(i))
    refuse_broken_ids(arr, what=what, file=tbl.label, line=tbl.line, where=tbl.where)
    return arr


def _number_column(tbl: _Table, j: int, what: str, *, ids: Callable[[int], tuple[str, str]] | None = None
                   ) -> np.ndarray:
    """Column j as float64; empty cells, text and (for scores) NaN/inf raise with the row's line."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = tbl.columns[j]
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    name = tbl.names[j]
    nulls = arr.is_null().to_numpy(zero_copy_only=False)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        nulls = nulls | pc.fill_null(pc.equal(pc.utf8_length(arr), 0), True).to_numpy(zero_copy_only=False)
    i = _first_true(nulls)
    if i is not None:
        raise MissingValueError(f"empty {what} in column {name!r}{tbl.where(i)}", file=tbl.label,
                                line=tbl.line(i))
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        try:
            out = pc.cast(arr, pa.float64(), safe=False).to_numpy(zero_copy_only=False)
        except pa.ArrowException as e:
            raise ValueTypeError(f"column {name!r} ({what}) cannot be read as numbers ({e})",
                                 file=tbl.label) from None
        values: list[Any] | None = None
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        try:
            out = pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False)
            values = None
        except pa.ArrowException:
            values = arr.to_pylist()
            out = np.empty(len(values), dtype=np.float64)
            for k, v in enumerate(values):
                try:
                    out[k] = float(v)
                except (ValueError, OverflowError):
                    ctx = " for document {1!r} of query {0!r}".format(*ids(k)) if ids is not None else ""
                    raise ValueTypeError(f"{what} {v!r}{ctx} is not a number{tbl.where(k)}", file=tbl.label,
                                         line=tbl.line(k)) from None
    else:
        raise ValueTypeError(f"column {name!r} ({what}) holds {t} values, expected numbers", file=tbl.label)
    out = np.asarray(out, dtype=np.float64)
    bad = ~np.isfinite(out)
    i = _first_true(bad)
    if i is not None:
        v = values[i] if values is not None else (arr[i].as_py() if pa.types.is_string(t) else out[i])
        ctx = ""
        if ids is not None:
            q, d = ids(i)
            ctx = f" for document {d!r} of query {q!r}"
        raise NonFiniteValueError(f"{what} {v!r}{ctx} is not finite ({_count(int(bad.sum()), 'such value')}){tbl.where(i)}",
                                  file=tbl.label, line=tbl.line(i))
    return out


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _grade_column(tbl: _Table, j: int) -> np.ndarray:
    import pyarrow as pa

    arr = tbl.columns[j]
    try:
        g = _number_column(tbl, j, "grade")
    except NonFiniteValueError as e:
        raise ValueTypeError(e.message.replace("is not finite", "is not an integer"), file=e.file,
                             line=e.line) from None
    bad = (g != np.round(g)) | (np.abs(g) > GRADE_LIMIT)
    i = _first_true(bad)
    if i is not None:
        v = arr[i].as_py() if isinstance(arr, pa.Array) else g[i]
        why = "is out of range" if g[i] == np.round(g[i]) else "is not an integer"
        raise ValueTypeError(f"grade {v!r} {why}{tbl.where(i)}", file=tbl.label, line=tbl.line(i))
    return g.astype(np.int64)


def _domains_of(tbl: _Table, qs: np.ndarray, j: int | None) -> dict[str, str] | None:
    """query -> domain from an optional domain column; a query with two domains is an error."""
    if j is None:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = tbl.columns[j]
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        try:
            arr = pc.cast(arr, pa.string())
        except pa.ArrowException:
            raise ValueTypeError(f"column {tbl.names[j]!r} (domain) holds {arr.type} values, expected text",
                                 file=tbl.label) from None
    dom = np.asarray(pc.fill_null(arr, "").to_pylist(), dtype=object)
    dom = np.asarray([d.strip() for d in dom], dtype=object)
    refuse_broken_ids(dom, what="domain", file=tbl.label, line=tbl.line, where=tbl.where)
    frame = pd.DataFrame({"q": qs, "d": dom})
    first = frame.drop_duplicates("q").set_index("q")["d"]
    clash = frame["d"].to_numpy() != first.reindex(frame["q"]).to_numpy()
    i = _first_true(clash)
    if i is not None:
        raise ConflictingValueError(
            f"query {qs[i]!r} is given two domains, {first[qs[i]]!r} and {dom[i]!r}{tbl.where(i)}",
            file=tbl.label, line=tbl.line(i), query=str(qs[i]))
    return {str(k): str(v) for k, v in first.items()}


def _build_qrels(tbl: _Table) -> Qrels:
    jq = _require(tbl, "query id", QUERY_COLUMNS)
    jd = _require(tbl, "document id", DOC_COLUMNS)
    jg = _require(tbl, "relevance grade", GRADE_COLUMNS)
    jdom = pick_column(tbl.names, DOMAIN_COLUMNS)
    if tbl.n_rows == 0:
        raise EmptyInputError("no judgments after the header", file=tbl.label, line=tbl.header_line)
    qs = _id_column(tbl, jq, "query id").to_numpy(zero_copy_only=False).astype(object)
    ds = _id_column(tbl, jd, "document id").to_numpy(zero_copy_only=False).astype(object)
    gs = _grade_column(tbl, jg)
    doms = _domains_of(tbl, qs, jdom)
    try:
        return Qrels.from_records(qs, ds, gs, domains=doms, source=tbl.label, lines=tbl.lines, check_ids=False)
    except DuplicateIdError as e:
        if tbl.rows_are_lines and e.query is not None:
            i = _nth_pair(qs, ds, e.query, e.item)
            raise DuplicateIdError(e.message + (f" (row {i + 1})" if i is not None else ""), file=tbl.label,
                                   query=e.query, item=e.item) from None
        raise


def _nth_pair(qs: np.ndarray, ds: np.ndarray, q: str, d: str | None, nth: int = 2) -> int | None:
    hit = np.flatnonzero((qs == q) & (ds == d))
    return int(hit[nth - 1]) if len(hit) >= nth else None


def _build_run(tbl: _Table, name: str) -> Run:
    jq = _require(tbl, "query id", QUERY_COLUMNS)
    jd = _require(tbl, "document id", DOC_COLUMNS)
    js = pick_column(tbl.names, SCORE_COLUMNS)
    jr = pick_column(tbl.names, RANK_COLUMNS)
    if js is None and jr is None:
        _require(tbl, "score or rank", SCORE_COLUMNS + RANK_COLUMNS)
    if tbl.n_rows == 0:
        raise EmptyInputError("no ranked documents after the header", file=tbl.label, line=tbl.header_line)
    qa = _id_column(tbl, jq, "query id")
    da = _id_column(tbl, jd, "document id")
    qc, qu = encode_strings(qa)
    dc, du = encode_strings(da)

    def ids(i: int) -> tuple[str, str]:
        return str(qu[qc[i]]), str(du[dc[i]])

    if js is not None:
        scores = _number_column(tbl, js, "score", ids=ids)
    else:
        scores = -_number_column(tbl, jr, "rank", ids=ids)
    try:
        return Run.from_codes(qu, qc, du, dc, scores, name=name, source=tbl.label, lines=tbl.lines, check_ids=False)
    except DuplicateIdError as e:
        if tbl.rows_are_lines and e.query is not None:
            i = _nth_pair(qu[qc], du[dc], e.query, e.item)
            raise DuplicateIdError(e.message + (f" (row {i + 1})" if i is not None else ""), file=tbl.label,
                                   query=e.query, item=e.item) from None
        raise


def _table(data: bytes, label: str, fmt: str, build: Callable[[_Table], Any]) -> Any:
    if fmt == "parquet":
        return build(_parquet_table(data, label))
    if fmt not in ("csv", "tsv"):
        raise OptionError(f"unknown table format {fmt!r}; supported: csv, tsv, parquet")
    return _with_text_table(data, label, "\t" if fmt == "tsv" else ",", build)


def read_table_qrels(data: bytes, *, fmt: str, label: str) -> Qrels:
    """Judgments from a CSV / TSV / Parquet long table ``query_id, doc_id, relevance[, domain]``."""
    return _table(data, label, fmt, _build_qrels)


def read_table_run(data: bytes, *, fmt: str, label: str, name: str | None = None) -> Run:
    """A run from a CSV / TSV / Parquet long table ``query_id, doc_id, score`` (or ``rank``)."""
    run_name = name or file_stem(label) or "run"
    refuse_broken_ids([run_name], what="run name", file=label)
    return _table(data, label, fmt, lambda t: _build_run(t, run_name))



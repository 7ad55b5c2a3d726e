"""Readers and writers for TREC qrels, TREC runs and BEIR qrels TSV (the writers live in :mod:`.trec_write`,
re-exported here).

Tolerance (everything trec_eval's own test files contain): lines starting with
``#`` are comments (a ``#`` inside an id is part of the id), blank lines are
skipped, columns are separated by any run of ASCII white space (space, tab, CR,
VT, FF: trec_eval's ``isspace``; a non-breaking space is part of an id), extra trailing
columns are ignored. The rank column of a run is ignored (order comes from the
scores, as in trec_eval).

Fast path: pyarrow's multithreaded CSV reader on single-space/tab separated
files; anything irregular falls back to pandas' C parser; any error is then
diagnosed line by line so the message names the file and the line.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from .._columns import factorize_strings
from .._lazy import pd
from ..data import Qrels, Run
from ..errors import (
    BinaryFileError,
    ColumnCountError,
    DuplicateIdError,
    EmptyInputError,
    InputFormatError,
    NonFiniteValueError,
    ValueTypeError,
    warn,
)
from .source import (
    ASCII_WS,
    PathOrBytes,
    file_stem,
    read_bytes,
    refuse_broken_ids,
    strip_ids,
)

if TYPE_CHECKING:
    pass
from .._columns import encode_strings, has_empty, numbers, strings
from ._arrow import read_csv_bytes
from .trec_write import (  # noqa: F401 - the writers' home until they moved (_check_trec_ids: tested here)
    _check_trec_ids,
    format_trec_topk,
    write_beir_qrels,
    write_trec_qrels,
    write_trec_run,
    write_trec_topk,
)

__all__ = ["read_trec_run", "read_trec_qrels", "read_beir_qrels", "write_trec_run", "write_trec_qrels", "write_beir_qrels", "format_trec_topk", "write_trec_topk"]

_NON_BLANK = re.compile(rb"\S")


def _blank(data: bytes) -> bool:
    """True when the bytes hold only white space (no copy of large inputs, unlike ``strip``)."""
    return _NON_BLANK.search(data) is None


def _decode_check(data: bytes, label: str) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BinaryFileError(f"not valid UTF-8 text (byte {e.start})", file=label, line=line) from None


def _strip_comments(data: bytes, label: str) -> bytes:
    """Blank out comment lines (beginning with ``#``), saying how many and where the first is (trec_eval has no
    comments: a query id ``#1`` would be read as one); keeping them as empty lines keeps error line numbers right."""
    if b"#" in data and (data.startswith(b"#") or b"\n#" in data):  # one-byte scan first: much faster
        lines = data.split(b"\n")
        comments = [i for i, ln in enumerate(lines, start=1) if ln.startswith(b"#")]
        warn(f"{label}: {len(comments)} line{'s' if len(comments) > 1 else ''} beginning with '#' read as "
             f"comment{'s' if len(comments) > 1 else ''} and skipped (line {comments[0]}"
             f"{', ...' if len(comments) > 1 else ''})")
        return b"\n".join(b"" if ln.startswith(b"#") else ln for ln in lines)
    return data


#: What separates TREC fields, as trec_eval separates them (C's ``isspace``): runs of ASCII white space, the line
#: feed aside (it ends the line): space, tab, CR, VT, FF. Anything else is part of a field: a non-breaking space or
#: another Unicode space is part of an id, and so is a control character such as U+2028 (the id check refuses it).
#: Both paths separate fields by it: the fast one by :func:`_normalize_ws`, the line-by-line one by :func:`trec_fields`.
_WS = re.compile(rb"[ \t\r\f\v]+")
_BLANKS = b" \t\r\f\v"


def trec_fields(line: bytes) -> list[str]:
    """The fields of one TREC line (without its line feed), separated by :data:`_WS` only (not by every white space
    Python's ``str.split()`` knows: ``'d\\xa01'`` is one field, as trec_eval reads it).

    >>> trec_fields(b"q1 0\\td\\xc2\\xa01  1\\r")
    ['q1', '0', 'd\\xa01', '1']
    """
    ln = line.strip(_BLANKS)
    return [p.decode("utf-8", errors="replace") for p in _WS.split(ln)] if ln else []


def _iter_lines(data: bytes):
    """(line number, fields) of each record line: comments (``#`` first) and blank lines skipped."""
    for i, raw in enumerate(data.split(b"\n"), start=1):
        if raw.startswith(b"#"):
            continue
        parts = trec_fields(raw)
        if parts:
            yield i, parts


_GRADE_LIMIT = 2**31 - 1  # larger (or infinite) grades would be cast to garbage int64 values


def _diagnose(data: bytes, label: str, *, ncols: int, layout: str, numeric: dict[int, str]) -> None:
    """Walk the lines and raise the first specific error (slow path, only after a failure)."""
    _decode_check(data, label)
    for lineno, parts in _iter_lines(data):
        if len(parts) < ncols:
            raise ColumnCountError(
                f"expected {ncols} columns ({layout}), found {len(parts)}: {' '.join(parts)[:80]!r}",
                file=label, line=lineno)
        for col, kind in numeric.items():
            v = parts[col]
            if kind == "int":
                try:
                    g = int(v)
                except ValueError:
                    try:
                        f = float(v)
                        if not f.is_integer():
                            raise ValueError
                        g = int(f)
                    except (ValueError, OverflowError):
                        raise ValueTypeError(f"grade {v!r} is not an integer", file=label, line=lineno) from None
                if abs(g) > _GRADE_LIMIT:
                    raise ValueTypeError(f"grade {v!r} is out of range", file=label, line=lineno)
            else:
                try:
                    f = float(v)
                except ValueError:
                    raise ValueTypeError(f"score {v!r} is not a number", file=label, line=lineno) from None
                if not np.isfinite(f):
                    raise NonFiniteValueError(f"score {v!r} is not finite", file=label, line=lineno)


def _find_pair_line(data: bytes, qcol: int, dcol: int, query: str, doc: str, nth: int = 2) -> int | None:
    seen = 0
    for lineno, parts in _iter_lines(data):
        if len(parts) > max(qcol, dcol) and parts[qcol] == query and parts[dcol] == doc:
            seen += 1
            if seen == nth:
                return lineno
    return None


def _field_line(data: bytes, col: int, value: str) -> int | None:
    """The first line whose field ``col`` is ``value`` (only after a refusal: names the line of an id)."""
    want = value.encode("utf-8")
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        parts = _WS.split(raw.strip(_BLANKS))
        if not raw.startswith(b"#") and len(parts) > col and parts[col] == want:
            return lineno
    return None


def _refuse_broken(data: bytes, label: str, col: int, ids: Any, what: str) -> None:
    """Refuse the first id of ``ids`` (read from field ``col``) holding a control character, naming its line."""
    def value(i: int) -> str:
        return str(ids[i].as_py() if hasattr(ids[i], "as_py") else ids[i])

    refuse_broken_ids(ids, what=what, file=label, line=lambda i: _field_line(data, col, value(i)))


def _refuse_broken_name(run_name: str, *, name: str | None, tag: str | None, body: bytes, label: str) -> None:
    """Refuse a run name holding a control character: the one given, else the run tag of the first line."""
    from_tag = not name and tag is not None and run_name == tag
    first = next((lineno for lineno, _ in _iter_lines(body[: 1 << 16])), None) if from_tag else None
    refuse_broken_ids([run_name], what="run tag" if from_tag else "run name", file=label, line=lambda _: first)


def _arrow_table(data: bytes, ncols: int, usecols: list[int], types: dict[int, str]):
    """Fast parse with pyarrow; returns None when the file is not in the simple layout."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow is a requirement
        return None
    delim = " "
    names = [f"c{i}" for i in range(ncols)]
    typemap = {"str": pa.string(), "int": pa.int64(), "float": pa.float64()}
    try:
        return read_csv_bytes(
            data,
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=delim, quote_char=False, escape_char=False),
            convert_options=pacsv.ConvertOptions(
                include_columns=[names[i] for i in usecols],
                column_types={names[i]: typemap[t] for i, t in types.items()},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
        return None


_EDGE = re.compile(rb"(?m)^ +| +$")


def _normalize_ws(data: bytes) -> bytes:
    """Collapse runs of blanks to one space and trim lines, so the fast reader can take the file."""
    return _EDGE.sub(b"", _WS.sub(b" ", data))


def _fast_table(data: bytes, ncols: int, usecols: list[int], types: dict[int, str]):
    """Parse single-space separated data with arrow; irregular blanks fall back to a normalised copy.

    Tabs, CR, FF, VT are detected by a byte scan. Double or trailing spaces make a line too
    long, which arrow rejects (then we normalise and retry); a leading space makes the first
    field empty, which is checked after parsing.
    """
    simple = not (b"\t" in data or b"\r" in data or b"\f" in data or b"\v" in data or data[:1] == b" ")
    if simple:
        tbl = _arrow_table(data, ncols, usecols, types)
        # (offsets read with numpy: pyarrow.compute with a Python scalar argument would import pandas)
        if tbl is not None and tbl.num_rows > 0 and not has_empty(tbl.column("c0")):
            return tbl
    return _arrow_table(_normalize_ws(data), ncols, usecols, types)


def _python_table(data: bytes, ncols: int, usecols: list[int], label: str, layout: str,
                  numeric: dict[int, str]) -> list[list[str]]:
    """Line-by-line parse (irregular files: extra trailing columns...); errors name the line."""
    _decode_check(data, label)
    cols: list[list[str]] = [[] for _ in usecols]
    for lineno, parts in _iter_lines(data):
        if len(parts) < ncols:
            raise ColumnCountError(
                f"expected {ncols} columns ({layout}), found {len(parts)}: {' '.join(parts)[:80]!r}",
                file=label, line=lineno)
        for out, c in zip(cols, usecols, strict=True):
            out.append(parts[c])
    if not cols[0]:
        raise EmptyInputError("no records (only comments or blank lines)", file=label)
    for col, kind in numeric.items():
        values = cols[usecols.index(col)]
        try:
            arr = np.asarray(values, dtype=np.float64)
        except ValueError:
            _diagnose(data, label, ncols=ncols, layout=layout, numeric=numeric)
            raise
        if kind == "int" and not np.all(np.isfinite(arr) & (arr == np.round(arr)) & (np.abs(arr) <= _GRADE_LIMIT)):
            _diagnose(data, label, ncols=ncols, layout=layout, numeric=numeric)
    return cols


def read_trec_run(src: PathOrBytes, *, name: str | None = None, label: str | None = None) -> Run:
    """Read a TREC run ``qid Q0 docid rank score tag``.

    The run is named ``name``, else by the tag of its first line, else by the file stem.
    A document listed twice for one query is an error naming the query, the document and the line.
    """
    data, label = read_bytes(src, name=label)
    layout = "qid Q0 docid rank score tag"
    body = _strip_comments(data, label)
    if _blank(body):
        raise EmptyInputError("no records (only comments or blank lines)", file=label)
    numeric = {4: "float"}
    tbl = _fast_table(body, 6, [0, 2, 4], {0: "str", 2: "str", 4: "float", 5: "str"})
    try:
        if tbl is not None and tbl.num_rows > 0:
            qc, qu = encode_strings(tbl.column("c0"))
            docs = tbl.column("c2")  # kept chunked: no copy of the ids
            if tbl.column("c4").null_count:  # arrow reads 'nan', 'N/A' as null
                _diagnose(data, label, ncols=6, layout=layout, numeric=numeric)
                raise NonFiniteValueError("a score is missing or not a number", file=label)
            scores = numbers(tbl.column("c4"))
            tag = _first_tag(body)
            run_name = name or tag or file_stem(label)
            _refuse_broken(data, label, 0, qu, "query id")
            _refuse_broken(data, label, 2, docs, "document id")
            _refuse_broken_name(run_name, name=name, tag=tag, body=body, label=label)
            if not np.all(np.isfinite(scores)):
                _diagnose(data, label, ncols=6, layout=layout, numeric=numeric)
            return Run.from_arrow_docs(qu, qc, docs, scores, name=run_name, source=label, check_ids=False)
        c0, c2, c4, c5 = _python_table(body, 6, [0, 2, 4, 5], label, layout, numeric)
        qc, qu = factorize_strings(np.asarray(c0, dtype=object))
        dc, du = factorize_strings(np.asarray(c2, dtype=object))
        scores = np.asarray(c4, dtype=np.float64)
        run_name = name or c5[0] or file_stem(label)
        _refuse_broken(data, label, 0, c0, "query id")
        _refuse_broken(data, label, 2, c2, "document id")
        _refuse_broken_name(run_name, name=name, tag=c5[0], body=body, label=label)
        if not np.all(np.isfinite(scores)):
            _diagnose(data, label, ncols=6, layout=layout, numeric=numeric)
        return Run.from_codes(qu, qc, du, dc, scores, name=run_name, source=label, check_ids=False)
    except DuplicateIdError as e:
        line = _find_pair_line(data, 0, 2, e.query or "", e.item or "")
        raise DuplicateIdError(e.message, file=label, line=line, query=e.query, item=e.item) from None


def _first_tag(body: bytes) -> str | None:
    """Sixth field of the first record line (the run tag)."""
    for _, parts in _iter_lines(body[: 1 << 16]):
        return parts[5] if len(parts) > 5 else None
    return None


def looks_like_run_line(parts: list[str]) -> bool:
    """Whether the white-space separated fields of a line read as a TREC run's: ``qid Q0 docid rank score
    [tag]`` (five or more, ``Q0`` second); judgments have four (``qid iter docid grade``)."""
    return len(parts) >= 5 and parts[1].upper() == "Q0"


def _refuse_a_run(body: bytes, data: bytes, label: str) -> None:
    """A run file given as judgments (its rank would be read as the grade): :class:`ColumnCountError` naming
    its first line."""
    for lineno, parts in _iter_lines(body[: 1 << 16]):
        if looks_like_run_line(parts):
            line = next((i for i, ln in enumerate(data.splitlines(), 1) if ln.strip() and not ln.lstrip().startswith(
                b"#")), lineno)
            raise ColumnCountError(f"{len(parts)} columns with 'Q0' second: this looks like a run file (qid Q0 docid "
                                   "rank score tag), not judgments (qid iter docid grade)", file=label, line=line)
        return


def read_trec_qrels(src: PathOrBytes, *, label: str | None = None) -> Qrels:
    """Read TREC qrels ``qid iter docid grade`` (grade an integer; 0 and negatives mean not relevant)."""
    data, label = read_bytes(src, name=label)
    layout = "qid iter docid grade"
    body = _strip_comments(data, label)
    if _blank(body):
        raise EmptyInputError("no records (only comments or blank lines)", file=label)
    _refuse_a_run(body, data, label)
    numeric = {3: "int"}
    tbl = _fast_table(body, 4, [0, 2, 3], {0: "str", 2: "str", 3: "int"})
    if tbl is not None and tbl.num_rows > 0:
        if tbl.column("c3").null_count:  # arrow reads 'nan', 'N/A' as null
            _diagnose(data, label, ncols=4, layout=layout, numeric=numeric)
            raise ValueTypeError("a grade is missing or not an integer", file=label)
        gs = numbers(tbl.column("c3"))
        if np.any(np.abs(gs) > _GRADE_LIMIT):
            _diagnose(data, label, ncols=4, layout=layout, numeric=numeric)
        qc, qu = encode_strings(tbl.column("c0"))
        docs = tbl.column("c2").combine_chunks()
        _refuse_broken(data, label, 0, qu, "query id")
        _refuse_broken(data, label, 2, docs, "document id")
        fast = Qrels.from_arrow_docs(qu, qc, docs, gs.astype(np.int64), source=label, check_ids=False)
        if fast is not None:
            return fast
        qs = qu[qc]
        ds = strings(docs)
    else:
        c0, c2, c3 = _python_table(body, 4, [0, 2, 3], label, layout, numeric)
        _refuse_broken(data, label, 0, c0, "query id")
        _refuse_broken(data, label, 2, c2, "document id")
        qs, ds = np.asarray(c0, dtype=object), np.asarray(c2, dtype=object)
        gs = np.asarray(c3, dtype=np.float64).astype(np.int64)
    try:
        return Qrels.from_records(qs, ds, gs, source=label, check_ids=False)  # (ids checked above, by line)
    except DuplicateIdError as e:
        line = _find_pair_line(data, 0, 2, e.query or "", e.item or "")
        raise DuplicateIdError(e.message, file=label, line=line, query=e.query, item=e.item) from None


def read_beir_qrels(src: PathOrBytes, *, label: str | None = None) -> Qrels:
    """Read BEIR qrels TSV with header ``query-id corpus-id score`` (ids stripped of ASCII white space only, as
    every id reader: :func:`.source.strip_ids`)."""
    data, label = read_bytes(src, name=label)
    _decode_check(data, label)
    text = data.decode("utf-8")
    first = text.split("\n", 1)[0].strip().split("\t")
    if [c.strip().lower() for c in first[:3]] != ["query-id", "corpus-id", "score"]:
        raise ColumnCountError(
            f"expected a BEIR header 'query-id<TAB>corpus-id<TAB>score', found {first!r}", file=label, line=1)
    try:
        df = pd.read_csv(io.StringIO(text), sep="\t", dtype=str, na_filter=False, quoting=3)
    except (pd.errors.ParserError, ValueError) as e:
        raise InputFormatError(f"cannot parse TSV ({e})", file=label) from None
    if len(df) == 0:
        raise EmptyInputError("no judgments after the header", file=label)
    cols = list(df.columns)
    for j in (0, 1):  # (ASCII white space around an id is not part of it, as in every id reader: a tab separates)
        df[cols[j]] = strip_ids(df[cols[j]])
    empty = (df[cols[0]] == "") | (df[cols[1]] == "") | (df[cols[2]] == "")
    if empty.any():
        i = int(np.flatnonzero(empty.to_numpy())[0])
        raise ColumnCountError("expected 3 tab-separated columns (query-id, corpus-id, score)",
                               file=label, line=_data_line(text, i))
    for j, what in ((0, "query id"), (1, "document id")):
        refuse_broken_ids(df[cols[j]].to_numpy(object), what=what, file=label, line=lambda i: _data_line(text, i))
    grades = pd.to_numeric(df[cols[2]], errors="coerce")
    bad = grades.isna() | (grades != np.round(grades)) | ~np.isfinite(grades) | (grades.abs() > _GRADE_LIMIT)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueTypeError(f"score {df[cols[2]].iloc[i]!r} is not an integer grade (or is out of range)", file=label,
                             line=_data_line(text, i))
    try:
        return Qrels.from_records(df[cols[0]].to_numpy(object), df[cols[1]].to_numpy(object),
                                  grades.to_numpy().astype(np.int64), source=label, check_ids=False)
    except DuplicateIdError as e:
        line = None
        for lineno, ln in enumerate(text.split("\n"), start=1):
            parts = ln.rstrip("\r").split("\t")
            if (lineno > 1 and len(parts) >= 2 and parts[0].strip(ASCII_WS) == e.query
                    and parts[1].strip(ASCII_WS) == e.item):
                line = lineno
        raise DuplicateIdError(e.message, file=label, line=line, query=e.query, item=e.item) from None


def _data_line(text: str, row: int) -> int:
    """File line of the row-th data row of a headed TSV (blank lines skipped)."""
    n = -1
    for lineno, ln in enumerate(text.split("\n"), start=1):
        if lineno == 1 or not ln.strip():
            continue
        n += 1
        if n == row:
            return lineno
    return row + 2

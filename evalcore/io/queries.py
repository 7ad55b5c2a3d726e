"""Query texts: query id -> the text a person typed (shown above a query's drill-down).

Accepted files (detected from the content, then the extension):

* JSON Lines / JSON records with an id field and a text field — BEIR's
  ``queries.jsonl`` (``{"_id": "1", "text": "...", "metadata": {}}``); id fields
  ``_id``, ``id``, ``query_id``, ``qid``, ...; text fields ``text``, ``query``,
  ``question``, ``title``, ...;
* a JSON object ``{query_id: text}``;
* a table with a header naming an id and a text column (CSV, TSV, Parquet);
* a header-less two-column TSV ``id<TAB>text`` (MS MARCO's ``queries.tsv``;
  the text is everything after the first tab).

A duplicate id, a record without an id or a text, an id holding a control character
(a tab, a line break, NUL...), or an empty file is an error naming the file and the
line (JSON, text tables) or the record. A text is prose: it may hold tabs and line breaks.
JSON records with ``_id``, ``title`` and ``text`` (a BEIR ``corpus.jsonl`` given as the queries) are read (a
queries file may carry extra fields) with one warning saying so and how many texts were read.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from ..errors import DuplicateIdError, EmptyInputError, InputFormatError, MissingColumnError, warn
from .columns import QUERY_COLUMNS, norm_column
from .detect import _ext, _head, _is_json
from .jsonfmt import parse_json, refuse_broken
from .source import ASCII_WS, Source, decode_text, read_source, refuse_broken_ids, source_filename

__all__ = ["QUERY_ID_FIELDS", "QUERY_TEXT_FIELDS", "load_queries"]

#: Accepted names of the id field / column (compared case- and separator-insensitively).
QUERY_ID_FIELDS: tuple[str, ...] = ("_id", "id", *QUERY_COLUMNS)
#: Accepted names of the text field / column, first found wins.
QUERY_TEXT_FIELDS: tuple[str, ...] = ("text", "query", "query_text", "question", "title", "body", "contents")


def _pick(names: list[str], wanted: tuple[str, ...], exclude: str | None = None) -> str | None:
    by_norm = {}
    for n in names:
        by_norm.setdefault(norm_column(n), n)
    for w in wanted:
        hit = by_norm.get(norm_column(w))
        if hit is not None and hit != exclude:
            return hit
    return None


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _add(out: dict[str, str], qid: Any, text: Any, *, label: str, line: int | None, where: str = "",
         check: bool = True) -> None:
    if qid is None or (isinstance(qid, str) and not qid.strip(ASCII_WS)) or isinstance(qid, (dict, list, bool)):
        raise InputFormatError(f"query id missing or not a string/number{where}", file=label, line=line)
    q = str(qid).strip(ASCII_WS)  # (ASCII white space only: a Unicode space is part of an id, as in TREC files)
    if check:  # (an id, not its text: a text may hold tabs and line breaks)
        refuse_broken_ids([q], what="query id", file=label, line=lambda _: line, where=lambda _: where)
    if q in out:
        raise DuplicateIdError(f"query {q!r} is given twice{where}", file=label, line=line, query=q)
    out[q] = _text(text)


def _from_json(data: bytes, label: str, filename: str | None) -> dict[str, str]:
    doc = parse_json(data, label, filename=filename)
    v = doc.value
    out: dict[str, str] = {}
    if isinstance(v, dict) and not all(isinstance(x, dict) for x in v.values()):
        for k, text in v.items():
            if isinstance(text, (dict, list)):
                raise InputFormatError(f"query {k!r}: expected a text, got a {type(text).__name__}", file=label)
            _add(out, k, text, label=label, line=None, check=False)
        refuse_broken(doc, list(out), "query id")
        return out
    if isinstance(v, dict):  # {qid: {text: ...}}
        records = [{"_id": k, **body} for k, body in v.items()]
    elif isinstance(v, list):
        records = v
    else:
        raise InputFormatError("expected JSON records {_id, text} or an object {query_id: text}", file=label)
    corpus: list[str] | None = None
    for i, r in enumerate(records):
        line = doc.line(i)
        where = "" if line is not None else f" (record {i})"
        if not isinstance(r, dict):
            raise InputFormatError(f"expected an object {{_id, text}}, got {type(r).__name__}{where}", file=label,
                                   line=line)
        names = list(r)
        idk = _pick(names, QUERY_ID_FIELDS)
        if idk is None:
            raise MissingColumnError(f"no query id field (accepted: {', '.join(QUERY_ID_FIELDS)}); the fields are "
                                     f"{names}{where}", file=label, line=line)
        tk = _pick(names, QUERY_TEXT_FIELDS, exclude=idk)
        if tk is None:
            raise MissingColumnError(f"no query text field (accepted: {', '.join(QUERY_TEXT_FIELDS)}); the fields "
                                     f"are {names}{where}", file=label, line=line)
        _add(out, r[idk], r[tk], label=label, line=line, where=where, check=False)
        if i == 0:
            corpus = _looks_like_corpus(names, tk)
    refuse_broken(doc, list(out), "query id")
    if records and corpus:
        n = len(out)
        warn(f"{label}: its records have the fields {', '.join(map(repr, corpus))}, like a corpus (BEIR "
             f"corpus.jsonl: documents with _id, title, text), not a queries file (queries.jsonl: _id, text); read "
             f"{n:,} {'text' if n == 1 else 'texts'} from the field {tk!r} as query texts — if this is the corpus, "
             "load the queries file instead", stacklevel=3)
    return out


def _looks_like_corpus(names: list[str], text_field: str) -> list[str] | None:
    """The first record's id, title and text fields when it has a ``title`` besides the text read (``text``): a BEIR
    corpus record (``_id, title, text``). A record whose text *is* its title (TREC topics) is a query."""
    title = _pick(names, ("title",))
    if title is None or norm_column(text_field) != norm_column("text"):
        return None
    return [n for n in names if n in (_pick(names, QUERY_ID_FIELDS), title, text_field)]


def _from_parquet(data: bytes, label: str) -> dict[str, str]:
    from ._arrow import read_parquet_bytes

    try:
        table = read_parquet_bytes(data)
    except Exception as e:  # noqa: BLE001 - arrow raises many kinds; the message says what
        raise InputFormatError(f"not a readable Parquet file ({type(e).__name__}: {str(e)[:200]})", file=label) from None
    names = [str(c) for c in table.column_names]
    idk, tk = _pick(names, QUERY_ID_FIELDS), None
    if idk is not None:
        tk = _pick(names, QUERY_TEXT_FIELDS, exclude=idk)
    if idk is None or tk is None:
        raise MissingColumnError(f"needs a query id column and a text column; the columns are {names}", file=label)
    out: dict[str, str] = {}
    for i, (q, t) in enumerate(zip(table.column(idk).to_pylist(), table.column(tk).to_pylist(), strict=True)):
        _add(out, q, t, label=label, line=None, where=f" (row {i + 1})")
    return out


def _from_text(data: bytes, label: str, filename: str | None) -> dict[str, str]:
    """A table with a header, else ``id<TAB>text`` lines. A line ends as a text file's and the csv module's do (LF,
    CRLF or CR), not at every character :meth:`str.splitlines` breaks on (U+2028, U+0085, VT, FF,
    ``\\x1c``-``\\x1e``): inside a quoted cell or a text those are the file's characters, kept in a text and shown as
    they are in a refused id, and the lines after them keep their numbers."""
    text = decode_text(data, label)
    raw = list(io.StringIO(text, newline=""))  # the file's lines, each with its line end
    lines = [ln.rstrip("\r\n") for ln in raw]
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        raise EmptyInputError("no query", file=label)
    head = lines[first]
    sep = "\t" if "\t" in head else ("," if (_ext(filename) == "csv" or "," in head) else None)
    out: dict[str, str] = {}
    if sep is not None:
        cells = next(csv.reader([head], delimiter=sep))
        idk = _pick(cells, QUERY_ID_FIELDS)
        tk = _pick(cells, QUERY_TEXT_FIELDS, exclude=idk) if idk is not None else None
        if idk is not None and tk is not None:
            ii, ti = cells.index(idk), cells.index(tk)
            # the text after the header's line, as it is; the csv module decides where a record ends (a quoted line
            # break is part of its cell)
            reader = csv.reader(io.StringIO("".join(raw[first + 1:]), newline=""), delimiter=sep)
            prev = 0
            for row in reader:
                line, prev = first + 2 + prev, reader.line_num  # the file line the record starts on
                if not row or not any(c.strip() for c in row):
                    continue
                if len(row) <= max(ii, ti):
                    raise InputFormatError(f"expected {len(cells)} columns ({', '.join(cells)}), got {len(row)}",
                                           file=label, line=line)
                _add(out, row[ii], row[ti], label=label, line=line)
            if not out:
                raise EmptyInputError("no query after the header", file=label)
            return out
    if sep != "\t":
        raise InputFormatError("expected a header naming a query id and a text column, or lines 'id<TAB>text'",
                               file=label, line=first + 1)
    for n, ln in enumerate(lines, start=1):
        if not ln.strip():
            continue
        if "\t" not in ln:
            raise InputFormatError("expected 'id<TAB>text'", file=label, line=n)
        q, t = ln.split("\t", 1)
        _add(out, q, t.strip(), label=label, line=n)
    return out


def load_queries(src: Source, *, label: str | None = None) -> dict[str, str]:
    """Query id -> query text from BEIR ``queries.jsonl``, JSON, CSV/TSV/Parquet or ``id<TAB>text`` lines.

    Parameters
    ----------
    src : path, bytes or binary stream
    label : str, optional
        Name used in error messages (default: the file name).

    Returns
    -------
    dict of str to str
        In file order; ids are stripped of surrounding blanks, texts kept as written.

    Raises
    ------
    InputFormatError
        (or a subclass) naming the file and the line: unreadable content, a
        record without an id or a text, a duplicate id, no query at all.

    Warns
    -----
    EvalcoreWarning
        once, when JSON records look like a BEIR corpus (``_id``, ``title``, ``text``): the file is read all the
        same (the ``text`` field), and the warning says how many texts were read.
    """
    data, label = read_source(src, label=label)
    filename = source_filename(src, label)
    if data[:4] == b"PAR1" or _ext(filename) == "parquet":
        out = _from_parquet(data, label)
    elif _is_json(_head(data), filename):
        out = _from_json(data, label, filename)
    else:
        out = _from_text(data, label, filename)
    if not out:
        raise EmptyInputError("no query", file=label)
    return out

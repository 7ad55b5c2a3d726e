"""Format detection, in one place: content first, the file extension only where the content is ambiguous.

A table (CSV, TSV) is recognised by a header line naming a query and a document column, unless the first lines
all read as TREC records (:func:`_reads_as_trec`): TREC ids may hold commas, so a TREC line can look like such a
header. BEIR's qrels header (``query-id corpus-id score``) followed by a domain column is such a table (the BEIR
reader has no domain: it would drop them).
"""

from __future__ import annotations

import csv
import json
import os
import re

from ..errors import OptionError
from .columns import DOC_COLUMNS, DOMAIN_COLUMNS, QUERY_COLUMNS, norm_column
from .jsonfmt import ID_FIELDS
from .trec import trec_fields

__all__ = ["QRELS_FORMATS", "RUN_FORMATS", "FORMAT_DESCRIPTIONS", "detect_qrels_format", "detect_run_format"]

QRELS_FORMATS = ("trec", "beir", "csv", "tsv", "parquet", "json_dict", "ordered_lists", "graded_json")
RUN_FORMATS = ("trec", "csv", "tsv", "parquet", "json_dict")

FORMAT_DESCRIPTIONS: dict[str, str] = {
    "auto": "detect from the content (and the file extension where the content is ambiguous)",
    "trec": "TREC: qrels 'qid iter docid grade', runs 'qid Q0 docid rank score tag'",
    "beir": "BEIR qrels TSV with header 'query-id corpus-id score'",
    "csv": "CSV long table with header: query_id, doc_id, relevance (qrels) or score/rank (runs)",
    "tsv": "TSV long table with header: query_id, doc_id, relevance (qrels) or score/rank (runs)",
    "parquet": "Parquet long table: query_id, doc_id, relevance (qrels) or score/rank (runs)",
    "json_dict": "JSON {query: {doc: grade}} (qrels) or {query: {doc: score}} (runs)",
    "ordered_lists": "JSON array of {id, <aspect>: [ordered ids], ...} (seed 001); grade = n + 1 - position",
    "graded_json": "JSON [{query, relevance_judgments: {item: grade}, domain}] or synonym pairs "
                   "{source, synonyms: {exact, partial, related}, domain} (seed 003)",
}

_ALIASES = {"json": "json_dict", "pq": "parquet", "seed001": "ordered_lists", "seed003": "graded_json"}
_EXT = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet",
        ".json": "json", ".jsonl": "json", ".ndjson": "json"}
_GRADED_KEYS = re.compile(rb'"(relevance_judgments|synonyms)"\s*:')
_HEAD = 1 << 16


# ============================================================================ detection
def _ext(filename: str | None) -> str:
    if not filename:
        return ""
    return _EXT.get(os.path.splitext(str(filename))[1].lower(), "")


def _head(data: bytes) -> bytes:
    head = data[:_HEAD]
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    return head.lstrip()


def _first_line(head: bytes) -> str:
    for raw in head.split(b"\n"):
        if raw.strip():
            return raw.decode("utf-8", errors="replace").strip("\r\n")
    return ""


def _table_kind(line: str) -> str | None:
    """``tsv`` / ``csv`` when ``line`` is a header naming a query and a document column."""
    sep = "\t" if "\t" in line else ("," if "," in line else (";" if ";" in line else None))
    if sep is None:
        return None
    try:
        cells = {norm_column(c) for c in next(csv.reader([line], delimiter=sep), [])}
    except csv.Error:
        return None
    if cells & set(QUERY_COLUMNS) and cells & set(DOC_COLUMNS):
        return "tsv" if sep == "\t" else "csv"
    return None


def _number(text: str, *, integer: bool) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return value.is_integer() if integer else True


def _reads_as_trec(data: bytes, *, run: bool, lines: int = 10) -> bool:
    """Whether the first record lines of ``data`` (up to ``lines``; comments and blank lines aside, as the TREC
    readers skip them) all read as TREC records: fields separated as the readers separate them
    (:func:`~.trec.trec_fields`), judgments with an integer fourth field (the grade), runs with six fields or more
    and a number as the fifth (the score).

    A table's header line never does (its fields there are column names), so a TREC file whose first line looks
    like a header (ids holding commas around a column name, ``topic,12 0 web,doc,3 1``) is not taken for a table;
    a header whose own text does (``query id,doc id,grade 1``) is followed by data lines that do not.
    """
    head = data[:_HEAD]
    pieces = head.split(b"\n")
    if len(data) > len(head):
        pieces = pieces[:-1]  # (the last line may be cut)
    seen = 0
    for raw in pieces:
        if raw.startswith(b"#"):
            continue
        parts = trec_fields(raw)
        if not parts:
            continue
        if run and not (len(parts) >= 6 and _number(parts[4], integer=False)):
            return False
        if not run and not (len(parts) >= 4 and _number(parts[3], integer=True)):
            return False
        seen += 1
        if seen == lines:
            break
    return seen > 0


_STR = rb'"(?:[^"\\\n]|\\.)*"'
_OBJECT_START = re.compile(rb"\{\s*(?:\}|" + _STR + rb"\s*:)")
_VALUE_NEXT = re.compile(rb"(?:\]|(?:" + _STR + rb"|-?[0-9][0-9.eE+-]*|true|false|null)\s*[,\]])")
_ARRAY_OPENERS = re.compile(rb"(?:\[\s*)*")


def looks_like_json(head: bytes) -> bool:
    """Whether ``head`` (blanks and a BOM stripped) starts as JSON does: ``{`` then ``}`` or a key, or ``[`` then
    ``]``, an object, or a value followed by ``,`` / ``]``. A TREC line whose first id begins with ``{`` or ``[``
    (``{1 Q0 d1 1 0.5 run``) does not: it is read as what it is, not refused as broken JSON."""
    opened = _ARRAY_OPENERS.match(head)
    rest = head[opened.end():] if opened else head
    if rest[:1] == b"{":
        return _OBJECT_START.match(rest) is not None
    return bool(opened and opened.end()) and _VALUE_NEXT.match(rest) is not None


def _is_json(head: bytes, filename: str | None) -> bool:
    return looks_like_json(head) or _ext(filename) == "json"


def _json_qrels_kind(head: bytes) -> str:
    if head[:1] == b"[":
        return "graded_json" if _GRADED_KEYS.search(head) else "ordered_lists"
    if _GRADED_KEYS.search(head) and re.search(rb'"(queries|data)"\s*:\s*\[', head):
        return "graded_json"
    try:  # JSONL: a first line that is a whole record
        first = json.loads(_first_line(head))
    except (ValueError, RecursionError):
        first = None
    if isinstance(first, dict):
        if "relevance_judgments" in first or "synonyms" in first:
            return "graded_json"
        has_id = any(k.lower() in ID_FIELDS or k.lower().endswith("_id") for k, v in first.items()
                     if isinstance(v, str | int) and not isinstance(v, bool))
        if has_id and any(isinstance(v, list) for v in first.values()):
            return "ordered_lists"
    return "json_dict"


def detect_qrels_format(data: bytes, filename: str | None = None) -> str:
    """Guess the ground-truth format of ``data`` (see the module docstring for the rules). Never raises."""
    if data[:4] == b"PAR1":
        return "parquet"
    head = _head(data)
    if looks_like_json(head):
        return _json_qrels_kind(head)
    line = _first_line(head)
    cells = [c.strip().lower() for c in line.split("\t")]
    if cells[:3] == ["query-id", "corpus-id", "score"] and not {norm_column(c) for c in cells[3:]} & set(DOMAIN_COLUMNS):
        return "beir"  # (with a domain column, BEIR's header is a long table's: its reader keeps the domains)
    kind = _table_kind(line)
    if kind:
        return "trec" if _reads_as_trec(data, run=False) else kind
    ext = _ext(filename)
    if ext == "json":
        return _json_qrels_kind(head)
    return ext if ext in ("csv", "tsv", "parquet") else "trec"


def detect_run_format(data: bytes, filename: str | None = None) -> str:
    """Guess the run format of ``data`` (see the module docstring for the rules). Never raises."""
    if data[:4] == b"PAR1":
        return "parquet"
    head = _head(data)
    if looks_like_json(head):
        return "json_dict"
    kind = _table_kind(_first_line(head))
    if kind:
        return "trec" if _reads_as_trec(data, run=True) else kind
    ext = _ext(filename)
    if ext == "json":
        return "json_dict"
    return ext if ext in ("csv", "tsv", "parquet") else "trec"


def _canonical(format: str, supported: tuple[str, ...], what: str) -> str:
    if not isinstance(format, str):
        raise OptionError(f"format must be a string, got {type(format).__name__}")
    f = format.strip().lower()
    f = _ALIASES.get(f, f)
    if f != "auto" and f not in supported:
        raise OptionError(f"unknown {what} format {format!r}; supported: auto, {', '.join(supported)}")
    return f

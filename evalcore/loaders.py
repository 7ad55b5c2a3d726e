"""Loading ground truth and runs from any supported file, with format auto-detection.

``load_qrels(src, format="auto")`` and ``load_run(src, format="auto")`` are the
single entry points used by the CLI and the dashboard; ``src`` is a path, bytes
or a binary stream (a seekable stream is left at its position). An explicit
``format=`` always wins over detection.

Ground-truth formats (``QRELS_FORMATS``)
    ``trec`` (``qid iter docid grade``), ``beir`` (TSV ``query-id corpus-id score``),
    ``csv`` / ``tsv`` / ``parquet`` (long tables, see :mod:`evalcore.formats`),
    ``json_dict`` (``{query: {doc: grade}}``), ``ordered_lists`` (seed 001; pick the
    list with ``aspect=``), ``graded_json`` (seed 003; keeps query domains).
Run formats (``RUN_FORMATS``)
    ``trec`` (``qid Q0 docid rank score tag``), ``csv`` / ``tsv`` / ``parquet``
    (``query_id, doc_id, score`` or ``rank``), ``json_dict`` (``{query: {doc: score}}``).

Detection (content first, the file extension only where the content is ambiguous)
    1. ``PAR1`` magic bytes → ``parquet``.
    2. Content starting with ``{`` or ``[`` (after a BOM and blanks) → JSON:
       runs → ``json_dict``; ground truth → ``graded_json`` when the head mentions
       ``"relevance_judgments"`` or ``"synonyms"``; else an array (or JSONL records with
       an id field and a list field) → ``ordered_lists``; else an object → ``json_dict``.
    3. First non-blank line ``query-id<TAB>corpus-id<TAB>score`` → ``beir`` (ground truth).
    4. First non-blank line is a tab / comma / semicolon separated header naming a query
       column and a document column (synonyms in :mod:`evalcore.formats`) → ``tsv`` (tab)
       or ``csv``.
    5. Otherwise by extension: ``.csv`` → csv, ``.tsv``/``.tab`` → tsv, ``.parquet``/``.pq``
       → parquet, ``.json``/``.jsonl``/``.ndjson`` → JSON as in 2 (so broken JSON gets a JSON
       error with line and column); anything else (``.txt``, ``.qrels``, ``.run``, none) → ``trec``.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Mapping
from typing import IO

from ._lazy import pd
from .data import Qrels, Run
from .errors import OptionError
from .formats import (
    DOC_COLUMNS,
    QUERY_COLUMNS,
    decode_text,
    norm_column,
    read_source,
    read_table_domains,
    read_table_metadata,
    read_table_qrels,
    read_table_run,
    sniff_separator,
    source_filename,
    write_qrels_csv,
    write_qrels_parquet,
    write_run_csv,
    write_run_parquet,
)
from .formats_json import (
    ID_FIELDS,
    SYNONYM_GRADES,
    ordered_list_aspects,
    read_graded_json,
    read_json_dict_qrels,
    read_json_dict_run,
    read_json_domains,
    read_json_metadata,
    read_ordered_lists,
    write_ordered_lists,
    write_qrels_json,
    write_run_json,
)
from .io_trec import (
    read_beir_qrels,
    read_trec_qrels,
    read_trec_run,
    write_beir_qrels,
    write_trec_qrels,
    write_trec_run,
)

__all__ = [
    "load_qrels", "load_run", "detect_qrels_format", "detect_run_format", "list_aspects", "load_domains",
    "load_doc_metadata", "QRELS_FORMATS", "RUN_FORMATS", "FORMAT_DESCRIPTIONS", "SYNONYM_GRADES",
    "write_qrels_csv", "write_run_csv", "write_qrels_json", "write_run_json", "write_ordered_lists",
    "write_qrels_parquet", "write_run_parquet", "write_trec_qrels", "write_trec_run", "write_beir_qrels",
]

Source = str | os.PathLike | bytes | IO[bytes]

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


def _is_json(head: bytes, filename: str | None) -> bool:
    return head[:1] in (b"{", b"[") or _ext(filename) == "json"


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
    if head[:1] in (b"{", b"["):
        return _json_qrels_kind(head)
    line = _first_line(head)
    if [c.strip().lower() for c in line.split("\t")[:3]] == ["query-id", "corpus-id", "score"]:
        return "beir"
    kind = _table_kind(line)
    if kind:
        return kind
    ext = _ext(filename)
    if ext == "json":
        return _json_qrels_kind(head)
    return ext if ext in ("csv", "tsv", "parquet") else "trec"


def detect_run_format(data: bytes, filename: str | None = None) -> str:
    """Guess the run format of ``data`` (see the module docstring for the rules). Never raises."""
    if data[:4] == b"PAR1":
        return "parquet"
    head = _head(data)
    if head[:1] in (b"{", b"["):
        return "json_dict"
    kind = _table_kind(_first_line(head))
    if kind:
        return kind
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


# ============================================================================ ground truth
def load_qrels(src: Source, *, format: str = "auto", aspect: str | None = None, label: str | None = None,
               grade_scheme: Mapping[str, int] = SYNONYM_GRADES) -> Qrels:
    """Read graded judgments from any supported format.

    Parameters
    ----------
    src : path, bytes or binary stream
    format : "auto" or one of ``QRELS_FORMATS``; an explicit format skips detection.
    aspect : which ordered list of a seed-001 (``ordered_lists``) file to use — the field name,
        or a unique part of it (``"overall"``); required when the file has several.
    label : name used in messages (default: the path or the stream's name).
    grade_scheme : grades of the synonym categories of seed-003 synonym pairs (default
        exact 3, partial 2, related 1); never modified.
    """
    fmt = _canonical(format, QRELS_FORMATS, "ground-truth")
    data, label = read_source(src, label=label)
    filename = source_filename(src, label)
    if fmt == "auto":
        fmt = detect_qrels_format(data, filename)
    if aspect is not None and fmt != "ordered_lists":
        raise OptionError(f"aspect= applies to the ordered_lists format only; this file is read as {fmt!r}",
                          file=label)
    if fmt == "trec":
        return read_trec_qrels(data, label=label)
    if fmt == "beir":
        return read_beir_qrels(data, label=label)
    if fmt in ("csv", "tsv", "parquet"):
        return read_table_qrels(data, fmt=fmt, label=label)
    if fmt == "json_dict":
        return read_json_dict_qrels(data, label=label, filename=filename)
    if fmt == "ordered_lists":
        return read_ordered_lists(data, label=label, aspect=aspect, filename=filename)
    return read_graded_json(data, label=label, grade_scheme=grade_scheme, filename=filename)


def list_aspects(src: Source, *, format: str = "auto", label: str | None = None) -> list[str]:
    """The ordered-list fields (aspects) of a seed-001 file, in file order; ``[]`` for other formats.

    With ``format="auto"`` the file is first detected (other formats give ``[]``); with
    ``format="ordered_lists"`` it is read as such whatever it looks like. The file is fully
    validated (seed 001 §1.3), so problems surface as soon as it is chosen.
    """
    fmt = _canonical(format, QRELS_FORMATS, "ground-truth")
    data, label = read_source(src, label=label)
    filename = source_filename(src, label)
    if fmt == "auto":
        fmt = detect_qrels_format(data, filename)
    if fmt != "ordered_lists":
        return []
    return ordered_list_aspects(data, label=label, filename=filename)


# ============================================================================ runs
def load_run(src: Source, *, format: str = "auto", name: str | None = None, label: str | None = None) -> Run:
    """Read a run from any supported format.

    The run is named ``name``, else (TREC) by the tag of its first line, else by the file stem.
    """
    fmt = _canonical(format, RUN_FORMATS, "run")
    data, label = read_source(src, label=label)
    filename = source_filename(src, label)
    if fmt == "auto":
        fmt = detect_run_format(data, filename)
    if fmt == "trec":
        return read_trec_run(data, name=name, label=label)
    if fmt in ("csv", "tsv", "parquet"):
        return read_table_run(data, fmt=fmt, label=label, name=name)
    return read_json_dict_run(data, label=label, name=name, filename=filename)


# ============================================================================ side files
def _side_kind(data: bytes, filename: str | None) -> str:
    if data[:4] == b"PAR1" or _ext(filename) == "parquet":
        return "parquet"
    if _is_json(_head(data), filename):
        return "json"
    return "text"


def load_domains(src: Source, *, label: str | None = None) -> dict[str, str]:
    """query id → domain, from a CSV/TSV (``query_id,domain`` with or without header), Parquet, or JSON
    (``{query: domain}``, or an array of objects with a query and a domain field, e.g. a seed-003 file).

    Attach it with :meth:`Qrels.with_domains`. A query given two different domains is an error.
    """
    data, label = read_source(src, label=label)
    filename = source_filename(src, label)
    kind = _side_kind(data, filename)
    if kind == "parquet":
        return read_table_domains(data, fmt="parquet", label=label)
    if kind == "json":
        return read_json_domains(data, label=label, filename=filename)
    sep = sniff_separator(decode_text(data, label))
    return read_table_domains(data, fmt="tsv" if sep == "\t" else "csv", label=label)


def load_doc_metadata(src: Source, *, label: str | None = None) -> pd.DataFrame:
    """Document metadata for display: a DataFrame indexed by ``doc_id`` with ``title`` and ``text``
    columns first (``""`` when the file has none), then the file's other columns.

    Accepts CSV/TSV/Parquet with a header (id column ``doc_id``, ``_id``, ``id``, ...; title column
    ``title``/``name``; text column ``text``/``body``/``contents``/``abstract``/...), JSON
    (``{doc_id: {title, text}}``, ``{doc_id: text}`` or an array of objects) and JSONL such as
    BEIR's ``corpus.jsonl`` (``_id``, ``title``, ``text``). Duplicate ids are an error.
    """
    data, label = read_source(src, label=label)
    filename = source_filename(src, label)
    kind = _side_kind(data, filename)
    if kind == "parquet":
        return read_table_metadata(data, fmt="parquet", label=label)
    if kind == "json":
        return read_json_metadata(data, label=label, filename=filename)
    sep = sniff_separator(decode_text(data, label))
    return read_table_metadata(data, fmt="tsv" if sep == "\t" else "csv", label=label)

"""Every reader and writer of evalcore, behind one front.

A file is read along one path: source (path, bytes or stream) → bytes
(:mod:`.source`) → detected format (:mod:`.detect`) → one reader (:mod:`.trec`,
:mod:`.tables`, :mod:`.jsonfmt`, :mod:`.lists`, :mod:`.vectors`) → the data model
(:class:`~evalcore.data.Qrels`, :class:`~evalcore.data.Run`,
:class:`~evalcore.io.embeddings.Embeddings`). Side files (domains, document metadata):
:mod:`.side`.

Loading ground truth and runs from any supported file, with format auto-detection.

``load_qrels(src, format="auto")`` and ``load_run(src, format="auto")`` are the
single entry points used by the CLI and the dashboard; ``src`` is a path, bytes
or a binary stream (a seekable stream is left at its position). An explicit
``format=`` always wins over detection.

Ground-truth formats (``QRELS_FORMATS``)
    ``trec`` (``qid iter docid grade``), ``beir`` (TSV ``query-id corpus-id score``),
    ``csv`` / ``tsv`` / ``parquet`` (long tables, see :mod:`evalcore.io.tables`),
    ``json_dict`` (``{query: {doc: grade}}``), ``ordered_lists`` (seed 001; pick the
    list with ``aspect=``), ``graded_json`` (seed 003; keeps query domains).
Run formats (``RUN_FORMATS``)
    ``trec`` (``qid Q0 docid rank score tag``), ``csv`` / ``tsv`` / ``parquet``
    (``query_id, doc_id, score`` or ``rank``), ``json_dict`` (``{query: {doc: score}}``).

Detection (content first, the file extension only where the content is ambiguous)
    1. ``PAR1`` magic bytes → ``parquet``.
    2. Content starting as JSON does (after a BOM and blanks: ``{`` then a key or ``}``, ``[`` then a value and
       ``,`` / ``]``; not a TREC line whose first id begins with ``{`` or ``[``) → JSON:
       runs → ``json_dict``; ground truth → ``graded_json`` when the head mentions
       ``"relevance_judgments"`` or ``"synonyms"``; else an array (or JSONL records with
       an id field and a list field) → ``ordered_lists``; else an object → ``json_dict``.
    3. First non-blank line ``query-id<TAB>corpus-id<TAB>score`` → ``beir`` (ground truth).
    4. First non-blank line is a tab / comma / semicolon separated header naming a query
       column and a document column (synonyms in :mod:`evalcore.io.columns`) → ``tsv`` (tab)
       or ``csv``.
    5. Otherwise by extension: ``.csv`` → csv, ``.tsv``/``.tab`` → tsv, ``.parquet``/``.pq``
       → parquet, ``.json``/``.jsonl``/``.ndjson`` → JSON as in 2 (so broken JSON gets a JSON
       error with line and column); anything else (``.txt``, ``.qrels``, ``.run``, none) → ``trec``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..data import Qrels, Run
from ..errors import OptionError
from .detect import (
    FORMAT_DESCRIPTIONS,
    QRELS_FORMATS,
    RUN_FORMATS,
    _canonical,
    detect_qrels_format,
    detect_run_format,
)
from .embeddings import EMBEDDING_FORMATS, Embeddings, read_ids, read_token_ids, save_embeddings
from .jsonfmt import (
    SYNONYM_GRADES,
    read_json_dict_qrels,
    read_json_dict_run,
    write_qrels_json,
    write_run_json,
)
from .lists import ordered_list_aspects, read_graded_json, read_ordered_lists, write_ordered_lists
from .queries import load_queries
from .shards import ShardSet, is_shard_spec, open_shards, shard_embeddings
from .side import load_doc_metadata, load_domains
from .source import Source, read_source, source_filename
from .tables import (
    read_table_qrels,
    read_table_run,
    write_qrels_csv,
    write_qrels_parquet,
    write_run_csv,
    write_run_parquet,
)
from .trec import (
    read_beir_qrels,
    read_trec_qrels,
    read_trec_run,
    write_beir_qrels,
    write_trec_qrels,
    write_trec_run,
    write_trec_topk,
)
from .vectors import load_embeddings, load_vectors

__all__ = [
    "load_qrels", "load_run", "load_embeddings", "load_vectors", "detect_qrels_format", "detect_run_format",
    "list_aspects", "load_domains", "load_doc_metadata", "load_queries", "read_ids", "read_token_ids", "Embeddings",
    "QRELS_FORMATS", "RUN_FORMATS", "EMBEDDING_FORMATS", "FORMAT_DESCRIPTIONS", "SYNONYM_GRADES",
    "write_qrels_csv", "write_run_csv", "write_qrels_json", "write_run_json", "write_ordered_lists",
    "write_qrels_parquet", "write_run_parquet", "write_trec_qrels", "write_trec_run", "write_beir_qrels",
    "write_trec_topk", "save_embeddings", "ShardSet", "is_shard_spec", "open_shards", "shard_embeddings",
]


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

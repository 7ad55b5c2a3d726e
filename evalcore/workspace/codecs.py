"""How parsed data is stored: Qrels, Run, embeddings, ids, evaluation tables and side files as files.

Parsed data is stored, not the uploaded bytes, so any input format reads back the same way:

* **qrels** — Parquet ``query_id, doc_id, relevance[, domain]``. The first rows are one
  *header row per query* (``doc_id`` and ``relevance`` null), in the order of
  ``Qrels.query_ids`` (so queries without judgments and the query order survive);
  then the judgment rows in ``Qrels`` row order. ``domain`` is present only when the
  qrels carry domains.
* **run** — Parquet ``query_id, doc_id, score`` with the same header rows, then the rows
  in ``Run`` row order; scores are float64, bit for bit (the order of equal scores, which
  the ``"input"`` tie rule reads, is kept).
* **embeddings** — ``.npy``, float32, C order, read memory-mapped
  (``np.load(mmap_mode="r", allow_pickle=False)``); their **ids** — Parquet, one string
  column ``id``.
* **results** — the evaluation's per-query table, Parquet ``run, query_id, domain,
  metric, k, value`` as plain columns; the categories (and their order) of the four
  categorical columns are kept in the file's metadata.
* **domains** — Parquet ``query_id, domain``; **metadata** — Parquet ``doc_id, title, text``;
  **queries** — Parquet ``query_id, text``.

Reading back gives equal objects: same ids, same row order, same numbers
(``tests/test_workspace_store.py`` checks it bit for bit).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._columns import distinct_dictionaries, encode_strings, numbers, strings
from ..data import Qrels, Run
from ..errors import ValueTypeError
from ..io.embeddings import Embeddings

__all__ = [
    "write_qrels", "read_qrels", "write_run", "read_run", "read_run_query_ids", "write_vectors", "read_vectors",
    "write_ids", "read_ids", "write_results", "read_results", "write_domains", "read_domains",
    "write_metadata", "read_metadata", "write_queries", "read_queries", "embeddings_of",
]

_CATEGORIES_KEY = b"evalcore.categories"
_ROWS = 65536
#: Parquet row groups of up to this many rows: a stored run of 20,000 queries x 100 is one group, so its
#: document ids have one dictionary (each group has its own, to be unified when read)
_GROUP_ROWS = 1 << 23
#: the dictionary of a string column may take this many bytes before Parquet falls back to plain
#: strings (its default, 1 MiB, holds ~150,000 short ids; past it, reading rebuilds the dictionary by hashing
#: every row: 2,000,000 rows of 200,000 distinct ids read in 0.03 s instead of 0.18-0.4 s)
_DICT_PAGE_BYTES = 1 << 26


def _write_table(table: Any, path: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, str(path), compression="zstd", row_group_size=_GROUP_ROWS,
                   dictionary_pagesize_limit=_DICT_PAGE_BYTES)


def _read_table(path: Path, *, dictionary: tuple[str, ...] = ()) -> Any:
    """The Parquet file as an arrow table; the ``dictionary`` columns come dictionary-encoded."""
    import pyarrow.parquet as pq

    return pq.read_table(str(path), read_dictionary=list(dictionary) or None)


def _dictionary_codes(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """(vocabulary, int64 code per row) of a dictionary-encoded string column without nulls.

    The vocabulary is the distinct values in order of first appearance in the chunks'
    dictionaries (as ``unify_dictionaries`` orders them).  Each distinct dictionary is
    hashed once, not once per chunk: arrow repeats a row group's dictionary in each of
    its batches (16 batches of 2 groups: unifying them took 0.27 s for 200,000 ids).
    """
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    if not chunks:
        return np.empty(0, dtype=object), np.zeros(0, dtype=np.int64)
    dicts, of_chunk = distinct_dictionaries(chunks)
    if len(dicts) == 1:
        vocab, moves = strings(dicts[0]), None
    else:  # one vocabulary: each distinct dictionary's values hashed once, in order
        positions, vocab = encode_strings(pa.concat_arrays([d.cast(pa.string()) for d in dicts]))
        at = np.cumsum([0] + [len(d) for d in dicts])
        moves = [positions[at[i]: at[i + 1]] for i in range(len(dicts))]
    codes = []
    for c, g in zip(chunks, of_chunk, strict=True):
        idx = numbers(c.indices).astype(np.int64)
        codes.append(idx if moves is None else moves[g][idx])
    return vocab, np.concatenate(codes)


def _str_array(values: Any) -> Any:
    import pyarrow as pa

    return pa.array(np.asarray(values, dtype=object), type=pa.string())


def _headed(query_ids: np.ndarray, q: np.ndarray, columns: dict[str, tuple[Any, Any]]) -> Any:
    """A table whose first rows are one header row per query (other columns null)."""
    import pyarrow as pa

    n = len(query_ids)
    cols = {"query_id": pa.concat_arrays([_str_array(query_ids), _str_array(query_ids[q])])}
    for name, (values, typ) in columns.items():
        data = _str_array(values) if typ == pa.string() else pa.array(values, type=typ)
        cols[name] = pa.concat_arrays([pa.nulls(n, typ), data])
    return pa.table(cols)


def _split_headed(table: Any, key: str) -> tuple[np.ndarray, Any, int]:
    """(query ids, the table's data rows, number of header rows) of a :func:`_headed` table."""

    n_head = table.column(key).null_count
    query_ids = strings(table.column("query_id").slice(0, n_head))
    data = table.slice(n_head)
    return query_ids, data, n_head


def _codes(query_ids: np.ndarray, values: Any) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    idx = pc.index_in(values, value_set=pa.array(query_ids, type=pa.string())).cast(pa.int64())
    if not len(values):
        return np.zeros(0, dtype=np.int64)
    return numbers(idx.fill_null(pa.scalar(-1, type=pa.int64())) if idx.null_count else idx)  # -1: not found


def _mapped_codes(query_ids: np.ndarray, column: Any, source: str | None) -> np.ndarray:
    """Position in ``query_ids`` of each row of a dictionary-encoded id column (one lookup per distinct id)."""
    vocab, codes = _dictionary_codes(column)
    q = _codes(query_ids, _str_array(vocab))[codes]
    _check_headed(q, lambda i: vocab[codes[i]], source)
    return q


def _check_headed(q: np.ndarray, query_of: Any, source: str | None) -> None:
    """Every data row's query has a header row (``q`` is -1 where it has not)."""
    if len(q) and int(q.min()) < 0:
        raise ValueTypeError(f"query {query_of(int(np.flatnonzero(q < 0)[0]))!r} has rows but no header row",
                             file=source)


# ------------------------------------------------------------------ qrels
def write_qrels(qrels: Qrels, path: Path) -> None:
    """Store :class:`Qrels` (see the module docstring)."""
    import pyarrow as pa

    cols: dict[str, tuple[Any, Any]] = {
        "doc_id": (qrels.doc_ids, pa.string()),
        "relevance": (np.asarray(qrels.grades, dtype=np.int64), pa.int64()),
    }
    table = _headed(np.asarray(qrels.query_ids, dtype=object), qrels.q, cols)
    if qrels.domains is not None:
        dom = np.asarray(qrels.domains, dtype=object)
        table = table.append_column("domain", _str_array(np.concatenate([dom, dom[qrels.q]])))
    _write_table(table, path)


def read_qrels(path: Path, *, source: str | None = None) -> Qrels:
    """The :class:`Qrels` stored by :func:`write_qrels`."""
    table = _read_table(path)
    query_ids, data, n_head = _split_headed(table, "doc_id")
    q = _codes(query_ids, data.column("query_id"))
    _check_headed(q, lambda i: data.column("query_id")[i].as_py(), source)
    docs = strings(data.column("doc_id")) if data.num_rows else np.zeros(0, dtype=object)
    grades = numbers(data.column("relevance")) if data.num_rows else np.zeros(0, dtype=np.int64)
    domains = None
    if "domain" in table.column_names:
        domains = strings(table.column("domain").slice(0, n_head))
    return Qrels(query_ids, q, docs, grades.astype(np.int64), domains, source)


# ------------------------------------------------------------------ runs
def write_run(run: Run, path: Path) -> None:
    """Store a :class:`Run` (see the module docstring)."""
    import pyarrow as pa

    table = _headed(np.asarray(run.query_ids, dtype=object), run.q, {
        "doc_id": (run.doc_ids, pa.string()),
        "score": (np.asarray(run.scores, dtype=np.float64), pa.float64()),
    })
    _write_table(table, path)


def read_run(path: Path, *, name: str = "run", source: str | None = None) -> Run:
    """The :class:`Run` stored by :func:`write_run`.

    Document ids are read dictionary-encoded: one string per distinct document and an
    integer code per row (a stored ranking repeats the same ids across queries), so no
    per-row string is built or hashed.
    """
    table = _read_table(path, dictionary=("doc_id", "query_id"))
    n_head = table.column("doc_id").null_count
    data = table.slice(n_head)
    for col, what in (("doc_id", "document"), ("query_id", "query")):
        if data.column(col).null_count:
            raise ValueTypeError(f"a {what} id is missing", file=source)
    head_vocab, head = _dictionary_codes(table.column("query_id").slice(0, n_head))
    query_ids = head_vocab[head]
    q = _mapped_codes(query_ids, data.column("query_id"), source)
    vocab, d = _dictionary_codes(data.column("doc_id"))
    scores = numbers(data.column("score"))
    return Run.from_codes(query_ids, q, vocab, d, scores, name=name, source=source,
                          check_ids=False)  # (refused before they were stored)


def read_run_query_ids(path: Path) -> np.ndarray:
    """``read_run(path).query_ids`` without reading the run: only the header rows of the ``query_id`` column.

    The number of header rows is the ``doc_id`` column's null count, read from the Parquet footer's
    statistics; only the row groups holding header rows are read, and of them only ``query_id``
    (dictionary-encoded). A file without those statistics (not one :func:`write_run` writes) is read whole.
    """
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(str(path), read_dictionary=["query_id"])
    meta = pf.metadata
    doc = pf.schema_arrow.get_field_index("doc_id")
    nulls, rows = [], []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(doc).statistics
        if doc < 0 or stats is None or not stats.has_null_count:
            return read_run(path).query_ids
        nulls.append(int(stats.null_count))
        rows.append(int(meta.row_group(g).num_rows))
    n_head, groups, covered = sum(nulls), [], 0
    for g, n in enumerate(rows):
        if covered >= n_head:
            break
        groups.append(g)
        covered += n
    if not groups:
        return np.empty(0, dtype=object)
    column = pf.read_row_groups(groups, columns=["query_id"]).column("query_id").slice(0, n_head)
    vocab, head = _dictionary_codes(column)
    return vocab[head]


# ------------------------------------------------------------------ embeddings
def write_vectors(vectors: np.ndarray, path: Path) -> None:
    """A float32 C-order ``.npy`` of ``vectors`` (a memory map is copied in blocks of rows)."""
    shape = (int(vectors.shape[0]), int(vectors.shape[1]))
    header = {"descr": "<f4", "fortran_order": False, "shape": shape}
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, header)
        for lo in range(0, shape[0], _ROWS):
            block = np.ascontiguousarray(vectors[lo: lo + _ROWS], dtype="<f4")
            fh.write(block.tobytes())


def read_vectors(path: Path) -> np.ndarray:
    """The stored vectors, memory-mapped read-only (never unpickled)."""
    return np.load(str(path), mmap_mode="r", allow_pickle=False)


def write_ids(ids: Any, path: Path) -> None:
    """Ids as Parquet, one string column ``id``."""
    import pyarrow as pa

    _write_table(pa.table({"id": _str_array(ids)}), path)


def read_ids(path: Path) -> np.ndarray:
    """The ids stored by :func:`write_ids` (object array of str)."""
    return strings(_read_table(path).column("id"))


def embeddings_of(ids: np.ndarray, vectors: np.ndarray, source: str | None) -> Embeddings:
    """Stored ids and vectors as :class:`~evalcore.io.Embeddings` (validated when they were stored)."""
    return Embeddings(ids, vectors, source)


# ------------------------------------------------------------------ evaluation tables
_CATEGORICAL = ("run", "query_id", "domain", "metric")


def write_results(table: Any, path: Path) -> None:
    """The per-query table (``run, query_id, domain, metric, k, value``) as Parquet."""
    import pyarrow as pa

    cats = {}
    cols = {}
    for name in table.columns:
        col = table[name]
        if name in _CATEGORICAL or str(col.dtype) == "category":
            cats[name] = [str(c) for c in col.cat.categories] if str(col.dtype) == "category" else None
            cols[name] = _str_array(col.astype(str).to_numpy())
        else:
            cols[name] = pa.array(col.to_numpy())
    out = pa.table(cols).replace_schema_metadata({_CATEGORIES_KEY: json.dumps(cats).encode("utf-8")})
    _write_table(out, path)


def read_results(path: Path) -> Any:
    """The per-query table stored by :func:`write_results`, categoricals as they were."""
    from .._lazy import pd

    table = _read_table(path)
    meta = table.schema.metadata or {}
    cats = json.loads(meta.get(_CATEGORIES_KEY, b"{}").decode("utf-8"))
    out = {}
    for name in table.column_names:
        col = table.column(name)
        if name in cats:
            values = strings(col) if col.null_count == 0 else col.to_numpy(zero_copy_only=False)
            out[name] = pd.Categorical(values, categories=cats[name]) if cats[name] is not None else values
        else:
            out[name] = numbers(col)
    return pd.DataFrame(out)


# ------------------------------------------------------------------ side files
def _write_pairs(mapping: Mapping[str, str], column: str, path: Path) -> None:
    import pyarrow as pa

    keys = [str(k) for k in mapping]
    _write_table(pa.table({"query_id": _str_array(keys), column: _str_array([str(mapping[k]) for k in mapping])}),
                 path)


def _read_pairs(path: Path, column: str) -> dict[str, str]:
    table = _read_table(path)
    return dict(zip(strings(table.column("query_id")).tolist(), strings(table.column(column)).tolist(), strict=True))


def write_domains(domains: Mapping[str, str], path: Path) -> None:
    """Query id -> domain as Parquet ``query_id, domain``."""
    _write_pairs(domains, "domain", path)


def read_domains(path: Path) -> dict[str, str]:
    return _read_pairs(path, "domain")


def write_metadata(frame: Any, path: Path) -> None:
    """Document metadata (``doc_id, title, text``) as Parquet."""
    import pyarrow as pa

    _write_table(pa.table({c: _str_array(frame[c].astype(str).to_numpy()) for c in ("doc_id", "title", "text")}),
                 path)


def read_metadata(path: Path) -> Any:
    from .._lazy import pd

    table = _read_table(path)
    return pd.DataFrame({c: strings(table.column(c)) for c in ("doc_id", "title", "text")})


def write_queries(texts: Mapping[str, str], path: Path) -> None:
    """Query id -> text as Parquet ``query_id, text``."""
    _write_pairs(texts, "text", path)


def read_queries(path: Path) -> dict[str, str]:
    return _read_pairs(path, "text")

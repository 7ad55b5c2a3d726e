"""Embedding files: load, validate and save ``(ids, vectors)`` pairs.

Supported layouts (detected from the file name, else from the content):

``.npz``
    Arrays ``ids`` (strings or integers) and ``embeddings`` (2-D; ``vectors``
    and ``emb`` are accepted as names too).
``.npy``
    A 2-D array; its ids come from a text file (one id per line) beside it —
    ``X_ids.txt`` or ``X.ids.txt`` for ``X.npy`` — or from ``ids_src``. With
    ``mmap=True`` the vectors stay on disk as a read-only memory map.
``.parquet`` / ``.csv`` / ``.tsv``
    An id column (``id``, ``ids``, ``doc_id``, ``movie_id``, ``_id``...,
    else the first text column) and either one list column (Parquet list or a
    CSV cell holding ``[0.1, 0.2, ...]``) or one numeric column per dimension.
``.json``
    ``{"id": [floats], ...}``.

Safety: ``.npy``/``.npz`` are always read with ``allow_pickle=False``; object
arrays raise :class:`~evalcore.errors.UnsafeFileError`, and so do truncated or
corrupt binary files. Every problem names the file and the culprit (the id,
the two counts, the line...). All-zero vectors are allowed (their cosine with
anything is 0) and reported with :func:`evalcore.errors.warn`.

Bytes input (the dashboard's uploads) is accepted everywhere: pass the bytes
and the original file name as ``label``.
"""
from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from .._checks import refuse_broken_column
from .._lazy import pd
from ..errors import (
    BinaryFileError,
    DuplicateIdError,
    EmptyInputError,
    InputFormatError,
    NonFiniteValueError,
    ShapeMismatchError,
    UnreadableFileError,
    UnsafeFileError,
    ValueTypeError,
    warn,
)
from .source import (
    _TOKEN_WS,
    ASCII_WS,
    GZIP_MAGIC,
    refuse_broken_ids,
    refuse_broken_writes,
    refuse_unstripped_writes,
    strip_ids,
)

__all__ = ["EMBEDDING_FORMATS", "Embeddings", "read_ids", "read_token_ids", "save_embeddings", "gather_rows"]

Source = str | os.PathLike | bytes | IO[bytes]
EMBEDDING_FORMATS = ("npz", "npy", "parquet", "csv", "json")
_ID_COLUMNS = ("id", "ids", "doc_id", "docid", "movie_id", "item_id", "paper_id", "query_id", "_id", "corpus-id")
_VEC_NAMES = ("embeddings", "vectors", "emb", "embedding", "vector")
_SCAN_BYTES = 4 * 2**20  # chunk of the finiteness / zero scan of _finish


@dataclass(frozen=True, eq=False)
class Embeddings:
    """Vectors with their ids.

    Attributes
    ----------
    ids : ndarray of str (object dtype), shape (n,)
        Unique ids, row order of ``vectors``.
    vectors : ndarray of float32, shape (n, dim)
        May be a read-only ``numpy.memmap`` (``load_embeddings(..., mmap=True)``).
    source : str or None
        File name, for messages.
    """

    ids: np.ndarray
    vectors: np.ndarray
    source: str | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_arrays(cls, ids: Any, vectors: Any, *, source: str | None = None) -> Embeddings:
        """Validate and wrap in-memory arrays (same checks as the file readers: an id holding a control
        character is refused, :class:`~evalcore.errors.InputFormatError` naming it and its row, ``ids[i]``)."""
        ids = _ids_array(ids, source)
        refuse_broken_column(ids, what="id", source=source, place=lambda i: f" (ids[{i}])")
        return _finish(ids, _vectors_array(vectors, source), source)

    @classmethod
    def from_dict(cls, mapping: dict[str, Any], *, source: str | None = None) -> Embeddings:
        """Build from ``{id: vector}`` (vectors must all have the same length; ids as :meth:`from_arrays`)."""
        ids, rows = _rows_from_mapping(mapping.items(), source)
        refuse_broken_column(ids, what="id", source=source, place=lambda i: " (a key of the mapping)")
        return _finish(ids, rows, source)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def label(self) -> str:
        return self.source or "<embeddings>"

    @property
    def index(self) -> pd.Index:
        """``pd.Index`` over the ids (built once)."""
        hit = self._cache.get("index")
        if hit is None:
            hit = pd.Index(self.ids)
            self._cache["index"] = hit
        return hit

    def rows_of(self, ids: Any) -> np.ndarray:
        """Row of each id (``-1`` where absent); a dict of the ids, built once (no pandas on the CLI's path)."""
        where = self._cache.get("rows")
        if where is None:
            where = dict(zip(self.ids.tolist(), range(len(self.ids)), strict=True))
            self._cache["rows"] = where
        items = np.asarray(ids, dtype=object).reshape(-1).tolist()
        return np.fromiter(map(where.get, items, itertools.repeat(-1, len(items))), np.int64, len(items))

    def subset(self, ids: Any) -> Embeddings:
        """The given ids (all must exist), in that order; vectors are copied into memory."""
        rows = self.rows_of(ids)
        if (rows < 0).any():
            from ..errors import MissingIdsError

            bad = np.asarray(ids, dtype=object)[rows < 0]
            raise MissingIdsError(f"{len(bad)} ids are not in the embeddings, e.g. {list(bad[:5])}",
                                  file=self.source)
        return Embeddings(self.ids[rows], np.ascontiguousarray(self.vectors[rows]), self.source)




def _open(src: Source, label: str | None) -> tuple[bytes | None, Path | None, str]:
    """(bytes or None when a path to read lazily, path or None, display name)."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src), None, label or "<bytes>"
    if hasattr(src, "read"):
        data = src.read()
        if isinstance(data, str):
            data = data.encode("utf-8")
        return data, None, label or str(getattr(src, "name", "<stream>"))
    path = Path(src)
    name = label or str(src)
    if not path.exists():
        raise UnreadableFileError("file not found", file=name)
    if path.is_dir():
        raise UnreadableFileError("is a directory, expected a file", file=name)
    return None, path, name


def _head(data: bytes | None, path: Path | None, n: int = 16) -> bytes:
    if data is not None:
        return data[:n]
    assert path is not None
    with open(path, "rb") as fh:
        return fh.read(n)


def _detect(name: str, data: bytes | None, path: Path | None) -> str:
    low = name.lower()
    for suffix, fmt in ((".npz", "npz"), (".npy", "npy"), (".parquet", "parquet"), (".pq", "parquet"),
                        (".csv", "csv"), (".tsv", "tsv"), (".json", "json")):
        if low.endswith(suffix):
            return fmt
    head = _head(data, path)
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"PK"):
        return "npz"
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.lstrip().startswith(b"{"):
        return "json"
    if not head.strip():
        raise EmptyInputError("file is empty", file=name)
    return "csv"


def _refuse_gzip(head: bytes, name: str, what: str) -> None:
    """Embedding files and their id files are read as they are (``.npy`` / ``.npz`` memory-mapped, never
    inflated in memory): gzip data is refused by name rather than parsed as something else."""
    if head[:2] == GZIP_MAGIC:
        raise InputFormatError(f"gzip-compressed; {what} are read uncompressed (a .npy or .npz is memory-mapped): "
                               "decompress it first", file=name)


def read_ids(src: Source, *, label: str | None = None) -> np.ndarray:
    """Ids from a text file, one per line (blank trailing lines ignored, CRLF accepted), each stripped of ASCII
    white space only (:data:`.source.ASCII_WS`): a non-breaking or another Unicode space is part of an id, as
    :func:`read_token_ids` and the TREC readers read it; lines end at ``\\n`` only (a U+2028 inside an id is
    refused, as there)."""
    data, path, name = _open(src, label)
    if data is None:
        assert path is not None
        try:
            data = path.read_bytes()
        except OSError as e:
            raise UnreadableFileError(f"cannot read ids file ({e.strerror or e})", file=name) from None
    _refuse_gzip(data, name, "id files")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputFormatError(f"ids file is not UTF-8 text (byte {e.start})", file=name) from None
    lines = text.split("\n")
    while lines and not lines[-1].strip(ASCII_WS):
        lines.pop()
    if not lines:
        raise EmptyInputError("ids file is empty", file=name)
    ids = strip_ids(lines).tolist()
    for i, x in enumerate(ids):
        if not x:
            raise InputFormatError("empty id (blank line)", file=name, line=i + 1)
    refuse_broken_ids(ids, what="id", file=name, line=lambda i: i + 1)
    return np.asarray(ids, dtype=object)


def read_token_ids(path: str | os.PathLike) -> np.ndarray:
    """Strict ids for a TREC run: one id per line (UTF-8; ``\\r\\n`` accepted; no blank lines, no ASCII
    white space nor control character inside an id: what a TREC field holds, so a non-breaking space or
    another Unicode space is part of an id, as the TREC readers read it and the writers write it), as a
    numpy string array. :func:`read_ids` is the lenient reader of embedding id files (ids stripped)."""
    label = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError as e:
        raise InputFormatError("file not found", file=label) from e
    except OSError as e:
        raise InputFormatError(f"cannot be read ({e.strerror or e})", file=label) from e
    _refuse_gzip(data, label, "id files")
    if b"\x00" in data:
        raise BinaryFileError("is binary (NUL bytes); expected one id per line", file=label)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BinaryFileError("is not UTF-8 text", file=label, line=line) from e
    text = text.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    if not text:
        raise EmptyInputError("holds no ids", file=label)
    m = _TOKEN_WS.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        raise InputFormatError(f"an id contains white space ({m.group()!r}), which separates the fields of a TREC line "
                               "(ids must be one token per line)", file=label, line=line)
    ids = text.split("\n")
    for pos in (i for i, s in enumerate(ids) if not s or s.endswith("\r")):
        what = "blank line" if not ids[pos] else "stray carriage return"
        raise InputFormatError(f"{what}; expected one id per line", file=label, line=pos + 1)
    refuse_broken_ids(ids, what="id", file=label, line=lambda i: i + 1)
    return np.array(ids)


def gather_rows(vectors: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``vectors[rows]`` in memory, read in ascending row order (sequential on a memmap).

    All rows in order: the array itself (a memmap stays on disk; exact_topk streams it).
    """
    if len(rows) == vectors.shape[0] and np.array_equal(rows, np.arange(len(rows))):
        return vectors
    order = np.argsort(rows, kind="stable")
    out = np.empty((len(rows), vectors.shape[1]), dtype=np.float32)
    out[order] = vectors[rows[order]]
    return out


# --------------------------------------------------------------- validation
def _ids_array(values: Any, name: str | None) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ShapeMismatchError(f"ids must be one-dimensional, got shape {arr.shape}", file=name)
    if arr.dtype.kind in "US":
        out = arr.astype(str).astype(object)
    elif arr.dtype.kind in "iu":
        out = np.asarray([str(x) for x in arr.tolist()], dtype=object)
    elif arr.dtype.kind == "O":
        if not all(isinstance(x, str) for x in arr.tolist()):
            bad = next(x for x in arr.tolist() if not isinstance(x, str))
            raise ValueTypeError(f"id {bad!r} is not a string", file=name)
        out = arr.copy()
    elif arr.size == 0:  # np.asarray([]) is float64: say what is wrong, not its dtype
        raise EmptyInputError("no ids (and so no vectors)", file=name)
    else:
        raise ValueTypeError(f"ids must be strings or integers, got dtype {arr.dtype}", file=name)
    return out


def _vectors_array(values: Any, name: str | None) -> np.ndarray:
    arr = values if isinstance(values, np.ndarray) else np.asarray(values)
    if arr.dtype.kind == "O":
        raise UnsafeFileError("vectors are Python objects, expected numbers", file=name)
    if arr.dtype.kind not in "fiub":
        raise ValueTypeError(f"vectors must be numbers, got dtype {arr.dtype}", file=name)
    if arr.ndim != 2:
        raise ShapeMismatchError(f"vectors must form a 2-D array (rows x dims), got shape {arr.shape}", file=name)
    if arr.shape[1] == 0:
        raise ShapeMismatchError(f"vectors have dimension 0 (shape {arr.shape})", file=name)
    if arr.dtype != np.float32:
        arr = arr.astype(np.float32)
    return arr


def _check_ragged(lengths: np.ndarray, ids: np.ndarray, name: str | None) -> None:
    if len(lengths) == 0:
        return
    bad = np.flatnonzero(lengths != lengths[0])
    if len(bad):
        i = int(bad[0])
        raise ShapeMismatchError(
            f"vector of id {ids[i]!r} has {int(lengths[i])} values but the first ({ids[0]!r}) has "
            f"{int(lengths[0])} ({len(bad)} vectors of another length)", file=name, item=str(ids[i]))


def _rows_from_mapping(items: Any, name: str | None, *, check_dupes: bool = True) -> tuple[np.ndarray, np.ndarray]:
    ids: list[str] = []
    rows: list[Any] = []
    seen: set[str] = set()
    dim = None
    first = None
    for key, vec in items:
        key = str(key)
        if check_dupes and key in seen:
            raise DuplicateIdError(f"id {key!r} appears twice", file=name, item=key)
        seen.add(key)
        if isinstance(vec, np.ndarray):
            vec = vec.tolist()
        if not isinstance(vec, (list, tuple)):
            raise ValueTypeError(f"vector of id {key!r} is not a list of numbers (got {type(vec).__name__})",
                                 file=name, item=key)
        if dim is None:
            dim, first = len(vec), key
        elif len(vec) != dim:
            raise ShapeMismatchError(f"vector of id {key!r} has {len(vec)} values but the first ({first!r}) has {dim}",
                                     file=name, item=key)
        ids.append(key)
        rows.append(vec)
    if not ids:
        raise EmptyInputError("no vectors", file=name)
    try:
        mat = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError):
        for key, vec in zip(ids, rows, strict=True):
            for x in vec:
                if isinstance(x, bool) or not isinstance(x, (int, float)):
                    raise ValueTypeError(f"vector of id {key!r} holds {x!r}, not a number", file=name,
                                         item=key) from None
        raise
    if mat.ndim != 2 or mat.shape[1] == 0:
        raise ShapeMismatchError(f"vectors have dimension 0 (id {ids[0]!r})", file=name)
    return np.asarray(ids, dtype=object), mat


def _finish(ids: np.ndarray, vecs: np.ndarray, name: str | None) -> Embeddings:
    if len(ids) == 0:
        raise EmptyInputError("no vectors", file=name)
    if len(ids) != vecs.shape[0]:
        raise ShapeMismatchError(f"{len(ids)} ids but {vecs.shape[0]} vectors", file=name)
    _check_unique_ids(ids, name)
    n_bad = 0
    first_bad = None
    n_zero = 0
    first_zero = None
    # one pass in cache-sized chunks: the largest |value| of a row is NaN/inf iff the row holds NaN or
    # inf (np.maximum propagates NaN) and 0 iff the row is all zeros
    step = max(1, _SCAN_BYTES // (4 * max(1, vecs.shape[1])))
    buf = np.empty((min(step, vecs.shape[0]), vecs.shape[1]), dtype=np.float32)
    for lo in range(0, vecs.shape[0], step):
        block = np.asarray(vecs[lo: lo + step])
        top = np.maximum.reduce(np.abs(block, out=buf[: block.shape[0]]), axis=1)
        bad = ~np.isfinite(top)
        if bad.any():
            n_bad += int(bad.sum())
            if first_bad is None:
                first_bad = lo + int(np.flatnonzero(bad)[0])
        zero = top == 0
        if zero.any():
            n_zero += int(zero.sum())
            if first_zero is None:
                first_zero = lo + int(np.flatnonzero(zero)[0])
    if n_bad:
        raise NonFiniteValueError(
            f"vector of id {ids[first_bad]!r} holds NaN or infinite values ({n_bad} such vectors)",
            file=name, item=str(ids[first_bad]))
    if n_zero:
        warn(f"{name or '<embeddings>'}: {n_zero} all-zero vectors (e.g. id {ids[first_zero]!r}); "
             "their cosine with anything is 0: as queries, every document ties and their lists are in document "
             "id order (the tie rule's), and they are scored on those lists; as documents, they tie at 0")
    return Embeddings(ids, vecs, name)


def _check_unique_ids(ids: np.ndarray, name: str | None, *, by_line: bool = False) -> None:
    """Raise :class:`DuplicateIdError` naming the first id that repeats an earlier one.

    ``by_line``: ``ids`` are the lines of the ids file ``name`` (a ``.npy``'s: the ``.npy`` holds no id), so the
    error names the repeat's line and the first one's. A Python set of the (string) ids: no pandas import on the
    way to a search (the index for ``rows_of`` is built when first asked for).
    """
    keys = ids.tolist()
    n_distinct = len(set(keys))
    if n_distinct == len(keys):
        return
    first: dict = {}
    for line, key in enumerate(keys, start=1):
        if key in first:
            where = f"first on line {first[key]}; " if by_line else ""
            raise DuplicateIdError(f"id {key!r} appears twice ({where}{len(keys) - n_distinct} duplicate ids)",
                                   file=name, line=line if by_line else None, item=str(key))
        first[key] = line


# --------------------------------------------------------------------- saving
def save_embeddings(emb: Embeddings, path: str | os.PathLike, *, format: str = "auto") -> list[Path]:
    """Write embeddings in any supported format (by suffix unless ``format``); returns the files written.

    ``.npy`` also writes ``X_ids.txt`` beside it. Parquet stores a list column
    ``embedding``; CSV one column per dimension (``d0, d1, ...``, full float32
    precision); JSON ``{id: [floats]}``.

    Every format reads back with the very ids (:func:`load_embeddings` strips ASCII white space only around an
    id, whatever the format): an id holding a control character, an empty one or one with ASCII white space
    around it is refused before anything is written, naming the file; a non-breaking or another Unicode space
    is written as it is.
    """
    p = Path(path)
    fmt = _detect(p.name, b"x", None) if format == "auto" else format.lower().lstrip(".")
    ids = np.asarray(emb.ids, dtype=str)
    refuse_broken_writes(p, ("id", ids))  # (the readers would refuse it; a line break would split an ids file)
    refuse_unstripped_writes(p, ("id", ids))  # (every format's reader strips ASCII white space around an id)
    p.parent.mkdir(parents=True, exist_ok=True)
    vecs = np.asarray(emb.vectors, dtype=np.float32)
    if fmt == "npz":
        with open(p, "wb") as fh:
            np.savez(fh, ids=ids, embeddings=vecs)
        return [p]
    if fmt == "npy":
        with open(p, "wb") as fh:
            np.save(fh, vecs, allow_pickle=False)
        stem = p.name[:-4] if p.name.lower().endswith(".npy") else p.name
        ip = p.with_name(f"{stem}_ids.txt")
        ip.write_text("".join(f"{x}\n" for x in ids.tolist()), encoding="utf-8")
        return [p, ip]
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        col = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), vecs.shape[1])
        pq.write_table(pa.table({"id": pa.array(ids.tolist(), pa.string()), "embedding": col}), str(p))
        return [p]
    if fmt in ("csv", "tsv"):
        frame = pd.DataFrame(vecs, columns=[f"d{i}" for i in range(vecs.shape[1])])
        frame.insert(0, "id", ids)
        frame.to_csv(p, index=False, sep="\t" if fmt == "tsv" else ",", float_format="%.9g", na_rep="nan")
        return [p]
    if fmt == "json":
        obj = {i: [float(x) for x in row] for i, row in zip(ids.tolist(), vecs.tolist(), strict=True)}
        p.write_text(json.dumps(obj), encoding="utf-8")
        return [p]
    raise InputFormatError(f"unknown embedding format {format!r}; supported: {', '.join(EMBEDDING_FORMATS)}", file=str(p))

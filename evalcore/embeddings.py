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

import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._arrow import read_parquet_bytes
from ._lazy import pd
from .errors import (
    DuplicateIdError,
    EmptyInputError,
    InputFormatError,
    InvalidJsonError,
    MissingColumnError,
    NonFiniteValueError,
    ShapeMismatchError,
    UnreadableFileError,
    UnsafeFileError,
    ValueTypeError,
    warn,
)

__all__ = ["Embeddings", "load_embeddings", "save_embeddings", "read_ids", "EMBEDDING_FORMATS"]

Source = str | os.PathLike | bytes | IO[bytes]
EMBEDDING_FORMATS = ("npz", "npy", "parquet", "csv", "json")
_ID_COLUMNS = ("id", "ids", "doc_id", "docid", "movie_id", "item_id", "paper_id", "query_id", "_id", "corpus-id")
_VEC_NAMES = ("embeddings", "vectors", "emb", "embedding", "vector")
_CHUNK_ROWS = 65536


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
        """Validate and wrap in-memory arrays (same checks as the file readers)."""
        return _finish(_ids_array(ids, source), _vectors_array(vectors, source), source)

    @classmethod
    def from_dict(cls, mapping: dict[str, Any], *, source: str | None = None) -> Embeddings:
        """Build from ``{id: vector}`` (vectors must all have the same length)."""
        ids, rows = _rows_from_mapping(mapping.items(), source)
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
        """Row of each id (``-1`` where absent)."""
        return self.index.get_indexer(np.asarray(ids, dtype=object))

    def subset(self, ids: Any) -> Embeddings:
        """The given ids (all must exist), in that order; vectors are copied into memory."""
        rows = self.rows_of(ids)
        if (rows < 0).any():
            from .errors import MissingIdsError

            bad = np.asarray(ids, dtype=object)[rows < 0]
            raise MissingIdsError(f"{len(bad)} ids are not in the embeddings, e.g. {list(bad[:5])}",
                                  file=self.source)
        return Embeddings(self.ids[rows], np.ascontiguousarray(self.vectors[rows]), self.source)


# --------------------------------------------------------------------- loading
def load_embeddings(
    src: Source | Embeddings,
    *,
    ids_src: Source | None = None,
    label: str | None = None,
    mmap: bool = False,
    format: str = "auto",
    id_column: str | None = None,
) -> Embeddings:
    """Load and validate an embedding file.

    Parameters
    ----------
    src : path, bytes or binary stream
        The file. Bytes need ``label`` (the original file name) unless the
        content identifies the format (``.npy``/``.npz``/Parquet magic, JSON).
    ids_src : path, bytes or stream, optional
        Ids for a ``.npy`` file, one per line. Default: ``X_ids.txt`` or
        ``X.ids.txt`` beside ``X.npy``.
    label : str, optional
        Name used in messages and for format detection of bytes.
    mmap : bool
        Memory-map a ``.npy`` file on disk instead of reading it (read-only;
        float32 files stay mapped, other dtypes are converted in memory).
    format : {"auto", "npz", "npy", "parquet", "csv", "json"}
    id_column : str, optional
        Id column of a Parquet/CSV file (default: detected).

    Returns
    -------
    Embeddings

    Raises
    ------
    UnsafeFileError
        Object (pickled) arrays, truncated or corrupt ``.npy``/``.npz``.
    ShapeMismatchError
        Ids and rows differ in number (both counts named); a ragged vector.
    DuplicateIdError, NonFiniteValueError, InputFormatError, EmptyInputError
    """
    if isinstance(src, Embeddings):
        return src
    data, path, name = _open(src, label)
    fmt = _detect(name, data, path) if format == "auto" else format.lower().lstrip(".")
    if fmt == "npz":
        ids, vecs = _read_npz(data, path, name)
    elif fmt == "npy":
        ids, vecs = _read_npy(data, path, name, ids_src=ids_src, mmap=mmap)
    elif fmt == "parquet":
        ids, vecs = _read_parquet(data, path, name, id_column)
    elif fmt in ("csv", "tsv"):
        ids, vecs = _read_csv(data, path, name, id_column, sep="\t" if fmt == "tsv" else None)
    elif fmt == "json":
        ids, vecs = _read_json(data, path, name)
    else:
        raise InputFormatError(f"unknown embedding format {format!r}; supported: auto, {', '.join(EMBEDDING_FORMATS)}",
                               file=name)
    return _finish(ids, vecs, name)


def read_ids(src: Source, *, label: str | None = None) -> np.ndarray:
    """Ids from a text file, one per line (blank trailing lines ignored, CRLF accepted)."""
    data, path, name = _open(src, label)
    if data is None:
        assert path is not None
        try:
            data = path.read_bytes()
        except OSError as e:
            raise UnreadableFileError(f"cannot read ids file ({e.strerror or e})", file=name) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputFormatError(f"ids file is not UTF-8 text (byte {e.start})", file=name) from None
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise EmptyInputError("ids file is empty", file=name)
    ids = [ln.strip() for ln in lines]
    for i, x in enumerate(ids):
        if not x:
            raise InputFormatError("empty id (blank line)", file=name, line=i + 1)
    return np.asarray(ids, dtype=object)


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


def _read_all(data: bytes | None, path: Path | None, name: str) -> bytes:
    if data is not None:
        out = data
    else:
        assert path is not None
        try:
            out = path.read_bytes()
        except OSError as e:
            raise UnreadableFileError(f"cannot read file ({e.strerror or e})", file=name) from None
    if not out.strip():
        raise EmptyInputError("file is empty", file=name)
    return out


def _np_error(e: Exception, name: str, what: str) -> InputFormatError:
    msg = str(e)
    if "allow_pickle" in msg or "pickle" in msg.lower():
        return UnsafeFileError(f"{what} holds Python objects (pickled object array); refusing to unpickle — "
                               "save ids as strings and vectors as floats", file=name)
    return UnsafeFileError(f"truncated or corrupt {what} ({msg.strip() or type(e).__name__})", file=name)


def _read_npy(data: bytes | None, path: Path | None, name: str, *, ids_src: Source | None,
              mmap: bool) -> tuple[np.ndarray, np.ndarray]:
    head = _head(data, path, 8)
    if not head:
        raise EmptyInputError("file is empty", file=name)
    if not head.startswith(b"\x93NUMPY"):
        if head.startswith(b"\x80"):
            raise UnsafeFileError("a Python pickle, not a .npy array; refusing to unpickle", file=name)
        raise InputFormatError("not a .npy file (no NUMPY header)", file=name)
    try:
        if path is not None:
            arr = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
        else:
            arr = np.load(io.BytesIO(data), allow_pickle=False)  # type: ignore[arg-type]
    except (ValueError, OSError, EOFError, TypeError) as e:
        raise _np_error(e, name, ".npy file") from None
    if not isinstance(arr, np.ndarray):
        raise InputFormatError("not a .npy array file", file=name)
    if ids_src is None:
        if path is None:
            raise InputFormatError("a .npy upload needs its ids file (one id per line)", file=name)
        ids_path = _ids_beside(path)
        if ids_path is None:
            stem = path.name[:-4] if path.name.lower().endswith(".npy") else path.name
            raise InputFormatError(
                f"no ids file beside it: expected {stem}_ids.txt or {stem}.ids.txt, or pass an ids file", file=name)
        ids = read_ids(ids_path)
        ids_name = str(ids_path)
    else:
        ids = read_ids(ids_src, label=None if not isinstance(ids_src, (bytes, bytearray)) else f"ids of {name}")
        ids_name = str(ids_src) if isinstance(ids_src, (str, os.PathLike)) else "ids file"
    vecs = _vectors_array(arr, name)
    if len(ids) != vecs.shape[0]:
        raise ShapeMismatchError(
            f"{vecs.shape[0]} vectors but {len(ids)} ids in {ids_name}; they must match one id per row", file=name)
    return ids, vecs


def _ids_beside(path: Path) -> Path | None:
    stem = path.name[:-4] if path.name.lower().endswith(".npy") else path.stem
    for cand in (path.with_name(f"{stem}_ids.txt"), path.with_name(f"{stem}.ids.txt")):
        if cand.exists():
            return cand
    return None


def _read_npz(data: bytes | None, path: Path | None, name: str) -> tuple[np.ndarray, np.ndarray]:
    raw = _read_all(data, path, name)
    try:
        npz = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise _np_error(e, name, ".npz archive") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise InputFormatError("not a .npz archive", file=name)
    with npz:
        keys = list(npz.files)
        vec_key = next((k for k in _VEC_NAMES if k in keys), None)
        if "ids" not in keys or vec_key is None:
            raise InputFormatError(f"a .npz needs arrays 'ids' and 'embeddings'; it has {keys}", file=name)
        try:
            ids_arr = npz["ids"]
            vec_arr = npz[vec_key]
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
            raise _np_error(e, name, ".npz archive") from None
    ids = _ids_array(ids_arr, name)
    vecs = _vectors_array(vec_arr, name)
    if len(ids) != vecs.shape[0]:
        raise ShapeMismatchError(f"{vecs.shape[0]} rows in '{vec_key}' but {len(ids)} ids in 'ids'", file=name)
    return ids, vecs


def _pick_id_column(columns: list[str], kinds: dict[str, str], id_column: str | None, name: str) -> str:
    if id_column is not None:
        if id_column not in columns:
            raise MissingColumnError(f"no id column {id_column!r}; columns are {columns[:20]}", file=name)
        return id_column
    lower = {c.lower(): c for c in columns}
    for cand in _ID_COLUMNS:
        if cand in lower:
            return lower[cand]
    for c in columns:
        if kinds.get(c) == "text":
            return c
    raise MissingColumnError(f"no id column found (looked for {', '.join(_ID_COLUMNS)} or a text column); "
                           f"columns are {columns[:20]}", file=name)


def _read_parquet(data: bytes | None, path: Path | None, name: str,
                  id_column: str | None) -> tuple[np.ndarray, np.ndarray]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = read_parquet_bytes(data) if data is not None else pq.read_table(str(path))
    except (pa.ArrowInvalid, OSError, ValueError) as e:
        raise InputFormatError(f"cannot read Parquet file ({e})", file=name) from None
    if table.num_rows == 0:
        raise EmptyInputError("no rows", file=name)
    cols = table.column_names
    kinds = {}
    for c, t in zip(cols, table.schema.types, strict=True):
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            kinds[c] = "text"
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            kinds[c] = "list"
        elif pa.types.is_integer(t) or pa.types.is_floating(t):
            kinds[c] = "number"
        else:
            kinds[c] = str(t)
    idc = _pick_id_column(cols, kinds, id_column, name)
    idcol = table.column(idc)
    if idcol.null_count:
        row = int(np.flatnonzero(idcol.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputFormatError(f"id missing (null) in row {row + 1} of column {idc!r}", file=name)
    ids = _ids_array(idcol.to_numpy(zero_copy_only=False), name)
    rest = [c for c in cols if c != idc]
    lists = [c for c in rest if kinds[c] == "list"]
    if lists:
        vc = next((c for c in lists if c.lower() in _VEC_NAMES), lists[0])
        col = table.column(vc).combine_chunks()
        if isinstance(col, pa.ChunkedArray):  # pragma: no cover - older pyarrow
            col = pa.concat_arrays(col.chunks)
        if col.null_count:
            i = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputFormatError(f"vector of id {ids[i]!r} is missing (null)", file=name, item=str(ids[i]))
        if pa.types.is_fixed_size_list(col.type):
            lengths = np.full(len(col), col.type.list_size, dtype=np.int64)
        else:
            offs = col.offsets.to_numpy(zero_copy_only=False)
            lengths = np.diff(offs)
        _check_ragged(lengths, ids, name)
        flat = col.flatten()
        if flat.null_count:
            i = int(np.searchsorted(np.cumsum(lengths), int(np.flatnonzero(
                flat.is_null().to_numpy(zero_copy_only=False))[0]), side="right"))
            raise ValueTypeError(f"vector of id {ids[i]!r} has a null component", file=name, item=str(ids[i]))
        try:
            values = flat.to_numpy(zero_copy_only=False).astype(np.float32)
        except (TypeError, ValueError, pa.ArrowInvalid) as e:
            raise ValueTypeError(f"list column {vc!r} is not numeric ({e})", file=name) from None
        vecs = values.reshape(len(col), int(lengths[0]) if len(lengths) else 0)
        return ids, _vectors_array(vecs, name)
    dims = [c for c in rest if kinds[c] == "number"]
    others = [c for c in rest if kinds[c] != "number"]
    if not dims:
        raise InputFormatError(f"no vector column: expected a list column or numeric columns; columns are {cols[:20]}",
                               file=name)
    if others:
        raise InputFormatError(f"non-numeric columns {others[:5]} besides the id column {idc!r}", file=name)
    frame = table.select(dims).to_pandas()
    if frame.isna().any().any():
        i = int(np.flatnonzero(frame.isna().any(axis=1).to_numpy())[0])
        raise ValueTypeError(f"vector of id {ids[i]!r} has a missing component", file=name, item=str(ids[i]))
    return ids, _vectors_array(frame.to_numpy(dtype=np.float32), name)


def _read_csv(data: bytes | None, path: Path | None, name: str, id_column: str | None,
              *, sep: str | None) -> tuple[np.ndarray, np.ndarray]:
    raw = _read_all(data, path, name)
    if b"\x00" in raw[:65536]:
        raise InputFormatError("binary content (NUL bytes), expected CSV text", file=name)
    if sep is None:
        first = raw.split(b"\n", 1)[0]
        sep = "\t" if first.count(b"\t") > first.count(b",") else ","
    try:
        frame = pd.read_csv(io.BytesIO(raw), sep=sep, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as e:
        raise InputFormatError(f"cannot parse CSV ({str(e).strip().splitlines()[0]})", file=name) from None
    if frame.empty:
        raise EmptyInputError("no rows", file=name)
    cols = [str(c) for c in frame.columns]
    frame.columns = cols
    kinds = {c: ("list" if frame[c].str.lstrip().str.startswith("[").all() else
                 ("number" if _numeric_mask(frame[c]).all() else "text")) for c in cols}
    idc = _pick_id_column(cols, kinds, id_column, name)
    id_vals = frame[idc].str.strip()
    if (id_vals == "").any():
        i = int(np.flatnonzero((id_vals == "").to_numpy())[0])
        raise InputFormatError(f"empty id in column {idc!r}", file=name, line=i + 2)
    ids = _ids_array(id_vals.to_numpy(), name)
    rest = [c for c in cols if c != idc]
    lists = [c for c in rest if kinds[c] == "list"]
    if lists:
        vc = next((c for c in lists if c.lower() in _VEC_NAMES), lists[0])
        rows = []
        for i, cell in enumerate(frame[vc].tolist()):
            try:
                v = json.loads(cell)
            except json.JSONDecodeError:
                raise ValueTypeError(f"vector of id {ids[i]!r} is not a list of numbers: {cell[:60]!r}",
                                     file=name, line=i + 2, item=str(ids[i])) from None
            rows.append(v)
        _, mat = _rows_from_mapping(zip(ids.tolist(), rows, strict=True), name, check_dupes=False)
        return ids, mat
    numeric = [c for c in rest if kinds[c] == "number"]
    bad = [c for c in rest if kinds[c] != "number"]
    if bad:
        c = bad[0]
        i = int(np.flatnonzero(~_numeric_mask(frame[c]).to_numpy())[0])
        raise ValueTypeError(f"column {c!r}: value {frame[c].iloc[i]!r} of id {ids[i]!r} is not a number",
                             file=name, line=i + 2, item=str(ids[i]))
    if not numeric:
        raise InputFormatError(f"no vector columns besides the id column {idc!r}", file=name)
    mat = np.column_stack([_to_float(frame[c]) for c in numeric]).astype(np.float32)
    return ids, _vectors_array(mat, name)


_NONFINITE = {"nan": np.nan, "-nan": np.nan, "inf": np.inf, "+inf": np.inf, "-inf": -np.inf,
              "infinity": np.inf, "+infinity": np.inf, "-infinity": -np.inf}


def _numeric_mask(col: pd.Series) -> pd.Series:
    """True where a text cell is a number (NaN/inf spelled out count: they are reported later as non-finite)."""
    text = col.str.strip()
    return pd.to_numeric(text, errors="coerce").notna() | text.str.lower().isin(_NONFINITE)


def _to_float(col: pd.Series) -> np.ndarray:
    text = col.str.strip()
    low = text.str.lower()
    out = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    special = low.isin(_NONFINITE).to_numpy()
    out[special] = [_NONFINITE[x] for x in low[special]]
    return out


def _read_json(data: bytes | None, path: Path | None, name: str) -> tuple[np.ndarray, np.ndarray]:
    raw = _read_all(data, path, name)

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for k, v in pairs:
            if k in seen and isinstance(v, list):
                raise DuplicateIdError(f"id {k!r} appears twice", file=name, item=k)
            seen[k] = v
        return seen

    try:
        obj = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=pairs_hook)
    except UnicodeDecodeError as e:
        raise InputFormatError(f"not UTF-8 text (byte {e.start})", file=name) from None
    except json.JSONDecodeError as e:
        raise InvalidJsonError(f"invalid JSON ({e.msg}, column {e.colno})", file=name, line=e.lineno) from None
    if not isinstance(obj, dict):
        raise InputFormatError(f'expected a JSON object {{"id": [floats], ...}}, got a {type(obj).__name__}',
                               file=name)
    if not obj:
        raise EmptyInputError("no vectors", file=name)
    return _rows_from_mapping(obj.items(), name, check_dupes=False)


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
    dup = pd.Index(ids).duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise DuplicateIdError(f"id {ids[i]!r} appears twice ({int(dup.sum())} duplicate ids)", file=name,
                               item=str(ids[i]))
    n_bad = 0
    first_bad = None
    n_zero = 0
    first_zero = None
    for lo in range(0, vecs.shape[0], _CHUNK_ROWS):
        block = np.asarray(vecs[lo: lo + _CHUNK_ROWS])
        fin = np.isfinite(block).all(axis=1)
        if not fin.all():
            n_bad += int((~fin).sum())
            if first_bad is None:
                first_bad = lo + int(np.flatnonzero(~fin)[0])
        zero = ~np.any(block != 0, axis=1)
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
             "their cosine with anything is 0")
    return Embeddings(ids, vecs, name)


# --------------------------------------------------------------------- saving
def save_embeddings(emb: Embeddings, path: str | os.PathLike, *, format: str = "auto") -> list[Path]:
    """Write embeddings in any supported format (by suffix unless ``format``); returns the files written.

    ``.npy`` also writes ``X_ids.txt`` beside it. Parquet stores a list column
    ``embedding``; CSV one column per dimension (``d0, d1, ...``, full float32
    precision); JSON ``{id: [floats]}``.
    """
    p = Path(path)
    fmt = _detect(p.name, b"x", None) if format == "auto" else format.lower().lstrip(".")
    p.parent.mkdir(parents=True, exist_ok=True)
    ids = np.asarray(emb.ids, dtype=str)
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

"""Readers of embedding files (.npz, .npy, Parquet, CSV/TSV, JSON) into :class:`Embeddings`."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .._lazy import pd
from ..errors import (
    DuplicateIdError,
    EmptyInputError,
    InputFormatError,
    InvalidJsonError,
    MissingColumnError,
    ShapeMismatchError,
    UnreadableFileError,
    UnsafeFileError,
    ValueTypeError,
)
from ..retrieval.inputs import load_npy
from ._arrow import read_parquet_bytes
from .embeddings import (
    _ID_COLUMNS,
    _VEC_NAMES,
    EMBEDDING_FORMATS,
    Embeddings,
    Source,
    _check_ragged,
    _check_unique_ids,
    _detect,
    _finish,
    _head,
    _ids_array,
    _open,
    _refuse_gzip,
    _rows_from_mapping,
    _vectors_array,
    read_ids,
)
from .jsonfmt import text_line
from .npzmap import map_npz_member
from .source import refuse_broken_ids, strip_ascii_ws, strip_ids
from .trec import looks_like_run_line

# --------------------------------------------------------------------- loading
__all__ = ["load_embeddings", "load_vectors", "npz_ids"]


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
        Memory-map a ``.npy`` file on disk, or the vectors of a ``.npz`` file
        on disk stored uncompressed (``np.savez``; :mod:`evalcore.io.npzmap`),
        instead of reading them (read-only; float32 vectors stay mapped, other
        dtypes are converted in memory).
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
    _refuse_gzip(_head(data, path, 2), name, "embedding files")
    fmt = _detect(name, data, path) if format == "auto" else format.lower().lstrip(".")
    if fmt == "npz":
        ids, vecs = _read_npz(data, path, name, mmap=mmap)
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
    if "allow_pickle" in msg or "pickle" in msg.lower() or "python objects" in msg.lower():
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
                f"no ids file beside it: expected {stem}_ids.txt or {stem}.ids.txt, or pass an ids file (on the "
                "command line: --emb-ids NAME=FILE, --reference-ids FILE, or topk's --doc-ids / --query-ids)", file=name)
        ids = read_ids(ids_path)
        ids_name = str(ids_path)
    else:
        ids = read_ids(ids_src, label=None if not isinstance(ids_src, (bytes, bytearray)) else f"ids of {name}")
        ids_name = (str(ids_src) if isinstance(ids_src, (str, os.PathLike)) else
                    str(getattr(ids_src, "name", "")) or f"ids of {name}")
    vecs = _vectors_array(arr, name)
    if len(ids) != vecs.shape[0]:
        raise ShapeMismatchError(
            f"{vecs.shape[0]} vectors but {len(ids)} ids in {ids_name}; they must match one id per row", file=name)
    _check_unique_ids(ids, ids_name, by_line=True)  # (the error names the ids file and its lines)
    return ids, vecs


def _ids_beside(path: Path) -> Path | None:
    stem = path.name[:-4] if path.name.lower().endswith(".npy") else path.stem
    for cand in (path.with_name(f"{stem}_ids.txt"), path.with_name(f"{stem}.ids.txt")):
        if cand.exists():
            return cand
    return None


def _read_npz(data: bytes | None, path: Path | None, name: str, *, mmap: bool = False) -> tuple[np.ndarray, np.ndarray]:
    if mmap and path is not None:
        got = _map_npz(path, name)
        if got is not None:
            return got
    raw = _read_all(data, path, name)
    try:
        npz = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise _np_error(e, name, ".npz archive") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise InputFormatError("not a .npz archive", file=name)
    with npz:
        vec_key = _npz_keys(list(npz.files), name)
        try:
            ids_arr = npz["ids"]
            vec_arr = npz[vec_key]
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
            raise _np_error(e, name, ".npz archive") from None
    return _npz_arrays(ids_arr, vec_arr, vec_key, name)


def _npz_keys(keys: list[str], name: str) -> str:
    """The key of the vectors among an archive's arrays (``ids`` must be there too)."""
    vec_key = next((k for k in _VEC_NAMES if k in keys), None)
    if "ids" not in keys or vec_key is None:
        raise InputFormatError(f"a .npz needs arrays 'ids' and 'embeddings'; it has {keys}", file=name)
    return vec_key


def _npz_arrays(ids_arr: np.ndarray, vec_arr: np.ndarray, vec_key: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    ids = npz_ids(ids_arr, name)
    vecs = _vectors_array(vec_arr, name)
    if len(ids) != vecs.shape[0]:
        raise ShapeMismatchError(f"{vecs.shape[0]} rows in '{vec_key}' but {len(ids)} ids in 'ids'", file=name)
    return ids, vecs


def npz_ids(ids_arr: np.ndarray, name: str) -> np.ndarray:
    """The ``ids`` array of a ``.npz`` as text ids, each stripped of ASCII white space only (the rule of every id
    reader, :func:`.source.strip_ids`); one empty or holding a control character is refused, with its row."""
    ids = _ids_array(ids_arr, name)
    if ids_arr.dtype.kind not in "iu":  # (text ids: ASCII white space around one is not part of it, as in every reader)
        ids = strip_ids(ids)
    _refuse_empty(ids, name, lambda i: f" (row {i + 1} of the array 'ids')")
    refuse_broken_ids(ids, what="id", file=name, where=lambda i: f" (row {i + 1} of the array 'ids')")
    return ids


def _refuse_empty(ids: np.ndarray, name: str, where: Any) -> None:
    """An id that is empty once stripped of ASCII white space is refused, naming the file and its place."""
    empty = np.flatnonzero(ids == "")
    if len(empty):
        raise InputFormatError(f"empty id{where(int(empty[0]))}", file=name)


def _map_npz(path: Path, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Ids read and vectors memory-mapped from an archive on disk; None when the vectors cannot be mapped."""
    try:
        with zipfile.ZipFile(path) as zf:
            members = {n[:-4]: n for n in zf.namelist() if n.endswith(".npy")}
            vec_key = _npz_keys(list(members), name)
            vecs = map_npz_member(path, zf.getinfo(members[vec_key]), name=name)
            if vecs is None:
                return None
            with zf.open(members["ids"]) as fh:
                ids_arr = np.lib.format.read_array(fh, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise _np_error(e, name, ".npz archive") from None
    return _npz_arrays(ids_arr, vecs, vec_key, name)


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
    if pa.types.is_dictionary(idcol.type):  # (a categorical column of text ids: pandas' category dtype)
        if pa.types.is_string(idcol.type.value_type) or pa.types.is_large_string(idcol.type.value_type):
            idcol = idcol.cast(idcol.type.value_type)
    if pa.types.is_string(idcol.type) or pa.types.is_large_string(idcol.type):
        idcol = strip_ascii_ws(idcol)  # (ASCII white space only: a Unicode space is part of an id, as every reader)
    ids = _ids_array(idcol.to_numpy(zero_copy_only=False), name)
    _refuse_empty(ids, name, lambda i: f" (row {i + 1})")
    refuse_broken_ids(ids, what="id", file=name, where=lambda i: f" (row {i + 1})")
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
    id_vals = strip_ids(frame[idc])  # (ASCII white space only: a Unicode space is part of an id)
    if (id_vals == "").any():
        i = int(np.flatnonzero(id_vals == "")[0])
        raise InputFormatError(f"empty id in column {idc!r}", file=name, line=i + 2)
    ids = _ids_array(id_vals, name)
    refuse_broken_ids(ids, what="id", file=name, line=lambda i: i + 2)  # (the first such row: no line break before)
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
        if looks_like_run_line(str(idc).split()):  # one column: white-space separated lines of a run file
            raise InputFormatError("this looks like a TREC run file (qid Q0 docid rank score tag), not embeddings: "
                                   "add it as a ranked run", file=name, line=1)
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
        text = raw.decode("utf-8-sig")
        obj = json.loads(text, object_pairs_hook=pairs_hook)
    except UnicodeDecodeError as e:
        raise InputFormatError(f"not UTF-8 text (byte {e.start})", file=name) from None
    except json.JSONDecodeError as e:
        raise InvalidJsonError(f"invalid JSON ({e.msg}, column {e.colno})", file=name, line=e.lineno) from None
    if not isinstance(obj, dict):
        raise InputFormatError(f'expected a JSON object {{"id": [floats], ...}}, got a {type(obj).__name__}',
                               file=name)
    if not obj:
        raise EmptyInputError("no vectors", file=name)
    ids = strip_ids([str(k) for k in obj])  # (ASCII white space only, as every id reader)
    if (ids == "").any():
        raise InputFormatError("empty id (a key of the object)", file=name)
    refuse_broken_ids(ids, what="id", file=name, line=lambda i: text_line(text, ids[i]))
    return _rows_from_mapping(zip(ids.tolist(), obj.values(), strict=True), name, check_dupes=False)


def load_vectors(path: str | os.PathLike, *, mmap: bool) -> np.ndarray:
    """A 2-D numeric ``.npy`` file, memory-mapped read-only when ``mmap`` (:func:`evalcore.retrieval.inputs.load_npy`)."""
    return load_npy(path, mmap=mmap)

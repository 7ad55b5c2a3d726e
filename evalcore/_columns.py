"""Arrow columns as numpy arrays, and 64-bit hashes of string ids (the data model's internals).

pyarrow's own ``to_numpy`` (and ``pa.array`` on Python or numpy input) imports pandas on first use
(~0.3 s). The data model and the readers convert through these helpers instead, so the command line
can parse its inputs while pandas is still being imported in a background thread (see
:mod:`evalcore._lazy`). Columns must hold no nulls (the callers check ``null_count`` first).
"""

from __future__ import annotations

import itertools
import sys
from typing import Any

import numpy as np

_NUMERIC = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float": np.float32, "double": np.float64,
}


def _chunks(col: Any) -> list:
    return list(col.chunks) if hasattr(col, "chunks") else [col]


def numbers(col: Any) -> np.ndarray:
    """A numeric arrow (chunked) array without nulls as a new numpy array."""
    chunks = _chunks(col)
    name = str(col.type)
    if name not in _NUMERIC:
        raise TypeError(f"not a numeric arrow type: {name}")
    dt = np.dtype(_NUMERIC[name])
    parts = [np.frombuffer(c.buffers()[1], dtype=dt)[c.offset: c.offset + len(c)] for c in chunks if len(c)]
    if any(c.null_count for c in chunks):
        raise ValueError("column holds nulls")
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dt)


def arrow_indices(rows: np.ndarray) -> Any:
    """int64 positions as an arrow array (for ``take``), zero-copy and without importing pandas."""
    import pyarrow as pa

    rows = np.ascontiguousarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(rows), [None, pa.py_buffer(rows)])


def string_offsets(chunk: Any) -> np.ndarray:
    """int64 offsets (len + 1) of a string / large_string arrow array into its data buffer."""
    odt = np.int64 if "large" in str(chunk.type) else np.int32
    n = len(chunk)
    return np.frombuffer(chunk.buffers()[1], dtype=odt)[chunk.offset: chunk.offset + n + 1].astype(np.int64)


def has_empty(col: Any) -> bool:
    """Whether a (chunked) string array holds an empty string (read from the offsets)."""
    for c in _chunks(col):
        if len(c):
            off = string_offsets(c)
            if bool((off[1:] == off[:-1]).any()):
                return True
    return False


def _pandas_ready() -> bool:
    """pandas is imported and done importing (a background import still running would make arrow's
    ``to_numpy`` wait for it: the import machinery marks a module in progress with ``_initializing``)."""
    mod = sys.modules.get("pandas")
    return mod is not None and not getattr(getattr(mod, "__spec__", None), "_initializing", False)


def strings(col: Any) -> np.ndarray:
    """A string arrow (chunked) array without nulls as a numpy object array of ``str``.

    Arrow's own conversion (``to_numpy``, about 4x faster) imports pandas (0.3-0.6 s): it is
    used once pandas is imported anyway (the dashboard, a script); a command that never needs
    pandas, or is still importing it in the background, slices one decoded text instead.
    """
    if _pandas_ready():
        parts = []
        for c in _chunks(col):
            if c.null_count:
                raise ValueError("column holds nulls")
            parts.append(c.to_numpy(zero_copy_only=False))
        return np.concatenate(parts) if len(parts) > 1 else parts[0] if parts else np.empty(0, dtype=object)
    out: list[str] = []
    for c in _chunks(col):
        n = len(c)
        if n == 0:
            continue
        if c.null_count:
            raise ValueError("column holds nulls")
        bufs = c.buffers()
        off = string_offsets(c)
        raw = bytes(memoryview(bufs[2])[int(off[0]): int(off[-1])]) if bufs[2] is not None else b""
        off -= off[0]
        bounds = off.tolist()
        if raw.isascii():  # one decode, then character slices (byte offsets = character offsets)
            text = raw.decode("ascii")
            out.extend(text[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True))
        else:
            out.extend(raw[a:b].decode("utf-8") for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    arr = np.empty(len(out), dtype=object)
    arr[:] = out
    return arr


_MIX = np.uint64(0x9E3779B97F4A7C15)
_MAX_HASH_BYTES = 256  # longer ids: exact check through the vocabulary


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64-style finaliser on uint64 arrays (wrapping arithmetic)."""
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


_HASH_ROWS = 1 << 21  # rows hashed at a time: bounded temporaries for runs of any size


def string_hashes(docs: Any) -> np.ndarray | None:
    """64-bit hash of each string of a pyarrow string (chunked) array; None when ids are too long to hash here.

    A row's hash depends on its own bytes only, so equal strings hash equal in
    any array. Works on the arrow buffers, 8 bytes at a time gathered through an
    unaligned uint64 view of the string data, a bounded number of rows at a time.
    """
    import pyarrow as pa

    chunks = docs.chunks if isinstance(docs, pa.ChunkedArray) else [docs]
    out = np.empty(len(docs), dtype=np.uint64)
    at = 0
    for chunk in chunks:
        if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)) or chunk.null_count:
            return None
        for lo in range(0, len(chunk), _HASH_ROWS):
            part = chunk.slice(lo, _HASH_ROWS)
            h = _hash_string_array(part)
            if h is None:
                return None
            out[at: at + len(h)] = h
            at += len(h)
    return out


def _hash_string_array(arr: Any) -> np.ndarray | None:
    bufs = arr.buffers()
    off = string_offsets(arr)
    lens = np.diff(off)
    width = int(lens.max(initial=0))
    if width > _MAX_HASH_BYTES:
        return None
    raw = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and width else np.zeros(0, np.uint8)
    data = np.zeros(int(off[-1]) - int(off[0]) + 8, dtype=np.uint8)  # padded so every 8-byte read stays inside
    data[: int(off[-1]) - int(off[0])] = raw[int(off[0]): int(off[-1])]
    words = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    start = off[:-1] - off[0]
    with np.errstate(over="ignore"):
        h = lens.astype(np.uint64) * _MIX
        for w in range(0, width, 8):
            take = np.clip(lens - w, 0, 8)
            word = words[np.minimum(start + w, len(words) - 1)]
            lo = int(take.min())
            if lo < 8:  # some rows end inside this word: keep only their own bytes
                mask = np.where(take >= 8, np.uint64(0xFFFFFFFFFFFFFFFF),
                                (np.uint64(1) << (take.astype(np.uint64) * np.uint64(8))) - np.uint64(1))
                word &= mask
            mixed = _mix(h ^ (word + _MIX))
            h = mixed if lo > 0 else np.where(take > 0, mixed, h)  # rounds = the row's own length
    return h


def pair_keys(q: np.ndarray, doc_hashes: np.ndarray) -> np.ndarray:
    """64-bit key of each (integer query, hashed document) row: equal pairs give equal keys."""
    with np.errstate(over="ignore"):
        return _mix(doc_hashes ^ (np.asarray(q).astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)))


def arrow_numbers(values: np.ndarray, *, valid: np.ndarray | None = None) -> Any:
    """A numeric numpy array as an arrow array, without importing pandas (``valid``: False = null)."""
    import pyarrow as pa

    arr = np.ascontiguousarray(values)
    types = {np.dtype(v): k for k, v in _NUMERIC.items()}
    kind = types.get(arr.dtype)
    if kind is None:
        raise TypeError(f"no arrow type for numpy dtype {arr.dtype}")
    bitmap = None
    nulls = 0
    if valid is not None and not bool(np.all(valid)):
        bitmap = pa.py_buffer(np.packbits(np.asarray(valid, dtype=bool), bitorder="little"))
        nulls = int(len(arr) - np.count_nonzero(valid))
    atype = {"float": pa.float32(), "double": pa.float64()}.get(kind) or getattr(pa, kind)()
    return pa.Array.from_buffers(atype, len(arr), [bitmap, pa.py_buffer(arr)], null_count=nulls)


def arrow_strings(items: list[str]) -> Any:
    """A list of ``str`` as an arrow string array, without importing pandas."""
    import pyarrow as pa

    encoded = [s.encode("utf-8") for s in items]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string() if offsets[-1] >= 2**31 else pa.string(), len(encoded),
                                 [None, pa.py_buffer(offsets if offsets[-1] >= 2**31 else offsets.astype(np.int32)),
                                  pa.py_buffer(b"".join(encoded))])


def distinct_dictionaries(chunks: Any) -> tuple[list, list[int]]:
    """The distinct dictionaries of dictionary-encoded arrow ``chunks`` (by identity: same buffers, offset
    and length, as the batches of one Parquet row group or of one ``dictionary_encode`` share theirs) and
    the position of each chunk's dictionary among them."""
    distinct: list = []
    where: dict[tuple, int] = {}
    of_chunk = []
    for c in chunks:
        d = c.dictionary
        key = (*(b.address if b is not None else 0 for b in d.buffers()), d.offset, len(d))
        if key not in where:
            where[key] = len(distinct)
            distinct.append(d)
        of_chunk.append(where[key])
    return distinct, of_chunk


def encode_strings(col: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` of an arrow (chunked) string column without nulls, by arrow's dictionary encoding:
    int64 code of each value and the distinct values (object array of ``str``) in order of first appearance."""
    import pyarrow as pa
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(col)
    if isinstance(enc, pa.ChunkedArray):
        chunks = enc.chunks
        if len(distinct_dictionaries(chunks)[0]) == 1:  # one shared dictionary (arrow's way)
            return np.concatenate([numbers(c.indices) for c in chunks]).astype(np.int64), strings(chunks[0].dictionary)
        enc = pc.dictionary_encode(col.combine_chunks())
    return numbers(enc.indices).astype(np.int64), strings(enc.dictionary)


def factorize_strings(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)``: int64 code of each value (order of first appearance) and the distinct values
    (object array) — ``pandas.factorize`` for hashable ids, without importing pandas."""
    seen: dict[Any, int] = {}
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    codes = np.fromiter((seen.setdefault(x, len(seen)) for x in items), np.int64, len(items))
    uniques = np.empty(len(seen), dtype=object)
    uniques[:] = list(seen)
    return codes, uniques


def name_index(names: Any) -> dict[Any, int]:
    """Position of each of ``names`` (the last one when a name repeats): what :func:`positions_in` looks names up
    in, built once by a caller that looks up many lists in the same names (a ground truth's documents, run after
    run)."""
    keys = names.tolist() if isinstance(names, np.ndarray) else list(names)
    return dict(zip(keys, range(len(keys)), strict=True))


def positions_in(names: Any, wanted: Any, *, where: dict[Any, int] | None = None) -> np.ndarray:
    """int64 position of each of ``wanted`` among ``names`` (the last one when a name repeats), -1 where absent —
    ``Index.get_indexer`` without importing pandas. ``where``: ``name_index(names)``, when the caller keeps it."""
    where = name_index(names) if where is None else where
    items = wanted.tolist() if isinstance(wanted, np.ndarray) else list(wanted)
    return np.fromiter(map(where.get, items, itertools.repeat(-1, len(items))), np.int64, len(items))

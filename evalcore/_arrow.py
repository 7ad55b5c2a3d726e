"""Arrow → numpy conversions that read the buffers directly.

pyarrow's own ``to_numpy`` (and ``pa.array`` on Python or numpy input) imports
pandas on first use (~0.3 s). The TREC readers convert through these helpers
instead, so the command line can parse its inputs while pandas is still being
imported in a background thread (see :mod:`evalcore._lazy`). Columns must hold
no nulls (the callers check ``null_count`` first).
"""

from __future__ import annotations

import sys
import time
import traceback
from typing import Any

import numpy as np

__all__ = ["numbers", "strings", "string_offsets", "has_empty", "read_csv_bytes", "read_parquet_bytes"]


def _read_bytes(data: bytes, read):
    """``read(pa.BufferReader(data))``, returning (or raising) only once arrow has let go of ``data``.

    Arrow wraps ``data`` in a buffer whose destructor needs the GIL, and the
    reader's last reference is often dropped by an arrow pool thread just
    after the read has returned.  If the interpreter is finalising by then (a
    script or command that exits right after reading, or after a parse
    error), CPython ends that thread with ``pthread_exit`` inside a C++
    destructor and the process aborts ("terminate called without an active
    exception", exit -6; measured: 7 of 300 short processes reading a TREC
    file, 0 of 300 with this wait).  While arrow holds a view of ``data`` its
    reference count is raised, so this waits, GIL released, until the count
    is back to what it was (0.5 s at most: a result that kept referencing the
    input would only cost that wait).
    """
    import pyarrow as pa

    before = sys.getrefcount(data)
    try:
        return read(pa.BufferReader(data))
    except BaseException as e:
        # the failed read's frames (kept by the traceback) would keep the reader, so the bytes, alive
        traceback.clear_frames(e.__traceback__)
        raise
    finally:
        deadline = time.monotonic() + 0.5
        pause = 1e-5
        while sys.getrefcount(data) > before and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(2 * pause, 0.01)


def read_csv_bytes(data: bytes, **options: Any):
    """``pyarrow.csv.read_csv`` over ``data``, safe to exit right after (see :func:`_read_bytes`)."""
    import pyarrow.csv as pacsv

    return _read_bytes(data, lambda source: pacsv.read_csv(source, **options))


def read_parquet_bytes(data: bytes):
    """``pyarrow.parquet.read_table`` over ``data``, safe to exit right after (see :func:`_read_bytes`)."""
    import pyarrow.parquet as pq

    return _read_bytes(data, pq.read_table)

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


def strings(col: Any) -> np.ndarray:
    """A string arrow (chunked) array without nulls as a numpy object array of ``str``."""
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

"""Input checks, loading and preparation: what every backend may take for granted.

:func:`evalcore.retrieval.exact_topk` checks its inputs here once, before it
hands them to a backend; :func:`normalize`, :func:`count_zero_rows` and
:func:`load_npy_mmap` are the public helpers for preparing them.  The checks
work in row chunks (``_CHUNK_BYTES``) so a memory-mapped corpus is never read
whole.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import (
    DuplicateIdError,
    InputFormatError,
    NonFiniteValueError,
    OptionError,
    ShapeMismatchError,
    UnsafeFileError,
    ValueTypeError,
)
from .scoring import _as_f32, _normalize_rows, _sumsq

_CHUNK_BYTES = 32 * 2**20  # working set of the helper loops (normalise, checks)


def _as_matrix(x, name: str) -> np.ndarray:
    """``x`` as a 2-D real numeric array, without copying (memmaps stay memmaps)."""
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueTypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ShapeMismatchError(f"{name} must be a 2-D array (rows x dimensions), got shape {arr.shape}")
    return arr


def _as_ids(ids, name: str) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.ndim != 1:
        raise ShapeMismatchError(f"{name} must be a 1-D sequence of ids, got shape {arr.shape}")
    if arr.dtype.kind != "U":
        arr = arr.astype(str)
    return arr


def _row_chunk(d: int, itemsize: int = 8) -> int:
    return max(1, _CHUNK_BYTES // max(1, d * itemsize))


def _nonfinite_error(x: np.ndarray, name: str, ids: np.ndarray | None, start: int = 0) -> NonFiniteValueError:
    """Count the rows of ``x[start:]`` holding NaN/inf (chunked) and describe the first one."""
    count, first = 0, None
    step = _row_chunk(x.shape[1], 1)
    for s in range(start, x.shape[0], step):
        bad = ~np.isfinite(x[s : s + step]).all(axis=1)
        nbad = int(np.count_nonzero(bad))
        if nbad and first is None:
            first = s + int(np.argmax(bad))
        count += nbad
    where = f"row {first}" + (f" (id {str(ids[first])!r})" if ids is not None else "")
    return NonFiniteValueError(
        f"{name} has {count} row(s) with NaN or infinite values; first at {where}",
        item=None if ids is None else str(ids[first]),
    )


def _check_finite(x: np.ndarray, name: str, ids: np.ndarray | None) -> None:
    if x.dtype.kind != "f":
        return
    step = _row_chunk(x.shape[1], 4)
    for s in range(0, x.shape[0], step):
        if not np.isfinite(x[s : s + step]).all():
            raise _nonfinite_error(x, name, ids, s)


def _scan_rows(x: np.ndarray, name: str, ids: np.ndarray | None) -> int:
    """One chunked pass: raise on NaN/inf, return the number of all-zero rows."""
    zeros = 0
    step = _row_chunk(x.shape[1], 12)
    for s in range(0, x.shape[0], step):
        sq = _sumsq(_as_f32(x[s : s + step]))
        if not np.isfinite(sq).all():
            raise _nonfinite_error(x, name, ids, s)
        zeros += int(np.count_nonzero(sq == 0))
    return zeros


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise OptionError(f"k must be a positive integer, got {k!r}")
    if k <= 0:
        raise OptionError(f"k must be a positive integer, got {k}")
    return int(k)


def _id_ranks(ids: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(rank of each id in string order, argsort order); duplicates are an error."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    dup = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    if dup.size:
        bad = str(sorted_ids[dup[0]])
        rows = np.flatnonzero(ids == bad)[:2].tolist()
        raise DuplicateIdError(f"{name} holds id {bad!r} twice (rows {rows[0]} and {rows[1]})", item=str(bad))
    rank = np.empty(ids.shape[0], dtype=np.int64)
    rank[order] = np.arange(ids.shape[0], dtype=np.int64)
    return rank, order


def normalize(x, *, eps: float = 1e-12) -> np.ndarray:
    """Return ``x / (||x|| + eps)`` row by row as a new float32 array (seed 001 §2.3).

    ``x`` is a 2-D array (rows are vectors) or a single 1-D vector; it is never
    modified.  Values are taken as float32 (like faiss); the norm is summed in
    float64 (exact squares, fixed order), ``||x|| + eps`` is rounded to float32
    and the quotient is a float32 division, so each output row depends on its
    input row only (bit for bit) - :func:`exact_topk` relies on it.  Zero
    vectors stay zero (``0 / eps``); count them with :func:`count_zero_rows`.
    Raises :class:`NonFiniteValueError` on NaN/inf.
    """
    if not (isinstance(eps, (int, float, np.floating)) and np.isfinite(eps) and eps >= 0):
        raise OptionError(f"eps must be a finite number >= 0, got {eps!r}")
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if arr.ndim == 1:
        return normalize(arr[None, :], eps=eps)[0]
    arr = _as_matrix(arr, "x")
    _check_finite(arr, "x", None)
    out = np.empty(arr.shape, dtype=np.float32)
    step = _row_chunk(arr.shape[1])
    for s in range(0, arr.shape[0], step):
        out[s : s + step] = _normalize_rows(arr[s : s + step], eps)
    return out


def count_zero_rows(x) -> int:
    """Number of all-zero rows of a 2-D array (they have cosine 0 with everything)."""
    arr = _as_matrix(x, "x")
    step = _row_chunk(arr.shape[1], 1)
    return int(sum(np.count_nonzero(~arr[s : s + step].any(axis=1)) for s in range(0, arr.shape[0], step)))


def load_npy_mmap(path: str | os.PathLike) -> np.ndarray:
    """Open a ``.npy`` file read-only and memory-mapped (``allow_pickle=False``).

    The file is not read into memory; :func:`exact_topk` streams it block by
    block.  Object arrays (which would need unpickling) are refused.
    """
    return load_npy(path, mmap=True)


def load_npy(path: str | os.PathLike, *, mmap: bool) -> np.ndarray:
    """A 2-D array of real numbers from a ``.npy`` file, memory-mapped read-only when ``mmap``.

    Never unpickles (object arrays are refused); every fault is an error naming the file.
    """
    label = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
    except FileNotFoundError as e:
        raise InputFormatError("file not found", file=label) from e
    except OSError as e:
        raise InputFormatError(f"cannot be read as .npy ({e.strerror or e})", file=label) from e
    if head.startswith(b"PK"):
        raise InputFormatError("is an .npz archive; expected a single .npy array", file=label)
    if head != b"\x93NUMPY":
        if not head:
            raise InputFormatError("file is empty; expected a .npy array", file=label)
        if head.startswith(b"\x80"):
            raise UnsafeFileError("a Python pickle, not a .npy array; refusing to unpickle", file=label)
        raise InputFormatError("not a .npy file (no NUMPY header)", file=label)
    try:
        arr = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except FileNotFoundError as e:
        raise InputFormatError("file not found", file=label) from e
    except ValueError as e:
        msg = str(e)
        if "pickle" in msg.lower() or "python objects" in msg.lower():
            raise UnsafeFileError("holds Python objects (would need unpickling); refused", file=label) from e
        raise InputFormatError(f"not a readable .npy file ({msg})", file=label) from e
    except OSError as e:
        raise InputFormatError(f"cannot be read as .npy ({e})", file=label) from e
    if not isinstance(arr, np.ndarray):  # an .npz archive
        raise InputFormatError("is an .npz archive; expected a single .npy array", file=label)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueTypeError(f"must hold real numbers, got dtype {arr.dtype}", file=label)
    if arr.ndim != 2:
        raise ShapeMismatchError(f"must be a 2-D array (rows x dimensions), got shape {arr.shape}", file=label)
    return arr

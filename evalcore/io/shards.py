"""A corpus stored as shards: a directory or a glob of ``.npy`` / ``.npz`` files, read shard by shard.

Layouts (a directory takes every ``*.npy`` and ``*.npz`` file directly inside it;
a glob takes the ``.npy`` / ``.npz`` files it matches):

``X.npy``
    A 2-D numeric array; its ids, one per line, are in ``X_ids.txt`` (or
    ``X.ids.txt``) beside it.  Memory-mapped read-only.
``X.npz``
    Arrays ``ids`` and ``embeddings`` (``vectors`` / ``emb`` accepted too).
    Memory-mapped when the archive is stored uncompressed (``np.savez``);
    a compressed one (``np.savez_compressed``) is read into memory whenever
    the shard is opened.

Order: shards are sorted by path, digit runs compared as numbers
(``part-2`` before ``part-10``), and the rows of the corpus are the rows of
the first shard, then of the second... (the order changes neither scores nor
rankings: ties are broken by id).  Every shard must have the dimension and
dtype of the first, at least one row and as many ids as rows; ids are unique
over all shards.  Each error names the shard file.

:func:`open_shards` returns a :class:`ShardSet`: a read-only 2-D array-like
(``shape``, ``dtype``, row slices and row lists) that never holds the corpus
in memory, and that :func:`evalcore.retrieval.exact_topk` searches shard by
shard (``open_shard``), in this process or on Dask workers, which open the
shard files themselves: a :class:`ShardSet` pickles as paths and sizes only.
"""

from __future__ import annotations

import glob
import os
import re
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import (
    DuplicateIdError,
    EmptyInputError,
    InputFormatError,
    ShapeMismatchError,
    UnsafeFileError,
    ValueTypeError,
)
from ..retrieval import load_npy_mmap
from .embeddings import _VEC_NAMES, Embeddings, read_ids, read_token_ids
from .vectors import _ids_beside, npz_ids

__all__ = ["Shard", "ShardSet", "is_shard_spec", "list_shard_files", "open_shards", "single_shard",
           "shard_embeddings"]

_GLOB_CHARS = re.compile(r"[*?\[]")
_SUFFIXES = (".npy", ".npz")


def is_shard_spec(spec: str | os.PathLike) -> bool:
    """True when ``spec`` names shards: an existing directory, or a glob pattern that is not a file."""
    text = os.fspath(spec)
    if os.path.isdir(text):
        return True
    return bool(_GLOB_CHARS.search(text)) and not os.path.isfile(text)


def _natural_key(path: str) -> tuple:
    parts = re.split(r"(\d+)", path)
    return tuple((0, int(p), p) if p.isdigit() else (1, 0, p) for p in parts), path


def list_shard_files(spec: str | os.PathLike) -> list[str]:
    """The ``.npy`` / ``.npz`` shard files ``spec`` names (a directory or a glob), in corpus order."""
    text = os.fspath(spec)
    if os.path.isdir(text):
        found = [str(p) for p in Path(text).iterdir() if p.is_file() and p.suffix.lower() in _SUFFIXES]
        where = "in the directory"
    else:
        found = [p for p in glob.glob(text) if os.path.isfile(p) and p.lower().endswith(_SUFFIXES)]
        where = "matching the pattern"
    if not found:
        raise EmptyInputError(f"no .npy or .npz shard {where}", file=text)
    return sorted(found, key=_natural_key)


@dataclass(frozen=True)
class Shard:
    """One shard file: ``rows`` rows starting at corpus row ``offset``.

    ``member`` is the vector array's name inside an ``.npz``; ``data_offset``
    the byte offset of its data when it can be memory-mapped (stored
    uncompressed), else ``None``.
    """

    path: str
    kind: str  # "npy" or "npz"
    rows: int
    offset: int
    ids_path: str | None = None
    member: str | None = None
    data_offset: int | None = None


@dataclass(frozen=True, eq=False)
class ShardSet:
    """A read-only corpus of shards (see the module docstring); rows numbered across shards in order.

    Attributes
    ----------
    shards : tuple of Shard
    dim : int
    dtype : numpy dtype
        The dtype of every shard's vectors.
    source : str
        What was given (directory or glob), for messages.
    strict_ids : bool
        ``.npy`` ids files are read with :func:`~evalcore.io.read_token_ids`
        (one token per line, as a TREC run needs) instead of
        :func:`~evalcore.io.read_ids` (stripped lines).
    """

    shards: tuple[Shard, ...]
    dim: int
    dtype: np.dtype
    source: str
    strict_ids: bool = True
    _ids: list = field(default_factory=list, repr=False)  # cache of read_ids(), never pickled

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_ids"] = []  # workers read their own shards' ids
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ------------------------------------------------------------------ the array face
    @property
    def shape(self) -> tuple[int, int]:
        return (self.shards[-1].offset + self.shards[-1].rows, self.dim)

    @property
    def ndim(self) -> int:
        return 2

    @property
    def shard_rows(self) -> tuple[int, ...]:
        return tuple(s.rows for s in self.shards)

    def __len__(self) -> int:
        return self.shape[0]

    def shard_label(self, i: int) -> str:
        return self.shards[i].path

    def _bounds(self) -> np.ndarray:
        return np.array([s.offset for s in self.shards] + [self.shape[0]], dtype=np.int64)

    def __getitem__(self, key) -> np.ndarray:
        """Rows ``key`` (a slice with step 1, an integer, or an array of row numbers) in memory."""
        n = self.shape[0]
        if isinstance(key, (int, np.integer)):
            return self[np.array([int(key)])][0]
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                return self[np.arange(start, stop, step)]
            out = np.empty((max(0, stop - start), self.dim), dtype=self.dtype)
            for i, s in enumerate(self.shards):
                a, b = max(start, s.offset), min(stop, s.offset + s.rows)
                if a < b:
                    out[a - start : b - start] = self._vectors(i)[a - s.offset : b - s.offset]
            return out
        rows = np.asarray(key)
        if rows.dtype == bool or rows.ndim != 1 or rows.dtype.kind not in "iu":
            raise TypeError("a ShardSet takes a slice, an integer or a 1-D array of row numbers")
        rows = np.where(rows < 0, rows + n, rows).astype(np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= n):
            raise IndexError(f"row numbers must be in [0, {n})")
        out = np.empty((rows.size, self.dim), dtype=self.dtype)
        which = np.searchsorted(self._bounds(), rows, side="right") - 1
        for i in np.unique(which).tolist():
            sel = np.flatnonzero(which == i)
            local = rows[sel] - self.shards[i].offset
            order = np.argsort(local, kind="stable")  # ascending: sequential reads of the memory map
            out[sel[order]] = self._vectors(i)[local[order]]
        return out

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[0 : self.shape[0]]
        return out if dtype is None else out.astype(dtype, copy=False)

    # ------------------------------------------------------------------ shard by shard
    def _vectors(self, i: int) -> np.ndarray:
        s = self.shards[i]
        if s.kind == "npy":
            return load_npy_mmap(s.path)
        if s.data_offset is not None:
            return np.memmap(s.path, dtype=self.dtype, mode="r", offset=s.data_offset, shape=(s.rows, self.dim))
        with np.load(s.path, allow_pickle=False) as npz:
            return npz[s.member]

    def _shard_ids(self, i: int) -> np.ndarray:
        s = self.shards[i]
        if s.kind == "npz":
            with np.load(s.path, allow_pickle=False) as npz:
                ids = npz_ids(npz["ids"], s.path)
        elif self.strict_ids:
            ids = read_token_ids(s.ids_path)
        else:
            ids = read_ids(s.ids_path)
        return np.asarray(ids, dtype=str)

    def open_shard(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Shard ``i``: its vectors (read-only; memory-mapped when the file allows) and ids (str)."""
        return self._vectors(i), self._shard_ids(i)

    def read_ids(self) -> np.ndarray:
        """Every id, in corpus row order (str array; read once, then cached)."""
        if not self._ids:
            self._ids.append(np.concatenate([self._shard_ids(i) for i in range(len(self.shards))]))
        return self._ids[0]


def _npz_layout(path: str) -> tuple[str, tuple, np.dtype, int | None]:
    """(member name, shape, dtype, data offset or None) of the vectors of an ``.npz`` (header only)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = {n[:-4]: n for n in zf.namelist() if n.endswith(".npy")}
            key = next((k for k in _VEC_NAMES if k in names), None)
            if "ids" not in names or key is None:
                raise InputFormatError(f"a .npz shard needs arrays 'ids' and 'embeddings'; it has {sorted(names)}",
                                       file=path)
            info = zf.getinfo(names[key])
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape, fortran, dtype = read(fh)
                header_len = fh.tell()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
        raise UnsafeFileError(f"truncated or corrupt .npz shard ({e})", file=path) from None
    if dtype.hasobject:
        raise UnsafeFileError("holds Python objects (would need unpickling); refused", file=path)
    offset = None
    if info.compress_type == zipfile.ZIP_STORED and not fortran:
        with open(path, "rb") as fh:  # the local file header: 30 bytes, then the name and the extra field
            fh.seek(info.header_offset)
            local = fh.read(30)
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        offset = info.header_offset + 30 + name_len + extra_len + header_len
    return key, shape, dtype, offset


def _shard_meta(path: str, offset: int, strict_ids: bool,
                ids_file: str | None = None) -> tuple[Shard, tuple, np.dtype]:
    if path.lower().endswith(".npy") or ids_file is not None:
        arr = load_npy_mmap(path)
        ids_path = ids_file or _ids_beside(Path(path))
        if ids_path is None:
            stem = Path(path).name[:-4]
            raise InputFormatError(f"no ids file beside the shard: expected {stem}_ids.txt or {stem}.ids.txt",
                                   file=path)
        n_ids = len(read_token_ids(ids_path) if strict_ids else read_ids(ids_path))
        shape, dtype = arr.shape, arr.dtype
        shard = Shard(path, "npy", int(shape[0]), offset, ids_path=str(ids_path))
        if n_ids != shape[0]:
            raise ShapeMismatchError(f"{shape[0]} rows but {n_ids} ids in {ids_path}", file=path)
        return shard, shape, dtype
    member, shape, dtype, data_offset = _npz_layout(path)
    if len(shape) != 2:
        raise ShapeMismatchError(f"'{member}' must be a 2-D array (rows x dimensions), got shape {shape}", file=path)
    if dtype.kind not in "biuf":
        raise ValueTypeError(f"'{member}' must hold real numbers, got dtype {dtype}", file=path)
    with np.load(path, allow_pickle=False) as npz:
        try:
            n_ids = len(npz_ids(npz["ids"], path))
        except ValueError as e:
            raise UnsafeFileError(f"'ids' cannot be read without unpickling ({e})", file=path) from None
    if n_ids != shape[0]:
        raise ShapeMismatchError(f"{shape[0]} rows in '{member}' but {n_ids} ids in 'ids'", file=path)
    return Shard(path, "npz", int(shape[0]), offset, member=member, data_offset=data_offset), shape, dtype


def open_shards(spec: str | os.PathLike, *, strict_ids: bool = True, check_ids: bool = True) -> ShardSet:
    """The shards ``spec`` names (a directory or a glob), checked from their headers and ids only.

    The vectors are not read (NaN/inf are found by the search as it streams
    them).  ``check_ids`` reads every id to refuse an id found in two shards
    (or twice in one), naming the files; the ids stay cached in the result.

    Raises EmptyInputError (no shard, an empty shard), InputFormatError (no
    ids file beside a ``.npy``), ShapeMismatchError (ids vs rows, another
    dimension), ValueTypeError (another dtype), UnsafeFileError,
    DuplicateIdError.
    """
    # absolute paths: Dask workers open the files themselves, each in a working directory of its own
    files = [os.path.abspath(f) for f in list_shard_files(spec)]
    shards: list[Shard] = []
    first_shape, first_dtype, offset = None, None, 0
    for path in files:
        shard, shape, dtype = _shard_meta(path, offset, strict_ids)
        if shape[0] == 0:
            raise EmptyInputError("the shard has no rows", file=path)
        if first_shape is None:
            first_shape, first_dtype = shape, dtype
        elif shape[1] != first_shape[1]:
            raise ShapeMismatchError(f"{shape[1]} dimensions but the first shard {files[0]} has {first_shape[1]}",
                                     file=path)
        elif dtype != first_dtype:
            raise ValueTypeError(f"dtype {dtype} but the first shard {files[0]} has {first_dtype}", file=path)
        shards.append(shard)
        offset += shard.rows
    out = ShardSet(tuple(shards), int(first_shape[1]), np.dtype(first_dtype), os.fspath(spec), strict_ids)
    if check_ids:
        _check_unique(out)
    return out


def _check_unique(shards: ShardSet) -> None:
    ids = shards.read_ids()
    order = np.argsort(ids, kind="stable")
    dup = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if dup.size:
        a, b = sorted(order[dup[0] : dup[0] + 2].tolist())
        bounds = shards._bounds()
        fa, fb = (shards.shards[int(np.searchsorted(bounds, r, side="right")) - 1].path for r in (a, b))
        where = f"twice in {fa}" if fa == fb else f"in {fa} and in {fb}"
        raise DuplicateIdError(f"id {str(ids[a])!r} appears {where}", file=fb, item=str(ids[a]))


def single_shard(path: str | os.PathLike, ids_path: str | os.PathLike, *, strict_ids: bool = True) -> ShardSet:
    """One ``.npy`` file and its ids file (anywhere) as a one-shard :class:`ShardSet`.

    The Dask backend searches it in pieces (row ranges), each read by a worker.
    """
    shard, shape, dtype = _shard_meta(os.path.abspath(path), 0, strict_ids, ids_file=os.path.abspath(ids_path))
    if shape[0] == 0:
        raise EmptyInputError("the file has no rows", file=os.fspath(path))
    out = ShardSet((shard,), int(shape[1]), np.dtype(dtype), os.fspath(path), strict_ids)
    _check_unique(out)
    return out


def shard_embeddings(spec: str | os.PathLike, ids_path: str | os.PathLike | None = None) -> Embeddings:
    """Shards as :class:`~evalcore.io.Embeddings` whose ``vectors`` is the :class:`ShardSet` (never in memory).

    ``spec`` is a directory or glob of shards, or one ``.npy`` / ``.npz``
    file (a one-shard set; a ``.npy`` with ``ids_path``, else its ids file
    beside it).  Ids are read as embedding ids are
    (:func:`~evalcore.io.read_ids`: lines stripped).  Unlike
    :func:`~evalcore.io.load_embeddings`, the vectors are not scanned here:
    the search checks them for NaN/inf as it reads them.
    """
    if ids_path is not None:
        shards = single_shard(spec, ids_path, strict_ids=False)
    else:
        shards = open_shards(spec, strict_ids=False)
    return Embeddings(shards.read_ids().astype(object), shards, os.fspath(spec))  # type: ignore[arg-type]

"""A disk cache of derived results (the evaluation, its summaries), so a restarted dashboard starts fast.

The dashboard computes every number from the per-query table of one evaluation. At scale (14 runs
x 20,000 queries) that evaluation and the bootstrap summaries behind the pages' intervals take
seconds each, and a server restart used to compute them again. They are pure functions of their
inputs, keyed by a content key (hashes of the stored artifacts and every setting that matters,
the same key the in-memory cache uses); here they are also kept on disk under that key **and** a
fingerprint of the code that computed them (:func:`code_fingerprint`: every source file of the
``evalcore`` package and the versions of numpy, pandas, scipy and pyarrow), so a changed engine
never serves an old number.

* Where: ``EVALCORE_CACHE`` when set (``off``, ``0`` or ``none`` turns the cache off), else the
  per-user cache folder (``~/.cache/evalcore/results`` on Linux, see
  :mod:`.locations`). Anything in it may be deleted at any time.
* What: Parquet files (never pickles): numbers as they were, categorical columns as codes with
  their categories (and their order) in the file's metadata, texts (and None among them), so a frame
  reads back equal, dtype for dtype (``tests/test_derived_cache.py``). A frame with another kind of
  column (an object column holding anything but text or None) is simply not kept.
* How: written to a temporary file and renamed (a killed process leaves no half file); a file
  that does not read back is deleted and reported as a miss; the folder is kept under a size
  (:data:`DEFAULT_MAX_BYTES`), least recently used first.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import weakref
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .._columns import strings
from .locations import cache_home

__all__ = ["ENV_CACHE", "DEFAULT_MAX_BYTES", "cache_dir", "code_fingerprint", "load_frame", "store_frame",
           "load_evaluation", "store_evaluation"]

#: Environment variable: the cache folder, or ``off`` / ``0`` / ``none`` for no disk cache.
ENV_CACHE = "EVALCORE_CACHE"
#: Size the cache folder is kept under (bytes); the least recently used files go first.
DEFAULT_MAX_BYTES = 2 * 1024**3
_META = b"evalcore.derived"
_FORMAT = 1


def cache_dir() -> Path | None:
    """The results cache folder (not created), or None when ``EVALCORE_CACHE`` turns it off."""
    env = os.environ.get(ENV_CACHE, "").strip()
    if env.lower() in ("off", "0", "none", "false"):
        return None
    return Path(env).expanduser() if env else cache_home() / "results"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Hash of every ``.py`` file of the ``evalcore`` package (paths and bytes) and of the versions of
    the libraries that compute the numbers: any change of the engine makes every cached result a miss."""
    import pandas
    import pyarrow
    import scipy

    package = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    h.update(f"{np.__version__} {pandas.__version__} {scipy.__version__} {pyarrow.__version__}".encode())
    return h.hexdigest()[:24]


def _path(folder: Path, kind: str, key: str) -> Path:
    name = hashlib.sha256(f"{_FORMAT}\0{code_fingerprint()}\0{kind}\0{key}".encode()).hexdigest()[:40]
    return folder / f"{kind}-{name}.parquet"


# ------------------------------------------------------------------------------------------ frames


def _encode(frame: Any) -> tuple[Any, dict[str, Any]] | None:
    """(arrow table, metadata) of a DataFrame with a default index, or None when a column cannot be kept exactly."""
    import pandas as pd
    import pyarrow as pa

    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 or frame.index.step != 1:
        return None
    if not all(isinstance(c, str) for c in frame.columns) or frame.columns.duplicated().any():
        return None
    arrays, columns = [], []
    for name in frame.columns:
        col = frame[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            cats = list(col.cat.categories)
            if not all(isinstance(c, str) for c in cats):
                return None
            arrays.append(pa.array(col.cat.codes.to_numpy()))
            columns.append({"name": name, "kind": "category", "categories": cats, "ordered": bool(col.cat.ordered)})
        elif col.dtype == object:
            values = col.to_numpy()
            gaps = [v is None for v in values]
            if not all(gap or isinstance(v, str) for v, gap in zip(values, gaps, strict=True)):
                return None
            arrays.append(pa.array(values, type=pa.large_string()))
            columns.append({"name": name, "kind": "text_or_none" if any(gaps) else "text"})
        elif col.dtype.kind in "biuf":
            arrays.append(pa.array(col.to_numpy()))
            columns.append({"name": name, "kind": "number", "dtype": col.dtype.str})
        else:
            return None
    table = pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))])
    return table, {"columns": columns, "n": len(frame)}


def _decode(table: Any, meta: dict[str, Any]) -> Any:
    import pandas as pd

    out: dict[str, Any] = {}
    for i, spec in enumerate(meta["columns"]):
        col = table.column(f"c{i}")
        if spec["kind"] == "category":
            codes = col.to_numpy()
            out[spec["name"]] = pd.Categorical.from_codes(codes, categories=pd.Index(spec["categories"], dtype=object),
                                                          ordered=spec["ordered"])
        elif spec["kind"] == "text":
            out[spec["name"]] = strings(col)
        elif spec["kind"] == "text_or_none":  # (texts and None: a version label left empty)
            values = np.empty(len(col), dtype=object)
            values[:] = col.to_pylist()
            out[spec["name"]] = values
        else:
            out[spec["name"]] = col.to_numpy().astype(np.dtype(spec["dtype"]), copy=False)
    frame = pd.DataFrame(out, columns=[s["name"] for s in meta["columns"]])
    if len(frame) != meta["n"]:
        raise ValueError("row count")
    return frame


def _write(folder: Path, path: Path, table: Any, meta: dict[str, Any], max_bytes: int) -> bool:
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    table = table.replace_schema_metadata({_META: json.dumps(meta).encode("utf-8")})
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".parquet")
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _evict(folder, max_bytes, keep=path)
    return True


def _read(path: Path, columns: Any = None) -> tuple[Any, dict[str, Any]] | None:
    """(the file's table, its metadata), or None; ``columns(meta)``, when given, names the columns to read (all:
    None)."""
    import pyarrow.parquet as pq

    try:  # (one thread: a file of one run's evaluation reads in ~2/3 of the CPU time of pq.read_table's threads, in
        # one chunk per column, which numpy then shares instead of copying: 137 kept runs, 0.33 s of copies gone)
        file = pq.ParquetFile(str(path))
        meta = json.loads((file.schema_arrow.metadata or {})[_META].decode("utf-8"))
        table = file.read(columns=columns(meta) if columns is not None else None, use_threads=False)
        os.utime(path)  # recently used
        return table, meta
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - a damaged or foreign file is a miss, and goes
        path.unlink(missing_ok=True)
        return None


def _evict(folder: Path, max_bytes: int, *, keep: Path) -> None:
    """Delete the least recently used files until the folder holds at most ``max_bytes`` (never ``keep``)."""
    entries = []
    for p in folder.glob("*.parquet"):
        try:
            st = p.stat()
        except FileNotFoundError:
            continue
        entries.append((st.st_mtime, st.st_size, p))
    total = sum(size for _, size, _ in entries)
    for _, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= max_bytes:
            break
        if p != keep:
            p.unlink(missing_ok=True)
            total -= size


def load_frame(kind: str, key: str, *, folder: Path | None = None) -> Any:
    """The DataFrame stored under (``kind``, ``key``) by this code, or None (no cache, a miss, a damaged file)."""
    folder = folder if folder is not None else cache_dir()
    if folder is None:
        return None
    path = _path(folder, kind, key)
    got = _read(path)
    if got is None:
        return None
    try:
        return _decode(*got)
    except Exception:  # noqa: BLE001 - written by another format: a miss
        path.unlink(missing_ok=True)
        return None


def store_frame(kind: str, key: str, frame: Any, *, folder: Path | None = None,
                max_bytes: int = DEFAULT_MAX_BYTES) -> bool:
    """Keep ``frame`` under (``kind``, ``key``); False when there is no cache or the frame cannot be kept
    exactly. Never raises (a cache is optional): a disk or encoding problem returns False."""
    folder = folder if folder is not None else cache_dir()
    if folder is None:
        return False
    try:
        encoded = _encode(frame)
        return encoded is not None and _write(folder, _path(folder, kind, key), *encoded, max_bytes)
    except Exception:  # noqa: BLE001 - a disk or encoding problem: not kept (a cache never breaks a page)
        return False


# ------------------------------------------------------------------------------------------ evaluations


#: Columns of a kept evaluation that runs evaluated against one ground truth with the same settings share (one run's
#: evaluation: its queries x metric@k), read once per process while an evaluation holds them (:func:`load_evaluation`).
_LAYOUT = ("query", "domain", "metric", "k")
#: layout hash -> weak references to those arrays of the evaluation read last with that layout.
_LAYOUTS: dict[str, tuple[weakref.ref, ...]] = {}
_LAYOUTS_KEPT = 64
_LAYOUTS_LOCK = threading.Lock()


def _layout_hash(columns: Any) -> str:
    """SHA-256 of the layout columns (dtype and bytes of each)."""
    h = hashlib.sha256()
    for name in _LAYOUT:
        a = np.ascontiguousarray(getattr(columns, name))
        h.update(f"{name}:{a.dtype.str}:{len(a)}\0".encode())
        h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def _known_layout(digest: str | None) -> dict[str, np.ndarray] | None:
    if digest is None:
        return None
    with _LAYOUTS_LOCK:
        refs = _LAYOUTS.get(digest)
    arrays = [r() for r in refs] if refs is not None else None
    return None if arrays is None or any(a is None for a in arrays) else dict(zip(_LAYOUT, arrays, strict=True))


def _remember_layout(digest: str, arrays: dict[str, np.ndarray]) -> None:
    with _LAYOUTS_LOCK:
        _LAYOUTS.pop(digest, None)
        _LAYOUTS[digest] = tuple(weakref.ref(arrays[n]) for n in _LAYOUT)
        for gone in [d for d, refs in _LAYOUTS.items() if any(r() is None for r in refs)]:
            del _LAYOUTS[gone]
        while len(_LAYOUTS) > _LAYOUTS_KEPT:
            del _LAYOUTS[next(iter(_LAYOUTS))]


def store_evaluation(key: str, ev: Any, warnings: tuple[str, ...] = (), *, folder: Path | None = None,
                     max_bytes: int = DEFAULT_MAX_BYTES) -> bool:
    """Keep an :class:`~evalcore.evaluation.Evaluation` (its coded table, coverage, settings) and the
    warnings its computation gave under ``key``; False when there is no cache or it cannot be kept.

    The file also names the hash of its layout columns (query, domain, metric and k codes: the same for every run
    evaluated against one ground truth with the same settings), so that :func:`load_evaluation` reads them once."""
    import pyarrow as pa

    folder = folder if folder is not None else cache_dir()
    if folder is None:
        return False
    try:
        c = ev.columns
        names = ("run", "query", "domain", "metric", "k", "value")
        meta = {"runs": list(c.runs), "domains": list(c.domains), "metrics": list(c.metrics),
                "dtypes": {n: getattr(c, n).dtype.str for n in names}, "query_ids": [str(q) for q in c.query_ids],
                "coverage": json.loads(json.dumps(ev.coverage_rows, default=_plain)),
                "settings": json.loads(json.dumps(ev.settings, default=_plain)), "warnings": list(warnings),
                "layout": _layout_hash(c)}
        if meta["settings"] != ev.settings or meta["coverage"] != ev.coverage_rows:
            return False  # a tuple, a non-text key, a NaN...: not kept exactly (a tuple would read back as a list)
        table = pa.table({n: getattr(c, n) for n in names})
        return _write(folder, _path(folder, "evaluation", key), table, meta, max_bytes)
    except Exception:  # noqa: BLE001 - a disk or encoding problem: not kept (a cache never breaks a page)
        return False


def load_evaluation(key: str, *, folder: Path | None = None) -> tuple[Any, tuple[str, ...]] | None:
    """(Evaluation, warnings) stored under ``key`` by this code, or None.

    Its layout columns (see :func:`store_evaluation`) are those of an evaluation read before with the same layout,
    while one holds them: the 137 kept checkpoints of a training run read the query, domain, metric and k codes of
    one run and the values of each (half the decoding, a third of the memory: 156 MB instead of 467 MB at 5,000
    queries x 28 metric@k); the arrays are equal, shared and read-only."""
    from ..evaluation import Evaluation
    from ..results import ResultColumns

    folder = folder if folder is not None else cache_dir()
    if folder is None:
        return None
    path = _path(folder, "evaluation", key)
    known: dict[str, np.ndarray] | None = None

    def columns(meta: dict[str, Any]) -> list[str] | None:
        nonlocal known
        known = _known_layout(meta.get("layout"))
        return ["run", "value"] if known is not None else None

    got = _read(path, columns)
    if got is None:
        return None
    table, meta = got
    try:
        dt = meta["dtypes"]
        col = {n: table.column(n).to_numpy().astype(np.dtype(dt[n]), copy=False)
               for n in ("run", "query", "domain", "metric", "k", "value") if known is None or n not in known}
        if known is not None:
            col.update(known)
        elif meta.get("layout") is not None:
            _remember_layout(meta["layout"], col)
        qids = np.empty(len(meta["query_ids"]), dtype=object)
        qids[:] = meta["query_ids"]
        columns = ResultColumns(tuple(meta["runs"]), qids, tuple(meta["domains"]),
                                tuple(meta["metrics"]), col["run"], col["query"], col["domain"], col["metric"],
                                col["k"], col["value"])
        ev = Evaluation(None, None, meta["settings"], columns, meta["coverage"])
    except Exception:  # noqa: BLE001 - written by another format: a miss
        path.unlink(missing_ok=True)
        return None
    return ev, tuple(meta["warnings"])


def _plain(value: Any) -> Any:
    """JSON for numpy scalars and tuples in settings and coverage (anything else: not kept)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value).__name__)

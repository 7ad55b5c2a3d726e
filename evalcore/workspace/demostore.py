"""The built-in demo (:mod:`.demo`) stored as a workspace, built once into a cache folder.

:func:`ensure_demo` builds it on first use under :func:`demo_path` — a folder named by the
seed and a fingerprint of the demo's code and of the storage format, so a changed demo is
built again, never served stale — and :meth:`evalcore.workspace.api.Workspace.demo` opens it
read-only, shared by every session of the server.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..defaults import DEMO_SEED
from .locations import demo_cache_dir, is_workspace
from .store import SCHEMA_VERSION

__all__ = ["ensure_demo", "demo_path", "store_demo_checkpoints"]


def _demo_fingerprint() -> str:
    """Changes whenever the demo's code or the storage format does (so a stale build is never used)."""
    from . import codecs, demo

    h = hashlib.sha256(f"schema {SCHEMA_VERSION}".encode())
    for module in (demo, codecs):
        try:
            h.update(Path(module.__file__).read_bytes())
        except (OSError, TypeError):  # pragma: no cover - frozen installs
            from .. import __version__

            h.update(__version__.encode())
    return h.hexdigest()[:12]


def demo_path(seed: int = DEMO_SEED, *, cache_dir: str | os.PathLike | None = None) -> Path:
    """The folder of the demo workspace of ``seed`` (built by :func:`ensure_demo`)."""
    base = Path(cache_dir) if cache_dir is not None else demo_cache_dir()
    return base / f"seed{int(seed)}-{_demo_fingerprint()}"


def _add_demo_model(ws: Any, d: Any, name: str, vectors: Any, run: Any, **info: Any) -> None:
    """An embedding run of the demo, with the demo's own ranking kept as its ranking (100 deep, all
    queries: what the default settings evaluate), so the stored demo gives the demo's numbers exactly."""
    from .demo import DEMO_LABEL, RUN_DEPTH
    from .rankings import ranking_key

    ws.add_embedding_run(name, vectors, d.item_ids, tags=("demo",), source_name=DEMO_LABEL, **info)
    rec = ws.run_record(name)
    ws.store_derived(ranking_key(rec, RUN_DEPTH, d.qrels), run, inputs=rec.artifacts, warnings=())


def _fill_demo(ws: Any, seed: int) -> None:
    from .demo import DEMO_LABEL, DEMO_RUN_NAMES, cached_demo

    d = cached_demo(seed)
    ws.set_ground_truth(d.qrels, name=DEMO_LABEL)
    ws.set_domains(d.domains, name="demo domains")
    ws.set_metadata(d.metadata[["doc_id", "title", "text"]], name="demo metadata")
    for name in DEMO_RUN_NAMES:
        if name in d.embeddings:
            _add_demo_model(ws, d, name, d.embeddings[name], d.runs[name], model=name)
        else:
            ws.add_run(name, d.runs[name], model=name, tags=("demo",), source_name=DEMO_LABEL)
    ws.set_settings()


def store_demo_checkpoints(ws: Any, seed: int = DEMO_SEED) -> list[str]:
    """Add the demo's training checkpoints (:mod:`.demo_series`) to a writable copy of the demo.

    ``strong-128d`` becomes the last version (``epoch 25``) of its model; each checkpoint is an
    embedding run with its model, version and step, and the checkpoint's own ranking, so the
    numbers are those of :func:`~.demo_series.demo_run`. Checkpoints already there are left as
    they are. Returns the names added.
    """
    from .demo import cached_demo
    from .demo_series import (
        CHECKPOINT_EPOCHS,
        FINAL_EPOCH,
        SERIES_MODEL,
        checkpoint_name,
        demo_series,
    )

    d, series = cached_demo(seed), demo_series(seed)
    have = set(ws.run_names())
    if SERIES_MODEL in have:
        ws.set_run_info(SERIES_MODEL, model=SERIES_MODEL, version=f"epoch {FINAL_EPOCH}", step=FINAL_EPOCH)
    added = []
    for epoch in CHECKPOINT_EPOCHS:
        name = checkpoint_name(epoch)
        if name not in have:
            _add_demo_model(ws, d, name, series.embeddings[name], series.runs[name], model=SERIES_MODEL,
                            version=f"epoch {epoch}", step=epoch)
            added.append(name)
    return added


def ensure_demo(seed: int, *, cache_dir: str | os.PathLike | None, open_workspace: Callable[[Path], Any]) -> Path:
    """The folder of the demo workspace of ``seed``, built first when missing; returns its path.

    Built on first use into :func:`demo_path` (a temporary sibling folder renamed into place,
    so concurrent first uses are safe and a half-built demo is never opened) with
    ``open_workspace(path)`` (:meth:`evalcore.workspace.api.Workspace.open`). With the default settings it evaluates to exactly the demo's numbers: its
    embedding models' rankings are stored as the cached rankings of their embedding runs.
    """
    path = demo_path(seed, cache_dir=cache_dir)
    if not is_workspace(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.building-{uuid.uuid4().hex}")
        try:
            with open_workspace(tmp) as ws:
                _fill_demo(ws, int(seed))
            try:
                os.rename(tmp, path)
            except OSError:
                if not is_workspace(path):  # not a lost race: a real error
                    raise
        finally:
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(tmp)
    return path

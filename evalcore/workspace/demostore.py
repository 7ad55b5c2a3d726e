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

from .locations import demo_cache_dir, is_workspace
from .store import SCHEMA_VERSION

__all__ = ["ensure_demo", "demo_path"]


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


def demo_path(seed: int = 0, *, cache_dir: str | os.PathLike | None = None) -> Path:
    """The folder of the demo workspace of ``seed`` (built by :func:`ensure_demo`)."""
    base = Path(cache_dir) if cache_dir is not None else demo_cache_dir()
    return base / f"seed{int(seed)}-{_demo_fingerprint()}"


def _fill_demo(ws: Any, seed: int) -> None:
    from .demo import DEMO_LABEL, DEMO_RUN_NAMES, RUN_DEPTH, cached_demo
    from .resolve import ranking_key

    d = cached_demo(seed)
    ws.set_ground_truth(d.qrels, name=DEMO_LABEL)
    ws.set_domains(d.domains, name="demo domains")
    ws.set_metadata(d.metadata[["doc_id", "title", "text"]], name="demo metadata")
    for name in DEMO_RUN_NAMES:
        run = d.runs[name]
        if name in d.embeddings:
            ws.add_embedding_run(name, d.embeddings[name], d.item_ids, model=name, tags=("demo",),
                                 source_name=DEMO_LABEL)
            # the demo's own ranking (100 deep, all queries) is what the default settings evaluate
            rec = ws.run_record(name)
            ws.store_derived(ranking_key(rec, RUN_DEPTH, d.qrels), run, inputs=rec.artifacts, warnings=())
        else:
            ws.add_run(name, run, model=name, tags=("demo",), source_name=DEMO_LABEL)
    ws.set_settings()


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

"""The ground-truth aspect a stored run is evaluated against (:func:`run_aspect`).

On its own (it needs no other module of the workspace): the evaluation (:mod:`.resolve`) and the checks
of the stored runs against a new ground truth (:mod:`.idchecks`) resolve it alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["run_aspect"]


def run_aspect(rec: Any, aspects: Sequence[str], default: str | None) -> str | None:
    """The aspect a run is evaluated against: its own (exact, case-insensitive or a unique part,
    :func:`evalcore.io.lists.pick_aspect`), else the first; a ground truth without aspects ignores it."""
    if not aspects or not rec.aspect:
        return default
    from ..io.lists import pick_aspect

    return pick_aspect(list(aspects), rec.aspect, label=f"run {rec.name!r}")

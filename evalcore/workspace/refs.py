"""References from the dashboard's :class:`~.model.Snapshot` into a persistent workspace.

A snapshot built from a stored workspace (:func:`~.stored.snapshot_of`) holds no bytes: each
ground truth and run carries a :class:`StoreRef` (the open workspace and the catalogue
record), each side file is a :class:`StoredFile` (its artifact's SHA-256). The pipeline
(:mod:`.pipeline`) reads them through :mod:`.stored`: artifacts verified against their hash,
parsed once per process, embeddings memory-mapped.

Their keys are content keys (the artifacts' SHA-256 and the options that matter, never a
name or a path), so every cache of a derived object is shared by every session and every
workspace holding the same data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["StoreRef", "StoredFile"]


@dataclass(frozen=True, eq=False)
class StoreRef:
    """A ground truth or run kept in a workspace.

    Attributes
    ----------
    core : WorkspaceCore
        The open workspace (thread-safe; shared by the sessions that show it).
    record : RunRecord or GroundTruthRecord
        Its catalogue row when the snapshot was built.
    """

    core: Any = field(repr=False)
    record: Any

    @property
    def key(self) -> str:
        """Content key: the record's artifacts and options (not its name)."""
        from .model import stable_key

        rec = self.record
        if hasattr(rec, "parts"):  # a ground truth: its parts
            return stable_key("stored-gt", rec.kind, [(p.aspect, p.artifact, p.ids_artifact) for p in rec.parts])
        return stable_key("stored-run", rec.content_key())


@dataclass(frozen=True, eq=False)
class StoredFile:
    """A side file kept in a workspace (``role`` ``domains``, ``metadata`` or ``queries``).

    ``sha256`` is the SHA-256 of the stored (parsed) artifact: the key of what is read from it.
    """

    name: str
    sha256: str
    role: str
    core: Any = field(default=None, repr=False)

"""Settings, the dashboard's saved state, side files (domains, metadata, query texts) and the earlier
ground truths of a workspace.

A base class of :class:`evalcore.workspace.api.Workspace` (split out to keep each module
short). Settings are the :class:`~.model.Settings` fields, one catalogue row each (JSON);
:meth:`SettingsAndSideFiles.ui_state` holds free JSON values (selections) that do not
bump :attr:`~.core.WorkspaceCore.generation`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from ..errors import OptionError
from . import codecs
from .core import WorkspaceCore
from .inputs import is_source, source_bytes
from .model import Settings
from .sidechecks import warn_side_ids, warn_stored_side_ids
from .store import NoChange, dumps, loads, now

__all__ = ["SettingsAndSideFiles", "SETTING_FIELDS", "SIDE_ROLES"]

#: Names of the stored settings (the fields of :class:`~.model.Settings`).
SETTING_FIELDS = tuple(f.name for f in fields(Settings))
_SETTING_FIELDS = SETTING_FIELDS
#: The side files a workspace may hold (one of each).
SIDE_ROLES = ("domains", "metadata", "queries")


def _settings_of(rows: Iterable[tuple[str, str]]) -> Settings:
    """Settings from stored ``(key, value)`` rows (other keys, such as ``ui:...``, ignored)."""
    stored = {k: loads(v) for k, v in rows if k in _SETTING_FIELDS}
    return Settings(**{k: tuple(v) if isinstance(v, list) else v for k, v in stored.items()})


class SettingsAndSideFiles(WorkspaceCore):
    """Settings, dashboard state and side files (see the module docstring)."""

    # ------------------------------------------------------------------ settings and state
    def settings(self) -> Settings:
        """The evaluation settings (defaults of :class:`~.model.Settings` where none is stored)."""
        return _settings_of(self.catalogue.read(lambda c: c.execute("SELECT key, value FROM settings").fetchall()))

    def has_settings(self) -> bool:
        """Whether settings were ever stored (else :meth:`settings` gives the defaults)."""
        marks = ",".join("?" * len(_SETTING_FIELDS))
        return self.catalogue.read(lambda c: c.execute(f"SELECT 1 FROM settings WHERE key IN ({marks}) LIMIT 1",
                                                       _SETTING_FIELDS).fetchone()) is not None

    def set_settings(self, settings: Settings | None = None, **changes: Any) -> Settings:
        """Store settings (a whole :class:`~.model.Settings` and/or single fields); returns them validated.

        Single fields are applied to the stored settings read in the writing transaction, and
        only the keys whose value changes are written: a setting another process changed
        meanwhile is kept unless it is given here (a whole ``settings`` gives every field).
        """
        unknown = sorted(set(changes) - set(_SETTING_FIELDS))
        if unknown:
            raise OptionError(f"unknown settings {unknown}; settings are {list(_SETTING_FIELDS)}")

        def record(conn: sqlite3.Connection, stored: list) -> Settings:
            rows = dict(conn.execute("SELECT key, value FROM settings").fetchall())
            new = replace(settings or _settings_of(rows.items()), **changes).validated()
            values = {k: dumps(getattr(new, k)) for k in _SETTING_FIELDS}
            write = [(k, v) for k, v in values.items() if rows.get(k) != v]
            if not write:
                raise NoChange(new)
            conn.executemany("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", write)
            return new

        return self.commit(list, record)

    def ui_state(self) -> dict[str, Any]:
        """Free JSON values the dashboard keeps (selections...); changing them does not bump :attr:`generation`."""
        rows = self.catalogue.read(lambda c: c.execute("SELECT key, value FROM settings WHERE key LIKE 'ui:%'")
                                   .fetchall())
        return {k[3:]: loads(v) for k, v in rows}

    def set_ui_state(self, **values: Any) -> None:
        """Merge values into :meth:`ui_state` (a value None removes its key)."""
        def record(conn: sqlite3.Connection, stored: list) -> None:
            for k, v in values.items():
                if v is None:
                    conn.execute("DELETE FROM settings WHERE key = ?", (f"ui:{k}",))
                else:
                    conn.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (f"ui:{k}", dumps(v)))

        self.commit(list, record, bump=False)

    # ------------------------------------------------------------------ side files
    # Each warns when the ground truth is there and the file's ids are not its ids (it names none of its queries or
    # documents, or leaves some without): :mod:`.sidechecks`. The file is stored all the same.
    def set_domains(self, src: Any, *, name: str | None = None) -> None:
        """Store the query -> domain map: a mapping, or a file :func:`evalcore.load_domains` reads; warns when its
        query ids are not the ground truth's (:func:`~.sidechecks.side_ids_text`)."""
        from ..io import load_domains

        if isinstance(src, Mapping):
            mapping, label, sha = {str(k): str(v) for k, v in src.items()}, name, None
        else:
            data, shown, label, sha = source_bytes(src, name)
            mapping = {str(k): str(v) for k, v in load_domains(data, label=shown).items()}
        self._set_side("domains", label, sha, lambda p: codecs.write_domains(mapping, p))
        warn_side_ids(self, "domains", list(mapping), label=label)

    def set_metadata(self, src: Any, *, name: str | None = None) -> None:
        """Store document metadata: a frame / mapping, or a file :func:`evalcore.io.load_doc_metadata` reads; warns
        when its document ids are not the ground truth's judged documents (:func:`~.sidechecks.side_ids_text`)."""
        from .pipeline import normalize_metadata

        if is_source(src):
            from ..io import load_doc_metadata
            data, shown, label, sha = source_bytes(src, name)
            frame = normalize_metadata(load_doc_metadata(data, label=shown), source=shown)
        else:
            frame, label, sha = normalize_metadata(src), name, None
        self._set_side("metadata", label, sha, lambda p: codecs.write_metadata(frame, p))
        warn_side_ids(self, "metadata", frame["doc_id"].to_numpy(dtype=object), label=label)

    def set_query_texts(self, src: Any, *, name: str | None = None) -> None:
        """Store the query texts (query id -> text): a mapping, or a file :func:`evalcore.io.load_queries` reads;
        warns when its query ids are not the ground truth's (:func:`~.sidechecks.side_ids_text`)."""
        if isinstance(src, Mapping):
            texts, label, sha = {str(k): str(v) for k, v in src.items()}, name, None
        else:
            from ..io import load_queries

            data, shown, label, sha = source_bytes(src, name)
            texts = load_queries(data, label=shown)
        self._set_side("queries", label, sha, lambda p: codecs.write_queries(texts, p))
        warn_side_ids(self, "queries", list(texts), label=label)

    def _set_side(self, role: str, name: str | None, sha: str | None, write: Callable[[Path], None]) -> None:
        def record(conn: sqlite3.Connection, stored: list) -> None:
            conn.execute("INSERT OR REPLACE INTO side_files (role, name, source_sha256, artifact, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", (role, name, sha, stored[0].sha256, now()))

        self.commit(lambda: [self.put("side", write)], record)

    def remove_side_file(self, role: str) -> None:
        """Forget the ``"domains"``, ``"metadata"`` or ``"queries"`` file."""
        if role not in SIDE_ROLES:
            raise OptionError(f"unknown side file {role!r}; choose one of {list(SIDE_ROLES)}")
        self.commit(list, lambda conn, stored: conn.execute("DELETE FROM side_files WHERE role = ?", (role,)))

    def side_files(self) -> dict[str, dict]:
        """Role -> {name, source_sha256, artifact} of the stored side files."""
        rows = self.catalogue.read(lambda c: c.execute(
            "SELECT role, name, source_sha256, artifact FROM side_files").fetchall())
        return {r[0]: {"name": r[1], "source_sha256": r[2], "artifact": r[3]} for r in rows}

    # ------------------------------------------------------------------ earlier ground truths
    def ground_truths(self) -> list[dict[str, Any]]:
        """Every ground truth the workspace has held, newest first (setting another keeps the previous one).

        Each: ``id``, ``name``, ``kind``, ``source_name``, ``created_at``, ``active`` and the first part's
        ``n_queries``; :meth:`use_ground_truth` makes one active again.
        """
        rows = self.catalogue.read(lambda c: c.execute(
            "SELECT g.id, g.name, g.kind, g.source_name, g.created_at, g.active, p.n_queries FROM ground_truths g "
            "LEFT JOIN ground_truth_parts p ON p.gt_id = g.id AND p.position = 0 ORDER BY g.id DESC").fetchall())
        keys = ("id", "name", "kind", "source_name", "created_at", "active", "n_queries")
        return [dict(zip(keys, (*r[:5], bool(r[5]), r[6]), strict=True)) for r in rows]

    def use_ground_truth(self, gt_id: int) -> None:
        """Make an earlier ground truth (an ``id`` of :meth:`ground_truths`) the active one again; the runs are
        evaluated against it from then on (evaluations recorded against another one read as stale). As
        :meth:`set_ground_truth`, a warning names the stored runs answering none of its queries."""
        from .inputs import check_id

        gt_id = check_id(gt_id, "a ground truth")

        def record(conn: sqlite3.Connection, stored: list) -> bool:
            row = conn.execute("SELECT active FROM ground_truths WHERE id = ?", (gt_id,)).fetchone()
            if row is None:
                have = [r[0] for r in conn.execute("SELECT id FROM ground_truths ORDER BY id")]
                raise OptionError(f"no ground truth {gt_id!r} in this workspace; its ground truths are {have}")
            if row[0]:
                raise NoChange()
            conn.execute("UPDATE ground_truths SET active = 0 WHERE active = 1")
            conn.execute("UPDATE ground_truths SET active = 1 WHERE id = ?", (gt_id,))
            return True

        if self.commit(lambda: [], record):
            from .idchecks import warn_runs_answering_none

            warn_runs_answering_none(self)  # type: ignore[arg-type]  # (self is a Workspace)
            warn_stored_side_ids(self)

    def _settings_with(self, overrides: Mapping[str, Any]) -> Settings:
        changes = {k: v for k, v in overrides.items() if v is not None}
        unknown = sorted(set(changes) - set(_SETTING_FIELDS))
        if unknown:
            raise OptionError(f"unknown settings {unknown}; settings are {list(_SETTING_FIELDS)}")
        for key in ("k", "metrics"):
            if key in changes:
                v = changes[key]
                changes[key] = (v,) if isinstance(v, (int, str)) else tuple(v)
        return replace(self.settings(), **changes).validated()

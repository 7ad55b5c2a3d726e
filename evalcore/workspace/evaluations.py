"""Stored evaluations: the per-query table as a Parquet artifact, coverage and settings in the catalogue.

An evaluation is recorded once per ``key`` (the content key of everything it depends on,
:attr:`evalcore.workspace.resolve.Resolved.key`; without one, the hash of its table and
settings), so evaluating the same workspace twice stores one row.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

from .._lazy import pd
from ..errors import OptionError
from ..evaluate import Evaluation
from . import codecs
from .core import WorkspaceCore
from .store import dumps, loads, now

__all__ = ["record_evaluation", "list_evaluations", "load_evaluation", "EVALUATION_COLUMNS"]

#: Columns of :func:`list_evaluations`.
EVALUATION_COLUMNS = ["id", "created_at", "ground_truth", "runs", "metrics", "k", "errors"]


def _coverage_records(coverage: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
            for row in coverage.to_dict(orient="records")]


def record_evaluation(ws: WorkspaceCore, ev: Evaluation, *, key: str | None = None,
                      ground_truth_id: int | None = None) -> int:
    """Store ``ev`` (see the module docstring); returns its id (the existing one for a known key)."""
    settings = dumps(ev.settings)
    coverage = dumps({"columns": [str(c) for c in ev.coverage.columns], "rows": _coverage_records(ev.coverage)})
    if key is None:
        h = hashlib.sha256(settings.encode("utf-8"))
        h.update(pd.util.hash_pandas_object(ev.table, index=False).to_numpy().tobytes())
        key = "table:" + h.hexdigest()
    found = ws.catalogue.read(lambda c: c.execute("SELECT id FROM evaluations WHERE key = ?", (key,)).fetchone())
    if found is not None:
        return int(found[0])
    if ground_truth_id is None:
        gt = ws.ground_truth_record()
        ground_truth_id = None if gt is None else gt.id

    def record(conn: sqlite3.Connection, stored: list) -> int:
        row = conn.execute("SELECT id FROM evaluations WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return int(row[0])
        cur = conn.execute("INSERT INTO evaluations (key, created_at, ground_truth_id, settings, runs, table_artifact, "
                           "coverage) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (key, now(), ground_truth_id, settings, dumps(list(ev.runs)), stored[0].sha256, coverage))
        return int(cur.lastrowid)

    return ws.commit(lambda: [ws.put("results", lambda p: codecs.write_results(ev.table, p))], record, bump=False)


def list_evaluations(ws: WorkspaceCore) -> pd.DataFrame:
    """One row per stored evaluation, oldest first (:data:`EVALUATION_COLUMNS`)."""
    rows = ws.catalogue.read(lambda c: c.execute(
        "SELECT e.id, e.created_at, g.name, e.runs, e.settings FROM evaluations e "
        "LEFT JOIN ground_truths g ON g.id = e.ground_truth_id ORDER BY e.id").fetchall())
    out = []
    for eid, created, gt, runs, settings in rows:
        s = loads(settings, {})
        out.append({"id": eid, "created_at": created, "ground_truth": gt, "runs": tuple(loads(runs, [])),
                    "metrics": tuple(dict.fromkeys(str(m).split("@")[0] for m in s.get("measures", []))),
                    "k": tuple(s.get("k", ())), "errors": s.get("errors", {})})
    frame = pd.DataFrame(out, columns=EVALUATION_COLUMNS)
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True, format="ISO8601")
    return frame


def load_evaluation(ws: WorkspaceCore, evaluation_id: int | None = None) -> Evaluation:
    """A stored evaluation (default: the newest) with its table read back from Parquet."""
    def read(c: sqlite3.Connection) -> Any:
        if evaluation_id is None:
            return c.execute("SELECT id, settings, table_artifact, coverage FROM evaluations "
                             "ORDER BY id DESC LIMIT 1").fetchone()
        return c.execute("SELECT id, settings, table_artifact, coverage FROM evaluations WHERE id = ?",
                         (int(evaluation_id),)).fetchone()

    row = ws.catalogue.read(read)
    if row is None:
        raise OptionError("no evaluation stored" if evaluation_id is None else f"no evaluation with id {evaluation_id}")
    eid, settings, artifact, coverage = row
    table = ws.objects.load(artifact, "parquet", what=f"evaluation {eid}", parse=codecs.read_results, kind="results")
    cov = loads(coverage, {})
    return Evaluation(table.copy(), pd.DataFrame(cov.get("rows", []), columns=cov.get("columns")),
                      loads(settings, {}))

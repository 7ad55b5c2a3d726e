"""Stored evaluations: the per-query table as a Parquet artifact, coverage and settings in the catalogue.

An evaluation is recorded once per ``key`` (the content key of everything it depends on,
:attr:`evalcore.workspace.resolve.Resolved.key`; without one, the hash of its table and
settings), so evaluating the same workspace twice stores one row.

With it, a fingerprint of each of its runs as the workspace held it (stored artifacts and
options; a fusion's inputs too), so that an evaluation read back after a run was re-recorded,
removed, or the ground truth replaced says so (:func:`load_evaluation`, :func:`list_evaluations`'s
``stale``) instead of presenting old numbers as those of the current runs.
"""

from __future__ import annotations

import hashlib
import sqlite3
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .._lazy import pd
from ..errors import OptionError, warn
from ..evaluate import Evaluation
from . import codecs
from .core import RunRecord, WorkspaceCore, run_records_in
from .store import dumps, loads, now

__all__ = ["record_evaluation", "list_evaluations", "load_evaluation", "mark_inputs", "inputs_of", "fingerprints",
           "Inputs", "EVALUATION_COLUMNS"]

#: Columns of :func:`list_evaluations`.
EVALUATION_COLUMNS = ["id", "created_at", "ground_truth", "runs", "metrics", "k", "errors", "stale"]
_CONTENTS = "_run_contents"  # key of the runs' fingerprints in the stored settings (not in Evaluation.settings)


@dataclass(frozen=True)
class Inputs:
    """What an evaluation was computed from: each run's fingerprint (:func:`fingerprints`) and the
    ground truth's id, as read when its inputs were resolved."""

    runs: dict[str, str]
    ground_truth_id: int | None


#: Evaluation -> the inputs it was computed from (kept as long as the evaluation lives).
_INPUTS: weakref.WeakKeyDictionary[Evaluation, Inputs] = weakref.WeakKeyDictionary()


def fingerprints(records: Iterable[RunRecord]) -> dict[str, str]:
    """Per run, a digest of what it is made of (a fusion: with its inputs' digests)."""
    by_name = {r.name: r for r in records}
    out: dict[str, str] = {}

    def of(name: str, seen: tuple[str, ...] = ()) -> str:
        if name not in out:
            r = by_name[name]
            parts = [r.kind, r.artifact, r.ids_artifact, r.query_artifact, r.query_ids_artifact, dumps(r.options)]
            parts += [of(n, (*seen, name)) if n in by_name and n not in seen else "-"
                      for n in r.options.get("inputs", ())]
            out[name] = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:16]
        return out[name]

    for name in by_name:
        of(name)
    return out


def mark_inputs(ev: Evaluation, *, records: Iterable[RunRecord], ground_truth_id: int | None) -> Evaluation:
    """Remember that ``ev`` was computed from these run records and this ground truth (the snapshot
    its inputs were read from), so :func:`record_evaluation` stores them, not the workspace as it is
    when recording; returns ``ev``."""
    _INPUTS[ev] = Inputs(fingerprints(records), None if ground_truth_id is None else int(ground_truth_id))
    return ev


def inputs_of(ev: Evaluation) -> Inputs | None:
    """The inputs :func:`mark_inputs` remembered for ``ev``, or None."""
    return _INPUTS.get(ev)


def _fingerprints(ws: WorkspaceCore) -> dict[str, str]:
    """Per run of the workspace as it is now (see :func:`fingerprints`)."""
    return fingerprints(ws.run_records())


def _stale(stored: dict[str, str], ground_truth_id: int | None, current: dict[str, str],
           active_gt: int | None) -> dict[str, str]:
    """What changed since an evaluation was recorded (``current``: :func:`_fingerprints` now; ``active_gt``:
    the active ground truth's id): ``{run: "re-recorded" | "removed"}``, and ``{"(ground truth)":
    "replaced"}`` when the active ground truth is another one."""
    out = {name: ("removed" if name not in current else "re-recorded")
           for name, fp in stored.items() if current.get(name) != fp}
    if ground_truth_id is not None and active_gt != ground_truth_id:
        out["(ground truth)"] = "replaced"
    return out


def _now(ws: WorkspaceCore) -> tuple[dict[str, str], int | None]:
    gt = ws.ground_truth_record()
    return _fingerprints(ws), None if gt is None else gt.id


def _coverage_records(coverage: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
            for row in coverage.to_dict(orient="records")]


def record_evaluation(ws: WorkspaceCore, ev: Evaluation, *, key: str | None = None,
                      ground_truth_id: int | None = None) -> int:
    """Store ``ev`` (see the module docstring); returns its id (the existing one for a known key).

    The runs' fingerprints and (when ``ground_truth_id`` is not given) the ground truth are those
    the evaluation was computed from when it remembers them (:func:`mark_inputs`: what
    :meth:`~.api.Workspace.evaluate` returns), so an evaluation of inputs changed since is
    recorded as stale; otherwise (an evaluation computed elsewhere, e.g. from files) those of
    the workspace when recording, read in the recording transaction.
    """
    inputs = inputs_of(ev)
    settings = dumps(ev.settings)
    coverage = dumps({"columns": [str(c) for c in ev.coverage.columns], "rows": _coverage_records(ev.coverage)})
    if key is None:
        h = hashlib.sha256(settings.encode("utf-8"))
        h.update(pd.util.hash_pandas_object(ev.table, index=False).to_numpy().tobytes())
        key = "table:" + h.hexdigest()
    found = ws.catalogue.read(lambda c: c.execute("SELECT id FROM evaluations WHERE key = ?", (key,)).fetchone())
    if found is not None:
        return int(found[0])

    def record(conn: sqlite3.Connection, stored: list) -> int:
        row = conn.execute("SELECT id FROM evaluations WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return int(row[0])
        if inputs is not None:
            prints, gt_id = inputs.runs, inputs.ground_truth_id
        else:
            prints = fingerprints(run_records_in(conn))
            active = conn.execute("SELECT id FROM ground_truths WHERE active = 1").fetchone()
            gt_id = None if active is None else int(active[0])
        stored_settings = dumps({**ev.settings, _CONTENTS: {r: prints[r] for r in ev.runs if r in prints}})
        cur = conn.execute("INSERT INTO evaluations (key, created_at, ground_truth_id, settings, runs, table_artifact, "
                           "coverage) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (key, now(), gt_id if ground_truth_id is None else ground_truth_id, stored_settings,
                            dumps(list(ev.runs)), stored[0].sha256, coverage))
        return int(cur.lastrowid)

    return ws.commit(lambda: [ws.put("results", lambda p: codecs.write_results(ev.table, p))], record, bump=False)


def list_evaluations(ws: WorkspaceCore) -> pd.DataFrame:
    """One row per stored evaluation, oldest first (:data:`EVALUATION_COLUMNS`)."""
    rows = ws.catalogue.read(lambda c: c.execute(
        "SELECT e.id, e.created_at, g.name, e.runs, e.settings, e.ground_truth_id FROM evaluations e "
        "LEFT JOIN ground_truths g ON g.id = e.ground_truth_id ORDER BY e.id").fetchall())
    out = []
    current, active_gt = _now(ws) if rows else ({}, None)
    for eid, created, gt, runs, settings, gt_id in rows:
        s = loads(settings, {})
        out.append({"id": eid, "created_at": created, "ground_truth": gt, "runs": tuple(loads(runs, [])),
                    "metrics": tuple(dict.fromkeys(str(m).split("@")[0] for m in s.get("measures", []))),
                    "k": tuple(s.get("k", ())), "errors": s.get("errors", {}),
                    "stale": _stale(s.get(_CONTENTS, {}), gt_id, current, active_gt)})
    frame = pd.DataFrame(out, columns=EVALUATION_COLUMNS)
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True, format="ISO8601")
    return frame


def load_evaluation(ws: WorkspaceCore, evaluation_id: int | None = None) -> Evaluation:
    """A stored evaluation (default: the newest) with its table read back from Parquet.

    When a run it evaluated was re-recorded or removed since, or the ground truth replaced, its
    ``settings["stale"]`` says which (``{run: "re-recorded" | "removed", "(ground truth)":
    "replaced"}``) and a warning names them: the numbers are those of the runs as they were.
    """
    from .inputs import check_id

    if evaluation_id is not None:
        evaluation_id = check_id(evaluation_id, "an evaluation")

    def read(c: sqlite3.Connection) -> Any:
        cols = "id, settings, table_artifact, coverage, ground_truth_id"
        if evaluation_id is None:
            return c.execute(f"SELECT {cols} FROM evaluations ORDER BY id DESC LIMIT 1").fetchone()
        return c.execute(f"SELECT {cols} FROM evaluations WHERE id = ?", (evaluation_id,)).fetchone()

    row = ws.catalogue.read(read)
    if row is None:
        raise OptionError("no evaluation stored" if evaluation_id is None else f"no evaluation with id {evaluation_id}")
    eid, settings, artifact, coverage, gt_id = row
    table = ws.objects.load(artifact, "parquet", what=f"evaluation {eid}", parse=codecs.read_results, kind="results")
    cov = loads(coverage, {})
    s = loads(settings, {})
    stale = _stale(s.pop(_CONTENTS, {}), gt_id, *_now(ws))
    if stale:
        s["stale"] = stale
        warn(f"evaluation {eid} was computed before these changed: "
             + ", ".join(f"{name} ({what})" for name, what in stale.items())
             + "; its numbers are those of the runs as they were (evaluate again for the current ones)")
    return Evaluation(table.copy(), pd.DataFrame(cov.get("rows", []), columns=cov.get("columns")), s)

"""Checks of the ids a workspace is asked to store, made before anything is written.

* An id holding a control character (a tab, a line break, NUL... — C0 and C1 controls and DEL)
  or a Unicode line / paragraph separator is refused, whatever form it came in (arrays, engine
  objects, files): it would break the TREC, CSV and ids files written from the workspace later.
  :class:`~evalcore.errors.InputFormatError` (the readers' and writers' refusal of such ids, in their
  words: :func:`evalcore.io.source.broken_id_text`) names the id (its ``repr``) and its row, counted
  from 0 as in the arrays given (a file is refused by its reader first, naming its line or row):
  :func:`check_embedding_ids` (a vector's row), :func:`check_run_ids` and :func:`check_qrels_ids`
  (the first row of the run or judgments holding it).
* :func:`check_answers_some`: a run none of whose query ids is a query of the active ground truth
  (document ids passed as query ids, integers against ``"q1"``...) is refused with
  :class:`~evalcore.errors.MissingIdsError`, in the words of
  :func:`evalcore.embedding_runs.embedding_run`'s refusal. A run answering only some of them is
  stored: its evaluation scores the others 0 and says so, as the command line's does.
* :func:`warn_runs_answering_none`: after the active ground truth changed (another one set, or an
  earlier one brought back), the stored runs none of whose query ids is one of its queries, named in
  one warning (:func:`runs_answering_none`). Not an error: changing the ground truth is legitimate and
  the runs stay stored for the ground truth they answer; evaluated against this one they would count 0
  (ranked and fused runs) or be left out (embedding runs).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..data import Qrels, Run
from ..errors import EvalcoreError, InputFormatError, MissingIdsError, warn
from ..io.embeddings import Embeddings
from ..io.source import broken_id_text, first_broken_id

__all__ = ["check_embedding_ids", "check_run_ids", "check_qrels_ids", "check_answers_some", "broken_id_error",
           "answers_some", "runs_answering_none", "warn_runs_answering_none", "ANSWERING_NONE_PREFIX", "NAMED_RUNS"]


def broken_id_error(owner: str, what: str, value: Any, row: int, file: str | None = None) -> InputFormatError:
    """The error refusing id ``value`` at ``row`` (see the module docstring); ``owner`` names whose it is."""
    return InputFormatError(f"{owner}: {broken_id_text(what, value, where=f' (row {row}, counted from 0)')}", file=file)


def check_embedding_ids(emb: Embeddings, *, owner: str, what: str, file: str | None = None) -> None:
    """Refuse vectors whose id (one per row) holds a control character (see the module docstring)."""
    row = first_broken_id(emb.ids)
    if row is not None:
        raise broken_id_error(owner, what, emb.ids[row], row, file)


def _check_coded(ids: np.ndarray, codes: np.ndarray, per_row: np.ndarray, *, owner: str, what: str,
                 doc_what: str, file: str | None) -> None:
    bad = first_broken_id(ids)
    if bad is not None:
        raise broken_id_error(owner, what, ids[bad], int(np.argmax(np.asarray(codes) == bad)), file)
    row = first_broken_id(per_row)
    if row is not None:
        raise broken_id_error(owner, doc_what, per_row[row], row, file)


def check_run_ids(run: Run, *, owner: str, file: str | None = None) -> None:
    """Refuse a run whose query or document id holds a control character (see the module docstring)."""
    _check_coded(run.query_ids, run.q, run.doc_ids, owner=owner, what="query id", doc_what="document id", file=file)


def check_qrels_ids(qrels: Qrels, *, owner: str, file: str | None = None) -> None:
    """Refuse judgments whose query or document id holds a control character (see the module docstring)."""
    _check_coded(qrels.query_ids, qrels.q, qrels.doc_ids, owner=owner, what="query id", doc_what="document id",
                 file=file)


def _first(ids: Iterable[Any], n: int = 5) -> list[str]:
    out: list[str] = []
    for x in ids:
        out.append(str(x))
        if len(out) >= n:
            break
    return out


def answers_some(ids: Any, universe: Any) -> bool:
    """Whether one of the query ids ``ids`` is among the ground truth's queries ``universe`` (True when the
    ground truth has none: nothing to answer). Ids compare as text (an integer id 7 is the query ``"7"``)."""
    have = {str(x) for x in np.asarray(universe, dtype=object).tolist()}
    return not have or any(str(x) in have for x in np.asarray(ids, dtype=object).tolist())


def check_answers_some(name: str, ids: np.ndarray, universe: np.ndarray, *, ground_truth: str,
                       items: bool = False) -> None:
    """Refuse run ``name`` when none of its query ids ``ids`` is among the ground truth's queries ``universe``.

    ``items``: an item-to-item embedding run, whose queries are the ground truth's queries found
    among its items ``ids``. Ids compare as text (an integer id 7 is the query ``"7"``).
    """
    if answers_some(ids, universe):
        return
    known = np.asarray(universe, dtype=object).tolist()
    values = np.asarray(ids, dtype=object).tolist()
    what = "item ids" if items else "query ids"
    how = ("; an item-to-item run ranks the ground truth's queries found among its items" if items else "")
    raise MissingIdsError(
        f"run {name!r}: none of its {what} ({len(values)}) is a query of the ground truth {ground_truth!r} "
        f"(e.g. {_first(values)}; the ground truth has query ids like {_first(known, 3)}){how}; "
        "nothing recorded: check the ids given")


#: How the warning of :func:`warn_runs_answering_none` starts (``evaluate --workspace`` quiets it while it
#: sets the ground truth, and gives it once its own runs are recorded: the runs it replaces are not named).
ANSWERING_NONE_PREFIX = "stored run"


def _query_ids(ws: Any, rec: Any, by_name: dict[str, Any], seen: dict[str, np.ndarray | None]
               ) -> np.ndarray | None:
    """The ids a stored run answers queries with: a ranked run's query ids (read alone: the artifact is verified,
    then only the header rows of its query id column are read, :meth:`~.core.WorkspaceCore.read_run_query_ids`),
    an embedding run's query ids (an item-to-item run: its item ids), a fused run's inputs' together; None when
    they cannot be read (a damaged artifact, a missing input: evaluating says so)."""
    if rec.name in seen:
        return seen[rec.name]
    seen[rec.name] = None  # (a circle of fusions, never written by the API, ends here)
    try:
        if rec.kind == "ranked":
            ids = ws.read_run_query_ids(rec.artifact, what=f"run {rec.name!r}")  # its query ids only, not the run
        elif rec.kind == "embedding":
            docs, queries = ws.run_embeddings(rec)
            ids = (docs if queries is None else queries).ids
        else:
            parts = [_query_ids(ws, by_name[n], by_name, seen) if n in by_name else None for n in rec.inputs]
            ids = None if any(p is None for p in parts) else np.concatenate(
                [np.asarray(p, dtype=object) for p in parts]) if parts else np.array([], dtype=object)
    except EvalcoreError:
        ids = None
    seen[rec.name] = ids
    return ids


def runs_answering_none(ws: Any) -> list[tuple[str, np.ndarray]]:
    """The stored runs none of whose query ids is a query of the active ground truth (of the aspect each is
    evaluated against), with those ids, in display order; ``[]`` without a ground truth.

    What :meth:`~evalcore.workspace.Workspace.add_run` refuses to store (:func:`check_answers_some`),
    found among the runs already stored: runs stored before any ground truth, or for another one. A run
    whose artifacts or aspect cannot be read is left to the evaluation, which reports it.
    """
    from .aspects import run_aspect

    gt = ws.ground_truth_record()
    if gt is None:
        return []
    records = ws.run_records()
    by_name = {r.name: r for r in records}
    aspects = gt.aspects if gt.kind == "qrels" else ()
    default = gt.parts[0].aspect if gt.kind == "qrels" else None
    universes: dict[str | None, Any] = {}
    seen: dict[str, np.ndarray | None] = {}
    out = []
    for rec in records:
        try:
            aspect = run_aspect(rec, aspects, default)
        except EvalcoreError:
            continue
        if aspect not in universes:
            universes[aspect] = ws.query_universe(aspect)
        universe, ids = universes[aspect], _query_ids(ws, rec, by_name, seen)
        if universe is not None and ids is not None and not answers_some(ids, universe[0]):
            out.append((rec.name, ids))
    return out


#: How many runs the warning of :func:`warn_runs_answering_none` names; beyond, "and N more" (every name is in
#: the list it returns, and in :func:`runs_answering_none`).
NAMED_RUNS = 5


def warn_runs_answering_none(ws: Any, *, stacklevel: int = 2) -> list[str]:
    """One warning naming the stored runs that answer none of the active ground truth's queries
    (:func:`runs_answering_none`; the first :data:`NAMED_RUNS`, then "and N more"), with a few ids of both sides;
    returns all their names (``[]``: no warning).

    ``stacklevel`` as :func:`evalcore.errors.warn`'s, counted from the caller of this function.
    """
    found = runs_answering_none(ws)
    if not found:
        return []
    gt = ws.ground_truth_record()
    universe = ws.query_universe(None)
    names = [n for n, _ in found]
    many = len(names) > 1
    listed = ", ".join(map(repr, names[:NAMED_RUNS])) + (
        f" and {len(names) - NAMED_RUNS:,} more" if len(names) > NAMED_RUNS else "")
    theirs = ", ".join(repr(str(x)) for x in np.asarray(found[0][1], dtype=object)[:2].tolist())
    mine = "" if universe is None else "; the ground truth's queries like " + ", ".join(
        repr(str(x)) for x in np.asarray(universe[0], dtype=object)[:2].tolist())
    warn(f"{ANSWERING_NONE_PREFIX}{'s' if many else ''} {listed} answer{'' if many else 's'} "
         f"none of the queries of the ground truth {gt.name!r}, now the active one (ids like {theirs}"
         f"{f' in {names[0]!r}' if many else ''}{mine}): evaluated against it, every value is 0, or, for an "
         f"embedding run, nothing; {'they stay' if many else 'it stays'} stored for the ground truth "
         f"{'they answer' if many else 'it answers'}", stacklevel=stacklevel + 1)
    return names

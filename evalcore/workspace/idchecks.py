"""Checks of the ids a workspace is asked to store, made before anything is written.

* An id holding a control character (a tab, a line break, NUL... — C0 and C1 controls and DEL)
  or a Unicode line / paragraph separator is refused, whatever form it came in (arrays, engine
  objects, files): it would break the TREC, CSV and ids files written from the workspace later.
  :class:`~evalcore.errors.InputFormatError` (the class of the readers' and writers' refusals of
  such ids) names the id (its ``repr``) and its row, counted from 0 as in the arrays given:
  :func:`check_embedding_ids` (a vector's row), :func:`check_run_ids` and :func:`check_qrels_ids`
  (the first row of the run or judgments holding it).
* :func:`check_answers_some`: a run none of whose query ids is a query of the active ground truth
  (document ids passed as query ids, integers against ``"q1"``...) is refused with
  :class:`~evalcore.errors.MissingIdsError`, in the words of
  :func:`evalcore.embedding_runs.embedding_run`'s refusal. A run answering only some of them is
  stored: its evaluation scores the others 0 and says so, as the command line's does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..data import Qrels, Run
from ..errors import InputFormatError, MissingIdsError
from ..io.embeddings import Embeddings
from ..io.source import first_broken_id

__all__ = ["check_embedding_ids", "check_run_ids", "check_qrels_ids", "check_answers_some", "broken_id_error"]


def broken_id_error(owner: str, what: str, value: Any, row: int, file: str | None = None) -> InputFormatError:
    """The error refusing id ``value`` at ``row`` (see the module docstring); ``owner`` names whose it is."""
    return InputFormatError(f"{owner}: {what} {str(value)!r:.80} (row {row}, counted from 0) holds a control "
                            "character (a tab, line break, NUL...); it would break the TREC and CSV files "
                            "written from the workspace", file=file)


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


def check_answers_some(name: str, ids: np.ndarray, universe: np.ndarray, *, ground_truth: str,
                       items: bool = False) -> None:
    """Refuse run ``name`` when none of its query ids ``ids`` is among the ground truth's queries ``universe``.

    ``items``: an item-to-item embedding run, whose queries are the ground truth's queries found
    among its items ``ids``. Ids compare as text (an integer id 7 is the query ``"7"``).
    """
    known = np.asarray(universe, dtype=object).tolist()
    have = {str(x) for x in known}
    values = np.asarray(ids, dtype=object).tolist()
    if not have or any(str(x) in have for x in values):
        return
    what = "item ids" if items else "query ids"
    how = ("; an item-to-item run ranks the ground truth's queries found among its items" if items else "")
    raise MissingIdsError(
        f"run {name!r}: none of its {what} ({len(values)}) is a query of the ground truth {ground_truth!r} "
        f"(e.g. {_first(values)}; the ground truth has query ids like {_first(known, 3)}){how}; "
        "nothing recorded: check the ids given")

"""Column names of long tables and the value conversions shared by the table and JSON readers."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from ..errors import NonFiniteValueError, ValueTypeError

__all__ = ["QUERY_COLUMNS", "DOC_COLUMNS", "GRADE_COLUMNS", "SCORE_COLUMNS", "RANK_COLUMNS", "DOMAIN_COLUMNS", "META_ID_COLUMNS", "TITLE_COLUMNS", "TEXT_COLUMNS", "GRADE_LIMIT", "kind_of", "to_grade", "to_score", "norm_column", "pick_column"]

QUERY_COLUMNS = ("query_id", "qid", "query", "queryid", "q_id", "topic", "topic_id", "question_id")
DOC_COLUMNS = ("doc_id", "docid", "corpus_id", "corpusid", "document_id", "documentid", "doc", "document",
               "docno", "did", "passage_id", "pid", "item_id", "item", "target_id", "target")
GRADE_COLUMNS = ("relevance", "rel", "grade", "label", "judgment", "judgement", "qrel", "relevance_grade",
                 "score")
SCORE_COLUMNS = ("score", "sim", "similarity", "rsv", "retrieval_score", "relevance_score", "value")
RANK_COLUMNS = ("rank", "position", "pos")
DOMAIN_COLUMNS = ("domain", "category")
META_ID_COLUMNS = ("_id", "id") + DOC_COLUMNS
TITLE_COLUMNS = ("title", "name", "doc_title")
TEXT_COLUMNS = ("text", "body", "contents", "content", "abstract", "description", "plot", "overview",
                "passage")

GRADE_LIMIT = 2**31 - 1  # |grade| above this is refused (gains 2**rel would overflow long before)



# ============================================================================ values
def kind_of(v: Any) -> str:
    """JSON-ish name of a Python value's type, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, int | float):
        return "a number"
    return type(v).__name__


def to_grade(v: Any, *, where: str, label: str, line: int | None = None,
             query: str | None = None, item: str | None = None) -> int:
    """An integer grade from a JSON value or a cell (``"2"``, ``2``, ``2.0``); else :class:`ValueTypeError`."""
    g: float | int | None
    if isinstance(v, bool) or v is None:
        g = None
    elif isinstance(v, int):
        g = v
    elif isinstance(v, float):
        g = v if math.isfinite(v) and v == int(v) else None
    elif isinstance(v, str):
        s = v.strip()
        try:
            g = int(s)
        except ValueError:
            try:
                f = float(s)
            except ValueError:
                f = math.nan
            g = int(f) if math.isfinite(f) and f == int(f) else None
    else:
        g = None
    if g is None:
        raise ValueTypeError(f"grade {v!r} of {where} is not an integer", file=label, line=line,
                             query=query, item=item)
    if abs(g) > GRADE_LIMIT:
        raise ValueTypeError(f"grade {v!r} of {where} is out of range (|grade| <= {GRADE_LIMIT})",
                             file=label, line=line, query=query, item=item)
    return int(g)


def to_score(v: Any, *, where: str, label: str, line: int | None = None, what: str = "score",
             query: str | None = None, item: str | None = None) -> float:
    """A finite float from a JSON value or a cell; :class:`ValueTypeError` / :class:`NonFiniteValueError`."""
    f: float | None
    if isinstance(v, bool) or v is None:
        f = None
    elif isinstance(v, int | float):
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
    elif isinstance(v, str):
        try:
            f = float(v.strip())
        except ValueError:
            f = None
    else:
        f = None
    if f is None:
        raise ValueTypeError(f"{what} {v!r} of {where} is not a number", file=label, line=line,
                             query=query, item=item)
    if not math.isfinite(f):
        raise NonFiniteValueError(f"{what} {v!r} of {where} is not finite", file=label, line=line,
                                  query=query, item=item)
    return f


def norm_column(name: Any) -> str:
    """Column name as matched against the synonym lists."""
    return re.sub(r"[\s\-.]+", "_", str(name).strip().lower())


def pick_column(names: Sequence[str], synonyms: Sequence[str]) -> int | None:
    """Index of the first synonym present among ``names`` (normalised), else None."""
    normed = [norm_column(n) for n in names]
    for syn in synonyms:
        if syn in normed:
            return normed.index(syn)
    return None

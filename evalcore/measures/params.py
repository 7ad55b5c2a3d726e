"""Parameters of measures: how each is parsed, validated and printed in a canonical name.

``rel`` (an integer threshold) is every relevance metric's; the others belong
to one metric each: ``p`` (RBP and its residual), ``beta`` (set_F),
``max_grade`` (ERR), ``gains`` (nDCG's gain map) and ``recall`` (the level of
``iprec_at_recall``). A value equal to the parameter's default is left out of
the canonical name (so ``rbp(p=0.8)`` prints ``rbp``), and so is a gain equal
to its grade.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import UnknownMeasureError
from ..metrics import ALL_METRICS, ERR_MAX_GRADE, RBP_P, RELEVANCE_FREE

__all__ = ["PARAMS", "parse_params", "allowed"]


def _fmt_float(x: float) -> str:
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


def _float(text: str, what: str, ok: Callable[[float], bool], rule: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise UnknownMeasureError(f"{what} must be a number, got {text!r}") from None
    if not (math.isfinite(v) and ok(v)):
        raise UnknownMeasureError(f"{what} must be {rule}, got {text!r}")
    return v


def _int(text: str, what: str, low: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise UnknownMeasureError(f"{what} must be an integer, got {text!r}") from None
    if v < low:
        raise UnknownMeasureError(f"{what} must be >= {low}, got {text!r}")
    return v


def _gains(text: str, what: str) -> tuple[tuple[int, float], ...]:
    out: dict[int, float] = {}
    for pair in filter(None, (x.strip() for x in text.split(","))):
        g, sep, v = pair.partition(":")
        if not sep:
            g, sep, v = pair.partition("=")  # trec_eval's 1=3 spelling
        if not sep:
            raise UnknownMeasureError(f"{what}: expected grade:gain pairs, got {pair!r}")
        grade = _int(g.strip(), f"{what}: a grade", 0)
        if grade in out:
            raise UnknownMeasureError(f"{what}: grade {grade} is given twice")
        out[grade] = _float(v.strip(), f"{what}: the gain of grade {grade}", lambda x: x >= 0, ">= 0")
    if not out:
        raise UnknownMeasureError(f"{what}: expected grade:gain pairs, got {text!r}")
    return tuple((g, v) for g, v in sorted(out.items()) if v != g)  # a gain equal to its grade is the default


def _fmt_gains(v: tuple[tuple[int, float], ...]) -> str:
    return ",".join(f"{g}:{_fmt_float(x)}" for g, x in v)


@dataclass(frozen=True)
class _Param:
    parse: Callable[[str, str], Any]  # (value text, "name(param)") -> value
    fmt: Callable[[Any], str]
    default: Any  # left out of the canonical name; None: no default


_P = _Param(lambda t, w: _float(t, w, lambda x: 0 < x < 1, "in (0, 1)"), _fmt_float, RBP_P)
PARAMS: dict[str, dict[str, _Param]] = {
    "rbp": {"p": _P},
    "rbp_residual": {"p": _P},
    "set_f": {"beta": _Param(lambda t, w: _float(t, w, lambda x: x >= 0, ">= 0"), _fmt_float, 1.0)},
    "err": {"max_grade": _Param(lambda t, w: _int(t, w, 1), str, ERR_MAX_GRADE)},
    "ndcg": {"gains": _Param(_gains, _fmt_gains, ())},
    "iprec_at_recall": {"recall": _Param(lambda t, w: _float(t, w, lambda x: 0 <= x <= 1, "in [0, 1]"),
                                         _fmt_float, None)},
}
#: metrics that take (rel=N): all but nDCG (raw grades) and those that do not look at relevance
TAKES_REL = frozenset(set(ALL_METRICS) - {"ndcg", "ndcg_exp"} - RELEVANCE_FREE)


def allowed(name: str) -> list[str]:
    """Parameters a metric takes, ``rel`` first."""
    return (["rel"] if name in TAKES_REL else []) + list(PARAMS.get(name, {}))


_SPLIT = re.compile(r",\s*(?=[A-Za-z_]\w*\s*=)")


def parse_params(name: str, text: str, whole: str) -> tuple[int | None, tuple[tuple[str, Any], ...]]:
    """``(rel, other parameters)`` of the text between a measure's parentheses; defaults left out."""
    rel = None
    given: dict[str, Any] = {}
    specs = PARAMS.get(name, {})
    for part in _SPLIT.split(text.strip()):
        if "=" not in part:
            raise UnknownMeasureError(f"bad parameter {part.strip()!r} in {whole!r}; expected key=value")
        key, val = (x.strip() for x in part.split("=", 1))
        key = key.lower()
        if key not in allowed(name):
            takes = ", ".join(allowed(name)) or "none"
            raise UnknownMeasureError(f"measure {name!r} takes no parameter {key!r} (allowed: {takes})")
        if key in given or (key == "rel" and rel is not None):
            raise UnknownMeasureError(f"parameter {key!r} is given twice in {whole!r}")
        if key == "rel":
            try:
                rel = int(val)
            except ValueError:
                raise UnknownMeasureError(f"rel must be an integer in {whole!r}, got {val!r}") from None
            if rel < 1:  # as evaluate's rel_threshold (and trec_eval's -l): unjudged documents are grade 0
                raise UnknownMeasureError(f"rel must be an integer >= 1 in {whole!r}, got {val!r} (unjudged "
                                          "documents count as grade 0: rel <= 0 would call them relevant)")
        else:
            given[key] = specs[key].parse(val, f"{name}({key})")
    params = tuple((key, given[key]) for key in specs if key in given and given[key] != specs[key].default)
    return rel, params

"""Measures as values with canonical names that parse and print the same way.

Syntax (case-insensitive for aliases, canonical output lower-case)::

    name[(param=value[,param=value])][@k]

Examples: ``ndcg@10``, ``recall(rel=2)@100``, ``map``, ``rprec``, ``P@5``
(alias of ``precision@5``), ``success@1`` (alias of ``hit_rate@1``).

Parameters: ``rel`` — relevance threshold θ for the binary metrics (a
document counts as relevant when grade >= θ; seed 003). nDCG takes no ``rel``
(its gains are the raw grades, as in trec_eval).

``str(parse_measure(s)) == s`` for every canonical ``s``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .errors import UnknownMeasureError
from .metrics import K_FREE, METRICS

ALIASES: dict[str, str] = {
    "p": "precision",
    "prec": "precision",
    "r": "recall",
    "recall_cut": "recall",
    "success": "hit_rate",
    "hits": "hit_rate",
    "hitrate": "hit_rate",
    "recip_rank": "mrr",
    "rr": "mrr",
    "map_cut": "map",
    "ap": "map",
    "ndcg_cut": "ndcg",
    "ndcg_burges": "ndcg_exp",
    "r_precision": "rprec",
    "r-precision": "rprec",
}

DESCRIPTIONS: dict[str, str] = {
    "precision": "hits in top k / k (trec_eval P)",
    "recall": "hits in top k / R (trec_eval recall)",
    "recall_capped": "hits in top k / min(k, R) (seed 004)",
    "hit_rate": "1 if any relevant doc in top k (trec_eval success)",
    "mrr": "1 / rank of first relevant doc within k, else 0 (trec_eval recip_rank)",
    "map": "sum of precision at relevant ranks <= k, / R (trec_eval map_cut)",
    "map_found": "sum of precision at relevant ranks <= k, / hits found (seeds 000, 004)",
    "ndcg": "nDCG, linear gain = grade, ideal from qrels cut at k (trec_eval ndcg_cut)",
    "ndcg_exp": "nDCG, gain 2^grade - 1, same ideal (seeds 001, 003; ranx ndcg_burges)",
    "rprec": "precision at rank R (trec_eval Rprec); no k",
    "first_rel_rank": "rank of the first relevant doc (NaN if none); no k",
}

_PARAMS: dict[str, frozenset[str]] = {name: frozenset({"rel"}) for name in METRICS}
_PARAMS["ndcg"] = frozenset()
_PARAMS["ndcg_exp"] = frozenset()

_RE = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)\s*(?:\((?P<params>[^)]*)\))?\s*(?:@\s*(?P<k>\d+))?\s*$")


@dataclass(frozen=True, order=True)
class Measure:
    """A metric with its parameters and (optional) cutoff.

    ``k`` is None when not given; k-free metrics (``rprec``, ``first_rel_rank``) always have k None.
    """

    name: str
    rel: int | None = None
    k: int | None = None

    @property
    def base(self) -> str:
        """Name with parameters, without the cutoff: the table's ``metric`` column."""
        return self.name if self.rel is None else f"{self.name}(rel={self.rel})"

    def __str__(self) -> str:
        return self.base if self.k is None else f"{self.base}@{self.k}"

    def with_k(self, k: int | None) -> Measure:
        return Measure(self.name, self.rel, None if self.name in K_FREE else k)


def supported() -> str:
    """Human-readable list of supported measures, used in error messages and --help."""
    lines = [f"{n}: {d}" for n, d in DESCRIPTIONS.items()]
    alias = ", ".join(f"{a}->{c}" for a, c in sorted(ALIASES.items()))
    return "; ".join(lines) + f". Aliases: {alias}. Parameter: (rel=N) relevance threshold for binary metrics."


def parse_measure(text: str) -> Measure:
    """Parse one measure name.

    >>> str(parse_measure("nDCG@10")), str(parse_measure("P(rel=2)@5")), str(parse_measure("map"))
    ('ndcg@10', 'precision(rel=2)@5', 'map')
    >>> parse_measure("foo@3")
    Traceback (most recent call last):
    ...
    evalcore.errors.UnknownMeasureError: unknown measure 'foo@3'; supported: ...
    """
    m = _RE.match(text)
    if not m:
        raise UnknownMeasureError(f"cannot parse measure {text!r}; expected name[(rel=N)][@k]; supported: {supported()}")
    raw = m.group("name")
    low = raw.lower()
    name = ALIASES.get(low, low)
    if raw == "P":
        name = "precision"
    if name not in METRICS:
        raise UnknownMeasureError(f"unknown measure {text!r}; supported: {supported()}")
    rel = None
    if m.group("params") is not None and m.group("params").strip():
        for part in m.group("params").split(","):
            if "=" not in part:
                raise UnknownMeasureError(f"bad parameter {part.strip()!r} in {text!r}; expected rel=N")
            key, val = (x.strip() for x in part.split("=", 1))
            if key not in _PARAMS[name]:
                allowed = ", ".join(sorted(_PARAMS[name])) or "none"
                raise UnknownMeasureError(f"measure {name!r} takes no parameter {key!r} (allowed: {allowed})")
            try:
                rel = int(val)
            except ValueError:
                raise UnknownMeasureError(f"rel must be an integer in {text!r}, got {val!r}") from None
    k = m.group("k")
    kk = int(k) if k is not None else None
    if kk is not None and kk <= 0:
        raise UnknownMeasureError(f"cutoff must be >= 1 in {text!r}")
    if name in K_FREE:
        kk = None
    return Measure(name, rel, kk)


def expand_measures(names: Iterable[str], ks: Sequence[int] = ()) -> list[Measure]:
    """Parse names and give every measure without a cutoff each k in ``ks``.

    Duplicates are removed, first occurrence kept. A measure that needs a k but
    has none and ``ks`` is empty is an error.
    """
    out: list[Measure] = []
    seen: set[Measure] = set()
    for raw in names:
        for piece in str(raw).replace(";", " ").split():
            m = parse_measure(piece)
            if m.name in K_FREE or m.k is not None:
                todo = [m]
            else:
                if not ks:
                    raise UnknownMeasureError(f"measure {piece!r} needs a cutoff: write {piece}@K or pass k values")
                todo = [m.with_k(int(k)) for k in ks]
            for t in todo:
                if t not in seen:
                    seen.add(t)
                    out.append(t)
    return out

"""Measures as values with canonical names that parse and print the same way.

Syntax (case-insensitive for aliases, canonical output lower-case)::

    name[(param=value[,param=value])][@k | @all]

Examples: ``ndcg@10``, ``recall(rel=2)@100``, ``map@all``, ``rprec``, ``P@5``
(alias of ``precision@5``), ``success@1`` (alias of ``hit_rate@1``),
``rbp(p=0.9)``, ``set_f(beta=0.5)``, ``ndcg(gains=1:3,2:9)@10``,
``iprec_at_recall(recall=0.1)``.

Cutoffs: ``@k`` (k >= 1); ``@all`` = the whole retrieved list (recorded as
k = 0, like the metrics without a cutoff); no cutoff = each k given to
:func:`expand_measures`. Metrics without a cutoff drop any ``@``.

Parameters: ``rel`` — relevance threshold θ for every metric but nDCG and
:data:`evalcore.metrics.RELEVANCE_FREE` (a document counts as relevant when
grade >= θ; seed 003); ``p`` (RBP's persistence, default 0.8), ``beta``
(set_F's weight, default 1), ``max_grade`` (ERR's g_max, default 4), ``gains``
(nDCG's gain map ``grade:gain,...``), ``recall`` (the level of
``iprec_at_recall``; without it the name stands for trec_eval's eleven levels).
A parameter equal to its default is left out of the canonical name, and so is a
gain equal to its grade.

trec_eval's names (``P_5``, ``P.5,10``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``,
``set_F``, groups ``official`` and ``all_trec``...) parse too: see
:mod:`evalcore.measures.trec`; :func:`parse_measures` returns every measure such a
name stands for.

``str(parse_measure(s)) == s`` for every canonical ``s``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UnknownMeasureError, warn
from ..metrics import ALL_METRICS, CURVES, K_FREE, NO_ALL_CUTOFF, RECALL_LEVELS
from .params import PARAMS, parse_params
from .trec import trec_eval_names

__all__ = ["Measure", "parse_measure", "parse_measures", "expand_measures", "supported", "ALIASES",
           "DESCRIPTIONS", "HITS_RENAMED"]

ALIASES: dict[str, str] = {
    "p": "precision",
    "prec": "precision",
    "r": "recall",
    "recall_cut": "recall",
    "success": "hit_rate",
    "hitrate": "hit_rate",
    "recip_rank": "mrr",
    "rr": "mrr",
    "map_cut": "map",
    "ap": "map",
    "ndcg_cut": "ndcg",
    "ndcg_burges": "ndcg_exp",
    "dcg_burges": "dcg_exp",
    "r_precision": "rprec",
    "r-precision": "rprec",
    "set_p": "set_precision",
    "set_r": "set_recall",
    "gm_ap": "gm_map",
    "11-pt_avg": "11pt_avg",
    "rank_biased_precision": "rbp",
    "iprec": "iprec_at_recall",
}

#: the one-line warning given whenever someone types ``hits`` (it meant ``hit_rate`` until 0.1)
HITS_RENAMED = ("'hits' is now the number of relevant documents in the top k (ranx's hits), "
                "no longer the hit rate; write hit_rate or success for the share of queries with a hit")

DESCRIPTIONS: dict[str, str] = {
    "precision": "hits in top k / k (trec_eval P)",
    "recall": "hits in top k / R (trec_eval recall)",
    "recall_capped": "hits in top k / min(k, R) (seed 004)",
    "hit_rate": "1 if any relevant doc in top k (trec_eval success)",
    "hits": "number of relevant docs in top k, a count (ranx hits)",
    "f1": "2 P@k recall@k / (P@k + recall@k) = 2 hits / (k + R) (ranx f1)",
    "mrr": "1 / rank of first relevant doc within k, else 0 (trec_eval recip_rank)",
    "map": "sum of precision at relevant ranks <= k, / R (trec_eval map_cut; map@all = map)",
    "map_found": "sum of precision at relevant ranks <= k, / hits found (seeds 000, 004)",
    "ndcg": "nDCG, linear gain = grade (or gains=g:v,...), ideal from qrels cut at k (trec_eval ndcg_cut)",
    "ndcg_exp": "nDCG, gain 2^grade - 1, same ideal (seeds 001, 003; ranx ndcg_burges)",
    "dcg": "unnormalised DCG, gain = grade for grades >= rel (ranx dcg)",
    "dcg_exp": "unnormalised DCG, gain 2^grade - 1 for grades >= rel (ranx dcg_burges)",
    "err": "expected reciprocal rank, R = (2^g - 1) / 2^max_grade, max_grade=4 (Chapelle; ir_measures ERR)",
    "rprec": "precision at rank R (trec_eval Rprec); no k",
    "first_rel_rank": "rank of the first relevant doc (NaN if none); no k",
    "num_ret": "documents retrieved; summed over queries (trec_eval num_ret); no k",
    "num_rel": "relevant documents in the qrels, R; summed (trec_eval num_rel); no k",
    "num_rel_ret": "relevant documents retrieved; summed (trec_eval num_rel_ret); no k",
    "num_q": "1 per evaluated query; summed = number of queries (trec_eval num_q); no k",
    "judged": "share of the top k (or of the list if shorter) that has a judgment (ir_measures Judged)",
    "set_precision": "relevant retrieved / retrieved, whole list (trec_eval set_P); no k",
    "set_recall": "relevant retrieved / R, whole list (trec_eval set_recall); no k",
    "set_f": "(beta+1) P R / (beta P + R) over the whole list, beta=1 (trec_eval set_F); no k",
    "bpref": "binary preference: relevant docs above judged non-relevant ones (trec_eval bpref); no k",
    "infap": "inferred AP; negative grades = pooled but not sampled (trec_eval infAP); no k",
    "gm_map": "per query ln(max(AP, 1e-5)); summary exp(mean) = geometric mean AP (trec_eval gm_map); no k",
    "11pt_avg": "mean interpolated precision at recall 0, 0.1, ..., 1 (trec_eval 11pt_avg); no k",
    "rbp": "rank-biased precision (1-p) sum b_i p^(i-1), binary, p=0.8 (ranx rbp); no k",
    "rbp_residual": "RBP's residual: weight of unjudged docs and past the list, p=0.8 (trec_eval rbp_resid); no k",
    "iprec_at_recall": "interpolated precision at recall level (recall=x); bare name: the 11 levels "
                       "0, 0.1, ..., 1 (trec_eval iprec_at_recall); no k",
}


@dataclass(frozen=True, order=True)
class Measure:
    """A metric with its parameters and (optional) cutoff.

    ``k`` is None when not given (each k of the evaluation applies), 0 for the
    whole list (``@all``); k-free metrics (``rprec``, ``bpref``...) always have
    k None. ``params`` holds the parameters other than ``rel`` that differ from
    their defaults, as ``(name, value)`` pairs in the metric's declared order.
    """

    name: str
    rel: int | None = None
    k: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def base(self) -> str:
        """Name with parameters, without the cutoff: the table's ``metric`` column."""
        parts = [] if self.rel is None else [f"rel={self.rel}"]
        specs = PARAMS.get(self.name, {})
        parts += [f"{key}={specs[key].fmt(v)}" for key, v in self.params]
        return self.name if not parts else f"{self.name}({','.join(parts)})"

    def __str__(self) -> str:
        if self.k is None:
            return self.base
        return f"{self.base}@{'all' if self.k == 0 else self.k}"

    def with_k(self, k: int | None) -> Measure:
        return Measure(self.name, self.rel, None if self.name in K_FREE else k, self.params)

    def param(self, key: str) -> Any:
        """Value of a parameter (its default when not given)."""
        return dict(self.params).get(key, PARAMS[self.name][key].default)

    @property
    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of the metric function (parameters given, ``rel`` aside)."""
        return dict(self.params)


def supported() -> str:
    """Human-readable list of supported measures, used in error messages and --help."""
    lines = [f"{n}: {d}" for n, d in DESCRIPTIONS.items()]
    alias = ", ".join(f"{a}->{c}" for a, c in sorted(ALIASES.items()))
    return ("; ".join(lines) + f". Aliases: {alias}. Parameter: (rel=N) relevance threshold; cutoff @k or "
            "@all; trec_eval names (P_5, P.5,10, ndcg_cut_10, official, all_trec...) too.")


_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9_][A-Za-z0-9_\-]*)\s*(?:\((?P<params>[^()]*)\))?\s*(?:@\s*(?P<k>\d+|all))?\s*$",
    re.IGNORECASE,
)
def _parse_one(text: str) -> Measure | None:
    """Parse evalcore's own syntax; None when the name is not one of evalcore's."""
    m = _RE.match(text)
    if not m:
        return None
    raw = m.group("name")
    low = raw.lower()
    name = ALIASES.get(low, low)
    if name not in ALL_METRICS:
        return None
    if low == "hits":
        warn(HITS_RENAMED)
    rel, params = (None, ()) if m.group("params") is None or not m.group("params").strip() else \
        parse_params(name, m.group("params"), text)
    k = m.group("k")
    kk = None if k is None else 0 if k.lower() == "all" else int(k)
    if kk is not None and name not in K_FREE:
        if k.lower() != "all" and kk <= 0:
            raise UnknownMeasureError(f"cutoff must be >= 1 in {text!r}")
        if kk == 0 and name in NO_ALL_CUTOFF:
            other = {"precision": "set_precision", "f1": "set_f", "recall_capped": "recall@all"}[name]
            raise UnknownMeasureError(f"{name}@all is not defined (k is its denominator); "
                                      f"over the whole list write {other}")
    return Measure(name, rel, None if name in K_FREE else kk, params)


def parse_measures(text: str) -> list[Measure]:
    """Every measure a name stands for: one, or several for trec_eval's groups and lists.

    >>> [str(m) for m in parse_measures("P.5,10")]
    ['precision@5', 'precision@10']
    >>> [str(m) for m in parse_measures("ndcg_cut_10")]
    ['ndcg@10']
    """
    one = _parse_one(text)
    if one is not None:
        return [one]
    names = trec_eval_names(text.strip())
    if names is None:
        if _RE.match(text) is None and "(" not in text:
            raise UnknownMeasureError(
                f"cannot parse measure {text!r}; expected name[(rel=N)][@k]; supported: {supported()}")
        if _RE.match(text) is None:
            raise UnknownMeasureError(f"cannot parse measure {text!r}; expected name[(param=value,...)][@k]; "
                                      f"supported: {supported()}")
        raise UnknownMeasureError(f"unknown measure {text!r}{_closest(text)}; supported: {supported()}")
    out = []
    for n in names:
        m = _parse_one(n)
        if m is None:  # a bug of the trec_eval table, not of the input
            raise AssertionError(f"trec_eval name {text!r} maps to {n!r}, which does not parse")
        out.append(m)
    return out


def _closest(text: str) -> str:
    """``" (did you mean 'ndcg_cut_10'?)"`` for a near miss of a name evalcore or trec_eval knows, else ``""``.

    A trailing ``@k`` / ``_k`` / ``.k,...`` is kept as typed and only the name before it is matched.
    """
    import difflib

    from .trec import GROUPS, cut_measure_names

    m = re.match(r"^(.*?)((?:@\S+|_\d+|\.[\d,.]+)?)$", text.strip())
    head, tail = (m.group(1), m.group(2)) if m else (text.strip(), "")
    known = {*ALL_METRICS, *ALIASES, *GROUPS, *cut_measure_names(), "iprec_at_recall", "set_F", "rbp_resid"}
    lower = {k.lower(): k for k in known}
    hit = difflib.get_close_matches(head.lower(), list(lower), n=1, cutoff=0.75)
    return f" (did you mean {lower[hit[0]] + tail!r}?)" if hit else ""


def parse_measure(text: str) -> Measure:
    """Parse one measure name.

    >>> str(parse_measure("nDCG@10")), str(parse_measure("P(rel=2)@5")), str(parse_measure("map"))
    ('ndcg@10', 'precision(rel=2)@5', 'map')
    >>> str(parse_measure("recall_1000")), str(parse_measure("rbp(p=0.95)")), str(parse_measure("map@all"))
    ('recall@1000', 'rbp(p=0.95)', 'map@all')
    >>> parse_measure("foo@3")
    Traceback (most recent call last):
    ...
    evalcore.errors.UnknownMeasureError: unknown measure 'foo@3'; supported: ...
    """
    got = parse_measures(text)
    if len(got) != 1:
        raise UnknownMeasureError(f"{text!r} names {len(got)} measures ({', '.join(map(str, got))}); "
                                  "use parse_measures or expand_measures")
    return got[0]


def expand_measures(names: Iterable[str], ks: Sequence[int] = ()) -> list[Measure]:
    """Parse names and give every measure without a cutoff each k in ``ks``.

    trec_eval groups and lists expand to their measures; ``iprec_at_recall``
    without a level to the eleven levels 0, 0.1, ..., 1. Duplicates are
    removed, first occurrence kept. A measure that needs a k but has none and
    ``ks`` is empty is an error.
    """
    out: list[Measure] = []
    seen: set[Measure] = set()
    for raw in names:
        for piece in str(raw).replace(";", " ").split():
            for m in parse_measures(piece):
                if m.name in CURVES and not m.params:
                    todo = [Measure(m.name, m.rel, None, (("recall", x),)) for x in RECALL_LEVELS]
                elif m.name in K_FREE or m.k is not None:
                    todo = [m]
                else:
                    if not ks:
                        raise UnknownMeasureError(
                            f"measure {piece!r} needs a cutoff: write {piece}@K or {piece}@all, or pass k values")
                    todo = [m.with_k(int(k)) for k in ks]
                for t in todo:
                    if t not in seen:
                        seen.add(t)
                        out.append(t)
    return out

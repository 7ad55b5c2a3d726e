r"""Fusion of runs: score normalisations and fusion methods, and a seeded random baseline (:func:`random_run`, of
:mod:`evalcore.random_baseline`).

Every method fuses, query by query, the ranked lists of several runs into one
run whose score is the fused value (higher is better). Notation, for one query:
``S`` an input run, ``rank_S(d)`` the 1-based rank of document d in S's list
(its evaluation order under the tie rule ``ties``), ``s_S(d)`` its (normalised)
score, ``d ∈ S`` when S lists d, ``w_S`` the weight of S, ``n`` the number of
candidates (distinct documents listed by any run for the query).

========== ====================================================== ================
method     fused value of d                                        kind
========== ====================================================== ================
rrf        ``Σ_{S ∋ d} w_S / (c + rank_S(d))``                      rank, weighted
combsum    ``Σ_{S ∋ d} s_S(d)``                                     score
combmnz    ``|{S ∋ d}| · Σ_{S ∋ d} s_S(d)``                         score
wsum       ``Σ_{S ∋ d} w_S · s_S(d)``                               score, weighted
isr        ``|{S ∋ d}| · Σ_{S ∋ d} 1 / rank_S(d)²``                 rank
bordafuse  ``Σ_S B_S(d)``, ``B_S(d) = n − rank_S(d) + 1`` if d ∈ S, rank
           else ``(n − |S| + 1) / 2`` (|S| = length of S's list)
========== ====================================================== ================

``rrf`` is seed 001 §7 (weighted reciprocal rank fusion, Cormack et al. 2009);
CombSUM and CombMNZ are Fox & Shaw (1993), ISR Mourão et al. (2015), BordaFuse
Aslam & Montague (2001). Each equals ranx's method of the same definition
(``ranx.fuse(..., method=)`` with ``"rrf"`` (weights 1, ``k = c``), ``"sum"``,
``"mnz"``, ``"wsum"``, ``"isr"``, ``"bordafuse"``); the tests check it to 1e-12.

Normalisations (``norm``), applied to each run's list per query before a
score-based method (``min``, ``max``, ``Σ``, mean and standard deviation over the
list, ``n`` its length, ``ε = 1e-9`` as in ranx):

========== ==============================================================
none       ``s``
min-max    ``(s − min) / max(max − min, ε)``
max        ``s / max(max, ε)``  (a list whose maximum is <= ε is divided by ε)
sum        ``(s − min) / max(Σ s − n · min, ε)``
z-score    ``(s − mean) / max(std, ε)``, population std (ddof 0); ranx's "zmuv"
rank       ``1 − (rank(d) − 1) / n``
========== ==============================================================

Conventions, explicit:

* **Missing documents** contribute nothing (0) to the sums, and are not counted
  in CombMNZ/ISR's ``|{S ∋ d}|`` — after z-score normalisation this means a
  missing document weighs as much as one at its list's mean (ranx does the same);
  in BordaFuse a run that does not list d gives it the unranked points.
* **Missing queries**: the fused run has the union of the queries of its inputs;
  a run without a list for a query counts there as an empty list (a warning names
  the runs and counts). ranx requires equal query sets and raises otherwise; on
  equal query sets the results are equal.
* **Truncation** ``top_n``: only the first ``top_n`` documents of each list take
  part (cut by the tie rule, before normalisation): a document cut from a list is
  absent from it.
* **Ties**: ranks inside each input list (rank-based methods, ``rank``
  normalisation, the ``top_n`` cut) follow the tie rule ``ties`` (default
  ``docid_asc``, seed 001 §3). ranx orders equal scores with numba's unstable
  quicksort, an order it does not specify, so on lists with equal scores ranx and
  evalcore may give different values; without equal scores in a list they are
  equal. Equal *fused* values are ordered by the tie rule used when the fused run
  is evaluated or written (``docid_asc`` reproduces seed 001 §7.2). RRF values that
  are equal as rationals are equal doubles (whatever the runs' order: :mod:`evalcore._fusion_ties`),
  so that tie rule sees every exact tie.
* **Summation order** (``rrf``): ``Σ_S`` adds the runs' terms in the order the runs
  are given, left to right, in float64 (``((t_1 + t_2) + t_3) + …``, ``t_S = w_S / (c + rank_S(d))``,
  0 where S does not list d): ranx's order, so the values equal ranx's to the last bit, except
  on the rare rows whose value lies within rounding error of another value of its query
  (exact ties included), which take the correctly rounded exact value (ranx's may differ there
  by an ulp or two, and split an exact tie). ``wsum`` and the other sums also add run by run.
* Normalisations only change scores, never the order inside a list, so they are
  refused (:class:`~evalcore.errors.OptionError`) for the rank-based methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ._fusion_ties import rrf_values
from ._fusion_union import _union_codes, _unique_inverse
from .data import Run
from .errors import OptionError, warn
from .random_baseline import random_run  # noqa: F401  (public here, as before: evalcore.fusion.random_run)
from .ranking import rank_order

__all__ = [
    "METHODS", "NORMS", "RANK_METHODS", "WEIGHTED_METHODS", "canonical_method", "canonical_norm", "normalize_run",
    "fuse", "weighted_rrf", "random_run",
]

#: Fusion methods (canonical name -> formula, see the module docstring).
METHODS: dict[str, str] = {
    "rrf": "Σ w_S / (c + rank_S(d)) (weighted reciprocal rank fusion, Cormack, Clarke & Büttcher, SIGIR 2009)",
    "combsum": "Σ s_S(d) (CombSUM)",
    "combmnz": "|{S ∋ d}| · Σ s_S(d) (CombMNZ)",
    "wsum": "Σ w_S · s_S(d) (weighted sum)",
    "isr": "|{S ∋ d}| · Σ 1 / rank_S(d)² (inverse square rank)",
    "bordafuse": "Σ Borda points: n − rank + 1, unranked (n − |S| + 1) / 2 (BordaFuse)",
}
#: Score normalisations (canonical name -> formula).
NORMS: dict[str, str] = {
    "none": "s",
    "min-max": "(s − min) / max(max − min, 1e-9)",
    "max": "s / max(max, 1e-9)",
    "sum": "(s − min) / max(Σ s − n·min, 1e-9)",
    "z-score": "(s − mean) / max(std, 1e-9) (population std)",
    "rank": "1 − (rank − 1) / n",
}
#: Methods that use only the order of each list (no normalisation applies).
RANK_METHODS: frozenset[str] = frozenset({"rrf", "isr", "bordafuse"})
#: Methods that take per-run weights.
WEIGHTED_METHODS: frozenset[str] = frozenset({"rrf", "wsum"})
#: ranx's floor on every normalisation denominator.
EPS = 1e-9

_METHOD_ALIASES = {
    "weighted_rrf": "rrf", "sum": "combsum", "comb_sum": "combsum", "mnz": "combmnz",
    "comb_mnz": "combmnz", "weighted_sum": "wsum", "borda": "bordafuse", "borda_fuse": "bordafuse",
}  # fmt: skip
_NORM_ALIASES = {
    "min_max": "min-max", "minmax": "min-max", "zmuv": "z-score", "zscore": "z-score",
    "z_score": "z-score", "z": "z-score",
}  # fmt: skip


def canonical_method(method: str) -> str:
    """Canonical fusion method name (aliases: ranx's ``sum``, ``mnz``, ``comb_sum``...); else OptionError."""
    m = str(method).strip().lower()
    m = _METHOD_ALIASES.get(m, m)
    if m not in METHODS:
        raise OptionError(f"unknown fusion method {method!r}; supported: {', '.join(METHODS)}")
    return m


def canonical_norm(norm: str | None) -> str:
    """Canonical normalisation name (``None`` = ``"none"``, ranx's ``zmuv`` = ``z-score``); else OptionError."""
    n = "none" if norm is None else str(norm).strip().lower()
    n = _NORM_ALIASES.get(n, n)
    if n not in NORMS:
        raise OptionError(f"unknown normalisation {norm!r}; supported: {', '.join(NORMS)}")
    return n


# --------------------------------------------------------------------------- ranked lists


@dataclass(frozen=True)
class _Lists:
    """One run's (cut) ranked lists as flat rows, grouped by query and ranked inside.

    ``rows`` are the run's rows in that order, ``q`` their query codes (into
    ``run.query_ids``), ``score`` float64, ``rank`` 1-based, ``starts`` the
    first row of each query group, ``length`` each group's length.  Ids stay
    codes: :attr:`qid` and :attr:`doc` give the strings when they are needed.
    """

    run: Run
    rows: np.ndarray
    q: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    starts: np.ndarray
    length: np.ndarray

    @property
    def qid(self) -> np.ndarray:
        """Query id (object array) of each row."""
        return self.run.query_ids[self.q]

    @property
    def doc(self) -> np.ndarray:
        """Document id (object array) of each row."""
        return self.run.docs_at(self.rows)

    def per_row(self, values: np.ndarray) -> np.ndarray:
        """A per-group array repeated on each row of its group."""
        return np.repeat(values, self.length)


def _ranked(run: Run, *, ties: str, top_n: int | None) -> _Lists:
    order, pos = rank_order(run, ties=ties)
    keep = np.ones(len(order), dtype=bool) if top_n is None else pos < top_n
    rows = order[keep]
    q = run.q[rows]
    n = len(rows)
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if n else np.zeros(0, dtype=np.int64)
    length = np.diff(np.r_[starts, n]).astype(np.int64)
    return _Lists(run, rows, q, run.scores[rows].astype(np.float64), (pos[keep] + 1).astype(np.int64), starts,
                  length)


def _normalized_scores(lists: _Lists, norm: str) -> np.ndarray:
    """The scores of ``lists`` under ``norm`` (see :data:`NORMS`), group by group."""
    s = lists.score
    if norm == "none" or len(s) == 0:
        return s.copy()
    if norm == "rank":
        return 1.0 - (lists.rank - 1) / lists.per_row(lists.length).astype(np.float64)
    st = lists.starts
    lo = lists.per_row(np.minimum.reduceat(s, st))
    if norm == "min-max":
        hi = lists.per_row(np.maximum.reduceat(s, st))
        return (s - lo) / np.maximum(hi - lo, EPS)
    if norm == "max":
        return s / np.maximum(lists.per_row(np.maximum.reduceat(s, st)), EPS)
    n = lists.length.astype(np.float64)
    total = np.add.reduceat(s, st)
    if norm == "sum":
        return (s - lo) / lists.per_row(np.maximum(total - np.minimum.reduceat(s, st) * n, EPS))
    mean = lists.per_row(total / n)  # z-score
    std = np.sqrt(np.add.reduceat((s - mean) ** 2, st) / n)
    return (s - mean) / lists.per_row(np.maximum(std, EPS))


def normalize_run(run: Run, *, norm: str, ties: str = "docid_asc", top_n: int | None = None,
              name: str | None = None) -> Run:
    """One run with its scores normalised per query (see :data:`NORMS`).

    Parameters
    ----------
    run : Run
    norm : str
        ``none``, ``min-max``, ``max``, ``sum``, ``z-score`` (alias ``zmuv``) or ``rank``.
    ties : str
        Tie rule deciding ranks (``rank`` normalisation) and the ``top_n`` cut.
    top_n : int, optional
        Keep only the first ``top_n`` documents of each list (then normalise those).
    name : str, optional
        Name of the result (default: the run's name).

    Returns
    -------
    Run
        Same queries and documents (cut to ``top_n``), normalised scores.

    Examples
    --------
    >>> r = Run.from_dict({"q": {"a": 3.0, "b": 1.0, "c": 2.0}})
    >>> normalize_run(r, norm="min-max").to_dict()["q"]
    {'a': 1.0, 'c': 0.5, 'b': 0.0}
    """
    norm = canonical_norm(norm)
    _check_top_n(top_n)
    lists = _ranked(run, ties=ties, top_n=top_n)
    return Run.from_records(lists.qid, lists.doc, _normalized_scores(lists, norm),
                            name=run.name if name is None else name, check_duplicates=False, check_ids=False)


# --------------------------------------------------------------------------- fusion


def _check_top_n(top_n: int | None) -> None:
    if top_n is not None and (isinstance(top_n, bool) or int(top_n) != top_n or top_n < 1):
        raise OptionError(f"top_n must be an integer >= 1, got {top_n!r}")


def _run_list(runs: Sequence[Run] | Mapping[str, Run]) -> list[Run]:
    if isinstance(runs, Mapping):
        run_list = [r if r.name == n else r.renamed(str(n)) for n, r in runs.items()]
    else:
        run_list = list(runs)
    if not run_list:
        raise OptionError("fusion needs at least one run")
    names = [r.name for r in run_list]
    if len(set(names)) != len(names):
        raise OptionError(f"runs to fuse must have distinct names, got {names}")
    return run_list


def check_weights(weights: Mapping[str, float] | Sequence[float] | None, names: Sequence[str]) -> np.ndarray:
    """Weights as a float array in run order (default 1 each); finite, >= 0, not all 0."""
    if weights is None:
        w = [1.0] * len(names)
    elif isinstance(weights, Mapping):
        unknown = set(weights) - set(names)
        if unknown:
            raise OptionError(f"weights given for unknown runs {sorted(unknown)}; runs are {list(names)}")
        w = [float(weights.get(n, 1.0)) for n in names]
    else:
        w = [float(x) for x in weights]
        if len(w) != len(names):
            raise OptionError(f"{len(w)} weights for {len(names)} runs")
    if any(not np.isfinite(x) or x < 0 for x in w) or not any(x > 0 for x in w):
        raise OptionError(f"weights must be finite, >= 0 and not all 0, got {w}")
    return np.asarray(w, dtype=np.float64)


@dataclass(frozen=True)
class Prepared:
    """Inputs of one fusion, reduced to what the weights act on.

    For every (query, document) of the union (``qid``/``doc``, object arrays of
    length m) the fused value is, for the weighted methods, ``Σ_S w_S / (c + columns[:, S])``
    (``rrf``: ``columns`` holds the ranks, ``inf`` where S does not list the
    document; terms added in run order, left to right, and exact ties kept equal,
    :func:`evalcore._fusion_ties.rrf_values`) or ``Σ_S w_S · columns[:, S]``
    (``wsum``: the normalised score, 0 where absent, summed run after run as ranx does); for the other methods it is
    ``base`` (``columns`` None). Built once, fused under many weights
    (:mod:`evalcore.fusion_search`) and, for ``rrf``, any ``c`` (the dashboard's
    preview as the user moves them).
    """

    names: tuple[str, ...]
    method: str
    query_ids: np.ndarray
    q: np.ndarray
    doc_vocab: np.ndarray
    d: np.ndarray
    base: np.ndarray
    columns: np.ndarray | None
    c: float = 60.0
    search_depth: int | None = None  # the least of the inputs' when each is an exact search's and no top_n cuts them

    @property
    def qid(self) -> np.ndarray:
        """Query id of each union row."""
        return self.query_ids[self.q]

    @property
    def doc(self) -> np.ndarray:
        """Document id of each union row."""
        return self.doc_vocab[self.d]

    def values(self, weights: np.ndarray | None = None, *, c: float | None = None) -> np.ndarray:
        """Fused value of every union row (shape (m,)) under ``weights`` (run order) and, for ``rrf``, ``c``
        (default: the one given to :func:`prepare`)."""
        if self.columns is None:
            return self.base
        c = self.c if c is None else _check_c(c)
        w = np.ones(len(self.names)) if weights is None else np.asarray(weights, dtype=np.float64)
        if self.method == "rrf":  # exact ties stay ties (seed 001 §7.2's tie-breaker must see them)
            return rrf_values(self.columns, w, c, self.q)
        out = self.base.copy()
        for j in range(self.columns.shape[1]):  # run by run, in run order (as ranx sums its runs)
            out += w[j] * self.columns[:, j]
        return out

    def subset(self, query_ids: Sequence[str]) -> Prepared:
        """The rows of the given queries only, in their order (ids not in the union are left out): each
        query's fused values are those of the whole (a weight search fuses its tuning queries only)."""
        wanted = {str(x) for x in query_ids}
        kept = np.flatnonzero(np.fromiter((str(x) in wanted for x in self.query_ids), bool, len(self.query_ids)))
        code = np.full(len(self.query_ids), -1, dtype=np.int64)
        code[kept] = np.arange(len(kept))
        rows = code[self.q] >= 0
        return replace(self, query_ids=self.query_ids[kept], q=code[self.q[rows]], d=self.d[rows],
                       base=self.base[rows], columns=None if self.columns is None else self.columns[rows])

    def run(self, weights: np.ndarray | None = None, *, name: str = "fused", c: float | None = None) -> Run:
        """The fused run under ``weights`` (and ``c``, see :meth:`values`)."""
        run = Run.from_codes(self.query_ids, self.q, self.doc_vocab, self.d, self.values(weights, c=c), name=name,
                             check_duplicates=False, check_ids=False)  # (the runs' own ids)
        return run if self.search_depth is None else run.searched(self.search_depth)  # (unions of whole lists)


def _check_c(c: float) -> float:
    if isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating)) or not np.isfinite(c) or c <= -1:
        raise OptionError(f"c must be a finite number > -1, got {c}")
    return float(c)


def prepare(
    runs: Sequence[Run] | Mapping[str, Run], *, method: str = "rrf", norm: str | None = "none",
    c: float = 60.0, top_n: int | None = None, ties: str = "docid_asc",
) -> Prepared:
    """Check the options and reduce the runs to a :class:`Prepared` fusion (see :func:`fuse`)."""
    method, norm = canonical_method(method), canonical_norm(norm)
    run_list = _run_list(runs)
    if method in RANK_METHODS and norm != "none":
        raise OptionError(f"{method} fuses ranks: a score normalisation ({norm}) does not apply; use norm 'none'")
    c = _check_c(c)
    _check_top_n(top_n)
    lists = [_ranked(r, ties=ties, top_n=top_n) for r in run_list]
    names = tuple(r.name for r in run_list)

    qc, qu, dc, du = _union_codes(lists)
    uniq, inv = _unique_inverse(qc * max(len(du), 1) + dc)
    m = len(uniq)
    run_of_row = np.repeat(np.arange(len(lists)), [len(x.rows) for x in lists])
    _warn_missing_queries(lists, names, qu)

    present = np.bincount(inv, minlength=m).astype(np.float64)  # |{S ∋ d}|
    rank = np.concatenate([x.rank for x in lists]).astype(np.float64)
    score = None if method in RANK_METHODS else np.concatenate([_normalized_scores(x, norm) for x in lists])
    columns, base = None, np.zeros(m, dtype=np.float64)
    if method in WEIGHTED_METHODS:
        columns = np.full((m, len(lists)), np.inf if method == "rrf" else 0.0)
        columns[inv, run_of_row] = rank if method == "rrf" else score
    elif method == "combsum":
        base = _sum_by_run(inv, run_of_row, score, m)
    elif method == "combmnz":
        base = _sum_by_run(inv, run_of_row, score, m) * present
    elif method == "isr":
        base = _sum_by_run(inv, run_of_row, 1.0 / (rank * rank), m) * present
    else:
        base = _borda(lists, qc, inv, m, len(qu))
    nd = max(len(du), 1)
    depths = [r.search_depth for r in run_list]
    depth = min(depths) if top_n is None and depths and None not in depths else None
    return Prepared(names, method, np.asarray(qu, dtype=object), (uniq // nd).astype(np.int64),
                    np.asarray(du, dtype=object), (uniq % nd).astype(np.int64), base, columns, c, depth)


def _sum_by_run(inv: np.ndarray, run_of_row: np.ndarray, values: np.ndarray, m: int) -> np.ndarray:
    """Σ over runs of each union row's values, added run after run (ranx's order)."""
    out = np.zeros(m, dtype=np.float64)
    for j in np.unique(run_of_row):
        sel = run_of_row == j
        out[inv[sel]] += values[sel]  # a run lists a document once: no repeated index
    return out


def _borda(lists: list[_Lists], qc: np.ndarray, inv: np.ndarray, m: int, n_queries: int) -> np.ndarray:
    """BordaFuse values of the union rows (see the module docstring)."""
    row_query = np.zeros(m, dtype=np.int64)
    row_query[inv] = qc
    n_cand = np.bincount(row_query, minlength=n_queries).astype(np.float64)  # candidates per query
    out = np.zeros(m, dtype=np.float64)
    at = 0
    for x in lists:
        # list length of this run for every query of the union (0 where it has no list)
        rows = slice(at, at + len(x.qid))
        at += len(x.qid)
        length = np.zeros(n_queries, dtype=np.float64)
        if len(x.starts):
            length[qc[rows][x.starts]] = x.length
        unranked = (n_cand - length + 1.0) / 2.0
        points = unranked[row_query]  # every candidate starts unranked in this run...
        listed = inv[rows]
        points[listed] = n_cand[row_query[listed]] - x.rank + 1.0  # ...unless the run lists it
        out += points
    return out


def _warn_missing_queries(lists: list[_Lists], names: Sequence[str], all_queries: np.ndarray) -> None:
    n = len(all_queries)
    missing = []
    for name, x in zip(names, lists, strict=True):
        k = n - len(x.starts)
        if k:
            missing.append(f"{name!r} lacks {k}")
    if missing:
        warn(f"fusion: of the {n} queries the fused runs answer (together), run {', run '.join(missing)}; "
             "there a run counts as an empty list")


def fuse(
    runs: Sequence[Run] | Mapping[str, Run],
    *,
    method: str = "rrf",
    norm: str | None = "none",
    weights: Mapping[str, float] | Sequence[float] | None = None,
    c: float = 60.0,
    top_n: int | None = None,
    ties: str = "docid_asc",
    name: str = "fused",
) -> Run:
    """Fuse runs with one of :data:`METHODS` after a normalisation of :data:`NORMS`.

    The formulas and every convention (missing documents and queries, ``top_n``,
    ties, differences with ranx) are in the module docstring.

    Parameters
    ----------
    runs : sequence of Run or mapping name -> Run
        Distinct names.
    method : str, default "rrf"
        ``rrf``, ``combsum``, ``combmnz``, ``wsum``, ``isr``, ``bordafuse``
        (ranx's names ``sum``, ``mnz`` are aliases).
    norm : str, default "none"
        Score normalisation for ``combsum``, ``combmnz`` and ``wsum``; must be
        ``none`` for the rank-based methods.
    weights : mapping run name -> weight, or sequence in run order, optional
        ``rrf`` and ``wsum`` only; default 1 each. Finite, >= 0, not all 0.
    c : float, default 60
        RRF constant (``rrf`` only), > -1.
    top_n : int, optional
        Truncation depth of each input list.
    ties : str, default "docid_asc"
        Tie rule ranking each input list (see :mod:`evalcore.ranking`).
    name : str
        Name of the fused run.

    Returns
    -------
    Run
        One row per (query, document) listed by any input; score = fused value.

    Examples
    --------
    >>> a = Run.from_ranked_lists({"q": ["x", "y"]}, name="a")
    >>> b = Run.from_ranked_lists({"q": ["y", "z"]}, name="b")
    >>> fuse([a, b], method="combmnz", norm="min-max").to_dict()["q"]
    {'x': 1.0, 'y': 2.0, 'z': 0.0}
    >>> fuse([a, b], method="bordafuse").to_dict()["q"]  # n = 3 candidates; unranked points (3 - 2 + 1) / 2
    {'x': 4.0, 'y': 5.0, 'z': 3.0}
    """
    method = canonical_method(method)
    names = [r.name for r in _run_list(runs)]
    if weights is not None and method not in WEIGHTED_METHODS:
        raise OptionError(f"{method} takes no weights; weighted methods: {', '.join(sorted(WEIGHTED_METHODS))}")
    w = check_weights(weights, names)
    return prepare(runs, method=method, norm=norm, c=c, top_n=top_n, ties=ties).run(w, name=name)


def weighted_rrf(
    runs: Sequence[Run] | Mapping[str, Run],
    *,
    weights: Mapping[str, float] | Sequence[float] | None = None,
    c: float = 60.0,
    top_n: int | None = None,
    ties: str = "docid_asc",
    name: str = "rrf",
) -> Run:
    """Fuse runs by weighted reciprocal rank (``fuse(method="rrf")``).

    ``RRF(q, d) = Σ_S w_S / (c + rank_S(q, d))`` where ``rank_S`` is the
    1-based rank of d in run S (its evaluation order under ``ties``). With
    ``top_n``, only the first ``top_n`` documents of each list take part: a
    document absent from (or cut from) a list contributes 0 for that list.
    Candidates are the union of the (cut) lists of every run for the query.

    The fused run's score is the RRF value; equal RRF values are ordered by
    the tie rule used when the fused run is evaluated — ``docid_asc`` reproduces
    seed 001 §7.2 ("tie-breaker: d ascending").

    Parameters
    ----------
    runs : sequence of Run or mapping name -> Run
    weights : mapping run name -> weight, or sequence in run order; default 1 each.
        Weights must be finite and >= 0, not all 0.
    c : float, default 60
        Must be > -1 so that every denominator is positive.
    top_n : int, optional
        Truncation depth per input list.
    ties : str
        Tie rule used to rank each *input* run (see :mod:`evalcore.ranking`).
    name : str
        Name of the fused run.

    Returns
    -------
    Run

    Examples
    --------
    >>> a = Run.from_ranked_lists({"q": ["x", "y"]}, name="a")
    >>> b = Run.from_ranked_lists({"q": ["y", "z"]}, name="b")
    >>> f = weighted_rrf([a, b], weights={"a": 1.0, "b": 2.0}, c=60)
    >>> round(f.to_dict()["q"]["y"], 6) == round(1 / 62 + 2 / 61, 6)
    True
    """
    return fuse(runs, method="rrf", weights=weights, c=c, top_n=top_n, ties=ties, name=name)

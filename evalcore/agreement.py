r"""Agreement between runs: how close one run's rankings are to another's (seed 000's question).

For every pair of runs (A, B), every query and every cutoff k, with ``A_k`` and
``B_k`` the top-k lists (evaluation order under the tie rule ``ties``; ``k = 0``
means the whole lists) and ``X_d = |A_{:d} ∩ B_{:d}|`` the overlap at depth d:

``overlap``
    Jaccard of the top-k sets, ``|A_k ∩ B_k| / |A_k ∪ B_k|``.
``rbo(p=P)``
    Rank-biased overlap (Webber, Moffat & Zobel 2010), the **extrapolated**
    variant RBO_ext, their eq. 32 for lists of uneven length (eq. 30 when the
    lengths are equal). With ``s`` and ``l`` the lengths of the shorter and the
    longer of ``A_k``, ``B_k`` (where ``d > s``, the shorter list is taken whole:
    ``X_d = |S ∩ L_{:d}|``)::

        RBO_ext = (1-p)/p · [ Σ_{d=1}^{l} X_d/d · p^d + Σ_{d=s+1}^{l} X_s (d-s)/(s d) · p^d ]
                  + [ (X_l - X_s)/l + X_s/s ] · p^l

    In [0, 1]; 1 for identical lists, 0 for disjoint ones; symmetric. The
    persistence ``p`` in (0, 1) weighs the top: depth d has weight ∝ p^(d-1).
``kendall_tau``
    Kendall's τ between the ranks in A and in B of the documents in both
    ``A_k`` and ``B_k`` (``scipy.stats.kendalltau``, variant τ-b; the ranks in one
    list are distinct, so τ-b equals τ-a here): 1 for the same order, −1 for the
    reversed order. Undefined (NaN) with fewer than 2 shared documents.

Missing data: the queries are the union of the runs' queries (or ``query_ids``);
a run without a list for a query has an empty list there. One empty list
against a non-empty one gives overlap 0 and RBO 0; two empty lists give NaN for
every measure (nothing to compare). NaN values are counted (``n_undefined``)
and left out of the means by :func:`summarize_agreement`.

For embedding runs against a reference model, seed 000's other agreement —
Spearman's ρ and the mean absolute error of pairwise cosine similarities — is
:func:`evalcore.embedding_runs.reference_agreement`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .data import Run
from .errors import OptionError, warn
from .ranking import rank_order
from .stats.paired import _check_prob

__all__ = [
    "MEASURES",
    "AGREEMENT_COLUMNS",
    "SUMMARY_COLUMNS",
    "rbo_name",
    "overlap",
    "rbo_ext",
    "kendall_tau",
    "agreement",
    "summarize_agreement",
    "agreement_matrix",
]

#: Agreement measures (name -> definition; see the module docstring).
MEASURES: dict[str, str] = {
    "overlap": "Jaccard of the top-k sets |A∩B| / |A∪B|",
    "rbo": "rank-biased overlap RBO_ext(p) of the top-k lists (Webber et al. 2010, eq. 32)",
    "kendall_tau": "Kendall's tau-b of the ranks of the documents in both top-k lists",
}
AGREEMENT_COLUMNS: tuple[str, ...] = ("run_a", "run_b", "query_id", "measure", "k", "value")
SUMMARY_COLUMNS: tuple[str, ...] = ("run_a", "run_b", "measure", "k", "n", "n_undefined", "mean", "std")
_CELLS = 8_000_000  # dense overlap-matrix cells per block of queries


def rbo_name(p: float) -> str:
    """The table's measure name of RBO with persistence ``p``: ``rbo(p=0.9)``."""
    return f"rbo(p={float(p):g})"


def _check_p(p: float) -> float:
    return _check_prob("RBO's p", p)


# --------------------------------------------------------------------------- one pair of lists


def _entries(a: Sequence, b: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """0-based positions (in a, in b) of the items both lists hold."""
    where_b = {x: j for j, x in enumerate(b)}
    pairs = [(i, where_b[x]) for i, x in enumerate(a) if x in where_b]
    arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1]


def overlap(a: Sequence, b: Sequence) -> float:
    """Jaccard of two lists' item sets (NaN when both are empty).

    >>> overlap(["x", "y", "z"], ["y", "x", "w"])
    0.5
    """
    sa, sb = set(a), set(b)
    return float("nan") if not (sa or sb) else len(sa & sb) / len(sa | sb)


def rbo_ext(a: Sequence, b: Sequence, *, p: float = 0.9) -> float:
    """RBO_ext of two rankings without repeated items (module docstring; NaN when both are empty).

    >>> rbo_ext(["a", "b", "c"], ["a", "b", "c"], p=0.9)
    1.0
    >>> round(rbo_ext(["a", "b"], ["b", "a"], p=0.5), 6)   # (1-p)/p·(0/1·p + 2/2·p²) + 2/2·p²
    0.5
    """
    p = _check_p(p)
    i, j = _entries(a, b)
    return float(_rbo_rows(np.zeros(len(i), np.int64), np.maximum(i, j) + 1, np.array([len(a)]),
                           np.array([len(b)]), p)[0])  # fmt: skip


def kendall_tau(a: Sequence, b: Sequence) -> float:
    """Kendall's τ-b of the ranks of the items both rankings hold (NaN with fewer than 2).

    >>> kendall_tau(["a", "b", "c", "x"], ["c", "b", "a"])
    -1.0
    """
    i, j = _entries(a, b)
    return _tau(i, j)


def _tau(i: np.ndarray, j: np.ndarray) -> float:
    if len(i) < 2:
        return float("nan")
    from scipy.stats import kendalltau

    return float(kendalltau(i, j, variant="b").statistic)


# --------------------------------------------------------------------------- vectorised over queries


def _rbo_rows(q: np.ndarray, m: np.ndarray, len_a: np.ndarray, len_b: np.ndarray, p: float) -> np.ndarray:
    """RBO_ext per query from the shared items' entry depths.

    Parameters
    ----------
    q : int array (e,)
        Query index (into ``len_a``) of each shared item.
    m : int array (e,)
        Depth at which the item enters the overlap, ``max(rank in A, rank in B)``
        (1-based); every shared item has ``m <= max(len_a, len_b)``.
    len_a, len_b : int arrays (n_queries,)
        Lengths of the two (already cut) lists.

    Returns
    -------
    float array (n_queries,)
    """
    nq = len(len_a)
    s = np.minimum(len_a, len_b)
    lng = np.maximum(len_a, len_b)
    out = np.full(nq, np.nan)
    out[(s == 0) & (lng > 0)] = 0.0
    width = int(lng.max(initial=0))
    if width == 0:
        return out
    d = np.arange(1, width + 1, dtype=np.float64)
    pw = p ** d
    cum_p = np.cumsum(pw)  # P_t
    cum_pd = np.cumsum(pw / d)  # Q_t
    order = np.argsort(q, kind="stable")
    q, m = q[order], m[order]
    step = max(1, _CELLS // width)
    for lo in range(0, nq, step):
        hi = min(nq, lo + step)
        a, b = np.searchsorted(q, [lo, hi])
        x = np.zeros((hi - lo, width), dtype=np.float64)
        np.add.at(x, (q[a:b] - lo, m[a:b] - 1), 1.0)
        x = np.cumsum(x, axis=1)  # X_d, d = 1..width
        ss, ll = s[lo:hi], lng[lo:hi]
        ok = ss > 0
        rows = np.flatnonzero(ok)
        ss, ll = ss[ok], ll[ok]
        term = np.cumsum(x[rows] * (pw / d), axis=1)[np.arange(len(rows)), ll - 1]  # Σ_{d<=l} X_d/d p^d
        xs = x[rows, ss - 1]
        xl = x[rows, ll - 1]
        tail = xs / ss * (cum_p[ll - 1] - cum_p[ss - 1]) - xs * (cum_pd[ll - 1] - cum_pd[ss - 1])
        val = (1 - p) / p * (term + tail) + ((xl - xs) / ll + xs / ss) * p ** ll.astype(np.float64)
        out[lo + rows] = np.clip(val, 0.0, 1.0)  # rounding only: the value is in [0, 1]
    return out


class _Lists:
    """A run's ranked lists cut at ``depth``, on a shared query and document coding."""

    def __init__(self, run: Run, *, depth: int | None, ties: str, query_index: pd.Index, doc_index: pd.Index):
        order, pos = rank_order(run, ties=ties)
        keep = np.ones(len(order), dtype=bool) if depth is None else pos < depth
        rows = order[keep]
        self.q = query_index.get_indexer(run.query_ids)[run.q[rows]]  # codes mapped, not every row's string
        inside = self.q >= 0  # queries outside ``query_ids`` are left out
        rows = rows[inside]
        self.q = self.q[inside].astype(np.int64)
        self.pos = pos[keep][inside].astype(np.int64)
        by_query = np.lexsort((self.pos, self.q))  # in ``query_index`` order, then by rank (once per run)
        rows, self.q, self.pos = rows[by_query], self.q[by_query], self.pos[by_query]
        self.doc = run.doc_codes_in(doc_index.to_numpy())[rows].astype(np.int64)
        self.length = np.bincount(self.q, minlength=len(query_index)).astype(np.int64)
        self.n_docs = len(doc_index)
        self._keys: np.ndarray | None = None
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None

    def keys(self) -> np.ndarray:
        if self._keys is None:
            self._keys = self.q * self.n_docs + self.doc
        return self._keys

    def sorted_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """(order, the keys in that order), sorted once: each run meets every other run."""
        if self._sorted is None:
            order = np.argsort(self.keys(), kind="stable")
            self._sorted = (order, self.keys()[order])
        return self._sorted


def _shared(a: _Lists, b: _Lists) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, rank in A, rank in B), 0-based ranks, of every document both lists hold, in A's order
    (by query, then rank in A)."""
    ob, kb_sorted = b.sorted_keys()
    ka = a.keys()
    loc = np.minimum(np.searchsorted(kb_sorted, ka), max(len(kb_sorted) - 1, 0))
    found = (kb_sorted[loc] == ka) if len(kb_sorted) else np.zeros(len(ka), dtype=bool)
    return a.q[found], a.pos[found], b.pos[ob[loc[found]]]


def _pair_values(a: _Lists, b: _Lists, ks: Sequence[int], measures: Sequence[str], p: float
                 ) -> list[tuple[str, int, np.ndarray]]:
    """(measure name, k, value per query) for one pair of runs."""
    sq, si, sj = _shared(a, b)
    m = np.maximum(si, sj) + 1
    nq = len(a.length)
    out = []
    for k in ks:
        cut = m <= k if k else np.ones(len(m), dtype=bool)
        la = np.minimum(a.length, k) if k else a.length
        lb = np.minimum(b.length, k) if k else b.length
        for meas in measures:
            if meas == "overlap":
                x = np.bincount(sq[cut], minlength=nq).astype(np.float64)
                union = la + lb - x
                with np.errstate(invalid="ignore", divide="ignore"):
                    val = np.where(union > 0, x / union, np.nan)
                out.append(("overlap", k, val))
            elif meas == "rbo":
                out.append((rbo_name(p), k, _rbo_rows(sq[cut], m[cut], la, lb, p)))
            else:
                out.append(("kendall_tau", k, _tau_rows(sq[cut], sj[cut], nq)))  # by query, then rank in A
    return out


def _tau_rows(qs: np.ndarray, jj: np.ndarray, nq: int) -> np.ndarray:
    """Kendall's τ-b per query of ranks without ties, all queries at once (NaN with fewer than 2 items).

    ``qs`` sorted, and within a query the items in their order in A; ``jj`` their ranks in B. Ranks in
    one list are distinct, so τ-b = (C − D) / (n(n−1)/2) with D the pairs out of order in ``jj``,
    computed as ``scipy.stats.kendalltau(variant="b")`` computes it (same float operations, same bits;
    one SciPy call per query and pair took minutes for 14 runs x 20,000 queries). Queries of similar
    length are padded to one matrix (pads rank after everything, in order: no pair out of order) and
    D is counted one diagonal offset at a time, on contiguous slices.
    """
    val = np.full(nq, np.nan)
    bounds = np.searchsorted(qs, np.arange(nq + 1))
    sizes = np.diff(bounds)
    big = int(jj.max()) + 1 if len(jj) else 0
    size_class = np.floor(np.log2(np.maximum(sizes, 1))).astype(np.int64)
    for c in np.unique(size_class[sizes >= 2]).tolist():
        rows = np.flatnonzero((size_class == c) & (sizes >= 2))
        width = int(sizes[rows].max())
        col = np.arange(width)
        inside = col < sizes[rows][:, None]
        block = np.where(inside, jj[np.minimum(bounds[rows][:, None] + col, len(jj) - 1)], big + col)
        dis = np.zeros(len(rows), dtype=np.int64)
        for d in range(1, width):
            dis += np.count_nonzero(block[:, :-d] > block[:, d:], axis=1)
        n = sizes[rows]
        tot = n * (n - 1) // 2
        val[rows] = np.clip((tot - 2 * dis) / np.sqrt(tot) / np.sqrt(tot), -1.0, 1.0)
    return val


def _check_ks(k: int | Iterable[int]) -> list[int]:
    ks = [k] if isinstance(k, (int, np.integer)) else list(k)
    if not ks:
        raise OptionError("give at least one cutoff k (0 = whole lists)")
    for x in ks:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
            raise OptionError(f"cutoffs must be integers >= 0 (0 = whole lists), got {x!r}")
    return sorted({int(x) for x in ks})


def _check_measures(measures: str | Iterable[str]) -> list[str]:
    ms = [measures] if isinstance(measures, str) else list(measures)
    bad = [x for x in ms if x not in MEASURES]
    if bad or not ms:
        raise OptionError(f"unknown agreement measure(s) {bad}; supported: {', '.join(MEASURES)}")
    return list(dict.fromkeys(ms))


def agreement(
    runs: Sequence[Run] | Mapping[str, Run],
    *,
    k: int | Iterable[int] = (10,),
    measures: str | Iterable[str] = ("overlap", "rbo", "kendall_tau"),
    p: float = 0.9,
    ties: str = "trec",
    query_ids: Sequence[str] | np.ndarray | None = None,
    include_self: bool = False,
) -> pd.DataFrame:
    """Per-query agreement of every pair of runs (see the module docstring).

    Parameters
    ----------
    runs : sequence of Run or mapping name -> Run
        At least two (or one with ``include_self``), distinct names.
    k : int or iterable of int, default 10
        Cutoffs; 0 = the whole lists.
    measures : iterable of {"overlap", "rbo", "kendall_tau"}
    p : float, default 0.9
        RBO's persistence, in (0, 1).
    ties : str, default "trec"
        Tie rule ranking each run (see :mod:`evalcore.ranking`).
    query_ids : sequence of str, optional
        The queries compared (e.g. the evaluated qrels queries); default the
        union of the runs' queries.
    include_self : bool, default False
        Also compare each run with itself (the diagonal of
        :func:`agreement_matrix`).

    Returns
    -------
    DataFrame
        Long table ``run_a, run_b, query_id, measure, k, value``: one row per pair
        (``run_a`` before ``run_b`` in the given order) × query × measure × k
        (``rbo`` is named :func:`rbo_name`). ``run_a``, ``run_b``, ``query_id``,
        ``measure`` are categoricals.
    """
    run_list = [r if r.name == n else r.renamed(str(n)) for n, r in runs.items()] if isinstance(runs, Mapping) \
        else list(runs)  # fmt: skip
    names = [r.name for r in run_list]
    if len(set(names)) != len(names):
        raise OptionError(f"runs must have distinct names, got {names}")
    if len(run_list) < (1 if include_self else 2):
        raise OptionError("agreement needs at least two runs")
    ks = _check_ks(k)
    ms = _check_measures(measures)
    p = _check_p(p)
    if query_ids is None:
        qids = pd.unique(np.concatenate([r.query_ids for r in run_list]).astype(object))
    else:
        qids = pd.unique(np.asarray([str(x) for x in query_ids], dtype=object))
    qindex = pd.Index(qids)
    _warn_missing_queries(run_list, qindex)
    depth = None if 0 in ks else max(ks)
    docs = pd.Index(pd.unique(np.concatenate([r.doc_vocab for r in run_list]).astype(object)))  # each run's distinct
    lists = [_Lists(r, depth=depth, ties=ties, query_index=qindex, doc_index=docs) for r in run_list]
    pairs = list(itertools.combinations_with_replacement(range(len(lists)), 2)) if include_self \
        else list(itertools.combinations(range(len(lists)), 2))  # fmt: skip
    parts = []
    for ia, ib in pairs:
        for meas, kk, val in _pair_values(lists[ia], lists[ib], ks, ms, p):
            parts.append(pd.DataFrame({"run_a": names[ia], "run_b": names[ib], "query_id": qids,
                                       "measure": meas, "k": kk, "value": val}))  # fmt: skip
    table = pd.concat(parts, ignore_index=True)
    for col in ("run_a", "run_b"):
        table[col] = pd.Categorical(table[col], categories=names)
    table["query_id"] = pd.Categorical(table["query_id"], categories=qids)
    table["measure"] = table["measure"].astype("category")
    table["k"] = table["k"].astype(np.int64)
    return table[list(AGREEMENT_COLUMNS)]


def _warn_missing_queries(runs: Sequence[Run], queries: pd.Index) -> None:
    """One warning naming the runs that list none of some compared queries (there a run is an empty list)."""
    missing = [(r.name, int(len(queries) - np.count_nonzero(queries.isin(r.query_ids)))) for r in runs]
    missing = [(n, k) for n, k in missing if k]
    if missing:
        shared = np.ones(len(queries), dtype=bool)
        for r in runs:
            shared &= queries.isin(r.query_ids)
        hint = "" if shared.any() else "; no query is listed by every run: do their query ids match?"
        warn(f"agreement: of the {len(queries)} queries, " + ", ".join(f"run {n!r} lacks {k}" for n, k in missing)
             + "; there a run counts as an empty list (overlap and RBO 0 against any list)" + hint)


def summarize_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Mean agreement per pair × measure × k over the queries where it is defined.

    Returns
    -------
    DataFrame
        ``run_a, run_b, measure, k, n, n_undefined, mean, std``: ``n`` queries
        with a value, ``n_undefined`` with NaN (left out), ``std`` with ddof 1.
    """
    missing = set(AGREEMENT_COLUMNS) - set(table.columns)
    if missing:
        raise OptionError(f"an agreement table needs columns {list(AGREEMENT_COLUMNS)}; missing {sorted(missing)}")
    g = table.groupby(["run_a", "run_b", "measure", "k"], observed=True, sort=False)["value"]
    out = g.agg(n="count", mean="mean", std="std").reset_index()
    out["n_undefined"] = (g.size().to_numpy() - out["n"].to_numpy()).astype(np.int64)
    out["n"] = out["n"].astype(np.int64)
    return out[list(SUMMARY_COLUMNS)]


def agreement_matrix(summary: pd.DataFrame, *, measure: str, k: int, runs: Sequence[str] | None = None
                     ) -> pd.DataFrame:
    """Runs × runs matrix of the mean ``measure`` at ``k`` (symmetric; every measure here is).

    The diagonal holds the runs' agreement with themselves where the summary has
    it (:func:`agreement` with ``include_self=True``), NaN otherwise.
    """
    sel = summary[(summary["measure"].astype(str) == str(measure)) & (summary["k"] == int(k))]
    if sel.empty:
        raise OptionError(f"no {measure}@{k} in the agreement summary")
    names = list(runs) if runs is not None else list(dict.fromkeys(
        [*sel["run_a"].astype(str), *sel["run_b"].astype(str)]))  # fmt: skip
    mat = pd.DataFrame(np.nan, index=pd.Index(names, name="run"), columns=pd.Index(names, name="run"))
    for a, b, v in zip(sel["run_a"].astype(str), sel["run_b"].astype(str), sel["mean"], strict=True):
        if a in mat.index and b in mat.index:
            mat.loc[a, b] = v
            mat.loc[b, a] = v
    return mat

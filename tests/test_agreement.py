"""Agreement between runs (issue 11 item 9): overlap@k, RBO_ext(p), Kendall's tau over shared items.

The engine is vectorised over queries; here each measure is written out from its
definition, one query at a time (RBO_ext straight from Webber, Moffat & Zobel 2010,
eq. 32, with X_d computed from sets at every depth; tau by counting concordant and
discordant pairs), and compared on random tie-heavy runs with queries missing from
one side, lists of uneven length and every cutoff kind. Plus invariants.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from evalcore.agreement import (
    AGREEMENT_COLUMNS,
    agreement,
    agreement_matrix,
    kendall_tau,
    overlap,
    rbo_ext,
    rbo_name,
    summarize_agreement,
)
from evalcore.data import Run
from evalcore.errors import OptionError

# ----------------------------------------------------------------------------- independent definitions


def jaccard_def(a: list, b: list) -> float:
    sa, sb = set(a), set(b)
    return math.nan if not sa | sb else len(sa & sb) / len(sa | sb)


def rbo_def(a: list, b: list, p: float) -> float:
    """Webber et al. (2010) eq. 32, term by term; S the shorter list, L the longer."""
    if not a and not b:
        return math.nan
    S, L = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(S), len(L)  # noqa: E741 (the paper's names)
    if s == 0:
        return 0.0

    def X(d: int) -> int:  # overlap at depth d, the short list taken whole beyond its length
        return len(set(S[: min(d, s)]) & set(L[:d]))

    first = sum(X(d) / d * p**d for d in range(1, l + 1))
    second = sum(X(s) * (d - s) / (s * d) * p**d for d in range(s + 1, l + 1))
    return (1 - p) / p * (first + second) + ((X(l) - X(s)) / l + X(s) / s) * p**l


def tau_def(a: list, b: list) -> float:
    """(concordant - discordant) / (n (n-1) / 2) over the items both rankings hold (no ties in ranks)."""
    shared = [x for x in a if x in b]
    if len(shared) < 2:
        return math.nan
    ra = {x: i for i, x in enumerate(a)}
    rb = {x: i for i, x in enumerate(b)}
    conc = disc = 0
    for x, y in combinations(shared, 2):
        sgn = (ra[x] - ra[y]) * (rb[x] - rb[y])
        conc += sgn > 0
        disc += sgn < 0
    n = len(shared)
    return (conc - disc) / (n * (n - 1) / 2)


# ----------------------------------------------------------------------------- random runs


def random_run(rng: np.random.Generator, name: str, n_queries: int = 30, n_docs: int = 25) -> Run:
    d = {}
    for q in range(n_queries):
        if rng.random() < 0.15:
            continue  # query missing from this run
        docs = rng.choice(n_docs, size=int(rng.integers(1, 18)), replace=False)
        d[f"q{q}"] = {f"d{x}": float(rng.integers(0, 4)) for x in docs}  # heavy ties
    return Run.from_dict(d, name=name)


def ranked(run: Run, qid: str, ties: str) -> list[str]:
    return ranked_items(run.to_dict().get(qid, {}).items(), ties)


def ranked_items(items, ties: str) -> list[str]:
    """Doc ids of (doc id, score) pairs in the order of the tie rule ``ties``."""
    if ties == "docid_asc":
        return [d for d, _ in sorted(items, key=lambda kv: (-kv[1], kv[0]))]
    # trec: score descending, then doc id descending
    return [d for d, _ in sorted(sorted(items, key=lambda kv: kv[0], reverse=True), key=lambda kv: -kv[1])]


DEF = {"overlap": jaccard_def, "kendall_tau": tau_def}


@pytest.mark.parametrize("ties", ["docid_asc", "trec"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_value_equals_its_definition(seed, ties):
    rng = np.random.default_rng(seed)
    runs = [random_run(rng, n) for n in ("a", "b", "c")]
    p = [0.9, 0.5, 0.98][seed - 1]
    table = agreement(runs, k=[0, 1, 3, 10], p=p, ties=ties)
    assert list(table.columns) == list(AGREEMENT_COLUMNS)
    qids = sorted({str(q) for r in runs for q in r.query_ids})
    assert set(table["query_id"].astype(str)) == set(qids)
    assert len(table) == 3 * len(qids) * 3 * 4  # pairs x queries x measures x k
    for row in table.itertuples(index=False):
        a = ranked(runs["abc".index(row.run_a)], row.query_id, ties)
        b = ranked(runs["abc".index(row.run_b)], row.query_id, ties)
        if row.k:
            a, b = a[: row.k], b[: row.k]
        ref = rbo_def(a, b, p) if row.measure == rbo_name(p) else DEF[row.measure](a, b)
        if math.isnan(ref):
            assert math.isnan(row.value), row
        else:
            assert math.isclose(row.value, ref, rel_tol=1e-12, abs_tol=1e-12), (row, ref)


def test_single_pair_functions_equal_their_definitions():
    rng = np.random.default_rng(4)
    for _ in range(300):
        a = [f"x{i}" for i in rng.choice(20, size=int(rng.integers(0, 12)), replace=False)]
        b = [f"x{i}" for i in rng.choice(20, size=int(rng.integers(0, 12)), replace=False)]
        p = float(rng.uniform(0.05, 0.99))
        for ours, ref in ((rbo_ext(a, b, p=p), rbo_def(a, b, p)), (overlap(a, b), jaccard_def(a, b)),
                          (kendall_tau(a, b), tau_def(a, b))):  # fmt: skip
            assert (math.isnan(ours) and math.isnan(ref)) or math.isclose(ours, ref, abs_tol=1e-12)


def test_rbo_closed_forms():
    # Webber et al.: for identical lists RBO_ext = 1 (X_d = d); for disjoint lists 0
    a = list("abcdefgh")
    assert math.isclose(rbo_ext(a, a, p=0.8), 1.0, abs_tol=1e-15)
    assert rbo_ext(a, list("ijklmnop"), p=0.8) == 0.0
    # two swapped items of a two-item list: (1-p)/p (0 + p^2) + p^2 = p(1-p) + p^2 = p
    for p in (0.3, 0.5, 0.9):
        assert math.isclose(rbo_ext(["a", "b"], ["b", "a"], p=p), p, abs_tol=1e-15)


def test_invariants():
    rng = np.random.default_rng(5)
    runs = [random_run(rng, n) for n in ("a", "b", "c", "d")]
    table = agreement(runs, k=[0, 5], p=0.9, include_self=True)
    self_rows = table[table["run_a"] == table["run_b"]].dropna(subset=["value"])
    assert np.allclose(self_rows["value"], 1.0, atol=1e-12)  # a run agrees fully with itself
    rbo = table[table["measure"] == "rbo(p=0.9)"]["value"].dropna()
    assert ((rbo >= 0) & (rbo <= 1)).all()
    # symmetric: B against A gives the same values as A against B
    def by_key(t):
        t = t.astype({"query_id": str, "measure": str})
        return t.set_index(["query_id", "measure", "k"])["value"].sort_index()

    ab = by_key(agreement([runs[0], runs[1]], k=[0, 5]))
    ba = by_key(agreement([runs[1], runs[0]], k=[0, 5]))
    assert ab.index.equals(ba.index) and np.allclose(ab, ba, equal_nan=True, atol=1e-15)
    # tau of a run against its reversal is -1, overlap 1
    d = {"q": {f"d{i}": float(i) for i in range(8)}}
    rev = Run.from_dict({"q": {k: -v for k, v in d["q"].items()}}, name="rev")
    t = agreement([Run.from_dict(d, name="fw"), rev], k=[0]).set_index("measure")["value"]
    assert math.isclose(t["kendall_tau"], -1.0, abs_tol=1e-12) and t["overlap"] == 1.0 and 0 < t["rbo(p=0.9)"] < 1


def test_summary_and_matrix():
    rng = np.random.default_rng(6)
    runs = [random_run(rng, n) for n in ("a", "b", "c")]
    table = agreement(runs, k=[3], include_self=True)
    summ = summarize_agreement(table)
    for row in summ.itertuples(index=False):
        vals = table[(table["run_a"] == row.run_a) & (table["run_b"] == row.run_b)
                     & (table["measure"] == row.measure) & (table["k"] == row.k)]["value"]  # fmt: skip
        assert row.n == vals.notna().sum() and row.n_undefined == vals.isna().sum()
        assert (row.n == 0 and math.isnan(row.mean)) or math.isclose(row.mean, vals.mean(), abs_tol=1e-15)
    mat = agreement_matrix(summ, measure="overlap", k=3)
    assert list(mat.index) == ["a", "b", "c"] and np.allclose(mat.to_numpy(), mat.to_numpy().T, equal_nan=True)
    assert np.allclose(np.diag(mat.to_numpy()), 1.0)
    assert math.isclose(mat.loc["a", "c"], summ[(summ["run_a"] == "a") & (summ["run_b"] == "c")
                                               & (summ["measure"] == "overlap")]["mean"].iloc[0])  # fmt: skip


def test_query_ids_restrict_and_extend_the_queries():
    a = Run.from_ranked_lists({"q1": ["x", "y"], "q2": ["z"]}, name="a")
    b = Run.from_ranked_lists({"q1": ["y", "x"]}, name="b")
    t = agreement([a, b], k=[2], measures=["overlap"], query_ids=["q1", "q9"])
    assert list(t["query_id"].astype(str)) == ["q1", "q9"]
    assert t["value"].iloc[0] == 1.0 and math.isnan(t["value"].iloc[1])  # q9: neither run has it


def test_options_are_checked():
    a = Run.from_ranked_lists({"q": ["x"]}, name="a")
    b = Run.from_ranked_lists({"q": ["x"]}, name="b")
    with pytest.raises(OptionError, match="p must be in"):
        agreement([a, b], p=1.0)
    with pytest.raises(OptionError, match="unknown agreement measure"):
        agreement([a, b], measures=["spearman"])
    with pytest.raises(OptionError, match="cutoffs"):
        agreement([a, b], k=[-1])
    with pytest.raises(OptionError, match="at least two"):
        agreement([a])
    with pytest.raises(OptionError, match="distinct"):
        agreement([a, a])


def test_kendall_tau_of_long_lists_is_scipys_bit_for_bit():
    """τ is computed for all queries at once (one SciPy call per query and pair took minutes at 14 runs x
    20,000 queries): the same value as ``scipy.stats.kendalltau(variant="b")``, to the bit, at every size."""
    from scipy.stats import kendalltau as scipy_tau

    rng = np.random.default_rng(12)
    runs = []
    for name in ("a", "b"):
        d = {f"q{q}": {f"d{x}": float(s) for s, x in enumerate(rng.choice(150, size=int(rng.integers(0, 121)),
                                                                              replace=False))}
             for q in range(400)}
        runs.append(Run.from_dict(d, name=name))
    table = agreement(runs, k=[0], measures=["kendall_tau"], ties="docid_asc")
    lists = [r.to_dict() for r in runs]  # once (a run's to_dict per query took seconds)
    sizes = set()
    for row in table.itertuples(index=False):
        a, b = (ranked_items(d.get(row.query_id, {}).items(), "docid_asc") for d in lists)
        shared = [x for x in a if x in set(b)]
        sizes.add(len(shared))
        if len(shared) < 2:
            assert math.isnan(row.value)
            continue
        want = float(scipy_tau([a.index(x) for x in shared], [b.index(x) for x in shared], variant="b").statistic)
        assert row.value == want, (row, want)
    assert max(sizes) >= 80 and len(sizes) > 30  # many group sizes, long lists

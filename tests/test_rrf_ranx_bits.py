"""Reciprocal rank fusion equals ranx to the last bit: the runs' terms are added in the order the runs are given,
left to right, in float64 — ranx's order and the definition's sum as written.

evalcore used to add each document's terms smallest first: its values differed from ranx's in the last bit on
about one row in nine of random tie-heavy runs. ranx (``ranx.fuse(method="rrf")``) gives each list's document at
0-based position i the score ``1 / (k + i + 1)`` (a correctly rounded division, as evalcore's ``w / (c + rank)``)
and adds a document's scores with numba's ``sum([run.get(d, 0.0) for run in runs])``: left to right from 0, the
runs in the order given (checked below against a plain Python loop: a fixed, reproducible order, not numpy's
pairwise sum, whose grouping changes from 8 terms on).

The one exception is kept on purpose (seed 001 §7.2's tie-breaker must see every exact tie): a row whose value lies
within rounding error of another value of its query takes the correctly rounded exact value
(:mod:`evalcore._fusion_ties`); there ranx's value may differ by an ulp or two (and split an exact tie). The tests
find those rows by exact arithmetic, independently, and bound what they may be.
"""

from __future__ import annotations

import functools
import operator
from fractions import Fraction

import numpy as np
import pytest

from evalcore.data import Run
from evalcore.fusion import fuse

pytestmark = pytest.mark.filterwarnings("ignore:unsafe cast from uint64:Warning")  # ranx's numba code
EPS = np.finfo(np.float64).eps


@pytest.fixture(scope="module")
def ranx():
    return pytest.importorskip("ranx")


def tie_heavy_runs(seed: int, n_runs: int, *, n_queries: int = 40) -> list[Run]:
    """Runs over the same queries (ranx requires it), each query a small pool of documents (3 to 8) that most lists
    order whole (so rank vectors repeat as permutations across documents: exact ties, e.g. (1, 2, 3) and (2, 3, 1)),
    the others a part of it; scores random, or from three levels (ties inside a list) in a third of the lists."""
    rng = np.random.default_rng(seed)
    pools = {f"q{q}": [f"d{x}" for x in range(int(rng.integers(3, 9)))] for q in range(n_queries)}
    runs = []
    for j in range(n_runs):
        lists = {}
        for q, pool in pools.items():
            docs = pool if rng.random() < 0.7 else list(rng.permutation(pool)[: int(rng.integers(1, len(pool) + 1))])
            scores = rng.integers(0, 3, len(docs)) if rng.random() < 0.3 else rng.random(len(docs))
            lists[q] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(Run.from_dict(lists, name=f"r{j}"))
    return runs


def ranked(run: Run) -> dict[str, list[str]]:
    """Each query's list in evalcore's order (tie rule docid_asc: what fuse() ranks by)."""
    return {q: [d for d, _ in lst] for q, lst in run.ranked_lists(ties="docid_asc").items()}


def explicit_scores(run: Run) -> dict[str, dict[str, float]]:
    """The same lists with strictly decreasing scores: ranx orders equal scores by an unstable sort of its own."""
    return {q: {d: float(len(lst) - i) for i, d in enumerate(lst)} for q, lst in ranked(run).items()}


def terms(runs: list[Run], weights: list[float], c: float) -> dict[str, dict[str, list[tuple[float, int]]]]:
    """Per query and document, (w_S, rank_S) of every run listing it, in run order."""
    out: dict[str, dict[str, list[tuple[float, int]]]] = {}
    for run, w in zip(runs, weights, strict=True):
        for q, lst in ranked(run).items():
            for i, d in enumerate(lst, start=1):
                out.setdefault(q, {}).setdefault(d, []).append((w, i))
    return out


def left_to_right(ts: list[tuple[float, int]], c: float) -> float:
    """Σ w / (c + rank), one rounded division a term, added in run order from 0 (a plain Python loop)."""
    return functools.reduce(operator.add, (w / (c + r) for w, r in ts), 0.0)


def exact(ts: list[tuple[float, int]], c: float) -> Fraction:
    return sum((Fraction(w) / (Fraction(c) + r) for w, r in ts), Fraction(0))


def near_rows(values: dict[str, dict[str, Fraction]], n_runs: int) -> set[tuple[str, str]]:
    """The (query, document) rows whose exact value is within 8 (S + 1) ε (relative) of another row of the query
    (equal included): the only rows where a fixed summation order may split a tie or invert an order."""
    tol = 8 * (n_runs + 1) * EPS
    out = set()
    for q, row in values.items():
        items = sorted(row.items(), key=lambda kv: kv[1])
        for (d1, v1), (d2, v2) in zip(items, items[1:], strict=False):
            if float(v2 - v1) <= tol * float(v2):
                out |= {(q, d1), (q, d2)}
    return out


def check_bits(ours: dict[str, dict[str, float]], want: dict[str, dict[str, float]],
               exact_values: dict[str, dict[str, Fraction]], n_runs: int) -> tuple[int, int]:
    """Every row of ``ours`` is ``want``'s to the last bit, except near rows (:func:`near_rows`), which are
    ``want``'s or the correctly rounded exact value; exact ties are equal doubles. Returns (near rows, rows off)."""
    near = near_rows(exact_values, n_runs)
    assert set(ours) == set(want)
    off = 0
    for q, row in want.items():
        assert set(ours[q]) == set(row)
        for d, v in row.items():
            if (q, d) not in near:
                assert ours[q][d] == v and np.signbit(ours[q][d]) == np.signbit(v), (q, d, ours[q][d], v)
            else:
                assert ours[q][d] in (v, float(exact_values[q][d])), (q, d)
                off += ours[q][d] != v
        by_value: dict[Fraction, set[float]] = {}
        for d, e in exact_values[q].items():
            by_value.setdefault(e, set()).add(ours[q][d])
        assert all(len(doubles) == 1 for doubles in by_value.values())  # exact ties: one double
    return len(near), off


@pytest.mark.parametrize("n_runs", [2, 3, 4, 7, 8, 9, 12])
def test_rrf_equals_ranx_bit_for_bit(ranx, n_runs):
    runs = tie_heavy_runs(100 + n_runs, n_runs)
    c = 60
    ours = fuse(runs, method="rrf", c=c).to_dict()
    theirs = {q: dict(v) for q, v in ranx.fuse([ranx.Run(explicit_scores(r)) for r in runs], norm=None,
                                               method="rrf", params={"k": c}).to_dict().items()}
    ts = terms(runs, [1.0] * n_runs, c)
    # ranx's own order: the plain left-to-right sum in run order, on every row, to the last bit
    assert theirs == {q: {d: left_to_right(t, c) for d, t in row.items()} for q, row in ts.items()}
    n_near, off = check_bits(ours, theirs, {q: {d: exact(t, c) for d, t in row.items()} for q, row in ts.items()},
                             n_runs)
    n_rows = sum(len(v) for v in theirs.values())
    assert off <= n_near and off <= 0.01 * n_rows  # the exceptions: rare, and only where the exact values (nearly) tie


@pytest.mark.parametrize("seed", range(3))
def test_weighted_rrf_adds_the_runs_in_the_order_given(seed):
    """Weights and another c (ranx has no weighted RRF): each value is the left-to-right sum of w_S / (c + rank_S)
    in run order, to the last bit, near rows aside; and given in another order, the runs give that order's sums."""
    rng = np.random.default_rng(300 + seed)
    n_runs = [3, 8, 10][seed]
    runs = tie_heavy_runs(200 + seed, n_runs)
    weights = [float(w) for w in rng.choice([0.3, 0.5, 1.0, 2.0, 0.7], size=n_runs)]
    c = float(rng.choice([0.0, 2.5, 60.0]))
    for order in (list(range(n_runs)), list(rng.permutation(n_runs))):
        rs, ws = [runs[j] for j in order], [weights[j] for j in order]
        ours = fuse(rs, method="rrf", weights=ws, c=c).to_dict()
        ts = terms(rs, ws, c)
        check_bits(ours, {q: {d: left_to_right(t, c) for d, t in row.items()} for q, row in ts.items()},
                   {q: {d: exact(t, c) for d, t in row.items()} for q, row in ts.items()}, n_runs)


@pytest.mark.parametrize(("z_ranks", "a_ranks"), [((1, 2, 7), (7, 1, 2)), ((6, 39), (12, 28))])
def test_where_ranx_splits_an_exact_tie_the_tie_stays_exact(ranx, z_ranks, a_ranks):
    """Seed 001 §7.2's cases (tests/test_seed001_rrf_ties.py): two documents whose RRF values are equal as rationals
    (the same terms in another order; 1/66 + 1/99 = 1/72 + 1/88). Added left to right they are two doubles, in ranx
    as in a plain loop; evalcore gives both the correctly rounded exact value, so the tie-breaker sees the tie."""
    n = max(*z_ranks, *a_ranks)
    runs = []
    for j, (rz, ra) in enumerate(zip(z_ranks, a_ranks, strict=True)):
        fill = iter(f"f{j}_{i:02d}" for i in range(n))
        lst = [{rz: "z", ra: "a"}.get(i) or next(fill) for i in range(1, n + 1)]
        runs.append(Run.from_ranked_lists({"q": lst}, name=f"r{j}"))
    theirs = ranx.fuse([ranx.Run(explicit_scores(r)) for r in runs], norm=None, method="rrf",
                       params={"k": 60}).to_dict()["q"]
    ours = fuse(runs, method="rrf", c=60).to_dict()["q"]
    ts = terms(runs, [1.0] * len(runs), 60)["q"]
    assert theirs["z"] != theirs["a"] and [theirs[d] for d in "za"] == [left_to_right(ts[d], 60) for d in "za"]
    assert exact(ts["z"], 60) == exact(ts["a"], 60)
    assert ours["z"] == ours["a"] == float(exact(ts["a"], 60))
    assert all(ours[d] == v for d, v in theirs.items() if d not in "za")  # every other row: ranx's, to the last bit

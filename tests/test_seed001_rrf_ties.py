"""Seed 001 §7.1–7.2: weighted RRF, sorted by RRF descending, "tie-breaker: d ascending".

Two candidates whose RRF values are equal as rationals must be ordered by id. In
floating point ``1/61 + 1/62 + 1/67`` and ``1/67 + 1/61 + 1/62`` are different doubles,
so the fused run must keep exact ties equal (:mod:`evalcore._fusion_ties`). Checked on
the smallest case written out, against an exact (``fractions.Fraction``) oracle of
§7.1–7.2 on random tie-heavy runs, and by invariants.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from evalcore import Qrels, Run, evaluate
from evalcore.fusion import fuse, prepare
from evalcore.ranking import rank_order


def _list(placed: dict[str, int], prefix: str, n: int = 10) -> list[str]:
    """A ranked list of n documents with the named ones at the given 1-based ranks, fillers (its own) elsewhere."""
    out: list[str | None] = [None] * n
    for d, r in placed.items():
        out[r - 1] = d
    fill = iter(f"{prefix}{i:02d}" for i in range(n))
    return [x if x is not None else next(fill) for x in out]


def _order(run: Run, query: str = "q") -> list[str]:
    """The run's list for ``query`` in seed 001's order: score descending, then id ascending."""
    order, _ = rank_order(run, ties="docid_asc")
    rows = [int(r) for r in order if run.query_ids[run.q[r]] == query]
    return run.docs_at(np.asarray(rows, dtype=np.int64)).tolist()


def exact_rrf_order(lists: list[list[str]], weights: list[float], c: float, top_n: int | None = None) -> list[str]:
    """Seed 001 §7.1–7.2 in exact arithmetic: Σ_S w_S / (c + rank_S(d)) (absent: 0), RRF desc, then d asc."""
    score: dict[str, Fraction] = {}
    for lst, w in zip(lists, weights, strict=True):
        cut = lst if top_n is None else lst[:top_n]
        for i, d in enumerate(cut, start=1):
            score[d] = score.get(d, Fraction(0)) + Fraction(w) / (Fraction(c) + i)
    return sorted(score, key=lambda d: (-score[d], d))


@pytest.mark.parametrize(("z_ranks", "a_ranks", "value"), [
    ((1, 2, 7), (7, 1, 2), 1 / 61 + 1 / 62 + 1 / 67),  # the same terms in another order
    ((6, 39), (12, 28), 5 / 198),  # other terms: 1/66 + 1/99 = 1/72 + 1/88 = 5/198
])
def test_an_exact_rrf_tie_is_broken_by_id_ascending(z_ranks, a_ranks, value):
    """Equal weights, c = 60 (§7.1): 'z' and 'a' have equal RRF as rationals, and §7.2 puts 'a'
    first. Summed run by run, both cases were two different doubles and 'z' came first."""
    n = max(*z_ranks, *a_ranks)
    lists = [_list({"z": rz, "a": ra}, f"f{j}_", n) for j, (rz, ra) in enumerate(zip(z_ranks, a_ranks, strict=True))]
    runs = [Run.from_ranked_lists({"q": lst}, name=f"r{j}") for j, lst in enumerate(lists)]
    fused = fuse(runs, method="rrf", c=60)
    vals = fused.to_dict()["q"]
    assert vals["a"] == vals["z"] == pytest.approx(value, abs=1e-15)
    got = _order(fused)
    assert got[:2] == ["a", "z"] == exact_rrf_order(lists, [1] * len(lists), 60)[:2]
    qrels = Qrels.from_dict({"q": {"a": 1}})
    ev = evaluate(qrels, fused, metrics=["mrr"], k=[1], ties="docid_asc")
    assert ev.table["value"].tolist() == [1.0]


def _random_lists(rng: np.random.Generator, n_runs: int) -> list[list[str]]:
    """Tie-heavy: short permutations of a small pool, most of them whole (rank multisets repeat)."""
    pool = [f"d{i}" for i in range(int(rng.integers(3, 9)))]
    return [list(rng.permutation(pool)[: len(pool) if rng.random() < 0.7 else int(rng.integers(1, len(pool) + 1))])
            for _ in range(n_runs)]


@pytest.mark.parametrize("seed", range(6))
def test_weighted_rrf_orders_as_the_exact_oracle_on_tie_heavy_runs(seed):
    rng = np.random.default_rng(7100 + seed)
    for _ in range(40):
        n_runs = int(rng.integers(3, 6))
        lists = _random_lists(rng, n_runs)
        weights = [1.0] * n_runs if rng.random() < 0.6 else [float(x) for x in rng.choice([0.5, 1.0, 2.0, 0.3], size=n_runs)]
        c = float(rng.choice([0.0, 1.0, 2.5, 60.0, 60.0]))
        top_n = None if rng.random() < 0.5 else int(rng.integers(1, 6))
        runs = [Run.from_ranked_lists({"q": lst}, name=f"r{j}") for j, lst in enumerate(lists)]
        fused = fuse(runs, method="rrf", weights=weights, c=c, top_n=top_n)
        want = exact_rrf_order(lists, weights, c, top_n)
        assert _order(fused) == want, (lists, weights, c, top_n)
        exact = {d: 0.0 for d in want}
        for lst, w in zip(lists, weights, strict=True):
            for i, d in enumerate(lst if top_n is None else lst[:top_n], start=1):
                exact[d] += w / (c + i)
        assert fused.to_dict()["q"] == pytest.approx(exact, rel=1e-13)


@pytest.mark.parametrize("seed", range(3))
def test_rrf_invariants(seed):
    """Permuting the runs (with their weights) changes only the order of summation (the runs' terms are added in
    the order given, as ranx adds them: tests/test_rrf_ranx_bits.py): every query's order is the same, exact ties
    included, and every value the same to within the rounding of the sum; values in [0, Σ w / (c + 1)]; doubling
    every weight doubles every value exactly (and keeps the order)."""
    rng = np.random.default_rng(7200 + seed)
    lists = {f"q{i}": _random_lists(rng, 4) for i in range(30)}
    runs = [Run.from_ranked_lists({q: ls[j] for q, ls in lists.items()}, name=f"r{j}") for j in range(4)]
    weights = [1.0, 0.5, 2.0, 1.0]
    base = prepare(runs, method="rrf", c=3.0)
    vals = base.values(np.asarray(weights))
    perm = [2, 0, 3, 1]
    other = prepare([runs[j] for j in perm], method="rrf", c=3.0)
    by_row = dict(zip(zip(base.qid.tolist(), base.doc.tolist(), strict=True), vals.tolist(), strict=True))
    got = dict(zip(zip(other.qid.tolist(), other.doc.tolist(), strict=True),
                   other.values(np.asarray([weights[j] for j in perm])).tolist(), strict=True))
    assert got.keys() == by_row.keys()
    tol = 4 * (len(runs) + 1) * np.finfo(np.float64).eps  # S rounded divisions and S - 1 additions
    assert all(abs(got[key] - v) <= tol * v for key, v in by_row.items())

    def order(values: dict) -> list:  # each query's candidates as seed 001 §7.2 orders them
        return sorted(values, key=lambda key: (key[0], -values[key], key[1]))

    assert order(got) == order(by_row)
    assert vals.min() >= 0 and vals.max() <= sum(weights) / (3.0 + 1) + 1e-15
    np.testing.assert_array_equal(base.values(2 * np.asarray(weights)), 2 * vals)

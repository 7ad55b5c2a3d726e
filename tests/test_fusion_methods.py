"""Fusion methods and score normalisations (issue 11 item 8).

* each method and normalisation against ranx (``ranx.fuse`` / ``ranx.normalize``) on
  random tie-free data (ranx breaks score ties in an unspecified order), to 1e-12;
* the same formulas against a plain-Python oracle written from the definitions, on
  tie-heavy data with queries missing from some runs and ``top_n`` cuts (tie rule
  ``docid_asc`` written out in the oracle);
* invariants and option errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalcore.data import Run
from evalcore.errors import EvalcoreWarning, OptionError
from evalcore.fusion import (
    METHODS,
    NORMS,
    RANK_METHODS,
    canonical_method,
    canonical_norm,
    fuse,
    normalize_run,
    weighted_rrf,
)

RANX_METHOD = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz", "wsum": "wsum", "isr": "isr",
               "bordafuse": "bordafuse"}  # fmt: skip
RANX_NORM = {"none": None, "min-max": "min-max", "max": "max", "sum": "sum", "z-score": "zmuv", "rank": "rank"}
SCORE_METHODS = [m for m in METHODS if m not in RANK_METHODS]
pytestmark = pytest.mark.filterwarnings("ignore:unsafe cast from uint64:Warning")  # ranx's numba code


def random_dicts(seed: int, *, n_runs: int = 3, n_queries: int = 25, n_docs: int = 40, ties: bool = False,
                 drop_queries: bool = False) -> list[dict[str, dict[str, float]]]:
    """Random runs as ``{query: {doc: score}}``: lists of 1..20 documents, some negative scores.

    ``ties``: scores from 3 values (heavy ties); ``drop_queries``: each run lacks some queries.
    """
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_runs):
        d: dict[str, dict[str, float]] = {}
        for q in range(n_queries):
            if drop_queries and rng.random() < 0.2:
                continue
            docs = rng.choice(n_docs, size=int(rng.integers(1, 21)), replace=False)
            if ties:
                scores = rng.integers(0, 3, size=len(docs)).astype(float) - 1.0
            else:
                scores = rng.normal(size=len(docs)) * 3 + rng.normal()
            d[f"q{q}"] = {f"d{x}": float(s) for x, s in zip(docs, scores, strict=True)}
        out.append(d)
    return out


def as_runs(dicts: list[dict[str, dict[str, float]]]) -> list[Run]:
    return [Run.from_dict(d, name=f"r{i}") for i, d in enumerate(dicts)]


def assert_same(ours: Run, expected: dict[str, dict[str, float]], *, tol: float = 1e-12) -> None:
    got = ours.to_dict()
    assert set(got) == set(expected)
    for q in expected:
        assert set(got[q]) == set(expected[q]), q
        for d, v in expected[q].items():
            assert math.isclose(got[q][d], v, rel_tol=tol, abs_tol=tol), (q, d, got[q][d], v)


# ----------------------------------------------------------------------------- ranx


@pytest.fixture(scope="module")
def ranx():
    return pytest.importorskip("ranx")


def ranx_dict(run) -> dict[str, dict[str, float]]:
    return {q: dict(v) for q, v in run.to_dict().items()}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("norm", list(NORMS))
@pytest.mark.parametrize("method", SCORE_METHODS)
def test_score_methods_equal_ranx(ranx, seed, norm, method):
    dicts = random_dicts(seed)
    weights = [0.2, 0.5, 0.3] if method == "wsum" else None
    params = {"weights": weights} if weights else {}
    theirs = ranx.fuse([ranx.Run(d) for d in dicts], norm=RANX_NORM[norm], method=RANX_METHOD[method], params=params)
    assert_same(fuse(as_runs(dicts), method=method, norm=norm, weights=weights), ranx_dict(theirs))


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("method", sorted(RANK_METHODS))
def test_rank_methods_equal_ranx(ranx, seed, method):
    dicts = random_dicts(seed, n_runs=4)
    params = {"k": 20} if method == "rrf" else {}
    theirs = ranx.fuse([ranx.Run(d) for d in dicts], norm=None, method=RANX_METHOD[method], params=params)
    ours = fuse(as_runs(dicts), method=method, **({"c": 20.0} if method == "rrf" else {}))
    assert_same(ours, ranx_dict(theirs))


@pytest.mark.parametrize("norm", [n for n in NORMS if n != "none"])
def test_normalisations_equal_ranx(ranx, norm):
    for d in random_dicts(5, n_runs=2):
        assert_same(normalize_run(Run.from_dict(d), norm=norm), ranx_dict(ranx.normalize(ranx.Run(d), norm=RANX_NORM[norm])))


def test_normalisations_equal_ranx_on_constant_and_single_lists(ranx):
    # one-document lists and constant lists hit every 1e-9 floor; all-negative lists the max floor
    d = {"a": {"x": 2.0}, "b": {"x": 1.5, "y": 1.5, "z": 1.5}, "c": {"x": -3.0, "y": -1.0, "z": -2.0}}
    for norm in ("min-max", "max", "sum", "z-score"):
        assert_same(normalize_run(Run.from_dict(d), norm=norm, ties="docid_asc"),
                    ranx_dict(ranx.normalize(ranx.Run(d), norm=RANX_NORM[norm])))


# ----------------------------------------------------------------------------- plain-Python oracle


def norm_value(norm: str, s: float, i: int, sc: list[float]) -> float:
    """Score ``s`` at 0-based position ``i`` of the list with scores ``sc``, normalised (ranx's formulas)."""
    n, lo, hi, tot = len(sc), min(sc), max(sc), sum(sc)
    mean = tot / n
    std = math.sqrt(sum((x - mean) ** 2 for x in sc) / n)
    return {
        "none": s, "min-max": (s - lo) / max(hi - lo, 1e-9), "max": s / max(hi, 1e-9),
        "sum": (s - lo) / max(tot - lo * n, 1e-9), "z-score": (s - mean) / max(std, 1e-9), "rank": 1 - i / n,
    }[norm]  # fmt: skip


def oracle(dicts, *, method, norm="none", weights=None, c=60.0, top_n=None):
    """Each formula of the fusion module docstring, written out per query (ties: doc id ascending)."""
    weights = [1.0] * len(dicts) if weights is None else weights
    lists = []
    for run in dicts:
        per_q = {}
        for q, docs in run.items():
            ranked = sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))[:top_n]
            sc = [s for _, s in ranked]
            per_q[q] = {d: (i + 1, norm_value(norm, s, i, sc)) for i, (d, s) in enumerate(ranked)}
        lists.append(per_q)
    out: dict[str, dict[str, float]] = {}
    for q in sorted({q for run in lists for q in run}):
        cands = sorted({d for run in lists for d in run.get(q, {})})
        n = len(cands)
        out[q] = {}
        for d in cands:
            hits = [(w, run[q][d]) for w, run in zip(weights, lists, strict=True) if d in run.get(q, {})]
            if method == "rrf":
                v = sum(w / (c + r) for w, (r, _) in hits)
            elif method == "combsum":
                v = sum(s for _, (_, s) in hits)
            elif method == "combmnz":
                v = len(hits) * sum(s for _, (_, s) in hits)
            elif method == "wsum":
                v = sum(w * s for w, (_, s) in hits)
            elif method == "isr":
                v = len(hits) * sum(1 / r**2 for _, (r, _) in hits)
            else:  # bordafuse
                v = sum(n - run[q][d][0] + 1 if d in run.get(q, {}) else (n - len(run.get(q, {})) + 1) / 2
                        for run in lists)
            out[q][d] = v
    return out


@pytest.mark.parametrize("top_n", [None, 1, 4])
@pytest.mark.parametrize("method", list(METHODS))
def test_methods_equal_oracle_on_ties_missing_queries_and_cuts(method, top_n):
    dicts = random_dicts(7, ties=True, drop_queries=True)
    weights = [0.5, 2.0, 1.0] if method in ("rrf", "wsum") else None
    norms = ["none"] if method in RANK_METHODS else list(NORMS)
    for norm in norms:
        with pytest.warns(EvalcoreWarning, match=r"of the \d+ queries the fused runs answer \(together\), run "
                                                  r"'\w+' lacks \d+.*counts as an empty list"):
            ours = fuse(as_runs(dicts), method=method, norm=norm, weights=weights, c=10.0, top_n=top_n,
                        ties="docid_asc")
        assert_same(ours, oracle(dicts, method=method, norm=norm, weights=weights, c=10.0, top_n=top_n))


def test_normalize_cut_and_ties_match_oracle():
    d = random_dicts(8, n_runs=1, ties=True)[0]
    for norm in NORMS:  # CombSUM of one run is its normalised scores
        expected = oracle([d], method="combsum", norm=norm, top_n=3)
        assert_same(normalize_run(Run.from_dict(d), norm=norm, top_n=3, ties="docid_asc"), expected)


# ----------------------------------------------------------------------------- invariants and options


def test_weighted_rrf_is_fuse_rrf_and_seed_formula():
    dicts = random_dicts(9, ties=True)
    runs = as_runs(dicts)
    a = weighted_rrf(runs, weights=[1.0, 0.5, 0.5], c=60, top_n=5).to_dict()
    b = fuse(runs, method="rrf", weights=[1.0, 0.5, 0.5], c=60, top_n=5).to_dict()
    assert a == b
    assert_same(weighted_rrf(runs, weights=[1.0, 0.5, 0.5], c=60, top_n=5),
                oracle(dicts, method="rrf", weights=[1.0, 0.5, 0.5], c=60, top_n=5))


def test_wsum_with_equal_weights_is_combsum_and_single_run_keeps_order():
    runs = as_runs(random_dicts(10))
    for norm in ("none", "min-max", "z-score"):
        assert fuse(runs, method="wsum", norm=norm).to_dict() == fuse(runs, method="combsum", norm=norm).to_dict()
    one = runs[0]
    for method in METHODS:
        fused = fuse([one], method=method)
        for q, ranked in one.ranked_lists(ties="docid_asc").items():
            got = [d for d, _ in fused.ranked_lists(ties="docid_asc")[q]]
            assert got == [d for d, _ in ranked], (method, q)


def test_inputs_are_not_modified():
    runs = as_runs(random_dicts(11))
    before = [r.scores.copy() for r in runs]
    fuse(runs, method="combmnz", norm="z-score")
    assert all(np.array_equal(b, r.scores) for b, r in zip(before, runs, strict=True))


def test_names_aliases_and_option_errors():
    assert canonical_method("SUM") == "combsum" and canonical_method("mnz") == "combmnz"
    assert canonical_norm("zmuv") == "z-score" and canonical_norm(None) == "none"
    runs = as_runs(random_dicts(12, n_runs=2))
    with pytest.raises(OptionError, match="unknown fusion method"):
        fuse(runs, method="condorcet")
    with pytest.raises(OptionError, match="unknown normalisation"):
        fuse(runs, method="combsum", norm="log")
    with pytest.raises(OptionError, match="fuses ranks"):
        fuse(runs, method="isr", norm="min-max")
    with pytest.raises(OptionError, match="takes no weights"):
        fuse(runs, method="combmnz", weights=[1, 2])
    with pytest.raises(OptionError, match="not all 0"):
        fuse(runs, method="wsum", weights=[0, 0])
    with pytest.raises(OptionError, match="top_n"):
        fuse(runs, method="combsum", top_n=0)
    with pytest.raises(OptionError, match="distinct names"):
        fuse([runs[0], runs[0]], method="combsum")

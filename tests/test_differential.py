"""Differential tests: evalcore vs independent implementations on random data.

* pytrec_eval (trec_eval's C code): P, recall, map_cut, ndcg_cut, success at
  k in {1, 3, 5, 10, 20, 100}, recip_rank, map, Rprec — per query to 1e-9, with
  ``ties="trec"``, on data built to hit the corner cases: heavy score ties,
  graded and negative grades, very short lists, queries absent from the run,
  queries without relevant documents, unjudged retrieved documents, document ids
  whose string order differs from their numeric order and mixes case;
* ranx (numba): exponential-gain nDCG (``ndcg_burges``) on tie-free scores;
* ir-measures' msmarco provider: RR@10 on tie-free scores;
* hypothesis: small random inputs against pytrec_eval.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evalcore import Qrels, Run, evaluate

KS = (1, 3, 5, 10, 20, 100)
FULL = 10_000  # larger than any list here: "no cutoff"

# pytrec_eval measure -> (evalcore metric, k)
PT_MEASURES: dict[str, tuple[str, int]] = {"map": ("map", FULL), "recip_rank": ("mrr", FULL), "Rprec": ("rprec", 0)}
for _k in KS:
    PT_MEASURES[f"P_{_k}"] = ("precision", _k)
    PT_MEASURES[f"recall_{_k}"] = ("recall", _k)
    PT_MEASURES[f"map_cut_{_k}"] = ("map", _k)
    PT_MEASURES[f"ndcg_cut_{_k}"] = ("ndcg", _k)
    PT_MEASURES[f"success_{_k}"] = ("hit_rate", _k)
_CUT = ",".join(map(str, KS))
PT_REQUEST = {"map", "recip_rank", "Rprec", f"P.{_CUT}", f"recall.{_CUT}", f"map_cut.{_CUT}", f"ndcg_cut.{_CUT}",
              f"success.{_CUT}"}
OUR_METRICS = ["precision", "recall", "map", "ndcg", "hit_rate", "mrr", "rprec"]

# random small qrels sometimes have no grade at the threshold: the warning is right, and expected
pytestmark = pytest.mark.filterwarnings("ignore:no judgment reaches the relevance threshold:evalcore.errors.EvalcoreWarning")


@dataclass(frozen=True)
class Config:
    seed: int
    n_queries: int = 320
    score_values: int | None = 3  # None: continuous scores (tie-free)
    max_depth: int = 120
    p_short: float = 0.2  # lists of 1-3 documents
    p_absent: float = 0.1  # qrels query missing from the run
    p_no_rel: float = 0.1  # query without any grade >= 1
    p_negative: float = 0.08  # share of negative judgments
    max_grade: int = 3
    rel_threshold: int = 1
    near_ties: bool = False  # scores ~20 apart by 1e-7: distinct in float64, mostly equal in trec_eval's float32


CONFIGS = [
    Config(seed=1),
    Config(seed=2, score_values=2, p_short=0.4),  # nearly everything tied
    Config(seed=3, score_values=6, max_depth=200, p_negative=0.2),
    Config(seed=4, score_values=None, p_absent=0.2),
    Config(seed=5, score_values=4, rel_threshold=2),
    Config(seed=6, score_values=1, n_queries=300, max_depth=40),  # one score: pure tie-breaking
    Config(seed=7, score_values=3, near_ties=True),  # ties only at trec_eval's single precision
]


def _doc_pool() -> np.ndarray:
    # string order != numeric order ("d10" < "d9"), mixed case ("D3" < "d3"), shared prefixes
    ids = [f"d{j}" for j in range(120)] + [f"D{j}" for j in range(40)] + [f"d{j}x" for j in range(20)]
    ids += [f"doc-{j:03d}" for j in range(40)] + ["a", "B", "b", "Z", "z0", "_x"]
    return np.array(ids, dtype=object)


def make_data(cfg: Config) -> tuple[dict, dict]:
    """Random qrels and run dicts (pytrec_eval's shape), deterministic in cfg.seed."""
    rng = np.random.default_rng(cfg.seed)
    pool = _doc_pool()
    values = None if cfg.score_values is None else np.round(rng.normal(size=cfg.score_values) * 3, 2)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(cfg.n_queries):
        qid = f"q{i}"
        n_judged = int(rng.integers(1, 40))
        judged = rng.choice(pool, size=n_judged, replace=False)
        grades = rng.integers(0, cfg.max_grade + 1, size=n_judged)
        neg = rng.random(n_judged) < cfg.p_negative
        grades[neg] = -rng.integers(1, 3, size=int(neg.sum()))
        if rng.random() < cfg.p_no_rel:
            grades = np.minimum(grades, 0)
        if grades.max() < -1:
            # trec_eval sizes an array by (max grade + 1) per query (form_res_rels.c): a query
            # judged only <= -2 corrupts its heap (pytrec_eval aborts a few queries later)
            grades[0] = -1
        qrels[qid] = {str(d): int(g) for d, g in zip(judged, grades, strict=True)}
        if rng.random() < cfg.p_absent:
            continue
        depth = int(rng.integers(1, 4)) if rng.random() < cfg.p_short else int(rng.integers(1, cfg.max_depth + 1))
        # favour judged documents so that hits happen, but keep unjudged ones in the list
        cand = np.r_[judged, rng.choice(pool, size=min(len(pool), depth), replace=False)]
        docs = list(dict.fromkeys(cand[rng.permutation(len(cand))].tolist()))[:depth]
        if values is None:
            scores = rng.random(len(docs)) * 10
        else:
            scores = rng.choice(values, size=len(docs))
        if cfg.near_ties:
            scores = scores + 20.0 + rng.integers(0, 4, size=len(docs)) * 1e-7
        run[qid] = {str(d): float(s) for d, s in zip(docs, scores, strict=True)}
    # queries of the run that are not judged: ignored by both
    for i in range(5):
        run[f"extra{i}"] = {"d1": 1.0, "d2": 0.5}
    return qrels, run


def ours_by_query(qrels: dict, run: dict, *, rel_threshold: int = 1, metrics=OUR_METRICS, ks=(*KS, FULL)):
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=metrics, k=list(ks), ties="trec",
                  rel_threshold=rel_threshold)
    t = ev.table
    out: dict[tuple[str, int], dict[str, float]] = {}
    cols = (t["metric"].astype(str).tolist(), t["k"].tolist(), t["query_id"].astype(str).tolist(),
            t["value"].tolist())
    for m, k, q, v in zip(*cols, strict=True):
        out.setdefault((m, k), {})[q] = v
    return out, ev


def pytrec(qrels: dict, run: dict, *, rel_threshold: int = 1) -> dict[str, dict[str, float]]:
    ev = pytrec_eval.RelevanceEvaluator(qrels, PT_REQUEST, relevance_level=rel_threshold)
    return ev.evaluate(run)


def compare_with_pytrec(qrels: dict, run: dict, rel_threshold: int = 1) -> int:
    """Assert per-query agreement; return the number of values compared."""
    theirs = pytrec(qrels, run, rel_threshold=rel_threshold)
    ours, _ = ours_by_query(qrels, run, rel_threshold=rel_threshold)
    n = 0
    bad = []
    for qid, vals in theirs.items():
        for measure, (metric, k) in PT_MEASURES.items():
            a, b = ours[(metric, k)][qid], vals[measure]
            n += 1
            if abs(a - b) > 1e-9:
                bad.append((qid, measure, a, b))
    assert not bad, f"{len(bad)} disagreements, first: {bad[:5]}"
    return n


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"seed{c.seed}")
def test_against_pytrec_eval_per_query(cfg):
    qrels, run = make_data(cfg)
    theirs = pytrec(qrels, run, rel_threshold=cfg.rel_threshold)
    # the data hits the corner cases it is meant to hit
    assert len(theirs) >= 250
    depths = [len(v) for v in run.values()]
    assert min(depths) == 1 and sum(d <= 3 for d in depths) >= 20
    assert any(g < 0 for v in qrels.values() for g in v.values())
    assert any(all(g < cfg.rel_threshold for g in v.values()) for q, v in qrels.items() if q in run)
    if cfg.near_ties:  # many pairs distinct as given, a tie as trec_eval reads them (float32)
        near = sum(a != b and np.float32(a) == np.float32(b) for v in run.values()
                   for a, b in itertools.combinations(v.values(), 2))
        assert near >= 1000, near
    n = compare_with_pytrec(qrels, run, rel_threshold=cfg.rel_threshold)
    assert n == len(theirs) * len(PT_MEASURES)


@pytest.mark.parametrize("cfg", CONFIGS[:3], ids=lambda c: f"seed{c.seed}")
def test_queries_absent_from_run_score_zero(cfg):
    qrels, run = make_data(cfg)
    absent = [q for q in qrels if q not in run]
    assert absent
    ours, ev = ours_by_query(qrels, run)
    for (metric, _k), vals in ours.items():
        for q in absent:
            assert vals[q] == 0.0, (metric, q)
    cov = ev.coverage.iloc[0]
    assert int(cov["n_missing"]) == len(absent)
    assert int(cov["n_ignored"]) == len([q for q in run if q not in qrels])


def test_ties_matter_in_this_data():
    # guard: with another tie rule the numbers must differ (else the tie tests prove nothing)
    qrels, run = make_data(CONFIGS[1])
    q, r = Qrels.from_dict(qrels), Run.from_dict(run)
    a = evaluate(q, r, metrics=["ndcg@10"], ties="trec").table["value"].to_numpy()
    b = evaluate(q, r, metrics=["ndcg@10"], ties="docid_asc").table["value"].to_numpy()
    assert not np.allclose(a, b)


def test_negative_grades_gain_nothing_in_ndcg_like_trec_eval():
    # trec_eval (form_res_rels.c) reads a negative judgment as "unjudged in pool" and
    # m_ndcg_cut.c adds only gains > 0: a -2 at rank 1 must not lower the DCG
    qrels = {"q": {"bad": -2, "good": 1}}
    run = {"q": {"bad": 2.0, "good": 1.0}}
    theirs = pytrec(qrels, run)["q"]
    ours, _ = ours_by_query(qrels, run)
    expected = 1 / np.log2(3)  # the relevant document at rank 2, ideal 1
    assert theirs["ndcg_cut_5"] == pytest.approx(expected, abs=1e-12)
    assert ours[("ndcg", 5)]["q"] == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------- hypothesis
DOCS = ["a", "b", "B", "c", "d1", "d10", "d2", "d9", "Z", "aa"]
_grades = st.dictionaries(st.sampled_from(DOCS), st.integers(-2, 3), min_size=1, max_size=6)
_scores = st.dictionaries(st.sampled_from(DOCS), st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, -1.0]),
                          min_size=1, max_size=8)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    qrels=st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), _grades, min_size=1, max_size=3),
    run=st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), _scores, min_size=1, max_size=4),
    theta=st.sampled_from([1, 1, 2]),
)
def test_hypothesis_small_inputs_against_pytrec_eval(qrels, run, theta):
    assume(all(max(v.values()) >= -1 for v in qrels.values()))  # see make_data: trec_eval crashes
    compare_with_pytrec(qrels, run, rel_threshold=theta)


# ---------------------------------------------------------------------------- ranx / ir-measures
@pytest.mark.slow
def test_exponential_ndcg_against_ranx_ndcg_burges():
    ranx = pytest.importorskip("ranx")
    qrels, run = make_data(Config(seed=11, score_values=None, p_negative=0.0, n_queries=300))
    common = [q for q in qrels if q in run]
    q_sub = {q: qrels[q] for q in common}
    r_sub = {q: run[q] for q in common}
    ks = (1, 3, 5, 10, 20, 100)
    names = [f"ndcg_burges@{k}" for k in ks]
    rq, rr = ranx.Qrels(q_sub), ranx.Run(r_sub)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranx.evaluate(rq, rr, names, return_mean=False)
    ours, _ = ours_by_query(q_sub, r_sub, metrics=["ndcg_exp"], ks=ks)
    n = 0
    for k, name in zip(ks, names, strict=True):
        for q in common:
            assert ours[("ndcg_exp", k)][q] == pytest.approx(float(rr.scores[name][q]), abs=1e-9), (name, q)
            n += 1
    assert n == len(common) * len(ks)


def test_rr_at_10_against_ir_measures_msmarco():
    ir_measures = pytest.importorskip("ir_measures")
    provider = ir_measures.providers.registry["msmarco"]
    if not provider.is_available():
        pytest.skip("ir_measures msmarco provider unavailable")
    qrels, run = make_data(Config(seed=12, score_values=None))
    theirs = {m.query_id: m.value for m in provider.iter_calc([ir_measures.RR @ 10], qrels, run)}
    ours, _ = ours_by_query(qrels, run, metrics=["mrr"], ks=(10,))
    common = [q for q in qrels if q in run]
    assert set(common) <= set(theirs) or len(theirs) >= 250
    n = 0
    for q, v in theirs.items():
        if q in ours[("mrr", 10)]:
            assert ours[("mrr", 10)][q] == pytest.approx(v, abs=1e-9), q
            n += 1
    assert n >= 250

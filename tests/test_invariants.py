"""Properties every correct evaluator has, whatever the numbers.

Perfect rankings score 1, values stay in [0, 1], cumulative metrics never fall
as k grows, order of inputs and naming of ids do not matter, the tie rules do
what they say, and evaluate() leaves its inputs untouched.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore import Qrels, Run, evaluate
from evalcore.errors import OptionError
from evalcore.metrics import METRICS, UNBOUNDED

ALL_METRICS = sorted(METRICS)
KS = [1, 2, 3, 5, 10, 20, 50, 100]


def random_data(seed: int, *, n_queries: int = 120, score_values: int | None = 4) -> tuple[dict, dict]:
    """Random graded qrels (grades -1..3) and a run with ties, short lists and missing queries."""
    rng = np.random.default_rng(seed)
    pool = [f"d{j}" for j in range(80)] + [f"D{j}" for j in range(20)]
    values = None if score_values is None else rng.normal(size=score_values).round(3)
    qrels, run = {}, {}
    for i in range(n_queries):
        judged = rng.choice(pool, size=int(rng.integers(1, 25)), replace=False)
        grades = rng.integers(-1, 4, size=len(judged))
        qrels[f"q{i}"] = dict(zip(judged.tolist(), grades.tolist(), strict=True))
        if rng.random() < 0.1:
            continue
        depth = int(rng.integers(1, 4)) if rng.random() < 0.2 else int(rng.integers(1, 60))
        docs = list(dict.fromkeys(np.r_[judged, rng.choice(pool, size=depth, replace=False)][
            rng.permutation(len(judged) + depth)].tolist()))[:depth]
        scores = rng.random(len(docs)) if values is None else rng.choice(values, size=len(docs))
        run[f"q{i}"] = dict(zip(docs, scores.tolist(), strict=True))
    return qrels, run


def sorted_table(ev) -> pd.DataFrame:
    t = ev.table.copy()
    for c in ("run", "query_id", "domain", "metric"):
        t[c] = t[c].astype(str)
    return t.sort_values(["run", "query_id", "metric", "k"]).reset_index(drop=True)


def per_query(ev, metric: str, k: int) -> dict[str, float]:
    t = ev.table
    sub = t[(t["metric"] == metric) & (t["k"] == k)]
    return dict(zip(sub["query_id"].astype(str), sub["value"].astype(float), strict=True))


# ---------------------------------------------------------------------------- perfect ranking
@pytest.mark.parametrize("theta", [1, 2])
def test_perfect_ranking_scores_one(theta):
    rng = np.random.default_rng(7)
    qrels = {}
    for i in range(60):
        docs = [f"d{j}" for j in range(int(rng.integers(1, 30)))]
        grades = rng.integers(0, 4, size=len(docs))
        grades[0] = 3  # at least one relevant document at every threshold used here
        qrels[f"q{i}"] = dict(zip(docs, grades.tolist(), strict=True))
    # the run lists the judged documents by grade, best first (score = grade + tiny tie-free part)
    run = {q: {d: g + 1e-3 * rng.random() for d, g in v.items()} for q, v in qrels.items()}
    q, r = Qrels.from_dict(qrels), Run.from_dict(run)
    # map divides by R: it reaches 1 once k >= R (every list here is shorter than 100)
    ev = evaluate(q, r, metrics=["ndcg", "ndcg_exp", "map@100", "mrr", "hit_rate", "map_found", "recall_capped"],
                  k=[1, 3, 10, 100], rel_threshold=theta)
    assert np.allclose(ev.table["value"].to_numpy(), 1.0, atol=1e-12), \
        sorted_table(ev)[lambda t: ~np.isclose(t["value"], 1.0)].head()
    # recall and precision at R (per query), and R-precision
    n_rel = dict(zip(q.query_ids, q.n_relevant(theta).tolist(), strict=True))
    ev2 = evaluate(q, r, metrics=["recall", "precision", "rprec"], k=sorted(set(n_rel.values())),
                   rel_threshold=theta)
    for qid, rr in n_rel.items():
        assert per_query(ev2, "recall", rr)[qid] == pytest.approx(1.0, abs=1e-12)
        assert per_query(ev2, "precision", rr)[qid] == pytest.approx(1.0, abs=1e-12)
        assert per_query(ev2, "rprec", 0)[qid] == pytest.approx(1.0, abs=1e-12)


def test_reversed_perfect_ranking_is_not_one():
    # the property above must be able to fail: the worst order of the same documents
    qrels = {"q": {"a": 3, "b": 2, "c": 0, "d": 0}}
    run = {"q": {"a": 0.0, "b": 1.0, "c": 2.0, "d": 3.0}}
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=["ndcg", "map", "mrr"], k=[10])
    assert (ev.table["value"] < 1).all()


# ---------------------------------------------------------------------------- ranges & monotonicity
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_metric_is_in_unit_interval(seed):
    qrels, run = random_data(seed)
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=ALL_METRICS, k=KS)
    t = ev.table
    bounded = t[~t["metric"].astype(str).isin(UNBOUNDED)]["value"]
    assert bounded.notna().all()
    assert ((bounded >= 0) & (bounded <= 1 + 1e-12)).all()
    # first_rel_rank: a rank (>= 1) or NaN when nothing relevant was retrieved
    frr = t[t["metric"] == "first_rel_rank"]["value"]
    assert (frr.dropna() >= 1).all() and (frr.dropna() == np.round(frr.dropna())).all()
    assert frr.isna().any()


@pytest.mark.parametrize("metric", ["recall", "hit_rate"])
@pytest.mark.parametrize("seed", [4, 5])
def test_cumulative_metrics_never_fall_as_k_grows(metric, seed):
    qrels, run = random_data(seed)
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=[metric], k=KS)
    wide = ev.table.pivot_table(index="query_id", columns="k", values="value", observed=True)[KS]
    diffs = np.diff(wide.to_numpy(), axis=1)
    assert (diffs >= -1e-12).all()
    assert (diffs > 0).any()  # not trivially flat


# ---------------------------------------------------------------------------- order and naming
@pytest.mark.parametrize("ties", ["trec", "docid_asc"])
def test_shuffling_queries_and_rows_changes_nothing(ties):
    qrels, run = random_data(8)
    base = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="r"), metrics=ALL_METRICS, k=KS, ties=ties)
    rng = np.random.default_rng(0)
    qf = Qrels.from_dict(qrels).to_frame().sample(frac=1.0, random_state=1)
    rf = Run.from_dict(run).to_frame().sample(frac=1.0, random_state=2)
    q2 = Qrels.from_records(qf["query_id"], qf["doc_id"], qf["relevance"])
    r2 = Run.from_records(rf["query_id"], rf["doc_id"], rf["score"], name="r")
    assert list(q2.query_ids) != list(Qrels.from_dict(qrels).query_ids)  # really shuffled
    other = evaluate(q2, r2, metrics=rng.permutation(ALL_METRICS).tolist(), k=KS[::-1], ties=ties)
    pd.testing.assert_frame_equal(sorted_table(base), sorted_table(other))


def test_input_tie_rule_does_depend_on_row_order():
    # counter-check of the test above: the "input" rule keeps file order among ties
    qrels = {"q": {"a": 1}}
    r1 = Run.from_records(["q", "q"], ["a", "b"], [1.0, 1.0])
    r2 = Run.from_records(["q", "q"], ["b", "a"], [1.0, 1.0])
    q = Qrels.from_dict(qrels)
    v1 = evaluate(q, r1, metrics=["mrr@10"], ties="input").table["value"].item()
    v2 = evaluate(q, r2, metrics=["mrr@10"], ties="input").table["value"].item()
    assert (v1, v2) == (1.0, 0.5)


def _rename(qrels: dict, run: dict, qmap: dict, dmap) -> tuple[dict, dict]:
    return ({qmap[q]: {dmap(d): g for d, g in v.items()} for q, v in qrels.items()},
            {qmap.get(q, "zz" + q): {dmap(d): s for d, s in v.items()} for q, v in run.items()})


def test_renaming_ids_consistently_changes_nothing_with_ties():
    # with ties, document names decide the order: keep their string order (prefix), permute queries
    qrels, run = random_data(9)
    rng = np.random.default_rng(3)
    names = rng.permutation(len(qrels))
    qmap = {q: f"topic-{n}" for q, n in zip(qrels, names, strict=True)}
    q2, r2 = _rename(qrels, run, qmap, lambda d: "doc/" + d)
    a = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=ALL_METRICS, k=KS)
    b = evaluate(Qrels.from_dict(q2), Run.from_dict(r2), metrics=ALL_METRICS, k=KS)
    ta, tb = sorted_table(a), sorted_table(b)
    tb["query_id"] = tb["query_id"].map({v: k for k, v in qmap.items()})
    pd.testing.assert_frame_equal(sorted_table_of(ta), sorted_table_of(tb))


def test_renaming_ids_arbitrarily_changes_nothing_without_ties():
    qrels, run = random_data(10, score_values=None)
    rng = np.random.default_rng(4)
    docs = sorted({d for v in qrels.values() for d in v} | {d for v in run.values() for d in v})
    dnames = dict(zip(docs, (f"x{n}" for n in rng.permutation(len(docs))), strict=True))
    qmap = {q: f"t{n}" for q, n in zip(qrels, rng.permutation(len(qrels)), strict=True)}
    q2, r2 = _rename(qrels, run, qmap, dnames.__getitem__)
    a = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=ALL_METRICS, k=KS)
    b = evaluate(Qrels.from_dict(q2), Run.from_dict(r2), metrics=ALL_METRICS, k=KS)
    ta, tb = sorted_table(a), sorted_table(b)
    tb["query_id"] = tb["query_id"].map({v: k for k, v in qmap.items()})
    pd.testing.assert_frame_equal(sorted_table_of(ta), sorted_table_of(tb))


def sorted_table_of(t: pd.DataFrame) -> pd.DataFrame:
    return t.sort_values(["run", "query_id", "metric", "k"]).reset_index(drop=True)


# ---------------------------------------------------------------------------- tie rules by hand
TIE_RUN = Run.from_records(
    ["q"] * 6,
    ["d9", "b", "top", "d10", "a", "low"],  # input order
    [1.0, 1.0, 5.0, 1.0, 1.0, -2.0],
)


@pytest.mark.parametrize(("ties", "expected"), [
    # trec_eval: score descending, then docno descending by strcmp ("d9" > "d10" > "b" > "a")
    ("trec", ["top", "d9", "d10", "b", "a", "low"]),
    # seed 001 §3: docno ascending by string compare
    ("docid_asc", ["top", "a", "b", "d10", "d9", "low"]),
    ("seed", ["top", "a", "b", "d10", "d9", "low"]),
    # input order among equal scores
    ("input", ["top", "d9", "b", "d10", "a", "low"]),
])
def test_tie_rules_order(ties, expected):
    got = [d for d, _ in TIE_RUN.ranked_lists(ties=ties)["q"]]
    assert got == expected


@pytest.mark.parametrize(("ties", "rr"), [("trec", 1 / 5), ("docid_asc", 1 / 2), ("input", 1 / 5)])
def test_tie_rules_drive_the_metrics(ties, rr):
    # relevant: "a"; ranks: trec 5th, docid_asc 2nd, input 5th
    q = Qrels.from_dict({"q": {"a": 1}})
    assert evaluate(q, TIE_RUN, metrics=["mrr@10"], ties=ties).table["value"].item() == pytest.approx(rr)


def test_tie_rule_uses_code_point_order_case_sensitive():
    # strcmp / code-point order: "B" (66) < "a" (97) < "b" (98)
    run = Run.from_records(["q"] * 3, ["a", "B", "b"], [0.0, 0.0, 0.0])
    assert [d for d, _ in run.ranked_lists(ties="trec")["q"]] == ["b", "a", "B"]
    assert [d for d, _ in run.ranked_lists(ties="docid_asc")["q"]] == ["B", "a", "b"]


def test_unknown_tie_rule_lists_the_rules():
    q = Qrels.from_dict({"q": {"a": 1}})
    with pytest.raises(OptionError) as ei:
        evaluate(q, TIE_RUN, ties="random")
    assert all(r in str(ei.value) for r in ("trec", "docid_asc", "input"))


# ---------------------------------------------------------------------------- no mutation
def test_evaluate_does_not_mutate_its_inputs():
    qrels, run = random_data(11)
    q = Qrels.from_dict(qrels)
    runs = {"a": Run.from_dict(run, name="a"), "b": Run.from_dict(random_data(12)[1], name="b")}
    fields_q = ("query_ids", "q", "doc_ids", "grades")
    fields_r = ("query_ids", "q", "doc_vocab", "d", "scores")
    before_q = {f: getattr(q, f).copy() for f in fields_q}
    before_r = {n: {f: getattr(r, f).copy() for f in fields_r} for n, r in runs.items()}
    for ties in ("trec", "docid_asc", "input"):
        evaluate(q, runs, metrics=ALL_METRICS, k=KS, ties=ties, rel_threshold=2, no_relevant="skip")
    for f in fields_q:
        np.testing.assert_array_equal(getattr(q, f), before_q[f])
    for n, r in runs.items():
        for f in fields_r:
            np.testing.assert_array_equal(getattr(r, f), before_r[n][f])
    # and the dicts the objects were built from
    assert Qrels.from_dict(qrels).to_dict() == q.to_dict()

"""Worked examples of the measures of issue #11, computed by hand from their definitions.

Each expected number is derived in the comment above it (or taken from a peer's
documentation, where named); none comes from evalcore. Also: the declared
aggregations (sum, geometric mean) of summaries, the CLI text and report.json.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalcore import Qrels, Run, evaluate
from evalcore.aggregate import mean_pm_std_text, summarize
from evalcore.errors import OptionError
from evalcore.metrics import K_FREE
from evalcore.report import build_report

pytestmark = pytest.mark.filterwarnings("ignore:'hits' is now:evalcore.errors.EvalcoreWarning")


def values(qrels: dict, run: dict, metrics, *, k=(10,), **kw) -> dict[str, float]:
    """``{label: value}`` of one query's measures: ``metric@k``, ``metric@all``, or a k-free metric's name."""
    t = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=list(metrics), k=list(k), **kw).table
    assert t["query_id"].nunique() == 1

    def label(m: str, kk: int) -> str:
        if kk:
            return f"{m}@{kk}"
        return m if m.split("(")[0] in K_FREE else f"{m}@all"

    return {label(m, kk): v for m, kk, v in zip(t["metric"].astype(str), t["k"], t["value"], strict=True)}


def ranked(*docs: str) -> dict[str, float]:
    """A run listing ``docs`` in this order (scores without ties)."""
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


# ---------------------------------------------------------------------------- bpref and infAP
# qrels: relevant A, B, C (R = 3); judged non-relevant X, Y (N = 2); U unjudged; the run A X U B Y C
BP_QRELS = {"q": {"A": 1, "B": 2, "C": 1, "X": 0, "Y": 0}}
BP_RUN = {"q": ranked("A", "X", "U", "B", "Y", "C")}


def test_bpref_by_hand():
    # A: no judged non-relevant above -> 1; B: X above -> 1 - min(1, 3)/min(2, 3) = 1/2;
    # C: X, Y above -> 1 - 2/2 = 0 (U is skipped). bpref = (1 + 1/2 + 0) / 3 = 1/2
    assert values(BP_QRELS, BP_RUN, ["bpref"])["bpref"] == pytest.approx(0.5, abs=1e-15)
    # at threshold 2 only B is relevant (R = 1, N = 4: X, Y, A, C): B has A, X above -> 1 - min(2,1)/min(4,1) = 0
    assert values(BP_QRELS, BP_RUN, ["bpref"], rel_threshold=2)["bpref"] == 0.0


def test_infap_by_hand_with_and_without_a_sampled_pool():
    eps = 1e-5
    # U absent from the qrels (outside the pool). j = 0-based rank; r, m, u = relevant, non-relevant,
    # pooled-unjudged above. A (j=0): 1. B (j=3): r=1, m=1, u=0: 1/4 + (3/4)(2/3)((1+ε)/(2+2ε)) = 1/4 + 1/4.
    # C (j=5): r=2, m=2: 1/6 + (5/6)(4/5)((2+ε)/(4+2ε)) = 1/6 + 1/3. infAP = (1 + 1/2 + 1/2)/3 = 2/3 (= AP)
    v = values(BP_QRELS, BP_RUN, ["infap", "map@all"])
    assert v["infap"] == pytest.approx(2 / 3, abs=1e-15) and v["map@all"] == pytest.approx(2 / 3, abs=1e-15)
    # U in the pool but not sampled (grade -1): it counts among the documents above as "judged in
    # proportion": B: 1/4 + (3/4)(3/3)(1/2) = 5/8; C: 1/6 + (5/6)(5/5)(1/2) = 7/12.
    # infAP = (1 + 5/8 + 7/12)/3 = 53/72
    sampled = {"q": {**BP_QRELS["q"], "U": -1}}
    want = (1 + (1 / 4 + (3 / 4) * (3 / 3) * ((1 + eps) / (2 + 2 * eps)))
            + (1 / 6 + (5 / 6) * (5 / 5) * ((2 + eps) / (4 + 2 * eps)))) / 3
    assert want == pytest.approx(53 / 72, abs=1e-15)
    assert values(sampled, BP_RUN, ["infap"])["infap"] == pytest.approx(53 / 72, abs=1e-15)


# ---------------------------------------------------------------------------- interpolated precision
def test_iprec_and_11pt_avg_by_hand():
    # relevant at ranks 1, 3, 6 of 6 retrieved, R = 4 (one never retrieved); P_i = 1, 1/2, 2/3, 1/2, 2/5, 1/2.
    # level x needs c = lround(4x) hits: 0,0,1,1,2,2,2,3,3,4,4 for x = 0, 0.1, ..., 1.
    # c = 0 or 1: best P at rank >= 1 = 1; c = 2: best P at rank >= 3 = 2/3; c = 3: at rank >= 6 = 1/2;
    # c = 4 > 3 retrieved: 0. 11pt_avg = (4·1 + 3·2/3 + 2·1/2 + 0)/11 = 7/11
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1, "r4": 1, "n1": 0}}
    run = {"q": ranked("r1", "n1", "r2", "u1", "u2", "r3")}
    v = values(qrels, run, ["iprec_at_recall", "11pt_avg"])
    want = [1, 1, 1, 1, 2 / 3, 2 / 3, 2 / 3, 1 / 2, 1 / 2, 0, 0]
    got = [v[f"iprec_at_recall(recall={x})"] for x in ("0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7",
                                                        "0.8", "0.9", "1")]
    assert got == pytest.approx(want, abs=1e-15)
    assert v["11pt_avg"] == pytest.approx(7 / 11, abs=1e-15)
    # trec_eval 10 rounds halves away from zero: R = 2, x = 0.25 -> c = 1 (lround(0.5)), so rank >= 1
    two = {"q": {"r1": 1, "r2": 1}}
    v2 = values(two, {"q": ranked("u1", "r1", "r2")}, ["iprec_at_recall(recall=0.25)", "iprec_at_recall(recall=0.2)"])
    assert v2["iprec_at_recall(recall=0.25)"] == pytest.approx(2 / 3)  # c = 1: best P at rank >= 2 = max(1/2, 2/3)
    assert v2["iprec_at_recall(recall=0.2)"] == pytest.approx(2 / 3)  # c = lround(0.4) = 0: best P anywhere


# ---------------------------------------------------------------------------- counts, set and F measures
def test_counts_set_measures_and_f1_by_hand():
    qrels = {"q": {"a": 1, "b": 1, "c": 2, "d": 0, "e": -1}}
    run = {"q": ranked("a", "x", "d", "c", "e", "y")}
    v = values(qrels, run, ["num_ret", "num_rel", "num_rel_ret", "num_q", "set_precision", "set_recall", "set_f",
                            "set_f(beta=0.5)", "f1@2", "f1@10", "hits@3", "hits@all", "judged@3", "judged@10"])
    # 6 retrieved, R = 3 (a, b, c), 2 of them retrieved (a, c)
    assert (v["num_ret"], v["num_rel"], v["num_rel_ret"], v["num_q"]) == (6, 3, 2, 1)
    p, r = 2 / 6, 2 / 3
    assert v["set_precision"] == pytest.approx(p) and v["set_recall"] == pytest.approx(r)
    assert v["set_f"] == pytest.approx(2 * p * r / (p + r))  # = 4/9
    assert v["set_f(beta=0.5)"] == pytest.approx(1.5 * p * r / (0.5 * p + r))  # trec_eval's (β+1)PR/(βP+R)
    # F1@k = 2 H_k / (k + R): top 2 holds a -> 2/5; top 10 holds a, c -> 4/13
    assert v["f1@2"] == pytest.approx(2 / 5) and v["f1@10"] == pytest.approx(4 / 13)
    assert v["hits@3"] == 1 and v["hits@all"] == 2
    # judged@3: a, d judged, x not -> 2/3; judged@10 over the 6 retrieved: a, d, c, e (-1 is a judgment) -> 4/6
    assert v["judged@3"] == pytest.approx(2 / 3) and v["judged@10"] == pytest.approx(4 / 6)


def test_hits_on_ranx_readme_example():
    # ranx's README: q_1 relevant d_12 (5), d_25 (3); q_2 relevant d_11 (6), d_22 (1). In the top 5,
    # q_1 has d_12, d_25 and q_2 has d_11, d_22: hits@5 = 2 for both queries
    qrels = {"q_1": {"d_12": 5, "d_25": 3}, "q_2": {"d_11": 6, "d_22": 1}}
    run = {"q_1": {"d_12": 0.9, "d_23": 0.8, "d_25": 0.7, "d_36": 0.6, "d_32": 0.5, "d_35": 0.4},
           "q_2": {"d_12": 0.9, "d_11": 0.8, "d_25": 0.7, "d_36": 0.6, "d_22": 0.5, "d_35": 0.4}}
    t = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=["hits@5", "hits@1"]).table
    got = {(q, k): v for q, k, v in zip(t["query_id"].astype(str), t["k"], t["value"], strict=True)}
    assert got == {("q_1", 5): 2, ("q_2", 5): 2, ("q_1", 1): 1, ("q_2", 1): 0}


# ---------------------------------------------------------------------------- graded: DCG, gains, ERR
def test_dcg_and_gain_maps_by_hand():
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": ranked("c", "a", "b", "u")}
    l3 = math.log2(3)
    v = values(qrels, run, ["dcg@3", "dcg_exp@3", "ndcg@3", "ndcg(gains=0:1,1:2,2:5)@3", "ndcg(gains=2:0)@3"])
    assert v["dcg@3"] == pytest.approx(2 / l3 + 1 / 2)
    assert v["dcg_exp@3"] == pytest.approx(3 / l3 + 1 / 2)
    assert v["ndcg@3"] == pytest.approx((2 / l3 + 1 / 2) / (2 + 1 / l3))
    # gains 0->1, 1->2, 2->5: the run gains 1, 5, 2 (u: unjudged, 0); the ideal 5, 2, 1
    assert v["ndcg(gains=0:1,1:2,2:5)@3"] == pytest.approx((1 + 5 / l3 + 2 / 2) / (5 + 2 / l3 + 1 / 2))
    # grade 2 gains nothing: b (gain 1) at rank 3 against an ideal with b first
    assert v["ndcg(gains=2:0)@3"] == pytest.approx((1 / 2) / 1)


def test_err_by_hand():
    # Chapelle et al.: R_i = (2^g - 1)/2^g_max, g_max = 4. Grades 4, 0, 2: R = 15/16, 0, 3/16.
    # ERR@3 = 15/16 + 0 + (1/3)(3/16)(1 - 15/16)(1 - 0) = 15/16 + 1/256
    qrels = {"q": {"a": 4, "b": 0, "c": 2}}
    v = values(qrels, {"q": ranked("a", "b", "c")}, ["err@1", "err@3", "err(max_grade=5)@3"])
    assert v["err@1"] == pytest.approx(15 / 16, abs=1e-15)
    assert v["err@3"] == pytest.approx(15 / 16 + 1 / 256, abs=1e-15)
    assert v["err(max_grade=5)@3"] == pytest.approx(15 / 32 + (1 / 3) * (3 / 32) * (17 / 32), abs=1e-15)


def test_rbp_and_residual_by_hand():
    # p = 0.5; a relevant, u unjudged, c relevant: RBP = (1 - p)(1 + 0 + p^2) = 0.625;
    # residual = (1 - p) p^1 (u) + p^3 (after the list) = 0.25 + 0.125; together every weight, 1
    qrels = {"q": {"a": 1, "c": 1}}
    v = values(qrels, {"q": ranked("a", "u", "c")}, ["rbp(p=0.5)", "rbp_residual(p=0.5)"])
    assert v["rbp(p=0.5)"] == 0.625 and v["rbp_residual(p=0.5)"] == 0.375
    # fully judged list: no residual (trec_eval's rule), even though ranks after the list are unknown
    v = values({"q": {"a": 1, "u": 0, "c": 1}}, {"q": ranked("a", "u", "c")}, ["rbp_residual(p=0.5)"])
    assert v["rbp_residual(p=0.5)"] == 0.0


# ---------------------------------------------------------------------------- aggregations
def test_declared_aggregations_in_the_summary():
    # three queries: APs 1/2, 1/50 and 0 (floored at 1e-5)
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {f"r{i}": 1 for i in range(50)}, "q3": {"z": 1}}
    run = {"q1": ranked("a", "x", "y", "z2"), "q2": ranked("r0"), "q3": ranked("x")}
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=["gm_map", "map@all", "num_ret", "num_rel",
                                                                       "num_q"])
    s = ev.summary(aggregates=True).set_index("metric")
    gm = s.loc["gm_map"]
    # per query ln(0.5), ln(0.02), ln(1e-5); geometric mean (0.5 · 0.02 · 1e-5)^(1/3) = 10^(-7/3)
    assert gm["aggregation"] == "gmean" and gm["aggregate"] == pytest.approx(10 ** (-7 / 3), rel=1e-12)
    logs = np.log([0.5, 0.02, 1e-5])
    lo, hi = sps.t.interval(0.95, 2, loc=logs.mean(), scale=sps.sem(logs))
    assert gm["mean"] == pytest.approx(logs.mean()) and gm["ci_low"] == pytest.approx(lo)
    assert (gm["aggregate_ci_low"], gm["aggregate_ci_high"]) == pytest.approx((math.exp(lo), math.exp(hi)))
    assert s.loc["map", "aggregation"] == "mean" and s.loc["map", "aggregate"] == s.loc["map", "mean"]
    assert s.loc["map", "aggregate_ci_low"] == s.loc["map", "ci_low"]
    # counts are summed, without an interval
    assert (s.loc["num_ret", "aggregate"], s.loc["num_rel", "aggregate"], s.loc["num_q", "aggregate"]) == (6, 53, 3)
    assert s.loc["num_ret", "aggregation"] == "sum" and np.isnan(s.loc["num_ret", "aggregate_ci_low"])
    # without aggregates=True the summary keeps its columns
    assert list(summarize(ev.table).columns) == ["run", "metric", "k", "n", "mean", "std", "sem", "ci_low",
                                                 "ci_high", "median"]
    with pytest.raises(OptionError, match="metric"):
        summarize(ev.table, by=("run", "k"), aggregates=True)


def test_text_report_and_json_show_the_declared_aggregate():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 1}}
    run = {"q1": ranked("a", "x"), "q2": ranked("x", "b", "y")}
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="r"), metrics=["num_ret", "gm_map", "map@all"])
    text = mean_pm_std_text(ev.table)
    # num_ret: 2 + 3 = 5; gm_map: APs 1 and 1/4 -> sqrt(1/4) = 0.5; map: mean 0.625, std of (1, 0.25)
    assert "5 (sum)" in text and "0.500 (gm)" in text and f"0.625±{np.std([1, 0.25], ddof=1):.3f}" in text
    agg = build_report(ev, include_per_query=False)["aggregates"]["r"]
    assert agg["num_ret"]["aggregate"] == 5 and agg["num_ret"]["aggregation"] == "sum"
    assert agg["num_ret"]["aggregate_ci_low"] is None
    assert agg["gm_map"]["aggregate"] == pytest.approx(0.5) and agg["gm_map"]["aggregation"] == "gmean"
    assert agg["map"]["aggregate"] == agg["map"]["mean"] == pytest.approx(0.625)

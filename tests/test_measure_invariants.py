"""Properties of the measures of issue #11 that hold whatever the numbers.

Bounds, monotonicity in k where it holds, the relations between measures
(set_F is the harmonic mean of set_P and set_recall, 11pt_avg the mean of the
eleven interpolated precisions, num_rel_ret = hits@all ...), judged-only mode
equal to removing the unjudged documents by hand, and order invariance.
Data: :func:`test_invariants.random_data` (grades -1..3, ties, short lists,
missing queries).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_invariants import KS, random_data, sorted_table

from evalcore import Qrels, Run, evaluate
from evalcore.measures import parse_measure
from evalcore.metrics import ALL_METRICS, GM_FLOOR, K_FREE, RECALL_LEVELS, UNBOUNDED

pytestmark = pytest.mark.filterwarnings("ignore:'hits' is now:evalcore.errors.EvalcoreWarning")

NEW = ["hits", "f1", "dcg", "dcg_exp", "err", "judged", "num_ret", "num_rel", "num_rel_ret", "num_q",
       "set_precision", "set_recall", "set_f", "set_f(beta=0.5)", "bpref", "infap", "gm_map", "11pt_avg",
       "iprec_at_recall", "rbp", "rbp(p=0.95)", "rbp_residual", "ndcg(gains=0:1,1:3,3:2)", "map@all",
       "ndcg@all", "mrr@all", "recall@all", "hits@all"]


def wide(ev) -> pd.DataFrame:
    """One column per measure label (``metric@k`` or the k-free name), one row per query."""
    t = ev.table.assign(label=lambda d: [m if k == 0 and m.split("(")[0] in K_FREE else f"{m}@{'all' if k == 0 else k}"
                                         for m, k in zip(d["metric"].astype(str), d["k"], strict=True)])
    return t.pivot_table(index="query_id", columns="label", values="value", observed=True, dropna=False)


@pytest.fixture(scope="module", params=[1, 2, 3], ids=lambda s: f"seed{s}")
def data(request):
    qrels, run = random_data(request.param)
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=NEW + ["precision", "recall", "map"], k=KS)
    return qrels, run, ev, wide(ev)


def col(w: pd.DataFrame, name: str) -> np.ndarray:
    return w[name].to_numpy(dtype=float)


def test_bounds(data):
    _, _, ev, _ = data
    t = ev.table
    base = t["metric"].astype(str).str.split("(").str[0]
    bounded = t[~base.isin(UNBOUNDED)]["value"]
    assert bounded.notna().all() and ((bounded >= 0) & (bounded <= 1 + 1e-12)).all()
    counts = t[base.isin(["hits", "num_ret", "num_rel", "num_rel_ret", "num_q"])]["value"]
    assert (counts >= 0).all() and (counts == np.round(counts)).all()
    assert (t[base.isin(["dcg", "dcg_exp"])]["value"] >= 0).all()
    gm = t[base == "gm_map"]["value"]
    assert ((gm <= 0) & (gm >= np.log(GM_FLOOR) - 1e-12)).all()
    assert (t[base == "err"]["value"] < 1).all()


@pytest.mark.parametrize("metric", ["hits", "dcg", "dcg_exp", "err"])
def test_cumulative_measures_never_fall_as_k_grows(data, metric):
    _, _, _, w = data
    v = np.column_stack([col(w, f"{metric}@{k}") for k in KS])
    assert (np.diff(v, axis=1) >= -1e-12).all() and (np.diff(v, axis=1) > 0).any()


def test_hits_f1_relations(data):
    _, _, _, w = data
    for k in KS:
        h, p, r = col(w, f"hits@{k}"), col(w, f"precision@{k}"), col(w, f"recall@{k}")
        np.testing.assert_allclose(h, p * k, atol=1e-12)
        hm = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)
        np.testing.assert_allclose(col(w, f"f1@{k}"), hm, atol=1e-12)
        assert (h <= k).all()


def test_set_measures_relations(data):
    qrels, run, _, w = data
    sp, sr = col(w, "set_precision"), col(w, "set_recall")
    hm = np.where(sp + sr > 0, 2 * sp * sr / np.where(sp + sr > 0, sp + sr, 1), 0.0)
    np.testing.assert_allclose(col(w, "set_f"), hm, atol=1e-12)
    b = 0.5  # trec_eval's weighting: (b + 1) P R / (b P + R)
    fb = np.where(sp * sr > 0, (b + 1) * sp * sr / np.where(sp * sr > 0, b * sp + sr, 1), 0.0)
    np.testing.assert_allclose(col(w, "set_f(beta=0.5)"), fb, atol=1e-12)
    nrr = col(w, "num_rel_ret")
    np.testing.assert_array_equal(nrr, col(w, "hits@all"))
    np.testing.assert_allclose(nrr, sp * col(w, "num_ret"), atol=1e-9)
    np.testing.assert_allclose(nrr, sr * col(w, "num_rel"), atol=1e-9)
    np.testing.assert_allclose(sr, col(w, "recall@all"), atol=1e-12)
    q = Qrels.from_dict(qrels)
    np.testing.assert_array_equal(col(w, "num_rel"), pd.Series(q.n_relevant(1), index=q.query_ids)[w.index])
    np.testing.assert_array_equal(col(w, "num_ret"), [len(run.get(x, {})) for x in w.index])
    assert (col(w, "num_q") == 1).all()


def test_interpolated_precision_relations(data):
    _, _, _, w = data
    names = [str(parse_measure(f"iprec_at_recall(recall={x})")) for x in RECALL_LEVELS]
    ip = np.column_stack([col(w, n) for n in names])
    assert (np.diff(ip, axis=1) <= 1e-12).all()  # never rises with the recall level
    np.testing.assert_allclose(col(w, "11pt_avg"), ip.mean(axis=1), atol=1e-12)
    # at recall 0 it is the best precision anywhere in the list, >= P@k for every k
    for k in KS:
        assert (ip[:, 0] >= col(w, f"precision@{k}") - 1e-12).all()


def test_gm_map_is_the_floored_log_of_ap_and_its_aggregate_a_geometric_mean(data):
    _, _, ev, w = data
    ap = col(w, "map@all")
    np.testing.assert_allclose(col(w, "gm_map"), np.log(np.maximum(ap, GM_FLOOR)), atol=1e-12)
    s = ev.summary(aggregates=True)
    gm = s[s["metric"] == "gm_map"].iloc[0]
    floored = np.maximum(ap, GM_FLOOR)
    assert gm["aggregate"] == pytest.approx(np.exp(np.log(floored).mean()), rel=1e-12)
    assert gm["aggregate"] <= floored.mean() + 1e-15  # AM >= GM
    assert gm["aggregate_ci_low"] <= gm["aggregate"] <= gm["aggregate_ci_high"]


def test_rbp_and_its_residual(data):
    qrels, run, _, w = data
    rbp, res = col(w, "rbp"), col(w, "rbp_residual")
    # the residual is the weight RBP could still gain: together at most every weight, 1
    assert ((rbp + res) <= 1 + 1e-12).all() and (res > 0).any()
    # a list whose documents all carry a judgment >= 0 has no residual (trec_eval's rule)
    full = [q for q in w.index if run.get(q) and all(qrels[q].get(d, -1) >= 0 for d in run[q])]
    assert full and (col(w.loc[full], "rbp_residual") == 0).all()
    # and one with an unjudged document has at least the tail's weight p^n
    some = [q for q in w.index if run.get(q) and any(qrels[q].get(d, -1) < 0 for d in run[q])]
    n = np.array([len(run[q]) for q in some])
    assert (col(w.loc[some], "rbp_residual") >= 0.8 ** n - 1e-15).all()


def test_ndcg_gain_maps():
    qrels, run = random_data(4)
    qrels = {q: {d: max(g, 0) for d, g in v.items()} for q, v in qrels.items()}  # grades 0..3
    q, r = Qrels.from_dict(qrels), Run.from_dict(run)
    reorder = str(parse_measure("ndcg(gains=1:5,2:1,3:0)"))
    w = wide(evaluate(q, r, metrics=["ndcg", "ndcg(gains=1:3,2:6,3:9)", reorder], k=KS))
    for k in KS:
        base = col(w, f"ndcg@{k}")
        np.testing.assert_allclose(col(w, f"ndcg(gains=1:3,2:6,3:9)@{k}"), base, atol=1e-12)  # scale-free
        assert not np.allclose(col(w, f"{reorder}@{k}"), base)
    # a run ordered by the mapped gain scores 1 wherever some gain is positive (ties: equal gains)
    gains = {0: 0.0, 1: 5.0, 2: 1.0, 3: 0.0}
    perfect = {x: {d: gains[g] for d, g in v.items()} for x, v in qrels.items()}
    w2 = wide(evaluate(q, Run.from_dict(perfect), metrics=[reorder], k=KS))
    ok = [x for x, v in qrels.items() if any(g in (1, 2) for g in v.values())]
    assert len(ok) > 50
    for k in KS:
        np.testing.assert_allclose(col(w2.loc[ok], f"{reorder}@{k}"), 1.0, atol=1e-12)


def test_infap_is_ap_when_every_retrieved_document_is_judged():
    qrels, run = random_data(5)
    judged_run = {q: {d: s for d, s in v.items() if qrels[q].get(d, -1) >= 0} for q, v in run.items()}
    judged_run = {q: v for q, v in judged_run.items() if v}
    w = wide(evaluate(Qrels.from_dict(qrels), Run.from_dict(judged_run), metrics=["infap", "map@all"]))
    np.testing.assert_allclose(col(w, "infap"), col(w, "map@all"), atol=1e-4)  # up to trec_eval's ε
    assert not np.array_equal(col(w, "infap"), col(w, "map@all"))


def test_judged_only_equals_removing_unjudged_documents_by_hand():
    qrels, run = random_data(6)
    q = Qrels.from_dict(qrels)
    measures = NEW + ["precision", "recall", "map", "ndcg", "mrr", "rprec", "first_rel_rank", "hit_rate"]
    a = evaluate(q, Run.from_dict(run, name="r"), metrics=measures, k=KS, judged_only=True)
    kept = {x: {d: s for d, s in v.items() if qrels.get(x, {}).get(d, -1) >= 0} for x, v in run.items()}
    kept = {x: v for x, v in kept.items() if v}
    b = evaluate(q, Run.from_dict(kept, name="r"), metrics=measures, k=KS)
    pd.testing.assert_frame_equal(sorted_table(a), sorted_table(b))
    assert a.settings["judged_only"] is True and b.settings["judged_only"] is False
    # judged@k is then 1 wherever something is left
    w = wide(a)
    left = [x for x in w.index if kept.get(x)]
    assert (col(w.loc[left], "judged@10") == 1).all()
    # queries emptied by the removal are not "missing from the run"
    assert int(a.coverage.loc[0, "n_missing"]) == len([x for x in qrels if x not in run])


def test_judged_at_k_counts_any_judgment_and_divides_by_the_list():
    qrels, run = random_data(7)
    w = wide(evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=["judged"], k=KS, ties="docid_asc"))
    ranked = Run.from_dict(run).ranked_lists(ties="docid_asc")
    for x in w.index:
        docs = [d for d, _ in ranked.get(x, [])]
        for k in KS:
            top = docs[:k]
            want = sum(d in qrels[x] for d in top) / len(top) if top else 0.0
            assert w.loc[x, f"judged@{k}"] == pytest.approx(want, abs=1e-12), (x, k)


def test_new_measures_do_not_depend_on_row_order_or_query_order():
    qrels, run = random_data(8)
    base = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="r"), metrics=NEW, k=KS)
    qf = Qrels.from_dict(qrels).to_frame().sample(frac=1.0, random_state=1)
    rf = Run.from_dict(run).to_frame().sample(frac=1.0, random_state=2)
    other = evaluate(Qrels.from_records(qf["query_id"], qf["doc_id"], qf["relevance"]),
                     Run.from_records(rf["query_id"], rf["doc_id"], rf["score"], name="r"),
                     metrics=NEW[::-1], k=KS[::-1])
    pd.testing.assert_frame_equal(sorted_table(base), sorted_table(other))


def test_every_metric_evaluates_on_edge_cases():
    # an empty list is impossible, but: a query absent from the run, one with only unjudged documents,
    # one with no relevant document, grades negative only in the run's documents
    qrels = {"a": {"x": 1, "y": 0}, "b": {"x": 2}, "c": {"x": 0, "z": -1}, "d": {"x": 1}}
    run = {"b": {"u": 1.0, "v": 0.5}, "c": {"z": 1.0, "x": 0.5}, "d": {"x": 1.0}}
    names = [n for n in ALL_METRICS if n != "iprec_at_recall"] + ["iprec_at_recall"]
    ev = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics=names, k=[1, 5])
    t = ev.table
    assert t["value"].drop(t.index[t["metric"] == "first_rel_rank"]).notna().all()
    w = wide(ev)
    assert w.loc["a", "num_ret"] == 0 and w.loc["a", "rbp_residual"] == 0 and w.loc["a", "judged@5"] == 0
    assert w.loc["b", "rbp_residual"] == 1.0  # (1 - p)(1 + p) + p^2
    assert w.loc["d", "bpref"] == 1.0 and w.loc["d", "11pt_avg"] == 1.0
    assert w.loc["c", "num_rel"] == 0 and w.loc["c", "set_recall"] == 0

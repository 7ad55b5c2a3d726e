"""The user's seed documents' worked examples, as golden values.

Every expected number below is printed in a seed (``/work/shared/seeds/00N_*``)
or computed by a seed's own code copied verbatim (seeds 000 and 004), or by a
seed's formula written out (seed 001). Nothing comes from evalcore's output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalcore import Qrels, Run, evaluate


def one(qrels: Qrels, run: Run, metric: str, k: int | None = None, **kw) -> dict[str, float]:
    """Per-query values of one metric at one k (k=None for k-free metrics)."""
    ev = evaluate(qrels, run, metrics=[metric if k is None else f"{metric}@{k}"], k=[k or 1], **kw)
    t = ev.table
    return dict(zip(t["query_id"].astype(str), t["value"].astype(float), strict=True))


def mean(qrels: Qrels, run: Run, metric: str, k: int | None = None, **kw) -> float:
    return float(np.mean(list(one(qrels, run, metric, k, **kw).values())))


def binary_qrels(truth: dict[str, list]) -> Qrels:
    return Qrels.from_dict({q: {str(d): 1 for d in docs} for q, docs in truth.items()})


def ranked(lists: dict[str, list]) -> Run:
    return Run.from_ranked_lists({q: [str(d) for d in docs] for q, docs in lists.items()})


# ====================================================================== seed 000
# Ada-002 top-k as ground truth (binary), model ranking as run.
ADA5 = [7, 23, 156, 89, 42]


def test_seed000_recall_at_5():
    # "Overlap: {7, 23, 89} = 3 papers; Recall@5 = 3/5 = 0.60"
    q = binary_qrels({"p": ADA5})
    r = ranked({"p": [7, 89, 12, 23, 99]})
    assert one(q, r, "recall", 5)["p"] == pytest.approx(0.60, abs=1e-12)


def test_seed000_ndcg_at_5():
    # Ada top-3 [7, 23, 156], model [7, 99, 23, 156, 12]: DCG 1.93, IDCG 2.13,
    # "NDCG@5 = 1.93 / 2.13 = 0.91"; exactly (1 + 1/2 + 1/log2 5) / (1 + 1/log2 3 + 1/2) = 0.9060
    q = binary_qrels({"p": [7, 23, 156]})
    r = ranked({"p": [7, 99, 23, 156, 12]})
    v = one(q, r, "ndcg", 5)["p"]
    assert round(v, 3) == 0.906
    assert round(v, 2) == 0.91
    assert v == pytest.approx((1 + 0.5 + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 0.5), abs=1e-12)


def test_seed000_mrr():
    # "Model ranking: [99, 7, 23, ...]; first relevant item (7) is at position 2; MRR = 1/2 = 0.50"
    q = binary_qrels({"p": ADA5})
    r = ranked({"p": [99, 7, 23]})
    assert one(q, r, "mrr", 5)["p"] == pytest.approx(0.5, abs=1e-12)


def test_seed000_map_at_5_is_the_hits_found_variant():
    # "MAP@5 = mean(1.0, 0.67, 0.75) = 0.81" (= 0.8056): divides by the hits found (3), not R (5)
    q = binary_qrels({"p": ADA5})
    r = ranked({"p": [7, 99, 23, 156, 12]})
    v = one(q, r, "map_found", 5)["p"]
    assert round(v, 3) == 0.806
    assert round(v, 2) == 0.81
    assert v == pytest.approx((1 + 2 / 3 + 3 / 4) / 3, abs=1e-12)
    # trec_eval's AP (÷R = 5) is a different number, offered as "map"
    assert one(q, r, "map", 5)["p"] == pytest.approx((1 + 2 / 3 + 3 / 4) / 5, abs=1e-12)


# seed 000's functions, verbatim (np as numpy); the spec of the "Ada top-k" protocol
def s000_recall_at_k(ada_top_k, model_top_k, k):
    ada_set = set(ada_top_k[:k])
    model_set = set(model_top_k[:k])
    overlap = len(ada_set & model_set)
    return overlap / k


def s000_ndcg_at_k(ada_top_k, model_ranking, k):
    ada_set = set(ada_top_k[:k])

    # Relevance: 1 if in Ada's top-k, else 0
    relevances = [1.0 if idx in ada_set else 0.0 for idx in model_ranking[:k]]

    dcg = sum(rel / np.log2(i + 2) for i, rel in enumerate(relevances))

    # Ideal DCG: if we ranked all relevant items first
    idcg = sum(1.0 / np.log2(i + 2) for i in range(min(k, len(ada_set))))

    return dcg / idcg if idcg > 0 else 0.0


def s000_mrr(ada_top_k, model_ranking, k):
    ada_set = set(ada_top_k[:k])

    for position, idx in enumerate(model_ranking[:k]):
        if idx in ada_set:
            return 1.0 / (position + 1)  # 1-indexed position

    return 0.0  # No relevant item found


def s000_map_at_k(ada_top_k, model_ranking, k):
    ada_set = set(ada_top_k[:k])

    precisions = []
    relevant_count = 0

    for position, idx in enumerate(model_ranking[:k]):
        if idx in ada_set:
            relevant_count += 1
            precision_at_this_point = relevant_count / (position + 1)
            precisions.append(precision_at_this_point)

    return np.mean(precisions) if precisions else 0.0


@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_seed000_functions_on_random_rankings(k):
    # protocol: ground truth of query i at cutoff k = Ada's top-k; model ranking of 20 papers
    rng = np.random.default_rng(1000 + k)
    truth, model = {}, {}
    for i in range(60):
        pool = rng.permutation(40)
        truth[f"q{i}"] = pool[:k].tolist()
        model[f"q{i}"] = rng.permutation(np.r_[pool[: rng.integers(0, k + 1)], 40 + np.arange(20)])[:20].tolist()
    q, r = binary_qrels(truth), ranked(model)
    oracle = {
        "recall": s000_recall_at_k,
        "ndcg": s000_ndcg_at_k,
        "mrr": s000_mrr,
        "map_found": s000_map_at_k,
    }
    for metric, fn in oracle.items():
        ours = one(q, r, metric, k)
        for qid in truth:
            assert ours[qid] == pytest.approx(fn(truth[qid], model[qid], k), abs=1e-12), (metric, qid)


# ====================================================================== seed 002
def test_seed002_mrr_over_three_queries():
    # "Query 1: relevant at rank 1; Query 2: at rank 3; Query 3: no relevant in top-10;
    #  MRR@10 = (1.0 + 0.333 + 0.0) / 3 = 0.444"
    q = Qrels.from_dict({"q1": {"r1": 1}, "q2": {"r2": 1}, "q3": {"r3": 1}})
    r = ranked({
        "q1": ["r1", "a", "b"],
        "q2": ["a", "b", "r2", "c"],
        "q3": [f"n{i}" for i in range(10)] + ["r3"],  # relevant at rank 11: outside the top 10
    })
    vals = one(q, r, "mrr", 10)
    assert vals == pytest.approx({"q1": 1.0, "q2": 1 / 3, "q3": 0.0}, abs=1e-12)
    assert round(mean(q, r, "mrr", 10), 3) == 0.444


def test_seed002_mrr_code_example():
    # mean_reciprocal_rank(results=["doc1", "doc2", "doc3"], relevant_docs={"doc2"}, k=10) -> 0.5
    q = Qrels.from_dict({"q": {"doc2": 1}})
    r = ranked({"q": ["doc1", "doc2", "doc3"]})
    assert one(q, r, "mrr", 10)["q"] == pytest.approx(0.5, abs=1e-12)


SEED002_RETRIEVED = ["doc1", "doc2", "doc3", "doc4", "doc5", "doc6", "doc8", "doc9", "doc10", "doc11"]


def test_seed002_recall_at_10():
    # "Relevant {doc2, doc4, doc7}; retrieved top-10 [doc1, doc2, doc3, doc4, doc5, ...];
    #  Recall@10 = 2 / 3 = 0.667"
    q = binary_qrels({"q": ["doc2", "doc4", "doc7"]})
    r = ranked({"q": SEED002_RETRIEVED})
    v = one(q, r, "recall", 10)["q"]
    assert round(v, 3) == 0.667
    assert v == pytest.approx(2 / 3, abs=1e-12)


def test_seed002_precision_at_10():
    # "Precision@10 = 2 / 10 = 0.2"
    q = binary_qrels({"q": ["doc2", "doc4", "doc7"]})
    r = ranked({"q": SEED002_RETRIEVED})
    assert one(q, r, "precision", 10)["q"] == pytest.approx(0.2, abs=1e-12)


def test_seed002_ndcg():
    # "Retrieved [doc1(0), doc2(1), doc3(0), doc4(1), doc5(0)]; DCG = 1.062; IDCG = 1.631;
    #  NDCG = 1.062 / 1.631 = 0.651"  (relevant = {doc2, doc4})
    q = Qrels.from_dict({"q": {"doc1": 0, "doc2": 1, "doc3": 0, "doc4": 1, "doc5": 0}})
    r = ranked({"q": ["doc1", "doc2", "doc3", "doc4", "doc5"]})
    for k in (5, 10):
        v = one(q, r, "ndcg", k)["q"]
        assert round(v, 3) == 0.651
        assert v == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)), abs=1e-12)


def test_seed002_average_precision_divides_by_R():
    # "Retrieved [doc2✓, doc3✗, doc4✓, doc5✗], Relevant {doc2, doc4, doc7};
    #  AP = (1.0×1 + 0.667×1) / 3 = 0.556"
    q = binary_qrels({"q": ["doc2", "doc4", "doc7"]})
    r = ranked({"q": ["doc2", "doc3", "doc4", "doc5"]})
    for k in (4, 100):  # AP@K with K >= 4 and plain AP agree here
        v = one(q, r, "map", k)["q"]
        assert round(v, 3) == 0.556
        assert v == pytest.approx((1 + 2 / 3) / 3, abs=1e-12)


# ====================================================================== seed 004
# The tutorial's data and functions, verbatim. Its nDCG cell passes document ids as scores
# to scikit-learn (a bug of the tutorial, see ../shared/README.md): not used as a spec.
ground_truth = [
    [11,  1,  7, 17, 21],
    [ 4, 16,  1],
    [26, 10, 22,  8],
]

results = [
    [11,  1, 17,  7, 21,  8,  0, 28,  9, 20],
    [16,  1,  6, 18,  3,  4, 25, 19,  8, 14],
    [24, 10, 26,  2,  8, 28,  4, 23, 13, 21],
]

cutoffs = [1, 5, 10]


def calc_recall(preds, truths, cutoffs):
    recalls = np.zeros(len(cutoffs))
    for text, truth in zip(preds, truths):  # noqa: B905 (verbatim)
        for i, c in enumerate(cutoffs):
            hits = np.intersect1d(truth, text[:c])
            recalls[i] += len(hits) / max(min(c, len(truth)), 1)
    recalls /= len(preds)
    return recalls


def calc_MRR(preds, truth, cutoffs):
    mrr = [0 for _ in range(len(cutoffs))]
    for pred, t in zip(preds, truth):  # noqa: B905 (verbatim)
        for i, c in enumerate(cutoffs):
            for j, p in enumerate(pred):
                if j < c and p in t:
                    mrr[i] += 1/(j+1)
                    break
    mrr = [k/len(preds) for k in mrr]
    return mrr


def calc_precision(preds, truths, cutoffs):
    prec = np.zeros(len(cutoffs))
    for text, truth in zip(preds, truths):  # noqa: B905 (verbatim)
        for i, c in enumerate(cutoffs):
            hits = np.intersect1d(truth, text[:c])
            prec[i] += len(hits) / c
    prec /= len(preds)
    return prec


def calc_AP(encoding):
    rel = 0
    precs = 0.0
    for k, hit in enumerate(encoding, start=1):
        if hit == 1:
            rel += 1
            precs += rel/k

    return 0 if rel == 0 else precs/rel


def calc_MAP(encodings, cutoffs):
    res = []
    for c in cutoffs:
        ap_sum = 0.0
        for encoding in encodings:
            ap_sum += calc_AP(encoding[:c])
        res.append(ap_sum/len(encodings))

    return res


def _pred_hard_encodings(results, ground_truth):
    pred_hard_encodings = []
    for pred, label in zip(results, ground_truth):  # noqa: B905 (verbatim)
        pred_hard_encoding = list(np.isin(pred, label).astype(int))
        pred_hard_encodings.append(pred_hard_encoding)
    return pred_hard_encodings


def _seed004_oracle(preds, truths):
    return {
        "recall_capped": list(calc_recall(preds, truths, cutoffs)),
        "mrr": list(calc_MRR(preds, truths, cutoffs)),
        "precision": list(calc_precision(preds, truths, cutoffs)),
        "map_found": list(calc_MAP(_pred_hard_encodings(preds, truths), cutoffs)),
    }


def _ours_seed004(preds, truths) -> dict[str, list[float]]:
    q = binary_qrels({f"q{i}": t for i, t in enumerate(truths)})
    r = ranked({f"q{i}": p for i, p in enumerate(preds)})
    ev = evaluate(q, r, metrics=["recall_capped", "mrr", "precision", "map_found"], k=cutoffs)
    m = ev.table.groupby(["metric", "k"], observed=True)["value"].mean()
    return {name: [float(m[(name, c)]) for c in cutoffs] for name in ("recall_capped", "mrr", "precision", "map_found")}


def test_seed004_tutorial_example_against_its_own_code():
    oracle = _seed004_oracle(results, ground_truth)
    ours = _ours_seed004(results, ground_truth)
    for name in oracle:
        assert ours[name] == pytest.approx(oracle[name], abs=1e-12), name


def test_seed004_values_by_hand():
    ours = _ours_seed004(results, ground_truth)
    # recall (÷ min(c, |truth|)): @1 q1 11✓ 1/1, q2 16✓ 1/1, q3 24✗ 0 -> 2/3
    #   @5 q1 5/5, q2 {16,1}/3, q3 {10,26,8}/4 -> (1 + 2/3 + 3/4)/3
    #   @10 q1 5/5, q2 {16,1,4}/3, q3 {10,26,8}/4 -> (1 + 1 + 3/4)/3
    assert ours["recall_capped"] == pytest.approx([2 / 3, (1 + 2 / 3 + 3 / 4) / 3, 2.75 / 3], abs=1e-12)
    # MRR: first hits at ranks 1, 1, 2 -> @1 (1+1+0)/3, @5 and @10 (1+1+1/2)/3
    assert ours["mrr"] == pytest.approx([2 / 3, 2.5 / 3, 2.5 / 3], abs=1e-12)
    # precision: @5 (5+2+3)/5/3, @10 (5+3+3)/10/3
    assert ours["precision"] == pytest.approx([2 / 3, 2 / 3, 1.1 / 3], abs=1e-12)
    # MAP ÷ hits found: @5 q1 1, q2 (1+1)/2, q3 hits at 2,3,5 -> (1/2 + 2/3 + 3/5)/3
    assert ours["map_found"][1] == pytest.approx((1 + 1 + (1 / 2 + 2 / 3 + 3 / 5) / 3) / 3, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_seed004_functions_on_random_data(seed):
    rng = np.random.default_rng(4000 + seed)
    truths, preds = [], []
    for _ in range(80):
        n_rel = int(rng.integers(1, 8))
        truths.append(rng.choice(30, size=n_rel, replace=False).tolist())
        preds.append(rng.choice(30, size=int(rng.integers(10, 16)), replace=False).tolist())
    oracle = _seed004_oracle(preds, truths)
    ours = _ours_seed004(preds, truths)
    for name in oracle:
        assert ours[name] == pytest.approx(oracle[name], abs=1e-12), name


# ====================================================================== seed 001
K = 5


def s001_ndcg_at_k(pred: list[str], gt: list[str], k: int) -> float:
    """Seed 001 §5.3 / Step 5, written out: rel_map[gt[i]] = 5 - i; exponential gain;
    IDCG over gt[:k] (the ground-truth order)."""
    rel_map = {g: 5 - i for i, g in enumerate(gt)}
    dcg = sum((2 ** rel_map.get(p, 0) - 1) / math.log2(i + 2) for i, p in enumerate(pred[:k]))
    idcg = sum((2 ** rel_map[g] - 1) / math.log2(i + 2) for i, g in enumerate(gt[:k]))
    return dcg / idcg if idcg > 0 else 0.0


def s001_hits_at_k(pred, gt, k):
    return len(set(pred[:k]) & set(gt)) / len(gt)


def s001_rr_at_k(pred, gt_set, k):
    for i, p in enumerate(pred[:k]):
        if p in gt_set:
            return 1 / (i + 1)
    return 0.0


def graded_qrels(gts: dict[str, list[str]]) -> Qrels:
    # §4: rel = 6 - pos for the 5 ordered ground-truth items
    return Qrels.from_dict({q: {d: 6 - (i + 1) for i, d in enumerate(gt)} for q, gt in gts.items()})


def test_seed001_exponential_ndcg_hand_example():
    gt = ["m1", "m2", "m3", "m4", "m5"]  # grades 5, 4, 3, 2, 1
    pred = ["m2", "x", "m1", "m5", "y"]
    q, r = graded_qrels({"q": gt}), ranked({"q": pred})
    dcg = 15 / 1 + 0 + 31 / 2 + 1 / math.log2(5)
    idcg = 31 + 15 / math.log2(3) + 7 / 2 + 3 / math.log2(5) + 1 / math.log2(6)
    assert one(q, r, "ndcg_exp", K)["q"] == pytest.approx(dcg / idcg, abs=1e-12)
    assert s001_ndcg_at_k(pred, gt, K) == pytest.approx(dcg / idcg, abs=1e-12)


def test_seed001_metrics_on_random_movie_rankings():
    rng = np.random.default_rng(1)
    movies = [f"tt{i:07d}" for i in range(50)]
    gts, preds = {}, {}
    for q in movies:
        others = [m for m in movies if m != q]
        gts[q] = list(rng.choice(others, size=5, replace=False))
        # a ranking of all 49 candidates, biased toward the ground truth
        boost = np.array([3.0 if m in gts[q] else 0.0 for m in others])
        order = np.argsort(-(rng.random(49) * 4 + boost * rng.random(49)), kind="stable")
        preds[q] = [others[i] for i in order]
    q, r = graded_qrels(gts), ranked(preds)
    nd = one(q, r, "ndcg_exp", K)
    hits_p = one(q, r, "precision", K)
    hits_r = one(q, r, "recall", K)
    rr = one(q, r, "mrr", K)
    for m in movies:
        assert nd[m] == pytest.approx(s001_ndcg_at_k(preds[m], gts[m], K), abs=1e-12)
        # §5.1: with K = |GT| = 5, Precision@5 = Recall@5 = Hits@5
        assert hits_p[m] == pytest.approx(s001_hits_at_k(preds[m], gts[m], K), abs=1e-12)
        assert hits_r[m] == pytest.approx(s001_hits_at_k(preds[m], gts[m], K), abs=1e-12)
        assert rr[m] == pytest.approx(s001_rr_at_k(preds[m], set(gts[m]), K), abs=1e-12)
    assert 0 < np.mean(list(nd.values())) < 1  # a non-trivial mix of hits and misses


# ====================================================================== intermediate numbers and printed tables
def test_seed000_ndcg_example_dcg_and_idcg():
    """Seed 000 "Metrics Explained" §2 (NDCG@k) example: "DCG = 1.0 + 0 + 0.5 + 0.43 + 0 = 1.93" and
    "IDCG = 1.0 + 0.63 + 0.5 = 2.13" (the ideal: all 3 at top)."""
    q = binary_qrels({"p": [7, 23, 156]})
    assert round(one(q, ranked({"p": [7, 99, 23, 156, 12]}), "dcg", 5)["p"], 2) == 1.93
    assert round(one(q, ranked({"p": [7, 23, 156]}), "dcg", 5)["p"], 2) == 2.13


def test_seed002_ndcg_example_dcg_and_idcg():
    """Seed 002 "Relevance Metrics" §4 (NDCG@K) example: "DCG = 0 + 0.631 + 0 + 0.431 = 1.062" and
    "IDCG = 1 + 0.631 = 1.631" (ideal: [doc2(1), doc4(1), doc1(0), ...])."""
    q = Qrels.from_dict({"q": {"doc1": 0, "doc2": 1, "doc3": 0, "doc4": 1, "doc5": 0}})
    assert round(one(q, ranked({"q": ["doc1", "doc2", "doc3", "doc4", "doc5"]}), "dcg", 5)["q"], 3) == 1.062
    assert round(one(q, ranked({"q": ["doc2", "doc4", "doc1", "doc3", "doc5"]}), "dcg", 5)["q"], 3) == 1.631


def test_seed000_printed_k1_cells_are_mean_pm_sample_std():
    """Seed 000 "Example Output" at k = 1 over --n-samples 500: base_st "0.156±0.363" and finetuned_st
    "0.234±0.424" in all four columns (at k = 1 Recall = NDCG = MRR = MAP, a 0/1 value per query:
    78 and 117 hits of 500). 0.424 is the sample std (ddof 1): numpy's population std gives 0.423.
    Printed by the CLI's formatter from an evaluation."""
    from evalcore.summaries import columns_mean_pm_std_text

    qids = [f"q{i:03d}" for i in range(500)]
    qrels = Qrels.from_dict({q: {"r": 1} for q in qids})
    runs = [Run.from_ranked_lists({q: (["r", "x"] if i < hits else ["x", "r"]) for i, q in enumerate(qids)}, name=n)
            for n, hits in (("base_st", 78), ("finetuned_st", 117))]
    ev = evaluate(qrels, runs, metrics=["recall", "ndcg", "mrr", "map_found"], k=[1])
    lines = columns_mean_pm_std_text(ev.columns).splitlines()
    k1 = [line.split() for line in lines if line.split()[:1] == ["1"]]
    assert k1 == [["1"] + ["0.156±0.363"] * 4, ["1"] + ["0.234±0.424"] * 4]


# ====================================================================== seed 003
SEED003_MANUAL = {"코딩": 3, "개발": 3, "프로그램": 2, "소프트웨어": 2, "컴퓨터": 1, "언어": 1}  # §7 Method 2


def test_seed003_exponential_gains_7_3_1():
    """Seed 003 §1.3: "Grade 3 (exact synonym) contributes 2^3 − 1 = 7 to gain; Grade 2 ... 3; Grade 1 ... 1"
    (at rank 1, where the discount log2(2) is 1)."""
    q = Qrels.from_dict({"프로그래밍": SEED003_MANUAL})
    for doc, gain in (("코딩", 7), ("프로그램", 3), ("컴퓨터", 1)):
        assert one(q, ranked({"프로그래밍": [doc, "사과"]}), "dcg_exp", 1)["프로그래밍"] == gain


def s003_ndcg(ranking: list[str], judgments: dict[str, int], k: int) -> float:
    """Seed 003 §1.3 written out: DCG@K = Σ (2^rel_i − 1) / log2(i + 1); IDCG@K = DCG@K of the ideal ranking."""
    def dcg(grades: list[int]) -> float:
        return sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(grades[:k]))
    idcg = dcg(sorted(judgments.values(), reverse=True))
    return dcg([judgments.get(t, 0) for t in ranking]) / idcg if idcg > 0 else 0.0


def s003_recall(ranking: list[str], judgments: dict[str, int], k: int, theta: int) -> float:
    """Seed 003 §1.1: Recall@K(θ) = |{i in top-K : rel_i >= θ}| / |{j : rel_j >= θ}|."""
    den = sum(1 for g in judgments.values() if g >= theta)
    return sum(1 for t in ranking[:k] if judgments.get(t, 0) >= theta) / den if den else 0.0


def s003_first_rank(ranking: list[str], judgments: dict[str, int]) -> int | None:
    """Seed 003 §1.2: rank_q, the position of the first relevant item (grade >= 1); None if none."""
    return next((i for i, t in enumerate(ranking, start=1) if judgments.get(t, 0) >= 1), None)


@pytest.mark.parametrize("seed", range(3))
def test_seed003_formulas_on_random_graded_rankings(seed):
    """Seed 003 §1.1–1.3 on random tie-heavy rankings of 0–3 graded items among unjudged ones, K = 5, 10, 20."""
    rng = np.random.default_rng(3000 + seed)
    judg, ranks = {}, {}
    for i in range(60):
        n = int(rng.integers(0, 8))
        judg[f"q{i}"] = {f"t{j}": int(g) for j, g in enumerate(rng.integers(0, 4, size=n))}
        pool = list(judg[f"q{i}"]) + [f"u{j}" for j in range(int(rng.integers(0, 25)))]
        ranks[f"q{i}"] = [str(x) for x in rng.permutation(pool)]
    q = Qrels.from_dict({k: v for k, v in judg.items()})
    r = ranked(ranks)
    for k in (5, 10, 20):
        nd = one(q, r, "ndcg_exp", k)
        for qid in judg:
            assert nd.get(qid, 0.0) == pytest.approx(s003_ndcg(ranks[qid], judg[qid], k), abs=1e-12), (qid, k)
        for theta in (1, 2, 3):
            rc = one(q, r, f"recall(rel={theta})", k)
            for qid in judg:
                assert rc.get(qid, 0.0) == pytest.approx(s003_recall(ranks[qid], judg[qid], k, theta), abs=1e-12)
    rr = one(q, r, "mrr@all")
    first = one(q, r, "first_rel_rank")
    assert len(first) >= 50 and sum(math.isnan(v) for v in first.values()) >= 3  # found and not found
    for qid in judg:
        want = s003_first_rank(ranks[qid], judg[qid])
        assert rr.get(qid, 0.0) == pytest.approx(0.0 if want is None else 1 / want, abs=1e-12)
        if qid in first:
            assert (math.isnan(first[qid]) if want is None else first[qid] == want), qid


# ====================================================================== seed 004, its formulas
def s004_ndcg(pred: list[int], truth: list[int], p: int) -> float:
    """Seed 004 §3 written out: DCG_p = Σ_{i<=p} (2^rel_i − 1) / log2(i + 1), rel_i = [pred_i in truth];
    IDCG_p = the maximum DCG_p, the relevant documents perfectly ranked."""
    dcg = sum((2 ** int(d in truth) - 1) / math.log2(i + 2) for i, d in enumerate(pred[:p]))
    idcg = sum(1 / math.log2(i + 2) for i in range(min(p, len(truth))))
    return dcg / idcg


def s004_ap_formula(pred: list[int], truth: list[int], c: int) -> float:
    """Seed 004 §5's AP formula: Σ_{k<=M} Relevance(k) · Precision(k) / |{Relevant Docs}| (M = c retrieved)."""
    hits, total = 0, 0.0
    for k, d in enumerate(pred[:c], start=1):
        if d in truth:
            hits += 1
            total += hits / k
    return total / len(truth)


def test_seed004_ndcg_and_ap_formulas_on_its_data():
    """Seed 004 §3 (nDCG, its formula; the tutorial's scikit-learn cell passes ids as scores and is not used)
    and §5's AP *formula* (÷ |Relevant|, evalcore's ``map``; its ``calc_AP`` code ÷ hits is ``map_found``)."""
    q = binary_qrels({f"q{i}": t for i, t in enumerate(ground_truth)})
    r = ranked({f"q{i}": p for i, p in enumerate(results)})
    for c in cutoffs:
        for metric in ("ndcg", "ndcg_exp"):
            got = one(q, r, metric, c)
            for i, (p, t) in enumerate(zip(results, ground_truth, strict=True)):
                assert got[f"q{i}"] == pytest.approx(s004_ndcg(p, t, c), abs=1e-12), (metric, c, i)
        ap = one(q, r, "map", c)
        for i, (p, t) in enumerate(zip(results, ground_truth, strict=True)):
            assert ap[f"q{i}"] == pytest.approx(s004_ap_formula(p, t, c), abs=1e-12), (c, i)

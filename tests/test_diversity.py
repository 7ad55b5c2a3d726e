"""Tests of evalcore.diversity: seed 002's worked examples and invariants.

Vectors with prescribed pairwise cosines come from the Cholesky factor of the
Gram matrix: the rows of L (with L L^T = G, diag G = 1) are unit vectors whose
dot products are exactly the entries of G (up to float64 rounding).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from evalcore.diversity import alpha_dcg, alpha_ndcg, intra_list_diversity
from evalcore.errors import DuplicateIdError, NonFiniteValueError, OptionError, ShapeMismatchError
from evalcore.retrieval import normalize


def vectors_with_cosines(gram) -> np.ndarray:
    gram = np.asarray(gram, dtype=np.float64)
    vec = np.linalg.cholesky(gram)
    np.testing.assert_allclose(vec @ vec.T, gram, atol=1e-12)
    return vec


def brute_ild(lists, emb):
    out = []
    for row in lists:
        docs = [d for d in row if d >= 0]
        pairs = list(itertools.combinations(docs, 2))
        out.append(np.mean([1 - emb[a] @ emb[b] for a, b in pairs]) if pairs else 0.0)
    return np.array(out)


def brute_alpha_dcg(row, grades, emb, alpha, k):
    total, previous = 0.0, []
    for pos, doc in enumerate(row[:k], start=1):
        if doc < 0:
            continue
        novelty = 1.0 if not previous else min(1.0, max(0.0, 1 - max(emb[doc] @ emb[p] for p in previous)))
        total += grades.get(doc, 0.0) * (alpha + (1 - alpha) * novelty) / np.log2(pos + 1)
        previous.append(doc)
    return total


def linear_ndcg(row, grades, k):
    dcg = sum(grades.get(d, 0) / np.log2(i + 2) for i, d in enumerate(row[:k]) if d >= 0)
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / np.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


# --------------------------------------------------------------------------- seed 002 worked examples


def test_ild_worked_example():
    # sim(1,2) = 0.9, sim(1,3) = 0.3, sim(2,3) = 0.4  ->  (0.1 + 0.7 + 0.6) / 3
    emb = vectors_with_cosines([[1, 0.9, 0.3], [0.9, 1, 0.4], [0.3, 0.4, 1]])
    ild = intra_list_diversity(np.array([[0, 1, 2]]), emb)
    assert ild.shape == (1,)
    assert ild[0] == pytest.approx(1.4 / 3, abs=1e-12)
    assert round(float(ild[0]), 3) == 0.467


def test_alpha_dcg_worked_example():
    # doc1 relevant, doc2 relevant with sim 0.2 to doc1, doc3 not relevant (0.1 sim)
    emb = vectors_with_cosines([[1, 0.2, 0.1], [0.2, 1, 0.1], [0.1, 0.1, 1]])
    got = alpha_dcg(np.array([[0, 1, 2]]), [{0: 1, 1: 1}], emb, alpha=0.5, k=3)
    assert got[0] == pytest.approx(1.0 + 0.9 / np.log2(3), abs=1e-12)
    assert round(float(got[0]), 3) == 1.568
    # alpha-nDCG divides by the ideal (two relevant docs, novelty 1): 1 + 1/log2(3)
    nd = alpha_ndcg(np.array([[0, 1, 2]]), [{0: 1, 1: 1}], emb, alpha=0.5, k=3)
    assert nd[0] == pytest.approx((1.0 + 0.9 / np.log2(3)) / (1.0 + 1.0 / np.log2(3)), abs=1e-12)


# --------------------------------------------------------------------------- ILD invariants


def test_ild_matches_pairwise_definition_with_padding():
    rng = np.random.default_rng(0)
    emb = normalize(rng.standard_normal((60, 9))).astype(np.float64)
    lists = rng.integers(0, 60, size=(25, 8))
    lists[3, 5:] = -1
    lists[4, 1:] = -1  # a single document
    lists[5, :] = -1  # empty
    lists[6, ::2] = -1  # padding in the middle
    np.testing.assert_allclose(intra_list_diversity(lists, emb), brute_ild(lists, emb), atol=1e-12)
    assert intra_list_diversity(lists, emb)[4] == 0.0 and intra_list_diversity(lists, emb)[5] == 0.0


def test_ild_extremes():
    e = np.eye(5)
    assert intra_list_diversity([[0, 1, 2, 3, 4]], e)[0] == pytest.approx(1.0)  # orthogonal
    same = np.tile([[0.6, 0.8]], (4, 1))
    assert intra_list_diversity([[0, 1, 2, 3]], same)[0] == pytest.approx(0.0, abs=1e-12)  # identical
    opposite = np.array([[1.0, 0], [-1.0, 0]])
    assert intra_list_diversity([[0, 1]], opposite)[0] == pytest.approx(2.0)
    assert intra_list_diversity(np.zeros((0, 3), int), e).shape == (0,)


def test_ild_invariant_to_order_within_list():
    rng = np.random.default_rng(1)
    emb = normalize(rng.standard_normal((30, 4)))
    lists = rng.integers(0, 30, size=(10, 6))
    shuffled = np.array([rng.permutation(r) for r in lists])
    np.testing.assert_allclose(intra_list_diversity(lists, emb), intra_list_diversity(shuffled, emb), atol=1e-6)


# --------------------------------------------------------------------------- alpha-nDCG invariants


def test_alpha_dcg_matches_definition_random():
    rng = np.random.default_rng(3)
    emb = normalize(rng.standard_normal((80, 6))).astype(np.float64)
    lists = np.array([rng.choice(80, 10, replace=False) for _ in range(15)])
    lists[2, 7:] = -1
    lists[5, 0] = -1
    rels = [{int(d): int(g) for d, g in zip(rng.choice(80, 12, replace=False), rng.integers(0, 4, 12), strict=True)}
            for _ in range(15)]
    for alpha in (0.0, 0.3, 0.5, 1.0):
        for k in (1, 5, 10, 20):
            got = alpha_dcg(lists, rels, emb, alpha=alpha, k=k)
            want = [brute_alpha_dcg(lists[i], rels[i], emb, alpha, k) for i in range(15)]
            np.testing.assert_allclose(got, want, atol=1e-12)


def test_alpha_ndcg_equals_ndcg_for_orthogonal_docs_and_alpha_one():
    rng = np.random.default_rng(4)
    n = 40
    lists = np.array([rng.choice(n, 8, replace=False) for _ in range(12)])
    rels = [{int(d): int(g) for d, g in zip(rng.choice(n, 10, replace=False), rng.integers(0, 3, 10), strict=True)}
            for _ in range(12)]
    want = np.array([linear_ndcg(lists[i], rels[i], 8) for i in range(12)])
    np.testing.assert_allclose(alpha_ndcg(lists, rels, np.eye(n), alpha=0.2, k=8), want, atol=1e-12)
    emb = normalize(rng.standard_normal((n, 3)))  # very redundant space
    np.testing.assert_allclose(alpha_ndcg(lists, rels, emb, alpha=1.0, k=8), want, atol=1e-12)
    # redundancy can only lower the score, and it stays within [0, 1]
    low = alpha_ndcg(lists, rels, emb, alpha=0.2, k=8)
    assert (low <= want + 1e-12).all() and (low >= 0).all() and (low <= 1 + 1e-12).all()


def test_alpha_ndcg_ideal_and_duplicates_of_content():
    emb = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    rel = [{0: 1, 1: 1, 2: 1}]
    # two identical relevant docs first: the second one earns only alpha
    got = alpha_dcg([[0, 1, 2]], rel, emb, alpha=0.25, k=3)[0]
    assert got == pytest.approx(1 + 0.25 / np.log2(3) + 1 / np.log2(4))
    assert alpha_ndcg([[0, 2, 1]], rel, emb, alpha=0.25, k=3)[0] > alpha_ndcg([[0, 1, 2]], rel, emb, alpha=0.25,
                                                                              k=3)[0]
    assert alpha_ndcg([[2, 0]], [{}], emb, alpha=0.5, k=2)[0] == 0.0  # no relevant docs


def test_relevance_formats_agree():
    rng = np.random.default_rng(5)
    emb = normalize(rng.standard_normal((20, 4)))
    lists = np.array([rng.choice(20, 5, replace=False) for _ in range(6)])
    dense = rng.integers(-1, 4, size=(6, 20)).astype(float)  # negative grades count as 0
    maps = [{j: dense[i, j] for j in range(20) if dense[i, j] != 0} for i in range(6)]
    a = alpha_ndcg(lists, dense, emb, k=5)
    np.testing.assert_allclose(alpha_ndcg(lists, maps, emb, k=5), a, atol=1e-12)
    np.testing.assert_allclose(alpha_ndcg(lists, sp.csr_matrix(dense), emb, k=5), a, atol=1e-12)
    np.testing.assert_allclose(alpha_ndcg(lists, dense.tolist(), emb, k=5), a, atol=1e-12)


def test_diversity_errors():
    emb = np.eye(3)
    with pytest.raises(OptionError, match="alpha"):
        alpha_ndcg([[0, 1]], [{0: 1}], emb, alpha=1.5, k=2)
    with pytest.raises(OptionError, match="k must be"):
        alpha_ndcg([[0, 1]], [{0: 1}], emb, k=0)
    with pytest.raises(DuplicateIdError, match="row 1 twice"):
        alpha_ndcg([[1, 0, 1]], [{0: 1}], emb, k=3)
    with pytest.raises(ShapeMismatchError, match=r"lists\[0, 1\] = 7"):
        intra_list_diversity([[0, 7]], emb)
    with pytest.raises(ShapeMismatchError, match="2 entries but there are 1 lists"):
        alpha_ndcg([[0, 1]], [{0: 1}, {}], emb, k=2)
    bad = emb.copy()
    bad[1, 1] = np.nan
    with pytest.raises(NonFiniteValueError, match="first at row 1"):
        intra_list_diversity([[0, 1]], bad)


# ------------------------------------------------------------------------------------------ the bound α-nDCG <= nDCG


def _bound_inputs(seed: int):
    """Random embedded items, graded qrels (tie-heavy grades) and a run over them."""
    from evalcore.data import Qrels, Run
    from evalcore.io import Embeddings

    rng = np.random.default_rng(seed)
    ids = [f"i{j:03d}" for j in range(60)]
    emb = Embeddings.from_arrays(ids, rng.normal(size=(60, 6)).astype(np.float32))
    qids = [f"q{i}" for i in range(12)]
    qrows = [(q, d, int(g)) for q in qids for d, g in zip(rng.choice(ids, 8, replace=False),
                                                           rng.integers(0, 4, 8), strict=True)]
    qrels = Qrels.from_frame(__import__("pandas").DataFrame(qrows, columns=["query_id", "doc_id", "relevance"]))
    run = Run.from_dict({q: {str(d): float(s) for d, s in zip(rng.choice(ids, 15, replace=False),
                                                              rng.integers(0, 5, 15), strict=True)}
                         for q in qids}, name="r")
    return emb, qrels, run


@pytest.mark.parametrize("seed", range(4))
def test_alpha_ndcg_never_exceeds_ndcg_on_the_same_ground_truth(seed):
    from evalcore.diversity import diversity_table
    from evalcore.evaluate import evaluate

    emb, qrels, run = _bound_inputs(seed)
    ks = [1, 3, 5, 10]
    ev = evaluate(qrels, {"r": run}, metrics=["ndcg"], k=ks, ties="trec")
    for alpha in (0.0, 0.5, 1.0):
        div = diversity_table(run, emb, k_values=ks, alpha=alpha, qrels=qrels, ties="trec")
        a = div[div["metric"].astype(str).str.startswith("alpha")].set_index(["query_id", "k"])["value"]
        n = ev.table.set_index(["query_id", "k"])["value"]
        assert (a <= n.reindex(a.index) + 1e-12).all()
        if alpha == 1.0:
            np.testing.assert_allclose(a.to_numpy(), n.reindex(a.index).to_numpy(), atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_judged_only_alpha_ndcg_is_on_the_lists_ndcg_scores(seed):
    """trec_eval -J drops unjudged documents before scoring: α-nDCG@k follows, on the same lists as nDCG@k,
    so it stays below nDCG@k and equals it at α = 1 (before, nDCG 0.74 sat beside α-nDCG 0.14); ILD and
    α-nDCG equal those of the run with its unjudged rows removed by hand."""
    from evalcore.data import Run
    from evalcore.diversity import diversity_table
    from evalcore.evaluate import evaluate

    emb, qrels, run = _bound_inputs(seed)
    ks = [1, 3, 5, 10]
    ev = evaluate(qrels, {"r": run}, metrics=["ndcg"], k=ks, ties="trec", judged_only=True)
    n = ev.table.set_index(["query_id", "k"])["value"]
    judged = {(q, d) for q, d, g in zip(qrels.query_ids[qrels.q], qrels.doc_ids, qrels.grades, strict=True) if g >= 0}
    kept = [(q, d, s) for q, d, s in zip(run.query_ids[run.q], run.doc_ids, run.scores, strict=True)
            if (q, d) in judged]
    by_hand = Run.from_records(*zip(*kept, strict=True), name="r")
    for alpha in (0.5, 1.0):
        div = diversity_table(run, emb, k_values=ks, alpha=alpha, qrels=qrels, ties="trec", judged_only=True)
        a = div[div["metric"].astype(str).str.startswith("alpha")].set_index(["query_id", "k"])["value"]
        assert (a <= n.reindex(a.index) + 1e-12).all()
        if alpha == 1.0:
            np.testing.assert_allclose(a.to_numpy(), n.reindex(a.index).to_numpy(), atol=1e-12)
        hand = diversity_table(by_hand, emb, k_values=ks, alpha=alpha, qrels=qrels, ties="trec")
        mine = div.set_index(["query_id", "metric", "k"])["value"]
        theirs = hand.set_index(["query_id", "metric", "k"])["value"]
        np.testing.assert_array_equal(mine.reindex(theirs.index).to_numpy(), theirs.to_numpy())
    with pytest.raises(OptionError, match="judged_only needs the judgments"):
        diversity_table(run, emb, k_values=ks, judged_only=True)


def test_reference_mode_alpha_ndcg_is_judged_at_each_k_and_stays_below_ndcg():
    """A reference model's top-k at each k: α-nDCG@k against the same top-k as nDCG@k (not the deepest one)."""
    from evalcore import workspace as W
    from evalcore.diversity import diversity_table
    from evalcore.embedding_runs import embedding_run, reference_ground_truth
    from evalcore.io import Embeddings

    rng = np.random.default_rng(3)
    ids = [f"p{j:03d}" for j in range(150)]
    ref_v = rng.normal(size=(150, 16)).astype(np.float32)
    ref = Embeddings.from_arrays(ids, ref_v)
    model = Embeddings.from_arrays(ids, (ref_v[:, :8] + 0.6 * rng.normal(size=(150, 8))).astype(np.float32))
    ks = [3, 5, 10]
    gt = reference_ground_truth(ref, k=ks, mode="tied", query_ids=ids[:40])
    run = embedding_run(model, None, qrels=gt.deepest, k=20, name="m")
    settings = W.Settings(k=tuple(ks), metrics=("ndcg",), ties="docid_asc").validated()
    ev = W.evaluate_workspace({None: gt.deepest}, [(run, None)], settings, reference=gt)
    ndcg = ev.table.set_index(["query_id", "k"])["value"]
    per_k = diversity_table(run, model, k_values=ks, qrels={k: gt.qrels_at(k) for k in ks}, ties="docid_asc")
    a = per_k[per_k["metric"].astype(str).str.startswith("alpha")].set_index(["query_id", "k"])["value"]
    assert (a <= ndcg.reindex(a.index) + 1e-12).all()
    # the defect it fixes: against the deepest top-k, α-nDCG@3 exceeds nDCG@3 on many queries
    deep = diversity_table(run, model, k_values=[3], qrels=gt.deepest, ties="docid_asc")
    d = deep[deep["metric"].astype(str).str.startswith("alpha")].set_index(["query_id", "k"])["value"]
    assert (d > ndcg.reindex(d.index) + 1e-9).sum() > 5
    with pytest.raises(OptionError, match="not at 4"):
        gt.qrels_at(4)
    with pytest.raises(OptionError, match=r"no ground truth given for k = \[20\]"):
        diversity_table(run, model, k_values=[3, 20], qrels={3: gt.qrels_at(3)})


@pytest.mark.parametrize("ties", ["trec", "docid_asc"])
def test_diversity_table_matches_a_per_query_oracle_on_tie_heavy_runs(ties, tmp_path):
    """diversity_table (vectorised lists and grades, one gather for both metrics) against the
    definitions computed query by query from the run's ranked lists and the qrels' dicts.

    Tie-heavy scores (3 values), a query of the qrels absent from the run, run queries absent
    from the qrels, listed and judged documents without a vector, zero and negative grades,
    several k and a query with only a judgment without vector.
    """
    import pandas as pd

    from evalcore.data import Qrels, Run
    from evalcore.diversity import diversity_table
    from evalcore.io import Embeddings

    rng = np.random.default_rng(11)
    n_items, dim = 40, 6
    ids = [f"d{i:02d}" for i in range(n_items)]
    vec = rng.normal(size=(n_items, dim)).astype(np.float32)
    emb = Embeddings.from_arrays(np.array(ids[:-5], dtype=object), vec[:-5])  # d35..d39 have no vector
    unit = {d: v / np.linalg.norm(v) for d, v in zip(ids[:-5], vec[:-5].astype(np.float64), strict=True)}
    qs, ds, ss = [], [], []
    for q in range(30):
        for d in rng.choice(n_items, size=int(rng.integers(1, 15)), replace=False):
            qs.append(f"q{q:02d}"), ds.append(ids[d]), ss.append(float(rng.integers(0, 3)))
    run = Run.from_records(qs, ds, ss, name="m")
    jq, jd, jg = [], [], []
    listed = {}
    for q, d in zip(qs, ds, strict=True):
        listed.setdefault(q, []).append(d)
    big = max((f"q{i:02d}" for i in range(5, 30)), key=lambda q: len(listed[q]))
    for q in [f"q{i:02d}" for i in list(range(5, 30)) + [40, 41]]:  # q00..q04: run only; q40, q41: qrels only
        pool = sorted(set(listed.get(q, [])[:6]) | {ids[d] for d in rng.choice(n_items, size=6, replace=False)})
        if q == big:  # more relevant documents than the largest k: the ideal is cut at k
            pool = sorted(set(listed[q]) | set(ids[:14]))
        for i, d in enumerate(pool):  # most of a query's listed documents are judged
            jq.append(q), jd.append(d), jg.append(1 + i % 3 if q == big else int(rng.integers(-1, 4)))
    jq.append("q42"), jd.append("d39"), jg.append(2)  # judged, no vector, never listed
    qrels = Qrels.from_records(jq, jd, jg)
    lists = {q: [d for d, _ in docs] for q, docs in run.ranked_lists(ties=ties).items()}
    grades = qrels.to_dict()

    def oracle(q, metric, k):
        top = lists.get(q, [])[:k]
        vecs = [unit.get(d) for d in top]
        if metric == "ild":
            have = [v for v in vecs if v is not None]
            pairs = list(itertools.combinations(have, 2))
            return float(np.mean([1 - a @ b for a, b in pairs])) if pairs else 0.0
        g = {d: x for d, x in grades.get(q, {}).items() if x > 0}
        dcg, above = 0.0, []
        for pos, (d, v) in enumerate(zip(top, vecs, strict=True), start=1):
            if v is None:
                continue
            sim = max((v @ p for p in above), default=None)
            novelty = 1.0 if sim is None else min(1.0, max(0.0, 1.0 - sim))
            dcg += g.get(d, 0) * (0.5 + 0.5 * novelty) / np.log2(pos + 1)
            above.append(v)
        ideal = sorted(g.values(), reverse=True)[:k]
        idcg = sum(x / np.log2(i + 2) for i, x in enumerate(ideal))
        return dcg / idcg if idcg > 0 else 0.0

    t = diversity_table(run, emb, k_values=[1, 3, 10], qrels=qrels, ties=ties)
    assert len(t) == qrels.n_queries * 3 * 2 and qrels.n_queries == 28
    alpha = t[t["metric"] != "ild"]
    assert (alpha["value"] > 0).sum() > 20 and (alpha[alpha["k"] == 1]["value"] > 0).sum() > 3
    for r in t.itertuples(index=False):
        assert r.value == pytest.approx(oracle(r.query_id, "ild" if r.metric == "ild" else "a", r.k),
                                        abs=1e-6), r
    # a run read from a file keeps its document ids as arrow strings: the same table, and no
    # vocabulary built for it (at 50,000 queries x 100 that would be ~50 MB held per run)
    from evalcore.io.trec import read_trec_run, write_trec_run

    write_trec_run(run, tmp_path / "m.trec")
    lazy = read_trec_run(tmp_path / "m.trec", name="m")
    pd.testing.assert_frame_equal(diversity_table(lazy, emb, k_values=[1, 3, 10], qrels=qrels, ties=ties), t)
    assert lazy._d is None
    no_qrels = diversity_table(run, emb, k_values=[2, 5], ties=ties)
    assert set(no_qrels["query_id"].astype(str)) == set(lists) and len(no_qrels) == run.n_queries * 2
    for r in no_qrels.itertuples(index=False):
        assert r.value == pytest.approx(oracle(r.query_id, "ild", r.k), abs=1e-6), r
    # the table agrees with the public per-list functions on the same lists
    rows = emb.rows_of(np.array(ids, dtype=object))
    mat = np.full((qrels.n_queries, 10), -1)
    for i, q in enumerate(qrels.query_ids):
        top = [rows[ids.index(d)] for d in lists.get(str(q), [])[:10]]
        mat[i, : len(top)] = top
    got = t[(t["metric"] == "ild") & (t["k"] == 10)]["value"].to_numpy()
    np.testing.assert_array_equal(got, intra_list_diversity(mat, normalize(emb.vectors)))

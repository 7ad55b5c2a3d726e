"""Seed 000 end to end: a reference model's neighbours as ground truth, two models, k = 1, 3, 5, 10.

``evalcore evaluate --reference-emb ...`` (mode ``tied``, the seed's procedure)
is checked against seed 000's own functions, copied below verbatim
(``recall_at_k``, ``ndcg_at_k``, ``mrr``, ``map_at_k``), with its query
sampling (``np.random.seed(42); np.random.choice(n_papers, n_samples,
replace=False)``) and ``get_top_k_indices`` written out (cosine, self
excluded, ties by index = by id, as the ids are zero-padded row numbers).

Seed 000's MAP@k divides by the number of hits found: evalcore's
``map_found`` (``map`` is trec_eval's, divided by R).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalcore.cli import main
from evalcore.embedding_runs import evaluate_against_reference, reference_agreement
from evalcore.io import Embeddings, load_embeddings, save_embeddings

N_PAPERS = 300
N_SAMPLES = 60
K_VALUES = [1, 3, 5, 10]
METRICS = {"recall": "recall_at_k", "ndcg": "ndcg_at_k", "mrr": "mrr", "map_found": "map_at_k"}


# ------------------------------------------------------------------ seed 000's functions (verbatim)
def recall_at_k(ada_top_k, model_top_k, k):
    ada_set = set(ada_top_k[:k])
    model_set = set(model_top_k[:k])
    overlap = len(ada_set & model_set)
    return overlap / k


def ndcg_at_k(ada_top_k, model_ranking, k):
    ada_set = set(ada_top_k[:k])

    # Relevance: 1 if in Ada's top-k, else 0
    relevances = [1.0 if idx in ada_set else 0.0 for idx in model_ranking[:k]]

    dcg = sum(rel / np.log2(i + 2) for i, rel in enumerate(relevances))

    # Ideal DCG: if we ranked all relevant items first
    idcg = sum(1.0 / np.log2(i + 2) for i in range(min(k, len(ada_set))))

    return dcg / idcg if idcg > 0 else 0.0


def mrr(ada_top_k, model_ranking, k):
    ada_set = set(ada_top_k[:k])

    for position, idx in enumerate(model_ranking[:k]):
        if idx in ada_set:
            return 1.0 / (position + 1)  # 1-indexed position

    return 0.0  # No relevant item found


def map_at_k(ada_top_k, model_ranking, k):
    ada_set = set(ada_top_k[:k])

    precisions = []
    relevant_count = 0

    for position, idx in enumerate(model_ranking[:k]):
        if idx in ada_set:
            relevant_count += 1
            precision_at_this_point = relevant_count / (position + 1)
            precisions.append(precision_at_this_point)

    return np.mean(precisions) if precisions else 0.0


SEED_FUNCS = {"recall_at_k": recall_at_k, "ndcg_at_k": ndcg_at_k, "mrr": mrr, "map_at_k": map_at_k}


def cosine_similarity(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    n = x / np.linalg.norm(x, axis=1, keepdims=True)
    return n @ n.T


def get_top_k_indices(sims: np.ndarray, idx: int, k: int) -> list[int]:
    row = sims[idx]
    order = np.lexsort((np.arange(len(row)), -row))  # similarity descending, then index
    return [int(j) for j in order if j != idx][:k]


# ------------------------------------------------------------------ fixture
@pytest.fixture(scope="module")
def papers(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("seed000")
    rng = np.random.default_rng(7)
    ids = [f"paper{i:05d}" for i in range(N_PAPERS)]
    ada = rng.normal(size=(N_PAPERS, 48)).astype(np.float32)
    proj = rng.normal(size=(48, 16)) / 4
    base = (ada @ proj + 0.8 * rng.normal(size=(N_PAPERS, 16))).astype(np.float32)
    fine = (ada @ proj + 0.35 * rng.normal(size=(N_PAPERS, 16))).astype(np.float32)
    paths = {
        "ada": save_embeddings(Embeddings.from_arrays(ids, ada), root / "ada.npy")[0],
        "base_st": save_embeddings(Embeddings.from_arrays(ids, base), root / "base.npz")[0],
        "finetuned_st": save_embeddings(Embeddings.from_arrays(ids, fine), root / "finetuned.npy")[0],
    }
    return {"root": root, "ids": ids, "ada": ada, "base_st": base, "finetuned_st": fine, "paths": paths}


def _min_gap(sims: np.ndarray, rows) -> float:
    best = 1.0
    for i in rows:
        r = np.sort(np.delete(sims[i], i))[::-1][:11]
        best = min(best, float(np.min(r[:-1] - r[1:])))
    return best


def expected(papers: dict) -> dict:
    """{model: {k: {metric: [value per sampled query, in drawn order]}}} and the sampled ids."""
    np.random.seed(42)
    query_indices = np.random.choice(N_PAPERS, N_SAMPLES, replace=False)
    ada_sims = cosine_similarity(papers["ada"])
    out: dict = {}
    for model in ("base_st", "finetuned_st"):
        model_sims = cosine_similarity(papers[model])
        # float32 scores in the engine: orders closer than ~1e-6 could flip; the fixture has none
        assert _min_gap(model_sims, query_indices) > 1e-6 and _min_gap(ada_sims, query_indices) > 1e-6
        for k in K_VALUES:
            per = {m: [] for m in METRICS}
            for query_idx in query_indices:
                ada_top_k = get_top_k_indices(ada_sims, query_idx, k)
                model_top_k = get_top_k_indices(model_sims, query_idx, k)
                for m, f in METRICS.items():
                    per[m].append(float(SEED_FUNCS[f](ada_top_k, model_top_k, k)))
            out.setdefault(model, {})[k] = per
    return {"values": out, "queries": [papers["ids"][i] for i in query_indices]}


def _table(per_query_csv: Path):
    import pandas as pd

    return pd.read_csv(per_query_csv, dtype={"query_id": str, "run": str, "metric": str})


def test_cli_reference_ground_truth_matches_seed_000(papers, tmp_path, capsys):
    out = tmp_path / "out"
    p = papers["paths"]
    code = main([
        "evaluate", "--reference-emb", str(p["ada"]), "--reference-mode", "tied",
        "--emb", f"base_st={p['base_st']}", "--emb", f"finetuned_st={p['finetuned_st']}",
        "--metrics", *METRICS, "--k", *map(str, K_VALUES), "--ties", "docid_asc",
        "--n-samples", str(N_SAMPLES), "--seed", "42", "--agreement-pairs", "2000", "--out", str(out),
    ])
    assert code == 0
    want = expected(papers)
    table = _table(out / "per_query.csv")
    assert sorted(table["run"].unique()) == ["base_st", "finetuned_st"]
    assert set(table["query_id"]) == set(want["queries"])
    for model, by_k in want["values"].items():
        for k, per in by_k.items():
            for metric, values in per.items():
                sel = table[(table["run"] == model) & (table["k"] == k) & (table["metric"] == metric)]
                got = dict(zip(sel["query_id"], sel["value"], strict=True))
                assert len(got) == N_SAMPLES
                np.testing.assert_allclose([got[q] for q in want["queries"]], values, rtol=0, atol=1e-12,
                                           err_msg=f"{model} {metric}@{k}")
    # at k = 1 every metric is the same number, query by query
    k1 = table[table["k"] == 1].pivot_table(index=["run", "query_id"], columns="metric", values="value")
    for m in METRICS:
        np.testing.assert_array_equal(k1[m].to_numpy(), k1["recall"].to_numpy())
    # the fine-tuned model is closer to the reference, and the numbers are not trivial
    report = json.loads((out / "report.json").read_text())
    agg = report["aggregates"]
    assert 0.05 < agg["base_st"]["recall@10"]["mean"] < agg["finetuned_st"]["recall@10"]["mean"] < 0.95
    meta = report["metadata"]
    assert meta["reference"]["mode"] == "tied" and meta["reference"]["n_queries"] == N_SAMPLES
    sa = meta["similarity_agreement"]
    assert set(sa) == {"base_st", "finetuned_st"}
    assert sa["base_st"]["spearman"] < sa["finetuned_st"]["spearman"]
    printed = capsys.readouterr().out  # also printed (without --out it was computed and dropped)
    for model in ("base_st", "finetuned_st"):
        row = sa[model]
        assert f"  {model}: rho {row['spearman']:.4f}, MAE {row['mae']:.4f}, 2,000 pairs" in printed, printed
    # seed 000's {model}_results.csv: one row per k
    res = _table(out / "finetuned_st_results.csv")
    assert res["k"].tolist() == K_VALUES


def test_library_call_matches_cli_and_fixed_mode_differs(papers):
    ada = load_embeddings(papers["paths"]["ada"], mmap=True)
    models = {m: load_embeddings(papers["paths"][m]) for m in ("base_st", "finetuned_st")}
    ev = evaluate_against_reference(ada, models, metrics=list(METRICS), k=K_VALUES, n_samples=N_SAMPLES, seed=42)
    want = expected(papers)
    means = ev.table.groupby(["run", "metric", "k"], observed=True)["value"].mean()
    for model, by_k in want["values"].items():
        for k, per in by_k.items():
            for metric, values in per.items():
                assert means[(model, metric, k)] == pytest.approx(float(np.mean(values)), abs=1e-12)
    assert ev.settings["reference"]["mode"] == "tied"
    fixed = evaluate_against_reference(ada, models, metrics=["recall"], k=[1, 10], mode="fixed", depth=10,
                                       n_samples=N_SAMPLES, seed=42)
    fm = fixed.table.groupby(["run", "k"], observed=True)["value"].mean()
    # fixed depth 10: recall@1 is hits among 10 relevant / 10, not the tied top-1 agreement
    assert fm[("finetuned_st", 1)] <= 0.1 + 1e-12
    assert fm[("finetuned_st", 10)] == pytest.approx(means[("finetuned_st", "recall", 10)], abs=1e-12)


def test_similarity_agreement_per_model(papers):
    ada = load_embeddings(papers["paths"]["ada"])
    models = {m: load_embeddings(papers["paths"][m]) for m in ("base_st", "finetuned_st")}
    agr = reference_agreement(ada, models, n_pairs=3000, seed=0).set_index("model")
    assert agr.loc["finetuned_st", "spearman"] > agr.loc["base_st", "spearman"]
    assert agr.loc["finetuned_st", "mae"] >= 0 and agr["n_pairs"].eq(3000).all()


def test_cli_reference_diversity_is_judged_at_each_k(papers, tmp_path):
    """``--diversity`` with a reference model: α-nDCG@k against the reference's top-k, so α-nDCG@k <= nDCG@k."""
    out = tmp_path / "out"
    p = papers["paths"]
    code = main(["evaluate", "--reference-emb", str(p["ada"]), "--reference-mode", "tied",
                 "--emb", f"base_st={p['base_st']}", "--metrics", "ndcg", "--k", *map(str, K_VALUES),
                 "--ties", "docid_asc", "--n-samples", str(N_SAMPLES), "--seed", "42", "--diversity",
                 "--out", str(out)])
    assert code == 0
    table = _table(out / "per_query.csv")
    wide = table.pivot_table(index=["query_id", "k"], columns="metric", values="value")
    alpha = next(c for c in wide.columns if c.startswith("alpha_ndcg"))
    assert len(wide) == N_SAMPLES * len(K_VALUES)
    assert (wide[alpha] <= wide["ndcg"] + 1e-12).all()
    assert (wide[alpha] < wide["ndcg"] - 1e-6).any()  # redundancy costs something somewhere

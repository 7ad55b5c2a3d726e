"""The dashboard's pure pipeline (evalcore.workspace): uploads as bytes -> qrels, runs, one evaluation.

The Data page only turns ``st.file_uploader`` values into :class:`Blob` (bytes +
SHA-256) and calls these functions, so everything an upload does is tested here
without Streamlit; ``tests/test_app.py`` then drives the real uploaders.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from dashboard import tables as T
from evalcore import evaluate
from evalcore import workspace as W
from evalcore.aggregate import summarize
from evalcore.embedding_runs import embedding_run, reference_qrels
from evalcore.errors import EvalcoreError, OptionError
from evalcore.fusion import weighted_rrf
from evalcore.io import load_embeddings, load_qrels, load_run

QUERIES = [f"q{i}" for i in range(12)]
DOCS = [f"d{j}" for j in range(40)]
SETTINGS = W.Settings(k=(1, 5, 10), metrics=("ndcg", "recall", "mrr"))


def trec_qrels(seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    lines = []
    for q in QUERIES:
        for d, g in zip(rng.choice(DOCS, 4, replace=False), (3, 2, 1, 0), strict=True):
            lines.append(f"{q} 0 {d} {g}")
    return ("\n".join(lines) + "\n").encode()


def scored(seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    return {q: {d: float(round(s, 4)) for d, s in zip(DOCS, rng.random(len(DOCS)), strict=True)} for q in QUERIES}


def trec_run(seed: int, tag: str = "r") -> bytes:
    lines = []
    for q, docs in scored(seed).items():
        for r, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1])[:20]):
            lines.append(f"{q} Q0 {d} {r + 1} {s} {tag}")
    return ("\n".join(lines) + "\n").encode()


def csv_run(seed: int) -> bytes:
    rows = [f"{q},{d},{s}" for q, docs in scored(seed).items() for d, s in docs.items()]
    return ("query_id,doc_id,score\n" + "\n".join(rows) + "\n").encode()


def json_run(seed: int) -> bytes:
    return json.dumps(scored(seed)).encode()


def ordered_lists(n: int = 12, seed: int = 0) -> bytes:
    """A seed-001 file: n movies, three ordered aspects of 5 other movies each."""
    rng = np.random.default_rng(seed)
    ids = [f"tt{i:04d}" for i in range(n)]
    out = []
    for m in ids:
        others = [x for x in ids if x != m]
        out.append({"movie_id": m, **{f"5_most_similar_movies_{a}_ordered": list(rng.choice(others, 5, replace=False))
                                      for a in ("overall", "content", "vibes")}})
    return json.dumps(out).encode()


def npz(ids, dim: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(ids), embeddings=rng.normal(size=(len(ids), dim)).astype(np.float32))
    return buf.getvalue()


def blob(name: str, data: bytes) -> W.Blob:
    return W.Blob.of(name, data)


def resolve(ws: W.Snapshot, aspect: str | None = None):
    """The dashboard's pipeline without caching: qrels per aspect, runs, evaluation."""
    s = ws.settings.validated()
    aspects = W.ground_truth_aspects(ws.ground_truth) if ws.ground_truth.kind == "file" else ()
    universe = W.query_universe(ws.ground_truth, aspects[0] if aspects else None)
    sample = W.sample_query_ids(universe, s.sample_size, s.seed) if s.sample_size else None
    qrels = {}
    runs = []
    by_uid = {}
    reference = None
    if ws.ground_truth.kind == "reference":
        reference = W.prepare_reference(ws.ground_truth, sample=sample, domains=None, settings=s)
        qrels[None] = reference.deepest
    for src in ws.runs:
        a = (src.aspect if src.aspect in aspects else aspects[0]) if aspects else None
        if a not in qrels:
            qrels[a] = W.prepare_qrels(ws.ground_truth, aspect=a, sample=sample, domains=None, settings=s)
        run = W.build_run(src, qrels=qrels[a], settings=s, inputs=by_uid)
        by_uid[src.uid] = run
        runs.append((run, a))
    return qrels, dict((r.name, r) for r, _ in runs), W.evaluate_workspace(qrels, runs, s, reference=reference)


# ------------------------------------------------------------------------------------------ sources


def test_blob_hash_and_keys():
    a, b = blob("x.trec", b"q 0 d 1\n"), blob("y.trec", b"q 0 d 1\n")
    assert a.sha256 == b.sha256 and len(a.sha256) == 64 and a.size == 8
    ws = W.Snapshot()
    ws, u1 = W.add_ranked_run(ws, a)
    ws, u2 = W.add_ranked_run(ws, b)
    r1, r2 = ws.run_by_uid(u1), ws.run_by_uid(u2)
    assert u1 != u2 and r1.content_key() == r2.content_key()  # same bytes -> same cached run
    ws2 = ws.renamed(u1, "renamed")
    assert ws2.run_by_uid(u1).content_key() == r1.content_key()  # renaming recomputes nothing


def test_uploads_clear_the_demo_and_name_runs():
    ws = W.demo_workspace(0)
    assert ws.is_demo and len(ws.runs) == 3
    ws2, uid = W.add_ranked_run(ws, blob("bm25.run.trec", trec_run(1)))
    assert not ws2.is_demo and [r.name for r in ws2.runs] == ["bm25"]  # extensions dropped
    ws3, _ = W.add_ranked_run(ws2, blob("bm25.run.trec", trec_run(2)))
    assert [r.name for r in ws3.runs] == ["bm25", "bm25 (2)"]
    ws4 = W.set_ground_truth(W.demo_workspace(0), blob("q.txt", trec_qrels()))
    assert ws4.ground_truth.kind == "file" and not ws4.runs and not ws4.is_demo
    assert W.clear_demo(W.demo_workspace(0)) == W.Snapshot()


def test_embedding_files_are_recognised():
    assert W.looks_like_embeddings(blob("x.npz", npz(["a"], 2, 0)))
    assert W.looks_like_embeddings(blob("upload", npz(["a"], 2, 0)))  # zip magic
    buf = io.BytesIO()
    np.save(buf, np.zeros((2, 2), dtype=np.float32))
    assert W.looks_like_embeddings(blob("vectors", buf.getvalue()))  # .npy magic
    assert not W.looks_like_embeddings(blob("run.trec", trec_run(1)))


def test_rename_remove_and_options():
    ws = W.set_ground_truth(W.Snapshot(), blob("q.txt", trec_qrels()))
    ws, a = W.add_ranked_run(ws, blob("a.trec", trec_run(1)))
    ws, b = W.add_ranked_run(ws, blob("b.trec", trec_run(2)))
    ws, f = W.add_fused_run(ws, [a, b], [1.0, 2.0], c=10, name="fused")
    with pytest.raises(OptionError):
        ws.renamed(a, "b")
    with pytest.raises(OptionError):
        ws.renamed(a, "  ")
    assert ws.renamed(a, "bm25").run_by_uid(a).name == "bm25"
    assert [r.uid for r in ws.without_run(b).runs] == [a]  # the fusion built on b goes too
    assert W.set_run_options(ws, a, format="csv").run_by_uid(a).format == "csv"
    with pytest.raises(OptionError):
        W.set_run_options(ws, a, name="x")


def test_settings_validation():
    s = W.Settings(k=(10, 1, 10), depth=5).validated()
    assert s.k == (1, 10) and s.depth == 10  # rankings at least as deep as the largest k
    for bad in (W.Settings(k=()), W.Settings(k=(0,)), W.Settings(metrics=()), W.Settings(rel_threshold=0),
                W.Settings(ties="random"), W.Settings(sample_size=-1)):
        with pytest.raises(OptionError):
            bad.validated()
    assert W.Settings().eval_key() == W.Settings(sample_size=50).eval_key()  # sampling is keyed elsewhere
    assert W.Settings().eval_key() != W.Settings(rel_threshold=2).eval_key()


def test_parameterised_metric_names():
    assert W.parse_metric_names("recall(rel=2), P(rel = 2)@5; ndcg success@1 recall(rel=2)") == (
        "recall(rel=2)", "precision(rel=2)@5", "ndcg", "hit_rate@1")
    assert W.parse_metric_names("") == W.parse_metric_names(" , ") == ()
    assert W.parse_metric_names(["ndcg", "R(rel=3)"]) == ("ndcg", "recall(rel=3)")
    s = W.Settings(metrics=("ndcg", "P(rel=2)@5", "precision(rel=2)@5", "recip_rank")).validated()
    assert s.metrics == ("ndcg", "precision(rel=2)@5", "mrr")  # canonical, duplicates removed
    for bad, message in (("foo@3", "unknown measure 'foo@3'"), ("ndcg(rel=2)", "takes no parameter 'rel'"),
                         ("recall(rel=x)", "rel must be an integer"), ("recall@0", "cutoff must be >= 1")):
        with pytest.raises(EvalcoreError, match=re.escape(message)):
            W.parse_metric_names(bad)
        with pytest.raises(EvalcoreError, match=re.escape(message)):
            W.Settings(metrics=("ndcg", bad)).validated()
    # the evaluation takes them like the plain names
    ws = W.set_ground_truth(W.Snapshot(settings=SETTINGS), blob("qrels.txt", trec_qrels()))
    ws, _ = W.add_ranked_run(ws, blob("a.trec", trec_run(1)))
    settings = replace(SETTINGS, metrics=("ndcg", "recall(rel=2)", "P(rel=2)@5")).validated()
    q = W.prepare_qrels(ws.ground_truth, aspect=None, sample=None, domains=None, settings=settings)
    ev = W.evaluate_workspace({None: q}, [(W.build_run(ws.runs[0]), None)], settings)
    assert T.metric_k_pairs(ev.table) == [("ndcg", 1), ("ndcg", 5), ("ndcg", 10), ("recall(rel=2)", 1),
                                          ("recall(rel=2)", 5), ("recall(rel=2)", 10), ("precision(rel=2)", 5)]


def test_overview_table_parameterised_first_rel_rank_is_lower_better():
    summ = pd.DataFrame({"run": ["a", "b"], "metric": ["first_rel_rank(rel=2)"] * 2, "k": [0, 0], "n": [5, 5],
                         "mean": [2.0, 3.0], "std": [0.1] * 2, "sem": [0.1] * 2, "ci_low": [1.0, 2.0],
                         "ci_high": [3.0, 4.0], "median": [2.0, 3.0]})
    _, best = T.overview_table(summ, runs=["a", "b"])
    assert best["first_rel_rank(rel=2)"].tolist() == [True, False]


# ------------------------------------------------------------------------------------------ pipeline


def test_ranked_runs_of_several_formats_equal_direct_evaluation():
    ws = W.set_ground_truth(W.Snapshot(settings=SETTINGS), blob("qrels.txt", trec_qrels()))
    ws, _ = W.add_ranked_run(ws, blob("bm25.trec", trec_run(1)))
    ws, _ = W.add_ranked_run(ws, blob("dense.csv", csv_run(2)))
    ws, _ = W.add_ranked_run(ws, blob("splade.json", json_run(3)))
    assert [W.detect_run(r.blob) for r in ws.runs] == ["trec", "csv", "json_dict"]
    assert W.detect_qrels(ws.ground_truth.blob) == "trec"
    _, runs, ev = resolve(ws)
    assert ev.runs == ["bm25", "dense", "splade"]
    direct = evaluate(load_qrels(trec_qrels()),
                      {"bm25": load_run(trec_run(1)), "dense": load_run(csv_run(2), label="d.csv"),
                       "splade": load_run(json_run(3), label="s.json")},
                      metrics=list(SETTINGS.metrics), k=list(SETTINGS.k))
    pd.testing.assert_frame_equal(summarize(ev.table), summarize(direct.table))


def test_bad_file_fails_alone():
    ws = W.set_ground_truth(W.Snapshot(settings=SETTINGS), blob("qrels.txt", trec_qrels()))
    ws, good = W.add_ranked_run(ws, blob("good.trec", trec_run(1)))
    ws, bad = W.add_ranked_run(ws, blob("bad.trec", b"q1 Q0 d1 1 notanumber x\n"))
    s = ws.settings.validated()
    q = W.prepare_qrels(ws.ground_truth, aspect=None, sample=None, domains=None, settings=s)
    with pytest.raises(EvalcoreError) as err:
        W.build_run(ws.run_by_uid(bad), qrels=q, settings=s)
    assert "bad.trec" in str(err.value) and "notanumber" in str(err.value)
    run = W.build_run(ws.run_by_uid(good), qrels=q, settings=s)
    ev = W.evaluate_workspace({None: q}, [(run, None)], s)
    assert ev.runs == ["good"]


def test_query_sampling():
    ids = np.array([f"q{i}" for i in range(100)], dtype=object)
    assert W.sample_query_ids(ids, 0, 1) is not None and len(W.sample_query_ids(ids, 0, 1)) == 100
    a, b = W.sample_query_ids(ids, 10, 42), W.sample_query_ids(ids, 10, 42)
    assert list(a) == list(b) and len(set(a)) == 10
    # seed 000 step 3: np.random.seed(42); np.random.choice(N, n, replace=False)
    np.random.seed(42)
    assert list(a) == list(ids[np.random.choice(100, 10, replace=False)])
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(5,), sample_size=5, seed=1)),
                            blob("qrels.txt", trec_qrels()))
    ws, _ = W.add_ranked_run(ws, blob("a.trec", trec_run(1)))
    qrels, _, ev = resolve(ws)
    assert qrels[None].n_queries == 5 and ev.table["query_id"].nunique() == 5


def test_embedding_run_item_to_item_and_reference_ground_truth():
    items = [f"p{i:03d}" for i in range(60)]
    ref, model = npz(items, 32, 1), npz(items, 8, 2)
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(1, 5, 10), gt_depth=5, depth=20, gt_mode="fixed")),
                            blob("ada.npz", ref), kind="reference")
    ws, uid = W.add_embedding_run(ws, blob("small.npz", model), name="small")
    assert W.query_universe(ws.ground_truth).tolist() == items
    qrels, runs, ev = resolve(ws)
    expected_q = reference_qrels(load_embeddings(ref, label="ada.npz"), depth=5)
    pd.testing.assert_frame_equal(qrels[None].to_frame(), expected_q.to_frame())
    expected_r = embedding_run(load_embeddings(model, label="small.npz"), qrels=expected_q, k=20, name="small")
    pd.testing.assert_frame_equal(runs["small"].to_frame(), expected_r.to_frame())
    assert (runs["small"].to_frame().groupby("query_id").size() == 20).all()
    # a sample of the reference's items: only those are ranked
    ws2 = W.Snapshot(ws.ground_truth, ws.runs, settings=W.Settings(k=(5,), gt_depth=5, sample_size=7, seed=3,
                                                                    gt_mode="fixed"))
    qrels2, runs2, _ = resolve(ws2)
    assert qrels2[None].n_queries == 7 and runs2["small"].n_queries == 7


def test_reference_tied_mode_with_fixed_cutoff_and_k_free_measures():
    """Tied mode evaluates each k against its own top-k: P(rel=1)@5 once (against the top-5), rprec once."""
    items = [f"p{i:03d}" for i in range(60)]
    metrics = ("ndcg", "recall(rel=2)", "P(rel=1)@5", "rprec")
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(1, 5), metrics=metrics)),
                            blob("ada.npz", npz(items, 16, 1)), kind="reference")
    ws, _ = W.add_embedding_run(ws, blob("m.npz", npz(items, 8, 2)), name="m")
    qrels, runs, ev = resolve(ws)  # was: "run 'm' has two values for precision(rel=1)@5"
    assert T.metric_k_pairs(ev.table) == [("ndcg", 1), ("ndcg", 5), ("recall(rel=2)", 1), ("recall(rel=2)", 5),
                                          ("precision(rel=1)", 5), ("rprec", 0)]
    s = ws.settings.validated()
    ref = W.prepare_reference(ws.ground_truth, sample=None, domains=None, settings=s)
    t = ev.table
    for metric, k, qrels_k in (("precision(rel=1)", 5, ref.by_k[5]), ("rprec", 0, ref.deepest),
                               ("ndcg", 1, ref.by_k[1])):
        direct = evaluate(qrels_k, {"m": runs["m"]}, metrics=[metric], k=[max(k, 1)], ties=s.ties).table
        got = t[(t["metric"] == metric) & (t["k"] == k)]
        np.testing.assert_array_equal(got["value"].to_numpy(), direct["value"].to_numpy())
    bad = W.Snapshot(ws.ground_truth, ws.runs, settings=W.Settings(k=(1, 5), metrics=("P@3",)))
    with pytest.raises(OptionError, match="fixed cutoff must be one of the k values"):
        resolve(bad)


def test_reference_tied_mode_reproduces_seed_000():
    """Seed 000: at each k, relevant = the reference's top-k; at k = 1 every metric is the same number."""
    items = [f"p{i:03d}" for i in range(80)]
    ref, model = npz(items, 24, 5), npz(items, 6, 6)
    settings = W.Settings(k=(1, 3, 5, 10), metrics=("recall", "ndcg", "mrr", "map_found"), ties="docid_asc")
    ws = W.set_ground_truth(W.Snapshot(settings=settings), blob("ada.npz", ref), kind="reference")
    ws, _ = W.add_embedding_run(ws, blob("st.npz", model), name="st")
    qrels, runs, ev = resolve(ws)
    assert (qrels[None].n_relevant() == 10).all()  # the deepest ground truth: top max(k)
    t = ev.table
    at1 = t[t["k"] == 1].pivot(index="query_id", columns="metric", values="value")
    assert np.allclose(at1.to_numpy(), at1[["recall"]].to_numpy())  # all four metrics equal at k = 1
    from evalcore.embedding_runs import evaluate_against_reference

    direct = evaluate_against_reference(load_embeddings(ref, label="ada.npz"),
                                        {"st": load_embeddings(model, label="st.npz")},
                                        metrics=list(settings.metrics), k=list(settings.k), run_depth=100)
    pd.testing.assert_frame_equal(summarize(ev.table), summarize(direct.table))


def test_embedding_run_with_missing_ids_is_an_error_for_that_run_only():
    ws = W.set_ground_truth(W.Snapshot(settings=SETTINGS), blob("qrels.txt", trec_qrels()))
    ws, uid = W.add_embedding_run(ws, blob("other.npz", npz(["a", "b", "c"], 4, 0)))
    s = ws.settings.validated()
    q = W.prepare_qrels(ws.ground_truth, aspect=None, sample=None, domains=None, settings=s)
    with pytest.raises(EvalcoreError, match="other.npz"):
        W.build_run(ws.run_by_uid(uid), qrels=q, settings=s)


def test_ordered_lists_aspects_per_run():
    gt = ordered_lists()
    items = [f"tt{i:04d}" for i in range(12)]
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(1, 5), ties="docid_asc")), blob("movies.json", gt))
    assert W.ground_truth_aspects(ws.ground_truth) == ("5_most_similar_movies_overall_ordered",
                                                       "5_most_similar_movies_content_ordered",
                                                       "5_most_similar_movies_vibes_ordered")
    aspects = W.ground_truth_aspects(ws.ground_truth)
    ws, a = W.add_embedding_run(ws, blob("anchor.npz", npz(items, 6, 1)), name="anchor", aspect=aspects[0])
    ws, c = W.add_embedding_run(ws, blob("content.npz", npz(items, 6, 2)), name="content", aspect=aspects[1])
    ws, _ = W.add_fused_run(ws, [a, c], [1.0, 0.5], c=60, name="rrf")
    qrels, runs, ev = resolve(ws)
    assert set(qrels) == {aspects[0], aspects[1]}
    assert ev.runs == ["anchor", "content", "rrf"]
    assert ev.settings["aspects"] == {"anchor": aspects[0], "content": aspects[1], "rrf": aspects[0]}
    for name, aspect in ev.settings["aspects"].items():
        direct = evaluate(load_qrels(gt, aspect=aspect), {name: runs[name]}, metrics=list(ev.settings["measures"]),
                          ties="docid_asc")
        mine = ev.table[ev.table["run"] == name]
        assert np.allclose(np.sort(mine["value"].to_numpy()), np.sort(direct.table["value"].to_numpy()))
    fused = weighted_rrf([runs["anchor"].renamed("in0"), runs["content"].renamed("in1")], weights=[1.0, 0.5],
                         c=60, ties="docid_asc", name="rrf")
    pd.testing.assert_frame_equal(runs["rrf"].to_frame(), fused.to_frame())


def test_demo_workspace_pipeline():
    ws = W.demo_workspace(0, settings=W.Settings(k=(10,)))
    qrels, runs, ev = resolve(ws)
    assert ev.runs == ["strong-128d", "weak-64d", "lexical"]
    assert qrels[None].n_queries == 300


def test_diversity_of_embedding_runs_only():
    from evalcore.diversity import diversity_table
    from evalcore.io import Embeddings
    from evalcore.workspace.demo import cached_demo

    ws = W.demo_workspace(0, settings=W.Settings(k=(5, 10)))
    qrels, runs, ev = resolve(ws)
    assert [W.has_embeddings(src) for src in ws.runs] == [True, True, False]  # lexical: a ranked run
    demo = cached_demo(0)
    strong = ws.runs[0]
    t = W.run_diversity(strong, runs["strong-128d"], qrels[None], k=[10], ties="trec")
    emb = Embeddings.from_arrays(demo.item_ids, demo.embeddings["strong-128d"])
    pd.testing.assert_frame_equal(t, diversity_table(runs["strong-128d"], emb, k_values=[10], alpha=0.5,
                                                     qrels=qrels[None], ties="trec"))
    assert set(t["metric"].astype(str)) == set(W.DIVERSITY_METRICS) and set(t["k"]) == {10}
    assert t["query_id"].nunique() == 300
    with pytest.raises(OptionError, match="has no embeddings"):
        W.run_diversity(ws.runs[2], runs["lexical"], qrels[None], k=[10], ties="trec")
    # only the evaluated queries
    few = W.run_diversity(strong, runs["strong-128d"], qrels[None], k=[5], ties="trec",
                          query_ids=list(qrels[None].query_ids[:7]))
    assert few["query_id"].nunique() == 7 and set(few["k"]) == {5}
    summ = W.diversity_summary([t, W.run_diversity(ws.runs[1], runs["weak-64d"], qrels[None], k=[10],
                                                   ties="trec")])
    assert summ["run"].astype(str).tolist() == ["strong-128d"] * 2 + ["weak-64d"] * 2
    ild = summ[(summ["run"] == "strong-128d") & (summ["metric"] == "ild")]["mean"].item()
    assert ild == pytest.approx(t.loc[t["metric"] == "ild", "value"].mean())
    assert W.diversity_summary([]).empty
    text, _ = T.overview_table(summ, columns=[(m, 10) for m in W.DIVERSITY_METRICS], mark_best=False)
    assert not text.stack().str.startswith("★").any()


def test_diversity_of_an_uploaded_embedding_run():
    from evalcore.diversity import diversity_table

    items = QUERIES + DOCS
    ws = W.set_ground_truth(W.Snapshot(settings=SETTINGS), blob("qrels.txt", trec_qrels()))
    ws, _ = W.add_embedding_run(ws, blob("emb.npz", npz(items, 8, 4)), name="emb")
    ws, _ = W.add_ranked_run(ws, blob("bm25.trec", trec_run(1)))
    qrels, runs, _ = resolve(ws)
    assert [W.has_embeddings(src) for src in ws.runs] == [True, False]
    t = W.run_diversity(ws.runs[0], runs["emb"], qrels[None], k=[1, 5], ties="docid_asc")
    expected = diversity_table(runs["emb"], load_embeddings(npz(items, 8, 4), label="emb.npz"), k_values=[1, 5],
                               qrels=qrels[None], ties="docid_asc")
    pd.testing.assert_frame_equal(t, expected)
    assert (t.loc[(t["metric"] == "ild") & (t["k"] == 1), "value"] == 0).all()  # one item: no pair


# ------------------------------------------------------------------------------------------ side files


def test_domains_and_metadata():
    d = W.load_domain_map(blob("domains.csv", b"query_id,domain\nq1,bio\nq2,phys\n"))
    assert d == {"q1": "bio", "q2": "phys"}
    m = W.load_metadata(blob("meta.csv", b"doc_id,title,text\nd1,T1,body one\nd2,T2,\n"))
    assert list(m.columns) == ["doc_id", "title", "text"]
    assert m["title"].tolist() == ["T1", "T2"] and m["text"].tolist() == ["body one", ""]
    assert W.normalize_metadata({"a": {"title": "x"}, "b": "y"})["title"].tolist() == ["x", "y"]
    ws = W.set_ground_truth(W.Snapshot(settings=SETTINGS), blob("qrels.txt", trec_qrels()))
    q = W.prepare_qrels(ws.ground_truth, aspect=None, sample=None, domains=d, settings=ws.settings.validated())
    dom = dict(zip(q.query_ids, q.domain_of(), strict=True))
    assert dom["q1"] == "bio" and dom["q3"] == ""


def test_capture_warnings():
    from evalcore.errors import warn

    def f():
        warn("3 zero vectors")
        return 1

    assert W.capture(f) == (1, ["3 zero vectors"])


# ------------------------------------------------------------------------------------------ display helpers


def test_overview_table_marks_best_and_formats():
    summ = pd.DataFrame({
        "run": ["a", "b", "a", "b"], "metric": ["ndcg", "ndcg", "first_rel_rank", "first_rel_rank"],
        "k": [10, 10, 0, 0], "n": [5] * 4, "mean": [0.5, 0.7, 2.0, 3.0], "std": [0.1] * 4, "sem": [0.1] * 4,
        "ci_low": [0.4, 0.6, 1.0, 2.0], "ci_high": [0.6, 0.8, 3.0, 4.0], "median": [0.5] * 4,
    })
    text, best = T.overview_table(summ, runs=["a", "b"])
    assert list(text.columns) == ["ndcg@10", "first_rel_rank"]
    assert text.loc["b", "ndcg@10"] == "★ 0.700 [0.600, 0.800]"
    assert text.loc["a", "ndcg@10"] == "0.500 [0.400, 0.600]"
    assert best.loc["a", "first_rel_rank"] and not best.loc["b", "first_rel_rank"]  # lower is better
    c = T.curve_frame(summ, "ndcg")
    assert c["run"].tolist() == ["a", "b"]
    assert T.curve_frame(summ, "first_rel_rank").empty  # no cutoff, no curve


def test_display_table_blanks_and_p_values():
    df = pd.DataFrame({
        "run": ["a", "b", "c"], "grade": [3.0, np.nan, 1.0], "ci_low": [0.12345, np.nan, -0.5],
        "mean": [1.5, 2.5, 0.25], "note": [None, "too few queries", ""], "p_value": [0.387, 1e-20, np.nan],
        "p adjusted": [1.0, 0.04996, None], "rank: x": pd.array([1, pd.NA, 40], dtype="Int64"),
        "significant": [True, False, False],
    }, index=pd.Index(["r1", "r2", "r3"], name="row"))
    before = df.copy()
    out = T.display_table(df)
    pd.testing.assert_frame_equal(df, before)  # not modified
    assert out.index.equals(df.index)
    # p-values stay numbers (aligned and sorted as numbers), read as p-values through tables.p_values_read
    assert out["p_value"].dtype == np.float64 and out["p adjusted"].dtype == np.float64
    assert T.p_value_columns(out) == ["p_value", "p adjusted"]
    text = T.p_values_read(out[["p_value", "p adjusted"]]).hide(axis="index").to_string(delimiter="|")
    assert text.splitlines() == ["p_value|p adjusted", "0.387|1", "<0.001|0.04996", "–|–"]
    # number columns with gaps stay numbers (ui.dataframe draws "–" there): whole ones as integers, others floats
    assert str(out["grade"].dtype) == "Int64" and out["grade"].isna().tolist() == [False, True, False]
    assert out["grade"].tolist()[::2] == [3, 1]
    assert str(out["rank: x"].dtype) == "Int64" and out["rank: x"].tolist()[::2] == [1, 40]
    assert out["ci_low"].dtype == np.float64 and out["ci_low"].tolist()[::2] == [0.12345, -0.5]
    assert out["note"].tolist() == ["–", "too few queries", ""]  # text stays text
    assert T.display_table(pd.DataFrame({"mean": [np.nan, np.nan]}))["mean"].dtype == np.float64  # nothing whole
    out = T.display_table(df, p_as_text=True, gaps_as_text=True)  # for places that show text: as before
    assert out["p_value"].tolist() == ["0.387", "<0.001", "–"]
    assert out["p adjusted"].tolist() == ["1", "0.04996", "–"]
    assert out["grade"].tolist() == ["3", "–", "1"]  # whole numbers stay whole
    assert out["ci_low"].tolist() == ["0.1235", "–", "-0.5000"]
    assert out["rank: x"].tolist() == ["1", "–", "40"]
    assert out["note"].tolist() == ["–", "too few queries", ""]
    # columns without a missing value are untouched (numbers sort as numbers)
    pd.testing.assert_series_equal(out["mean"], df["mean"])
    pd.testing.assert_series_equal(out["significant"], df["significant"])
    assert not out.isna().any().any()
    assert T.display_table(df, blank="", gaps_as_text=True)["grade"].tolist() == ["3", "", "1"]
    assert T.display_table(df, p_columns=(), gaps_as_text=True)["p_value"].tolist() == ["0.3870", "0.0000", "–"]


def test_reading_guide():
    assert T.reading_band("ndcg@10", 0.95) == "Excellent"
    assert T.reading_band("ndcg@10", 0.7) == "Very Good"
    assert T.reading_band("ndcg@10", 0.1) == "Poor"
    assert T.reading_band("recall@10", 0.65) == "Good"
    assert T.reading_band("map@10", 0.5) is None
    frames = T.reading_guide_frames()
    assert frames["ndcg@10"]["band"].tolist() == ["Excellent", "Very Good", "Good", "Fair", "Poor"]
    assert frames["ndcg@10"]["ndcg@10"].tolist()[:2] == ["x ≥ 0.9", "0.7 ≤ x < 0.9"]
    assert frames["recall@10"]["recall@10"].tolist() == ["x ≥ 0.8", "0.6 ≤ x < 0.8", "0.4 ≤ x < 0.6", "x < 0.4"]


def test_each_value_falls_in_one_written_band_the_one_it_is_given():
    def contains(text: str, x: float) -> bool:
        """Whether the written range holds x (only the half-open forms; anything else fails)."""
        if m := re.fullmatch(r"([\d.]+) ≤ x < ([\d.]+)", text):
            return float(m[1]) <= x < float(m[2])
        if m := re.fullmatch(r"x ≥ ([\d.]+)", text):
            return x >= float(m[1])
        if m := re.fullmatch(r"x < ([\d.]+)", text):
            return x < float(m[1])
        raise AssertionError(f"not a half-open range: {text!r}")

    for label, frame in T.reading_guide_frames().items():
        for x in np.round(np.arange(0, 1.0001, 0.05), 2):  # every band edge among them
            holding = [b for r, b in zip(frame[label], frame["band"], strict=True) if contains(r, float(x))]
            assert holding == [T.reading_band(label, float(x))], (label, x, holding)

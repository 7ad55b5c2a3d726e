"""Seed 001 end to end: 50 movies, three embedding spaces, their aspects, weighted RRF — one CLI command.

The fixture (generated here with a seeded RNG) follows seed 001's JSON schema
and §1.3; each space's vectors are a noisy copy of the latent space its
ground-truth lists come from, so the numbers are neither 0 nor 1. Two movies
share the same vector in every space, so exact score ties occur and the
"tie-breaker: d ascending" rule is exercised.

The report written by ``evalcore evaluate`` is checked against an independent
computation below: plain Python loops over lists, seed 001's formulas
literally (§2.3 cosine with u/(‖u‖+ε), §3 ranking, §5 metrics, §7 weighted RRF
with exact rational arithmetic so that ties are ties).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from evalcore.cli import main
from evalcore.io import Embeddings, save_embeddings

N_MOVIES = 50
K = 5
EPS = 1e-12
WEIGHTS = {"denseanchor": 0.5, "densecontent": 0.3, "densevibe": 0.2}
C = 60
FIELDS = {
    "overall": "5_most_similar_movies_overall_ordered",
    "content": "5_most_similar_movies_content_ordered",
    "vibes": "5_most_similar_movies_vibes_ordered",
}
SPACE_ASPECT = {"denseanchor": "overall", "densecontent": "content", "densevibe": "vibes"}
DUP = ("tt0000008", "tt0000009")  # same vector in every space


# ----------------------------------------------------------------------------- fixture
def _top5(latent: np.ndarray, ids: list[str]) -> dict[str, list[str]]:
    n = latent / np.linalg.norm(latent, axis=1, keepdims=True)
    sims = n @ n.T
    out = {}
    for i, q in enumerate(ids):
        cand = sorted((j for j in range(len(ids)) if j != i), key=lambda j: (-sims[i, j], ids[j]))
        out[q] = [ids[j] for j in cand[:K]]
    return out


def make_fixture(root: Path) -> dict[str, Path]:
    rng = np.random.default_rng(20240501)
    ids = [f"tt{i:07d}" for i in range(1, N_MOVIES + 1)]
    content = rng.normal(size=(N_MOVIES, 12))
    vibe = rng.normal(size=(N_MOVIES, 12))
    overall = np.hstack([content, 0.8 * vibe])
    gt = {"overall": _top5(overall, ids), "content": _top5(content, ids), "vibes": _top5(vibe, ids)}
    entries = [{"movie_id": q, **{FIELDS[a]: gt[a][q] for a in FIELDS}} for q in ids]
    root.mkdir(parents=True, exist_ok=True)
    paths = {"gt": root / "similar_movies.json"}
    paths["gt"].write_text(json.dumps(entries, indent=1), encoding="utf-8")

    spaces = {
        "denseanchor": overall + 0.9 * rng.normal(size=overall.shape),
        "densecontent": content + 0.7 * rng.normal(size=content.shape),
        "densevibe": vibe + 0.7 * rng.normal(size=vibe.shape),
    }
    files = {"denseanchor": "anchor.json", "densecontent": "content.npy", "densevibe": "vibe.parquet"}
    for name, vecs in spaces.items():
        v = vecs.astype(np.float32)
        v[ids.index(DUP[1])] = v[ids.index(DUP[0])]
        paths[name] = root / files[name]
        save_embeddings(Embeddings.from_arrays(ids, v), paths[name])
    return paths


# ----------------------------------------------------------------------------- independent computation
def load_vectors(name: str, path: Path) -> dict[str, list[float]]:
    """Read the fixture files back with plain json/numpy/pyarrow (not evalcore)."""
    if path.suffix == ".json":
        return {k: [float(x) for x in v] for k, v in json.loads(path.read_text()).items()}
    if path.suffix == ".npy":
        arr = np.load(path, allow_pickle=False)
        ids = path.with_name(path.stem + "_ids.txt").read_text().split()
        return {i: [float(x) for x in row] for i, row in zip(ids, arr.tolist(), strict=True)}
    import pyarrow.parquet as pq

    t = pq.read_table(path).to_pylist()
    return {r["id"]: [float(x) for x in r["embedding"]] for r in t}


def normalize(u: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in u))
    return [x / (norm + EPS) for x in u]


def rank_all(vectors: dict[str, list[float]], ids: list[str]) -> dict[str, list[str]]:
    nv = {i: normalize(vectors[i]) for i in ids}
    ranked = {}
    for q in ids:
        scores = {d: sum(a * b for a, b in zip(nv[q], nv[d], strict=True)) for d in ids if d != q}
        ranked[q] = sorted(scores, key=lambda d: (-scores[d], d))
    return ranked


def min_gap(vectors: dict[str, list[float]], ids: list[str]) -> float:
    """Smallest non-zero gap between consecutive scores of any full ranking (fixture sanity)."""
    nv = {i: normalize(vectors[i]) for i in ids}
    best = 1.0
    for q in ids:
        s = sorted((sum(a * b for a, b in zip(nv[q], nv[d], strict=True)) for d in ids if d != q), reverse=True)
        for a, b in zip(s, s[1:], strict=False):
            if a - b > 1e-12:
                best = min(best, a - b)
    return best


def hits_at_k(pred: list[str], gt: list[str], k: int) -> float:
    return len(set(pred[:k]) & set(gt)) / len(gt)


def rr_at_k(pred: list[str], gt_set: set[str], k: int) -> float:
    for i, p in enumerate(pred[:k]):
        if p in gt_set:
            return 1 / (i + 1)
    return 0.0


def ndcg_at_k(pred: list[str], gt: list[str], k: int) -> float:
    rel_map = {g: 5 - i for i, g in enumerate(gt)}
    dcg = sum((2 ** rel_map.get(p, 0) - 1) / math.log2(i + 2) for i, p in enumerate(pred[:k]))
    idcg = sum((2 ** rel_map[g] - 1) / math.log2(i + 2) for i, g in enumerate(gt[:k]))
    return dcg / idcg if idcg > 0 else 0.0


def rrf_rank(ranked: dict[str, dict[str, list[str]]], q: str, ids: list[str], top_n: int | None) -> list[str]:
    score: dict[str, Fraction] = {}
    for d in ids:
        if d == q:
            continue
        total = Fraction(0)
        for space, w in WEIGHTS.items():
            lst = ranked[space][q] if top_n is None else ranked[space][q][:top_n]
            if d in lst:
                total += Fraction(w) / (C + lst.index(d) + 1)
        score[d] = total
    return sorted(score, key=lambda d: (-score[d], d))


def expected(paths: dict[str, Path], top_n: int | None) -> dict:
    entries = json.loads(paths["gt"].read_text())
    ids = [e["movie_id"] for e in entries]
    gt = {a: {e["movie_id"]: e[f] for e in entries} for a, f in FIELDS.items()}
    ranked = {}
    for space in WEIGHTS:
        vecs = load_vectors(space, paths[space])
        # the engine scores in float32 (normalised float32 vectors, error of a cosine <= ~3 * 2^-24 ~ 2e-7):
        # gaps above 1e-6 cannot be reordered by it, so the rankings must agree exactly
        assert min_gap(vecs, ids) > 1e-6, "fixture has near-ties that float32 could reorder"
        ranked[space] = rank_all(vecs, ids)
    out: dict = {}
    for q in ids:
        for run in [*WEIGHTS, "combined"]:
            aspect = SPACE_ASPECT.get(run, "overall")
            pred = (rrf_rank(ranked, q, ids, top_n) if run == "combined" else ranked[run][q])[:K]
            g = gt[aspect][q]
            out.setdefault(q, {})[run] = {"hits": hits_at_k(pred, g, K), "rr": rr_at_k(pred, set(g), K),
                                          "ndcg": ndcg_at_k(pred, g, K), "topK": pred}
    return out


# ----------------------------------------------------------------------------- the test
@pytest.fixture(scope="module")
def fixture_paths(tmp_path_factory) -> dict[str, Path]:
    return make_fixture(tmp_path_factory.mktemp("seed001"))


def _cli(paths: dict[str, Path], out: Path, top_n: int | None) -> int:
    argv = [
        "evaluate", "--qrels", str(paths["gt"]), "--k", str(K), "--ties", "docid_asc",
        "--metrics", "recall", "mrr", "ndcg_exp",
        "--emb", f"denseanchor={paths['denseanchor']}",
        "--emb", f"densecontent={paths['densecontent']}",
        "--emb", f"densevibe={paths['densevibe']}",
        "--aspect", "denseanchor=overall", "--aspect", "densecontent=content", "--aspect", "densevibe=vibes",
        "--fuse", "combined=" + ",".join(f"{n}:{w}" for n, w in WEIGHTS.items()),
        "--rrf-c", str(C), "--aspect", "combined=overall",
        "--report-depth", str(K), "--out", str(out),
    ]
    if top_n is not None:
        argv += ["--rrf-top-n", str(top_n)]
    return main(argv)


def test_fixture_follows_section_1_3(fixture_paths):
    entries = json.loads(fixture_paths["gt"].read_text())
    ids = [e["movie_id"] for e in entries]
    assert len(ids) == N_MOVIES == len(set(ids))
    for e in entries:
        for f in FIELDS.values():
            lst = e[f]
            assert len(lst) == 5 and len(set(lst)) == 5 and e["movie_id"] not in lst and set(lst) <= set(ids)


@pytest.mark.parametrize("top_n", [None, 20])
def test_one_command_report_matches_independent_computation(fixture_paths, tmp_path, top_n):
    out = tmp_path / "out"
    assert _cli(fixture_paths, out, top_n) == 0
    report = json.loads((out / "report.json").read_text())
    want = expected(fixture_paths, top_n)
    runs = [*WEIGHTS, "combined"]
    assert report["metadata"]["ties"] == "docid_asc"
    assert report["metadata"]["aspects"] == {**{n: FIELDS[a] for n, a in SPACE_ASPECT.items()},
                                             "combined": FIELDS["overall"]}
    assert report["metadata"]["fusion"]["combined"]["runs"] == WEIGHTS
    assert set(report["per_query"]) == set(want)
    for q, per_run in want.items():
        for run in runs:
            got = report["per_query"][q][run]
            w = per_run[run]
            assert got["topK"] == w["topK"], (q, run)
            assert got["recall@5"] == pytest.approx(w["hits"], abs=1e-12), (q, run)
            assert got["mrr@5"] == pytest.approx(w["rr"], abs=1e-12), (q, run)
            assert got["ndcg_exp@5"] == pytest.approx(w["ndcg"], abs=1e-12), (q, run)
    for run in runs:
        agg = report["aggregates"][run]
        for label, key in (("recall@5", "hits"), ("mrr@5", "rr"), ("ndcg_exp@5", "ndcg")):
            mean = sum(want[q][run][key] for q in want) / len(want)
            assert agg[label]["mean"] == pytest.approx(mean, abs=1e-12), (run, label)
            assert agg[label]["n"] == N_MOVIES
    # non-trivial: every run finds something and misses something
    for run in runs:
        assert 0.1 < report["aggregates"][run]["recall@5"]["mean"] < 0.95, run


def test_exact_ties_are_broken_by_id_ascending(fixture_paths, tmp_path):
    out = tmp_path / "out"
    assert _cli(fixture_paths, out, None) == 0
    report = json.loads((out / "report.json").read_text())
    # the two movies with the same vector: for any third movie whose top-5 holds one of them, the
    # other follows right after it (same score), the smaller id first
    seen = 0
    for q, per_run in report["per_query"].items():
        if q in DUP:
            continue
        for run in WEIGHTS:
            top = per_run[run]["topK"]
            if DUP[0] in top[:-1]:
                i = top.index(DUP[0])
                assert top[i + 1] == DUP[1], (q, run, top)
                seen += 1
            assert not (DUP[1] in top and DUP[0] not in top), (q, run, top)
    assert seen > 0


def test_aspect_of_an_unknown_run_is_an_error(fixture_paths, tmp_path, capsys):
    code = main(["evaluate", "--qrels", str(fixture_paths["gt"]), "--k", "5",
                 "--emb", f"a={fixture_paths['denseanchor']}", "--aspect", "a=overall", "--aspect", "zz=content"])
    assert code == 2
    assert "zz" in capsys.readouterr().err


def test_report_names_each_runs_aspect_as_the_file_does(fixture_paths, tmp_path):
    """A review: report.json kept what was typed (``vib``, ``VIBES``), not the field judged against."""
    out = tmp_path / "out"
    assert main(["evaluate", "--qrels", str(fixture_paths["gt"]), "--k", "5", "--out", str(out),
                 "--emb", f"a={fixture_paths['denseanchor']}", "--emb", f"v={fixture_paths['densevibe']}",
                 "--aspect", "a=OVERALL", "--aspect", "v=vib"]) == 0
    aspects = json.loads((out / "report.json").read_text())["metadata"]["aspects"]
    assert aspects == {"a": "5_most_similar_movies_overall_ordered", "v": "5_most_similar_movies_vibes_ordered"}

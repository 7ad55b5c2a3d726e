"""A built-in, clearly synthetic demo data set for the dashboard (pure numpy, deterministic).

:func:`make_demo` builds, from one seed and in well under a second:

* ~2,000 items in 6 domains of different sizes (one deliberately tiny, so the
  Domains page has a domain too small to test);
* a **reference model** (256-d; item = domain centroid + sub-topic offset +
  noise) whose cosine top-10 of each query item is the ground truth, graded by
  position (grade 10 for its nearest neighbour ... 1 for the 10th, the
  ``n + 1 - position`` rule of seed 001);
* a **strong** (128-d) and a **weak** (64-d) candidate model, noisy random
  projections of the reference; in one domain (``"mathematics"``) the strong
  model is much noisier, so the weak model beats it there while losing overall;
* a **lexical** baseline: a ranked run (like a TREC run file) whose scores are a
  noisy, heavy-tailed view of the reference similarity, not an embedding model;
* per-item metadata (synthetic titles and texts) and the item → domain map.

Every run is item-to-item (a query's own item is never retrieved) and 100 deep
(so the drill-down can say "not in top 100"). Queries are a seeded sample of
``n_queries`` items (seed 000, step 3).

Everything is derived from ``numpy.random.default_rng(seed)``, so the same seed
always gives exactly the same data (``tests/test_demo.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data import Qrels, Run
from ..defaults import DEMO_SEED

__all__ = ["Demo", "make_demo", "cached_demo", "DEMO_DOMAINS", "DEMO_LABEL", "DEMO_RUN_NAMES", "FLIP_DOMAIN"]

#: Label shown wherever the demo is loaded.
DEMO_LABEL = "Built-in demo (synthetic data)"

#: (domain, share of the items, sub-topics)
DEMO_DOMAINS: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    ("biology", 0.27, ("genomics", "ecology", "neuroscience", "protein folding")),
    ("physics", 0.23, ("optics", "condensed matter", "cosmology", "particle physics")),
    ("chemistry", 0.20, ("catalysis", "polymers", "electrochemistry")),
    ("mathematics", 0.16, ("topology", "number theory", "probability")),
    ("medicine", 0.125, ("cardiology", "oncology", "epidemiology")),
    ("linguistics", 0.015, ("phonology", "syntax")),
)
#: Names of the demo's runs, in display order.
DEMO_RUN_NAMES: tuple[str, ...] = ("strong-128d", "weak-64d", "lexical")
#: The domain where the weak model beats the strong one.
FLIP_DOMAIN = "mathematics"

REF_DIM, STRONG_DIM, WEAK_DIM = 256, 128, 64
GT_DEPTH = 10
RUN_DEPTH = 100
MICRO, ITEM = 1.0, 0.5
NOISE_STRONG, NOISE_FLIP, NOISE_WEAK, LEX_NOISE = 0.4, 1.2, 0.6, 0.05


@dataclass(frozen=True, eq=False)
class Demo:
    """The demo data set (see the module docstring).

    Attributes
    ----------
    qrels : Qrels
        Graded ground truth (reference top-10, grade 10..1) of the sampled
        query items, with each query's domain.
    runs : dict of str -> Run
        ``"strong-128d"``, ``"weak-64d"`` (embedding models) and
        ``"lexical"`` (a ranked baseline), each 100 deep.
    embeddings : dict of str -> ndarray
        ``"reference"``, ``"strong-128d"``, ``"weak-64d"``: float32 matrices,
        one row per item of ``item_ids``.
    item_ids : ndarray of str
    domains : dict of str -> str
        Item id -> domain.
    metadata : DataFrame
        ``doc_id, title, text, domain`` of every item.
    seed : int
    """

    qrels: Qrels
    runs: dict[str, Run]
    embeddings: dict[str, np.ndarray]
    item_ids: np.ndarray
    domains: dict[str, str]
    metadata: pd.DataFrame
    seed: int
    label: str = DEMO_LABEL
    info: dict = field(default_factory=dict)


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, in float64 (float32 cosines tie now and then, and the tie rule ``trec``
    would then re-order a run)."""
    x = np.asarray(x, dtype=np.float64)
    return x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-12)


def _top(sims: np.ndarray, q_index: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best items of each row of ``sims`` (modified: each query's own item set to −inf, so
    excluded), ranked by score descending, the lower item index first were two equal: (indices, scores)."""
    sims[np.arange(len(q_index)), q_index] = -np.inf
    part = np.argpartition(-sims, k, axis=1)[:, :k]
    ps = np.take_along_axis(sims, part, axis=1)
    order = np.lexsort((part, -ps), axis=1)
    idx = np.take_along_axis(part, order, axis=1)
    return idx, np.take_along_axis(sims, idx, axis=1)


def _topk(queries: np.ndarray, items: np.ndarray, q_index: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact cosine top-k of each query row among the items, the query's own item excluded; float64
    scores, so that no two are equal (see :func:`_top`)."""
    return _top(_unit(queries) @ _unit(items).T, q_index, k)


def _run(name: str, qids: np.ndarray, item_ids: np.ndarray, idx: np.ndarray, scores: np.ndarray) -> Run:
    nq, depth = idx.shape
    q = np.repeat(np.arange(nq, dtype=np.int64), depth)
    return Run.from_codes(qids, q, item_ids, idx.reshape(-1).astype(np.int64),
                          scores.reshape(-1).astype(np.float64), name=name, source=DEMO_LABEL)


def make_demo(seed: int = DEMO_SEED, *, n_items: int = 2000, n_queries: int = 300) -> Demo:
    """Build the synthetic demo (deterministic in ``seed``); see the module docstring.

    Parameters
    ----------
    seed : int
        Seed of ``numpy.random.default_rng``.
    n_items : int
        Number of items (each is a document and a potential query).
    n_queries : int
        Number of query items sampled (without replacement).
    """
    if n_items < 200 or not (10 <= n_queries <= n_items):
        raise ValueError("the demo needs n_items >= 200 and 10 <= n_queries <= n_items")
    rng = np.random.default_rng(seed)
    names = [d for d, _, _ in DEMO_DOMAINS]
    shares = np.array([s for _, s, _ in DEMO_DOMAINS])
    sizes = np.floor(shares / shares.sum() * n_items).astype(int)
    sizes[0] += n_items - sizes.sum()
    dom_idx = np.repeat(np.arange(len(names)), sizes)
    sub_idx = np.concatenate([rng.integers(0, len(DEMO_DOMAINS[i][2]), size=n) for i, n in enumerate(sizes)])

    # reference model: domain centroid + sub-topic offset + item noise
    centroids = rng.normal(size=(len(names), REF_DIM)) * 1.0
    max_sub = max(len(s) for _, _, s in DEMO_DOMAINS)
    subs = rng.normal(size=(len(names), max_sub, REF_DIM)) * 0.75
    # micro-clusters of ~8 items give each item a stable neighbourhood
    n_micro = max(1, n_items // 8)
    micro_idx = rng.integers(0, n_micro, size=n_items)
    micro = rng.normal(size=(n_micro, REF_DIM)) * MICRO
    ref = centroids[dom_idx] + subs[dom_idx, sub_idx] + micro[micro_idx] + rng.normal(size=(n_items, REF_DIM)) * ITEM
    ref = ref.astype(np.float32)

    # candidate models: noisy random projections of the reference
    p_strong = rng.normal(size=(REF_DIM, STRONG_DIM)) / np.sqrt(STRONG_DIM)
    p_weak = rng.normal(size=(REF_DIM, WEAK_DIM)) / np.sqrt(WEAK_DIM)
    ref_scale = float(np.linalg.norm(ref, axis=1).mean()) / np.sqrt(REF_DIM)
    noise_strong = np.full(n_items, NOISE_STRONG)
    noise_strong[dom_idx == names.index(FLIP_DOMAIN)] = NOISE_FLIP
    strong = ref @ p_strong + rng.normal(size=(n_items, STRONG_DIM)) * (noise_strong[:, None] * ref_scale)
    weak = ref @ p_weak + rng.normal(size=(n_items, WEAK_DIM)) * (NOISE_WEAK * ref_scale)

    item_ids = np.array([f"item-{i:04d}" for i in range(n_items)], dtype=object)
    q_index = np.sort(rng.choice(n_items, size=n_queries, replace=False))
    qids = item_ids[q_index]

    # ground truth: the reference's top-10, graded n + 1 - position
    gt_idx, _ = _topk(ref[q_index], ref, q_index, GT_DEPTH)
    grades = np.tile(np.arange(GT_DEPTH, 0, -1, dtype=np.int64), n_queries)
    item_domain = {str(item_ids[i]): names[dom_idx[i]] for i in range(n_items)}
    qrels = Qrels.from_records(
        np.repeat(qids, GT_DEPTH), item_ids[gt_idx.reshape(-1)], grades,
        domains={str(q): item_domain[str(q)] for q in qids}, source=DEMO_LABEL,
    )

    runs: dict[str, Run] = {}
    for name, emb in (("strong-128d", strong), ("weak-64d", weak)):
        idx, sc = _topk(emb[q_index], emb, q_index, RUN_DEPTH)
        runs[name] = _run(name, qids, item_ids, idx, sc)

    # lexical baseline: reference similarity seen through heavy-tailed noise (a ranked run, not a model)
    sims = _unit(ref[q_index]) @ _unit(ref).T
    idx, lex = _top(sims + rng.standard_t(df=3, size=sims.shape) * LEX_NOISE, q_index, RUN_DEPTH)
    runs["lexical"] = _run("lexical", qids, item_ids, idx, 10.0 * lex + 5.0)  # BM25-like positive scores

    titles, texts = [], []
    for i in range(n_items):
        dname, _, topics = DEMO_DOMAINS[dom_idx[i]]
        topic = topics[sub_idx[i]]
        titles.append(f"Synthetic {dname} note {i:04d}: {topic}")
        texts.append(f"Generated text about {topic} in {dname} (demo item {i}; not real data).")
    metadata = pd.DataFrame({"doc_id": item_ids, "title": titles, "text": texts,
                             "domain": [names[d] for d in dom_idx]})
    info = {
        "n_items": n_items, "n_queries": n_queries, "domains": dict(zip(names, sizes.tolist(), strict=True)),
        "reference_dim": REF_DIM, "strong_dim": STRONG_DIM, "weak_dim": WEAK_DIM,
        "ground_truth": f"reference top-{GT_DEPTH}, grade {GT_DEPTH} (nearest) .. 1", "run_depth": RUN_DEPTH,
        "flip_domain": FLIP_DOMAIN,
    }
    embeddings = {"reference": ref, "strong-128d": strong.astype(np.float32), "weak-64d": weak.astype(np.float32)}
    return Demo(qrels, runs, embeddings, item_ids, item_domain, metadata, seed, DEMO_LABEL, info)


@functools.lru_cache(maxsize=2)
def cached_demo(seed: int = DEMO_SEED) -> Demo:
    """:func:`make_demo` with default sizes, built once per seed per process (the result is immutable)."""
    return make_demo(seed)


def demo_description(demo: Demo | None = None, info: Mapping | None = None) -> str:
    """One paragraph describing the demo (plain text, no user data)."""
    info = dict(info or (demo.info if demo is not None else {}))
    doms = ", ".join(f"{d} ({n})" for d, n in info.get("domains", {}).items())
    return (
        f"Synthetic data generated on start-up: {info.get('n_items', '?')} items in domains {doms}. "
        f"Ground truth = a {info.get('reference_dim', '?')}-d reference model's top-{GT_DEPTH} per query item, "
        f"graded {GT_DEPTH}..1 by position; {info.get('n_queries', '?')} sampled query items. Runs: a strong "
        f"{info.get('strong_dim', '?')}-d and a weak {info.get('weak_dim', '?')}-d model (noisy projections of the "
        f"reference; the weak one wins in {info.get('flip_domain', '?')}) and a lexical ranked baseline."
    )

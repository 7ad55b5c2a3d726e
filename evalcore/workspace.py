"""The dashboard's data model and pipeline, in pure Python (no Streamlit).

A :class:`Workspace` holds what the user loaded — uploaded files as
:class:`Blob` (bytes + SHA-256), a :class:`GroundTruthSource`, any number of
:class:`RunSource`, optional domain and document-metadata files — and the
:class:`Settings`. Nothing here keeps derived data: every derived object
(parsed qrels, sampled queries, rankings from embeddings, the evaluation) is a
pure function of *content keys* built from the SHA-256 of the bytes and the
options that matter, so the dashboard can cache each step by key and never
recompute retrieval when only the displayed k, query, run or baseline changes.

Pipeline (each step a function below; the dashboard wraps each in a cache)::

    ground truth bytes ──load_ground_truth──> Qrels (per aspect)
                       ──query_universe──> all query ids ──sample_query_ids──> sample
    Qrels + domains + sample ──prepare_qrels──> evaluated Qrels
    run bytes / embeddings / fusion ──build_run──> Run        (retrieval only here)
    Qrels + Runs + Settings ──evaluate_workspace──> Evaluation (every k at once)

Every number the dashboard shows is an aggregation of ``Evaluation.table``
(:mod:`evalcore.aggregate`, :mod:`evalcore.stats`); the helpers at the end of
this module only reshape those aggregates for display.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from . import loaders
from .data import Qrels, Run
from .errors import EvalcoreError, EvalcoreWarning, OptionError
from .evaluate import Evaluation, evaluate

__all__ = [
    "Blob", "Settings", "GroundTruthSource", "RunSource", "FusionSpec", "Workspace",
    "content_hash", "capture", "load_ground_truth", "query_universe", "sample_query_ids", "prepare_qrels",
    "build_run", "evaluate_workspace", "prepare_reference", "REFERENCE_MODES", "load_domain_map", "load_metadata", "plain_table",
    "overview_table", "curve_frame", "reading_band", "reading_guide_frames", "READING_GUIDE", "demo_workspace",
    "metric_k_pairs", "metric_slice", "has_embeddings", "run_embeddings", "run_diversity", "diversity_summary",
    "DIVERSITY_ALPHA", "DIVERSITY_METRICS", "display_table", "P_VALUE_COLUMNS", "normalize_metadata", "METRIC_CHOICES", "TIE_CHOICES",
    "qrels_formats", "parse_metric_names", "clear_demo", "set_ground_truth", "add_ranked_run", "add_embedding_run",
    "add_fused_run", "set_run_options", "looks_like_embeddings", "run_formats", "embedding_formats", "detect_qrels", "detect_run", "ground_truth_aspects",
]

#: Metrics offered in the settings (canonical names of :mod:`evalcore.metrics`).
METRIC_CHOICES: tuple[str, ...] = (
    "ndcg", "ndcg_exp", "recall", "recall_capped", "precision", "hit_rate", "mrr", "map", "map_found",
    "rprec", "first_rel_rank",
)
TIE_CHOICES: tuple[str, ...] = ("trec", "docid_asc", "input")
DEFAULT_K: tuple[int, ...] = (1, 3, 5, 10, 20, 50, 100)
#: How a reference model's neighbours become the ground truth (see :class:`Settings`).
REFERENCE_MODES: tuple[str, ...] = ("tied", "fixed")

# ------------------------------------------------------------------------------------------ blobs


def content_hash(data: bytes) -> str:
    """SHA-256 hex digest of the bytes (the key of everything derived from them)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, eq=False)
class Blob:
    """An uploaded file: its name, bytes and SHA-256."""

    name: str
    data: bytes = field(repr=False)
    sha256: str = ""

    @classmethod
    def of(cls, name: str, data: bytes) -> Blob:
        return cls(str(name), bytes(data), content_hash(data))

    @property
    def size(self) -> int:
        return len(self.data)


def _sha(b: Blob | None) -> str:
    return b.sha256 if b is not None else "-"


def _key(*parts: Any) -> str:
    """A short stable key from JSON-able parts."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


# ------------------------------------------------------------------------------------------ settings


def _split_metric_text(text: str) -> list[str]:
    """Split on commas, semicolons and blanks that are outside parentheses."""
    pieces, cur, depth = [], [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (ch in ",;" or ch.isspace()):
            pieces.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    pieces.append("".join(cur))
    return [p for p in pieces if p.strip()]


def parse_metric_names(metrics: str | Iterable[str]) -> tuple[str, ...]:
    """Canonical metric names from a list of names or from free text.

    Each name is parsed by :func:`evalcore.measures.parse_measure`, so
    parameters and cutoffs are accepted and printed canonically:
    ``"recall(rel=2)"``, ``"P(rel=2)@5"`` -> ``"precision(rel=2)@5"``,
    ``"success@1"`` -> ``"hit_rate@1"``.

    Parameters
    ----------
    metrics : str or iterable of str
        Names; a string is split at commas, semicolons and blanks outside
        parentheses (``"recall(rel=2), P(rel = 2)@5"`` is two names).

    Returns
    -------
    tuple of str
        Canonical names, duplicates removed (first occurrence kept); empty for
        an empty text.

    Raises
    ------
    UnknownMeasureError
        For a name that does not parse, with the engine's message (what is
        wrong and what is supported).
    """
    from .measures import parse_measure

    names = _split_metric_text(metrics) if isinstance(metrics, str) else [str(m) for m in metrics]
    return tuple(dict.fromkeys(str(parse_measure(n)) for n in names))



@dataclass(frozen=True)
class Settings:
    """Evaluation settings chosen on the Data page.

    ``sample_size`` 0 means every ground-truth query; ``depth`` is the length of
    the rankings computed from embeddings (the drill-down says "not in top
    ``depth``"). A reference model's embeddings as ground truth (seed 000) use
    ``gt_mode``: ``"tied"`` — at each k, relevant = the reference's top-k
    (seed 000's procedure: at k = 1 every metric is the same number) — or
    ``"fixed"`` — relevant = its top ``gt_depth``, graded by position, at every k.
    """

    k: tuple[int, ...] = DEFAULT_K
    metrics: tuple[str, ...] = ("ndcg", "recall", "mrr", "map")
    rel_threshold: int = 1
    ties: str = "trec"
    no_relevant: str = "zero"
    sample_size: int = 0
    seed: int = 42
    depth: int = 100
    gt_depth: int = 10
    gt_mode: str = "tied"

    def validated(self) -> Settings:
        """A normalised copy; raise :class:`OptionError` on an invalid value."""
        ks = tuple(sorted({int(x) for x in self.k}))
        if not ks or ks[0] < 1:
            raise OptionError("choose at least one cutoff k >= 1")
        if not self.metrics:
            raise OptionError("choose at least one metric")
        metrics = parse_metric_names(self.metrics)
        if int(self.rel_threshold) < 1:
            raise OptionError("the relevance threshold must be >= 1")
        if self.ties not in TIE_CHOICES:
            raise OptionError(f"unknown tie rule {self.ties!r}; choose one of {list(TIE_CHOICES)}")
        if int(self.sample_size) < 0 or int(self.seed) < 0:
            raise OptionError("sample size and seed must be >= 0")
        if self.gt_mode not in REFERENCE_MODES:
            raise OptionError(f"unknown reference mode {self.gt_mode!r}; choose one of {list(REFERENCE_MODES)}")
        depth = max(int(self.depth), max(ks))
        return replace(self, k=ks, metrics=metrics, depth=depth,
                       rel_threshold=int(self.rel_threshold), sample_size=int(self.sample_size),
                       seed=int(self.seed), gt_depth=max(1, int(self.gt_depth)))

    def eval_key(self) -> str:
        return _key("eval", list(self.k), list(self.metrics), self.rel_threshold, self.ties, self.no_relevant)

    def summary_lines(self, *, reference: bool = False) -> list[str]:
        """Plain-text lines for the sidebar (``reference``: the ground truth is a reference model)."""
        sample = "all queries" if not self.sample_size else f"{self.sample_size} sampled queries (seed {self.seed})"
        return [
            f"k: {', '.join(map(str, self.k))}",
            f"metrics: {', '.join(self.metrics)}",
            f"relevant: grade >= {self.rel_threshold}; ties: {self.ties}",
            f"queries: {sample}",
            f"embedding rankings: top {self.depth}",
        ] + ([f"reference: {'its top-k at each k (tied)' if self.gt_mode == 'tied' else f'top {self.gt_depth}, graded'}"]
             if reference else [])


# ------------------------------------------------------------------------------------------ sources


@dataclass(frozen=True)
class GroundTruthSource:
    """Where the ground truth comes from.

    ``kind``: ``"file"`` (any format :func:`evalcore.loaders.load_qrels` reads),
    ``"reference"`` (a reference model's embeddings: relevant = its top
    ``Settings.gt_depth`` by cosine, graded by position, seed 000) or ``"demo"``.
    """

    kind: str
    blob: Blob | None = None
    ids_blob: Blob | None = None
    format: str = "auto"
    demo_seed: int | None = None

    @property
    def label(self) -> str:
        if self.kind == "demo":
            from .demo import DEMO_LABEL

            return DEMO_LABEL
        return self.blob.name if self.blob is not None else "(none)"

    def key(self, aspect: str | None = None, settings: Settings | None = None) -> str:
        extra = None
        if self.kind == "reference" and settings is not None:
            extra = [settings.gt_mode, settings.gt_depth if settings.gt_mode == "fixed" else list(settings.k)]
        return _key("gt", self.kind, _sha(self.blob), _sha(self.ids_blob), self.format, self.demo_seed, aspect, extra)

    def universe_key(self) -> str:
        return _key("universe", self.kind, _sha(self.blob), _sha(self.ids_blob), self.format, self.demo_seed)


@dataclass(frozen=True)
class FusionSpec:
    """A weighted-RRF run over other runs (by uid), seed 001 §7."""

    inputs: tuple[str, ...]
    weights: tuple[float, ...]
    c: float = 60.0
    top_n: int | None = None


@dataclass(frozen=True)
class RunSource:
    """One run of the workspace.

    ``kind``: ``"ranked"`` (a run file), ``"embedding"`` (document vectors,
    optionally ids for ``.npy`` and separate query vectors; item-to-item when no
    query file is given), ``"fused"`` (:class:`FusionSpec`) or ``"demo"``.
    ``aspect`` is the ground-truth aspect the run is evaluated against (for
    ground truths with several, e.g. seed 001's overall/content/vibes).
    """

    uid: str
    name: str
    kind: str
    blob: Blob | None = None
    ids_blob: Blob | None = None
    query_blob: Blob | None = None
    query_ids_blob: Blob | None = None
    format: str = "auto"
    aspect: str | None = None
    fusion: FusionSpec | None = None
    demo_seed: int | None = None
    demo_name: str | None = None

    @property
    def label(self) -> str:
        if self.kind == "fused":
            return "weighted RRF"
        if self.kind == "demo":
            return f"demo run {self.demo_name}"
        names = [b.name for b in (self.blob, self.ids_blob, self.query_blob, self.query_ids_blob) if b is not None]
        return " + ".join(names) or "(no file)"

    def content_key(self) -> str:
        """Key of the run's inputs (not its name)."""
        if self.kind == "fused":
            f = self.fusion
            return _key("fused", list(f.inputs), list(f.weights), f.c, f.top_n)
        return _key(self.kind, _sha(self.blob), _sha(self.ids_blob), _sha(self.query_blob), _sha(self.query_ids_blob),
                    self.format, self.demo_seed, self.demo_name)


@dataclass(frozen=True)
class Workspace:
    """Everything the user loaded plus the settings; immutable (use :func:`dataclasses.replace`)."""

    ground_truth: GroundTruthSource | None = None
    runs: tuple[RunSource, ...] = ()
    domain_blob: Blob | None = None
    metadata_blob: Blob | None = None
    settings: Settings = Settings()
    demo_seed: int | None = None

    @property
    def is_demo(self) -> bool:
        return self.demo_seed is not None

    def run_by_uid(self, uid: str) -> RunSource | None:
        return next((r for r in self.runs if r.uid == uid), None)

    def names(self) -> list[str]:
        return [r.name for r in self.runs]

    def with_run(self, run: RunSource) -> Workspace:
        return replace(self, runs=(*self.runs, run))

    def without_run(self, uid: str) -> Workspace:
        """Remove a run, and every fused run built on it."""
        drop = {uid}
        changed = True
        while changed:
            changed = False
            for r in self.runs:
                if r.uid not in drop and r.kind == "fused" and set(r.fusion.inputs) & drop:
                    drop.add(r.uid)
                    changed = True
        return replace(self, runs=tuple(r for r in self.runs if r.uid not in drop))

    def renamed(self, uid: str, name: str) -> Workspace:
        name = str(name).strip()
        if not name:
            raise OptionError("a run name cannot be empty")
        if any(r.name == name and r.uid != uid for r in self.runs):
            raise OptionError(f"another run is already named {name!r}")
        return replace(self, runs=tuple(replace(r, name=name) if r.uid == uid else r for r in self.runs))

    def unique_name(self, base: str) -> str:
        """``base``, or ``base (2)``, ``base (3)``... not yet used by a run."""
        base = str(base).strip() or "run"
        names = set(self.names())
        if base not in names:
            return base
        i = 2
        while f"{base} ({i})" in names:
            i += 1
        return f"{base} ({i})"


def demo_workspace(seed: int = 0, settings: Settings | None = None) -> Workspace:
    """The workspace the app opens with: the built-in demo (see :mod:`evalcore.demo`)."""
    from .demo import DEMO_RUN_NAMES

    gt = GroundTruthSource("demo", demo_seed=seed)
    runs = tuple(RunSource(f"demo-{seed}-{n}", n, "demo", demo_seed=seed, demo_name=n) for n in DEMO_RUN_NAMES)
    return Workspace(gt, runs, settings=settings or Settings(), demo_seed=seed)


def _stem(filename: str) -> str:
    base = str(filename).replace("\\", "/").rsplit("/", 1)[-1]
    for ext in (".gz", ".parquet", ".jsonl", ".json", ".csv", ".tsv", ".txt", ".trec", ".run", ".npz", ".npy",
                ".qrels"):
        if base.lower().endswith(ext) and len(base) > len(ext):
            base = base[: -len(ext)]
    return base or "run"


def _new_uid(ws: Workspace, kind: str, sha: str) -> str:
    used = {r.uid for r in ws.runs}
    i = len(ws.runs)
    while f"{kind[:3]}{i}-{sha[:10]}" in used:
        i += 1
    return f"{kind[:3]}{i}-{sha[:10]}"


def clear_demo(ws: Workspace) -> Workspace:
    """The workspace without the demo's ground truth and runs (settings, side files and uploads kept)."""
    if not ws.is_demo:
        return ws
    gt = None if (ws.ground_truth is not None and ws.ground_truth.kind == "demo") else ws.ground_truth
    return replace(ws, ground_truth=gt, runs=tuple(r for r in ws.runs if r.kind != "demo"), demo_seed=None)


def set_ground_truth(ws: Workspace, blob: Blob, *, kind: str = "file", ids_blob: Blob | None = None,
                     format: str = "auto") -> Workspace:
    """Use an uploaded file as the ground truth (a qrels-like file, or a reference model's embeddings).

    Loading your own ground truth clears the demo.
    """
    if kind not in ("file", "reference"):
        raise OptionError(f"unknown ground-truth kind {kind!r}")
    ws = clear_demo(ws)
    return replace(ws, ground_truth=GroundTruthSource(kind, blob, ids_blob, format))


def looks_like_embeddings(blob: Blob) -> bool:
    """True for ``.npy`` / ``.npz`` files (by name or magic bytes): vectors, not a ranked run."""
    name = blob.name.lower()
    return name.endswith((".npy", ".npz")) or blob.data[:6] == b"\x93NUMPY" or blob.data[:4] == b"PK\x03\x04"


def add_ranked_run(ws: Workspace, blob: Blob, *, name: str | None = None, format: str = "auto",
                   aspect: str | None = None) -> tuple[Workspace, str]:
    """Add a ranked-run file (TREC, CSV/Parquet, JSON...); returns the new workspace and the run's uid."""
    ws = clear_demo(ws)
    uid = _new_uid(ws, "ranked", blob.sha256)
    src = RunSource(uid, ws.unique_name(name or _stem(blob.name)), "ranked", blob, format=format, aspect=aspect)
    return ws.with_run(src), uid


def add_embedding_run(ws: Workspace, blob: Blob, *, ids_blob: Blob | None = None, query_blob: Blob | None = None,
                      query_ids_blob: Blob | None = None, name: str | None = None,
                      aspect: str | None = None) -> tuple[Workspace, str]:
    """Add an embedding run: document vectors (+ ids for ``.npy``), optionally separate query vectors.

    Without query vectors the run is item-to-item: the queries are the ground
    truth's query ids found among the ids, and each query's own item is excluded.
    """
    ws = clear_demo(ws)
    uid = _new_uid(ws, "embedding", blob.sha256)
    src = RunSource(uid, ws.unique_name(name or _stem(blob.name)), "embedding", blob, ids_blob, query_blob,
                    query_ids_blob, aspect=aspect)
    return ws.with_run(src), uid


def add_fused_run(ws: Workspace, inputs: Sequence[str], weights: Sequence[float], *, c: float = 60.0,
                  top_n: int | None = None, name: str | None = None, aspect: str | None = None
                  ) -> tuple[Workspace, str]:
    """Add a weighted-RRF run over existing runs (by uid)."""
    if not inputs:
        raise OptionError("choose at least one run to fuse")
    unknown = [u for u in inputs if ws.run_by_uid(u) is None]
    if unknown:
        raise OptionError("a run to fuse is not loaded")
    if len(weights) != len(inputs):
        raise OptionError(f"{len(weights)} weights for {len(inputs)} runs")
    spec = FusionSpec(tuple(inputs), tuple(float(w) for w in weights), float(c), None if not top_n else int(top_n))
    uid = _new_uid(ws, "fused", _key(list(inputs), list(weights), c, top_n))
    if aspect is None:
        aspect = ws.run_by_uid(inputs[0]).aspect
    src = RunSource(uid, ws.unique_name(name or "rrf"), "fused", fusion=spec, aspect=aspect)
    return ws.with_run(src), uid


def set_run_options(ws: Workspace, uid: str, **changes: Any) -> Workspace:
    """Change a run's ``format`` or ``aspect`` (renaming: :meth:`Workspace.renamed`)."""
    bad = set(changes) - {"format", "aspect"}
    if bad:
        raise OptionError(f"cannot change {sorted(bad)} of a run")
    return replace(ws, runs=tuple(replace(r, **changes) if r.uid == uid else r for r in ws.runs))


# ------------------------------------------------------------------------------------------ helpers


def capture(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, list[str]]:
    """Call ``fn``; return its result and the messages of the :class:`EvalcoreWarning` it emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", EvalcoreWarning)
        out = fn(*args, **kwargs)
    msgs = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, EvalcoreWarning)))
    return out, msgs


def qrels_formats() -> tuple[str, ...]:
    return tuple(loaders.QRELS_FORMATS)


def run_formats() -> tuple[str, ...]:
    return tuple(loaders.RUN_FORMATS)


def embedding_formats() -> tuple[str, ...]:
    from .embeddings import EMBEDDING_FORMATS

    return tuple(EMBEDDING_FORMATS)


def detect_qrels(blob: Blob) -> str:
    """The ground-truth format :func:`evalcore.loaders.detect_qrels_format` sees in these bytes."""
    return loaders.detect_qrels_format(blob.data, blob.name)


def detect_run(blob: Blob) -> str:
    """The run format :func:`evalcore.loaders.detect_run_format` sees in these bytes."""
    return loaders.detect_run_format(blob.data, blob.name)


def ground_truth_aspects(gt: GroundTruthSource) -> tuple[str, ...]:
    """Aspects of an ordered-list ground truth (seed 001), ``()`` for single-aspect files.

    :func:`evalcore.loaders.list_aspects` validates the whole file, so a broken
    seed-001 file fails here, next to the file.
    """
    if gt.kind != "file" or gt.blob is None:
        return ()
    return tuple(str(a) for a in loaders.list_aspects(gt.blob.data, format=gt.format, label=gt.blob.name))


# ------------------------------------------------------------------------------------------ pipeline steps


def load_ground_truth(gt: GroundTruthSource, aspect: str | None = None) -> Qrels:
    """Parse a file ground truth (or the demo's) into :class:`Qrels` (every query, no sampling)."""
    if gt.kind == "demo":
        from .demo import cached_demo

        return cached_demo(gt.demo_seed or 0).qrels
    if gt.kind != "file" or gt.blob is None:
        raise OptionError(f"ground truth of kind {gt.kind!r} is built per query sample (see prepare_qrels)")
    return loaders.load_qrels(gt.blob.data, format=gt.format, aspect=aspect, label=gt.blob.name)


def _load_embeddings(blob: Blob, ids_blob: Blob | None = None):
    from .embeddings import load_embeddings

    return load_embeddings(blob.data, ids_src=None if ids_blob is None else ids_blob.data, label=blob.name)


def query_universe(gt: GroundTruthSource, aspect: str | None = None) -> np.ndarray:
    """Every query id of the ground truth (for a reference model: every item id)."""
    if gt.kind == "reference":
        return np.asarray(_load_embeddings(gt.blob, gt.ids_blob).ids, dtype=object)
    return np.asarray(load_ground_truth(gt, aspect).query_ids, dtype=object)


def sample_query_ids(ids: Sequence[str] | np.ndarray, n: int, seed: int) -> np.ndarray:
    """The ``n`` query ids evaluated (``n = 0`` or ``n >= len(ids)``: all, in their order).

    Drawn as seed 000 step 3 (``np.random.seed(seed); np.random.choice(N, n, replace=False)``)
    through :func:`evalcore.retrieval.sample_queries`.
    """
    ids = np.asarray(ids, dtype=object)
    if not n or n >= len(ids):
        return ids
    from .retrieval import sample_queries

    return ids[sample_queries(ids, int(n), seed=int(seed))]


def prepare_reference(
    gt: GroundTruthSource,
    *,
    sample: np.ndarray | None,
    domains: Mapping[str, str] | None,
    settings: Settings,
    progress: Callable[[int, int], None] | None = None,
):
    """A reference model's neighbours as ground truth (:func:`evalcore.embedding_runs.reference_ground_truth`).

    One exact top-k pass over the sampled query items; mode and depth from
    ``settings`` (``gt_mode``, ``gt_depth``, ``k``). Returns a
    :class:`~evalcore.embedding_runs.ReferenceGroundTruth` whose ``deepest``
    qrels serve the embedding runs (their queries) and the drill-down.
    """
    from .embedding_runs import ReferenceGroundTruth, reference_ground_truth

    ref = _load_embeddings(gt.blob, gt.ids_blob)
    fixed = settings.gt_mode == "fixed"
    rg = reference_ground_truth(ref, k=list(settings.k), mode=settings.gt_mode,
                                depth=settings.gt_depth if fixed else None,
                                query_ids=None if sample is None else list(sample), progress=progress)
    if not domains:
        return rg
    d = dict(domains)
    return ReferenceGroundTruth(rg.mode, rg.ks, rg.query_ids, rg.deepest.with_domains(d),
                                {k: q.with_domains(d) for k, q in rg.by_k.items()},
                                None if rg.fixed is None else rg.fixed.with_domains(d), rg.settings)


def prepare_qrels(
    gt: GroundTruthSource,
    *,
    aspect: str | None,
    sample: np.ndarray | None,
    domains: Mapping[str, str] | None,
    settings: Settings,
    progress: Callable[[int, int], None] | None = None,
) -> Qrels:
    """The evaluated ground truth: parsed (or built from the reference), sampled, with domains.

    For a reference model this is the deepest of its ground truths (see
    :func:`prepare_reference`, which the evaluation of that case needs).
    """
    if gt.kind == "reference":
        return prepare_reference(gt, sample=sample, domains=domains, settings=settings, progress=progress).deepest
    qrels = load_ground_truth(gt, aspect)
    if sample is not None and len(sample) < qrels.n_queries:
        qrels = qrels.subset(list(sample))
    if domains:
        qrels = qrels.with_domains(dict(domains))
    return qrels


def _embedding_run(src: RunSource, qrels: Qrels, depth: int, progress: Callable[[int, int], None] | None) -> Run:
    from .embedding_runs import embedding_run

    docs = _load_embeddings(src.blob, src.ids_blob)
    queries = None if src.query_blob is None else _load_embeddings(src.query_blob, src.query_ids_blob)
    return embedding_run(docs, queries, qrels=qrels, k=depth, name=src.name, progress=progress)


def build_run(
    src: RunSource,
    *,
    qrels: Qrels | None = None,
    settings: Settings | None = None,
    inputs: Mapping[str, Run] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Run:
    """The :class:`Run` of a source, named ``src.name``.

    ``qrels`` (the evaluated, sampled ground truth) is needed by embedding runs
    (their queries); ``inputs`` (uid -> Run) by fused runs.
    """
    settings = settings or Settings()
    if src.kind == "ranked":
        run = loaders.load_run(src.blob.data, format=src.format, name=src.name, label=src.blob.name)
    elif src.kind == "embedding":
        if qrels is None:
            raise OptionError("an embedding run needs the ground truth (its queries)")
        run = _embedding_run(src, qrels, settings.depth, progress)
    elif src.kind == "fused":
        from .fusion import weighted_rrf

        f = src.fusion
        missing = [u for u in f.inputs if inputs is None or u not in inputs]
        if missing:
            raise OptionError("a run this fusion uses is not available (removed or failed to load)")
        runs = [inputs[u].renamed(f"in{i}") for i, u in enumerate(f.inputs)]
        run = weighted_rrf(runs, weights=list(f.weights), c=f.c, top_n=f.top_n, ties=settings.ties, name=src.name)
    elif src.kind == "demo":
        from .demo import cached_demo

        run = cached_demo(src.demo_seed or 0).runs[src.demo_name]
    else:
        raise OptionError(f"unknown run kind {src.kind!r}")
    return run if run.name == src.name else run.renamed(src.name)


def _evaluate_reference(reference: Any, runs: Mapping[str, Run], settings: Settings) -> Evaluation:
    """:func:`evalcore.embedding_runs.evaluate_reference_runs`, also for measures with their own cutoff.

    In the ``"tied"`` mode every k has its own ground truth (the reference's
    top-k), evaluated once per k; a measure with a fixed cutoff (``P(rel=2)@5``)
    is evaluated once, against the ground truth of its k (which must be one of
    the k values), and one without a cutoff (``rprec``, ``first_rel_rank``)
    against the deepest one.
    """
    from .embedding_runs import concat_evaluations, evaluate_reference_runs
    from .measures import parse_measure
    from .metrics import K_FREE

    opts = dict(ties=settings.ties, rel_threshold=settings.rel_threshold, no_relevant=settings.no_relevant)
    if reference.mode != "tied":
        return evaluate_reference_runs(reference, runs, metrics=list(settings.metrics), **opts)
    per_k, own = [], {}
    for name in settings.metrics:
        m = parse_measure(name)
        if m.name in K_FREE:
            own.setdefault(None, []).append(name)
        elif m.k is not None:
            if m.k not in reference.by_k:
                raise OptionError(f"{name}: with a reference model's top-k at each k (tied), a fixed cutoff must be "
                                  f"one of the k values {sorted(reference.by_k)}")
            own.setdefault(m.k, []).append(name)
        else:
            per_k.append(name)
    parts = [evaluate_reference_runs(reference, runs, metrics=per_k, **opts)] if per_k else []
    for kk, names in own.items():
        qrels = reference.deepest if kk is None else reference.by_k[kk]
        parts.append(evaluate(qrels, runs, metrics=names, k=[max(reference.by_k) if kk is None else kk], **opts))
    if len(parts) == 1:
        return parts[0]
    return concat_evaluations(parts, settings={**parts[0].settings})


def evaluate_workspace(
    qrels_by_aspect: Mapping[str | None, Qrels],
    runs: Sequence[tuple[Run, str | None]],
    settings: Settings,
    *,
    reference: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> Evaluation:
    """Evaluate every run (against its aspect's ground truth) at every k at once.

    Runs sharing an aspect are evaluated in one :func:`evalcore.evaluate` call;
    the long tables of the aspects are concatenated (one row per run × query ×
    metric × k, as always). With ``reference`` (a ground truth from
    :func:`prepare_reference`), :func:`evalcore.embedding_runs.evaluate_reference_runs`
    evaluates every run against it (mode ``"tied"``: each k against its own top-k).
    """
    if not runs:
        raise OptionError("no run to evaluate")
    if reference is not None:
        ev = _evaluate_reference(reference, {r.name: r for r, _ in runs}, settings)
        return Evaluation(ev.table, ev.coverage, {**ev.settings, "aspects": {r.name: None for r, _ in runs}})
    groups: dict[str | None, dict[str, Run]] = {}
    for run, aspect in runs:
        groups.setdefault(aspect, {})[run.name] = run
    evs = []
    for aspect, group in groups.items():
        ev = evaluate(qrels_by_aspect[aspect], group, metrics=list(settings.metrics), k=list(settings.k),
                      ties=settings.ties, rel_threshold=settings.rel_threshold, no_relevant=settings.no_relevant,
                      progress=progress)
        evs.append((aspect, ev))
    aspects = {r: a for a, ev in evs for r in ev.runs}
    if len(evs) == 1:
        ev = evs[0][1]
        return Evaluation(ev.table, ev.coverage, {**ev.settings, "aspects": aspects})
    from .embedding_runs import concat_evaluations

    order = [run.name for run, _ in runs]
    ev = concat_evaluations([e for _, e in evs], settings={
        "qrels": {str(a): e.settings.get("qrels") for a, e in evs}, "aspects": aspects})
    table = ev.table.assign(run=ev.table["run"].cat.reorder_categories(order))
    return Evaluation(table, ev.coverage, ev.settings)


# ------------------------------------------------------------------------------------------ diversity

#: The α of α-nDCG in the dashboard (seed 002 §7's example value; also the CLI's ``--diversity``).
DIVERSITY_ALPHA = 0.5
#: Names of the diversity metrics in :func:`run_diversity`'s table (``metric`` column).
DIVERSITY_METRICS: tuple[str, str] = ("ild", f"alpha_ndcg(alpha={DIVERSITY_ALPHA:g})")


def has_embeddings(src: RunSource) -> bool:
    """Whether the run's items have vectors of their own (so ILD and α-nDCG exist for it).

    True for embedding runs and for the demo's embedding models; False for
    ranked files and fused runs (their lists come without vectors).
    """
    if src.kind == "embedding":
        return src.blob is not None
    if src.kind == "demo":
        from .demo import cached_demo

        return src.demo_name in cached_demo(src.demo_seed or 0).embeddings
    return False


def run_embeddings(src: RunSource):
    """The document vectors behind a run (:class:`evalcore.embeddings.Embeddings`), or None.

    An embedding run's document file (its corpus; the query file only placed
    the queries), or the demo model's matrix; None when :func:`has_embeddings`
    is False.
    """
    if not has_embeddings(src):
        return None
    if src.kind == "embedding":
        return _load_embeddings(src.blob, src.ids_blob)
    from .demo import cached_demo
    from .embeddings import Embeddings

    demo = cached_demo(src.demo_seed or 0)
    return Embeddings.from_arrays(demo.item_ids, demo.embeddings[src.demo_name], source=demo.label)


def run_diversity(
    src: RunSource,
    run: Run,
    qrels: Qrels,
    *,
    k: Iterable[int],
    ties: str,
    alpha: float = DIVERSITY_ALPHA,
    query_ids: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Per-query ILD@k and α-nDCG@k of a run whose items have embeddings (seed 002 §6–7).

    :func:`evalcore.embedding_runs.diversity_table` on the run's own document
    vectors (:func:`run_embeddings`): ``ild`` is the mean pairwise ``1 − cos``
    of each top-k list, ``alpha_ndcg(alpha=0.5)`` nDCG (linear gains, the
    qrels' grades) with each relevant item's gain scaled by
    ``alpha + (1 − alpha) · novelty`` (novelty = 1 − its highest cosine to an
    item ranked above it) over plain nDCG's ideal.

    Parameters
    ----------
    src : RunSource
        The run's source (where its vectors come from).
    run : Run
        The run as evaluated (named like the evaluation's ``run`` column).
    qrels : Qrels
        The evaluated ground truth of the run's aspect (grades of α-nDCG; its
        queries are the rows, a query absent from the run scores 0).
    k : iterable of int
        Cutoffs (>= 1).
    ties : str
        Tie rule of the evaluation (the lists are taken in the order the
        metrics used).
    alpha : float, default :data:`DIVERSITY_ALPHA`
        α of α-nDCG, in [0, 1].
    query_ids : iterable of str, optional
        Keep only these queries (the evaluated ones: with ``no_relevant="skip"``
        the evaluation drops some).

    Returns
    -------
    DataFrame
        The long-table schema ``run, query_id, domain, metric, k, value``.

    Raises
    ------
    OptionError
        When the run has no embeddings (a ranked file or a fused run).
    """
    from .embedding_runs import diversity_table

    emb = run_embeddings(src)
    if emb is None:
        raise OptionError(f"run {src.name!r} has no embeddings (a {src.kind} run): ILD and α-nDCG need the "
                          "items' vectors")
    table = diversity_table(run, emb, k_values=list(k), alpha=alpha, qrels=qrels, ties=ties)
    if query_ids is not None:
        keep = table["query_id"].astype(str).isin({str(q) for q in query_ids}).to_numpy()
        table = table[keep].reset_index(drop=True)
    return table


def diversity_summary(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Mean and 95% CI of each run's diversity metrics (:func:`evalcore.aggregate.summarize`).

    Parameters
    ----------
    tables : sequence of DataFrame
        :func:`run_diversity` outputs, one per run.

    Returns
    -------
    DataFrame
        ``run, metric, k, n, mean, std, sem, ci_low, ci_high, median``; empty
        (same columns) when ``tables`` is empty.
    """
    from .aggregate import summarize
    from .embedding_runs import concat_tables

    if not tables:
        return pd.DataFrame(columns=["run", "metric", "k", "n", "mean", "std", "sem", "ci_low", "ci_high", "median"])
    return summarize(concat_tables(tables))


# ------------------------------------------------------------------------------------------ side files


def load_domain_map(blob: Blob) -> dict[str, str]:
    """Query id -> domain from a mapping file (:func:`evalcore.loaders.load_domains`)."""
    return {str(k): str(v) for k, v in loaders.load_domains(blob.data, label=blob.name).items()}


def load_metadata(blob: Blob) -> pd.DataFrame:
    """Document metadata as a frame ``doc_id, title, text`` (:func:`evalcore.loaders.load_doc_metadata`)."""
    return normalize_metadata(loaders.load_doc_metadata(blob.data, label=blob.name), source=blob.name)


def normalize_metadata(out: Any, *, source: str | None = None) -> pd.DataFrame:
    """Any metadata shape (frame, ``{id: {title, text}}``, ``{id: title}``) -> ``doc_id, title, text``."""
    if isinstance(out, Mapping):
        rows = []
        for k, v in out.items():
            if isinstance(v, Mapping):
                rows.append({"doc_id": str(k), "title": str(v.get("title", "") or ""),
                             "text": str(v.get("text", "") or "")})
            else:
                rows.append({"doc_id": str(k), "title": str(v), "text": ""})
        return pd.DataFrame(rows, columns=["doc_id", "title", "text"])
    df = pd.DataFrame(out).copy()
    if df.index.name is not None and str(df.index.name).lower() in ("doc_id", "id", "_id", "docid"):
        df = df.reset_index()
    cols = {str(c).lower(): c for c in df.columns}
    idc = next((cols[c] for c in ("doc_id", "id", "_id", "docid", "corpus-id", "item_id", "movie_id") if c in cols),
               df.columns[0] if len(df.columns) else None)
    if idc is None:
        raise EvalcoreError("document metadata has no columns", file=source)
    title = next((cols[c] for c in ("title", "name", "value") if c in cols), None)
    text = next((cols[c] for c in ("text", "body", "abstract", "description", "content") if c in cols), None)
    return pd.DataFrame({
        "doc_id": df[idc].astype(str).to_numpy(),
        "title": df[title].fillna("").astype(str).to_numpy() if title else "",
        "text": df[text].fillna("").astype(str).to_numpy() if text else "",
    })


# ------------------------------------------------------------------------------------------ display helpers


def plain_table(table: pd.DataFrame) -> pd.DataFrame:
    """The per-query table with ``domain`` as plain strings (``""`` = unknown).

    :func:`evalcore.stats.compare_by_domain` and ``summarize(by=domain)`` fill
    missing domains with ``""``, which a categorical column without that
    category refuses; this copy avoids it.
    """
    if isinstance(table["domain"].dtype, pd.CategoricalDtype):
        return table.assign(domain=table["domain"].astype(object).fillna("").astype(str))
    return table


def metric_k_pairs(table: pd.DataFrame) -> list[tuple[str, int]]:
    """Every (metric, k) of the table, metrics in table order, k ascending."""
    metric = table["metric"]
    if isinstance(metric.dtype, pd.CategoricalDtype):
        names = [str(c) for c in metric.cat.categories]
        codes = metric.cat.codes.to_numpy().astype(np.int64)
    else:
        codes, uniq = pd.factorize(metric, sort=False)
        names = [str(c) for c in uniq]
    ks = table["k"].to_numpy().astype(np.int64)
    span = int(ks.max(initial=0)) + 1
    pairs = np.unique(codes * span + ks)
    order = {int(c): i for i, c in enumerate(pd.unique(codes))}  # metrics in order of first appearance
    out = sorted(((int(p // span), int(p % span)) for p in pairs), key=lambda x: (order[x[0]], x[1]))
    return [(names[c], k) for c, k in out]


def metric_slice(table: pd.DataFrame, metric: str, k: int) -> pd.DataFrame:
    """The rows of one metric@k (``domain`` as plain strings): what per-query views of that metric@k read."""
    sel = table[(table["metric"] == metric).to_numpy() & (table["k"].to_numpy() == int(k))]
    return plain_table(sel)


def overview_table(
    summary: pd.DataFrame,
    *,
    columns: Iterable[tuple[str, int]] | None = None,
    runs: Sequence[str] | None = None,
    digits: int = 3,
    mark_best: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs × metric@k display table from :func:`evalcore.aggregate.summarize` output.

    Returns ``(text, best)``: ``text`` cells read ``"0.412 [0.391, 0.433]"``
    (mean and 95% CI), ``"★ "`` prefixed on the best run of each column
    (:func:`evalcore.aggregate.best_per_column`, ties all marked; lower is
    better for ``first_rel_rank``); ``best`` is the boolean mask of the same shape.
    ``mark_best=False`` leaves the cells unmarked (for measures without a
    "better" direction, such as intra-list diversity); ``best`` is still returned.
    """
    from .aggregate import best_per_column, metric_at_k_label

    s = summary.copy()
    s["run"] = s["run"].astype(str)
    s["metric"] = s["metric"].astype(str)
    lower = {m: False for m in s["metric"].unique() if m.split("(", 1)[0] == "first_rel_rank"}  # + parameterised
    s = best_per_column(s, higher_is_better=lower)
    cols = list(columns) if columns is not None else metric_k_pairs(s)
    runs = list(runs) if runs is not None else list(dict.fromkeys(s["run"]))
    text = pd.DataFrame(index=pd.Index(runs, name="run"), dtype=object)
    best = pd.DataFrame(False, index=text.index, columns=[])
    fmt = f"{{:.{digits}f}}"
    idx = s.set_index(["run", "metric", "k"])
    for m, k in cols:
        label = metric_at_k_label(m, k)
        vals, marks = [], []
        for r in runs:
            key = (r, m, k)
            if key not in idx.index:
                vals.append("–")
                marks.append(False)
                continue
            row = idx.loc[key]
            cell = f"{fmt.format(row['mean'])} [{fmt.format(row['ci_low'])}, {fmt.format(row['ci_high'])}]"
            if mark_best and bool(row["is_best"]):
                cell = "★ " + cell
            vals.append(cell)
            marks.append(bool(row["is_best"]))
        text[label] = vals
        best[label] = marks
    return text, best


#: Columns :func:`display_table` formats as p-values.
P_VALUE_COLUMNS: tuple[str, ...] = ("p-value", "p adjusted", "p_value", "p_adjusted")


def display_table(
    frame: pd.DataFrame,
    *,
    p_columns: Iterable[str] = P_VALUE_COLUMNS,
    blank: str = "–",
    digits: int = 4,
) -> pd.DataFrame:
    """A copy of a table made for reading: p-values as text, no "None" / "NaN" cells.

    * Columns named in ``p_columns`` become text by
      :func:`evalcore.drilldown.format_p_value` (``"0.387"``, ``"<0.001"``,
      ``blank`` when missing).
    * Every other column holding a missing value (None, NaN, ``pd.NA``: a run
      without that query, an unjudged item's grade, an untested domain's CI)
      becomes text with ``blank`` there: whole numbers as integers
      (``"37"``), other numbers with ``digits`` decimals, anything else as is.
    * Columns without a missing value are left untouched (numbers stay
      numbers, so they sort numerically).

    Parameters
    ----------
    frame : DataFrame
        Not modified; its index is kept.
    p_columns : iterable of str, default :data:`P_VALUE_COLUMNS`
    blank : str, default "–"
        Text of a missing value.
    digits : int, default 4
        Decimals of non-integer numbers in the converted columns.

    Returns
    -------
    DataFrame
    """
    from .drilldown import format_p_value

    out = frame.copy()
    pcols = set(p_columns)
    for col in out.columns:
        values = out[col]
        if col in pcols:
            out[col] = [format_p_value(v, missing=blank) for v in values]
            continue
        missing = values.isna().to_numpy()
        if not missing.any():
            continue
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            out[col] = [blank if m else v for v, m in zip(values.astype(object), missing, strict=True)]
            continue
        present = values[~missing].to_numpy(dtype=np.float64)
        whole = bool(np.all(np.isfinite(present) & (present == np.round(present))))
        fmt = (lambda v: str(int(v))) if whole else (lambda v: f"{v:.{digits}f}")
        out[col] = [blank if m else fmt(float(v)) for v, m in zip(values.astype(object), missing, strict=True)]
    return out


def curve_frame(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows of one metric with a cutoff (k > 0), sorted by run then k: the data of a metric-vs-k curve."""
    s = summary[(summary["metric"].astype(str) == metric) & (summary["k"] > 0)].copy()
    s["run"] = s["run"].astype(str)
    return s.sort_values(["run", "k"], kind="mergesort").reset_index(drop=True)


#: Seed 002's "Metric Interpretation Guidelines" (nDCG@10 and Recall@10 bands), shown as a hint:
#: label -> [(low, high, range as written in the guide, band, reading)], low inclusive, high exclusive.
READING_GUIDE: dict[str, list[tuple[float, float, str, str, str]]] = {
    "ndcg@10": [
        (0.9, np.inf, "0.9 - 1.0", "Excellent", "Near-perfect ranking"),
        (0.7, 0.9, "0.7 - 0.9", "Very Good", "Strong performance"),
        (0.5, 0.7, "0.5 - 0.7", "Good", "Acceptable for most tasks"),
        (0.3, 0.5, "0.3 - 0.5", "Fair", "Room for improvement"),
        (-np.inf, 0.3, "< 0.3", "Poor", "Needs significant work"),
    ],
    "recall@10": [
        (0.8, np.inf, "> 0.8", "Excellent", "Finding most relevant docs"),
        (0.6, 0.8, "0.6 - 0.8", "Good", "Missing some relevant docs"),
        (0.4, 0.6, "0.4 - 0.6", "Fair", "Missing many relevant docs"),
        (-np.inf, 0.4, "< 0.4", "Poor", "Low coverage"),
    ],
}


def reading_band(label: str, value: float | None) -> str | None:
    """Seed 002's band of a value of ``ndcg@10`` / ``recall@10`` (None for other metric@k)."""
    bands = READING_GUIDE.get(label)
    if bands is None or value is None or not np.isfinite(value):
        return None
    for lo, hi, _, name, _ in bands:
        if lo <= value < hi:
            return name
    return None


def reading_guide_frames() -> dict[str, pd.DataFrame]:
    """Seed 002's two guide tables as frames (static text)."""
    return {label: pd.DataFrame([{label: r, "band": b, "reading": m} for _, _, r, b, m in bands])
            for label, bands in READING_GUIDE.items()}

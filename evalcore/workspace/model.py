"""What the user loaded and chose: files as :class:`Blob`, the ground truth, the runs, the settings.

A :class:`Snapshot` holds uploaded files as :class:`Blob` (bytes + SHA-256), a
:class:`GroundTruthSource`, any number of :class:`RunSource`, optional domain and
document-metadata files, and the :class:`Settings`. It is immutable; the functions
here return an edited copy. Nothing here keeps derived data: every derived object is a
pure function of content keys (see :mod:`evalcore.workspace.pipeline`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..coverage import DEFAULT_MIN_COVERAGE
from ..defaults import DEMO_SEED, SEED
from ..errors import OptionError, collected_warnings
from ..io import (
    QRELS_FORMATS,
    RUN_FORMATS,
    detect_qrels_format,
    detect_run_format,
    list_aspects,
)

__all__ = [
    "stable_key",
    "METRIC_CHOICES",
    "TIE_CHOICES",
    "DEFAULT_K",
    "REFERENCE_MODES",
    "content_hash",
    "Blob",
    "parse_metric_names",
    "Settings",
    "GroundTruthSource",
    "FusionSpec",
    "RunSource",
    "Snapshot",
    "free_name",
    "file_stem",
    "demo_workspace",
    "clear_demo",
    "set_ground_truth",
    "looks_like_embeddings",
    "add_ranked_run",
    "add_embedding_run",
    "add_fused_run",
    "set_run_options",
    "capture",
    "qrels_formats",
    "run_formats",
    "embedding_formats",
    "detect_qrels",
    "detect_run",
    "ground_truth_aspects",
]


#: Metrics offered in the settings (canonical names of :mod:`evalcore.metrics`; ``iprec_at_recall`` stands
#: for its eleven recall levels).
METRIC_CHOICES: tuple[str, ...] = (
    "ndcg", "ndcg_exp", "recall", "recall_capped", "precision", "hit_rate", "mrr", "map", "map_found",
    "rprec", "first_rel_rank", "hits", "f1", "dcg", "dcg_exp", "err", "judged", "bpref", "infap", "gm_map",
    "set_precision", "set_recall", "set_f", "11pt_avg", "iprec_at_recall", "rbp", "rbp_residual", "num_ret",
    "num_rel", "num_rel_ret", "num_q",
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


def stable_key(*parts: Any) -> str:
    """A short stable key from JSON-able parts."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


# ------------------------------------------------------------------------------------------ settings


def _split_metric_text(text: str) -> list[str]:
    """Split on commas, semicolons and blanks that are outside parentheses; a comma before a digit or a
    dot stays (trec_eval's lists of cutoffs, ``P.5,10``)."""
    pieces, cur, depth = [], [], 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        glued = ch == "," and (text[i + 1: i + 2].isdigit() or text[i + 1: i + 2] == ".")
        if depth == 0 and ((ch in ",;" and not glued) or ch.isspace()):
            pieces.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    pieces.append("".join(cur))
    return [p for p in pieces if p.strip()]


def parse_metric_names(metrics: str | Iterable[str]) -> tuple[str, ...]:
    """Canonical metric names from a list of names or from free text.

    Each name is parsed by :func:`evalcore.measures.parse_measures`, so
    parameters and cutoffs are accepted and printed canonically:
    ``"recall(rel=2)"``, ``"P(rel=2)@5"`` -> ``"precision(rel=2)@5"``,
    ``"success@1"`` -> ``"hit_rate@1"``; trec_eval's names too, a group or a
    list of cutoffs giving several (``"P.5,10"`` -> ``"precision@5"``,
    ``"precision@10"``).

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
    from ..measures import parse_measures

    names = _split_metric_text(metrics) if isinstance(metrics, str) else [str(m) for m in metrics]
    return tuple(dict.fromkeys(str(m) for n in names for m in parse_measures(n)))



@dataclass(frozen=True)
class Settings:
    """Evaluation settings chosen on the Data page.

    ``sample_size`` 0 means every ground-truth query; ``depth`` is the length of
    the rankings computed from embeddings (the drill-down says "not in top
    ``depth``"). A reference model's embeddings as ground truth (seed 000) use
    ``gt_mode``: ``"tied"`` — at each k, relevant = the reference's top-k
    (seed 000's procedure: at k = 1 every metric is the same number) — or
    ``"fixed"`` — relevant = its top ``gt_depth``, graded by position, at every k.
    ``min_coverage``: a run answering fewer than this fraction of the ground truth's
    queries is flagged and left out of "best" marks and tests (:mod:`evalcore.coverage`).
    ``judged_only``: trec_eval's ``-J`` — every retrieved document without a judgment
    (grade >= 0) is removed before scoring (see :func:`evalcore.evaluate`); needs judgments,
    so not with a reference model as ground truth.
    """

    k: tuple[int, ...] = DEFAULT_K
    metrics: tuple[str, ...] = ("ndcg", "recall", "mrr", "map")
    rel_threshold: int = 1
    ties: str = "trec"
    no_relevant: str = "zero"
    sample_size: int = 0
    seed: int = SEED
    depth: int = 100
    gt_depth: int = 10
    gt_mode: str = "tied"
    min_coverage: float = DEFAULT_MIN_COVERAGE
    judged_only: bool = False

    def validated(self) -> Settings:
        """A normalised copy; raise :class:`OptionError` on an invalid value."""
        from .inputs import check_bool, is_whole

        check_bool(self.judged_only, "judged_only")
        for what, values in (("k", self.k), ("rel_threshold", [self.rel_threshold]), ("sample_size", [self.sample_size]),
                             ("seed", [self.seed]), ("depth", [self.depth]), ("gt_depth", [self.gt_depth])):
            bad = [v for v in values if not is_whole(v)]
            if bad:
                raise OptionError(f"{what} must be a whole number, got {bad[0]!r}")
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
        try:
            cov = float(self.min_coverage)
        except (TypeError, ValueError):
            raise OptionError(f"the coverage threshold must be a number in [0, 1], got {self.min_coverage!r}") from None
        if not 0.0 <= cov <= 1.0:
            raise OptionError(f"the coverage threshold must be in [0, 1] (a fraction of the queries), got {cov!r}")
        return replace(self, k=ks, metrics=metrics, depth=depth, min_coverage=cov,
                       rel_threshold=int(self.rel_threshold), sample_size=int(self.sample_size),
                       seed=int(self.seed), gt_depth=max(1, int(self.gt_depth)), judged_only=bool(self.judged_only))

    def eval_key(self) -> str:
        return stable_key("eval", list(self.k), list(self.metrics), self.rel_threshold, self.ties, self.no_relevant,
                          *(["judged_only"] if self.judged_only else []))

    def summary_lines(self, *, reference: bool = False) -> list[str]:
        """Plain-text lines for the sidebar (``reference``: the ground truth is a reference model)."""
        sample = "all queries" if not self.sample_size else f"{self.sample_size} sampled queries (seed {self.seed})"
        return [
            f"k: {', '.join(map(str, self.k))}",
            f"metrics: {', '.join(self.metrics)}",
            f"relevant: grade >= {self.rel_threshold}; ties: {self.ties}"
            + ("; judged documents only (-J)" if self.judged_only else ""),
            f"queries: {sample}",
            f"embedding rankings: top {self.depth}",
            f"runs flagged below {self.min_coverage:.0%} coverage",
        ] + ([f"reference: {'its top-k at each k (tied)' if self.gt_mode == 'tied' else f'top {self.gt_depth}, graded'}"]
             if reference else [])


# ------------------------------------------------------------------------------------------ sources


@dataclass(frozen=True)
class GroundTruthSource:
    """Where the ground truth comes from.

    ``kind``: ``"file"`` (any format :func:`evalcore.load_qrels` reads),
    ``"reference"`` (a reference model's embeddings: relevant = its top
    ``Settings.gt_depth`` by cosine, graded by position, seed 000) or ``"demo"``.
    ``store`` (a :class:`~.refs.StoreRef`): kept in a persistent workspace instead of
    ``blob`` (read from there; ``demo_seed`` then marks the built-in demo's workspace).
    """

    kind: str
    blob: Blob | None = None
    ids_blob: Blob | None = None
    format: str = "auto"
    demo_seed: int | None = None
    store: Any = None

    @property
    def label(self) -> str:
        if self.store is not None:
            return self.store.record.name
        if self.kind == "demo":
            from .demo import DEMO_LABEL

            return DEMO_LABEL
        return self.blob.name if self.blob is not None else "(none)"

    def _source_key(self) -> list:
        return [_sha(self.blob), _sha(self.ids_blob), self.format, self.demo_seed,
                self.store.key if self.store is not None else "-"]

    def key(self, aspect: str | None = None, settings: Settings | None = None) -> str:
        extra = None
        if self.kind == "reference" and settings is not None:
            extra = [settings.gt_mode, settings.gt_depth if settings.gt_mode == "fixed" else list(settings.k)]
        return stable_key("gt", self.kind, *self._source_key(), aspect, extra)

    def universe_key(self) -> str:
        return stable_key("universe", self.kind, *self._source_key())


@dataclass(frozen=True)
class FusionSpec:
    """A fusion of other runs (by uid): ``method`` after ``norm`` (:func:`evalcore.fusion.fuse`).

    The default is seed 001 §7's weighted RRF; ``weights`` only act on the
    weighted methods (``rrf``, ``wsum``), ``c`` only on ``rrf``; ``ties`` (None: the
    evaluation's) ranks the inputs.
    """

    inputs: tuple[str, ...]
    weights: tuple[float, ...]
    c: float = 60.0
    top_n: int | None = None
    method: str = "rrf"
    norm: str = "none"
    ties: str | None = None


@dataclass(frozen=True)
class RunSource:
    """One run of the workspace.

    ``kind``: ``"ranked"`` (a run file), ``"embedding"`` (document vectors,
    optionally ids for ``.npy`` and separate query vectors; item-to-item when no
    query file is given), ``"fused"`` (:class:`FusionSpec`) or ``"demo"``.
    ``aspect`` is the ground-truth aspect the run is evaluated against (for
    ground truths with several, e.g. seed 001's overall/content/vibes).
    ``model``, ``version`` and ``step`` place the run in a model's version series
    (the Versions page; the persistent store's run info): all optional.
    ``store`` (a :class:`~.refs.StoreRef`): the run is kept in a persistent workspace
    (its data is read from there; no blob).
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
    model: str | None = None
    version: str | None = None
    step: float | None = None
    store: Any = None

    @property
    def label(self) -> str:
        if self.kind == "fused":
            f = self.fusion
            return "weighted RRF" if f.method == "rrf" else f"fusion {f.method}" + ("" if f.norm == "none" else
                                                                                    f" of {f.norm} scores")
        if self.kind == "demo":
            return f"demo run {self.demo_name}"
        if self.store is not None:
            rec = self.store.record
            names = [n for n in (rec.source_name, rec.options.get("query_source")) if n]
            return " + ".join(names) or "(stored in the workspace)"
        names = [b.name for b in (self.blob, self.ids_blob, self.query_blob, self.query_ids_blob) if b is not None]
        return " + ".join(names) or "(no file)"

    def content_key(self) -> str:
        """Key of the run's inputs (not its name)."""
        if self.kind == "fused":
            f = self.fusion
            return stable_key("fused", list(f.inputs), list(f.weights), f.c, f.top_n, f.method, f.norm, f.ties)
        return stable_key(self.kind, _sha(self.blob), _sha(self.ids_blob), _sha(self.query_blob), _sha(self.query_ids_blob),
                          self.format, self.demo_seed, self.demo_name,
                          self.store.key if self.store is not None else "-")


@dataclass(frozen=True)
class Snapshot:
    """Everything the user loaded plus the settings; immutable (use :func:`dataclasses.replace`).

    Side files are :class:`Blob` (uploaded bytes) or :class:`~.refs.StoredFile` (kept in a
    workspace); ``generation`` is the workspace's change counter a stored snapshot was read at.
    """

    ground_truth: GroundTruthSource | None = None
    runs: tuple[RunSource, ...] = ()
    domain_blob: Any = None  # Blob | StoredFile | None
    metadata_blob: Any = None
    settings: Settings = Settings()
    queries_blob: Any = None  # query id -> text (shown above a query's drill-down)
    demo_seed: int | None = None
    generation: int | None = None

    @property
    def is_demo(self) -> bool:
        return self.demo_seed is not None

    def run_by_uid(self, uid: str) -> RunSource | None:
        return next((r for r in self.runs if r.uid == uid), None)

    def names(self) -> list[str]:
        return [r.name for r in self.runs]

    def with_run(self, run: RunSource) -> Snapshot:
        return replace(self, runs=(*self.runs, run))

    def without_run(self, uid: str) -> Snapshot:
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

    def renamed(self, uid: str, name: str) -> Snapshot:
        name = str(name).strip()
        if not name:
            raise OptionError("a run name cannot be empty")
        if any(r.name == name and r.uid != uid for r in self.runs):
            raise OptionError(f"another run is already named {name!r}")
        return replace(self, runs=tuple(replace(r, name=name) if r.uid == uid else r for r in self.runs))

    def unique_name(self, base: str) -> str:
        """``base``, or ``base (2)``, ``base (3)``... not yet used by a run."""
        return free_name(base, self.names())


def free_name(base: str, taken: Iterable[str]) -> str:
    """``base``, or ``base (2)``, ``base (3)``... not in ``taken``."""
    base = str(base).strip() or "run"
    names = set(taken)
    if base not in names:
        return base
    i = 2
    while f"{base} ({i})" in names:
        i += 1
    return f"{base} ({i})"


def demo_workspace(seed: int = DEMO_SEED, settings: Settings | None = None) -> Snapshot:
    """The workspace the app opens with: the built-in demo (see :mod:`evalcore.workspace.demo`)."""
    from .demo import DEMO_RUN_NAMES

    gt = GroundTruthSource("demo", demo_seed=seed)
    runs = tuple(RunSource(f"demo-{seed}-{n}", n, "demo", demo_seed=seed, demo_name=n) for n in DEMO_RUN_NAMES)
    return Snapshot(gt, runs, settings=settings or Settings(), demo_seed=seed)


def file_stem(filename: str) -> str:
    """A run's default name: the file name without its folder and its known extensions
    (:func:`evalcore.io.source.run_name_of_file`, which the command line's bare ``--emb FILE`` uses too)."""
    from ..io.source import run_name_of_file

    return run_name_of_file(filename)


def _new_uid(ws: Snapshot, kind: str, sha: str) -> str:
    used = {r.uid for r in ws.runs}
    i = len(ws.runs)
    while f"{kind[:3]}{i}-{sha[:10]}" in used:
        i += 1
    return f"{kind[:3]}{i}-{sha[:10]}"


def clear_demo(ws: Snapshot) -> Snapshot:
    """The workspace without the demo's ground truth and runs (settings, side files and uploads kept)."""
    if not ws.is_demo:
        return ws
    gt = None if (ws.ground_truth is not None and ws.ground_truth.kind == "demo") else ws.ground_truth
    return replace(ws, ground_truth=gt, runs=tuple(r for r in ws.runs if r.kind != "demo"), demo_seed=None)


def set_ground_truth(ws: Snapshot, blob: Blob, *, kind: str = "file", ids_blob: Blob | None = None,
                     format: str = "auto") -> Snapshot:
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


def add_ranked_run(ws: Snapshot, blob: Blob, *, name: str | None = None, format: str = "auto",
                   aspect: str | None = None) -> tuple[Snapshot, str]:
    """Add a ranked-run file (TREC, CSV/Parquet, JSON...); returns the new workspace and the run's uid."""
    ws = clear_demo(ws)
    uid = _new_uid(ws, "ranked", blob.sha256)
    src = RunSource(uid, ws.unique_name(name or file_stem(blob.name)), "ranked", blob, format=format, aspect=aspect)
    return ws.with_run(src), uid


def add_embedding_run(ws: Snapshot, blob: Blob, *, ids_blob: Blob | None = None, query_blob: Blob | None = None,
                      query_ids_blob: Blob | None = None, name: str | None = None,
                      aspect: str | None = None) -> tuple[Snapshot, str]:
    """Add an embedding run: document vectors (+ ids for ``.npy``), optionally separate query vectors.

    Without query vectors the run is item-to-item: the queries are the ground
    truth's query ids found among the ids, and each query's own item is excluded.
    """
    ws = clear_demo(ws)
    uid = _new_uid(ws, "embedding", blob.sha256)
    src = RunSource(uid, ws.unique_name(name or file_stem(blob.name)), "embedding", blob, ids_blob, query_blob,
                    query_ids_blob, aspect=aspect)
    return ws.with_run(src), uid


def add_fused_run(ws: Snapshot, inputs: Sequence[str], weights: Sequence[float], *, c: float = 60.0,
                  top_n: int | None = None, name: str | None = None, aspect: str | None = None,
                  method: str = "rrf", norm: str = "none") -> tuple[Snapshot, str]:
    """Add a fused run over existing runs (by uid): weighted RRF by default, any ``method``/``norm`` of
    :mod:`evalcore.fusion` (checked here; ``weights`` are kept but only the weighted methods use them)."""
    from ..fusion import RANK_METHODS, canonical_method, canonical_norm

    method, norm = canonical_method(method), canonical_norm(norm)
    if method in RANK_METHODS and norm != "none":
        raise OptionError(f"{method} fuses ranks: a score normalisation ({norm}) does not apply")
    if not inputs:
        raise OptionError("choose at least one run to fuse")
    unknown = [u for u in inputs if ws.run_by_uid(u) is None]
    if unknown:
        raise OptionError("a run to fuse is not loaded")
    if len(weights) != len(inputs):
        raise OptionError(f"{len(weights)} weights for {len(inputs)} runs")
    spec = FusionSpec(tuple(inputs), tuple(float(w) for w in weights), float(c), None if not top_n else int(top_n),
                      method, norm)
    uid = _new_uid(ws, "fused", stable_key(list(inputs), list(weights), c, top_n, method, norm))
    if aspect is None:
        aspect = ws.run_by_uid(inputs[0]).aspect
    src = RunSource(uid, ws.unique_name(name or "rrf"), "fused", fusion=spec, aspect=aspect)
    return ws.with_run(src), uid


def set_run_options(ws: Snapshot, uid: str, **changes: Any) -> Snapshot:
    """Change a run's ``format`` or ``aspect`` (renaming: :meth:`Snapshot.renamed`)."""
    bad = set(changes) - {"format", "aspect"}
    if bad:
        raise OptionError(f"cannot change {sorted(bad)} of a run")
    return replace(ws, runs=tuple(replace(r, **changes) if r.uid == uid else r for r in ws.runs))


# ------------------------------------------------------------------------------------------ helpers


def capture(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, list[str]]:
    """Call ``fn``; return its result and the messages of the :class:`EvalcoreWarning` it emitted, each once,
    in order (:func:`evalcore.errors.collected_warnings`: safe when several threads capture at once)."""
    with collected_warnings() as caught:  # this thread's (and its workers'), not another session's
        out = fn(*args, **kwargs)
    return out, list(dict.fromkeys(caught))


def qrels_formats() -> tuple[str, ...]:
    return tuple(QRELS_FORMATS)


def run_formats() -> tuple[str, ...]:
    return tuple(RUN_FORMATS)


def embedding_formats() -> tuple[str, ...]:
    from ..io import EMBEDDING_FORMATS

    return tuple(EMBEDDING_FORMATS)


def detect_qrels(blob: Blob) -> str:
    """The ground-truth format :func:`evalcore.detect_qrels_format` sees in these bytes."""
    return detect_qrels_format(blob.data, blob.name)


def detect_run(blob: Blob) -> str:
    """The run format :func:`evalcore.detect_run_format` sees in these bytes."""
    return detect_run_format(blob.data, blob.name)


def ground_truth_aspects(gt: GroundTruthSource) -> tuple[str, ...]:
    """Aspects of an ordered-list ground truth (seed 001), ``()`` for single-aspect files.

    :func:`evalcore.list_aspects` validates the whole file, so a broken
    seed-001 file fails here, next to the file. A stored ground truth's are in its record.
    """
    if gt.store is not None:
        return tuple(gt.store.record.aspects) if gt.kind == "file" else ()
    if gt.kind != "file" or gt.blob is None:
        return ()
    return tuple(str(a) for a in list_aspects(gt.blob.data, format=gt.format, label=gt.blob.name))



"""From a stored workspace to the evaluation: ground truth, sample, runs, rankings (cached), one Evaluation.

The same steps as the dashboard's in-memory pipeline (:mod:`.pipeline`), on stored data:

1. the active ground truth: each aspect's :class:`~evalcore.data.Qrels`, or a reference
   model's embeddings whose neighbours become the ground truth
   (:func:`~.pipeline.reference_from_embeddings`, mode and depth from the settings);
2. the query sample (``Settings.sample_size``, ``seed``) drawn from the first aspect's
   queries (or the reference's items), as :func:`~.pipeline.sample_query_ids` does, and the
   domains side file applied (:func:`~.pipeline.sample_and_label`);
3. each run as a :class:`~evalcore.data.Run`: a ranked run is read; an embedding run is
   ranked by exact cosine top-k (:func:`evalcore.embedding_runs.embedding_run`, depth
   ``Settings.depth``) — or read from the workspace's cache of rankings, keyed by the
   run's artifacts, the depth and the content of the evaluated judgments, so a second
   evaluation never ranks again; a fused run is the weighted RRF of its inputs (its own
   ``ties`` when it was recorded with one, else ``Settings.ties``). A run that fails
   (a damaged artifact, a missing input...) is reported in :attr:`Resolved.errors` and
   the others go on — but in strict mode (:func:`evalcore.errors.strict_coverage`) a coverage
   problem (:class:`~evalcore.errors.MissingIdsError`) stops the evaluation, every run's
   coverage checked before any run is built;
4. :func:`~.pipeline.evaluate_workspace`: every run against its aspect (or the reference
   ground truth), every metric at every k at once.

A run without an aspect is evaluated against the first aspect of the ground truth (like
the dashboard); a run whose aspect the ground truth does not have fails with a message
naming the aspects; a ground truth without aspects ignores the runs' aspects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import __version__
from ..coverage import warn_missing_queries
from ..data import Qrels, Run
from ..errors import (
    EvalcoreError,
    MissingIdsError,
    OptionError,
    coverage_is_strict,
    strict_coverage,
    warn,
)
from ..evaluate import Evaluation
from .aspects import run_aspect
from .core import GroundTruthRecord, RunRecord, WorkspaceCore
from .evaluations import mark_inputs, record_evaluation
from .model import Settings, capture, stable_key
from .pipeline import (
    evaluate_workspace,
    reference_from_embeddings,
    sample_and_label,
    sample_query_ids,
)
from .rankings import embedding_ranking, ranking_key

__all__ = ["Resolved", "resolve", "ranking_key", "evaluate_stored"]

ProgressFn = Callable[[int, int], None]


@dataclass
class Resolved:
    """A workspace resolved for one evaluation (built by :func:`resolve`).

    Attributes
    ----------
    settings : Settings
        The validated settings used.
    ground_truth : GroundTruthRecord
    aspects : tuple of str
        The ground truth's aspects (``()`` for one unnamed part or a reference).
    qrels : dict
        Aspect (None for a single part or a reference) -> evaluated Qrels (sampled, with domains).
    reference : ReferenceGroundTruth or None
        The reference model's ground truths (mode ``"tied"``: one per k).
    runs : dict of str -> Run
        The runs that loaded, by name, in display order.
    run_aspect : dict of str -> str or None
    errors : dict of str -> str
        Runs that failed, with the message (a damaged artifact names its file).
    warnings : dict of str -> tuple of str
        Warnings per run (coverage of embedding runs...).
    gt_warnings : tuple of str
    key : str
        Content key of everything the evaluation depends on (for caches).
    records : tuple of RunRecord
        The catalogue rows the runs were built from (and the inputs of fused ones): what
        :meth:`evaluate` marks its result as computed from (:func:`~.evaluations.mark_inputs`).
    """

    settings: Settings
    ground_truth: GroundTruthRecord
    aspects: tuple[str, ...] = ()
    qrels: dict = field(default_factory=dict)
    reference: Any = None
    runs: dict[str, Run] = field(default_factory=dict)
    run_aspect: dict[str, str | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    warnings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    gt_warnings: tuple[str, ...] = ()
    key: str = ""
    records: tuple[RunRecord, ...] = ()

    def qrels_for(self, run_name: str) -> Qrels | None:
        """The evaluated ground truth of a run (its aspect's)."""
        return self.qrels.get(self.run_aspect.get(run_name))

    def evaluate(self, *, progress: ProgressFn | None = None) -> Evaluation:
        """Every loaded run at every metric and k (:func:`~.pipeline.evaluate_workspace`).

        ``settings["errors"]`` of the result lists the runs that could not be evaluated.
        """
        if not self.runs:
            detail = "; ".join(f"{n}: {m}" for n, m in self.errors.items())
            raise OptionError("no run to evaluate" + (f" (every run failed: {detail})" if detail else ""))
        pairs = [(run, self.run_aspect[name]) for name, run in self.runs.items()]
        qmap = {a: self.qrels[a] for _, a in pairs}
        ev = evaluate_workspace(qmap, pairs, self.settings, reference=self.reference, progress=progress)
        return mark_inputs(ev.with_settings({"errors": dict(self.errors)}), records=self.records,
                           ground_truth_id=self.ground_truth.id)


def _sample(ids: np.ndarray, settings: Settings) -> np.ndarray | None:
    return sample_query_ids(ids, settings.sample_size, settings.seed) if settings.sample_size else None


def _ground_truth(core: WorkspaceCore, gt: GroundTruthRecord, out: Resolved, domains: dict | None,
                  progress: ProgressFn | None) -> Callable[[str | None], Qrels]:
    """Fill ``out.qrels`` lazily per aspect; returns the per-aspect getter."""
    settings = out.settings
    if gt.kind == "reference":
        ref = core.reference(gt)
        (rg, _), msgs = capture(lambda: (reference_from_embeddings(
            ref, sample=_sample(np.asarray(ref.ids, dtype=object), settings), domains=domains, settings=settings,
            progress=progress, kept=(core, gt), domains_label=core.side_name("domains")), None))
        out.reference = rg
        out.qrels[None] = rg.deepest
        out.gt_warnings = tuple(msgs)
        return lambda aspect: out.qrels[None]
    label = gt.name
    default = gt.parts[0].aspect
    universe = core.read_qrels(gt.part(default), label=label).query_ids
    sample = _sample(np.asarray(universe, dtype=object), settings)

    def get(aspect: str | None) -> Qrels:
        if aspect not in out.qrels:
            out.qrels[aspect] = sample_and_label(core.read_qrels(gt.part(aspect), label=label), sample=sample,
                                                 domains=domains, domains_label=core.side_name("domains"))
        return out.qrels[aspect]

    get(default)
    return get


def _needed(records: Sequence[RunRecord], names: Sequence[str] | None) -> list[RunRecord]:
    """The records to build: the named runs (all when None) and, recursively, the inputs of fused ones."""
    by_name = {r.name: r for r in records}
    if names is None:
        return list(records)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise OptionError(f"no run named {unknown[0]!r} in the workspace; its runs are {list(by_name)}")
    want: set[str] = set()
    stack = list(names)
    while stack:
        n = stack.pop()
        if n in want or n not in by_name:
            continue
        want.add(n)
        stack.extend(by_name[n].inputs)
    return [r for r in records if r.name in want]


def _check_coverage_first(core: WorkspaceCore, records: Sequence[RunRecord], aspects: Sequence[str],
                          default: str | None, qrels_of: Callable[[str | None], Qrels]) -> None:
    """Strict mode: every ranked and embedding run's coverage, before any run is built (an embedding run's
    ranking can take minutes) and whether its ranking was kept or not (a ranking kept by a run that was not
    strict, or by ``evaluate --workspace``, which keeps no warnings, must not let a strict evaluation
    through). The first coverage problem raises; a run failing otherwise is reported when it is built."""
    from ..coverage import missing_queries_problem, missing_query_count
    from ..embedding_runs import check_embedding_coverage

    for rec in records:
        try:
            if rec.kind == "embedding":
                check_embedding_coverage(*core.run_embeddings(rec), qrels=qrels_of(run_aspect(rec, aspects, default)),
                                         name=rec.name)
            elif rec.kind == "ranked":
                qrels = qrels_of(run_aspect(rec, aspects, default))
                run = core.read_run(rec.artifact, name=rec.name, what=f"run {rec.name!r}")
                missing = missing_query_count(qrels, run)
                if missing:
                    missing_queries_problem(rec.name, qrels.n_queries, missing, run_query_ids=run.query_ids,
                                            ground_truth_query_ids=qrels.query_ids, warning=False)
        except MissingIdsError:
            raise
        except EvalcoreError:
            continue


def _fused_run(rec: RunRecord, built: dict[str, Run], settings: Settings) -> Run:
    from ..fusion import WEIGHTED_METHODS, fuse

    opts = rec.options
    method = opts.get("method", "rrf")
    names = list(opts["inputs"])  # warnings name the inputs; a run listed twice gets its position
    inputs = [built[n] if names.count(n) == 1 else built[n].renamed(f"{n} ({i + 1})") for i, n in enumerate(names)]
    return fuse(inputs, method=method, norm=opts.get("norm", "none"), c=float(opts.get("c", 60.0)),
                top_n=opts.get("top_n"), ties=opts.get("ties") or settings.ties, name=rec.name,
                weights=list(opts["weights"]) if method in WEIGHTED_METHODS else None)


def resolve(core: WorkspaceCore, settings: Settings, *, runs: Sequence[str] | None = None,
            progress: ProgressFn | None = None) -> Resolved:
    """Resolve the workspace for one evaluation (see the module docstring).

    Parameters
    ----------
    core : WorkspaceCore
    settings : Settings
        Validated here.
    runs : sequence of str, optional
        Names of the runs to build (default every run); fused runs bring their inputs.
    progress : callable(done, total), optional
        Progress of exact top-k ranking (reference ground truth and embedding runs).

    Raises
    ------
    OptionError
        No ground truth, or an unknown run name.
    CorruptArtifactError
        A ground-truth artifact is missing or damaged (nothing can be evaluated).
    """
    settings = settings.validated()
    gt = core.ground_truth_record()
    if gt is None:
        raise OptionError("the workspace has no ground truth yet: set one with set_ground_truth or set_reference")
    out = Resolved(settings, gt, aspects=gt.aspects if gt.kind == "qrels" else ())
    domains = None
    try:
        domains = core.domains()
    except EvalcoreError as e:
        out.gt_warnings = (f"domains not applied: {e}",)
    qrels_of = _ground_truth(core, gt, out, domains, progress)
    default = gt.parts[0].aspect if gt.kind == "qrels" else None
    if isinstance(runs, str):  # one run's name, not its letters
        runs = [runs]
    elif runs is not None:
        if not isinstance(runs, Iterable):
            raise OptionError(f"runs= takes run names (a list, or one name), not {type(runs).__name__} {runs!r:.40}")
        runs = list(runs)
    records = _needed(core.run_records(), runs)
    out.records = tuple(records)
    if coverage_is_strict():
        _check_coverage_first(core, records, out.aspects, default, qrels_of)
    built: dict[str, Run] = {}
    pending = [r for r in records if r.kind != "fused"] + [r for r in records if r.kind == "fused"]
    while pending:
        rest = []
        for rec in pending:
            if rec.kind == "fused" and not all(n in built or n in out.errors for n in rec.inputs):
                missing = [n for n in rec.inputs if n not in {r.name for r in records}]
                if missing:
                    out.errors[rec.name] = f"run {rec.name!r}: the runs it fuses are not in the workspace: {missing}"
                else:
                    rest.append(rec)
                continue
            try:
                aspect = run_aspect(rec, out.aspects, default)
                qrels = qrels_of(aspect)
                if rec.kind == "ranked":
                    run, msgs = core.ranked_run(rec), []
                elif rec.kind == "embedding":
                    run, msgs = embedding_ranking(core, rec, qrels, settings.depth, progress)
                else:
                    failed = [n for n in rec.inputs if n in out.errors]
                    if failed:
                        raise OptionError(f"run {rec.name!r}: a run it fuses failed to load: {failed}")
                    run, msgs = capture(_fused_run, rec, built, settings)
            except EvalcoreError as e:
                if isinstance(e, MissingIdsError) and coverage_is_strict():
                    raise  # strict mode: a run not (fully) covered stops the evaluation, not left out
                out.errors[rec.name] = str(e)
                continue
            built[rec.name] = run
            out.run_aspect[rec.name] = aspect
            if msgs:
                out.warnings[rec.name] = tuple(msgs)
        if len(rest) == len(pending):  # a circle of fusions (never written by the API)
            for rec in rest:
                out.errors[rec.name] = f"run {rec.name!r}: its fusion inputs form a circle"
            break
        pending = rest
    wanted = set(runs) if runs is not None else None
    out.runs = {r.name: built[r.name] for r in records if r.name in built and (wanted is None or r.name in wanted)}
    out.run_aspect = {n: out.run_aspect[n] for n in out.runs}
    parts = [(p.aspect, p.artifact, p.ids_artifact) for p in gt.parts]
    side = core.catalogue.read(lambda c: c.execute("SELECT role, artifact FROM side_files ORDER BY role").fetchall())
    out.key = stable_key("evaluation", __version__, gt.id, parts, vars(settings),
                         [list(s) for s in side], [(r.name, r.content_key(), out.run_aspect.get(r.name))
                                                   for r in records])
    return out


def _warn_tie_reorder(res: Resolved, settings: Settings) -> None:
    """Say which embedding runs have equal scores that the tie rule ``trec`` re-orders (the search ranked them by
    id ascending), as ``evaluate --emb`` and the dashboard's sidebar do (:func:`evalcore.ranking.tie_reorder_text`)."""
    from ..ranking import tie_reorder_text

    note = tie_reorder_text({r.name: res.runs[r.name] for r in res.records if r.kind == "embedding"
                             and r.name in res.runs}, settings.ties, rule="the tie rule 'trec'",
                            fix="pass ties='docid_asc' (or store it with set_settings)")
    if note:
        warn(note, stacklevel=4)


def evaluate_stored(core: WorkspaceCore, settings: Settings, *, runs: Sequence[str] | None = None,
                    progress: ProgressFn | None = None, record: bool = True, strict: bool = False) -> Evaluation:
    """:meth:`evalcore.workspace.Workspace.evaluate`: resolve, report each run's warnings (and the runs left
    out), evaluate, report each ranked run answering only part of the evaluated ground-truth queries (the
    command line's warning, :func:`evalcore.coverage.warn_missing_queries`: the missing ones count 0;
    embedding and fused runs have their own warnings, from the search and the fusion), and (``record``, a
    writable workspace) record the evaluation.

    With ``strict`` (:func:`evalcore.errors.strict_coverage`) a coverage problem raises before anything
    is recorded: a ground-truth query a run does not answer, or that an embedding run's (query)
    embeddings lack, a relevant document absent from its corpus (:class:`~evalcore.errors.MissingIdsError`).
    """
    with strict_coverage(strict):
        res = resolve(core, settings, runs=runs, progress=progress)
        for msg in (*res.gt_warnings, *(m for ms in res.warnings.values() for m in ms)):
            warn(msg, stacklevel=3)
        for run_name, msg in res.errors.items():
            warn(f"run {run_name!r} not evaluated: {msg}", stacklevel=3)
        _warn_tie_reorder(res, settings)
        ev = res.evaluate(progress=progress)
        ranked = {r.name for r in res.records if r.kind == "ranked"} & set(res.runs)
        warn_missing_queries(ev.coverage_rows, {n: res.runs[n].query_ids for n in ranked},
                             {n: res.qrels_for(n).query_ids for n in ranked}, stacklevel=3)
    if record and not core.read_only:
        key = res.key if not res.errors else stable_key(res.key, sorted(res.errors))
        record_evaluation(core, ev, key=key, ground_truth_id=res.ground_truth.id)
    return ev

"""The work behind the options: ground truth and runs loaded, embeddings ranked, fusions built, evaluated.

:func:`evaluate_from_args` turns the options of ``evaluate`` / ``compare`` (see
:mod:`evalcore.cli.options`) into one :class:`~evalcore.evaluate.Evaluation`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..combine import evaluate_per_ground_truth, with_diversity
from ..coverage import nothing_evaluated
from ..data import Qrels, Run
from ..defaults import SEED
from ..diversity import diversity_table
from ..embedding_runs import (
    DEFAULT_BLOCK_BYTES,
    check_embedding_coverage,
    embedding_run,
    evaluate_reference_runs,
    reference_agreement,
    reference_ground_truth,
)
from ..errors import AspectError, OptionError, coverage_is_strict, warn
from ..evaluate import Evaluation, evaluate
from ..io import Embeddings, is_shard_spec, load_embeddings, load_qrels, load_run, shard_embeddings
from ..ranking import tie_reorder_text
from ..retrieval import sample_queries
from .options import (
    diversity_alpha,
    emb_name,
    file_exists,
    parse_aspects,
    parse_emb_spec,
    parse_fuse_spec,
    sample_seed,
    split_named,
)

__all__ = ["load_runs", "runs_from_embeddings", "fuse_runs", "evaluate_from_args", "warn_partial_coverage",
           "warn_sample_above", "InputsRead"]

ProgressFn = Callable[[int, int], None]


def load_runs(specs: Sequence[str], *, fmt: str = "auto") -> dict[str, Run]:
    """``--run [NAME=]FILE`` specs -> runs by name (a bare FILE is named by its TREC tag or file stem)."""
    runs: dict[str, Run] = {}
    for spec in specs:
        name, path = split_named(spec, flag="--run", bare_ok=True, exists=file_exists)
        run = load_run(path, format=fmt, name=name)
        if run.name in runs:
            raise OptionError(f"two runs are named {run.name!r}; name them with --run NAME=FILE")
        runs[run.name] = run
    return runs


# ---------------------------------------------------------------------------- loading
class _EmbCache:
    """Load each embedding file once per command.

    Directories and globs are shards (:func:`evalcore.io.shard_embeddings`);
    with ``shards=True`` (``--dask``: workers read the files) a single
    ``.npy`` / ``.npz`` file is opened as a one-shard set too.
    """

    def __init__(self, *, shards: bool = False) -> None:
        self._hit: dict[tuple[str, str | None], Embeddings] = {}
        self.shards = shards

    def get(self, path: str, ids: str | None = None) -> Embeddings:
        key = (str(Path(path)), ids)
        if key not in self._hit:
            if is_shard_spec(path):  # a directory or glob of shards: vectors stay in their files
                if ids is not None:
                    raise OptionError(f"--emb-ids does not apply to the shards {path}: each shard carries its ids")
                self._hit[key] = shard_embeddings(path)
            elif self.shards and str(path).lower().endswith((".npy", ".npz")):
                self._hit[key] = shard_embeddings(path, ids)
            else:
                self._hit[key] = load_embeddings(path, ids_src=ids, mmap=True)
        return self._hit[key]


def _depth_value(args: argparse.Namespace, ks: Sequence[int]) -> int:
    """The depth embedding runs are ranked to: ``--emb-depth``, default max(100, largest k)."""
    d = getattr(args, "emb_depth", None)
    if d is None:
        return max(100, max(ks) if ks else 0)
    if d < 1:
        raise OptionError(f"--emb-depth must be >= 1, got {d}")
    return int(d)


def _depth(args: argparse.Namespace, ks: Sequence[int]) -> int:
    """:func:`_depth_value`. A depth below the largest k is said by the evaluation, once per embedding run cut by
    it (a shallow run, :mod:`evalcore.evaluation_notes`), not here as well."""
    return _depth_value(args, ks)


def _block_bytes(args: argparse.Namespace) -> int:
    mb = getattr(args, "block_mb", None) or DEFAULT_BLOCK_BYTES // 2**20
    if mb < 1:
        raise OptionError(f"--block-mb must be >= 1, got {mb}")
    return int(mb) * 2**20


def _ks(args: argparse.Namespace) -> list[int]:
    k = getattr(args, "k", None)
    if k is None:
        return []
    return [int(k)] if isinstance(k, int) else [int(x) for x in k]


def runs_from_embeddings(
    specs: Sequence[str],
    *,
    qrels: Qrels | Mapping[str, Qrels] | None,
    args: argparse.Namespace,
    progress: ProgressFn | None = None,
    ks: Sequence[int] | None = None,
    cache: _EmbCache | None = None,
    info: dict[str, Any] | None = None,
    backend: Any = None,
) -> dict[str, Run]:
    """One :class:`Run` per ``--emb [NAME=]DOCS[,QUERIES]`` spec.

    ``qrels`` (one for all, or one per run name) gives the queries to rank;
    without it every item (or query) is ranked. Depth is ``--emb-depth``
    (default max(max k, 100)). ``info`` (optional) receives, per run, the
    files, sizes, dimension and depth (for the report's metadata).
    ``backend``: where the exact top-k runs (``None``: this process; a
    ``distributed.Client`` for ``--dask``).
    """
    cache = cache or _EmbCache(shards=backend is not None)
    ids_map: dict[str, str] = {}
    for s in getattr(args, "emb_ids", None) or []:
        n, v = split_named(s, flag="--emb-ids", what="NAME=IDS_FILE[,QUERY_IDS_FILE]", exists=file_exists)
        ids_map[n] = v
    parsed = [parse_emb_spec(s, ids_map) for s in specs]
    unknown = set(ids_map) - {p.name for p in parsed}
    if unknown:
        raise OptionError(f"--emb-ids names {sorted(unknown)} match no --emb")
    depth = _depth(args, list(ks) if ks is not None else _ks(args))
    block = _block_bytes(args)
    if coverage_is_strict():  # --strict: every run's coverage checked before any is ranked (minutes, maybe)
        for sp in parsed:
            check_embedding_coverage(cache.get(sp.docs, sp.docs_ids), cache.get(sp.queries, sp.queries_ids)
                                     if sp.queries else None, name=sp.name,
                                     qrels=qrels.get(sp.name) if isinstance(qrels, Mapping) else qrels)
    runs: dict[str, Run] = {}
    for sp in parsed:
        if sp.name in runs:
            raise OptionError(f"two --emb runs are named {sp.name!r}")
        docs = cache.get(sp.docs, sp.docs_ids)
        queries = cache.get(sp.queries, sp.queries_ids) if sp.queries else None
        gt = qrels.get(sp.name) if isinstance(qrels, Mapping) else qrels
        runs[sp.name] = embedding_run(docs, queries, qrels=gt, k=depth, name=sp.name, progress=progress,
                                      block_bytes=block, backend=backend)
        if info is not None:
            info[sp.name] = {"docs": docs.source, "queries": None if queries is None else queries.source,
                             "n_docs": len(docs), "dim": docs.dim, "depth": depth,
                             "item_to_item": queries is None}
    return runs


def _check_emb_names(specs: Sequence[str], runs: Mapping[str, Run]) -> None:
    """Two ``--emb`` of one name, or an ``--emb`` named as a ``--run``: refused before anything is ranked."""
    names = [emb_name(s) for s in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise OptionError(f"two --emb runs are named {twice[0]!r}")
    clash = sorted(set(names) & set(runs))
    if clash:
        raise OptionError(f"run names used twice (--run and --emb): {clash}")


def _note_cut_embedding_inputs(fusion_info: dict[str, Any], emb_info: Mapping[str, Any]) -> None:
    """Record, per fusion, the depth of its embedding inputs (``inputs_depth``), and warn where one was ranked
    to fewer items than it could rank: beyond its depth it adds nothing, where whole rankings (seed 001 §7.2)
    would add ``w / (c + rank)``."""
    for name, info in fusion_info.items():
        depths = {r: emb_info[r]["depth"] for r in info["runs"] if r in emb_info}
        if not depths:
            continue
        info["inputs_depth"] = depths
        whole = {r: emb_info[r]["n_docs"] - bool(emb_info[r]["item_to_item"]) for r in depths}
        cut = [r for r in depths if depths[r] < whole[r]]
        if cut:
            warn(f"fusion {name!r} fuses the top {min(depths[r] for r in cut)} of {', '.join(map(repr, cut))} "
                 f"(--emb-depth), not their whole rankings ({max(whole[r] for r in cut)} items): an item ranked "
                 f"deeper adds nothing to its fused score; --emb-depth {max(whole[r] for r in cut)} fuses whole "
                 "rankings")


def fuse_runs(
    specs: Sequence[str],
    runs: Mapping[str, Run],
    *,
    c: float = 60.0,
    top_n: int | None = None,
    ties: str = "docid_asc",
    method: str = "rrf",
    norm: str = "none",
    info: dict[str, Any] | None = None,
) -> dict[str, Run]:
    """Fused runs from ``--fuse NAME=RUN1:W1,...`` specs, in order (a fusion may use earlier ones).

    ``method`` and ``norm`` are those of :func:`evalcore.fusion.fuse` (weighted RRF by default);
    weights other than 1 are an error for a method without weights.
    """
    from ..fusion import WEIGHTED_METHODS, canonical_method, canonical_norm, fuse

    method, norm = canonical_method(method), canonical_norm(norm)
    pool = dict(runs)
    out: dict[str, Run] = {}
    for spec in specs:
        name, weights = parse_fuse_spec(spec)
        if name in pool:
            raise OptionError(f"--fuse {spec!r}: a run is already named {name!r}")
        missing = [r for r in weights if r not in pool]
        if missing:
            raise OptionError(f"--fuse {spec!r}: unknown runs {missing}; runs are {list(pool)}")
        weighted = method in WEIGHTED_METHODS
        if not weighted and any(w != 1.0 for w in weights.values()):
            raise OptionError(f"--fuse {spec!r}: {method} takes no weights (weighted methods: "
                              f"{', '.join(sorted(WEIGHTED_METHODS))}); list the runs without ':W'")
        members = [pool[r] for r in weights]
        fused = fuse(members, method=method, norm=norm, weights=weights if weighted else None, c=c, top_n=top_n,
                     ties=ties, name=name)
        pool[name] = fused
        out[name] = fused
        if info is not None:
            info[name] = {"runs": weights, "c": c, "top_n": top_n, "ties": ties, "method": method, "norm": norm}
    return out


def _only_queries(run: Run, keep: set[str]) -> Run:
    """The rows of ``run`` whose query is in ``keep`` (the run itself when that is every row; whole lists: an exact
    search's stay marked as such)."""
    wanted = np.fromiter((str(x) in keep for x in run.query_ids), dtype=bool, count=len(run.query_ids))
    out = run.with_rows(wanted[run.q])
    return out if out is run or run.search_depth is None else out.searched(run.search_depth)


# ---------------------------------------------------------------------------- the whole command
@dataclass(frozen=True)
class InputsRead:
    """What :func:`evaluate_from_args` has read before it ranks, fuses or evaluates anything: given to its
    ``check_inputs`` (``evaluate --workspace`` checks there what it would record, so that a conflict stops
    the command before minutes of work).

    Attributes
    ----------
    embeddings : a cache of the loaded embedding files (``get(path, ids)``; vectors memory-mapped, not ranked)
    reference : Embeddings or None
        The ``--reference-emb`` model (its neighbours not searched yet).
    runs : dict of str -> Run
        The ``--run`` files, parsed, in order.
    query_universe : dict of str -> ndarray
        Per ``--run`` run, every query id of its ground truth (before ``--n-samples``; a reference: its items).
    ground_truth : str
        The ground truth's file name, as errors name it.
    depth : int or None
        The depth the ``--emb`` runs will be ranked to (None without ``--emb``).
    """

    embeddings: Any
    reference: Embeddings | None
    runs: Mapping[str, Run]
    query_universe: Mapping[str, np.ndarray]
    ground_truth: str
    depth: int | None


def _field_names(args: argparse.Namespace, typed: Mapping[str, str | None]) -> dict[str, str]:
    """Each run's aspect as the file names it (``--aspect vibe=vib`` -> the ``..._vibes_ordered`` field)."""
    from ..io import list_aspects
    from ..io.lists import pick_aspect

    fields = list_aspects(args.qrels, format=getattr(args, "qrels_format", "auto") or "auto")
    return {n: pick_aspect(fields, a, label=str(args.qrels)) for n, a in typed.items()}


def _load_ground_truth(args: argparse.Namespace, aspect: str | None) -> Qrels:
    fmt = getattr(args, "qrels_format", "auto") or "auto"
    return load_qrels(args.qrels, format=fmt, aspect=aspect)


def evaluate_from_args(
    args: argparse.Namespace,
    *,
    metrics: Sequence[str],
    k: Sequence[int] | int,
    load_runs: Callable[[Sequence[str]], dict[str, Run]],
    progress: ProgressFn | None = None,
    details: dict[str, Any] | None = None,
    backend: Any = None,
    check_inputs: Callable[[InputsRead], None] | None = None,
    only: Sequence[str] | None = None,
    domains: Any = None,
) -> tuple[Evaluation, dict[str, Run], str]:
    """Ground truth + runs from the command's options, evaluated as one :class:`Evaluation`.

    Handles ``--qrels`` (with ``--aspect``) or ``--reference-emb``,
    ``--run`` files (via ``load_runs``), ``--emb`` runs, ``--fuse``,
    ``--n-samples``/``--sample-seed``/``--seed``, ``--judged-only`` and ``--diversity``; ``backend`` is where
    the exact top-k of embeddings runs (a Dask client for ``--dask``, see
    :func:`evalcore.cli.options.search_backend`). Returns the evaluation,
    every run by name, and a label of the ground truth. ``details`` (optional)
    receives what recording into a workspace needs: ``embeddings`` (the loaded files,
    a ``get(path, ids)`` cache), ``qrels_for`` (name -> the Qrels each run was ranked
    and evaluated against), ``query_universe`` (name -> every query id of its ground truth,
    before ``--n-samples``), ``depth`` (of embedding runs) and ``file_runs`` (names of
    the ``--run`` runs, in order). ``check_inputs`` (optional) is called once the ground truth and the
    run files are read, before anything is ranked (a reference's neighbours, embedding runs), fused
    or evaluated, with what was read (:class:`InputsRead`); what it raises stops the command there,
    as ``--strict``'s checks of the run files do. ``only`` (optional; ``compare --runs``): the names of the runs
    evaluated and returned; the other runs given are read (and named in ``check_inputs``) but not checked by
    ``--strict`` nor evaluated, and an embedding run or a fusion among them is not ranked or fused unless a
    fusion evaluated uses it. The query sample is the same as without ``only``. ``domains`` (optional; a
    :class:`evalcore.cli.domains.DomainSource`): the queries' domains, given to the evaluated ground truth as the
    workspace gives them (said once the ground truth is read, before anything is ranked).
    """
    ks = [int(k)] if isinstance(k, int) else sorted({int(x) for x in k})
    ties = getattr(args, "ties", "trec")
    opts = dict(metrics=list(metrics), ties=ties, rel_threshold=getattr(args, "rel_threshold", 1),
                no_relevant=getattr(args, "no_relevant", "zero"))
    if getattr(args, "judged_only", False):
        if getattr(args, "reference_emb", None):
            raise OptionError("--judged-only needs judgments (--qrels); a reference model's neighbours judge nothing else")
        opts["judged_only"] = True
    block = _block_bytes(args)
    cache = _EmbCache(shards=backend is not None)
    n_samples = getattr(args, "n_samples", None)
    seed = getattr(args, "seed", SEED)  # (the similarity agreement's item pairs)
    sampled_with = sample_seed(args)  # the query sample's: --sample-seed, else --seed
    emb_specs = getattr(args, "emb", None) or []
    fuse_specs = getattr(args, "fuse", None) or []
    ref_path = getattr(args, "reference_emb", None)
    qrels_path = getattr(args, "qrels", None)
    per_run_aspect, default_aspect = parse_aspects(getattr(args, "aspect", None))
    extra: dict[str, Any] = {}

    if ref_path and qrels_path:
        raise OptionError("give either --qrels or --reference-emb, not both")
    if not ref_path and not qrels_path:
        raise OptionError("give the ground truth: --qrels FILE, or --reference-emb FILE (reference model)")
    if not ref_path and (getattr(args, "agreement_pairs", 0) or getattr(args, "reference_depth", None)):
        raise OptionError("--agreement-pairs and --reference-depth need --reference-emb")
    if ref_path and (per_run_aspect or default_aspect):
        raise OptionError("--aspect applies to ordered-list ground truth (--qrels), not to --reference-emb")

    runs: dict[str, Run] = dict(load_runs(getattr(args, "run", None) or []))
    _check_emb_names(emb_specs, runs)  # before any ranking (a minute or more): not after the first
    given = [*runs, *(emb_name(s) for s in emb_specs), *(parse_fuse_spec(s)[0] for s in fuse_specs)]
    if only is not None:  # (the names were checked by the caller's check_inputs, with every run given)
        needed = _needed_runs(only, fuse_specs)
        emb_specs = [s for s in emb_specs if emb_name(s) in needed]
        fuse_specs = [s for s in fuse_specs if parse_fuse_spec(s)[0] in needed]
    emb_info: dict[str, Any] = {}

    def inputs_read(universe: Mapping[str, np.ndarray], source: str, reference: Embeddings | None = None) -> None:
        if check_inputs is not None:  # (--workspace: what it holds, checked before minutes of ranking)
            check_inputs(InputsRead(cache, reference, dict(runs), universe, os.path.basename(source),
                                    _depth_value(args, ks) if emb_specs else None))

    if ref_path:
        reference = cache.get(ref_path, getattr(args, "reference_ids", None))
        inputs_read({n: reference.ids for n in runs}, str(reference.source), reference)  # before its search
        if domains is not None:
            domains.note(reference.ids, {}, ground_truth=os.path.basename(str(reference.source)))
        gt = reference_ground_truth(reference, k=ks, mode=args.reference_mode,
                                    depth=getattr(args, "reference_depth", None), n_samples=n_samples, seed=sampled_with,
                                    block_bytes=block, progress=progress, backend=backend)
        gt = gt if domains is None else domains.label_reference(gt)
        qrels_for: Qrels | dict[str, Qrels] = gt.deepest
        label = f"reference {reference.source}, {gt.mode}"
        warn_sample_above(n_samples, gt.deepest.n_queries, "items of the reference")
    else:
        gt = None
        cached: dict[str | None, Qrels] = {}

        def gt_of(aspect: str | None) -> Qrels:
            if aspect not in cached:
                try:
                    cached[aspect] = _load_ground_truth(args, aspect)
                except AspectError as e:  # (some runs given an aspect, not these: name them)
                    lacking = [n for n in names if n not in per_run_aspect]
                    if aspect is not None or not per_run_aspect or not lacking:
                        raise
                    raise AspectError(f"no --aspect for run{'s' if len(lacking) > 1 else ''} "
                                      f"{', '.join(map(repr, lacking))}: give --aspect NAME=ASPECT for each (or a "
                                      f"bare --aspect ASPECT for every run without one); {e}") from None
            return cached[aspect]

        # sampling: on the first ground truth loaded, the same ids for all aspects
        # every run given (not only those evaluated): the first aspect, hence the sample, does not depend on --runs
        names = [emb_name(s) for s in getattr(args, "emb", None) or []] + list(runs)
        names += [s.split("=", 1)[0].strip() for s in getattr(args, "fuse", None) or []]
        aspects_needed = list(dict.fromkeys(per_run_aspect.get(n, default_aspect) for n in names)) or [default_aspect]
        first = gt_of(aspects_needed[0])
        if domains is not None:  # (said of every query of every aspect, before the sample, as the workspace says it)
            domains.note_ground_truths([gt_of(a) for a in aspects_needed], ground_truth=os.path.basename(str(args.qrels)))
        full: dict[str | None, set] = {}
        whole: dict[str | None, np.ndarray] = {}  # every query id of each aspect, before the sample
        if n_samples:
            warn_sample_above(n_samples, len(first.query_ids), "queries of the ground truth")
            picked = first.query_ids[sample_queries(first.query_ids, n_samples, seed=sampled_with)]
            for a in aspects_needed:
                q = gt_of(a)
                have = set(q.query_ids.tolist())
                full[a] = have
                whole[a] = q.query_ids
                cached[a] = q.subset([x for x in picked if x in have])
        for a in aspects_needed if domains is not None else ():  # (sampled first, then labelled: the workspace's order)
            cached[a] = domains.label(gt_of(a))
        qrels_for = {n: gt_of(per_run_aspect.get(n, default_aspect)) for n in names}
        label = str(args.qrels)
        inputs_read({n: whole.get(per_run_aspect.get(n, default_aspect), qrels_for[n].query_ids) for n in runs},
                    str(args.qrels))

    if coverage_is_strict():  # --strict: the run files' coverage checked before any embedding is ranked
        _check_run_files({n: r for n, r in runs.items() if only is None or n in only}, qrels_for)
    if emb_specs:
        runs_emb = runs_from_embeddings(emb_specs, qrels=qrels_for, args=args, progress=progress, ks=ks,
                                        cache=cache, info=emb_info, backend=backend)
        clash = set(runs_emb) & set(runs)
        if clash:
            raise OptionError(f"run names used twice (--run and --emb): {sorted(clash)}")
        runs.update(runs_emb)
    fusion_info: dict[str, Any] = {}
    if fuse_specs:
        inputs = runs
        if n_samples and isinstance(qrels_for, dict):  # fuse the sampled queries (each is fused on its own):
            evaluated = {str(q) for qq in qrels_for.values() for q in qq.query_ids}  # no "lacks" for the others
            inputs = {n: _only_queries(r, evaluated) for n, r in runs.items()}
        runs.update(fuse_runs(fuse_specs, inputs, c=args.rrf_c, top_n=args.rrf_top_n, ties=args.rrf_ties,
                              method=args.fuse_method, norm=args.fuse_norm,
                              info=fusion_info))
        _note_cut_embedding_inputs(fusion_info, emb_info)
    if only is not None:  # (the inputs of a fusion evaluated were needed to fuse it, not to be evaluated)
        runs = {n: r for n, r in runs.items() if n in only}
        emb_info = {n: i for n, i in emb_info.items() if n in runs}
        fusion_info = {n: i for n, i in fusion_info.items() if n in runs}
    if not runs:
        raise OptionError("give at least one --run [NAME=]FILE or --emb [NAME=]DOCS[,QUERIES] (a bare file is named "
                          "after it)")
    unknown = set(per_run_aspect) - set(given)
    if unknown:
        raise OptionError(f"--aspect names unknown runs {sorted(unknown)}; runs are {given}")

    generated = list(emb_info) + list(fusion_info)
    note = tie_reorder_text({n: runs[n] for n in generated}, ties, rule="--ties trec", fix="pass --ties docid_asc")
    if note:
        warn(note)

    if details is not None:
        if gt is None and n_samples:  # run queries of the full qrels that the sample left out (not an id mismatch)
            details["not_sampled"] = {
                n: int(np.count_nonzero(np.isin(runs[n].query_ids.astype(str), list(
                    full[per_run_aspect.get(n, default_aspect)] - set(qrels_for[n].query_ids.tolist())))))
                for n in runs}
        details.update(embeddings=cache, depth=next((i["depth"] for i in emb_info.values()), None),
                       qrels_for={n: (gt.deepest if gt is not None else qrels_for[n]) for n in runs},
                       query_universe={n: (reference.ids if gt is not None else whole.get(
                           per_run_aspect.get(n, default_aspect), qrels_for[n].query_ids)) for n in runs},
                       file_runs=[n for n in runs if n not in emb_info and n not in fusion_info])
    if gt is not None:
        ev = evaluate_reference_runs(gt, runs, **opts)
        if getattr(args, "agreement_pairs", 0):
            models = {n: cache.get(*_files_of(emb_specs, n, args)) for n, i in emb_info.items() if i["item_to_item"]}
            if models:
                agr = reference_agreement(reference, models, n_pairs=args.agreement_pairs, seed=seed)
                extra["similarity_agreement"] = {r.model: {"spearman": r.spearman, "mae": r.mae, "n_pairs": r.n_pairs}
                                                 for r in agr.itertuples(index=False)}
    else:
        assert isinstance(qrels_for, dict)
        if per_run_aspect or default_aspect:
            ev = evaluate_per_ground_truth({n: qrels_for[n] for n in runs}, runs, k=ks, **opts)
            extra["aspects"] = _field_names(args, {n: per_run_aspect.get(n, default_aspect) for n in runs})
        else:
            ev = evaluate(qrels_for[next(iter(runs))], runs, k=ks, **opts)
    reason = nothing_evaluated(ev.coverage_rows, rel_threshold=opts["rel_threshold"], no_relevant=opts["no_relevant"])
    if reason is not None:  # (empty outputs and a summary of nothing would follow)
        raise OptionError(f"no query can be evaluated: {reason} (see --rel-threshold and --no-relevant)")

    if getattr(args, "diversity", False) and emb_info:
        ev = _add_diversity(ev, runs, emb_info, cache, args, ks, gt, qrels_for, ties)
    if emb_info:
        extra["embeddings"] = emb_info
    if fusion_info:
        extra["fusion"] = fusion_info
    if extra:
        ev = ev.with_settings(extra)
    return ev, runs, label


def _needed_runs(only: Sequence[str], fuse_specs: Sequence[str]) -> set[str]:
    """The runs ``only`` and every run a fusion among them fuses (a fusion may fuse an earlier one)."""
    needed = set(only)
    for spec in reversed(fuse_specs):
        name, weights = parse_fuse_spec(spec)
        if name in needed:
            needed.update(weights)
    return needed


def _check_run_files(runs: Mapping[str, Run], qrels_for: Qrels | Mapping[str, Qrels]) -> None:
    """The coverage problem (:func:`evalcore.errors.coverage_problem`) of the first run answering only part of
    its ground truth's queries, as :func:`evalcore.evaluate` (``strict``) would report it after the ranking."""
    from ..coverage import missing_queries_problem, missing_query_count

    for name, run in runs.items():
        q = qrels_for[name] if isinstance(qrels_for, Mapping) else qrels_for
        missing = missing_query_count(q, run)
        if missing:
            missing_queries_problem(name, q.n_queries, missing, run_query_ids=run.query_ids,
                                    ground_truth_query_ids=q.query_ids, warning=False)


def _files_of(specs: Sequence[str], name: str, args: argparse.Namespace) -> tuple[str, str | None]:
    ids_map = dict(split_named(s, flag="--emb-ids", exists=file_exists) for s in getattr(args, "emb_ids", None) or [])
    for s in specs:
        sp = parse_emb_spec(s, ids_map)
        if sp.name == name:
            return sp.docs, sp.docs_ids
    raise OptionError(f"no --emb named {name!r}")  # pragma: no cover - names come from the specs


def _add_diversity(ev: Evaluation, runs: Mapping[str, Run], emb_info: Mapping[str, Any], cache: _EmbCache,
                   args: argparse.Namespace, ks: Sequence[int], gt: Any, qrels_for: Any, ties: str) -> Evaluation:
    tables = []
    for name in emb_info:
        docs = cache.get(*_files_of(args.emb, name, args))
        # against what nDCG@k was computed against (a reference's top-k at each k in its tied mode)
        q = {kk: gt.qrels_at(kk) for kk in ks} if gt is not None else qrels_for[name]
        t = diversity_table(runs[name], docs, k_values=ks, alpha=diversity_alpha(args), qrels=q, ties=ties,
                            judged_only=bool(getattr(args, "judged_only", False)))
        # only the evaluated queries, as in the evaluation table
        evaluated = set(ev.table.loc[ev.table["run"] == name, "query_id"].astype(str).unique())
        tables.append(t[t["query_id"].astype(str).isin(evaluated)])
    return with_diversity(ev, tables)


def warn_sample_above(n_samples: int | None, total: int, what: str) -> None:
    """One ``warning:`` line when ``--n-samples`` asks for more queries than there are (all are then evaluated).

    ``n_samples``: the ``--n-samples`` given (None or 0: no sample, nothing said); ``total``: how many queries
    the sample is drawn from; ``what``: what they are, as the line names them (``"queries of the ground truth"``).
    Shared by every command drawing a query sample (``evaluate``, ``compare``, ``fuse --search``, ``agree``).
    """
    if n_samples and n_samples > total:
        warn(f"--n-samples {n_samples:,} is more than the {total:,} {what}: every one is evaluated")


def warn_partial_coverage(ev: Evaluation, runs: Mapping[str, Run], details: Mapping[str, Any]) -> None:
    """One ``warning:`` line per run file answering only part of the ground truth's queries (the missing
    ones count 0 in its values and tests); none answered: the first ids of both, to spot an id mismatch.

    Embedding runs and fusions are left to their own warnings (the search's and the fusion's). With
    ``--strict`` the evaluation already stopped on such a run (:func:`evalcore.evaluate`'s ``strict``).
    """
    from ..coverage import warn_missing_queries

    files = [n for n in details.get("file_runs", ()) if n in runs]
    qrels_for = details.get("qrels_for", {})
    warn_missing_queries(ev.coverage_rows, {n: runs[n].query_ids for n in files},
                         {n: qrels_for[n].query_ids for n in files if qrels_for.get(n) is not None})

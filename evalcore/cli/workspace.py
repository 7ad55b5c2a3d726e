"""``evalcore workspace``: list, remove, export and import the runs of a persistent workspace; copy it; gc its artifacts.

::

    evalcore workspace list   [--workspace DIR]              name<TAB>kind<TAB>model<TAB>version<TAB>step
    evalcore workspace remove NAME [--workspace DIR]         the run and the fusions built on it
    evalcore workspace export --out FILE.zip [--workspace DIR]
    evalcore workspace import FILE.zip [--workspace DIR]     into an absent or empty folder
    evalcore workspace copy   SRC DEST                       a writable copy (SRC may be read-only) in a new folder
    evalcore workspace gc     [--workspace DIR]              remove unreferenced artifacts

``--workspace`` defaults to ``$EVALCORE_WORKSPACE``, else the per-user default workspace
(:func:`evalcore.workspace.locations.default_path`). ``evalcore evaluate ... --workspace DIR``
calls :func:`check_before_recording` as soon as its files are read (what the workspace holds
against them: a conflict stops the command before any ranking or output), :func:`check_rankings`
once the rankings are computed (a sharded corpus's run, whose content is its ranking) and, after
its output, :func:`record_evaluation` to record its ground truth, runs and evaluation; the comparisons
themselves are in :mod:`.workspace_diff`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .options import sample_seed
from .workspace_diff import (
    _ground_truth_change,
    _info_text,
    _same_fusion,
    _same_run,
    _same_source_ground_truth,
    _same_vectors_pair,
    _settings_change,
    _step,
)

__all__ = ["register", "run", "add_workspace_option", "add_run_info_options", "run_info_options", "record_evaluation",
           "WORKSPACE_HELP", "Checked", "check_before_recording", "check_rankings"]

WORKSPACE_HELP = "workspace folder (default: $EVALCORE_WORKSPACE when set)"


def add_workspace_option(p: argparse.ArgumentParser, *, help: str = WORKSPACE_HELP) -> None:
    p.add_argument("--workspace", metavar="DIR", default=os.environ.get("EVALCORE_WORKSPACE") or None, help=help)


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("workspace", help="list, remove, export, import, copy or gc (clean up) a workspace",
                       description="Manage a persistent workspace. " + WORKSPACE_HELP[0].upper() + WORKSPACE_HELP[1:]
                       + ", else the per-user default workspace (copy names both of its folders).")
    actions = p.add_subparsers(dest="action", required=True)
    a = actions.add_parser("list", help="one line per run: name, kind, model, version, step (tab-separated)")
    add_workspace_option(a)
    a = actions.add_parser("remove", help="remove a run (and the fused runs built on it)")
    a.add_argument("name", metavar="NAME", help="the run to remove")
    add_workspace_option(a)
    a = actions.add_parser("export", help="write the workspace as one portable .zip")
    a.add_argument("--out", required=True, metavar="FILE.zip", help="the .zip file to write")
    add_workspace_option(a)
    a = actions.add_parser("import", help="unpack an exported .zip into a new (absent or empty) workspace folder")
    a.add_argument("bundle", metavar="FILE.zip", help="a .zip written by `evalcore workspace export`")
    add_workspace_option(a)
    a = actions.add_parser("copy", help="copy a workspace into a new folder, where it can be changed (the "
                                        "way to work on a read-only one, e.g. a colleague's folder)",
                           description="Copy the workspace in SRC (its ground truths, runs, evaluations, settings "
                                       "and side files, each stored file checked) into DEST, which must be absent or "
                                       "an empty folder; the copy is a writable workspace. What SRC holds is not "
                                       "changed, and SRC may be a folder you cannot write (the latest changes a "
                                       "writer left in its catalogue.sqlite-wal are copied too). The same copy as "
                                       "Workspace.copy_to and the dashboard's \"Copy this workspace to a new "
                                       "workspace\". A copy that fails (DEST's disk full...) leaves nothing in DEST.")
    a.add_argument("source", metavar="SRC", help="the workspace folder to copy")
    a.add_argument("dest", metavar="DEST", help="the new workspace folder (absent, or an empty folder)")
    a = actions.add_parser("gc", help="remove artifacts no run, ground truth or evaluation refers to")
    add_workspace_option(a)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..workspace import Workspace
    from ..workspace.locations import default_path

    if args.action == "copy":
        with Workspace.open(args.source, create=False) as src, src.copy_to(args.dest) as copy:
            n = len(copy.run_names())
            print(f"copied {src.path} into {copy.path}: {n} run{'' if n == 1 else 's'}, writable")
        return 0
    path = args.workspace or default_path()
    if args.action == "import":
        ws = Workspace.import_bundle(args.bundle, path)
        print(f"imported {args.bundle} into {ws.path}: {len(ws.run_names())} runs")
        return 0
    ws = Workspace.open(path, create=False)
    if args.action == "list":
        out = sys.stdout
        for r in ws.run_records():
            out.write("\t".join([r.name, r.kind, r.model or "", r.version or "", _step(r.step)]) + "\n")
    elif args.action == "remove":
        removed = ws.remove_run(args.name)
        print(f"removed {', '.join(removed)}")
    elif args.action == "export":
        print(f"wrote {ws.export(args.out)}")
    elif args.action == "gc":
        counts = ws.gc()
        print(", ".join(f"{v} {k}" for k, v in counts.items()) + " removed")
    return 0


# ---------------------------------------------------------------------------- evaluate --workspace
def _settings_from_args(args: argparse.Namespace, depth: int | None) -> dict[str, Any]:
    ks = sorted({int(x) for x in ([args.k] if isinstance(args.k, int) else args.k)})
    out = {"k": tuple(ks), "metrics": tuple(args.metrics), "ties": args.ties, "rel_threshold": args.rel_threshold,
           "no_relevant": args.no_relevant, "sample_size": int(args.n_samples or 0), "seed": sample_seed(args),
           "judged_only": bool(getattr(args, "judged_only", False))}
    if depth is not None:
        out["depth"] = int(depth)
    if getattr(args, "reference_emb", None):
        out["gt_mode"] = args.reference_mode
        out["gt_depth"] = int(args.reference_depth or max(ks))
    return out


@dataclass(frozen=True)
class Checked:
    """What the checks of ``evaluate --workspace`` found in the workspace; still true while its
    :attr:`~evalcore.workspace.Workspace.generation` is the one read with it.

    ``generation`` None: no workspace there yet (nothing to conflict with). ``keep``: runs already
    there with the same content; ``info``: the model, version, step and tags of those ``--replace``
    replaces; ``pending``: runs of a sharded corpus whose stored content (a ranked run) can only be
    compared with the ranking once it is computed.
    """

    generation: int | None
    same_gt: bool = False
    keep: frozenset[str] = frozenset()
    info: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Plan:
    """What the command records, from its options and the files it read (see :func:`_plan`)."""

    ref: Any
    per_run: dict
    default_aspect: Any
    paths: dict[str, str]
    embs: list
    sharded: dict
    vectors: dict
    fusions: list
    fusion_opts: dict
    settings: dict[str, Any]


def _plan(args: argparse.Namespace, cache: Any, file_runs: Sequence[str], depth: int | None) -> _Plan:
    """The ground truth, runs and settings the command records: ``--run`` files by name (``file_runs``, in
    order) with their paths, ``--emb`` vectors (the loaded files of ``cache``; a corpus of shards is not
    copied into the workspace: its run is recorded as the ranking computed here), ``--fuse`` specs."""
    from ..io.shards import is_shard_spec
    from .options import file_exists, parse_aspects, parse_emb_spec, parse_fuse_spec, split_named

    per_run, default_aspect = parse_aspects(getattr(args, "aspect", None))
    ref = cache.get(args.reference_emb, getattr(args, "reference_ids", None)) \
        if getattr(args, "reference_emb", None) else None
    paths = dict(zip(file_runs, [split_named(s, flag="--run", bare_ok=True, exists=file_exists)[1]
                                 for s in getattr(args, "run", None) or []], strict=True))
    ids_map = dict(split_named(s, flag="--emb-ids", exists=file_exists) for s in getattr(args, "emb_ids", None) or [])
    embs = [parse_emb_spec(spec, ids_map) for spec in getattr(args, "emb", None) or []]
    sharded = {sp.name: sp for sp in embs if is_shard_spec(sp.docs)}
    embs = [sp for sp in embs if sp.name not in sharded]
    vectors = {sp.name: (cache.get(sp.docs, sp.docs_ids), cache.get(sp.queries, sp.queries_ids) if sp.queries else None)
               for sp in embs}
    fusions = [parse_fuse_spec(spec) for spec in getattr(args, "fuse", None) or []]
    fusion_opts = {name: _fusion_options(args, name, weights) for name, weights in fusions}
    return _Plan(ref, per_run, default_aspect, paths, embs, sharded, vectors, fusions, fusion_opts,
                 _settings_from_args(args, depth))


def check_before_recording(args: argparse.Namespace, inputs: Any) -> Checked:
    """Everything ``evaluate --workspace`` can check before it ranks or evaluates anything: what
    ``Workspace.add_run`` / ``add_embedding_run`` would refuse (:func:`_check_ids`), a place where no
    workspace can be created, and what the workspace already holds (:func:`_check_existing`: a run of the
    same name with other content, another ground truth, other stored settings — without ``--replace`` an
    error, exit 2). ``inputs``: what :func:`evalcore.cli.inputs.evaluate_from_args` has read
    (:class:`~evalcore.cli.inputs.InputsRead`), given as its ``check_inputs``.

    Nothing is written (no workspace folder created). Left for later: the runs of a sharded corpus,
    whose content is the ranking (:func:`check_rankings`).
    """
    from ..workspace import Workspace
    from ..workspace.core import check_can_create
    from ..workspace.locations import is_workspace

    plan = _plan(args, inputs.embeddings, list(inputs.runs), inputs.depth)
    _check_ids(inputs.runs, plan, cache=inputs.embeddings, universe=inputs.query_universe,
               labels=dict.fromkeys(inputs.runs, inputs.ground_truth))
    path = Path(args.workspace).expanduser()
    if not is_workspace(path):
        check_can_create(path)
        return Checked(None)
    ws = Workspace.open(path, create=False)
    try:
        with ws.exclusive():  # read-only folder: refused here, as the recording would be
            if getattr(args, "domains", None):  # (another stored mapping: refused unless --replace)
                from .domains import check_stored_mapping

                check_stored_mapping(ws, args)
            return _check(ws, args, plan, inputs.runs, computed=False)
    finally:
        ws.close()


def check_rankings(args: argparse.Namespace, runs: dict, details: dict[str, Any], checked: Checked | None) -> Checked:
    """After the ranking and before anything is printed or written: the runs of a sharded corpus (their content
    is the ranking) against what the workspace holds, and everything again if another process changed the
    workspace since :func:`check_before_recording` (its generation moved)."""
    from ..workspace import Workspace
    from ..workspace.locations import is_workspace

    path = Path(args.workspace).expanduser()
    if not is_workspace(path):
        return checked if checked is not None else Checked(None)
    plan = _plan(args, details["embeddings"], details["file_runs"], details.get("depth"))
    ws = Workspace.open(path, create=False)
    try:
        with ws.exclusive():
            return _recheck(ws, args, plan, runs, checked)
    finally:
        ws.close()


def _check(ws: Any, args: argparse.Namespace, plan: _Plan, runs: Any, *, computed: bool) -> Checked:
    """What ``ws`` holds against the command's runs (``computed``: the rankings of sharded corpora too)."""
    same_gt = _same_source_ground_truth(ws, args, plan.ref)
    file_runs = {n: (runs[n], p) for n, p in plan.paths.items()}
    if computed:
        file_runs.update({n: (runs[n], None) for n in plan.sharded})
    generation = ws.generation
    keep, info, pending = _check_existing(ws, args, ref=plan.ref, file_runs=file_runs, vectors=plan.vectors,
                                          fusions=plan.fusion_opts, settings=plan.settings, same_gt=same_gt,
                                          ranked_later=() if computed else tuple(plan.sharded))
    return Checked(generation, same_gt, frozenset(keep), info, tuple(pending))


def _recheck(ws: Any, args: argparse.Namespace, plan: _Plan, runs: dict, checked: Checked | None) -> Checked:
    """``checked`` completed with the rankings it left pending, when the workspace is as it was then; else
    every check again (another process changed it meanwhile, or it was not checked)."""
    if checked is None or checked.generation is None or ws.generation != checked.generation:
        return _check(ws, args, plan, runs, computed=True)
    if not checked.pending:
        return checked
    keep, info, _ = _check_existing(ws, args, ref=plan.ref, file_runs={n: (runs[n], None) for n in checked.pending},
                                    vectors={}, fusions={}, settings=plan.settings, same_gt=True)
    return Checked(checked.generation, checked.same_gt, checked.keep | frozenset(keep), {**checked.info, **info})


def record_evaluation(args: argparse.Namespace, ev: Any, runs: dict, details: dict[str, Any], *,
                      checked: Checked | None = None) -> str:
    """Record what ``evalcore evaluate`` read and computed into ``args.workspace``; returns a summary line.

    The ground truth (the ``--qrels`` file with all its aspects, or the ``--reference-emb``
    embeddings), every run — ``--run`` files parsed, ``--emb`` vectors (with the ranking
    computed here kept as the workspace's cached ranking), ``--fuse`` specs — each with its
    ``--aspect``, the settings of the command (so ``Workspace.evaluate()`` gives the same
    numbers) and the evaluation itself.

    What the workspace already holds is never replaced silently: a run of the same name with
    the same content is kept as it is (with its model, version and step), and a run of the
    same name with other content, another ground truth or other stored settings is an error naming
    them, before anything is written — unless ``--replace`` is given; a replaced run keeps its model,
    version, step and tags. ``checked``: what :func:`check_before_recording` (before the work) and
    :func:`check_rankings` found; it is checked again, under the writer lock, only when the workspace
    changed since (without it: every check here). When the command made another ground truth the active
    one, a warning names the runs left there that answer none of its queries.
    """
    from ..workspace import Workspace

    plan = _plan(args, details["embeddings"], details["file_runs"], details.get("depth"))
    if checked is None:
        _check_ids(runs, plan, cache=details["embeddings"], universe=details["query_universe"],
                   labels={n: _ground_truth_label(details, n) for n in plan.paths})
    ws = Workspace.open(args.workspace)
    # the check and the writes under the writer lock: no other process records in between
    with ws.exclusive():
        return _record(ws, args, ev, runs, details, plan, _recheck(ws, args, plan, runs, checked))


def _record(ws: Any, args: argparse.Namespace, ev: Any, runs: dict, details: dict[str, Any], plan: _Plan,
            checked: Checked) -> str:
    import re

    from ..errors import quiet_warnings
    from ..workspace.artifacts import sha256_file
    from ..workspace.idchecks import ANSWERING_NONE_PREFIX, warn_runs_answering_none
    from ..workspace.inputs import embedding_files_key
    from ..workspace.resolve import ranking_key
    from .domains import check_stored_mapping, record_mapping

    if getattr(args, "domains", None):
        check_stored_mapping(ws, args)  # (before anything is written)
    keep, kept_info, per_run, default_aspect = set(checked.keep), dict(checked.info), plan.per_run, plan.default_aspect
    replacing = set(kept_info)  # recorded with other content, and --replace given
    given = run_info_options(args)
    if given:  # --run-model/--run-version/--run-step: the one run's info, over what it had
        for name in runs:
            kept_info[name] = {**kept_info.get(name, {}), **given}
    before = ws.ground_truth()
    # the runs answering none of a new ground truth's queries are named once this command's runs are recorded
    with quiet_warnings(re.escape(ANSWERING_NONE_PREFIX)):
        if checked.same_gt:
            pass  # recorded from these very bytes: nothing to store again
        elif plan.ref is not None:
            sha = sha256_file(args.reference_emb) if os.path.isfile(args.reference_emb) else None
            ws.set_reference(plan.ref, source_name=os.path.basename(args.reference_emb), source_sha256=sha)
        else:
            ws.set_ground_truth(args.qrels, format=getattr(args, "qrels_format", "auto") or "auto")
    ws.set_settings(**plan.settings)
    record_mapping(ws, args)  # --domains FILE: the workspace's domain mapping (checked again, under the lock)
    for name, path in plan.paths.items():
        if name not in keep:
            ws.add_run(name, runs[name], aspect=per_run.get(name, default_aspect), replace=name in replacing,
                       source_name=os.path.basename(path), source_sha256=sha256_file(path), **kept_info.get(name, {}))
    for name, sp in plan.sharded.items():
        if name not in keep:
            ws.add_run(name, runs[name], aspect=per_run.get(name, default_aspect), replace=name in replacing,
                       source_name=f"{os.path.basename(os.path.normpath(sp.docs))} (top-{details['depth']} of a "
                                   "sharded corpus)", **kept_info.get(name, {}))
    for sp in plan.embs:
        docs, queries = plan.vectors[sp.name]
        if sp.name not in keep:  # (the key of its files: an upload of them later is this run, not another)
            sha = sha256_file(sp.docs)
            key = embedding_files_key(sp.docs, sp.docs_ids, query_embeddings=sp.queries, query_ids=sp.queries_ids,
                                      docs_sha256=sha)
            ws.add_embedding_run(sp.name, docs, query_embeddings=queries, aspect=per_run.get(sp.name, default_aspect),
                                 replace=sp.name in replacing, source_name=os.path.basename(sp.docs),
                                 source_sha256=sha, files_sha256=key,
                                 query_source_name=os.path.basename(sp.queries) if sp.queries else None,
                                 **kept_info.get(sp.name, {}))
        rec = ws.run_record(sp.name)
        key = ranking_key(rec, details["depth"], details["qrels_for"][sp.name])
        ws.store_derived(key, runs[sp.name], inputs=rec.artifacts, warnings=())
    for name, weights in plan.fusions:
        if name not in keep:
            ws.add_fused_run(name, weights, c=args.rrf_c, top_n=args.rrf_top_n, ties=args.rrf_ties,
                             aspect=per_run.get(name, default_aspect), replace=name in replacing,
                             method=getattr(args, "fuse_method", "rrf"), norm=getattr(args, "fuse_norm", "none"),
                             **kept_info.get(name, {}))
    for name in keep & set(kept_info):  # the same content, new run info
        ws.set_run_info(name, **given)
    if before is None or ws.ground_truth()["id"] != before["id"]:
        warn_runs_answering_none(ws)
    ws.record_evaluation(ev)
    kept = f" ({len(keep)} already there with the same content: kept)" if keep else ""
    return (f"recorded the ground truth, {len(runs)} run{'' if len(runs) == 1 else 's'}{kept} and the evaluation "
            f"in workspace {ws.path}")


def _check_ids(runs: Mapping[str, Any], plan: _Plan, *, cache: Any, universe: Mapping[str, Any],
               labels: Mapping[str, str]) -> None:
    """What ``Workspace.add_run`` / ``add_embedding_run`` would refuse, refused before anything is recorded.

    A run file none of whose query ids is a query of the ground truth (the evaluation only warned:
    every value 0) and an id holding a control character (:mod:`evalcore.workspace.idchecks`) in a
    run file or an embedding file (the shards of a corpus too: its ranking's ids are theirs): the
    same error, before anything is ranked or written (the ground truth's own ids are checked by
    ``set_ground_truth``, the first write). Embedding runs answering no query never get here: the
    search refuses them.
    """
    from ..workspace.idchecks import check_answers_some, check_embedding_ids, check_run_ids

    for name, path in plan.paths.items():
        check_run_ids(runs[name], owner=f"run {name!r}", file=os.path.basename(path))
        check_answers_some(name, runs[name].query_ids, universe[name], ground_truth=labels[name])
    shards = {sp.name: (cache.get(sp.docs, sp.docs_ids), cache.get(sp.queries, sp.queries_ids) if sp.queries
                        else None) for sp in plan.sharded.values()}
    for name, (docs, queries) in {**plan.vectors, **shards}.items():
        check_embedding_ids(docs, owner=f"run {name!r}", what="document id", file=docs.source)
        if queries is not None:
            check_embedding_ids(queries, owner=f"run {name!r}", what="query id", file=queries.source)


def _ground_truth_label(details: dict[str, Any], name: str) -> str:
    source = getattr(details["qrels_for"].get(name), "source", None)
    return os.path.basename(str(source)) if source else "ground truth"


def add_run_info_options(p: argparse.ArgumentParser) -> None:
    """``--run-model``, ``--run-version``, ``--run-step``: the run info of the one run a command records."""
    p.add_argument("--run-model", default=None, metavar="MODEL",
                   help="with --workspace and one run: its model (the Versions page groups a model's runs)")
    p.add_argument("--run-version", default=None, metavar="LABEL", help="with --workspace and one run: its version label")
    p.add_argument("--run-step", type=float, default=None, metavar="STEP",
                   help="with --workspace and one run: its training step or epoch (orders the versions)")


def run_info_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run info given on the command line; checked: it needs ``--workspace`` and exactly one run."""
    from ..errors import OptionError

    given = {k: v for k, v in (("model", getattr(args, "run_model", None)),
                               ("version", getattr(args, "run_version", None)),
                               ("step", getattr(args, "run_step", None))) if v is not None}
    if not given:
        return {}
    flags = ", ".join(f"--run-{k}" for k in given) + (" describes" if len(given) == 1 else " describe")
    if not getattr(args, "workspace", None):
        raise OptionError(f"{flags} a run recorded in a workspace: give --workspace DIR")
    n = sum(len(getattr(args, a, None) or []) for a in ("run", "emb", "fuse"))
    if n != 1:
        raise OptionError(f"{flags} one run, and this command has {n} (--run, --emb, --fuse): record "
                          "one run per command, or set each run's info from Python (Workspace.set_run_info)")
    return given


def _fusion_options(args: argparse.Namespace, name: str, weights: Any) -> dict[str, Any]:
    from ..workspace.inputs import fusion_options

    return fusion_options(name, weights, weights=None, c=args.rrf_c, top_n=args.rrf_top_n, ties=args.rrf_ties,
                          method=getattr(args, "fuse_method", "rrf"), norm=getattr(args, "fuse_norm", "none"))


def _check_existing(ws: Any, args: argparse.Namespace, *, ref: Any, file_runs: dict, vectors: dict,
                    fusions: dict, settings: dict[str, Any], same_gt: bool = False, ranked_later: Sequence[str] = ()
                    ) -> tuple[set[str], dict[str, dict[str, Any]], list[str]]:
    """(runs already in ``ws`` with the same content, the model/version/step/tags of those to replace, the runs
    of ``ranked_later`` still to compare).

    Raises OptionError, before anything is written, when a run of the same name holds other content,
    the workspace's ground truth is another one, or its stored settings differ from the command's
    (the dashboard and ``Workspace.evaluate()`` use them), unless ``args.replace``. ``ranked_later``: runs
    whose content is a ranking not computed yet (a sharded corpus's): one stored under that name as
    another kind than a ranked run differs; a ranked one is returned as still to compare.
    """
    from ..errors import OptionError

    have = {r.name: r for r in ws.run_records()}
    same, differ = set(), []
    from ..workspace.artifacts import sha256_file

    # a file run: the very same file bytes, else the same parsed run
    checks = [(n, lambda n=n, r=r, p=p: (p is not None and have[n].source_sha256 == sha256_file(p))
               or _same_run(ws.load_run(n), r))
              for n, (r, p) in file_runs.items()]
    checks += [(n, lambda n=n, v=v: _same_vectors_pair(ws.load_embeddings(n), v)) for n, v in vectors.items()]
    checks += [(n, lambda n=n, o=o: _same_fusion(have[n].options, o)) for n, o in fusions.items()]
    pending = [n for n in ranked_later if n in have and have[n].kind == "ranked"]
    differ += [n for n in ranked_later if n in have and have[n].kind != "ranked"]
    for name, is_same in checks:
        if name in have:
            expected = "ranked" if name in file_runs else "embedding" if name in vectors else "fused"
            if have[name].kind == expected and is_same():
                same.add(name)
            else:
                differ.append(name)
    gt_note = "" if same_gt else _ground_truth_change(ws, args, ref)
    settings_note, same_flags = _settings_change(ws, settings)
    if (differ or gt_note or settings_note) and not getattr(args, "replace", False):
        what = []
        if differ:
            what.append("run" + ("s " if len(differ) > 1 else " ") + ", ".join(
                f"{n!r}{_info_text(have[n])}" for n in differ) + " already recorded there with other content")
        if gt_note:
            what.append(gt_note)
        if settings_note:
            what.append(settings_note)
        advice = "pass --replace to replace " + ("them" if len(differ) + bool(gt_note) + bool(settings_note) > 1
                                                 else "it")
        if differ:
            advice += " (a replaced run keeps its model, version and step), or name the runs differently"
        if settings_note:
            advice += f", or give the workspace's settings: {same_flags}"
        raise OptionError(f"nothing recorded in workspace {ws.path}: {'; '.join(what)}; {advice}")
    info = {n: {"model": have[n].model, "version": have[n].version, "step": have[n].step, "tags": have[n].tags}
            for n in differ}
    return same, info, pending

"""``evalcore workspace``: list, remove, export and import the runs of a persistent workspace.

::

    evalcore workspace list   [--workspace DIR]              name<TAB>kind<TAB>model<TAB>version<TAB>step
    evalcore workspace remove NAME [--workspace DIR]         the run and the fusions built on it
    evalcore workspace export --out FILE.zip [--workspace DIR]
    evalcore workspace import FILE.zip [--workspace DIR]     into an absent or empty folder
    evalcore workspace gc     [--workspace DIR]              remove unreferenced artifacts

``--workspace`` defaults to ``$EVALCORE_WORKSPACE``, else the per-user default workspace
(:func:`evalcore.workspace.locations.default_path`). :func:`record_evaluation` is what
``evalcore evaluate ... --workspace DIR`` calls to record its ground truth, runs and
evaluation.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["register", "run", "add_workspace_option", "record_evaluation", "WORKSPACE_HELP"]

WORKSPACE_HELP = "workspace folder (default: $EVALCORE_WORKSPACE when set)"


def add_workspace_option(p: argparse.ArgumentParser, *, help: str = WORKSPACE_HELP) -> None:
    p.add_argument("--workspace", metavar="DIR", default=os.environ.get("EVALCORE_WORKSPACE") or None, help=help)


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("workspace", help="list, remove, export or import the runs of a workspace",
                       description="Manage a persistent workspace. " + WORKSPACE_HELP.capitalize()
                       + ", else the per-user default workspace.")
    actions = p.add_subparsers(dest="action", required=True)
    a = actions.add_parser("list", help="one line per run: name, kind, model, version, step (tab-separated)")
    add_workspace_option(a)
    a = actions.add_parser("remove", help="remove a run (and the fused runs built on it)")
    a.add_argument("name", metavar="NAME")
    add_workspace_option(a)
    a = actions.add_parser("export", help="write the workspace as one portable .zip")
    a.add_argument("--out", required=True, metavar="FILE.zip")
    add_workspace_option(a)
    a = actions.add_parser("import", help="unpack an exported .zip into a new (absent or empty) workspace folder")
    a.add_argument("bundle", metavar="FILE.zip")
    add_workspace_option(a)
    a = actions.add_parser("gc", help="remove artifacts no run, ground truth or evaluation refers to")
    add_workspace_option(a)
    p.set_defaults(func=run)
    return p


def _step(value: Any) -> str:
    if value is None or value != value:  # None or NaN
        return ""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def run(args: argparse.Namespace) -> int:
    from ..workspace import Workspace
    from ..workspace.locations import default_path

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
           "no_relevant": args.no_relevant, "sample_size": int(args.n_samples or 0), "seed": int(args.seed)}
    if depth is not None:
        out["depth"] = int(depth)
    if getattr(args, "reference_emb", None):
        out["gt_mode"] = args.reference_mode
        out["gt_depth"] = int(args.reference_depth or max(ks))
    return out


def record_evaluation(args: argparse.Namespace, ev: Any, runs: dict, details: dict[str, Any]) -> str:
    """Record what ``evalcore evaluate`` read and computed into ``args.workspace``; returns a summary line.

    The ground truth (the ``--qrels`` file with all its aspects, or the ``--reference-emb``
    embeddings), every run — ``--run`` files parsed, ``--emb`` vectors (with the ranking
    computed here kept as the workspace's cached ranking), ``--fuse`` specs — each with its
    ``--aspect``, the settings of the command (so ``Workspace.evaluate()`` gives the same
    numbers) and the evaluation itself. A run of the same name is replaced.
    """
    from ..workspace import Workspace
    from ..workspace.artifacts import sha256_file
    from ..workspace.resolve import ranking_key
    from .options import parse_aspects, parse_emb_spec, parse_fuse_spec, split_named

    ws = Workspace.open(args.workspace)
    per_run, default_aspect = parse_aspects(getattr(args, "aspect", None))
    cache = details["embeddings"]
    if getattr(args, "reference_emb", None):
        ref = cache.get(args.reference_emb, getattr(args, "reference_ids", None))
        ws.set_reference(ref, source_name=os.path.basename(args.reference_emb))
    else:
        ws.set_ground_truth(args.qrels, format=getattr(args, "qrels_format", "auto") or "auto")
    ws.set_settings(**_settings_from_args(args, details.get("depth")))
    paths = [split_named(s, flag="--run", bare_ok=True)[1] for s in getattr(args, "run", None) or []]
    for name, path in zip(details["file_runs"], paths, strict=True):
        ws.add_run(name, runs[name], aspect=per_run.get(name, default_aspect), replace=True,
                   source_name=os.path.basename(path), source_sha256=sha256_file(path))
    ids_map = dict(split_named(s, flag="--emb-ids") for s in getattr(args, "emb_ids", None) or [])
    for spec in getattr(args, "emb", None) or []:
        sp = parse_emb_spec(spec, ids_map)
        docs = cache.get(sp.docs, sp.docs_ids)
        queries = cache.get(sp.queries, sp.queries_ids) if sp.queries else None
        ws.add_embedding_run(sp.name, docs, query_embeddings=queries, aspect=per_run.get(sp.name, default_aspect),
                             replace=True, source_name=os.path.basename(sp.docs), source_sha256=sha256_file(sp.docs),
                             query_source_name=os.path.basename(sp.queries) if sp.queries else None)
        rec = ws.run_record(sp.name)
        key = ranking_key(rec, details["depth"], details["qrels_for"][sp.name])
        ws.store_derived(key, runs[sp.name], inputs=rec.artifacts, warnings=())
    for spec in getattr(args, "fuse", None) or []:
        name, weights = parse_fuse_spec(spec)
        ws.add_fused_run(name, weights, c=args.rrf_c, top_n=args.rrf_top_n, ties=args.rrf_ties,
                         aspect=per_run.get(name, default_aspect), replace=True,
                         method=getattr(args, "fuse_method", "rrf"), norm=getattr(args, "fuse_norm", "none"))
    ws.record_evaluation(ev)
    return f"recorded the ground truth, {len(runs)} runs and the evaluation in workspace {ws.path}"

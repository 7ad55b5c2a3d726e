"""``evalcore workspace``: list, remove, export and import the runs of a persistent workspace; gc its artifacts.

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

__all__ = ["register", "run", "add_workspace_option", "add_run_info_options", "run_info_options", "record_evaluation",
           "WORKSPACE_HELP"]

WORKSPACE_HELP = "workspace folder (default: $EVALCORE_WORKSPACE when set)"


def add_workspace_option(p: argparse.ArgumentParser, *, help: str = WORKSPACE_HELP) -> None:
    p.add_argument("--workspace", metavar="DIR", default=os.environ.get("EVALCORE_WORKSPACE") or None, help=help)


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("workspace", help="list, remove, export, import or gc (clean up) a workspace",
                       description="Manage a persistent workspace. " + WORKSPACE_HELP[0].upper() + WORKSPACE_HELP[1:]
                       + ", else the per-user default workspace.")
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
           "no_relevant": args.no_relevant, "sample_size": int(args.n_samples or 0), "seed": int(args.seed),
           "judged_only": bool(getattr(args, "judged_only", False))}
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
    numbers) and the evaluation itself.

    What the workspace already holds is never replaced silently: a run of the same name with
    the same content is kept as it is (with its model, version and step), and a run of the
    same name with other content, or another ground truth, is an error naming them, before
    anything is written — unless ``--replace`` is given; a replaced run keeps its model,
    version, step and tags.
    """
    from ..io.shards import is_shard_spec
    from ..workspace import Workspace
    from .options import file_exists, parse_aspects, parse_emb_spec, parse_fuse_spec, split_named

    per_run, default_aspect = parse_aspects(getattr(args, "aspect", None))
    cache = details["embeddings"]
    ref = cache.get(args.reference_emb, getattr(args, "reference_ids", None)) \
        if getattr(args, "reference_emb", None) else None
    paths = dict(zip(details["file_runs"], [split_named(s, flag="--run", bare_ok=True, exists=file_exists)[1]
                                            for s in getattr(args, "run", None) or []], strict=True))
    ids_map = dict(split_named(s, flag="--emb-ids", exists=file_exists) for s in getattr(args, "emb_ids", None) or [])
    embs = [parse_emb_spec(spec, ids_map) for spec in getattr(args, "emb", None) or []]
    # a corpus of shards is not copied into the workspace: its run is recorded as the ranking computed here
    sharded = {sp.name: sp for sp in embs if is_shard_spec(sp.docs)}
    embs = [sp for sp in embs if sp.name not in sharded]
    vectors = {sp.name: (cache.get(sp.docs, sp.docs_ids), cache.get(sp.queries, sp.queries_ids) if sp.queries else None)
               for sp in embs}
    fusions = [parse_fuse_spec(spec) for spec in getattr(args, "fuse", None) or []]
    fusion_opts = {name: _fusion_options(args, name, weights) for name, weights in fusions}
    settings = _settings_from_args(args, details.get("depth"))
    _check_ids(runs, details, paths=paths, sharded=sharded, vectors=vectors)
    ws = Workspace.open(args.workspace)
    # the check and the writes under the writer lock: no other process records in between
    with ws.exclusive():
        return _record(ws, args, ev, runs, details, ref=ref, per_run=per_run, default_aspect=default_aspect,
                       paths=paths, embs=embs, vectors=vectors, fusions=fusions, fusion_opts=fusion_opts,
                       settings=settings, sharded=sharded)


def _record(ws: Any, args: argparse.Namespace, ev: Any, runs: dict, details: dict[str, Any], *, ref: Any,
            per_run: dict, default_aspect: Any, paths: dict, embs: list, vectors: dict, fusions: list,
            fusion_opts: dict, settings: dict[str, Any], sharded: dict) -> str:
    from ..workspace.artifacts import sha256_file
    from ..workspace.resolve import ranking_key

    same_gt = _same_source_ground_truth(ws, args, ref)
    file_runs = {**{n: (runs[n], p) for n, p in paths.items()}, **{n: (runs[n], None) for n in sharded}}
    keep, kept_info = _check_existing(ws, args, ref=ref, file_runs=file_runs,
                                      vectors=vectors, fusions=fusion_opts, settings=settings, same_gt=same_gt)
    replacing = set(kept_info)  # recorded with other content, and --replace given
    given = run_info_options(args)
    if given:  # --run-model/--run-version/--run-step: the one run's info, over what it had
        for name in runs:
            kept_info[name] = {**kept_info.get(name, {}), **given}
    if same_gt:
        pass  # recorded from these very bytes: nothing to store again
    elif ref is not None:
        sha = sha256_file(args.reference_emb) if os.path.isfile(args.reference_emb) else None
        ws.set_reference(ref, source_name=os.path.basename(args.reference_emb), source_sha256=sha)
    else:
        ws.set_ground_truth(args.qrels, format=getattr(args, "qrels_format", "auto") or "auto")
    ws.set_settings(**settings)
    for name, path in paths.items():
        if name not in keep:
            ws.add_run(name, runs[name], aspect=per_run.get(name, default_aspect), replace=name in replacing,
                       source_name=os.path.basename(path), source_sha256=sha256_file(path), **kept_info.get(name, {}))
    for name, sp in sharded.items():
        if name not in keep:
            ws.add_run(name, runs[name], aspect=per_run.get(name, default_aspect), replace=name in replacing,
                       source_name=f"{os.path.basename(os.path.normpath(sp.docs))} (top-{details['depth']} of a "
                                   "sharded corpus)", **kept_info.get(name, {}))
    for sp in embs:
        docs, queries = vectors[sp.name]
        if sp.name not in keep:
            ws.add_embedding_run(sp.name, docs, query_embeddings=queries, aspect=per_run.get(sp.name, default_aspect),
                                 replace=sp.name in replacing, source_name=os.path.basename(sp.docs),
                                 source_sha256=sha256_file(sp.docs),
                                 query_source_name=os.path.basename(sp.queries) if sp.queries else None,
                                 **kept_info.get(sp.name, {}))
        rec = ws.run_record(sp.name)
        key = ranking_key(rec, details["depth"], details["qrels_for"][sp.name])
        ws.store_derived(key, runs[sp.name], inputs=rec.artifacts, warnings=())
    for name, weights in fusions:
        if name not in keep:
            ws.add_fused_run(name, weights, c=args.rrf_c, top_n=args.rrf_top_n, ties=args.rrf_ties,
                             aspect=per_run.get(name, default_aspect), replace=name in replacing,
                             method=getattr(args, "fuse_method", "rrf"), norm=getattr(args, "fuse_norm", "none"),
                             **kept_info.get(name, {}))
    for name in keep & set(kept_info):  # the same content, new run info
        ws.set_run_info(name, **given)
    ws.record_evaluation(ev)
    kept = f" ({len(keep)} already there with the same content: kept)" if keep else ""
    return (f"recorded the ground truth, {len(runs)} run{'' if len(runs) == 1 else 's'}{kept} and the evaluation "
            f"in workspace {ws.path}")


def _check_ids(runs: dict, details: dict[str, Any], *, paths: dict, sharded: dict, vectors: dict) -> None:
    """What ``Workspace.add_run`` / ``add_embedding_run`` would refuse, refused before anything is recorded.

    A run file none of whose query ids is a query of the ground truth (the evaluation only warned:
    every value 0) and an id holding a control character (:mod:`evalcore.workspace.idchecks`): the
    same error, before the ground truth and the first runs are written (the ground truth's own ids
    are checked by ``set_ground_truth``, the first write). Embedding runs answering no query never
    get here: their ranking refused them.
    """
    from ..workspace.idchecks import check_answers_some, check_embedding_ids, check_run_ids

    for name in [*paths, *sharded]:
        path = paths.get(name)
        check_run_ids(runs[name], owner=f"run {name!r}", file=os.path.basename(path) if path else None)
        if name in paths:
            check_answers_some(name, runs[name].query_ids, details["query_universe"][name],
                               ground_truth=_ground_truth_label(details, name))
    for name, (docs, queries) in vectors.items():
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
                    fusions: dict, settings: dict[str, Any], same_gt: bool = False
                    ) -> tuple[set[str], dict[str, dict[str, Any]]]:
    """(runs already in ``ws`` with the same content, the model/version/step/tags of those to replace).

    Raises OptionError, before anything is written, when a run of the same name holds other content,
    the workspace's ground truth is another one, or its stored settings differ from the command's
    (the dashboard and ``Workspace.evaluate()`` use them), unless ``args.replace``.
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
    return same, info


#: The command-line form of each setting ``evaluate --workspace`` records.
_SETTING_FLAGS = {"k": "--k", "metrics": "--metrics", "ties": "--ties", "rel_threshold": "--rel-threshold",
                  "no_relevant": "--no-relevant", "sample_size": "--n-samples", "seed": "--seed",
                  "judged_only": "-J", "depth": "--emb-depth", "gt_mode": "--reference-mode",
                  "gt_depth": "--reference-depth"}


def _setting_text(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return " ".join(map(str, value))
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _settings_change(ws: Any, settings: dict[str, Any]) -> tuple[str, str]:
    """(what differs between the workspace's stored settings and the command's, the flags giving the
    workspace's), ('', '') when they agree or the workspace has none stored yet."""
    from dataclasses import replace as dc_replace

    if not ws.has_settings():
        return "", ""
    have = ws.settings()
    new = dc_replace(have, **settings).validated()
    diff = [n for n in settings if getattr(have, n) != getattr(new, n)]
    if not diff:
        return "", ""
    parts = [f"{n} {_setting_text(getattr(have, n))} (this command: {_setting_text(getattr(new, n))})"
             for n in diff]
    flags = []
    for n in diff:
        flag, value = _SETTING_FLAGS[n], getattr(have, n)
        if isinstance(value, bool):
            flags.append(flag if value else f"no {flag}")
        elif n == "sample_size" and not value:
            flags.append(f"no {flag}")
        else:
            flags.append(f"{flag} {_setting_text(value)}")
    return "its settings are " + "; ".join(parts), " ".join(flags)


def _info_text(rec: Any) -> str:
    parts = [f"{k} {v}" for k, v in (("model", rec.model), ("version", rec.version), ("step", _step(rec.step))) if v]
    return f" ({', '.join(parts)})" if parts else ""


def _same_source_ground_truth(ws: Any, args: argparse.Namespace, ref: Any) -> bool:
    """Whether the workspace's active ground truth was recorded from the very file the command reads.

    The same name, kind and SHA-256 of the bytes; for judgments the same format (the one asked
    for, or detected from these bytes and name, as when it was recorded); for a reference model
    the same ids too (a ``.npy``'s ids come from another file). Then nothing needs parsing,
    comparing or storing again (a 300 MB reference was written and hashed twice per command).
    """
    import hashlib

    import numpy as np

    from ..io import detect_qrels_format
    from ..workspace.artifacts import sha256_file

    gt = ws.ground_truth()
    path = str(args.reference_emb if ref is not None else args.qrels)
    name = os.path.basename(path)
    if (gt is None or gt["kind"] != ("reference" if ref is not None else "qrels") or not gt.get("source_sha256")
            or gt["name"] != name or not os.path.isfile(path)):
        return False
    if ref is not None:
        return (gt["source_sha256"] == sha256_file(path)
                and np.array_equal(np.asarray(ws.reference_ids(), dtype=str), np.asarray(ref.ids, dtype=str)))
    with open(path, "rb") as fh:
        data = fh.read()
    fmt = getattr(args, "qrels_format", "auto") or "auto"
    return (gt["source_sha256"] == hashlib.sha256(data).hexdigest()
            and (detect_qrels_format(data, name) if fmt == "auto" else fmt) == gt["format"])


def _ground_truth_change(ws: Any, args: argparse.Namespace, ref: Any) -> str:
    """What differs between the workspace's ground truth and the command's ('' when nothing does or it has none)."""
    gt = ws.ground_truth()
    if gt is None:
        return ""
    if ref is not None:
        if gt["kind"] == "reference" and _same_embeddings(ws.load_reference(), ref):
            return ""
        new = f"the reference model {os.path.basename(args.reference_emb)}"
    else:
        from ..workspace.inputs import qrels_parts

        parts, *_ = qrels_parts(args.qrels, format=getattr(args, "qrels_format", "auto") or "auto", label=None)
        if gt["kind"] == "qrels" and [a for a, _ in parts] == list(gt["aspects"] or [None]) and all(
                _same_qrels(ws.load_qrels(a), q) for a, q in parts):
            return ""
        new = f"{os.path.basename(str(args.qrels))} ({sum(q.n_queries for _, q in parts[:1])} queries)"
    old = f"{gt['name']}" + (f" ({gt['n_queries']} queries)" if gt.get("n_queries") else "")
    return f"its ground truth is {old}, not {new} (every run there is evaluated against it)"


def _same_qrels(a: Any, b: Any) -> bool:
    import numpy as np

    return (list(map(str, a.query_ids)) == list(map(str, b.query_ids)) and np.array_equal(a.q, b.q)
            and list(map(str, a.doc_ids)) == list(map(str, b.doc_ids)) and np.array_equal(a.grades, b.grades))


def _same_run(a: Any, b: Any) -> bool:
    import numpy as np

    return (len(a) == len(b) and list(map(str, a.query_ids)) == list(map(str, b.query_ids))
            and np.array_equal(a.q, b.q) and np.array_equal(a.scores, b.scores)
            and list(map(str, a.doc_ids)) == list(map(str, b.doc_ids)))


def _same_embeddings(a: Any, b: Any) -> bool:
    """Same ids and the same float32 vectors (as stored), compared in blocks of rows."""
    import numpy as np

    if a is None or b is None:
        return a is None and b is None
    if len(a) != len(b) or a.dim != b.dim or list(map(str, a.ids)) != list(map(str, b.ids)):
        return False
    step = max(1, 2**24 // max(a.dim, 1))
    return all(np.array_equal(np.asarray(a.vectors[i:i + step], dtype=np.float32),
                              np.asarray(b.vectors[i:i + step], dtype=np.float32)) for i in range(0, len(a), step))


def _same_vectors_pair(stored: tuple, new: tuple) -> bool:
    return _same_embeddings(stored[0], new[0]) and _same_embeddings(stored[1], new[1])


def _same_fusion(stored: dict, new: dict) -> bool:
    return {k: v for k, v in stored.items() if k != "aspect"} == {k: v for k, v in new.items() if k != "aspect"}

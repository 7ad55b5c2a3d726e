"""``evalcore evaluate``: runs against ground truth; prints mean ± std, writes the outputs with ``--out``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..defaults import MEAN_RESAMPLES, REPORT_CI_METHOD
from .options import (
    add_embedding_options,
    add_eval_options,
    counting,
    diversity_alpha,
    progress_unit,
    refuse_lone_sample_seed,
    sample_seed,
    search_backend,
)

__all__ = ["register", "run"]


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("evaluate", help="evaluate runs against ground truth")
    add_eval_options(p)
    p.add_argument("--out", default=None, help="output directory for per_query.csv, report.json, {run}_results.csv "
                                                   "(and per_domain.csv with --by-domain)")
    p.add_argument("--report-depth", type=counting(0), default=10,
                   help="top-k list length stored per query in report.json (default 10; 0: none)")
    p.add_argument("--ci-method", default=REPORT_CI_METHOD, choices=["t", "bootstrap"],
                   help=f"95%% interval of each mean in report.json (with --out): t (Student t) or bootstrap "
                        "(percentile bootstrap on resamples of the queries shared by every run, drawn with --seed: the "
                        f"dashboard's intervals and its Report (JSON)); default {REPORT_CI_METHOD}")
    p.add_argument("--n-resamples", type=counting(1), default=MEAN_RESAMPLES,
                   help=f"resamples of --ci-method bootstrap and of --by-domain's intervals (default {MEAN_RESAMPLES}, "
                        "as the dashboard)")
    add_embedding_options(p)
    from .domains import add_domain_options

    add_domain_options(p, command="evaluate")
    from .workspace import add_workspace_option

    add_workspace_option(p, help="also record the ground truth, every run and the evaluation in workspace DIR "
                                 "(default: $EVALCORE_WORKSPACE when set; nothing is recorded otherwise). A run "
                                 "already there with the same content is kept; another run of the same name, "
                                 "another ground truth or other stored settings stop the command before any "
                                 "work, unless --replace")
    from .workspace import add_run_info_options

    add_run_info_options(p)
    p.add_argument("--replace", action="store_true",
                   help="with --workspace: replace the runs of the same name (they keep their model, version and "
                        "step), the ground truth, the stored settings and (with --domains) the domain mapping")
    p.set_defaults(func=run)
    return p


#: options of `evaluate` whose work uses pandas (the others never import it: it would take ~0.3 s of CPU)
PANDAS_OPTIONS = ("workspace", "diversity", "fuse", "reference_emb", "aspect", "domains", "by_domain")


def needs_pandas(args: argparse.Namespace) -> bool:
    """Whether this `evaluate` command uses pandas (so that it is imported in the background at once)."""
    return any(getattr(args, name, None) for name in PANDAS_OPTIONS)


def run(args: argparse.Namespace) -> int:
    from ..report import write_outputs
    from ..summaries import columns_mean_pm_std_text
    from .background import preload
    from .inputs import evaluate_from_args, load_runs, warn_partial_coverage
    from .progress import ProgressBar
    from .workspace import run_info_options

    run_info_options(args)  # checked before any work
    if not args.workspace:  # (there it is the workspace's stored sample seed, also without a sample)
        refuse_lone_sample_seed(args, or_else=" (or --workspace DIR, which records it as the sample seed)")
    diversity_alpha(args)
    if needs_pandas(args):
        preload("pandas")
    if args.out:
        preload("scipy.special")  # the report's confidence intervals need it
    from .domains import domain_source

    domains = domain_source(args)  # (--domains, or the workspace's mapping: read before any work)
    details: dict = {}
    checked: list = []  # with --workspace: what it holds against the command, checked before any ranking
    check = None
    if args.workspace:
        from .workspace import check_before_recording

        args = _emb_as_stored(args)

        def check(inputs) -> None:
            checked.append(check_before_recording(args, inputs))
    with search_backend(args) as backend:
        ev, runs, gt_label = evaluate_from_args(args, metrics=args.metrics, k=args.k,
                                                load_runs=_named_as_stored(args, load_runs) if args.workspace
                                                else load_runs,
                                                progress=ProgressBar("ranking", unit=progress_unit(args)),
                                                details=details, backend=backend, check_inputs=check,
                                                domains=domains)
    if args.workspace:  # the rankings of sharded corpora, before anything is printed or written
        from .workspace import check_rankings

        checked[:] = [check_rankings(args, runs, details, checked[0] if checked else None)]
    warn_partial_coverage(ev, runs, details)
    print(columns_mean_pm_std_text(ev.columns, title=f"EVALUATION RESULTS ({gt_label})"))
    aspects = dict(ev.settings.get("aspects") or {})
    if len(set(aspects.values())) > 1:  # (a number means something against its own list only: say whose)
        print("ground-truth aspect of each run (values compare within one aspect only): "
              + "; ".join(f"{n}: {a}" for n, a in aspects.items()))
    not_sampled = details.get("not_sampled", {})
    for cov in ev.coverage_rows:
        row = argparse.Namespace(**cov)
        notes = []
        if row.n_missing:
            notes.append(f"{row.n_missing} qrels queries absent from the run (scored 0)")
        left_out = int(not_sampled.get(str(row.run), 0))
        if left_out:
            notes.append(f"{left_out} run queries not in the sample of {args.n_samples} (ignored)")
        if row.n_ignored - left_out:
            notes.append(f"{row.n_ignored - left_out} run queries not in the qrels (ignored)")
        if row.n_no_relevant:
            verb = "skipped" if args.no_relevant == "skip" else "scored by formula"
            notes.append(f"{row.n_no_relevant} queries with no relevant document ({verb})")
        print(f"{row.run}: {row.n_evaluated} quer{'y' if row.n_evaluated == 1 else 'ies'} evaluated" + (f"; {'; '.join(notes)}" if notes else ""))
    agreement = ev.settings.get("similarity_agreement")
    if agreement:  # seed 000's Spearman / MAE of pair similarities: printed, not only in report.json
        print("similarity agreement with the reference (pairs of items; Spearman rho, mean absolute error):")
        for model, row in agreement.items():
            print(f"  {model}: rho {row['spearman']:.4f}, MAE {row['mae']:.4f}, {row['n_pairs']:,} pairs")
    by_domain = None
    if args.by_domain:
        from .domains import per_domain_summary, per_domain_text

        by_domain = per_domain_summary(ev.table, n_resamples=args.n_resamples, seed=args.seed)
        print(per_domain_text(*by_domain, n_resamples=args.n_resamples, seed=args.seed, source=_domains_said(domains)))
    if args.out:
        from ..report import ground_truth_metadata, sample_metadata

        # seed: the intervals' (--seed); sample_seed: the sample's (--sample-seed, else --seed), null without one;
        # ground_truth: each run's ground truth (one mapping whether or not the runs have their own aspect)
        meta = {"command": "evaluate", **sample_metadata(n_samples=args.n_samples, sample_seed=sample_seed(args),
                                                         seed=args.seed),
                "ground_truth": ground_truth_metadata(ev.runs, ev.settings.get("qrels"),
                                                      per_run=ev.settings.get("ground_truth"))}
        paths = write_outputs(ev, args.out, runs=runs, top_k=args.report_depth, metadata=meta,
                              ci_method=args.ci_method, n_resamples=args.n_resamples, seed=args.seed)
        if by_domain is not None:
            from .domains import write_per_domain

            paths = [*paths, write_per_domain(by_domain[0], args.out)]
        print(f"wrote {', '.join(str(p) for p in paths)}")
    if args.workspace:
        from .workspace import record_evaluation

        print(record_evaluation(args, ev, runs, details, checked=checked[0]))
    return 0


def _emb_as_stored(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` for ``--workspace``: a bare ``--emb DOCS[,QUERIES]`` whose very files the workspace already holds as an
    embedding run (:meth:`evalcore.workspace.Workspace.same_embedding_run`: the documents', the queries' and their ids
    files' bytes; e.g. uploaded on the dashboard) takes that run's name, said in one line, so that it is evaluated,
    printed and recorded under it and not stored a second time, as :func:`_named_as_stored` does for ``--run``;
    ``NAME=DOCS`` keeps its name (a copy of the run, if so named). Not with ``--aspect NAME=...``, nor for a run a
    ``--fuse`` names. A new namespace (``args`` is not changed)."""
    from ..errors import warn
    from ..workspace import Workspace
    from ..workspace.locations import is_workspace
    from .options import (
        file_exists,
        parse_aspects,
        parse_emb_spec,
        parse_fuse_spec,
        split_emb_spec,
        split_named,
    )

    specs = list(getattr(args, "emb", None) or [])
    path = Path(args.workspace).expanduser()
    per_run, default = parse_aspects(getattr(args, "aspect", None))
    if not specs or per_run or not is_workspace(path):
        return args
    fused = {n for s in getattr(args, "fuse", None) or [] for n in parse_fuse_spec(s)[1]}
    ids_map = dict(split_named(s, flag="--emb-ids", what="NAME=IDS_FILE[,QUERY_IDS_FILE]", exists=file_exists)
                   for s in getattr(args, "emb_ids", None) or [])
    renamed: dict[str, str] = {}
    ws = Workspace.open(path, create=False)
    try:
        named = []
        for spec in specs:
            given, files = split_emb_spec(spec)
            sp = parse_emb_spec(spec, ids_map)
            stored = None
            if given is None and sp.name not in fused:
                stored = ws.same_embedding_run(sp.docs, sp.docs_ids, query_embeddings=sp.queries,
                                               query_ids=sp.queries_ids, aspect=default)
            if stored is not None:
                these = (f"{sp.docs} and {sp.queries}: the workspace holds these very files" if sp.queries else
                         f"{sp.docs}: the workspace holds this very file")
                warn(f"{these} as embedding run {stored!r}: evaluated and recorded under that name, not stored again "
                     f"(--emb NAME={files} names it otherwise)")
                renamed[sp.name] = stored
                spec = f"{stored}={files}"
            named.append(spec)
    finally:
        ws.close()
    emb_ids = [f"{renamed[n]}={v}" if n in renamed else f"{n}={v}" for n, v in ids_map.items()]
    return argparse.Namespace(**{**vars(args), "emb": named, "emb_ids": emb_ids or getattr(args, "emb_ids", None)})


def _domains_said(domains) -> str:
    """Where the printed domains come from, in words."""
    if domains is None or domains.mapping is None:
        return "domains: the ground truth's domain column"
    return (f"domains: {domains.file or 'the domain mapping'}"
            + (", else the ground truth's own domain column" if domains.own_column else ""))


def _named_as_stored(args: argparse.Namespace, load_runs):
    """``load_runs`` for ``--workspace``: a bare ``--run FILE`` whose very bytes the workspace already holds as a
    ranked run (:meth:`evalcore.workspace.Workspace.same_file_run`, e.g. uploaded on the dashboard and named
    after its file there) takes that run's name instead of its TREC tag, said in one line, so that it is
    evaluated, printed and recorded under it and not stored a second time; ``NAME=FILE`` keeps its name."""
    from ..errors import warn
    from ..workspace import Workspace
    from ..workspace.artifacts import sha256_file
    from ..workspace.locations import is_workspace
    from .options import file_exists, parse_aspects, split_named

    def load(specs, **kw):
        path = Path(args.workspace).expanduser()
        if not specs or not is_workspace(path):
            return load_runs(specs, **kw)
        per_run, default = parse_aspects(getattr(args, "aspect", None))
        ws = Workspace.open(path, create=False)
        try:
            named = []
            for spec in specs:
                name, file = split_named(spec, flag="--run", bare_ok=True, exists=file_exists)
                stored = None
                if name is None and os.path.isfile(file) and not per_run:
                    stored = ws.same_file_run(sha256_file(file), aspect=default)
                if stored is not None:
                    warn(f"{file}: the workspace holds this very file as run {stored!r}: evaluated and recorded "
                         f"under that name, not stored again (--run NAME=FILE names it otherwise)")
                    spec = f"{stored}={file}"
                named.append(spec)
        finally:
            ws.close()
        return load_runs(named, **kw)

    return load

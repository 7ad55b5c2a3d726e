"""``evalcore agree``: agreement between runs — overlap@k, RBO(p), Kendall's τ — per query and on average.

Prints, per measure@k, the runs × runs matrix of mean agreement (over the queries
where it is defined); ``--out`` writes the long per-query table ``run_a, run_b,
query_id, measure, k, value`` and ``--summary-out`` the means (see :mod:`evalcore.agreement`).

The queries compared: every query of the runs; with ``--qrels``, the ground truth's queries (as the dashboard's
Agreement page: the evaluated queries), and with ``--n-samples N`` (``--sample-seed``, else ``--seed``) its seeded
sample, drawn as ``evaluate --n-samples`` draws it.
"""

from __future__ import annotations

import argparse

__all__ = ["register", "run"]


def register(sub) -> argparse.ArgumentParser:
    from ..defaults import SEED
    from .options import QRELS_FORMAT_HELP, add_n_samples, add_sample_seed

    p = sub.add_parser("agree", help="agreement between runs: overlap@k, RBO, Kendall's tau")
    p.add_argument("--run", action="append", required=True, metavar="[NAME=]FILE",
                   help="a ranked run (two or more; a bare FILE is named by its TREC run tag, else its file stem)")
    p.add_argument("--k", nargs="+", type=int, default=[10], metavar="K",
                   help="cutoffs (default 10; 0 = whole lists)")
    p.add_argument("--measures", nargs="+", default=["overlap", "rbo", "kendall_tau"],
                   choices=["overlap", "rbo", "kendall_tau"], help="default: all three")
    p.add_argument("--p", type=float, default=0.9, help="RBO persistence p in (0, 1) (default 0.9)")
    p.add_argument("--ties", default="trec", help="tie rule ranking each run (default trec)")
    p.add_argument("--out", default=None, metavar="CSV", help="write the per-query table")
    p.add_argument("--summary-out", default=None, metavar="CSV", help="write the mean per pair, measure and k")
    g = p.add_argument_group("queries compared (default: every query of the runs)")
    g.add_argument("--qrels", default=None,
                   help="compare on this ground truth's queries (the evaluated queries, as the Agreement page); "
                        "its judgments are not used")
    g.add_argument("--qrels-format", default="auto", help=QRELS_FORMAT_HELP)
    g.add_argument("--aspect", default=None, metavar="ASPECT",
                   help="with a ground truth of several ordered lists (seed 001 JSON): the list whose queries are "
                        "compared, its field name or a unique part of it (overall)")
    add_n_samples(g, what="compare on")
    g.add_argument("--seed", type=int, default=SEED,
                   help=f"seed of --n-samples' query sample (default {SEED}, as evaluate and the dashboard)")
    add_sample_seed(g, seed_also=None)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .._lazy import pd
    from ..agreement import agreement, agreement_matrix, rbo_name, summarize_agreement
    from ..errors import OptionError
    from .inputs import load_runs

    if args.out and args.summary_out and Path(args.out).resolve() == Path(args.summary_out).resolve():
        raise OptionError(f"--out and --summary-out are one file ({args.out}): the summary would replace the table")
    query_ids = _query_ids(args)
    runs = load_runs(args.run)
    table = agreement(runs, k=args.k, measures=args.measures, p=args.p, ties=args.ties, query_ids=query_ids)
    summary = summarize_agreement(table)
    names = list(runs)
    measures = [rbo_name(args.p) if m == "rbo" else m for m in dict.fromkeys(args.measures)]
    n_q = table["query_id"].nunique()
    print(f"Agreement of {len(names)} runs on {n_q} queries (mean over the queries where a value is defined)")
    with pd.option_context("display.width", 200, "display.max_columns", 50, "display.float_format", "{:.4f}".format):
        for m in measures:
            for k in sorted(set(args.k)):
                mat = agreement_matrix(summary, measure=m, k=k, runs=names)
                for a in names:
                    mat.loc[a, a] = float("nan")  # not computed: a run against itself
                print(f"\n{m}@{k if k else 'all'}")
                print(mat.to_string(na_rep="-"))
        undefined = summary[summary["n_undefined"] > 0]
        if len(undefined):
            print("\nundefined values (left out of the means):")
            print(undefined[["run_a", "run_b", "measure", "k", "n", "n_undefined"]].to_string(index=False))
    for path, frame in ((args.out, table), (args.summary_out, summary)):
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            frame.to_csv(path, index=False, float_format="%.17g")
            print(f"wrote {path}")
    return 0


def _query_ids(args: argparse.Namespace) -> list[str] | None:
    """The queries compared: None (every query of the runs), or ``--qrels``' queries in its order, or its
    ``--n-samples`` sample in the drawn order (:func:`evalcore.retrieval.sample_queries`, as ``evaluate``)."""
    from ..errors import OptionError
    from ..io import load_qrels
    from .options import refuse_lone_sample_seed, sample_seed

    if not args.qrels:
        for flag, value in (("--n-samples", args.n_samples), ("--sample-seed", args.sample_seed)):
            if value is not None:
                raise OptionError(f"{flag} samples the queries of a ground truth: give --qrels")
        for flag, value in (("--qrels-format", args.qrels_format != "auto"), ("--aspect", args.aspect)):
            if value:
                raise OptionError(f"{flag} needs --qrels")
        return None
    refuse_lone_sample_seed(args)
    ids = load_qrels(args.qrels, format=args.qrels_format, aspect=args.aspect).query_ids
    if args.n_samples:
        from ..retrieval import sample_queries
        from .inputs import warn_sample_above

        warn_sample_above(args.n_samples, len(ids), "queries of the ground truth")
        ids = ids[sample_queries(ids, args.n_samples, seed=sample_seed(args))]
    return [str(q) for q in ids]

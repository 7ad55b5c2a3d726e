"""``evalcore agree``: agreement between runs — overlap@k, RBO(p), Kendall's τ — per query and on average.

Prints, per measure@k, the runs × runs matrix of mean agreement (over the queries
where it is defined); ``--out`` writes the long per-query table ``run_a, run_b,
query_id, measure, k, value`` and ``--summary-out`` the means (see :mod:`evalcore.agreement`).
"""

from __future__ import annotations

import argparse

__all__ = ["register", "run"]


def register(sub) -> argparse.ArgumentParser:
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
    runs = load_runs(args.run)
    table = agreement(runs, k=args.k, measures=args.measures, p=args.p, ties=args.ties)
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

"""``evalcore fuse``: weighted reciprocal rank fusion of runs into a TREC run file."""

from __future__ import annotations

import argparse

__all__ = ["register", "run"]


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("fuse", help="weighted reciprocal rank fusion of runs into a TREC run file")
    p.add_argument("--run", action="append", required=True, metavar="NAME=FILE")
    p.add_argument("--weight", action="append", metavar="NAME=W", help="weight of a run (default 1)")
    p.add_argument("--c", type=float, default=60.0, help="RRF constant (default 60)")
    p.add_argument("--top-n", type=int, default=None, help="use only the top N of each input list")
    p.add_argument("--ties", default="docid_asc", help="tie rule for input ranks and output order")
    p.add_argument("--depth", type=int, default=None, help="write only the top DEPTH fused documents per query")
    p.add_argument("--name", default="rrf")
    p.add_argument("--out", required=True)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..errors import OptionError
    from ..fusion import weighted_rrf
    from ..io import write_trec_run
    from .inputs import load_runs
    from .options import split_named

    runs = load_runs(args.run)
    weights = {}
    for spec in args.weight or []:
        name, value = split_named(spec, flag="--weight", what="NAME=W")
        try:
            weights[name] = float(value)
        except ValueError:
            raise OptionError(f"--weight {spec!r}: {value!r} is not a number") from None
    fused = weighted_rrf(runs, weights=weights or None, c=args.c, top_n=args.top_n, ties=args.ties, name=args.name)
    write_trec_run(fused, args.out, tag=args.name, ties=args.ties, depth=args.depth)
    print(f"wrote {args.out}: {fused.n_queries} queries, {len(fused)} documents "
          f"(weights {weights or 'all 1'}, c={args.c}, top_n={args.top_n})")
    return 0

"""Command-line interface: ``python -m evalcore {evaluate, compare, fuse, topk} ...``.

Bad input ends with one line ``error: <file>, line N: <what is wrong>`` on
stderr and exit status 2 — never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from ._lazy import pd
from .errors import EvalcoreError, OptionError, plain_warnings

EXIT_USAGE = 2


def _split_named(spec: str, *, flag: str) -> tuple[str | None, str]:
    """``NAME=VALUE`` -> (NAME, VALUE); a bare VALUE -> (None, VALUE)."""
    if "=" in spec:
        name, value = spec.split("=", 1)
        if not name or not value:
            raise OptionError(f"{flag} expects NAME=FILE, got {spec!r}")
        return name, value
    return None, spec


def _load_runs(specs: Sequence[str], *, fmt: str = "auto") -> dict:
    from .loaders import load_run

    runs: dict = {}
    for spec in specs:
        name, path = _split_named(spec, flag="--run")
        run = load_run(path, format=fmt, name=name)
        if run.name in runs:
            raise OptionError(f"two runs are named {run.name!r}; name them with --run NAME=FILE")
        runs[run.name] = run
    return runs


def _progress_bar(label: str):
    start = time.perf_counter()
    tty = sys.stderr.isatty()

    def cb(done: int, total: int) -> None:
        frac = done / total if total else 1.0
        bar = "#" * int(frac * 30)
        msg = f"\r{label} [{bar:<30}] {done}/{total} {time.perf_counter() - start:5.1f}s"
        if tty or done == total:
            sys.stderr.write(msg + ("\n" if done == total else ""))
            sys.stderr.flush()

    return cb


def _ground_truth_and_runs(args: argparse.Namespace):
    from .loaders import load_qrels

    qrels = load_qrels(args.qrels, format=getattr(args, "qrels_format", "auto"))
    runs = _load_runs(args.run or [])
    emb_specs = getattr(args, "emb", None) or []
    if emb_specs:
        from .embeddings_cli import runs_from_embeddings  # issue: embeddings as runs

        runs.update(runs_from_embeddings(emb_specs, qrels=qrels, args=args, progress=_progress_bar("ranking")))
    if not runs:
        raise OptionError("give at least one --run NAME=FILE" + (" or --emb NAME=FILE" if hasattr(args, "emb") else ""))
    if getattr(args, "n_samples", None):
        from .retrieval import sample_queries

        picked = sample_queries(qrels.query_ids, args.n_samples, seed=args.seed)
        qrels = qrels.subset(qrels.query_ids[picked])
    return qrels, runs


def _add_eval_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--qrels", default=None,
                   help="ground truth file (TREC qrels, BEIR TSV, ...); required unless --reference-emb")
    p.add_argument("--qrels-format", default="auto", help="override format detection")
    p.add_argument("--run", action="append", metavar="NAME=FILE", help="a ranked run (repeatable)")
    p.add_argument("--metrics", nargs="+", default=["ndcg", "recall", "mrr", "map"], metavar="NAME",
                   help="metric names, e.g. ndcg recall(rel=2) P@5 (see `evalcore metrics`)")
    p.add_argument("--k", nargs="+", type=int, default=[10], metavar="K", help="cutoffs (default 10)")
    p.add_argument("--ties", default="trec", help="tie rule: trec (default), docid_asc (seed), input")
    p.add_argument("--rel-threshold", type=int, default=1, help="grade >= this counts as relevant (default 1)")
    p.add_argument("--no-relevant", default="zero", choices=["zero", "skip"],
                   help="queries without relevant docs: score them (zero, trec_eval) or skip them")
    p.add_argument("--n-samples", type=int, default=None, help="evaluate a random sample of N qrels queries")
    p.add_argument("--seed", type=int, default=42, help="seed for --n-samples and randomised tests (default 42)")


def _evaluate_from_args(args: argparse.Namespace, *, metrics, k):
    """(Evaluation, runs, ground-truth label) from the options.

    With :mod:`evalcore.embeddings_cli` present, it handles everything
    (``--emb``, ``--aspect``, ``--reference-emb`` instead of ``--qrels``, ``--fuse``).
    """
    from .evaluate import evaluate

    try:
        from .embeddings_cli import evaluate_from_args
    except ImportError:
        evaluate_from_args = None
    if evaluate_from_args is not None:
        return evaluate_from_args(args, metrics=metrics, k=k, load_runs=_load_runs, progress=_progress_bar("ranking"))
    if not args.qrels:
        raise OptionError("give --qrels FILE")
    qrels, runs = _ground_truth_and_runs(args)
    ev = evaluate(qrels, runs, metrics=metrics, k=k, ties=args.ties, rel_threshold=args.rel_threshold,
                  no_relevant=args.no_relevant)
    return ev, runs, qrels.source


PRELOAD_THREAD = "evalcore-preload"


def _preload(module: str):
    """Import a module in a background thread (overlaps with file parsing, which releases the GIL).

    Returns the thread: :func:`main` joins it before returning, because an
    interpreter that exits while a thread is inside a C++ extension's import
    (pyarrow, under pandas) can abort ("terminate called without an active
    exception") after an early error.
    """
    import importlib
    import threading

    thread = threading.Thread(target=importlib.import_module, args=(module,), daemon=True, name=PRELOAD_THREAD)
    thread.start()
    return thread


def cmd_evaluate(args: argparse.Namespace) -> int:
    from .aggregate import mean_pm_std_text
    from .report import write_outputs

    if args.out:
        _preload("scipy.special")  # the report's confidence intervals need it

    ev, runs, gt_label = _evaluate_from_args(args, metrics=args.metrics, k=args.k)
    print(mean_pm_std_text(ev.table, title=f"EVALUATION RESULTS ({gt_label})"))
    for row in ev.coverage.itertuples(index=False):
        notes = []
        if row.n_missing:
            notes.append(f"{row.n_missing} qrels queries absent from the run (scored 0)")
        if row.n_ignored:
            notes.append(f"{row.n_ignored} run queries not in the qrels (ignored)")
        if row.n_no_relevant:
            verb = "skipped" if args.no_relevant == "skip" else "scored by formula"
            notes.append(f"{row.n_no_relevant} queries with no relevant document ({verb})")
        print(f"{row.run}: {row.n_evaluated} queries evaluated" + (f"; {'; '.join(notes)}" if notes else ""))
    if args.out:
        meta = {"command": "evaluate", "n_samples": args.n_samples, "seed": args.seed}
        paths = write_outputs(ev, args.out, runs=runs, top_k=args.report_depth, metadata=meta)
        print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .measures import parse_measure
    from .stats import compare_many

    if args.per_query:
        table = pd.read_csv(args.per_query, dtype={"run": str, "query_id": str, "domain": str, "metric": str})
        needed = {"run", "query_id", "metric", "k", "value"}
        if not needed <= set(table.columns):
            raise OptionError(f"{args.per_query}: needs columns {sorted(needed)}, has {list(table.columns)}")
        table["domain"] = table.get("domain", pd.Series("", index=table.index)).fillna("")
    else:
        if not args.qrels and not getattr(args, "reference_emb", None):
            raise OptionError("give --qrels and --run ..., or --per-query FILE")
        ks = sorted({m.k for m in map(parse_measure, args.metric) if m.k is not None}) or [10]
        table = _evaluate_from_args(args, metrics=args.metric, k=ks)[0].table
    mk = []
    for text in args.metric:
        m = parse_measure(text)
        mk.append((m.base, 0 if m.k is None else m.k))
    res = compare_many(table, metrics_k=mk, baseline=args.baseline, test=args.test, correction=args.correction,
                       alpha=args.alpha, n_resamples=args.n_resamples, seed=args.seed)
    cols = ["metric", "k", "run_a", "run_b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "effect_size",
            "p_value", "p_adjusted", "significant", "wins", "ties", "losses", "note"]
    show = res[[c for c in cols if c in res.columns]]
    with pd.option_context("display.max_rows", 500, "display.max_columns", 50, "display.width", 200,
                           "display.float_format", "{:.4f}".format):
        print(f"Paired {args.test} test, correction {args.correction} across {len(res)} comparisons, alpha {args.alpha}")
        print(show.to_string(index=False))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        res.to_csv(args.out, index=False, float_format="%.17g")
        print(f"wrote {args.out}")
    return 0


def cmd_fuse(args: argparse.Namespace) -> int:
    from .fusion import weighted_rrf
    from .io_trec import write_trec_run

    runs = _load_runs(args.run)
    weights = {}
    for spec in args.weight or []:
        name, value = _split_named(spec, flag="--weight")
        if name is None:
            raise OptionError(f"--weight expects NAME=W, got {spec!r}")
        try:
            weights[name] = float(value)
        except ValueError:
            raise OptionError(f"--weight {spec!r}: {value!r} is not a number") from None
    fused = weighted_rrf(runs, weights=weights or None, c=args.c, top_n=args.top_n, ties=args.ties, name=args.name)
    write_trec_run(fused, args.out, tag=args.name, ties=args.ties, depth=args.depth)
    print(f"wrote {args.out}: {fused.n_queries} queries, {len(fused)} documents "
          f"(weights {weights or 'all 1'}, c={args.c}, top_n={args.top_n})")
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    from .measures import ALIASES, DESCRIPTIONS

    for name, desc in DESCRIPTIONS.items():
        print(f"{name:<16} {desc}")
    print("aliases: " + ", ".join(f"{a}->{c}" for a, c in sorted(ALIASES.items())))
    print("parameter: name(rel=N)@k sets the relevance threshold of a binary metric")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evalcore", description="Exact retrieval evaluation.")
    parser.add_argument("--version", action="version", version=f"evalcore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("evaluate", help="evaluate runs against ground truth")
    _add_eval_options(p)
    p.add_argument("--out", default=None, help="output directory for per_query.csv, report.json, {run}_results.csv")
    p.add_argument("--report-depth", type=int, default=10, help="top-k list length stored per query in report.json")
    _maybe_add_embedding_options(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("compare", help="paired significance tests between runs")
    p.add_argument("--qrels", default=None)
    p.add_argument("--qrels-format", default="auto")
    p.add_argument("--run", action="append", metavar="NAME=FILE")
    p.add_argument("--per-query", default=None, help="a per_query.csv written by `evaluate` instead of qrels+runs")
    p.add_argument("--metric", nargs="+", default=["ndcg@10"], help="metric@k to compare (several allowed)")
    p.add_argument("--baseline", default=None, help="compare every run with this one (default: all pairs)")
    p.add_argument("--test", default="t", choices=["t", "wilcoxon", "permutation"])
    p.add_argument("--correction", default="holm", choices=["holm", "bonferroni", "bh", "none"])
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--n-resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--ties", default="trec")
    p.add_argument("--rel-threshold", type=int, default=1)
    p.add_argument("--no-relevant", default="zero", choices=["zero", "skip"])
    p.add_argument("--n-samples", type=int, default=None)
    p.add_argument("--out", default=None, help="write the comparison table as CSV")
    _maybe_add_embedding_options(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("fuse", help="weighted reciprocal rank fusion of runs into a TREC run file")
    p.add_argument("--run", action="append", required=True, metavar="NAME=FILE")
    p.add_argument("--weight", action="append", metavar="NAME=W", help="weight of a run (default 1)")
    p.add_argument("--c", type=float, default=60.0, help="RRF constant (default 60)")
    p.add_argument("--top-n", type=int, default=None, help="use only the top N of each input list")
    p.add_argument("--ties", default="docid_asc", help="tie rule for input ranks and output order")
    p.add_argument("--depth", type=int, default=None, help="write only the top DEPTH fused documents per query")
    p.add_argument("--name", default="rrf")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_fuse)

    p = sub.add_parser("metrics", help="list supported metrics")
    p.set_defaults(func=cmd_metrics)

    try:
        from . import cli_topk

        cli_topk.register(sub)
    except ImportError:  # pragma: no cover - module always shipped
        pass
    return parser


def _maybe_add_embedding_options(p: argparse.ArgumentParser) -> None:
    try:
        from .embeddings_cli import add_embedding_options
    except ImportError:
        return
    add_embedding_options(p)


def main(argv: Sequence[str] | None = None) -> int:
    # pandas is imported on first use (evalcore._lazy); start that import now, in a thread, so it
    # overlaps with reading and parsing the input files (arrow releases the GIL)
    words = list(sys.argv[1:] if argv is None else argv)
    # `topk` never uses pandas: importing it there would only take CPU from the search
    wants_pandas = words[:1] != ["topk"]
    loader = _preload("pandas") if wants_pandas and "pandas" not in sys.modules else None
    try:
        with plain_warnings():
            return _run(argv)
    finally:
        if loader is not None:
            loader.join()  # never exit while the import runs (see _preload)


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except EvalcoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print("error: out of memory; try smaller inputs, --n-samples, or a smaller block size", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

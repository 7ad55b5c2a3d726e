"""``evalcore fuse``: fusion of runs into a TREC run file (weighted RRF by default), with a weight search.

``--method`` and ``--norm`` pick any method and normalisation of :mod:`evalcore.fusion`;
``--search grid|random`` (with ``--qrels`` and ``--metric``) chooses the weights of
``rrf``/``wsum`` by :func:`evalcore.fusion_search.search_weights` and writes the run fused
with the best ones; ``--tune-fraction F`` tunes on a seeded share F of the queries and
reports on the rest (without it the tuned value is optimistic, and a warning says so). The search's evaluation
takes ``evaluate``'s query rules (:mod:`evalcore.cli.options`, the same flags): ``--n-samples N`` (with
``--sample-seed``, else ``--seed``) searches on the same seeded query sample, ``--judged-only``/``-J`` and
``--no-relevant`` score as there — so the Fusion page's search on a sampled workspace is one command.
"""

from __future__ import annotations

import argparse

__all__ = ["register", "run"]


def register(sub) -> argparse.ArgumentParser:
    from ..defaults import FUSION_STEP, FUSION_TRIALS, SEED
    from ..embedding_runs import REFERENCE_MODES
    from .options import (
        QRELS_FORMAT_HELP,
        add_judged_only,
        add_n_samples,
        add_no_relevant,
        add_sample_seed,
    )

    p = sub.add_parser("fuse", help="fuse runs (weighted RRF, CombSUM, CombMNZ, ...) into a TREC run file")
    p.add_argument("--run", action="append", required=True, metavar="[NAME=]FILE",
                   help="a ranked run to fuse (repeatable; two or more; a bare FILE is named by its TREC run tag, else its file stem)")
    p.add_argument("--weight", action="append", metavar="NAME=W", help="weight of a run (default 1; rrf and wsum)")
    p.add_argument("--c", type=float, default=60.0, help="RRF constant (default 60)")
    p.add_argument("--top-n", type=int, default=None, help="use only the top N of each input list")
    p.add_argument("--ties", default="docid_asc", help="tie rule for input ranks and output order (default docid_asc, unlike evaluate and compare: trec)")
    p.add_argument("--depth", type=int, default=None, help="write only the top DEPTH fused documents per query")
    p.add_argument("--name", default=None, help="run name and TREC tag (default: the method, e.g. rrf)")
    p.add_argument("--out", required=True, help="the fused TREC run file to write")
    p.add_argument("--method", default="rrf",
                   help="rrf (default), combsum, combmnz, wsum, isr, bordafuse (ranx's sum, mnz also accepted)")
    p.add_argument("--norm", default="none",
                   help="score normalisation before combsum/combmnz/wsum: none (default), min-max, max, sum, "
                        "z-score, rank")
    g = p.add_argument_group("weight search (rrf, wsum)")
    g.add_argument("--search", choices=["grid", "random"], default=None,
                   help="search the weights on --metric against --qrels instead of giving them")
    g.add_argument("--qrels", default=None, help="ground truth of the weight search (or --reference-emb)")
    g.add_argument("--qrels-format", default="auto", help=QRELS_FORMAT_HELP)
    g.add_argument("--reference-emb", default=None, metavar="FILE",
                   help="a reference model's embeddings whose nearest neighbours are the ground truth of the search, "
                        "instead of --qrels (as `evaluate --reference-emb`: the Fusion page's search on such a "
                        "ground truth)")
    g.add_argument("--reference-ids", default=None, metavar="IDS", help="ids file of a .npy --reference-emb")
    g.add_argument("--reference-mode", default="tied", choices=list(REFERENCE_MODES),
                   help="tied: relevant = the reference's top-k at the k of --metric (default); fixed: its top "
                        "--reference-depth graded by position")
    g.add_argument("--reference-depth", type=int, default=None, metavar="N",
                   help="depth of the fixed reference ground truth (default the k of --metric)")
    g.add_argument("--aspect", default=None, metavar="ASPECT",
                   help="the ordered list of a ground truth with several (seed 001 JSON) the weights are tuned "
                        "against: its field name or a unique part of it (overall)")
    g.add_argument("--metric", default="ndcg@10", help="metric@k the search maximises (minimises where lower is "
                   "better: first_rel_rank; default ndcg@10)")
    g.add_argument("--step", type=float, default=FUSION_STEP,
                   help=f"grid step; 1/step an integer (default {FUSION_STEP})")
    g.add_argument("--trials", type=int, default=FUSION_TRIALS, help=f"random weight vectors (default {FUSION_TRIALS})")
    g.add_argument("--seed", type=int, default=SEED,
                   help=f"seed of the split, the random trials and --n-samples' query sample (default {SEED}, as the "
                        "Fusion page)")
    g.add_argument("--tune-fraction", type=float, default=None, metavar="F",
                   help="tune on a seeded share F of the queries, report on the rest")
    g.add_argument("--rel-threshold", type=int, default=1, help="grade >= this counts as relevant (default 1)")
    # the evaluation's query rules, as `evaluate`'s (the Fusion page searches with the Data page's settings)
    add_no_relevant(g)
    add_judged_only(g)
    add_n_samples(g, what="search on")
    add_sample_seed(g, seed_also="the split (--tune-fraction) and the random trials")
    g.add_argument("--search-out", default=None, metavar="CSV", help="write every trial (weights, value) as CSV")
    p.set_defaults(func=run)
    return p


def _weights(specs: list[str] | None) -> dict[str, float]:
    from ..errors import OptionError
    from .options import split_named

    weights = {}
    for spec in specs or []:
        name, value = split_named(spec, flag="--weight", what="NAME=W")
        try:
            weights[name] = float(value)
        except ValueError:
            raise OptionError(f"--weight {spec!r}: {value!r} is not a number") from None
    return weights


def run(args: argparse.Namespace) -> int:
    from ..errors import OptionError
    from ..fusion import canonical_method, canonical_norm, fuse
    from ..io import write_trec_run
    from .inputs import load_runs
    from .options import refuse_lone_sample_seed

    method, norm = canonical_method(args.method), canonical_norm(args.norm)
    name = args.name or method
    if len(args.run) < 2:
        raise OptionError(f"fuse needs two or more --run, got {len(args.run)}")
    if args.depth is not None and args.depth < 1:
        raise OptionError(f"--depth must be >= 1, got {args.depth}")
    if args.search is None:
        _search_only(args)  # (before reading the runs)
    else:
        refuse_lone_sample_seed(args)
    runs = load_runs(args.run)
    weights = _weights(args.weight)
    if args.search is not None:
        if weights:
            raise OptionError("give either --weight or --search, not both")
        if not args.qrels and not args.reference_emb:
            raise OptionError("--search needs --qrels (the judgments the weights are tuned on) or --reference-emb (a "
                              "reference model whose neighbours are the ground truth)")
        weights = _search(args, runs, method, norm)
    elif args.qrels:
        raise OptionError("--qrels is only used by --search")
    fused = fuse(runs, method=method, norm=norm, weights=weights or None, c=args.c, top_n=args.top_n,
                 ties=args.ties, name=name)
    written = write_trec_run(fused, args.out, tag=name, ties=args.ties, depth=args.depth)
    extra = f", c={args.c}" if method == "rrf" else ""
    print(f"wrote {args.out}: {fused.n_queries} queries, {written} documents "
          f"({method}, norm {norm}, weights {weights or 'all 1'}{extra}, top_n={args.top_n})")
    return 0


#: options of the weight search's evaluation: (dest, flag, default); without --search they would do nothing
_SEARCH_RULES = (("aspect", "--aspect", None), ("n_samples", "--n-samples", None), ("sample_seed", "--sample-seed", None),
                 ("judged_only", "--judged-only", False), ("no_relevant", "--no-relevant", "zero"),
                 ("reference_emb", "--reference-emb", None), ("reference_ids", "--reference-ids", None),
                 ("reference_mode", "--reference-mode", "tied"), ("reference_depth", "--reference-depth", None))


def _search_only(args: argparse.Namespace) -> None:
    """Refuse the weight search's evaluation options without ``--search`` (one line naming the option)."""
    from ..errors import OptionError

    for dest, flag, default in _SEARCH_RULES:
        if getattr(args, dest, default) != default:
            raise OptionError(f"{flag} is only used by --search (the queries the weights are tuned on)")


def _search_qrels(args: argparse.Namespace):
    """The judgments searched on: ``--qrels``, or its ``--n-samples`` queries drawn as ``evaluate`` draws them
    (:func:`evalcore.retrieval.sample_queries` with ``--sample-seed``, else ``--seed``; in the drawn order)."""
    from ..io import load_qrels
    from .inputs import warn_sample_above
    from .options import sample_seed

    if args.reference_emb:
        return _reference_qrels(args)
    qrels = load_qrels(args.qrels, format=args.qrels_format, aspect=args.aspect)
    if not args.n_samples:
        return qrels
    from ..retrieval import sample_queries

    warn_sample_above(args.n_samples, len(qrels.query_ids), "queries of the ground truth")
    picked = qrels.query_ids[sample_queries(qrels.query_ids, args.n_samples, seed=sample_seed(args))]
    return qrels.subset(list(picked))


def _reference_qrels(args: argparse.Namespace):
    """The judgments of a reference model's neighbours the search scores ``--metric`` on, as ``evaluate
    --reference-emb`` judges it (:func:`evalcore.embedding_runs.reference_ground_truth`): in the tied mode the
    reference's top-k at the metric's k, in the fixed mode its top ``--reference-depth`` graded by position; over its
    ``--n-samples`` items drawn as ``evaluate`` draws them (``--sample-seed``, else ``--seed``)."""
    from ..embedding_runs import reference_ground_truth
    from ..errors import OptionError
    from ..io import load_embeddings
    from ..measures import parse_measure
    from .inputs import warn_sample_above
    from .options import sample_seed

    for dest, flag in (("qrels", "--qrels"), ("aspect", "--aspect"), ("judged_only", "--judged-only")):
        if getattr(args, dest, None):
            raise OptionError(f"--reference-emb is the ground truth of the search: {flag} does not apply to it"
                              + (" (a reference model's neighbours judge nothing else)" if dest == "judged_only"
                                 else ""))
    if args.reference_depth is not None and args.reference_mode != "fixed":
        raise OptionError("--reference-depth is the depth of --reference-mode fixed")
    k = parse_measure(args.metric).k
    if not k and args.reference_mode == "tied":
        raise OptionError(f"--metric {args.metric}: with --reference-emb in the tied mode (relevant = the reference's "
                          "top-k) the metric needs a cutoff, e.g. ndcg@10")
    reference = load_embeddings(args.reference_emb, ids_src=args.reference_ids, mmap=True)
    if args.n_samples:
        warn_sample_above(args.n_samples, len(reference), "items of the reference")
    gt = reference_ground_truth(reference, k=[k or args.reference_depth or 10], mode=args.reference_mode,
                                depth=args.reference_depth, n_samples=args.n_samples, seed=sample_seed(args))
    return gt.fixed if gt.mode == "fixed" else gt.by_k[int(k)]


def _value(metric: str, value: float) -> str:
    """A searched mean as printed: gm_map's is the mean of ln(AP), said so, with the geometric mean it gives."""
    import math

    from ..metrics import metric_base

    if metric_base(metric) == "gm_map" and math.isfinite(value):
        return f"{value:.4f} (mean of ln AP; geometric mean AP {math.exp(value):.4f})"
    return f"{value:.4f}"


def _search(args: argparse.Namespace, runs: dict, method: str, norm: str) -> dict[str, float]:
    from pathlib import Path

    from ..fusion_search import search_weights

    qrels = _search_qrels(args)
    res = search_weights(qrels, runs, metric=args.metric, method=method, norm=norm, strategy=args.search,
                         step=args.step, n_trials=args.trials, seed=args.seed, tune_fraction=args.tune_fraction,
                         c=args.c, top_n=args.top_n, ties=args.ties, rel_threshold=args.rel_threshold,
                         no_relevant=args.no_relevant, judged_only=args.judged_only)
    shown = ", ".join(f"{n}={w:.4g}" for n, w in res.weights.items())
    print(f"weight search ({res.strategy}, {len(res.trials)} trials, seed {res.seed}) on {res.metric}: {shown}")
    if res.test_queries:
        print(f"{res.metric}: {_value(res.metric, res.value_tune)} on the {len(res.tune_queries)} tuning queries, "
              f"{_value(res.metric, res.value_test)} on the {len(res.test_queries)} held-out queries")
    else:
        print(f"{res.metric}: {_value(res.metric, res.value_tune)} on the {len(res.tune_queries)} queries tuned on "
              "(optimistic)")
    if args.search_out:
        Path(args.search_out).parent.mkdir(parents=True, exist_ok=True)
        res.trials.to_csv(args.search_out, index=False, float_format="%.17g")
        print(f"wrote {args.search_out}")
    return res.weights

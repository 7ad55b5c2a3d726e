"""``evalcore compare``: paired significance tests between runs, corrected for multiple comparisons."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..defaults import SEED, TEST_CI_METHOD, TEST_RESAMPLES, TEST_RESAMPLING
from .options import (
    QRELS_FORMAT_HELP,
    add_embedding_options,
    add_judged_only,
    add_n_samples,
    add_no_relevant,
    add_sample_seed,
    add_strict_option,
    progress_unit,
    refuse_lone_sample_seed,
    search_backend,
)
from .options import (
    p_text as _p_text,
)

__all__ = ["register", "run"]


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="paired significance tests between runs")
    p.add_argument("--qrels", default=None,
                   help="ground truth file (TREC qrels, BEIR TSV, ...); required unless --per-query or --reference-emb")
    p.add_argument("--qrels-format", default="auto", help=QRELS_FORMAT_HELP)
    p.add_argument("--run", action="append", metavar="[NAME=]FILE",
                   help="a ranked run (repeatable; two or more runs; a bare FILE is named by its TREC run tag, else its file stem)")
    p.add_argument("--per-query", default=None,
                   help="a per_query.csv written by `evaluate` instead of qrels+runs (with --n-samples: N of its queries, "
                        "drawn as from the ground truth: the same sample as from the run files when the file holds "
                        "every query, i.e. was written without --n-samples and without --no-relevant skip)")
    p.add_argument("--metric", nargs="+", default=["ndcg@10"], help="metric@k to compare (several allowed; default ndcg@10)")
    p.add_argument("--runs", nargs="+", action="extend", default=None, metavar="NAME",
                   help="the runs compared, in this order (default: every run, sorted by name): each pair (A, B) "
                        "has A listed before B (diff = B - A), and the correction, the shared resamples and --hsd "
                        "cover these runs only; with --per-query or --run/--emb/--fuse; repeatable, one name a word "
                        "(quote names with spaces; --runs=NAME for a name starting with '-'). The dashboard's Compare "
                        "page gives its runs in its order")
    p.add_argument("--baseline", default=None,
                   help="compare every run with this one (default: all pairs); with --runs, a baseline not listed "
                        "there is compared with each listed run; needed by --by-domain")
    p.add_argument("--test", default="t", choices=["t", "wilcoxon", "permutation"],
                   help="paired test over the queries: t (paired t-test, default), wilcoxon (signed-rank), "
                        "permutation (sign flips)")
    p.add_argument("--correction", default="holm", choices=["holm", "bonferroni", "bh", "none"],
                   help="multiple-comparison correction over every pair and metric tested (default holm; "
                        "bh controls the false discovery rate)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--n-resamples", type=int, default=TEST_RESAMPLES,
                   help=f"sign flips of the permutation test and resamples of the bootstrap CI (default "
                        f"{TEST_RESAMPLES}; the dashboard's pages use 1000, see --resampling)")
    p.add_argument("--seed", type=int, default=SEED,
                   help=f"seed for --n-samples and randomised tests (default {SEED}, as the dashboard and the Python API)")
    add_sample_seed(p, seed_also="the randomised tests and intervals (--test permutation, the bootstrap)")
    p.add_argument("--ci-method", default=TEST_CI_METHOD, choices=["BCa", "percentile", "basic"],
                   help=f"bootstrap interval of each difference (default {TEST_CI_METHOD})")
    p.add_argument("--resampling", default=TEST_RESAMPLING, choices=["per_pair", "shared"],
                   help=f"resamples of the intervals: each pair its own (default {TEST_RESAMPLING}) or the same for "
                        "every pair (shared, with --ci-method percentile: the dashboard's Compare page, with "
                        "--n-resamples 1000)")
    p.add_argument("--ties", default="trec", help="order of equal scores: trec (default; trec_eval's, by descending doc id), "
                        "docid_asc (ascending doc id), input (the file's order)")
    p.add_argument("--rel-threshold", type=int, default=1, help="grade >= this counts as relevant (default 1)")
    add_no_relevant(p)
    add_judged_only(p)
    add_n_samples(p, what="compare on")
    p.add_argument("--out", default=None, help="write the comparison table as CSV (with --by-domain: its rows per "
                                                  "domain, the column domain first; (none): no domain)")
    p.add_argument("--hsd", default=None, choices=["paired", "independent"],
                   help="also Tukey's HSD over all runs per metric@k: paired by query (two-way ANOVA) or "
                        "independent groups (as ranx)")
    p.add_argument("--hsd-out", default=None, metavar="CSV", help="write the Tukey HSD table as CSV")
    add_strict_option(p)
    from .domains import add_domain_options

    add_domain_options(p, command="compare")
    add_embedding_options(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from .._lazy import pd
    from ..errors import OptionError
    from ..measures import parse_measure
    from ..stats import compare_many
    from .inputs import evaluate_from_args, load_runs, warn_partial_coverage
    from .progress import ProgressBar

    refuse_lone_sample_seed(args)
    if args.hsd_out and not args.hsd:
        raise OptionError("--hsd-out needs --hsd paired|independent")
    if args.resampling == "shared" and args.ci_method != "percentile":
        raise OptionError(f"--resampling shared gives percentile intervals: add --ci-method percentile "
                          f"(got --ci-method {args.ci_method})")
    _check_cutoffs(args.metric)
    domains = _domain_options(args)
    aspects: dict = {}
    chosen = _check_chosen(args.runs)
    if args.per_query:
        from ..io.per_query import read_per_query_csv

        # round-trip parsing: the file's 17 significant digits give back the very values (pandas' default
        # parser can move some by one ulp, and tied differences would stop being ties in the Wilcoxon ranks)
        table = _sampled(read_per_query_csv(args.per_query), args)
        where = str(args.per_query)
        if domains is not None:
            table = domains.label_table(table, name=Path(where).name)
    else:
        if not args.qrels and not getattr(args, "reference_emb", None):
            raise OptionError("give --qrels and --run ..., or --per-query FILE")
        ks = sorted({m.k for m in map(parse_measure, args.metric) if m.k}) or [10]  # k 0: @all
        where = "the runs given (--run, --emb, --fuse)"
        details: dict = {}
        with search_backend(args) as backend:
            ev, runs, _ = evaluate_from_args(args, metrics=args.metric, k=ks, load_runs=load_runs,
                                             progress=ProgressBar("ranking", unit=progress_unit(args)),
                                             details=details, backend=backend,
                                             check_inputs=lambda read: _check_names(chosen, args.baseline,
                                                                                    _input_names(args, read),
                                                                                    where=where),
                                             only=_evaluated(chosen, args.baseline), domains=domains)
        warn_partial_coverage(ev, runs, details)
        table, aspects = ev.table, dict(ev.settings.get("aspects") or {})
    every = sorted(set(table["run"].astype(str)))
    if len(every) < 2:
        raise OptionError(f"compare needs at least two runs, got {len(every)}: {every}")
    names = every if chosen is None else _select(chosen, every, where=where)
    if args.baseline is not None and args.baseline not in every:
        raise OptionError(f"--baseline {args.baseline!r} is not a run; the runs are {every}")
    if args.baseline is not None and args.baseline not in names:  # (--runs without it: tested against each)
        names = [args.baseline, *names]
    if len(names) < 2:
        raise OptionError(f"compare needs at least two runs, got {len(names)}: {names}")
    pairs = _same_aspect_pairs(names, aspects, args.baseline)
    mk = []
    for text in args.metric:
        m = parse_measure(text)
        mk.append((m.base, 0 if m.k is None else m.k))
    if args.by_domain:  # the baseline against each run, within each domain (the Domains page's significance)
        from .domains import compare_per_domain

        tested = names if pairs is None else [n for n in names if n == args.baseline or (args.baseline, n) in pairs]
        res = compare_per_domain(table, metrics_k=mk, baseline=args.baseline, runs=tested, args=args)
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            res.to_csv(args.out, index=False, float_format="%.17g")
            print(f"wrote {args.out}")
        return 0
    res = compare_many(table, metrics_k=mk, runs=None if chosen is None else names,
                       baseline=args.baseline if pairs is None else None, pairs=pairs,
                       test=args.test, correction=args.correction, alpha=args.alpha, n_resamples=args.n_resamples,
                       seed=args.seed, ci_method=args.ci_method, resampling=args.resampling)
    cols = ["metric", "k", "run_a", "run_b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "effect_size",
            "p_value", "p_adjusted", "significant", "wins", "ties", "losses", "note"]
    show = res[[c for c in cols if c in res.columns]].copy()
    for c in ("p_value", "p_adjusted"):  # a p-value is never printed as 0 (the CSV keeps every digit)
        if c in show.columns:
            show[c] = [_p_text(p) for p in show[c]]
    show = _k_shown(show)
    with pd.option_context("display.max_rows", 500, "display.max_columns", 50, "display.width", 200,
                           "display.float_format", "{:.4f}".format):
        print(f"Paired {args.test} test, correction {args.correction} across {len(res)} "
              f"comparison{'' if len(res) == 1 else 's'}, alpha {args.alpha}")
        print("diff = mean_b - mean_a (run_b minus run_a, paired by query; > 0: run_b is better for a metric "
              "where higher is better); wins / ties / losses = queries where run_b is above / equal to / below run_a")
        print(show.to_string(index=False))
    hsd = _hsd(args, table, mk, names) if args.hsd else None
    for path, frame in ((args.out, res), (args.hsd_out, hsd)):
        if path and frame is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            frame.to_csv(path, index=False, float_format="%.17g")
            print(f"wrote {path}")
    return 0


def _domain_options(args: argparse.Namespace):
    """``--by-domain``'s options checked before anything is read (it needs ``--baseline``; ``--hsd`` is not per
    domain; ``--domains`` only serves it), and the domains' source (:func:`evalcore.cli.domains.domain_source`)."""
    from ..errors import OptionError
    from .domains import domain_source

    if not args.by_domain:
        if args.domains:
            raise OptionError("--domains gives the domains of --by-domain: add --by-domain (and --baseline NAME)")
        return None
    if args.baseline is None:
        raise OptionError("--by-domain tests each run against one baseline within each domain: give --baseline NAME")
    if args.hsd:
        raise OptionError("--hsd is not computed per domain: leave it out with --by-domain (or run compare again "
                          "without --by-domain)")
    if args.min_queries < 2:
        raise OptionError(f"--min-queries must be >= 2 (a paired test needs 2 queries), got {args.min_queries}")
    return domain_source(args)


def _sampled(table, args: argparse.Namespace):
    """``--per-query`` with ``--n-samples N``: the rows of N of the table's queries, drawn as ``evaluate
    --n-samples N`` draws them (:func:`evalcore.retrieval.sampling.sample_queries` over the query ids in the order
    they first appear, seeded by ``--sample-seed``, else ``--seed``). A table ``evaluate --out`` wrote without a
    sample (and without ``--no-relevant skip``) lists every query of the ground truth in the ground truth's order,
    so the sample (hence every number) is that of ``compare --qrels ... --run ...`` with the same options; a table
    lacking queries gets a sample of its own queries. Without ``--n-samples``: the table."""
    from ..retrieval.sampling import sample_queries
    from .inputs import warn_sample_above
    from .options import sample_seed

    if not args.n_samples:
        return table
    ids = table["query_id"].astype(str).unique()
    warn_sample_above(args.n_samples, len(ids), f"queries of {args.per_query}")
    picked = set(ids[sample_queries(ids, args.n_samples, seed=sample_seed(args))].tolist())
    return table[table["query_id"].astype(str).isin(picked)].reset_index(drop=True)


def _k_shown(frame):
    """The printed table's cutoffs as ``evaluate`` prints them: ``all`` for the whole list (k 0 in the table and the
    CSV; a printed 0 read as a cutoff of 0), else the number."""
    if "k" not in frame.columns:
        return frame
    return frame.assign(k=["all" if int(k) == 0 else str(int(k)) for k in frame["k"]])


def _check_chosen(chosen: list[str] | None) -> list[str] | None:
    """``--runs`` as given (None: not given), checked before anything is read: no name twice."""
    from ..errors import OptionError

    if chosen is None:
        return None
    twice = sorted({n for n in chosen if chosen.count(n) > 1})
    if twice:
        raise OptionError(f"--runs names {', '.join(map(repr, twice))} twice: give each run once")
    return list(chosen)


def _select(chosen: list[str] | None, available: list[str], *, where: str) -> list[str]:
    """The runs of ``--runs`` in its order (``available``: without it), each one of ``available`` (the runs of
    ``where``); an unknown name is one error line naming it and listing the runs there."""
    from ..errors import OptionError

    if chosen is None:
        return available
    have = set(available)
    unknown = [n for n in chosen if n not in have]
    if unknown:
        named = f"run named {unknown[0]!r}" if len(unknown) == 1 else f"runs named {', '.join(map(repr, unknown))}"
        raise OptionError(f"--runs: no {named} in {where}; the runs are {', '.join(map(repr, sorted(have)))}")
    return chosen


def _check_names(chosen: list[str] | None, baseline: str | None, available: list[str], *, where: str) -> None:
    """``--runs`` and ``--baseline`` checked against every run given, before any is ranked or evaluated."""
    from ..errors import OptionError

    _select(chosen, available, where=where)
    if baseline is not None and baseline not in available:
        raise OptionError(f"--baseline {baseline!r} is not a run; the runs are {sorted(available)}")


def _evaluated(chosen: list[str] | None, baseline: str | None) -> list[str] | None:
    """The runs evaluated: those of ``--runs`` and the baseline (None: every run given)."""
    if chosen is None:
        return None
    return chosen if baseline is None or baseline in chosen else [baseline, *chosen]


def _input_names(args: argparse.Namespace, read) -> list[str]:
    """The names of every run the command evaluates, from its options and its run files (before any ranking)."""
    from .options import emb_name, parse_fuse_spec

    emb = [emb_name(s) for s in getattr(args, "emb", None) or []]
    fused = [parse_fuse_spec(s)[0] for s in getattr(args, "fuse", None) or []]
    return [*read.runs, *emb, *fused]


def _same_aspect_pairs(names: list[str], aspects: dict, baseline: str | None) -> list[tuple[str, str]] | None:
    """The pairs to test when the runs are scored against different ground-truth aspects: only runs of one
    aspect (a paired difference across two ground truths means nothing), with a warning naming what is
    left out; None when every run has the same ground truth."""
    from ..errors import OptionError, warn

    of = {n: aspects.get(n) for n in names}
    if len(set(of.values())) < 2:
        return None
    if baseline is not None:
        pairs = [(baseline, b) for b in names if b != baseline and of[b] == of[baseline]]
        others = [b for b in names if b != baseline and of[b] != of[baseline]]
    else:
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if of[a] == of[b]]
        others = []
    groups = {}
    for n in names:
        groups.setdefault(of[n], []).append(n)
    described = "; ".join(f"{a or '(default)'}: {', '.join(g)}" for a, g in groups.items())
    if not pairs:
        raise OptionError(f"no two runs are scored against the same ground-truth aspect ({described}); "
                          "give runs of one aspect, or the same --aspect to every run")
    warn("the runs are scored against different ground-truth aspects (" + described + "): only runs of one "
         "aspect are compared" + (f"; not compared with the baseline: {', '.join(others)}" if others else ""))
    return pairs


def _hsd(args: argparse.Namespace, table, mk: list[tuple[str, int]], runs: list[str]):
    """Tukey's HSD of ``runs`` (every run, or those of ``--runs``) on each metric@k (family = the pairs of one
    metric@k), printed."""
    from .._lazy import pd
    from ..stats import tukey_hsd

    hsd = pd.concat([tukey_hsd(table, metric=m, k=k, runs=runs, design=args.hsd, alpha=args.alpha) for m, k in mk],
                    ignore_index=True)
    cols = [c for c in ("metric", "k", "run_a", "run_b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high",
                        "statistic", "p_value", "significant", "note") if c in hsd.columns]
    with pd.option_context("display.max_rows", 500, "display.max_columns", 50, "display.width", 200,
                           "display.float_format", "{:.4f}".format):
        print(f"\nTukey's HSD ({args.hsd} design), family-wise alpha {args.alpha} per metric@k; "
              "statistic = studentized range q")
        print(_k_shown(hsd[cols]).to_string(index=False))
    return hsd


def _check_cutoffs(metrics: list[str]) -> None:
    """Refuse, before anything is read or ranked, a ``--metric`` that needs a cutoff but names none: compare has no
    ``--k`` (a bare ``mrr`` was evaluated at k 10 and then looked up over the whole list, which failed with
    "no row for 'mrr' in the table")."""
    from ..errors import OptionError
    from ..measures import parse_measure
    from ..metrics import CURVES, K_FREE

    for text in metrics:
        m = parse_measure(text)
        if m.k is None and m.base not in K_FREE and m.base not in CURVES:
            raise OptionError(f"--metric {text!r} needs a cutoff (compare has no --k): write {text}@K, e.g. "
                              f"{text}@10, or {text}@all for the whole list")

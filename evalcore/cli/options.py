"""Command-line options shared by the subcommands, and the parsing of their values.

:func:`add_eval_options` (ground truth, runs, metrics, k, ties...) and :func:`add_embedding_options`:
embeddings as runs, aspects, a reference model as ground truth and fusion.

Added to ``evaluate`` and ``compare`` by :func:`add_embedding_options`:

``--emb [NAME=]DOCS[,QUERIES]`` (repeatable)
    Rank by exact cosine top-k. One file: item-to-item (the ground-truth
    queries found among its ids, each query's own item excluded; seeds
    000/001). Two files: the queries file against the corpus file. Any layout
    :func:`evalcore.io.load_embeddings` reads (``.npy`` files are
    memory-mapped); DOCS (or QUERIES) may also be a directory or a glob of
    shards (:mod:`evalcore.io.shards`: ``.npy`` with ``X_ids.txt`` beside,
    or ``.npz`` with ``ids`` and ``embeddings``), never loaded whole. Without
    ``NAME=``, the run is named after the DOCS file (:func:`emb_name`), and
    ``evaluate --workspace`` takes the embedding run already stored from these
    very files under its stored name (see :mod:`evalcore.cli.evaluate`).
``--emb-ids NAME=IDS[,QUERY_IDS]``
    Id files of ``.npy`` inputs when they are not ``X_ids.txt``/``X.ids.txt``
    beside them.
``--emb-depth N``
    Ranked depth of embedding runs (default: max(max k, 100)).
``--aspect [NAME=]ASPECT`` (repeatable)
    Ordered-list ground truth (seed 001 JSON): the aspect a run is evaluated
    against (``--aspect anchor=overall --aspect content=content``...); a bare
    ASPECT applies to every run without one.
``--reference-emb FILE`` (+ ``--reference-ids``, ``--reference-mode tied|fixed``,
``--reference-depth N``, ``--agreement-pairs [N]``)
    A reference model's neighbours as the ground truth instead of ``--qrels``
    (seed 000); ``--agreement-pairs`` adds Spearman/MAE of pair similarities
    per item-to-item model, printed and in the report's metadata.
``--fuse NAME=RUN1:W1,RUN2:W2,...`` (repeatable) with ``--fuse-method``, ``--fuse-norm``, ``--rrf-c``,
``--rrf-top-n``, ``--rrf-ties``
    A fusion (:func:`evalcore.fusion.fuse`; weighted RRF by default) of runs named
    before it (files, embedding runs or earlier fusions).
``--diversity`` (+ ``--diversity-alpha A``)
    ILD@k and α-nDCG@k (seed 002; α = A, default 0.5) for embedding runs (they need vectors).
``--block-mb MB``
    Working-set bound of the exact top-k (default 256).
``--dask ADDRESS`` (+ ``--dask-timeout SECONDS``)
    The exact top-k of sharded embeddings runs on a Dask cluster: a scheduler
    address (``tcp://host:8786``) or ``local:N`` (N local worker processes,
    started and stopped by the command); needs ``pip install -e '.[dask]' in evalcore's folder``.
    Same runs as without it.

So seed 001 — three spaces, each against its aspect, plus their weighted RRF
against ``overall`` — is one command::

    evalcore evaluate --qrels gt.json --ties docid_asc --k 5 \\
        --metrics recall mrr ndcg_exp \\
        --emb anchor=anchor.json --emb content=content.json --emb vibe=vibe.json \\
        --aspect anchor=overall --aspect content=content --aspect vibe=vibes \\
        --fuse combined=anchor:0.5,content:0.3,vibe:0.2 --aspect combined=overall --out out/
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..defaults import SEED, SIMILARITY_PAIRS
from ..embedding_runs import DEFAULT_BLOCK_BYTES, REFERENCE_MODES
from ..errors import OptionError
from ..io.detect import QRELS_FORMATS

__all__ = [
    "QRELS_FORMAT_HELP", "add_eval_options", "add_sample_seed", "refuse_lone_sample_seed", "sample_seed", "add_embedding_options", "add_judged_only", "add_no_relevant", "add_n_samples", "split_named", "file_exists", "parse_emb_spec", "emb_name", "split_emb_spec", "parse_fuse_spec",
    "parse_aspects", "EmbSpec", "add_dask_options", "search_backend", "progress_unit", "add_strict_option", "p_text",
]


#: help of every ``--qrels-format``: the formats it takes
QRELS_FORMAT_HELP = f"ground-truth format instead of detecting it: {', '.join(QRELS_FORMATS)} (default auto)"


def split_named(spec: str, *, flag: str, what: str = "NAME=FILE", bare_ok: bool = False,
                exists: Callable[[str], bool] | None = None) -> tuple[str | None, str]:
    """``NAME=VALUE`` -> (NAME, VALUE), both stripped; a bare VALUE -> (None, VALUE) when ``bare_ok``.

    With an ``exists`` test of the VALUE (a file), the first split at an ``=`` whose VALUE
    exists wins, so a name may hold ``=`` (``a=b=run.trec``) and so may a path
    (``dense=runs/lr=0.1/run.trec``; bare, with ``bare_ok``); when none exists, the first ``=``
    splits (and the missing file is reported by the reader).
    """
    if "=" not in spec:
        if bare_ok and spec.strip():
            return None, spec.strip()
        raise OptionError(f"{flag} expects {what}, got {spec!r}")
    splits = [(spec[:i].strip(), spec[i + 1:].strip()) for i, ch in enumerate(spec) if ch == "="]
    name, value = splits[0]
    if exists is not None and not (name and value and exists(value)):
        found = [(n, v) for n, v in splits if n and v and exists(v)]
        if found:
            name, value = found[0]
        elif bare_ok and exists(spec.strip()):
            return None, spec.strip()
    if not name or not value:
        raise OptionError(f"{flag} expects {what}, got {spec!r}")
    return name, value


def counting(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer >= ``minimum`` (argparse names the option when it is not)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def file_exists(value: str) -> bool:
    """The ``exists`` test of :func:`split_named` for FILE[,FILE] values: the first file is there."""
    import os

    return os.path.exists(value.split(",")[0].strip())


def add_judged_only(p: argparse.ArgumentParser) -> None:
    """``--judged-only`` / ``-J`` (trec_eval's flag): evaluate only the judged retrieved documents."""
    p.add_argument("--judged-only", "-J", action="store_true",
                   help="remove retrieved documents without a judgment (grade >= 0) before scoring (trec_eval -J)")


def add_strict_option(p: argparse.ArgumentParser) -> None:
    """``--strict``: coverage problems (:data:`evalcore.errors.COVERAGE_PROBLEMS`) stop the command
    (:func:`evalcore.cli.main.main` runs it inside :func:`evalcore.errors.strict_coverage`)."""
    p.add_argument("--strict", action="store_true",
                   help="stop with an error (exit status 2; nothing written: no --out file, nothing recorded) "
                        "instead of a warning when the ground truth is not fully covered: a ground-truth query "
                        "that a run does not answer or that is not in an embedding run's (query) embeddings, a "
                        "relevant document not in an embedding run's corpus, reference ids absent from a model "
                        "(--agreement-pairs). Other warnings (zero vectors, ties, depth, sampling...) stay warnings")


def add_eval_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--qrels", default=None,
                   help="ground truth file (TREC qrels, BEIR TSV, ...); required unless --reference-emb")
    p.add_argument("--qrels-format", default="auto", help=QRELS_FORMAT_HELP)
    p.add_argument("--run", action="append", metavar="[NAME=]FILE",
                   help="a ranked run (repeatable; a bare FILE is named by its TREC run tag, else its file stem; "
                        "with --workspace, a file whose very bytes the workspace holds as a run, e.g. uploaded on the "
                        "dashboard under its file stem, is that run: its name, not stored again)")
    p.add_argument("--metrics", nargs="+", default=["ndcg", "recall", "mrr", "map"], metavar="NAME",
                   help="metric names, e.g. ndcg recall(rel=2) P@5 map@all bpref, or trec_eval's P.5,10 "
                        "official all_trec (see `evalcore metrics`; default ndcg recall mrr map)")
    p.add_argument("--k", nargs="+", type=int, default=[10], metavar="K", help="cutoffs (default 10)")
    p.add_argument("--ties", default="trec", help="order of equal scores: trec (default; trec_eval's, by descending doc id), "
                        "docid_asc (ascending doc id), input (the file's order)")
    p.add_argument("--rel-threshold", type=int, default=1, help="grade >= this counts as relevant (default 1)")
    add_no_relevant(p)
    add_judged_only(p)
    add_n_samples(p, what="evaluate")
    p.add_argument("--seed", type=int, default=SEED,
                   help=f"seed of --n-samples' query sample, --agreement-pairs' item pairs and the resamples of "
                        f"--ci-method bootstrap and --by-domain (default {SEED}, as the dashboard and the Python API)")
    add_sample_seed(p, seed_also="the intervals (--ci-method bootstrap, --by-domain) and --agreement-pairs' item pairs")
    add_strict_option(p)


def add_no_relevant(p) -> None:
    """``--no-relevant zero|skip``: the rule for queries without a relevant document (``evaluate``'s, shared)."""
    p.add_argument("--no-relevant", default="zero", choices=["zero", "skip"],
                   help="queries without relevant docs: score them (zero, trec_eval; default) or skip them")


def add_n_samples(p, *, what: str) -> None:
    """``--n-samples N``: a random sample of N ground-truth queries (drawn with :func:`sample_seed`'s seed, as
    ``evaluate``'s and the dashboard's query sample); ``what``: the verb of the help (``evaluate``, ``compare``...)."""
    p.add_argument("--n-samples", type=counting(1), default=None, help=f"{what} a random sample of N qrels queries")


def add_sample_seed(p: argparse.ArgumentParser, *, seed_also: str | None) -> None:
    """``--sample-seed``: the seed of ``--n-samples``' query sample alone (default: ``--seed``).

    ``seed_also``: what else the command's ``--seed`` seeds (``"the random trials"``), named by the help as what a
    sample drawn with one seed may get drawn with another; None where ``--seed`` seeds nothing else. Without
    ``--n-samples`` the option would do nothing: :func:`refuse_lone_sample_seed`.
    """
    if seed_also is None:
        text = ("seed of --n-samples' query sample (default: --seed; the two are the same here, where nothing else "
                "is drawn)")
    else:
        text = (f"seed of --n-samples' query sample only (default: --seed), so that a sample drawn with one seed "
                f"gets {seed_also} drawn with another, as on the dashboard (its query sample has the Data page's "
                "seed)")
    p.add_argument("--sample-seed", type=int, default=None, metavar="SEED", help=text + "; needs --n-samples")


def refuse_lone_sample_seed(args: argparse.Namespace, *, or_else: str = "") -> None:
    """Refuse ``--sample-seed`` without ``--n-samples`` (one line naming both): it seeds the sample alone, so
    it would be silently ignored. ``or_else``: where else the command uses it (``" or --workspace DIR (...)"``)."""
    if getattr(args, "sample_seed", None) is not None and not getattr(args, "n_samples", None):
        raise OptionError(f"--sample-seed seeds the query sample of --n-samples only: give --n-samples N{or_else}, "
                          "or leave --sample-seed out")


def sample_seed(args: argparse.Namespace) -> int:
    """The seed of the query sample: ``--sample-seed``, else ``--seed``."""
    chosen = getattr(args, "sample_seed", None)
    return int(getattr(args, "seed", SEED) if chosen is None else chosen)



def add_embedding_options(parser: argparse.ArgumentParser) -> None:
    """Add the embedding, aspect, reference and fusion options to a sub-command's parser."""
    g = parser.add_argument_group("embeddings, aspects, reference model, fusion")
    g.add_argument("--emb", action="append", metavar="[NAME=]DOCS[,QUERIES]",
                   help="embedding run by exact cosine top-k: one file = item-to-item (own item excluded), "
                        "two = queries against a corpus (repeatable); without NAME, named after the DOCS file (as "
                        "the dashboard names it), and with --workspace the run already stored from these very files")
    g.add_argument("--emb-ids", action="append", metavar="NAME=IDS[,QUERY_IDS]",
                   help="id files (one id per line) of .npy embeddings not named X_ids.txt / X.ids.txt")
    g.add_argument("--emb-depth", type=int, default=None, metavar="N",
                   help="ranked depth of embedding runs (default max(max k, 100))")
    g.add_argument("--aspect", action="append", metavar="[NAME=]ASPECT",
                   help="ground truth with several aspects (ordered lists): aspect a run is evaluated against; "
                        "a bare ASPECT applies to all other runs")
    g.add_argument("--reference-emb", default=None, metavar="FILE",
                   help="reference embeddings whose nearest neighbours are the ground truth (distillation), "
                        "instead of --qrels")
    g.add_argument("--reference-ids", default=None, metavar="IDS", help="ids file of a .npy --reference-emb")
    g.add_argument("--reference-mode", default="tied", choices=list(REFERENCE_MODES),
                   help="tied: at each k relevant = the reference's top-k (default); "
                        "fixed: one top-DEPTH graded by position")
    g.add_argument("--reference-depth", type=int, default=None, metavar="N",
                   help="depth of the fixed reference ground truth (default max k)")
    g.add_argument("--agreement-pairs", type=int, nargs="?", default=0, const=SIMILARITY_PAIRS, metavar="N",
                   help="with --reference-emb: Spearman and MAE of N sampled pair similarities per model "
                        f"(N default {SIMILARITY_PAIRS}, drawn with --seed, as the dashboard's Agreement page; "
                        "printed; with --out also in report.json)")
    g.add_argument("--fuse", action="append", metavar="NAME=RUN1:W1,RUN2:W2,...",
                   help="add a fusion of runs named before (repeatable; by default weighted RRF; weights only "
                        "for rrf and wsum)")
    g.add_argument("--fuse-method", default="rrf", metavar="METHOD",
                   help="method of every --fuse: rrf (default), combsum, combmnz, wsum, isr, bordafuse "
                        "(as `evalcore fuse --method`)")
    g.add_argument("--fuse-norm", default="none", metavar="NORM",
                   help="score normalisation of --fuse before combsum/combmnz/wsum: none (default), min-max, max, "
                        "sum, z-score, rank")
    g.add_argument("--rrf-c", type=float, default=60.0, help="RRF constant c (default 60)")
    g.add_argument("--rrf-top-n", type=int, default=None, metavar="N",
                   help="fuse only the top N of each list (absent = contribution 0), whatever the method")
    g.add_argument("--rrf-ties", default="docid_asc",
                   help="tie rule giving the input ranks of --fuse (default docid_asc, as embedding runs rank)")
    g.add_argument("--diversity", action="store_true",
                   help="add ILD@k and alpha-nDCG@k for embedding runs")
    g.add_argument("--diversity-alpha", type=float, default=None, metavar="A",
                   help="with --diversity: the alpha of alpha-nDCG in [0, 1] (default 0.5; 1 = plain nDCG, "
                        "0 = only novel items count)")
    g.add_argument("--block-mb", type=int, default=DEFAULT_BLOCK_BYTES // 2**20, metavar="MB",
                   help="working-set bound of the exact top-k in MiB (default 256)")
    add_dask_options(g)


def diversity_alpha(args: argparse.Namespace) -> float:
    """``--diversity-alpha`` (default 0.5), checked before any work: a number in [0, 1], given with ``--diversity``."""
    a = getattr(args, "diversity_alpha", None)
    if a is None:
        return 0.5
    if not getattr(args, "diversity", False):
        raise OptionError("--diversity-alpha sets the alpha of alpha-nDCG, which only --diversity computes: "
                          "add --diversity")
    if not 0.0 <= a <= 1.0:  # NaN fails too
        raise OptionError(f"--diversity-alpha must be in [0, 1], got {a!r}")
    return float(a)


def add_dask_options(p) -> None:
    """``--dask ADDRESS`` and ``--dask-timeout`` (shared with ``evaluate`` and ``compare``)."""
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="search on a Dask cluster: a scheduler address (tcp://host:8786) or local:N "
                        "(N local worker processes); needs pip install -e '.[dask]' in evalcore's folder")
    p.add_argument("--dask-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="seconds to wait for the Dask scheduler and its first worker (default 10)")


def search_backend(args: argparse.Namespace):
    """A context manager giving the ``backend=`` of the search: ``None``, or a Dask client for ``--dask``."""
    import contextlib

    if not getattr(args, "dask", None):
        return contextlib.nullcontext(None)
    from ..retrieval.dask_backend import dask_client, import_distributed

    import_distributed()
    return dask_client(args.dask, timeout=args.dask_timeout)


def progress_unit(args: argparse.Namespace) -> str:
    """What the progress bar counts: Dask tasks with ``--dask``, else blocks."""
    return "tasks" if getattr(args, "dask", None) else "blocks"


# ---------------------------------------------------------------------------- specs
@dataclass(frozen=True)
class EmbSpec:
    name: str
    docs: str
    queries: str | None = None
    docs_ids: str | None = None
    queries_ids: str | None = None


#: what an ``--emb`` spec is, as its errors say
EMB_WHAT = "[NAME=]DOCS_FILE[,QUERIES_FILE]"


def split_emb_spec(spec: str) -> tuple[str | None, str]:
    """``[NAME=]DOCS[,QUERIES]`` -> (NAME or None for a bare spec, ``DOCS[,QUERIES]``), as :func:`split_named`."""
    return split_named(spec, flag="--emb", what=EMB_WHAT, bare_ok=True, exists=file_exists)


def emb_name(spec: str) -> str:
    """The run name of an ``--emb`` spec: its NAME, else the documents file's name without its folder and known
    extensions (``runs/e5.npz`` -> ``e5``: :func:`evalcore.io.source.run_name_of_file`, the dashboard's name of an
    uploaded file)."""
    from ..io.source import run_name_of_file

    name, value = split_emb_spec(spec)
    return name if name is not None else run_name_of_file(os.path.normpath(value.split(",")[0].strip()))


def parse_emb_spec(spec: str, ids: Mapping[str, str] | None = None) -> EmbSpec:
    """``[NAME=]DOCS[,QUERIES]`` (+ ids ``IDS[,QUERY_IDS]`` from ``--emb-ids``) -> :class:`EmbSpec` (a bare spec
    named by :func:`emb_name`)."""
    _, value = split_emb_spec(spec)
    name = emb_name(spec)
    parts = [p.strip() for p in value.split(",")]
    if len(parts) > 2 or not all(parts):
        raise OptionError(f"--emb expects {EMB_WHAT}, got {spec!r}")
    id_parts: list[str | None] = [None, None]
    if ids and name in ids:
        got = [p.strip() or None for p in ids[name].split(",")]
        if len(got) > 2:
            raise OptionError(f"--emb-ids expects NAME=IDS[,QUERY_IDS], got {name}={ids[name]}")
        id_parts[: len(got)] = got
    return EmbSpec(name, parts[0], parts[1] if len(parts) == 2 else None, id_parts[0], id_parts[1])


def parse_fuse_spec(spec: str) -> tuple[str, dict[str, float]]:
    """``NAME=RUN1:W1,RUN2:W2`` -> (NAME, {RUN: W}); a run without ``:W`` has weight 1."""
    name, value = split_named(spec, flag="--fuse", what="NAME=RUN1:W1,RUN2:W2,...")
    weights: dict[str, float] = {}
    for part in value.split(","):
        part = part.strip()
        if not part:
            raise OptionError(f"--fuse {spec!r}: empty run in the list")
        run, _, w = part.rpartition(":") if ":" in part else (part, "", "1")
        run = run.strip()
        try:
            weight = float(w)
        except ValueError:
            raise OptionError(f"--fuse {spec!r}: weight {w!r} of run {run!r} is not a number") from None
        if run in weights:
            raise OptionError(f"--fuse {spec!r}: run {run!r} listed twice")
        weights[run] = weight
    return name, weights


def parse_aspects(specs: Sequence[str] | None) -> tuple[dict[str, str], str | None]:
    per_run: dict[str, str] = {}
    default = None
    for spec in specs or []:
        if "=" in spec:
            name, aspect = split_named(spec, flag="--aspect", what="NAME=ASPECT or ASPECT")
            per_run[name] = aspect
        else:
            if default is not None and default != spec.strip():
                raise OptionError(f"two default aspects given ({default!r}, {spec.strip()!r}); name the runs")
            default = spec.strip()
    return per_run, default


def p_text(p: float) -> str:
    """A p-value with 4 decimals, '<0.0001' below them, '-' when there is none."""
    if p != p:
        return "-"
    return "<0.0001" if p < 0.0001 else f"{p:.4f}"

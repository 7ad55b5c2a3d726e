""""Reproduce with: ..." lines of the captions: the command or call that gives a page's seeded numbers.

Every seeded number on the pages is computed with :mod:`evalcore.defaults` (seed 42): the intervals of the means
with the Python API's and ``evalcore evaluate --ci-method bootstrap``'s defaults, the paired tests with fewer
resamples than ``evalcore compare``'s default (1,000, not 10,000) and percentile intervals on resamples shared by
every pair. These lines name every option that differs from a default, so the command line or a script gives the
page's numbers to the last digit. Each command is one Markdown code span (:func:`code_span`), so nothing in it is
read as Markdown, HTML, math or a Streamlit directive; the only user text in them are run names (the Compare page's
``--runs``), each one shell word (:func:`shell_word`).
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence

from dashboard import state as S
from evalcore import defaults as DEF
from evalcore import workspace as W

#: Unicode categories written escaped in a shell word: controls (a line break, a tab...), format characters (a
#: bidirectional override would show the command in another order than it runs), line and paragraph separators.
_ESCAPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


#: the kinds of ground truth a caption tells apart (:func:`ground_truth_kind`)
QRELS, REFERENCE, BUILT_IN = "qrels", "reference", "built-in"

#: what a caption says where the ground truth is the built-in demo's: no file holds it, so no command can take it
BUILT_IN_NOTE = ("the demo's ground truth (its reference model's neighbours) is built in, not a file: no command "
                 "line takes it")


def ground_truth_kind(gt: object) -> str:
    """Which ground truth a command needs for ``gt`` (a :class:`evalcore.workspace.GroundTruthSource`): a judgments
    file (:data:`QRELS`: TREC/BEIR qrels, tables, seed 001's lists, seed 003's graded JSON; ``--qrels``), a
    reference model's embeddings (:data:`REFERENCE`; ``--reference-emb``) or the built-in demo's (:data:`BUILT_IN`:
    no file, so no command; also a copy of the demo, whose ground truth came from it)."""
    if getattr(gt, "kind", None) == "demo" or getattr(gt, "demo_seed", None) is not None:
        return BUILT_IN
    return REFERENCE if getattr(gt, "kind", None) == "reference" else QRELS


def reference_options(*, mode: str, depth: int) -> str:
    """``--reference-emb REFERENCE`` with the settings' reference mode (``--reference-mode fixed --reference-depth
    N`` where the ground truth is the reference's top ``depth`` graded by position; the tied mode is the default)."""
    return "--reference-emb REFERENCE" + ("" if mode == "tied" else
                                          f" --reference-mode {mode} --reference-depth {int(depth)}")


def code_span(text: str) -> str:
    """``text`` as one Markdown code span that shows it as it is, whatever it holds (CommonMark's rule): fenced by
    one backtick more than its longest run of backticks, with a space inside each fence when it holds a backtick
    (the renderer drops one space on each side). Nothing inside a code span is Markdown, HTML, math, an emoji
    shortcode or a Streamlit directive. A line break could end it (at a blank line), so ``text`` holds none
    (:func:`shell_word` writes none): ValueError."""
    if "\n" in text or "\r" in text:
        raise ValueError(f"a code span of one line only, got {text!r}")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    pad = " " if longest else ""
    fence = "`" * (longest + 1)
    return f"{fence}{pad}{text}{pad}{fence}"


def shell_word(text: str) -> str:
    """``text`` as one word of a shell command line: ``shlex.quote`` (POSIX shells), or where ``text`` holds a
    control or format character (none is allowed in a run name, README "Ids and names"; so only text from elsewhere)
    bash's ``$'...'`` with each such character escaped (``\\n``, ``\\x09``, ``\\u202e``), so that the word stays
    on one line and shows what it holds.

    >>> print(shell_word("bm25 (tuned)"), shell_word("a'b"), shell_word("a\\nb"), shell_word("dense"))
    'bm25 (tuned)' 'a'"'"'b' $'a\\nb' dense
    """
    if not any(unicodedata.category(ch) in _ESCAPED for ch in text):
        return shlex.quote(text)
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif unicodedata.category(ch) not in _ESCAPED:
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "$'" + "".join(out) + "'"


def runs_option(runs: Sequence[str]) -> str:
    """``evalcore compare``'s ``--runs`` naming ``runs`` in their order, each one shell word (a name starting with
    ``-`` as ``--runs=NAME``, which argparse would otherwise read as an option)."""
    words: list[str] = []
    open_list = False
    for name in runs:
        if name.startswith("-"):
            words.append("--runs=" + shell_word(name))
            open_list = False
        else:
            if not open_list:
                words.append("--runs")
                open_list = True
            words.append(shell_word(name))
    return " ".join(words)


def compare_options(test: str, correction: str) -> str:
    """The ``evalcore compare`` options of the dashboard's paired tests (test, correction, resamples, seed)."""
    return (f"--test {test} --correction {correction} --n-resamples {S.TEST_RESAMPLES} --ci-method {S.CI_METHOD} "
            f"--resampling {S.RESAMPLING} --seed {S.CI_SEED}")


def compare_command(metric_label: str, test: str, correction: str, *, baseline: bool = False,
                    runs: Sequence[str] | None = None) -> str:
    """``evalcore compare`` on the Overview's per-query CSV giving the page's tests (every pair of the runs compared:
    the correction's family; ``baseline``: the pairs with a baseline only, ``--baseline``); ``runs``: the runs
    compared, in the page's order (``--runs``: each pair's direction, the correction's family and the shared
    resamples are theirs), else every run of the file."""
    chosen = "" if runs is None else " " + runs_option(runs)
    return code_span(f"evalcore compare --per-query per_query.csv --metric {metric_label}{chosen}"
                 + (" --baseline BASELINE" if baseline else "") + " " + compare_options(test, correction))


def compare_caption(metric_word: str, test: str, correction: str, *, runs: Sequence[str]) -> str:
    """The Compare page's line: its intervals and sign flips, and the command giving the same numbers for ``runs``,
    the runs compared in the page's order; ``metric_word``: ``compare``'s ``--metric`` (:func:`compare_metric`: a
    whole-list metric as ``map@all``, which ``compare`` reads, where the page's label says ``map``)."""
    return (f"Seeded: {S.TEST_RESAMPLES:,} resamples (and sign flips of the randomization test), seed {S.CI_SEED}; "
            f"the command line's default is {DEF.TEST_RESAMPLES:,} per-pair BCa resamples. Reproduce with "
            + compare_command(metric_word, test, correction, runs=runs)
            + " (per_query.csv: the Overview's per-query table).")


def compare_metric(metric: str, k: int) -> str:
    """``evalcore compare``'s ``--metric`` of metric@k (one shell word): ``ndcg@10``; the whole list ``map@all``
    (compare refuses a bare name that takes a cutoff), a measure without one (``rprec``) bare."""
    from evalcore.aggregate import metric_at_k_label
    from evalcore.metrics import CURVES, K_FREE, metric_base

    if int(k):
        return shell_word(metric_at_k_label(metric, int(k)))
    base = metric_base(metric)
    return shell_word(metric if base in K_FREE or base in CURVES else f"{metric}@all")


def domain_tests_command(metric: str, k: int, *, baseline: str, runs: Sequence[str], test: str, correction: str,
                         min_queries: int) -> str:
    """``evalcore compare --by-domain`` on the Overview's per-query CSV giving the Domains page's per-domain tests:
    ``runs`` (the runs tested, in the page's order, the baseline among them) against ``baseline`` within each domain
    of at least ``min_queries`` queries, with the dashboard's test options."""
    base = ("--baseline=" if baseline.startswith("-") else "--baseline ") + shell_word(baseline)  # (as runs_option)
    return code_span(f"evalcore compare --per-query per_query.csv --metric {compare_metric(metric, k)} --by-domain "
                     f"{base} {runs_option(runs)} --min-queries {int(min_queries)} {compare_options(test, correction)}")


def python_tests_call(function: str, test: str, correction: str) -> str:
    """A call of ``function`` (e.g. ``evalcore.stats.compare_by_domain``) with the dashboard's test options."""
    return code_span(f"{function}(..., test={test!r}, correction={correction!r}, n_resamples={S.TEST_RESAMPLES}, "
                 f"ci_method={S.CI_METHOD!r}, resampling={S.RESAMPLING!r}, seed={S.CI_SEED})")


def sample_options(sample_size: int, sample_seed: int, *, seed: int = S.CI_SEED) -> str:
    """``evaluate``'s options drawing the page's query sample (``sample_size`` queries, seed ``sample_seed``; the
    settings'), '' for every query: ``--n-samples``, and ``--sample-seed`` where the sample's seed is not the
    command's ``--seed`` (``seed``: the intervals' by default; ``--seed`` seeds both unless told). ``fuse`` and
    ``agree`` take the same options."""
    if not sample_size:
        return ""
    return f" --n-samples {int(sample_size)}" + ("" if int(sample_seed) == int(seed) else f" --sample-seed {int(sample_seed)}")


def query_rule_options(*, no_relevant: str = "zero", judged_only: bool = False) -> str:
    """``evaluate``'s (and ``fuse``'s) options of the settings' scoring rules that differ from the defaults:
    ``--no-relevant skip``, ``--judged-only``; '' at the defaults."""
    return ("" if no_relevant == "zero" else f" --no-relevant {no_relevant}") + (" --judged-only" if judged_only else "")


def intervals_caption(*, by_domain: bool = False, sample_size: int = 0, sample_seed: int = S.CI_SEED,
                      domain_mapping: bool = False) -> str:
    """How to get the intervals of the means: the Python API's defaults, or report.json of ``evaluate`` (per run,
    metric and k; ``by_domain``: per_domain.csv of ``evaluate --by-domain``, grouped by domain too, or the Python call
    on the metric@k's rows; ``domain_mapping``: the domains come from a mapping file, ``--domains DOMAINS``). The
    command draws the settings' query sample (``sample_size`` queries with ``sample_seed``, :func:`sample_options`)
    and the intervals with the dashboard's seed: before, it named ``--seed`` alone, which seeds both, so a sample
    drawn with another seed than the intervals' could not be reproduced."""
    if by_domain:
        mapping = " --domains DOMAINS" if domain_mapping else ""
        return ("Reproduce with " + code_span(f"evalcore evaluate ...{sample_options(sample_size, sample_seed)}"
                                              f"{mapping} --by-domain --n-resamples {S.N_RESAMPLES} --seed {S.CI_SEED} "
                                              "--out DIR")
                + " (per_domain.csv" + ("; DOMAINS: the domain mapping file" if domain_mapping else "") + ") or "
                + code_span('evalcore.intervals.summarize_with_intervals(rows, by=("run", "domain", "metric", "k"))')
                + " (its defaults; rows: the metric@k's per-query rows).")
    return ("Reproduce with " + code_span(f"evalcore evaluate ...{sample_options(sample_size, sample_seed)} --ci-method "
                                      f"{S.MEAN_CI} --n-resamples {S.N_RESAMPLES} --seed {S.CI_SEED} --out DIR")
            + " (report.json) or " + code_span("evalcore.intervals.summarize_with_intervals(table)") + " (its defaults).")


def aspect_options(aspects: Mapping[str, str | None]) -> str:
    """``evaluate``'s ``--aspect`` options giving each run (``aspects``: run -> the ground-truth list it is judged
    against, seed 001) its aspect: the commonest as a bare ``--aspect ASPECT`` (every run not named), the others as
    ``--aspect NAME=ASPECT``, each one shell word; '' where no run names one."""
    named = {r: a for r, a in aspects.items() if a is not None}
    if not named:
        return ""
    counts = Counter(named.values())
    common = max(counts, key=lambda a: (counts[a], -list(named.values()).index(a)))
    words = [f"--aspect {shell_word(common)}"]
    words += [f"--aspect {shell_word(f'{r}={a}')}" for r, a in named.items() if a != common]
    return " " + " ".join(words)


def fusion_options(fusions: Sequence[Mapping[str, object]], *, ties: str) -> tuple[str, list[str]]:
    """``evaluate``'s ``--fuse NAME=RUN1:W1,...`` words making the Overview's fused runs (each a mapping: ``name``,
    ``inputs`` (run names), ``weights``, ``method``, ``norm``, ``c``, ``top_n``, ``ties`` (None: the settings'
    ``ties``), as kept by the Fusion page) with their method, normalisation, RRF ``c``, ``top_n`` and the tie rule
    ranking their inputs (``--fuse-method``, ``--fuse-norm``, ``--rrf-c``, ``--rrf-top-n``, ``--rrf-ties``: the
    dashboard's fusion ranks its inputs with the settings' tie rule where the command's default is ``docid_asc``);
    and the names of the fused runs no such word gives, each to be given as its own file: the command takes one
    recipe for every ``--fuse`` (a fusion with other options than the first's), a run listed twice in one fusion,
    a fused run's name holding ``=`` or an input's holding ``,`` (the spec's separators), a fusion of a fused run
    not given before it, or of a run not among the runs of ``...`` (``shown`` False: an input not on the page).
    Weights are written as Python's ``repr`` of the float, which reads back to the same bits; a method without
    weights is given its runs without ``:W`` (the command refuses weights there)."""
    from evalcore.fusion import WEIGHTED_METHODS

    words: list[str] = []
    own: list[str] = []
    given: set[str] = set()
    recipe: tuple[object, ...] | None = None
    fused = {str(f["name"]) for f in fusions}
    for f in fusions:
        name, inputs = str(f["name"]), [str(r) for r in f["inputs"]]  # type: ignore[union-attr]
        this = (f["method"], f["norm"], float(f["c"]), f["top_n"] or None, f["ties"] or ties)  # type: ignore[arg-type]
        ok = ((recipe is None or this == recipe) and "=" not in name and len(set(inputs)) == len(inputs)
              and not any("," in r for r in inputs) and all(r in given for r in inputs if r in fused)
              and bool(f.get("shown", True)))
        if not ok:
            own.append(name)
            continue
        recipe = this
        weighted = f["method"] in WEIGHTED_METHODS
        spec = ",".join(f"{r}:{float(w)!r}" if weighted else r
                        for r, w in zip(inputs, f["weights"], strict=True))  # type: ignore[call-overload]
        words.append("--fuse " + shell_word(f"{name}={spec}"))
        given.add(name)
    if recipe is not None:
        method, norm, c, top_n, rank_ties = recipe
        words += ([] if method == "rrf" else [f"--fuse-method {method}"]) + (
            [] if norm == "none" else [f"--fuse-norm {norm}"]) + ([] if c == 60.0 else [f"--rrf-c {c!r}"]) + (
            [] if top_n is None else [f"--rrf-top-n {int(top_n)}"]) + (  # type: ignore[call-overload]
            [] if rank_ties == "docid_asc" else [f"--rrf-ties {shell_word(str(rank_ties))}"])
    return (" " + " ".join(words)) if words else "", own


def fusions_of(ctx: S.Context) -> list[dict[str, object]]:
    """The fused runs among the Overview's runs (in the workspace's order), as :func:`fusion_options` takes them."""
    names = {r.uid: r.name for r in ctx.ws.runs}
    shown = set(ctx.run_names)
    return [{"name": src.name, "inputs": [names.get(u, u) for u in src.fusion.inputs],
             "weights": list(src.fusion.weights), "method": src.fusion.method, "norm": src.fusion.norm,
             "c": src.fusion.c, "top_n": src.fusion.top_n, "ties": src.fusion.ties,
             "shown": all(names.get(u) in shown for u in src.fusion.inputs)}
            for src in ctx.ws.runs if src.kind == "fused" and src.name in shown and src.fusion is not None]


def evaluate_command(settings: W.Settings, *, ground_truth: str, aspects: Mapping[str, str | None] | None = None,
                     embeddings: bool = False, diversity: tuple[int, float] | None = None,
                     fusions: Sequence[Mapping[str, object]] = ()) -> str:
    """``evalcore evaluate`` giving the Overview's numbers and its "Report (JSON)": the ground truth (``--qrels
    QRELS``, or ``--reference-emb REFERENCE`` with the settings' reference mode), the runs (``...``), each run's
    aspect where the ground truth has several (:func:`aspect_options`), the settings' metrics and cutoffs and every
    rule that differs from the command's defaults (tie rule, relevance threshold, no-relevant rule, judged-only, the
    embedding runs' depth), the query sample and the intervals. Before, the caption gave ``evaluate ... --ci-method
    bootstrap ...`` alone: completed with the ground truth and runs, that command scored with trec ties and threshold
    1 without -J whatever the settings said, at k 10. :data:`BUILT_IN`: ValueError (no command takes it).
    ``diversity``: (k, α) of the Overview's diversity table: ``--k k --diversity --diversity-alpha α`` (ILD@k and
    α-nDCG@k of the embedding runs, judged as nDCG@k is, in report.json). ``fusions``: the fused runs shown
    (:func:`fusions_of`), made by ``--fuse`` where one recipe gives them (:func:`fusion_options`; the others are named by
    :func:`overview_caption` as files of their own)."""
    if ground_truth == BUILT_IN:
        raise ValueError("no command takes the built-in demo's ground truth")
    truth = ("--qrels QRELS" if ground_truth == QRELS
             else reference_options(mode=settings.gt_mode, depth=settings.gt_depth))
    ks = [int(k) for k in settings.k] if diversity is None else [int(diversity[0])]
    depth = max(100, *(int(k) for k in settings.k))  # (the settings' depth: at least their largest k)
    rules = (f" --metrics {' '.join(shell_word(str(m)) for m in settings.metrics)} --k {' '.join(map(str, ks))}"
             + ("" if settings.ties == "trec" else f" --ties {shell_word(settings.ties)}")
             + ("" if int(settings.rel_threshold) == 1 else f" --rel-threshold {int(settings.rel_threshold)}")
             + query_rule_options(no_relevant=settings.no_relevant, judged_only=bool(settings.judged_only))
             + (f" --emb-depth {int(settings.depth)}" if embeddings and int(settings.depth) != max(depth, *ks) else "")
             + ("" if diversity is None else f" --diversity --diversity-alpha {float(diversity[1])!r}"))
    fuse = fusion_options(fusions, ties=str(settings.ties))[0] if diversity is None else ""
    return code_span(f"evalcore evaluate {truth} ...{fuse}{aspect_options(aspects or {})}{rules}"
                     f"{sample_options(int(settings.sample_size), int(settings.seed))} --ci-method {S.MEAN_CI} "
                     f"--n-resamples {S.N_RESAMPLES} --seed {S.CI_SEED} --out DIR")


def runs_note(settings: W.Settings, fusions: Sequence[Mapping[str, object]]) -> str:
    """What ``...`` of :func:`evaluate_command` stands for: the runs (a fused run among them made by its ``--fuse``,
    from its inputs; one that no ``--fuse`` of the command gives, as a file of its own, named)."""
    made, own = fusion_options(fusions, ties=str(settings.ties))
    note = "the runs, as --run NAME=FILE or --emb NAME=DOCS[,QUERIES]"
    if made:
        note += "; the fused runs but " + ", ".join(own) + " by --fuse" if own else "; the fused runs by --fuse"
    if own:
        note += ("; " + ", ".join(own) + ": no --fuse of this command makes " + ("it" if len(own) == 1 else "them")
                 + " (another fusion recipe, or inputs it cannot name), give " + ("it" if len(own) == 1 else "each")
                 + " as its own file (--run NAME=FILE, written by evalcore fuse with its recipe, report.json's "
                 "metadata.fusion)")
    return note


def overview_caption(settings: W.Settings, *, ground_truth: str, aspects: Mapping[str, str | None] | None = None,
                     embeddings: bool = False, fusions: Sequence[Mapping[str, object]] = ()) -> str:
    """The Overview's "Reproduce with" line: :func:`evaluate_command` (report.json's aggregates are the leaderboard's
    cells, its per_query.csv the page's per-query table; a fused run kept from the Fusion page made by ``--fuse``
    with its recipe, or named as a file to give), or on the built-in demo's ground truth, which no command takes,
    the Python call on the per-query table. Before, a fused run was one of the runs of ``...``, with no file to give
    and no recipe."""
    python = code_span("evalcore.intervals.summarize_with_intervals(table)") + " (its defaults; table: the per-query table)"
    if ground_truth == BUILT_IN:
        return "Not a command: " + BUILT_IN_NOTE + ". Reproduce with " + python + "."
    return ("Reproduce with " + evaluate_command(settings, ground_truth=ground_truth, aspects=aspects,
                                                 embeddings=embeddings, fusions=fusions)
            + f" (...: {runs_note(settings, fusions)}; report.json) or " + python + ".")


def evaluation_options(ctx: S.Context) -> dict[str, object]:
    """The keywords of :func:`overview_caption` (and :func:`queries_caption`, :func:`diversity_caption`) for the
    workspace of ``ctx``: which ground truth, each run's aspect where it has several, whether a run has embeddings."""
    return {"ground_truth": ground_truth_kind(ctx.ws.ground_truth),
            "aspects": {r: S.aspect_of(ctx, r) for r in ctx.run_names} if len(ctx.aspects) > 1 else None,
            "embeddings": any(W.has_embeddings(src) for src in ctx.ws.runs if src.name in ctx.runs),
            "fusions": fusions_of(ctx)}


def queries_caption(settings: W.Settings, **options: object) -> str:
    """The Queries page's line: its values are rows of ``per_query.csv`` (``run, query_id, domain, metric, k,
    value``) of the Overview's command (:func:`evaluate_command`), or on the built-in demo, of the Overview's per-query
    download."""
    if options.get("ground_truth") == BUILT_IN:
        return ("Not a command: " + BUILT_IN_NOTE + "; each value is a row of the Overview's per-query table "
                "(its download).")
    return ("Reproduce with " + evaluate_command(settings, **options)  # type: ignore[arg-type]
            + f" (...: {runs_note(settings, options.get('fusions') or ())}): each value is a row (run, query_id, "  # type: ignore[arg-type]
              "metric, k) of its per_query.csv, as of the Overview's per-query download.")


def diversity_options(options: Mapping[str, object], *, runs: Sequence[str]) -> dict[str, object]:
    """:func:`evaluation_options` for :func:`diversity_caption`: its ``...`` is the embedding runs of the table
    (``runs``) only, so the aspects are theirs (``--aspect NAME=ASPECT`` for a ranked or fused run not in the command
    would make it stop: "--aspect names unknown runs") and no fusion is made."""
    shown = set(runs)
    out = {o: v for o, v in options.items() if o not in ("embeddings", "fusions")}
    if isinstance(out.get("aspects"), Mapping):
        out["aspects"] = {r: a for r, a in out["aspects"].items() if r in shown}
    return out


def diversity_caption(settings: W.Settings, *, ground_truth: str, k: int, alpha: float,
                      aspects: Mapping[str, str | None] | None = None,
                      fusions: Sequence[Mapping[str, object]] = ()) -> str:
    """The Overview's diversity line: :func:`evaluate_command` with ``--k k --diversity --diversity-alpha alpha``
    (report.json's ``ild@k`` and ``alpha_ndcg...@k`` aggregates are the table's cells), or on the built-in demo, the
    Python call. ``fusions`` is not used: the table holds the embedding runs only."""
    python = code_span("evalcore.workspace.diversity_summary(tables)") + " (its defaults; tables: " + code_span(
        f"evalcore.workspace.run_diversity(..., k=[{int(k)}], alpha={float(alpha)!r})") + " of each run)"
    if ground_truth == BUILT_IN:
        return "Not a command: " + BUILT_IN_NOTE + ". Reproduce with " + python + "."
    return ("Reproduce with " + evaluate_command(settings, ground_truth=ground_truth, aspects=aspects, embeddings=True,
                                                 diversity=(int(k), float(alpha)))
            + " (...: the embedding runs, as --emb NAME=DOCS[,QUERIES]; report.json) or " + python + ".")


def similarity_caption(*, ground_truth: str = REFERENCE) -> str:
    """The command giving the Agreement page's similarity agreement (report.json's ``similarity_agreement``, to the
    last bit; printed with 4 decimals); on the built-in demo's reference model, which no file holds, the Python call
    (``ground_truth``: :func:`ground_truth_kind`)."""
    if ground_truth == BUILT_IN:
        return ("Not a command: " + BUILT_IN_NOTE + ". Reproduce with " + code_span(
            f"evalcore.embedding_runs.reference_agreement(REFERENCE, models, n_pairs={DEF.SIMILARITY_PAIRS}, seed={DEF.SEED})")
            + " (REFERENCE, models: the demo's embeddings).")
    return ("Reproduce with " + code_span(f"evalcore evaluate --reference-emb REFERENCE --emb NAME=FILE ... "
                                          f"--agreement-pairs {DEF.SIMILARITY_PAIRS} --seed {DEF.SEED} --out DIR")
            + f" (report.json's metadata.similarity_agreement; --agreement-pairs alone draws "
              f"{DEF.SIMILARITY_PAIRS:,}).")


def fusion_command(*, method: str, norm: str, strategy: str, step: float, n_trials: int, seed: int,
                   fraction: float | None, metric_label: str, ties: str, rel_threshold: int, c: float,
                   top_n: int | None, sample_size: int = 0, sample_seed: int = DEF.SEED, no_relevant: str = "zero",
                   judged_only: bool = False, aspect: str | None = None, ground_truth: str = QRELS,
                   reference_mode: str = "tied", reference_depth: int = 10) -> str:
    """``evalcore fuse --search`` with the Fusion page's search options (the page tunes on a split by default) and
    the settings' query sample (``sample_size`` queries drawn with ``sample_seed``; ``--sample-seed`` where that is
    not the search's ``seed``) and scoring rules (``no_relevant``, ``judged_only``), which the page's search uses:
    without them the command searched every query with the default rules and could find other weights.
    ``ground_truth`` (:func:`ground_truth_kind`): ``--qrels QRELS``, or ``--reference-emb REFERENCE`` with the
    settings' ``reference_mode`` and ``reference_depth`` (before, the command named ``--qrels`` there too, which
    has no such file); :data:`BUILT_IN`: ValueError (no command takes it: :func:`fusion_caption` says so)."""
    if ground_truth == BUILT_IN:
        raise ValueError("no command takes the built-in demo's ground truth")
    opts = [f"--method {method}", f"--norm {norm}", f"--c {c:g}", *([f"--top-n {top_n}"] if top_n else []),
            f"--search {strategy}",
            f"--step {step:g}" if strategy == "grid" else f"--trials {n_trials}", f"--seed {seed}",
            f"--metric {metric_label}", f"--ties {ties}", f"--rel-threshold {rel_threshold}"]
    if fraction is not None:
        opts.append(f"--tune-fraction {fraction:g}")
    rules = (sample_options(sample_size, sample_seed, seed=seed)
             + query_rule_options(no_relevant=no_relevant, judged_only=judged_only))
    aspect_opt = "" if aspect is None else f"--aspect {shell_word(aspect)} "  # (a ground truth of several lists)
    truth = ("--qrels QRELS" if ground_truth == QRELS
             else reference_options(mode=reference_mode, depth=reference_depth))
    return code_span(f"evalcore fuse --run NAME=FILE ... {truth} " + aspect_opt + " ".join(opts) + rules
                     + " --out fused.trec")


def ranked_files_note(depth: int | None) -> str:
    """How the runs become the TREC files a command reads (``depth``: the settings' ranking depth of embedding runs,
    None when no run named is one: the dashboard offers no download of a run's ranking): ``evalcore topk`` writes an
    embedding run's ranking as the dashboard ranks it (exact top-k, ties by id)."""
    if depth is None:
        return "the runs as TREC files"
    return ("the runs as TREC files; an embedding run's: " + code_span(
        f"evalcore topk --docs FILE --k {int(depth)} --exclude-self --out NAME.trec") + " (one file, item to item) or "
        + code_span(f"evalcore topk --docs DOCS --queries QUERIES --k {int(depth)} --out NAME.trec"))


def fusion_caption(*, embedding_depth: int | None = None, **options: object) -> str:
    """The Fusion page's "Reproduce with" line: :func:`fusion_command` of ``options`` (``embedding_depth``: see
    :func:`ranked_files_note`), or where the ground truth is the built-in demo's, which no command takes, the page's
    own Python call with the same options."""
    if options.get("ground_truth") == BUILT_IN:
        label = str(options["metric_label"])
        metric, _, k = label.partition("@")
        step = f"step={options['step']!r}" if options["strategy"] == "grid" else f"n_trials={options['n_trials']!r}"
        return ("Not a command: " + BUILT_IN_NOTE + ". Reproduce with " + code_span(
            f"evalcore.workspace.search_fusion_weights(QRELS, REFERENCE, runs, metric={metric!r}, k={int(k or 0)}, "
            f"settings=SETTINGS, method={options['method']!r}, norm={options['norm']!r}, "
            f"strategy={options['strategy']!r}, {step}, seed={options['seed']!r}, "
            f"tune_fraction={options['fraction']!r}, c={options['c']!r}, top_n={options['top_n']!r})")
            + " (QRELS, REFERENCE, SETTINGS: the demo's evaluated ground truth and its settings; runs: the runs fused).")
    return "Reproduce with " + fusion_command(**options) + f" ({ranked_files_note(embedding_depth)})."


def agreement_caption(*, measure: str, k: int, p: float, ties: str, sample_size: int = 0,
                      sample_seed: int = DEF.SEED, judgments: bool = True, aspect: str | None = None,
                      embedding_depth: int | None = None) -> str:
    """The Agreement page's line: what gives its means of ``measure`` at ``k`` (RBO's persistence ``p``) on the
    evaluated queries — the ground truth's, or its seeded sample (``sample_size`` queries drawn with
    ``sample_seed``, as ``evaluate --n-samples``). ``judgments``: the ground truth is a file of judgments
    (``evalcore agree --qrels``); else (a reference model's neighbours, the demo) the Python call on the evaluated
    query ids. ``aspect``: one list of a ground truth of several (seed 001), which ``agree --qrels`` needs to read it
    (every list has the same queries). ``embedding_depth``: :func:`ranked_files_note`."""
    p_opt = f" --p {float(p)!r}" if measure == "rbo" else ""
    aspect_opt = "" if aspect is None else f" --aspect {shell_word(aspect)}"
    if judgments:
        return ("Reproduce with " + code_span(
            f"evalcore agree --run NAME=FILE ... --qrels QRELS{aspect_opt}"
            f"{sample_options(sample_size, sample_seed, seed=DEF.SEED)}"
            f" --k {int(k)} --measures {measure}{p_opt} --ties {ties} --summary-out summary.csv")
            + f" (the runs shown, in their order; {ranked_files_note(embedding_depth)}; the mean column of "
              "summary.csv).")
    # (evalcore.agreement is the function: the call spelled evalcore.agreement.agreement(...) failed, AttributeError)
    return ("Reproduce with " + code_span(
        f"evalcore.summarize_agreement(evalcore.agreement(runs, k={int(k)}, measures=[{measure!r}], p={float(p)!r}, "
        f"ties={ties!r}, query_ids=QUERY_IDS))")
        + " (runs: the runs shown, in their order; QUERY_IDS: the evaluated queries' ids).")


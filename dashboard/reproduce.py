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
from collections.abc import Sequence

from dashboard import state as S
from evalcore import defaults as DEF

#: Unicode categories written escaped in a shell word: controls (a line break, a tab...), format characters (a
#: bidirectional override would show the command in another order than it runs), line and paragraph separators.
_ESCAPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


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


def compare_caption(metric_label: str, test: str, correction: str, *, runs: Sequence[str]) -> str:
    """The Compare page's line: its intervals and sign flips, and the command giving the same numbers for ``runs``,
    the runs compared in the page's order."""
    return (f"Seeded: {S.TEST_RESAMPLES:,} resamples (and sign flips of the randomization test), seed {S.CI_SEED}; "
            f"the command line's default is {DEF.TEST_RESAMPLES:,} per-pair BCa resamples. Reproduce with "
            + compare_command(metric_label, test, correction, runs=runs)
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


def similarity_caption() -> str:
    """The command giving the Agreement page's similarity agreement."""
    return ("Reproduce with " + code_span(f"evalcore evaluate --reference-emb REFERENCE --emb NAME=FILE ... "
                                      f"--agreement-pairs {DEF.SIMILARITY_PAIRS} --seed {DEF.SEED}")
            + f" (--agreement-pairs alone draws {DEF.SIMILARITY_PAIRS:,}).")


def fusion_command(*, method: str, norm: str, strategy: str, step: float, n_trials: int, seed: int,
                   fraction: float | None, metric_label: str, ties: str, rel_threshold: int, c: float,
                   top_n: int | None, sample_size: int = 0, sample_seed: int = DEF.SEED, no_relevant: str = "zero",
                   judged_only: bool = False, aspect: str | None = None) -> str:
    """``evalcore fuse --search`` with the Fusion page's search options (the page tunes on a split by default) and
    the settings' query sample (``sample_size`` queries drawn with ``sample_seed``; ``--sample-seed`` where that is
    not the search's ``seed``) and scoring rules (``no_relevant``, ``judged_only``), which the page's search uses:
    without them the command searched every query with the default rules and could find other weights."""
    opts = [f"--method {method}", f"--norm {norm}", f"--c {c:g}", *([f"--top-n {top_n}"] if top_n else []),
            f"--search {strategy}",
            f"--step {step:g}" if strategy == "grid" else f"--trials {n_trials}", f"--seed {seed}",
            f"--metric {metric_label}", f"--ties {ties}", f"--rel-threshold {rel_threshold}"]
    if fraction is not None:
        opts.append(f"--tune-fraction {fraction:g}")
    rules = (sample_options(sample_size, sample_seed, seed=seed)
             + query_rule_options(no_relevant=no_relevant, judged_only=judged_only))
    aspect_opt = "" if aspect is None else f"--aspect {shell_word(aspect)} "  # (a ground truth of several lists)
    return code_span("evalcore fuse --run NAME=FILE ... --qrels QRELS " + aspect_opt + " ".join(opts) + rules
                     + " --out fused.trec")


def agreement_caption(*, measure: str, k: int, p: float, ties: str, sample_size: int = 0,
                      sample_seed: int = DEF.SEED, judgments: bool = True, aspect: str | None = None) -> str:
    """The Agreement page's line: what gives its means of ``measure`` at ``k`` (RBO's persistence ``p``) on the
    evaluated queries — the ground truth's, or its seeded sample (``sample_size`` queries drawn with
    ``sample_seed``, as ``evaluate --n-samples``). ``judgments``: the ground truth is a file of judgments
    (``evalcore agree --qrels``); else (a reference model's neighbours, the demo) the Python call on the evaluated
    query ids. ``aspect``: one list of a ground truth of several (seed 001), which ``agree --qrels`` needs to read it
    (every list has the same queries)."""
    p_opt = f" --p {float(p)!r}" if measure == "rbo" else ""
    aspect_opt = "" if aspect is None else f" --aspect {shell_word(aspect)}"
    if judgments:
        return ("Reproduce with " + code_span(
            f"evalcore agree --run NAME=FILE ... --qrels QRELS{aspect_opt}"
            f"{sample_options(sample_size, sample_seed, seed=DEF.SEED)}"
            f" --k {int(k)} --measures {measure}{p_opt} --ties {ties} --summary-out summary.csv")
            + " (the runs shown, in their order, as TREC files; the mean column of summary.csv).")
    return ("Reproduce with " + code_span(
        f"evalcore.agreement.agreement(runs, k={int(k)}, measures=[{measure!r}], p={float(p)!r}, ties={ties!r}, "
        "query_ids=QUERY_IDS)") + " and " + code_span("evalcore.agreement.summarize_agreement")
        + " (runs: the runs shown, in their order; QUERY_IDS: the evaluated queries' ids).")


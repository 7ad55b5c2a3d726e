""""Reproduce with: ..." lines of the captions: the command or call that gives a page's seeded numbers.

Every seeded number on the pages is computed with :mod:`evalcore.defaults` (seed 42): the intervals of the means
with the Python API's and ``evalcore evaluate --ci-method bootstrap``'s defaults, the paired tests with fewer
resamples than ``evalcore compare``'s default (1,000, not 10,000) and percentile intervals on resamples shared by
every pair. These lines name every option that differs from a default, so the command line or a script gives the
page's numbers to the last digit. Plain text of the engine's option values only (never a user's run or query id),
in backticks.
"""

from __future__ import annotations

from dashboard import state as S
from evalcore import defaults as DEF


def _code(text: str) -> str:
    return f"`{text}`"


def compare_options(test: str, correction: str) -> str:
    """The ``evalcore compare`` options of the dashboard's paired tests (test, correction, resamples, seed)."""
    return (f"--test {test} --correction {correction} --n-resamples {S.TEST_RESAMPLES} --ci-method {S.CI_METHOD} "
            f"--resampling {S.RESAMPLING} --seed {S.CI_SEED}")


def compare_command(metric_label: str, test: str, correction: str, *, baseline: bool = False) -> str:
    """``evalcore compare`` on the Overview's per-query CSV giving the page's tests (every pair of the runs compared:
    the correction's family; ``baseline``: the pairs with a baseline only, ``--baseline``)."""
    return _code(f"evalcore compare --per-query per_query.csv --metric {metric_label}"
                 + (" --baseline BASELINE" if baseline else "") + " " + compare_options(test, correction))


def compare_caption(metric_label: str, test: str, correction: str) -> str:
    """The Compare page's line: its intervals and sign flips, and the command giving the same numbers."""
    return (f"Seeded: {S.TEST_RESAMPLES:,} resamples (and sign flips of the randomization test), seed {S.CI_SEED}; "
            f"the command line's default is {DEF.TEST_RESAMPLES:,} per-pair BCa resamples. Reproduce with "
            + compare_command(metric_label, test, correction)
            + " (per_query.csv: the Overview's per-query table; with the runs compared only).")


def python_tests_call(function: str, test: str, correction: str) -> str:
    """A call of ``function`` (e.g. ``evalcore.stats.compare_by_domain``) with the dashboard's test options."""
    return _code(f"{function}(..., test={test!r}, correction={correction!r}, n_resamples={S.TEST_RESAMPLES}, "
                 f"ci_method={S.CI_METHOD!r}, resampling={S.RESAMPLING!r}, seed={S.CI_SEED})")


def intervals_caption(*, by_domain: bool = False) -> str:
    """How to get the intervals of the means: the Python API's defaults, or report.json of ``evaluate`` (per run,
    metric and k; ``by_domain``: the Python call only, grouped by domain too, on the metric@k's rows)."""
    if by_domain:
        return ("Reproduce with " + _code('evalcore.intervals.summarize_with_intervals(rows, by=("run", "domain", '
                                          '"metric", "k"))') + " (its defaults; rows: the metric@k's per-query rows).")
    return ("Reproduce with " + _code(f"evalcore evaluate ... --ci-method {S.MEAN_CI} --n-resamples {S.N_RESAMPLES} "
                                      f"--seed {S.CI_SEED} --out DIR") + " (report.json) or "
            + _code("evalcore.intervals.summarize_with_intervals(table)") + " (its defaults).")


def similarity_caption() -> str:
    """The command giving the Agreement page's similarity agreement."""
    return ("Reproduce with " + _code(f"evalcore evaluate --reference-emb REFERENCE --emb NAME=FILE ... "
                                      f"--agreement-pairs {DEF.SIMILARITY_PAIRS} --seed {DEF.SEED}")
            + f" (--agreement-pairs alone draws {DEF.SIMILARITY_PAIRS:,}).")


def fusion_command(*, method: str, norm: str, strategy: str, step: float, n_trials: int, seed: int,
                   fraction: float | None, metric_label: str, ties: str, rel_threshold: int, c: float,
                   top_n: int | None) -> str:
    """``evalcore fuse --search`` with the Fusion page's search options (the page tunes on a split by default)."""
    opts = [f"--method {method}", f"--norm {norm}", f"--c {c:g}", *([f"--top-n {top_n}"] if top_n else []),
            f"--search {strategy}",
            f"--step {step:g}" if strategy == "grid" else f"--trials {n_trials}", f"--seed {seed}",
            f"--metric {metric_label}", f"--ties {ties}", f"--rel-threshold {rel_threshold}"]
    if fraction is not None:
        opts.append(f"--tune-fraction {fraction:g}")
    return _code("evalcore fuse --run NAME=FILE ... --qrels QRELS " + " ".join(opts) + " --out fused.trec")


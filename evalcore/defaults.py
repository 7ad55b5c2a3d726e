"""The defaults of every seeded or resampled computation: one place for the Python API, the CLI and the dashboard.

The same inputs with the options left at their defaults give the same numbers wherever they are computed:
every function signature, command-line flag and dashboard control below takes its default from here
(``tests/test_defaults.py`` checks that none hard-codes one). The lowest layer: it imports nothing.

Seeds
    :data:`SEED` (42) seeds everything drawn at random: the bootstrap resamples of an interval, the sign
    flips of the randomization test, the query sample (``--n-samples``; seed 000 step 3's
    ``np.random.seed(42)``), the item pairs of the similarity agreement, the tune/report split and the
    random trials of the fusion weight search, the random baseline run. 42 is the seed the command line,
    the query sample, the weight search and the similarity agreement always used (and that the README and
    ``--help`` state); the intervals and tests of the Python API and the dashboard used 0 until they were
    made to agree with them. :data:`DEMO_SEED` is not a computation's seed but which built-in demo
    dataset is generated.

Counts
    :data:`MEAN_RESAMPLES` resamples of the percentile-bootstrap interval of a mean (summaries, the
    leaderboard, curves, domains, versions, diversity); :data:`TEST_RESAMPLES` resamples of a paired
    bootstrap interval of a difference and sign flips of the randomization test (``evalcore compare``,
    :func:`evalcore.stats.compare`).

The dashboard's tests
    The dashboard tests every pair of the runs compared each time a page is drawn, so it uses
    :data:`DASHBOARD_TEST_RESAMPLES` (1,000, not 10,000: ten times less work per pair, and no 800 MB
    table of resample counts held at 20,000 queries) and percentile intervals on resamples shared by every
    pair (:data:`DASHBOARD_CI_METHOD`, :data:`DASHBOARD_RESAMPLING`; BCa's jackknife costs ~0.5 s a pair at
    5,000 queries). Its captions say so, with the command that gives the same numbers
    (``evalcore compare --n-resamples 1000 --ci-method percentile --resampling shared --seed 42``).
"""

from __future__ import annotations

__all__ = [
    "SEED", "DEMO_SEED", "CONFIDENCE", "MEAN_RESAMPLES", "MEAN_CI_METHOD", "REPORT_CI_METHOD", "TEST_RESAMPLES", "TEST_CI_METHOD",
    "TEST_RESAMPLING", "DASHBOARD_TEST_RESAMPLES", "DASHBOARD_CI_METHOD", "DASHBOARD_RESAMPLING",
    "SIMILARITY_PAIRS", "FUSION_STRATEGY", "FUSION_STEP", "FUSION_TRIALS", "DASHBOARD_TUNE_FRACTION",
    "MIN_DOMAIN_QUERIES",
]

#: The seed of every seeded computation (resamples, sign flips, query sample, item pairs, weight search).
SEED = 42
#: Which built-in synthetic demo dataset is generated (its data, not how anything is computed on it).
DEMO_SEED = 0
#: Confidence level of every interval.
CONFIDENCE = 0.95

#: Bootstrap resamples of the interval of a mean (:func:`evalcore.intervals.mean_intervals`).
MEAN_RESAMPLES = 1000
#: Interval of a mean: ``"bootstrap"`` (percentile, on resamples shared by every run) or ``"t"``.
MEAN_CI_METHOD = "bootstrap"
#: Interval of a mean in report.json (:func:`evalcore.report.build_report`, ``evaluate --out``): Student t, as it
#: always was for the command line (``--ci-method bootstrap`` gives the dashboard's, :data:`MEAN_CI_METHOD`).
REPORT_CI_METHOD = "t"

#: Resamples of the bootstrap interval of a paired difference and sign flips of the randomization test.
TEST_RESAMPLES = 10_000
#: Bootstrap interval of a paired difference (:func:`evalcore.stats.paired_test`).
TEST_CI_METHOD = "BCa"
#: Resampling of the comparisons' intervals: each pair its own (``"per_pair"``) or shared (``"shared"``).
TEST_RESAMPLING = "per_pair"

#: The dashboard's paired tests (see the module docstring): resamples and sign flips,
DASHBOARD_TEST_RESAMPLES = 1000
#: their interval,
DASHBOARD_CI_METHOD = "percentile"
#: on resamples shared by every pair.
DASHBOARD_RESAMPLING = "shared"

#: Item pairs of the similarity agreement of a model with the reference (seed 000).
SIMILARITY_PAIRS = 10_000

#: Fusion weight search: strategy, grid step and random trials.
FUSION_STRATEGY = "grid"
FUSION_STEP = 0.1
FUSION_TRIALS = 50
#: The Fusion page tunes on this share of the queries (its split is on by default; ``evalcore fuse`` and
#: :func:`evalcore.fusion_search.search_weights` tune on every query unless given ``--tune-fraction``).
DASHBOARD_TUNE_FRACTION = 0.5
#: The fewest queries a domain needs for its paired tests (:func:`evalcore.stats.compare_by_domain`, the Domains page's
#: "Minimum queries to test a domain", ``evalcore compare --by-domain --min-queries``).
MIN_DOMAIN_QUERIES = 5

"""Session state and caching of the dashboard (the session and its memo: :mod:`dashboard.session`; resolving the
workspace: :mod:`dashboard.resolve`; every name importable from here as before).

* The :class:`~evalcore.workspace.Snapshot` of the session's workspace (read from the
  persistent store by :mod:`dashboard.persist`; its sources are keyed by the SHA-256 of
  their stored artifacts) lives in ``st.session_state["ws"]``.
* Every derived object is computed by one ``st.cache_data`` function per
  pipeline step, keyed by content keys (hashes of the bytes + the options that
  matter; the bytes and objects themselves are passed as ``_``-prefixed
  arguments, which Streamlit does not hash), so picking another query, k, run
  or baseline never re-parses, re-ranks or re-evaluates anything.
* On top of that a small per-session memo keeps the objects themselves (no
  unpickling on each rerun, and the rank orders cached on the Run objects stay).
* Cached steps return an :class:`Outcome` (value, error message, warnings):
  a file that fails validation is cached as failed too, so it is neither
  re-parsed on every rerun nor able to break the other files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import downloads as _downloads
from dashboard import tables as T
from dashboard.cache import (  # noqa: F401  (Outcome, _attempt and outside_cache are part of this module's face)
    Outcome,
    RunReader,
    _attempt,
    _c_aspects,
    _c_compare,
    _c_compare_domains,
    _c_diversity,
    _c_domains,
    _c_evaluate,
    _c_fused_run,
    _c_metadata,
    _c_qrels,
    _c_queries,
    _c_reference,
    _c_run,
    _c_summary,
    _c_universe,
    kept_frame,
    outside_cache,
    summary_run_by_run,
)
from dashboard.context import Context  # (pages use S.Context)
from dashboard.downloads import per_query_csv, results_csv  # noqa: F401  (pages use S.*)
from dashboard.longsteps import CANCEL_KEY, CANCELLED, cancel, cancelled, long_step, retry  # noqa: F401
from dashboard.resolve import _continues, _load_run, _outside, _RunsChanged, context  # noqa: F401  (S.context)
from dashboard.session import (  # noqa: F401  (the session's names, S.* as before the split)
    _TIMING,
    EVALUATIONS_KEPT,
    FAILED_KEY,
    LAZY_FAILED_KEY,
    LAZY_KINDS,
    MEMO_KEY,
    MEMO_SIZE,
    PREVIOUS_EVAL_KEY,
    PREVIOUS_KEY,
    WS_KEY,
    _key,
    _memo,
    _shared,
    clear_caches,
    get_ws,
    memo,
    shared,
)
from dashboard.warmup import warm_up  # noqa: F401  (app.py calls S.warm_up)
from evalcore import defaults as DEF
from evalcore import stacked
from evalcore import workspace as W

DEMO_SEED = DEF.DEMO_SEED

# keys of the selections shared by the pages (not widget keys: those vanish with their page)
SEL_METRIC = "sel_metric"
SEL_K = "sel_k"
SEL_RUN_A = "sel_run_a"
SEL_RUN_B = "sel_run_b"
SEL_BASELINE = "sel_baseline"
SEL_QUERY = "sel_query"
SEL_TEST = "sel_test"
SEL_CORRECTION = "sel_correction"
SEL_INCLUDE_LOW = "sel_include_low"  # low-coverage runs the user includes in ★ and tests anyway
SEL_ASPECT = "sel_aspect"  # the ground-truth aspect whose runs are compared (like with like)
SEL_MIX_ASPECTS = "sel_mix_aspects"  # compare runs of different aspects anyway
SEL_IMAGE_FORMAT = "sel_image_format"  # the format the charts' camera button saves (sidebar)
SEL_CMP_RUNS = "sel_cmp_runs"  # the runs Compare tests, as the user chose them (None: the default)
SEL_HSD_DESIGN = "sel_hsd_design"  # the design of Compare's Tukey HSD
SEL_DOM_MIN_QUERIES = "sel_dom_min_queries"  # the Domains page's minimum queries to test a domain
SEL_OV_COLUMNS = "sel_ov_columns"  # the Overview leaderboard's metric@k columns, as the user chose them
SEL_AGREEMENT = "sel_agreement"  # the Agreement page's measure and RBO p the user set (a dict)
SEL_VERSIONS_VIEW = "sel_versions_view"  # the Versions page's view options the user set (a dict)
SEL_QUERIES_VIEW = "sel_queries_view"  # the Queries page's view options the user set (a dict: more runs)
SEL_OVERVIEW = "sel_overview"  # the Overview's view options the user set (a dict: pages/overview.py)
SEL_OV_CURVE_METRIC = "sel_ov_curve_metric"  # the Overview curves' metric, as the user chose it there (None: follow)
SEL_Q_SEARCH = "sel_q_search"  # the Queries page's "Search query id" text
# the Versions page: the model followed, its reference version, the two versions compared
SEL_VERSION_MODEL = "sel_version_model"
SEL_VERSION_REFERENCE = "sel_version_reference"
SEL_VERSION_A = "sel_version_a"
SEL_VERSION_B = "sel_version_b"


def ws_uid(ws: W.Snapshot, name: str) -> str:
    return next(r.uid for r in ws.runs if r.name == name)


# ------------------------------------------------------------------------------------------ derived views


#: Every default from :mod:`evalcore.defaults`, so the pages give the Python API's and the CLI's numbers.
#: Resamples of the intervals of the means (the API's default, 1,000) and their seed (42, the API's and the CLI's).
N_RESAMPLES = DEF.MEAN_RESAMPLES
CI_SEED = DEF.SEED
#: The paired tests: 1,000 resamples and sign flips (the CLI's default is 10,000: every pair of the runs compared is
#: tested as a page is drawn) and the interval of the differences: percentile on resamples shared by every pair
#: (BCa's jackknife costs ~0.5 s per pair at 5,000 queries). The captions say so, with the command that gives the
#: same numbers (:mod:`dashboard.reproduce`).
TEST_RESAMPLES = DEF.DASHBOARD_TEST_RESAMPLES
CI_METHOD = DEF.DASHBOARD_CI_METHOD
RESAMPLING = DEF.DASHBOARD_RESAMPLING
#: Interval of the means: the percentile bootstrap (inside the metric's range, evalcore.intervals).
MEAN_CI = DEF.MEAN_CI_METHOD


def summary(ctx: Context, by: tuple[str, ...] = ("run", "metric", "k")) -> pd.DataFrame:
    """Mean, std, CI, declared aggregate... per run × metric × k (:func:`evalcore.intervals.summarize_with_intervals`
    with ``aggregates=True``: the CIs are percentile-bootstrap intervals on resamples shared by every run),
    cached per evaluation."""
    key = _key("summary", ctx.eval_key, list(by), MEAN_CI, N_RESAMPLES, CI_SEED)
    if tuple(by) == ("run", "metric", "k") and ctx.eval_each:  # run by run: each run's part is kept on its own
        return memo(key, lambda: summary_run_by_run(_summary_parts(ctx), summary_queries(ctx), tuple(by), MEAN_CI,
                                                    N_RESAMPLES, CI_SEED, _dtypes(ctx, by)))
    table = (lambda: ctx.evaluation.table) if "domain" not in by else (lambda: plain_table(ctx))
    return memo(key, lambda: _c_summary(key, table, tuple(by), MEAN_CI, N_RESAMPLES, CI_SEED))


def summary_queries(ctx: Context) -> tuple[str, ...]:
    """The queries the summary's resamples are drawn over (:func:`evalcore.intervals.queries_drawn`), read from
    each run's evaluation (:func:`evalcore.stacked.queries_drawn`: a restarted Overview stacks no row)."""
    return memo("queries:" + ctx.eval_key, lambda: stacked.queries_drawn(ctx.evaluation))


def _dtypes(ctx: Context, by: tuple[str, ...]) -> dict[str, Any]:
    """The dtypes of the per-query table's ``by`` columns, its DataFrame not built (:func:`evalcore.stacked.empty_table`)."""
    return stacked.empty_table(ctx.evaluation).dtypes[list(by)].to_dict()


def _summary_parts(ctx: Context) -> list[tuple[str, Callable[[], pd.DataFrame]]]:
    """(key of the run's summary, its rows of the evaluation) per evaluated run, in the evaluation's order (the
    key holds the run's name: two runs of one content have one evaluation key, not one summary)."""
    qkey = _key(summary_queries(ctx))

    def rows(name: str) -> pd.DataFrame:
        table = ctx.evaluation.table
        return table[(table["run"] == name).to_numpy()]

    return [("summary1:" + _key(ctx.eval_each[name], name, qkey, MEAN_CI, N_RESAMPLES, CI_SEED),
             functools.partial(rows, name)) for name in ctx.evaluation.runs]


def report_json(ctx: Context, top_k: int) -> Any:
    """Deferred ``report.json`` whose intervals are those the pages show (:func:`dashboard.downloads.report_json`)."""
    return _downloads.report_json(ctx, top_k, ci_method=MEAN_CI, n_resamples=N_RESAMPLES, ci_seed=CI_SEED)


def ci_caption() -> str:
    """Which interval the pages show, in words (for captions)."""
    from evalcore.intervals import CI_DESCRIPTIONS

    seeded = f", seed {CI_SEED}" if MEAN_CI == "bootstrap" else ""
    return "95% CI: " + CI_DESCRIPTIONS[MEAN_CI].format(n=N_RESAMPLES) + seeded


def coverage(ctx: Context) -> pd.DataFrame:
    """``run, n_ground_truth, n_with_results, coverage`` of every evaluated run (:mod:`evalcore.coverage`)."""
    from evalcore.coverage import run_coverage

    return memo("coverage:" + ctx.eval_key, lambda: run_coverage(ctx.evaluation.coverage, runs=ctx.run_names))


def low_coverage(ctx: Context) -> list[str]:
    """Runs below the settings' coverage threshold (flagged on every page)."""
    cov = coverage(ctx)
    return cov.loc[cov["coverage"] < ctx.settings.min_coverage, "run"].tolist()


def excluded_runs(ctx: Context) -> list[str]:
    """Low-coverage runs the user has not included: left out of ★, tests and fusion defaults."""
    keep = set(st.session_state.get(SEL_INCLUDE_LOW, []))
    return [r for r in low_coverage(ctx) if r not in keep]


def aspect_of(ctx: Context, run: str) -> str | None:
    return ctx.run_aspect.get(run) if ctx.aspects else None


def aspects_in_use(ctx: Context) -> list[str]:
    """The distinct ground-truth aspects of the evaluated runs (empty without aspects)."""
    if not ctx.aspects:
        return []
    return list(dict.fromkeys(a for r in ctx.run_names if (a := ctx.run_aspect.get(r)) is not None))


def comparable_runs(ctx: Context, runs: list[str] | None = None, *, aspect: str | None = None,
                    mix: bool = False) -> list[str]:
    """Runs that ★ and tests consider: not excluded for low coverage and, unless ``mix``, only those
    evaluated against ``aspect`` (default: the first aspect in use) — like is compared with like."""
    runs = list(ctx.run_names if runs is None else runs)
    out = [r for r in runs if r not in set(excluded_runs(ctx))]
    in_use = aspects_in_use(ctx)
    if len(in_use) > 1 and not mix:
        a = aspect if aspect in in_use else in_use[0]
        out = [r for r in out if ctx.run_aspect.get(r) == a]
    return out


def plain_table(ctx: Context) -> pd.DataFrame:
    """The per-query table with ``domain`` as plain strings (:func:`dashboard.tables.plain_table`), once per
    server and evaluation (a copy per tab would cost as much as the table itself)."""
    return shared("plain:" + ctx.eval_key, lambda: T.plain_table(ctx.evaluation.table))


def metric_slice(ctx: Context, metric: str, k: int) -> pd.DataFrame:
    """The per-query rows of one metric@k (memoized): the per-query views filter this, not the whole table.

    :func:`dashboard.tables.metric_slice` of the evaluation's table, read from each run's evaluation when its
    rows are not stacked (:func:`evalcore.stacked.metric_rows`: the Versions page of 137 checkpoints reads 5,000
    rows of each, stacking none of the 19 M); when the evaluation continues the session's previous one (a
    checkpoint added), that one's slice with the new runs' rows appended."""
    def compute() -> pd.DataFrame:
        cont = ctx.eval_continues
        before = _memo().get(f"slice:{cont[0]}:{metric}:{k}") if cont is not None else None
        if before is not None:
            after = T.appended_slice(before, T.slice_frame(*stacked.metric_rows(ctx.evaluation, metric, k,
                                                                                start=cont[1])))
            if after is not None:
                return after
        return T.slice_frame(*stacked.metric_rows(ctx.evaluation, metric, k))

    return shared(f"slice:{ctx.eval_key}:{metric}:{k}", compute)


def metric_k_pairs(ctx: Context) -> list[tuple[str, int]]:
    """Every (metric, k) of the evaluation (:func:`dashboard.tables.metric_k_pairs`), from each run's evaluation when
    its rows are not stacked; when it continues the session's previous evaluation, that one's pairs and the new
    rows'."""
    def compute() -> list[tuple[str, int]]:
        cont = ctx.eval_continues
        known = _memo().get("mk:" + cont[0]) if cont is not None else None
        start = cont[1] if known is not None else 0
        return T.metric_k_pairs_parts(stacked.vocabulary(ctx.evaluation).metrics,
                                      stacked.metric_k_codes(ctx.evaluation, start=start), known=known or ())

    return memo("mk:" + ctx.eval_key, compute)

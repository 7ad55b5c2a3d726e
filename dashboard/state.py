"""Session state and caching of the dashboard.

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
import os
import sys
import time
from collections import OrderedDict
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
from dashboard.lazyruns import LazyRuns
from dashboard.longsteps import CANCEL_KEY, CANCELLED, cancel, cancelled, long_step, retry  # noqa: F401
from dashboard.warmup import warm_up  # noqa: F401  (app.py calls S.warm_up)
from evalcore import defaults as DEF
from evalcore import stacked
from evalcore import workspace as W
from evalcore.data import Qrels, Run
from evalcore.errors import EvalcoreError

WS_KEY = "ws"
MEMO_KEY = "_memo"
FAILED_KEY = "_failed_runs"  # uids of the runs that failed to load in the last resolution (for the sidebar)
LAZY_FAILED_KEY = "_failed_run_keys"  # content keys of the runs that failed to load in this session
PREVIOUS_KEY = "_eval_previous"  # the session's last evaluation of its workspace (dashboard.cache.Previous)
PREVIOUS_EVAL_KEY = "_eval_previous_key"  # its key (the memo's "eval:..." entry)
#: kinds of runs read only when a page asks for one (stored or uploaded ranked files, demo runs; the fusions of the
#: session's own workspace too, see :func:`context`)
LAZY_KINDS = ("ranked", "demo")
MEMO_SIZE = 128
EVALUATIONS_KEPT = 6  # evaluations a session's memo keeps (the least recently used go first)
_TIMING = bool(os.environ.get("EVALCORE_DASH_TIMING"))  # log each computed step to stderr
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
SEL_Q_SEARCH = "sel_q_search"  # the Queries page's "Search query id" text
# the Versions page: the model followed, its reference version, the two versions compared
SEL_VERSION_MODEL = "sel_version_model"
SEL_VERSION_REFERENCE = "sel_version_reference"
SEL_VERSION_A = "sel_version_a"
SEL_VERSION_B = "sel_version_b"


# ------------------------------------------------------------------------------------------ workspace


def get_ws() -> W.Snapshot:
    """The session's workspace as a :class:`~evalcore.workspace.Snapshot` (read from the persistent store at
    the start of every run by :func:`dashboard.persist.sync`)."""
    ws = st.session_state.get(WS_KEY)
    return ws if ws is not None else W.Snapshot()


# ------------------------------------------------------------------------------------------ memo


def _memo() -> OrderedDict:
    if MEMO_KEY not in st.session_state:
        st.session_state[MEMO_KEY] = OrderedDict()
    return st.session_state[MEMO_KEY]


def memo(key: str, compute: Callable[[], Any]) -> Any:
    """Per-session memo in front of the ``st.cache_data`` steps (LRU of :data:`MEMO_SIZE` entries)."""
    m = _memo()
    if key in m:
        m.move_to_end(key)
        return m[key]
    t0 = time.perf_counter()
    value = compute()
    if _TIMING:
        sys.stderr.write(f"[evalcore dashboard] {key[:40]:<40} {time.perf_counter() - t0:8.3f}s\n")
    m[key] = value
    while len(m) > MEMO_SIZE:
        m.popitem(last=False)
    if key.startswith("eval:"):  # evaluations are big (a fusion preview makes one per c or weight tried)
        evals = [k for k in m if k.startswith("eval:")]
        for k in evals[: max(0, len(evals) - EVALUATIONS_KEPT)]:
            del m[k]
    return value


@st.cache_resource(show_spinner=False, max_entries=256)
def _shared(key: str, _compute: Callable[[], Any]) -> Any:
    return _compute()


def shared(key: str, compute: Callable[[], Any]) -> Any:
    """:func:`memo` of a value computed once per server (``st.cache_resource``, never copied; the caller
    must not change it): for big objects every tab needs, such as a metric@k slice of 50,000 queries."""
    return memo(key, lambda: _shared(key, compute))


# ------------------------------------------------------------------------------------------ context


def context(progress_slot: Any | None = None, ws: W.Snapshot | None = None) -> Context:
    """Resolve the workspace into qrels, runs and the evaluation (every step cached by content key).

    ``progress_slot`` (an ``st.empty()``) receives a progress bar while
    embeddings are ranked or a reference ground truth is built (cache misses
    only). ``ws`` defaults to the session's workspace (the Fusion page passes a
    preview workspace).
    """
    ws = ws if ws is not None else get_ws()
    ctx = Context(ws)
    try:  # its notes (a renamed metric name) were said when the settings were applied: not again at every rerun
        settings, notes = W.capture(ws.settings.validated)
    except EvalcoreError as e:
        ctx.settings_error = str(e)
        return ctx
    ctx.settings = settings
    gt = ws.ground_truth
    if gt is None:
        return ctx

    # ground truth: aspects, universe, sample, domains
    if gt.kind == "file":
        out = memo("aspects:" + gt.universe_key(), lambda: _c_aspects(gt.universe_key(), gt))
        if not out.ok:
            ctx.gt_error = out.error
            return ctx
        ctx.aspects = out.value
    default_aspect = ctx.aspects[0] if ctx.aspects else None
    ukey = "universe:" + _key(gt.universe_key(), default_aspect)
    out = memo(ukey, lambda: _c_universe(ukey, gt, default_aspect))
    if not out.ok:
        ctx.gt_error = out.error
        return ctx
    universe = out.value
    ctx.n_universe = len(universe)
    skey = "sample:" + _key(ukey, settings.sample_size, settings.seed)
    sample = memo(skey, lambda: W.sample_query_ids(universe, settings.sample_size, settings.seed)) \
        if settings.sample_size else None

    domains = None
    if ws.domain_blob is not None:
        out = memo("domains:" + ws.domain_blob.sha256, lambda: _c_domains(ws.domain_blob.sha256, ws.domain_blob))
        if out.ok:
            domains = out.value
        else:
            ctx.domain_error = out.error
    if ws.metadata_blob is not None:
        out = memo("meta:" + ws.metadata_blob.sha256, lambda: _c_metadata(ws.metadata_blob.sha256, ws.metadata_blob))
        if out.ok:
            ctx.metadata = out.value
        else:
            ctx.metadata_error = out.error
    elif ws.is_demo and gt.kind == "demo":
        from evalcore.workspace.demo import cached_demo

        ctx.metadata = cached_demo(gt.demo_seed or 0).metadata
    qb = getattr(ws, "queries_blob", None)
    if qb is not None:
        out = memo("queries:" + qb.sha256, lambda: _c_queries(qb.sha256, qb))
        if out.ok:
            ctx.query_texts = out.value
        else:
            ctx.queries_error = out.error

    def aspect_of(src: W.RunSource) -> str | None:
        if not ctx.aspects:
            return None
        return src.aspect if src.aspect in ctx.aspects else default_aspect

    qkeys: dict[str | None, str] = ctx.qrels_keys

    def qrels_for(aspect: str | None) -> Qrels | None:
        if aspect in ctx.qrels:
            return ctx.qrels[aspect]
        dname = ws.domain_blob.name if (ws.domain_blob is not None and domains is not None) else None  # (its warning)
        dkey = _key(ws.domain_blob.sha256, dname) if dname is not None else "-"
        qk = "qrels:" + _key(gt.key(aspect, settings), skey if sample is not None else "all", dkey)
        cb, skip = long_step(progress_slot, "building the ground truth from the reference model", qk, known=qk in _memo()) \
            if gt.kind == "reference" else (None, False)
        if skip:
            out = Outcome(error=CANCELLED)
        elif gt.kind == "reference":
            out = memo(qk, lambda: _c_reference(qk, gt, sample, domains, settings, cb, dname))
        else:
            out = memo(qk, lambda: _c_qrels(qk, gt, aspect, sample, domains, settings, cb, dname))
        if not out.ok:
            ctx.gt_error = out.error
            return None
        if out.warnings:
            ctx.gt_warnings = tuple(dict.fromkeys((*ctx.gt_warnings, *out.warnings)))
        if gt.kind == "reference":
            ctx.reference = out.value
            ctx.qrels[aspect] = out.value.deepest
        else:
            ctx.qrels[aspect] = out.value
        qkeys[aspect] = qk
        return ctx.qrels[aspect]

    if qrels_for(default_aspect) is None:
        if progress_slot is not None:
            progress_slot.empty()
        return ctx

    # runs: their content keys first (nothing is read), plain ones before the fusions of them
    plan: dict[str, tuple[W.RunSource, Qrels, str]] = {}  # uid -> (source, its qrels, content key)
    failed_before = st.session_state.setdefault(LAZY_FAILED_KEY, set())
    pending = list(ws.runs)
    for _ in range(len(pending) + 1):
        if not pending:
            break
        rest = []
        for src in pending:
            if src.kind == "fused" and not all(u in plan or u in ctx.run_errors for u in src.fusion.inputs):
                if any(ws.run_by_uid(u) is None for u in src.fusion.inputs):
                    ctx.run_errors[src.uid] = "a run this fusion uses was removed"
                else:
                    rest.append(src)
                continue
            aspect = aspect_of(src)
            q = qrels_for(aspect)
            if q is None:
                ctx.run_errors[src.uid] = "the ground truth for this run's aspect failed to load"
                continue
            if src.kind == "embedding":
                rkey = "run:" + _key(src.content_key(), qkeys.get(aspect), settings.depth)
            elif src.kind == "fused":
                if any(u in ctx.run_errors for u in src.fusion.inputs):
                    ctx.run_errors[src.uid] = "a run this fusion uses failed to load"
                    continue
                rkey = "run:" + _key(src.content_key(), [ctx.run_keys[u] for u in src.fusion.inputs], settings.ties)
            else:
                rkey = "run:" + _key(src.content_key())
            ctx.run_keys[src.uid] = rkey
            plan[src.uid] = (src, q, rkey)
            ctx.run_aspect[src.name] = aspect
        pending = rest
    for src in pending:
        ctx.run_errors.setdefault(src.uid, "a run this fusion uses is not available")

    by_uid: dict[str, Run] = {}

    def load(uid: str) -> Run | None:
        if uid not in by_uid and uid not in ctx.run_errors:
            src, q, rkey = plan[uid]
            inputs = {u: load(u) for u in src.fusion.inputs} if src.kind == "fused" else None
            if inputs is not None and any(r is None for r in inputs.values()):
                ctx.run_errors[uid] = "a run this fusion uses failed to load"
            else:
                run = _load_run(ctx, src, q, rkey, settings, inputs, progress_slot)
                if run is not None:
                    by_uid[uid] = run
                else:
                    failed_before.add(rkey)
        return by_uid.get(uid)

    # stored ranked runs are read when a page asks for one (a restart finds their evaluation on disk), and so are
    # the session's fusions (reading their inputs and fusing took 0.5-3 s of a restarted Versions page that shows
    # none); embedding runs (ranked with a progress bar) and a preview's fusion (the Fusion page says at once
    # why it failed) are resolved now
    lazy = (*LAZY_KINDS, "fused") if ws is get_ws() else LAZY_KINDS
    for uid, (src, _, rkey) in plan.items():
        if src.kind not in lazy or rkey in failed_before:  # (one that failed in this session: its message)
            load(uid)
    if ws is get_ws():
        st.session_state[FAILED_KEY] = set(ctx.run_errors)
    if progress_slot is not None:
        progress_slot.empty()
    uid_of = {src.name: uid for uid, (src, _, _) in plan.items()}

    def on_failure(name: str) -> None:  # a run of the evaluation failed when first read: resolve again without it
        if ws is get_ws():
            st.session_state[FAILED_KEY] = {*st.session_state.get(FAILED_KEY, set()), uid_of[name]}
        st.rerun()

    def _read(uid: str) -> Run:  # a run of the evaluation, read now; one that fails changes the evaluation's key
        run = load(uid)
        if run is None:
            raise _RunsChanged
        return run

    # evaluation: every run, every metric, every k at once; its key needs the runs' content keys only
    for _ in range(len(plan) + 1):
        names = [src.name for src in ws.runs if src.uid in plan and src.uid not in ctx.run_errors]
        ctx.runs = LazyRuns(names, lambda n: load(uid_of[n]), ready={by_uid[u].name: by_uid[u] for u in by_uid},
                            on_failure=on_failure, reader=lambda n: functools.partial(
                                W.build_run, plan[uid_of[n]][0], settings=settings))
        if not names:
            return ctx
        ekey = "eval:" + _key([(n, ctx.run_keys[uid_of[n]], ctx.run_aspect[n]) for n in names],
                    {str(a): qkeys.get(a) for a in {ctx.run_aspect[n] for n in names}}, settings.eval_key())
        qmap = {a: ctx.qrels[a] for a in {ctx.run_aspect[n] for n in names}}

        def pairs(names: list[str] = names) -> list[tuple[Run, str | None]]:
            """The evaluated runs, read now; one that fails changes the evaluation's key (:class:`_RunsChanged`)."""
            return [(_read(uid_of[n]), ctx.run_aspect[n]) for n in names]

        if progress_slot is not None and ekey not in _memo():  # seconds at scale (14 runs x 20,000 queries: ~20 s)
            n_q = max(q.n_queries for q in qmap.values())
            progress_slot.info(f"Evaluating {len(names)} run(s) on {n_q:,} queries (every metric at every k)…",
                               icon=":material/hourglass_top:")
        each = [(n, ctx.run_aspect[n], "eval1:" + _key(ctx.run_keys[uid_of[n]], qkeys.get(ctx.run_aspect[n]),
                                                         settings.eval_key()),
                 RunReader(functools.partial(_read, uid_of[n]), None if uid_of[n] in by_uid else _outside(
                     plan[uid_of[n]][0], settings))) for n in names]
        try:  # (the runs of the session's last evaluation are taken from it: a checkpoint added evaluates itself)
            out = memo(ekey, lambda e=ekey, q=qmap, p=pairs, each=each: _c_evaluate(
                e, q, p, settings, ctx.reference, each, st.session_state.get(PREVIOUS_KEY)))
        except _RunsChanged:  # a run failed when read for the evaluation: without it
            if ws is get_ws():
                st.session_state[FAILED_KEY] = set(ctx.run_errors)
            continue
        finally:
            if progress_slot is not None:
                progress_slot.empty()
        break
    if not out.ok:
        ctx.eval_error = out.error
        return ctx
    if ws is get_ws() and ctx.reference is None:
        now = tuple((n, a, key) for n, a, key, _ in each)
        ctx.eval_continues = _continues(st.session_state.get(PREVIOUS_KEY), st.session_state.get(PREVIOUS_EVAL_KEY),
                                        now, ekey)
        st.session_state[PREVIOUS_KEY] = (now, out.value)
        st.session_state[PREVIOUS_EVAL_KEY] = ekey
    ctx.evaluation, ctx.eval_key, ctx.eval_inputs = out.value, ekey, (qmap, pairs)
    ctx.eval_warnings = tuple(w for w in out.warnings if w not in notes)
    ctx.eval_each = {n: key for n, _, key, _ in each} if ctx.reference is None else {}
    return ctx


def _continues(previous: Any, previous_key: str | None, now: tuple, key: str) -> tuple[str, int] | None:
    """``(key, rows)`` of the session's previous evaluation when the one of ``now`` (its runs' names, aspects and
    keys) is it with runs appended: the previous runs first, then more, one aspect for all (evaluated run after run,
    so its first rows are the previous one's, whether appended or stacked again); else None."""
    if previous is None or previous_key is None or previous_key == key:
        return None
    items, evaluation = previous
    if not items or len(now) <= len(items) or now[:len(items)] != items or len({a for _, a, _ in now}) != 1:
        return None
    return previous_key, stacked.row_count(evaluation)


def _outside(src: W.RunSource, settings: W.Settings) -> Callable[[], Run] | None:
    """A call reading a stored ranked run with no session state (by a worker thread evaluating it), or None."""
    return (lambda: W.build_run(src, settings=settings)) if src.kind == "ranked" and src.store is not None else None


class _RunsChanged(Exception):
    """A run of the evaluation failed when it was read: the evaluation's key changes."""


def _load_run(ctx: Context, src: W.RunSource, q: Qrels, rkey: str, settings: W.Settings, inputs: dict | None,
              progress_slot: Any | None) -> Run | None:
    """Read (or rank, or fuse) one run, cached by its content key; its warnings and error go into ``ctx``."""
    cb, skip = long_step(progress_slot, f"ranking {src.name} by cosine similarity", rkey, known=rkey in _memo()) \
        if src.kind == "embedding" else (None, False)
    if skip:
        ctx.run_errors[src.uid] = CANCELLED
        return None
    if src.kind == "fused":  # bounded on its own, not in the session's memo (see FUSED_RUNS_KEPT)
        f = src.fusion
        pkey = "prep:" + _key([ctx.run_keys[u] for u in f.inputs], f.method, f.norm, f.top_n, f.ties or settings.ties)
        out = _c_fused_run(rkey, src, settings, inputs, pkey)
    else:  # a stored ranked run is kept per server: not in the memo too (an entry per run flushed it beyond MEMO_SIZE)
        read = lambda: _c_run(rkey, src, q if src.kind == "embedding" else None, settings, inputs, cb)  # noqa: E731
        out = read() if src.kind in LAZY_KINDS else memo(rkey, read)
    if out.warnings:
        ctx.run_warnings[src.uid] = out.warnings
    if not out.ok:
        ctx.run_errors[src.uid] = out.error
        return None
    return out.value if out.value.name == src.name else out.value.renamed(src.name)


def ws_uid(ws: W.Snapshot, name: str) -> str:
    return next(r.uid for r in ws.runs if r.name == name)


def _key(*parts: Any) -> str:
    return W.stable_key(*parts)


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


def clear_caches() -> None:
    """Drop the session memo (the ``st.cache_data`` entries stay; they are keyed by content)."""
    st.session_state.pop(MEMO_KEY, None)

"""Resolving the session's workspace into qrels, runs and the evaluation (:func:`context`, which every page calls
as ``S.context``; split out of :mod:`dashboard.state`, which re-exports it).

Every step is cached by content key (:func:`dashboard.session.memo` in front of the ``st.cache_data`` steps of
:mod:`dashboard.cache`); a file that fails validation is cached as failed too, so it is neither re-parsed on every
rerun nor able to break the other files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import streamlit as st

from dashboard.cache import (
    Outcome,
    RunReader,
    _c_aspects,
    _c_domains,
    _c_evaluate,
    _c_fused_run,
    _c_metadata,
    _c_qrels,
    _c_queries,
    _c_reference,
    _c_run,
    _c_universe,
)
from dashboard.context import Context
from dashboard.lazyruns import LazyRuns
from dashboard.longsteps import CANCELLED, long_step
from dashboard.session import (
    FAILED_KEY,
    LAZY_FAILED_KEY,
    LAZY_KINDS,
    PREVIOUS_EVAL_KEY,
    PREVIOUS_KEY,
    _key,
    _memo,
    get_ws,
    memo,
)
from evalcore import stacked
from evalcore import workspace as W
from evalcore.data import Qrels, Run
from evalcore.errors import EvalcoreError

__all__ = ["context"]


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


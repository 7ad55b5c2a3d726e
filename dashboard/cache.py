"""The dashboard's cached pipeline steps and their :class:`Outcome`.

Each step is keyed by a content key (its first argument: hashes of the bytes or of the stored
artifacts + the options that matter); the objects follow as ``_``-prefixed arguments, which
Streamlit does not hash. A step that fails is cached as failed too (an :class:`Outcome` with an
error), so a bad file is neither re-parsed on every rerun nor able to break the other files.

The big objects (qrels, runs, the evaluation, metadata) are cached with ``st.cache_resource``:
one object per server, shared by every session (never copied or mutated), so N tabs on one
workspace cost about one copy; the small summaries with ``st.cache_data``.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import tables as T
from evalcore import workspace as W
from evalcore.data import Qrels, Run
from evalcore.errors import EvalcoreError, warn
from evalcore.evaluate import worker_count
from evalcore.workspace import derived, pairstore

# ------------------------------------------------------------------------------------------ outcomes


@dataclass(frozen=True)
class Outcome:
    """A cached step's result: ``value`` or ``error`` (a one-line message), plus warnings."""

    value: Any = None
    error: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


def _attempt(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    try:
        value, warns = W.capture(fn, *args, **kwargs)
    except EvalcoreError as e:
        return Outcome(error=str(e))
    except MemoryError:
        return Outcome(error="out of memory while processing this file; try a query sample")
    return Outcome(value, None, tuple(warns))


def kept_frame(kind: str, key: str, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The DataFrame ``compute()`` gives, read from the disk cache of results when an earlier server kept it
    (:mod:`evalcore.workspace.derived`: same key, same engine), kept there otherwise."""
    frame = derived.load_frame(kind, key)
    if frame is None:
        frame = compute()
        derived.store_frame(kind, key, frame)
    return frame


def kept_outcome(kind: str, key: str, compute: Callable[[], Outcome]) -> Outcome:
    """``compute()``, its frame read from the disk cache of results when an earlier server kept it under ``key``
    (as :func:`kept_frame`), kept there otherwise, unless it failed or warned (a warning is shown each time it is
    computed, so it is never lost). ``key`` must name every input and option."""
    frame = derived.load_frame(kind, key)
    if frame is not None:
        return Outcome(frame)
    out = compute()
    if out.ok and not out.warnings:
        derived.store_frame(kind, key, out.value)
    return out


def outside_cache(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a Streamlit element method from inside a cached function without it being recorded for replay.

    ``st.cache_data`` records every element call made while the cached function
    runs and refuses those on blocks created outside it (a progress bar created
    by the page). A progress update is transient, so it is sent as if no cached
    function were running.
    """
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import in_cached_function
    except ImportError:  # pragma: no cover - other Streamlit versions: no live progress
        return None

    def inner() -> Any:
        in_cached_function.set(False)
        return fn(*args, **kwargs)

    return contextvars.copy_context().run(inner)


# ------------------------------------------------------------------------------------------ cached steps
# The first argument of each is the content key; the objects follow with a leading underscore.


@st.cache_resource(show_spinner=False, max_entries=32)
def _c_aspects(key: str, _gt: W.GroundTruthSource) -> Outcome:
    return _attempt(W.ground_truth_aspects, _gt)


@st.cache_resource(show_spinner=False, max_entries=32)
def _c_universe(key: str, _gt: W.GroundTruthSource, aspect: str | None) -> Outcome:
    return _attempt(W.query_universe, _gt, aspect)


@st.cache_resource(show_spinner=False, max_entries=32)
def _c_domains(key: str, _blob: W.Blob) -> Outcome:
    return _attempt(W.load_domain_map, _blob)


@st.cache_resource(show_spinner=False, max_entries=32)
def _c_metadata(key: str, _blob: W.Blob) -> Outcome:
    return _attempt(W.load_metadata, _blob)


@st.cache_resource(show_spinner=False, max_entries=64)
def _c_qrels(key: str, _gt: W.GroundTruthSource, aspect: str | None, _sample: np.ndarray | None,
             _domains: dict | None, _settings: W.Settings, _progress: Callable | None,
             _domains_label: str | None = None) -> Outcome:
    return _attempt(W.prepare_qrels, _gt, aspect=aspect, sample=_sample, domains=_domains, settings=_settings,
                    progress=_progress, domains_label=_domains_label)


@st.cache_resource(show_spinner=False, max_entries=16)
def _c_reference(key: str, _gt: W.GroundTruthSource, _sample: np.ndarray | None, _domains: dict | None,
                 _settings: W.Settings, _progress: Callable | None, _domains_label: str | None = None) -> Outcome:
    return _attempt(W.prepare_reference, _gt, sample=_sample, domains=_domains, settings=_settings,
                    progress=_progress, domains_label=_domains_label)


@st.cache_resource(show_spinner=False, max_entries=64)
def _c_run(key: str, _src: W.RunSource, _qrels: Qrels | None, _settings: W.Settings,
           _inputs: dict | None, _progress: Callable | None) -> Outcome:
    """A stored or uploaded ranked run, an embedding run (ranked here) or a demo run (a fused one: :func:`_c_fused_run`)."""
    return _attempt(W.build_run, _src, qrels=_qrels, settings=_settings, inputs=_inputs, progress=_progress)


#: Fused runs kept in memory (each fusion the Fusion page previews is one: at 3 runs x 20,000 queries x 100
#: with its rank order and evaluation alignment, ~250 MB; kept without bound, moving c twelve times took
#: the server from 3.2 to 6.9 GB).
FUSED_RUNS_KEPT = 3


@st.cache_resource(show_spinner=False, max_entries=FUSED_RUNS_KEPT)
def _c_fused_run(key: str, _src: W.RunSource, _settings: W.Settings, _inputs: dict | None,
                 _prepared_key: str) -> Outcome:
    """A fused run, from its inputs' prepared fusion kept under ``_prepared_key`` (moving the weights or RRF's
    c on the Fusion page fuses again without preparing again)."""
    prepared = _c_prepared(_prepared_key, _src, _inputs, _settings)
    if not prepared.ok:
        return prepared
    out = _attempt(W.build_run, _src, settings=_settings, prepared=prepared.value)
    return dataclasses.replace(out, warnings=tuple(dict.fromkeys(prepared.warnings + out.warnings)))


@st.cache_resource(show_spinner=False, max_entries=2)
def _c_prepared(key: str, _src: W.RunSource, _inputs: dict, _settings: W.Settings) -> Outcome:
    """The latest prepared fusions (at 3 runs x 20,000 queries x 100 one holds ~300 MB)."""
    return _attempt(W.prepare_fusion, _src, _inputs, _settings)


@st.cache_resource(show_spinner=False, max_entries=16)
def _c_evaluate(key: str, _qrels: dict, _runs: Callable[[], list], _settings: W.Settings,
                _reference: Any = None, _each: list | None = None, _previous: Previous | None = None) -> Outcome:
    """The evaluation of ``_runs()`` ((run, aspect) pairs, read only on a miss: a restart reads no run).

    ``_each`` (``(name, aspect, key of its evaluation, read the run)`` per run, in order): with the disk
    cache on and judgments (no reference model), each run's evaluation is read from the disk when an
    earlier evaluation kept it, else computed and kept (:func:`_evaluate_each`): adding a run to a
    workspace evaluates that run, a fusion's preview the fused run. The whole evaluation is then their
    stack, not kept itself (14 kept runs x 20,000 queries read and stacked in 0.22 s; the whole one read
    in 0.54 s, written in 0.35 s). ``_previous``: the session's last evaluation (:data:`Previous`), whose runs'
    rows are taken from it rather than from the disk.
    """
    if _each is not None and _reference is None and derived.cache_dir() is not None:
        return _attempt(_evaluate_each, _qrels, _each, _settings, _previous)
    return _kept_evaluation(key, lambda: _attempt(W.evaluate_workspace, _qrels, _runs(), _settings,
                                                  reference=_reference))


#: key -> [lock, threads holding or waiting for it] of the evaluations being computed (see :func:`_one_at_a_time`)
_FLIGHTS: dict[str, list] = {}
_FLIGHTS_LOCK = threading.Lock()


@contextlib.contextmanager
def _one_at_a_time(key: str):
    """Threads computing the same ``key`` take turns, so that the later ones find the first one's result kept.

    Two reruns overlap when a user changes a second widget while the first change's rerun still computes
    (Streamlit starts the new run at once; the old one stops at its next element): both evaluated the same
    fused run, twice the work on the server's cores. Streamlit's caches lock their keys the same way; the
    evaluations kept on disk need their own lock. The entry is dropped when no thread holds or waits for it.
    """
    with _FLIGHTS_LOCK:
        entry = _FLIGHTS.setdefault(key, [threading.Lock(), 0])
        entry[1] += 1
    try:
        with entry[0]:
            yield
    finally:
        with _FLIGHTS_LOCK:
            entry[1] -= 1
            if entry[1] == 0:
                del _FLIGHTS[key]


def _kept_evaluation(key: str, compute: Callable[[], Outcome]) -> Outcome:
    """The evaluation kept on disk under ``key`` by an earlier server (same inputs, same code), else
    ``compute()``'s, kept there when it succeeded; one thread at a time per key (a second waits and reads it)."""
    with _one_at_a_time(key):
        hit = derived.load_evaluation(key)
        if hit is not None:
            return Outcome(hit[0], None, hit[1])
        out = compute()
        if out.ok:
            derived.store_evaluation(key, out.value, out.warnings)
        return out


@dataclass(frozen=True)
class RunReader:
    """Reads a run of ``_each`` for :func:`_evaluate_each`: called, in the script's thread (the runs' caches are
    Streamlit's; a failure is recorded and changes the evaluation's runs); ``worker``, when given, reads it with
    no session state, in the worker thread that evaluates it."""

    script: Callable[[], Run]
    worker: Callable[[], Run] | None = None

    def __call__(self) -> Run:
        return self.script()


def _or_none(read: Callable[[], Run]) -> Callable[[], Run | None]:
    """``read``, giving None where it fails (the script's reader then reads the run again, and says why)."""
    def attempt() -> Run | None:
        try:
            return read()
        except (EvalcoreError, OSError, MemoryError):
            return None
    return attempt


#: The session's last evaluation of its workspace: ``((name, aspect, key of the run's evaluation) per run, the
#: evaluation)`` (see :func:`_evaluate_each`).
Previous = tuple[tuple[tuple[str, Any, str], ...], Any]
#: key of a run's evaluation -> the warnings its computation gave, for the runs of the evaluations made lately
#: (those of a run taken from the session's last evaluation are given again, as when it was read from the disk).
_WARNINGS: OrderedDict[str, tuple[str, ...]] = OrderedDict()
_WARNINGS_KEPT = 4096
_WARNINGS_LOCK = threading.Lock()


def _noted(outcomes: dict[str, Outcome]) -> None:
    with _WARNINGS_LOCK:
        for key, out in outcomes.items():
            _WARNINGS[key] = out.warnings
            _WARNINGS.move_to_end(key)
        while len(_WARNINGS) > _WARNINGS_KEPT:
            _WARNINGS.popitem(last=False)


def _from_previous(each: list, previous: Previous | None) -> tuple[dict[str, Outcome], Any]:
    """What the session's last evaluation gives of the runs of ``each``: ``(outcomes, onto)``.

    When ``each`` continues it (its runs, then more, one aspect for all), ``onto`` is that evaluation (the new
    runs' rows are appended to it: :func:`evalcore.workspace.evaluate_each`) and ``outcomes`` hold its runs'
    warnings, their rows read only if asked for; else each run it holds under the same key is taken from it
    (:func:`evalcore.workspace.run_parts`: a run removed or renamed reads nothing again). A run whose warnings
    are no longer known is not taken.
    """
    if previous is None:
        return {}, None
    items, evaluation = previous
    with _WARNINGS_LOCK:
        known = {key: _WARNINGS[key] for _, _, key in items if key in _WARNINGS}
    now = [(name, aspect, key) for name, aspect, key, _ in each]
    parts = functools.cache(lambda: W.run_parts(evaluation) or {})
    if now[:len(items)] == list(items) and len(now) > len(items) and len(known) == len(items) and len(
            {aspect for _, aspect, _ in now}) == 1:
        return {key: Outcome(_Part(parts, name), None, known[key]) for name, _, key in items}, evaluation
    return {key: Outcome(parts()[name], None, known[key]) for name, _, key in items
            if key in known and name in parts()}, None


@dataclass(frozen=True)
class _Part:
    """A run's rows in the session's last evaluation, taken only if asked for (:func:`_from_previous`)."""

    parts: Callable[[], dict]
    name: str

    def get(self) -> Any:
        return self.parts()[self.name]


def _evaluate_each(qmap: dict, each: list, settings: W.Settings, previous: Previous | None = None) -> Any:
    """:func:`evalcore.workspace.evaluate_each` with each run's evaluation kept on disk under its own key.

    The runs not kept yet are evaluated together by :func:`evalcore.workspace.evaluate_several` (one thread
    per core: a first open or a settings change on 14 runs x 20,000 queries, 4.3 -> 2.2 s of evaluation on 2
    cores); a stored run not read yet is read by the worker that evaluates it (:class:`RunReader`), the others
    here (the script's thread: the runs' caches are Streamlit's), and each evaluation is kept as soon as it is
    made. Their keys are held meanwhile (:func:`_one_at_a_time`, taken in sorted order by every thread, so that two
    overlapping reruns never wait for each other in a circle), and looked up again once held: another
    rerun may have kept them meanwhile. The kept evaluations are read first, by one thread per core (a cold open of
    137 kept runs: ~1.4 -> ~0.9 s on a busy 2-core machine), each once. The runs of the session's ``previous``
    evaluation are taken from it (:func:`_from_previous`): a checkpoint added to 137 reads one kept evaluation,
    not 138, and its rows are appended to the 137 already stacked. The result is stacked when a page first
    reads it whole (:class:`evalcore.stacked.StackedEvaluation`).
    """
    outcomes, onto = _from_previous(each, previous)

    def kept(key: str) -> bool:
        hit = derived.load_evaluation(key)
        if hit is not None:
            outcomes[key] = Outcome(hit[0], None, hit[1])
        return hit is not None

    first = list(dict.fromkeys(key for _, _, key, _ in each if key not in outcomes))
    with ThreadPoolExecutor(worker_count(None, len(first)), thread_name_prefix="evalcore-read-kept") as pool:
        for key, hit in zip(first, pool.map(lambda key: derived.load_evaluation(key), first), strict=True):
            if hit is not None:
                outcomes[key] = Outcome(hit[0], None, hit[1])
    missing = sorted({key for _, _, key, _ in each} - outcomes.keys())
    with contextlib.ExitStack() as held:
        for key in missing:
            held.enter_context(_one_at_a_time(key))
        jobs: dict[str, tuple[Qrels, Any]] = {}
        readers: dict[str, Callable[[], Run]] = {}
        for _, aspect, key, read in each:
            if key in missing and key not in jobs and not kept(key):
                outside = getattr(read, "worker", None)  # a stored run: read by the worker that evaluates it
                jobs[key], readers[key] = (qmap[aspect], read() if outside is None else _or_none(outside)), read
        keys = list(jobs)

        def done(i: int, ev: Any, msgs: tuple[str, ...]) -> None:  # kept at once, by the worker
            outcomes[keys[i]] = Outcome(ev, None, msgs)  # (the settings' messages: the same for every run)
            derived.store_evaluation(keys[i], ev, msgs)

        if jobs:  # (an error is raised, to the caller's _attempt)
            W.evaluate_several(list(jobs.values()), settings, done=done)
            for key in [k for k in keys if k not in outcomes]:  # its worker could not read it: here, as it fails
                run = readers[key]()  # (recorded; the evaluation's runs change)
                W.evaluate_several([(jobs[key][0], run)], settings, done=lambda i, ev, msgs, key=key: done(
                    keys.index(key), ev, msgs))

    _noted(outcomes)

    def one(key: str) -> Any:
        for m in outcomes[key].warnings:  # (the whole evaluation's warnings, as one call gives them)
            warn(m)
        value = outcomes[key].value
        return value.get() if isinstance(value, _Part) else value

    if onto is not None:  # its runs are not asked for: their warnings, as they were given
        for _, _, key in previous[0]:
            for m in outcomes[key].warnings:
                warn(m)
    return W.evaluate_each(qmap, [(name, aspect, functools.partial(one, key)) for name, aspect, key, _ in each],
                           previous=onto)


@st.cache_resource(show_spinner=False, max_entries=64)
def _c_diversity(key: str, _src: W.RunSource, _run: Run, _qrels: Qrels, k: int, ties: str,
                 _query_ids: list | None, judged_only: bool = False, alpha: float = W.DIVERSITY_ALPHA) -> Outcome:
    return kept_outcome("diversity", key, lambda: _attempt(  # kept on disk by an earlier server (same inputs, code)
        W.run_diversity, _src, _run, _qrels, k=[k], ties=ties, alpha=alpha, query_ids=_query_ids,
        judged_only=judged_only))


@st.cache_resource(show_spinner=False, max_entries=32)
def _c_queries(key: str, _blob: W.Blob) -> Outcome:
    return _attempt(W.load_query_texts, _blob)


@st.cache_data(show_spinner=False, max_entries=256)
def _c_summary(key: str, _table: Callable[[], pd.DataFrame], by: tuple[str, ...], ci_method: str, n_resamples: int,
               seed: int, _query_ids: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The summary of the table ``_table()`` gives (built only when the summary is not on disk); ``_query_ids``:
    the queries its resamples are drawn over (``key`` must name them)."""
    from evalcore.intervals import summarize_with_intervals

    return kept_frame("summary", key, lambda: summarize_with_intervals(
        _table(), by=by, method=ci_method, n_resamples=n_resamples, seed=seed, aggregates="metric" in by,
        query_ids=_query_ids))


def summary_run_by_run(parts: list[tuple[str, Callable[[], pd.DataFrame]]], query_ids: tuple[str, ...],
                       by: tuple[str, ...], ci_method: str, n_resamples: int, seed: int,
                       dtypes: dict[str, Any]) -> pd.DataFrame:
    """The summary of a table made of parts (one run's rows each, in the table's run order), part by part.

    ``parts``: (key of that part's summary, its rows) per run; ``query_ids``: the whole table's queries
    with a finite value, sorted, over which every part draws its resamples, so the parts together are
    the whole table's summary row for row (:func:`evalcore.intervals.summarize_with_intervals`). Each
    part is kept on its own: adding a run summarizes that run, a fusion's preview the fused run.
    ``dtypes``: the whole table's dtypes of the ``by`` columns (a part kept by an earlier evaluation has
    that evaluation's categories).
    """
    frames = [_c_summary(key, rows, by, ci_method, n_resamples, seed, query_ids) for key, rows in parts]
    return pd.concat(frames, ignore_index=True).astype(dtypes)


@st.cache_data(show_spinner=False, max_entries=64)
def _c_compare(key: str, _table: pd.DataFrame, metric: str, k: int, test: str, correction: str,
               n_resamples: int, ci_method: str, runs: tuple[str, ...] | None = None, *, seed: int,
               resampling: str) -> Outcome:
    from evalcore.stats import compare

    with pairstore.kept_pairs():  # pairs tested by an earlier server are read back, not tested again
        return _attempt(compare, _table, metric=metric, k=k, test=test, correction=correction, runs=runs,
                        n_resamples=n_resamples, seed=seed, ci_method=ci_method, resampling=resampling)


@st.cache_data(show_spinner=False, max_entries=64)
def _c_compare_domains(key: str, _table: pd.DataFrame, metric: str, k: int, baseline: str, test: str,
                       correction: str, min_queries: int, n_resamples: int, ci_method: str,
                       runs: tuple[str, ...] | None = None, *, seed: int, resampling: str) -> Outcome:
    from evalcore.stats import compare_by_domain

    with pairstore.kept_pairs():  # as _c_compare
        return _attempt(compare_by_domain, T.plain_table(_table), metric=metric, k=k, baseline=baseline, test=test,
                        runs=runs, correction=correction, min_queries=min_queries, n_resamples=n_resamples,
                        seed=seed, ci_method=ci_method, resampling=resampling)

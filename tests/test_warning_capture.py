"""Warnings collected per thread (evalcore.errors.collected_warnings, evalcore.workspace.capture).

``warnings.catch_warnings`` swaps process-wide hooks: two dashboard sessions capturing at once used to
take each other's messages, lose their own, and could leave a dead capture hook installed. Collection is
now a context variable: each thread gets its own messages, its worker threads report to it, and the
:mod:`warnings` module is left as it was.
"""

from __future__ import annotations

import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

from evalcore import workspace as W
from evalcore._threads import in_caller_context
from evalcore.data import Qrels, Run
from evalcore.errors import EvalcoreWarning, collected_warnings, quiet_warnings, warn
from evalcore.measures import HITS_RENAMED

DEADLINE = 60  # only against a thread that never gets there


def test_two_threads_capturing_at_once_each_get_their_own_warnings_and_leave_no_hook():
    """The interleaving that broke catch_warnings: B starts capturing while A captures, A ends first."""
    steps = [threading.Event() for _ in range(5)]
    got: dict[str, list[str]] = {}
    failed: list[BaseException] = []
    hooks_before = (warnings.showwarning, list(warnings.filters))

    def step(i: int) -> None:
        steps[i].set()

    def wait(i: int) -> None:
        if not steps[i].wait(DEADLINE):
            raise AssertionError(f"step {i} never came")

    def a() -> list[str]:
        step(0)
        wait(1)  # B is capturing too
        warn("from A")
        step(2)
        wait(3)  # B warned
        return []

    def b() -> list[str]:
        step(1)
        wait(2)
        warn("from B, first")
        step(3)
        wait(4)  # A has stopped capturing
        warn("from B, second")
        return []

    def session(name: str, fn, before: int | None) -> None:
        try:
            if before is not None:
                wait(before)
            _, got[name] = W.capture(fn)
            if name == "A":
                step(4)
        except BaseException as e:  # noqa: BLE001 - reported below
            failed.append(e)
            for s in steps:
                s.set()

    threads = [threading.Thread(target=session, args=("A", a, None)),
               threading.Thread(target=session, args=("B", b, 0))]
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failed, failed
    assert got == {"A": ["from A"], "B": ["from B, first", "from B, second"]}
    assert not [w for w in escaped if issubclass(w.category, EvalcoreWarning)]  # none went astray
    assert (warnings.showwarning, list(warnings.filters)) == hooks_before


def test_worker_threads_report_to_the_capturing_thread():
    """evaluate_several's workers (each evaluating one run) warn about the settings: the capture gets it, once,
    and nothing is emitted through the warnings module."""
    qrels = Qrels.from_records(["q1", "q2"], ["d1", "d2"], [1, 1])
    runs = [Run.from_records(["q1", "q2"], [f"d{i}", "d2"], [2.0, 1.0], name=f"r{i}") for i in range(4)]
    settings = W.Settings(metrics=("hits", "ndcg"), k=(1,))
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        evs, msgs = W.capture(W.evaluate_several, [(qrels, r) for r in runs], settings, workers=2)
    assert len(evs) == 4 and msgs == [HITS_RENAMED]
    assert not [w for w in escaped if issubclass(w.category, EvalcoreWarning)]


def test_in_caller_context_carries_the_collection_into_a_pool_and_nothing_else_does():
    def job(i: int) -> int:
        warn(f"job {i}")
        return i

    with collected_warnings() as got, ThreadPoolExecutor(2) as pool:
        assert sorted(pool.map(in_caller_context(job), range(4))) == [0, 1, 2, 3]
    assert sorted(got) == ["job 0", "job 1", "job 2", "job 3"]
    with collected_warnings() as got, ThreadPoolExecutor(1) as pool, pytest.warns(EvalcoreWarning, match="job 9"):
        pool.submit(job, 9).result()  # a plain thread does not carry it: emitted as usual
    assert got == []


def test_quiet_warnings_drop_what_they_name_in_this_context_only():
    with collected_warnings() as got, quiet_warnings(r".*all ZEROS"):
        warn("3 corpus vector(s) are all zeros; their cosine is 0")
        warn("2 queries lack results")
        with ThreadPoolExecutor(1) as pool:  # another thread is not quieted
            pool.submit(in_caller_context(warn), "4 vector(s) are all zeros").result()
            with pytest.warns(EvalcoreWarning, match="all zeros"):
                pool.submit(warn, "5 vector(s) are all zeros").result()
    assert got == ["2 queries lack results"]  # the worker carried the quiet rule with the collection
    with pytest.warns(EvalcoreWarning, match="all zeros"):
        warn("1 vector(s) are all zeros")  # outside: emitted again

"""Changes that race with another writer, made deterministic: the other writer holds the writer lock
(:meth:`Workspace.exclusive`) while this change waits for it, and changes the workspace before letting
go; and evaluations whose inputs change between their computation and their recording.

No sleeps decide the order: the test waits until the waiting thread is blocked on the writer lock.
"""

from __future__ import annotations

import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalcore import Qrels, Run, Workspace
from evalcore.errors import OptionError
from evalcore.workspace.writelock import _PathLock

QIDS = [f"q{i}" for i in range(12)]
DOCS = [f"d{j}" for j in range(30)]


def _qrels(seed: int = 0) -> Qrels:
    rng = np.random.default_rng(seed)
    return Qrels.from_dict({q: {str(d): int(rng.integers(1, 3)) for d in rng.choice(DOCS, 4, replace=False)}
                            for q in QIDS})


def _run(seed: int) -> Run:
    rng = np.random.default_rng(seed)
    return Run.from_dict({q: {str(d): float(s) for d, s in zip(rng.choice(DOCS, 10, replace=False), rng.random(10),
                                                                 strict=True)} for q in QIDS})


class _Waiter:
    """Run ``change`` in a thread; ``blocked()`` waits until it waits for the writer lock."""

    def __init__(self, change: Callable[[], Any]) -> None:
        self.error: BaseException | None = None

        def body() -> None:
            try:
                change()
            except BaseException as e:  # noqa: BLE001 - handed to the test
                self.error = e

        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()

    def blocked(self, timeout: float = 20.0) -> None:
        target = _PathLock.acquire.__code__
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            frame = sys._current_frames().get(self.thread.ident)
            while frame is not None and frame.f_code is not target:
                frame = frame.f_back
            if frame is not None:
                return
            if not self.thread.is_alive():
                raise AssertionError(f"the change ended without waiting for the lock ({self.error!r})")
            time.sleep(0.001)  # polling the condition above, not ordering anything
        raise AssertionError("the change never waited for the writer lock")

    def join(self) -> BaseException | None:
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()
        return self.error


def _meanwhile(ws: Workspace, change: Callable[[], Any], other: Callable[[], Any]) -> BaseException | None:
    """``change`` starts while another writer holds the lock; that one makes ``other`` and lets go."""
    with ws.exclusive():
        waiter = _Waiter(change)
        waiter.blocked()
        other()
    return waiter.join()


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    w = Workspace.open(tmp_path / "W")
    w.set_ground_truth(_qrels(), name="gt")
    w.add_run("a", _run(1), model="m-old", tags=["old"])
    return w


def test_set_run_info_keeps_a_field_another_writer_changed_meanwhile(ws: Workspace) -> None:
    error = _meanwhile(ws, lambda: ws.set_run_info("a", model="m-new"),
                       lambda: ws.set_run_info("a", tags=["from-other"]))
    assert error is None
    rec = ws.run_record("a")
    assert (rec.model, rec.tags) == ("m-new", ("from-other",))


def test_set_run_info_on_a_run_removed_meanwhile_fails_and_touches_no_other_run(ws: Workspace) -> None:
    """The removed run's row id is reused by the next run added (SQLite gives the highest id + 1)."""
    ws.add_run("z", _run(7), model="model-of-z", version="vz", step=42)
    z_id = ws.run_record("z").id

    def other() -> None:
        ws.remove_run("z")
        ws.add_run("b", _run(8), model="model-of-b", version="vb", step=1)

    error = _meanwhile(ws, lambda: ws.set_run_info("z", tags=["tag-for-z"], model="zz"), other)
    assert isinstance(error, OptionError) and "no run named 'z'" in str(error)
    rec = ws.run_record("b")
    assert rec.id == z_id  # the situation this test is about
    assert (rec.model, rec.version, rec.step, rec.tags) == ("model-of-b", "vb", 1.0, ())


def test_set_settings_keeps_a_setting_another_writer_changed_meanwhile(ws: Workspace) -> None:
    ws.set_settings(seed=1)
    error = _meanwhile(ws, lambda: ws.set_settings(k=(5,)), lambda: ws.set_settings(seed=99))
    assert error is None
    assert (ws.settings().k, ws.settings().seed) == ((5,), 99)
    assert ws.has_settings()


def test_set_settings_of_a_new_workspace_stores_them(tmp_path: Path) -> None:
    w = Workspace.open(tmp_path / "N")
    assert not w.has_settings()
    w.set_settings()
    assert w.has_settings()
    gen = w.generation
    assert w.set_settings(seed=w.settings().seed) == w.settings()
    assert w.generation == gen  # nothing changed: nothing written


def _loaded_stale(ws: Workspace) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ws.load_evaluation().settings.get("stale") or {}


def test_an_evaluation_keeps_the_inputs_it_was_computed_from(ws: Workspace) -> None:
    """Another writer re-records the run while ``evaluate`` computes: the numbers are those of the
    old content, so the stored evaluation must read back as stale."""
    fired: list[int] = []

    def progress(done: int, total: int) -> None:
        if not fired:
            fired.append(1)
            ws.add_run("a", _run(2), replace=True)

    ev = ws.evaluate(metrics=["ndcg"], k=[10], progress=progress)
    assert fired
    assert _loaded_stale(ws) == {"a": "re-recorded"}
    assert ws.evaluations().stale.iloc[0] == {"a": "re-recorded"}
    now = ws.evaluate(metrics=["ndcg"], k=[10], record=False)
    assert not np.allclose(ev.table.value.to_numpy(), now.table.value.to_numpy())  # the content did change


def test_an_evaluation_recorded_later_keeps_its_ground_truth(ws: Workspace) -> None:
    """The Overview's path: evaluate, then (another process) another ground truth and a re-recorded
    run, then ``record_evaluation(ev)`` with no ground-truth id."""
    ev = ws.evaluate(metrics=["ndcg"], k=[10], record=False)
    ws.set_ground_truth(_qrels(1), name="gt-new")
    ws.add_run("a", _run(2), replace=True)
    ws.record_evaluation(ev)
    row = ws.evaluations().iloc[0]
    assert row.ground_truth == "gt"
    assert row.stale == {"a": "re-recorded", "(ground truth)": "replaced"}


def test_an_evaluation_of_current_inputs_is_current(ws: Workspace) -> None:
    ev = ws.evaluate(metrics=["ndcg"], k=[10], record=False)
    ws.record_evaluation(ev)
    row = ws.evaluations().iloc[0]
    assert row.ground_truth == "gt" and row.stale == {}


def test_the_dashboards_evaluation_keeps_the_inputs_of_its_snapshot(ws: Workspace) -> None:
    """The Overview's "Record this evaluation": the evaluation of the session's snapshot, recorded after a
    script switched the ground truth and re-recorded the run, is stale and under its own ground truth (it was
    stamped with the catalogue at the click: current, under "gt-new"); the shared memoised one stays unmarked."""
    from dashboard.persist import evaluation_to_record
    from evalcore import evaluate
    from evalcore.workspace.evaluations import inputs_of
    from evalcore.workspace.stored import snapshot_of

    snap = snapshot_of(ws)
    ev = evaluate(_qrels(), {"a": _run(1)}, metrics=["ndcg"], k=[10])  # what the session computed from snap
    marked = evaluation_to_record(ev, snap)
    ws.set_ground_truth(_qrels(1), name="gt-new")
    ws.add_run("a", _run(2), replace=True)
    ws.record_evaluation(marked)
    row = ws.evaluations().iloc[0]
    assert row.ground_truth == "gt" and row.stale == {"a": "re-recorded", "(ground truth)": "replaced"}
    assert inputs_of(ev) is None and marked is not ev

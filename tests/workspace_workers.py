"""Processes of the workspace concurrency tests (``tests/test_workspace_concurrency.py``).

They run in children of a multiprocessing fork server that imported this module once (so
each child starts in milliseconds); every child opens the workspace itself. Messages go to
the parent over a :func:`multiprocessing.Pipe`.
"""

from __future__ import annotations

import time
import traceback
import warnings

import numpy as np

import evalcore.workspace  # noqa: F401  (imported once by the fork server)
from evalcore import Qrels, Run, Workspace

N_QUERIES, N_DOCS = 12, 40
QUERY_IDS = [f"q{i}" for i in range(N_QUERIES)]
DOC_IDS = [f"d{j}" for j in range(N_DOCS)]
MAX_RUNS = 10


def ground_truth(seed: int = 0) -> Qrels:
    rng = np.random.default_rng(seed)
    return Qrels.from_dict({q: {d: int(rng.integers(0, 3)) for d in rng.choice(DOC_IDS, 6, replace=False)}
                            for q in QUERY_IDS})


def random_run(rng: np.random.Generator, name: str) -> Run:
    return Run.from_dict({q: {d: float(rng.integers(0, 4)) for d in rng.choice(DOC_IDS, 15, replace=False)}
                          for q in QUERY_IDS}, name=name)


def _removed_with(records, name: str) -> set[str]:
    """``name`` and the fused runs built on it (what remove_run removes), from ws.runs()."""
    drop = {name}
    changed = True
    while changed:
        changed = False
        for n, inputs in records:
            if n not in drop and set(inputs) & drop:
                drop.add(n)
                changed = True
    return drop


def writer(path: str, seed: int, conn) -> None:
    """Change the workspace forever, announcing each change before (``begin``) and after (``done``).

    ``("begin", before, after)`` gives the run names before the change and the names it
    leaves when it is applied; ``("done",)`` follows once it is committed.
    """
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(seed)
    ws = Workspace.open(path)
    vectors = rng.normal(size=(N_QUERIES + N_DOCS, 8)).astype(np.float32)
    qrels = ground_truth()
    conn.send(("ready",))
    i = 0
    while True:
        frame = ws.runs()
        names = frame["name"].tolist()
        records = list(zip(names, frame["inputs"], strict=True))
        before = set(names)
        name = f"w{seed}-{i}"
        op = rng.random()
        if len(names) > MAX_RUNS or (names and op < 0.15):
            victim = str(rng.choice(names))
            conn.send(("begin", before, before - _removed_with(records, victim)))
            ws.remove_run(victim)
        elif names and op < 0.22:
            old = str(rng.choice(names))
            conn.send(("begin", before, (before - {old}) | {name}))
            ws.rename_run(old, name)
        elif len(names) >= 2 and op < 0.32:
            conn.send(("begin", before, before | {name}))
            ws.add_fused_run(name, [str(n) for n in rng.choice(names, 2, replace=False)])
        elif op < 0.55:
            conn.send(("begin", before, before | {name}))
            ws.add_embedding_run(name, vectors + rng.normal(size=vectors.shape).astype(np.float32) * 0.1,
                                 QUERY_IDS + DOC_IDS, model="m", step=i)
        elif op < 0.9:
            conn.send(("begin", before, before | {name}))
            ws.add_run(name, random_run(rng, name), model="m", version=f"v{i}", step=i, tags=("t",))
        elif op < 0.95:
            conn.send(("begin", before, before))
            ws.set_ground_truth(qrels, name=f"gt{i % 2}")
        elif names:
            conn.send(("begin", before, before))
            ws.evaluate(metrics=["ndcg"], k=[5])
            ws.gc(age=0)
        else:
            continue
        conn.send(("done",))
        i += 1


def add_runs(path: str, prefix: str, n: int, seed: int, conn) -> None:
    """Add ``n`` runs named ``prefix0`` ... (announcing each once committed), then send the final names."""
    try:
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(seed)
        ws = Workspace.open(path)
        for i in range(n):
            name = f"{prefix}{i}"
            if i % 3 == 2:
                ws.add_embedding_run(name, rng.normal(size=(N_QUERIES + N_DOCS, 8)), QUERY_IDS + DOC_IDS)
            else:
                ws.add_run(name, random_run(rng, name), step=i)
            conn.send(("added", name))
        conn.send(("final", ws.run_names()))
    except BaseException:
        conn.send(("error", traceback.format_exc()))


def read_until(path: str, expected: list[str], conn) -> None:
    """Poll the workspace, loading every listed run, until all ``expected`` runs are there.

    Sends ``("final", names, n_polls, n_loads)``, or ``("error", traceback)`` on any exception.
    """
    try:
        warnings.simplefilter("ignore")
        ws = Workspace.open(path)
        polls = loads = 0
        generation = -1
        while True:
            polls += 1
            now = ws.generation
            names = ws.run_names()
            if now != generation:  # something changed: load every run (hash-checked)
                for rec in ws.run_records():
                    if rec.kind == "ranked":
                        ws.load_run(rec.name)
                    else:
                        ws.load_embeddings(rec.name)
                    loads += 1
                generation = now
            if set(expected) <= set(names):
                ws.evaluate(metrics=["ndcg"], k=[5], record=False)
                conn.send(("final", ws.run_names(), polls, loads))
                return
            time.sleep(0.002)  # a polling interval (nothing waits on it)
    except BaseException:
        conn.send(("error", traceback.format_exc()))


# ---------------------------------------------------------------- a writer stopped at one step of its change
#: The changes :func:`stop_in_change` makes on a workspace built by :func:`crash_workspace` (the parent redoes the
#: same change after the kill, so both sides take them from here).
def change(ws: Workspace, op: str) -> None:
    if op == "add_run":  # one artifact
        ws.add_run("r1", random_run(np.random.default_rng(1), "r1"), model="m", step=1)
    elif op == "add_embedding_run":  # two artifacts: new vectors, then ids whose file e0 already stored
        ws.add_embedding_run("e1", vectors(1), QUERY_IDS + DOC_IDS, model="m")
    elif op == "remove_run":  # two rows: r0 and the fusion f0 built on it
        ws.remove_run("r0")
    elif op == "gc":  # two transactions: the rows of x0's and x1's artifacts, then their files
        ws.gc(age=0)
    elif op == "evaluate":  # e0's ranking kept (one transaction), then the evaluation recorded (another)
        ws.evaluate(metrics=["ndcg", "recall"], k=[5])
    elif op == "set_settings":  # one transaction writing several keys
        ws.set_settings(k=(3, 7), metrics=("ndcg", "map"), ties="docid_asc")
    elif op == "import":  # bundle.zip beside the workspace unpacked into the new folder "imported" there
        Workspace.import_bundle(str(ws.path.parent / "bundle.zip"), str(ws.path.parent / "imported"))
    elif op == "export":  # the whole workspace as one bundle beside its folder
        ws.export(str(ws.path.parent / "bundle.zip"))
    elif op == "re-add x0":  # the removed run x0 again: its artifact's file is still there, unreferenced
        ws.add_run("x0", random_run(np.random.default_rng(100), "x0"))
    else:
        raise ValueError(op)


def vectors(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(N_QUERIES + N_DOCS, 8)).astype(np.float32)


def crash_workspace(path: str) -> list[str]:
    """A workspace with a ground truth, runs r0, e0 (embeddings), f0 (fusion of both), and the unreferenced
    artifacts of two removed runs x0, x1; returns those artifacts' hashes (what gc removes)."""
    ws = Workspace.open(path)
    ws.set_ground_truth(ground_truth(), name="gt")
    ws.add_run("r0", random_run(np.random.default_rng(0), "r0"))
    ws.add_embedding_run("e0", vectors(0), QUERY_IDS + DOC_IDS)
    ws.add_fused_run("f0", ["r0", "e0"])
    dropped = []
    for i in (0, 1):
        ws.add_run(f"x{i}", random_run(np.random.default_rng(100 + i), f"x{i}"))
        dropped.append(ws.run_record(f"x{i}").artifact)
        ws.remove_run(f"x{i}")
    ws.close()
    return dropped


class _OsWithStop:
    """The ``os`` module as the artifacts module sees it, except that one function first calls ``hit()``."""

    def __init__(self, name: str, hit) -> None:
        import os

        self._os, self._name, self._hit = os, name, hit

    def __getattr__(self, attr: str):
        real = getattr(self._os, attr)
        if attr != self._name:
            return real

        def stopping(*args, **kwargs):
            self._hit()
            return real(*args, **kwargs)

        return stopping


def _stop_before(ws: Workspace, window: str, hit) -> None:
    """Make this process call ``hit()`` at each arrival at ``window`` (wrappers installed in this child only).

    The steps of a change (``WorkspaceCore.commit``): each artifact is written to ``tmp/`` (``ObjectStore.put``:
    written, fsync-ed, hashed), then renamed into ``objects/`` (or, when that file is already there with the same
    bytes, kept and the temporary file removed) and the folder fsync-ed; then the writer lock is taken and ONE
    SQLite transaction (``BEGIN IMMEDIATE``) inserts the artifact rows, inserts / deletes the change's rows, bumps
    the generation and COMMITs; then the lock is released. ``gc`` is two such transactions, the second removing
    files one by one. Each window below (its comment says where it is) lies between two of these steps; ``hit()``
    runs there, before the next step.
    """
    import contextlib
    from pathlib import Path

    from evalcore.workspace import artifacts, writelock

    if window == "tmp-written":  # the temporary file written, not yet fsync-ed, hashed or renamed
        put = artifacts.ObjectStore.put

        def put_then_stop(self, write, *, kind, ext):
            def write_then_stop(p):
                write(p)
                hit()
            return put(self, write_then_stop, kind=kind, ext=ext)

        artifacts.ObjectStore.put = put_then_stop
    elif window == "import-rename":  # an import's file (an artifact, then last the catalogue) about to be renamed
        from evalcore.workspace import bundle

        bundle.os = _OsWithStop("replace", hit)
    elif window == "open":  # an os.open of the artifacts module: the temporary file's creation, then (when a file
        artifacts.os = _OsWithStop("open", hit)  # of those bytes is there) the opening of that file to hold it
    elif window in ("before-rename", "kept-existing"):  # hashed; the rename (os.replace) / the keeping (os.utime)
        artifacts.os = _OsWithStop("replace" if window == "before-rename" else "utime", hit)
    elif window == "renamed":  # in objects/ under its hash, the folder not yet fsync-ed
        fsync_dir = artifacts._fsync_dir

        def stop_then_fsync(folder):
            hit()
            fsync_dir(folder)

        artifacts._fsync_dir = stop_then_fsync
    elif window in ("staged", "locked", "committed"):  # the writer lock: before taking it, once taken, before release
        writer_lock = writelock.writer_lock

        @contextlib.contextmanager
        def lock_with_stops(folder, *, deadline):
            if window == "staged":
                hit()
            with writer_lock(folder, deadline=deadline):
                if window == "locked":
                    hit()
                yield
                if window == "committed":  # the body returned: its COMMIT is done
                    hit()

        writelock.writer_lock = lock_with_stops  # store.Catalogue.write imports it at each call
    elif window == "snapshot-written":  # an export's consistent copy of the catalogue written into tmp/, not yet read
        from evalcore.workspace import store

        snapshot = store.Catalogue.snapshot

        def snapshot_then_stop(self, dest):
            snapshot(self, dest)
            hit()

        store.Catalogue.snapshot = snapshot_then_stop
    elif window == "unlink":  # gc's removal of a file
        unlink = Path.unlink

        def stop_then_unlink(self, missing_ok=False):
            hit()
            return unlink(self, missing_ok=missing_ok)

        Path.unlink = stop_then_unlink
    else:  # the statements of a write transaction, as SQLite's trace callback sees each before it runs
        first = {"begun": None, "before-row": ("INSERT INTO runs", "DELETE FROM runs"),
                 "before-bump": ("UPDATE meta SET value = value + 1",), "before-commit": ("COMMIT",)}[window]
        state = {"writing": False, "first": False}

        def trace(sql: str) -> None:
            if sql == "BEGIN IMMEDIATE":
                state.update(writing=True, first=True)
                return
            if not state["writing"]:  # a read transaction
                return
            if (state["first"] if first is None else sql.startswith(first)):
                hit()
            state["first"] = False
            if sql in ("COMMIT", "ROLLBACK"):
                state["writing"] = False

        ws.catalogue.connection().set_trace_callback(trace)


def stop_in_change(path: str, op: str, window: str, nth: int, conn) -> None:
    """Make the change ``op`` and stop at the ``nth`` arrival at ``window``: send ``("at", window, nth)``, then
    block until killed. ``("finished",)`` says the change ended without arriving there; ``("error", text)``."""
    try:
        import threading

        warnings.simplefilter("ignore")
        ws = Workspace.open(path)
        arrivals = [0]

        def hit() -> None:
            arrivals[0] += 1
            if arrivals[0] == nth:
                conn.send(("at", window, nth))
                threading.Event().wait()  # until the parent's SIGKILL

        _stop_before(ws, window, hit)
        change(ws, op)
        conn.send(("finished",))
    except BaseException:
        conn.send(("error", traceback.format_exc()))


def pause_in_change(path: str, op: str, window: str, nth: int, conn) -> None:
    """As :func:`stop_in_change`, but the writer resumes: at the ``nth`` arrival at ``window`` (``nth`` 0: at each of
    the first three) it sends ``("at", window, arrival)`` and waits for the parent's ``("go",)`` (meanwhile the parent acts on the workspace, e.g. a gc),
    then finishes the change and sends ``("finished", run names)``; ``("error", traceback)`` when the change
    raised. ``conn`` is a duplex pipe's end."""
    try:
        warnings.simplefilter("ignore")
        ws = Workspace.open(path)
        arrivals = [0]

        def hit() -> None:
            arrivals[0] += 1
            if arrivals[0] == nth or (nth == 0 and arrivals[0] <= 3):  # nth 0: each of the first three arrivals
                conn.send(("at", window, arrivals[0]))
                if conn.recv() != ("go",):
                    raise RuntimeError("the parent did not say go")

        _stop_before(ws, window, hit)
        change(ws, op)
        conn.send(("finished", ws.run_names()))
    except BaseException:
        conn.send(("error", traceback.format_exc()))


# ---------------------------------------------------------------- a training script and a dashboard on one workspace
def checkpoint_vectors(i: int) -> np.ndarray:
    """The embeddings of checkpoint ``i`` (the items: queries and documents), the same in every process."""
    return np.random.default_rng(500 + i).normal(size=(N_QUERIES + N_DOCS, 8)).astype(np.float32)


def checkpoint_run(i: int) -> Run:
    """The ranked run of checkpoint ``i``, the same in every process."""
    return random_run(np.random.default_rng(700 + i), f"ckpt{i}-top")


def trainer(path: str, n: int, conn) -> None:
    """A training script: after each of ``n`` checkpoints, its embeddings (``ckpt<i>``) and a ranked run
    (``ckpt<i>-top``, :func:`checkpoint_run`), announced once committed; then ``("final", names)`` or ``("error",
    traceback)``."""
    try:
        warnings.simplefilter("ignore")
        ws = Workspace.open(path)
        for i in range(n):
            ws.add_embedding_run(f"ckpt{i}", checkpoint_vectors(i), QUERY_IDS + DOC_IDS, model="m", step=i)
            ws.add_run(f"ckpt{i}-top", checkpoint_run(i), model="m-top", step=i)
            conn.send(("added", i))
        conn.send(("final", ws.run_names()))
    except BaseException:
        conn.send(("error", traceback.format_exc()))


def dashboard(path: str, last: str, remove: str, conn) -> None:
    """A dashboard on the same workspace: at each change of its generation, lists the runs, reads each one, evaluates
    and records the evaluation; once ``remove`` is listed it removes it and runs ``evalcore workspace gc`` (the
    command, a process of its own); it ends once ``last`` is listed and its own changes are done, sending
    ``("final", names, evaluations recorded, the gc command's exit status and stderr)`` or ``("error", traceback)``."""
    try:
        import subprocess
        import sys

        warnings.simplefilter("ignore")
        ws = Workspace.open(path)
        generation, recorded, gc = -1, set(), None
        while True:
            now = ws.generation
            if now == generation:
                time.sleep(0.002)  # a polling interval (nothing waits on it)
                continue
            generation = now
            frame = ws.runs()
            for rec in ws.run_records():
                ws.load_embeddings(rec.name) if rec.kind == "embedding" else ws.load_run(rec.name)
            if len(frame):
                ws.evaluate(metrics=["ndcg"], k=[5])
                recorded.add(int(ws.evaluations()["id"].iloc[-1]))
            names = frame["name"].tolist()
            if gc is None and remove in names:
                ws.remove_run(remove)
                done = subprocess.run([sys.executable, "-m", "evalcore", "workspace", "gc", "--workspace", path],
                                      capture_output=True, text=True)
                gc = (done.returncode, done.stderr)
            if last in names and gc is not None:
                conn.send(("final", ws.run_names(), len(recorded), *gc))
                return
    except BaseException:
        conn.send(("error", traceback.format_exc()))

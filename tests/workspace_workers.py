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

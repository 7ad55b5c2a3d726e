"""Benchmark: the Overview of a dashboard on a large stored workspace, first server and restarted server.

Not a test.  Builds once (deterministic, ``--seed``), under a scratch folder (default
/tmp/evalcore_bench, never the repository), a workspace of ``--runs`` stored ranked runs of
``--queries`` queries x ``--depth`` documents (200,000 distinct document ids, 3 judged documents a
query), then, ``--repeats`` times:

1. starts ``streamlit run app.py`` on it (``EVALCORE_WORKSPACE``) with an empty results cache
   (``XDG_CACHE_HOME``): the first server reads every run and computes the evaluation, which it keeps
   on disk;
2. starts a second server on the same workspace and cache: a restart.

For each, chromium (Debian's, through Playwright) opens the URL and waits until the Overview is
settled (the leaderboard and the metrics-vs-k chart drawn, the app idle: tests/browser_support.py's
state-based wait): the time printed is from the URL to the settled page, what a user waits.

    python benchmarks/bench_restart.py                        # 14 runs x 20,000 queries x 100
    python benchmarks/bench_restart.py --runs 4 --queries 5000 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _bytecode import compile_project  # noqa: E402

from evalcore import workspace as W  # noqa: E402
from evalcore.data import Run  # noqa: E402


def build(folder: Path, n_runs: int, nq: int, depth: int, *, seed: int, n_docs: int = 200_000) -> Path:
    """The workspace (reused when already built with these parameters)."""
    path = folder / f"restart_{n_runs}x{nq}x{depth}_s{seed}"
    done = path / ".complete"
    if done.exists():
        return path
    rng = np.random.default_rng(seed)
    qids = np.array([f"q{i}" for i in range(nq)], dtype=object)
    dids = np.array([f"d{i}" for i in range(n_docs)], dtype=object)
    qrels = "".join(f"q{i} 0 d{d} {g}\n" for i in range(nq)
                    for d, g in zip(rng.choice(n_docs, 3, replace=False), rng.integers(1, 3, 3), strict=True))
    with W.Workspace.open(path) as ws:
        ws.set_ground_truth(qrels.encode(), source_name="qrels.txt")
        for r in range(n_runs):
            # each query's list: `depth` distinct documents of a window of its own, scores descending
            base = rng.integers(0, n_docs - 20 * depth, nq)[:, None]
            docs = base + np.argsort(rng.random((nq, 20 * depth)), axis=1)[:, :depth]
            scores = -np.sort(-rng.random((nq, depth)), axis=1)
            run = Run.from_codes(qids, np.repeat(np.arange(nq), depth), dids, docs.ravel(), scores.ravel(),
                                 name=f"model-{r}")
            ws.add_run(f"model-{r}", run, model="model", version=str(r), step=r)
            print(f"  stored run {r + 1}/{n_runs}", flush=True)
    done.touch()
    return path


def overview_seconds(repo: Path, workspace: Path, cache: Path) -> float:
    """URL to settled Overview, one fresh server on ``workspace`` with results cache ``cache``."""
    import browser_support as B

    env = {"EVALCORE_WORKSPACE": str(workspace), "EVALCORE_WORKSPACES": tempfile.mkdtemp(),
           "XDG_CACHE_HOME": str(cache)}
    server = B.start_streamlit(Path(tempfile.mkdtemp()), env=env)
    try:
        with B.import_playwright()() as p:
            browser = p.chromium.launch(executable_path=B.find_chromium(), args=B.CHROMIUM_ARGS)
            try:
                page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
                t0 = time.perf_counter()
                page.goto(server.url + "/", wait_until="commit")
                B.wait_for(page, main=["Metrics vs k", "Leaderboard"], grid=["model-0"], timeout=900)
                return time.perf_counter() - t0
            finally:
                browser.close()
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=14)
    ap.add_argument("--queries", type=int, default=20_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=2, help="first server + restart pairs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scratch", default="/tmp/evalcore_bench")
    args = ap.parse_args(argv)
    print(compile_project(), flush=True)  # the .pyc an installed package has (see _bytecode)
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    ws = build(scratch, args.runs, args.queries, args.depth, seed=args.seed)
    print(f"# workspace {ws} ready in {time.perf_counter() - t:.1f} s", flush=True)
    first, again = [], []
    for i in range(args.repeats):
        cache = Path(tempfile.mkdtemp(prefix="evalcore-restart-cache-", dir=scratch))
        first.append(overview_seconds(ROOT, ws, cache))
        again.append(overview_seconds(ROOT, ws, cache))
        print(f"  pair {i + 1}/{args.repeats}: first server {first[-1]:.1f} s, restarted {again[-1]:.1f} s",
              flush=True)
    print(f"\n{args.runs} stored runs x {args.queries:,} queries x {args.depth}: URL to settled Overview in chromium")
    print(f"first server (reads the runs, evaluates, keeps the evaluation): median {statistics.median(first):.1f} s")
    print(f"restarted server (the evaluation from the disk):               median {statistics.median(again):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

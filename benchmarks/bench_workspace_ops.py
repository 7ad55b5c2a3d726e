"""Benchmark: what a user waits for on a large stored workspace: the Fusion page's preview and a run added by a script.

Not a test.  Uses the workspace of ``bench_restart.py`` (``--runs`` stored ranked runs of
``--queries`` queries x ``--depth`` documents, built once under ``--scratch``), copied for each
repeat (a run is added to the copy).  Per repeat, one ``streamlit run app.py`` on the copy with an
empty results cache, and chromium (Debian's, through Playwright):

1. opens the URL and waits for the settled Overview (the first server evaluates every run);
2. opens the Fusion page (RRF of the first three runs: fused, evaluated, summarized next to its inputs);
3. moves RRF's ``c`` (60 -> 61; the run's name is changed in the same step so that the page can be
   seen to have taken both), then the first input's weight (1.0 -> 1.5, likewise): each a new fused run;
4. back on the Overview, a script adds one more run to the workspace (``Workspace.add_run``) and
   the user presses Refresh: the Overview is settled when the new run is in the leaderboard.

Each figure is from the user's input (page clock) to the settled page (tests/browser_support.py's
state-based waits); the server's resident memory (``VmRSS``) is printed after the Overview, after the
Fusion page and after ``--moves`` more moves of ``c`` (each a fused run and an evaluation: the caches
keep a bounded number of them).  ``--server-timing`` prints the server's step log (``EVALCORE_DASH_TIMING``).

    python benchmarks/bench_workspace_ops.py                    # 14 runs x 20,000 queries x 100, 2 repeats
    python benchmarks/bench_workspace_ops.py --runs 4 --queries 5000 --repeats 3
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from _bytecode import compile_project  # noqa: E402
from bench_restart import build  # noqa: E402

from evalcore import workspace as W  # noqa: E402
from evalcore.data import Run  # noqa: E402


def extra_run(nq: int, depth: int, name: str, *, seed: int, n_docs: int = 200_000) -> Run:
    """One more run shaped like bench_restart's."""
    rng = np.random.default_rng(seed)
    qids = np.array([f"q{i}" for i in range(nq)], dtype=object)
    dids = np.array([f"d{i}" for i in range(n_docs)], dtype=object)
    base = rng.integers(0, n_docs - 20 * depth, nq)[:, None]
    docs = base + np.argsort(rng.random((nq, 20 * depth)), axis=1)[:, :depth]
    scores = -np.sort(-rng.random((nq, depth)), axis=1)
    return Run.from_codes(qids, np.repeat(np.arange(nq), depth), dids, docs.ravel(), scores.ravel(), name=name)


def rss_gb(pid: int) -> float:
    """Resident memory of a process in GB (``/proc``)."""
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS")) / 1e6


def one_repeat(source: Path, nq: int, depth: int, n_runs: int, *, seed: int, timing: bool,
               moves: int) -> dict[str, float]:
    import browser_support as B

    work = Path(tempfile.mkdtemp(prefix="evalcore-ops-", dir=source.parent))
    ws_path = work / "workspace"
    shutil.copytree(source, ws_path, ignore=shutil.ignore_patterns("writer.lock", ".complete"))
    env = {"EVALCORE_WORKSPACE": str(ws_path), "EVALCORE_WORKSPACES": str(work / "others"),
           "XDG_CACHE_HOME": str(work / "cache"), **({"EVALCORE_DASH_TIMING": "1"} if timing else {})}
    server = B.start_streamlit(work, env=env)
    out: dict[str, float] = {}
    try:
        with B.import_playwright()() as p:
            browser = p.chromium.launch(executable_path=B.find_chromium(), args=B.CHROMIUM_ARGS)
            try:
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                context.add_init_script(B.RUN_TRACKER)
                page = context.new_page()
                t0 = time.perf_counter()
                page.goto(server.url + "/", wait_until="commit")
                B.wait_for(page, main=["Metrics vs k", "Leaderboard"], grid=["model-0"], timeout=900)
                out["first Overview (URL to settled)"] = time.perf_counter() - t0
                out["server RSS after the Overview (GB)"] = rss_gb(server.proc.pid)
                out["Fusion page opened (preview)"] = B.go_to(page, "Fusion", timeout=600,
                                                              expect=["The fused run next to its inputs"])
                c_box = B.widget(page, "fu_c", "stNumberInput", "c (RRF)").locator("input").first
                name_box = B.widget(page, "fu_name", "stTextInput", "Name of the fused run").locator("input").first

                def set_and_rename(box, value: str, name: str) -> None:
                    box.fill(value)
                    box.press("Enter")
                    name_box.fill(name)
                    name_box.press("Enter")

                out["RRF c moved (new preview)"] = B.act(page, lambda: set_and_rename(c_box, "61", "c61"),
                                                         grid=["c61"], timeout=600)
                weight = page.locator('[data-testid="stNumberInput"]').filter(
                    has=page.locator('[data-testid="stWidgetLabel"]', has_text="Weight")).first.locator("input")
                out["a weight moved (new preview)"] = B.act(page, lambda: set_and_rename(weight, "1.5", "w15"),
                                                            grid=["w15"], timeout=600)
                out["server RSS after the Fusion page (GB)"] = rss_gb(server.proc.pid)
                for i in range(moves):
                    B.act(page, lambda i=i: set_and_rename(c_box, str(62 + i), f"m{i}"), grid=[f"m{i}"], timeout=600)
                out[f"server RSS after {moves} more moves (GB)"] = rss_gb(server.proc.pid)
                B.go_to(page, "Overview", timeout=600, expect=["Leaderboard"])
                name = f"model-{n_runs}"
                with W.Workspace.open(ws_path) as ws:
                    ws.add_run(name, extra_run(nq, depth, name, seed=seed + 1000), model="model",
                               version=str(n_runs), step=n_runs)
                refresh = page.locator(".st-key-ws_refresh button").first
                out["run added by a script, Refresh"] = B.act(page, lambda: refresh.click(), grid=[name],
                                                              main=["Leaderboard"], timeout=600)
            finally:
                browser.close()
    finally:
        if timing:
            print(server.log_text())
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=14)
    ap.add_argument("--queries", type=int, default=20_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scratch", default="/tmp/evalcore_bench")
    ap.add_argument("--moves", type=int, default=10, help="more moves of c before the memory is read again")
    ap.add_argument("--server-timing", action="store_true", help="print the server's step log")
    args = ap.parse_args(argv)
    print(compile_project(), flush=True)  # the .pyc an installed package has (see _bytecode)
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    source = build(scratch, args.runs, args.queries, args.depth, seed=args.seed)
    rounds = []
    for i in range(args.repeats):
        rounds.append(one_repeat(source, args.queries, args.depth, args.runs, seed=args.seed,
                                 timing=args.server_timing, moves=args.moves))
        print(f"  repeat {i + 1}/{args.repeats}: " + ", ".join(f"{k}: {v:.2f}" for k, v in rounds[-1].items()),
              flush=True)
    print(f"\n{args.runs} stored runs x {args.queries:,} queries x {args.depth}, chromium, input to settled page "
          f"(median of {args.repeats}; memory: the server's resident set)")
    for key in rounds[0]:
        unit = "" if "GB" in key else " s"
        print(f"  {key:<40} {statistics.median(r[key] for r in rounds):6.2f}{unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: TREC files -> per-query metrics, whole processes, evalcore vs pytrec_eval vs ranx.

Usage::

    python benchmarks/bench_core.py --queries 20000 --depth 100 --repeats 3
    python benchmarks/bench_core.py --queries 1000000 --depth 100 --repeats 1 --peers none
    python benchmarks/bench_core.py --score-decimals 1    # a tie-heavy run (ten score levels)

Each contender runs as its own process on the same files, in alternating order,
after one warm-up round (file cache, numba's on-disk cache for ranx):

* evalcore: ``python -m evalcore evaluate ... --out DIR`` (parse, evaluate,
  print the summary, write per_query.csv + report.json + per-run CSVs);
* pytrec_eval: parse with ``pytrec_eval.parse_qrel/parse_run`` + ``RelevanceEvaluator.evaluate``;
* ranx: ``Qrels.from_file``/``Run.from_file`` + ``evaluate(..., return_mean=False)``.

Metrics: nDCG, MAP, recall at 10 and 100, and MRR (recip_rank / mrr@100).
Reports wall time (best and median), peak RSS (the child's own VmHWM) and the
ratio evalcore / fastest peer. Data goes to a scratch directory (default
/tmp/evalcore_bench), never into the repository.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _peak  # noqa: E402
from _bytecode import compile_project  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

PYTREC = r"""
import sys, pytrec_eval
with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, {'ndcg_cut.10,100', 'map_cut.10,100', 'recall.10,100', 'recip_rank'})
res = ev.evaluate(run)
print(len(res), sum(v['ndcg_cut_10'] for v in res.values()) / len(res))
"""

RANX = r"""
import sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind='trec')
run = Run.from_file(sys.argv[2], kind='trec')
res = evaluate(qrels, run, ['ndcg@10', 'ndcg@100', 'map@10', 'map@100', 'recall@10', 'recall@100', 'mrr@100'],
               return_mean=False, make_comparable=True)
print(len(res['ndcg@10']), res['ndcg@10'].mean())
"""


def generate(out: Path, n_queries: int, depth: int, n_rel: int, seed: int,
             decimals: int = 4) -> tuple[Path, Path]:
    """Write qrels (n_rel graded relevant docs per query) and a run (depth docs per query, scores in
    [0, 10) rounded to ``decimals``: 4 gives realistic ties, 1 a tie-heavy run of ten score levels)."""
    out.mkdir(parents=True, exist_ok=True)
    qp, rp = out / "qrels.txt", out / "run.trec"
    if qp.exists() and rp.exists():
        return qp, rp
    rng = np.random.default_rng(seed)
    n_docs = max(1_000_000, n_queries * 10)
    with open(qp, "w") as fq, open(rp, "w") as fr:
        step = 50_000
        for lo in range(0, n_queries, step):
            hi = min(n_queries, lo + step)
            m = hi - lo
            qids = np.char.add("q", np.arange(lo, hi).astype(str))
            # candidate docs per query: depth retrieved, the relevant ones partly among them
            width = depth + n_rel
            base = rng.integers(0, n_docs, size=m)
            stride = rng.integers(1, n_docs // width, size=m)
            docs = (base[:, None] + np.arange(width)[None, :] * stride[:, None]) % n_docs  # unique per row
            docs = np.take_along_axis(docs, np.argsort(rng.random((m, width)), axis=1), axis=1)
            rel_docs = docs[:, :n_rel]
            grades = rng.integers(1, 4, size=(m, n_rel))
            # the run: retrieve depth docs, some relevant among them
            retrieved = docs[:, n_rel // 2 : n_rel // 2 + depth]
            scores = np.round(rng.random((m, depth)) * 10, decimals)
            qcol = np.repeat(qids, n_rel)
            lines = np.char.add(np.char.add(qcol, " 0 D"), rel_docs.ravel().astype(str))
            lines = np.char.add(np.char.add(lines, " "), grades.ravel().astype(str))
            fq.write("\n".join(lines.tolist()) + "\n")
            order = np.argsort(-scores, axis=1, kind="stable")
            retrieved = np.take_along_axis(retrieved, order, axis=1)
            scores = np.take_along_axis(scores, order, axis=1)
            ranks = np.tile(np.arange(1, depth + 1), m)
            qcol = np.repeat(qids, depth)
            lines = np.char.add(np.char.add(qcol, " Q0 D"), retrieved.ravel().astype(str))
            lines = np.char.add(np.char.add(lines, " "), ranks.astype(str))
            lines = np.char.add(np.char.add(lines, " "), np.char.mod(f"%.{decimals}f", scores.ravel()))
            lines = np.char.add(lines, " bench")
            fr.write("\n".join(lines.tolist()) + "\n")
    return qp, rp


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB (the child's own VmHWM, see benchmarks/_peak.py) and the last output line."""
    wrapped, report = _peak.wrap(cmd)
    t0 = time.perf_counter()
    proc = subprocess.Popen(wrapped, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    peak = _peak.read(report)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, peak, (out.decode().strip().splitlines() or [""])[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=20_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--n-rel", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--score-decimals", type=int, default=4,
                    help="run scores in [0, 10) rounded to this many decimals (1: a tie-heavy run)")
    ap.add_argument("--scratch", default="/tmp/evalcore_bench")
    ap.add_argument("--peers", default="pytrec_eval,ranx", help="comma list, or 'none'")
    ap.add_argument("--no-out-only", action="store_true", help="time only evalcore without --out (quick checks)")
    args = ap.parse_args(argv)
    print(compile_project(), flush=True)  # the .pyc an installed package has (see _bytecode)

    tag = "" if args.score_decimals == 4 else f"_d{args.score_decimals}"
    data = Path(args.scratch) / f"core_{args.queries}x{args.depth}{tag}"
    t0 = time.perf_counter()
    qp, rp = generate(data, args.queries, args.depth, args.n_rel, args.seed, args.score_decimals)
    print(f"data: {qp} ({qp.stat().st_size / 2**20:.1f} MiB), {rp} ({rp.stat().st_size / 2**20:.1f} MiB) "
          f"[{time.perf_counter() - t0:.1f}s]")
    outdir = data / "evalcore_out"
    cmds = {
        "evalcore": [sys.executable, "-m", "evalcore", "evaluate", "--qrels", str(qp), "--run", f"bench={rp}",
                     "--metrics", "ndcg", "map", "recall", "mrr", "--k", "10", "100", "--out", str(outdir)],
    }
    # like-for-like with the peers (they compute per-query values in memory and print a mean)
    cmds["evalcore-noout"] = cmds["evalcore"][:-2]
    if args.no_out_only:
        del cmds["evalcore"]
    peers = [] if args.peers == "none" else [p.strip() for p in args.peers.split(",") if p.strip()]
    if "pytrec_eval" in peers:
        cmds["pytrec_eval"] = [sys.executable, "-c", PYTREC, str(qp), str(rp)]
    if "ranx" in peers:
        cmds["ranx"] = [sys.executable, "-c", RANX, str(qp), str(rp)]

    # byte-compile evalcore once, as `pip install` does: with PYTHONDONTWRITEBYTECODE set (this
    # machine's default) a source checkout would otherwise be recompiled by every process
    import compileall

    compileall.compile_dir(str(ROOT / "evalcore"), quiet=1)
    # warm-up (file cache, numba cache) — not timed
    for cmd in cmds.values():
        timed(cmd, ROOT)
    results: dict[str, list[tuple[float, float]]] = {n: [] for n in cmds}
    names = list(cmds)
    loads = []
    for rep in range(args.repeats):
        order = names if rep % 2 == 0 else names[::-1]
        for name in order:
            loads.append(os.getloadavg()[0])
            wall, rss, tail = timed(cmds[name], ROOT)
            results[name].append((wall, rss))
            print(f"  {name:<12} run {rep + 1}: {wall:7.2f} s  peak RSS {rss:8.0f} MiB  load {loads[-1]:.1f}  "
                  f"({tail[:60]})", flush=True)

    print(f"\n| {args.queries:,} queries x {args.depth} | best (s) | median (s) | peak RSS (MiB) | vs evalcore |")
    print("|---|---|---|---|---|")
    main_ec = "evalcore" if "evalcore" in results else "evalcore-noout"
    best_ec = min(w for w, _ in results[main_ec])
    for name in names:
        walls = [w for w, _ in results[name]]
        rss = max(r for _, r in results[name])
        print(f"| {name} | {min(walls):.2f} | {statistics.median(walls):.2f} | {rss:.0f} | "
              f"{min(walls) / best_ec:.2f}x |")
    peers_run = [n for n in names if not n.startswith("evalcore")]
    if peers_run:
        def walls(n: str) -> list[float]:
            return [w for w, _ in results[n]]

        # the fastest peer by median; ratios of bests, of medians, and the median of the rounds' ratios
        peer = min(peers_run, key=lambda n: statistics.median(walls(n)))
        for ec in (n for n in ("evalcore", "evalcore-noout") if n in results):
            rounds = [a / b for a, b in zip(walls(ec), walls(peer), strict=True)]
            print(f"{ec} / {peer}: best {min(walls(ec)) / min(walls(peer)):.3f}, "
                  f"median {statistics.median(walls(ec)) / statistics.median(walls(peer)):.3f}, "
                  f"median of the rounds {statistics.median(rounds):.3f}")
    print(f"load average before each run: min {min(loads):.1f}, median {statistics.median(loads):.1f}, "
          f"max {max(loads):.1f} ({os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

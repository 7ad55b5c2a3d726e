"""Benchmark: ``evalcore topk`` on a sharded 10,000,000 x 384 corpus, one process against ``--dask local:2``.

Not a test.  Writes seeded clustered float32 shards (``part-NN.npy`` + ``part-NN_ids.txt``,
benchmarks/bench_distributed.py's generator, explicit ``--seed``) and the queries under
``--root`` (default /tmp/evalcore_shards_cli, never the repository: 10,000,000 x 384 is
15.4 GB, check ``df -h /tmp``), then runs the command lines users run, alternating:

  (a) python -m evalcore topk --docs 'ROOT/docs.../part-*.npy' --queries Q.npy --query-ids Q.txt
        --k 100 --quiet --out single.trec                    (one process, one thread per core)
  (b) the same with --dask local:2                          (2 worker processes started and stopped
                                                             by the command)

Each run is measured from outside: wall time; the whole process tree's CPU time (``wait4``
of the command: itself plus the workers it reaped); and, sampled every ``--interval``
seconds from /proc, each process's CPU time and peak resident memory (``VmHWM``, a
high-water mark, so only growth in a process's last interval could be missed; plus the
largest ``RssAnon`` / ``RssFile`` seen: memory-mapped shard pages count as ``RssFile``).
The client is the command's own process (it reads every id, runs the scheduler and the
nannies under ``local:2``, writes the run); workers are its ``multiprocessing`` children.
Every run's TREC file is compared with the first single-process one by ``cmp``.

Page cache (15.4 GB on a 24 GB machine fits mostly in it): each run starts either *cold*
(the benchmark's own files dropped from the page cache with ``posix_fadvise(DONTNEED)``,
nothing else's) or *warm* (every file read once before); ``fincore`` measures the cached
share of the files before each run.  ``--cache`` chooses which; a VM's disk may be cached
by its host, so cold here is "not in this kernel's page cache".  Also measured: the
sequential read throughput of a few evicted shards, the client's setup alone
(``open_shards``: reading the ids, duplicate check), and the cost of merging candidate
lists (``merge_partials``, k x pieces candidates per query), for the README's model.

    flock /tmp/evalcore-bench.lock python benchmarks/bench_shards_cli.py        # 10M x 384, ~15 GB
    flock /tmp/evalcore-bench.lock python benchmarks/bench_shards_cli.py --docs 200000 --shards 4 \\
        --repeats 1 --cold-repeats 1                                             # a quick check
    python benchmarks/bench_shards_cli.py --merge-only                           # the merge costs only

The data directory is deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _bytecode import compile_project  # noqa: E402
from bench_distributed import make_shards  # noqa: E402 - the same seeded shards

REPO = os.path.dirname(HERE)
_TICK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- page cache
def data_files(files: dict) -> list[str]:
    folder = files["docs"]
    shards = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith((".npy", "_ids.txt")))
    return [*shards, files["queries"], files["query_ids"]]


def evict(paths: list[str]) -> None:
    """Drop these files' clean pages from the page cache (written back first); other files are untouched."""
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def warm(paths: list[str], chunk: int = 64 * 2**20) -> None:
    """Read every file once (into the page cache)."""
    buf = bytearray(chunk)
    for p in paths:
        with open(p, "rb", buffering=0) as fh:
            while fh.readinto(buf):
                pass


def cached_share(paths: list[str]) -> float:
    """The share of these files' bytes in the page cache (``fincore``)."""
    out = subprocess.run(["fincore", "--bytes", "--raw", "--noheadings", "--output", "RES,SIZE", *paths],
                         capture_output=True, text=True, check=True).stdout.split()
    res, size = (sum(int(x) for x in out[i::2]) for i in (0, 1))
    return res / max(1, size)


def read_throughput(paths: list[str]) -> float:
    """MB/s of sequential reads of these files after evicting them."""
    evict(paths)
    t0 = time.perf_counter()
    warm(paths)
    return sum(os.path.getsize(p) for p in paths) / 1e6 / (time.perf_counter() - t0)


# --------------------------------------------------------------------------- process tree
def _stat(pid: int) -> tuple[int, float]:
    """(parent pid, own CPU seconds: user + system) from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


def _status(pid: int) -> dict[str, float]:
    """VmHWM, RssAnon, RssFile in MiB."""
    got = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key = line.split(":", 1)[0]
            if key in ("VmHWM", "RssAnon", "RssFile"):
                got[key] = int(line.split()[1]) / 1024.0
    return got


def _role(pid: int, root: int) -> str:
    if pid == root:
        return "client"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    return "worker" if "spawn_main" in cmd else "other"


def _sample_tree(root: int, seen: dict[int, dict]) -> None:
    """Record CPU time and memory of ``root`` and its descendants (processes may vanish meanwhile)."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parents[int(name)] = _stat(int(name))
            except (OSError, IndexError, ValueError):
                pass
    tree, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, (pp, _) in parents.items() if pp == p and c not in tree]
        tree.update(kids)
        frontier += kids
    for pid in tree:
        try:
            mem = _status(pid)
        except OSError:
            continue
        rec = seen.setdefault(pid, {"role": _role(pid, root), "hwm": 0.0, "anon": 0.0, "file": 0.0, "cpu": 0.0})
        rec["cpu"] = max(rec["cpu"], parents.get(pid, (0, 0.0))[1])
        rec["hwm"] = max(rec["hwm"], mem.get("VmHWM", 0.0))
        rec["anon"] = max(rec["anon"], mem.get("RssAnon", 0.0))
        rec["file"] = max(rec["file"], mem.get("RssFile", 0.0))


def run_measured(cmd: list[str], *, interval: float, log: str) -> dict:
    """Run ``cmd`` to its end; wall, the tree's CPU (``wait4``), and per process CPU and memory (sampled)."""
    seen: dict[int, dict] = {}
    with open(log, "w") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            _sample_tree(proc.pid, seen)
            time.sleep(interval)  # the sampling period (this is a measurement, not a test)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        with open(log) as fh:
            print(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{fh.read()}", file=sys.stderr)
    procs = sorted(seen.values(), key=lambda r: (r["role"] != "client", r["role"], -r["cpu"]))
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rc": proc.returncode,
            "client": next((p for p in procs if p["role"] == "client"), None),
            "workers": [p for p in procs if p["role"] == "worker"],
            "others": [p for p in procs if p["role"] == "other"]}


def cmp_same(a: str, b: str) -> bool:
    return subprocess.run(["cmp", "-s", a, b]).returncode == 0


# --------------------------------------------------------------------------- side measurements
def setup_cost(docs_glob: str, log: str) -> dict:
    """The client's setup alone: ``open_shards`` (every id read, duplicate check), as its own process."""
    code = ("import sys; from evalcore.io import open_shards; s = open_shards(sys.argv[1]); "
            "assert len(s.read_ids()) == s.shape[0]")
    return run_measured([sys.executable, "-c", code, docs_glob], interval=0.05, log=log)


def merge_costs(nq: int, k: int, pieces: tuple[int, ...], *, seed: int, repeats: int = 3) -> list[dict]:
    """Seconds to merge ``p`` partial top-k lists (nq x k each, 9-character ids) by the Dask backend's
    pairwise tree, run here sequentially (``merge_partials``), median of ``repeats``; and one
    partial's pickled size (what a worker sends per merge).  The ``p`` lists cycle through 8
    distinct ones (a merge costs the same whatever its inputs; memory stays bounded)."""
    from evalcore.retrieval.sharded import Partial, merge_partials

    rng = np.random.default_rng(seed)
    pool = []
    for i in range(8):
        scores = -np.sort(-rng.random((nq, k), dtype=np.float32), axis=1)
        rows = rng.integers(0, 10**8, (nq, k)) // 8 * 8 + i  # disjoint across the 8 lists
        pool.append(Partial(rows, scores, np.char.mod("d%08d", rows).astype("<U9"), 0))
    merge_partials(pool[0], pool[1], k)  # warm-up (first calls are slower)
    out = []
    for p in pieces:
        times = []
        for _ in range(repeats):
            level = [pool[i % len(pool)] for i in range(p)]
            t0 = time.perf_counter()
            while len(level) > 1:
                nxt = [merge_partials(a, b, k) for a, b in zip(level[0::2], level[1::2], strict=False)]
                level = nxt + ([level[-1]] if len(level) % 2 else [])
            times.append(time.perf_counter() - t0)
        total = statistics.median(times)
        out.append({"pieces": p, "candidates_per_query": p * k, "merges": p - 1,
                    "depth": int(np.ceil(np.log2(p))) if p > 1 else 0, "seconds": total,
                    "per_merge_s": total / max(1, p - 1), "partial_bytes": len(pickle.dumps(pool[0], protocol=5))})
    return out


# --------------------------------------------------------------------------- report
def _mib(x: float) -> str:
    return f"{x:,.0f}"


def print_runs(runs: list[dict]) -> None:
    print("| # | path | cache | cached before | wall s | CPU s (tree) | client CPU s | worker CPU s | "
          "client peak MiB | worker peaks MiB (anon / file max) | identical | load 1-min before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(runs, 1):
        c = r["client"] or {"cpu": float("nan"), "hwm": float("nan"), "anon": float("nan"), "file": float("nan")}
        wcpu = ", ".join(f"{w['cpu']:.1f}" for w in r["workers"]) or "-"
        wmem = ", ".join(f"{_mib(w['hwm'])} ({_mib(w['anon'])} / {_mib(w['file'])})" for w in r["workers"]) or "-"
        print(f"| {i} | {r['path']} | {r['cache']} | {r['cached_before']:.0%} | {r['wall']:.1f} | {r['cpu']:.1f} | "
              f"{c['cpu']:.1f} | {wcpu} | {_mib(c['hwm'])} ({_mib(c['anon'])} / {_mib(c['file'])}) | {wmem} | "
              f"{r['identical']} | {r['load_before']:.2f} / {r['load_after']:.2f} |")


def summarize(runs: list[dict], n: int, nq: int, d: int, setup: dict | None) -> dict:
    out = {}
    for cache in ("cold", "warm"):
        pairs = [(a, b) for a, b in zip(runs[0::2], runs[1::2], strict=False) if a["cache"] == cache]
        if not pairs:
            continue
        by = {"single": [], "dask": []}
        for a, b in pairs:
            for r in (a, b):
                by[r["path"]].append(r)
        ratios = [next(r for r in p if r["path"] == "dask")["wall"] / next(r for r in p if r["path"] == "single")["wall"]
                  for p in pairs]
        row = {"pairs": len(pairs), "ratio_dask_single_median": statistics.median(ratios), "ratios": ratios}
        for path, rs in by.items():
            row[path] = {"wall_median": statistics.median(r["wall"] for r in rs),
                         "cpu_median": statistics.median(r["cpu"] for r in rs)}
        worker_cpu = [sum(w["cpu"] for w in r["workers"]) for r in by["dask"]]
        row["dask"]["worker_cpu_median"] = statistics.median(worker_cpu)
        work = float(n) * nq * d
        row["dask"]["per_core_throughput"] = work / statistics.median(worker_cpu)  # docs x queries x dim / CPU-s
        if setup is not None:
            row["single"]["per_core_throughput"] = work / (row["single"]["cpu_median"] - setup["cpu"])
        out[cache] = row
    return out


# --------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=10_000_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--shards", type=int, default=20)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--seed", type=int, default=20251123, help="seed of the data (default 20251123)")
    ap.add_argument("--workers", type=int, default=2, help="N of --dask local:N (default 2)")
    ap.add_argument("--cache", choices=("both", "warm", "cold"), default="both")
    ap.add_argument("--repeats", type=int, default=3, help="alternating pairs with a warm cache (default 3)")
    ap.add_argument("--cold-repeats", type=int, default=2, help="alternating pairs with a cold cache (default 2)")
    ap.add_argument("--interval", type=float, default=0.1, help="sampling period of /proc in seconds")
    ap.add_argument("--root", default="/tmp/evalcore_shards_cli")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--merge-only", action="store_true", help="measure the merge costs only (no data)")
    ap.add_argument("--json", default=None, help="also write every figure to this JSON file")
    args = ap.parse_args(argv)
    print(compile_project(), flush=True)  # the .pyc an installed package has (see _bytecode)
    sys.path.insert(0, REPO)

    merges = merge_costs(args.queries, args.k, (2, 20, 200), seed=args.seed)
    print(f"merge of p partial lists ({args.queries} queries x k={args.k}), pairwise tree, one core; "
          f"load {os.getloadavg()[0]:.2f}")
    for m in merges:
        print(f"  p={m['pieces']:5d} ({m['candidates_per_query']:,} candidates/query): {m['seconds']:.3f} s, "
              f"{m['per_merge_s'] * 1e3:.1f} ms per merge, depth {m['depth']}, "
              f"{m['partial_bytes'] / 1e6:.1f} MB per pickled partial")
    report: dict = {"args": vars(args), "merges": merges}
    if args.merge_only:
        return _finish(report, args)

    t0 = time.perf_counter()
    files = make_shards(args.root, args.docs, args.dim, args.shards, args.queries, seed=args.seed)
    report["generation_s"] = time.perf_counter() - t0
    paths = data_files(files)
    size_gb = sum(os.path.getsize(p) for p in paths) / 1e9
    print(f"data: {args.docs:,} x {args.dim} float32 in {args.shards} shards + {args.queries:,} queries "
          f"({size_gb:.1f} GB, seed {args.seed}, ready in {report['generation_s']:.0f} s); "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
    shard_npys = [p for p in paths if p.endswith(".npy") and os.path.dirname(p) == files["docs"]]
    report["disk_read_mb_s"] = [read_throughput([p]) for p in shard_npys[:3]]
    print(f"sequential read of evicted shards: {', '.join(f'{x:,.0f}' for x in report['disk_read_mb_s'])} MB/s",
          flush=True)

    docs_glob = os.path.join(files["docs"], "part-*.npy")
    warm(paths)
    report["setup"] = setup_cost(docs_glob, os.path.join(args.root, "setup.log"))
    print(f"client setup alone (open_shards: ids + duplicate check), warm: {report['setup']['wall']:.1f} s wall, "
          f"{report['setup']['cpu']:.1f} s CPU, peak {report['setup']['client']['hwm']:,.0f} MiB", flush=True)

    common = [sys.executable, "-m", "evalcore", "topk", "--docs", docs_glob, "--queries", files["queries"],
              "--query-ids", files["query_ids"], "--k", str(args.k), "--quiet"]
    reference = os.path.join(args.root, "single-1.trec")
    caches = {"both": ("cold", "warm"), "warm": ("warm",), "cold": ("cold",)}[args.cache]
    plan = []
    for r in range(max(args.repeats, args.cold_repeats)):
        plan += [c for c in caches if r < {"warm": args.repeats, "cold": args.cold_repeats}[c]]
    runs: list[dict] = []
    for j, cache in enumerate(plan):
        for path in (("single", "dask") if j % 2 == 0 else ("dask", "single")):
            out = os.path.join(args.root, f"{path}-{len(runs) + 1}.trec")
            cmd = [*common, "--out", out]
            if path == "dask":
                cmd[-2:-2] = ["--dask", f"local:{args.workers}"]
            if cache == "cold":
                evict(paths)
            else:
                warm(paths)
            share, load = cached_share(paths), os.getloadavg()[0]
            res = run_measured(cmd, interval=args.interval, log=os.path.join(args.root, "stderr.log"))
            if out == reference or (not os.path.exists(reference) and path == "single" and res["rc"] == 0):
                os.replace(out, reference)  # the run every other one is compared with
                same: bool | str = "reference"
            else:
                same = res["rc"] == 0 and os.path.exists(reference) and cmp_same(reference, out)
            res.update(path=path, cache=cache, cached_before=share, load_before=load,
                       load_after=os.getloadavg()[0], identical=same)
            runs.append(res)
            print(f"  {len(runs):2d} {path:6s} {cache}: {res['wall']:7.1f} s wall, {res['cpu']:7.1f} s CPU, "
                  f"cached {share:.0%}, identical {res['identical']}, load {load:.2f}", flush=True)
    report["runs"] = runs
    report["summary"] = summarize(runs, args.docs, args.queries, args.dim, report["setup"])
    print()
    print_runs(runs)
    print()
    for cache, row in report["summary"].items():
        s, d = row["single"], row["dask"]
        print(f"{cache}: median wall single {s['wall_median']:.1f} s, local:{args.workers} {d['wall_median']:.1f} s; "
              f"median ratio local:{args.workers}/single {row['ratio_dask_single_median']:.2f} "
              f"({', '.join(f'{x:.2f}' for x in row['ratios'])}); median CPU {s['cpu_median']:.1f} / "
              f"{d['cpu_median']:.1f} s; per-core throughput (docs x queries x dim per CPU-second): "
              f"workers {d['per_core_throughput'] / 1e9:.1f} G, single {s.get('per_core_throughput', 0) / 1e9:.1f} G")
    print(f"uptime at the end: {os.getloadavg()}")
    ok = all(r["identical"] in (True, "reference") for r in runs)
    return _finish(report, args, ok)


def _finish(report: dict, args: argparse.Namespace, ok: bool = True) -> int:
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1, default=float)
    if not args.keep and not args.merge_only:
        shutil.rmtree(args.root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

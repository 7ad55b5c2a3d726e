"""Benchmark: ``evalcore topk`` on a 2-worker Dask LocalCluster against the single process.

Not a test.  Writes seeded clustered float32 shards (``part-NN.npy`` + ``part-NN_ids.txt``)
and 1,000 queries under a scratch directory (default /tmp/evalcore_dist, never the
repository), starts one ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``
(:func:`evalcore.retrieval.dask_backend.local_cluster`, as ``--dask local:2`` does) and then runs, alternating, whole command lines on the same files:

  (a) python -m evalcore topk --docs SHARDS --queries Q.npy --query-ids Q.txt --k 100 --out a.trec
      (the single process: shard after shard, one thread per core)
  (b) the same with --dask tcp://SCHEDULER (the running cluster's 2 worker processes)

Before each (b) the workers are restarted, so that each worker's own peak resident memory
(``VmHWM`` read on the worker after the run) belongs to that search only.  Reports wall time,
the (b)/(a) ratio of each alternating pair, the peaks (the single process's own ``VmHWM``,
benchmarks/_peak.py; each worker's), whether the two TREC files are identical byte for byte,
and, once, a ``--dask local:2`` run (cluster started and stopped by the command).  The
10,000,000 x 384 case through ``--dask local:2``, with CPU times, cold and warm page cache and
the per-core rate behind the README's model of N machines: benchmarks/bench_shards_cli.py.

    python benchmarks/bench_distributed.py                       # 1,000 x 1,000,000 x 384 in 8 shards
    python benchmarks/bench_distributed.py --docs 10000000 --shards 20 --repeats 1   # ~15 GB in /tmp
    python benchmarks/bench_distributed.py --keep                # keep the files for another run
    python benchmarks/bench_distributed.py --docs 10000000 --shards 20 --generate-only   # write them only

The data directory is deleted at the end unless ``--keep``.  Check ``df -h /tmp`` first:
10,000,000 x 384 float32 is 15.4 GB.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _peak  # noqa: E402
from _bytecode import compile_project  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------- data
def _vectors(rng: np.random.Generator, centres: np.ndarray, m: int) -> np.ndarray:
    """Gaussian blobs around the centres (top-k lists look like embedding neighbourhoods)."""
    return centres[rng.integers(0, centres.shape[0], m)] + 0.6 * rng.standard_normal((m, centres.shape[1]),
                                                                                      dtype=np.float32)


def make_shards(root: str, n: int, d: int, shards: int, nq: int, *, seed: int, chunk: int = 200_000) -> dict:
    """Seeded shards and queries under ``root``, written chunk by chunk (never all in RAM); reused when present."""
    folder = os.path.join(root, f"docs_{n}x{d}_{shards}_s{seed}")
    os.makedirs(folder, exist_ok=True)
    centres = np.random.default_rng(seed).standard_normal((2000, d), dtype=np.float32)
    cuts = np.linspace(0, n, shards + 1).astype(np.int64)
    for i in range(shards):
        a, b = int(cuts[i]), int(cuts[i + 1])
        path = os.path.join(folder, f"part-{i:02d}.npy")
        if os.path.exists(path) and np.load(path, mmap_mode="r").shape == (b - a, d):
            continue  # written whole (the .npy appears last, after its ids)
        with open(os.path.join(folder, f"part-{i:02d}_ids.txt"), "w") as fh:
            fh.write("".join(f"d{j}\n" for j in range(a, b)))
        rng = np.random.default_rng([seed, i])
        out = np.lib.format.open_memmap(path + ".part", mode="w+", dtype=np.float32, shape=(b - a, d))
        for s in range(0, b - a, chunk):
            out[s : s + chunk] = _vectors(rng, centres, min(chunk, b - a - s))
        out.flush()
        del out
        os.replace(path + ".part", path)
    queries = os.path.join(root, f"queries_{nq}x{d}_s{seed}.npy")
    np.save(queries, _vectors(np.random.default_rng([seed, 999]), centres, nq))
    with open(os.path.join(root, f"queries_{nq}.txt"), "w") as fh:
        fh.write("".join(f"q{j}\n" for j in range(nq)))
    return {"docs": folder, "queries": queries, "query_ids": os.path.join(root, f"queries_{nq}.txt")}


# --------------------------------------------------------------------------- runs
def run_child(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, the child's own peak RSS (MiB, benchmarks/_peak.py) and its exit status."""
    wrapped, report = _peak.wrap(cmd)
    t0 = time.perf_counter()
    proc = subprocess.run(wrapped, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}", file=sys.stderr)
    return wall, _peak.read(report), proc.returncode


def _vm_hwm_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3, help="alternating pairs (default 3)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--root", default="/tmp/evalcore_dist")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--no-local-run", action="store_true", help="skip the --dask local:N run")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    ap.add_argument("--generate-only", action="store_true", help="write the files (kept) and stop")
    args = ap.parse_args(argv)
    print(compile_project(), flush=True)  # the .pyc an installed package has (see _bytecode)

    import distributed

    sys.path.insert(0, REPO)  # the scheduler and the workers (spawned from here) import evalcore from the checkout
    t0 = time.perf_counter()
    files = make_shards(args.root, args.docs, args.dim, args.shards, args.queries, seed=7)
    gen = time.perf_counter() - t0
    size_gb = args.docs * args.dim * 4 / 1e9
    print(f"data: {args.docs:,} x {args.dim} float32 ({size_gb:.1f} GB) in {args.shards} shards, "
          f"{args.queries:,} queries, k={args.k} (ready in {gen:.0f} s); load {os.getloadavg()[0]:.2f}", flush=True)
    if args.generate_only:
        return 0
    common = ["--docs", files["docs"], "--queries", files["queries"], "--query-ids", files["query_ids"],
              "--k", str(args.k), "--quiet"]
    single = [sys.executable, "-m", "evalcore", "topk", *common, "--out", os.path.join(args.root, "single.trec")]
    rows = []
    from evalcore.retrieval.dask_backend import local_cluster  # the cluster `--dask local:N` starts

    with local_cluster(args.workers) as cluster, distributed.Client(cluster) as client:
        dask = [sys.executable, "-m", "evalcore", "topk", *common, "--dask", cluster.scheduler_address,
                "--out", os.path.join(args.root, "dask.trec")]
        for r in range(args.repeats):
            order = ("single", "dask") if r % 2 == 0 else ("dask", "single")
            got = {}
            for which in order:
                load = os.getloadavg()[0]
                if which == "single":
                    wall, peak, rc = run_child(single)
                    got[which] = {"wall": wall, "peak_mib": peak, "rc": rc, "load": load}
                else:
                    client.restart()  # fresh worker processes: their VmHWM is this search's
                    wall, peak, rc = run_child(dask)
                    workers = client.run(_vm_hwm_mib)
                    got[which] = {"wall": wall, "client_peak_mib": peak, "rc": rc, "load": load,
                                  "worker_peaks_mib": sorted(workers.values())}
                print(f"  pair {r + 1} {which:6s} {wall:8.1f} s  (load {load:.2f})", flush=True)
            same = rc == 0 and filecmp.cmp(os.path.join(args.root, "single.trec"),
                                           os.path.join(args.root, "dask.trec"), shallow=False)
            rows.append({**got, "ratio": got["dask"]["wall"] / got["single"]["wall"], "identical": same})
    local_run = None
    if not args.no_local_run:
        cmd = [sys.executable, "-m", "evalcore", "topk", *common, "--dask", f"local:{args.workers}",
               "--out", os.path.join(args.root, "local.trec")]
        wall, peak, rc = run_child(cmd)
        local_run = {"wall": wall, "rc": rc, "identical": rc == 0 and filecmp.cmp(
            os.path.join(args.root, "single.trec"), os.path.join(args.root, "local.trec"), shallow=False)}

    ratios = [r["ratio"] for r in rows]
    dask_best = min(r["dask"]["wall"] for r in rows)
    pairs = args.docs * args.queries
    summary = {
        "docs": args.docs, "dim": args.dim, "shards": args.shards, "queries": args.queries, "k": args.k,
        "workers": args.workers, "pairs": rows, "ratio_median": statistics.median(ratios),
        "single_median_s": statistics.median(r["single"]["wall"] for r in rows),
        "dask_median_s": statistics.median(r["dask"]["wall"] for r in rows),
        "per_worker_pairs_per_s": pairs / dask_best / args.workers,
        "local_cluster_run": local_run, "generation_s": gen,
    }
    print()
    print("| pair | single s | dask s | dask/single | identical | single peak MiB | worker peaks MiB | load |")
    print("|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(rows, 1):
        s, d = r["single"], r["dask"]
        peaks = ", ".join(f"{p:.0f}" for p in d["worker_peaks_mib"])
        print(f"| {i} | {s['wall']:.1f} | {d['wall']:.1f} | {r['ratio']:.2f} | {r['identical']} | "
              f"{s['peak_mib']:.0f} | {peaks} | {s['load']:.1f} / {d['load']:.1f} |")
    print(f"\nmedian ratio dask/single {summary['ratio_median']:.2f}; per-worker throughput "
          f"{summary['per_worker_pairs_per_s'] / 1e9:.2f} G document-query pairs/s (best dask run)")
    if local_run:
        print(f"--dask local:{args.workers} (cluster started and stopped by the command): {local_run['wall']:.1f} s, "
              f"identical: {local_run['identical']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(summary, fh, indent=1)
    if not args.keep:
        shutil.rmtree(args.root, ignore_errors=True)
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

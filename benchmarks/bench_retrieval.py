"""Benchmark: ``evalcore topk`` (numpy BLAS) against faiss ``IndexFlatIP``, whole processes.

Not a test.  Generates seeded float32 data (.npy + id files) in a scratch
directory (default /tmp/evalcore_bench, never the repository), then, for each
size, runs both command lines several times in alternating order:

  (a) python -m evalcore topk --docs ... --queries ... --k 100 --out ours.trec
  (b) python benchmarks/faiss_topk.py --docs ... --queries ... --k 100 --out faiss.trec

and reports best and median wall time, peak RSS of each child (its own
``VmHWM``, benchmarks/_peak.py), the ours/faiss ratios, and whether both runs return the same top-k
(ids may differ only where scores tie within float error).  Prints a markdown
table.

    python benchmarks/bench_retrieval.py                 # 5k x 100k and 10k x 200k, d=384
    python benchmarks/bench_retrieval.py --repeats 5 --sizes 5000x100000
    python benchmarks/bench_retrieval.py --big           # + 2M x 384 memory-mapped corpus (3 GB)
    python benchmarks/bench_retrieval.py --unset-blas-env  # drop OPENBLAS_CORETYPE/L2_SIZE for both

Data are clustered (Gaussian blobs around 2,000 random centres) so that top-k
lists look like real embedding neighbourhoods rather than pure noise.
"""

from __future__ import annotations

import argparse
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
BLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


# --------------------------------------------------------------------------- data


def _write_ids(path: str, prefix: str, n: int) -> None:
    with open(path, "w") as fh:
        for s in range(0, n, 1_000_000):
            fh.write("".join(f"{prefix}{i}\n" for i in range(s, min(n, s + 1_000_000))))


def generate(path: str, n: int, d: int, *, seed: int, centres: np.ndarray, chunk: int = 100_000) -> None:
    """Seeded clustered float32 vectors written chunk by chunk (never all in RAM)."""
    if os.path.exists(path):
        arr = np.load(path, mmap_mode="r")
        if arr.shape == (n, d) and arr.dtype == np.float32:
            return
    rng = np.random.default_rng(seed)
    out = np.lib.format.open_memmap(path + ".part", mode="w+", dtype=np.float32, shape=(n, d))
    for s in range(0, n, chunk):
        m = min(chunk, n - s)
        c = centres[rng.integers(0, centres.shape[0], m)]
        out[s : s + m] = c + 0.6 * rng.standard_normal((m, d), dtype=np.float32)
    out.flush()
    del out
    os.replace(path + ".part", path)


def make_dataset(root: str, nq: int, n: int, d: int, *, seed: int) -> dict:
    os.makedirs(root, exist_ok=True)
    centres = np.random.default_rng(seed).standard_normal((2000, d), dtype=np.float32)
    files = {
        "docs": os.path.join(root, f"docs_{n}x{d}.npy"),
        "doc_ids": os.path.join(root, f"docs_{n}.txt"),
        "queries": os.path.join(root, f"queries_{nq}x{d}_s{seed}.npy"),
        "query_ids": os.path.join(root, f"queries_{nq}.txt"),
    }
    generate(files["docs"], n, d, seed=seed + 1, centres=centres)
    generate(files["queries"], nq, d, seed=seed + 2, centres=centres)
    for key, prefix, count in (("doc_ids", "d", n), ("query_ids", "q", nq)):
        if not os.path.exists(files[key]):
            _write_ids(files[key], prefix, count)
    return files


# --------------------------------------------------------------------------- processes


def run_child(cmd: list[str], env: dict) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + sys), peak RSS (MiB, the child's own VmHWM, see
    benchmarks/_peak.py) and exit status of one child process."""
    wrapped, report = _peak.wrap(cmd)
    t0 = time.perf_counter()
    proc = subprocess.Popen(wrapped, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        print(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{err}", file=sys.stderr)
    return wall, usage.ru_utime + usage.ru_stime, _peak.read(report), proc.returncode


def commands(files: dict, out_dir: str, k: int, *, mmap: bool, block_mb: int) -> dict[str, list[str]]:
    common = ["--docs", files["docs"], "--doc-ids", files["doc_ids"], "--queries", files["queries"],
              "--query-ids", files["query_ids"], "--k", str(k)]
    ours = [sys.executable, "-m", "evalcore", "topk", *common, "--quiet", "--block-mb", str(block_mb),
            "--out", os.path.join(out_dir, "ours.trec")]
    theirs = [sys.executable, os.path.join(REPO, "benchmarks", "faiss_topk.py"), *common,
              "--out", os.path.join(out_dir, "faiss.trec")]
    if mmap:
        ours.append("--mmap")
        theirs.append("--mmap")
    return {"evalcore": ours, "faiss": theirs}


# --------------------------------------------------------------------------- agreement


def read_run(path: str, k: int):
    import pandas as pd

    df = pd.read_csv(path, sep=" ", header=None, names=["q", "q0", "d", "rank", "score", "tag"],
                     dtype={"q": str, "d": str}, engine="c")
    qs = df["q"].to_numpy()
    order = np.argsort(qs, kind="stable")
    return qs[order], df["d"].to_numpy()[order], df["score"].to_numpy(np.float64)[order]


def agreement(ours: str, theirs: str, k: int, tol: float = 1e-5) -> dict:
    """Compare two runs query by query (same queries, ``k`` lines each)."""
    qa, da, sa = read_run(ours, k)
    qb, db, sb = read_run(theirs, k)
    if qa.shape != qb.shape or not np.array_equal(qa, qb):
        return {"comparable": False}
    nq = qa.shape[0] // k
    da, db = da.reshape(nq, k), db.reshape(nq, k)
    sa, sb = sa.reshape(nq, k), sb.reshape(nq, k)
    same_list = (da == db).all(axis=1)
    max_dev = float(np.abs(sa - sb).max()) if sa.size else 0.0
    unexplained = 0
    for i in np.flatnonzero(~same_list):
        diff = da[i] != db[i]
        # a differing position must be a near-tie: same score at that rank on both sides
        if (np.abs(sa[i][diff] - sb[i][diff]) > tol).any():
            unexplained += 1
            continue
        # and a document present in only one list must sit at the tie boundary
        only = np.setdiff1d(da[i], db[i])
        if only.size and (sa[i][np.isin(da[i], only)] - sb[i, -1] > tol).any():
            unexplained += 1
    return {
        "comparable": True,
        "queries": int(nq),
        "identical_lists": int(same_list.sum()),
        "differing_lists_explained_by_ties": int((~same_list).sum() - unexplained),
        "unexplained": int(unexplained),
        "max_score_diff_same_rank": max_dev,
    }


# --------------------------------------------------------------------------- BLAS info


_BLAS_PROBE = r"""
import ctypes, json, os, sys
mods = sys.argv[1:]
for m in mods:
    __import__(m)
out = {}
try:
    from threadpoolctl import threadpool_info
    out["threadpoolctl"] = threadpool_info()
except ImportError:
    libs = []
    with open("/proc/self/maps") as fh:
        for line in fh:
            p = line.split()[-1]
            if "blas" in os.path.basename(p).lower() and p not in libs:
                libs.append(p)
    for p in libs:
        info = {"library": p}
        lib = ctypes.CDLL(p)
        for sym in ("openblas_get_corename", "scipy_openblas_get_corename64_", "scipy_openblas_get_corename"):
            try:
                f = getattr(lib, sym)
            except AttributeError:
                continue
            f.restype = ctypes.c_char_p
            info["corename"] = f().decode()
            break
        for sym in ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_",
                    "openblas_get_num_threads64_"):
            try:
                f = getattr(lib, sym)
            except AttributeError:
                continue
            f.restype = ctypes.c_int
            info["threads"] = f()
            break
        out.setdefault("libraries", []).append(info)
print(json.dumps(out))
"""


def blas_info(env: dict) -> dict:
    res = {}
    for label, mods in (("numpy", ["numpy"]), ("faiss", ["faiss"])):
        try:
            r = subprocess.run([sys.executable, "-c", _BLAS_PROBE, *mods], env=env, capture_output=True,
                               text=True, timeout=120)
            res[label] = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr[-300:]}
        except Exception as e:  # pragma: no cover - informational only
            res[label] = {"error": str(e)}
    return res


# --------------------------------------------------------------------------- main


def bench_one(name: str, files: dict, args, env: dict, *, mmap: bool, repeats: int) -> list[dict]:
    out_dir = os.path.join(args.scratch, "out_" + name)
    os.makedirs(out_dir, exist_ok=True)
    cmds = commands(files, out_dir, args.k, mmap=mmap, block_mb=args.block_mb)
    impls = ["evalcore", "faiss"] if not args.skip_faiss else ["evalcore"]
    times: dict[str, list[float]] = {i: [] for i in impls}
    cpus: dict[str, list[float]] = {i: [] for i in impls}
    rss: dict[str, list[float]] = {i: [] for i in impls}
    for rep in range(repeats):
        order = impls if rep % 2 == 0 else impls[::-1]
        for impl in order:
            load = os.getloadavg()[0]
            wall, cpu, peak, code = run_child(cmds[impl], env)
            if code != 0:
                raise SystemExit(f"{impl} failed on {name}")
            times[impl].append(wall)
            cpus[impl].append(cpu)
            rss[impl].append(peak)
            print(f"  {name} rep {rep + 1}/{repeats} {impl:8s} wall {wall:8.2f} s  cpu {cpu:8.2f} s  "
                  f"peak RSS {peak:8.0f} MiB  (load avg before: {load:.1f})", file=sys.stderr, flush=True)
    rows = []
    for impl in impls:
        rows.append({"size": name, "impl": impl, "best": min(times[impl]),
                     "median": statistics.median(times[impl]), "all": times[impl], "rss": max(rss[impl]),
                     "cpu_best": min(cpus[impl]), "cpu_median": statistics.median(cpus[impl]),
                     "cpu_all": cpus[impl]})
    if "faiss" in times:
        rows[0]["ratio_best"] = rows[0]["best"] / rows[1]["best"]
        rows[0]["ratio_median"] = rows[0]["median"] / rows[1]["median"]
        rows[0]["ratio_cpu_median"] = rows[0]["cpu_median"] / rows[1]["cpu_median"]
        rows[0]["agreement"] = agreement(os.path.join(out_dir, "ours.trec"), os.path.join(out_dir, "faiss.trec"),
                                         args.k)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scratch", default="/tmp/evalcore_bench", help="data and outputs (never the repository)")
    p.add_argument("--sizes", nargs="*", default=["5000x100000", "10000x200000"],
                   help="QUERIESxDOCS sizes (none with --big: only the memory-mapped run)")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--block-mb", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--big", action="store_true", help="also 2,000,000 x dim memory-mapped corpus")
    p.add_argument("--big-docs", type=int, default=2_000_000)
    p.add_argument("--big-queries", type=int, default=5000)
    p.add_argument("--big-repeats", type=int, default=1)
    p.add_argument("--skip-faiss", action="store_true", help="time only evalcore")
    p.add_argument("--unset-blas-env", action="store_true",
                   help="remove OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for both processes")
    p.add_argument("--json", default=None, help="also write the results as JSON")
    args = p.parse_args(argv)
    print(compile_project(), flush=True)  # the .pyc an installed package has (see _bytecode)

    scratch = os.path.abspath(args.scratch)
    if scratch == REPO or scratch.startswith(REPO + os.sep):
        raise SystemExit("the scratch directory must be outside the repository")
    args.scratch = scratch
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    removed = {}
    if args.unset_blas_env:
        removed = {v: env.pop(v) for v in BLAS_ENV if v in env}

    plan = []
    for spec in args.sizes:
        nq, n = (int(x) for x in spec.lower().split("x"))
        plan.append((spec, nq, n, False, args.repeats))
    if args.big:
        plan.append((f"{args.big_queries}x{args.big_docs} mmap", args.big_queries, args.big_docs, True,
                     args.big_repeats))
        need = args.big_docs * args.dim * 4 * 1.1
        free = shutil.disk_usage(os.path.dirname(scratch) or "/").free
        if free < need:
            raise SystemExit(f"--big needs ~{need / 2**30:.1f} GiB free in {scratch}, only {free / 2**30:.1f}")

    print(f"# machine: {os.cpu_count()} CPUs; python {sys.version.split()[0]}; numpy {np.__version__}",
          file=sys.stderr)
    print("# BLAS env: " + ", ".join(f"{v}={os.environ.get(v, '(unset)')}" for v in BLAS_ENV)
          + (f"; removed for children: {sorted(removed)}" if removed else ""), file=sys.stderr)
    info = blas_info(env)
    print("# BLAS at run time: " + json.dumps(info), file=sys.stderr)

    results = []
    for name, nq, n, mmap, repeats in plan:
        t0 = time.perf_counter()
        files = make_dataset(scratch, nq, n, args.dim, seed=args.seed)
        print(f"# data {name} ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        results.extend(bench_one(name.replace(" ", "_"), files, args, env, mmap=mmap, repeats=repeats))

    print()
    print(f"top-{args.k}, d={args.dim}, block {args.block_mb} MiB, {os.cpu_count()} CPUs, "
          f"best/median of N alternating runs (whole processes: load + search + write TREC)")
    print()
    print("| size (q x docs) | impl | runs | wall best s | wall median s | CPU median s | peak RSS MiB "
          "| ours/faiss wall best | ours/faiss wall median | ours/faiss CPU median |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        ratios = [f"{r[key]:.2f}" if key in r else "" for key in ("ratio_best", "ratio_median", "ratio_cpu_median")]
        print(f"| {r['size']} | {r['impl']} | {len(r['all'])} | {r['best']:.2f} | {r['median']:.2f} | "
              f"{r['cpu_median']:.1f} | {r['rss']:.0f} | " + " | ".join(ratios) + " |")
    print()
    for r in results:
        if "agreement" in r:
            print(f"agreement {r['size']}: {json.dumps(r['agreement'])}")
    print(f"all wall times: {json.dumps({r['size'] + '/' + r['impl']: [round(t, 2) for t in r['all']] for r in results})}")
    print(f"all CPU times: {json.dumps({r['size'] + '/' + r['impl']: [round(t, 2) for t in r['cpu_all']] for r in results})}")
    print(f"load average at the end: {os.getloadavg()}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": results, "blas": info, "removed_env": sorted(removed)}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the path users run (``evaluate --emb`` on ``.npz`` files) against a faiss process.

Not a test.  Generates, deterministically (``--seed``), in a scratch directory
(default /tmp/evalcore_bench, never the repository):

* ``docs.npz`` and ``queries.npz`` (``np.savez``, uncompressed, as users save
  them): arrays ``ids`` (strings ``d0``..., ``q0``...) and ``embeddings``
  (float32, clustered around 2,000 random centres);
* ``qrels.txt`` (TREC qrels): 1 to 5 relevant documents per query, grades 1-3,
  drawn among the documents of the query's own cluster (so the top 100 finds
  many of them, as with a real model);
* the same vectors and ids as ``.npy`` + ``_ids.txt`` files, for (c).

Then times whole processes, alternating their order, on the same files:

(a) evalcore: ``python -m evalcore evaluate --qrels qrels.txt --emb
    NAME=docs.npz,queries.npz --metrics ndcg --k 100 --out DIR`` — read both
    ``.npz``, read the qrels, exact cosine top-100 of every query, build the
    run, evaluate nDCG@100, print the summary, write per_query.csv,
    report.json and NAME_results.csv;
(b) faiss: ``python benchmarks/faiss_user_path.py --docs docs.npz --queries
    queries.npz --k 100 --out run.trec`` — ``np.load`` both ``.npz``,
    normalise, ``IndexFlatIP`` add + search, write the TREC run (numpy and
    faiss only, see that file);
(c) faiss-npy: ``python benchmarks/faiss_topk.py --docs docs.npy --doc-ids
    docs_ids.txt --queries queries.npy --query-ids queries_ids.txt --k 100
    --out run.trec`` — the reference of bench_retrieval.py: the same vectors
    from ``.npy`` files (read with one ``np.load``, no zip), ids from text
    files, TREC written by evalcore's writer.  Not the same files, but the
    fastest way faiss gets these vectors: the ratios are given against the
    faster of (b) and (c).

The comparison is deliberately unfavourable to evalcore: both processes read
the same files and do the same exact search and each writes its result, but
(a) also reads the qrels, evaluates and writes three report files, and breaks
score ties by document id.  A faiss user who wanted nDCG would add a
qrels reader and an evaluator (pytrec_eval...) on top of (b).

faiss runs with its default OpenMP settings (as users run it).  Its threads
spin while they wait, which on a busy machine adds CPU time without speed;
``--faiss-passive`` sets ``OMP_WAIT_POLICY=PASSIVE`` for its processes, for a
CPU comparison on a shared machine.

Reports, per side, wall and CPU time (user + sys of the child, from
``wait4``: the robust figure on a busy machine) best and median, peak RSS, the
ratios, the ratios of each alternating round, and the machine load.  Checks that
both find the same lists: the faiss run evaluated by evalcore must give the
same nDCG@100 per query as (a) except where scores tie within float error.

    python benchmarks/bench_user_path.py                       # 5,000 x 100,000 x 384, 3 rounds
    python benchmarks/bench_user_path.py --repeats 5 --queries 5000 --docs 100000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bytecode import compile_project  # noqa: E402
from bench_retrieval import REPO, run_child  # noqa: E402


def generate(root: str, nq: int, n: int, d: int, *, seed: int, n_centres: int = 2000) -> dict[str, str]:
    """The two ``.npz`` files and the qrels (reused when already there with the same parameters)."""
    folder = os.path.join(root, f"user_path_{nq}x{n}x{d}_s{seed}")
    files = {"docs": os.path.join(folder, "docs.npz"), "queries": os.path.join(folder, "queries.npz"),
             "qrels": os.path.join(folder, "qrels.txt")}
    for key in ("docs", "queries"):
        files[key + "_npy"] = os.path.join(folder, key + ".npy")
        files[key + "_ids"] = os.path.join(folder, key + "_ids.txt")
    if all(os.path.exists(p) for p in files.values()):
        return files
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n_centres, d), dtype=np.float32)
    doc_c = rng.integers(0, n_centres, n)
    query_c = rng.integers(0, n_centres, nq)
    docs = centres[doc_c] + 0.6 * rng.standard_normal((n, d), dtype=np.float32)
    queries = centres[query_c] + 0.6 * rng.standard_normal((nq, d), dtype=np.float32)
    doc_ids = np.array([f"d{i}" for i in range(n)])
    query_ids = np.array([f"q{i}" for i in range(nq)])
    for key, ids, vecs in (("docs", doc_ids, docs), ("queries", query_ids, queries)):
        np.savez(files[key] + ".part.npz", ids=ids, embeddings=vecs)
        np.save(files[key + "_npy"], vecs)
        with open(files[key + "_ids"], "w") as fh:
            fh.write("".join(f"{x}\n" for x in ids.tolist()))
    # relevant documents: 1-5 per query among the documents of its cluster (any when it has none)
    by_centre = np.argsort(doc_c, kind="stable")
    starts = np.searchsorted(doc_c[by_centre], np.arange(n_centres + 1))
    lines = []
    for qi in range(nq):
        c = query_c[qi]
        pool = by_centre[starts[c] : starts[c + 1]]
        if pool.size == 0:
            pool = np.arange(n)
        m = min(int(rng.integers(1, 6)), pool.size)
        for di, g in zip(rng.choice(pool, size=m, replace=False), rng.integers(1, 4, size=m), strict=True):
            lines.append(f"q{qi} 0 d{di} {g}\n")
    with open(files["qrels"] + ".part", "w") as fh:
        fh.writelines(lines)
    os.replace(files["docs"] + ".part.npz", files["docs"])
    os.replace(files["queries"] + ".part.npz", files["queries"])
    os.replace(files["qrels"] + ".part", files["qrels"])
    return files


def commands(files: dict[str, str], out: str, k: int) -> dict[str, list[str]]:
    return {
        "evalcore": [sys.executable, "-m", "evalcore", "evaluate", "--qrels", files["qrels"],
                     "--emb", f"emb={files['docs']},{files['queries']}", "--metrics", "ndcg",
                     "--k", str(k), "--out", os.path.join(out, "evalcore_out")],
        "faiss": [sys.executable, os.path.join(REPO, "benchmarks", "faiss_user_path.py"), "--docs", files["docs"],
                  "--queries", files["queries"], "--k", str(k), "--out", os.path.join(out, "faiss.trec")],
        "faiss-npy": [sys.executable, os.path.join(REPO, "benchmarks", "faiss_topk.py"), "--docs", files["docs_npy"],
                      "--doc-ids", files["docs_ids"], "--queries", files["queries_npy"], "--query-ids",
                      files["queries_ids"], "--k", str(k), "--out", os.path.join(out, "faiss_npy.trec")],
    }


def agreement(files: dict[str, str], out: str, k: int) -> dict:
    """nDCG@k per query of (a) against the faiss run evaluated by evalcore (ties: same lists up to order)."""
    sys.path.insert(0, REPO)
    import pandas as pd

    import evalcore

    ours = pd.read_csv(os.path.join(out, "evalcore_out", "per_query.csv"), dtype={"query_id": str},
                       float_precision="round_trip")
    ev = evalcore.evaluate(evalcore.load_qrels(files["qrels"]),
                           {"faiss": evalcore.load_run(os.path.join(out, "faiss.trec"), name="faiss")},
                           metrics=["ndcg"], k=[k], ties="docid_asc")
    theirs = ev.table.astype({"query_id": str})
    a = ours.set_index("query_id")["value"]
    b = theirs.set_index("query_id")["value"].reindex(a.index)
    diff = (a - b).abs()
    return {"queries": int(len(a)), "identical_values": int((diff == 0).sum()),
            "max_abs_diff": float(diff.max()), "mean_ours": float(a.mean()), "mean_faiss_run": float(b.mean())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scratch", default="/tmp/evalcore_bench", help="data and outputs (never the repository)")
    p.add_argument("--queries", type=int, default=5000)
    p.add_argument("--docs", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--repeats", type=int, default=3, help="alternating rounds (each runs every process once)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--faiss-passive", action="store_true",
                   help="OMP_WAIT_POLICY=PASSIVE for the faiss processes (their threads do not spin)")
    p.add_argument("--json", default=None, help="also write the results as JSON")
    args = p.parse_args(argv)
    print(compile_project(), flush=True)  # the .pyc an installed package has (see _bytecode)

    scratch = os.path.abspath(args.scratch)
    if scratch == REPO or scratch.startswith(REPO + os.sep):
        raise SystemExit("the scratch directory must be outside the repository")
    t0 = time.perf_counter()
    files = generate(scratch, args.queries, args.docs, args.dim, seed=args.seed)
    print(f"# data ready in {time.perf_counter() - t0:.1f} s: {files}", file=sys.stderr)
    out = os.path.join(os.path.dirname(files["docs"]), "out")
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmds = commands(files, out, args.k)
    envs = {name: env for name in cmds}
    if args.faiss_passive:
        envs["faiss"] = envs["faiss-npy"] = {**env, "OMP_WAIT_POLICY": "PASSIVE"}

    # byte-compile evalcore once, as `pip install` does (PYTHONDONTWRITEBYTECODE may be set here)
    import compileall

    compileall.compile_dir(os.path.join(REPO, "evalcore"), quiet=1)
    for name, cmd in cmds.items():  # warm-up: file cache, bytecode; not timed
        if run_child(cmd, envs[name])[3] != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}")
    names = list(cmds)
    res: dict[str, dict[str, list[float]]] = {nm: {"wall": [], "cpu": [], "rss": []} for nm in names}
    rounds = []
    for rep in range(args.repeats):
        order = names if rep % 2 == 0 else names[::-1]
        got = {}
        for nm in order:
            load = os.getloadavg()[0]
            wall, cpu, rss, code = run_child(cmds[nm], envs[nm])
            if code != 0:
                raise SystemExit(f"{nm} failed")
            for key, v in (("wall", wall), ("cpu", cpu), ("rss", rss)):
                res[nm][key].append(v)
            got[nm] = (wall, cpu)
            print(f"  round {rep + 1}/{args.repeats} {nm:9s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
                  f"peak RSS {rss:6.0f} MiB  (load avg before: {load:.1f})", file=sys.stderr, flush=True)
        rounds.append({key: got["evalcore"][i] / min(got["faiss"][i], got["faiss-npy"][i])
                      for i, key in enumerate(("wall", "cpu"))})

    print(f"\n{args.queries:,} queries x {args.docs:,} docs x {args.dim}, top-{args.k}; {os.cpu_count()} CPUs; "
          f"{args.repeats} alternating rounds of whole processes"
          + ("; faiss with OMP_WAIT_POLICY=PASSIVE" if args.faiss_passive else ""))
    print("\n| impl | wall best s | wall median s | CPU best s | CPU median s | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for nm in names:
        r = res[nm]
        print(f"| {nm} | {min(r['wall']):.2f} | {statistics.median(r['wall']):.2f} | {min(r['cpu']):.2f} | "
              f"{statistics.median(r['cpu']):.2f} | {max(r['rss']):.0f} |")
    e = res["evalcore"]
    faster = {key: min(res["faiss"][key], res["faiss-npy"][key], key=statistics.median) for key in ("wall", "cpu")}
    summary = {
        "wall_best": min(e["wall"]) / min(min(res[n]["wall"]) for n in ("faiss", "faiss-npy")),
        "wall_median": statistics.median(e["wall"]) / statistics.median(faster["wall"]),
        "cpu_best": min(e["cpu"]) / min(min(res[n]["cpu"]) for n in ("faiss", "faiss-npy")),
        "cpu_median": statistics.median(e["cpu"]) / statistics.median(faster["cpu"]),
        "round_wall_median": statistics.median(x["wall"] for x in rounds),
        "round_cpu_median": statistics.median(x["cpu"] for x in rounds),
    }
    print("\nevalcore / the faster faiss process: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.items()))
    print("per round, evalcore / the faster faiss (wall, cpu): "
          + ", ".join(f"({x['wall']:.2f}, {x['cpu']:.2f})" for x in rounds))
    # the issue's own comparison: a faiss process on the same .npz files, round by round
    same = {key: [a / b for a, b in zip(e[key], res["faiss"][key], strict=True)] for key in ("wall", "cpu")}
    summary["same_files_wall_median"] = statistics.median(e["wall"]) / statistics.median(res["faiss"]["wall"])
    summary["same_files_round_wall_median"] = statistics.median(same["wall"])
    summary["same_files_round_cpu_median"] = statistics.median(same["cpu"])
    print("evalcore / faiss on the same .npz files: wall median "
          f"{summary['same_files_wall_median']:.2f}; median of the rounds: wall "
          f"{summary['same_files_round_wall_median']:.2f}, cpu {summary['same_files_round_cpu_median']:.2f} "
          f"(rounds: {', '.join(f'{x:.2f}' for x in same['wall'])})")
    agr = agreement(files, out, args.k)
    print(f"agreement (nDCG@{args.k} per query, ours vs the faiss run): {json.dumps(agr)}")
    print(f"load average at the end: {os.getloadavg()}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": res, "ratios": summary, "rounds": rounds, "agreement": agr}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

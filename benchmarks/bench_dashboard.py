"""Dashboard speed at seed 000's scale: a reference model as ground truth and two models, item-to-item.

Usage::

    python benchmarks/bench_dashboard.py                      # 5,000 items, 1536-d reference, two 384-d models
    python benchmarks/bench_dashboard.py --items 50000 --sample 5000

Two measurements, both server-side:

1. **pipeline** — evalcore.workspace steps, from the uploaded bytes to the
   overview table (parse the embedding files, the reference's top-N as ground
   truth, exact cosine top-k of each model, one evaluation at every k,
   ``summarize``), each step timed.
2. **app** — the dashboard under ``streamlit.testing.v1.AppTest``: the uploads
   are put in the session as bytes (what the Data page does with
   ``st.file_uploader`` values), then the Overview page is run — the first full
   evaluation with every cache cold — and then the interactions: changing the
   metric and k, the baseline, the query. Each ``AppTest.run()`` is timed (wall
   clock, including AppTest's own small overhead).

Wall-clock and CPU times are printed: on a shared machine, CPU time (all
threads of this process) is the steadier figure.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalcore import workspace as W  # noqa: E402


def make_files(n: int, dims: tuple[int, ...], seed: int = 0) -> dict[str, bytes]:
    """``.npz`` bytes (ids + float32 vectors): a reference and models that are noisy projections of it."""
    rng = np.random.default_rng(seed)
    ids = np.array([f"paper-{i:06d}" for i in range(n)])
    n_topics = max(8, n // 40)
    topics = rng.normal(size=(n_topics, dims[0])).astype(np.float32)
    ref = topics[rng.integers(0, n_topics, n)] + rng.normal(scale=0.8, size=(n, dims[0])).astype(np.float32)
    out = {}
    buf = io.BytesIO()
    np.savez(buf, ids=ids, embeddings=ref)
    out["reference.npz"] = buf.getvalue()
    for i, d in enumerate(dims[1:]):
        proj = rng.normal(size=(dims[0], d)).astype(np.float32) / np.sqrt(d)
        noise = 0.25 if i == 0 else 0.45
        emb = ref @ proj + rng.normal(scale=noise * float(np.abs(ref).mean()), size=(n, d)).astype(np.float32)
        buf = io.BytesIO()
        np.savez(buf, ids=ids, embeddings=emb.astype(np.float32))
        out[f"model{i + 1}_{d}d.npz"] = buf.getvalue()
    return out


def workspace(files: dict[str, bytes], settings: W.Settings) -> W.Snapshot:
    names = list(files)
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of(names[0], files[names[0]]), kind="reference")
    for name in names[1:]:
        ws, _ = W.add_embedding_run(ws, W.Blob.of(name, files[name]))
    return ws


class Clock:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float]] = []

    def __call__(self, label: str, fn, *a, **kw):
        w, c = time.perf_counter(), time.process_time()
        out = fn(*a, **kw)
        self.rows.append((label, time.perf_counter() - w, time.process_time() - c))
        return out

    def report(self, title: str) -> None:
        print(f"\n{title}")
        print(f"  {'step':<52} {'wall s':>8} {'cpu s':>8}")
        for label, w, c in self.rows:
            print(f"  {label:<52} {w:8.3f} {c:8.3f}")
        print(f"  {'total':<52} {sum(r[1] for r in self.rows):8.3f} {sum(r[2] for r in self.rows):8.3f}")


def bench_pipeline(files: dict[str, bytes], settings: W.Settings) -> None:
    from evalcore.aggregate import summarize

    clock = Clock()
    blobs = clock("hash the uploads (sha256)", lambda: {k: W.Blob.of(k, v) for k, v in files.items()})
    names = list(blobs)
    ws = W.set_ground_truth(W.Snapshot(settings=settings), blobs[names[0]], kind="reference")
    for name in names[1:]:
        ws, _ = W.add_embedding_run(ws, blobs[name])
    s = ws.settings.validated()
    universe = clock("reference ids (parse the reference file)", W.query_universe, ws.ground_truth)
    sample = W.sample_query_ids(universe, s.sample_size, s.seed) if s.sample_size else None
    depth = max(s.k) if s.gt_mode == "tied" else s.gt_depth
    nq = len(sample) if sample is not None else len(universe)
    reference = clock(f"ground truth ({s.gt_mode}): reference top-{depth} of {nq} queries", W.prepare_reference,
                      ws.ground_truth, sample=sample, domains=None, settings=s)
    qrels = reference.deepest
    runs = []
    for src in ws.runs:
        runs.append((clock(f"run {src.name}: parse + exact top-{s.depth}", W.build_run, src, qrels=qrels, settings=s),
                     None))
    ev = clock(f"evaluate {len(runs)} runs x {len(s.metrics)} metrics x {len(s.k)} k", W.evaluate_workspace,
               {None: qrels}, runs, s, reference=reference)
    summ = clock("summarize (mean, t CI per run x metric x k)", summarize, ev.table)
    from evalcore.intervals import summarize_with_intervals

    clock("summarize, bootstrap CIs (1,000 shared resamples)", summarize_with_intervals, ev.table)
    sys.path.insert(0, str(ROOT))
    from dashboard import tables as T

    clock("overview table (best marked)", T.overview_table, summ)
    clock.report(f"pipeline: {len(universe)} items, {qrels.n_queries} queries, per-query table {len(ev.table)} rows")


def bench_app(files: dict[str, bytes], settings: W.Settings, repeat: int) -> None:
    from streamlit.testing.v1 import AppTest

    def timed(label: str, at: AppTest, rows: list) -> AppTest:
        w, c = time.perf_counter(), time.process_time()
        at.run()
        rows.append((label, time.perf_counter() - w, time.process_time() - c))
        if at.exception:
            raise SystemExit(f"{label}: {at.exception[0].value}")
        return at

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=3600)
    at.run()  # opens on the demo (imports, demo; not part of the measurement)
    rows: list[tuple[str, float, float]] = []
    at.session_state["ws"] = workspace(files, settings)
    at.switch_page("pages/overview.py")
    timed("first full evaluation: bytes -> overview page", at, rows)
    timed("overview again (everything cached)", at, rows)
    metric = at.selectbox(key="w_overview_sel_metric")
    for i in range(repeat):
        metric.select("recall" if i % 2 == 0 else "ndcg")
        timed("overview: change the metric of the curves", at, rows)
        metric = at.selectbox(key="w_overview_sel_metric")
    at.switch_page("pages/compare.py")
    timed("compare page, first time (paired tests computed)", at, rows)
    seen = {int(at.selectbox(key="w_compare_sel_k").value)}
    for k in [5, 20, 5, 20][:max(2, 2 * repeat)]:
        at.selectbox(key="w_compare_sel_k").select(k)
        timed(f"compare: change k to {k}" + (" (cached tests)" if k in seen else " (paired tests computed)"), at,
              rows)
        seen.add(k)
    runs = at.selectbox(key="w_compare_sel_baseline").options
    for i in range(repeat):
        at.selectbox(key="w_compare_sel_baseline").select(runs[(i + 1) % len(runs)])
        timed("compare: change the baseline", at, rows)
    at.switch_page("pages/queries.py")
    timed("queries page, first time", at, rows)
    for i in range(repeat):
        box = at.selectbox(key="w_queries_sel_query")
        box.select(box.options[(i + 1) * 7 % len(box.options)])
        timed("queries: pick another query (drill-down)", at, rows)
    for i in range(repeat):
        at.selectbox(key="w_queries_sel_k").select([5, 20][i % 2])
        timed("queries: change k", at, rows)
    print("\napp (AppTest.run() per interaction)")
    print(f"  {'interaction':<52} {'wall s':>8} {'cpu s':>8}")
    for label, w, c in rows:
        print(f"  {label:<52} {w:8.3f} {c:8.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=5000)
    ap.add_argument("--dims", type=int, nargs="+", default=[1536, 384, 384], help="reference dim, then model dims")
    ap.add_argument("--sample", type=int, default=0, help="query sample size (0 = every item is a query)")
    ap.add_argument("--k", type=int, nargs="+", default=[1, 3, 5, 10, 20, 50, 100])
    ap.add_argument("--gt-mode", choices=["tied", "fixed"], default="tied",
                    help="reference ground truth: top-k at each k (seed 000, the default) or a fixed graded top-N")
    ap.add_argument("--gt-depth", type=int, default=10, help="N of the fixed mode")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mode", choices=["pipeline", "app", "both"], default="both")
    args = ap.parse_args()
    settings = W.Settings(k=tuple(args.k), sample_size=args.sample, gt_depth=args.gt_depth, gt_mode=args.gt_mode,
                          ties="docid_asc")
    t = time.perf_counter()
    files = make_files(args.items, tuple(args.dims))
    print(f"{args.items} items, dims {args.dims}, files {sum(map(len, files.values())) / 2**20:.0f} MB "
          f"(generated in {time.perf_counter() - t:.1f}s); {os.cpu_count()} CPUs; load average "
          f"{os.getloadavg()[0]:.2f}")
    if args.mode in ("pipeline", "both"):
        bench_pipeline(files, settings)
    if args.mode in ("app", "both"):
        bench_app(files, settings, args.repeat)


if __name__ == "__main__":
    main()

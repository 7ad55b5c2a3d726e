"""Server memory with one and with three browser tabs open on a 50,000-item workspace (issue 9, section 4).

Usage::

    python benchmarks/bench_store_memory.py                      # 50,000 items × 384, 2,000 sampled queries
    python benchmarks/bench_store_memory.py --items 50000 --queries 2000 --json out/bench_store_memory.json

A workspace is filled from Python as a training script would (``evalcore.Workspace``): a reference
model's embeddings as the ground truth (its nearest items are the relevant ones) and two item-to-item
embedding runs, 384-d float32 each (``--items`` rows), evaluated once with ``Workspace.evaluate`` so
their rankings are kept in the workspace. Then ``EVALCORE_WORKSPACE=DIR streamlit run app.py`` is
started and Debian's chromium (playwright, the helpers of ``tests/browser_support.py``) opens the
Overview in one tab, waits until it is settled (numbers shown, charts drawn), then in two more tabs
(new sessions). After each step the server process's ``VmRSS`` and ``VmHWM`` (``/proc/PID/status``)
are read: the figures of the issue are the server's resident memory with one and with three tabs.

What is shared (once per server): the memory-mapped embeddings (page cache), the parsed artifacts
(per-process cache by SHA-256), the runs, judgments and evaluation (``st.cache_resource``). What each
tab adds: its session (selections, the small per-session memo of summaries and tables) and the
messages of its page.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import browser_support as B  # noqa: E402

from evalcore import Workspace  # noqa: E402

TIMEOUT = 600.0


def memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a process, MiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":", 1)[0]
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(line.split()[1]) / 1024, 1)
    return out


def build(folder: Path, n_items: int, dim: int, n_queries: int, seed: int = 0) -> dict[str, float]:
    """The workspace: a reference ground truth and two item-to-item runs (noisy views of the reference)."""
    rng = np.random.default_rng(seed)
    ids = [f"item-{i:06d}" for i in range(n_items)]
    ref = rng.normal(size=(n_items, dim)).astype(np.float32)
    t0 = time.perf_counter()
    with Workspace.open(folder) as ws:
        ws.set_reference(ref, ids, name="reference-384d")
        for name, noise in (("model-a", 0.6), ("model-b", 0.9)):
            vectors = ref + rng.normal(scale=noise, size=ref.shape).astype(np.float32)
            ws.add_embedding_run(name, vectors, ids, model="model", version=name)
        ws.set_settings(sample_size=n_queries, gt_mode="fixed", gt_depth=10, metrics=("ndcg", "recall"))
        filled = time.perf_counter() - t0
        ws.evaluate()  # ranks both runs once (kept in the workspace), as a training script's hook would
    return {"fill_s": round(filled, 1), "evaluate_s": round(time.perf_counter() - t0 - filled, 1)}


def open_tab(context, url: str) -> float:
    t0 = time.perf_counter()
    page = context.new_page()
    page.goto(url, wait_until="commit")
    B.wait_for(page, main=["Metrics vs k", "Leaderboard"], grid=["model-a", "model-b", "ndcg@10"], timeout=TIMEOUT)
    return round(time.perf_counter() - t0, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=50_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=2_000, help="queries sampled from the items (0 = all)")
    ap.add_argument("--tabs", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="evalcore-mem-") as tmp:
        folder = Path(tmp) / "big"
        report: dict = {"items": args.items, "dim": args.dim, "queries": args.queries,
                        "workspace": build(folder, args.items, args.dim, args.queries)}
        report["workspace"]["size_mib"] = round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
                                                / 2**20, 1)
        env = {"EVALCORE_WORKSPACE": str(folder), "EVALCORE_WORKSPACES": str(Path(tmp) / "root"),
               "XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        server = B.start_streamlit(Path(tmp), env=env)
        try:
            report["server_idle"] = memory(server.proc.pid)
            sync_playwright = B.import_playwright()
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=B.find_chromium(), args=B.CHROMIUM_ARGS)
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                context.add_init_script(B.RUN_TRACKER)
                for n in range(1, args.tabs + 1):
                    took = open_tab(context, server.url + "/")
                    report[f"tabs_{n}"] = {**memory(server.proc.pid), "open_s": took}
                    print(f"{n} tab(s): {report[f'tabs_{n}']}", flush=True)
                browser.close()
        finally:
            server.stop()
    one, many = report["tabs_1"]["VmRSS"], report[f"tabs_{args.tabs}"]["VmRSS"]
    report["per_extra_tab_mib"] = round((many - one) / max(1, args.tabs - 1), 1)
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""What the user feels: click to settled page in a real browser, at seed 000's scale (issue 10, item 12).

Usage::

    python benchmarks/bench_browser.py                 # 5,000 items, a 1536-d reference, two 384-d models
    python benchmarks/bench_browser.py --repeat 12 --json out/bench_browser.json

``streamlit run app.py`` is started on a free port and driven by Debian's chromium through
playwright (the same helpers as the browser tests, ``tests/browser_support.py``). The three
embedding files are uploaded through the Data page's real file inputs (the reference as ground
truth, each model as an item-to-item embedding run); then every interaction of the issue is
timed from the user's input (``pointerdown`` / ``keydown`` in the page) to the *settled page*:
the content the server computed for that input is shown, the app is idle (no script run, no
stale element, no skeleton) and every chart is drawn. Nothing waits on a sleep.

Figures (page clock, seconds): the first page after loading (the Overview, its diversity and
statistics computed for the first time), a fresh tab opening on the app, and per interaction —
change k, pick a query, change the baseline, change the test, switch page — the median and the
worst of ``--repeat`` repetitions (first times included: a k or a test seen for the first time
computes its paired tests). The machine's load average is printed before and after: on a shared
2-core machine the figures move with it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import browser_support as B  # noqa: E402
from _bytecode import compile_project  # noqa: E402
from bench_dashboard import make_files  # noqa: E402

TIMEOUT = 300.0
TESTS = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "permutation": "randomization (permutation)"}


def gtitle_js(prefix: str) -> str:
    return ("() => Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'))"
            f".some(e => e.textContent.startsWith({json.dumps(prefix)}))")


def load(page, url: str, files: dict[str, Path]) -> float:
    """Upload the reference and the two models through the Data page; returns the seconds it took."""
    t0 = time.perf_counter()
    page.goto(url + "/", wait_until="commit")
    B.wait_for(page, main=["Metrics vs k"], timeout=TIMEOUT)
    B.go_to(page, "Data", timeout=TIMEOUT, expect=["Loaded runs"])
    B.act(page, lambda: page.locator(".st-key-clear_demo button").first.click(), timeout=TIMEOUT,
          main=["No ground truth loaded yet."])
    B.act(page, lambda: page.get_by_text("a reference model's embeddings", exact=True).click(), timeout=TIMEOUT,
          main=["Reference embeddings"])
    names = list(files)
    page.locator(".st-key-up_gt_ref input[type='file']").set_input_files(str(files[names[0]]))
    B.act(page, lambda: page.get_by_role("button", name="Use as ground truth").click(), timeout=TIMEOUT,
          sidebar=[f"ground truth: {names[0]} (reference model)"], main=["reference ground truth"])
    for name in names[1:]:
        page.locator(".st-key-up_emb input[type='file']").set_input_files(str(files[name]))
        stem = name.rsplit(".", 1)[0]
        B.act(page, lambda: page.get_by_role("button", name="Add embedding run").click(), timeout=TIMEOUT,
              sidebar=[f"run: {stem} [embedding]"], main=["ranked items"])
    B.wait_for(page, main=["5,000 queries, 500,000 ranked items"], timeout=TIMEOUT)
    return time.perf_counter() - t0


def choose(page, key: str, label: str, option: str) -> None:
    B.choose(page, B.widget(page, key, "stSelectbox", label), option)


def other(page, key: str, label: str, cycle: list[str], i: int) -> str:
    """The next option of ``cycle`` that differs from the box's current value (a change, never a no-op)."""
    current = B.selected(B.widget(page, key, "stSelectbox", label))
    for j in range(len(cycle)):
        option = cycle[(i + j) % len(cycle)]
        if option != current:
            return option
    raise AssertionError(f"no other option than {current!r} in {cycle}")


def run(args: argparse.Namespace) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="evalcore-bench-"))
    data = make_files(args.items, (args.ref_dim, args.dim, args.dim))
    files = {}
    for name, blob in data.items():
        (tmp / name).write_bytes(blob)
        files[name] = tmp / name
    models = [n.rsplit(".", 1)[0] for n in list(files)[1:]]
    out: dict = {"items": args.items, "dims": [args.ref_dim, args.dim, args.dim], "repeat": args.repeat,
                 "cpus": os.cpu_count(), "load_before": list(os.getloadavg())}
    times: dict[str, list[float]] = {}

    def timed(name: str, seconds: float) -> None:
        times.setdefault(name, []).append(seconds)

    # a results cache of its own (empty): the first page computes, as on a server seeing these files first
    env = {"EVALCORE_CACHE": str(tmp / "results-cache"), **({"EVALCORE_DASH_TIMING": "1"} if args.server_timing else {})}
    server = B.start_streamlit(tmp, env=env)
    if args.server_timing:
        print(f"server log (each computed step's seconds): {tmp}/streamlit-0.log", flush=True)
    sync_playwright = B.import_playwright()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=B.find_chromium(), args=B.CHROMIUM_ARGS, headless=True)
            ctx = browser.new_context(viewport={"width": 1400, "height": 900})
            ctx.add_init_script(B.RUN_TRACKER)
            page = ctx.new_page()
            out["load_files_s"] = round(load(page, server.url, files), 2)

            # the first page after loading: the Overview, computed for the first time
            out["first_page_after_loading_s"] = round(B.go_to(page, "Overview", timeout=TIMEOUT,
                                                              expect=["Leaderboard", "Diversity"]), 3)
            # a fresh tab on the app (the built-in demo; the server and the browser cache warm)
            tab = ctx.new_page()
            t0 = time.perf_counter()
            tab.goto(server.url + "/", wait_until="commit")
            B.wait_for(tab, main=["Leaderboard", "Metrics vs k"], timeout=TIMEOUT)
            out["fresh_tab_to_settled_s"] = round(time.perf_counter() - t0, 3)
            tab.close()

            cycle = [("Compare", ["Every pair of runs"]), ("Queries", ["All queries"]), ("Overview", ["Leaderboard"]),
                     ("Domains", []), ("Data", ["Loaded runs"])]
            ks = ["5", "20", "10"]
            tests = ["wilcoxon", "permutation", "t"]
            for i in range(args.repeat):
                for title, expect in cycle[:3]:
                    timed("page switch", B.go_to(page, title, timeout=TIMEOUT, expect=expect))
                # Compare: k, baseline, test
                B.go_to(page, "Compare", timeout=TIMEOUT, expect=["Every pair of runs"])
                k = other(page, "w_compare_sel_k", "Cutoff k", ks, i)
                timed("change k (Compare)", B.act(
                    page, lambda k=k: choose(page, "w_compare_sel_k", "Cutoff k", k), timeout=TIMEOUT,
                    js=gtitle_js(f"ndcg@{k}:")))
                base = other(page, "w_compare_sel_baseline", "Baseline", models, i)
                timed("change the baseline (Compare)", B.act(
                    page, lambda base=base: choose(page, "w_compare_sel_baseline", "Baseline", base),
                    timeout=TIMEOUT, main=[f"the baseline: {base}"]))
                test = other(page, "w_compare_sel_test", "Test", [TESTS[t] for t in tests], i)
                test = next(t for t, label in TESTS.items() if label == test)
                timed("change the test (Compare)", B.act(
                    page, lambda test=test: choose(page, "w_compare_sel_test", "Test", TESTS[test]),
                    timeout=TIMEOUT, main=[f"p = {TESTS[test]} p-value"]))
                # Queries: k and the query
                B.go_to(page, "Queries", timeout=TIMEOUT, expect=["All queries"])
                k = other(page, "w_queries_sel_k", "Cutoff k", ks, i + 1)
                timed("change k (Queries)", B.act(
                    page, lambda k=k: choose(page, "w_queries_sel_k", "Cutoff k", k), timeout=TIMEOUT,
                    main=[f"All queries: ndcg@{k}"]))
                qid = f"paper-{(i * 397 + 11) % args.items:06d}"
                box = page.locator(".st-key-q_search input").first
                timed("pick a query (Queries, by id)", B.act(
                    page, lambda qid=qid, box=box: (box.fill(qid), box.press("Enter")), timeout=TIMEOUT,
                    main=[f"query: {qid}"]))
            browser.close()
    finally:
        server.stop()
    out["load_after"] = list(os.getloadavg())
    out["interactions"] = {name: {"n": len(v), "median_s": round(statistics.median(v), 3), "worst_s": round(max(v), 3),
                                  "all_s": [round(x, 3) for x in v]} for name, v in times.items()}
    return out


def report(out: dict) -> str:
    lines = [f"{out['items']:,} items, dims {out['dims']}, {out['cpus']} CPUs; load average before "
             f"{' '.join(f'{x:.2f}' for x in out['load_before'])}, after {' '.join(f'{x:.2f}' for x in out['load_after'])}",
             f"uploading the three files and computing (Data page): {out['load_files_s']:.2f} s",
             f"first page after loading (Overview, computed for the first time): {out['first_page_after_loading_s']:.3f} s",
             f"a fresh tab opening on the app (demo):                               {out['fresh_tab_to_settled_s']:.3f} s",
             "", f"  {'interaction (click to settled page)':<40} {'n':>3} {'median s':>9} {'worst s':>8}"]
    for name, r in out["interactions"].items():
        lines.append(f"  {name:<40} {r['n']:>3} {r['median_s']:>9.3f} {r['worst_s']:>8.3f}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=5000)
    ap.add_argument("--ref-dim", type=int, default=1536)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--repeat", type=int, default=8)
    ap.add_argument("--server-timing", action="store_true",
                    help="log every computed dashboard step with its seconds in the server's log")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = ap.parse_args()
    print(compile_project(), flush=True)  # the .pyc an installed package has (see _bytecode)
    out = run(args)
    print(report(out))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""The dashboard in a real browser: ``streamlit run app.py`` driven by Debian's chromium through playwright.

What it checks (issue 4, "a real-browser test in CI"):

* the app opens on the built-in demo and its plotly charts render; every page of the
  demo runs without an exception element;
* a qrels file and two TREC runs uploaded through the real ``<input type=file>`` of the
  Data page give, on the Overview, the mean nDCG@10 and its 95% CI that
  ``evalcore.evaluate`` + ``evalcore.intervals.summarize_with_intervals`` compute on the same files (the
  table's text, and the exact value of each run's curve at k=10);
* on Queries, picking a query shows its ground truth and each run's top-k side by side
  (the per-query values equal evalcore's, the expected top documents are listed);
* a bad run file (non-numeric score) shows its error message next to it while the
  other files stay loaded and the numbers stay the same.

Also measured in the browser (reported, not asserted): page load to the Overview's
charts, and the time for interactions (k, query, baseline) until the page settles;
written to ``out/browser_timings.json``. With ``EVALCORE_SCREENSHOTS=1`` it saves the
tour's (docs/TOUR.md) screenshots of seven demo pages to ``docs/screenshots/`` (the eighth, Versions, is
``test_browser_versions.py``'s).

Chromium or playwright missing is a failure with install instructions, never a skip.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import browser_support as B
import numpy as np
import pytest
from browser_fixtures import STEP, TIMINGS, VIEWPORT, maybe_screenshot

from evalcore.evaluate import evaluate
from evalcore.intervals import summarize_with_intervals
from evalcore.io import load_run
from evalcore.io.trec import read_trec_qrels, read_trec_run

pytestmark = pytest.mark.browser



def no_exception(page, where: str) -> None:
    exc = B.exceptions_text(page)
    assert not exc, f"exception element on {where}:\n" + "\n---\n".join(exc)


def heading(page) -> str:
    return page.locator('[data-testid="stMain"] h1').first.inner_text().strip()


# ------------------------------------------------------------------------------------------ data

QIDS = [f"qry{i:02d}" for i in range(1, 31)]
POOL = [f"doc-{j:04d}" for j in range(1, 401)]


def write_inputs(folder: Path) -> dict[str, Path]:
    """Deterministic qrels (30 queries, graded 0-3) and two TREC runs: ``run_strong`` clearly beats ``run_weak``."""
    rng = np.random.default_rng(20261122)
    qrels, strong, weak = [], [], []
    for q in QIDS:
        docs = [str(d) for d in rng.choice(POOL, 40, replace=False)]
        rel, nonrel, other = docs[:5], docs[5:9], docs[9:]
        grades = [3, 2, 2, 1, 1]
        qrels += [f"{q} 0 {d} {g}" for d, g in zip(rel, grades, strict=True)]
        qrels += [f"{q} 0 {d} 0" for d in nonrel]
        # strong: most relevant documents near the top; weak: a few, lower down
        s_list = list(other[:20])
        for d in rel[:4]:
            s_list.insert(int(rng.integers(0, 6)), d)
        w_list = list(other[5:25])
        for d in rel[3:]:
            w_list.insert(int(rng.integers(3, 18)), d)
        w_list.insert(int(rng.integers(0, 4)), nonrel[0])
        for lines, ranked, tag in ((strong, s_list, "strong"), (weak, w_list, "weak")):
            for r, d in enumerate(ranked[:20]):
                lines.append(f"{q} Q0 {d} {r + 1} {round(30.0 - r - 0.01 * r * r, 4)} {tag}")
    files = {"qrels": folder / "qrels.txt", "strong": folder / "run_strong.trec",
             "weak": folder / "run_weak.trec", "bad": folder / "run_bad.trec"}
    files["qrels"].write_text("\n".join(qrels) + "\n", encoding="utf-8")
    files["strong"].write_text("\n".join(strong) + "\n", encoding="utf-8")
    files["weak"].write_text("\n".join(weak) + "\n", encoding="utf-8")
    bad = weak[:12]
    parts = bad[7].split()
    parts[4] = "high"  # a non-numeric score on line 8
    bad[7] = " ".join(parts)
    files["bad"].write_text("\n".join(bad) + "\n", encoding="utf-8")
    return files


def expected(files: dict[str, Path]):
    """evalcore's numbers on the same files: nDCG@10 summary per run and the per-query table."""
    qrels = read_trec_qrels(files["qrels"])
    runs = {n: read_trec_run(files[key], name=n) for key, n in (("strong", "run_strong"), ("weak", "run_weak"))}
    ev = evaluate(qrels, runs, metrics=["ndcg"], k=[10])
    summ = summarize_with_intervals(ev.table)
    summ["run"] = summ["run"].astype(str)
    per_query = ev.table.assign(run=ev.table["run"].astype(str)).pivot(index="query_id", columns="run",
                                                                        values="value")
    return summ, per_query, runs, qrels


def overview_cell(row) -> str:
    """The Overview table's cell text for a mean and its CI (3 decimals, as the page formats it)."""
    return f"{row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def top_docs(run, qid: str, k: int) -> list[str]:
    df = run.to_frame() if hasattr(run, "to_frame") else run
    sel = df[df["query_id"].astype(str) == qid].sort_values("score", ascending=False, kind="mergesort")
    return sel["doc_id"].astype(str).head(k).tolist()


# ------------------------------------------------------------------------------------------ helpers


def interact(page, name: str, action, **expect) -> None:
    """Run ``action`` (which triggers a rerun) and wait for the content it must bring (``expect``, see
    ``browser_support.wait_for``); records the seconds from the input to the settled page."""
    TIMINGS[f"{name}_input_to_settled_s"] = round(B.act(page, action, timeout=STEP, **expect), 3)


def upload(page, key: str, label: str, paths, shows: str, **expect) -> None:
    """Set files on the real ``<input type=file>`` of an ``st.file_uploader``; wait until the sidebar ``shows``
    the new file (the Data page handles it and reruns) and the page is idle."""
    box = B.widget(page, key, "stFileUploader", label)
    B.act(page, lambda: box.locator('input[type="file"]').set_input_files([str(p) for p in paths]),
          timeout=STEP, sidebar=[shows], **expect)


def sidebar_text(page) -> str:
    return page.locator('[data-testid="stSidebarUserContent"]').inner_text()


def wait_grid_contains(page, texts, timeout: float = STEP) -> str:
    """Wait until every text is in the page's data grids and the page is idle; returns the grid text."""
    B.wait_for(page, grid=list(texts), timeout=timeout)
    return B.grid_text(page)


def wait_main_contains(page, texts, timeout: float = STEP) -> str:
    """Wait until every text is in the main area's text and the page is idle; returns it."""
    B.wait_for(page, main=list(texts), timeout=timeout)
    return B.main_text(page)


def search_query(page, scope_key: str, qid: str) -> None:
    """Type a query id into a page's id search box (Enter submits); wait until its drill-down shows it."""
    box = page.locator(f".st-key-{scope_key} input").first

    def action():
        box.fill(qid)
        box.press("Enter")

    B.act(page, action, timeout=STEP, main=[f"query: {qid}"])


# ------------------------------------------------------------------------------------------ tests


def demo_numbers():
    """evalcore's numbers of the demo (the default settings): mean nDCG@10 per run, per-query table."""
    from demo_oracle import oracle_demo

    from evalcore import workspace as W

    demo = oracle_demo(0)
    st = W.Settings().validated()
    ev = evaluate(demo.qrels, demo.runs, metrics=list(st.metrics), k=list(st.k), ties=st.ties)
    summ = summarize_with_intervals(ev.table)
    summ = summ.assign(run=summ["run"].astype(str), metric=summ["metric"].astype(str))
    return demo, ev, summ


def test_demo_in_browser(server, page):
    """The demo: charts on the Overview, every page without exception; timings; tour screenshots."""
    demo, ev, summ = demo_numbers()
    t0 = time.perf_counter()
    page.goto(server.url + "/", wait_until="commit")
    B.wait_for(page, main=["Built-in demo: synthetic data", "Metrics vs k"],
               grid=["strong-128d", "weak-64d", "lexical", "ndcg@10"], timeout=STEP)
    TIMINGS["demo_load_to_settled_wall_s"] = round(time.perf_counter() - t0, 2)
    assert heading(page) == "Overview"
    text = B.main_text(page)
    assert "Downloads" in text
    n_traces = page.locator('[data-testid="stPlotlyChart"] .scatterlayer .trace').count()
    assert n_traces >= 3, f"the metrics-vs-k chart has {n_traces} traces (one per run expected at least)"
    grid = B.grid_text(page)
    assert re.search(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", grid), grid[:2000]
    no_exception(page, "Overview (demo)")
    # a newcomer's first screen carries no warning (the demo's runs once held equal scores, and the
    # sidebar said the tie rule re-ordered them): the sidebar is filled once the runs are evaluated
    B.wait_for(page, sidebar=["queries evaluated: 300 of 300"], timeout=STEP)
    alerts = page.locator('[data-testid="stSidebar"] [data-testid="stAlert"]').all_inner_texts()
    assert alerts == [], alerts
    maybe_screenshot(page, "Overview")

    # every page of the demo, in its default state (the tour's screenshots)
    expect = {"Data": ["Loaded runs", "300 queries, 30,000 ranked items"], "Compare": ["Every pair of runs", "Per query: run A vs run B"],
              "Queries": ["All queries: ndcg@10", "Drill-down"], "Domains": ["ndcg@10 per domain"],
              "Versions": ["No model has two or more versions", "Add the demo model's training checkpoints"],
              "Fusion": ["The fused run next to its inputs"], "Agreement": ["Runs × runs"]}
    for title in ["Data", "Compare", "Versions", "Queries", "Domains", "Fusion", "Agreement"]:
        TIMINGS[f"open_{title.lower()}_s"] = round(B.go_to(page, title, timeout=STEP, expect=expect[title]), 2)
        no_exception(page, f"{title} (demo)")
        if title != "Versions":  # its tour screenshot shows the checkpoints (test_browser_versions.py)
            maybe_screenshot(page, title)
        if title == "Data":
            B.wait_for(page, main=["built-in demo: synthetic data"])
            # every run's "Remove" button shows its whole label, also on a narrower window
            for width in (VIEWPORT["width"], 1000):
                page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
                texts = page.locator('[class*="st-key-rm_"] button').all_inner_texts()
                assert len(texts) >= 3 and all("Remove" in t for t in texts), texts
                cut = page.evaluate("""() => Array.from(document.querySelectorAll('[class*="st-key-rm_"] button'))
                    .flatMap(b => [b, ...b.querySelectorAll('*')])
                    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.outerHTML.slice(0, 200))""")
                assert not cut, (width, cut)
            page.set_viewport_size(VIEWPORT)

    # interactions, each until the page shows what the server computed for it (timings reported)
    B.go_to(page, "Compare", timeout=STEP, expect=["Every pair of runs"])
    box = B.widget(page, "w_compare_sel_baseline", "stSelectbox", "Baseline")
    other = "weak-64d" if B.selected(box) != "weak-64d" else "strong-128d"
    mean = summ[(summ["run"] == other) & (summ["metric"] == "ndcg") & (summ["k"] == 10)]["mean"].iloc[0]
    interact(page, "compare_change_baseline", lambda: B.choose(page, box, other),
             main=[f"mean of the baseline: {mean:.4f}"])
    assert B.selected(box) == other
    no_exception(page, "Compare after changing the baseline")

    B.go_to(page, "Queries", timeout=STEP, expect=["All queries"])
    kbox = B.widget(page, "w_queries_sel_k", "stSelectbox", "Cutoff k")
    interact(page, "queries_change_k", lambda: B.choose(page, kbox, "20"), main=["All queries: ndcg@20"])
    assert B.selected(kbox) == "20"
    qid = str(demo.qrels.query_ids[-1])
    box = page.locator(".st-key-q_search input").first
    interact(page, "queries_change_query", lambda: (box.fill(qid), box.press("Enter")), main=[f"query: {qid}"])
    no_exception(page, "Queries after changing k and the query")

    B.go_to(page, "Overview", timeout=STEP, expect=["Metrics vs k"])
    metric_box = B.widget(page, "w_overview_sel_ov_curve_metric", "stSelectbox", "Metric")
    interact(page, "overview_change_metric", lambda: B.choose(page, metric_box, "recall"),
             js=Y_TITLE_JS.replace("TITLE", "recall"))
    assert B.selected(metric_box) == "recall"
    no_exception(page, "Overview after changing the metric")
    assert not page.page_errors, f"JavaScript errors: {page.page_errors}"
    # every page, every interaction: nothing asked of another host (works offline, tells no one)
    assert not page.external_requests, page.external_requests
    TIMINGS["demo_test_total_s"] = round(time.perf_counter() - t0, 1)


#: A plotly chart whose y axis title is TITLE is drawn.
Y_TITLE_JS = ("() => Array.from(document.querySelectorAll('.js-plotly-plot .ytitle'))"
              ".some(e => e.textContent.trim() === 'TITLE')")


def test_uploads_overview_drilldown_and_a_bad_file(server, page, tmp_path):
    """Real file inputs: qrels + two runs -> evalcore's numbers on the Overview; drill-down; a bad file."""
    t0 = time.perf_counter()
    files = write_inputs(tmp_path)
    summ, per_query, runs, qrels = expected(files)
    cells = {r: overview_cell(row) for r, row in summ.set_index("run").iterrows()}
    assert summ.set_index("run").loc["run_strong", "mean"] > summ.set_index("run").loc["run_weak", "mean"] + 0.2

    # a second session (new tab): the server's caches and the browser's HTTP cache are warm
    page.goto(server.url + "/", wait_until="commit")
    B.wait_for(page, main=["Built-in demo: synthetic data", "Metrics vs k"], grid=["strong-128d"], timeout=STEP)
    no_exception(page, "Overview (demo, second session)")
    B.go_to(page, "Data", timeout=STEP, expect=["Loaded runs", "300 queries, 30,000 ranked items"])
    no_exception(page, "Data (demo)")

    # ground truth, then the two runs, through the real <input type=file>
    upload(page, "up_gt", "Ground-truth file", [files["qrels"]], shows="qrels.txt", main=["loaded ground truth"])
    assert "Built-in demo" not in sidebar_text(page)
    no_exception(page, "Data after the ground truth upload")
    upload(page, "up_runs", "Run files", [files["strong"], files["weak"]], shows="run_weak",
           main=["30 queries, 600 ranked items"])
    side = sidebar_text(page)
    assert "run: run_strong" in side and "run: run_weak" in side, side
    main = B.main_text(page)
    assert main.count("30 queries, 600 ranked items") == 2, main[-3000:]
    no_exception(page, "Data after the run uploads")
    TIMINGS["uploads_s"] = round(time.perf_counter() - t0, 2)

    # the Overview shows evalcore's mean nDCG@10 [95% CI] of both runs
    B.go_to(page, "Overview", timeout=STEP, expect=["Metrics vs k"])
    grid = wait_grid_contains(page, ["run_strong", "run_weak", "ndcg@10", *cells.values()])
    assert "★ " + cells["run_strong"] in grid  # the better run is marked best
    # the metrics-vs-k curves carry the exact means: the point at k=10 of each run's line
    traces = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap(
        el => (el._fullData || []).map(t => ({name: String(t.name), x: Array.from(t.x || []).map(Number),
                                             y: Array.from(t.y || []).map(Number)})))""")
    for run, row in summ.set_index("run").iterrows():
        at10 = [y for t in traces if t["name"] == run for x, y in zip(t["x"], t["y"], strict=True) if x == 10]
        assert any(abs(y - row["mean"]) < 1e-9 for y in at10), (run, row["mean"], at10)
    no_exception(page, "Overview (uploaded files)")

    # Queries: the query where the two runs differ most, by its id; each run's top k side by side
    B.go_to(page, "Queries", timeout=STEP, expect=["All queries"])
    diff = (per_query["run_strong"] - per_query["run_weak"]).sort_values(kind="mergesort")
    qid = str(diff.index[-1])
    search_query(page, "q_search", qid)
    main = wait_main_contains(page, [f"query: {qid}", "A · run_strong", "B · run_weak", "20 ranked"])
    for run in ("run_strong", "run_weak"):
        assert f"ndcg@10: {per_query.loc[qid, run]:.4f}" in main, main[:2000]
    gt = qrels.to_frame()
    best_gt = gt[(gt["query_id"].astype(str) == qid) & (gt["relevance"] >= 2)]["doc_id"].astype(str).tolist()
    want = [*top_docs(runs["run_strong"], qid, 5), *top_docs(runs["run_weak"], qid, 5), *best_gt]
    wait_grid_contains(page, want)
    no_exception(page, "Queries (uploaded files)")

    # a bad run file: its error next to it, everything else still loaded
    try:
        load_run(files["bad"].read_bytes(), name="run_bad", label=files["bad"].name)
    except Exception as e:  # noqa: BLE001 - the message is what the page must show
        message = " ".join(str(e).split())
    else:  # pragma: no cover
        pytest.fail("the bad run file loaded without error")
    assert "line 8" in message and "high" in message, message
    B.go_to(page, "Data", timeout=STEP, expect=["Loaded runs"])
    # issue 9: a file that does not load is reported next to its uploader and not stored (nor listed)
    upload(page, "up_runs", "Run files", [files["bad"]], shows="run: run_weak", main=["Not loaded: run_bad.trec"])
    alert = page.locator('[data-testid="stAlert"]', has_text="Not loaded").filter(has_text="run_bad.trec")
    shown = " ".join(alert.first.inner_text().split())
    assert message in shown, f"expected {message!r} in the error {shown!r}"
    assert page.locator('[data-testid="stAlert"]').filter(has_text="Not loaded").count() == 1
    # next to its uploader: below the "Ranked run files" heading, above the list of loaded runs (not at the
    # top of the page, which a user who scrolled down to the uploader does not see)
    top = {t: page.get_by_text(t, exact=True).first.bounding_box()["y"] for t in ("Ranked run files", "Loaded runs")}
    assert top["Ranked run files"] < alert.first.bounding_box()["y"] < top["Loaded runs"], top
    main = B.main_text(page)
    assert main.count("30 queries, 600 ranked items") == 2, main[-3000:]
    side = sidebar_text(page)
    for name in ("qrels.txt", "run: run_strong", "run: run_weak"):
        assert name in side, side
    assert "run_bad" not in side, side
    no_exception(page, "Data after the bad upload")

    B.go_to(page, "Overview", timeout=STEP, expect=["Metrics vs k"])
    grid = wait_grid_contains(page, [cells["run_strong"], cells["run_weak"]])
    assert "run_bad" not in grid
    no_exception(page, "Overview after the bad upload")
    assert not page.page_errors, f"JavaScript errors: {page.page_errors}"
    TIMINGS["upload_test_total_s"] = round(time.perf_counter() - t0, 1)

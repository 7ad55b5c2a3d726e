"""Issue 10 in a real browser (chromium + playwright on ``streamlit run app.py``), one test per "Must show":

the seed 001 fixture's drill-down shows the content grades for the content run; a run with no matching
query is flagged and left out of ★ (and every CI stays within the metric's range); the heatmap's colours
follow significance; the query picker reaches the last of 5,000 queries; the leaderboard's Markdown and
LaTeX downloads, checked cell by cell.

Every wait is on content the server must render after the action, with the app idle
(``browser_support.wait_for``): never on a sleep or on a script-run event.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import browser_support as B
import numpy as np
import pytest
from browser_fixtures import STEP

from evalcore.evaluate import evaluate
from evalcore.io import load_qrels
from evalcore.stats import compare

pytestmark = pytest.mark.browser

FIX = Path(__file__).resolve().parent / "fixtures"
CONTENT = "5_most_similar_movies_content_ordered"

#: Rows of every data grid of the main area: lists of cell texts (the grids' accessible tables).
GRID_ROWS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] table[role="grid"]')).map(
    t => Array.from(t.querySelectorAll('tr')).map(r => Array.from(r.querySelectorAll('th, td'))
        .map(c => c.textContent.trim())))"""


def fresh_session(page, server) -> None:
    """A new session on the Data page, without the demo."""
    page.goto(server.url + "/", wait_until="commit")
    B.wait_for(page, main=["Metrics vs k"], timeout=STEP)
    B.go_to(page, "Data", timeout=STEP, expect=["Loaded runs"])
    button = page.locator(".st-key-clear_demo button").first
    B.act(page, lambda: button.click(), timeout=STEP, main=["No ground truth loaded yet."])


def upload(page, key: str, paths, *, sidebar, **expect) -> None:
    box = page.locator(f".st-key-{key} input[type='file']")
    B.act(page, lambda: box.set_input_files([str(p) for p in paths]), timeout=STEP, sidebar=list(sidebar), **expect)


def grids(page) -> list[list[list[str]]]:
    return page.evaluate(GRID_ROWS_JS)


def trec(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ item 1


def test_content_run_drilldown_shows_the_content_grades(server, page, tmp_path):
    movies = json.loads((FIX / "seed001_movies.json").read_text())
    ids = [m["movie_id"] for m in movies]
    lines = []
    for m in movies:
        order = list(m[CONTENT]) + [i for i in ids if i != m["movie_id"] and i not in m[CONTENT]]
        lines += [f"{m['movie_id']} Q0 {d} {r + 1} {10 - r} x" for r, d in enumerate(order)]
    run = trec(tmp_path / "content_run.trec", lines)
    fresh_session(page, server)
    upload(page, "up_gt", [FIX / "seed001_movies.json"], sidebar=["seed001_movies.json"],
           main=["loaded ground truth"])
    B.choose(page, B.widget(page, "gt_aspect", "stSelectbox", "Aspect"), CONTENT)
    B.wait_for(page, main=["Preview: first rows"], timeout=STEP)
    upload(page, "up_runs", [run], sidebar=["run: content_run"], main=["6 queries, 30 ranked items"])
    B.go_to(page, "Queries", timeout=STEP, expect=["All queries"])
    qid = "tt0000001"
    box = page.locator(".st-key-q_search input").first
    B.act(page, lambda: (box.fill(qid), box.press("Enter")), timeout=STEP,
          main=[f"query: {qid}", "A · content_run", f"aspect: {CONTENT}"])
    truth = load_qrels((FIX / "seed001_movies.json").read_bytes(), aspect=CONTENT).to_frame()
    truth = truth[truth["query_id"] == qid]
    want = {d: f"✔ {g}" for d, g in zip(truth["doc_id"], truth["relevance"], strict=True)}
    B.wait_for(page, grid=[*want, *want.values()], timeout=STEP)  # the list's grid is drawn
    lists = [g for g in grids(page) if g and g[0][:3] == ["#", "grade", "doc"]]
    assert lists, grids(page)
    shown = {row[2]: row[1] for row in lists[0][1:]}
    assert shown == want


# ------------------------------------------------------------------------------------------ items 4, 6


def test_a_run_without_matching_queries_is_flagged_and_every_ci_in_range(server, page, tmp_path):
    qids = [f"q{i}" for i in range(30)]
    qrels = trec(tmp_path / "qrels.txt", [f"{q} 0 d1 1" for q in qids] + [f"{q} 0 d2 1" for q in qids])
    weak = trec(tmp_path / "weak.trec", [f"{q} Q0 d{j} {r + 1} {9 - r} w" for q in qids
                                         for r, j in enumerate((3, 4, 1))])
    partial = trec(tmp_path / "partial.trec", [f"{q} Q0 d{j} {r + 1} {9 - r} p" for q in qids[:12]
                                               for r, j in enumerate((1, 2))])
    nomatch = trec(tmp_path / "nomatch.trec", [f"Q-{i} Q0 d1 1 1.0 n" for i in range(30)])
    fresh_session(page, server)
    # the runs first: after the ground truth, 'nomatch' (none of its query ids is a query of it) is refused
    upload(page, "up_runs", [weak, partial, nomatch], sidebar=["run: nomatch"])
    upload(page, "up_gt", [qrels], sidebar=["qrels.txt"], main=["loaded ground truth", "Low coverage"])
    B.go_to(page, "Overview", timeout=STEP, expect=["Leaderboard", "Low coverage"])
    main = B.main_text(page)
    assert "nomatch: results for 0/30 (0%)" in main and "partial: results for 12/30 (40%)" in main
    B.wait_for(page, grid=["coverage", "nomatch", "0/30 (0%)", "ndcg@10"], timeout=STEP)  # the leaderboard is drawn
    table = next(g for g in grids(page) if g and g[0][:2] == ["run", "coverage"])
    head, rows = table[0], {r[0]: r for r in table[1:]}
    col = head.index("ndcg@10")
    assert rows["weak"][col].startswith("★") and not rows["partial"][col].startswith("★")
    assert not rows["nomatch"][col].startswith("★") and rows["nomatch"][1] == "0/30 (0%)"
    cells = [c for r in table[1:] for c in r[2:]]
    assert cells
    for cell in cells:  # every mean and CI inside [0, 1], the mean inside its CI
        m = re.fullmatch(r"(?:★ )?(\d\.\d{3}) \[(-?\d\.\d{3}), (-?\d\.\d{3})\]", cell)
        assert m, cell
        mean, lo, hi = map(float, m.groups())
        assert 0.0 <= lo <= mean <= hi <= 1.0, cell
    for title in ("Compare", "Queries", "Domains"):
        B.go_to(page, title, timeout=STEP, expect=["Low coverage"])


# ------------------------------------------------------------------------------------------ item 6


def test_heatmap_colours_follow_significance(server, page):
    from demo_oracle import oracle_demo

    page.goto(server.url + "/", wait_until="commit")
    B.wait_for(page, main=["Metrics vs k"], timeout=STEP)
    B.go_to(page, "Compare", timeout=STEP, expect=["Every pair of runs"])
    B.act(page, lambda: B.choose(page, B.widget(page, "w_compare_sel_metric", "stSelectbox", "Metric"), "recall"),
          timeout=STEP, js="() => Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'))"
                           ".some(e => e.textContent.startsWith('recall@'))")
    B.act(page, lambda: B.choose(page, B.widget(page, "w_compare_sel_k", "stSelectbox", "Cutoff k"), "50"),
          timeout=STEP, js="() => Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'))"
                           ".some(e => e.textContent.startsWith('recall@50'))")
    heat = page.evaluate("""() => { for (const el of document.querySelectorAll('.js-plotly-plot')) {
        for (const t of (el._fullData || [])) { if (t.type === 'heatmap')
            return {y: Array.from(t.y), z: Array.from(t.z, r => Array.from(r))}; } } return null; }""")
    assert heat is not None
    demo = oracle_demo(0)
    ev = evaluate(demo.qrels, demo.runs, metrics=["recall"], k=[50])
    runs = heat["y"]
    cmp = compare(ev.table, metric="recall", k=50, runs=runs, n_resamples=1000, ci_method="percentile",
                  resampling="shared")
    kinds = set()
    for row in cmp.itertuples(index=False):
        i, j = runs.index(row.run_a), runs.index(row.run_b)
        want = int(np.sign(row.diff)) * (2 if row.significant else 1)
        assert heat["z"][j][i] == want and heat["z"][i][j] == -want
        kinds.add(abs(want))
    assert kinds == {1, 2}
    # the colours: deep for a significant difference, pale for a non-significant one
    scale = page.evaluate("""() => { for (const el of document.querySelectorAll('.js-plotly-plot')) {
        for (const t of (el._fullData || [])) { if (t.type === 'heatmap') return t.colorscale; } } }""")
    from dashboard.charts import HEAT_CLASSES

    assert [c for _, c in scale][::2] == [HEAT_CLASSES[v][0] for v in sorted(HEAT_CLASSES)]


# ------------------------------------------------------------------------------------------ item 3


def test_the_picker_reaches_the_last_of_5000_queries(server, page, tmp_path):
    rng = np.random.default_rng(0)
    ids = [f"q{i:05d}" for i in range(5000)]
    qrels = trec(tmp_path / "many_qrels.txt", [f"{q} 0 d{int(rng.integers(0, 50))} 1" for q in ids])
    runs = [trec(tmp_path / f"{n}.trec", [f"{q} Q0 d{int(d)} {r + 1} {5 - r} {n}" for q in ids
                                          for r, d in enumerate(rng.choice(50, 3, replace=False))])
            for n in ("first", "second")]
    fresh_session(page, server)
    upload(page, "up_gt", [qrels], sidebar=["many_qrels.txt"], main=["loaded ground truth"])
    upload(page, "up_runs", runs, sidebar=["run: second"], main=["5,000 queries, 15,000 ranked items"])
    B.go_to(page, "Queries", timeout=STEP, expect=["All queries", "of 5,000 queries"])
    last = ids[-1]
    box = page.locator(".st-key-q_search input").first
    B.act(page, lambda: (box.fill(last), box.press("Enter")), timeout=STEP, main=[f"query: {last}"])
    B.go_to(page, "Compare", timeout=STEP, expect=["Every pair of runs"])
    box = page.locator(".st-key-compare_qsearch input").first
    B.act(page, lambda: (box.fill("q0499"), box.press("Enter")), timeout=STEP,
          main=["10 of 5,000 queries match", "Query (B − A, worst first)"], absent=["No queries id contains"])
    assert B.selected(B.widget(page, "w_compare_sel_query", "stSelectbox", "Query")).startswith("q0499")


# ------------------------------------------------------------------------------------------ item 11


def test_leaderboard_markdown_and_latex_downloads_cell_by_cell(server, page, tmp_path):
    from test_leaderboard import check_demo_exports

    page.goto(server.url + "/", wait_until="commit")
    B.wait_for(page, main=["Leaderboard", "Metrics vs k"], timeout=STEP)
    B.act(page, lambda: page.get_by_text("Export the leaderboard (Markdown, LaTeX)").click(), timeout=STEP,
          main=["Baseline of the significance marks"])
    baseline = B.selected(B.widget(page, "w_overview_sel_baseline", "stSelectbox", "Baseline"))
    files = {}
    for label, key in (("Markdown", "dl_lb_md"), ("LaTeX", "dl_lb_tex")):
        with page.expect_download(timeout=STEP * 1000) as info:
            page.locator(f".st-key-{key} button").click()
        files[label] = Path(info.value.path()).read_text(encoding="utf-8")
    check_demo_exports(files["Markdown"], files["LaTeX"], baseline)
    assert r"\begin{tabular}" in files["LaTeX"] and "significantly better" in files["Markdown"]

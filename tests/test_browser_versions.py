"""The Versions page in a real browser (chromium + playwright on ``streamlit run app.py``): the demo's training
checkpoints added from the page's empty state, the curve and the tests drawn, "what changed" listing the queries
an independent sort of evalcore's per-query values names, and a click on one of them (its row's selection box)
opening its drill-down on the Queries page with the two versions as runs A and B. Read at 1,000 px as well as at
1,400 px. (The "Open its drill-down" button is tested under AppTest, ``test_app_versions.py``.)

Every wait is on content the server must render after the action, with the app idle
(``browser_support.wait_for``): never on a sleep or on a script-run event.
"""

from __future__ import annotations

import browser_support as B
import pytest
from browser_fixtures import STEP, VIEWPORT, maybe_screenshot

from evalcore.evaluate import evaluate
from evalcore.workspace.demo import cached_demo
from evalcore.workspace.demo_series import demo_series

pytestmark = pytest.mark.browser

LIST_ROWS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] table[role="grid"]'))
    .map(t => Array.from(t.querySelectorAll('tr')).map(r => Array.from(r.querySelectorAll('th, td'))
        .map(c => c.textContent.trim())))
    .filter(g => g.length && g[0].slice(0, 5).join('|') === 'query_id|B − A|A|B|domain')"""

#: Height of a header or data row of ``st.dataframe`` (Streamlit's default), px.
ROW_HEIGHT = 35
#: The main area is no wider than the window (nothing cut off or scrolled sideways).
FITS_JS = """() => { const m = document.querySelector('[data-testid="stMain"]');
    return m.scrollWidth <= m.clientWidth + 1; }"""


def most_changed(run_a: str, run_b: str, top: int = 10) -> tuple[list[str], list[str]]:
    """The queries that improved and regressed most in nDCG@10 from A to B (sorted here, ties by id)."""
    demo = cached_demo(0)
    runs = {**demo.runs, **demo_series(0).runs}
    t = evaluate(demo.qrels, {n: runs[n] for n in (run_a, run_b)}, metrics=["ndcg"], k=[10]).table
    a = t[t["run"] == run_a].set_index("query_id")["value"]
    b = t[t["run"] == run_b].set_index("query_id")["value"]
    gain = {str(q): float(b[q] - a[q]) for q in a.index}
    up = sorted((q for q in gain if gain[q] > 0), key=lambda q: (-gain[q], q))[:top]
    down = sorted((q for q in gain if gain[q] < 0), key=lambda q: (gain[q], q))[:top]
    return up, down


def test_versions_page_and_a_query_from_what_changed(server, page):
    page.goto(server.url + "/", wait_until="commit")
    B.wait_for(page, main=["Metrics vs k"], timeout=STEP)
    B.go_to(page, "Versions", timeout=STEP, expect=["No model has two or more versions", "add_embedding_run"])
    button = page.locator(".st-key-ver_demo_series button").first
    B.act(page, lambda: button.click(), timeout=STEP,
          main=["ndcg@10 across the versions", "Each version tested", "Version A vs B: what changed"],
          grid=["epoch 20", "epoch 25"])
    assert not B.exceptions_text(page) and not page.page_errors
    up, down = most_changed("strong-128d epoch 20", "strong-128d")
    page.locator(".st-key-ver_regressed").first.scroll_into_view_if_needed()
    # the grids draw their rows after the run ends: wait until both lists show their ten queries
    B.wait_for(page, js=f"() => {{ const g = ({LIST_ROWS_JS})(); return g.length === 2 && g.every(t => t.length === 11); }}",
               timeout=STEP)
    lists = page.evaluate(LIST_ROWS_JS)
    assert [[row[0] for row in g[1:]] for g in lists] == [up, down]
    maybe_screenshot(page, "Versions")
    for width in (1000, VIEWPORT["width"]):  # readable at both widths: the page fits, the chart is drawn
        page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
        B.wait_for(page, main=["Version A vs B: what changed"], js=FITS_JS, timeout=STEP)
    # clicking a regressed query's row opens its drill-down, versions A and B side by side
    qid = down[0]
    grid = page.locator(".st-key-ver_regressed [data-testid='stDataFrameResizable']").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    row = ROW_HEIGHT * 1.5  # the middle of the first row, under the header row
    B.act(page, lambda: page.mouse.click(box["x"] + 15, box["y"] + row), timeout=STEP,
          main=[f"query: {qid}", "· strong-128d epoch 20", "· strong-128d\n"],
          js="() => document.querySelector('[data-testid=\"stMain\"] h1').innerText.trim() === 'Queries'")
    assert not B.exceptions_text(page) and not page.page_errors

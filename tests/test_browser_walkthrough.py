"""What a walk through every page in chromium found that only a real browser shows (a drawn chart's layout), checked
in chromium + playwright on ``streamlit run app.py``.

Every wait is on content the server must render after the action, with the app idle
(``browser_support.wait_for``): never on a sleep or on a script-run event.
"""

from __future__ import annotations

import browser_support as B
import pytest
from browser_fixtures import STEP
from test_browser import QIDS, write_inputs

from dashboard import domain_charts
from evalcore import workspace as W

pytestmark = pytest.mark.browser

#: In the Domains page's chart: the texts of the value axis (tick labels, title) the legend covers, whether the
#: legend fits in the chart, and whether a run's dots are cut at the plot's edge (a clip path on them).
DOMAIN_ROWS_JS = """() => {
  const plot = document.querySelector('.st-key-dom_bars .js-plotly-plot');
  const box = e => e.getBoundingClientRect();
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const legend = box(plot.querySelector('.legend')), svg = box(plot.querySelector('.main-svg'));
  return {
    covered: Array.from(plot.querySelectorAll('.xtick text, .g-xtitle text'))
      .filter(t => t.textContent.trim() && meets(box(t), legend)).map(t => t.textContent),
    legendInside: legend.left >= svg.left && legend.right <= svg.right + 1 && legend.top >= svg.top,
    clipped: Array.from(plot.querySelectorAll('.scatterlayer .trace .points'))
      .filter(g => g.closest('[clip-path]')).length,
    rows: plot.querySelectorAll('.ytick').length,
  };
}"""


def test_domains_as_rows_keep_the_value_axis_readable(server, page, tmp_path):
    """Beyond 12 domains (one row per domain, the value axis on top), the legend sat above the plot as on every other
    chart: on the axis' tick labels and title (0.2 and its neighbours unreadable), and a mean of 0 or 1, on the
    plot's edge, was drawn as half a dot. The legend is at the right now, and the dots are whole."""
    files = write_inputs(tmp_path)
    n_domains = domain_charts.DOMAIN_BARS_UP_TO + 3
    ws = W.WorkspaceRoot().create("many-domains")
    ws.set_ground_truth(files["qrels"])
    for key in ("strong", "weak"):
        ws.add_run(f"run_{key}", files[key])
    ws.set_domains({q: f"domain {i % n_domains:02d}" for i, q in enumerate(QIDS)}, name="domains")
    ws.close()
    page.goto(server.url + "/domains?ws=many-domains", wait_until="commit")
    B.wait_for(page, main=["ndcg@10 per domain", "One row per domain"], timeout=STEP,
               js=f"() => ({DOMAIN_ROWS_JS})().rows === {n_domains}")
    drawn = page.evaluate(DOMAIN_ROWS_JS)
    assert drawn["covered"] == [] and drawn["legendInside"], drawn
    assert drawn["clipped"] == 0, drawn
    assert not B.exceptions_text(page) and not page.page_errors

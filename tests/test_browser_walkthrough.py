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


#: On the Compare page's per-query scatter: the legend's and the toolbar's (modebar) boxes, and whether they overlap.
SCATTER_TOOLBAR_JS = """() => {
  const plot = document.querySelector('.st-key-cmp_scatter .js-plotly-plot');
  if (!plot) return null;
  const box = e => e.getBoundingClientRect();
  const legend = plot.querySelector('.legend'), bar = plot.querySelector('.modebar');
  if (!legend || !bar || !plot.querySelectorAll('.legend .traces').length) return null;
  const a = box(legend), b = box(bar), svg = box(plot.querySelector('.main-svg'));
  const r = x => [Math.round(x.left), Math.round(x.top), Math.round(x.right), Math.round(x.bottom)];
  return {legend: r(a), toolbar: r(b), entries: plot.querySelectorAll('.legend .traces').length,
          overlap: a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom,
          inside: a.left >= svg.left && a.right <= svg.right + 1 && a.top >= svg.top && a.bottom <= svg.bottom + 1};
}"""


def test_compare_scatter_legend_clear_of_the_toolbar(server, page, tmp_path):
    """The per-query scatter's legend ran along the top of the chart, and Plotly's toolbar (shown on hover, top right)
    was drawn over its right end (a domain's name hidden under the buttons). The legend stays clear of it."""
    files = write_inputs(tmp_path)
    ws = W.WorkspaceRoot().create("scatter-legend")
    ws.set_ground_truth(files["qrels"])
    for key in ("strong", "weak"):
        ws.add_run(f"run_{key}", files[key])
    ws.set_domains({q: f"a domain named at some length {i % 6}" for i, q in enumerate(QIDS)}, name="domains")
    ws.close()
    page.goto(server.url + "/compare?ws=scatter-legend", wait_until="commit")
    B.wait_for(page, main=["Compare"], timeout=STEP, js=f"() => ({SCATTER_TOOLBAR_JS})() !== null")
    page.locator(".st-key-cmp_scatter .js-plotly-plot").hover()  # (the toolbar shows on hover)
    drawn = page.evaluate(SCATTER_TOOLBAR_JS)
    assert drawn["entries"] == 7 and not drawn["overlap"] and drawn["inside"], drawn  # (the diagonal + 6 domains)
    assert not B.exceptions_text(page) and not page.page_errors

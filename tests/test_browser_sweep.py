"""Defects of a browser walkthrough that only a real browser shows (chromium + playwright on ``streamlit run app.py``,
the built-in demo): Streamlit's handling of widgets a run does not draw differs from AppTest's.

Every wait is on content the server must render after the action, with the app idle
(``browser_support.wait_for``): never on a sleep or on a script-run event.
"""

from __future__ import annotations

import browser_support as B
import pytest
from browser_fixtures import STEP

pytestmark = pytest.mark.browser

#: The values of the Fusion page's weight inputs, in the order of the runs fused.
WEIGHTS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] [class*="st-key-fu_w_"] input'))
    .map(i => i.value)"""


def test_fusion_weights_survive_a_round_trip_through_an_unweighted_method(server, page):
    """Weighted RRF → CombSUM (no weight inputs drawn) → weighted RRF kept the weights; every weight read 0.00 and
    the page stopped on "Invalid weights: at least one weight must be positive"."""
    page.goto(server.url + "/", wait_until="commit")
    B.wait_for(page, main=["Metrics vs k"], timeout=STEP)
    B.go_to(page, "Fusion", timeout=STEP, expect=["The fused run next to its inputs"])
    B.wait_for(page, js=f"() => ({WEIGHTS_JS})().length === 3", timeout=STEP)
    assert page.evaluate(WEIGHTS_JS) == ["1.00", "1.00", "1.00"]
    first = page.locator('[data-testid="stMain"] [class*="st-key-fu_w_"] input').first
    B.act(page, lambda: (first.fill("2.5"), first.press("Enter")), timeout=STEP,
          js=f"() => ({WEIGHTS_JS})()[0] === '2.50'")
    method = page.locator(".st-key-fu_method").first
    B.act(page, lambda: B.choose(page, method, "CombSUM"), timeout=STEP, grid=["combsum"],
          js=f"() => ({WEIGHTS_JS})().length === 0")
    B.act(page, lambda: B.choose(page, method, "weighted RRF"), timeout=STEP, grid=["rrf"],
          js=f"() => ({WEIGHTS_JS})().length === 3")
    assert page.evaluate(WEIGHTS_JS) == ["2.50", "1.00", "1.00"]
    assert "Invalid weights" not in B.main_text(page)
    assert not B.exceptions_text(page) and not page.page_errors


#: The weight search's settings as the page shows them: seed, grid step, "Tune on a split", share tuned on.
SEARCH_JS = """() => {
    const q = s => document.querySelector('[data-testid="stMain"] ' + s);
    const seed = q('.st-key-fu_seed input'), step = q('.st-key-fu_step input'), split = q('.st-key-fu_split input');
    const share = q('.st-key-fu_fraction input'), strategy = q('.st-key-fu_strategy input');
    return seed && step && split && share && strategy ? {seed: seed.value, step: step.value, split: split.checked,
        share: share.value, strategy: strategy.value} : null;
}"""


def test_fusion_search_settings_survive_a_round_trip_through_an_unweighted_method(server, page):
    """The weight search's settings (started through ``dashboard.kept.start``) are not drawn for CombSUM; back on
    weighted RRF they read the widgets' own defaults (seed 0, grid step 0.5, no split) and were saved so."""
    page.goto(server.url + "/", wait_until="commit")
    B.wait_for(page, main=["Metrics vs k"], timeout=STEP)
    B.go_to(page, "Fusion", timeout=STEP, expect=["Search the weights"])
    B.wait_for(page, js=f"() => !!({SEARCH_JS})()", timeout=STEP)
    before = page.evaluate(SEARCH_JS)
    assert before["split"] is True and before["seed"] != "7" and before["step"] != "0.2"
    seed = page.locator('[data-testid="stMain"] .st-key-fu_seed input').first
    B.act(page, lambda: (seed.fill("7"), seed.press("Enter")), timeout=STEP,
          js=f"() => ({SEARCH_JS})().seed === '7'")
    B.act(page, lambda: B.choose(page, page.locator(".st-key-fu_step").first, "0.2"), timeout=STEP,
          js=f"() => ({SEARCH_JS})().step === '0.2'")
    chosen = page.evaluate(SEARCH_JS)
    method = page.locator(".st-key-fu_method").first
    B.act(page, lambda: B.choose(page, method, "CombSUM"), timeout=STEP, grid=["combsum"],
          js=f"() => !({SEARCH_JS})()")
    B.act(page, lambda: B.choose(page, method, "weighted RRF"), timeout=STEP, grid=["rrf"],
          js=f"() => !!({SEARCH_JS})()")
    assert page.evaluate(SEARCH_JS) == chosen
    # and what was kept is what the user chose: another page and back shows the same
    B.go_to(page, "Overview", timeout=STEP, expect=["Metrics vs k"])
    B.go_to(page, "Fusion", timeout=STEP, expect=["Search the weights"])
    B.wait_for(page, js=f"() => !!({SEARCH_JS})()", timeout=STEP)
    assert page.evaluate(SEARCH_JS) == chosen
    assert not B.exceptions_text(page) and not page.page_errors

"""Fixtures of the real-browser tests (a pytest plugin registered by ``conftest.py``): chromium and a
``streamlit run app.py`` server for the test session, one browser context per module, a new tab (a new session)
per test.

Chromium or playwright missing is a failure with install instructions, never a skip.
"""

from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

import browser_support as B
import pytest

SCREENSHOTS = os.environ.get("EVALCORE_SCREENSHOTS") == "1"
SHOT_DIR = B.ROOT / "docs" / "screenshots"
TIMINGS_FILE = B.ROOT / "out" / "browser_timings.json"
VIEWPORT = {"width": 1400, "height": 900}
STEP = 90.0  # seconds allowed for one step (a cold first page load on a busy 2-core machine included)

TIMINGS: dict[str, float] = {}


def maybe_screenshot(page, name: str) -> None:
    """With ``EVALCORE_SCREENSHOTS=1``: the tour's full-page screenshot ``docs/screenshots/<name>.png``."""
    if SCREENSHOTS:
        size = B.full_page_screenshot(page, SHOT_DIR / f"{name.lower()}.png", **{
            "width": VIEWPORT["width"], "height": VIEWPORT["height"]})
        assert size < 400_000, f"screenshot {name} is {size} bytes"


# ------------------------------------------------------------------------------------------ fixtures


def setup_failure(error: Exception) -> None:
    """Fail (never skip) with the message alone: how to install what is missing."""
    pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="session")
def browser():
    problem = None
    try:
        chromium = B.find_chromium()
        sync_playwright = B.import_playwright()
    except B.BrowserSetupError as e:
        problem = e
    if problem is not None:
        setup_failure(problem)
    with sync_playwright() as pw:
        try:
            br = pw.chromium.launch(executable_path=chromium, args=B.CHROMIUM_ARGS, headless=True)
        except Exception as e:  # noqa: BLE001 - any launch failure is a setup problem
            problem = B.BrowserSetupError(f"could not launch {chromium}: {e}\n{B.INSTALL_HINT}")
        if problem is not None:
            setup_failure(problem)
        try:
            yield br
        finally:
            br.close()
    if TIMINGS:
        TIMINGS_FILE.parent.mkdir(exist_ok=True)
        TIMINGS_FILE.write_text(json.dumps(TIMINGS, indent=1) + "\n", encoding="utf-8")
        print("\nbrowser timings (s):", json.dumps(TIMINGS))


@pytest.fixture(scope="session")
def server(browser, tmp_path_factory):
    """``streamlit run app.py`` on a free port, healthy; killed (process group) at teardown.

    One server for the session's browser tests that need no server of their own (tests/test_browser_store.py
    starts and restarts its own): starting one and its first, cold page load cost seconds per module. The
    tests share nothing through it but what a server shares among its sessions (its caches, keyed by content;
    the session's folder of named workspaces, which separate servers share as well): each test opens a new tab,
    a new session, on the demo or on a workspace of its own.
    """
    problem = None
    # one server serves every test: its demo keeps no selections (a data folder that cannot be
    # created, as below a file), so each new tab opens the demo as a newcomer finds it, whatever an earlier
    # test's session still writes after its tab closed (tests/test_app_demo_state.py tests keeping them)
    blocker = tmp_path_factory.mktemp("data") / "not-a-folder"
    blocker.write_text("")
    try:
        srv = B.start_streamlit(tmp_path_factory.mktemp("streamlit"), env={"XDG_DATA_HOME": str(blocker / "data")})
    except B.BrowserSetupError as e:
        problem = e
    if problem is not None:
        setup_failure(problem)
    TIMINGS["server_start_to_health_s"] = round(srv.ready_seconds, 2)
    try:
        yield srv
    finally:
        srv.stop()
    log = srv.log_text()
    # the script's exceptions are shown in the page (checked there); anything in the log is a server error
    assert "Traceback" not in log, f"the streamlit server logged an error:\n{log[-4000:]}"


@pytest.fixture(scope="module")
def context(browser):
    """One browser context for the module: the tests share its HTTP cache (Streamlit's scripts)."""
    ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="en-US")
    ctx.set_default_timeout(STEP * 1000)
    ctx.add_init_script(B.RUN_TRACKER)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def page(context):
    """A new tab: a new Streamlit session (it opens on the demo)."""
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.page_errors = errors  # type: ignore[attr-defined]
    outside: list[str] = []  # requests to any other host than the dashboard's
    pg.on("request", lambda r: outside.append(r.url) if urlsplit(r.url).hostname not in (
        "localhost", "127.0.0.1", None) and not r.url.startswith(("data:", "blob:")) else None)
    pg.external_requests = outside  # type: ignore[attr-defined]
    try:
        yield pg
    finally:
        pg.close()

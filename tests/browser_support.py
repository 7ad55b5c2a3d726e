"""Helpers of the real-browser test: the system chromium, a Streamlit server on a free port, page waits.

The browser is Debian's ``chromium`` (installed by ``.ci/run``) driven by the Python
``playwright`` package through ``executable_path``: Playwright's own browser download
is not used (it cannot run on the project's machines).

Waiting for Streamlit: after an action, a test waits for the content the action must bring and
for the app to be idle (connected, no script run, no stale element, no skeleton, charts drawn):
states of the page, which cannot be missed, never events such as "a script run started"
(a fast run could begin and end before the wait did) and never a sleep.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: Flags for headless chromium in containers and CI (no sandbox, no GPU, no background traffic).
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

INSTALL_HINT = (
    "The real-browser test needs Debian's chromium and the Python playwright package "
    "(no Playwright browser download): `apt-get update && apt-get install -y chromium` "
    "(what .ci/run does) and `python -m pip install -r requirements-dev.txt`; or point "
    "EVALCORE_CHROMIUM at another chromium/chrome binary."
)

HEALTH_TIMEOUT = 60.0


class BrowserSetupError(RuntimeError):
    """Chromium or playwright is missing, or the server did not come up."""


def find_chromium() -> str:
    """Path of the system chromium: ``$EVALCORE_CHROMIUM``, else the usual Debian names on PATH."""
    env = os.environ.get("EVALCORE_CHROMIUM")
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return env
        raise BrowserSetupError(f"EVALCORE_CHROMIUM={env!r} is not an executable file. {INSTALL_HINT}")
    for name in ("/usr/bin/chromium", "chromium", "chromium-browser", "chromium-headless-shell",
                 "google-chrome", "google-chrome-stable"):
        path = name if os.path.isabs(name) else shutil.which(name)
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return path
    raise BrowserSetupError(f"no chromium executable found. {INSTALL_HINT}")


def import_playwright() -> Any:
    """``playwright.sync_api.sync_playwright``, or a clear error saying how to install it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise BrowserSetupError(f"the Python package playwright is not installed ({e}). {INSTALL_HINT}") from e
    return sync_playwright


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------------------------ server


@dataclass
class StreamlitServer:
    """``streamlit run app.py`` in its own process group; :meth:`stop` kills the whole group."""

    port: int
    log_path: Path
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    ready_seconds: float = 0.0
    _log: Any = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, app: str = "app.py", cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
        cmd = [sys.executable, "-m", "streamlit", "run", app,
               "--server.headless", "true", "--server.port", str(self.port),
               "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
               # no file watching (nothing edits the app during a test; saves CPU)
               "--server.fileWatcherType", "none", "--server.runOnSave", "false"]
        env = {**os.environ, **(env or {})}
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=str(cwd), stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env, start_new_session=True)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def wait_healthy(self, timeout: float = HEALTH_TIMEOUT) -> None:
        """Poll ``/_stcore/health`` until it answers ``ok``; fail early if the process exits."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise BrowserSetupError(f"streamlit exited with code {self.proc.returncode} before it was "
                                        f"healthy; its output:\n{self.log_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    body = r.read().decode("utf-8", "replace").strip()
                if r.status == 200 and body == "ok":
                    self.ready_seconds = time.perf_counter() - self.started_at
                    return
                last = f"HTTP {r.status}: {body[:100]!r}"
            except (urllib.error.URLError, OSError, ValueError) as e:
                last = repr(e)
            time.sleep(0.25)
        raise BrowserSetupError(f"streamlit did not answer ok on {self.url}/_stcore/health within {timeout:.0f} s "
                                f"(last: {last}); its output:\n{self.log_text()[-3000:]}")

    def stop(self) -> None:
        """SIGTERM to the process group, SIGKILL after 10 s; always closes the log."""
        proc = self.proc
        try:
            if proc is not None and proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    proc.wait(timeout=10)
        finally:
            if self._log is not None:
                self._log.close()
                self._log = None


def start_streamlit(log_dir: Path, attempts: int = 3, *, env: dict[str, str] | None = None,
                    port: int | None = None) -> StreamlitServer:
    """A healthy ``streamlit run app.py`` on a free port (the caller stops it).

    Another port is tried when the first one was taken between choosing and binding it. ``env``: extra
    environment variables of the server; ``port``: this port (a restart where the browser's URL points).
    """
    error: Exception | None = None
    for i in range(attempts):
        server = StreamlitServer(port if port is not None else free_port(), log_dir / f"streamlit-{i}.log")
        server.start(env=env)
        try:
            server.wait_healthy()
        except BrowserSetupError as e:
            server.stop()
            error = e
            if "address already in use" in server.log_text().lower() and port is None:
                continue
            raise
        return server
    raise error if error else BrowserSetupError("streamlit did not start")


# ------------------------------------------------------------------------------------------ page helpers
#
# Every wait is on a *state* of the page, never on an event: a test names the content it expects the
# page to show after its action (server-rendered content, which cannot be there before the rerun it
# caused), and waits until that content is shown and the app is idle — connected, no script run, no
# element left stale by the last run, no lazily loaded element still a skeleton, every chart drawn.
# A state cannot be missed, however fast or slow the machine: that is what makes these waits exact.

#: Runs in every document before the app: remembers (page time, ``performance.now()`` ms) the last user
#: input, so that a benchmark can measure from the click to the settled page.
RUN_TRACKER = """
(() => {
  window.__ecInputAt = -1; window.__ecSettledAt = -1;
  for (const ev of ['pointerdown', 'keydown', 'change', 'input']) {
    window.addEventListener(ev, () => { window.__ecInputAt = performance.now(); }, true);
  }
})();
"""

#: The app is idle: connected, not running, no stale element, no skeleton, every plotly chart drawn.
IDLE_JS = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main || !main.querySelector('h1')) return false;
  if (document.querySelector('[data-testid="stElementContainer"][data-stale="true"]')) return false;
  if (main.querySelector('[data-testid="stSkeleton"]')) return false;
  for (const c of main.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const svg = c.querySelector('.js-plotly-plot .main-svg');
    if (!svg || svg.getBoundingClientRect().width < 50) return false;
  }
  return true;
}
"""

#: IDLE_JS and the expected content: texts in the main area, in its tables, in the sidebar; texts absent
#: from the main area; an extra predicate. Records when it first held (``window.__ecSettledAt``).
EXPECT_JS = """
([main, grid, side, absent, extra]) => {
  if (!(""" + IDLE_JS.strip() + """)()) return false;
  const m = document.querySelector('[data-testid="stMain"]');
  if (main.length || absent.length) {
    const text = m.innerText;
    if (!main.every(t => text.includes(t))) return false;
    if (absent.some(t => text.includes(t))) return false;
  }
  if (grid.length) {
    const text = Array.from(m.querySelectorAll('table[role="grid"]')).map(t => t.textContent).join('\\n');
    if (!grid.every(t => text.includes(t))) return false;
  }
  if (side.length) {
    const sb = document.querySelector('[data-testid="stSidebarUserContent"]');
    const text = sb ? sb.innerText : '';
    if (!side.every(t => text.includes(t))) return false;
  }
  if (extra && !(new Function('return (' + extra + ')();'))()) return false;
  window.__ecSettledAt = performance.now();
  return true;
}
"""


def page_now(page: Any) -> float:
    """The page's clock (``performance.now()``, ms)."""
    return float(page.evaluate("performance.now()"))


def wait_for(page: Any, *, main: Any = (), grid: Any = (), sidebar: Any = (), absent: Any = (),
             js: str | None = None, timeout: float = 60.0, polling: int = 25) -> None:
    """Wait until the page shows what is expected and the app is idle (see :data:`EXPECT_JS`).

    ``main`` / ``grid`` / ``sidebar``: texts that must be in the main area / its tables / the sidebar;
    ``absent``: texts that must not be in the main area; ``js``: an extra predicate (a JS function
    expression). On timeout, the message says which of them did not hold.
    """
    args = [list(main), list(grid), list(sidebar), list(absent), js]
    try:
        page.wait_for_function(EXPECT_JS, arg=args, timeout=timeout * 1000, polling=polling)
    except Exception as e:
        raise AssertionError(f"the page did not show what was expected within {timeout:.0f} s: "
                             f"{why_not(page, *args)}\n{page_state(page)}") from e


def why_not(page: Any, main: list, grid: list, side: list, absent: list, extra: str | None) -> str:
    """Which part of an expectation does not hold right now (for failure messages)."""
    try:
        idle = bool(page.evaluate(IDLE_JS))
        text = main_text(page)
        tables = grid_text(page)
        sb = page.locator('[data-testid="stSidebarUserContent"]').inner_text() if side else ""
        missing = {"idle": idle, "main": [t for t in main if t not in text], "grid": [t for t in grid if t not in tables],
                   "sidebar": [t for t in side if t not in sb], "present but should be absent": [t for t in absent if t in text]}
        if extra:
            missing["extra"] = bool(page.evaluate(extra))
        return f"{missing}; main text: {text[:1500]!r}"
    except Exception as e:  # noqa: BLE001 - diagnostics only
        return f"(state unavailable: {e})"


def act(page: Any, action: Callable[[], Any], *, timeout: float = 60.0, **expect: Any) -> float:
    """Do ``action``, then wait until the page shows ``expect`` (see :func:`wait_for`) and is idle.

    Returns the seconds from the user input the action made (page clock) to the first moment the
    expectation held; the wall-clock seconds of the whole step when the action made no input event.
    """
    if not any(expect.get(k) for k in ("main", "grid", "sidebar", "absent", "js")):
        raise ValueError("act needs the content the action must bring (main=, grid=, sidebar=, absent= or js=)")
    t0 = time.perf_counter()
    since = page_now(page)
    action()
    wait_for(page, timeout=timeout, **expect)
    took = page.evaluate("[window.__ecInputAt, window.__ecSettledAt]")
    if None not in took and took[0] >= since and took[1] >= took[0]:  # None: a page without RUN_TRACKER
        return (took[1] - took[0]) / 1000.0
    return time.perf_counter() - t0


def wait_idle(page: Any, *, timeout: float = 60.0) -> None:
    """Wait until the app is idle (a state; for pictures, not as proof that an action took effect)."""
    page.wait_for_function(IDLE_JS, timeout=timeout * 1000, polling=50)


def wait_until(check: Callable[[], Any], what: str, *, timeout: float = 30.0, interval: float = 0.2) -> Any:
    """Poll ``check()`` until it returns a truthy value; fail with ``what`` (a str or a callable) otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(what() if callable(what) else what)
        time.sleep(interval)


def page_state(page: Any) -> str:
    """The app's state attributes (for failure messages)."""
    try:
        return str(page.evaluate("""() => {
          const app = document.querySelector('[data-testid="stApp"]');
          return {state: app && app.getAttribute('data-test-script-state'),
                  connection: app && app.getAttribute('data-test-connection-state'),
                  stale: document.querySelectorAll('[data-testid="stElementContainer"][data-stale="true"]').length,
                  skeletons: document.querySelectorAll('[data-testid="stMain"] [data-testid="stSkeleton"]').length,
                  title: (document.querySelector('[data-testid="stMain"] h1') || {}).innerText};
        }"""))
    except Exception as e:  # noqa: BLE001 - diagnostics only
        return f"(page state unavailable: {e})"


def exceptions_text(page: Any) -> list[str]:
    """Texts of the Streamlit exception elements on the page (empty when there is none)."""
    return page.locator('[data-testid="stException"]').all_inner_texts()


def grid_text(page: Any) -> str:
    """Text of every ``st.dataframe`` in the main area (from glide-data-grid's accessible table)."""
    return "\n".join(page.locator('[data-testid="stMain"] table[role="grid"]').all_text_contents())


def main_text(page: Any) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def widget(page: Any, key: str, testid: str, label: str) -> Any:
    """A widget by its Streamlit key (the ``st-key-<key>`` class), else by its kind and label text."""
    by_key = page.locator(f".st-key-{key}")
    if by_key.count():
        return by_key.first
    return page.locator(f'[data-testid="{testid}"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=label)).first


def choose(page: Any, box: Any, option: str, *, timeout: float = 30.0) -> None:
    """Pick ``option`` in an ``st.selectbox`` (type it into the combobox, click the exact option)."""
    inp = box.locator('input[role="combobox"], input').first
    inp.click()
    inp.fill(option)
    opt = page.get_by_role("option", name=option, exact=True)
    opt.first.wait_for(state="visible", timeout=timeout * 1000)
    opt.first.click()


def selected(box: Any) -> str:
    """Current value of an ``st.selectbox`` (the combobox input's value)."""
    return box.locator('input[role="combobox"], input').first.input_value()


def go_to(page: Any, title: str, *, timeout: float = 60.0, expect: Any = ()) -> float:
    """Open a page from the sidebar navigation; wait until its title (and ``expect``: main-area texts) is shown
    and the app is idle. Returns the seconds from the click to then (page clock)."""
    link = page.locator('[data-testid="stSidebarNavLink"]').filter(has_text=title)
    if not link.count():
        link = page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title)
    js = ("() => { const h = document.querySelector('[data-testid=\"stMain\"] h1');"
          f" return !!h && h.innerText.trim().startsWith({json.dumps(title)}); }}")
    return act(page, lambda: link.first.click(), timeout=timeout, main=list(expect), js=js)


def full_page_screenshot(page: Any, path: Path, *, width: int = 1400, height: int = 900,
                         max_bytes: int = 400_000) -> int:
    """Screenshot of the whole page at ``width``: the viewport is stretched to the main area's height.

    Streamlit scrolls inside ``stMain``, so Playwright's ``full_page`` only sees the
    viewport; the viewport is made as tall as the content, then restored. A PNG
    larger than ``max_bytes`` is re-encoded with a 256-colour palette. Returns the size.
    """
    content_h = int(page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
        " return m ? m.scrollHeight : document.body.scrollHeight; }"))
    tall = max(height, min(content_h + 16, 12000))
    page.mouse.move(width - 2, 2)  # no hover effect (e.g. the sidebar's collapse button) in the picture
    page.set_viewport_size({"width": width, "height": tall})
    try:
        page.wait_for_timeout(400)  # plotly and the grids relayout on resize (a picture, not a test wait)
        wait_idle(page, timeout=30)
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=True, animations="disabled", caret="hide")
    finally:
        page.set_viewport_size({"width": width, "height": height})
    size = path.stat().st_size
    if size > max_bytes:
        from PIL import Image

        with Image.open(path) as im:
            q = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
            q.save(path, optimize=True)
        size = path.stat().st_size
    return size

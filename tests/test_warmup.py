"""The dashboard's background warm-up: the newcomer's first Overview imports nothing it does not show (pandas'
Styler and its jinja2 templates), and what the next pages need (scipy.stats, the Styler) is imported in the
background once the first page is drawn, not beside it (an import holds Python's lock: it slowed the page)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from streamlit.testing.v1 import AppTest
from test_derived_cache import APP

from dashboard import state as S

ROOT = APP.rsplit("/", 1)[0]


def _fresh_python(code: str) -> None:
    """Run ``code`` in a new interpreter at the project root (its imports are its own); fail with its output."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]


def test_the_warm_up_imports_what_the_next_pages_need_in_a_thread_of_its_own():
    _fresh_python("""
        import sys, threading
        from dashboard import warmup
        assert not {"scipy.stats", "pandas.io.formats.style"} & set(sys.modules), "imported before the warm-up"
        warmup.warm_up()
        warmup.warm_up()  # once per process
        threads = [t for t in threading.enumerate() if t.name == warmup.THREAD_NAME]
        assert len(threads) == 1, threads
        threads[0].join()
        missing = [m for m in ("scipy.stats", "pandas.io.formats.style") if m not in sys.modules]
        assert not missing, missing
    """)


def test_the_demo_s_first_overview_imports_no_styler():
    """The Overview shows no styled table: it never imports pandas' style module (a check of its tables did)."""
    _fresh_python("""
        import sys
        from streamlit.testing.v1 import AppTest
        from dashboard import warmup
        warmup._WARM.append(True)  # (no warm-up: what the page itself imports)
        at = AppTest.from_file("app.py", default_timeout=300)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert [s.value for s in at.subheader][:2] == ["Leaderboard", "Metrics vs k"], at.subheader
        assert "pandas.io.formats.style" not in sys.modules
        assert "jinja2" not in sys.modules
    """)


def test_the_warm_up_starts_once_the_page_is_drawn(monkeypatch):
    """Called after the page's last element (the Overview's Downloads and record button), never before its
    numbers are computed."""
    order: list[str] = []
    summary = S.summary
    monkeypatch.setattr(S, "summary", lambda *a, **kw: order.append("summary") or summary(*a, **kw))
    monkeypatch.setattr(S, "warm_up", lambda: order.append("warm_up"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert order and order[-1] == "warm_up" and "summary" in order, order
    assert order.index("warm_up") > max(i for i, name in enumerate(order) if name == "summary")

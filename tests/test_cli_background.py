"""The command's background loader (evalcore.cli.background): one thread, imports in the order asked."""

from __future__ import annotations

import sys
import threading

from evalcore.cli import background


def _modules(tmp_path, monkeypatch, names):
    """Tiny modules that record, in this module's ``LOG``, the order and thread of their imports."""
    log: list[tuple[str, str]] = []
    monkeypatch.setattr(sys.modules[__name__], "LOG", log, raising=False)
    for name in names:
        body = f"import {__name__} as t\nt.LOG.append(({name!r}, __import__('threading').current_thread().name))\n"
        if name.endswith("broken"):
            body += "raise ImportError('broken on purpose')\n"
        (tmp_path / f"{name}.py").write_text(body)
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    return log


def test_loader_imports_in_order_in_one_thread_and_close_waits(tmp_path, monkeypatch):
    log = _modules(tmp_path, monkeypatch, ["bg_first", "bg_broken", "bg_second", "bg_third"])
    loader = background.open_loader("bg_first", "bg_broken")
    try:
        assert background.preload("bg_second") is None  # joins the open loader's queue
        background.preload("bg_third")
    finally:
        background.close_loader(loader)
    assert not loader.thread.is_alive()
    assert [m for m, _ in log] == ["bg_first", "bg_broken", "bg_second", "bg_third"]  # a failure stops nothing
    assert {t for _, t in log} == {background.PRELOAD_THREAD}
    assert "bg_broken" not in sys.modules  # left to fail again where it is used


def test_preload_without_an_open_loader_runs_its_own_thread(tmp_path, monkeypatch):
    log = _modules(tmp_path, monkeypatch, ["bg_alone"])
    thread = background.preload("bg_alone")
    assert isinstance(thread, threading.Thread)
    thread.join(timeout=60)
    assert not thread.is_alive() and [m for m, _ in log] == ["bg_alone"]
    assert background.preload("bg_alone") is None  # already imported: nothing to do

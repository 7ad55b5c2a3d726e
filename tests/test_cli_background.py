"""The command's background loader (evalcore.cli.background): one thread, imports in the order asked."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from evalcore.cli import background

ROOT = Path(__file__).resolve().parents[1]


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


def test_process_entry_passes_the_exit_status_and_freezes_only_there(tmp_path):
    # process_main (python -m evalcore, the console script) = main + gc.freeze before the exit;
    # main itself (in-process callers) leaves the garbage collector alone
    import subprocess

    (tmp_path / "q.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d9 2 1.5 t\nq2 Q0 d3 1 0.5 t\n")
    args = ["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", f"t={tmp_path / 'r.txt'}", "--metrics", "ndcg",
            "--k", "10", "--out", str(tmp_path / "out")]
    code = ("import gc, sys\nfrom evalcore.cli.main import main, process_main\n"
            f"rc = main({args!r}); frozen_by_main = gc.get_freeze_count()\n"
            f"sys.argv = ['evalcore'] + {args!r}; rc2 = process_main()\n"
            "print(rc, frozen_by_main, rc2, gc.get_freeze_count() > 0)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-4:] == ["0", "0", "0", "True"]
    bad = subprocess.run([sys.executable, "-m", "evalcore", "evaluate", "--qrels", str(tmp_path / "missing.txt"),
                          "--run", f"t={tmp_path / 'r.txt'}"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ")
    assert (tmp_path / "out" / "report.json").read_text().endswith("}")  # written whole before the exit

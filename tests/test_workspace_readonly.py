"""A workspace in a folder this process cannot write (a read-only mount, an archive) opens read-only.

(A review found it refused: "cannot open the catalogue (attempt to write a readonly database)".) The
checks run in a child process without the permission override root has (``setpriv``), so that the
folder's mode bits apply, as they do for any other user.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from evalcore import Qrels, Run, Workspace

ROOT = Path(__file__).resolve().parents[1]


def _unprivileged(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    setpriv = shutil.which("setpriv")
    if setpriv is None:  # pragma: no cover - Debian's util-linux has it
        pytest.skip("running as root without setpriv: mode bits cannot be made to apply")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner", *cmd]


def _chmod_tree(path: Path, *, writable: bool) -> None:
    for p in [path, *path.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _probe(folder: Path) -> dict:
    script = textwrap.dedent(f"""
        import json
        from evalcore import Workspace
        out = {{}}
        try:
            ws = Workspace.open({str(folder)!r})
            out["read_only"] = ws.read_only
            out["runs"] = ws.run_names()
            out["n_values"] = int(len(ws.evaluate(record=False).table))
            try:
                ws.add_run("new", ws.load_run(out["runs"][0]))
            except Exception as e:
                out["write_error"] = f"{{type(e).__name__}}: {{e}}"
        except Exception as e:
            out["open_error"] = f"{{type(e).__name__}}: {{e}}"
        print(json.dumps(out))
        """)
    done = subprocess.run(_unprivileged([sys.executable, "-c", script]), cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _workspace(path: Path) -> Workspace:
    rng = np.random.default_rng(2)
    ws = Workspace.open(path)
    ws.set_ground_truth(Qrels.from_dict({f"q{i}": {f"d{j}": 1 for j in range(i, i + 3)} for i in range(10)}))
    ws.add_run("r", Run.from_dict({f"q{i}": {f"d{j}": float(rng.random()) for j in range(8)} for i in range(10)}))
    return ws


def test_a_read_only_folder_is_opened_read_only(tmp_path: Path) -> None:
    folder = tmp_path / "W"
    ws = _workspace(folder)
    expected = len(ws.evaluate(record=False).table)
    ws.close()  # the last connection: the WAL is merged into the catalogue
    _chmod_tree(folder, writable=False)
    try:
        got = _probe(folder)
    finally:
        _chmod_tree(folder, writable=True)
    assert "open_error" not in got, got
    assert got["read_only"] is True and got["runs"] == ["r"] and got["n_values"] == expected
    assert got["write_error"].startswith("ReadOnlyWorkspaceError")


def test_a_read_only_copy_with_unmerged_changes_says_so(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "W")  # still open: its changes sit in the WAL
    copy = tmp_path / "copy"
    shutil.copytree(ws.path, copy)
    wal = copy / "catalogue.sqlite-wal"
    if not wal.exists() or wal.stat().st_size == 0:  # pragma: no cover - SQLite merged them already
        pytest.skip("SQLite merged the WAL before the copy")
    _chmod_tree(copy, writable=False)
    try:
        got = _probe(copy)
    finally:
        _chmod_tree(copy, writable=True)
    assert "changes not yet merged" in got.get("open_error", ""), got

"""A workspace in a folder this process cannot write (a read-only mount, an archive) opens read-only.

(A review found it refused: "cannot open the catalogue (attempt to write a readonly database)".) The
checks run in a child process without the permission override root has (``setpriv``), so that the
folder's mode bits apply, as they do for any other user. Such a folder whose WAL still holds changes:
``tests/test_workspace_readonly_wal.py``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from readonly_reader import chmod_tree, unprivileged

from evalcore import Qrels, Run, Workspace
from evalcore.errors import ReadOnlyWorkspaceError

ROOT = Path(__file__).resolve().parents[1]


def _probe(folder: Path) -> dict:
    script = textwrap.dedent(f"""
        import json
        from evalcore import Workspace
        out = {{}}
        try:
            ws = Workspace.open({str(folder)!r})
            out["read_only"] = ws.read_only
            out["reason"] = ws.read_only_reason
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
    done = subprocess.run(unprivileged([sys.executable, "-c", script]), cwd=ROOT, capture_output=True, text=True,
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
    chmod_tree(folder, writable=False)
    try:
        got = _probe(folder)
    finally:
        chmod_tree(folder, writable=True)
    assert "open_error" not in got, got
    assert got["read_only"] is True and got["runs"] == ["r"] and got["n_values"] == expected
    assert got["write_error"].startswith("ReadOnlyWorkspaceError")


def test_a_read_only_workspace_says_why(tmp_path: Path) -> None:
    """Why a workspace refuses changes (the dashboard says it): its folder, or read_only=True; in the error too."""
    folder = tmp_path / "W"
    _workspace(folder).close()
    with Workspace.open(folder) as ws:
        assert not ws.read_only and ws.read_only_reason is None
    with Workspace.open(folder, read_only=True) as ws:
        assert ws.read_only_reason == "it was opened read-only"
    chmod_tree(folder, writable=False)
    try:
        got = _probe(folder)
    finally:
        chmod_tree(folder, writable=True)
    assert got["reason"] == "its folder cannot be written by this user"
    assert got["write_error"].endswith(": this workspace is read-only (its folder cannot be written by this user): "
                                       f"copy it to change it: evalcore workspace copy {shlex.quote(str(folder))} DEST "
                                       "(the dashboard's copy action; in Python: Workspace.copy_to)"), got


def test_the_catalogues_own_refusal_names_the_copy_command(tmp_path: Path) -> None:
    """A write that reaches the catalogue itself (``gc``) on a read-only workspace names the command that copies it,
    as the workspace's own refusals do (it said only "copy it to change it")."""
    folder = tmp_path / "W"
    _workspace(folder).close()
    with Workspace.open(folder, read_only=True) as ws:
        with pytest.raises(ReadOnlyWorkspaceError) as caught:
            ws.gc()
    message = str(caught.value)
    assert "\n" not in message
    assert message.endswith(f"copy it to change it: evalcore workspace copy {shlex.quote(str(folder))} DEST "
                            "(the dashboard's copy action; in Python: Workspace.copy_to)"), message

"""No test, and no script using the tests' helpers, reads or writes the user's workspaces, data folder or cache.

A review found the dashboard's workspace picker full of ``test-…`` and ``store-…`` workspaces in the user's real
data folder (``~/.local/share/evalcore/workspaces``): the tests' helpers create workspaces in the default root, and
a script importing them outside pytest (an AppTest run by hand) created them there, computed results landing in
``~/.cache/evalcore/results`` beside them. See tests/private_data.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import private_data
from conftest import USER_FOLDERS

from evalcore.workspace.derived import cache_dir
from evalcore.workspace.locations import cache_home, data_home, default_root

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = """
import sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import test_app as T
from evalcore import workspace as W
name = T.store_snapshot(W.Snapshot())
print(W.WorkspaceRoot().path_of(name))
"""


def test_the_helpers_create_workspaces_in_a_private_folder_outside_pytest(tmp_path):
    user = tmp_path / "user"  # the user's home and XDG folders of a script run by hand (no pytest, no conftest)
    env = {k: v for k, v in os.environ.items() if k not in (*private_data.SET, *private_data.UNSET, private_data.MARKER)}
    env.update(HOME=str(user), XDG_DATA_HOME=str(user / ".local" / "share"), XDG_CACHE_HOME=str(user / ".cache"))
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(ROOT / "tests"), str(ROOT)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    created = Path(done.stdout.strip().splitlines()[-1])
    assert not created.is_relative_to(user), created
    assert not user.exists() or sorted(user.rglob("*")) == []  # nothing written in the user's folders
    assert not created.exists()  # the private folder went with the process


def test_the_suite_resolves_every_folder_under_pytests_temporary_folder(tmp_path_factory):
    base = tmp_path_factory.getbasetemp().resolve()
    folders = {"workspaces": default_root(), "data": data_home(), "cache": cache_home()}
    for what, folder in folders.items():
        assert folder.resolve().is_relative_to(base), (what, folder)
        assert not any(folder.resolve().is_relative_to(u.resolve()) for u in USER_FOLDERS), (what, folder)
    assert cache_dir() is None  # no results kept on disk between tests

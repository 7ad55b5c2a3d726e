"""Shared fixtures of the test suite (data locations only)."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest
from private_data import ensure, point_to

from evalcore.workspace.locations import cache_home, data_home, default_root

#: The user's own folders of named workspaces, data and cache, as this environment names them before the tests'
#: own take their place (tests/test_private_data.py checks that no test reaches them).
USER_FOLDERS = (default_root(), data_home(), cache_home())
ensure()  # before any test module is imported: their imports and collection see private folders too

pytest_plugins = ["browser_fixtures"]  # chromium, a streamlit server, pages (only the browser tests use them)

ROOT = Path(__file__).resolve().parents[1]
#: trec_eval's test data vendored in the project (NIST notice in LICENSE.md, see NOTICE.md).
TREC_DIR = Path(__file__).resolve().parent / "data" / "trec_eval"
#: ``../shared`` beside the project root (bigger files that are not vendored).
SHARED_DIR = ROOT.parent / "shared"
#: the test session's own main module (pytest's), before any test ran the dashboard under AppTest
SESSION_MAIN = sys.modules.get("__main__")


@pytest.fixture(scope="session", autouse=True)
def _own_workspace_folders(tmp_path_factory):
    """No test reads or writes the user's workspaces, data folder or cache: the folder of named workspaces
    (EVALCORE_WORKSPACES), the per-user data folder (XDG_DATA_HOME: the demo's kept selections) and the cache
    of the built-in demo (XDG_CACHE_HOME) are temporary folders of this test session (inherited by the
    Streamlit servers of the browser tests); the disk cache of results (EVALCORE_CACHE) is off (the tests of that cache,
    test_derived_cache.py, turn it on in a folder of their own). See tests/private_data.py."""
    base = tmp_path_factory.mktemp("evalcore-home")
    patch = pytest.MonkeyPatch()
    point_to(base, setenv=patch.setenv, delenv=lambda key: patch.delenv(key, raising=False))
    yield base
    patch.undo()


@pytest.fixture(autouse=True)
def _own_data_folder(tmp_path_factory, monkeypatch):
    """Each test has its own per-user data folder (XDG_DATA_HOME): the selections a test makes on the read-only
    demo (kept there, evalcore.workspace.localstate) do not open the next test's demo on them."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))


@pytest.fixture(autouse=True)
def _own_main_module():
    """Each test ends with the test session's own ``__main__`` module back (a module-scoped AppTest fixture's run
    included).

    Streamlit's script runner (every ``AppTest`` run) installs the app's script as ``sys.modules["__main__"]`` and
    leaves it there. A later test's multiprocessing child (the fork server's children of
    tests/test_workspace_concurrency.py, the spawned workers of the Dask LocalCluster) would then run the dashboard
    script again as its own main module before doing anything: about half a second per child, 60 children in the
    writer-killing test alone.
    """
    yield
    if SESSION_MAIN is not None:
        sys.modules["__main__"] = SESSION_MAIN


@pytest.fixture(scope="session", autouse=True)
def _component_manifests_scanned_once():
    """Streamlit's scan of the installed packages for custom-component manifests runs once per test session.

    Every new ``AppTest`` (one per dashboard test, one more per simulated reload) scans the metadata of every
    installed distribution for Streamlit component manifests before its first run: about 0.3 s each, a third of
    a typical dashboard test. The installed packages do not change during a test session, so the scan's answer is
    kept after the first one (each AppTest still registers the components in its own manager). Without Streamlit
    imported by the collected tests (no dashboard test in this session) nothing is changed.
    """
    if "streamlit" not in sys.modules:
        yield
        return
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # another Streamlit version: its scan, uncached
        yield
        return
    scan = functools.cache(manifest_scanner.scan_component_manifests)
    patch = pytest.MonkeyPatch()
    patch.setattr(manifest_scanner, "scan_component_manifests", lambda: list(scan()))
    yield
    patch.undo()


@pytest.fixture(scope="session", autouse=True)
def _scripts_compiled_once():
    """Every ``AppTest`` run shares one cache of the scripts' bytecode, as every session of a real Streamlit server
    shares its runtime's.

    ``AppTest`` makes a new ``ScriptCache`` for each run, so each run read, rewrote ("magic") and compiled
    ``app.py`` and its page again: about a tenth of a dashboard test's time. The shared cache compiles a script
    again when its file changed (size or modification time), as the server's file watcher would have it.
    """
    if "streamlit" not in sys.modules:
        yield
        return
    try:
        from streamlit.runtime.scriptrunner.script_cache import ScriptCache
        from streamlit.testing.v1 import app_test, local_script_runner
    except ImportError:  # another Streamlit version: a cache per run
        yield
        return
    if not all(getattr(m, "ScriptCache", None) is ScriptCache for m in (app_test, local_script_runner)):
        yield
        return

    class SessionScriptCache(ScriptCache):
        def __init__(self) -> None:
            super().__init__()
            self._stamps: dict[str, tuple[int, int]] = {}

        def get_bytecode(self, script_path: str):
            path = os.path.abspath(script_path)
            st = os.stat(path)
            if self._stamps.get(path, (st.st_mtime_ns, st.st_size)) != (st.st_mtime_ns, st.st_size):
                self.clear()
                self._stamps.clear()
            self._stamps[path] = (st.st_mtime_ns, st.st_size)
            return super().get_bytecode(path)

    shared = SessionScriptCache()
    patch = pytest.MonkeyPatch()
    for module in (app_test, local_script_runner):
        patch.setattr(module, "ScriptCache", lambda: shared)
    yield
    patch.undo()


@pytest.fixture(scope="session")
def trec_dir() -> Path:
    """Folder of the vendored trec_eval test files."""
    assert TREC_DIR.is_dir(), f"vendored trec_eval data missing: {TREC_DIR}"
    return TREC_DIR


@pytest.fixture(scope="session")
def shared_trec_dir() -> Path:
    """``../shared/data/trec_eval_test`` when present; the test is skipped otherwise."""
    d = SHARED_DIR / "data" / "trec_eval_test"
    if not d.is_dir():
        pytest.skip(f"{d} is absent (the shared data is not vendored)")
    return d


@pytest.fixture
def ranked_workspace(tmp_path, monkeypatch):
    """A workspace of three stored ranked runs, opened by the dashboard (EVALCORE_WORKSPACE)."""
    import test_app as T

    from evalcore import workspace as W

    path = tmp_path / "ranked"
    with W.Workspace.open(path) as ws:
        ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
        for seed, name in enumerate(["bm25", "dense", "hybrid"], start=1):
            ws.add_run(name, T.trec_run(seed), source_name=f"{name}.trec")
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(path))
    return path

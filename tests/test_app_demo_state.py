"""The built-in demo is read-only, yet its page choices come back after a reload (F5) and in a new tab: they are kept
in the user's own data folder (evalcore.workspace.localstate), never in the demo; where that folder cannot be
written, they are simply not kept and the pages work as before."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_app as T

from dashboard import persist as P
from dashboard import state as S
from evalcore import workspace as W
from evalcore.workspace import localstate


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """The user's home and data folder are this test's (nothing is written into the real home)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def choose_on_compare(at, test: str = "wilcoxon", correction: str = "bonferroni"):
    T.goto(at, "compare")
    at.selectbox(key="w_compare_sel_test").set_value(test).run()
    at.selectbox(key="w_compare_sel_correction").set_value(correction).run()
    assert not at.exception and not T.errors(at)
    return at


def test_the_demo_s_choices_come_back_after_a_reload_without_writing_into_the_demo(home):
    """A new session on the demo (F5, a new tab) started on the default test and correction: nothing was kept."""
    at = choose_on_compare(T.open_app(P.DEMO), "wilcoxon", "bonferroni")
    T.goto(at, "queries")
    at.text_input(key="q_search").set_value("q1").run()
    assert not at.exception
    again = T.goto(T.open_app(P.DEMO), "compare")  # a reload: a new session, no URL but the workspace
    assert again.selectbox(key="w_compare_sel_test").value == "wilcoxon"
    assert again.selectbox(key="w_compare_sel_correction").value == "bonferroni"
    assert any("Bonferroni" in c.value for c in again.caption)
    T.goto(again, "queries")
    assert again.text_input(key="q_search").value == "q1"
    # kept in the user's data folder, under the demo's name; the demo itself is untouched
    assert localstate.store_path() == home / "data" / "evalcore" / localstate.FILE_NAME
    kept = localstate.read(localstate.identity("", demo_seed=S.DEMO_SEED))
    assert kept[S.SEL_TEST] == "wilcoxon" and kept[S.SEL_CORRECTION] == "bonferroni"
    demo = W.Workspace.demo(S.DEMO_SEED)
    assert demo.read_only and demo.ui_state() == {}


def test_an_unwritable_data_folder_keeps_the_demo_working(tmp_path, monkeypatch):
    """No data folder can be made (its parent is a file, whoever runs the test): the choices are not kept, no error
    is shown, the pages work."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder's parent should be")
    monkeypatch.setenv("HOME", str(blocker / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker / "data"))
    at = choose_on_compare(T.open_app(P.DEMO), "permutation", "bh")
    T.goto(at, "overview")
    T.goto(at, "compare")
    assert at.selectbox(key="w_compare_sel_test").value == "permutation"  # the session still has them
    assert not at.exception and not T.errors(at) and not at.warning
    again = T.goto(T.open_app(P.DEMO), "compare")
    assert not again.exception and not T.errors(again)
    assert again.selectbox(key="w_compare_sel_test").value == "t"  # not kept: the default
    assert blocker.is_file()


def test_the_store_reads_writes_and_never_raises(tmp_path):
    store = tmp_path / "d" / "ui_state.sqlite"
    key = localstate.identity(tmp_path / "ws")
    assert localstate.read(key, path=store) == {} and not store.parent.exists()  # reading creates nothing
    assert localstate.write(key, {"sel_test": "wilcoxon", "sel_cmp_runs": ["a", "b"]}, path=store)
    assert localstate.write("demo:0", {"sel_test": "t"}, path=store)
    assert localstate.write(key, {"sel_cmp_runs": None, "sel_k": 10}, path=store)  # None removes a key
    assert localstate.read(key, path=store) == {"sel_test": "wilcoxon", "sel_k": 10}
    assert localstate.read("demo:0", path=store) == {"sel_test": "t"}
    assert not localstate.write(key, {"sel_k": float("nan")}, path=store)  # not JSON: not kept, no error
    store.write_bytes(b"not a database")
    assert localstate.read(key, path=store) == {}
    assert localstate.write(key, {"sel_k": 5}, path=store) is False
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert localstate.write(key, {"sel_k": 5}, path=blocked / "x" / "ui_state.sqlite") is False
    assert localstate.identity("x", demo_seed=0) == "demo:0"

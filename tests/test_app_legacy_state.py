"""Workspaces whose selections were kept by the dashboard before its kept-format marker (dashboard.legacy): the
Versions page's A / B and reference and the Fusion page's runs were written whether shown by default or chosen, so
they read as the user's choice and no longer followed new checkpoints. The rows here are written into a real
catalogue (its ``settings`` table, ``ui:KEY`` rows) exactly as that dashboard's ``set_ui_state`` wrote them."""

from __future__ import annotations

import sqlite3

import test_app as T
from test_app_versions_follow import ITEMS, ab, checkpoint, fused, said, training, versions_page  # noqa: F401

from dashboard import legacy
from dashboard import persist as P
from dashboard import state as S
from evalcore.workspace.store import dumps


def written_the_old_way(ws, values: dict) -> None:
    """``values`` as rows of the workspace's catalogue, as the dashboard before the marker wrote them (no marker)."""
    with sqlite3.connect(ws.path / "catalogue.sqlite") as conn:
        conn.executemany("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)",
                         [(f"ui:{k}", dumps(v)) for k, v in values.items()])
    assert legacy.FORMAT_KEY not in ws.ui_state()


OLD_VERSIONS = {S.SEL_VERSION_MODEL: "enc", S.SEL_VERSION_A: "enc-ep1", S.SEL_VERSION_B: "enc-ep2",
                S.SEL_VERSION_REFERENCE: "enc-ep1", S.SEL_METRIC: "ndcg", S.SEL_K: 10}


def test_an_older_dashboard_s_default_versions_follow_again_and_are_said_with_a_way_back():
    """A = epoch 1 and B = epoch 2 kept when epoch 2 was the newest (the default pair then): four epochs later the
    page showed epoch 1 against epoch 2 as 'your choice'. Now it follows, says what was kept, and can put it back."""
    name, ws = training((1, 2))
    written_the_old_way(ws, OLD_VERSIONS)
    for epoch in (3, 4):
        checkpoint(ws, epoch)
    at = versions_page(T.open_app(name))
    assert ab(at) == ("enc-ep3", "enc-ep4")
    assert any("Versions A and B kept by an earlier version of the dashboard ('epoch 1', 'epoch 2')" in m
               for m in said(at)), said(at)
    kept = ws.ui_state()
    assert S.SEL_VERSION_A not in kept and S.SEL_VERSION_B not in kept and S.SEL_VERSION_REFERENCE not in kept
    assert kept[legacy.FORMAT_KEY] == legacy.FORMAT and kept[S.SEL_METRIC] == "ndcg"  # the rest stays
    at.button(key="ver_legacy").click().run()
    assert ab(at) == ("enc-ep1", "enc-ep2")
    assert not any("earlier version of the dashboard" in m for m in said(at))
    checkpoint(ws, 5)
    again = versions_page(T.open_app(name))
    assert ab(again) == ("enc-ep1", "enc-ep2")  # now the user's choice, marked so: kept
    assert not any("earlier version of the dashboard" in m for m in said(again))


def test_an_older_dashboard_s_pair_no_default_could_have_been_stays_a_choice():
    """A = epoch 1 against B = epoch 3 was never a default pair (A was the one before B): the user chose one of them
    at least, and which one cannot be told, so both stay; so does a reference other than the first version."""
    name, ws = training((1, 2, 3))
    written_the_old_way(ws, {**OLD_VERSIONS, S.SEL_VERSION_B: "enc-ep3", S.SEL_VERSION_REFERENCE: "enc-ep2"})
    checkpoint(ws, 4)
    at = versions_page(T.open_app(name))
    assert ab(at) == ("enc-ep1", "enc-ep3")
    assert at.selectbox(key=f"w_versions_{S.SEL_VERSION_REFERENCE}").value == "enc-ep2"
    assert not any("earlier version of the dashboard" in m for m in said(at))
    assert ws.ui_state()[S.SEL_VERSION_A] == "enc-ep1" and ws.ui_state()[legacy.FORMAT_KEY] == legacy.FORMAT


def test_a_default_pair_shown_as_it_is_now_follows_without_a_word():
    name, ws = training((1, 2, 3))
    written_the_old_way(ws, {**OLD_VERSIONS, S.SEL_VERSION_A: "enc-ep2", S.SEL_VERSION_B: "enc-ep3"})
    at = versions_page(T.open_app(name))
    assert ab(at) == ("enc-ep2", "enc-ep3") and not any("earlier version" in m for m in said(at))
    checkpoint(ws, 4)
    at.run()
    assert ab(at) == ("enc-ep3", "enc-ep4")


def test_the_same_pair_chosen_with_this_dashboard_is_kept():
    """The marker tells this dashboard's choices from an older one's rows: an adjacent pair chosen now stays."""
    name, ws = training((1, 2, 3))
    at = versions_page(T.open_app(name))
    at.selectbox(key=f"w_versions_{S.SEL_VERSION_A}").select("enc-ep1").run()
    at.selectbox(key=f"w_versions_{S.SEL_VERSION_B}").select("enc-ep2").run()
    checkpoint(ws, 4)
    again = versions_page(T.open_app(name))
    assert ab(again) == ("enc-ep1", "enc-ep2") and not any("earlier version" in m for m in said(again))


def test_an_older_dashboard_s_default_runs_to_fuse_follow_again_and_the_rest_of_the_set_up_stays():
    name, ws = training((1, 2, 3))
    written_the_old_way(ws, {P.SEL_FUSION: {"runs": ["enc-ep1", "enc-ep2", "enc-ep3"], "method": "combsum",
                                            "norm": "min-max", "c": 60.0}})
    checkpoint(ws, 4)
    ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
    at = T.goto(T.open_app(name), "fusion")
    assert not T.errors(at), T.errors(at)
    assert fused(at) == ["bm25", "enc-ep4"]
    assert at.selectbox(key="fu_method").value == "combsum" and at.selectbox(key="fu_norm").value == "min-max"
    assert any("The runs to fuse kept by an earlier version of the dashboard ('enc-ep1', 'enc-ep2', 'enc-ep3')" in m
               for m in said(at)), said(at)
    assert "runs" not in ws.ui_state()[P.SEL_FUSION]
    at.button(key="fu_legacy").click().run()
    assert fused(at) == ["enc-ep1", "enc-ep2", "enc-ep3"]
    assert ws.ui_state()[P.SEL_FUSION]["runs"] == ["enc-ep1", "enc-ep2", "enc-ep3"]

"""The Versions page's "what changed" versions A and B follow the newest two versions while the user has not chosen
them: a training loop adds a checkpoint, the user refreshes (a rerun), reloads (a new session on the same URL) or the
server restarts, and A / B are then the one before the newest and the newest. Before, the defaults of the moment the
page was first drawn were kept (in the session, the URL and the workspace's ui_state) as if the user had chosen them.
A version the user chose (the picker or a deep link) is kept as before; one removed since is said and dropped."""

from __future__ import annotations

import numpy as np
import test_app as T
from test_app_store import new_workspace, url

from dashboard import persist as P
from dashboard import state as S

A, B = f"w_versions_{S.SEL_VERSION_A}", f"w_versions_{S.SEL_VERSION_B}"
ITEMS = T.QUERIES + T.DOCS


def training(epochs: tuple[int, ...]) -> tuple[str, object]:
    """A workspace a training loop fills: a ground truth and one checkpoint of model "enc" per epoch."""
    name, ws = new_workspace()
    ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
    for epoch in epochs:
        checkpoint(ws, epoch)
    return name, ws


def checkpoint(ws, epoch: int) -> None:
    rng = np.random.default_rng(epoch)
    ws.add_embedding_run(f"enc-ep{epoch}", rng.normal(size=(len(ITEMS), 8)).astype(np.float32), ITEMS,
                         model="enc", version=f"epoch {epoch}", step=epoch)


def versions_page(at):
    at = T.goto(at, "versions")
    assert not T.errors(at), T.errors(at)
    return at


def ab(at) -> tuple[str, str]:
    return at.selectbox(key=A).value, at.selectbox(key=B).value


def test_a_and_b_follow_the_newest_checkpoints_across_refresh_reload_and_restart():
    name, ws = training((1, 2))
    at = versions_page(T.open_app(name))
    assert ab(at) == ("enc-ep1", "enc-ep2")
    checkpoint(ws, 3)
    at.run()  # "Refresh": the same session, the workspace changed on disk
    assert ab(at) == ("enc-ep2", "enc-ep3")
    checkpoint(ws, 4)
    again = versions_page(T.open_app(name))  # a new session on the workspace (a reload, a restarted server)
    assert ab(again) == ("enc-ep3", "enc-ep4")
    # the URL of a session that never chose carries no version: a reload of it follows too
    assert url(again, "version_a") == [] and url(again, "version_b") == []
    assert S.SEL_VERSION_A not in ws.ui_state() and S.SEL_VERSION_B not in ws.ui_state()
    checkpoint(ws, 5)
    reload = T.open_app(name)
    for key, value in again.query_params.items():
        reload.query_params[key] = value
    assert ab(versions_page(reload)) == ("enc-ep4", "enc-ep5")


def test_a_version_the_user_chose_is_kept_and_the_other_still_follows():
    name, ws = training((1, 2, 3))
    at = versions_page(T.open_app(name))
    at.selectbox(key=A).select("enc-ep1").run()
    assert ab(at) == ("enc-ep1", "enc-ep3")
    checkpoint(ws, 4)
    at.run()
    assert ab(at) == ("enc-ep1", "enc-ep4")  # A as chosen, B the newest
    assert url(at, "version_a") == ["enc-ep1"] and url(at, "version_b") == []
    checkpoint(ws, 5)
    assert ab(versions_page(T.open_app(name))) == ("enc-ep1", "enc-ep5")  # kept by the workspace
    # a deep link names B: kept, A pairs with it (the version just before it), whatever is added
    ws.set_ui_state(**{S.SEL_VERSION_A: None})  # (forgotten: A not chosen)
    linked = versions_page(_with_link(name, version_b="enc-ep2"))
    assert ab(linked) == ("enc-ep1", "enc-ep2")
    checkpoint(ws, 6)
    linked.run()
    assert ab(linked) == ("enc-ep1", "enc-ep2")


def test_a_chosen_as_the_newest_is_compared_with_the_version_before_it_not_the_first():
    """A = the newest version chosen: B fell to the first version (epoch 1 against epoch 3, when what changed at the
    newest checkpoint is against the one before it); B now is the newest other than A."""
    name, ws = training((1, 2, 3))
    at = versions_page(T.open_app(name))
    at.selectbox(key=A).select("enc-ep3").run()
    assert ab(at) == ("enc-ep3", "enc-ep2")
    assert url(at, "version_b") == []  # B still follows: not written as a choice
    checkpoint(ws, 4)
    at.run()
    assert ab(at) == ("enc-ep3", "enc-ep4")  # B: the newest other than A, as before


def test_b_chosen_pairs_a_with_the_version_before_it():
    """B chosen (ep2 of four): A was "the one before the newest" (ep3), a pair adjacent to neither and reversed; now A
    is the version just before B, and B as the first version pairs with the one after it."""
    name, ws = training((1, 2, 3, 4))
    at = versions_page(T.open_app(name))
    at.selectbox(key=B).select("enc-ep2").run()
    assert ab(at) == ("enc-ep1", "enc-ep2")
    checkpoint(ws, 5)
    at.run()
    assert ab(at) == ("enc-ep1", "enc-ep2")
    assert url(at, "version_a") == [] and url(at, "version_b") == ["enc-ep2"]
    first = versions_page(_with_link(name, version_b="enc-ep1"))
    assert ab(first) == ("enc-ep2", "enc-ep1")


def test_a_chosen_a_removed_leaves_the_chosen_b_alone():
    """A = ep1 and B = ep3 chosen, then ep1 removed: A fell back to the one before the newest (ep3), which is B, so B
    was dropped and named as "no longer offered" though it is still there; now A pairs with B (ep2)."""
    name, ws = training((1, 2, 3, 4))
    at = versions_page(T.open_app(name))
    at.selectbox(key=A).select("enc-ep1").run()
    at.selectbox(key=B).select("enc-ep3").run()
    assert ab(at) == ("enc-ep1", "enc-ep3")
    ws.remove_run("enc-ep1")
    at.run()
    assert ab(at) == ("enc-ep2", "enc-ep3")
    assert not any("enc-ep3" in m or "epoch 3" in m for m in said(at)), said(at)
    assert url(at, "version_b") == ["enc-ep3"] and ws.ui_state()[S.SEL_VERSION_B] == "enc-ep3"


def _with_link(name: str, **params: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(T.APP, default_timeout=T.TIMEOUT)
    at.query_params["ws"] = name
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_chosen_version_removed_is_said_and_the_default_shown():
    name, ws = training((1, 2, 3, 4))
    at = versions_page(T.open_app(name))
    at.selectbox(key=A).select("enc-ep2").run()
    assert ab(at) == ("enc-ep2", "enc-ep4")
    ws.remove_run("enc-ep2")
    at.run()
    assert ab(at) == ("enc-ep3", "enc-ep4")
    said = [T.unescape(m.value) for m in (*at.info, *at.warning)]
    assert any("enc-ep2" in m and "Version A" in m for m in said), said
    assert url(at, "version_a") == []
    checkpoint(ws, 5)
    at.run()
    assert ab(at) == ("enc-ep4", "enc-ep5")  # following again
    assert not any("enc-ep2" in T.unescape(m.value) for m in (*at.info, *at.warning))


def test_the_reference_version_follows_the_first_version_until_chosen():
    """The reference defaults to the first version: a base model evaluated afterwards at step 0 becomes it."""
    name, ws = training((1, 2))
    at = versions_page(T.open_app(name))
    ref = f"w_versions_{S.SEL_VERSION_REFERENCE}"
    assert at.selectbox(key=ref).value == "enc-ep1"
    checkpoint(ws, 0)
    at.run()
    assert at.selectbox(key=ref).value == "enc-ep0"
    at.selectbox(key=ref).select("enc-ep2").run()
    checkpoint(ws, 3)
    at.run()
    assert at.selectbox(key=ref).value == "enc-ep2"
    assert ab(at) == ("enc-ep2", "enc-ep3")


def test_the_fusion_page_s_runs_follow_the_latest_version_until_chosen():
    """Beyond 8 runs the Fusion page starts on the latest version of each model (and the runs without one): a
    checkpoint logged meanwhile takes its model's place there, until the user picks the runs to fuse."""
    name, ws = training(tuple(range(1, 9)))
    ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
    at = T.goto(T.open_app(name), "fusion")
    assert not T.errors(at), T.errors(at)
    assert sorted(at.multiselect(key="fu_runs").value) == sorted(["enc-ep8", "bm25"])
    checkpoint(ws, 9)
    at.run()
    assert sorted(at.multiselect(key="fu_runs").value) == sorted(["enc-ep9", "bm25"])
    checkpoint(ws, 10)
    again = T.goto(T.open_app(name), "fusion")  # a reload, a restarted server
    assert sorted(again.multiselect(key="fu_runs").value) == sorted(["enc-ep10", "bm25"])
    again.multiselect(key="fu_runs").set_value(["enc-ep2", "bm25"]).run()
    checkpoint(ws, 11)
    again.run()
    assert sorted(again.multiselect(key="fu_runs").value) == sorted(["enc-ep2", "bm25"])  # the user's choice stays
    assert sorted(T.goto(T.open_app(name), "fusion").multiselect(key="fu_runs").value) == ["bm25", "enc-ep2"]


def test_follow_the_newest_versions_forgets_the_choice():
    name, ws = training((1, 2, 3))
    at = versions_page(T.open_app(name))
    follow = [b for b in at.button if b.key == "ver_follow"]
    assert not follow  # nothing chosen: following already
    at.selectbox(key=A).select("enc-ep1").run()
    assert ab(at) == ("enc-ep1", "enc-ep3")
    at.button(key="ver_follow").click().run()
    checkpoint(ws, 4)
    at.run()
    assert ab(at) == ("enc-ep3", "enc-ep4")
    assert url(at, "version_a") == [] and S.SEL_VERSION_A not in ws.ui_state()
    assert not [b for b in at.button if b.key == "ver_follow"]


def said(at) -> list[str]:
    return [T.unescape(m.value) for m in (*at.info, *at.warning)]


def test_chosen_versions_removed_before_the_workspace_is_opened_are_said_once():
    """A = ep2 and the reference ep3 chosen, both removed by a script, the dashboard reopened (a restart, a new tab):
    the workspace's kept choices were trimmed without a word; now each is named once, as in a live session."""
    name, ws = training((1, 2, 3, 4))
    at = versions_page(T.open_app(name))
    ref = f"w_versions_{S.SEL_VERSION_REFERENCE}"
    at.selectbox(key=A).select("enc-ep2").run()
    at.selectbox(key=ref).select("enc-ep3").run()
    assert ws.ui_state()[S.SEL_VERSION_A] == "enc-ep2" and ws.ui_state()[S.SEL_VERSION_REFERENCE] == "enc-ep3"
    ws.remove_run("enc-ep2")
    ws.remove_run("enc-ep3")
    again = versions_page(T.open_app(name))
    assert ab(again) == ("enc-ep1", "enc-ep4") and again.selectbox(key=ref).value == "enc-ep1"
    assert any("Version A as you chose it, 'enc-ep2', is no longer offered" in m for m in said(again)), said(again)
    assert any("Reference version as you chose it, 'enc-ep3', is no longer offered" in m
               for m in said(again)), said(again)
    assert S.SEL_VERSION_A not in ws.ui_state() and S.SEL_VERSION_REFERENCE not in ws.ui_state()
    again.run()
    assert not any("enc-ep2" in m or "enc-ep3" in m for m in said(again)), said(again)  # once
    assert not any("enc-ep2" in m for m in said(versions_page(T.open_app(name))))  # the next session: nothing to say


def test_a_deep_link_replaces_a_kept_choice_removed_without_a_word_about_it():
    name, ws = training((1, 2, 3, 4))
    at = versions_page(T.open_app(name))
    at.selectbox(key=A).select("enc-ep2").run()
    ws.remove_run("enc-ep2")
    linked = versions_page(_with_link(name, version_a="enc-ep1"))
    assert ab(linked) == ("enc-ep1", "enc-ep4")
    assert not any("enc-ep2" in m for m in said(linked)), said(linked)


def fusion_page(at):
    at = T.goto(at, "fusion")
    assert not T.errors(at), T.errors(at)
    return at


def fused(at) -> list[str]:
    return sorted(at.multiselect(key="fu_runs").value)


def test_a_chosen_run_to_fuse_removed_is_said_as_on_the_versions_page():
    name, ws = training((1, 2, 3))
    ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
    at = fusion_page(T.open_app(name))
    at.multiselect(key="fu_runs").set_value(["enc-ep2", "bm25"]).run()
    ws.remove_run("enc-ep2")
    at.run()
    assert fused(at) == ["bm25"]
    assert "Runs to fuse as you chose it, 'enc-ep2', is no longer offered here (removed, or not among these " \
           "choices): the rest of your choice is kept." in said(at), said(at)
    at.run()
    assert fused(at) == ["bm25"] and not any("enc-ep2" in m for m in said(at)), said(at)  # said once
    # none of the choice left: the default again, said so
    at.multiselect(key="fu_runs").set_value(["enc-ep1"]).run()
    ws.remove_run("enc-ep1")
    at.run()
    assert fused(at) == ["bm25", "enc-ep3"]
    assert any("'enc-ep1', is no longer offered" in m and "showing the default again" in m
               for m in said(at)), said(at)


def test_a_chosen_run_to_fuse_removed_before_the_workspace_is_opened_is_said_once():
    name, ws = training((1, 2, 3))
    ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
    at = fusion_page(T.open_app(name))
    at.multiselect(key="fu_runs").set_value(["enc-ep1", "enc-ep2", "bm25"]).run()
    ws.remove_run("enc-ep1")
    ws.remove_run("enc-ep2")
    again = fusion_page(T.open_app(name))  # a restart, a new tab: the kept set-up is trimmed on opening
    assert fused(again) == ["bm25"]
    assert "Runs to fuse as you chose them: 'enc-ep1', 'enc-ep2' are no longer offered here (removed, or not among " \
           "these choices): the rest of your choice is kept." in said(again), said(again)
    again.run()
    assert not any("enc-ep1" in m for m in said(again)), said(again)


def test_a_kept_model_removed_before_the_workspace_is_opened_is_said_once():
    """The Versions page's model "other" chosen, its runs removed by a script, the dashboard reopened: the kept model
    was trimmed without a word (the versions' choices were named); now it is named once, as they are."""
    name, ws = training((1, 2))
    for epoch in (1, 2):
        rng = np.random.default_rng(10 + epoch)
        ws.add_embedding_run(f"other-ep{epoch}", rng.normal(size=(len(ITEMS), 8)).astype(np.float32), ITEMS,
                             model="other", version=f"epoch {epoch}", step=epoch)
    model = f"w_versions_{S.SEL_VERSION_MODEL}"
    at = versions_page(T.open_app(name))
    at.selectbox(key=model).select("other").run()
    assert ws.ui_state()[S.SEL_VERSION_MODEL] == "other"
    ws.remove_run("other-ep1")
    ws.remove_run("other-ep2")
    again = versions_page(T.open_app(name))
    assert again.selectbox(key=model).value == "enc"
    assert "Model as you chose it, 'other', is no longer offered here (removed, or not among these choices): " \
           "showing the default again." in said(again), said(again)
    assert S.SEL_VERSION_MODEL not in ws.ui_state() or ws.ui_state()[S.SEL_VERSION_MODEL] == "enc"
    again.run()
    assert not any("'other'" in m for m in said(again)), said(again)  # once


def test_the_fusion_page_starts_from_the_latest_versions_also_with_few_runs():
    """Up to 8 runs the Fusion page started on the first three runs: a training loop's epochs 1, 2 and 3 (and it said
    it followed nothing, which it then did not). Now, whatever the count, the latest version of each model and the runs
    without one, said on the page; one model alone: its latest three versions."""
    name, ws = training((1, 2, 3, 4, 5))
    at = fusion_page(T.open_app(name))
    assert fused(at) == ["enc-ep3", "enc-ep4", "enc-ep5"]
    ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
    at.run()
    assert fused(at) == ["bm25", "enc-ep5"]
    checkpoint(ws, 6)
    at.run()
    assert fused(at) == ["bm25", "enc-ep6"]
    assert any("Until you pick runs: the latest version of each model" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "fu_follow"]


def test_follow_the_latest_versions_forgets_the_runs_picked_to_fuse():
    name, ws = training((1, 2, 3))
    ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
    at = fusion_page(T.open_app(name))
    at.multiselect(key="fu_runs").set_value(["enc-ep1", "bm25"]).run()
    assert not any("Until you pick runs" in c.value for c in at.caption)
    checkpoint(ws, 4)
    at.run()
    assert fused(at) == ["bm25", "enc-ep1"]
    at.button(key="fu_follow").click().run()
    assert fused(at) == ["bm25", "enc-ep4"]
    assert "runs" not in ws.ui_state()[P.SEL_FUSION]
    checkpoint(ws, 5)
    assert fused(fusion_page(T.open_app(name))) == ["bm25", "enc-ep5"]  # a reload follows too


def test_a_chosen_model_with_one_version_for_now_stays_the_choice():
    """Model "other" chosen; its second checkpoint removed (a bad one) and another logged: the page showed "enc"
    meanwhile and wrote it as the model chosen, so the new "other" series never came back."""
    name, ws = training((1, 2))
    for epoch in (1, 2):
        rng = np.random.default_rng(10 + epoch)
        ws.add_embedding_run(f"other-ep{epoch}", rng.normal(size=(len(ITEMS), 8)).astype(np.float32), ITEMS,
                             model="other", version=f"epoch {epoch}", step=epoch)
    model = f"w_versions_{S.SEL_VERSION_MODEL}"
    at = versions_page(T.open_app(name))
    at.selectbox(key=model).select("other").run()
    ws.remove_run("other-ep2")
    at.run()
    assert at.selectbox(key=model).value == "enc"
    assert any("'other', has fewer than two evaluated versions for now" in T.unescape(c.value) for c in at.caption)
    assert ws.ui_state()[S.SEL_VERSION_MODEL] == "other" and url(at, "model") == ["other"]
    rng = np.random.default_rng(13)
    ws.add_embedding_run("other-ep3", rng.normal(size=(len(ITEMS), 8)).astype(np.float32), ITEMS, model="other",
                         version="epoch 3", step=3)
    at.run()
    assert at.selectbox(key=model).value == "other" and ab(at) == ("other-ep1", "other-ep3")

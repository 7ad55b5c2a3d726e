"""Choices shared by the pages that one page silently changed or lost: the Agreement page's cutoff replaced a k of
another page's (no cutoff, k = 0, of a whole-list metric: the URL then named 'rprec@10', which no page computes),
Compare's "Compare across aspects anyway" was dropped by Streamlit on leaving the page (its key ``sel_mix_aspects``
existed but nothing kept it: another page, a reload or a restart compared one aspect again), and Compare's "Runs
compared" was erased by a look at another aspect."""

from __future__ import annotations

import test_app as T
from test_app_store import new_workspace, python_workspace, url
from test_app_views import CONTENT, FIX, OVERALL, VIBES, seed001_run

from dashboard import state as S


def page(at, name: str):
    at = T.goto(at, name)
    assert not T.errors(at), T.errors(at)
    return at


def test_the_agreement_page_leaves_a_no_cutoff_k_of_the_other_pages_alone():
    name, ws = python_workspace()
    ws.set_settings(metrics=("ndcg", "recall", "rprec"))
    at = page(T.open_app(name), "compare")
    at.selectbox(key="w_compare_sel_metric").select("rprec").run()
    assert url(at, "metric") == ["rprec"] and at.session_state[S.SEL_K] == 0
    at = page(at, "agreement")
    assert at.selectbox(key="w_agreement_sel_k").value == 10  # its own default: it needs a cutoff
    assert url(at, "metric") == ["rprec"] and ws.ui_state()[S.SEL_K] == 0
    at = page(at, "compare")
    assert at.selectbox(key="w_compare_sel_metric").value == "rprec" and url(at, "metric") == ["rprec"]
    at.selectbox(key="w_compare_sel_metric").select("recall").run()
    at.selectbox(key="w_compare_sel_k").select("5").run()
    at = page(at, "agreement")
    assert at.selectbox(key="w_agreement_sel_k").value == 5  # a k it offers: shared, as before
    at.selectbox(key="w_agreement_sel_k").select(20).run()
    assert url(at, "metric") == ["recall@20"]


def aspects_workspace(*more: tuple[str, str, str]) -> str:
    """A stored workspace of seed 001's movies: a ground truth of three aspects, runs judged against two of them
    (``more``: (name, aspect ranked by, aspect judged against) of further runs)."""
    name, ws = new_workspace()
    ws.set_ground_truth((FIX / "seed001_movies.json").read_bytes(), source_name="seed001_movies.json")
    ws.add_run("content_run", seed001_run(CONTENT), aspect=CONTENT, source_name="content_run.trec")
    ws.add_run("content_b", seed001_run(OVERALL), aspect=CONTENT, source_name="content_b.trec")
    ws.add_run("vibes_run", seed001_run(VIBES), aspect=VIBES, source_name="vibes_run.trec")
    for run, ranked, judged in more:
        ws.add_run(run, seed001_run(ranked), aspect=judged, source_name=f"{run}.trec")
    return name


def test_compare_across_aspects_stays_on_after_another_page_a_reload_and_a_restart():
    name = aspects_workspace()
    at = page(T.open_app(name), "compare")
    assert at.toggle(key="cmp_mix").value is False
    at.toggle(key="cmp_mix").set_value(True).run()
    assert set(at.multiselect(key="cmp_runs").options) == {"content_run", "content_b", "vibes_run"}
    at = page(page(at, "overview"), "compare")  # (Streamlit drops a widget's state while its page is not drawn)
    assert at.toggle(key="cmp_mix").value is True
    assert set(at.multiselect(key="cmp_runs").options) == {"content_run", "content_b", "vibes_run"}
    again = page(T.open_app(name), "compare")  # a reload, a restarted server
    assert again.toggle(key="cmp_mix").value is True
    again.toggle(key="cmp_mix").set_value(False).run()
    assert page(T.open_app(name), "compare").toggle(key="cmp_mix").value is False


def test_runs_compared_survive_a_look_at_another_aspect():
    """Three runs of one aspect, two of them chosen; a look at the other aspect (one run: fewer than two of the choice
    there) erased the choice, in the session and the workspace, and back on the first aspect all three were tested."""
    name = aspects_workspace(("content_c", VIBES, CONTENT))
    at = page(T.open_app(name), "compare")
    aspect = f"w_compare_{S.SEL_ASPECT}"
    assert at.selectbox(key=aspect).value == CONTENT
    at.multiselect(key="cmp_runs").set_value(["content_run", "content_c"]).run()
    at.selectbox(key=aspect).select(VIBES).run()
    assert at.multiselect(key="cmp_runs").value == ["vibes_run"]
    at.selectbox(key=aspect).select(CONTENT).run()
    assert at.multiselect(key="cmp_runs").value == ["content_run", "content_c"]
    again = page(T.open_app(name), "compare")
    assert again.multiselect(key="cmp_runs").value == ["content_run", "content_c"]

"""View options of the Agreement, Versions and Queries pages (measure and RBO's p; queries listed; the runs C, D beside
A and B) were reset whenever their page was left (another page, a reload, a restart): Streamlit drops a widget's state
with its page and nothing kept them. They are kept selections now, holding only what the user set."""

from __future__ import annotations

import test_app as T
from test_app_store import python_workspace

from dashboard import state as S


def page(at, name: str):
    at = T.goto(at, name)
    assert not T.errors(at), T.errors(at)
    return at


def test_agreement_versions_and_queries_view_options_come_back():
    name, ws = python_workspace()  # runs bm25, dense, e5-ep5, e5-ep25 (model e5)
    at = page(T.open_app(name), "agreement")
    assert at.selectbox(key="ag_measure").value == "overlap"
    at.selectbox(key="ag_measure").set_value("rbo").run()
    at.number_input(key="ag_p").set_value(0.8).run()
    at = page(at, "versions")
    assert at.number_input(key="ver_top").value == 10
    at.number_input(key="ver_top").set_value(6).run()
    at = page(at, "queries")
    assert at.multiselect(key="q_more_runs").value == []
    more = [r for r in at.multiselect(key="q_more_runs").options][:1]
    at.multiselect(key="q_more_runs").set_value(more).run()
    assert S.SEL_AGREEMENT in ws.ui_state() and S.SEL_QUERIES_VIEW in ws.ui_state()
    for back in (lambda: page(at, "overview"), lambda: T.open_app(name)):  # another page; a reload, a restart
        there = page(back(), "agreement")
        assert there.selectbox(key="ag_measure").value == "rbo" and there.number_input(key="ag_p").value == 0.8
        assert page(there, "versions").number_input(key="ver_top").value == 6
        assert page(there, "queries").multiselect(key="q_more_runs").value == more

"""The Overview's view options (CI in the cells, log k axis, CI bands, the precision-recall curve, the diversity's k
and α) were reset by Streamlit whenever the page was left (another page, a reload, a restart): a widget's state goes
with its page. They are one kept selection now; what the user did not set shows its default, computed on every run."""

from __future__ import annotations

import test_app as T
from test_app_store import python_workspace

from dashboard import state as S

SET = {"ov_with_ci": False, "ov_logx": False, "ov_bands": True, "ov_pr": True}


def overview(at):
    at = T.goto(at, "overview")
    assert not T.errors(at), T.errors(at)
    return at


def options(at) -> dict:
    return {**{key: at.toggle(key=key).value for key in SET}, "ov_div_k": at.selectbox(key="ov_div_k").value,
            "ov_div_alpha": at.number_input(key="ov_div_alpha").value}


def test_the_overview_s_view_options_come_back_after_another_page_a_reload_and_a_restart():
    name, ws = python_workspace()  # four runs (bands off by default), two of embeddings (diversity)
    at = overview(T.open_app(name))
    assert options(at) == {"ov_with_ci": True, "ov_logx": True, "ov_bands": False, "ov_pr": False, "ov_div_k": 10,
                           "ov_div_alpha": 0.5}
    assert S.SEL_OVERVIEW not in ws.ui_state()  # defaults are not kept
    ws.remove_run("dense")
    at.run()
    assert at.toggle(key="ov_bands").value is True  # three runs drawn: bands on by default, followed
    for key, value in SET.items():
        at.toggle(key=key).set_value(value).run()
    at.selectbox(key="ov_div_k").select(5).run()
    at.number_input(key="ov_div_alpha").set_value(0.8).run()
    mine = {**SET, "ov_div_k": 5, "ov_div_alpha": 0.8}
    assert options(at) == mine
    at = overview(T.goto(at, "compare"))
    assert options(at) == mine
    assert options(overview(T.open_app(name))) == mine  # a reload, a restarted server

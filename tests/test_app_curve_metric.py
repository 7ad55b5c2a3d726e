"""The Overview's curve metric is the chart's own choice: it starts at (and follows) the metric@k the other pages
share, and a metric chosen there changes no other page. Before, it was that shared selection itself: choosing the
curves' metric changed Compare's (and the URL's) metric@k, and a metric without a cutoff chosen on Compare (which
has no curve) was replaced by nDCG merely by visiting the Overview."""

from __future__ import annotations

import test_app as T
from test_app_store import python_workspace, url

from dashboard import state as S

CURVE = f"w_overview_{S.SEL_OV_CURVE_METRIC}"


def page(at, name: str):
    at = T.goto(at, name)
    assert not T.errors(at), T.errors(at)
    return at


def test_the_curve_metric_follows_the_shared_metric_until_chosen_and_then_changes_no_other_page():
    name, ws = python_workspace()
    at = page(T.open_app(name), "compare")
    at.selectbox(key="w_compare_sel_metric").select("recall").run()
    at = page(at, "overview")
    assert at.selectbox(key=CURVE).value == "recall"  # the metric looked at elsewhere
    at.selectbox(key=CURVE).select("mrr").run()
    assert at.session_state[S.SEL_METRIC] == "recall" and url(at, "metric") == ["recall@10"]
    at = page(at, "compare")
    assert at.selectbox(key="w_compare_sel_metric").value == "recall"
    at.selectbox(key="w_compare_sel_metric").select("map").run()
    at = page(at, "overview")
    assert at.selectbox(key=CURVE).value == "mrr"  # chosen here: kept
    assert ws.ui_state()[S.SEL_OV_CURVE_METRIC] == "mrr" and ws.ui_state()[S.SEL_METRIC] == "map"
    again = page(T.open_app(name), "overview")  # a reload, a restart
    assert again.selectbox(key=CURVE).value == "mrr"
    assert page(again, "compare").selectbox(key="w_compare_sel_metric").value == "map"


def test_a_metric_without_a_cutoff_chosen_elsewhere_survives_a_visit_to_the_overview():
    name, ws = python_workspace()
    ws.set_settings(metrics=("ndcg", "recall", "rprec"))
    at = page(T.open_app(name), "compare")
    at.selectbox(key="w_compare_sel_metric").select("rprec").run()
    assert url(at, "metric") == ["rprec"]
    at = page(at, "overview")
    assert at.selectbox(key=CURVE).value == "ndcg"  # rprec has no curve
    assert at.session_state[S.SEL_METRIC] == "rprec" and url(at, "metric") == ["rprec"]
    assert ws.ui_state()[S.SEL_METRIC] == "rprec" and S.SEL_OV_CURVE_METRIC not in ws.ui_state()
    assert page(at, "compare").selectbox(key="w_compare_sel_metric").value == "rprec"

"""The Overview's precision-recall chart says when runs draw one line (as its Metrics-vs-k chart does)."""

from __future__ import annotations

from test_app import unescape
from test_app_views import start, two_query_workspace


def test_identical_runs_on_the_precision_recall_chart_are_said_to_coincide():
    # A and B (and C and D) are the same ranking under two names: one line each on the precision-recall chart too
    at = start(two_query_workspace(), "overview")
    at.toggle(key="ov_pr").set_value(True).run()
    same = [unescape(c.value) for c in at.caption if "at every recall level" in c.value]
    assert same == [
        "A and B have the same interpolated precision at every recall level: their lines coincide (only the last "
        "one drawn shows).",
        "C and D have the same interpolated precision at every recall level: their lines coincide (only the last "
        "one drawn shows)."]

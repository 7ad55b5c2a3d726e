"""Findings of a browser walkthrough on SciFact that AppTest can check (tests/test_browser_sweep.py has the ones only
a browser shows)."""

from __future__ import annotations

from test_app import goto, start, unescape


def test_fusion_per_run_table_names_its_metric():
    """The Fusion page's second table (run, n, mean, ci_low, ci_high) did not say of which metric@k: a reader had to
    guess that 'mean' was the Metric and Cutoff k chosen above."""
    at = goto(start(), "fusion")
    for metric, k in (("ndcg", 10), ("recall", 5)):
        at.selectbox(key="w_fusion_sel_metric").set_value(metric).run()
        at.selectbox(key="w_fusion_sel_k").set_value(k).run()
        assert not at.exception
        notes = [unescape(c.value) for c in at.caption if "(the Metric and Cutoff k above) of each run" in
                 unescape(c.value)]
        assert notes == [f"{metric}@{k} (the Metric and Cutoff k above) of each run: mean over its n queries and the "
                         "95% CI's bounds (ci_low, ci_high)."]

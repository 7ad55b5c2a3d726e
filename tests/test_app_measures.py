"""The dashboard and the measures of issue #11 (``streamlit.testing.v1.AppTest``).

* the Overview's precision–recall chart: one line per run, its points equal to
  evalcore's means of ``iprec_at_recall`` at the eleven levels, whether the
  settings hold that measure or not;
* the new metrics on the Data page; declared aggregates (sums, geometric mean)
  in the Overview's table; trec_eval's names and groups in the free-text box.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pandas as pd
import pytest
from demo_oracle import oracle_demo
from test_app import DEMO_RUN_NAMES, errors, goto, numbers_table, start
from test_app import overview_text as _overview_text

from evalcore import evaluate
from evalcore import workspace as W
from evalcore.aggregate import summarize
from evalcore.intervals import summarize_with_intervals
from evalcore.metrics import RECALL_LEVELS


def overview_text(at):
    """The Overview's leaderboard with every computed metric@k chosen as a column."""
    box = at.multiselect(key="ov_columns")
    if list(box.value) != list(box.options):
        box.set_value(list(box.options)).run()
    return _overview_text(at)


pytestmark = pytest.mark.filterwarnings("ignore:'hits' is now:evalcore.errors.EvalcoreWarning")


def apply_settings(at, *, metrics: list[str], extra: str = "", ks: list[int] | None = None):
    goto(at, "data")
    if ks is not None:
        at.multiselect(key="set_k").set_value(ks)
    at.multiselect(key="set_metrics").set_value(metrics)
    at.text_input(key="set_extra_metrics").input(extra)
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert not at.exception and not errors(at), errors(at)
    return at


def pr_chart(at) -> dict:
    """The precision–recall figure of the Overview (its Plotly JSON)."""
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        if "recall" in json.dumps(spec.get("layout", {}).get("xaxis", {}).get("title", "")):
            return spec
    raise AssertionError("no precision-recall chart")


def array(v) -> list[float]:
    """A Plotly trace's numbers: a list, or numpy data Plotly encoded as ``{"dtype", "bdata"}``."""
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).astype(float).tolist()
    return [float(x) for x in v]


def expected_pr(settings: W.Settings) -> pd.DataFrame:
    demo = oracle_demo(0)
    ev = evaluate(demo.qrels, demo.runs, metrics=["iprec_at_recall"], k=list(settings.k), ties=settings.ties,
                  rel_threshold=settings.rel_threshold)
    return summarize(ev.table)


def check_chart_equals_engine(at, settings: W.Settings) -> None:
    spec = pr_chart(at)
    traces = [t for t in spec["data"] if t.get("mode") == "lines+markers"]
    assert [t["name"] for t in traces] == list(DEMO_RUN_NAMES)  # one line per run, in the runs' order
    want = expected_pr(settings)
    for t in traces:
        t["x"], t["y"] = array(t["x"]), array(t["y"])
        assert t["x"] == pytest.approx(list(RECALL_LEVELS))
        for x, y in zip(t["x"], t["y"], strict=True):
            label = "iprec_at_recall(recall=" + (repr(float(x))[:-2] if float(x).is_integer() else repr(float(x))) + ")"
            row = want[(want["run"].astype(str) == t["name"]) & (want["metric"].astype(str) == label)]
            assert len(row) == 1 and y == pytest.approx(float(row["mean"].iloc[0]), abs=1e-12), (t["name"], x)
    # precision interpolated that way never rises with recall, and the runs differ
    assert all(np.all(np.diff(t["y"]) <= 1e-12) for t in traces)
    assert len({tuple(np.round(t["y"], 12)) for t in traces}) == len(traces)


def test_precision_recall_chart_on_the_overview_on_demand():
    at = goto(start(), "overview")
    n_before = len(at.get("plotly_chart"))
    toggle = at.toggle(key="ov_pr")
    assert toggle.value is False  # the demo's metrics do not hold iprec_at_recall: computed on demand
    toggle.set_value(True).run()
    assert not at.exception and not errors(at)
    assert len(at.get("plotly_chart")) == n_before + 1
    check_chart_equals_engine(at, W.Settings().validated())


def test_precision_recall_chart_from_the_chosen_metrics():
    at = apply_settings(start(), metrics=["ndcg", "iprec_at_recall"], ks=[5, 10])
    s = at.session_state["ws"].settings
    assert "iprec_at_recall" in s.metrics
    at = goto(at, "overview")
    assert at.toggle(key="ov_pr").value is True  # drawn at once: the evaluation holds the eleven levels
    check_chart_equals_engine(at, s)
    assert {f"iprec_at_recall(recall={x})" for x in ("0", "0.5", "1")} <= set(overview_text(at).columns)


def test_new_metrics_are_offered_and_their_aggregates_shown():
    at = goto(start(), "data")
    options = set(at.multiselect(key="set_metrics").options)
    assert {"hits", "f1", "dcg", "err", "judged", "bpref", "infap", "gm_map", "set_f", "11pt_avg",
            "iprec_at_recall", "rbp", "rbp_residual", "num_ret", "num_rel_ret", "num_q"} <= options
    at = apply_settings(at, metrics=["ndcg", "num_ret", "num_q", "gm_map", "judged"], ks=[10])
    at = goto(at, "overview")
    demo = oracle_demo(0)
    s = at.session_state["ws"].settings
    ev = evaluate(demo.qrels, demo.runs, metrics=list(s.metrics), k=list(s.k), ties=s.ties)
    agg = summarize_with_intervals(ev.table, aggregates=True)  # the dashboard's intervals: shared bootstrap
    text = overview_text(at)
    for row in agg.assign(run=agg["run"].astype(str), metric=agg["metric"].astype(str)).itertuples(index=False):
        label = row.metric if row.k == 0 else f"{row.metric}@{row.k}"
        cell = text.loc[row.run, label]
        if row.aggregation == "sum":
            assert cell == f"{row.aggregate:.0f}"  # a total, no interval, no star
        else:
            assert cell.lstrip("★ ") == (f"{row.aggregate:.3f} [{row.aggregate_ci_low:.3f}, "
                                         f"{row.aggregate_ci_high:.3f}]")
    assert text.loc[DEMO_RUN_NAMES[0], "num_q"] == str(len(demo.qrels.query_ids))
    assert not any(c.startswith("★") for c in text["num_ret"]) and not any(c.startswith("★") for c in text["judged@10"])
    assert any(c.startswith("★") for c in text["gm_map"])
    # the numbers table keeps summarize()'s columns; the declared aggregates are listed beside it
    pd.testing.assert_frame_equal(numbers_table(at).reset_index(drop=True),
                                  summarize_with_intervals(ev.table).reset_index(drop=True))
    declared = next(d.value for d in at.dataframe if "aggregation" in getattr(d.value, "columns", []))
    assert set(declared["metric"].astype(str)) == {"num_ret", "num_q", "gm_map"}


def test_trec_eval_names_in_the_free_text_box():
    at = apply_settings(start(), metrics=["ndcg"], extra="P.5,10, set_F", ks=[10])
    assert at.session_state["ws"].settings.metrics == ("ndcg", "precision@5", "precision@10", "set_f")
    # set_f is one of the offered metrics: it moves to the list, the rest stays as canonical text
    assert at.text_input(key="set_extra_metrics").value == "precision@5, precision@10"
    assert at.multiselect(key="set_metrics").value == ["ndcg", "set_f"]
    at = goto(at, "overview")
    assert {"precision@5", "precision@10", "set_f"} <= set(overview_text(at).columns)


def test_domains_page_shows_the_declared_aggregate():
    at = apply_settings(start(), metrics=["ndcg", "gm_map", "num_rel_ret"], ks=[10])
    at = goto(at, "domains")
    demo = oracle_demo(0)
    s = at.session_state["ws"].settings
    table = evaluate(demo.qrels, demo.runs, metrics=list(s.metrics), k=list(s.k), ties=s.ties).table
    by_dom = summarize(table.assign(domain=table["domain"].astype(str)), by=("run", "domain", "metric", "k"),
                       aggregates=True)
    for metric, kind in (("gm_map", "gmean"), ("num_rel_ret", "sum")):
        at.selectbox(key="w_domains_sel_metric").select(metric).run()
        assert not at.exception and not errors(at)
        shown = next(d.value for d in at.dataframe if getattr(d.value, "index", pd.Index([])).name == "domain")
        want = by_dom[by_dom["metric"].astype(str) == metric]
        assert set(want["aggregation"]) == {kind}
        for row in want.itertuples(index=False):
            dom = row.domain or "(none)"
            assert float(shown.loc[dom, str(row.run)]) == pytest.approx(row.aggregate, rel=1e-12), (metric, dom)


def test_judged_only_setting_on_the_data_page():
    """The Data page's "judged documents only" (trec_eval -J) gives evaluate(judged_only=True)'s numbers, is
    kept in the settings and named in the sidebar; with a reference model as ground truth it is refused."""
    at = goto(start(), "data")
    at.toggle(key="set_judged").set_value(True)
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert not at.exception and not errors(at), errors(at)
    s = at.session_state["ws"].settings
    assert s.judged_only
    assert "judged documents only (-J)" in "\n".join(t.value for t in at.sidebar.text)
    demo = oracle_demo(0)
    ev = evaluate(demo.qrels, demo.runs, metrics=list(s.metrics), k=list(s.k), ties=s.ties, judged_only=True)
    plain = evaluate(demo.qrels, demo.runs, metrics=list(s.metrics), k=list(s.k), ties=s.ties)
    at = goto(at, "overview")
    expected = summarize_with_intervals(ev.table)
    pd.testing.assert_frame_equal(numbers_table(at).reset_index(drop=True), expected.reset_index(drop=True))
    assert not np.allclose(expected["mean"], summarize_with_intervals(plain.table)["mean"])  # -J changed something


def test_judged_only_needs_judgments():
    from evalcore.errors import OptionError
    from evalcore.workspace.pipeline import evaluate_workspace

    with pytest.raises(OptionError, match="judged-only needs judgments"):
        evaluate_workspace({}, [(next(iter(oracle_demo(0).runs.values())), None)], W.Settings(judged_only=True),
                           reference=object())

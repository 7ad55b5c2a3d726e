"""Charts of a lower-is-better metric (first_rel_rank) say so and turn their colour scale around (browser finding
s30 4: on the Domains heatmap the brightest cell was the worst one, and no title said "lower is better")."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
from test_app import unescape
from test_app_versions import fixture
from test_app_views import many_queries, start

from dashboard import charts as C
from evalcore import workspace as W

LOWER = " (lower is better)"


def figures(at) -> list[dict]:
    return [json.loads(ch.proto.spec) for ch in at.get("plotly_chart")]


def _title(t) -> str:
    return (t or {}).get("text", "") if isinstance(t, dict) else str(t or "")


def test_domain_charts_say_lower_is_better_and_the_heatmap_scale_is_reversed():
    qrels, a, b = many_queries(40)
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(3,), metrics=("first_rel_rank", "ndcg"))),
                            W.Blob.of("q.txt", qrels))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("a.trec", a), name="a")
    ws, _ = W.add_ranked_run(ws, W.Blob.of("b.trec", b), name="b")
    doms = "query_id,domain\n" + "".join(f"q{i:05d},{'bio' if i % 2 else 'med'}\n" for i in range(40))
    ws = replace(ws, domain_blob=W.Blob.of("dom.csv", doms.encode()))
    at = start(ws, "domains")
    for metric, lower in (("ndcg", False), ("first_rel_rank", True)):
        at.selectbox(key="w_domains_sel_metric").select(metric).run()
        assert not at.exception
        bars, heat = figures(at)[:2]
        assert _title(bars["layout"]["yaxis"]["title"]).endswith(LOWER) is lower
        (trace,) = heat["data"]
        assert _title(trace["colorbar"]["title"]).endswith(LOWER) is lower
        assert bool(trace.get("reversescale", False)) is lower
        captions = [unescape(c.value) for c in at.caption]
        assert any("a negative run − baseline means the run is better" in c for c in captions) is lower
        assert any("the brightest cell is the best" in c for c in captions) is lower


def test_the_versions_curves_say_lower_is_better():
    ws, _ = fixture()
    ws = replace(ws, settings=replace(ws.settings, metrics=("first_rel_rank", "ndcg")))
    at = start(ws, "versions")
    at.selectbox(key="w_versions_sel_metric").select("first_rel_rank").run()
    assert not at.exception
    assert _title(figures(at)[0]["layout"]["yaxis"]["title"]).endswith(LOWER)
    frame = pd.DataFrame({"mean": [2.0, 1.5], "ci_low": 1.0, "ci_high": 3.0, "n": 10, "run": ["e1", "e2"]})
    fig = C.models_curves([("m", frame, ["v1", "v2"], [1.0, 2.0])], metric_label="first_rel_rank",
                          higher_is_better=False)
    assert fig.layout.yaxis.title.text == "first_rel_rank" + LOWER
    assert C.models_curves([("m", frame, ["v1", "v2"], [1.0, 2.0])], metric_label="ndcg").layout.yaxis.title.text \
        == "ndcg"

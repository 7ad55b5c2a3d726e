"""Versions: every model on one chart (a review: one model at a time, no way to see three students side by side)."""

from __future__ import annotations

import json

import numpy as np
from test_app import errors, goto, start
from test_app_measures import array
from test_app_versions import LABELS, MARKER, NAMES, STEPS, fixture

from dashboard import charts


def test_every_model_on_one_chart_gives_each_model_s_means_in_version_order():
    ws, files = fixture()
    at = goto(start(ws), "versions")
    assert not at.exception and not errors(at)
    assert len(at.get("plotly_chart")) == 1  # off at first
    at.toggle(key="ver_all_models").set_value(True).run()
    assert not at.exception and not errors(at)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    every = next(s for s in specs if len([t for t in s["data"] if t.get("mode") == "lines+markers"]) == 2)
    lines = {t["name"]: t for t in every["data"]}
    assert set(lines) == {"encoder", charts.ptext(MARKER)}
    # the labelled model has no steps: every model is drawn at its versions' positions 1, 2, ...
    assert array(lines["encoder"]["x"]) == [float(i) for i in range(1, len(STEPS) + 1)]
    assert array(lines[charts.ptext(MARKER)]["x"]) == [1.0, 2.0, 3.0]
    # the encoder's line is the single-model curve's means (in step order)
    at.selectbox(key="w_versions_sel_version_model").select("encoder").run()
    single = next(t for s in (json.loads(c.proto.spec) for c in at.get("plotly_chart")) for t in s["data"]
                  if t.get("mode") == "lines+markers" and t["name"] == "encoder"
                  and array(t["x"]) == [float(x) for x in STEPS])
    np.testing.assert_allclose(array(lines["encoder"]["y"]), array(single["y"]), rtol=0, atol=0)
    order = [NAMES[i] for i in np.argsort(STEPS)]
    assert [c[1] for c in lines["encoder"]["customdata"]] == order
    assert [c[0] for c in lines[charts.ptext(MARKER)]["customdata"]][-1] == sorted(
        LABELS, key=lambda v: int(v[1:]))[-1]  # natural order: v1, v2, v10


def test_models_curves_use_steps_when_every_model_has_them():
    import pandas as pd

    frame = pd.DataFrame({"mean": [0.1, 0.2], "ci_low": 0.0, "ci_high": 1.0, "n": 5, "run": ["a", "b"]})
    fig = charts.models_curves([("m1", frame, ["e1", "e2"], [1.0, 2.0]), ("m2", frame, ["e1", "e2"], [1.0, 3.0])],
                               metric_label="ndcg@10")
    assert [list(t.x) for t in fig.data] == [[1.0, 2.0], [1.0, 3.0]] and fig.layout.xaxis.title.text == "step"
    assert list(fig.layout.xaxis.tickvals) == [1.0, 2.0, 3.0]

"""Runs drawn as lines never look alike (dashboard.runstyles): beyond 50 runs the position-cycled colours, dashes and
markers repeated, so two checkpoints or two models of a big workspace were drawn identically. A model's versions now
run along one hue, light to dark in version order; runs without a model keep the categorical look."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard import charts as C
from dashboard.runstyles import (
    COMBOS,
    LOW_COVERAGE_DASH,
    MAX_SHADES,
    SCALES,
    model_styles,
    run_styles,
)


def _luminance(color: str) -> float:
    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _workspace(n_e5: int = 122, seed: int = 0) -> tuple[list[str], pd.DataFrame]:
    """122 checkpoints of e5 (named so that name order is not step order), bge x 6, gte x 4 (version labels only),
    two runs without a model; drawn in a shuffled order."""
    rows = [(f"e5-step{s}", "e5", None, float(s)) for s in range(1, n_e5 + 1)]
    rows += [(f"bge-{i}", "bge", None, float(i * 100)) for i in range(6)]
    rows += [(f"gte v{i}", "gte", f"v{i}", np.nan) for i in range(4)]
    rows += [("bm25", None, None, np.nan), ("splade", None, None, np.nan)]
    info = pd.DataFrame(rows, columns=["name", "model", "version", "step"])
    drawn = list(np.random.default_rng(seed).permutation(info["name"].to_numpy()))
    return drawn, info


def test_122_checkpoints_and_a_few_other_models_are_all_drawn_differently():
    drawn, info = _workspace()
    looks = run_styles(drawn, info)
    assert set(looks) == set(drawn)
    triples = [(s.color, s.dash, s.marker) for s in looks.values()]
    assert len(set(triples)) == len(triples) == 134
    # e5's checkpoints along its scale in step order: light to dark, never lighter again
    e5 = [looks[f"e5-step{s}"] for s in range(1, 123)]
    assert [s.shade for s in e5] == sorted(s.shade for s in e5) and e5[0].shade == 0 and e5[-1].shade == 1
    lum = [_luminance(s.color) for s in e5]
    assert all(a >= b for a, b in zip(lum, lum[1:], strict=False)) and lum[0] > lum[-1]
    assert len({s.color for s in e5}) == MAX_SHADES
    # neighbours differ in dash and marker too (their shades are close)
    assert all(a.dash != b.dash and a.marker != b.marker for a, b in zip(e5, e5[1:], strict=False))
    # one hue per model, the Versions page's order of the models (bge, e5, gte); the ends of the scale
    scale = {m: SCALES[i] for i, m in enumerate(["bge", "e5", "gte"])}
    assert (e5[0].color, e5[-1].color) == scale["e5"]
    for model, prefix in (("bge", "bge-"), ("gte", "gte v")):
        mine = [looks[n] for n in drawn if n.startswith(prefix)]
        assert {s.model for s in mine} == {model}
        assert {s.color for s in mine}.isdisjoint({s.color for s in e5})
    assert [looks[f"gte v{i}"].shade for i in range(4)] == sorted(looks[f"gte v{i}"].shade for i in range(4))
    # the hover names each run's model and place
    assert e5[2].note == "model e5, version 3 of 122 drawn" and looks["bm25"].note == "" and looks["bm25"].model is None


def test_up_to_the_documented_limit_no_two_runs_look_alike_and_flagged_runs_are_dotted():
    limit = MAX_SHADES * len(COMBOS)
    rows = [(f"m-{i}", "m", None, float(i)) for i in range(limit)] + [(f"r{i}", None, None, np.nan) for i in range(250)]
    info = pd.DataFrame(rows, columns=["name", "model", "version", "step"])
    names = list(info["name"])
    looks = run_styles(names, info)
    assert len({(s.color, s.dash, s.marker) for s in looks.values()}) == len(names)
    flagged = names[::7]
    dotted = run_styles(names, info, flagged=flagged)
    assert all(dotted[n].dash == LOW_COVERAGE_DASH for n in flagged)
    assert all(dotted[n].dash != LOW_COVERAGE_DASH for n in set(names) - set(flagged))
    assert len({(s.color, s.dash, s.marker) for s in dotted.values()}) == len(names)


def test_the_overview_curves_draw_each_checkpoint_with_its_own_look_and_name_it():
    drawn, info = _workspace()
    curve = pd.DataFrame([{"run": r, "k": k, "n": 50, "mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}
                          for r in drawn for k in (1, 10)])
    looks = run_styles(drawn, info)
    for fig in (C.curves(curve, metric_label="ndcg", runs=drawn, bands=False, styles=looks),
                C.pr_curves(curve.rename(columns={"k": "recall"}), runs=drawn, styles=looks)):
        seen = [(t.line.color, t.line.dash, t.marker.symbol) for t in fig.data]
        assert len(seen) == len(set(seen)) == len(drawn)
        assert [t.name for t in fig.data] == drawn  # the legend names each run
        e5 = next(t for t in fig.data if t.name == "e5-step7")
        assert "model e5, version 7 of 122 drawn" in e5.hovertemplate


def test_models_on_one_chart_take_their_versions_hue():
    models = [f"model{i}" for i in range(12)]
    looks = model_styles(models)
    assert len({(s.color, s.dash, s.marker) for s in looks.values()}) == 12
    drawn, info = _workspace()
    by_model = model_styles(["bge", "e5", "gte"])
    versions = run_styles(drawn, info)
    for m in ("bge", "e5", "gte"):  # the middle of the scale its versions run along
        light, dark = SCALES[["bge", "e5", "gte"].index(m)]
        mine = sorted((s for s in versions.values() if s.model == m), key=lambda s: s.shade)
        assert _luminance(mine[0].color) >= _luminance(by_model[m].color) >= _luminance(mine[-1].color)
    frame = pd.DataFrame({"run": ["a", "b"], "mean": [0.4, 0.5], "ci_low": [0.3, 0.4], "ci_high": [0.5, 0.6],
                          "n": [10, 10]})
    fig = C.models_curves([(m, frame, ["1", "2"], None) for m in ("bge", "e5", "gte")], metric_label="ndcg",
                          styles=by_model)
    assert [t.line.color for t in fig.data] == [by_model[m].color for m in ("bge", "e5", "gte")]


def test_the_overview_draws_a_model_s_checkpoints_along_its_scale():
    """The wiring: the Overview's curves take the runs' run info (models dense and e5, in that order)."""
    import json

    import test_app as T
    from test_app_store import python_workspace

    name, _ = python_workspace()  # bm25; dense (model dense); e5-ep5, e5-ep25 (model e5, steps 5 and 25)
    at = T.goto(T.open_app(name), "overview")
    spec = json.loads(next(c for c in at.get("plotly_chart") if c.key == "overview_curves").proto.spec)
    lines = {t["name"]: t for t in spec["data"] if t.get("mode") == "lines+markers"}
    light, dark = SCALES[1]
    assert (lines["e5-ep5"]["line"]["color"], lines["e5-ep25"]["line"]["color"]) == (light, dark)
    assert "model e5, version 2 of 2 drawn" in lines["e5-ep25"]["hovertemplate"]
    assert lines["bm25"]["line"]["color"] == C.PALETTE[0]  # no model: the categorical look

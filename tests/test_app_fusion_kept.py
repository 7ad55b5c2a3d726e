"""The Fusion page's weight search comes back after a reload or a restarted server without searching again (it
searched again: up to a minute at 20,000 queries), and searches again as soon as one of its inputs changed: its
result is kept with the page's selections (dashboard.persist.SEL_FUSION_SEARCH) under the key of its inputs."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import streamlit as st
import test_app as T
from test_app_store import python_workspace

from dashboard import analysis as A
from dashboard import persist as P
from dashboard import state as S
from evalcore import workspace as W
from evalcore.fusion_search import search_weights


@pytest.fixture
def searches(monkeypatch) -> list[tuple]:
    """Every call of the weight search (the engine's, under the dashboard's cache), recorded."""
    calls: list[tuple] = []
    real = W.search_fusion_weights

    def counted(*args, **kwargs):
        calls.append((sorted(args[2]), kwargs.get("seed")))
        return real(*args, **kwargs)

    monkeypatch.setattr(W, "search_fusion_weights", counted)
    A._c_weights.clear()
    return calls


def restart() -> None:
    """What a restarted server has lost: every Streamlit cache (sessions are new AppTests)."""
    st.cache_data.clear()
    st.cache_resource.clear()


def shown(at) -> list[str]:
    return [f"{m.label}={m.value}" for m in at.metric]


def test_a_restored_search_is_shown_without_searching_again_until_an_input_changes(searches):
    name, ws = python_workspace()
    at = T.goto(T.open_app(name), "fusion")
    at.multiselect(key="fu_runs").set_value(["bm25", "dense"]).run()
    at.toggle(key="fu_search").set_value(True).run()
    assert not at.exception and not T.errors(at)
    assert len(searches) == 1
    first = shown(at)
    assert any(s.startswith("tuned on") for s in first)
    best = next(d.value for d in at.dataframe if "value" in getattr(d.value, "columns", []))
    # a restarted server, a new session on the same URL: the same result, not searched again
    restart()
    again = T.goto(T.open_app(name), "fusion")
    assert not again.exception and not T.errors(again)
    assert again.toggle(key="fu_search").value is True
    assert shown(again) == first and len(searches) == 1
    pd.testing.assert_frame_equal(next(d.value for d in again.dataframe if "value" in getattr(d.value, "columns", [])),
                                  best)
    assert [c.key for c in again.get("plotly_chart")].count("fu_trials_chart") == 1
    # an option of the search changed: searched again (and that one kept in turn)
    again.number_input(key="fu_seed").set_value(7).run()
    assert not again.exception and len(searches) == 2 and searches[-1][1] == 7
    restart()
    T.goto(T.open_app(name), "fusion")
    assert len(searches) == 2
    # an input run re-recorded with other content (a new checkpoint under the same name): searched again
    ws.add_run("dense", T.csv_run(9), source_name="dense.csv", replace=True)
    restart()
    last = T.goto(T.open_app(name), "fusion")
    assert not last.exception and len(searches) == 3
    kept = ws.ui_state()[P.SEL_FUSION_SEARCH]  # kept in the workspace, with the runs it fused
    assert kept["runs"] == ["bm25", "dense"] and len(kept["values"]) == len(kept["trial_weights"][0])


@pytest.mark.filterwarnings("ignore:fusion weights tuned on the evaluated queries")
def test_a_search_record_reads_back_equal_through_json_and_only_under_its_key():
    rng = np.random.default_rng(3)
    qids = [f"q{i}" for i in range(12)]
    from evalcore import Qrels, Run

    gt = Qrels.from_dict({q: {f"d{i % 7}": 1, f"d{(i + 2) % 7}": 2} for i, q in enumerate(qids)})
    runs = {n: Run.from_dict({q: {f"d{j}": float(rng.random()) for j in range(7)} for q in qids}, name=n)
            for n in ("a", "b", "c")}
    for fraction in (None, 0.5):
        res = search_weights(gt, runs, metric="ndcg@5", strategy="random", n_trials=9, seed=1, tune_fraction=fraction)
        out = A._found(S.Outcome(res, None, ("a warning",)))
        record = json.loads(json.dumps(A.search_record("K", out), allow_nan=False))
        back = A.search_of_record(record, "K")
        assert back is not None and back.warnings == ("a warning",)
        pd.testing.assert_frame_equal(back.value.trials, res.trials)
        assert back.value.weights == res.weights and list(back.value.weights) == list(res.weights)
        assert back.value.value_tune == res.value_tune
        assert (math.isnan(back.value.value_test) if fraction is None else back.value.value_test == res.value_test)
        assert (back.value.n_tune, back.value.n_test) == (len(res.tune_queries), len(res.test_queries))
        assert A.search_of_record(record, "another key") is None
    assert A.search_of_record({"key": "K", "runs": ["a"]}, "K") is None  # not a whole record: searched again
    big = A.FoundWeights({"a": 1.0, "b": 0.0}, pd.DataFrame({"trial": np.arange(A.KEPT_SEARCH_NUMBERS)}), 1.0,
                         float("nan"), 3, 0)
    assert A.search_record("K", S.Outcome(big)) is None  # too big to keep: searched again after a restart

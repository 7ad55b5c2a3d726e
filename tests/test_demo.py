"""The built-in demo: deterministic, fast, and rich enough that every dashboard page says something."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.tables import plain_table
from evalcore import evaluate
from evalcore.aggregate import summarize
from evalcore.stats import compare, compare_by_domain
from evalcore.workspace.demo import DEMO_LABEL, DEMO_RUN_NAMES, FLIP_DOMAIN, make_demo

KS = [1, 3, 5, 10, 20, 50, 100]


@pytest.fixture(scope="module")
def demo():
    return make_demo(0)


@pytest.fixture(scope="module")
def ev(demo):
    return evaluate(demo.qrels, demo.runs, metrics=["ndcg", "recall", "mrr", "map"], k=KS)


def _frames_equal(a, b):
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def test_same_seed_same_data():
    a, b = make_demo(7), make_demo(7)
    _frames_equal(a.qrels, b.qrels)
    for name in DEMO_RUN_NAMES:
        _frames_equal(a.runs[name], b.runs[name])
    for name, emb in a.embeddings.items():
        np.testing.assert_array_equal(emb, b.embeddings[name])
    pd.testing.assert_frame_equal(a.metadata, b.metadata)


def test_other_seed_other_data():
    a, b = make_demo(1), make_demo(2)
    assert not a.qrels.to_frame().equals(b.qrels.to_frame())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_run_holds_equal_scores(seed):
    """The demo's runs rank by float64 cosines, so no two scores of a query are equal: the default tie
    rule trec re-orders nothing, and the first screen has no tie warning (float32 scores rounded to 6
    decimals tied 9-13 times per run)."""
    from evalcore.ranking import has_equal_scores
    from evalcore.workspace.demo_series import demo_series

    demo = make_demo(seed)
    runs = {**demo.runs, **demo_series(seed).runs}
    assert len(runs) == len(DEMO_RUN_NAMES) + 6
    assert [name for name, run in runs.items() if has_equal_scores(run)] == []


def test_shape_and_labels(demo):
    assert demo.label == DEMO_LABEL and "synthetic" in DEMO_LABEL.lower()
    assert len(demo.item_ids) == 2000
    assert demo.qrels.n_queries == 300
    assert len(set(demo.domains.values())) == 6
    assert set(demo.runs) == set(DEMO_RUN_NAMES)
    assert demo.embeddings["reference"].shape[1] == 256
    assert demo.embeddings["strong-128d"].shape[1] == 128
    assert demo.embeddings["weak-64d"].shape[1] == 64
    # graded ground truth: the reference's top 10, grades 10..1
    assert sorted(set(demo.qrels.grades.tolist())) == list(range(1, 11))
    assert (demo.qrels.n_relevant() == 10).all()
    # item-to-item: a query never retrieves itself; runs are 100 deep
    for run in demo.runs.values():
        frame = run.to_frame()
        assert not (frame["query_id"] == frame["doc_id"]).any()
        assert frame.groupby("query_id").size().eq(100).all()
    assert set(demo.metadata.columns) >= {"doc_id", "title", "text"}


def test_curves_separate(ev):
    s = summarize(ev.table)
    mean = s.set_index(["run", "metric", "k"])["mean"]
    for k in (1, 5, 10, 20):
        assert mean[("strong-128d", "ndcg", k)] > mean[("weak-64d", "ndcg", k)] > mean[("lexical", "ndcg", k)]
    # recall grows with k for every run
    for run in DEMO_RUN_NAMES:
        vals = [mean[(run, "recall", k)] for k in KS]
        assert vals == sorted(vals)


def test_some_differences_significant_some_not(ev):
    sig = []
    for metric, k in [("ndcg", 10), ("recall", 100), ("recall", 50), ("mrr", 100)]:
        c = compare(ev.table, metric=metric, k=k, n_resamples=500)
        sig.extend(c["significant"].tolist())
    assert any(sig) and not all(sig)


def test_a_domain_flips_the_overall_ranking(ev):
    t = plain_table(ev.table)
    overall = compare(t, metric="ndcg", k=10, runs=["weak-64d", "strong-128d"], n_resamples=500).iloc[0]
    assert overall["diff"] > 0 and overall["significant"]  # strong beats weak overall
    by_dom = compare_by_domain(t, metric="ndcg", k=10, baseline="weak-64d", runs=["strong-128d"],
                               n_resamples=500)
    flip = by_dom[by_dom["domain"] == FLIP_DOMAIN].iloc[0]
    assert flip["diff"] < 0 and flip["significant"]  # ...but weak wins in the flip domain
    # some domains are not significant, and one is too small to test
    assert (~by_dom["significant"]).sum() >= 2
    assert by_dom["note"].str.startswith("too small").any()

"""Seeded search of fusion weights (issue 11 item 8): grid, random, split, determinism, overfitting warning."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from test_fusion_methods import as_runs, random_dicts

from evalcore import Qrels, evaluate
from evalcore.errors import EvalcoreWarning, OptionError
from evalcore.fusion import fuse
from evalcore.fusion_search import OVERFIT_WARNING, search_weights, split_queries, weight_grid


def make_qrels(seed: int, n_queries: int = 25, n_docs: int = 40) -> Qrels:
    rng = np.random.default_rng(seed)
    judg = {}
    for q in range(n_queries):
        docs = rng.choice(n_docs, size=6, replace=False)
        judg[f"q{q}"] = {f"d{x}": int(rng.integers(0, 3)) for x in docs}
    return Qrels.from_dict(judg)


@pytest.fixture(scope="module")
def data():
    return make_qrels(1), as_runs(random_dicts(2, n_runs=3))


def test_grid_is_the_simplex_lattice():
    g = weight_grid(3, step=0.1)
    assert g.shape == (math.comb(12, 2), 3)  # 66 vectors
    assert np.allclose(g.sum(axis=1), 1.0)
    ints = np.rint(g * 10).astype(int)
    assert np.allclose(ints / 10, g) and len({tuple(r) for r in ints}) == len(g)
    assert [tuple(r) for r in ints] == sorted(tuple(r) for r in ints)  # ascending lexicographic
    with pytest.raises(OptionError, match="1/step"):
        weight_grid(3, step=0.3)
    with pytest.raises(OptionError, match="random strategy"):
        weight_grid(12, step=0.05)


def test_best_trial_is_the_evaluated_maximum(data):
    qrels, runs = data
    with pytest.warns(EvalcoreWarning, match="overfit"):
        res = search_weights(qrels, runs, metric="ndcg@5", method="rrf", strategy="grid", step=0.25)
    assert res.note == OVERFIT_WARNING and res.test_queries == () and math.isnan(res.value_test)
    assert len(res.trials) == math.comb(4 + 2, 2)
    # every trial's value is the mean nDCG@5 of the fused run under its weights, recomputed here
    weights = res.trials[["weight:r0", "weight:r1", "weight:r2"]].to_numpy()
    for w, value in zip(weights, res.trials["value"], strict=True):
        fused = fuse(runs, method="rrf", weights=w)
        expected = evaluate(qrels, {"f": fused}, metrics=["ndcg@5"], ties="docid_asc").table["value"].mean()
        assert math.isclose(value, expected, abs_tol=1e-15)
    best = res.trials["value"].max()
    first_best = int(res.trials.index[res.trials["value"] == best][0])
    assert res.trials["best"].sum() == 1 and bool(res.trials["best"].iloc[first_best])
    assert res.value_tune == best
    assert res.weights == {f"r{j}": res.trials[f"weight:r{j}"].iloc[first_best] for j in range(3)}


def test_search_is_deterministic_by_seed(data):
    qrels, runs = data
    kw = dict(metric="recall@10", method="wsum", norm="min-max", strategy="random", n_trials=12, tune_fraction=0.6)
    a = search_weights(qrels, runs, seed=5, **kw)
    b = search_weights(qrels, runs, seed=5, **kw)
    c = search_weights(qrels, runs, seed=6, **kw)
    assert a.trials.equals(b.trials) and a.weights == b.weights and a.tune_queries == b.tune_queries
    assert not np.allclose(a.trials.filter(like="weight:").to_numpy(), c.trials.filter(like="weight:").to_numpy())
    assert a.tune_queries != c.tune_queries
    assert np.allclose(a.trials.filter(like="weight:").sum(axis=1), 1.0)


def test_split_tunes_on_one_part_and_reports_on_the_other(data):
    qrels, runs = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalcoreWarning)  # no overfitting warning with a split
        res = search_weights(qrels, runs, metric="ndcg@10", method="rrf", step=0.5, tune_fraction=0.4, seed=3)
    tune, test = res.tune_queries, res.test_queries
    assert not set(tune) & set(test) and set(tune) | set(test) == set(qrels.query_ids)
    assert len(tune) == 10 and res.note == ""
    fused = fuse(runs, method="rrf", weights=list(res.weights.values()))
    per_q = evaluate(qrels, {"f": fused}, metrics=["ndcg@10"], ties="docid_asc").table.set_index("query_id")["value"]
    assert math.isclose(res.value_test, per_q.loc[list(test)].mean(), abs_tol=1e-15)
    assert math.isclose(res.value_tune, per_q.loc[list(tune)].mean(), abs_tol=1e-15)


def test_split_queries_is_seeded_and_order_free():
    ids = [f"q{i}" for i in range(10)]
    a = split_queries(ids, fraction=0.3, seed=1)
    assert a == split_queries(list(reversed(ids)), fraction=0.3, seed=1)
    assert len(a[0]) == 3 and len(a[1]) == 7
    assert split_queries(ids, fraction=0.01, seed=1)[0].__len__() == 1  # at least one query each side
    with pytest.raises(OptionError, match="tune_fraction"):
        split_queries(ids, fraction=1.0, seed=1)


def test_search_options_are_checked(data):
    qrels, runs = data
    with pytest.raises(OptionError, match="weights only act"):
        search_weights(qrels, runs, method="combmnz")
    with pytest.raises(OptionError, match="cutoff"):
        search_weights(qrels, runs, metric="ndcg")
    with pytest.raises(OptionError, match="strategy"):
        search_weights(qrels, runs, strategy="bayes")
    with pytest.raises(OptionError, match="two runs"):
        search_weights(qrels, runs[:1])


def test_with_a_split_every_trial_is_the_whole_fusion_read_on_the_tuning_queries(data):
    """Trials fuse the tuning queries only (Prepared.subset): each value is still the mean over the tuning
    queries of the whole fused run's values; progress is told after each trial."""
    qrels, runs = data
    seen = []
    res = search_weights(qrels, runs, metric="ndcg@10", method="wsum", norm="min-max", strategy="random", n_trials=6,
                         tune_fraction=0.5, seed=2, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 6) for i in range(1, 7)]
    tune = list(res.tune_queries)
    for _, trial in res.trials.iterrows():
        w = [trial[f"weight:r{j}"] for j in range(3)]
        fused = fuse(runs, method="wsum", norm="min-max", weights=w)
        per_q = evaluate(qrels, {"f": fused}, metrics=["ndcg@10"], ties="docid_asc").table.set_index("query_id")
        assert math.isclose(trial["value"], per_q.loc[tune, "value"].mean(), abs_tol=1e-15)


def test_seed_defaults_agree_across_library_cli_and_workspace():
    """The same search repeats everywhere: library, `evalcore fuse` and the workspace default to one seed."""
    import inspect

    from evalcore.cli import build_parser
    from evalcore.workspace.analysis import search_fusion_weights

    cli = build_parser().parse_args(["fuse", "--run", "a=x", "--out", "o"]).seed
    lib = inspect.signature(search_weights).parameters["seed"].default
    ws = inspect.signature(search_fusion_weights).parameters["seed"].default
    assert lib == ws == cli


def test_first_rel_rank_is_minimised_and_metrics_without_a_cutoff_are_searched_as_defined(data):
    """first_rel_rank: lower is better, so the best trial is the first with the lowest mean (it was the highest:
    the worst weights). bpref and gm_map take no cutoff: searched as they are; the counts are refused."""
    qrels, runs = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)  # (the overfitting note)
        frr = search_weights(qrels, runs, metric="first_rel_rank", step=0.25)
        assert not frr.higher_is_better and frr.metric == "first_rel_rank"
        values = frr.trials["value"]
        assert values.nunique() > 1  # the choice matters on these runs
        first_low = int(values.index[values == values.min()][0])
        assert bool(frr.trials["best"].iloc[first_low]) and frr.value_tune == values.min()
        weights = frr.trials[["weight:r0", "weight:r1", "weight:r2"]].to_numpy()[first_low]
        fused = fuse(runs, method="rrf", weights=weights)
        ranks = evaluate(qrels, {"f": fused}, metrics=["first_rel_rank"], ties="docid_asc").table["value"]
        assert math.isclose(frr.value_tune, float(np.nanmean(ranks)), abs_tol=1e-12)
        for metric in ("bpref", "gm_map", "rprec"):
            res = search_weights(qrels, runs, metric=metric, step=0.5)
            assert res.higher_is_better and res.value_tune == res.trials["value"].max()
    for metric in ("num_rel_ret", "judged@10", "num_ret"):
        with pytest.raises(OptionError, match="no better value"):
            search_weights(qrels, runs, metric=metric, step=0.5)
    with pytest.raises(OptionError, match="with its cutoff"):
        search_weights(qrels, runs, metric="ndcg", step=0.5)

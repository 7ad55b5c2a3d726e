"""Measure names: parse/print round trip, aliases, parameters, errors."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore import Qrels, Run, evaluate
from evalcore.errors import UnknownMeasureError
from evalcore.measures import Measure, expand_measures, parse_measure
from evalcore.metrics import K_FREE, METRICS

NO_REL = {"ndcg", "ndcg_exp"}  # nDCG uses raw grades: no (rel=N)


def canonical_names() -> list[str]:
    out = []
    for name in METRICS:
        bases = [name] + ([] if name in NO_REL else [f"{name}(rel=2)", f"{name}(rel=1)"])
        for b in bases:
            out.append(b)
            if name not in K_FREE:
                out += [f"{b}@1", f"{b}@10", f"{b}@1000"]
    return out


@pytest.mark.parametrize("text", canonical_names())
def test_canonical_names_round_trip(text):
    m = parse_measure(text)
    assert str(m) == text
    assert parse_measure(str(m)) == m


@pytest.mark.parametrize(("text", "expected"), [
    ("ndcg@10", Measure("ndcg", None, 10)),
    ("recall(rel=2)@5", Measure("recall", 2, 5)),
    ("rprec", Measure("rprec", None, None)),
    ("map", Measure("map", None, None)),
])
def test_parse_gives_fields(text, expected):
    assert parse_measure(text) == expected


@pytest.mark.parametrize(("alias", "canonical"), [
    ("P@5", "precision@5"),
    ("p@5", "precision@5"),
    ("P(rel=2)@5", "precision(rel=2)@5"),
    ("success@1", "hit_rate@1"),
    ("recip_rank", "mrr"),
    ("recip_rank@10", "mrr@10"),
    ("ndcg_cut@10", "ndcg@10"),
    ("nDCG@10", "ndcg@10"),
    ("map_cut@100", "map@100"),
    ("ndcg_burges@5", "ndcg_exp@5"),
    ("Rprec", "rprec"),
    ("R-precision", "rprec"),
    (" recall ( rel = 2 ) @ 5 ", "recall(rel=2)@5"),
])
def test_aliases(alias, canonical):
    assert str(parse_measure(alias)) == canonical


def test_k_free_measures_drop_the_cutoff():
    assert str(parse_measure("rprec@5")) == "rprec"
    assert parse_measure("first_rel_rank@3").k is None


@pytest.mark.parametrize("bad", ["foo", "foo@3", "ndcg@", "@5", "precision@x", "recall@5@5"])
def test_unknown_or_malformed_names_list_supported_measures(bad):
    with pytest.raises(UnknownMeasureError) as ei:
        parse_measure(bad)
    msg = str(ei.value)
    assert repr(bad) in msg
    for name in METRICS:
        assert name in msg
    assert isinstance(ei.value, ValueError)


@pytest.mark.parametrize("bad", ["ndcg(rel=2)@10", "ndcg_exp(rel=1)", "recall(foo=1)@5", "recall(rel=x)@5",
                                 "recall(rel)@5", "recall@0", "ndcg((rel=1)"])
def test_bad_parameters_and_cutoffs(bad):
    with pytest.raises(UnknownMeasureError):
        parse_measure(bad)


def test_evaluate_rejects_unknown_measure_with_the_list():
    q = Qrels.from_dict({"q": {"a": 1}})
    r = Run.from_dict({"q": {"a": 1.0}})
    with pytest.raises(UnknownMeasureError) as ei:
        evaluate(q, r, metrics=["ndcg@10", "bleu@4"])
    assert "bleu" in str(ei.value) and "ndcg" in str(ei.value) and "recall" in str(ei.value)


def test_expand_measures_gives_each_k_and_deduplicates():
    got = [str(m) for m in expand_measures(["ndcg", "P@5", "precision@5", "rprec", "recall(rel=2)"], [5, 10])]
    assert got == ["ndcg@5", "ndcg@10", "precision@5", "rprec", "recall(rel=2)@5", "recall(rel=2)@10"]
    with pytest.raises(UnknownMeasureError):
        expand_measures(["ndcg"], [])


# ---------------------------------------------------------------------------- (rel=N) vs rel_threshold
def _data():
    rng = np.random.default_rng(5)
    qrels, run = {}, {}
    for i in range(80):
        docs = [f"d{j}" for j in range(40)]
        qrels[f"q{i}"] = {d: int(g) for d, g in zip(docs, rng.integers(-1, 4, size=40), strict=True)}
        run[f"q{i}"] = {d: float(s) for d, s in zip(docs, rng.integers(0, 5, size=40), strict=True)}
    return Qrels.from_dict(qrels), Run.from_dict(run)


BINARY = sorted(set(METRICS) - NO_REL)


@pytest.mark.parametrize("metric", BINARY)
def test_rel_parameter_equals_rel_threshold(metric):
    q, r = _data()
    a = evaluate(q, r, metrics=[f"{metric}(rel=2)"], k=[1, 5, 20]).table
    b = evaluate(q, r, metrics=[metric], k=[1, 5, 20], rel_threshold=2).table
    c = evaluate(q, r, metrics=[metric], k=[1, 5, 20], rel_threshold=1).table
    assert set(a["metric"].astype(str)) == {f"{metric}(rel=2)"}
    np.testing.assert_array_equal(a["value"].to_numpy(), b["value"].to_numpy())
    np.testing.assert_array_equal(a["k"].to_numpy(), b["k"].to_numpy())
    # the parameter really changes something (grade-1 documents stop counting)
    assert not np.array_equal(a["value"].to_numpy(), c["value"].to_numpy(), equal_nan=True)


def test_rel_parameter_overrides_the_global_threshold_per_measure():
    q, r = _data()
    t = evaluate(q, r, metrics=["recall(rel=2)@10", "recall@10"], rel_threshold=3).table
    rel2 = evaluate(q, r, metrics=["recall@10"], rel_threshold=2).table["value"].to_numpy()
    rel3 = evaluate(q, r, metrics=["recall@10"], rel_threshold=3).table["value"].to_numpy()
    np.testing.assert_array_equal(t[t["metric"] == "recall(rel=2)"]["value"].to_numpy(), rel2)
    np.testing.assert_array_equal(t[t["metric"] == "recall"]["value"].to_numpy(), rel3)

"""``Qrels.from_records(..., extra_queries=...)``: queries without judgments, added in linear work.

Before, the set of the judged queries was rebuilt once per extra query (``set(qs.tolist())`` inside the
comprehension): ``from_dict`` with many empty queries over large judgments did quadratic work. Now it is built
once; the result (order, duplicates, queries both judged and extra) is unchanged.
"""

from __future__ import annotations

import builtins

import numpy as np

import evalcore.data
from evalcore import Qrels


def test_extra_queries_follow_the_judged_ones_in_order_once_each():
    q = Qrels.from_records(["b", "a", "b"], ["d1", "d2", "d3"], [1, 0, 2], extra_queries=["c", "a", "c", "e", "b"])
    # judged queries in order of first appearance, then the extra ones not judged, in the order given, once each
    assert q.query_ids.tolist() == ["b", "a", "c", "e"]
    assert q.n_relevant(1).tolist() == [2, 0, 0, 0]
    assert q.to_dict() == {"b": {"d1": 1, "d3": 2}, "a": {"d2": 0}, "c": {}, "e": {}}
    d = Qrels.from_dict({"x": {"d1": 1}, "y": {}, "z": {}})  # from_dict's empty queries are extra queries
    assert d.query_ids.tolist() == ["x", "y", "z"] and d.n_relevant(1).tolist() == [1, 0, 0]
    only = Qrels.from_records([], [], np.array([], dtype=int), extra_queries=[3, "3", "4"])  # ids as text
    assert only.query_ids.tolist() == ["3", "4"]


def test_many_extra_queries_build_the_judged_set_once(monkeypatch):
    """Counted through a wrapper of ``set`` as evalcore.data sees it: the same count for 5 or 5,000 extra queries
    (before: one more set of the judged queries per extra query)."""
    calls = []

    def counting_set(*args):
        calls.append(1)
        return builtins.set(*args)

    monkeypatch.setattr(evalcore.data, "set", counting_set, raising=False)
    judged = [f"q{i}" for i in range(50)]

    def build(n_extra: int) -> tuple[int, Qrels]:
        calls.clear()
        q = Qrels.from_records(judged, ["d"] * len(judged), [1] * len(judged),
                               extra_queries=[f"e{i}" for i in range(n_extra)] + judged[:3])
        return len(calls), q

    few, small = build(5)
    many, big = build(5000)
    assert many == few <= 2, (few, many)
    assert len(small.query_ids) == 55 and len(big.query_ids) == 5050
    assert big.query_ids.tolist()[:50] == judged and big.query_ids.tolist()[-1] == "e4999"

"""The views behind the Compare, Queries and Domains pages (dashboard.drilldown), on hand-checked data."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from dashboard.drilldown import (
    DIFF_COLUMN,
    against_baseline,
    compare_matrix,
    domain_flips,
    domain_frame,
    domain_sizes,
    filter_queries,
    format_p_value,
    hit_mark,
    pair_frame,
    placement_text,
    query_table,
    query_view,
)
from evalcore import Qrels, Run, evaluate
from evalcore.aggregate import summarize
from evalcore.errors import OptionError
from evalcore.stats import compare


@pytest.fixture()
def data():
    qrels = Qrels.from_dict(
        {"q1": {"a": 3, "b": 1, "z": 0}, "q2": {"c": 2}, "q3": {"d": 1}},
        domains={"q1": "bio", "q2": "bio", "q3": "phys"},
    )
    # A finds a at 1 and b at 3; B finds b first, a not at all (depth 3)
    run_a = Run.from_dict({"q1": {"a": 0.9, "x": 0.8, "b": 0.7, "y": 0.1}, "q2": {"c": 0.5}, "q3": {"e": 1.0}},
                          name="A")
    run_b = Run.from_dict({"q1": {"b": 0.9, "z": 0.8, "x": 0.7}, "q2": {"e": 0.5, "c": 0.4}}, name="B")
    runs = {"A": run_a, "B": run_b}
    ev = evaluate(qrels, runs, metrics=["ndcg", "recall"], k=[1, 2, 10])
    return qrels, runs, ev


def test_query_table_and_difference(data):
    qrels, runs, ev = data
    qt = query_table(ev.table, metric="recall", k=10, run_a="A", run_b="B")
    assert list(qt.columns) == ["query_id", "domain", "A", "B", DIFF_COLUMN]
    row = qt.set_index("query_id")
    assert row.loc["q1", "A"] == 1.0 and row.loc["q1", "B"] == 0.5
    assert row.loc["q1", DIFF_COLUMN] == -0.5
    assert row.loc["q3", "B"] == 0.0  # q3 absent from B: scored 0 (trec_eval -c)
    assert row.loc["q3", "domain"] == "phys"
    # the values are exactly the per-query table's
    t = ev.table
    sel = t[(t["run"] == "A") & (t["metric"] == "recall") & (t["k"] == 10)]
    assert dict(zip(sel["query_id"].astype(str), sel["value"], strict=True)) == row["A"].to_dict()


def test_filter_and_sort(data):
    _, _, ev = data
    qt = query_table(ev.table, metric="recall", k=10, run_a="A", run_b="B")
    worst = filter_queries(qt, sort_by=DIFF_COLUMN, ascending=True)
    assert worst["query_id"].tolist()[0] in ("q1", "q3")
    assert worst[DIFF_COLUMN].is_monotonic_increasing
    assert filter_queries(qt, domains=["phys"])["query_id"].tolist() == ["q3"]
    assert filter_queries(qt, search="Q2")["query_id"].tolist() == ["q2"]  # case-insensitive
    assert filter_queries(qt, search="[")["query_id"].tolist() == []  # not a regex
    with pytest.raises(OptionError):
        filter_queries(qt, sort_by="nope")


def test_query_view_ground_truth_and_placements(data):
    qrels, runs, _ = data
    meta = pd.DataFrame({"doc_id": ["a", "b"], "title": ["Alpha *bold*", "Beta"], "text": ["", ""]})
    v = query_view(qrels, runs, "q1", k=2, ties="trec", rel_threshold=1, metadata=meta)
    gt = v.ground_truth
    assert gt["label"].tolist() == ["g1", "g2", "g3"]
    assert gt["doc_id"].tolist() == ["a", "b", "z"]  # best grade first
    assert gt["grade"].tolist() == [3, 1, 0]
    assert gt["relevant"].tolist() == [True, True, False]
    assert gt["title"].tolist() == ["Alpha *bold*", "Beta", ""]  # plain text, untouched
    assert gt["placed by A"].tolist() == ["g1 at rank 1", "g2 at rank 3", "g3 not in top 4"]
    assert gt["placed by B"].tolist() == ["g1 not in top 3", "g2 at rank 1", "g3 at rank 2"]
    assert gt["rank: A"].tolist()[:2] == [1, 3]
    assert v.depth == {"A": 4, "B": 3}
    la = v.lists["A"]
    assert la["rank"].tolist() == [1, 2] and la["doc_id"].tolist() == ["a", "x"]
    assert la["hit"].tolist() == ["✔ grade 3", ""]
    assert la["label"].tolist() == ["g1", ""]
    lb = v.lists["B"]
    assert lb["hit"].tolist() == ["✔ grade 1", "✗ grade 0"]
    assert v.domain == "bio"


def test_query_view_follows_tie_rule():
    qrels = Qrels.from_dict({"q": {"b": 1}})
    run = Run.from_dict({"q": {"a": 1.0, "b": 1.0, "c": 1.0}}, name="R")
    trec = query_view(qrels, {"R": run}, "q", k=3, ties="trec")
    asc = query_view(qrels, {"R": run}, "q", k=3, ties="docid_asc")
    assert trec.lists["R"]["doc_id"].tolist() == ["c", "b", "a"]
    assert asc.lists["R"]["doc_id"].tolist() == ["a", "b", "c"]
    # the rank shown is the rank the metrics use
    ev = evaluate(qrels, run, metrics=["mrr"], k=[3], ties="trec")
    assert ev.table["value"].iloc[0] == pytest.approx(1 / 2)
    assert trec.ground_truth["rank: R"].tolist() == [2]


def test_only_in(data):
    qrels, runs, _ = data
    v = query_view(qrels, runs, "q1", k=3)
    a_not_b = v.only_in("A", "B")
    assert a_not_b["doc_id"].tolist() == ["a"]
    b_not_a = v.only_in("B", "A")
    assert b_not_a["doc_id"].tolist() == ["z"]
    assert b_not_a["rank: A"].isna().all()  # z is not in A's list at all


def test_query_view_unknown_query_and_absent_run(data):
    qrels, runs, _ = data
    with pytest.raises(OptionError):
        query_view(qrels, runs, "nope", k=2)
    v = query_view(qrels, runs, "q3", k=2)  # absent from B
    assert v.depth["B"] == 0 and v.lists["B"].empty
    assert v.ground_truth["placed by B"].tolist() == ["g1 not retrieved (query absent from the run)"]


def test_marks_and_texts():
    assert hit_mark(None) == "" and hit_mark(np.nan) == ""
    assert hit_mark(2, 2) == "✔ grade 2" and hit_mark(1, 2) == "✗ grade 1"
    assert placement_text("g1", 37, 100) == "g1 at rank 37"
    assert placement_text("g4", None, 100) == "g4 not in top 100"


def test_pair_frame_and_matrix(data):
    _, _, ev = data
    pf = pair_frame(ev.table, metric="recall", k=10, run_a="A", run_b="B")
    assert list(pf.columns) == ["query_id", "domain", "a", "b", DIFF_COLUMN]
    assert (pf[DIFF_COLUMN] == pf["b"] - pf["a"]).all()
    cmp = compare(ev.table, metric="recall", k=10, n_resamples=200)
    m = compare_matrix(cmp, ["A", "B"])
    row = cmp.iloc[0]
    assert row["run_a"] == "A" and row["run_b"] == "B"
    assert m["diff"].loc["B", "A"] == pytest.approx(row["diff"])  # row − column
    assert m["diff"].loc["A", "B"] == pytest.approx(-row["diff"])
    assert np.isnan(m["diff"].loc["A", "A"])
    assert m["p_adjusted"].loc["A", "B"] == m["p_adjusted"].loc["B", "A"]
    assert m["text"].loc["A", "A"] == ""
    assert re.match(re.escape(f"{row['diff']:+.3f}") + r"\np(=0\.0*[1-9]\d{0,3}|=1|<0\.001)( \*)?$", m["text"].loc["B", "A"])
    assert "e-" not in "".join(m["text"].to_numpy().ravel())


def test_format_p_value():
    cases = {0.387: "0.387", 0.38700001: "0.387", 0.04996: "0.04996", 0.049624: "0.04962", 1.0: "1",
             0.5: "0.5", 0.001: "0.001", 0.00099: "<0.001", 3.9e-21: "<0.001", 0.0: "<0.001"}
    for p, text in cases.items():
        assert format_p_value(p) == text, p
    assert format_p_value(None) == format_p_value(np.nan) == format_p_value(pd.NA) == "–"
    assert format_p_value(np.nan, missing="") == ""
    assert format_p_value(0.004, threshold=0.01) == "<0.01"
    assert format_p_value(0.123456, digits=2) == "0.12"


def test_domain_views(data):
    _, _, ev = data
    d = domain_frame(ev.table, metric="recall", k=10)
    ref = summarize(ev.table.assign(domain=ev.table["domain"].astype(str)), by=("run", "domain", "metric", "k"))
    ref = ref[(ref["metric"] == "recall") & (ref["k"] == 10)]
    assert sorted(d["mean"].round(12)) == sorted(ref["mean"].round(12))
    sizes = domain_sizes(ev.table)
    assert sizes.set_index("domain")["n_queries"].to_dict() == {"bio": 2, "phys": 1}


def test_against_baseline_orients_every_row():
    cmp = pd.DataFrame([
        {"run_a": "A", "run_b": "B", "mean_a": 0.5, "mean_b": 0.7, "diff": 0.2, "ci_low": 0.1, "ci_high": 0.3,
         "effect_size": 1.5, "p_value": 0.01, "p_adjusted": 0.02, "significant": True, "wins": 7, "ties": 1,
         "losses": 2, "n": 10, "note": ""},
        {"run_a": "B", "run_b": "C", "mean_a": 0.7, "mean_b": 0.6, "diff": -0.1, "ci_low": -0.2, "ci_high": 0.05,
         "effect_size": -0.5, "p_value": 0.2, "p_adjusted": 0.2, "significant": False, "wins": 3, "ties": 0,
         "losses": 7, "n": 10, "note": ""},
        {"run_a": "A", "run_b": "C", "mean_a": 0.5, "mean_b": 0.6, "diff": 0.1, "ci_low": 0.0, "ci_high": 0.2,
         "effect_size": 0.4, "p_value": 0.1, "p_adjusted": 0.2, "significant": False, "wins": 5, "ties": 0,
         "losses": 5, "n": 10, "note": ""},
    ])
    v = against_baseline(cmp, "B").set_index("run")
    assert list(v.index) == ["A", "C"]
    a = v.loc["A"]  # compare said B − A = +0.2: A − B = −0.2, CI [−0.3, −0.1], wins/losses swapped
    assert (a["difference"], a["ci_low"], a["ci_high"], a["effect_size"]) == (-0.2, -0.3, -0.1, -1.5)
    assert (a["mean"], a["baseline mean"], a["wins"], a["losses"], a["ties"]) == (0.5, 0.7, 2, 7, 1)
    c = v.loc["C"]  # compare said C − B = −0.1: kept as is
    assert (c["difference"], c["ci_low"], c["ci_high"], c["wins"], c["losses"]) == (-0.1, -0.2, 0.05, 3, 7)
    assert bool(a["significant"]) and not bool(c["significant"])


def test_domain_flips():
    overall = pd.DataFrame([{"run_a": "base", "run_b": "x", "mean_a": 0.5, "mean_b": 0.6, "diff": 0.1,
                             "ci_low": 0.0, "ci_high": 0.2, "effect_size": 0.3, "p_value": 0.01, "p_adjusted": 0.01,
                             "significant": True, "wins": 1, "ties": 0, "losses": 0, "n": 9, "note": ""}])
    by_dom = pd.DataFrame([
        {"domain": "bio", "run_a": "base", "run_b": "x", "diff": -0.2, "significant": True},
        {"domain": "phys", "run_a": "base", "run_b": "x", "diff": -0.3, "significant": False},
        {"domain": "chem", "run_a": "base", "run_b": "x", "diff": 0.4, "significant": True},
    ])
    f = domain_flips(overall, by_dom, "base")
    assert f.to_dict("records") == [{"run": "x", "domain": "bio", "overall difference": 0.1,
                                     "domain difference": -0.2}]

"""Names of the measures of issue #11: canonical forms, parameters, trec_eval's names, errors.

Every canonical name prints as it parses; parameters equal to their default
are left out of it; trec_eval's names (item 7 of the issue) print as evalcore's;
``hits`` changed meaning and says so each time it is typed.
"""

from __future__ import annotations

import re
import warnings

import pytest

from evalcore import Qrels, Run, evaluate
from evalcore.errors import EvalcoreWarning, OptionError, UnknownMeasureError
from evalcore.measures import HITS_RENAMED, Measure, expand_measures, parse_measure, parse_measures


def quiet_parse(text: str) -> Measure:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        return parse_measure(text)


@pytest.mark.parametrize("text", [
    "hits@5", "hits(rel=2)@10", "f1@3", "dcg@10", "dcg_exp(rel=2)@5", "err@20", "err(max_grade=3)@10",
    "err(rel=2,max_grade=6)@5", "judged@10", "num_ret", "num_rel(rel=2)", "num_rel_ret", "num_q",
    "set_precision", "set_recall(rel=3)", "set_f", "set_f(beta=0.5)", "set_f(rel=2,beta=2)", "bpref",
    "infap", "gm_map", "11pt_avg", "iprec_at_recall", "iprec_at_recall(recall=0.1)",
    "iprec_at_recall(rel=2,recall=0.35)", "rbp", "rbp(p=0.95)", "rbp(rel=2,p=0.5)", "rbp_residual(p=0.9)",
    "ndcg(gains=2:3)@10", "ndcg(gains=0:1,1:2.5,4:0)@5", "map@all", "ndcg@all", "mrr@all", "hits@all",
    "recall(rel=2)@all", "judged@all",
])
def test_canonical_names_round_trip(text):
    m = quiet_parse(text)
    assert str(m) == text
    assert quiet_parse(str(m)) == m


@pytest.mark.parametrize(("text", "canonical"), [
    ("rbp(p=0.8)", "rbp"),  # a parameter equal to its default is left out
    ("RBP(P=0.80)", "rbp"),
    ("set_F(beta=1.0)", "set_f"),
    ("err(max_grade=4)@10", "err@10"),
    ("ndcg(gains=0:0,1:1,2:3)@10", "ndcg(gains=2:3)@10"),  # the brief's example: a gain equal to its grade too
    ("ndcg(gains=2:3, 0:0)@10", "ndcg(gains=2:3)@10"),
    ("ndcg(gains=1=3,2=9)@5", "ndcg(gains=1:3,2:9)@5"),  # trec_eval's '=' pairs
    ("ndcg(gains=1:1,2:2)@5", "ndcg@5"),
    ("iprec_at_recall(recall=0.10)", "iprec_at_recall(recall=0.1)"),
    ("iprec_at_recall(recall=1.0)", "iprec_at_recall(recall=1)"),
    ("rbp(p=0.95,rel=2)", "rbp(rel=2,p=0.95)"),  # canonical order: rel first
    ("dcg_burges@3", "dcg_exp@3"),
    ("rank_biased_precision(p=0.9)", "rbp(p=0.9)"),
    ("infAP", "infap"),
    ("gm_ap", "gm_map"),
    ("bpref@10", "bpref"),  # k-free measures drop a cutoff
    ("rprec@all", "rprec"),
    ("MAP@ALL", "map@all"),
])
def test_spellings_print_canonically(text, canonical):
    assert str(quiet_parse(text)) == canonical


# item 7 of the issue: what a trec_eval user types
@pytest.mark.parametrize(("trec", "canonical"), [
    ("P_5", ["precision@5"]),
    ("P.5,10", ["precision@5", "precision@10"]),
    ("ndcg_cut_10", ["ndcg@10"]),
    ("ndcg_cut.5,10", ["ndcg@5", "ndcg@10"]),
    ("map_cut_100", ["map@100"]),
    ("recall_1000", ["recall@1000"]),
    ("recall.5,1000", ["recall@5", "recall@1000"]),
    ("success_1", ["hit_rate@1"]),
    ("iprec_at_recall_0.10", ["iprec_at_recall(recall=0.1)"]),
    ("iprec_at_recall_1.00", ["iprec_at_recall(recall=1)"]),
    ("iprec_at_recall.0.2,.5", ["iprec_at_recall(recall=0.2)", "iprec_at_recall(recall=0.5)"]),
    ("num_rel_ret", ["num_rel_ret"]),
    ("num_q", ["num_q"]),
    ("set_F", ["set_f"]),
    ("set_F.0.5", ["set_f(beta=0.5)"]),
    ("set_P", ["set_precision"]),
    ("set_recall", ["set_recall"]),
    ("infAP", ["infap"]),
    ("Rprec", ["rprec"]),
    ("rbp_resid", ["rbp_residual(p=0.9)"]),  # trec_eval's default p
    ("ndcg.1=3,2=9,4=4.5", ["ndcg(gains=1:3,2:9,4:4.5)@all"]),
    ("ndcg_1=3,2=9,4=4.5", ["ndcg(gains=1:3,2:9,4:4.5)@all"]),  # as trec_eval prints it
])
def test_trec_eval_names(trec, canonical):
    got = parse_measures(trec)
    assert [str(m) for m in got] == canonical
    if len(got) == 1:
        assert parse_measure(trec) == got[0]


def test_trec_eval_groups():
    official = [str(m) for m in parse_measures("official")]
    assert official[:9] == ["num_q", "num_ret", "num_rel", "num_rel_ret", "map@all", "gm_map", "rprec", "bpref",
                            "mrr@all"]
    assert len(official) == 9 + 11 + 9 and official[-1] == "precision@1000"
    with pytest.warns(EvalcoreWarning, match="all_trec also holds .*utility") as rec:
        all_trec = [str(m) for m in parse_measures("all_trec")]
    assert len(rec) == 1
    assert set(official) < set(all_trec)
    assert {"infap", "11pt_avg", "ndcg@all", "set_f", "rbp_residual(p=0.9)", "hit_rate@10", "ndcg@1000",
            "map@5", "recall@30"} <= set(all_trec)
    assert len(all_trec) == len(set(all_trec))
    with pytest.raises(UnknownMeasureError, match="names 29 measures"):
        parse_measure("official")
    # a group in evaluate's metrics
    ev = evaluate(Qrels.from_dict({"q": {"a": 1, "b": 0}}), Run.from_dict({"q": {"a": 1.0, "b": 2.0}}),
                  metrics=["official"], k=[10])
    assert len(ev.table) == 29


@pytest.mark.parametrize("group", ["all_trec", "set"])
def test_the_group_warning_points_at_a_table_that_exists(group):
    # the warning sends the user to a Python name: it must import and list what was left out
    with pytest.warns(EvalcoreWarning) as rec:
        parse_measures(group)
    text = str(rec[0].message)
    where = re.search(r"see ([\w.]+)\.(\w+)\)", text)
    assert where, text
    import importlib

    table = getattr(importlib.import_module(where.group(1)), where.group(2))
    left_out = re.search(r"also holds (.*), which", text).group(1).split(", ")
    assert set(left_out) <= set(table)


@pytest.mark.parametrize(("trec", "why"), [
    ("unj_5", "judged@k"), ("Rprec_mult_0.20", "not computed"), ("utility", "not computed"),
    ("relstring", "string"), ("runid", "name"), ("set_map", "not computed"), ("gm_bpref", "not computed"),
])
def test_trec_eval_names_evalcore_does_not_compute_say_so(trec, why):
    with pytest.raises(UnknownMeasureError, match=why):
        parse_measures(trec)


# ---------------------------------------------------------------------------- hits
def test_typing_hits_warns_once_naming_the_change():
    for text in ("hits@5", "HITS@10", "hits(rel=2)@3", "hits@all"):
        with pytest.warns(EvalcoreWarning) as rec:
            m = parse_measure(text)
        assert len(rec) == 1 and str(rec[0].message) == HITS_RENAMED
        assert "hit_rate" in HITS_RENAMED and "\n" not in HITS_RENAMED
        assert m.name == "hits"


@pytest.mark.parametrize("text", ["hit_rate@5", "success@5", "success_1", "hitrate@3", "num_rel_ret", "P@5"])
def test_hit_rate_and_other_names_do_not_warn(text):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = parse_measures(text)[0]
    assert m.name != "hits"


def test_hits_is_a_count_and_hit_rate_stays_a_rate():
    q = Qrels.from_dict({"q": {"a": 1, "b": 1, "c": 0}})
    r = Run.from_dict({"q": {"a": 3.0, "c": 2.0, "b": 1.0}})
    with pytest.warns(EvalcoreWarning):
        t = evaluate(q, r, metrics=["hits", "hit_rate", "success"], k=[1, 3]).table
    v = {(m, k): x for m, k, x in zip(t["metric"].astype(str), t["k"], t["value"], strict=True)}
    assert v[("hits", 1)] == 1 and v[("hits", 3)] == 2
    assert v[("hit_rate", 1)] == 1 and v[("hit_rate", 3)] == 1


# ---------------------------------------------------------------------------- families and expansion
def test_iprec_at_recall_without_a_level_is_the_eleven_levels():
    got = [str(m) for m in expand_measures(["iprec_at_recall(rel=2)"], [10])]
    assert got == [f"iprec_at_recall(rel=2,recall={x})" for x in
                   ("0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1")]


def test_at_all_is_k_zero_in_the_table():
    q = Qrels.from_dict({"q": {"a": 1, "b": 1}})
    r = Run.from_dict({"q": {f"d{i}": float(100 - i) for i in range(30)} | {"b": 0.5}})
    t = evaluate(q, r, metrics=["map@all", "recall@all", "map"], k=[10]).table
    assert sorted(zip(t["metric"].astype(str), t["k"], strict=True)) == [("map", 0), ("map", 10), ("recall", 0)]
    rec = t[(t["metric"] == "recall") & (t["k"] == 0)]["value"].item()
    assert rec == 0.5  # b at rank 31: beyond every k given, inside the whole list


def test_measure_fields_and_keyword_arguments():
    m = parse_measure("rbp(rel=2,p=0.95)")
    assert (m.name, m.rel, m.k, m.params) == ("rbp", 2, None, (("p", 0.95),))
    assert m.kwargs == {"p": 0.95} and m.param("p") == 0.95
    assert parse_measure("rbp").param("p") == 0.8 and parse_measure("rbp").kwargs == {}
    assert parse_measure("ndcg(gains=2:3)@5").kwargs == {"gains": ((2, 3.0),)}
    assert parse_measure("map@all") == Measure("map", None, 0)


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize(("bad", "match"), [
    ("precision@all", "set_precision"), ("f1@all", "set_f"),
    ("rbp(p=1)", r"in \(0, 1\)"), ("rbp(p=0)", r"in \(0, 1\)"), ("rbp(p=x)", "number"),
    ("set_f(beta=-1)", ">= 0"), ("err(max_grade=0)@5", ">= 1"), ("iprec_at_recall(recall=1.5)", r"\[0, 1\]"),
    ("ndcg(gains=1:-2)@5", ">= 0"), ("ndcg(gains=-1:3)@5", ">= 0"), ("ndcg(gains=1:2,1:3)@5", "twice"),
    ("ndcg(gains=abc)@5", "pairs"), ("ndcg_exp(gains=1:3)@5", "no parameter 'gains'"),
    ("num_ret(rel=2)", "no parameter 'rel'"), ("judged(rel=1)@5", "no parameter 'rel'"),
    ("rbp_residual(rel=2)", "no parameter 'rel'"), ("num_q(rel=1)", "no parameter 'rel'"),
    ("rbp(p=0.5,p=0.6)", "twice"), ("bpref(beta=1)", "no parameter 'beta'"),
    ("iprec_at_recall_1.5", r"\[0, 1\]"),
])
def test_bad_parameters_are_named(bad, match):
    with pytest.raises(UnknownMeasureError, match=match):
        parse_measures(bad)


def test_err_rejects_grades_above_its_maximum():
    q = Qrels.from_dict({"q": {"a": 6, "b": 1}})
    r = Run.from_dict({"q": {"a": 1.0}})
    with pytest.raises(OptionError, match=r"grade 6.*err\(max_grade=6\)"):
        evaluate(q, r, metrics=["err@5"])
    ok = evaluate(q, r, metrics=["err(max_grade=6)@5"]).table["value"].item()
    assert ok == pytest.approx((2 ** 6 - 1) / 2 ** 6)


def test_judged_only_must_be_a_bool():
    q = Qrels.from_dict({"q": {"a": 1}})
    with pytest.raises(OptionError, match="judged_only"):
        evaluate(q, Run.from_dict({"q": {"a": 1.0}}), metrics=["bpref"], judged_only="yes")


@pytest.mark.parametrize("typed, meant", [("ndcg_cutt_10", "ndcg_cut_10"), ("nDGC@10", "ndcg@10"),
                                          ("recal@5", "recall@5"), ("recip_rnk", "recip_rank"), ("mapp", "map")])
def test_an_unknown_measure_names_the_closest_one(typed: str, meant: str) -> None:
    with pytest.raises(UnknownMeasureError, match=re.escape(f"unknown measure {typed!r} (did you mean {meant!r}?)")):
        parse_measures(typed)
    assert parse_measures(meant)  # and the suggestion itself parses


def test_no_suggestion_for_a_name_far_from_every_measure() -> None:
    with pytest.raises(UnknownMeasureError) as e:
        parse_measures("foo@3")
    assert "did you mean" not in str(e.value)


@pytest.mark.parametrize("name", ["P(rel=0)@5", "recall(rel=-3)@5", "map(rel=0)@all", "bpref(rel=0)"])
def test_a_relevance_level_below_one_is_refused_as_evaluate_refuses_it(name):
    """rel=0 made every unjudged retrieved document relevant while R counted only judged ones: recall, AP and
    bpref of 1.5 (pytrec_eval refuses a relevance level <= 0, and evaluate(rel_threshold=0) is refused)."""
    with pytest.raises(UnknownMeasureError, match=r"rel must be an integer >= 1 in .*unjudged documents"):
        parse_measure(name)
    assert parse_measure(name.replace("rel=0", "rel=1").replace("rel=-3", "rel=1")) is not None


def test_trec_eval_rbp_with_a_p_is_refused_like_rbp():
    """trec_eval's rbp grades its gains; ``rbp.p=0.9`` was read as evalcore's binary rbp(p=0.9) (0.19 where
    trec_eval gives 0.14 on graded qrels) while plain ``rbp`` was refused for that reason."""
    with pytest.raises(UnknownMeasureError, match=r"trec_eval's 'rbp\.p=0\.9' is not computed.*rbp\(p=0\.9\)"):
        parse_measures("rbp.p=0.9")
    assert [str(m) for m in parse_measures("rbp_resid.p=0.5")] == ["rbp_residual(p=0.5)"]


def test_recall_capped_at_all_is_refused_as_precision_at_all():
    """recall_capped@k = H_k / min(k, R): its k is a denominator, like precision's; @all silently gave recall@all."""
    with pytest.raises(UnknownMeasureError, match=r"recall_capped@all is not defined \(k is its denominator\); "
                                                  r"over the whole list write recall@all"):
        parse_measure("recall_capped@all")
    assert str(parse_measure("recall_capped@10")) == "recall_capped@10"

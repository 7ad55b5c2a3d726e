"""The command line and the measures of issue #11: listing, evaluating, -J, trec_eval's names."""

from __future__ import annotations

import json

import pytest

from evalcore.cli import main
from evalcore.measures import DESCRIPTIONS, HITS_RENAMED
from evalcore.measures.trec import GROUPS

QRELS, RUN = "qrels.test", "results.test"


def args(trec_dir, *more: str) -> list[str]:
    return ["--qrels", str(trec_dir / QRELS), "--run", f"std={trec_dir / RUN}", *more]


def test_metrics_lists_every_measure_with_its_description(capsys):
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.split() and ln.split()[0] in DESCRIPTIONS}
    assert set(lines) == set(DESCRIPTIONS)
    assert "a count" in lines["hits"] and "trec_eval bpref" in lines["bpref"]
    assert all(g in out for g in GROUPS) and "P.5,10" in out and "@all" in out
    assert "gm_map" in out.split("summaries:")[1] and "num_ret" in out.split("summaries:")[1]


def test_evaluate_official_prints_trec_eval_s_summary(trec_dir, capsys):
    # out.test (trec_eval qrels.test results.test): num_q 3, num_ret 1500, num_rel 561, num_rel_ret 131,
    # map 0.1785, gm_map 0.1051, Rprec 0.2174, bpref 0.1981, recip_rank 0.4064
    assert main(["evaluate", *args(trec_dir, "--metrics", "official")]) == 0
    out = capsys.readouterr().out
    for cell in ("3 (sum)", "1500 (sum)", "561 (sum)", "131 (sum)", "0.179±", "0.105 (gm)", "0.217±", "0.198±",
                 "0.406±"):
        assert cell in out, cell


@pytest.mark.parametrize("flag", ["-J", "--judged-only"])
def test_judged_only_flag(trec_dir, tmp_path, capsys, flag):
    out_dir = tmp_path / "out"
    assert main(["evaluate", *args(trec_dir, "--metrics", "num_ret", "map@all", "judged@10", flag,
                                   "--out", str(out_dir))]) == 0
    rep = json.loads((out_dir / "report.json").read_text())
    assert rep["metadata"]["judged_only"] is True
    agg = rep["aggregates"]["std"]
    assert agg["judged@10"]["mean"] == 1.0 and agg["num_ret"]["aggregate"] < 1500
    assert main(["evaluate", *args(trec_dir, "--metrics", "num_ret", "--out", str(tmp_path / "all"))]) == 0
    rep_all = json.loads((tmp_path / "all" / "report.json").read_text())
    assert rep_all["metadata"]["judged_only"] is False and rep_all["aggregates"]["std"]["num_ret"]["aggregate"] == 1500
    capsys.readouterr()


def test_typing_hits_prints_one_warning_line(trec_dir, capsys):
    assert main(["evaluate", *args(trec_dir, "--metrics", "hits@10", "hit_rate@10")]) == 0
    err = capsys.readouterr().err
    assert err.count(f"warning: {HITS_RENAMED}") == 1


def test_trec_eval_names_on_the_command_line(trec_dir, capsys):
    assert main(["evaluate", *args(trec_dir, "--metrics", "P.5,10", "ndcg_cut_10", "iprec_at_recall_0.10",
                                   "set_F")]) == 0
    out = capsys.readouterr().out
    header = next(ln for ln in out.splitlines() if ln.strip().startswith("k "))
    for name in ("precision", "ndcg", "iprec_at_recall(recall=0.1)", "set_f"):
        assert name in header


def test_compare_takes_whole_list_measures_and_judged_only(trec_dir, tmp_path, capsys):
    code = main(["compare", "--qrels", str(trec_dir / QRELS), "--run", f"a={trec_dir / RUN}",
                 "--run", f"b={trec_dir / 'results.trunc'}", "--metric", "map@all", "bpref", "-J",
                 "--out", str(tmp_path / "cmp.csv")])
    assert code == 0
    out = capsys.readouterr().out
    assert "map" in out and "bpref" in out


def test_bad_measure_parameter_is_one_line_error(trec_dir, capsys):
    assert main(["evaluate", *args(trec_dir, "--metrics", "rbp(p=2)")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "(0, 1)" in err


def test_judged_only_needs_judgments(tmp_path, capsys):
    code = main(["evaluate", "--reference-emb", str(tmp_path / "ref.npy"), "--emb", f"a={tmp_path / 'a.npy'}", "-J"])
    assert code == 2
    assert "--judged-only needs judgments" in capsys.readouterr().err

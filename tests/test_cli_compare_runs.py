"""``evalcore compare --runs NAME [NAME ...]`` chooses the runs compared and their order, as the Compare page's
"Runs compared" does; the page's "Reproduce with" line names them.

Before, ``compare`` took every run of its input sorted by name: a pair's direction (the sign of its difference
and interval) could be the other one than on the page, and ``--per-query`` on the Overview's download tested every
run of the file (another family for the correction, other shared resamples) with no way to choose. The caption's
run names are user text: each is one shell word in one Markdown code span, which nothing in a name can leave.
"""

from __future__ import annotations

import os
import shlex
import subprocess

import numpy as np
import pandas as pd
import pytest
from test_app import trec_qrels, trec_run
from test_same_numbers import caption_code, helped_run

from dashboard import reproduce as R
from evalcore.cli.main import build_parser, main
from evalcore.io.per_query import read_per_query_csv
from evalcore.stats import compare, tukey_hsd

NAMES = ("zeta", "alpha", "mid")  # the order of the files given


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_bytes(trec_qrels())
    for seed, name in enumerate(NAMES, start=1):
        (tmp_path / f"{name}.trec").write_bytes(helped_run(seed, 0.7) if name == "mid" else trec_run(seed))
    return tmp_path


def run_args(folder) -> list[str]:
    return [w for n in NAMES for w in ("--run", f"{n}={folder / f'{n}.trec'}")]


def read_csv(path) -> pd.DataFrame:
    return pd.read_csv(path, float_precision="round_trip")


def per_query(files) -> str:
    out = files / "ev"
    assert main(["evaluate", "--qrels", str(files / "qrels.txt"), *run_args(files), "--metrics", "ndcg",
                 "--k", "10", "--out", str(out)]) == 0
    return str(out / "per_query.csv")


def pairs(frame: pd.DataFrame) -> list[tuple[str, str]]:
    return list(zip(frame["run_a"], frame["run_b"], strict=True))


def test_runs_chooses_and_orders_the_runs_from_files_and_from_a_per_query_file(files):
    table = read_per_query_csv(per_query(files))
    api = compare(table, metric="ndcg", k=10, runs=["mid", "zeta"], test="permutation")  # Python's runs=
    for source in (["--per-query", per_query(files)], ["--qrels", str(files / "qrels.txt"), *run_args(files)]):
        out = files / "cmp.csv"
        assert main(["compare", *source, "--metric", "ndcg@10", "--test", "permutation", "--runs", "mid", "zeta",
                     "--out", str(out)]) == 0
        got = read_csv(out)
        assert pairs(got) == [("mid", "zeta")]  # not ("zeta", "mid"): the order given, not the names'
        for c in ("diff", "ci_low", "ci_high", "p_value", "p_adjusted"):
            np.testing.assert_array_equal(got[c].to_numpy(float), api[c].to_numpy(float), err_msg=c)
    # without --runs: every run, sorted by name, as before
    assert main(["compare", "--per-query", per_query(files), "--metric", "ndcg@10", "--out", str(out)]) == 0
    assert pairs(read_csv(out)) == [("alpha", "mid"), ("alpha", "zeta"), ("mid", "zeta")]


def test_runs_sets_the_family_of_the_correction_and_the_runs_of_hsd(files):
    pq = per_query(files)
    out, hsd = files / "cmp.csv", files / "hsd.csv"
    assert main(["compare", "--per-query", pq, "--metric", "ndcg@10", "--runs", "zeta", "mid", "--hsd", "paired",
                 "--hsd-out", str(hsd), "--out", str(out)]) == 0
    got = read_csv(out)
    assert pairs(got) == [("zeta", "mid")]
    assert got["p_adjusted"].tolist() == got["p_value"].tolist()  # a family of one pair: nothing to correct
    want = tukey_hsd(read_per_query_csv(pq), metric="ndcg", k=10, runs=["zeta", "mid"], design="paired")
    assert pairs(read_csv(hsd)) == pairs(want) == [("zeta", "mid")]


def test_a_baseline_not_among_the_runs_is_compared_with_each_of_them(files):
    out = files / "cmp.csv"
    assert main(["compare", "--per-query", per_query(files), "--metric", "ndcg@10", "--runs", "zeta", "mid",
                 "--baseline", "alpha", "--out", str(out)]) == 0
    assert pairs(read_csv(out)) == [("alpha", "zeta"), ("alpha", "mid")]


def test_runs_repeated_and_a_name_starting_with_a_dash(files):
    parsed = build_parser().parse_args(["compare", "--per-query", "x", "--runs", "b", "a", "--runs=-c", "--runs", "d"])
    assert parsed.runs == ["b", "a", "-c", "d"]  # one list, in the order given
    assert build_parser().parse_args(["compare", "--per-query", "x"]).runs is None


@pytest.mark.parametrize("words, says", [
    (["--runs", "mid", "nope"], "error: --runs: no run named 'nope' in {where}; the runs are 'alpha', 'mid', 'zeta'"),
    (["--runs", "x", "mid", "y"], "error: --runs: no runs named 'x', 'y' in {where}; the runs are 'alpha', 'mid', "
                                  "'zeta'"),
    (["--runs", "mid", "zeta", "mid"], "error: --runs names 'mid' twice: give each run once"),
    (["--runs", "mid"], "error: compare needs at least two runs, got 1: ['mid']"),
])
@pytest.mark.parametrize("source", ["per-query", "files"])
def test_a_bad_choice_is_one_line_naming_the_run_and_listing_the_runs(files, capsys, words, says, source):
    if source == "per-query":
        pq = per_query(files)
        capsys.readouterr()
        given, where = ["--per-query", pq], pq
    else:
        given, where = ["--qrels", str(files / "qrels.txt"), *run_args(files)], "the runs given (--run, --emb, --fuse)"
    assert main(["compare", *given, "--metric", "ndcg@10", *words]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == says.format(where=where)
    assert "Paired" not in captured.out  # nothing compared


def test_an_unknown_run_among_files_stops_before_anything_is_evaluated(files, capsys):
    """The names are checked once the files are read: a run evaluated would warn that it is shallow (its lists hold
    20 documents, the metric's k is 100); no such warning comes."""
    assert main(["compare", "--qrels", str(files / "qrels.txt"), *run_args(files), "--metric", "ndcg@100",
                 "--runs", "mid", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --runs: no run named 'nope'") and "shallow" not in err
    assert main(["compare", "--qrels", str(files / "qrels.txt"), *run_args(files), "--metric", "ndcg@100",
                 "--runs", "mid", "zeta"]) == 0
    assert "shallow run" in capsys.readouterr().err  # (the check above is not vacuous)


# ------------------------------------------------------------------------------------------ the caption's line

NASTY = ["zeta `x` *$<b>", "a``b", "ends`", "**bold**", "$x$", "<b>bold</b>", ":red[red]", "line\nbreak",
         "tab\there", "right\u202eleft", "-dash", "--metric", "it's", "plain", "spa ce", "back\\slash"]


def bash_words(command: str) -> list[str]:
    """The words bash (in a UTF-8 locale, for ``$'\\u202e'``) makes of ``command`` after its first word."""
    done = subprocess.run(["bash", "-c", "printf '%s\\0' " + command.split(" ", 1)[1]], capture_output=True,
                          check=True, env={**os.environ, "LC_ALL": "C.UTF-8"})
    return done.stdout.decode("utf-8").split("\0")[:-1]


def test_the_captions_line_is_one_code_span_whose_words_are_the_run_names():
    caption = R.compare_caption("ndcg@10", "permutation", "holm", runs=NASTY)
    code = caption_code(caption)  # one code span, the rest plain text: no name is read as Markdown or HTML
    assert "\n" not in caption and "\u202e" not in caption
    assert not any(name in caption.replace(code, "") for name in NASTY)  # every name is inside the code span
    words = bash_words(code)
    assert build_parser().parse_args(words).runs == NASTY  # bash and argparse give back every name, in order
    plain = [n for n in NASTY if n.isprintable()]  # (no control or format character: shlex.quote's words)
    assert shlex.split(caption_code(R.compare_caption("ndcg@10", "t", "holm", runs=plain)))[1:] == \
        bash_words(caption_code(R.compare_caption("ndcg@10", "t", "holm", runs=plain)))


def test_the_code_span_fence_outgrows_the_backticks_inside():
    assert R.code_span("a b") == "`a b`"
    assert R.code_span("a`b") == "`` a`b ``"
    assert R.code_span("x ``` y") == "```` x ``` y ````"
    with pytest.raises(ValueError):
        R.code_span("a\nb")


# ------------------------------------------------------------------------------------------ only the runs chosen

def test_only_the_runs_chosen_are_evaluated(files, capsys):
    """A run given but not chosen is neither checked by --strict nor evaluated (before, every run given was:
    --strict stopped on a run not compared, and its warnings and time were spent); a fusion chosen still fuses
    runs not chosen, and the numbers are those of comparing the chosen runs out of everything evaluated."""
    lines = trec_run(9).decode().splitlines()
    half = sorted({line.split()[0] for line in lines})[::2]
    (files / "part.trec").write_text("\n".join(x for x in lines if x.split()[0] in half) + "\n")  # half the queries
    given = ["--qrels", str(files / "qrels.txt"), *run_args(files), "--run", f"part={files / 'part.trec'}"]
    assert main(["compare", *given, "--metric", "ndcg@10", "--strict"]) == 2  # (part does stop --strict)
    assert "part" in capsys.readouterr().err
    out = files / "cmp.csv"
    assert main(["compare", *given, "--metric", "ndcg@10", "--strict", "--runs", "mid", "zeta", "--out",
                 str(out)]) == 0
    assert "part" not in capsys.readouterr().err
    assert pairs(read_csv(out)) == [("mid", "zeta")]

    fused = [*given, "--fuse", "F=alpha,zeta", "--fuse", "G=F,alpha", "--n-samples", "30", "--seed", "5"]
    everything = files / "all.csv"
    assert main(["compare", *fused, "--metric", "ndcg@10", "--test", "permutation", "--out", str(everything)]) == 0
    capsys.readouterr()
    assert main(["compare", *fused, "--metric", "ndcg@10", "--test", "permutation", "--runs", "G", "mid",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "part" not in err, err  # (its partial coverage: not compared, not warned)
    got = read_csv(out)
    assert pairs(got) == [("G", "mid")]
    table = files / "ev"
    assert main(["evaluate", *fused, "--metrics", "ndcg", "--k", "10", "--out", str(table)]) == 0
    api = compare(read_per_query_csv(str(table / "per_query.csv")), metric="ndcg", k=10, runs=["G", "mid"], seed=5,
                  test="permutation")
    for c in ("n", "diff", "ci_low", "ci_high", "p_value"):
        np.testing.assert_array_equal(got[c].to_numpy(float), api[c].to_numpy(float), err_msg=c)


def test_an_unknown_baseline_among_files_stops_before_anything_is_evaluated(files, capsys):
    assert main(["compare", "--qrels", str(files / "qrels.txt"), *run_args(files), "--metric", "ndcg@100",
                 "--runs", "mid", "zeta", "--baseline", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "error: --baseline 'nope' is not a run; the runs are ['alpha', 'mid', 'zeta']", err


@pytest.mark.parametrize("source", ["files", "per_query"])
def test_a_metric_needing_a_cutoff_without_one_is_refused_in_one_line_naming_the_cure(files, capsys, source):
    # seed 003's user asks for MRR as written there (no cutoff): compare evaluated mrr at k 10, then looked it up
    # over the whole list and stopped with "no row for 'mrr' in the table; available: mrr@10"
    given = ["--per-query", per_query(files)] if source == "per_query" else ["--qrels", str(files / "qrels.txt"),
                                                                               *run_args(files)]  # fmt: skip
    capsys.readouterr()
    assert main(["compare", *given, "--metric", "ndcg@10", "mrr"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'mrr' needs a cutoff" in err[0] and "mrr@10" in err[0] and "mrr@all" in err[0]
    # a measure without a cutoff by definition and one written with @all are still compared
    out = files / "cmp.csv"
    if source == "files":
        assert main(["compare", *given, "--metric", "rprec", "mrr@all", "--out", str(out)]) == 0
        assert sorted(read_csv(out)["metric"].unique()) == ["mrr", "rprec"]


def test_the_printed_tables_say_all_for_the_whole_list_as_evaluate_does(files, capsys):
    # compare printed 'mrr  0' (read: MRR at cutoff 0) where evaluate prints 'all'; the CSV keeps k 0
    import re

    out = files / "cmp.csv"
    args = ["--qrels", str(files / "qrels.txt"), *run_args(files)]
    assert main(["compare", *args, "--metric", "mrr@all", "ndcg@10", "--hsd", "paired", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    rows = [line.split() for line in text.splitlines() if re.match(r"^\s*(mrr|ndcg)\s", line)]
    assert rows and {r[1] for r in rows if r[0] == "mrr"} == {"all"} and {r[1] for r in rows if r[0] == "ndcg"} == {
        "10"}, text  # fmt: skip
    assert main(["evaluate", *args, "--metrics", "mrr@all", "--k", "10"]) == 0
    assert re.search(r"^\s*all\s", capsys.readouterr().out, flags=re.M)
    assert set(read_csv(out).query("metric == 'mrr'")["k"]) == {0}

"""The command line is a public contract: flags, output files and their columns, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore import Qrels, Run, evaluate
from evalcore.cli import main
from evalcore.fusion import weighted_rrf
from evalcore.io.trec import read_trec_run, write_trec_qrels, write_trec_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(7)
    judg = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(40, 8, replace=False)} for i in range(30)}
    judg["q_empty"] = {"d1": 0}
    qrels = Qrels.from_dict(judg)
    runs = {}
    for name in ("bm25", "dense"):
        res = {f"q{i}": {f"d{j}": float(rng.integers(0, 5)) for j in rng.choice(40, 20, replace=False)}
               for i in range(28)}
        res["q_extra"] = {"d1": 1.0}
        runs[name] = Run.from_dict(res, name=name)
    paths = {"qrels": tmp_path / "qrels.txt"}
    write_trec_qrels(qrels, paths["qrels"])
    for name, run in runs.items():
        paths[name] = tmp_path / f"{name}.trec"
        write_trec_run(run, paths[name])
    return paths


def test_evaluate_writes_contract_files(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    code = main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"bm25={files['bm25']}",
                 "--run", f"dense={files['dense']}", "--metrics", "ndcg", "recall", "mrr", "map",
                 "--k", "5", "10", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "bm25:" in printed and "±" in printed
    pq = pd.read_csv(out / "per_query.csv", dtype={"query_id": str}, float_precision="round_trip")
    assert {"run", "query_id", "metric", "k", "value"} <= set(pq.columns)
    # one row for every qrels query, run, metric and k (31 qrels queries incl. q_empty; q_extra ignored)
    assert len(pq) == 31 * 2 * 4 * 2
    assert set(pq["query_id"]) == {f"q{i}" for i in range(30)} | {"q_empty"}
    # values equal the library's
    from evalcore.io import load_qrels

    ev = evaluate(load_qrels(files["qrels"]), [read_trec_run(files["bm25"], name="bm25"),
                                                read_trec_run(files["dense"], name="dense")],
                  metrics=["ndcg", "recall", "mrr", "map"], k=[5, 10])
    lib = ev.table.assign(query_id=ev.table.query_id.astype(str), run=ev.table.run.astype(str),
                          metric=ev.table.metric.astype(str))
    merged = pq.merge(lib, on=["run", "query_id", "metric", "k"], suffixes=("_cli", "_lib"))
    assert len(merged) == len(pq)
    assert np.array_equal(merged["value_cli"].to_numpy(), merged["value_lib"].to_numpy())  # exact round trip
    rep = json.loads((out / "report.json").read_text())
    assert set(rep) >= {"metadata", "aggregates", "per_query", "coverage"}
    assert rep["coverage"]["bm25"]["n_missing"] == 3  # q28, q29, q_empty absent from the run
    assert rep["coverage"]["bm25"]["n_ignored"] == 1  # q_extra
    assert abs(rep["aggregates"]["bm25"]["ndcg@10"]["mean"]
               - pq.query("run == 'bm25' and metric == 'ndcg' and k == 10")["value"].mean()) < 1e-12
    assert len(rep["per_query"]["q0"]["dense"]["topK"]) == 10
    assert (out / "bm25_results.csv").exists() and (out / "dense_results.csv").exists()


def test_compare_prints_significance_table(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    code = main(["compare", "--qrels", str(files["qrels"]), "--run", f"bm25={files['bm25']}",
                 "--run", f"dense={files['dense']}", "--metric", "ndcg@10", "recall@5", "--out",
                 str(tmp_path / "cmp.csv")])
    assert code == 0
    text = capsys.readouterr().out
    assert "p_adjusted" in text and "holm" in text
    assert "diff = mean_b - mean_a (run_b minus run_a" in text and "queries where run_b is above" in text
    cmp_text = pd.read_csv(tmp_path / "cmp.csv")
    for p in cmp_text["p_value"]:  # printed with 4 decimals, and never as 0
        assert ("<0.0001" if p < 0.0001 else f"{p:.4f}") in text
    from evalcore.cli.compare import _p_text

    assert [_p_text(p) for p in (3e-7, 0.00012, 0.5, float("nan"))] == ["<0.0001", "0.0001", "0.5000", "-"]
    cmp = pd.read_csv(tmp_path / "cmp.csv")
    assert len(cmp) == 2 and set(cmp["metric"]) == {"ndcg", "recall"}


def test_compare_from_per_query_csv(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "o"
    assert main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"a={files['bm25']}",
                 "--run", f"b={files['dense']}", "--metrics", "ndcg", "--k", "10", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["compare", "--per-query", str(out / "per_query.csv"), "--metric", "ndcg@10",
                 "--baseline", "a", "--test", "wilcoxon"]) == 0
    assert "wilcoxon" in capsys.readouterr().out


def test_fuse_writes_weighted_rrf(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "fused.trec"
    assert main(["fuse", "--run", f"a={files['bm25']}", "--run", f"b={files['dense']}", "--weight", "a=2",
                 "--c", "60", "--top-n", "10", "--out", str(out)]) == 0
    fused = read_trec_run(out)
    expected = weighted_rrf([read_trec_run(files["bm25"], name="a"), read_trec_run(files["dense"], name="b")],
                            weights={"a": 2.0}, c=60, top_n=10)
    got, exp = fused.to_dict(), expected.to_dict()
    assert got.keys() == exp.keys()
    for q in exp:
        assert got[q].keys() == exp[q].keys()
        for d, v in exp[q].items():
            assert got[q][d] == pytest.approx(v, rel=1e-15)


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("q1 Q0 d1 1 1.5 t\nq1 Q0 d2 2\n", "line 2"),
        ("q1 Q0 d1 1 1.5 t\nq1 Q0 d2 2 abc t\n", "line 2"),
        ("q1 Q0 d1 1 1.5 t\nq1 Q0 d1 2 1.0 t\n", "line 2"),
        ("", "empty"),
    ],
)
def test_bad_run_is_one_line_error(files: dict[str, Path], tmp_path: Path, content: str, fragment: str) -> None:
    bad = tmp_path / "bad.trec"
    bad.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "evalcore", "evaluate", "--qrels", str(files["qrels"]),
                           "--run", f"x={bad}"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert "Traceback" not in proc.stderr
    assert len(err.splitlines()) == 1
    assert err.startswith("error: ") and str(bad) in err and fragment in err


def test_early_error_waits_for_the_background_import(files: dict[str, Path], tmp_path: Path) -> None:
    # an exit while the pandas import thread is inside pyarrow's C++ start-up could abort the
    # interpreter (exit -6, "terminate called without an active exception") after the error line;
    # --workspace: an evaluate that uses pandas (a plain one never imports it)
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1 abc t\n")
    code = (
        "import sys, threading\n"
        "from evalcore.cli import main\nfrom evalcore.cli.background import PRELOAD_THREAD\n"
        "assert 'pandas' not in sys.modules\n"
        f"rc = main(['evaluate', '--qrels', {str(files['qrels'])!r}, '--run', 'x=' + {str(bad)!r},"
        f" '--workspace', {str(tmp_path / 'ws')!r}])\n"
        "alive = [t.name for t in threading.enumerate() if t.name == PRELOAD_THREAD]\n"
        "print(rc, alive, 'pandas' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2", "[]", "True"]  # error status, no import left running


def test_unknown_metric_lists_supported(files: dict[str, Path], capsys) -> None:
    assert main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"a={files['bm25']}",
                 "--metrics", "ndgc"]) == 2
    err = capsys.readouterr().err
    assert "unknown measure" in err and "ndcg" in err and "recall_capped" in err


def test_n_samples_is_seeded_subset(files: dict[str, Path], tmp_path: Path) -> None:
    outs = []
    for i in range(2):
        out = tmp_path / f"s{i}"
        assert main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"a={files['bm25']}",
                     "--metrics", "ndcg", "--k", "10", "--n-samples", "10", "--seed", "3", "--out", str(out)]) == 0
        outs.append(pd.read_csv(out / "per_query.csv", dtype={"query_id": str}))
    assert outs[0]["query_id"].nunique() == 10
    pd.testing.assert_frame_equal(outs[0], outs[1])


def test_first_rel_rank_not_found_is_null_and_left_out_of_means(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "frr"
    assert main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"a={files['bm25']}",
                 "--metrics", "first_rel_rank", "ndcg@5", "--out", str(out)]) == 0
    rep = json.loads((out / "report.json").read_text())
    pq = pd.read_csv(out / "per_query.csv", dtype={"query_id": str})
    frr = pq[pq["metric"] == "first_rel_rank"].set_index("query_id")["value"]
    assert frr.isna().sum() >= 3  # q28, q29, q_empty: nothing relevant retrieved
    assert rep["per_query"]["q_empty"]["a"]["first_rel_rank"] is None
    agg = rep["aggregates"]["a"]["first_rel_rank"]
    assert agg["n"] == int(frr.notna().sum())
    assert agg["mean"] == pytest.approx(frr.dropna().mean(), rel=1e-12)


def test_domain_aggregations_accept_evaluate_table_directly() -> None:
    """evaluate() returns categorical columns (domain included); the aggregations take it as is."""
    from evalcore.aggregate import summarize, wide_per_query
    from evalcore.stats import compare_by_domain

    rng = np.random.default_rng(3)
    judg = {f"q{i}": {f"d{j}": int(rng.integers(1, 3)) for j in range(3)} for i in range(24)}
    doms = {f"q{i}": ("a" if i < 12 else "b") for i in range(20)}  # q20..q23 without a domain
    qrels = Qrels.from_dict(judg, domains=doms)
    runs = [Run.from_dict({q: {f"d{j}": float(rng.random()) for j in range(6)} for q in judg}, name=n)
            for n in ("x", "y")]
    table = evaluate(qrels, runs, metrics=["ndcg"], k=[5]).table
    assert isinstance(table["domain"].dtype, pd.CategoricalDtype)
    by_dom = summarize(table, by=("run", "domain", "metric", "k"))
    assert set(by_dom["domain"]) == {"a", "b", ""}
    sub = table[(table.run == "x") & (table.domain == "a")]
    got = by_dom.query("run == 'x' and domain == 'a'")["mean"].iloc[0]
    assert got == pytest.approx(sub["value"].mean(), rel=1e-12)
    assert len(wide_per_query(table, metric="ndcg", k=5)) == 24
    cmp = compare_by_domain(table, metric="ndcg", k=5, baseline="x", n_resamples=200)
    assert set(cmp["domain"]) == {"a", "b", ""}


@pytest.mark.parametrize(("method", "norm"), [("combmnz", "min-max"), ("wsum", "z-score"), ("bordafuse", "none")])
def test_evaluate_fuse_method_and_norm(files: dict[str, Path], tmp_path: Path, method: str, norm: str) -> None:
    """``--fuse-method``/``--fuse-norm`` fuse as ``evalcore.fusion.fuse``: the same per-query values."""
    from evalcore.fusion import fuse
    from evalcore.io import load_qrels

    out = tmp_path / "out"
    spec = "mix=bm25:0.7,dense:0.3" if method == "wsum" else "mix=bm25,dense"
    code = main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"bm25={files['bm25']}",
                 "--run", f"dense={files['dense']}", "--fuse", spec, "--fuse-method", method, "--fuse-norm", norm,
                 "--rrf-top-n", "15", "--ties", "docid_asc", "--metrics", "ndcg", "map", "--k", "5", "10",
                 "--out", str(out)])
    assert code == 0
    qrels = load_qrels(files["qrels"])
    runs = [read_trec_run(files[n], name=n) for n in ("bm25", "dense")]
    fused = fuse(runs, method=method, norm=norm, top_n=15, ties="docid_asc", name="mix",
                 weights={"bm25": 0.7, "dense": 0.3} if method == "wsum" else None)
    want = evaluate(qrels, fused, metrics=["ndcg", "map"], k=[5, 10], ties="docid_asc").table
    pq = pd.read_csv(out / "per_query.csv", dtype={"query_id": str}, float_precision="round_trip")
    got = pq[pq["run"] == "mix"].set_index(["query_id", "metric", "k"])["value"]
    exp = want.assign(query_id=want["query_id"].astype(str), metric=want["metric"].astype(str),
                      k=want["k"].astype(np.int64)).set_index(
        ["query_id", "metric", "k"])["value"]
    pd.testing.assert_series_equal(got.sort_index(), exp.sort_index(), check_names=False)
    assert not np.allclose(got.sort_index().to_numpy(), pq[pq["run"] == "bm25"].set_index(
        ["query_id", "metric", "k"])["value"].sort_index().to_numpy())


@pytest.mark.parametrize(("extra", "message"), [
    (["--fuse", "mix=bm25:2,dense:1", "--fuse-method", "combsum"], "combsum takes no weights"),
    (["--fuse", "mix=bm25,dense", "--fuse-method", "isr", "--fuse-norm", "min-max"], "isr"),
    (["--fuse", "mix=bm25,dense", "--fuse-method", "median"], "median"),
    (["--fuse", "mix=bm25,dense", "--fuse-norm", "l2"], "l2"),
])
def test_evaluate_fuse_option_errors(files: dict[str, Path], capsys, extra: list[str], message: str) -> None:
    code = main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"bm25={files['bm25']}",
                 "--run", f"dense={files['dense']}", *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and "Traceback" not in err


@pytest.mark.parametrize("where", ["out_is_a_file", "csv_is_a_folder"])
def test_evaluate_output_that_cannot_be_written_is_one_line(files: dict[str, Path], tmp_path: Path, capsys,
                                                            where: str) -> None:
    """An output path that cannot be written ends with one line naming it, exit status 1, no traceback."""
    out = tmp_path / "out"
    if where == "out_is_a_file":
        out.write_text("not a folder")
    else:
        (out / "per_query.csv").mkdir(parents=True)
    code = main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"bm25={files['bm25']}", "--metrics", "ndcg",
                 "--k", "5", "--out", str(out)])
    lines = capsys.readouterr().err.strip().splitlines()
    err = [ln for ln in lines if not ln.startswith("warning: ")]  # (the run misses 3 of 31 queries: said apart)
    assert code == 1 and len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in "".join(lines)
    assert (str(out) if where == "out_is_a_file" else "per_query.csv") in err[0]


def test_an_unknown_option_names_the_subcommand_and_the_closest_option(capsys):
    # `compare` takes --metric NAME@K; evaluate's --metrics/--k are a natural slip
    with pytest.raises(SystemExit) as ei:
        main(["compare", "--qrels", "q.txt", "--run", "a=a.trec", "--metrics", "ndcg", "--k", "10"])
    assert ei.value.code == 2
    err = capsys.readouterr().err
    assert "usage: evalcore compare" in err  # the subcommand's usage, not the top level's
    assert err.strip().splitlines()[-1] == (
        "evalcore compare: error: unrecognized arguments: --metrics ndcg --k 10 "
        "(did you mean --metric? `evalcore compare --help` lists its options)")
    with pytest.raises(SystemExit) as ei:
        main(["evaluate", "--qrels", "q.txt", "--bogus"])
    assert ei.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "evalcore evaluate: error: unrecognized arguments: --bogus (`evalcore evaluate --help` lists its options)")


def test_one_query_evaluated_is_singular(tmp_path: Path, capsys) -> None:
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.trec"), "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert "r: 1 query evaluated" in out and "1 queries" not in out


def _parsers():
    """(command words, parser) of every command and sub-command (``workspace list``...)."""
    import argparse

    from evalcore.cli.main import build_parser

    todo, out = [((), build_parser())], []
    while todo:
        words, p = todo.pop()
        out.append((words, p))
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                todo += [((*words, name), sp) for name, sp in a.choices.items()]
    return out


def test_every_option_of_every_command_says_what_it_does():
    """`--help` explains each option and argument, sub-commands' too (compare's and fuse's once listed bare
    names; `workspace export --out`, `workspace remove NAME` and `workspace import FILE.zip` had no text)."""
    import argparse

    parsers = _parsers()
    bare = [f"{' '.join(words)} {'/'.join(a.option_strings) or a.metavar}" for words, p in parsers for a in p._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) and not (a.help or "").strip()]
    assert len(parsers) >= 12 and bare == []


def test_help_texts_are_plain_text():
    # `evalcore topk --help` once opened with the module docstring's reST: "``evalcore topk``: exact ..."
    for words, p in _parsers():
        text = p.format_help()
        assert "``" not in text and ":func:" not in text, words


def test_every_option_with_a_default_states_it():
    # --report-depth (10), --no-relevant (zero) and topk's --tag (evalcore) once left theirs unsaid
    import argparse

    unsaid = [f"{' '.join(words)} {a.option_strings[0]}={a.default!r}" for words, p in _parsers() for a in p._actions
              if a.option_strings and a.default not in (None, False, argparse.SUPPRESS)
              and "default" not in (a.help or "")]
    assert unsaid == []


def test_a_command_with_sub_commands_names_each_in_its_help():
    # `workspace`'s one-line help once said "list, remove, export or import": gc was missing
    import argparse

    from evalcore.cli.main import build_parser

    top = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for line in top._choices_actions:  # each command's line in `evalcore --help`
        for a in top.choices[line.dest]._actions:
            if isinstance(a, argparse._SubParsersAction):
                assert all(name in line.help for name in a.choices), (line.dest, line.help)


def test_format_options_list_the_formats():
    from evalcore.io import QRELS_FORMATS

    for words, p in _parsers():
        for a in p._actions:
            if "--qrels-format" in a.option_strings:
                assert all(f in a.help for f in QRELS_FORMATS), (words, a.help)

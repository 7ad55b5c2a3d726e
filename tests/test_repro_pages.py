"""The Compare and Agreement pages' "Reproduce with" lines under each kind of ground truth (seed 001's lists with
several aspects, seed 003's graded judgments, a reference model's neighbours with a query sample of its own seed):
the Compare page's ``evalcore compare --per-query`` on the Overview's per-query download, and the Agreement page's
``evalcore agree`` (judgments) or Python call (a reference model), give the page's numbers to the last bit.
"""

from __future__ import annotations

import importlib
import shlex

import numpy as np
import pytest
from test_app import goto, start
from test_repro_overview import case, snapshot
from test_same_numbers import read_csv, same
from test_sample_seed import spans

from dashboard import analysis as A
from dashboard import state as S
from evalcore.cli.main import main


def the_commands(at, prefix: str) -> list[list[str]]:
    return [shlex.split(c) for cap in at.caption for c in spans(cap.value) if c.startswith(prefix)]


def the_command(at, prefix: str) -> list[str]:
    found = [c for cap in at.caption for c in spans(cap.value) if c.startswith(prefix)]
    assert len(found) == 1, [cap.value for cap in at.caption]
    return shlex.split(found[0])


@pytest.mark.parametrize("name", ["seed001", "seed003", "reference-tied"])
def test_the_compare_pages_command_gives_its_tests(tmp_path, name):
    at = goto(start(snapshot(name)), "compare")
    assert not at.exception, [e.value for e in at.exception]
    words = the_command(at, "evalcore compare")
    runs = words[words.index("--runs") + 1:words.index("--test")]
    pq = tmp_path / "per_query.csv"
    ctx = S.context(ws=snapshot(name))
    assert ctx.ready, ctx.eval_error
    pq.write_bytes(S.per_query_csv(ctx)())  # the Overview's download
    out = tmp_path / "cmp.csv"
    assert main([*[str(pq) if w == "per_query.csv" else w for w in words[1:]], "--out", str(out)]) == 0
    cli = read_csv(out)
    metric, k = words[words.index("--metric") + 1].split("@")
    shown = A.comparison(ctx, metric, int(k), words[words.index("--test") + 1],
                         words[words.index("--correction") + 1], runs=runs)
    assert shown.ok, shown.error
    shown = shown.value
    assert len(cli) == len(shown) == len(runs) * (len(runs) - 1) // 2 > 0
    assert list(zip(cli["run_a"].astype(str), cli["run_b"].astype(str), strict=True)) == list(
        zip(shown["run_a"].astype(str), shown["run_b"].astype(str), strict=True))
    same(cli, shown, ["mean_a", "mean_b", "diff", "ci_low", "ci_high", "statistic", "p_value", "p_adjusted"])
    if name == "seed001":  # the runs of one aspect only (the page's), not the three of two aspects
        assert set(runs) == {"content_run", "mixed"}


@pytest.mark.parametrize("name", ["seed001", "seed003", "seed003-emb"])
def test_the_agreement_pages_command_gives_its_means(tmp_path, name):
    gt_name, gt, _, files, _ = case(name)
    (tmp_path / gt_name).write_bytes(gt)
    at = goto(start(snapshot(name)), "agreement")
    assert not at.exception, [e.value for e in at.exception]
    words = the_command(at, "evalcore agree")
    shown = next(d.value for d in at.dataframe if {"run_a", "run_b", "mean"} <= set(getattr(d.value, "columns", [])))
    names = list(dict.fromkeys([*shown["run_a"].astype(str), *shown["run_b"].astype(str)]))
    for n in names:
        file, data, _ = files[n]
        if isinstance(data, tuple):  # an embedding run (queries against a corpus): its ranking as the caption says
            (tmp_path / file).write_bytes(data[0])
            (tmp_path / f"q_{file}").write_bytes(data[1])
            [topk] = the_commands(at, "evalcore topk --docs DOCS")
            files[n] = (f"{n}.trec", None, None)
            assert main([*[{"DOCS": str(tmp_path / file), "QUERIES": str(tmp_path / f"q_{file}"),
                            "NAME.trec": str(tmp_path / f"{n}.trec")}.get(w, w) for w in topk[1:]], "--quiet"]) == 0
        else:
            (tmp_path / file).write_bytes(data)
    out = tmp_path / "summary.csv"
    assert words[:5] == ["evalcore", "agree", "--run", "NAME=FILE", "..."], words
    given = [words[1], *[w for n in names for w in ("--run", f"{n}={tmp_path / files[n][0]}")],
             *[{"QRELS": str(tmp_path / gt_name), "summary.csv": str(out)}.get(w, w) for w in words[5:]]]
    assert main(given) == 0
    cli = read_csv(out)
    cli = cli[cli["run_a"].astype(str) != cli["run_b"].astype(str)]
    key = ["run_a", "run_b"]
    got = shown.assign(run_a=shown["run_a"].astype(str), run_b=shown["run_b"].astype(str)).sort_values(key)
    want = cli.assign(run_a=cli["run_a"].astype(str), run_b=cli["run_b"].astype(str)).sort_values(key)
    assert len(got) == len(want) > 0
    for c in ("n", "mean", "std"):
        np.testing.assert_array_equal(got[c].to_numpy(float), want[c].to_numpy(float), err_msg=c)


def test_the_agreement_pages_python_call_on_a_reference_gives_its_means():
    at = goto(start(snapshot("reference-tied")), "agreement")
    assert not at.exception, [e.value for e in at.exception]
    [call] = [c for cap in at.caption for c in spans(cap.value) if c.startswith("evalcore.summarize_agreement(")]
    assert not [c for cap in at.caption for c in spans(cap.value) if c.startswith("evalcore agree")]
    shown = next(d.value for d in at.dataframe if {"run_a", "run_b", "mean"} <= set(getattr(d.value, "columns", [])))
    ctx = S.context(ws=snapshot("reference-tied"))
    names = list(dict.fromkeys([*shown["run_a"].astype(str), *shown["run_b"].astype(str)]))
    # the call as the caption gives it, after `import evalcore`, with the runs shown and the evaluated queries' ids
    summary = eval(call, {"evalcore": importlib.import_module("evalcore")}, {  # noqa: S307
        "runs": {n: ctx.runs[n] for n in names}, "QUERY_IDS": A.evaluated_queries(ctx)})
    summary = summary[summary["run_a"].astype(str) != summary["run_b"].astype(str)]
    key = ["run_a", "run_b"]
    got = shown.assign(run_a=shown["run_a"].astype(str), run_b=shown["run_b"].astype(str)).sort_values(key)
    want = summary.assign(run_a=summary["run_a"].astype(str), run_b=summary["run_b"].astype(str)).sort_values(key)
    assert len(got) == len(want) > 0 and set(want["n"]) == {12}  # the sample's 12 items
    for c in ("n", "mean", "std"):
        np.testing.assert_array_equal(got[c].to_numpy(float), want[c].to_numpy(float), err_msg=c)


def test_the_compare_pages_command_names_a_whole_list_metric_as_compare_reads_it(tmp_path):
    """The caption's ``--metric`` is one word ``compare`` takes: ``map@all`` for map over the whole list, where the
    page's label says ``map`` (``compare`` refuses a bare name that takes a cutoff, so the line used to stop with
    "needs a cutoff"), and a parameterised ``precision(rel=2)@5`` one shell word. Its numbers are the page's."""
    import dataclasses

    ws = snapshot("seed003")
    ws = dataclasses.replace(ws, settings=dataclasses.replace(ws.settings, k=(5,), metrics=("map@all", "P(rel=2)")))
    ctx = S.context(ws=ws)
    assert ctx.ready, ctx.eval_error
    pq = tmp_path / "per_query.csv"
    pq.write_bytes(S.per_query_csv(ctx)())
    for metric, k, word in (("map", 0, "map@all"), ("precision(rel=2)", 5, "precision(rel=2)@5")):
        at = goto(start(ws), "compare")
        at.selectbox(key="w_compare_sel_metric").select(metric).run()
        at.selectbox(key="w_compare_sel_k").select(k).run()
        assert not at.exception, [e.value for e in at.exception]
        words = the_command(at, "evalcore compare")
        assert words[words.index("--metric") + 1] == word
        runs = words[words.index("--runs") + 1:words.index("--test")]
        out = tmp_path / f"cmp{k}.csv"
        assert main([*[str(pq) if w == "per_query.csv" else w for w in words[1:]], "--out", str(out)]) == 0
        shown = A.comparison(ctx, metric, k, words[words.index("--test") + 1], words[words.index("--correction") + 1],
                             runs=runs)
        assert shown.ok, shown.error
        same(read_csv(out), shown.value, ["mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_value", "p_adjusted"])

"""The Fusion and Agreement pages' "Reproduce with" commands give their numbers on a sampled, judged-only workspace
that skips the queries without a relevant document; the Report (JSON) has the command line's metadata keys.

Before, the Fusion page searched its weights on the settings' query sample with the settings' rules (and ignored
judged-only), but ``evalcore fuse`` had no ``--n-samples``/``--sample-seed``, ``--judged-only`` or ``--no-relevant``:
the caption's command searched every query with the default rules and found other trials. The Agreement page had
no "Reproduce with" and ``evalcore agree`` compared every query of the runs, not the evaluated (sampled) ones. The
dashboard's report.json had ``query_sample`` but not ``evaluate --out``'s ``n_samples`` (nor ``command``,
``sample_seed``). Each test runs the command line's ``main``, the page (Streamlit's AppTest) and the function behind
it on the same files in ``tmp_path``.
"""

from __future__ import annotations

import json
import shlex
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from test_app import goto, start, trec_qrels, trec_run
from test_same_numbers import RUNS, SETTINGS, read_csv, run_args

from dashboard import analysis as A
from dashboard import reproduce as R
from dashboard import state as S
from evalcore import workspace as W
from evalcore.cli.main import build_parser, main
from evalcore.errors import EvalcoreWarning
from evalcore.io import load_qrels
from evalcore.workspace.pipeline import sample_query_ids

#: queries whose every judgment is grade 0 (no relevant document: skipped by the settings' rule)
NONE_RELEVANT = {"q1", "q4", "q6", "q9", "q12"}
#: a query sample of 9 of the 15 queries drawn with seed 7 (not the intervals' 42), judged-only, skipping
SAMPLED = replace(SETTINGS, sample_size=9, seed=7, judged_only=True, no_relevant="skip")


def qrels_bytes() -> bytes:
    lines = []
    for line in trec_qrels().decode().splitlines():
        q, it, d, g = line.split()
        lines.append(f"{q} {it} {d} {0 if q in NONE_RELEVANT else g}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_bytes(qrels_bytes())
    for seed, name in enumerate(RUNS, start=1):
        (tmp_path / f"{name}.trec").write_bytes(trec_run(seed))
    return tmp_path


def snapshot(settings: W.Settings = SAMPLED) -> W.Snapshot:
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("qrels.txt", qrels_bytes()))
    for seed, name in enumerate(RUNS, start=1):
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", trec_run(seed)), name=name)
    return ws


def the_command(at, prefix: str) -> list[str]:
    """The words of the page's one "Reproduce with" command starting with ``prefix``."""
    from test_sample_seed import spans

    found = [c for cap in at.caption for c in spans(cap.value) if c.startswith(prefix)]
    assert len(found) == 1, [cap.value for cap in at.caption]
    return shlex.split(found[0])


def with_runs(words: list[str], folder, names, **paths: str) -> list[str]:
    """The command's words after ``evalcore``, its ``--run NAME=FILE ...`` replaced by the runs' files, in order."""
    assert words[0] == "evalcore" and words[2:5] == ["--run", "NAME=FILE", "..."], words
    return [words[1], *run_args(folder, names), *[paths.get(w, w) for w in words[5:]]]


def test_the_sample_has_queries_without_relevant_documents():  # (else the test below could not fail on -J/skip)
    ids = load_qrels_ids()
    sampled = set(sample_query_ids(ids, SAMPLED.sample_size, SAMPLED.seed).tolist())
    assert sampled & NONE_RELEVANT and sampled - NONE_RELEVANT and len(sampled) < len(ids)


def load_qrels_ids():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "q.txt").write_bytes(qrels_bytes())
        return load_qrels(Path(d) / "q.txt").query_ids


# ------------------------------------------------------------------------------------------------ Fusion


def test_the_fusion_pages_command_gives_its_weights_on_the_sample_with_the_settings_rules(files):
    at = goto(start(snapshot()), "fusion")
    at.toggle(key="fu_search").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    names = list(at.session_state["fu_runs"])
    metric, k = at.session_state["sel_metric"], at.session_state["sel_k"]
    words = the_command(at, "evalcore fuse")
    assert "--n-samples" in words and "--judged-only" in words and "--no-relevant" in words
    trials = files / "trials.csv"
    given = with_runs(words, files, names, QRELS=str(files / "qrels.txt"), **{"fused.trec": str(files / "f.trec")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        assert main([*given, "--search-out", str(trials)]) == 0
    cli = read_csv(trials)

    # the search the page ran (the function behind it, on the page's context and options)
    ctx = S.context(ws=snapshot())
    assert ctx.ready, ctx.eval_error
    options = dict(strategy=at.session_state["fu_strategy"], step=at.session_state["fu_step"],
                   n_trials=50, seed=at.session_state["fu_seed"], tune_fraction=at.session_state["fu_fraction"],
                   c=60.0, top_n=None, method="rrf", norm="none")
    found = A._found(A._c_weights("fusrepro", ctx.qrels[None], ctx.reference, {n: ctx.runs[n] for n in names},
                                  ctx.settings, metric, k, options))
    assert found.ok, found.error
    columns = [*(f"weight:{n}" for n in names), "value"]
    np.testing.assert_array_equal(cli[columns].to_numpy(float), found.value.trials[columns].to_numpy(float))
    shown = [m.value for m in at.metric]  # the page's tuned value, as it shows it
    best = cli.loc[cli["best"].astype(bool), "value"].iloc[0]
    assert shown[0] == f"{best:.4f}"
    assert found.value.n_tune + found.value.n_test == SAMPLED.sample_size


def test_the_page_searches_judged_only_as_it_evaluates():
    """The page's weight search scores as its tables do: -J drops unjudged documents (it did not)."""
    ctx = S.context(ws=snapshot())
    plain = S.context(ws=snapshot(replace(SAMPLED, judged_only=False)))
    options = dict(strategy="grid", step=0.5, n_trials=50, seed=42, tune_fraction=None, c=60.0, top_n=None,
                   method="rrf", norm="none")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        got = [A._c_weights(f"fusrepro-j{i}", c.qrels[None], c.reference, {n: c.runs[n] for n in ("a", "b")},
                            c.settings, "ndcg", 10, options) for i, c in enumerate((ctx, plain))]
    assert all(o.ok for o in got), [o.error for o in got]
    assert not np.array_equal(got[0].value.trials["value"], got[1].value.trials["value"])


def test_fuse_takes_evaluates_query_options_with_the_same_meaning():
    parser = build_parser()
    fuse = parser.parse_args(["fuse", "--run", "x", "--out", "o"])
    ev = parser.parse_args(["evaluate", "--qrels", "q"])
    for dest in ("n_samples", "sample_seed", "judged_only", "no_relevant"):
        assert getattr(fuse, dest) == getattr(ev, dest), dest
    assert parser.parse_args(["fuse", "--run", "x", "--out", "o", "-J"]).judged_only is True


@pytest.mark.parametrize("flag, named", [(["--n-samples", "3"], "--n-samples"), (["--sample-seed", "3"], "--sample-seed"),
                                         (["-J"], "--judged-only"), (["--no-relevant", "skip"], "--no-relevant")])
def test_fuse_refuses_the_search_options_without_search(files, flag, named, capsys):
    assert main(["fuse", *run_args(files, ("a", "b")), "--out", str(files / "f.trec"), *flag]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0] and "--search" in err[0], err


def test_the_fusion_caption_names_the_options_only_where_the_settings_use_them():
    base = dict(method="rrf", norm="none", strategy="grid", step=0.1, n_trials=50, seed=42, fraction=0.5,
                metric_label="ndcg@10", ties="trec", rel_threshold=1, c=60.0, top_n=None)
    plain = R.fusion_command(**base)
    assert not any(o in plain for o in ("--n-samples", "--sample-seed", "--judged-only", "--no-relevant"))
    assert "--n-samples 9 --out" in R.fusion_command(**base, sample_size=9, sample_seed=42)
    assert "--seed 5 " in R.fusion_command(**{**base, "seed": 5}, sample_size=9, sample_seed=42)
    assert "--n-samples 9 --sample-seed 42 " in R.fusion_command(**{**base, "seed": 5}, sample_size=9, sample_seed=42)
    assert "--no-relevant skip --judged-only" in R.fusion_command(**base, no_relevant="skip", judged_only=True)


# ------------------------------------------------------------------------------------------------ Agreement


@pytest.mark.parametrize("measure", ["overlap", "rbo"])
def test_the_agreement_pages_command_gives_its_means_on_the_sample(files, measure):
    at = goto(start(snapshot()), "agreement")
    at.selectbox(key="ag_measure").set_value(measure).run()
    if measure == "rbo":
        at.number_input(key="ag_p").set_value(0.8).run()
    assert not at.exception, [e.value for e in at.exception]
    words = the_command(at, "evalcore agree")
    assert "--n-samples" in words and words[words.index("--sample-seed") + 1] == "7"
    shown = next(d.value for d in at.dataframe if {"run_a", "run_b", "mean"} <= set(getattr(d.value, "columns", [])))
    names = list(dict.fromkeys([*shown["run_a"].astype(str), *shown["run_b"].astype(str)]))
    out = files / "summary.csv"
    assert main(with_runs(words, files, names, QRELS=str(files / "qrels.txt"), **{"summary.csv": str(out)})) == 0
    cli = read_csv(out)
    cli = cli[cli["run_a"].astype(str) != cli["run_b"].astype(str)]
    key = ["run_a", "run_b"]
    got = shown.assign(run_a=shown["run_a"].astype(str), run_b=shown["run_b"].astype(str)).sort_values(key)
    want = cli.assign(run_a=cli["run_a"].astype(str), run_b=cli["run_b"].astype(str)).sort_values(key)
    assert len(got) == len(want) == 3
    for c in ("n", "mean", "std"):
        np.testing.assert_array_equal(got[c].to_numpy(float), want[c].to_numpy(float), err_msg=c)
    assert set(want["n"]) <= {SAMPLED.sample_size}  # the sample's queries, not the 15 of the runs


def test_the_agreement_caption_names_a_stepped_p_as_shown():
    # the number input stepped up from 0.8 gives 0.8 + 0.05 = 0.8500000000000001 in the browser: the page computes
    # (and the caption names) the p it shows, 0.85, not the float noise
    at = goto(start(snapshot()), "agreement")
    at.selectbox(key="ag_measure").set_value("rbo").run()
    at.number_input(key="ag_p").set_value(0.8 + 0.05).run()
    assert not at.exception, [e.value for e in at.exception]
    words = the_command(at, "evalcore agree")
    assert words[words.index("--p") + 1] == "0.85"


def test_agree_samples_the_ground_truths_queries_as_evaluate(files):
    ids = load_qrels(files / "qrels.txt").query_ids
    out = files / "t.csv"
    assert main(["agree", *run_args(files, ("a", "b")), "--qrels", str(files / "qrels.txt"), "--n-samples", "4",
                 "--sample-seed", "3", "--out", str(out)]) == 0
    got = list(dict.fromkeys(pd.read_csv(out)["query_id"].astype(str)))
    assert got == [str(q) for q in sample_query_ids(ids, 4, 3)]
    assert main(["agree", *run_args(files, ("a", "b")), "--qrels", str(files / "qrels.txt"), "--n-samples", "4",
                 "--seed", "3", "--out", str(out)]) == 0
    assert list(dict.fromkeys(pd.read_csv(out)["query_id"].astype(str))) == got


def test_agree_refuses_a_sample_without_ground_truth(files, capsys):
    assert main(["agree", *run_args(files, ("a", "b")), "--n-samples", "4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--n-samples" in err[0] and "--qrels" in err[0], err


# ------------------------------------------------------------------------------------------------ Report (JSON)


def test_the_dashboards_report_has_the_command_lines_metadata_keys(files):
    for settings in (SAMPLED, replace(SAMPLED, seed=S.CI_SEED), replace(SAMPLED, sample_size=0)):
        ctx = S.context(ws=snapshot(settings))
        assert ctx.ready, ctx.eval_error
        download = json.loads(S.report_json(ctx, 10)())["metadata"]
        words = shlex.split(R.intervals_caption(sample_size=settings.sample_size, sample_seed=settings.seed)
                            .split("`")[1])
        out = files / f"out{settings.seed}{settings.sample_size}"
        rules = ["--judged-only", "--no-relevant", "skip"]
        assert main(["evaluate", "--qrels", str(files / "qrels.txt"), *run_args(files), "--metrics", "ndcg",
                     *rules, *[w if w != "DIR" else str(out) for w in words[3:]]]) == 0
        cli = json.loads((out / "report.json").read_text())["metadata"]
        assert set(cli) <= set(download), set(cli) - set(download)
        assert download["n_samples"] == cli["n_samples"] == (settings.sample_size or None)
        assert download.get("sample_seed") == cli.get("sample_seed")
        assert download["query_sample"] == (settings.sample_size or "all")  # (kept)

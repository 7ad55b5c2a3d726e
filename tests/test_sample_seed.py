"""A page whose query sample has its own seed gives a "Reproduce with" command that reproduces its numbers.

The dashboard draws its query sample with the settings' seed and its intervals with seed 42
(:data:`evalcore.defaults.SEED`); ``evalcore evaluate --seed`` seeds both. Before, the Overview's caption named
``--seed 42`` alone (and no ``--n-samples``): a command completed from it evaluated every query (or, with
``--n-samples``, drew another sample), and no single ``--seed`` could give both seeds. Now ``--sample-seed`` (default:
``--seed``) seeds the sample alone, and the caption names ``--n-samples N --sample-seed S`` where the page samples.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace

import numpy as np
import pandas as pd
from markdown_it import MarkdownIt
from test_app import goto, start
from test_same_numbers import SETTINGS, api_evaluation, context, files, run_args, same, snapshot  # noqa: F401

from dashboard import reproduce as R
from dashboard import state as S
from evalcore.cli.main import build_parser, main
from evalcore.intervals import summarize_with_intervals
from evalcore.io import load_qrels
from evalcore.io.per_query import read_per_query_csv
from evalcore.workspace.pipeline import sample_query_ids

SAMPLED = replace(SETTINGS, sample_size=6, seed=7)


def spans(caption: str) -> list[str]:
    """The code spans of a caption, as CommonMark (Streamlit's Markdown) reads it."""
    return [t.content for t in MarkdownIt("commonmark").parseInline(caption)[0].children if t.type == "code_inline"]


def overview_command() -> list[str]:
    """The words of the Overview page's "Reproduce with" ``evalcore evaluate`` command, as the page shows it."""
    at = goto(start(snapshot(SAMPLED)), "overview")
    found = [c for cap in at.caption for c in spans(cap.value) if c.startswith("evalcore evaluate")]
    assert len(found) == 1, [cap.value for cap in at.caption]
    return shlex.split(found[0])


def test_the_overviews_command_gives_its_sampled_numbers_to_the_last_bit(files):  # noqa: F811
    words = overview_command()
    assert words[:5] == ["evalcore", "evaluate", "--qrels", "QRELS", "..."]
    out = files / "out"
    given = []
    for w in words[1:]:  # (the ground truth, the runs, the output folder: the command names the settings' options)
        given += run_args(files) if w == "..." else [{"QRELS": str(files / "qrels.txt"), "DIR": str(out)}.get(w, w)]
    assert main(given) == 0
    cli = json.loads((out / "report.json").read_text())

    ctx = context(snapshot(SAMPLED))
    sampled = set(sample_query_ids(load_qrels(files / "qrels.txt").query_ids, 6, 7).tolist())
    assert set(ctx.evaluation.table["query_id"].astype(str)) == sampled  # (the page's sample: seed 7)
    assert set(read_per_query_csv(out / "per_query.csv")["query_id"].astype(str)) == sampled
    table = api_evaluation(files).table
    api = summarize_with_intervals(table[table["query_id"].astype(str).isin(sampled)], aggregates=True)
    download = json.loads(S.report_json(ctx, 10)())  # the Overview's "Report (JSON)"
    rows = api.assign(run=api["run"].astype(str), metric=api["metric"].astype(str))
    for report in (cli, download):
        got = pd.DataFrame([report["aggregates"][r.run][f"{r.metric}@{r.k}"] for r in rows.itertuples()])
        same(got, rows, ["mean", "ci_low", "ci_high"])
    shown = S.summary(ctx)  # the leaderboard and curves (the last bit or two, as test_same_numbers says)
    key = ["run", "metric", "k"]
    shown = shown.assign(run=shown["run"].astype(str), metric=shown["metric"].astype(str)).sort_values(key)
    for c in ("mean", "ci_low", "ci_high"):
        np.testing.assert_allclose(shown[c].to_numpy(float), rows.sort_values(key)[c].to_numpy(float), rtol=0,
                                   atol=1e-15, err_msg=c)


def test_sample_seed_defaults_to_seed_and_seeds_the_sample_only(files):  # noqa: F811
    """--seed alone still seeds both (what it meant); --sample-seed moves the sample and not the intervals."""
    parsed = build_parser().parse_args(["evaluate", "--qrels", "q"])
    assert parsed.sample_seed is None and build_parser().parse_args(["compare", "--per-query", "x"]).sample_seed is None
    given = ["evaluate", "--qrels", str(files / "qrels.txt"), *run_args(files), "--metrics", "ndcg", "--k", "10",
             "--n-samples", "6", "--ci-method", "bootstrap"]

    def queries(*words: str, name: str) -> set[str]:
        assert main([*given, *words, "--out", str(files / name)]) == 0
        return set(read_per_query_csv(files / name / "per_query.csv")["query_id"].astype(str))

    ids = load_qrels(files / "qrels.txt").query_ids
    assert queries("--seed", "7", name="a") == set(sample_query_ids(ids, 6, 7).tolist())
    assert queries("--seed", "42", "--sample-seed", "7", name="b") == set(sample_query_ids(ids, 6, 7).tolist())
    a, b = (json.loads((files / n / "report.json").read_text()) for n in "ab")
    assert a["aggregates"] != b["aggregates"]  # the same queries, intervals drawn with 7 and with 42
    assert b["metadata"]["sample_seed"] == 7 and b["metadata"]["seed"] == 42


def test_the_caption_names_the_sample_only_where_there_is_one():
    assert "--n-samples" not in R.intervals_caption()
    assert "--n-samples 6 --ci-method" in R.intervals_caption(sample_size=6, sample_seed=S.CI_SEED)
    assert "--n-samples 6 --sample-seed 7 --ci-method" in R.intervals_caption(sample_size=6, sample_seed=7)

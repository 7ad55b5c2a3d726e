"""The dashboard's "Report (JSON)" and ``evaluate --out``'s report.json of the same evaluation agree on every key they
share: ``seed`` is the intervals' seed and ``sample_seed`` the query sample's in both (README "Seeds and defaults").

``ground_truth`` is in both a mapping of each run to the source of the ground truth it was judged against (the path
given on the command line, the file's name in the workspace). Before, the dashboard wrote one string and ``evaluate
--out`` a per-run mapping when the runs were judged against different aspects of seed 001's lists (nothing otherwise):
``metadata["ground_truth"][run]`` failed on the dashboard's report. ``qrels`` had the converse seam: the dashboard
wrote a mapping of each aspect to the file there, the command line the file (one string): both write the string.

Before, the dashboard wrote the Data page's sample seed under ``seed`` (and ``sample_seed`` only where it differed
from the intervals' 42), the command line its ``--seed``, the intervals' (and the sample's unless ``--sample-seed``):
with a sample drawn with seed 7 the two reports of one evaluation said ``seed: 7`` and ``seed: 42``. Each test runs
the command line's ``main`` and the dashboard's download on the same files in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
from test_app import trec_qrels, trec_run
from test_app_views import CONTENT, FIX, VIBES, seed001_run
from test_same_numbers import RUNS, SETTINGS, run_args

from dashboard import state as S
from evalcore import workspace as W
from evalcore.cli.main import main
from evalcore.report import sample_metadata

#: metadata keys that say where a report comes from, not what it holds: when it was written, by which command, and
#: the ground truth's source as read (``qrels``, ``ground_truth``: the paths given on the command line; the file's
#: name in the workspace). Their values differ; ``ground_truth``'s shape does not (a mapping of every run)
ORIGIN_KEYS = {"timestamp", "command", "qrels", "ground_truth"}


def snapshot(settings: W.Settings) -> W.Snapshot:
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("qrels.txt", trec_qrels()))
    for seed, name in enumerate(RUNS, start=1):
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", trec_run(seed)), name=name)
    return ws


def assert_same_report(download: dict, cli: dict) -> None:
    """Every key the two reports share holds the same value (metadata: but :data:`ORIGIN_KEYS`)."""
    assert set(download) == set(cli)
    shared = (set(download["metadata"]) & set(cli["metadata"])) - ORIGIN_KEYS
    assert {"seed", "sample_seed", "n_samples", "ci"} <= shared
    def value(meta: dict, key: str):  # (a reference model's recipe: its file is where it was read from too)
        return {k: v for k, v in meta[key].items() if k != "file"} if key == "reference" else meta[key]

    differ = {k: (value(download["metadata"], k), value(cli["metadata"], k)) for k in sorted(shared)
              if value(download["metadata"], k) != value(cli["metadata"], k)}
    assert not differ, differ
    # ground_truth: one shape in both, each run's ground truth, whatever the runs' aspects
    runs = [str(r) for r in cli["metadata"]["runs"]]
    for meta in (download["metadata"], cli["metadata"]):
        assert isinstance(meta["ground_truth"], dict), meta["ground_truth"]
        assert sorted(meta["ground_truth"]) == sorted(runs), meta["ground_truth"]
        assert isinstance(meta["qrels"], str), meta["qrels"]  # the ground truth's source, one string in both
    for part in set(download) - {"metadata"}:
        assert download[part] == cli[part], part


@pytest.mark.parametrize("sample_size, sample_seed", [(9, 7), (9, S.CI_SEED), (0, 7), (0, S.CI_SEED)])
def test_both_reports_of_one_evaluation_agree_on_every_shared_key(tmp_path, sample_size, sample_seed):
    (tmp_path / "qrels.txt").write_bytes(trec_qrels())
    for seed, name in enumerate(RUNS, start=1):
        (tmp_path / f"{name}.trec").write_bytes(trec_run(seed))
    settings = replace(SETTINGS, sample_size=sample_size, seed=sample_seed)
    ctx = S.context(ws=snapshot(settings))
    assert ctx.ready, ctx.eval_error
    download = json.loads(S.report_json(ctx, 10)())
    sample = ["--n-samples", str(sample_size), "--sample-seed", str(sample_seed)] if sample_size else []
    out = tmp_path / "out"
    assert main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), *run_args(tmp_path), "--metrics", "ndcg",
                 "recall", "--k", "5", "10", *sample, "--ci-method", "bootstrap", "--seed", str(S.CI_SEED),
                 "--out", str(out)]) == 0
    cli = json.loads((out / "report.json").read_text())
    assert_same_report(download, cli)
    meta = download["metadata"]
    assert meta["seed"] == meta["ci"]["seed"] == S.CI_SEED  # the intervals' seed
    assert meta["sample_seed"] == (sample_seed if sample_size else None)  # the sample's, none without one
    assert meta["query_sample"] == (sample_size or "all")  # (the dashboard's own key, kept)


def test_ground_truth_has_one_shape_when_runs_are_judged_against_different_aspects(tmp_path):
    """Seed 001's ordered lists, runs judged against the content and the vibes lists: both reports map each run to
    the file (the path given, its name in the workspace); ``aspects`` says which list judged it, alike in both."""
    gt = (FIX / "seed001_movies.json").read_bytes()
    (tmp_path / "movies.json").write_bytes(gt)
    runs = {"content_run": CONTENT, "vibes_run": VIBES, "mixed": CONTENT}
    settings = W.Settings(k=(1, 5), metrics=("recall", "ndcg"))
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("movies.json", gt))
    words = []
    for name, aspect in runs.items():
        data = seed001_run(VIBES if name == "mixed" else aspect)
        (tmp_path / f"{name}.trec").write_bytes(data)
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", data), name=name, aspect=aspect)
        words += ["--run", f"{name}={tmp_path / f'{name}.trec'}"]
    ctx = S.context(ws=ws)
    assert ctx.ready, ctx.eval_error
    download = json.loads(S.report_json(ctx, 10)())
    out = tmp_path / "out"
    assert main(["evaluate", "--qrels", str(tmp_path / "movies.json"), *words, "--aspect", CONTENT, "--aspect",
                 f"vibes_run={VIBES}", "--metrics", "recall", "ndcg", "--k", "1", "5", "--ci-method", "bootstrap",
                 "--seed", str(S.CI_SEED), "--out", str(out)]) == 0
    cli = json.loads((out / "report.json").read_text())
    assert_same_report(download, cli)
    assert download["metadata"]["aspects"] == cli["metadata"]["aspects"] == runs
    assert download["metadata"]["ground_truth"] == dict.fromkeys(runs, "movies.json")
    assert download["metadata"]["qrels"] == "movies.json" == os.path.basename(cli["metadata"]["qrels"])
    assert {r: os.path.basename(p) for r, p in cli["metadata"]["ground_truth"].items()} == dict.fromkeys(runs,
                                                                                                       "movies.json")


def test_seed_is_the_intervals_seed_whatever_seeds_the_sample(tmp_path):
    """``evaluate --seed S`` alone seeds the sample and the intervals: both keys say S."""
    (tmp_path / "qrels.txt").write_bytes(trec_qrels())
    for seed, name in enumerate(RUNS, start=1):
        (tmp_path / f"{name}.trec").write_bytes(trec_run(seed))
    out = tmp_path / "o"
    assert main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), *run_args(tmp_path), "--k", "10",
                 "--n-samples", "6", "--seed", "3", "--ci-method", "bootstrap", "--out", str(out)]) == 0
    meta = json.loads((out / "report.json").read_text())["metadata"]
    assert (meta["seed"], meta["sample_seed"], meta["n_samples"], meta["ci"]["seed"]) == (3, 3, 6, 3)


def test_sample_metadata_has_one_meaning_per_key():
    assert sample_metadata(n_samples=5, sample_seed=7, seed=42) == {"n_samples": 5, "seed": 42, "sample_seed": 7}
    assert sample_metadata(n_samples=None, sample_seed=7, seed=1) == {"n_samples": None, "seed": 1,
                                                                      "sample_seed": None}

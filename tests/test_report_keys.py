"""The dashboard's "Report (JSON)" and ``evaluate --out``'s report.json of the same evaluation agree on every key they
share: ``seed`` is the intervals' seed and ``sample_seed`` the query sample's in both (README "Seeds and defaults").

Before, the dashboard wrote the Data page's sample seed under ``seed`` (and ``sample_seed`` only where it differed
from the intervals' 42), the command line its ``--seed``, the intervals' (and the sample's unless ``--sample-seed``):
with a sample drawn with seed 7 the two reports of one evaluation said ``seed: 7`` and ``seed: 42``. Each test runs
the command line's ``main`` and the dashboard's download on the same files in ``tmp_path``.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from test_app import trec_qrels, trec_run
from test_same_numbers import RUNS, SETTINGS, run_args

from dashboard import state as S
from evalcore import workspace as W
from evalcore.cli.main import main
from evalcore.report import sample_metadata

#: metadata keys that say where a report comes from, not what it holds: when it was written, by which command, and
#: the ground truth's source as read (``qrels``, ``ground_truth``: the paths given on the command line, per run where
#: runs have their own aspect; the file's name in the workspace)
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

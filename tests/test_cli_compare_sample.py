"""``evalcore compare --per-query FILE --n-samples N [--sample-seed S]`` compares the runs on N of the file's
queries, drawn as ``evaluate`` / ``compare --qrels ... --run ... --n-samples N`` draw them from the ground truth:
the same table of differences, p-values and intervals either way.

Before, ``--n-samples`` (and ``--sample-seed`` with it) was silently ignored with ``--per-query``: every query of
the file was compared, with numbers other than those of the run files under the same options.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.cli.main import main


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(11)
    queries = [f"q{i}" for i in rng.permutation(60)[:40]]  # the ground truth's order is not the ids' sorted order
    with open(tmp_path / "qrels.txt", "w") as fh:
        for q in queries:
            for d in rng.choice(12, size=4, replace=False):
                fh.write(f"{q} 0 d{d} {rng.integers(0, 3)}\n")
    for name in ("base", "better", "other"):
        with open(tmp_path / f"{name}.trec", "w") as fh:
            for q in queries[:-3]:  # some queries of the ground truth are in no run
                for r, d in enumerate(rng.choice(12, size=8, replace=False)):
                    fh.write(f"{q} Q0 d{d} {r + 1} {20 - r} {name}\n")
    return tmp_path


def _runs(folder) -> list[str]:
    return [w for n in ("base", "better", "other") for w in ("--run", f"{n}={folder / f'{n}.trec'}")]


@pytest.mark.parametrize("options", [["--n-samples", "11", "--sample-seed", "3"],
                                     ["--n-samples", "17", "--seed", "5", "--test", "permutation",
                                      "--n-resamples", "200"],
                                     ["--n-samples", "400"]])  # more than there are: every query
def test_a_per_query_file_is_sampled_as_the_run_files_are(files, options, capsys):
    metrics = ["--metric", "ndcg@10", "recall@5"]
    assert main(["evaluate", "--qrels", str(files / "qrels.txt"), *_runs(files), "--metrics", "ndcg", "recall",
                 "--k", "5", "10", "--out", str(files / "all")]) == 0
    assert main(["compare", "--qrels", str(files / "qrels.txt"), *_runs(files), *metrics, *options,
                 "--out", str(files / "from_runs.csv")]) == 0
    assert main(["compare", "--per-query", str(files / "all" / "per_query.csv"), *metrics, *options,
                 "--out", str(files / "from_table.csv")]) == 0
    from_runs, from_table = pd.read_csv(files / "from_runs.csv"), pd.read_csv(files / "from_table.csv")
    pd.testing.assert_frame_equal(from_table, from_runs)
    whole = options[1] == "400"
    assert (from_runs["n"] == 40).all() == whole  # the sample is a sample (all 40 queries: only when asked for more)
    capsys.readouterr()


def test_another_sample_seed_gives_another_sample_from_a_per_query_file(files):
    assert main(["evaluate", "--qrels", str(files / "qrels.txt"), *_runs(files), "--metrics", "ndcg", "--k", "10",
                 "--out", str(files / "all")]) == 0
    means = []
    for seed in ("1", "2"):
        out = files / f"s{seed}.csv"
        assert main(["compare", "--per-query", str(files / "all" / "per_query.csv"), "--n-samples", "10",
                     "--sample-seed", seed, "--out", str(out)]) == 0
        frame = pd.read_csv(out)
        assert (frame["n"] == 10).all()
        means.append(frame["mean_a"].tolist())
    assert means[0] != means[1]

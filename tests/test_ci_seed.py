"""The Overview's intervals of a query sample drawn with a seed other than 42 can be reproduced on the command line.

The dashboard draws its query sample with the Data page's seed and its intervals with 42 (``evalcore.defaults``);
``evaluate``'s ``--seed`` drew both, so for a sample seed of 7 no command gave the page's intervals, and the
caption's "evalcore evaluate ... --seed 42" gave another sample. Now ``--ci-seed`` seeds the intervals alone (default:
``--seed``, as before) and the caption names it; its command, run as written, gives the page's numbers.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd

from dashboard import reproduce as R
from evalcore.cli import main
from evalcore.intervals import summarize_with_intervals

QIDS = [f"q{i:02d}" for i in range(30)]
DOCS = [f"d{j:02d}" for j in range(40)]


def _inputs(tmp_path: Path) -> list[str]:
    rng = np.random.default_rng(3)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {rng.integers(1, 3)}\n" for q in QIDS for d in rng.choice(DOCS, 4, replace=False)),
                     encoding="utf-8")
    args = ["--qrels", str(qrels)]
    for name in ("a", "b"):
        run = tmp_path / f"{name}.trec"
        run.write_text("".join(f"{q} Q0 {d} {r + 1} {20 - r + rng.normal():.4f} {name}\n"
                               for q in QIDS for r, d in enumerate(rng.choice(DOCS, 15, replace=False))),
                       encoding="utf-8")
        args += ["--run", f"{name}={run}"]
    return args + ["--metrics", "ndcg", "recall", "--k", "5", "10"]


def _intervals(out: Path) -> tuple[dict, pd.DataFrame]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    got = {(run, m): (v["ci_low"], v["ci_high"]) for run, ms in report["aggregates"].items() for m, v in ms.items()}
    table = pd.read_csv(out / "per_query.csv", dtype={"query_id": str, "run": str, "metric": str})
    return got, table


def _expected(table: pd.DataFrame, **kw) -> dict:
    s = summarize_with_intervals(table, **kw)
    return {(r.run, f"{r.metric}@{r.k}"): (r.ci_low, r.ci_high) for r in s.itertuples(index=False)}


def _same(got: dict, want: dict) -> bool:
    """The same intervals up to the last bits (the per-query CSV's values and a summation order; the seeds' intervals
    differ in the second or third decimal)."""
    return got.keys() == want.keys() and all(np.allclose(got[c], want[c], rtol=1e-12, atol=0) for c in got)


def test_ci_seed_seeds_the_intervals_only(tmp_path: Path) -> None:
    base = ["evaluate", *_inputs(tmp_path), "--n-samples", "12", "--seed", "7", "--ci-method", "bootstrap"]
    assert main([*base, "--ci-seed", "42", "--out", str(tmp_path / "o42")]) == 0
    assert main([*base, "--out", str(tmp_path / "o7")]) == 0
    got42, t42 = _intervals(tmp_path / "o42")
    got7, t7 = _intervals(tmp_path / "o7")
    assert set(t42["query_id"]) == set(t7["query_id"]) and t42["query_id"].nunique() == 12  # the seed-7 sample
    assert _same(got42, _expected(t42))  # the dashboard's intervals (the Python defaults: seed 42)
    assert _same(got7, _expected(t7, seed=7)) and not _same(got7, got42)  # without it: --seed, as before


def test_the_overview_caption_command_gives_the_page_s_intervals(tmp_path: Path) -> None:
    caption = R.intervals_caption(sample_size=12, sample_seed=7)
    command = re.search(r"`(evalcore evaluate [^`]*)`", caption).group(1)
    assert "--n-samples 12" in command and "--seed 7" in command and "--ci-seed 42" in command
    words = shlex.split(command.replace("DIR", str(tmp_path / "out")))[1:]
    at = words.index("...")
    assert main([*words[:at], *_inputs(tmp_path), *words[at + 1:]]) == 0
    got, table = _intervals(tmp_path / "out")
    assert table["query_id"].nunique() == 12
    assert _same(got, _expected(table))
    # every query (no sample): the caption as before, one seed
    assert "--ci-seed" not in R.intervals_caption() and "--n-samples" not in R.intervals_caption()

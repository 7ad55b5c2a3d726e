"""compare's means are the summaries' to the bit (evalcore.results.exact_mean), whichever pair."""

from __future__ import annotations

import numpy as np
import pytest
from test_stats import make_table

from evalcore.stats import compare


@pytest.mark.parametrize("seed", range(3))
def test_compare_means_are_the_summaries_means_to_the_bit(seed):
    """compare's mean_a/mean_b took np.mean of the pair's values in the pair's sorted order: the same run's mean
    differed by an ulp from pair to pair and from summarize (the Overview, report.json)."""
    from evalcore.aggregate import summarize

    rng = np.random.default_rng(seed)
    values = {r: {f"q{i}": float(v) for i, v in enumerate(rng.random(300) / 3)} for r in ("A", "B", "C")}
    table = make_table(values)
    means = summarize(table).set_index("run")["mean"]
    out = compare(table, metric="ndcg", k=10)
    for row in out.itertuples(index=False):
        assert row.mean_a == means[row.run_a] and row.mean_b == means[row.run_b]  # bit for bit
    c_rows = out[(out["run_a"] == "C") | (out["run_b"] == "C")]
    c_means = {float(r.mean_a) if r.run_a == "C" else float(r.mean_b) for r in c_rows.itertuples(index=False)}
    assert len(c_means) == 1  # one mean for C, whichever pair

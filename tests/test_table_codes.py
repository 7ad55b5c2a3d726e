"""Integer-code fast paths of the summaries (5.6 M rows at 14 runs x 20,000 queries): the same answers as the
pandas calls they replace, on random tables with repeats, NaN, unused and look-alike categories."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.aggregate import _first_duplicate
from evalcore.intervals import _sorted_string_codes


def _table(rng: np.random.Generator, n: int, *, categorical: bool) -> pd.DataFrame:
    t = pd.DataFrame({"run": rng.choice(["b", "a", "c"], n), "query_id": rng.choice([f"q{i}" for i in range(40)], n),
                      "metric": rng.choice(["ndcg", "map", None], n), "k": rng.choice([5, 10, 100], n)})
    if categorical:
        for c in ("run", "query_id", "metric"):
            extra = ["unused", "zz"] if c == "query_id" else []
            t[c] = pd.Categorical(t[c], categories=[*sorted(set(t[c].dropna()), reverse=True), *extra])
    return t


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("categorical", [False, True])
def test_first_duplicate_is_pandas_first_duplicated_row(seed, categorical):
    rng = np.random.default_rng(seed)
    t = _table(rng, int(rng.integers(1, 400)), categorical=categorical)
    key = ["run", "query_id", "metric", "k"]
    dup = t.duplicated(subset=key, keep="first").to_numpy()
    assert _first_duplicate(t, key) == (int(np.flatnonzero(dup)[0]) if dup.any() else None)
    unique = t.drop_duplicates(subset=key).reset_index(drop=True)
    assert _first_duplicate(unique, key) is None


@pytest.mark.parametrize("seed", range(4))
def test_sorted_string_codes_are_factorize_of_the_strings(seed):
    rng = np.random.default_rng(seed)
    t = _table(rng, 300, categorical=True)
    for col in (t["query_id"], t["query_id"].astype(object), t["run"]):
        codes, n = _sorted_string_codes(col)
        want, uniques = pd.factorize(col.astype(str), sort=True)
        np.testing.assert_array_equal(codes, want)
        assert n == len(uniques)
    # categories that print alike (1 and "1") are one query, as the string factorisation has them
    odd = pd.Series(pd.Categorical([1, "1", "2", 1], categories=[1, "1", "2"]))
    codes, n = _sorted_string_codes(odd)
    want, uniques = pd.factorize(odd.astype(str), sort=True)
    np.testing.assert_array_equal(codes, want)
    assert n == len(uniques) == 2

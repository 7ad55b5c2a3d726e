"""evalcore._categorical gives exactly what the plain pandas expressions it replaces give (the names of a
table's runs and queries read from its categories instead of one string per row)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore._categorical import distinct_strings, isin_strings, pivot_strings, str_codes

IDS = ["q10", "q2", "1", "01", " q", "é", "Q2", "q1"]  # look-alikes, unsorted, non-ASCII


def frame(seed: int, *, kind: str) -> pd.DataFrame:
    """A metric@k slice: each (run, query) once, some missing; ids as categories (unused ones too, in no
    sorted order), as plain strings, or as categories that are not all strings."""
    rng = np.random.default_rng(seed)
    runs = ["b", "a", "c d", "unused"]
    pairs = [(r, q) for r in runs[:3] for q in IDS if rng.random() < 0.8]
    out = pd.DataFrame({"run": [r for r, _ in pairs], "query_id": [q for _, q in pairs],
                        "value": rng.random(len(pairs))})
    if kind == "category":
        out = out.astype({"run": pd.CategoricalDtype(runs), "query_id": pd.CategoricalDtype([*IDS[::-1], "zz"])})
    elif kind == "mixed":  # 1 and "1" print alike: astype(str) merges them
        out["query_id"] = pd.Categorical(out["query_id"].replace({"01": 1}), categories=[*IDS[:3], 1, *IDS[4:]])
        out = out.astype({"run": "category"})
    elif kind == "missing":
        out = out.astype({"run": "category", "query_id": "category"})
        out.loc[out.index[::5], "run"] = np.nan
    return out


def plain_pivot(f: pd.DataFrame) -> pd.DataFrame:
    return f.assign(run=f["run"].astype(str), query_id=f["query_id"].astype(str)).pivot(
        index="query_id", columns="run", values="value")


@pytest.mark.parametrize("kind", ["category", "object", "mixed", "missing"])
@pytest.mark.parametrize("seed", range(4))
def test_each_equals_its_pandas_expression(kind, seed):
    f = frame(seed, kind=kind)
    for col in ("run", "query_id"):
        assert distinct_strings(f[col]) == set(f[col].astype(str))
        for names in (["a", "c d"], ["1", "01", "nan"], [], ["zz", "unused"]):
            got = isin_strings(f[col], names)
            assert got.dtype == bool
            np.testing.assert_array_equal(got, f[col].astype(str).isin(names).to_numpy())
    for part in (f, f[isin_strings(f["run"], ["a", "c d"])]):  # a subset: its unused categories are no column
        same_pivot(part)


def same_pivot(f: pd.DataFrame) -> None:
    """pivot_strings gives plain_pivot's frame, or raises its error (1 and "1" are one id once strings)."""
    try:
        want = plain_pivot(f)
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e)):
            pivot_strings(f, index="query_id", columns="run", values="value")
        return
    pd.testing.assert_frame_equal(pivot_strings(f, index="query_id", columns="run", values="value"), want,
                                  check_exact=True)


def test_only_string_categories_without_missing_values_take_the_fast_path():
    f = frame(0, kind="category")
    codes, names = str_codes(f["run"])
    assert names.tolist() == ["b", "a", "c d", "unused"] and (names[codes] == f["run"].astype(str).to_numpy()).all()
    assert str_codes(frame(0, kind="object")["run"]) is None
    assert str_codes(frame(0, kind="mixed")["query_id"]) is None
    assert str_codes(frame(0, kind="missing")["run"]) is None


def test_a_pair_twice_and_an_empty_frame_are_pandas_own():
    f = frame(1, kind="category")
    twice = pd.concat([f, f.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match="duplicate entries"):
        plain_pivot(twice)
    with pytest.raises(ValueError, match="duplicate entries"):
        pivot_strings(twice, index="query_id", columns="run", values="value")
    empty = f.iloc[:0]
    pd.testing.assert_frame_equal(pivot_strings(empty, index="query_id", columns="run", values="value"),
                                  plain_pivot(empty))
    ints = f.assign(value=np.arange(len(f)))  # not float64: pandas pivots it (keeping the integers)
    pd.testing.assert_frame_equal(pivot_strings(ints, index="query_id", columns="run", values="value"),
                                  plain_pivot(ints))

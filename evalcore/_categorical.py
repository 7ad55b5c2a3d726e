"""Names in a per-query table's categorical columns, without turning every row into a string.

The dashboard's tables hold run names and query ids as categories (an integer code per row): a
metric@k slice of 138 runs x 5,000 queries has 690,000 rows, and ``col.astype(str)`` builds 690,000
Python strings (~0.1-0.2 s a column, several times per test table). The functions here read the
categories once and the codes as integers. Each gives exactly what the plain pandas expression in its
docstring gives (tested against it); for a column that is not a categorical of ``str`` categories
without a missing value, it computes that very expression.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ._lazy import pd

__all__ = ["str_codes", "distinct_strings", "isin_strings", "pivot_strings"]


def str_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """``(codes, names)`` with ``col.astype(str)`` equal to ``names[codes]`` (``names``: the categories, an object
    array of distinct ``str``), or None when ``col`` is not a categorical of ``str`` categories without a missing
    value (then ``astype(str)`` may merge categories or spell a missing value)."""
    if not isinstance(col.dtype, pd.CategoricalDtype):
        return None
    names = np.asarray(col.cat.categories, dtype=object)
    if not all(type(c) is str for c in names.tolist()):
        return None
    codes = col.cat.codes.to_numpy()
    if len(codes) and int(codes.min()) < 0:
        return None
    return codes, names


def _used(codes: np.ndarray, n: int) -> np.ndarray:
    """Whether each of ``n`` codes occurs."""
    return np.bincount(codes, minlength=n).astype(bool) if len(codes) else np.zeros(n, dtype=bool)


def distinct_strings(col: pd.Series) -> set[str]:
    """``set(col.astype(str))``."""
    got = str_codes(col)
    if got is None:
        return set(col.astype(str))
    codes, names = got
    return set(names[_used(codes, len(names))].tolist())


def isin_strings(col: pd.Series, names: Iterable[str]) -> np.ndarray:
    """``col.astype(str).isin(names).to_numpy()`` (a bool array)."""
    names = list(names)
    got = str_codes(col)
    if got is None:
        return col.astype(str).isin(names).to_numpy()
    codes, cats = got
    wanted = set(names)
    return np.array([c in wanted for c in cats.tolist()], dtype=bool)[codes]


def pivot_strings(frame: pd.DataFrame, *, index: str, columns: str, values: str) -> pd.DataFrame:
    """``frame.assign(**{columns: frame[columns].astype(str), index: frame[index].astype(str)}).pivot(index=index,
    columns=columns, values=values)``: one row per distinct ``index`` string, one column per distinct ``columns``
    string (both sorted), NaN where no row has the pair; pandas' own when a pair appears twice (its error), when a
    column is not a categorical of ``str`` or ``values`` is not float64."""
    rows, cols, vals = str_codes(frame[index]), str_codes(frame[columns]), frame[values]
    if rows is None or cols is None or vals.dtype != np.float64 or len(frame) == 0:
        return _plain_pivot(frame, index=index, columns=columns, values=values)
    (rc, rn), (cc, cn) = rows, cols
    rpos, rnames = _sorted_used(rc, rn)
    cpos, cnames = _sorted_used(cc, cn)
    i, j = rpos[rc], cpos[cc]
    seen = np.zeros((len(rnames), len(cnames)), dtype=bool)
    seen[i, j] = True
    if np.count_nonzero(seen) != len(frame):  # a pair twice: pandas says so
        return _plain_pivot(frame, index=index, columns=columns, values=values)
    out = np.full(seen.shape, np.nan)
    out[i, j] = vals.to_numpy()
    return pd.DataFrame(out, index=pd.Index(rnames, dtype=object, name=index),
                        columns=pd.Index(cnames, dtype=object, name=columns))


def _sorted_used(codes: np.ndarray, names: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position of each category among the used ones sorted as strings (-1: unused), those names sorted)."""
    used = np.flatnonzero(_used(codes, len(names)))
    order = sorted(range(len(used)), key=lambda t: names[used[t]])
    pos = np.full(len(names), -1, dtype=np.int64)
    pos[used[order]] = np.arange(len(used))
    out = np.empty(len(used), dtype=object)
    out[:] = [names[used[t]] for t in order]
    return pos, out


def _plain_pivot(frame: pd.DataFrame, *, index: str, columns: str, values: str) -> pd.DataFrame:
    return frame.assign(**{columns: frame[columns].astype(str), index: frame[index].astype(str)}).pivot(
        index=index, columns=columns, values=values)

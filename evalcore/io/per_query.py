"""Reading back a ``per_query.csv`` that ``evaluate --out`` wrote (``run, query_id, domain, metric, k, value``).

Values are parsed round-trip (the file's shortest round-trip digits give back
the very floats: tied differences stay ties). Every fault names the file and,
where there is one, the line: an empty file, a missing column, a ``k`` that is
not an integer, a value that is not a number, a row without a value (only
``first_rel_rank`` may be empty: nothing relevant was retrieved).
"""

from __future__ import annotations

import io

import numpy as np

from .._lazy import pd
from ..errors import EmptyInputError, InputFormatError, MissingColumnError
from ..metrics import NAN_METRICS, metric_base
from .source import Source, decode_text, read_bytes, refuse_broken_ids, strip_ids

__all__ = ["PER_QUERY_COLUMNS", "read_per_query_csv"]

#: The columns of a per-query table file (``domain`` may be absent: no domain).
PER_QUERY_COLUMNS = ("run", "query_id", "domain", "metric", "k", "value")
_TEXT = {"run": str, "query_id": str, "domain": str, "metric": str}


def read_per_query_csv(src: Source, *, name: str | None = None) -> pd.DataFrame:
    """The per-query table of a CSV file ``evaluate --out`` wrote (any order of its columns).

    Parameters
    ----------
    src : path, bytes or binary stream
    name : str, optional
        Display name in messages (default: the path).

    Returns
    -------
    DataFrame
        ``run, query_id, domain, metric, k, value`` (``domain`` ``""`` where absent), ``k`` int64,
        ``value`` float64 (NaN only for ``first_rel_rank``). Run names and query ids are stripped of ASCII
        white space only, as every id reader reads an id (:func:`.source.strip_ids`: a non-breaking space stays).

    Raises
    ------
    InputFormatError
        Unreadable, not UTF-8, empty, no rows, a column missing, a bad ``k`` or value (file and line).

    >>> read_per_query_csv(b"run,query_id,metric,k,value\\nA,q1,ndcg,10,0.5\\n", name="pq.csv")["k"].tolist()
    [10]
    """
    data, label = read_bytes(src, name=name)
    text = decode_text(data, label)
    try:
        head = pd.read_csv(io.StringIO(text), nrows=0)
    except pd.errors.EmptyDataError:
        raise EmptyInputError("empty: expected a per_query.csv written by `evaluate --out`", file=label) from None
    missing = [c for c in PER_QUERY_COLUMNS if c != "domain" and c not in head.columns]
    if missing:
        raise MissingColumnError(f"needs the columns {[c for c in PER_QUERY_COLUMNS if c != 'domain']} (a "
                                 f"per_query.csv written by `evaluate --out`); it lacks {missing}, has "
                                 f"{list(head.columns)}", file=label, line=1)
    table = _parse(text, label)
    if table.empty:
        raise EmptyInputError("no rows below the header", file=label)
    table["domain"] = table["domain"].fillna("") if "domain" in table.columns else ""
    for col in ("run", "query_id"):  # ids: ASCII white space around one is not part of it, as in every id reader
        codes, distinct = pd.factorize(table[col])  # (each distinct id stripped once; a missing cell: code -1)
        table[col] = np.append(strip_ids(distinct), None)[codes]
    for col in ("run", "query_id", "metric"):
        bad = (table[col].isna() | (table[col] == "")).to_numpy()
        if bad.any():
            raise InputFormatError(f"empty {col}", file=label, line=_line(bad))
    for col, what in (("run", "run name"), ("query_id", "query id"), ("domain", "domain")):
        refuse_broken_ids(table[col].to_numpy(object), what=what, file=label, line=lambda i: i + 2)
    _check_values(table, label)
    return table[list(PER_QUERY_COLUMNS)].reset_index(drop=True)


def _parse(text: str, label: str) -> pd.DataFrame:
    """Parse, ``value`` round-trip; a ``k`` or ``value`` that does not parse is found and named with its line."""
    kw = dict(dtype={**_TEXT, "k": "int64", "value": "float64"}, keep_default_na=False,
              na_values={"value": [""], "run": [""], "query_id": [""], "metric": [""]}, float_precision="round_trip")
    try:
        return pd.read_csv(io.StringIO(text), **kw)
    except (ValueError, TypeError):
        pass  # a k or value that does not parse (or a missing k): find which, as text
    raw = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    for col, ok in (("k", _is_integer), ("value", _is_number)):
        bad = ~np.array([isinstance(v, str) and ok(v) for v in raw[col].tolist()], dtype=bool)  # (NaN: no field)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "an integer cutoff" if col == "k" else "a number (or empty for first_rel_rank)"
            raise InputFormatError(f"{col} {raw[col].iloc[i]!r} is not {what}", file=label, line=i + 2)
    raise InputFormatError("does not parse as a per-query table", file=label)  # pragma: no cover - parsed above


def _is_integer(v: str) -> bool:
    return v.strip().lstrip("+-").isdigit()


def _is_number(v: str) -> bool:
    if not v.strip():
        return True
    try:
        float(v)
    except ValueError:
        return False
    return True


def _line(mask: np.ndarray) -> int:
    """The file line of the first row set in ``mask`` (line 1 is the header)."""
    return int(np.flatnonzero(mask)[0]) + 2


def _check_values(table: pd.DataFrame, label: str) -> None:
    """No value missing (a short row, an empty field) except first_rel_rank's; no infinite value."""
    vals = table["value"].to_numpy(dtype=np.float64)
    base = np.array([metric_base(m) for m in table["metric"].astype(str).tolist()], dtype=object)
    empty = np.isnan(vals) & ~np.isin(base, list(NAN_METRICS))  # (NaN is one of first_rel_rank's values)
    if empty.any():
        i = _line(empty)
        row = table.iloc[i - 2]
        raise InputFormatError(f"no value for run {row['run']!r}, query {row['query_id']!r}, {row['metric']}@"
                               f"{int(row['k'])} (a short row or an empty field)", file=label, line=i)
    inf = np.isinf(vals)
    if inf.any():
        raise InputFormatError(f"value {float(vals[_line(inf) - 2])!r} is not finite", file=label, line=_line(inf))

"""The fast report.json writer (evalcore.report_json) gives the same bytes as the implementation it replaced.

The oracle below is the per-query code of evalcore/report.py as it was before the
fast writer (commit 4d23878), copied verbatim, serialised with ``json.dumps`` as
``write_outputs`` did.  The rest of the report comes from the current
``build_report`` on both sides, so the comparison covers exactly what changed.
Data are random, with awkward ids (quotes, backslashes, control characters,
``%``, non-ASCII, numbers as text) and awkward floats (NaN of first_rel_rank, -0.0, subnormals,
1e16, values printed with 17 digits).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evalcore import report as R
from evalcore._columns import factorize_strings
from evalcore.data import Run
from evalcore.evaluate import Evaluation
from evalcore.io.source import ASCII_WS, first_broken_id
from evalcore.report_json import per_query_dict, per_query_entries, per_query_text, report_text


# ----------------------------------------------------------------------------- the old implementation
def _old_label(metric: str, k: int) -> str:
    return metric if int(k) == 0 else f"{metric}@{int(k)}"


def _old_codes_of(col: pd.Series) -> tuple[np.ndarray, list[str]]:
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy(), [str(x) for x in col.cat.categories]
    codes, uniq = pd.factorize(col.astype(str))
    return codes, [str(x) for x in uniq]


def _old_per_query(evaluation: Evaluation, runs: Mapping[str, Run] | None, *, top_k: int) -> dict[str, Any]:
    from evalcore.ranking import rank_order

    table = evaluation.table
    mk = table[["metric", "k"]].drop_duplicates()
    labels = [_old_label(str(m), int(k)) for m, k in mk.itertuples(index=False)]
    lab_index = pd.MultiIndex.from_frame(mk.astype({"metric": str}))
    lab_codes = lab_index.get_indexer(pd.MultiIndex.from_arrays([table["metric"].astype(str), table["k"]]))
    q_codes, q_names = _old_codes_of(table["query_id"])
    r_codes, r_names = _old_codes_of(table["run"])
    values = np.full((len(r_names), len(q_names), len(labels)), np.nan)
    present = np.zeros((len(r_names), len(q_names)), dtype=bool)
    values[r_codes, q_codes, lab_codes] = table["value"].to_numpy(dtype=np.float64)
    present[r_codes, q_codes] = True
    per_query: dict[str, dict[str, dict[str, Any]]] = {}
    for ri, run_name in enumerate(r_names):
        qs = np.flatnonzero(present[ri])
        block = values[ri, qs]
        has_nan = np.isnan(block).any(axis=1)
        rows = block.tolist()
        for qi, row, nan in zip(qs.tolist(), rows, has_nan.tolist(), strict=True):
            if nan:
                row = [None if v != v else v for v in row]
            per_query.setdefault(q_names[qi], {})[run_name] = dict(zip(labels, row, strict=True))
    if runs:
        ties = evaluation.settings.get("ties", "trec")
        for run_name, run in runs.items():
            if run_name not in r_names:
                continue
            order, pos = rank_order(run, ties=ties)
            keep = order[pos < top_k]
            qidx = run.q[keep]
            if len(qidx) == 0:
                continue
            docs = run.docs_at(keep).tolist()
            bounds = np.flatnonzero(np.r_[True, qidx[1:] != qidx[:-1]]).tolist()
            for qi, a, b in zip(qidx[bounds].tolist(), bounds, [*bounds[1:], len(docs)], strict=True):
                entry = per_query.get(str(run.query_ids[qi]))
                if entry is not None and run_name in entry:
                    entry[run_name]["topK"] = docs[a:b]
    return per_query


def _old_report_json(evaluation: Evaluation, runs: Mapping[str, Run] | None, *, top_k: int,
                     metadata: Mapping[str, Any], indent: int | None) -> str:
    rep = R.build_report(evaluation, runs, top_k=top_k, metadata=metadata, include_per_query=False)
    rep["per_query"] = _old_per_query(evaluation, runs, top_k=top_k)
    return json.dumps(rep, indent=indent, ensure_ascii=False, allow_nan=False)


# ----------------------------------------------------------------------------- random awkward data
AWKWARD = ['q"1', "q\\2", "q\n3", "q\t4", "%s", "100%", "é-ü", "日本", "\x01ctl", "😀", "12", "012", " sp ",
           "\u2028", "a/b", "{x}", "null", "'", ""]
#: The awkward ids the readers take (no control character; no ASCII white space at the start of an id, which they
#: strip, so " sp " is put inside): those ``write_outputs`` writes (it refuses the others).
LEGAL = [a if a == a.lstrip(ASCII_WS) else f"x{a}" for a in AWKWARD if first_broken_id([a]) is None]
FLOATS = [-0.0, 0.0, 1.0, 5e-324, 1e-300, 1 / 3, 0.1 + 0.2, 1e16, 123456789.0, 2.5e-5,
          0.30000000000000004, 1e22, 7.0e-10]


def _ids(rng: np.random.Generator, prefix: str, n: int, awkward: list[str] = AWKWARD) -> list[str]:
    out = []
    for i in range(n):
        if rng.random() < 0.3:
            out.append(f"{prefix}{awkward[int(rng.integers(len(awkward)))]}{i}")
        else:
            out.append(f"{prefix}{i}")
    return out


def _run(qs: list[str], docs: list[str], scores: list[float], *, name: str) -> Run:
    """``Run.from_records``; where an id or the name holds a control character (the constructors refuse them), the
    dataclass built directly: what the old and the new writer make of such an id is compared here."""
    if first_broken_id([*qs, name]) is None:
        return Run.from_records(qs, docs, scores, name=name)
    (qc, qu), (dc, du) = factorize_strings(qs), factorize_strings(docs)
    return Run(qu, qc, du, dc, np.asarray(scores, dtype=np.float64), name)


def _case(seed: int, *, n_runs: int = 3, n_q: int = 40, categorical: bool = True, awkward: list[str] = AWKWARD):
    rng = np.random.default_rng(seed)
    queries = _ids(rng, "", n_q, awkward)
    run_names = [f"r{i}" + (awkward[int(rng.integers(len(awkward)))] if i else "") for i in range(n_runs)]
    # NaN is a value of first_rel_rank only (no relevant document retrieved); the others are finite
    measures = [("first_rel_rank", 0), ("ndcg", 10), ("map", 0), ("%s \"odd\" 100%", 3), ("recall", 100),
                ("P", 5)][: int(rng.integers(1, 7))]
    rows = []
    for r in run_names:
        for q in queries:
            if rng.random() < 0.25:  # the run does not cover every query
                continue
            for m, k in measures:
                if rng.random() < 0.1:  # a measure missing for this query: null in the report
                    continue
                v = FLOATS[int(rng.integers(len(FLOATS)))] if rng.random() < 0.4 else float(rng.random())
                if m == "first_rel_rank":
                    v = float("nan") if rng.random() < 0.3 else float(rng.integers(1, 20))
                rows.append((r, q, "", m, k, v))
    table = pd.DataFrame(rows, columns=["run", "query_id", "domain", "metric", "k", "value"])
    table["k"] = table["k"].astype(np.int32)
    if categorical:
        # unused categories too (a query no run covers)
        table["query_id"] = pd.Categorical(table["query_id"], categories=[*queries, "unused"])
        for c in ("domain", "metric"):
            table[c] = table[c].astype("category")
    table["run"] = pd.Categorical(table["run"], categories=run_names)
    runs = {}
    for r in run_names[: n_runs - 1]:  # the last run has no ranked list: no topK
        docs, qs, scores = [], [], []
        for q in queries + ["only-in-run"]:
            m = int(rng.integers(0, 15))
            ds = rng.choice(60, size=m, replace=False)
            docs += [f"d{x}" + ('"' if x % 7 == 0 and r == run_names[0] else "") for x in ds]  # escaped or not
            qs += [q] * m
            scores += np.round(rng.random(m), 1).tolist()  # ties: the tie rule decides the topK order
        runs[r] = _run(qs, docs, scores, name=r)
    runs["not-evaluated"] = runs[run_names[0]].renamed("not-evaluated")
    coverage = pd.DataFrame({"run": run_names, "n_evaluated": [n_q] * n_runs})
    settings = {"ties": ["trec", "docid_asc", "input"][seed % 3], "k": [10, 100]}
    return Evaluation(table, coverage, settings), runs


# ----------------------------------------------------------------------------- tests
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("indent", [None, 1])
def test_report_json_bytes_equal_the_old_writer(seed, indent):
    ev, runs = _case(seed, categorical=seed % 4 != 3)
    meta = {"timestamp": "fixed", "command": "evaluate"}
    top_k = [10, 1, 0, 3][seed % 4]
    rep = R.build_report(ev, runs, top_k=top_k, metadata=meta, include_per_query=False)
    pq = per_query_entries(ev.table, runs, top_k=top_k, ties=ev.settings["ties"])
    new = report_text(rep, per_query_text(pq, indent=indent), indent=indent)
    old = _old_report_json(ev, runs, top_k=top_k, metadata=meta, indent=indent)
    assert new.encode("utf-8") == old.encode("utf-8")
    # and the dict form (build_report) is the old dict
    assert per_query_dict(pq) == _old_per_query(ev, runs, top_k=top_k)  # NaN is None in both


@pytest.mark.parametrize("seed", range(4))
def test_write_outputs_files_equal_the_old_writer(tmp_path, seed, monkeypatch):
    ev, runs = _case(100 + seed, n_runs=2, n_q=30, awkward=LEGAL)
    meta = {"timestamp": "fixed"}
    R.write_outputs(ev, tmp_path / "new", runs=runs, top_k=5, metadata=meta)
    got = (tmp_path / "new" / "report.json").read_bytes()
    indent = 1 if len(ev.table) <= 50_000 else None
    assert got == _old_report_json(ev, runs, top_k=5, metadata=meta, indent=indent).encode("utf-8")
    # the large-report layout (no indent) through write_outputs as well
    monkeypatch.setattr(R, "_INDENT_ROWS", 0)
    R.write_outputs(ev, tmp_path / "big", runs=runs, top_k=5, metadata=meta)
    got = (tmp_path / "big" / "report.json").read_bytes()
    assert got == _old_report_json(ev, runs, top_k=5, metadata=meta, indent=None).encode("utf-8")


def test_no_runs_and_empty_table():
    ev, _ = _case(7)
    meta = {"timestamp": "fixed"}
    for runs in (None, {}):
        rep = R.build_report(ev, runs, top_k=10, metadata=meta, include_per_query=False)
        new = report_text(rep, per_query_text(per_query_entries(ev.table, runs, top_k=10), indent=1), indent=1)
        assert new == _old_report_json(ev, runs, top_k=10, metadata=meta, indent=1)
    empty = Evaluation(ev.table.iloc[:0], ev.coverage.iloc[:0], {})
    pq = per_query_entries(empty.table, None, top_k=10)
    assert per_query_text(pq, indent=None) == "{}" and per_query_dict(pq) == {}


def test_infinite_values_are_refused_as_json_dumps_refuses_them():
    ev, runs = _case(3)
    table = ev.table.copy()
    table.loc[table.index[0], "value"] = np.inf
    pq = per_query_entries(table, runs, top_k=10)
    with pytest.raises(ValueError, match="JSON compliant"):
        per_query_text(pq)
    with pytest.raises(ValueError, match="JSON compliant"):
        json.dumps(_old_per_query(Evaluation(table, ev.coverage, ev.settings), runs, top_k=10), allow_nan=False)


@pytest.mark.parametrize("names", [("a/b", "a_b"), ("A", "a"), ("x y", "x?y")])
def test_two_runs_with_one_results_file_are_refused_before_writing(tmp_path, names):
    """'a/b' and 'a_b' both wrote a_b_results.csv: one run's results silently replaced the other's."""
    from evalcore.data import Qrels
    from evalcore.errors import OptionError
    from evalcore.evaluate import evaluate

    qrels = Qrels.from_dict({"q1": {"d1": 1}})
    runs = [Run.from_dict({"q1": {"d1": 1.0}}, name=n) for n in names]
    ev = evaluate(qrels, runs, metrics=["ndcg"], k=[10])
    with pytest.raises(OptionError, match=re.escape(f"runs {names[0]!r} and {names[1]!r} would both be written to")):
        R.write_outputs(ev, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written
    ok = evaluate(qrels, [Run.from_dict({"q1": {"d1": 1.0}}, name=n) for n in ("a-b", "a_b")], metrics=["ndcg"], k=[10])
    assert sorted(p.name for p in R.write_outputs(ok, tmp_path / "ok")) == sorted(
        ["per_query.csv", "report.json", "a-b_results.csv", "a_b_results.csv"])

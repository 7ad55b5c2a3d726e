"""The join of run rows with the judgments (grade and judged flag of every ranked row).

Both joins of :mod:`evalcore.evaluate` — by the qrels' document codes (runs held
in memory, stored rankings) and by 64-bit (query, document) hashes (runs read
from TREC files) — prefilter with a bitmap of the keys' low bits and confirm
with an exact search.  They are checked against a dict of the judgments, with
the real bitmap and with a tiny one where almost every key collides (so the
exact confirmation is what decides).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from evalcore.data import Qrels, Run
from evalcore.io.trec import read_trec_run
from evalcore.ranking import rank_order

E = sys.modules["evalcore.evaluate"]  # the module (the package exports the function under the same name)


def _case(seed: int) -> tuple[Qrels, list[tuple[str, str, float]], dict[tuple[str, str], int]]:
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(60)]
    judged: dict[tuple[str, str], int] = {}
    for q in range(12):
        for d in rng.choice(60, size=int(rng.integers(0, 15)), replace=False):
            judged[(f"q{q}", docs[d])] = int(rng.integers(-1, 4))  # negative, zero and positive grades
    qrels = Qrels.from_records(*zip(*[(q, d, g) for (q, d), g in judged.items()], strict=True))
    rows = []
    for q in range(14):  # q12, q13: queries the qrels do not know
        for d in rng.choice(60, size=int(rng.integers(1, 25)), replace=False):
            rows.append((f"q{q}", docs[d], float(rng.integers(0, 4))))  # tie-heavy scores
    return qrels, rows, judged


def _oracle(run: Run, qrels: Qrels, rows: np.ndarray, qi: np.ndarray,
            judged: dict[tuple[str, str], int]) -> tuple[np.ndarray, np.ndarray]:
    qids = np.asarray(qrels.query_ids, dtype=object)
    docs = run.docs_at(rows)
    keys = [(str(qids[q]), str(d)) for q, d in zip(qi, docs, strict=True)]
    return (np.array([judged.get(k, 0) for k in keys], dtype=np.int64),
            np.array([k in judged for k in keys], dtype=bool))


def _aligned(qrels: Qrels, run: Run) -> tuple[np.ndarray, np.ndarray]:
    """Ranked rows of the run's queries known to the qrels, with their qrels query index."""
    order, _ = rank_order(run, ties="trec")
    qmap = pd.Index(qrels.query_ids).get_indexer(run.query_ids)  # (pandas as the oracle of the mapping)
    qi = qmap[run.q[order]]
    return order[qi >= 0], qi[qi >= 0]


@pytest.mark.parametrize("bits", [E._BITMAP_BITS, 2])
@pytest.mark.parametrize("seed", range(4))
def test_grade_joins_match_a_dict_of_the_judgments(seed: int, bits: int, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(E, "_BITMAP_BITS", bits)
    qrels, records, judged = _case(seed)
    coded = Run.from_records(*zip(*records, strict=True), name="r")
    rows, qi = _aligned(qrels, coded)
    idx = E._qrels_index(qrels)
    grade, is_judged = E._coded_grades(idx, E._row_doc_codes(coded, idx)[rows], qi)
    want_grade, want_judged = _oracle(coded, qrels, rows, qi, judged)
    np.testing.assert_array_equal(grade, want_grade)
    np.testing.assert_array_equal(is_judged, want_judged)

    path = tmp_path / "run.trec"
    path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, d, s in records))
    hashed = read_trec_run(path)
    rows, qi = _aligned(qrels, hashed)
    got = E._hashed_grades(qrels, hashed, rows, qi)
    assert got is not None  # a TREC run carries its ids' hashes
    want_grade, want_judged = _oracle(hashed, qrels, rows, qi, judged)
    np.testing.assert_array_equal(got[0], want_grade)
    np.testing.assert_array_equal(got[1], want_judged)


def test_every_row_judged_somewhere_takes_the_same_join() -> None:
    """A run whose every document is judged for some query (a stored ranking against a reference's
    top-k) skips the row selection: the grades still come from the row's own query."""
    qrels = Qrels.from_records(["a", "b", "b"], ["x", "y", "x"], [2, 1, 0])
    run = Run.from_records(["a", "a", "b", "b"], ["x", "y", "x", "y"], [1.0, 0.5, 0.7, 0.9], name="r")
    rows, qi = _aligned(qrels, run)
    idx = E._qrels_index(qrels)
    codes = E._row_doc_codes(run, idx)[rows]
    assert (codes >= 0).all()
    grade, is_judged = E._coded_grades(idx, codes, qi)
    docs = run.docs_at(rows)
    got = {(str(qrels.query_ids[q]), str(d)): (int(g), bool(j)) for q, d, g, j in zip(qi, docs, grade, is_judged,
                                                                                         strict=True)}
    assert got == {("a", "x"): (2, True), ("a", "y"): (0, False), ("b", "x"): (0, True), ("b", "y"): (1, True)}

"""Fusion works on id codes: the union of the runs' rows equals the one built from the id strings.

:func:`evalcore.fusion.prepare` numbers queries and documents in order of first appearance
along the runs' ranked rows and sorts the union by (query, document) number; that order is the
fused run's row order (what the ``input`` tie rule sees). It used to factorize one string per
row; now only the runs' vocabularies are compared as strings. The reference here is the string
version, on tie-heavy random runs whose vocabularies list the same ids in different orders,
with queries missing from some runs, ``top_n`` cuts and runs that keep their ids as arrow strings.
A preparation keeps RRF's ranks, so one preparation fuses under any c and weights, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalcore.data import Run
from evalcore.errors import OptionError
from evalcore.fusion import (
    METHODS,
    RANK_METHODS,
    _ranked,
    _union_codes,
    _unique_inverse,
    fuse,
    prepare,
)


def random_runs(seed: int, *, n_runs: int = 3, arrow: bool = False) -> list[Run]:
    """Tie-heavy runs over overlapping documents, each with its own vocabulary order; some queries missing."""
    rng = np.random.default_rng(seed)
    runs = []
    for j in range(n_runs):
        qs, ds, ss = [], [], []
        for q in rng.permutation(30):
            if rng.random() < 0.2:
                continue
            docs = rng.choice(60, size=int(rng.integers(1, 25)), replace=False)
            qs += [f"q{q}"] * len(docs)
            ds += [f"d{x}" for x in docs]
            ss += (rng.integers(0, 3, size=len(docs)) - 1.0).tolist()
        if arrow:
            qc, qu = pd.factorize(np.array(qs, dtype=object), sort=False)
            runs.append(Run.from_arrow_docs(np.asarray(qu, dtype=object), qc, pa.array(ds, type=pa.string()),
                                            np.array(ss), name=f"r{j}"))
        else:
            runs.append(Run.from_records(qs, ds, ss, name=f"r{j}"))
    return runs


def string_union(runs: list[Run], *, ties: str, top_n: int | None):
    """The reference: queries and documents numbered by pd.factorize of one id string per row."""
    lists = [_ranked(r, ties=ties, top_n=top_n) for r in runs]
    q_all = np.concatenate([r.query_ids[r.q[x.rows]] for r, x in zip(runs, lists, strict=True)])
    d_all = np.concatenate([r.docs_at(x.rows) for r, x in zip(runs, lists, strict=True)])
    qc, qu = pd.factorize(q_all, sort=False)
    dc, du = pd.factorize(d_all, sort=False)
    nd = max(len(du), 1)
    uniq, inv = np.unique(qc.astype(np.int64) * nd + dc, return_inverse=True)
    return np.asarray(qu, dtype=object), uniq // nd, np.asarray(du, dtype=object), uniq % nd, inv


@pytest.mark.parametrize("arrow", [False, True])
@pytest.mark.parametrize("top_n", [None, 3])
@pytest.mark.parametrize("seed", range(4))
def test_union_equals_the_string_version(seed, top_n, arrow):
    runs = random_runs(seed, arrow=arrow)
    qu, q, du, d, inv = string_union(runs, ties="docid_asc", top_n=top_n)
    lists = [_ranked(r, ties="docid_asc", top_n=top_n) for r in runs]
    qc, qids, dc, dids = _union_codes(lists)
    assert qids.tolist() == qu.tolist() and dids.tolist() == du.tolist()
    uniq, got_inv = _unique_inverse(qc * max(len(dids), 1) + dc)
    assert np.array_equal(got_inv, inv)
    for method in METHODS:
        p = prepare(runs, method=method, norm="none" if method in RANK_METHODS else "min-max", top_n=top_n)
        assert p.query_ids.tolist() == qu.tolist() and p.doc_vocab.tolist() == du.tolist()
        assert np.array_equal(p.q, q) and np.array_equal(p.d, d)
    fused = fuse(runs, top_n=top_n)  # rows in (query, document) order of first appearance, as before
    assert fused.query_ids[fused.q].tolist() == qu[q].tolist()
    assert fused.docs_at(np.arange(len(fused))).tolist() == du[d].tolist()


def test_union_of_one_run_and_of_runs_cut_to_nothing_new():
    one = random_runs(5, n_runs=1)[0]
    alone = fuse([one], method="combsum")  # one run: its own rows and scores
    assert alone.to_dict() == one.to_dict()
    twice = fuse([one, one.renamed("again")], method="combsum")  # the same ids twice: no new union row
    assert len(twice) == len(one) and twice.to_dict() == {q: {d: 2 * s for d, s in ds.items()}
                                                           for q, ds in one.to_dict().items()}


@pytest.mark.parametrize("seed", range(3))
def test_unique_inverse_equals_numpy(seed):
    rng = np.random.default_rng(seed)
    for key in (rng.integers(0, 50, 1000), rng.integers(0, 2**40, 5000), np.array([7]), np.zeros(0, np.int64),
                rng.integers(2**61, 2**62, 100)):  # the last: too large to pack, np.unique's path
        uniq, inv = _unique_inverse(key.astype(np.int64))
        ref_u, ref_i = np.unique(key, return_inverse=True)
        assert np.array_equal(uniq, ref_u) and np.array_equal(inv, ref_i.reshape(-1))


@pytest.mark.parametrize("seed", range(3))
def test_one_prepared_rrf_gives_every_c_and_weights_exactly(seed):
    """RRF keeps the ranks, not c + rank: a preparation made with one c fuses under another c bit for bit."""
    runs = random_runs(seed)
    prepared = prepare(runs, method="rrf", c=60.0)
    for c, w in ((60.0, None), (0.5, [1.0, 2.0, 0.0]), (10.0, [0.2, 0.3, 0.5]), (-0.5, [1.0, 1.0, 1.0])):
        want = prepare(runs, method="rrf", c=c).run(w, name="x")
        got = prepared.run(w, name="x", c=c)
        assert np.array_equal(got.scores, want.scores) and np.array_equal(got.q, want.q) and np.array_equal(got.d, want.d)
        assert got.to_dict() == fuse(runs, method="rrf", c=c, weights=w, name="x").to_dict()
    for bad in (-1.0, float("nan"), float("inf"), "60"):
        with pytest.raises(OptionError, match="c must be a finite number > -1"):
            prepared.values(c=bad)


def test_a_subset_of_the_queries_fuses_as_the_whole_does_on_them():
    runs = random_runs(7)
    whole = prepare(runs, method="combmnz", norm="z-score")
    keep = ["q3", "q11", "q0", "absent"]
    part = whole.subset(keep).run(name="x")
    full = whole.run(name="x")
    want = {q: ds for q, ds in full.to_dict().items() if q in keep}
    assert part.to_dict() == want and sorted(part.query_ids.tolist()) == sorted(want)
    rows = np.isin(full.query_ids[full.q], keep)  # the same rows in the same order (the input tie rule)
    assert full.docs_at(np.flatnonzero(rows)).tolist() == part.docs_at(np.arange(len(part))).tolist()
    rrf = prepare(runs, method="rrf").subset(keep)
    assert rrf.run([1.0, 2.0, 0.5], c=3.0).to_dict() == {
        q: ds for q, ds in prepare(runs, method="rrf").run([1.0, 2.0, 0.5], c=3.0).to_dict().items() if q in keep}

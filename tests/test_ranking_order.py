"""The tie rules of :func:`evalcore.ranking.rank_order` against a plain ``sorted`` oracle on
tie-heavy runs built every way a run is built (records, codes with an unused and repeated
vocabulary, a TREC file read lazily), and :func:`code_ranks` against Python's string order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from evalcore import ranking
from evalcore.data import Run
from evalcore.errors import ValueTypeError
from evalcore.io.trec import read_trec_run
from evalcore.ranking import code_ranks, dense_ranks, order_rows, rank_order

_ALPHABET = list("abAB01-_é漢😀") + ["\x7f"]
#: What a TREC file's ids may hold (the readers refuse DEL, a control character): "~" is the highest ASCII then.
_TREC_ALPHABET = [c for c in _ALPHABET if c != "\x7f"] + ["~"]


def _ids(rng: np.random.Generator, n: int, alphabet: list[str] = _ALPHABET) -> list[str]:
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(alphabet, size=int(rng.integers(1, 6)))))
    return sorted(out, key=lambda _: rng.random())


def _oracle(q: list[int], docs: list[str], scores: list[float], ties: str) -> list[int]:
    """Row order: query index ascending, score descending, then the tie rule (by ``sorted``); "trec" compares
    the scores as trec_eval's C floats (1e300 is inf there, 5e-324 is 0)."""
    rows = list(range(len(q)))
    if ties == "trec":
        rows = sorted(rows, key=lambda r: docs[r], reverse=True)
        with np.errstate(over="ignore", under="ignore"):
            scores = [float(np.float32(s)) for s in scores]
    elif ties == "docid_asc":
        rows = sorted(rows, key=lambda r: docs[r])
    return sorted(rows, key=lambda r: (q[r], -scores[r]))  # stable: keeps the tie order above


def _tie_heavy(seed: int) -> tuple[list[str], list[str], list[float]]:
    rng = np.random.default_rng(seed)
    docs = _ids(rng, 40, _TREC_ALPHABET)  # (read from a TREC file too)
    qs, ds, ss = [], [], []
    for qi in rng.permutation(25):
        for j in rng.choice(len(docs), size=int(rng.integers(1, 30)), replace=False):
            qs.append(f"q{qi}")
            ds.append(docs[j])
            ss.append(float(rng.integers(0, 3)) / 2)  # three score levels: most rows tie
    return qs, ds, ss


def _trec_text(qs: list[str], ds: list[str], ss: list[float]) -> bytes:
    return "".join(f"{q} Q0 {d} {i + 1} {s!r} t\n" for i, (q, d, s) in enumerate(zip(qs, ds, ss, strict=True))).encode()


def _from_codes(qs: list[str], ds: list[str], ss: list[float], rng: np.random.Generator) -> Run:
    """The same rows through a vocabulary with unused ids and a repeated id (codes split between its copies)."""
    distinct = sorted(set(ds), key=lambda _: rng.random())
    vocab = np.asarray(distinct + ["unused-z", "unused-\x00"] + distinct[:1], dtype=object)
    code = {d: i for i, d in enumerate(distinct)}
    codes = np.array([code[d] for d in ds], dtype=np.int64)
    twin = np.flatnonzero(codes == 0)[::2]
    codes[twin] = len(vocab) - 1  # the same id, through its second copy
    qnames = np.asarray(sorted(set(qs)), dtype=object)
    qidx = {n: i for i, n in enumerate(qnames.tolist())}
    # (check_ids=False: the constructor refuses the unused 'unused-\x00'; its place in the code-point order is tested)
    return Run.from_codes(qnames, np.array([qidx[x] for x in qs]), vocab, codes, np.asarray(ss), name="c",
                          check_ids=False)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", ["trec", "docid_asc", "input"])
@pytest.mark.parametrize("packed", [True, False])
def test_rank_order_matches_sorted_oracle(seed, ties, packed, monkeypatch):
    if not packed:  # the lexsort fallback of very large runs
        monkeypatch.setattr(ranking, "_PACKED_LIMIT", 0)
    qs, ds, ss = _tie_heavy(seed)
    rng = np.random.default_rng(100 + seed)
    runs = {
        "records": Run.from_records(qs, ds, ss, name="r"),
        "lazy": read_trec_run(_trec_text(qs, ds, ss), name="t"),
        "codes": _from_codes(qs, ds, ss, rng),
    }
    lazy = runs["lazy"]
    n = len(lazy.q)  # the same ids as an arrow column in several chunks (as a large file is read)
    chunks = pa.chunked_array([lazy._docs.slice(0, n // 3), lazy._docs.slice(n // 3, n // 3), lazy._docs.slice(2 * (n // 3))])
    runs["chunked"] = Run(lazy.query_ids, lazy.q, None, None, lazy.scores, name="k", _docs=chunks)
    assert runs["lazy"]._d is None
    for how, run in runs.items():
        order, pos = rank_order(run, ties=ties)
        qi = run.q.tolist()
        docs = run.docs_at(np.arange(len(qi))).tolist()
        want = _oracle(qi, docs, run.scores.tolist(), ties)
        got = order.tolist()
        assert [(qi[r], docs[r]) for r in got] == [(qi[r], docs[r]) for r in want], how
        if ties == "input":
            assert got == want, how
        starts = {}
        for i, r in enumerate(got):
            starts.setdefault(qi[r], i)
            assert pos[i] == i - starts[qi[r]]
    assert runs["lazy"]._d is None and runs["chunked"]._d is None  # ranking never built a vocabulary


def test_order_rows_public_front_matches_oracle():
    qs, ds, ss = _tie_heavy(11)
    vocab = np.asarray(sorted(set(ds)), dtype=object)
    codes = np.searchsorted(vocab, np.asarray(ds, dtype=object))
    q = np.array([int(x[1:]) for x in qs])
    for ties in ("trec", "docid_asc"):
        got = order_rows(q, np.asarray(ss), codes, vocab, ties=ties).tolist()
        assert got == _oracle(q.tolist(), ds, ss, ties)


@pytest.mark.parametrize("seed", range(4))
def test_code_ranks_is_python_string_order(seed):
    rng = np.random.default_rng(seed)
    vocab = _ids(rng, 30)
    vocab = np.asarray(vocab + vocab[:5], dtype=object)  # repeated ids rank equal
    codes = rng.integers(0, len(vocab) - 3, size=200)  # the last ids unused
    ranks = code_ranks(codes, vocab)
    values = vocab[codes].tolist()
    dense = {v: i for i, v in enumerate(sorted(set(values)))}
    assert ranks.tolist() == [dense[v] for v in values]
    assert code_ranks(np.zeros(0, dtype=np.int64), vocab).tolist() == []


def test_dense_ranks_fall_back_to_numpy_for_ids_arrow_cannot_hold():
    values = np.array(["b", "\ud800x", "a", "b"], dtype=object)  # a lone surrogate is no UTF-8
    assert dense_ranks(values).tolist() == [1, 2, 0, 1]
    assert dense_ranks(pa.array(["b", "a", "b", "é"])).tolist() == [1, 0, 1, 2]
    assert dense_ranks(np.zeros(0, dtype=object)).tolist() == []


def test_with_rows_keeps_the_rows_asked_for_in_their_rank_order():
    run = Run.from_records(["a", "a", "b", "b", "c"], ["x", "y", "x", "z", "y"], [1.0, 1.0, 0.5, 0.7, 0.2], name="r")
    assert run.with_rows(np.ones(5, dtype=bool)) is run  # nothing to drop: the run itself
    keep = np.array([True, False, False, True, False])
    sub = run.with_rows(keep)
    assert list(sub.query_ids) == ["a", "b"] and sub.name == "r"  # "c" lost its only row
    assert sub.ranked_lists(ties="trec") == {q: [d for d in lst if (q, d[0]) in {("a", "x"), ("b", "z")}]
                                             for q, lst in run.ranked_lists(ties="trec").items() if q != "c"}
    with pytest.raises(ValueTypeError, match="one bool per row"):
        run.with_rows(np.ones(3, dtype=bool))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", ["trec", "docid_asc", "input"])
@pytest.mark.parametrize("many_queries", [False, True])
def test_rank_order_with_signed_zeros_extreme_scores_and_many_queries(seed, ties, many_queries):
    """Scores are sorted as order-preserving integers and query codes as 16-bit integers when they fit:
    -0.0 and 0.0 stay equal (the input order or the tie rule decides), negative, tiny and huge scores keep
    their order, and query codes past 65,535 take the general path."""
    rng = np.random.default_rng(seed)
    levels = np.array([0.0, -0.0, -1.0, 1.0, 5e-324, -5e-324, 1e300, -1e300, 2.5])
    n_ids = 70_000 if many_queries else 30
    qnames = np.asarray([f"q{i}" for i in range(n_ids)], dtype=object)
    q = rng.choice(n_ids, size=400)  # codes spread over the whole vocabulary, rows not grouped
    docs = np.asarray([f"d{i}" for i in range(400)], dtype=object)  # one document per row: no duplicates
    scores = levels[rng.integers(0, len(levels), 400)]
    run = Run.from_codes(qnames, q, docs, np.arange(400), scores, name="z")
    order, _ = rank_order(run, ties=ties)
    want = _oracle(q.tolist(), docs.tolist(), scores.tolist(), ties)
    assert order.tolist() == want


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("shape", ["grouped", "scattered", "skewed", "one_query", "tiny"])
def test_lexsort_by_query_is_numpy_lexsort(seed, shape):
    """Per-query sorts on a padded matrix (or, for skewed sizes, two global passes) give exactly
    ``np.lexsort((keys, q))``: stable, with keys at both ends of int64 (the padding's own value too)."""
    rng = np.random.default_rng(seed)
    if shape == "grouped":
        q = np.repeat(np.arange(300), rng.integers(1, 40, 300))
    elif shape == "scattered":
        q = rng.integers(0, 90_000 if seed % 2 else 300, 5000)
    elif shape == "skewed":  # one query far longer than the rest: padding would dominate
        q = np.r_[np.zeros(20_000, dtype=np.int64), np.repeat(np.arange(1, 2000), 3)]
        rng.shuffle(q) if seed % 2 else None
    elif shape == "one_query":
        q = np.zeros(3000, dtype=np.int64)
    else:
        q = rng.integers(0, 2, int(rng.integers(0, 3)))
    ext = np.iinfo(np.int64)
    keys = rng.choice(np.array([ext.min, -3, 0, 1, 7, ext.max]), size=len(q))  # ties everywhere
    got = ranking._lexsort_by_query(np.asarray(q, dtype=np.int64), keys)
    assert got.tolist() == np.lexsort((keys, q)).tolist()


def test_trec_compares_scores_in_single_precision_as_trec_eval():
    """trec_eval holds a run's scores as C floats: 20.123402 and 20.123401 (distinct doubles, one float32) are a
    tie there, broken by document id descending ("b" first); the other rules keep the doubles' order."""
    from evalcore.data import Run

    run = Run.from_dict({"q": {"a": 20.123402, "b": 20.123401, "c": 20.5}})
    assert np.float32(20.123402) == np.float32(20.123401)
    assert [d for d, _ in run.ranked_lists(ties="trec")["q"]] == ["c", "b", "a"]
    assert [d for d, _ in run.ranked_lists(ties="docid_asc")["q"]] == ["c", "a", "b"]
    assert [d for d, _ in run.ranked_lists(ties="input")["q"]] == ["c", "a", "b"]

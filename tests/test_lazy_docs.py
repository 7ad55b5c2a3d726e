"""Runs read from TREC files keep their document ids as one arrow column and
build the vocabulary only on demand; duplicates are found through 64-bit pair
hashes with an exact fallback. These tests pin both down against the eager path."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from evalcore import Qrels, Run, evaluate
from evalcore.data import _has_repeats, _pair_hashes
from evalcore.errors import DuplicateIdError
from evalcore.io.trec import read_trec_run


def _run_text(rows: list[tuple[str, str, float]]) -> bytes:
    return "".join(f"{q} Q0 {d} {i + 1} {s!r} t\n" for i, (q, d, s) in enumerate(rows)).encode()


def _ids(rng: np.random.Generator, n: int, *, lo: int = 1, hi: int = 40) -> list[str]:
    alphabet = list("abcdefgh0123456789-_é漢")
    return ["".join(rng.choice(alphabet, size=int(rng.integers(lo, hi)))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_lazy_run_equals_eager_run(seed):
    rng = np.random.default_rng(seed)
    docs = _ids(rng, 60)
    rows = []
    for qi in range(30):
        picked = rng.choice(len(docs), size=int(rng.integers(1, 20)), replace=False)
        rows += [(f"q{qi}", docs[j], float(rng.integers(0, 4))) for j in picked]  # heavy ties
    lazy = read_trec_run(_run_text(rows), name="r")
    eager = Run.from_records([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], name="r")
    assert lazy._d is None  # nothing built the vocabulary yet
    qrels = Qrels.from_records([r[0] for r in rows[::3]], [r[1] for r in rows[::3]],
                               rng.integers(0, 3, size=len(rows[::3])))
    for ties in ("trec", "docid_asc", "input"):
        a = evaluate(qrels, lazy, metrics=["ndcg", "map", "mrr", "P"], k=[1, 5, 20], ties=ties).table
        b = evaluate(qrels, eager, metrics=["ndcg", "map", "mrr", "P"], k=[1, 5, 20], ties=ties).table
        np.testing.assert_array_equal(a["value"].to_numpy(), b["value"].to_numpy())
        assert lazy.ranked_lists(ties=ties) == eager.ranked_lists(ties=ties)
    assert lazy._d is None  # evaluation and ranked lists never needed it
    values = np.asarray(sorted(set(docs[::2])), dtype=object)
    np.testing.assert_array_equal(lazy.doc_codes_in(values), eager.doc_codes_in(values))
    rows_at = np.array([0, len(rows) - 1, 3])
    assert lazy.docs_at(rows_at).tolist() == eager.docs_at(rows_at).tolist()
    # on demand, the vocabulary describes the same rows
    assert (lazy.doc_vocab[lazy.d] == eager.doc_vocab[eager.d]).all()
    assert lazy.doc_ids.tolist() == [r[1] for r in rows]


@pytest.mark.parametrize("doc", ["d1", "a-longer-id-sharing-8-bytes-x", "é" * 40, "x" * 300])
def test_duplicate_found_for_any_id_length(doc):
    # ids sharing long prefixes, multi-byte characters, and ids past the hashed length (exact fallback)
    rows = [("q1", doc, 3.0), ("q1", doc[:-1] + "y", 2.0), ("q2", doc, 1.0), ("q1", doc, 0.5)]
    with pytest.raises(DuplicateIdError) as ei:
        read_trec_run(_run_text(rows), name="r")
    assert (ei.value.query, ei.value.item, ei.value.line) == ("q1", doc, 4)


def test_ids_differing_only_after_eight_bytes_are_not_duplicates():
    rows = [("q1", "abcdefgh" + s, 1.0) for s in ("", "1", "12", "123456789", "12345678")]
    run = read_trec_run(_run_text(rows), name="r")
    assert len(run) == 5


def test_pair_hashes_equal_pairs_hash_equal_and_sliced_arrays_agree():
    rng = np.random.default_rng(7)
    ids = _ids(rng, 2000, lo=0, hi=70)
    q = rng.integers(0, 50, size=2000)
    h = _pair_hashes(q, pa.array(ids))
    key = {}
    for qi, d, hv in zip(q.tolist(), ids, h.tolist(), strict=True):
        assert key.setdefault((qi, d), hv) == hv  # equal pairs -> equal hashes
    distinct = len(key)
    assert len(set(h.tolist())) == distinct  # and no collision among these distinct pairs
    assert _has_repeats(h) == (distinct < len(ids))
    sliced = pa.array(ids).slice(100, 500)  # arrow offsets not starting at 0
    np.testing.assert_array_equal(_pair_hashes(q[100:600], sliced), h[100:600])
    assert _pair_hashes(q[:1], pa.array(["x" * 1000])) is None  # too long: caller checks exactly


def test_trec_qrels_fast_path_equals_from_records():
    from evalcore.io.trec import read_trec_qrels

    rng = np.random.default_rng(3)
    docs = _ids(rng, 40)
    rows = [(f"q{int(rng.integers(0, 9))}", d, int(rng.integers(-1, 4))) for d in docs]
    text = "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows).encode()
    fast = read_trec_qrels(text)
    ref = Qrels.from_records([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    assert fast.query_ids.tolist() == ref.query_ids.tolist()
    for a, b in ((fast.q, ref.q), (fast.doc_ids, ref.doc_ids), (fast.grades, ref.grades)):
        assert a.tolist() == b.tolist()


def test_hash_collisions_fall_back_to_exact_paths(monkeypatch):
    """With a hash that collides for every id, duplicates, judgments and results stay exact."""
    import evalcore.data as data_mod
    from evalcore.io.trec import read_trec_qrels

    monkeypatch.setattr(data_mod, "string_hashes", lambda docs: np.zeros(len(docs), dtype=np.uint64))
    rng = np.random.default_rng(11)
    docs = _ids(rng, 50)
    rows = [(f"q{i % 7}", d, float(rng.integers(0, 5))) for i, d in enumerate(docs)]
    run = read_trec_run(_run_text(rows), name="r")  # every pair key collides: exact check, no false error
    assert run._cache.get("doc_hashes") is not None
    qtext = "".join(f"q{i % 7} 0 {d} {int(rng.integers(0, 3))}\n" for i, d in enumerate(docs[::2])).encode()
    qrels = read_trec_qrels(qtext)
    eager = Run.from_records([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], name="r")
    a = evaluate(qrels, run, metrics=["ndcg", "map", "recall"], k=[3, 10]).table["value"].to_numpy()
    b = evaluate(qrels, eager, metrics=["ndcg", "map", "recall"], k=[3, 10]).table["value"].to_numpy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(DuplicateIdError):
        read_trec_run(_run_text(rows + [rows[3]]), name="r")


def test_pandas_is_imported_lazily():
    import subprocess
    import sys

    code = ("import sys, evalcore.io.trec, evalcore.io, evalcore.cli; "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"  # the CLI can overlap pandas' import with parsing


def test_chunked_ids_hash_and_encode_like_one_array():
    from evalcore._columns import encode_strings as _codes

    rng = np.random.default_rng(5)
    ids = _ids(rng, 3000, lo=1, hi=30)
    chunked = pa.chunked_array([pa.array(ids[:1000]), pa.array(ids[1000:1001]), pa.array(ids[1001:])])
    from evalcore.data import string_hashes

    np.testing.assert_array_equal(string_hashes(chunked), string_hashes(pa.array(ids)))
    codes, uniq = _codes(chunked)
    assert uniq[codes].tolist() == ids
    assert uniq.tolist() == list(dict.fromkeys(ids))  # first-appearance order, as pandas.factorize


def test_run_from_chunked_ids_equals_eager_run():
    rng = np.random.default_rng(9)
    docs = _ids(rng, 200, lo=2, hi=12)
    docs = list(dict.fromkeys(docs))
    q = np.repeat(np.arange(4), len(docs))
    all_docs = docs * 4
    scores = rng.integers(0, 3, size=len(all_docs)).astype(float)
    chunked = pa.chunked_array([pa.array(all_docs[:333]), pa.array(all_docs[333:])])
    lazy = Run.from_arrow_docs(np.array(["a", "b", "c", "d"], dtype=object), q, chunked, scores, name="r")
    eager = Run.from_records(np.array(["a", "b", "c", "d"])[q], all_docs, scores, name="r")
    qrels = Qrels.from_records(["a", "b", "c"], [docs[0], docs[5], docs[-1]], [1, 2, 3])
    a = evaluate(qrels, lazy, metrics=["ndcg", "mrr"], k=[5, 50]).table["value"].to_numpy()
    b = evaluate(qrels, eager, metrics=["ndcg", "mrr"], k=[5, 50]).table["value"].to_numpy()
    np.testing.assert_array_equal(a, b)
    assert lazy.ranked_lists(depth=7) == eager.ranked_lists(depth=7)
    assert (lazy.doc_vocab[lazy.d] == np.asarray(all_docs, dtype=object)).all()
    with pytest.raises(DuplicateIdError):
        Run.from_arrow_docs(np.array(["a"], dtype=object), np.zeros(3, dtype=np.int64),
                            pa.chunked_array([pa.array(["x", "y"]), pa.array(["x"])]), np.ones(3), name="r")


@pytest.mark.parametrize("pandas_ready", [False, True], ids=["sliced-text", "arrow-to_numpy"])
def test_arrow_buffer_conversions_match_pyarrow(monkeypatch, pandas_ready):
    from evalcore import _columns
    from evalcore._columns import numbers, strings

    monkeypatch.setattr(_columns, "_pandas_ready", lambda: pandas_ready)  # both ways strings are built
    words = ["a", "", "é漢", "longer-id-123", "x" * 40]
    chunked = pa.chunked_array([pa.array(words), pa.array(words[::-1])])
    for got, want in ((strings(chunked), words + words[::-1]), (strings(pa.array(words).slice(1, 3)), words[1:4]),
                      (strings(pa.array(words, type=pa.large_string())), words),
                      (strings(pa.chunked_array([], type=pa.string())), []),
                      (strings(pa.chunked_array([pa.array([], pa.string()), pa.array(["z"])])), ["z"])):
        assert got.dtype == object and got.tolist() == want and all(type(x) is str for x in got)
    with pytest.raises(ValueError, match="nulls"):
        strings(pa.array(["a", None]))
    for typ, values in ((pa.int64(), [3, -1, 7]), (pa.int32(), [0, 2]), (pa.float64(), [0.5, -2.25, 1e300])):
        arr = pa.chunked_array([pa.array(values, type=typ), pa.array(values[:1], type=typ)])
        got = numbers(arr)
        assert got.tolist() == values + values[:1] and got.dtype == np.dtype(typ.to_pandas_dtype())
    assert numbers(pa.array([1, 2, 3, 4], type=pa.int64()).slice(1, 2)).tolist() == [2, 3]
    with pytest.raises(ValueError):
        numbers(pa.array([1.0, None]))


def test_reading_trec_files_does_not_import_pandas(tmp_path):
    import subprocess
    import sys

    (tmp_path / "q.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d9 2 1.5 t\nq2 Q0 d3 1 0.5 t\n")
    code = ("import sys; from evalcore.io import load_qrels, load_run; "
            f"load_qrels({str(tmp_path / 'q.txt')!r}); load_run({str(tmp_path / 'r.txt')!r}); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"  # parsing overlaps with the CLI's background import of pandas


def test_the_public_evaluate_is_the_function_whatever_was_imported_before():
    """``evaluate`` is a function and a module's name: importing the module first must not change the API."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("from evalcore.evaluate import Evaluation\n"
            "import evalcore.evaluate\n"
            "from evalcore import evaluate\n"
            "import evalcore\n"
            "assert callable(evaluate) and evaluate.__name__ == 'evaluate' and evaluate is evalcore.evaluate\n"
            "assert Evaluation.__name__ == 'Evaluation'\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "ok", out.stderr

"""Fuzzing every loader: random bytes and mutated valid files either load or raise EvalcoreError.

Any other exception (KeyError, UnicodeDecodeError, pyarrow errors, RecursionError...) fails
the test. Budgets are small so the whole file runs in well under 40 s.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.errors import EvalcoreError
from evalcore.io import (
    QRELS_FORMATS,
    RUN_FORMATS,
    list_aspects,
    load_doc_metadata,
    load_domains,
    load_qrels,
    load_run,
)

FIX = Path(__file__).resolve().parent / "fixtures"

FUZZ = settings(max_examples=120, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf)
    return buf.getvalue()


def _seeds() -> list[tuple[str, bytes]]:
    seeds = [(p.name, p.read_bytes()) for p in sorted(FIX.iterdir()) if p.is_file()]
    seeds.append(("qrels.parquet", _parquet(pd.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "relevance": [1, 2, 0],
         "domain": ["x", "x", "y"]}))))
    seeds.append(("run.parquet", _parquet(pd.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [0.5, 0.25, 1.0]}))))
    return seeds


SEEDS = _seeds()

LOADERS: dict[str, Callable[[bytes, str], object]] = {}
for _f in ("auto",) + QRELS_FORMATS:
    LOADERS[f"qrels:{_f}"] = (lambda f: lambda data, label: load_qrels(data, format=f, label=label))(_f)
LOADERS["qrels:ordered_lists:aspect"] = lambda data, label: load_qrels(
    data, format="ordered_lists", aspect="overall", label=label)
for _f in ("auto",) + RUN_FORMATS:
    LOADERS[f"run:{_f}"] = (lambda f: lambda data, label: load_run(data, format=f, label=label))(_f)
LOADERS["domains"] = lambda data, label: load_domains(data, label=label)
LOADERS["doc_metadata"] = lambda data, label: load_doc_metadata(data, label=label)
LOADERS["aspects"] = lambda data, label: list_aspects(data, label=label)


# ---------------------------------------------------------------------------- mutations
def _flip(data: bytes, frac: float, byte: int) -> bytes:
    if not data:
        return data
    i = min(int(frac * len(data)), len(data) - 1)
    return data[:i] + bytes([data[i] ^ (byte or 1)]) + data[i + 1:]


def _truncate(data: bytes, frac: float) -> bytes:
    return data[: int(frac * len(data))]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _dup_line(data: bytes, frac: float) -> bytes:
    ls = _lines(data)
    i = min(int(frac * len(ls)), len(ls) - 1)
    return b"\n".join(ls[: i + 1] + [ls[i]] + ls[i + 1:])


def _del_line(data: bytes, frac: float) -> bytes:
    ls = _lines(data)
    i = min(int(frac * len(ls)), len(ls) - 1)
    return b"\n".join(ls[:i] + ls[i + 1:])


def _del_column(data: bytes, k: int) -> bytes:
    ls = _lines(data)
    head = next((ln for ln in ls if ln.strip()), b"")
    sep = b"\t" if b"\t" in head else (b"," if b"," in head else b" ")
    out = []
    for ln in ls:
        parts = ln.split(sep)
        if len(parts) > 1:
            del parts[k % len(parts)]
        out.append(sep.join(parts))
    return b"\n".join(out)


def _insert(data: bytes, frac: float, junk: bytes) -> bytes:
    i = int(frac * len(data))
    return data[:i] + junk + data[i:]


_frac = st.floats(0, 1, allow_nan=False)
_junk = st.sampled_from([b"\x00", b"\xff", b'"', b",", b"\t", b"\n", b"{", b"]", b"NaN", b"-inf", b"1e999",
                         b"\r\n", b"#", b" ", b"\\u0000", b"\xef\xbb\xbf", b"99999999999999999999999",
                         b"[" * 3000])
MUTATION = st.one_of(
    st.tuples(st.just("flip"), _frac, st.integers(0, 255)),
    st.tuples(st.just("truncate"), _frac),
    st.tuples(st.just("dup_line"), _frac),
    st.tuples(st.just("del_line"), _frac),
    st.tuples(st.just("del_column"), st.integers(0, 7)),
    st.tuples(st.just("insert"), _frac, st.one_of(_junk, st.binary(min_size=1, max_size=8))),
)


def mutate(data: bytes, ops: list[tuple]) -> bytes:
    for op in ops:
        kind = op[0]
        if kind == "flip":
            data = _flip(data, op[1], op[2])
        elif kind == "truncate":
            data = _truncate(data, op[1])
        elif kind == "dup_line":
            data = _dup_line(data, op[1])
        elif kind == "del_line":
            data = _del_line(data, op[1])
        elif kind == "del_column":
            data = _del_column(data, op[1])
        else:
            data = _insert(data, op[1], op[2])
    return data


def check(loader: Callable[[bytes, str], object], data: bytes, label: str) -> None:
    try:
        loader(data, label)
    except EvalcoreError as e:
        assert str(e), "an error must have a message"
        assert e.file is None or e.file == label or label in str(e), f"message does not name the file: {e}"
    # anything else propagates and fails the test


def test_mutations_do_something():
    data = (FIX / "qrels.csv").read_bytes()
    assert _del_column(data, 1).split(b"\n")[0] == b"query_id,relevance,domain"
    assert _dup_line(data, 0.0).split(b"\n")[:2] == [b"query_id,doc_id,relevance,domain"] * 2
    assert _truncate(data, 0.5) == data[: len(data) // 2]
    assert _flip(data, 0.0, 1) != data


# ---------------------------------------------------------------------------- the fuzz tests
# Every example goes through every loader (each loader sees max_examples inputs per test).
def check_all(data: bytes, label: str) -> None:
    for name, loader in LOADERS.items():
        try:
            check(loader, data, label)
        except Exception as e:  # name the loader, keep the original exception as the cause
            raise AssertionError(f"loader {name} raised {type(e).__name__}: {e}") from e


@FUZZ
@given(data=st.binary(max_size=600), ext=st.sampled_from(["", ".csv", ".tsv", ".json", ".jsonl", ".parquet",
                                                          ".txt"]))
def test_random_bytes(data, ext):
    check_all(data, f"fuzz{ext}")


@FUZZ
@given(seed=st.sampled_from(SEEDS), ops=st.lists(MUTATION, min_size=1, max_size=4), keep_ext=st.booleans())
def test_mutated_valid_files(seed, ops, keep_ext):
    name, raw = seed
    check_all(mutate(raw, ops), name if keep_ext else "fuzzed")


@FUZZ
@given(text=st.lists(st.sampled_from(list('q1d2 \t,;"\n{}[]:.-eNaIf0#') + ["query_id", "doc_id", "score",
                                                                              "relevance", "_id", "domain"]),
                     max_size=60).map("".join), ext=st.sampled_from(["", ".csv", ".json"]))
def test_structured_text(text, ext):
    check_all(text.encode(), f"fuzz{ext}")


# ---------------------------------------------------------------------------- structure-aware generators
_IDS = st.sampled_from(["a", "b", "c", "d", "e", "q1", "d1", " ", "", "tt0000001", "x y", "1", "é", "a,b"])
_SCALARS = st.one_of(_IDS, st.integers(-3, 6), st.sampled_from([2**70, -(2**40), 2.5, 1e308, 0.0]),
                     st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none())
_KEYS = st.sampled_from(["movie_id", "id", "_id", "query", "source", "query_id", "domain", "title", "text",
                         "relevance_judgments", "synonyms", "exact", "partial", "related", "broader", "queries",
                         "5_most_similar_movies_overall_ordered", "top_3", "near", "q1", "q2", "d1", "d2", "a",
                         "b"])
JSON_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(_KEYS, inner, max_size=5)), max_leaves=25)

_LIST_FIELDS = st.sampled_from(["5_most_similar_movies_overall_ordered", "top_3", "near", "genres"])


@st.composite
def ordered_lists_docs(draw) -> list[dict]:
    """Seed-001-like documents: mostly well formed, with every kind of constraint breach now and then."""
    ids = draw(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=6, unique=True))
    entry_ids = ids + ([draw(st.sampled_from(ids))] if draw(st.integers(0, 9)) == 0 else [])
    fields = draw(st.lists(_LIST_FIELDS, min_size=1, max_size=3, unique=True))
    pool = st.sampled_from(ids + ["zz"]) if draw(st.integers(0, 4)) == 0 else st.sampled_from(ids)
    entries = []
    for q in entry_ids:
        e: dict = {"movie_id": q}
        for f in fields:
            if draw(st.integers(0, 30)) == 0:
                continue  # a missing list now and then
            e[f] = draw(st.lists(pool, max_size=6))
        entries.append(e)
    return entries


GRADED_ENTRY = st.one_of(
    st.fixed_dictionaries({"query": _IDS, "relevance_judgments": st.dictionaries(
        _IDS, st.one_of(st.integers(-3, 5), _SCALARS), max_size=4)},
        optional={"domain": st.one_of(_IDS, st.none(), st.integers())}),
    st.fixed_dictionaries({"source": _IDS, "synonyms": st.dictionaries(
        st.sampled_from(["exact", "partial", "related", "broader"]), st.lists(_IDS, max_size=3), max_size=4)},
        optional={"domain": _IDS}))


@st.composite
def tables(draw) -> list[list[str]]:
    """A header and rows of (mostly) the header's width, cells from a nasty vocabulary."""
    header = draw(_HEADERS)
    rows = []
    for _ in range(draw(st.integers(0, 8))):
        width = len(header) if draw(st.integers(0, 9)) else draw(st.integers(0, 6))
        rows.append(draw(st.lists(_CELL, min_size=width, max_size=width)))
    return [header] + rows


_HEADERS = st.one_of(
    st.lists(st.sampled_from(["query_id", "qid", "doc_id", "corpus-id", "relevance", "score", "rank", "domain",
                              "label", "_id", "title", "text", "junk"]), min_size=1, max_size=5),
    st.permutations(["query_id", "doc_id", "relevance"]), st.permutations(["qid", "docid", "score", "rank"]),
    st.just(["query_id", "domain"]))
_CELLS = st.sampled_from(["q1", "q2", "d1", "d2", "0", "1", "-1", "3", "2.5", "1e400", "nan", "-inf", "", " ",
                          '"q,1"', '"d""2"', "N/A", "null", "true", "99999999999999999999", "\u00e9", "#x"])


@FUZZ
@given(value=JSON_VALUES, ext=st.sampled_from(["", ".json", ".jsonl"]), jsonl=st.booleans())
def test_random_json_structures(value, ext, jsonl):
    if jsonl and isinstance(value, list):
        data = "\n".join(json.dumps(v) for v in value).encode()
    else:
        data = json.dumps(value).encode()
    check_all(data, f"fuzz{ext}")


@FUZZ
@given(entries=st.one_of(ordered_lists_docs(), st.lists(GRADED_ENTRY, min_size=1, max_size=5)),
       as_jsonl=st.booleans())
def test_schema_like_json(entries, as_jsonl):
    data = ("\n".join(json.dumps(e) for e in entries) if as_jsonl else json.dumps(entries)).encode()
    check_all(data, "gt.jsonl" if as_jsonl else "gt.json")


@FUZZ
@given(table=tables(), sep=st.sampled_from([",", "\t", ";"]), ext=st.sampled_from([".csv", ".tsv", ".txt"]))
def test_table_like_text(table, sep, ext):
    lines = [sep.join(r) for r in table]
    check_all(("\n".join(lines) + "\n").encode(), f"fuzz{ext}")
_CELL = st.one_of(st.sampled_from(["q1", "q2", "d1", "d2", "d3"]), st.integers(-3, 5).map(str), _CELLS)

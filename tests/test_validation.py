"""One test per input problem: the error type, and a message naming the file and the culprit.

Also one test per hard constraint of seed 001 §1.3.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import (
    BinaryFileError,
    ColumnCountError,
    ConflictingValueError,
    ConstraintError,
    DuplicateIdError,
    DuplicateListIdError,
    EmptyInputError,
    EvalcoreError,
    InvalidJsonError,
    JsonShapeError,
    MissingColumnError,
    MissingValueError,
    NonFiniteValueError,
    OptionError,
    UnreadableFileError,
    ValueTypeError,
)
from evalcore.io import list_aspects, load_doc_metadata, load_domains, load_qrels, load_run

FIX = Path(__file__).resolve().parent / "fixtures"
OVERALL = "5_most_similar_movies_overall_ordered"
VIBES = "5_most_similar_movies_vibes_ordered"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return p


def raises(exc: type[EvalcoreError], fn, *args, **kw) -> str:
    """Call fn, assert it raises exactly a subclass of ``exc``, and return the message."""
    with pytest.raises(exc) as info:
        fn(*args, **kw)
    return str(info.value)


def names(msg: str, *parts: str) -> None:
    for p in parts:
        assert p in msg, f"{p!r} not in message {msg!r}"


# ============================================================================ unreadable / binary / empty
def test_missing_file(tmp_path):
    p = tmp_path / "nope.csv"
    for fn in (load_qrels, load_run, load_domains, load_doc_metadata, list_aspects):
        names(raises(UnreadableFileError, fn, p), str(p), "not found")


def test_directory_instead_of_file(tmp_path):
    names(raises(UnreadableFileError, load_qrels, tmp_path), str(tmp_path), "directory")


def test_unreadable_permission(tmp_path, monkeypatch):
    # CI runs as root, which can read a chmod-0 file: make the OS refuse the read instead
    p = write(tmp_path, "q.csv", "query_id,doc_id,relevance\nq,d,1\n")
    real = Path.read_bytes

    def refuse(self):
        if self == p:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    names(raises(UnreadableFileError, load_qrels, p), str(p), "permission denied")


@pytest.mark.parametrize("fmt", ["trec", "csv", "tsv", "json_dict", "ordered_lists", "graded_json", "beir"])
def test_binary_file_nul_bytes(tmp_path, fmt):
    p = write(tmp_path, "gt.bin", b"query_id,doc_id,relevance\n\x00\x01\x02q,d,1\n")
    names(raises(BinaryFileError, load_qrels, p, format=fmt), "gt.bin", "binary")


@pytest.mark.parametrize("fmt", ["csv", "json_dict", "trec"])
def test_binary_file_invalid_utf8_names_line(tmp_path, fmt):
    p = write(tmp_path, "r.dat", b"query_id,doc_id,score\nq1,d1,1\nq1,d\xff\xfe2,0.5\n")
    msg = raises(BinaryFileError, load_run, p, format=fmt)
    names(msg, "r.dat", "line 3", "UTF-8")


def test_utf16_file_is_named(tmp_path):
    p = write(tmp_path, "q.csv", "query_id,doc_id,relevance\nq,d,1\n".encode("utf-16"))
    names(raises(BinaryFileError, load_qrels, p), "q.csv", "UTF-16")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_trec_files_are_named_not_called_binary(tmp_path, encoding):
    """TREC runs and qrels (read as bytes) too, with or without a byte-order mark."""
    run = write(tmp_path, "r.trec", "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\n".encode(encoding))
    msg = raises(BinaryFileError, load_run, run)
    names(msg, "r.trec", "UTF-16", "save the file as UTF-8")
    assert "binary" not in msg
    qrels = write(tmp_path, "q.txt", "q1 0 d1 1\nq1 0 d2 0\n".encode(encoding))
    names(raises(BinaryFileError, load_qrels, qrels, format="trec"), "q.txt", "UTF-16")


@pytest.mark.parametrize("content", [b"", b"   \n\n\t\n"])
@pytest.mark.parametrize("loader", [load_qrels, load_run, load_domains, load_doc_metadata, list_aspects])
def test_empty_file(tmp_path, content, loader):
    p = write(tmp_path, "empty.csv", content)
    names(raises(EmptyInputError, loader, p), "empty.csv", "empty")


@pytest.mark.parametrize("content,fmt", [
    ("query_id,doc_id,relevance\n", "csv"), ("query_id\tdoc_id\tscore\n\n", "tsv"), ("[]", "graded_json"),
    ("{}", "json_dict"), ("[]", "ordered_lists"), ("# only a comment\n", "trec"),
])
def test_no_records(tmp_path, content, fmt):
    p = write(tmp_path, "gt.txt", content)
    names(raises(EmptyInputError, load_qrels, p, format=fmt), "gt.txt")


def test_corrupt_parquet(tmp_path):
    pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]}).to_parquet(tmp_path / "r.parquet")
    data = (tmp_path / "r.parquet").read_bytes()
    p = write(tmp_path, "cut.parquet", data[: len(data) // 2])
    names(raises(UnreadableFileError, load_run, p), "cut.parquet", "Parquet")


# ============================================================================ columns
@pytest.mark.parametrize("sep,fmt", [(",", "csv"), ("\t", "tsv")])
def test_wrong_column_count_table(tmp_path, sep, fmt):
    body = ["query_id", "doc_id", "relevance"], ["q1", "d1", "1"], ["q1", "d2"], ["q2", "d3", "1"]
    p = write(tmp_path, f"gt.{fmt}", "\n".join(sep.join(r) for r in body) + "\n")
    msg = raises(ColumnCountError, load_qrels, p)
    names(msg, f"gt.{fmt}", "line 3", "expected 3 columns", "found 2")
    body = ["query_id", "doc_id", "score"], ["q1", "d1", "1"], ["q1", "d2", "1", "extra"]
    p = write(tmp_path, f"run.{fmt}", "\n".join(sep.join(r) for r in body) + "\n")
    names(raises(ColumnCountError, load_run, p), f"run.{fmt}", "line 3", "found 4")


def test_wrong_column_count_trec(tmp_path):
    p = write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 1\nq1 d3 1\n")
    names(raises(ColumnCountError, load_qrels, p), "qrels.txt", "line 3")
    p = write(tmp_path, "run.txt", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 t\n")
    names(raises(ColumnCountError, load_run, p), "run.txt", "line 2")


def test_missing_required_column_lists_columns(tmp_path):
    p = write(tmp_path, "gt.csv", "query_id,passage,relevance\nq1,d1,1\n")
    msg = raises(MissingColumnError, load_qrels, p)
    names(msg, "gt.csv", "no document id column", "'query_id', 'passage', 'relevance'")
    p = write(tmp_path, "run.csv", "qid,docid,foo\nq1,d1,1\n")
    names(raises(MissingColumnError, load_run, p), "run.csv", "no score or rank column", "'foo'")
    p = write(tmp_path, "gt2.tsv", "qid\tdocid\nq1\td1\n")
    names(raises(MissingColumnError, load_qrels, p), "gt2.tsv", "relevance grade", "'qid', 'docid'")
    p = write(tmp_path, "meta.csv", "title,text\nA,b\n")
    names(raises(MissingColumnError, load_doc_metadata, p), "meta.csv", "document id", "'title', 'text'")
    p = write(tmp_path, "dom.csv", "query_id,genre,x\nq1,a,b\n")
    names(raises(MissingColumnError, load_domains, p), "dom.csv", "domain", "'genre'")


def test_headerless_table_says_header_required(tmp_path):
    p = write(tmp_path, "gt.csv", "q1,d1,1\nq1,d2,0\n")
    names(raises(MissingColumnError, load_qrels, p), "gt.csv", "header line is required")


def test_parquet_missing_column(tmp_path):
    pd.DataFrame({"query_id": ["q"], "docs": ["d"], "score": [1.0]}).to_parquet(tmp_path / "r.parquet")
    names(raises(MissingColumnError, load_run, tmp_path / "r.parquet"), "r.parquet", "'docs'")


def test_empty_cell(tmp_path):
    p = write(tmp_path, "gt.csv", "query_id,doc_id,relevance\nq1,d1,1\nq1,,1\n")
    names(raises(MissingValueError, load_qrels, p), "gt.csv", "line 3", "document id")
    p = write(tmp_path, "run.csv", "query_id,doc_id,score\nq1,d1,1\nq1,d2,\n")
    names(raises(MissingValueError, load_run, p), "run.csv", "line 3", "score")


# ============================================================================ values
def test_non_numeric_grade_table(tmp_path):
    p = write(tmp_path, "gt.csv", "query_id,doc_id,relevance\nq1,d1,1\n\nq1,d2,high\n")
    names(raises(ValueTypeError, load_qrels, p), "gt.csv", "line 4", "'high'")
    p = write(tmp_path, "gt2.tsv", "qid\tdocid\tgrade\nq1\td1\t2.5\n")
    names(raises(ValueTypeError, load_qrels, p), "gt2.tsv", "line 2", "'2.5'", "not an integer")


def test_non_numeric_grade_trec(tmp_path):
    p = write(tmp_path, "q.txt", "q1 0 d1 1\nq1 0 d2 x\n")
    names(raises(ValueTypeError, load_qrels, p), "q.txt", "line 2", "'x'")


def test_non_numeric_grade_json(tmp_path):
    p = write(tmp_path, "q.json", '{"q1": {"d1": 1, "d2": "high"}}')
    names(raises(ValueTypeError, load_qrels, p), "q.json", "'high'", "'d2'", "'q1'")
    p = write(tmp_path, "g.json", json.dumps([{"query": "a", "relevance_judgments": {"x": 1.5}}]))
    names(raises(ValueTypeError, load_qrels, p), "g.json", "'x'", "'a'", "[0].relevance_judgments.x")
    p = write(tmp_path, "b.json", '{"q1": {"d1": true}}')
    names(raises(ValueTypeError, load_qrels, p), "b.json", "'d1'")


def test_grade_out_of_range(tmp_path):
    p = write(tmp_path, "q.json", '{"q1": {"d1": 99999999999999999999}}')
    names(raises(ValueTypeError, load_qrels, p), "q.json", "out of range", "'d1'")
    p = write(tmp_path, "q.csv", "query_id,doc_id,relevance\nq1,d1,1e30\n")
    names(raises(ValueTypeError, load_qrels, p), "q.csv", "line 2", "out of range")


@pytest.mark.parametrize("bad", ["inf", "1e30", "nan", "N/A", "99999999999999999999"])
def test_non_finite_or_huge_grade_trec_beir(tmp_path, bad):
    # these used to be cast silently to -9223372036854775808 by the TREC / BEIR readers
    p = write(tmp_path, "q.txt", f"q1 0 d1 1\nq1 0 d2 {bad}\n")
    names(raises(ValueTypeError, load_qrels, p), "q.txt", "line 2", repr(bad))
    p = write(tmp_path, "b.tsv", f"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t{bad}\n")
    names(raises(ValueTypeError, load_qrels, p), "b.tsv", "line 3", repr(bad))


def test_non_numeric_score(tmp_path):
    p = write(tmp_path, "run.csv", "query_id,doc_id,score\nq1,d1,1\nq1,d2,abc\n")
    names(raises(ValueTypeError, load_run, p), "run.csv", "line 3", "'abc'")
    p = write(tmp_path, "run.json", '{"q1": {"d1": 1, "d2": null}}')
    names(raises(ValueTypeError, load_run, p), "run.json", "'d2'", "'q1'")
    p = write(tmp_path, "run.txt", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 abc t\n")
    names(raises(ValueTypeError, load_run, p), "run.txt", "line 2")


@pytest.mark.parametrize("bad", ["nan", "inf", "-Infinity", "1e999"])
def test_non_finite_score_table(tmp_path, bad):
    p = write(tmp_path, "run.csv", f"query_id,doc_id,score\nq1,d1,1\nq1,d2,{bad}\n")
    names(raises(NonFiniteValueError, load_run, p), "run.csv", "line 3", "'d2'", "'q1'")


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_score_json(tmp_path, bad):
    p = write(tmp_path, "run.json", '{"q1": {"d1": 1, "d2": ' + bad + '}}')
    names(raises(NonFiniteValueError, load_run, p), "run.json", "'d2'", "'q1'")


def test_non_finite_score_trec_and_parquet(tmp_path):
    p = write(tmp_path, "run.txt", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 nan t\n")
    names(raises(NonFiniteValueError, load_run, p), "run.txt", "line 2")
    pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, np.inf]}).to_parquet(
        tmp_path / "r.parquet")
    names(raises(NonFiniteValueError, load_run, tmp_path / "r.parquet"), "r.parquet", "row 2", "'b'")


def test_non_finite_rank(tmp_path):
    p = write(tmp_path, "run.tsv", "qid\tdocid\trank\nq1\td1\t1\nq1\td2\tinf\n")
    names(raises(NonFiniteValueError, load_run, p), "run.tsv", "line 3", "rank")


# ============================================================================ duplicates
def test_duplicate_pair_table(tmp_path):
    p = write(tmp_path, "gt.csv", "query_id,doc_id,relevance\nq1,d1,1\nq2,d1,1\nq1,d1,2\n")
    names(raises(DuplicateIdError, load_qrels, p), "gt.csv", "line 4", "'d1'", "'q1'")
    p = write(tmp_path, "run.tsv", "qid\tdocid\tscore\nq1\td1\t1\nq1\td2\t1\nq1\td1\t0.5\n")
    names(raises(DuplicateIdError, load_run, p), "run.tsv", "line 4", "'d1'", "'q1'")


def test_duplicate_pair_trec_and_beir(tmp_path):
    p = write(tmp_path, "q.txt", "q1 0 d1 1\nq1 0 d2 1\nq1 0 d1 0\n")
    names(raises(DuplicateIdError, load_qrels, p), "q.txt", "line 3", "'d1'", "'q1'")
    p = write(tmp_path, "b.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t1\n")
    names(raises(DuplicateIdError, load_qrels, p), "b.tsv", "line 3", "'d1'")


def test_duplicate_pair_parquet(tmp_path):
    pd.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "a"], "relevance": [1, 1, 1]}).to_parquet(
        tmp_path / "q.parquet")
    names(raises(DuplicateIdError, load_qrels, tmp_path / "q.parquet"), "q.parquet", "row 3", "'a'", "'q'")


def test_duplicate_keys_json(tmp_path):
    p = write(tmp_path, "q.json", '{"q1": {"d1": 1, "d2": 0, "d1": 2}}')
    names(raises(DuplicateIdError, load_qrels, p), "q.json", "'d1'", "'q1'", "twice")
    p = write(tmp_path, "q2.json", '{"q1": {"d1": 1}, "q1": {"d2": 1}}')
    names(raises(DuplicateIdError, load_qrels, p), "q2.json", "'q1'", "twice")
    p = write(tmp_path, "r.json", '{"q1": {"d1": 1.0, "d1": 2.0}}')
    names(raises(DuplicateIdError, load_run, p), "r.json", "'d1'", "'q1'")
    p = write(tmp_path, "r2.json", '{"q1": ["d1", "d2", "d1"]}')
    names(raises(DuplicateIdError, load_run, p), "r2.json", "'d1'", "'q1'")


def test_duplicate_graded_json(tmp_path):
    recs = [{"query": "a", "relevance_judgments": {"x": 1}}, {"query": "a", "relevance_judgments": {"y": 1}}]
    p = write(tmp_path, "g.json", json.dumps(recs))
    names(raises(DuplicateIdError, load_qrels, p), "g.json", "'a'", "[0]", "[1]")
    recs = [{"source": "s", "synonyms": {"exact": ["x"], "related": ["y", "x"]}}]
    p = write(tmp_path, "s.json", json.dumps(recs))
    names(raises(DuplicateIdError, load_qrels, p), "s.json", "'x'", "'s'", "'exact'", "'related'")
    p = write(tmp_path, "k.json", '[{"query": "a", "relevance_judgments": {"x": 1, "x": 2}}]')
    names(raises(DuplicateIdError, load_qrels, p), "k.json", "'x'", "'a'")


def test_duplicate_metadata_ids(tmp_path):
    p = write(tmp_path, "corpus.jsonl", '{"_id": "d1", "text": "a"}\n{"_id": "d2"}\n{"_id": "d1", "text": "b"}\n')
    names(raises(DuplicateIdError, load_doc_metadata, p), "corpus.jsonl", "line 3", "'d1'")
    p = write(tmp_path, "m.csv", "doc_id,title\na,A\nb,B\na,C\n")
    names(raises(DuplicateIdError, load_doc_metadata, p), "m.csv", "line 4", "'a'")


def test_conflicting_domains(tmp_path):
    p = write(tmp_path, "gt.csv", "query_id,doc_id,relevance,domain\nq1,d1,1,news\nq1,d2,1,sports\n")
    names(raises(ConflictingValueError, load_qrels, p), "gt.csv", "line 3", "'q1'", "'news'", "'sports'")
    p = write(tmp_path, "dom.json", '[{"query_id": "q1", "domain": "a"}, {"query_id": "q1", "domain": "b"}]')
    names(raises(ConflictingValueError, load_domains, p), "dom.json", "'q1'", "[1]")


# ============================================================================ JSON syntax and shape
def test_invalid_json_line_and_column(tmp_path):
    p = write(tmp_path, "q.json", '{\n  "q1": {"d1": 1,\n  "d2": 2\n')
    msg = raises(InvalidJsonError, load_qrels, p)
    names(msg, "q.json", "line 4", "column")
    p = write(tmp_path, "r.json", '{"q1": {"d1": 1.0 "d2": 2}}')
    msg = raises(InvalidJsonError, load_run, p)
    names(msg, "r.json", "line 1", "column 19")
    assert re.search(r"line 1, column 19", msg)


def test_invalid_jsonl_line(tmp_path):
    p = write(tmp_path, "g.jsonl", '{"query": "a", "relevance_judgments": {"x": 1}}\n{"query": "b", oops}\n')
    names(raises(InvalidJsonError, load_qrels, p), "g.jsonl", "line 2", "column")


def test_json_too_deep(tmp_path):
    p = write(tmp_path, "deep.json", "[" * 100000 + "]" * 100000)
    names(raises(InvalidJsonError, load_qrels, p), "deep.json", "deep")


def test_wrong_json_shape_graded_path(tmp_path):
    recs = [{"query": f"q{i}", "relevance_judgments": {"x": 1}} for i in range(3)]
    recs.append({"query": "q3", "relevance_judgments": ["x", "y"]})
    p = write(tmp_path, "g.json", json.dumps(recs))
    names(raises(JsonShapeError, load_qrels, p), "g.json", "[3].relevance_judgments", "expected an object",
          "found a list", "'q3'")
    p = write(tmp_path, "g2.json", json.dumps([{"query": "a", "relevance_judgments": {}}, "oops"]))
    names(raises(JsonShapeError, load_qrels, p, format="graded_json"), "g2.json", "[1]", "found a string")
    p = write(tmp_path, "g3.json", json.dumps([{"query": "a", "synonyms": {"exact": ["b"], "broader": ["c"]}}]))
    names(raises(JsonShapeError, load_qrels, p), "g3.json", "[0].synonyms.broader", "'broader'")


def test_wrong_json_shape_dicts(tmp_path):
    p = write(tmp_path, "q.json", '[{"q1": {"d1": 1}}]')
    names(raises(JsonShapeError, load_qrels, p, format="json_dict"), "q.json", "top level", "found a list")
    p = write(tmp_path, "q2.json", '{"q1": {"d1": 1}, "q 2": 3}')
    names(raises(JsonShapeError, load_qrels, p), "q2.json", '["q 2"]', "found a number")
    p = write(tmp_path, "r.json", '{"q1": {"d1": 1}, "q2": "d1"}')
    names(raises(JsonShapeError, load_run, p), "r.json", "q2", "found a string")
    p = write(tmp_path, "r2.json", '{"q1": [["d1"]]}')
    names(raises(JsonShapeError, load_run, p), "r2.json", "q1[0]", "found a list")


def test_wrong_json_shape_ordered_lists(tmp_path):
    p = write(tmp_path, "o.json", '{"a": ["b"]}')
    names(raises(JsonShapeError, load_qrels, p, format="ordered_lists"), "o.json", "top level",
          "array of objects")
    p = write(tmp_path, "o2.json", '[{"id": "a", "near": ["b"]}, 5]')
    names(raises(JsonShapeError, load_qrels, p, format="ordered_lists"), "o2.json", "[1]", "found a number")
    p = write(tmp_path, "o3.json", '[{"id": "a", "near": ["b"]}, {"id": "b", "near": "a"}]')
    names(raises(JsonShapeError, load_qrels, p), "o3.json", "[1].near", "'b'")
    p = write(tmp_path, "o4.json", '[{"id": "a", "near": ["b"]}, {"id": "b"}]')
    names(raises(JsonShapeError, load_qrels, p), "o4.json", "[1]", "'near'")
    p = write(tmp_path, "o5.json", '[{"title": "a", "near": ["b"]}]')
    names(raises(JsonShapeError, load_qrels, p, format="ordered_lists"), "o5.json", "no id field", "'title'")
    p = write(tmp_path, "o6.json", '[{"id": "a", "near": ["b", {"x": 1}]}, {"id": "b", "near": []}]')
    names(raises(JsonShapeError, load_qrels, p), "o6.json", "[0].near[1]", "found an object")


# ============================================================================ seed 001 §1.3, one test per constraint
def seed001() -> list[dict]:
    return json.loads((FIX / "seed001_movies.json").read_text())


def load_seed(tmp_path: Path, entries: list[dict], aspect: str | None = OVERALL):
    p = write(tmp_path, "movies.json", json.dumps(entries))
    return load_qrels(p, aspect=aspect)


def test_seed001_fixture_is_valid(tmp_path):
    assert load_seed(tmp_path, seed001()).n_queries == 6


def test_seed001_declared_length(tmp_path):
    e = seed001()
    e[2][VIBES] = e[2][VIBES][:4]
    msg = raises(ConstraintError, load_seed, tmp_path, e)  # checked for every aspect, not only the chosen one
    names(msg, "movies.json", "tt0000003", VIBES, "has 4 items", "exactly 5")
    e = seed001()
    e[0][OVERALL] = e[0][OVERALL] + ["tt0000001"]
    names(raises(ConstraintError, load_seed, tmp_path, e), "tt0000001", OVERALL, "has 6 items")


def test_seed001_query_not_in_own_list(tmp_path):
    e = seed001()
    e[1][OVERALL][3] = "tt0000002"  # tt0000002 lists itself
    msg = raises(ConstraintError, load_seed, tmp_path, e)
    names(msg, "movies.json", "'tt0000002'", OVERALL, "its own list", "position 4")


def test_seed001_unique_ids_in_a_list(tmp_path):
    e = seed001()
    e[4]["5_most_similar_movies_content_ordered"][4] = e[4]["5_most_similar_movies_content_ordered"][0]
    dup = e[4]["5_most_similar_movies_content_ordered"][0]
    msg = raises(DuplicateListIdError, load_seed, tmp_path, e)
    names(msg, "movies.json", "'tt0000005'", "5_most_similar_movies_content_ordered", repr(dup), "twice")
    assert issubclass(DuplicateListIdError, ConstraintError) and issubclass(DuplicateListIdError, DuplicateIdError)


def test_seed001_listed_ids_exist(tmp_path):
    e = seed001()
    e[3][OVERALL][1] = "tt9999999"
    msg = raises(ConstraintError, load_seed, tmp_path, e)
    names(msg, "movies.json", "'tt0000004'", OVERALL, "'tt9999999'", "not the id of any entry")


def test_seed001_an_id_typed_as_a_number_is_named(tmp_path):
    """A review: entry [10]'s id written as a number was reported only where another entry lists it."""
    e = seed001()
    listed = e[3][OVERALL][1]
    j = next(i for i, x in enumerate(e) if x["movie_id"] == listed)
    e[j]["movie_id"] = int(listed[2:])  # "tt0000002" -> 2
    msg = raises(ConstraintError, load_seed, tmp_path, e)
    names(msg, "not the id of any entry", f"entry [{j}]'s movie_id is the number {int(listed[2:])}",
          "ids are strings")
    e = seed001()
    e[3][OVERALL][1] = "tt9999999"  # ids all strings: no such note
    assert "the number" not in raises(ConstraintError, load_seed, tmp_path, e)


def test_seed001_listed_ids_exist_even_when_none_does(tmp_path):
    # a list field naming no entry at all is not offered as an aspect; asking for it is a §1.3 error
    e = seed001()
    for x in e:
        x["sequels"] = ["tt9000001", "tt9000002"]
    p = write(tmp_path, "movies.json", json.dumps(e))
    assert "sequels" not in list_aspects(p)
    msg = raises(ConstraintError, load_qrels, p, aspect="sequels")
    names(msg, "movies.json", "'tt0000001'", "'sequels'", "'tt9000001'", "not the id of any entry")


def test_seed001_one_entry_per_id(tmp_path):
    e = seed001()
    twin = copy.deepcopy(e[1])
    e.append(twin)
    msg = raises(DuplicateListIdError, load_seed, tmp_path, e)
    names(msg, "movies.json", "movie_id 'tt0000002'", "two entries", "[1]", "[6]")


def test_seed001_constraints_checked_by_list_aspects_too(tmp_path):
    e = seed001()
    e[0][OVERALL][0] = "tt0000001"
    p = write(tmp_path, "m.json", json.dumps(e))
    names(raises(ConstraintError, list_aspects, p), "m.json", "'tt0000001'", OVERALL)


def test_seed001_jsonl_errors_name_the_line(tmp_path):
    e = seed001()
    e[4][OVERALL][0] = "tt9999999"
    p = write(tmp_path, "m.jsonl", "\n".join(json.dumps(x) for x in e))
    names(raises(ConstraintError, load_qrels, p, aspect="overall"), "m.jsonl", "line 5", "'tt9999999'")


def test_evaluate_names_an_argument_of_the_wrong_kind_and_refuses_fractional_cutoffs():
    """A path where a loaded Qrels or Run is expected raised AttributeError deep inside; k=1.5 was evaluated as
    ndcg@1 and k=True as k=1 (the CLI refuses --k 1.5)."""
    from evalcore import evaluate
    from evalcore.data import Qrels, Run

    q = Qrels.from_dict({"q1": {"d1": 1, "d2": 1}})
    r = Run.from_dict({"q1": {"d2": 2.0, "d1": 1.0}}, name="A")
    cases = [((q, {"A": "/tmp/run.txt"}), r"run 'A' must be a Run \(read a file with evalcore\.io\.load_run\(path\)\), "
                                          r"got str '/tmp/run\.txt'"),
             (("/tmp/qrels.txt", {"A": r}), r"qrels must be a Qrels \(read a file with evalcore\.io\.load_qrels"),
             ((None, r), r"qrels must be a Qrels .*got NoneType"),
             ((q, [r, None]), r"each run must be a Run .*got NoneType"),
             ((q, "run.trec"), r"runs must be a Run .*got str 'run\.trec'")]
    for args, message in cases:
        with pytest.raises(OptionError, match=message):
            evaluate(*args, metrics=["ndcg"], k=[10])
    for k in ([1.5], [True], ["10"], [float("nan")], 2.5):
        with pytest.raises(OptionError, match="cutoffs must be integers >= 1"):
            evaluate(q, r, metrics=["ndcg"], k=k)
    assert evaluate(q, r, metrics=["ndcg"], k=[10.0, 3]).table["k"].unique().tolist() == [3, 10]  # integral: fine


def test_a_relevance_threshold_above_every_grade_warns():
    """Threshold 10**9 on grades 0-3: recall, mrr, map all 0 and a star on every run, without a word."""
    import warnings

    from evalcore import evaluate
    from evalcore.data import Qrels, Run
    from evalcore.errors import EvalcoreWarning

    q = Qrels.from_dict({"q1": {"d1": 3, "d2": 1}, "q2": {"d3": 0}})
    r = Run.from_dict({"q1": {"d2": 2.0, "d1": 1.0}}, name="A")
    with pytest.warns(EvalcoreWarning, match=r"no judgment reaches the relevance threshold \(grade >= 4; the highest "
                                             r"grade is 3\)") as got:
        evaluate(q, r, metrics=["recall"], k=[2], rel_threshold=4)
    assert got[0].filename == __file__  # attributed to the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalcoreWarning)
        evaluate(q, r, metrics=["recall"], k=[2], rel_threshold=3)  # grade 3 reaches it: no warning


def test_only_a_leading_number_or_top_n_declares_a_length(tmp_path):
    """'neighbors_model_2' with 5 items was refused ('its name declares exactly 2'): a number naming a model, a
    version or a year is not a length. A leading number (seed 001) and top-N still declare one."""
    ids = [f"m{i}" for i in range(8)]
    for field in ("neighbors_model_2", "similar_2024", "e5_similar", "most_similar_v2"):
        doc = [{"movie_id": m, field: [x for x in ids if x != m][:5]} for m in ids]
        path = tmp_path / f"{field}.json"
        path.write_text(json.dumps(doc))
        assert load_qrels(path).n_queries == 8
    for field, n in (("3_most_similar", 3), ("top_3", 3), ("similar_top3", 3), ("similar-top-3", 3)):
        doc = [{"movie_id": m, field: [x for x in ids if x != m][:5]} for m in ids]
        path = tmp_path / f"{field}.json"
        path.write_text(json.dumps(doc))
        names(raises(ConstraintError, load_qrels, path), field, "has 5 items", f"exactly {n}")


BEIR_CORPUS = ('{"_id": "d1", "title": "A", "text": "alpha"}\n'
               '{"_id": "d2", "title": "B", "text": "beta"}\n')
BEIR_QUERIES = '\n{"_id": "q1", "text": "alpha?"}\n{"_id": "q2", "text": "beta?"}\n'


@pytest.mark.parametrize("loader, what", [(load_run, "not a run"), (load_qrels, "not a ground truth")])
def test_a_json_lines_corpus_or_queries_file_given_as_a_run_or_judgments_says_so(tmp_path, loader, what):
    """A BEIR corpus.jsonl / queries.jsonl where a run or judgments are expected: the error said only "at the top
    level: expected an object ..., found a list"; it names the file, how it was read, the line and what the file
    looks like."""
    p = write(tmp_path, "corpus.jsonl", BEIR_CORPUS)
    names(raises(JsonShapeError, loader, p), "corpus.jsonl, line 1:", "read as JSON lines", "'_id', 'title', 'text'",
          "expected for the whole file", "looks like a corpus file", what)
    p = write(tmp_path, "queries.jsonl", BEIR_QUERIES)  # (a blank first line: the first record is on line 2)
    names(raises(JsonShapeError, loader, p), "queries.jsonl, line 2:", "read as JSON lines",
          "looks like a queries file", what)


def test_a_json_array_of_corpus_records_given_as_a_run_says_how_it_was_read(tmp_path):
    p = write(tmp_path, "corpus.json", "\n\n" + json.dumps([{"_id": "d1", "title": "A", "text": "alpha"}]))
    names(raises(JsonShapeError, load_run, p), "corpus.json, line 3:", "read as JSON: at the top level", "found a list",
          "looks like a corpus file", "not a run")


def test_a_corpus_file_given_as_seed_001_lists_or_a_domain_mapping_says_so(tmp_path):
    """A JSON array of corpus records read as judgments (ordered lists) said "no ordered-list field (aspect)", as a
    domain mapping "no query id field": neither said how it was read nor that it looks like a corpus file."""
    p = write(tmp_path, "corpus.json", json.dumps([{"_id": "d1", "title": "A", "text": "alpha"}]))
    names(raises(JsonShapeError, load_qrels, p), "corpus.json, line 1:", "read as JSON:",
          "looks like a corpus file", "not a ground truth")
    p = write(tmp_path, "queries.jsonl", BEIR_QUERIES)
    names(raises(JsonShapeError, load_domains, p), "queries.jsonl, line 2:", "read as JSON lines",
          "looks like a queries file", "not a domain mapping")

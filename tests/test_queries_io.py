"""Query texts (issue 10, item 2): BEIR queries.jsonl, JSON, CSV/TSV/Parquet tables, ``id<TAB>text`` lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from evalcore.errors import (
    DuplicateIdError,
    EmptyInputError,
    EvalcoreError,
    InputFormatError,
    MissingColumnError,
)
from evalcore.io import load_queries

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"
if not SCIFACT.exists():
    SCIFACT = Path("/work/shared/data/scifact")


def test_beir_jsonl():
    data = (b'{"_id": "1", "text": "0-dimensional biomaterials show inductive properties.", "metadata": {}}\n'
            b'{"_id": "3", "text": "1,000 genomes project enables mapping", "metadata": {}}\n')
    assert load_queries(data, label="queries.jsonl") == {
        "1": "0-dimensional biomaterials show inductive properties.", "3": "1,000 genomes project enables mapping"}


@pytest.mark.parametrize(("data", "name"), [
    (b'{"q1": "what is a cat", "q2": "dogs, and more"}', "q.json"),
    (b'[{"query_id": "q1", "query": "what is a cat"}, {"query_id": "q2", "query": "dogs, and more"}]', "q.json"),
    (b'{"q1": {"text": "what is a cat"}, "q2": {"text": "dogs, and more"}}', "q.json"),
    (b'query_id,text\nq1,what is a cat\nq2,"dogs, and more"\n', "q.csv"),
    (b'qid\tquery\nq1\twhat is a cat\nq2\tdogs, and more\n', "q.tsv"),
    (b'q1\twhat is a cat\nq2\tdogs, and more\n', "queries.tsv"),
])
def test_every_shape_gives_the_same_texts(data, name):
    assert load_queries(data, label=name) == {"q1": "what is a cat", "q2": "dogs, and more"}


def test_parquet():
    buf = io.BytesIO()
    pd.DataFrame({"_id": ["a", "b"], "text": ["first", "second"]}).to_parquet(buf)
    assert load_queries(buf.getvalue(), label="q.parquet") == {"a": "first", "b": "second"}


@pytest.mark.parametrize(("data", "error", "message", "line"), [
    (b'{"_id": "1", "text": "a"}\n{"_id": "1", "text": "b"}\n', DuplicateIdError, "query '1' is given twice", 2),
    (b'{"_id": "1", "text": "a"}\n{"title": "b"}\n', MissingColumnError, "no query id field", 2),
    (b'{"_id": "1", "text": "a"}\n{"_id": "2", "score": 3}\n', MissingColumnError, "no query text field", 2),
    (b'q1\twhat\nq2 no tab here\n', InputFormatError, "expected 'id<TAB>text'", 2),
    (b'query_id,text\nq1,a\nq1,b\n', DuplicateIdError, "given twice", 3),
    (b'a b c\n', InputFormatError, "expected a header", 1),
    (b'  \n\n', EmptyInputError, "empty", None),
    (b'\x89PNG\r\n\x1a\n\x00\x00', EvalcoreError, "", None),
])
def test_bad_files_name_the_file_and_line(data, error, message, line):
    with pytest.raises(error) as e:
        load_queries(data, label="queries.jsonl" if data[:1] == b"{" else "queries.txt")
    assert message in str(e.value)
    assert str(e.value).startswith("queries.")
    assert e.value.line == line


def test_scifact_queries_when_present():
    path = SCIFACT / "queries.jsonl"
    if not path.exists():
        pytest.skip("SciFact is not in ../shared/data (non-commercial data, used from there only)")
    texts = load_queries(path)
    lines = [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert len(texts) == len(lines)
    assert all(texts[r["_id"]] == r["text"] for r in lines)


# ---------------------------------------------------------------------------------------------- line breaks
#: Characters Python's str.splitlines() takes for a line break and a text file's lines do not: the reader split the
#: file with splitlines() before the csv module read it, so a quoted one turned into '\n' (an id refused as holding
#: a line feed, a text changed) and every line after it was counted one too far.
SPLITLINES_ONLY = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


@pytest.mark.parametrize("char", SPLITLINES_ONLY, ids=[f"U+{ord(c):04X}" for c in SPLITLINES_ONLY])
@pytest.mark.parametrize(("name", "sep"), [("q.csv", ","), ("q.tsv", "\t")])
def test_a_quoted_id_is_refused_as_it_is_in_the_file_on_its_own_line(name, sep, char):
    data = f'query_id{sep}text\nq0{sep}"zero{char}text"\nq1{sep}one\n"q{char}2"{sep}two\n'.encode()
    with pytest.raises(InputFormatError) as e:
        load_queries(data, label=name)
    assert str(e.value).startswith(f"{name}, line 4: query id {'q' + char + '2'!r} holds a control character (U+"), \
        str(e.value)
    assert e.value.line == 4


@pytest.mark.parametrize("char", SPLITLINES_ONLY, ids=[f"U+{ord(c):04X}" for c in SPLITLINES_ONLY])
def test_texts_keep_the_characters_splitlines_breaks_on(char):
    """A text is prose: kept as written, in a quoted table cell and in MS MARCO's 'id<TAB>text' lines alike."""
    want = {"q0": f"zero{char}text", "q1": "one"}
    assert load_queries(f'query_id,text\nq0,"zero{char}text"\nq1,one\n'.encode(), label="q.csv") == want
    assert load_queries(f"q0\tzero{char}text\nq1\tone\n".encode(), label="queries.tsv") == want


def test_a_record_over_several_lines_is_named_by_the_line_it_starts_on():
    """As the table readers do; CRLF line ends count one line each."""
    data = b'query_id,text\r\nq0,"two\r\nlines"\r\n"q\n1",one\r\n'
    with pytest.raises(InputFormatError) as e:
        load_queries(data, label="q.csv")
    assert str(e.value).startswith("q.csv, line 4: query id 'q\\n1' holds a control character"), str(e.value)
    assert load_queries(b'query_id,text\r\nq0,"two\r\nlines"\r\nq1,one\r\n', label="q.csv") == {
        "q0": "two\r\nlines", "q1": "one"}


def test_a_beir_corpus_given_as_the_queries_is_read_with_one_warning_saying_so_and_how_many():
    # corpus.jsonl has _id and text like queries.jsonl, plus title: read (a queries file may carry extra fields),
    # and said once, with the count; TREC-style topics whose text is their title, and queries.jsonl, say nothing
    from evalcore.errors import collected_warnings

    docs = [{"_id": f"d{i}", "title": f"Title {i}", "text": f"body {i}", "metadata": {}} for i in range(3)]
    corpus = "\n".join(json.dumps(d) for d in docs).encode()
    with collected_warnings() as got:
        texts = load_queries(corpus, label="corpus.jsonl")
    assert texts == {d["_id"]: d["text"] for d in docs}
    assert len(got) == 1
    assert got[0].startswith("corpus.jsonl: ") and "like a corpus" in got[0] and "'_id', 'title', 'text'" in got[0]
    assert f"read {len(docs)} texts from the field 'text'" in got[0]
    for quiet, name in ((b'[{"id": "1", "title": "cats", "description": "about cats"}]', "topics.json"),
                        (b'{"_id": "1", "text": "cats", "metadata": {"title": "x"}}\n', "queries.jsonl")):
        with collected_warnings() as got:
            load_queries(quiet, label=name)
        assert got == []

"""Format detection: a TREC file whose first line looks like a table's header is still read as TREC.

A table is recognised by a header line whose comma (tab, semicolon) separated cells name a query and a document
column. A TREC id may hold commas (trec_eval separates fields by white space only), so a TREC line whose ids hold
commas around a column name (``topic,12 0 web,doc,3 1``: cells 'topic' and 'doc'), a tab-separated TREC line
whose ids are such names, or a comment line above the records that names columns, was detected as a CSV / TSV
table, and the file was refused with the table reader's error about its columns. Now the table is chosen only
when the first lines do not all read as TREC records (white-space separated fields with an integer grade as the
fourth, for judgments, or a number as the fifth of six, for runs): a header's fields there are names.
"""

from __future__ import annotations

import contextlib

import pytest

from evalcore.errors import EvalcoreWarning
from evalcore.io import load_qrels, load_run
from evalcore.io.detect import detect_qrels_format, detect_run_format

#: TREC judgments whose first line a header test took for a table's, and the judgments they hold.
TREC_QRELS = [
    (b"topic,12 0 web,doc,3 1\ntopic,12 0 web,doc,4 0\ntopic,13 0 web,doc,3 2\n",
     [["topic,12", "web,doc,3", 1], ["topic,12", "web,doc,4", 0], ["topic,13", "web,doc,3", 2]]),
    (b"query\t0\tdoc\t1\nquery\t0\tdoc2\t0\n", [["query", "doc", 1], ["query", "doc2", 0]]),
    (b"# columns: qid, query, docid, rel\nq1 0 d1 1\nq1 0 d2 0\n", [["q1", "d1", 1], ["q1", "d2", 0]]),
    (b"qid,1 0 x,docid,y 1\n", [["qid,1", "x,docid,y", 1]]),  # one line
]

#: TREC runs alike, and their (query, document, score) rows and run name.
TREC_RUNS = [
    (b"topic,7 Q0 d1 1 0.5 bm25,doc\ntopic,7 Q0 d2 2 0.25 bm25,doc\n",
     [["topic,7", "d1", 0.5], ["topic,7", "d2", 0.25]], "bm25,doc"),
    (b"query\tQ0\tdoc\t1\t0.5\trun\n", [["query", "doc", 0.5]], "run"),
]


@pytest.mark.parametrize(("data", "rows"), TREC_QRELS)
def test_trec_judgments_with_header_like_ids_are_detected_and_read_as_trec(data, rows) -> None:
    assert detect_qrels_format(data) == "trec"
    assert detect_qrels_format(data, "qrels.txt") == "trec"
    comments = pytest.warns(EvalcoreWarning, match="read as comment") if data.startswith(b"#") else \
        contextlib.nullcontext()
    with comments:
        assert sorted(load_qrels(data, label="qrels.txt").to_frame().values.tolist()) == rows


@pytest.mark.parametrize(("data", "rows", "name"), TREC_RUNS)
def test_trec_runs_with_header_like_ids_are_detected_and_read_as_trec(data, rows, name) -> None:
    assert detect_run_format(data) == "trec"
    run = load_run(data, label="run.txt")
    assert sorted(run.to_frame().values.tolist()) == rows and run.name == name


@pytest.mark.parametrize(("data", "qfmt", "rfmt"), [
    (b"query_id,doc_id,relevance\nq1,d1,1\n", "csv", "csv"),
    (b"qid\tdocid\tscore\nq 1\td 1\t0.5\n", "tsv", "tsv"),
    (b"query id, doc id, relevance\nq1, d1, 1\n", "csv", "csv"),
    # a header that would read as a TREC record (4 fields, an integer fourth), above data lines that do not: a table
    (b"query id,doc id,grade 1\nq1,d1,1\n", "csv", "csv"),
    # ... and a header above TREC-looking data whose header itself does not read as a record: a table
    (b"qid\tQ0\tdocid\trank\tscore\ttag\nq1\tQ0\td1\t1\t0.5\tt\n", "tsv", "tsv"),
])
def test_tables_whose_header_names_columns_are_still_tables(data, qfmt, rfmt) -> None:
    assert detect_qrels_format(data) == qfmt
    assert detect_run_format(data) == rfmt

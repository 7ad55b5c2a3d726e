"""TREC run / qrels and BEIR qrels readers and writers: round trips and error messages.

Every input error must raise its own type with the file and the (1-based, physical)
line in the message, comment and blank lines included in the count.
"""

from __future__ import annotations

import io
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from evalcore import Qrels, Run
from evalcore.errors import (
    BinaryFileError,
    ColumnCountError,
    DuplicateIdError,
    EmptyInputError,
    EvalcoreWarning,
    InputFormatError,
    NonFiniteValueError,
    ValueTypeError,
)
from evalcore.io.trec import (
    read_beir_qrels,
    read_trec_qrels,
    read_trec_run,
    write_beir_qrels,
    write_trec_qrels,
    write_trec_run,
)


def random_run(seed: int = 0, *, name: str = "sys") -> Run:
    rng = np.random.default_rng(seed)
    qs, ds, ss = [], [], []
    specials = [0.1 + 0.2, 1e-300, -1e300, 5e-324, 1 / 3, -0.0, 123456789.123456789]
    for i in range(40):
        n = int(rng.integers(1, 30))
        docs = rng.choice(500, size=n, replace=False)
        scores = np.where(rng.random(n) < 0.3, rng.integers(0, 3, size=n), rng.normal(size=n) * 10)
        for d, s in zip(docs, scores, strict=True):
            qs.append(f"q{i}")
            ds.append(f"doc-{d}")
            ss.append(float(s))
    for j, s in enumerate(specials):
        qs.append("qs")
        ds.append(f"s{j}")
        ss.append(s)
    return Run.from_records(qs, ds, ss, name=name)


def frame_key(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns[:2])).reset_index(drop=True)


# ---------------------------------------------------------------------------- round trips
def test_run_round_trip_keeps_every_score_bit_for_bit(tmp_path):
    run = random_run(1)
    p = tmp_path / "run.txt"
    write_trec_run(run, p)
    back = read_trec_run(p)
    a, b = frame_key(run.to_frame()), frame_key(back.to_frame())
    pd.testing.assert_frame_equal(a[["query_id", "doc_id"]], b[["query_id", "doc_id"]])
    assert [x.hex() for x in a["score"]] == [x.hex() for x in b["score"]]  # exact floats
    assert back.name == "sys"
    # the ranking is the same under every tie rule
    for ties in ("trec", "docid_asc"):
        assert back.ranked_lists(ties=ties) == run.ranked_lists(ties=ties)


def test_run_written_in_rank_order_with_ranks_from_one(tmp_path):
    run = Run.from_records(["q"] * 3, ["a", "b", "c"], [1.0, 3.0, 1.0], name="x")
    buf = io.StringIO()
    write_trec_run(run, buf, tag="my run")
    lines = [ln.split() for ln in buf.getvalue().splitlines()]
    assert [ln[2] for ln in lines] == ["b", "c", "a"]  # trec ties: c before a
    assert [ln[3] for ln in lines] == ["1", "2", "3"]
    assert {ln[5] for ln in lines} == {"my_run"}  # white space in a tag cannot be written
    assert all(ln[1] == "Q0" for ln in lines)


def test_qrels_round_trip(tmp_path):
    rng = np.random.default_rng(2)
    qrels = Qrels.from_records(
        [f"q{i % 17}" for i in range(400)], [f"d{i}" for i in range(400)], rng.integers(-2, 5, size=400))
    p = tmp_path / "qrels.txt"
    write_trec_qrels(qrels, p)
    back = read_trec_qrels(p)
    pd.testing.assert_frame_equal(frame_key(qrels.to_frame()), frame_key(back.to_frame()))


def test_beir_qrels_round_trip(tmp_path):
    qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d 3": 2}, "q-2": {"d1": 3}})
    p = tmp_path / "test.tsv"
    write_beir_qrels(qrels, p)
    assert p.read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"
    back = read_beir_qrels(p)
    pd.testing.assert_frame_equal(frame_key(qrels.to_frame()), frame_key(back.to_frame()))


def test_writers_refuse_ids_with_white_space():
    run = Run.from_records(["q 1"], ["d1"], [1.0])
    with pytest.raises(InputFormatError):
        write_trec_run(run, io.StringIO())
    with pytest.raises(InputFormatError):
        write_trec_qrels(Qrels.from_dict({"q": {"d 1": 1}}), io.StringIO())


@pytest.mark.parametrize("ids, row", [(["d0", "d1", "", "d3"], 2), (["d0", ""], 1), (["", "d1"], 0),
                                     (["d0", "d 1"], 1), (["d0", "d1\n"], 1), (["d0", "\x00"], 1), (["a", "b", " "], 2)])
def test_an_id_that_cannot_be_written_is_named_with_its_own_row(ids, row):
    """An empty id was reported as the id before it ('d1' (row 1) for the empty row 2)."""
    from evalcore.io.trec import _check_trec_ids

    with pytest.raises(InputFormatError, match=re.escape(f"document id {ids[row]!r} (row {row}) is empty or contains")):
        _check_trec_ids(np.array(ids, dtype=object), "document id")


def test_readers_take_paths_bytes_and_streams(tmp_path):
    text = b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n"
    p = tmp_path / "r.txt"
    p.write_bytes(text)
    frames = [read_trec_run(x).to_frame() for x in (p, str(p), text, io.BytesIO(text))]
    for f in frames[1:]:
        pd.testing.assert_frame_equal(frames[0], f)


# ---------------------------------------------------------------------------- white space
@pytest.mark.parametrize("text", [
    b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 -1 t\n",
    b"q1\tQ0\td1\t1\t2.5\tt\nq1\tQ0\td2\t2\t-1\tt\n",
    b"  q1\tQ0   d1 1\t 2.5 t\n\tq1 Q0 d2 2  -1 t  \n",
    b"q1 Q0 d1 1 2.5 t\r\nq1 Q0 d2 2 -1 t\r\n",
    b"\n\nq1 Q0 d1 1 2.5 t\n\n\nq1 Q0 d2 2 -1 t",  # blank lines, no final newline
    b"# header comment\nq1 Q0 d1 1 2.5 t\n# middle\nq1 Q0 d2 2 -1 t\n",
    b"q1 Q0 d1 1 2.5 t extra junk\nq1 Q0 d2 2 -1 t\n",  # trailing columns ignored
])
def test_run_white_space_variants_parse_the_same(text):
    run = read_trec_run(text)
    assert run.to_frame().values.tolist() == [["q1", "d1", 2.5], ["q1", "d2", -1.0]]
    assert run.name == "t"


@pytest.mark.parametrize("text", [
    b"q1 0 d1 1\nq1 0 d2 -1\n",
    b"q1\t0\td1\t1\nq1\t0\td2\t-1\n",
    b" q1 \t0 d1    1\n\tq1\t0\td2 -1   \n",
    b"q1 0 d1 1\r\nq1 0 d2 -1\r\n",
    b"# c\nq1 0 d1 1\n\n# c2\nq1 0 d2 -1",
])
def test_qrels_white_space_variants_parse_the_same(text):
    assert read_trec_qrels(text).to_frame().values.tolist() == [["q1", "d1", 1], ["q1", "d2", -1]]


def test_hash_inside_an_id_is_not_a_comment():
    q = read_trec_qrels(b"# comment\nq1 0 doc#1 1\nq#2 0 d 0\n")
    assert q.to_frame().values.tolist() == [["q1", "doc#1", 1], ["q#2", "d", 0]]


# ---------------------------------------------------------------------------- errors: file + line
def check_error(exc_type, fn, data: bytes, name: str, line: int | None, *needles: str):
    with pytest.raises(exc_type) as ei:
        fn(data, label=name)
    err = ei.value
    msg = str(err)
    assert name in msg and err.file == name
    if line is not None:
        assert f"line {line}" in msg and err.line == line, msg
    for n in needles:
        assert n in msg, msg
    return err


@pytest.mark.parametrize("text", [
    b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 3 0.5 t\n",  # single spaces
    b"q1\tQ0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 3 0.5 t\n",  # mixed
    b"q1 Q0 d1 1 2.0 t x\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 3 0.5 t\n",  # extra column
])
def test_duplicate_document_in_run(text):
    err = check_error(DuplicateIdError, read_trec_run, text, "runs/bm25.txt", 4, "'q1'", "'d1'")
    assert (err.query, err.item) == ("q1", "d1")


def test_duplicate_document_in_run_line_counts_comments():
    text = b"# c\n\nq1 Q0 d1 1 2.0 t\nq1 Q0 d1 3 0.5 t\n"
    check_error(DuplicateIdError, read_trec_run, text, "r.txt", 4, "'q1'", "'d1'")


def test_duplicate_document_in_qrels():
    text = b"q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n"
    check_error(DuplicateIdError, read_trec_qrels, text, "qrels.txt", 3, "'q1'", "'d1'")


def test_duplicate_document_in_beir_qrels():
    text = b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\nq1\td1\t2\n"
    check_error(DuplicateIdError, read_beir_qrels, text, "test.tsv", 4, "'q1'", "'d1'")


@pytest.mark.parametrize(("text", "line"), [
    (b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\n", 2),
    (b"# comment\nq1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\n", 3),
    (b"q1\tQ0 d1 1 2.0 t\n\n\nq1 Q0 d2\n", 4),
])
def test_run_wrong_column_count(text, line):
    check_error(ColumnCountError, read_trec_run, text, "run.txt", line, "6")


@pytest.mark.parametrize(("text", "line"), [
    (b"q1 0 d1 1\nq1 0 d2\n", 2),
    (b"# a\n# b\nq1 0 d1 1\nq1 0 d2\n", 4),
])
def test_qrels_wrong_column_count(text, line):
    check_error(ColumnCountError, read_trec_qrels, text, "qrels.txt", line, "4")


def test_beir_wrong_column_count_and_header():
    check_error(ColumnCountError, read_beir_qrels, b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\n",
                "b.tsv", 3)
    check_error(ColumnCountError, read_beir_qrels, b"q\tc\ts\nq1\td1\t1\n", "b.tsv", 1, "query-id")


@pytest.mark.parametrize(("text", "line"), [
    (b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 abc t\n", 2),
    (b"# c\n\nq1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1,5 t\n", 4),
    (b"q1\tQ0 d1 1 2.0 t\nq1 Q0 d2 2 x1 t\n", 2),
])
def test_run_non_numeric_score(text, line):
    check_error(ValueTypeError, read_trec_run, text, "run.txt", line, "score")


@pytest.mark.parametrize("bad", [b"nan", b"inf", b"-inf"])
def test_run_non_finite_score(bad):
    check_error(NonFiniteValueError, read_trec_run, b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 " + bad + b" t\n",
                "run.txt", 2)


@pytest.mark.parametrize(("text", "line"), [
    (b"q1 0 d1 1\nq1 0 d2 1.5\n", 2),
    (b"# c\nq1 0 d1 1\nq1 0 d2 x\n", 3),
    (b"q1\t0 d1 1\n\nq1 0 d2 2e-1\n", 3),
])
def test_qrels_non_integer_grade(text, line):
    check_error(ValueTypeError, read_trec_qrels, text, "qrels.txt", line, "grade")


def test_beir_non_integer_grade():
    check_error(ValueTypeError, read_beir_qrels, b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0.5\n",
                "b.tsv", 3, "0.5")


@pytest.mark.parametrize("fn", [read_trec_run, read_trec_qrels, read_beir_qrels])
@pytest.mark.parametrize("text", [b"", b"   \n\n\t\n"])
def test_empty_files(fn, text):
    check_error(EmptyInputError, fn, text, "empty.txt", None)


@pytest.mark.parametrize("fn", [read_trec_run, read_trec_qrels])
def test_only_comments_is_empty(fn):
    check_error(EmptyInputError, fn, b"# nothing\n# here\n", "c.txt", None)


@pytest.mark.parametrize("fn", [read_trec_run, read_trec_qrels, read_beir_qrels])
def test_binary_files(fn):
    check_error(BinaryFileError, fn, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image.png", None)


@pytest.mark.parametrize("fn", [read_trec_run, read_trec_qrels])
def test_not_utf8_names_the_line(fn):
    text = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d\xe92 2 1.0 t\n" if fn is read_trec_run else b"q1 0 d1 1\nq1 0 d\xe92 1\n"
    check_error(BinaryFileError, fn, text, "latin1.txt", 2)


def test_missing_file_names_it(tmp_path):
    p = tmp_path / "nope.txt"
    with pytest.raises(InputFormatError) as ei:
        read_trec_run(p)
    assert str(p) in str(ei.value)


def test_scores_parse_like_floats():
    run = read_trec_run(b"q Q0 a 1 1e3 t\nq Q0 b 2 -.5 t\nq Q0 c 3 +7 t\nq Q0 d 4 0.1 t\n")
    assert run.to_dict() == {"q": {"a": 1000.0, "b": -0.5, "c": 7.0, "d": 0.1}}
    assert math.copysign(1, run.scores[1]) == -1


# --------------------------------------------------------------------------- arrow lets go of the input


@pytest.mark.parametrize("reader", ["csv", "parquet"])
def test_arrow_reads_wait_until_the_reader_lets_go(monkeypatch, reader):
    # an arrow pool thread dropping its view of the bytes after the process began to exit
    # aborted short-lived processes (exit -6); the readers return only once the view is gone.
    # Here a stand-in reader hands the view to a thread that drops it 50 ms later.
    import sys
    import threading
    import time

    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from evalcore.io._arrow import read_csv_bytes, read_parquet_bytes

    def slow_to_let_go(source, **options):
        holder = [source]  # a pa.BufferReader: it holds a buffer view of the bytes
        threading.Timer(0.05, holder.clear).start()
        return "table"

    if reader == "csv":
        monkeypatch.setattr(pacsv, "read_csv", slow_to_let_go)
        call = read_csv_bytes
    else:
        monkeypatch.setattr(pq, "read_table", slow_to_let_go)
        call = read_parquet_bytes
    data = b"q1 Q0 d1 1 1.0 t\n"
    before = sys.getrefcount(data)
    t0 = time.perf_counter()
    assert call(data) == "table"
    assert time.perf_counter() - t0 >= 0.04
    assert sys.getrefcount(data) == before


def test_a_failed_read_does_not_hold_the_bytes_through_its_traceback(monkeypatch):
    # the traceback of a failed read keeps the reader's frames, and so the bytes, alive: without
    # clearing those frames every failed read waited out the whole limit (the fuzz tests crawled)
    import sys

    import pyarrow.csv as pacsv

    import evalcore.io._arrow as arrow_helpers

    def failing(source, **options):
        raise ValueError("not a CSV file")  # this frame holds `source`

    sleeps = []
    monkeypatch.setattr(pacsv, "read_csv", failing)
    monkeypatch.setattr(arrow_helpers.time, "sleep", sleeps.append)
    data = b"whatever"
    before = sys.getrefcount(data)
    with pytest.raises(ValueError, match="not a CSV file") as info:
        arrow_helpers.read_csv_bytes(data)
    assert sleeps == []  # nothing left holding the bytes: no wait at all
    assert info.traceback[-1].name == "failing"  # the traceback itself is kept for the reader
    del info  # its frames of read_csv_bytes hold `data` as an argument (Python's, harmless)
    assert sys.getrefcount(data) == before


def test_read_csv_bytes_reads_and_raises_like_arrow():
    import sys

    import pyarrow as pa
    import pyarrow.csv as pacsv

    from evalcore.io._arrow import read_csv_bytes

    opts = dict(read_options=pacsv.ReadOptions(autogenerate_column_names=True),
                parse_options=pacsv.ParseOptions(delimiter=" "))
    data = b"a b\nc d\n"
    before = sys.getrefcount(data)
    assert read_csv_bytes(data, **opts).to_pydict() == {"f0": ["a", "c"], "f1": ["b", "d"]}
    assert sys.getrefcount(data) == before
    bad = b"a b\nc d e\n"  # a parse error: arrow raises, and has let go of the bytes too
    before = sys.getrefcount(bad)
    with pytest.raises(pa.ArrowInvalid):
        read_csv_bytes(bad, **opts)
    assert sys.getrefcount(bad) == before


@pytest.mark.parametrize("text, line, n", [(b"q1 Q0 d1 1 0.9 bm25\nq1 Q0 d2 2 0.8 bm25\n", 1, 6),
                                           (b"# a comment\n\nq1 Q0 d1 1 0.9\n", 3, 5)])
def test_a_run_file_given_as_judgments_is_refused(text, line, n):
    """A run's rank column was read as the grade (relevance 1, 2, 3... on the Data page's preview)."""
    with pytest.raises(ColumnCountError, match=re.escape(f"x.trec, line {line}: {n} columns with 'Q0' second: this "
                                                         "looks like a run file (qid Q0 docid rank score tag)")):
        read_trec_qrels(text, label="x.trec")
    assert read_trec_qrels(b"q1 Q0 d1 1\n").n_queries == 1  # four columns with Q0 as the iteration: judgments


def test_comment_lines_are_counted_in_a_warning_naming_the_file_and_the_first_line():
    """A query id beginning with '#' ("#head") was silently dropped as a comment (trec_eval has no comments):
    the preview said "7 queries (7 in the file)" for 8 ids. The skipped lines are now said."""
    with pytest.warns(EvalcoreWarning, match=r"^q\.txt: 2 lines beginning with '#' read as comments and skipped "
                                             r"\(line 2, \.\.\.\)$"):
        q = read_trec_qrels(b"q1 0 d1 1\n#head 0 d2 1\n#x 0 d3 1\nq2 0 d4 1\n", label="q.txt")
    assert sorted(q.query_ids.tolist()) == ["q1", "q2"]
    with pytest.warns(EvalcoreWarning, match=r"^r: 1 line beginning with '#' read as comment and skipped \(line 1\)$"):
        read_trec_run(b"# header\nq1 Q0 d1 1 2.5 t\n", label="r")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_trec_qrels(b"q1 0 doc#1 1\nq#2 0 d 0\n")  # '#' inside an id: no comment, no warning

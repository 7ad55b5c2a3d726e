"""``per_query.csv`` (``compare --per-query``) reads run names and query ids by the rule of every id reader: ASCII
white space around one is stripped, a non-breaking or another Unicode space is part of it; and
``write_per_query_csv`` / ``write_outputs`` refuse what would not read back.

Before, ``read_per_query_csv`` (pandas) kept the ASCII white space of a cell: a per_query.csv edited or written by
another tool with `` q1`` read as another query than ``q1`` of the same qrels read as TREC, CSV, Parquet or JSON,
and ``compare --baseline A`` refused a run written `` A``.
"""

from __future__ import annotations

import pytest

from evalcore import Qrels, Run
from evalcore.cli.main import main
from evalcore.errors import InputFormatError
from evalcore.evaluate import evaluate
from evalcore.io import load_qrels
from evalcore.io.per_query import read_per_query_csv
from evalcore.report import write_outputs, write_per_query_csv

HEAD = "run,query_id,domain,metric,k,value\n"


def test_ascii_white_space_around_a_run_name_or_query_id_is_stripped_and_a_unicode_space_kept(tmp_path) -> None:
    (tmp_path / "pq.csv").write_text(HEAD + ' A\t,q1\u00a0,,ndcg,10,0.5\n"A ", q2 ,,ndcg,10,0.25\n'
                                     '\tB,"\u3000q3\x0b",,ndcg,10,1\n', encoding="utf-8")
    table = read_per_query_csv(tmp_path / "pq.csv")
    assert table["run"].tolist() == ["A", "A", "B"]
    assert table["query_id"].tolist() == ["q1\u00a0", "q2", "\u3000q3"]
    # the same query ids as the same qrels read as TREC (fields split by ASCII white space only)
    (tmp_path / "qrels.txt").write_text("q1\u00a0 0 d 1\nq2 0 d 1\n\u3000q3 0 d 1\n", encoding="utf-8")
    assert sorted(load_qrels(tmp_path / "qrels.txt").query_ids.tolist()) == sorted(table["query_id"].tolist())


@pytest.mark.parametrize("cell, column", [('" "', "run"), ('"\t"', "query_id")])
def test_a_run_name_or_query_id_of_ascii_white_space_only_is_empty(tmp_path, cell, column) -> None:
    row = f"{cell},q2,,ndcg,10,1\n" if column == "run" else f"A,{cell},,ndcg,10,1\n"
    (tmp_path / "pq.csv").write_text(HEAD + "A,q1,,ndcg,10,1\n" + row, encoding="utf-8")
    with pytest.raises(InputFormatError) as info:
        read_per_query_csv(tmp_path / "pq.csv")
    assert str(info.value) == f"{tmp_path / 'pq.csv'}, line 3: empty {column}"


def test_compare_per_query_takes_a_run_name_written_with_blanks_as_the_run(tmp_path, capsys) -> None:
    rows = "".join(f"{run},q{i},,ndcg,10,{v}\n" for i in range(6) for run, v in ((" A ", i / 10), ("B", i / 7)))
    (tmp_path / "pq.csv").write_text(HEAD + rows, encoding="utf-8")
    assert main(["compare", "--per-query", str(tmp_path / "pq.csv"), "--metric", "ndcg@10", "--baseline", "A",
                 "--test", "t"]) == 0, capsys.readouterr().err


def _evaluation(run_name: str, query: str):
    return evaluate(Qrels.from_records([query, "q2"], ["d", "d"], [1, 1]),
                    Run.from_records([query, "q2"], ["d", "d"], [1.0, 1.0], name=run_name), metrics=["P"], k=[1])


@pytest.mark.parametrize("run_name, query, what, bad", [(" A", "q1", "run name", " A"), ("A", "q1 ", "query id", "q1 "),
                                                       ("A", " ", "query id", " ")])
def test_the_per_query_writers_refuse_what_would_not_read_back_and_write_nothing(tmp_path, run_name, query, what,
                                                                                 bad) -> None:
    ev = _evaluation(run_name, query)
    message = f"{what} {bad!r} is empty or has surrounding ASCII white space and would not read back"
    with pytest.raises(InputFormatError) as info:
        write_per_query_csv(ev, tmp_path / "pq.csv")
    assert str(info.value) == f"{tmp_path / 'pq.csv'}: {message}"
    with pytest.raises(InputFormatError) as info:
        write_outputs(ev, tmp_path / "out")
    assert str(info.value) == f"{tmp_path / 'out' / 'per_query.csv'}: {message}"
    assert not (tmp_path / "pq.csv").exists() and not (tmp_path / "out").exists()


def test_a_unicode_space_of_a_run_name_or_query_id_is_written_and_read_back(tmp_path) -> None:
    ev = _evaluation("A\u00a0", "\u3000q1")
    write_per_query_csv(ev, tmp_path / "pq.csv")
    table = read_per_query_csv(tmp_path / "pq.csv")
    assert set(table["run"]) == {"A\u00a0"} and set(table["query_id"]) == {"\u3000q1", "q2"}

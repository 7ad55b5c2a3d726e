"""BEIR qrels (``query-id<TAB>corpus-id<TAB>score``) read ids by the rule of every id reader: ASCII white space around
an id is stripped (the tab separates the fields), a non-breaking or another Unicode space is part of it; and
``write_beir_qrels`` refuses what would not read back.

Before, ``read_beir_qrels`` kept the spaces of a cell: `` q1 `` of a BEIR file was another query than ``q1`` of the
same judgments read as TREC, CSV, Parquet or JSON (and than the query ids of ``queries.jsonl``, stripped).
"""

from __future__ import annotations

import pytest

from evalcore import Qrels
from evalcore.errors import DuplicateIdError, InputFormatError
from evalcore.io import load_qrels, write_beir_qrels

HEAD = "query-id\tcorpus-id\tscore\n"


def test_beir_qrels_give_the_ids_the_same_trec_qrels_give(tmp_path) -> None:
    (tmp_path / "qrels.tsv").write_text(HEAD + " q1 \td1\u00a0 \t1\nq1\t\x0b\u3000d2\t2\r\n q2\td3\x0c\t1\n",
                                        encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("q1 0 d1\u00a0 1\nq1 0 \u3000d2 2\nq2 0 d3 1\n", encoding="utf-8")
    want = {"q1": {"d1\u00a0": 1, "\u3000d2": 2}, "q2": {"d3": 1}}
    assert load_qrels(tmp_path / "qrels.tsv").to_dict() == want
    assert load_qrels(tmp_path / "qrels.txt").to_dict() == want


def test_two_pairs_the_same_once_stripped_are_one_pair_listed_twice(tmp_path) -> None:
    (tmp_path / "qrels.tsv").write_text(HEAD + "q1\td1\t1\n q1\td1 \t2\n", encoding="utf-8")
    with pytest.raises(DuplicateIdError) as info:
        load_qrels(tmp_path / "qrels.tsv")
    assert str(info.value).startswith(f"{tmp_path / 'qrels.tsv'}, line 3: document 'd1' is listed twice"), info.value


@pytest.mark.parametrize("query, doc, what, bad", [("q1", " d1", "document id", " d1"),
                                                   ("q1 ", "d1", "query id", "q1 ")])
def test_write_beir_qrels_refuses_an_id_that_would_not_read_back_and_writes_nothing(tmp_path, query, doc, what,
                                                                                    bad) -> None:
    with pytest.raises(InputFormatError) as info:
        write_beir_qrels(Qrels.from_records([query], [doc], [1]), tmp_path / "qrels.tsv")
    assert str(info.value) == (f"{tmp_path / 'qrels.tsv'}: {what} {bad!r} is empty or has surrounding ASCII white "
                               "space and would not read back")
    assert not (tmp_path / "qrels.tsv").exists()
    write_beir_qrels(Qrels.from_records(["q1\u00a0"], ["\u3000d1"], [1]), tmp_path / "qrels.tsv")
    assert load_qrels(tmp_path / "qrels.tsv").to_dict() == {"q1\u00a0": {"\u3000d1": 1}}

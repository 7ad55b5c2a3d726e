"""The JSON writers write only what the JSON readers read back: those readers strip ASCII white space around an id (the
rule of every id reader), so an id empty or with ASCII white space around it is refused before anything is written,
naming the file; a non-breaking or another Unicode space is written as it is.

Before, ``write_run_json``, ``write_qrels_json`` (both forms) and ``write_ordered_lists`` wrote `` d1``, which read
back as ``d1``: a run exported as JSON and read again judged other documents.
"""

from __future__ import annotations

import pytest

from evalcore import Qrels, Run
from evalcore.errors import InputFormatError
from evalcore.io import load_qrels, load_run, write_ordered_lists, write_qrels_json, write_run_json


def _writers():
    return {"run json": lambda q, d, p: write_run_json(Run.from_records(q, d, [1.0] * len(q), name="r"), p),
            "qrels json": lambda q, d, p: write_qrels_json(Qrels.from_records(q, d, [1] * len(q)), p),
            "graded json": lambda q, d, p: write_qrels_json(Qrels.from_records(q, d, [1] * len(q)), p, form="graded"),
            "ordered lists": lambda q, d, p: write_ordered_lists(Qrels.from_records(q, d, [1] * len(q)), p)}


@pytest.mark.parametrize("writer", list(_writers()))
@pytest.mark.parametrize("query, doc, what, bad", [("q1", " q2", "document id", " q2"),
                                                   ("q1 ", "q2", "query id", "q1 "),
                                                   ("q1", "q2 ", "document id", "q2 ")])
def test_json_writers_refuse_an_id_that_would_not_read_back_and_write_nothing(tmp_path, writer, query, doc, what,
                                                                              bad) -> None:
    path = tmp_path / "x.json"
    with pytest.raises(InputFormatError) as info:
        _writers()[writer]([query, "q2"], [doc, "q1"], path)
    assert str(info.value) == (f"{path}: {what} {bad!r} is empty or has surrounding ASCII white space and would not "
                               "read back"), str(info.value)
    assert not path.exists()


@pytest.mark.parametrize("writer", list(_writers()))
def test_json_writers_write_a_unicode_space_of_an_id_that_reads_back(tmp_path, writer) -> None:
    path = tmp_path / "x.json"
    _writers()[writer](["q1\u00a0", "\u3000q2"], ["\u3000q2", "q1\u00a0"], path)
    back = load_run(path) if writer == "run json" else load_qrels(path)
    assert sorted(back.query_ids.tolist()) == ["q1\u00a0", "\u3000q2"]

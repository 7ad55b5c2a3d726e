"""One rule for the ids of an id file, whichever reader takes it: only ASCII white space separates or pads an id
(what separates the fields of a TREC line); a non-breaking space or another Unicode space is part of the id.

Before, the lenient embedding-ids reader ``read_ids`` (the ids beside a ``.npy``) and the id column of an
embedding CSV stripped every Unicode space (``str.strip()``), so ``d1\\xa0`` was read as ``d1`` there but kept
as is by ``read_token_ids`` and the TREC readers: the same ids gave different documents by path; and
``read_ids`` split a line at U+2028 / U+0085 (``str.splitlines``) where the others refuse the id.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import InputFormatError
from evalcore.io import (
    load_domains,
    load_embeddings,
    load_qrels,
    load_queries,
    load_run,
    read_ids,
    read_token_ids,
)

IDS = ["d1\u00a0", "\u00a0d2", "d\u30003", "d4\u2007"]  # NBSP at either end, ideographic and figure spaces


@pytest.mark.parametrize("ids", [IDS, [f"x{d}" for d in IDS]])
def test_every_id_reader_keeps_a_unicode_space_of_an_id(tmp_path, ids) -> None:
    path = tmp_path / "ids.txt"
    path.write_text("".join(f"{d}\n" for d in ids), encoding="utf-8")
    assert read_ids(path).tolist() == ids
    assert read_token_ids(path).tolist() == ids
    run = tmp_path / "run.trec"
    run.write_text("".join(f"q1 Q0 {d} {i + 1} {9 - i} tag\n" for i, d in enumerate(ids)), encoding="utf-8")
    assert sorted(map(str, load_run(run).doc_ids)) == sorted(ids)
    np.save(tmp_path / "e.npy", np.eye(len(ids), dtype=np.float32))
    (tmp_path / "e_ids.txt").write_text("".join(f"{d}\n" for d in ids), encoding="utf-8")
    assert load_embeddings(tmp_path / "e.npy", mmap=False).ids.tolist() == ids
    frame = pd.DataFrame(np.eye(len(ids)), columns=[f"c{j}" for j in range(len(ids))])
    frame.insert(0, "id", ids)
    frame.to_csv(tmp_path / "e.csv", index=False)
    assert load_embeddings(tmp_path / "e.csv").ids.tolist() == ids


def test_ascii_white_space_around_an_id_is_still_stripped_by_the_lenient_readers(tmp_path) -> None:
    (tmp_path / "ids.txt").write_bytes(b" d1\t\r\n\x0bd2 \n\n")
    assert read_ids(tmp_path / "ids.txt").tolist() == ["d1", "d2"]
    (tmp_path / "e.csv").write_text('id,a,b\n" d1 ",1,0\nd2\t,0,1\n', encoding="utf-8")
    assert load_embeddings(tmp_path / "e.csv").ids.tolist() == ["d1", "d2"]


@pytest.mark.parametrize("sep", ["\u2028", "\u0085"])
def test_a_line_separator_inside_an_id_is_refused_by_both_id_readers(tmp_path, sep) -> None:
    (tmp_path / "ids.txt").write_text(f"a\nb{sep}c\n", encoding="utf-8")
    for read in (read_ids, read_token_ids):
        with pytest.raises(InputFormatError, match="ids.txt, line 2"):
            read(tmp_path / "ids.txt")


def test_a_query_texts_file_keeps_a_unicode_space_of_a_query_id(tmp_path) -> None:
    """Query texts (BEIR ``queries.jsonl``, ``id<TAB>text``) are matched to the ground truth's query ids: a query
    id ``q1\\xa0`` of a TREC qrels stays ``q1\\xa0`` there too (before: stripped to ``q1``, another query)."""
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1\\u00a0", "text": "a"}\n{"_id": " q2 ", "text": "b"}\n',
                                           encoding="utf-8")
    (tmp_path / "queries.tsv").write_text("q1\u00a0\ta\n q2 \tb\n", encoding="utf-8")
    for name in ("queries.jsonl", "queries.tsv"):
        assert sorted(load_queries(tmp_path / name)) == ["q1\u00a0", "q2"]


def test_json_domain_mappings_ground_truths_and_ordered_lists_keep_a_unicode_space_of_an_id(tmp_path) -> None:
    """The JSON readers of evalcore/io/side.py and lists.py stripped ids with ``str.strip()``: a domain mapping for
    query ``q1\\xa0`` was attached to ``q1`` (another query); a domain's name is free text, still stripped."""
    import json

    files = {"map.json": {"q1\u00a0": " Food ", " q2 ": "Art"},
             "recs.json": [{"query_id": "q1\u00a0", "domain": "Food"}, {"query_id": "\tq2 ", "domain": " Art"}]}
    for name, doc in files.items():
        (tmp_path / name).write_text(json.dumps(doc), encoding="utf-8")
        assert load_domains(tmp_path / name) == {"q1\u00a0": "Food", "q2": "Art"}, name
    graded = [{"query": "q1\u00a0", "relevance_judgments": {"d1\u00a0": 2}, "domain": " Food "},
              {"query": " q2 ", "relevance_judgments": {" d2": 1}}]
    (tmp_path / "graded.json").write_text(json.dumps(graded), encoding="utf-8")
    frame = load_qrels(tmp_path / "graded.json").to_frame()
    assert sorted(zip(frame["query_id"], frame["doc_id"], frame["domain"], strict=True)) == [
        ("q1\u00a0", "d1\u00a0", "Food"), ("q2", "d2", "")]
    lists = [{"id": "q1\u00a0", "similar": ["q2 "]}, {"id": " q2", "similar": ["q1\u00a0"]}]
    (tmp_path / "lists.json").write_text(json.dumps(lists), encoding="utf-8")
    frame = load_qrels(tmp_path / "lists.json").to_frame()
    assert sorted(zip(frame["query_id"], frame["doc_id"], strict=True)) == [("q1\u00a0", "q2"), ("q2", "q1\u00a0")]

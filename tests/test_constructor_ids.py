"""The data model's in-memory constructors refuse ids holding a control character, as every reader does.

An id with a tab, a line break, NUL... (any C0 or C1 control, DEL, U+2028 / U+2029) passed to
``Run.from_records`` & co. was accepted, and broke a TREC line or a dashboard label later; every file
reader and the workspace already refused it. Each public constructor of ``Qrels``, ``Run`` and
``Embeddings`` now refuses it with the readers' rule and words (``evalcore._checks``, re-exported by
``evalcore.io.source``), naming the id (its ``repr``) and the argument and record holding it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import evalcore._checks as checks
import evalcore.io.source as source
from evalcore import Qrels, Run
from evalcore._columns import factorize_strings
from evalcore.errors import InputFormatError
from evalcore.fusion import fuse
from evalcore.io import Embeddings

#: What the readers refuse (tests/test_reader_ids.py), one of each kind: C0, DEL, C1, the Unicode separators.
BROKEN = ["\n", "\r", "\t", "\x00", "\x1f", "\x7f", "\x85", "\x9f", "\u2028", "\u2029"]
#: What they take: space, no-break space, zero-width space, non-ASCII, an empty-looking id.
LEGAL = [" ", "\xa0", "\u200b", "é", "日", "😀"]


def refused(build, what: str, bad: str, where: str) -> str:
    """The refusal of ``build()``: one line, naming ``what``, the id's ``repr``, ``where`` and the code point."""
    with pytest.raises(InputFormatError) as info:
        build()
    text = str(info.value)
    code = f"U+{ord(next(c for c in bad if checks._ID_BREAKING.match(c))):04X}"
    assert re.match(rf"(.*: )?{re.escape(what)} {re.escape(repr(bad))}{re.escape(where)} holds a control "
                    rf"character \({re.escape(code)}", text), text
    assert "\n" not in text
    return text


@pytest.mark.parametrize("c", BROKEN)
def test_run_constructors_refuse_a_control_character(c: str) -> None:
    q, d = f"q{c}1", f"d{c}2"
    refused(lambda: Run.from_records(["q0", "q0", q, q], ["a", "b", "a", "b"], [1, 2, 3, 4]), "query id", q,
            " (query_ids[2])")
    refused(lambda: Run.from_records(np.array(["q0", "q0", "q1"], dtype=object), ["a", d, d], [1, 2, 3]),
            "document id", d, " (doc_ids[1])")
    refused(lambda: Run.from_records(["q0"], ["a"], [1.0], name=f"bm25{c}"), "run name", f"bm25{c}", "")
    refused(lambda: Run.from_dict({"q0": {"a": 1.0}, q: {"a": 1.0}}), "query id", q, " (a key of the mapping)")
    refused(lambda: Run.from_dict({"q0": {"a": 1.0, d: 2.0}}), "document id", d, " (listed under query 'q0')")
    refused(lambda: Run.from_ranked_lists({"q0": ["a", "b"], "q1": ["a", d]}), "document id", d,
            " (listed under query 'q1')")
    vocab = np.array(["a", "b", d], dtype=object)
    refused(lambda: Run.from_codes(np.array(["q0"], dtype=object), np.zeros(2, np.int64), vocab,
                                   np.array([0, 1]), np.array([1.0, 2.0])), "document id", d, " (doc_vocab[2])")
    refused(lambda: Run.from_codes(np.array(["q0", q], dtype=object), np.array([0, 1]), vocab[:2], np.array([0, 1]),
                                   np.array([1.0, 2.0])), "query id", q, " (query_ids[1])")
    docs = pa.chunked_array([["a", "b"], ["é", d]])  # the arrow data scanned in place, chunk by chunk
    refused(lambda: Run.from_arrow_docs(np.array(["q0", "q1"], dtype=object), np.array([0, 0, 1, 1]), docs,
                                        np.ones(4)), "document id", d, " (docs[3])")
    run = Run.from_dict({"q0": {"a": 1.0}}, name="ok")
    refused(lambda: run.renamed(f"x{c}"), "run name", f"x{c}", "")
    refused(lambda: fuse({"a": run, f"b{c}": run.renamed("b")}), "run name", f"b{c}", "")  # a name given by key
    refused(lambda: fuse([run, run.renamed("b")], name=f"fused{c}"), "run name", f"fused{c}", "")


@pytest.mark.parametrize("c", BROKEN)
def test_qrels_constructors_refuse_a_control_character(c: str) -> None:
    q, d = f"q{c}", f"d{c}"
    refused(lambda: Qrels.from_records(["q0", q, q], ["a", "a", "b"], [1, 1, 0]), "query id", q, " (query_ids[1])")
    refused(lambda: Qrels.from_records(["q0", "q0"], ["a", d], [1, 2]), "document id", d, " (doc_ids[1])")
    refused(lambda: Qrels.from_records(["q0"], ["a"], [1], extra_queries=["q1", q]), "query id", q,
            " (extra_queries[1])")
    refused(lambda: Qrels.from_records(["q0"], ["a"], [1], domains={"q0": f"news{c}"}), "domain", f"news{c}",
            " (the domain of query 'q0')")
    refused(lambda: Qrels.from_dict({"q0": {"a": 1}, q: {}}), "query id", q, " (a key of the mapping)")
    refused(lambda: Qrels.from_dict({"q0": {"a": 1, d: 1}}), "document id", d, " (listed under query 'q0')")
    frame = pd.DataFrame({"qid": ["q0", "q1", q], "doc": ["a", "b", "c"], "rel": [1, 0, 1]})
    refused(lambda: Qrels.from_frame(frame, query="qid", doc="doc", grade="rel"), "query id", q,
            " (column 'qid', row 2, counted from 0)")
    refused(lambda: Qrels.from_arrow_docs(np.array(["q0"], dtype=object), np.zeros(2, np.int64), pa.array(["a", d]),
                                          np.ones(2, np.int64)), "document id", d, " (docs[1])")
    qrels = Qrels.from_dict({"q0": {"a": 1}})
    refused(lambda: qrels.with_domains({"q0": f"x{c}"}), "domain", f"x{c}", " (the domain of query 'q0')")


@pytest.mark.parametrize("c", BROKEN)
def test_embeddings_constructors_refuse_a_control_character(c: str) -> None:
    vecs = np.eye(3, dtype=np.float32)
    bad = f"c{c}x"  # (inside: numpy's fixed-width strings drop a trailing NUL)
    for ids in (["a", "b", bad], np.array(["a", "b", bad]), np.array(["a", "b", bad], dtype=object)):
        refused(lambda ids=ids: Embeddings.from_arrays(ids, vecs), "id", bad, " (ids[2])")
    refused(lambda: Embeddings.from_dict({"a": [1.0, 0.0], f"b{c}": [0.0, 1.0]}), "id", f"b{c}",
            " (a key of the mapping)")


def test_the_first_refused_record_is_named_and_the_distinct_ids_are_what_is_scanned() -> None:
    # the first record holding a refused id, whichever id comes first in the distinct ones
    text = refused(lambda: Run.from_records(["q0", "q\t1", "q\n2", "q\t1"], ["a"] * 4, [1, 2, 3, 4]), "query id",
                   "q\t1", " (query_ids[1])")
    assert "U+0009, a tab" in text
    scanned: list[int] = []
    real = checks.first_broken_id

    def counted(ids, *args, **kw):
        scanned.append(len(ids))
        return real(ids, *args, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checks, "first_broken_id", counted)
        Run.from_records(["q0"] * 500 + ["q1"] * 500, [f"d{i % 500}" for i in range(1000)], np.ones(1000))
    assert sorted(scanned) == [1, 2, 500]  # the name, 2 distinct queries, 500 distinct documents: not 1,000 rows


@pytest.mark.parametrize("c", LEGAL)
def test_other_characters_stay_accepted(c: str) -> None:
    run = Run.from_records([f"q{c}"], [f"d{c}"], [1.0], name=f"r{c}")
    assert run.query_ids.tolist() == [f"q{c}"] and run.doc_ids.tolist() == [f"d{c}"] and run.name == f"r{c}"
    assert Qrels.from_dict({f"q{c}": {f"d{c}": 1}}, domains={f"q{c}": f"x{c}"}).domains.tolist() == [f"x{c}"]
    assert Embeddings.from_arrays([f"e{c}"], np.ones((1, 2))).ids.tolist() == [f"e{c}"]


def test_the_readers_rule_is_the_one_rule() -> None:
    """The rule is defined once, in the data model's checks (layer 1, which may not import evalcore.io); the readers'
    module re-exports it under its old names."""
    for name in ("first_broken_id", "broken_id_text", "refuse_broken_ids", "LINE_BREAKS", "_ID_BREAKING"):
        assert getattr(source, name) is getattr(checks, name)
    refused_by_reader = {cp for cp in range(0x3000) if source.first_broken_id([chr(cp)]) is not None}
    assert refused_by_reader == set(range(0x20)) | set(range(0x7F, 0xA0)) | {0x2028, 0x2029}
    for cp in sorted(refused_by_reader):
        with pytest.raises(InputFormatError):
            Run.from_records(["q"], [f"d{chr(cp)}"], [1.0])


def test_check_ids_false_is_for_ids_checked_already() -> None:
    """The readers check every id first (naming the file's line) and skip the constructors' second scan."""
    (qc, qu), (dc, du) = factorize_strings(["q0", "q0"]), factorize_strings(["a", "b\t"])
    run = Run.from_codes(qu, qc, du, dc, np.array([1.0, 2.0]), check_ids=False)
    assert run.doc_ids.tolist() == ["a", "b\t"]
    with pytest.raises(InputFormatError, match="run name"):  # the name is always checked
        Run.from_codes(qu, qc, du, dc, np.array([1.0, 2.0]), name="r\n", check_ids=False)

"""Whatever a TREC reader accepts, the TREC writers write, and the reader reads back identically.

The readers separate a TREC line's fields by ASCII white space only, as trec_eval does (C's ``isspace``): an id
holding a non-breaking space, U+2003 or U+3000 is read as it is (``tests/test_io_trec_fields.py``). The writers
refused such ids ("contains white space"): a user who loaded such a run could not export a fusion of it, nor write
its qrels back. Now they write them as they are, with one warning naming the first such id (a Python tool that
splits lines with ``str.split()`` would cut it in two).
"""

from __future__ import annotations

import io
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.cli import main
from evalcore.errors import EvalcoreWarning, InputFormatError
from evalcore.io import (
    load_qrels,
    load_run,
    read_trec_qrels,
    read_trec_run,
    write_trec_qrels,
    write_trec_run,
)
from evalcore.io.trec import write_trec_topk
from evalcore.retrieval import exact_topk

#: White space the readers keep inside a field (Unicode's Zs but the ASCII space), which Python's ``str.split()`` splits on
UNICODE_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
#: A field's characters: Unicode spaces often, other text (no control character, line separator or surrogate: the
#: id check refuses them; no ASCII white space: it separates the fields)
_CHAR = st.one_of(st.sampled_from(UNICODE_SPACES),
                  st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters=" "))
FIELD = st.text(_CHAR, min_size=1, max_size=6)


def _lines_run(rows: list[tuple[str, str, float]], tag: str) -> bytes:
    return "".join(f"{q} Q0 {d} {i + 1} {s!r} {tag}\n" for i, (q, d, s) in enumerate(rows)).encode()


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        return fn(*args, **kw)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(FIELD, FIELD, st.floats(-1e6, 1e6, allow_nan=False)), min_size=1, max_size=12,
                unique_by=lambda r: (r[0], r[1])), FIELD)
def test_a_run_the_reader_accepts_is_written_and_read_back_identically(rows, tag):
    rows = [r for r in rows if not r[0].startswith("#")]  # (a line beginning with '#' is a comment)
    if not rows:
        return
    first = _quiet(read_trec_run, _lines_run(rows, tag))
    out = io.StringIO()
    _quiet(write_trec_run, first, out)
    again = _quiet(read_trec_run, out.getvalue().encode())
    assert again.to_dict() == first.to_dict()
    assert again.name == first.name == tag
    assert sorted(again.query_ids.tolist()) == sorted(first.query_ids.tolist())


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(FIELD, FIELD, st.integers(0, 4)), min_size=1, max_size=12, unique_by=lambda r: (r[0], r[1])))
def test_qrels_the_reader_accepts_are_written_and_read_back_identically(rows):
    rows = [r for r in rows if not r[0].startswith("#")]
    if not rows:
        return
    first = _quiet(read_trec_qrels, "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows).encode())
    out = io.StringIO()
    _quiet(write_trec_qrels, first, out)
    again = _quiet(read_trec_qrels, out.getvalue().encode())
    assert again.to_dict() == first.to_dict()


def test_one_warning_names_the_first_such_id_and_why(tmp_path):
    run = read_trec_run(_lines_run([("q1", "d\u00a01", 2.0), ("q1", "d\u30002", 1.0), ("q\u20032", "d3", 1.0)], "t"))
    with pytest.warns(EvalcoreWarning) as caught:
        write_trec_run(run, tmp_path / "r.trec")
    said = [str(w.message) for w in caught if issubclass(w.category, EvalcoreWarning)]
    assert len(said) == 1, said
    assert said[0].startswith(f"{tmp_path / 'r.trec'}: query id 'q\\u20032' holds white space other than ASCII's "
                              "(U+2003)"), said
    assert "str.split()" in said[0] and "trec_eval" in said[0] and "\n" not in said[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalcoreWarning)  # plain ids: no warning
        write_trec_run(read_trec_run(_lines_run([("q1", "d1", 1.0)], "t")), tmp_path / "plain.trec")


def test_ascii_white_space_and_empty_ids_are_still_refused(tmp_path):
    from evalcore import Qrels, Run

    for bad in ("d 1", ""):
        with pytest.raises(InputFormatError, match="ASCII white space"):
            write_trec_run(Run.from_records(["q1"], [bad], [1.0]), tmp_path / "x.trec")
        with pytest.raises(InputFormatError, match="ASCII white space"):
            write_trec_qrels(Qrels.from_records(["q1"], [bad], [1]), tmp_path / "x.txt")
    assert not (tmp_path / "x.trec").exists() and not (tmp_path / "x.txt").exists()


def test_top_k_with_such_ids_is_written_and_read_back(tmp_path):
    rng = np.random.default_rng(0)
    ids = np.array(["a\u00a01", "b\u30002", "c3", "d\u20074"])
    topk = exact_topk(rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), 2, corpus_ids=ids, query_ids=ids)
    with pytest.warns(EvalcoreWarning, match=re.escape("query id 'a\\xa01'")):
        write_trec_topk(topk, tmp_path / "t.trec", tag="near\u00a0est")
    back = load_run(tmp_path / "t.trec")
    assert sorted(back.query_ids.tolist()) == sorted(ids.tolist()) and back.name == "near\u00a0est"
    assert set(back.doc_vocab.tolist()) <= set(ids.tolist())


def test_a_fusion_of_runs_loaded_with_such_ids_is_exported(tmp_path, capsys):
    """The user path that failed: fuse two runs read with a non-breaking space in their ids, write the fusion."""
    for name, scores in (("a", (3.0, 2.0, 1.0)), ("b", (1.0, 3.0, 2.0))):
        (tmp_path / f"{name}.trec").write_bytes(_lines_run(
            [(q, d, s) for q in ("q\u00a01", "q2") for d, s in zip(("d\u00a01", "d2", "d\u30003"), scores,
                                                                    strict=True)], name))
    (tmp_path / "qrels.txt").write_text("q\u00a01 0 d\u00a01 1\nq2 0 d2 1\n", encoding="utf-8")
    out = tmp_path / "fused.trec"
    assert main(["fuse", "--run", f"a={tmp_path / 'a.trec'}", "--run", f"b={tmp_path / 'b.trec'}", "--out",
                 str(out)]) == 0
    assert "U+00A0" in capsys.readouterr().err
    fused = load_run(out)
    assert sorted(fused.query_ids.tolist()) == ["q2", "q\u00a01"]
    assert sorted(fused.doc_vocab.tolist()) == sorted(["d\u00a01", "d2", "d\u30003"])
    qrels = load_qrels(tmp_path / "qrels.txt")
    _quiet(write_trec_qrels, qrels, tmp_path / "q2.txt")
    assert load_qrels(tmp_path / "q2.txt").to_dict() == qrels.to_dict()

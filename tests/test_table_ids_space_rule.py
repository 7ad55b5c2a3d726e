"""The long tables (CSV/TSV/Parquet) read ids by the rule of every other id reader: only ASCII white space is
stripped around an id; a non-breaking space or another Unicode space is part of it, as trec_eval and the TREC,
ids-file, JSON and query-text readers keep it (``tests/test_ids_space_rule.py``).

Before, ``evalcore/io/tables.py`` trimmed cells with ``pyarrow.compute.utf8_trim_whitespace`` / ``str.strip()``
(Unicode white space): the same qrels gave ``d1\\xa0`` read as TREC and ``d1`` read as CSV, a run written as TREC and
read back as CSV/Parquet changed ids, and the CSV writers refused such ids ("surrounding white space").
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_reader_ids import _expected, _roundtrips, _trec_legal

from evalcore import Qrels, Run
from evalcore.errors import EvalcoreWarning, InputFormatError
from evalcore.io import (
    load_doc_metadata,
    load_domains,
    load_qrels,
    load_queries,
    load_run,
    write_qrels_csv,
    write_qrels_parquet,
    write_run_csv,
    write_run_parquet,
    write_trec_qrels,
    write_trec_run,
)

#: Unicode white space other than ASCII's (Zs but the space, and U+0085's neighbours aside: refused as controls)
UNICODE_SPACES = "\u00a0\u1680\u2000\u2003\u2007\u2009\u202f\u205f\u3000"
IDS = ["d1\u00a0", "\u00a0d2", "d\u30003", "d4\u2007", "\u2003x\u2003"]
_CHAR = st.one_of(st.sampled_from(UNICODE_SPACES),
                  st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Zs")))
#: An id with Unicode spaces often at its ends; no ASCII white space (a TREC field), no control character
ID = st.text(_CHAR, min_size=1, max_size=6).filter(lambda s: not s.startswith("#"))


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():  # (the TREC writers' warning on such ids: tested in test_trec_unicode_spaces)
        warnings.simplefilter("ignore", EvalcoreWarning)
        return fn(*args, **kw)


def _run_written(run: Run, path: Path) -> Run:
    {".trec": lambda: _quiet(write_trec_run, run, path), ".csv": lambda: write_run_csv(run, path),
     ".tsv": lambda: write_run_csv(run, path, sep="\t"), ".parquet": lambda: write_run_parquet(run, path)}[path.suffix]()
    return load_run(path, name=run.name)


def _qrels_written(qrels: Qrels, path: Path) -> Qrels:
    {".trec": lambda: _quiet(write_trec_qrels, qrels, path), ".csv": lambda: write_qrels_csv(qrels, path),
     ".tsv": lambda: write_qrels_csv(qrels, path, sep="\t"),
     ".parquet": lambda: write_qrels_parquet(qrels, path)}[path.suffix]()
    return load_qrels(path)


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(ID, ID, st.integers(0, 3)), min_size=1, max_size=8, unique_by=lambda r: (r[0], r[1])))
def test_ids_with_unicode_spaces_read_back_the_same_through_every_table_and_trec_path(tmp_path_factory, rows) -> None:
    """Read as TREC, then written and read back through TREC, CSV, TSV and Parquet in turn (each path's output the
    next one's input): the very same run and qrels, ids included."""
    tmp = tmp_path_factory.mktemp("rt")
    text = "".join(f"{q} Q0 {d} {i + 1} {9 - i} tag\n" for i, (q, d, _) in enumerate(rows))
    run = load_run(io.BytesIO(text.encode()), name="r")
    qrels = load_qrels(io.BytesIO("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows).encode()))
    assert sorted(run.doc_vocab.tolist()) == sorted({d for _, d, _ in rows})  # (as trec_eval reads them)
    for suffix in (".csv", ".trec", ".parquet", ".tsv", ".parquet", ".trec", ".csv"):
        again = _run_written(run, tmp / f"r{suffix}")
        assert again.to_dict() == run.to_dict(), suffix
        back = _qrels_written(qrels, tmp / f"q{suffix}")
        assert back.to_dict() == qrels.to_dict(), suffix
        run, qrels = again, back


def test_every_writer_and_reader_keeps_unicode_spaces_at_the_ends_of_ids(tmp_path) -> None:
    """The round trip of every writer (``tests/test_reader_ids.py``) with ids edged by Unicode spaces (there they
    are filtered out: the table readers stripped them)."""
    for name, roundtrip, trec in _roundtrips(tmp_path):
        use = _trec_legal(IDS) if trec else IDS
        if name in ("csv qrels", "parquet qrels", "graded json"):
            continue  # (their domains 'dom <id>' are labels, stripped as such; the ids: the next test)
        assert _quiet(roundtrip, use) == _expected(name, use), name


def _qrels_files(tmp_path: Path, rows: list[tuple[str, str, int]]) -> dict[str, Path]:
    files = {"qrels.trec": "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows),
             "qrels.csv": "query_id,doc_id,relevance\n" + "".join(f"{q},{d},{g}\n" for q, d, g in rows),
             # a quoted cell: the csv module's exact path, not arrow's fast one
             "quoted.csv": 'query_id,doc_id,relevance\n' + "".join(f'"{q}", {d} ,{g}\n' for q, d, g in rows),
             "qrels.tsv": "query_id\tdoc_id\trelevance\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in rows)}
    out = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        out[name] = tmp_path / name
    pq.write_table(pa.table({"query_id": [f" {q}\t" for q, _, _ in rows], "doc_id": [d for _, d, _ in rows],
                             "relevance": [g for _, _, g in rows]}), tmp_path / "qrels.parquet")
    out["qrels.parquet"] = tmp_path / "qrels.parquet"
    return out


def test_the_same_qrels_give_the_same_ids_read_as_trec_csv_tsv_or_parquet(tmp_path) -> None:
    rows = [("q1\u00a0", "d1\u00a0", 1), ("q1\u00a0", "\u3000d2", 2), ("q2", "d\u20073", 1)]
    want = {"q1\u00a0": {"d1\u00a0": 1, "\u3000d2": 2}, "q2": {"d\u20073": 1}}
    for name, path in _qrels_files(tmp_path, rows).items():
        assert load_qrels(path).to_dict() == want, name


def test_ascii_white_space_around_an_id_is_still_stripped_by_every_table_path(tmp_path) -> None:
    (tmp_path / "r.csv").write_text("query_id,doc_id,score\n q1\t,\x0bd1\x0c,1\n", encoding="utf-8")
    (tmp_path / "q.csv").write_text('query_id,doc_id,relevance\n" q1\t", d1 ,1\n', encoding="utf-8")
    pq.write_table(pa.table({"qid": [" q1\x0c"], "docid": ["\td1\n"], "score": [1.0]}), tmp_path / "r.parquet")
    assert load_run(tmp_path / "r.csv").to_dict() == {"q1": {"d1": 1.0}}
    assert load_qrels(tmp_path / "q.csv").to_dict() == {"q1": {"d1": 1}}
    assert load_run(tmp_path / "r.parquet").to_dict() == {"q1": {"d1": 1.0}}


def test_domain_mappings_metadata_and_query_texts_as_tables_keep_a_unicode_space_of_an_id(tmp_path) -> None:
    """The side files' id columns (a domain mapping's query, metadata's document, query texts' query) follow the
    same rule, in CSV (fast and exact paths), a header-less mapping's first row, and Parquet; a domain's name and
    a text are free text (a domain still stripped as a label)."""
    files = {"map.csv": "query_id,domain\nq1\u00a0, Food \n\u3000q2,Art\n",
             "quoted_map.csv": 'query_id,domain\n"q1\u00a0",Food\n \u3000q2 ,"Art"\n',
             "headerless.csv": "q1\u00a0,Food\n\u3000q2,Art\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert load_domains(tmp_path / name) == {"q1\u00a0": "Food", "\u3000q2": "Art"}, name
    pq.write_table(pa.table({"query_id": ["q1\u00a0", " \u3000q2"], "domain": ["Food", "Art"]}), tmp_path / "m.parquet")
    assert load_domains(tmp_path / "m.parquet") == {"q1\u00a0": "Food", "\u3000q2": "Art"}

    (tmp_path / "meta.csv").write_text("doc_id,title,text\nd1\u00a0,A,x\n d1 ,B,y\n", encoding="utf-8")
    pq.write_table(pa.table({"doc_id": ["d1\u00a0", "\td1"], "title": ["A", "B"]}), tmp_path / "meta.parquet")
    for name in ("meta.csv", "meta.parquet"):  # (two documents, not one id given twice)
        meta = load_doc_metadata(tmp_path / name)
        assert sorted(meta.index) == ["d1", "d1\u00a0"], name
        assert meta.loc["d1\u00a0", "title"] == "A", name

    (tmp_path / "queries.csv").write_text("query_id,text\nq1\u00a0,first\n q2 ,second\n", encoding="utf-8")
    pq.write_table(pa.table({"query_id": ["q1\u00a0", " q2"], "text": ["first", "second"]}), tmp_path / "qt.parquet")
    for name in ("queries.csv", "qt.parquet"):
        assert load_queries(tmp_path / name) == {"q1\u00a0": "first", "q2": "second"}, name


def test_the_table_writers_write_unicode_spaced_ids_and_refuse_what_would_not_read_back(tmp_path) -> None:
    """The CSV writers refused ``d1\\xa0`` ("surrounding white space", though the TREC writers write it); the Parquet
    writers wrote `` d1`` (ASCII space), which the reader strips: now both take the first and refuse the second."""
    good = Run.from_records(["q1\u00a0"], ["d1\u00a0"], [1.0], name="r")
    for suffix in (".csv", ".tsv", ".parquet"):
        assert _run_written(good, tmp_path / f"ok{suffix}").to_dict() == good.to_dict(), suffix
        assert _qrels_written(Qrels.from_records(["q1\u00a0"], ["\u3000d"], [1]), tmp_path / f"okq{suffix}"
                              ).to_dict() == {"q1\u00a0": {"\u3000d": 1}}, suffix
    for bad in (" d1", "d1 ", " "):  # (the only ASCII white space an id may hold: the others are control characters)
        for suffix in (".csv", ".parquet"):
            path = tmp_path / f"bad{suffix}"
            with pytest.raises(InputFormatError, match="surrounding ASCII white space and would not read back"):
                _run_written(Run.from_records(["q1"], [bad], [1.0]), path)
            with pytest.raises(InputFormatError, match="surrounding ASCII white space and would not read back"):
                _qrels_written(Qrels.from_records([bad], ["d"], [1]), path)
            assert not path.exists(), (bad, suffix)

"""Every ground-truth and run format: reading, writing (round trips), auto-detection, overrides."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from raw_support import raw_run

from evalcore.data import Qrels, Run
from evalcore.errors import AspectError, EvalcoreError, InputFormatError, OptionError
from evalcore.io import (
    FORMAT_DESCRIPTIONS,
    QRELS_FORMATS,
    RUN_FORMATS,
    SYNONYM_GRADES,
    detect_qrels_format,
    detect_run_format,
    list_aspects,
    load_doc_metadata,
    load_domains,
    load_qrels,
    load_run,
    save_embeddings,
    write_beir_qrels,
    write_ordered_lists,
    write_qrels_csv,
    write_qrels_json,
    write_qrels_parquet,
    write_run_csv,
    write_run_json,
    write_run_parquet,
    write_trec_qrels,
    write_trec_run,
)

FIX = Path(__file__).resolve().parent / "fixtures"

# the judgments every small qrels fixture holds (q3 has no domain in qrels.csv)
QRELS_ROWS = [("q1", "d1", 2), ("q1", "d2", 1), ("q1", "d3", 0), ("q2", "d2", 3), ("q2", "d4", 1), ("q3", "d5", 1)]
RUN_ROWS = [("q1", "d1", 3.5), ("q1", "d3", 2.25), ("q1", "d9", -1.0), ("q2", "d4", 0.75), ("q2", "d2", 0.5),
            ("q3", "d7", 0.001)]
OVERALL = "5_most_similar_movies_overall_ordered"
CONTENT = "5_most_similar_movies_content_ordered"
VIBES = "5_most_similar_movies_vibes_ordered"


def rows(frame: pd.DataFrame, cols: tuple[str, ...] = ("query_id", "doc_id", "relevance")) -> list[tuple]:
    return sorted(tuple(r) for r in frame[list(cols)].itertuples(index=False, name=None))


def sorted_frame(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["query_id", "doc_id"]).reset_index(drop=True)


def assert_same_qrels(a: Qrels, b: Qrels) -> None:
    pd.testing.assert_frame_equal(sorted_frame(a.to_frame()), sorted_frame(b.to_frame()), check_dtype=False)


def assert_same_run(a: Run, b: Run) -> None:
    fa, fb = sorted_frame(a.to_frame()), sorted_frame(b.to_frame())
    pd.testing.assert_frame_equal(fa, fb, check_dtype=False, check_exact=True)


# ============================================================================ reading each format
@pytest.mark.parametrize("fixture,fmt", [
    ("qrels.trec", "trec"), ("beir_qrels.tsv", "beir"), ("qrels.csv", "csv"),
    ("qrels_synonyms.tsv", "tsv"), ("qrels.json", "json_dict"),
])
def test_read_qrels_formats(fixture, fmt):
    for f in ("auto", fmt):
        q = load_qrels(FIX / fixture, format=f)
        assert rows(q.to_frame()) == sorted(QRELS_ROWS)
        assert q.source == str(FIX / fixture)


def test_read_qrels_csv_domains():
    q = load_qrels(FIX / "qrels.csv")
    assert dict(zip(q.query_ids, q.domains, strict=True)) == {"q1": "news", "q2": "sports", "q3": ""}


def test_read_qrels_parquet(tmp_path):
    frame = pd.DataFrame(QRELS_ROWS, columns=["qid", "corpus-id", "label"])
    frame.to_parquet(tmp_path / "q.parquet")
    q = load_qrels(tmp_path / "q.parquet")
    assert rows(q.to_frame()) == sorted(QRELS_ROWS)
    # integer ids and float grades in Parquet become text ids and integer grades
    frame2 = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 11, 10], "relevance": [1.0, 2.0, 0.0]})
    frame2.to_parquet(tmp_path / "q2.parquet")
    q2 = load_qrels(tmp_path / "q2.parquet")
    assert rows(q2.to_frame()) == [("1", "10", 1), ("1", "11", 2), ("2", "10", 0)]


@pytest.mark.parametrize("fixture,fmt", [("run.trec", "trec"), ("run.csv", "csv"), ("run.json", "json_dict")])
def test_read_run_formats(fixture, fmt):
    for f in ("auto", fmt):
        r = load_run(FIX / fixture, format=f)
        assert rows(r.to_frame(), ("query_id", "doc_id", "score")) == sorted(RUN_ROWS)
    assert load_run(FIX / fixture, name="mine").name == "mine"


def test_read_run_rank_only_gives_minus_rank():
    r = load_run(FIX / "run_rank.tsv")
    assert rows(r.to_frame(), ("query_id", "doc_id", "score")) == sorted(
        [("q1", "d1", -1.0), ("q1", "d3", -2.0), ("q1", "d9", -3.0), ("q2", "d4", -1.0), ("q2", "d2", -2.0),
         ("q3", "d7", -1.0)])
    assert r.name == "run_rank"
    # the ranking order equals the rank column
    assert [d for d, _ in r.ranked_lists()["q1"]] == ["d1", "d3", "d9"]


def test_read_run_score_wins_over_rank():
    data = b"query_id,doc_id,rank,score\nq1,a,1,0.5\nq1,b,2,0.9\n"
    r = load_run(data)
    assert [d for d, _ in r.ranked_lists()["q1"]] == ["b", "a"]


def test_read_run_parquet(tmp_path):
    pd.DataFrame(RUN_ROWS, columns=["query_id", "doc_id", "score"]).to_parquet(tmp_path / "r.parquet")
    r = load_run(tmp_path / "r.parquet", name="pq")
    assert rows(r.to_frame(), ("query_id", "doc_id", "score")) == sorted(RUN_ROWS)
    assert r.name == "pq"


def test_read_run_json_ranked_lists():
    r = load_run(b'{"q1": ["d3", "d1", "d2"], "q2": ["d9"]}')
    assert [d for d, _ in r.ranked_lists()["q1"]] == ["d3", "d1", "d2"]
    assert rows(r.to_frame(), ("query_id", "doc_id", "score"))[0] == ("q1", "d1", -2.0)


def test_read_ordered_lists_grades_and_aspects():
    path = FIX / "seed001_movies.json"
    assert list_aspects(path) == [OVERALL, CONTENT, VIBES]  # 'genres' is not an aspect
    entries = json.loads(path.read_text())
    for aspect in (OVERALL, CONTENT, VIBES):
        q = load_qrels(path, aspect=aspect)
        expected = sorted((e["movie_id"], d, 5 - p) for e in entries for p, d in enumerate(e[aspect]))
        assert rows(q.to_frame()) == expected
        assert list(q.query_ids) == [e["movie_id"] for e in entries]
    # short names: a unique part of the field, any case
    assert_same_qrels(load_qrels(path, aspect="overall"), load_qrels(path, aspect=OVERALL))
    assert_same_qrels(load_qrels(path, aspect="VIBES"), load_qrels(path, aspect=VIBES))


def test_ordered_lists_grade_is_n_plus_1_minus_position():
    data = json.dumps([
        {"id": "a", "top_3": ["b", "c", "d"], "near": ["b"]},
        {"id": "b", "top_3": ["a", "c", "d"], "near": []},
        {"id": "c", "top_3": ["a", "b", "d"], "near": ["a", "b"]},
        {"id": "d", "top_3": ["a", "b", "c"], "near": ["c"]},
    ]).encode()
    near = load_qrels(data, aspect="near")
    assert rows(near.to_frame()) == [("a", "b", 1), ("c", "a", 2), ("c", "b", 1), ("d", "c", 1)]
    assert "b" in list(near.query_ids)  # the empty list is a query with no relevant document
    assert rows(load_qrels(data, aspect="top_3").to_frame())[:3] == [("a", "b", 3), ("a", "c", 2), ("a", "d", 1)]


def test_ordered_lists_jsonl():
    lines = [json.dumps({"qid": x, "ranked": [y for y in "abc" if y != x]}) for x in "abc"]
    q = load_qrels("\n".join(lines).encode())
    assert rows(q.to_frame()) == [("a", "b", 2), ("a", "c", 1), ("b", "a", 2), ("b", "c", 1), ("c", "a", 2),
                                  ("c", "b", 1)]


def test_aspect_errors_list_the_aspects():
    path = FIX / "seed001_movies.json"
    with pytest.raises(AspectError) as e:
        load_qrels(path)
    assert all(a in str(e.value) for a in (OVERALL, CONTENT, VIBES)) and "seed001_movies.json" in str(e.value)
    with pytest.raises(AspectError) as e:
        load_qrels(path, aspect="plot")
    assert "unknown aspect 'plot'" in str(e.value) and OVERALL in str(e.value)
    with pytest.raises(AspectError) as e:
        load_qrels(path, aspect="5_most")
    assert "ambiguous" in str(e.value) and VIBES in str(e.value)
    with pytest.raises(OptionError):
        load_qrels(FIX / "qrels.csv", aspect="overall")
    assert list_aspects(FIX / "qrels.csv") == []


def test_list_aspects_with_explicit_format():
    # JSONL records whose first line names no list field: detection says json_dict, the override reads them
    lines = [json.dumps({"id": x, "title": "t"}) for x in "ab"]
    lines += [json.dumps({"id": x, "near": [y for y in "ab" if y != x]}) for x in "cd"]
    data = "\n".join(lines).encode()
    assert list_aspects(data) == []
    with pytest.raises(EvalcoreError, match="'near'"):
        list_aspects(data, format="ordered_lists")  # entries a and b have no 'near' list
    good = "\n".join(json.dumps({"id": x, "near": [y for y in "ab" if y != x]}) for x in "ab").encode()
    assert list_aspects(good, format="ordered_lists", label="x.txt") == ["near"]


def test_read_graded_json_with_domains():
    q = load_qrels(FIX / "seed003_graded.json")
    assert list(q.query_ids) == ["손해배상", "진단", "프로그래밍"]
    assert list(q.domains) == ["legal", "medical", "tech"]
    d = q.to_dict()
    assert d["손해배상"] == {"배상": 3, "보상": 3, "손해": 2, "피해": 2, "사고": 1, "책임": 1}
    assert d["진단"] == {"검사": 3, "소견": 2, "병원": 1}
    assert set(q.to_frame()["domain"]) == {"legal", "medical", "tech"}


def test_read_synonym_pairs_grades_3_2_1():
    q = load_qrels(FIX / "seed003_synonyms.json")
    d = q.to_dict()
    assert d["기업"] == {"회사": 3, "법인": 3, "사업체": 3, "기업체": 2, "업체": 2, "상사": 2, "사업": 1, "경영": 1,
                       "산업": 1}
    assert list(q.domains) == ["business", "finance"]


def test_synonym_pairs_custom_grade_scheme_not_mutated():
    scheme = {"exact": 2, "partial": 1, "related": 0}
    before = dict(scheme)
    q = load_qrels(FIX / "seed003_synonyms.json", grade_scheme=scheme)
    assert q.to_dict()["투자"]["출자"] == 2 and q.to_dict()["투자"]["수익"] == 0
    assert scheme == before
    assert dict(SYNONYM_GRADES) == {"exact": 3, "partial": 2, "related": 1}
    with pytest.raises(OptionError):
        load_qrels(FIX / "seed003_synonyms.json", grade_scheme={"exact": "high"})


def test_graded_json_wrapped_and_jsonl():
    recs = [{"query": "a", "relevance_judgments": {"x": 2}, "domain": "d1"},
            {"query": "b", "relevance_judgments": {}, "domain": "d2"}]
    wrapped = load_qrels(json.dumps({"name": "set", "queries": recs}).encode())
    jsonl = load_qrels("\n".join(json.dumps(r) for r in recs).encode())
    for q in (wrapped, jsonl):
        assert list(q.query_ids) == ["a", "b"] and list(q.domains) == ["d1", "d2"]
        assert rows(q.to_frame()) == [("a", "x", 2)]


# ============================================================================ side files
def test_load_domains_csv_json_headerless_and_attach():
    assert load_domains(FIX / "domains.csv") == {"q1": "news", "q2": "sports", "q3": "science"}
    assert load_domains(b"q1\tnews\nq2\tsports\n") == {"q1": "news", "q2": "sports"}
    assert load_domains(b'{"q1": "news", "q2": "sports"}') == {"q1": "news", "q2": "sports"}
    assert load_domains(b'[{"qid": "q1", "category": "news"}]') == {"q1": "news"}
    assert load_domains(FIX / "seed003_graded.json") == {"손해배상": "legal", "진단": "medical", "프로그래밍": "tech"}
    q = load_qrels(FIX / "qrels.trec")
    doms = load_domains(FIX / "domains.csv")
    q2 = q.with_domains(doms)
    assert list(q2.domains) == ["news", "sports", "science"] and q.domains is None


def test_load_doc_metadata_formats(tmp_path):
    m = load_doc_metadata(FIX / "corpus.jsonl")
    assert list(m.index) == ["d1", "d2", "d3"] and m.index.name == "doc_id"
    assert list(m.columns[:2]) == ["title", "text"]
    assert m.loc["d2", "text"] == "The second, with a comma." and m.loc["d3", "title"] == ""
    assert json.loads(m.loc["d2", "metadata"]) == {"url": "http://x"}
    csv = load_doc_metadata(b'doc_id,title,plot\nm1,"Heat, 1995",Cops and robbers\nm2,Alien,Space\n')
    assert csv.loc["m1", "title"] == "Heat, 1995" and csv.loc["m2", "text"] == "Space"
    js = load_doc_metadata(b'{"m1": {"title": "Heat"}, "m2": "just text"}')
    assert js.loc["m1", "title"] == "Heat" and js.loc["m2", "text"] == "just text"
    pd.DataFrame({"id": ["a", "b"], "title": ["A", "B"], "year": [1999, 2001]}).to_parquet(tmp_path / "m.parquet")
    pq = load_doc_metadata(tmp_path / "m.parquet")
    assert pq.loc["b", "title"] == "B" and pq.loc["a", "year"] == 1999 and pq.loc["a", "text"] == ""


# ============================================================================ writers and round trips
@pytest.fixture
def qrels() -> Qrels:
    return load_qrels(FIX / "qrels.csv")


@pytest.fixture
def run() -> Run:
    return load_run(FIX / "run.csv")


@pytest.mark.parametrize("writer,fmt", [
    (write_qrels_csv, "csv"), (lambda q, p: write_qrels_csv(q, p, sep="\t"), "tsv"),
    (write_qrels_parquet, "parquet"), (lambda q, p: write_qrels_json(q, p, form="graded"), "graded_json"),
])
def test_qrels_round_trip_with_domains(tmp_path, qrels, writer, fmt):
    path = tmp_path / f"out.{fmt}"
    writer(qrels, path)
    back = load_qrels(path)
    assert detect_qrels_format(path.read_bytes(), str(path)) == fmt
    assert_same_qrels(back, qrels)
    assert list(back.domains) == list(qrels.domains)


@pytest.mark.parametrize("writer,fmt", [
    (write_qrels_json, "json_dict"), (write_trec_qrels, "trec"), (write_beir_qrels, "beir"),
])
def test_qrels_round_trip_without_domains(tmp_path, writer, fmt):
    q = load_qrels(FIX / "qrels.trec")
    path = tmp_path / "out.txt"
    writer(q, path)
    assert detect_qrels_format(path.read_bytes(), str(path)) == fmt
    assert_same_qrels(load_qrels(path), q)


def test_qrels_json_keeps_queries_without_judgments(tmp_path):
    q = load_qrels(b'{"a": {"x": 1}, "b": {}}')
    write_qrels_json(q, tmp_path / "q.json")
    back = load_qrels(tmp_path / "q.json")
    assert list(back.query_ids) == ["a", "b"]


@pytest.mark.parametrize("writer,fmt", [
    (write_run_csv, "csv"), (lambda r, p: write_run_csv(r, p, sep="\t"), "tsv"), (write_run_json, "json_dict"),
    (write_run_parquet, "parquet"), (write_trec_run, "trec"),
])
def test_run_round_trip(tmp_path, run, writer, fmt):
    path = tmp_path / "out.data"
    writer(run, path)
    assert detect_run_format(path.read_bytes(), str(path)) == fmt
    assert_same_run(load_run(path), run)


def test_run_round_trip_exact_floats_and_awkward_ids(tmp_path):
    rng = np.random.default_rng(7)
    qs = ["q,1", 'q"2', "q 3"]
    docs = ["d,a", 'd"b', "d c", "d\u00e9", "d;e"]
    recs = [(q, d, float(rng.normal() * 10.0 ** rng.integers(-5, 5))) for q in qs for d in docs]
    r = Run.from_records(*zip(*recs, strict=True), name="x")
    for sep in (",", "\t"):
        path = tmp_path / f"r{ord(sep)}.csv"
        write_run_csv(r, path, sep=sep)
        assert_same_run(load_run(path, format="tsv" if sep == "\t" else "csv"), r)
    write_run_json(r, tmp_path / "r.json")
    assert_same_run(load_run(tmp_path / "r.json"), r)


def test_ordered_lists_round_trip(tmp_path):
    path = FIX / "seed001_movies.json"
    aspects = {a: load_qrels(path, aspect=a) for a in list_aspects(path)}
    out = tmp_path / "lists.json"
    write_ordered_lists(aspects, out, id_field="movie_id")
    assert detect_qrels_format(out.read_bytes(), str(out)) == "ordered_lists"
    assert list_aspects(out) == list(aspects)
    for a, q in aspects.items():
        assert_same_qrels(load_qrels(out, aspect=a), q)
    # one Qrels under a chosen name
    write_ordered_lists(aspects[OVERALL], tmp_path / "one.json", aspect="top_5")
    assert_same_qrels(load_qrels(tmp_path / "one.json"), aspects[OVERALL])


def test_write_ordered_lists_refuses_invalid(tmp_path):
    from evalcore.errors import ConstraintError

    q = Qrels.from_records(["a", "b"], ["b", "zzz"], [1, 1])  # 'zzz' is not an entry
    with pytest.raises(ConstraintError, match="zzz"):
        write_ordered_lists(q, tmp_path / "bad.json", aspect="near")
    assert not (tmp_path / "bad.json").exists()


@pytest.mark.parametrize(("lists", "error", "message"), [
    # ordinary judgments (documents are not queries): the list names no entry, so the reader finds no aspect
    ({"near": Qrels.from_records(["a", "b"], ["d1", "d2"], [1, 2])}, "ConstraintError",
     "aspect 'near': none of its listed ids is the id of an entry ('d1', listed by query 'a', is not)"),
    # nothing relevant: every list empty, which the reader takes for no aspect either
    ({"near": Qrels.from_records(["a", "b"], ["b", "a"], [0, 0])}, "EmptyInputError",
     "aspect 'near' lists no id: no query has a document with grade >= 1"),
    # one aspect that reads back and one that would not
    ({"near": Qrels.from_records(["a", "b"], ["b", "a"], [1, 1]),
      "far": Qrels.from_records(["a", "b"], ["x", "y"], [1, 1])}, "ConstraintError",
     "aspect 'far': none of its listed ids is the id of an entry ('x', listed by query 'a', is not)"),
])
def test_write_ordered_lists_refuses_lists_the_reader_would_not_take(tmp_path, lists, error, message):
    """It wrote them: a file on which the reader found no ordered list ('no ordered-list field (aspect) whose items
    are entry ids'), or lost that aspect from a file of several. What evalcore writes must read back."""
    dest = tmp_path / "o.json"
    with pytest.raises(InputFormatError) as info:
        write_ordered_lists(lists, dest)
    assert type(info.value).__name__ == error
    assert str(info.value).startswith(f"{dest}: {message}"), str(info.value)
    assert "\n" not in str(info.value)
    assert not dest.exists()


def test_write_ordered_lists_writes_a_query_with_an_empty_list_that_reads_back(tmp_path):
    """An entry with nothing relevant is fine beside a list that names entries: it reads back as a query without
    judgments."""
    q = Qrels.from_records(["a", "b", "c"], ["b", "a", "a"], [1, 1, 0])
    write_ordered_lists(q, tmp_path / "o.json", aspect="near")
    back = load_qrels(tmp_path / "o.json")
    assert sorted(back.query_ids.tolist()) == ["a", "b", "c"]
    assert sorted(back.to_frame()[["query_id", "doc_id"]].values.tolist()) == [["a", "b"], ["b", "a"]]


def test_writers_refuse_ids_that_would_not_read_back(tmp_path):
    q = Qrels.from_records([" a"], ["b"], [1])
    with pytest.raises(EvalcoreError, match="white space"):
        write_qrels_csv(q, tmp_path / "q.csv")


def _emb(ids):
    from evalcore.io import Embeddings

    return Embeddings.from_arrays(ids, np.eye(len(ids), dtype=np.float32))


#: (writer, file name, an id it wrote but that did not read back: the reader refused the file or split the id)
BROKEN_WRITES = [
    (lambda i, p: write_trec_run(Run.from_records(["q0", "q1"], ["d0", i], [1.0, 2.0]), p), "r.trec", "d\x001"),
    (lambda i, p: write_trec_qrels(Qrels.from_records([i, "q1"], ["d0", "d1"], [1, 1]), p), "q.trec", "q\x000"),
    (lambda i, p: write_beir_qrels(Qrels.from_records([i, "q1"], ["d0", "d1"], [1, 1]), p), "q.tsv", "q\t0"),
    (lambda i, p: write_beir_qrels(Qrels.from_records(["q0", "q1"], ["d0", i], [1, 1]), p), "q.tsv", "d\n1"),
    (lambda i, p: write_run_csv(Run.from_records([i, "q1"], ["d0", "d1"], [1.0, 2.0]), p), "r.csv", "q\r0"),
    (lambda i, p: write_qrels_csv(Qrels.from_records(["q0", "q1"], ["d0", i], [1, 1]), p, sep="\t"), "q.tsv", "d\x001"),
    (lambda i, p: save_embeddings(_emb(["a", i]), p), "e.npy", "b\u2028c"),
    (lambda i, p: save_embeddings(_emb(["a", i]), p), "e.npy", "b\x85c"),
    (lambda i, p: save_embeddings(_emb(["a", i]), p), "e.csv", "b\rc"),
]


@pytest.mark.parametrize("case", range(len(BROKEN_WRITES)))
def test_writers_refuse_a_control_character_that_would_not_read_back(tmp_path, case):
    write, name, bad = BROKEN_WRITES[case]
    with pytest.raises(InputFormatError, match=re.escape(repr(bad))):
        write(bad, tmp_path / name)
    assert not (tmp_path / name).exists()


def test_writers_refuse_the_control_characters_the_readers_refuse(tmp_path):
    """A quoted line feed or tab in CSV, \\x01 or DEL in TREC were written (and read back) before the readers
    refused every control character in an id; a writer now refuses what its reader would (the ids that do read
    back: tests/test_reader_ids.py)."""
    r = raw_run(["q\n0", "q\t1"], ["d\x01", "d\x7f"], [1.0, 2.0], name="x")  # (the constructors refuse them)
    with pytest.raises(InputFormatError, match=re.escape(repr("q\n0"))):
        write_run_csv(r, tmp_path / "r.csv")
    r = raw_run(["q0", "q1"], ["d\x01", "d\x7f"], [1.0, 2.0], name="x")
    with pytest.raises(InputFormatError, match=re.escape(repr("d\x01"))):
        write_trec_run(r, tmp_path / "r.trec")
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "r.trec").exists()


# ============================================================================ detection and overrides
@pytest.mark.parametrize("fixture,qfmt,rfmt", [
    ("qrels.trec", "trec", "trec"), ("beir_qrels.tsv", "beir", "tsv"), ("qrels.csv", "csv", "csv"),
    ("qrels_synonyms.tsv", "tsv", "tsv"), ("qrels.json", "json_dict", "json_dict"),
    ("seed001_movies.json", "ordered_lists", "json_dict"), ("seed003_graded.json", "graded_json", "json_dict"),
    ("seed003_synonyms.json", "graded_json", "json_dict"), ("run.trec", "trec", "trec"),
    ("run.csv", "csv", "csv"), ("run_rank.tsv", "tsv", "tsv"), ("run.json", "json_dict", "json_dict"),
])
def test_detect_by_content(fixture, qfmt, rfmt):
    data = (FIX / fixture).read_bytes()
    # content alone (no file name), and with a misleading extension
    assert detect_qrels_format(data) == qfmt
    assert detect_run_format(data) == rfmt
    assert detect_qrels_format(data, "misleading.txt") == qfmt


def test_detect_parquet_by_magic(tmp_path, qrels):
    write_qrels_parquet(qrels, tmp_path / "x.bin")
    data = (tmp_path / "x.bin").read_bytes()
    assert detect_qrels_format(data) == "parquet" and detect_run_format(data) == "parquet"


def test_detect_by_extension_when_content_is_ambiguous():
    # a header that names no known column: only the extension says it is a table
    data = b"topic_x,passage_y,grade\nq1,d1,1\n"
    assert detect_qrels_format(data) == "trec"
    assert detect_qrels_format(data, "gt.csv") == "csv"
    assert detect_qrels_format(data.replace(b",", b"\t"), "gt.tsv") == "tsv"
    assert detect_run_format(data, "r.CSV") == "csv"
    assert detect_qrels_format(b"garbage", "gt.parquet") == "parquet"
    # broken JSON: the extension decides that it is JSON (so the error is a JSON error)
    assert detect_qrels_format(b"  oops", "gt.json") == "json_dict"
    assert detect_run_format(b"  oops", "r.jsonl") == "json_dict"
    # content beats the extension: a CSV header in a file named .json is a CSV
    assert detect_qrels_format(b"qid,docid,rel\nq1,d1,1\n", "gt.json") == "csv"
    assert detect_run_format(b"qid,docid,score\nq1,d1,1\n", "r.json") == "csv"
    # the extension is used by load_* too, via the path or the stream's name
    with pytest.raises(EvalcoreError, match="no query id column"):
        load_qrels(data, label="gt.csv")


def test_detection_uses_stream_name_and_leaves_stream_untouched():
    raw = (FIX / "qrels.csv").read_bytes()
    stream = io.BytesIO(raw)
    stream.name = "upload.csv"
    stream.seek(3)
    stream.seek(0)
    assert list_aspects(stream) == []
    q = load_qrels(stream)
    assert stream.tell() == 0 and stream.getvalue() == raw
    assert q.source == "upload.csv"
    assert_same_qrels(load_qrels(stream), q)  # can be read again


def test_explicit_format_overrides_detection(tmp_path):
    # a TSV with a BEIR header read as a plain TSV table: same judgments either way
    assert_same_qrels(load_qrels(FIX / "beir_qrels.tsv", format="tsv"), load_qrels(FIX / "beir_qrels.tsv"))
    # a file named .csv whose content is TREC: the override reads it as TREC
    p = tmp_path / "qrels.csv"
    shutil.copy(FIX / "qrels.trec", p)
    assert detect_qrels_format(p.read_bytes(), str(p)) == "csv"
    with pytest.raises(EvalcoreError):
        load_qrels(p)
    assert rows(load_qrels(p, format="trec").to_frame()) == sorted(QRELS_ROWS)
    # a CSV run forced to TREC fails as TREC (the override is not second-guessed)
    with pytest.raises(EvalcoreError):
        load_run(FIX / "run.csv", format="trec")
    # format names are case-insensitive, "json" is json_dict
    assert_same_run(load_run(FIX / "run.json", format="JSON"), load_run(FIX / "run.json"))


def test_unknown_format_names_the_supported_ones():
    with pytest.raises(OptionError) as e:
        load_qrels(FIX / "qrels.csv", format="xlsx")
    assert all(f in str(e.value) for f in QRELS_FORMATS)
    with pytest.raises(OptionError) as e:
        load_run(FIX / "run.csv", format="ordered_lists")
    assert all(f in str(e.value) for f in RUN_FORMATS)
    assert set(QRELS_FORMATS) | set(RUN_FORMATS) | {"auto"} == set(FORMAT_DESCRIPTIONS)


def test_bytes_and_labels():
    data = (FIX / "qrels.csv").read_bytes()
    assert load_qrels(data).source == "<bytes>"
    assert load_qrels(data, label="mine.csv").source == "mine.csv"
    assert load_run((FIX / "run.csv").read_bytes(), label="bm25.csv").name == "bm25"


def test_csv_tolerances():
    # BOM, CRLF, blank lines, spaces around cells, quoted ids, semicolons, 2.0 grades
    data = "\ufeffQuery-ID ; Doc-ID ; Relevance\r\n\r\n q1 ; \"d;1\" ; 2.0\r\nq1;d2;1\r\n".encode()
    q = load_qrels(data)
    assert rows(q.to_frame()) == [("q1", "d2", 1), ("q1", "d;1", 2)]


def test_inputs_are_not_mutated():
    data = bytearray((FIX / "run.json").read_bytes())
    before = bytes(data)
    load_run(data)
    assert bytes(data) == before

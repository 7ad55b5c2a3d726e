"""Every way in refuses an id holding a control character (a tab, a line break, NUL, C0 / C1 controls, DEL,
U+2028 / U+2029), not only the Workspace API: each file reader (ground truth, runs, embeddings, their id
files and shards, domains, document metadata, query texts, per-query tables), with one error naming the
file, the line (or row) and the id as ``repr`` shows it; the command line ends on it with that one line and
writes nothing; every writer refuses such an id too, and writes the ids the readers take so that they read
back the same.

Before, a format that can carry such an id (JSON escapes, a quoted CSV field, Parquet, an ``.npz`` array, an
id beside ``.npy`` vectors, a TREC field holding U+2028 or a NUL past the first 64 KiB) handed it on: e.g.
``evaluate --out`` wrote it into ``per_query.csv``, which evalcore then refused to read back as binary.
"""

from __future__ import annotations

import io
import json
import re
import string
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from raw_support import raw_embeddings, raw_qrels, raw_run

from evalcore import Qrels, Run
from evalcore.cli import main
from evalcore.errors import InputFormatError
from evalcore.evaluate import evaluate
from evalcore.io import (
    Embeddings,
    load_doc_metadata,
    load_domains,
    load_embeddings,
    load_qrels,
    load_queries,
    load_run,
    open_shards,
    read_ids,
    read_token_ids,
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
from evalcore.io.per_query import read_per_query_csv
from evalcore.report import write_outputs, write_per_query_csv

PAD = 70_000  # bytes of good lines before a NUL: past the 64 KiB the binary-content check reads


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def _json(value: object) -> bytes:
    return json.dumps(value, indent=1).encode("utf-8")  # control characters escaped, U+2028 too


def _jsonl(*records: object) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")


def _padded_trec(bad_line: str, good: str = "q0 0 d{} 1\n") -> tuple[bytes, int]:
    lines = [good.format(i) for i in range(PAD // len(good.format(0)) + 1)]
    return ("".join(lines) + bad_line).encode("utf-8"), len(lines) + 1


def _padded_csv(header: str, good: str, bad_line: str) -> tuple[bytes, int]:
    lines = [good.format(i) for i in range(PAD // len(good.format(0)) + 1)]
    return (header + "".join(lines) + bad_line).encode("utf-8"), len(lines) + 2


_NUL_TREC_RUN, _NUL_TREC_RUN_LINE = _padded_trec("q1 Q0 d\x001 1 0.5 tag\n", "q0 Q0 d{} 1 0.5 tag\n")
_NUL_TREC_QRELS, _NUL_TREC_QRELS_LINE = _padded_trec("q\x001 0 d1 1\n")
_NUL_CSV, _NUL_CSV_LINE = _padded_csv("query_id,doc_id,score\n", "q0,d{},0.5\n", 'q1,"d\x001",0.5\n')

GRADED = [{"query": "q0", "relevance_judgments": {"d0": 1}, "domain": "news"},
          {"query": "q1", "relevance_judgments": {"d1": 2}, "domain": "news"}]


def _graded(**change: object) -> list[dict]:
    out = json.loads(json.dumps(GRADED))
    for path, value in change.items():
        rec, key = path.split("__")
        if key == "item":
            out[int(rec[1:])]["relevance_judgments"] = {value: 1}
        else:
            out[int(rec[1:])][key] = value
    return out


# (reader, file name, content, what is named, the id, its line (None: none), what else places it)
CASES: list[tuple[str, Callable[[bytes, str], object], str, bytes, str, str, int | None, str]] = [
    # ---------------------------------------------------------------- ground truth
    ("trec qrels U+2028", load_qrels, "q.txt", "q0 0 d0 1\nq1 0 d\u20281 1\n".encode(), "document id", "d\u20281",
     2, ""),
    ("trec qrels NUL past 64 KiB", load_qrels, "q.txt", _NUL_TREC_QRELS, "query id", "q\x001",
     _NUL_TREC_QRELS_LINE, ""),
    ("beir", load_qrels, "q.tsv", "query-id\tcorpus-id\tscore\nq0\td0\t1\nq\u20291\td1\t1\n".encode(), "query id",
     "q\u20291", 3, ""),
    ("csv qrels quoted line feed", load_qrels, "q.csv", b'query_id,doc_id,relevance\nq0,d0,1\nq1,"d\n1",1\n',
     "document id", "d\n1", 3, ""),
    ("csv qrels domain", load_qrels, "q.csv", b'query_id,doc_id,relevance,domain\nq0,d0,1,a\nq1,d1,1,"b\x1fc"\n',
     "domain", "b\x1fc", 3, ""),
    ("parquet qrels", load_qrels, "q.parquet", _parquet(pd.DataFrame(
        {"query_id": ["q0", "q\u20281"], "doc_id": ["d0", "d1"], "relevance": [1, 1]})), "query id", "q\u20281",
     None, " (row 2)"),
    ("json qrels NUL", load_qrels, "q.json", _json({"q0": {"d0": 1}, "q1": {"d\x001": 1}}), "document id",
     "d\x001", 6, ""),
    ("jsonl graded line feed", load_qrels, "g.jsonl", _jsonl(*_graded(r1__query="q\n1")), "query", "q\n1", 2, ""),
    ("graded item U+2028", load_qrels, "g.json", _json(_graded(r1__item="d\u20281")), "item", "d\u20281", 12, ""),
    ("graded domain NUL", load_qrels, "g.json", _json(_graded(r0__domain="n\x00ws")), "domain", "n\x00ws", 7, ""),
    ("ordered lists", load_qrels, "o.json", _json([{"id": "a", "sim": ["b\x00"]}, {"id": "b\x00", "sim": ["a"]}]),
     "id", "b\x00", 5, ""),
    # ---------------------------------------------------------------- runs
    ("trec run U+2028", load_run, "r.trec", "q0 Q0 d0 1 0.5 t\nq\u20281 Q0 d1 1 0.5 t\n".encode(), "query id",
     "q\u20281", 2, ""),
    ("trec run NUL past 64 KiB", load_run, "r.trec", _NUL_TREC_RUN, "document id", "d\x001", _NUL_TREC_RUN_LINE,
     ""),
    ("trec run tag", load_run, "r.trec", b"q0 Q0 d0 1 0.5 t\x01g\n", "run tag", "t\x01g", 1, ""),
    ("csv run NUL past 64 KiB", load_run, "r.csv", _NUL_CSV, "document id", "d\x001", _NUL_CSV_LINE, ""),
    ("csv run quoted line feed", load_run, "r.csv", b'query_id,doc_id,score\n"q\n0",d0,0.5\n', "query id", "q\n0",
     2, ""),
    ("parquet run", load_run, "r.parquet", _parquet(pd.DataFrame(
        {"query_id": ["q0", "q1"], "doc_id": ["d0", "d\n1"], "score": [0.5, 0.5]})), "document id", "d\n1", None,
     " (row 2)"),
    ("json run", load_run, "r.json", _json({"q0": {"d0": 1.0}, "q\u20281": ["d1"]}), "query id", "q\u20281", 5, ""),
    ("jsonl run NUL", load_run, "r.json", _json({"q0": ["d0", "d\x001"]}), "document id", "d\x001", 4, ""),
    # ---------------------------------------------------------------- side files
    ("domains csv", load_domains, "d.csv", b'q0,a\n"q\n1",b\n', "query id", "q\n1", 2, ""),
    ("domains json", load_domains, "d.json", _json({"q0": "a", "q1": "b\u2028c"}), "domain", "b\u2028c", 3, ""),
    ("metadata jsonl", load_doc_metadata, "corpus.jsonl", _jsonl({"_id": "d0", "text": "a\nb"},
                                                                  {"_id": "d\x001", "text": "c"}),
     "document id", "d\x001", 2, ""),
    ("metadata parquet", load_doc_metadata, "m.parquet", _parquet(pd.DataFrame(
        {"doc_id": ["d\u20280", "d1"], "text": ["a", "b"]})), "document id", "d\u20280", None, " (row 1)"),
    ("queries jsonl", load_queries, "queries.jsonl", _jsonl({"_id": "1", "text": "a\tb"}, {"_id": "2\n", "text": "c"},
                                                            {"_id": "3\u20283", "text": "d"}),
     "query id", "3\u20283", 3, ""),
    ("queries tsv", load_queries, "queries.tsv", b"1\tfirst\ttext\n2\x013\tsecond\n", "query id", "2\x013", 2, ""),
    ("per_query.csv", lambda data, *, label: read_per_query_csv(data, name=label), "per_query.csv",
     'run,query_id,metric,k,value\nA,q0,ndcg,10,0.5\nB\u2028,q0,ndcg,10,0.5\n'.encode(), "run name", "B\u2028", 3, ""),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_reader_refuses_an_id_holding_a_control_character(case) -> None:
    _, read, label, data, what, bad, line, where = case
    with pytest.raises(InputFormatError) as info:
        read(data, label=label)
    place = label if line is None else f"{label}, line {line}"
    assert str(info.value).startswith(f"{place}: {what} {bad!r}{where} holds a control character (U+"), str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("label,data", [("r.trec", b"q0 Q0 d0 1 0.5 tag\n"), ("r.csv", b"query_id,doc_id,score\nq0,d0,1\n"),
                                        ("r.parquet", _parquet(pd.DataFrame({"query_id": ["q0"], "doc_id": ["d0"],
                                                                             "score": [1.0]}))),
                                        ("r.json", b'{"q0": {"d0": 1.0}}')])
def test_a_run_name_given_with_a_control_character_is_refused_by_every_run_reader(label, data) -> None:
    with pytest.raises(InputFormatError, match=re.escape(f"{label}: run name 'a\\tb' holds a control character")):
        load_run(data, name="a\tb", label=label)


def test_prose_may_hold_tabs_and_line_breaks_ids_stripped_of_blanks_are_kept() -> None:
    """A text (a query's, a document's) is prose; blanks around an id are not part of it."""
    assert load_queries(_jsonl({"_id": "1", "text": "a\tb\nc\u2028d"}), label="q.jsonl") == {"1": "a\tb\nc\u2028d"}
    meta = load_doc_metadata(b'doc_id,title,text\nd0,"T\tx","line\none"\n', label="m.csv")
    assert meta.loc["d0", "text"] == "line\none" and meta.loc["d0", "title"] == "T\tx"
    assert load_qrels(b'query_id,doc_id,relevance\n"q0\t",d0,1\n', label="q.csv").query_ids.tolist() == ["q0"]
    assert load_run(_json({"q0": {" d\n": 1.0}}), label="r.json").doc_vocab.tolist() == ["d"]


# ---------------------------------------------------------------------------------------------- embeddings
VECS = np.eye(3, dtype=np.float32)


def _emb_file(tmp_path: Path, kind: str, ids: list[str]) -> Path:
    if kind == "npz":
        np.savez(tmp_path / "e.npz", ids=np.array(ids), embeddings=VECS)
        return tmp_path / "e.npz"
    if kind == "npy":
        np.save(tmp_path / "e.npy", VECS)
        (tmp_path / "e_ids.txt").write_bytes("".join(f"{i}\n" for i in ids).encode("utf-8"))
        return tmp_path / "e.npy"
    if kind == "parquet":
        pd.DataFrame({"id": ids, "embedding": list(VECS)}).to_parquet(tmp_path / "e.parquet")
        return tmp_path / "e.parquet"
    if kind == "csv":
        frame = pd.DataFrame(VECS, columns=["d0", "d1", "d2"])
        frame.insert(0, "id", ids)
        frame.to_csv(tmp_path / "e.csv", index=False)  # quoted where needed
        return tmp_path / "e.csv"
    (tmp_path / "e.json").write_text(json.dumps(dict(zip(ids, VECS.tolist(), strict=True)), indent=1))
    return tmp_path / "e.json"


#: (file kind, a bad id it can carry, where the refusal places it: the line, else what follows the id)
EMB_CASES = [("npz", "b\x00c", None, " (row 2 of the array 'ids')"), ("npz", "b\nc", None, " (row 2 of the array 'ids')"),
             ("npy", "b\x00c", 2, ""), ("npy", "b\tc", 2, ""), ("parquet", "b\u2028", None, " (row 2)"),
             ("csv", "b\nc", 3, ""), ("json", "b\u2029c", 7, "")]


@pytest.mark.parametrize("kind,bad,line,where", EMB_CASES)
@pytest.mark.parametrize("mmap", [False, True])
def test_embedding_files_refuse_an_id_holding_a_control_character(tmp_path, kind, bad, line, where, mmap) -> None:
    path = _emb_file(tmp_path, kind, ["a", bad, "c"])
    with pytest.raises(InputFormatError) as info:
        load_embeddings(path, mmap=mmap)
    named = tmp_path / "e_ids.txt" if kind == "npy" else path  # (the ids file holds the id)
    place = str(named) if line is None else f"{named}, line {line}"
    assert str(info.value).startswith(f"{place}: id {bad!r}{where} holds a control character"), str(info.value)


def test_id_files_and_shards_refuse_an_id_holding_a_control_character(tmp_path) -> None:
    (tmp_path / "ids.txt").write_bytes(b"a\nb\x01c\n")
    for read in (read_ids, read_token_ids):
        with pytest.raises(InputFormatError, match=re.escape(f"ids.txt, line 2: id {'b' + chr(1) + 'c'!r} holds")):
            read(tmp_path / "ids.txt")
    shards = tmp_path / "shards"
    shards.mkdir()
    np.savez(shards / "part-1.npz", ids=np.array(["a", "b", "c"]), embeddings=VECS)
    np.savez(shards / "part-2.npz", ids=np.array(["d", "e\u2028", "f"]), embeddings=VECS)
    for strict in (True, False):
        with pytest.raises(InputFormatError, match=re.escape("part-2.npz: id 'e\\u2028' (row 2 of the array 'ids')")):
            open_shards(shards, strict_ids=strict)


# ---------------------------------------------------------------------------------------------- the command line
@pytest.fixture()
def cli_files(tmp_path: Path) -> dict[str, Path]:
    paths = {"qrels": tmp_path / "qrels.json", "bad_qrels": tmp_path / "bad_qrels.json", "run": tmp_path / "run.csv",
             "bad_run": tmp_path / "bad_run.csv"}
    paths["qrels"].write_bytes(_json({"q0": {"d0": 1}, "q1": {"d1": 1}}))
    paths["bad_qrels"].write_bytes(_json({"q0": {"d0": 1}, "q\x001": {"d1": 1}}))
    paths["run"].write_bytes(b"query_id,doc_id,score\nq0,d0,0.5\nq1,d1,0.5\n")
    paths["bad_run"].write_bytes(b'query_id,doc_id,score\nq0,d0,0.5\nq1,"d\n1",0.5\n')
    return paths


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_cli_exits_2_with_one_line_and_writes_nothing(cli_files, tmp_path, capsys, command) -> None:
    out = tmp_path / ("out" if command == "evaluate" else "out.csv")
    metric = ["--metrics", "ndcg", "--k", "5"] if command == "evaluate" else ["--metric", "ndcg@5"]
    for qrels, run, said in ((cli_files["bad_qrels"], cli_files["run"],
                              f"{cli_files['bad_qrels']}, line 5: query id 'q\\x001' holds a control character"),
                             (cli_files["qrels"], cli_files["bad_run"],
                              f"{cli_files['bad_run']}, line 3: document id 'd\\n1' holds a control character")):
        args = [command, "--qrels", str(qrels), "--run", f"a={run}", "--run", f"b={cli_files['run']}", *metric,
                "--out", str(out)]
        if command == "evaluate":
            args += ["--workspace", str(tmp_path / "ws")]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {said} (U+") and err.count("\n") == 1 and "Traceback" not in err, err
        assert not out.exists() and not (tmp_path / "ws").exists()
    np.savez(tmp_path / "docs.npz", ids=np.array(["d0", "d1", "d\u20282"]), embeddings=VECS)  # an embedding run
    np.savez(tmp_path / "queries.npz", ids=np.array(["q0", "q1", "q2"]), embeddings=VECS)
    args = [command, "--qrels", str(cli_files["qrels"]), "--emb", f"e={tmp_path / 'docs.npz'},{tmp_path / 'queries.npz'}",
            "--run", f"b={cli_files['run']}", *metric, "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'docs.npz'}: id 'd\\u20282' (row 3 of the array 'ids') holds a "
                          "control character (U+2028") and err.count("\n") == 1, err
    assert not out.exists()


def test_cli_per_query_input_of_compare_is_checked_alike(tmp_path, capsys) -> None:
    (tmp_path / "pq.csv").write_bytes(b'run,query_id,metric,k,value\nA,q0,ndcg,5,0.5\nB,"q\n0",ndcg,5,0.25\n')
    assert main(["compare", "--per-query", str(tmp_path / "pq.csv"), "--metric", "ndcg@5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'pq.csv'}, line 3: query id 'q\\n0' holds a control character"), err


# ---------------------------------------------------------------------------------------------- writers
def test_every_writer_refuses_an_id_holding_a_control_character_and_writes_nothing(tmp_path) -> None:
    run = raw_run(["q0", "q\x7f1"], ["d0", "d1"], [1.0, 2.0], name="r")  # (the constructors refuse them)
    qrels = raw_qrels(["q0", "q1"], ["d0", "d\u20281"], [1, 1])
    domains = raw_qrels(["q0"], ["d0"], [1], domains={"q0": "a\x00"})
    writes = [(write_trec_run, run, "r.trec"), (write_run_csv, run, "r.csv"), (write_run_parquet, run, "r.pq"),
              (write_run_json, run, "r.json"), (write_trec_qrels, qrels, "q.trec"), (write_beir_qrels, qrels, "q.tsv"),
              (write_qrels_csv, qrels, "q.csv"), (write_qrels_parquet, qrels, "q.pq"), (write_qrels_json, qrels, "q.json"),
              (write_ordered_lists, qrels, "o.json"), (write_qrels_csv, domains, "dom.csv")]
    for write, data, name in writes:
        with pytest.raises(InputFormatError, match="holds a control character"):
            write(data, tmp_path / name)
        assert not (tmp_path / name).exists(), name
    for name in ("e.npz", "e.npy", "e.parquet", "e.csv", "e.json"):
        with pytest.raises(InputFormatError, match=re.escape("id 'b\\x85' holds a control character")):
            save_embeddings(raw_embeddings(["a", "b\x85", "c"], VECS), tmp_path / "sub" / name)
    ev = evaluate(Qrels.from_dict({"q0": {"d0": 1}}), raw_run(["q0"], ["d0"], [1.0], name="r\t1"),
                  metrics=["ndcg"], k=[5])
    with pytest.raises(InputFormatError, match=re.escape("run name 'r\\t1' holds a control character")):
        write_outputs(ev, tmp_path / "out")
    with pytest.raises(InputFormatError, match="holds a control character"):
        write_per_query_csv(ev, tmp_path / "pq.csv")
    assert not (tmp_path / "sub").exists() and not (tmp_path / "out").exists() and not (tmp_path / "pq.csv").exists()


#: Ids the readers take: non-ASCII, quotes, commas, semicolons, backslashes, '#', braces, number-like text;
#: white space inside an id where the format keeps it (not in TREC's white-space separated lines, where a query
#: id may not begin with '#' either: such a line is a comment).
AWKWARD = ['q"1', "q'2", "a,b", "a;b", "back\\slash", "#hash", "a#b", "日本", "é-ü", "😀", "{x}", "null", "012", "1e5",
           "100%", "%s", "a/b", "Q0", "nan", "-", "zw\u200bsp", "ẞ"]
SPACED = ["two words", "a , b", 'say "hi"', "no\u00a0break"]


def _trec_legal(ids: list[str]) -> list[str]:
    """The ids a TREC line holds: no ASCII white space (its separators; other white space, as U+00A0, is part of an
    id, as trec_eval reads it), no query id beginning with '#'."""
    return [i for i in ids if not re.search(r"[ \t\n\r\f\v]", i) and not i.startswith("#")]


def _roundtrips(tmp_path: Path) -> list[tuple[str, Callable[[list[str]], list[str]], bool]]:
    """(name, ids -> the ids read back from what the writer wrote, whether it is a TREC file: no ASCII white space
    in an id, no query id beginning with '#')."""
    def run_of(ids: list[str]) -> Run:
        return Run.from_records(ids, list(reversed(ids)), np.arange(len(ids), dtype=float), name="r")

    def qrels_of(ids: list[str]) -> Qrels:
        return Qrels.from_records(ids, list(reversed(ids)), [1] * len(ids), domains={i: f"dom {i}" for i in ids})

    def run_ids(write: Callable, name: str) -> Callable[[list[str]], list[str]]:
        def go(ids: list[str]) -> list[str]:
            write(run_of(ids), tmp_path / name)
            back = load_run(tmp_path / name)
            return sorted(back.query_ids.tolist()) + sorted(back.doc_vocab.tolist())
        return go

    def qrels_ids(write: Callable, name: str, domains: bool = False) -> Callable[[list[str]], list[str]]:
        def go(ids: list[str]) -> list[str]:
            write(qrels_of(ids), tmp_path / name)
            back = load_qrels(tmp_path / name)
            got = sorted(back.query_ids.tolist()) + sorted(back.doc_ids.tolist())
            return got + (sorted(back.domains.tolist()) if domains else [])
        return go

    def emb_ids(name: str) -> Callable[[list[str]], list[str]]:
        def go(ids: list[str]) -> list[str]:
            save_embeddings(Embeddings.from_arrays(ids, np.ones((len(ids), 2), dtype=np.float32)), tmp_path / name)
            return sorted(load_embeddings(tmp_path / name).ids.tolist())
        return go

    def per_query(ids: list[str]) -> list[str]:
        ev = evaluate(Qrels.from_dict({i: {"d": 1} for i in ids}), Run.from_dict({i: {"d": 1.0} for i in ids},
                                                                                  name=ids[0]), metrics=["P"], k=[1])
        write_per_query_csv(ev, tmp_path / "pq.csv")
        back = read_per_query_csv(tmp_path / "pq.csv")
        return [back["run"].iloc[0]] + sorted(back["query_id"].tolist())

    def ordered(ids: list[str]) -> list[str]:
        q = Qrels.from_records(ids, [ids[(i + 1) % len(ids)] for i in range(len(ids))], [1] * len(ids))
        write_ordered_lists(q, tmp_path / "o.json", aspect="near")
        return sorted(load_qrels(tmp_path / "o.json").query_ids.tolist()) + sorted(ids)

    return [("trec run", run_ids(write_trec_run, "r.trec"), True),
            ("csv run", run_ids(write_run_csv, "r.csv"), False),
            ("tsv run", run_ids(lambda r, p: write_run_csv(r, p, sep="\t"), "r.tsv"), False),
            ("parquet run", run_ids(write_run_parquet, "r.parquet"), False),
            ("json run", run_ids(write_run_json, "r.json"), False),
            ("trec qrels", qrels_ids(write_trec_qrels, "q.trec"), True),
            ("beir qrels", qrels_ids(write_beir_qrels, "q.beir"), False),
            ("csv qrels", qrels_ids(write_qrels_csv, "q.csv", domains=True), False),
            ("parquet qrels", qrels_ids(write_qrels_parquet, "q.parquet", domains=True), False),
            ("json qrels", qrels_ids(write_qrels_json, "q.json"), False),
            ("graded json", qrels_ids(lambda q, p: write_qrels_json(q, p, form="graded"), "g.json", domains=True),
             False),
            ("ordered lists", ordered, False),
            *[(f"embeddings {n}", emb_ids(n), False) for n in ("e.npz", "e.npy", "e.parquet", "e.csv", "e.json")],
            ("per_query.csv", per_query, False)]


def _expected(name: str, ids: list[str]) -> list[str]:
    if name == "per_query.csv":
        return [ids[0], *sorted(ids)]
    if name.startswith("embeddings"):
        return sorted(ids)
    out = sorted(ids) + sorted(ids)
    if name in ("csv qrels", "parquet qrels", "graded json"):
        out += sorted(f"dom {i}" for i in ids)
    return out


def test_every_writer_writes_awkward_legal_ids_that_read_back_the_same(tmp_path) -> None:
    for name, roundtrip, trec in _roundtrips(tmp_path):
        ids = _trec_legal(AWKWARD) if trec else AWKWARD + SPACED
        assert roundtrip(ids) == _expected(name, ids), name


def test_trec_writers_refuse_a_query_id_beginning_with_a_hash(tmp_path) -> None:
    """Written, its lines were read back as comments: the query was lost (found by the round trip above)."""
    for write, data in ((write_trec_run, Run.from_records(["q0", "#1"], ["d0", "d1"], [1.0, 2.0])),
                        (write_trec_qrels, Qrels.from_records(["q0", "#1"], ["d0", "d1"], [1, 1]))):
        with pytest.raises(InputFormatError, match="query id '#1' begins with '#'"):
            write(data, tmp_path / "x.trec")
        assert not (tmp_path / "x.trec").exists()
    write_trec_run(Run.from_records(["q0"], ["#d"], [1.0]), tmp_path / "x.trec")  # a document id may
    assert load_run(tmp_path / "x.trec").doc_vocab.tolist() == ["#d"]


@pytest.mark.parametrize("first", ["{1", "[x", "[1", '["a"', "{"])
def test_a_trec_file_whose_first_id_begins_with_a_brace_or_bracket_is_read_as_trec(tmp_path, first) -> None:
    """It was detected as JSON by its first byte and refused as broken JSON (found by the round trip below)."""
    run = Run.from_records([first, "q1"], ["d0", "d1"], [1.0, 2.0], name="r")
    write_trec_run(run, tmp_path / "r.trec")
    assert sorted(load_run(tmp_path / "r.trec").query_ids.tolist()) == sorted([first, "q1"])
    write_trec_qrels(Qrels.from_records([first], ["d0"], [1]), tmp_path / "q.txt")
    assert load_qrels(tmp_path / "q.txt").query_ids.tolist() == [first]


#: Text the readers take as an id: no control character (categories Cc), no line / paragraph separator, no
#: surrogate; no blank at either end (stripped by the table readers); TREC ids without ASCII white space.
_LEGAL = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=12).filter(
    lambda s: s == s.strip())


@settings(max_examples=15, deadline=None, derandomize=True, database=None)
@given(st.lists(_LEGAL, min_size=2, max_size=6, unique=True))
def test_legal_ids_read_back_the_same_from_every_writer(tmp_path_factory, ids) -> None:
    tmp_path = tmp_path_factory.mktemp("rt")
    for name, roundtrip, trec in _roundtrips(tmp_path):
        use = _trec_legal(ids) if trec else ids
        if len(use) >= 2:  # (an ordered list needs another entry to list)
            assert roundtrip(use) == _expected(name, use), name


def test_the_awkward_ids_are_legal_by_the_one_definition() -> None:
    from evalcore.io.source import first_broken_id

    assert first_broken_id(AWKWARD + SPACED) is None
    assert first_broken_id(list(string.printable)) is not None  # (tab, line feed... among the printable)

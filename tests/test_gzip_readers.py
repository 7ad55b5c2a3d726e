"""gzip-compressed qrels and runs: recognised by their magic bytes, whatever the name.

Every reader starts at :func:`evalcore.io.source.read_source`, which inflates
gzip data; these tests read the same judgments and runs plain and compressed
(paths with and without ``.gz``, bytes, streams, several members) and compare
the results, and check that damaged gzip data is an error naming the file.
"""

from __future__ import annotations

import gzip
import io
import json

import numpy as np
import pandas as pd
import pytest

from evalcore import evaluate
from evalcore.cli import main
from evalcore.errors import InputFormatError, UnsafeFileError
from evalcore.io import load_embeddings, load_qrels, load_run, read_ids, read_token_ids
from evalcore.io.trec import read_trec_qrels, read_trec_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture()
def plain(trec_dir):
    return (trec_dir / "qrels.test").read_bytes(), (trec_dir / "results.test").read_bytes()


def frames_equal(a, b) -> None:
    pd.testing.assert_frame_equal(a.to_frame().reset_index(drop=True), b.to_frame().reset_index(drop=True))


@pytest.mark.parametrize("name", ["qrels.test.gz", "qrels.test", "judgments.GZ", "no_extension"])
def test_gzip_qrels_read_like_plain_ones_whatever_the_name(tmp_path, plain, name):
    p = tmp_path / name
    p.write_bytes(gzip.compress(plain[0]))
    frames_equal(load_qrels(p), load_qrels(plain[0], label="plain"))
    frames_equal(read_trec_qrels(p), load_qrels(plain[0], label="plain"))


@pytest.mark.parametrize("how", ["path", "bytes", "stream"])
def test_gzip_runs_from_paths_bytes_and_streams(tmp_path, plain, how):
    data = gzip.compress(plain[1])
    p = tmp_path / "results.test.gz"
    p.write_bytes(data)
    src = {"path": p, "bytes": data, "stream": io.BytesIO(data)}[how]
    run = load_run(src)
    want = load_run(plain[1], label="plain")
    frames_equal(run, want)
    assert run.name == want.name == "STANDARD"  # the TREC tag
    frames_equal(read_trec_run(data), want)


def test_several_gzip_members_are_one_file(plain):
    half = plain[1].index(b"\n", len(plain[1]) // 2) + 1
    data = gzip.compress(plain[1][:half]) + gzip.compress(plain[1][half:])
    frames_equal(load_run(data), load_run(plain[1]))


def test_tables_and_json_compressed_are_detected_by_content_or_by_the_name_under_gz(tmp_path):
    tsv = b"query_id\tdoc_id\tscore\nq1\td1\t2.5\nq1\td2\t1.0\n"
    p = tmp_path / "bm25.tsv.gz"
    p.write_bytes(gzip.compress(tsv))
    run = load_run(p)
    assert run.name == "bm25"  # named after the file, ".tsv.gz" aside
    assert run.to_dict() == {"q1": {"d1": 2.5, "d2": 1.0}}
    j = tmp_path / "qrels.json.gz"
    j.write_bytes(gzip.compress(b'{"q1": {"d1": 2}}'))
    assert load_qrels(j).to_dict() == {"q1": {"d1": 2}}


def test_compressed_input_evaluates_like_trec_eval(tmp_path, trec_dir):
    # out.test.aq: map 0.1785 and bpref 0.1981 over the three queries (trec_eval's own output)
    q, r = tmp_path / "q.gz", tmp_path / "r.gz"
    q.write_bytes(gzip.compress((trec_dir / "qrels.test").read_bytes()))
    r.write_bytes(gzip.compress((trec_dir / "results.test").read_bytes()))
    s = evaluate(load_qrels(q), load_run(r), metrics=["map@all", "bpref"]).summary()
    assert dict(zip(s["metric"], s["mean"].round(4), strict=True)) == {"map": 0.1785, "bpref": 0.1981}


@pytest.mark.parametrize(("damage", "match"), [
    (lambda d: d[: len(d) // 2], "truncated gzip"),
    (lambda d: d[:20] + bytes(b ^ 0x55 for b in d[20:40]) + d[40:], "corrupt gzip"),
    (lambda d: d + b"trailing junk", "after the end of the gzip"),
])
def test_damaged_gzip_is_an_error_naming_the_file(tmp_path, plain, damage, match):
    p = tmp_path / "broken.gz"
    p.write_bytes(damage(gzip.compress(plain[1])))
    with pytest.raises(UnsafeFileError, match=match) as ei:
        load_run(p)
    assert "broken.gz" in str(ei.value)


def test_command_line_reads_compressed_files(tmp_path, trec_dir, capsys):
    q, r = tmp_path / "qrels.gz", tmp_path / "run.gz"
    q.write_bytes(gzip.compress((trec_dir / "qrels.test").read_bytes()))
    r.write_bytes(gzip.compress((trec_dir / "results.test").read_bytes()))
    assert main(["evaluate", "--qrels", str(q), "--run", f"std={r}", "--metrics", "num_rel_ret", "map@all"]) == 0
    out = capsys.readouterr().out
    assert "131 (sum)" in out and "0.179±" in out  # num_rel_ret 131 and map 0.1785 in out.test.aq


def _embedding_files(tmp_path):
    """One small embedding file of each kind, and its ids, written plain."""
    ids = ["d1", "d2", "d3"]
    vecs = np.arange(6, dtype=np.float32).reshape(3, 2) + 1
    np.save(tmp_path / "e.npy", vecs)
    np.savez(tmp_path / "e.npz", ids=np.array(ids), embeddings=vecs)
    (tmp_path / "e.json").write_text(json.dumps({i: v.tolist() for i, v in zip(ids, vecs, strict=True)}))
    (tmp_path / "e.csv").write_text("id,a,b\n" + "".join(f"{i},{v[0]},{v[1]}\n" for i, v in zip(ids, vecs, strict=True)))
    pd.DataFrame({"id": ids, "embedding": list(vecs)}).to_parquet(tmp_path / "e.parquet")
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    return ids


@pytest.mark.parametrize("kind", ["npy", "npz", "json", "csv", "parquet"])
@pytest.mark.parametrize("suffix", [".gz", ""])
def test_compressed_embeddings_are_refused_saying_so(tmp_path, kind, suffix):
    # embeddings are read as they are (a .npy or .npz memory-mapped): a gzip file is one clear error naming
    # it, not "binary content, expected CSV text" or "no NUMPY header"
    _embedding_files(tmp_path)
    p = tmp_path / f"packed.{kind}{suffix}"
    p.write_bytes(gzip.compress((tmp_path / f"e.{kind}").read_bytes()))
    kwargs = {"ids_src": tmp_path / "ids.txt"} if kind == "npy" else {}
    with pytest.raises(InputFormatError, match="gzip-compressed") as ei:
        load_embeddings(p, **kwargs)
    assert p.name in str(ei.value) and "decompress" in str(ei.value)


@pytest.mark.parametrize("reader", [read_ids, read_token_ids])
def test_compressed_id_files_are_refused_saying_so(tmp_path, reader):
    _embedding_files(tmp_path)
    p = tmp_path / "ids.txt.gz"
    p.write_bytes(gzip.compress((tmp_path / "ids.txt").read_bytes()))
    assert list(reader(tmp_path / "ids.txt")) == ["d1", "d2", "d3"]
    with pytest.raises(InputFormatError, match="gzip-compressed") as ei:
        reader(p)
    assert "ids.txt.gz" in str(ei.value)


def test_command_line_names_a_compressed_embedding_file(tmp_path, capsys):
    _embedding_files(tmp_path)
    (tmp_path / "qrels.txt").write_text("q 0 d1 1\n")
    (tmp_path / "q.json").write_text(json.dumps({"q": [1.0, 2.0]}))
    p = tmp_path / "docs.json.gz"
    p.write_bytes(gzip.compress((tmp_path / "e.json").read_bytes()))
    code = main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--emb", f"e={p},{tmp_path / 'q.json'}"])
    err = capsys.readouterr().err
    assert code == 2 and "docs.json.gz" in err and "gzip-compressed" in err and "Traceback" not in err

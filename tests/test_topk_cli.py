"""Tests of the ``topk`` command: exact cosine top-k of embeddings written as a TREC run."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
from retrieval_support import (
    brute_topk,
    shuffled_ids,
)

from evalcore.cli import main as cli_main
from evalcore.cli import topk as topk_cli
from evalcore.errors import (
    OptionError,
)
from evalcore.io import write_trec_topk
from evalcore.retrieval import (
    exact_topk,
)

# --------------------------------------------------------------------------- topk command


@pytest.fixture()
def emb_files(tmp_path):
    rng = np.random.default_rng(17)
    docs = rng.integers(-2, 3, size=(300, 4)).astype(np.float32)
    docs[~docs.any(axis=1), 0] = 1
    queries = rng.standard_normal((12, 4)).astype(np.float32)
    ids = shuffled_ids(rng, 300)
    qids = np.array([f"q{i}" for i in range(12)])
    np.save(tmp_path / "docs.npy", docs)
    np.save(tmp_path / "q.npy", queries)
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    (tmp_path / "qids.txt").write_text("\n".join(qids) + "\n")
    return tmp_path, docs, queries, ids, qids


def read_trec(path):
    rows = [line.split(" ") for line in open(path).read().splitlines()]
    return rows


@pytest.mark.parametrize("mmap", [False, True])
def test_cli_writes_trec_run(emb_files, mmap, capsys):
    tmp, docs, queries, ids, qids = emb_files
    out = tmp / "run.trec"
    argv = ["--docs", str(tmp / "docs.npy"), "--doc-ids", str(tmp / "ids.txt"), "--queries", str(tmp / "q.npy"),
            "--query-ids", str(tmp / "qids.txt"), "--k", "20", "--block-mb", "1", "--out", str(out), "--tag", "t1"]
    assert cli_main(["topk", *argv, *(["--mmap"] if mmap else [])]) == 0
    assert "topk [" in capsys.readouterr().err  # progress bar on stderr
    rows = read_trec(out)
    ref_i, ref_s = brute_topk(queries, docs, 20, ids)
    assert len(rows) == 12 * 20
    for n, (q, q0, doc, rank, score, tag) in enumerate(rows):
        r, c = divmod(n, 20)
        assert (q, q0, doc, rank, tag) == (qids[r], "Q0", ids[ref_i[r, c]], str(c + 1), "t1")
        assert np.float32(float(score)) == ref_s[r, c]  # %.9g round-trips float32


def test_cli_item_to_item_exclude_self(emb_files):
    tmp, docs, _, ids, _ = emb_files
    out = tmp / "i2i.trec"
    code = cli_main(["topk", "--docs", str(tmp / "docs.npy"), "--doc-ids", str(tmp / "ids.txt"), "--k", "5",
                          "--exclude-self", "--quiet", "--out", str(out)])
    assert code == 0
    rows = read_trec(out)
    assert len(rows) == 300 * 5 and all(r[0] != r[2] for r in rows)
    ref_i, _ = brute_topk(docs, docs, 5, ids, ids, exclude_self=True)
    assert [r[2] for r in rows] == list(ids[ref_i].ravel())


def test_cli_errors_one_line_exit_2(emb_files, capsys):
    tmp, *_ = emb_files
    (tmp / "short.txt").write_text("a\nb\n")
    np.save(tmp / "d3.npy", np.ones((2, 3), np.float32))
    (tmp / "sp.txt").write_text("a b\nc\n")
    cases = [
        (["--doc-ids", str(tmp / "short.txt")], "2 ids but"),
        (["--k", "0"], "--k must be a positive integer"),
        (["--queries", str(tmp / "d3.npy"), "--query-ids", str(tmp / "short.txt")], "dimension mismatch"),
        (["--queries", str(tmp / "q.npy")], "q.npy: no ids file beside it: expected q_ids.txt"),
        (["--query-ids", str(tmp / "qids.txt")], "--query-ids goes with --queries"),
        (["--docs", str(tmp / "missing.npy")], "missing.npy: file not found"),
        (["--doc-ids", str(tmp / "sp.txt")], "sp.txt, line 1: an id contains white space"),
    ]
    for extra, message in cases:
        argv = ["--docs", str(tmp / "docs.npy"), "--doc-ids", str(tmp / "ids.txt"), "--out", str(tmp / "o.trec"),
                "--quiet", *extra]
        assert cli_main(["topk", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


def test_topk_reads_the_embedding_files_evaluate_reads(emb_files):
    """A .npz holding ids and embeddings, and a .npy with X_ids.txt beside it, need no --doc-ids/--query-ids
    (as with evaluate --emb); the run is the one of the explicit ids files."""
    tmp, docs, queries, ids, qids = emb_files
    want = tmp / "want.trec"
    assert cli_main(["topk", "--docs", str(tmp / "docs.npy"), "--doc-ids", str(tmp / "ids.txt"), "--queries",
                     str(tmp / "q.npy"), "--query-ids", str(tmp / "qids.txt"), "--k", "7", "--quiet",
                     "--out", str(want)]) == 0
    np.savez(tmp / "d.npz", ids=np.asarray(ids), embeddings=docs)
    np.savez(tmp / "qq.npz", ids=qids, embeddings=queries)
    np.save(tmp / "beside.npy", docs)
    (tmp / "beside_ids.txt").write_text("\n".join(ids) + "\n")
    np.save(tmp / "qbeside.npy", queries)
    (tmp / "qbeside_ids.txt").write_text("\n".join(qids) + "\n")
    for d, q in (("d.npz", "qq.npz"), ("beside.npy", "qbeside.npy"), ("d.npz", "qbeside.npy")):
        got = tmp / "got.trec"
        assert cli_main(["topk", "--docs", str(tmp / d), "--queries", str(tmp / q), "--k", "7", "--quiet",
                         "--out", str(got)]) == 0
        assert got.read_bytes() == want.read_bytes(), (d, q)


def test_topk_ids_files_do_not_go_with_a_npz(emb_files, capsys):
    tmp, docs, queries, ids, qids = emb_files
    np.savez(tmp / "d.npz", ids=np.asarray(ids), embeddings=docs)
    assert cli_main(["topk", "--docs", str(tmp / "d.npz"), "--doc-ids", str(tmp / "ids.txt"), "--quiet",
                     "--out", str(tmp / "o.trec")]) == 2
    assert "--doc-ids goes with a .npy file; " in capsys.readouterr().err


def test_register_adds_subcommand(emb_files):
    import argparse

    tmp, *_ = emb_files
    parser = argparse.ArgumentParser(prog="evalcore")
    sub = parser.add_subparsers(dest="command", required=True)
    topk_cli.register(sub)
    args = parser.parse_args(["topk", "--docs", str(tmp / "docs.npy"), "--doc-ids", str(tmp / "ids.txt"),
                              "--k", "3", "--quiet", "--out", str(tmp / "r.trec")])
    assert args.func(args) == 0
    assert len(read_trec(tmp / "r.trec")) == 300 * 3


def test_topk_subcommand_does_not_import_pandas(emb_files):
    # the main CLI preloads pandas for the evaluation commands; topk never needs it
    import subprocess
    import sys

    tmp, *_ = emb_files
    code = (
        "import sys\n"
        "from evalcore.cli import main\n"
        f"rc = main(['topk', '--docs', {str(tmp / 'docs.npy')!r}, '--doc-ids', {str(tmp / 'ids.txt')!r},"
        f" '--k', '3', '--quiet', '--out', {str(tmp / 'r.trec')!r}])\n"
        "print(rc, 'pandas' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "False"]
    assert len(read_trec(tmp / "r.trec")) == 300 * 3


@pytest.mark.parametrize("entry", [["-m", "evalcore", "topk"], ["-m", "evalcore.cli", "topk"]])
def test_cli_warnings_are_one_plain_line(emb_files, entry):
    import subprocess
    import sys

    tmp, docs, *_ = emb_files
    docs = docs.copy()
    docs[7] = 0  # an all-zero vector: a warning, not an error
    np.save(tmp / "zero.npy", docs)
    proc = subprocess.run([sys.executable, *entry, "--docs", str(tmp / "zero.npy"), "--doc-ids", str(tmp / "ids.txt"),
                           "--k", "3", "--quiet", "--out", str(tmp / "r.trec")], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert proc.returncode == 0, proc.stderr
    # item-to-item: the zero row is a query too
    assert proc.stderr.splitlines() == [
        "warning: 1 query vector(s) are all zeros; their cosine with every document is 0",
        "warning: 1 corpus vector(s) are all zeros; their cosine with every query is 0",
    ]


def test_write_trec_padding_and_stream():
    got = exact_topk(np.array([[1.0, 0], [0, 1.0]]), np.eye(2), 5, corpus_ids=["a", "b"], query_ids=["a", "q"],
                     exclude_self=True)
    buf = io.StringIO()
    write_trec_topk(got, buf, tag="x")
    assert buf.getvalue().splitlines() == ["a Q0 b 1 0 x", "q Q0 b 1 1 x", "q Q0 a 2 0 x"]
    with pytest.raises(OptionError):
        write_trec_topk(got, io.StringIO(), tag="two words")


def test_a_text_file_named_npy_and_a_repeated_id_are_named_as_they_are(tmp_path, capsys):
    """A text file named .npy was called a file of 'Python objects (would need unpickling)'; an id twice in
    --doc-ids was 'corpus_ids holds id 'd1' twice (rows 0 and 1)', naming neither the file nor its lines."""
    (tmp_path / "docs.npy").write_text("hello\n")
    (tmp_path / "ids.txt").write_text("d1\nd2\n")
    out = str(tmp_path / "o.trec")
    assert cli_main(["topk", "--docs", str(tmp_path / "docs.npy"), "--doc-ids", str(tmp_path / "ids.txt"), "--k", "1",
                     "--out", out, "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'docs.npy'}: not a .npy file (no NUMPY header)"
    np.save(tmp_path / "ok.npy", np.eye(3, 4, dtype=np.float32))
    (tmp_path / "dup.txt").write_text("d1\nd2\nd1\n")
    assert cli_main(["topk", "--docs", str(tmp_path / "ok.npy"), "--doc-ids", str(tmp_path / "dup.txt"), "--k", "1",
                     "--out", out, "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'dup.txt'}, line 3: id 'd1' is listed twice (lines 1 and 3)"
    import pickle

    (tmp_path / "p.npy").write_bytes(pickle.dumps([1, 2]))
    assert cli_main(["topk", "--docs", str(tmp_path / "p.npy"), "--doc-ids", str(tmp_path / "ids.txt"), "--k", "1",
                     "--out", out, "--quiet"]) == 2
    assert "a Python pickle, not a .npy array; refusing to unpickle" in capsys.readouterr().err


# --------------------------------------------------------------------------- ids with Unicode white space
# TREC fields are separated by ASCII white space only: the TREC readers keep a non-breaking space (or U+3000) inside
# an id, and the TREC writers write it (with one warning). `topk --tag` and its one-id-per-line ids files refused
# such ids (every Unicode white space), so a run the readers and writers take could not be made by `topk`.
UNICODE_SPACED = ["d\u00a0", "\u3000d", "d\u202fx", "d\u2009y"]


def test_topk_ids_and_tag_with_unicode_spaces_read_back_identically(emb_files, capsys):
    from evalcore.errors import collected_warnings
    from evalcore.io import load_run, read_token_ids

    tmp, docs, queries, ids, qids = emb_files
    ids = np.array([f"{s}{i}" if i < len(UNICODE_SPACED) else str(x)
                    for i, (s, x) in enumerate(zip([*UNICODE_SPACED, *[""] * len(ids)], ids, strict=False))])
    qids = np.array([f"q\u00a0{i}" for i in range(len(qids))])
    (tmp / "uids.txt").write_text("\n".join(ids) + "\n", encoding="utf-8")
    (tmp / "uqids.txt").write_text("\n".join(qids) + "\n", encoding="utf-8")
    assert read_token_ids(tmp / "uids.txt").tolist() == ids.tolist()  # one id per line, as it is
    out, tag = tmp / "u.trec", "run\u00a01"
    assert cli_main(["topk", "--docs", str(tmp / "docs.npy"), "--doc-ids", str(tmp / "uids.txt"), "--queries",
                     str(tmp / "q.npy"), "--query-ids", str(tmp / "uqids.txt"), "--k", "300", "--quiet",
                     "--out", str(out), "--tag", tag]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("warning: ") and "white space other than ASCII" in err[0], err
    with collected_warnings():
        run = load_run(out)
    assert run.name == tag
    assert sorted(run.query_ids.tolist()) == sorted(qids.tolist())
    assert sorted(run.doc_vocab.tolist()) == sorted(ids.tolist())  # k = every document: each id is in the run
    ref_i, _ = brute_topk(queries, docs, 300, ids)
    assert [d for _, _, d, *_ in (line.split(" ") for line in out.read_text(encoding="utf-8").splitlines())] \
        == list(ids[ref_i].ravel())


@pytest.mark.parametrize("tag, ok", [("run\u00a01", True), ("run\u30001", True), ("run 1", False), ("run\t1", False),
                                     ("", False), ("run\x851", False), ("run\u20281", False)])
def test_topk_tag_takes_what_a_trec_field_holds(emb_files, capsys, tag, ok):
    tmp, *_ = emb_files
    code = cli_main(["topk", "--docs", str(tmp / "docs.npy"), "--doc-ids", str(tmp / "ids.txt"), "--k", "2",
                     "--quiet", "--out", str(tmp / "t.trec"), "--tag", tag])
    err = capsys.readouterr().err.splitlines()
    if ok:
        assert code == 0, err
    else:
        assert code == 2 and len(err) == 1 and err[0].startswith("error: --tag ") and repr(tag) in err[0], err


@pytest.mark.parametrize("bad, message", [("a b", "white space"), ("a\tb", "white space"), ("a\x0bb", "white space"),
                                          ("a\x85b", "control character"), ("a\u2028b", "control character"),
                                          ("a\x1cb", "control character")])
def test_ids_files_still_refuse_ascii_white_space_and_control_characters(tmp_path, bad, message):
    from evalcore.errors import InputFormatError
    from evalcore.io import read_token_ids

    (tmp_path / "ids.txt").write_text(f"ok\n{bad}\n", encoding="utf-8", newline="")
    with pytest.raises(InputFormatError, match=message) as got:
        read_token_ids(tmp_path / "ids.txt")
    assert "line 2" in str(got.value)

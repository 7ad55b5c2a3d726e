"""Corpora in shards (evalcore.io.shards) searched in this process: the same top-k as one array.

The Dask backend's own tests (a LocalCluster) are in test_dask.py; everything here runs without dask.
"""

from __future__ import annotations

import pickle
import sys
import warnings

import numpy as np
import pytest
from retrieval_support import assert_same, brute_topk, tie_heavy, write_shards

from evalcore.cli import main as cli_main
from evalcore.errors import (
    DuplicateIdError,
    EmptyInputError,
    EvalcoreWarning,
    InputFormatError,
    NonFiniteValueError,
    ShapeMismatchError,
    UnsafeFileError,
    ValueTypeError,
)
from evalcore.io import ShardSet, is_shard_spec, load_embeddings, open_shards, shard_embeddings
from evalcore.io.shards import list_shard_files, single_shard
from evalcore.retrieval import exact_topk, normalize
from evalcore.retrieval.sharded import Partial, merge_partials, plan_pieces


# ----------------------------------------------------------------------------- the reader
def test_shards_are_listed_in_natural_order_and_read_as_one_array(tmp_path):
    rng = np.random.default_rng(1)
    c, ids = tie_heavy(rng, 60)
    folder = tmp_path / "s"
    folder.mkdir()
    order = [(0, 7, "npy"), (7, 8, "npz"), (8, 30, "npz_c"), (30, 60, "npy")]
    names = ["part-1", "part-2", "part-10", "part-11"]  # natural order: 2 before 10
    for (a, b, kind), name in zip(order, names, strict=True):
        if kind == "npy":
            np.save(folder / f"{name}.npy", c[a:b])
            (folder / f"{name}_ids.txt").write_text("\n".join(ids[a:b]) + "\n")
        elif kind == "npz":
            np.savez(folder / f"{name}.npz", ids=ids[a:b], embeddings=c[a:b])
        else:
            np.savez_compressed(folder / f"{name}.npz", ids=ids[a:b], embeddings=c[a:b])
    (folder / "notes.txt").write_text("not a shard")
    assert [p.rsplit("/", 1)[1] for p in list_shard_files(folder)] == [
        "part-1.npy", "part-2.npz", "part-10.npz", "part-11.npy"]
    assert list_shard_files(str(folder / "part-1*")) == list_shard_files(folder)[:1] + list_shard_files(folder)[2:]
    shards = open_shards(folder)
    assert is_shard_spec(folder) and is_shard_spec(str(folder / "*.np?")) and not is_shard_spec(folder / "part-1.npy")
    assert shards.shape == (60, 6) and shards.shard_rows == (7, 1, 22, 30) and len(shards) == 60
    np.testing.assert_array_equal(shards.read_ids(), ids)
    np.testing.assert_array_equal(np.asarray(shards), c)
    rows = rng.integers(0, 60, size=40)
    np.testing.assert_array_equal(shards[rows], c[rows])
    np.testing.assert_array_equal(shards[5:33], c[5:33])
    np.testing.assert_array_equal(shards[-1], c[-1])
    # uncompressed archives are memory-mapped in place; compressed ones are read
    assert isinstance(shards.open_shard(1)[0], np.memmap) and shards.shards[2].data_offset is None
    np.testing.assert_array_equal(shards.open_shard(2)[0], c[8:30])
    # a ShardSet pickles as paths and sizes: the cached ids stay behind
    copy = pickle.loads(pickle.dumps(shards))
    assert copy._ids == [] and copy.shards == shards.shards
    np.testing.assert_array_equal(copy.read_ids(), ids)


_C = np.arange(24, dtype=np.float32).reshape(6, 4)
BROKEN_SHARDS = {  # what is done to two good shards (x0-x2 in part-0, x3-x5 in part-1), and the error
    "no ids": (lambda d: (d / "part-1_ids.txt").unlink(),
               InputFormatError, r"part-1\.npy: no ids file beside the shard"),
    "ids count": (lambda d: (d / "part-0_ids.txt").write_text("x0\nx1\n"),
                  ShapeMismatchError, r"part-0\.npy: 3 rows but 2 ids"),
    "dimension": (lambda d: np.save(d / "part-1.npy", np.zeros((3, 5), np.float32)),
                  ShapeMismatchError, r"part-1\.npy: 5 dimensions but the first shard .*part-0\.npy has 4"),
    "dtype": (lambda d: np.save(d / "part-1.npy", _C[3:].astype(np.float64)),
              ValueTypeError, r"part-1\.npy: dtype float64 but the first shard"),
    "duplicate id": (lambda d: (d / "part-1_ids.txt").write_text("x3\nx0\nx5\n"),
                     DuplicateIdError, r"id 'x0' appears in .*part-0\.npy and in .*part-1\.npy"),
    "empty ids file": (lambda d: (np.save(d / "part-1.npy", np.zeros((0, 4), np.float32)),
                                  (d / "part-1_ids.txt").write_text("")),
                       EmptyInputError, r"part-1_ids\.txt: holds no ids"),
    "empty shard": (lambda d: np.savez(d / "part-2.npz", ids=np.array([], dtype=str),
                                       embeddings=np.zeros((0, 4), np.float32)),
                    EmptyInputError, r"part-2\.npz: the shard has no rows"),
    "npz without ids": (lambda d: np.savez(d / "part-2.npz", embeddings=_C),
                        InputFormatError, r"part-2\.npz: a \.npz shard needs arrays 'ids' and 'embeddings'"),
    "npz object ids": (lambda d: np.savez(d / "part-2.npz", ids=np.array(["a"] * 6, dtype=object), embeddings=_C),
                       UnsafeFileError, r"part-2\.npz"),
    "npz truncated": (lambda d: (d / "part-2.npz").write_bytes(b"PK\x03\x04 truncated"),
                      UnsafeFileError, r"part-2\.npz: truncated or corrupt"),
}


@pytest.mark.parametrize("case", list(BROKEN_SHARDS))
def test_shard_errors_name_the_file(tmp_path, case):
    write_shards(tmp_path, _C, [f"x{i}" for i in range(6)], [0, 3, 6])
    assert open_shards(tmp_path).shape == (6, 4)
    breaking, error, message = BROKEN_SHARDS[case]
    breaking(tmp_path)
    with pytest.raises(error, match=message):
        open_shards(tmp_path)


def test_no_shard_at_all():
    with pytest.raises(EmptyInputError, match="no .npy or .npz shard"):
        open_shards("/nonexistent/nothing*.npy")


# ----------------------------------------------------------------------------- the search
@pytest.mark.parametrize("normalized", [False, True])
def test_sharded_search_is_the_single_array_search(tmp_path, normalized):
    rng = np.random.default_rng(2)
    c, ids = tie_heavy(rng, 1500)
    c[700:760] = c[:60]  # exact copies of shard 0's rows in shards further on: ties across shards
    if normalized:
        c = normalize(c)
    # uneven shards: one row, fewer rows than k, large ones; .npy, uncompressed and compressed .npz
    shards = open_shards(tmp_path / "s" if write_shards(tmp_path / "s", c, ids, [0, 1, 9, 700, 1100, 1500],
                                                        kinds=["npy", "npz", "npz_c"]) else None)
    q = np.vstack([c[:40], rng.integers(-2, 3, size=(20, 6)).astype(np.float32)])
    q[3] = 0  # an all-zero query
    qids = np.concatenate([ids[:40], ids[700:710], [f"absent{i}" for i in range(10)]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        for k, excl in ((25, True), (10, False)):
            kw = dict(query_ids=qids, exclude_self=excl, normalized=normalized, block_bytes=2**16)
            got = exact_topk(q, shards, k, **kw)
            assert_same(got, (exact_topk(q, c, k, corpus_ids=ids, **kw).indices,
                              exact_topk(q, c, k, corpus_ids=ids, **kw).scores))
            if not normalized:
                assert_same(got, brute_topk(q, c, k, ids, qids, exclude_self=excl))
        # the shards as their own queries (item-to-item over everything), one thread and several
        one = exact_topk(c, c, 4, corpus_ids=ids, query_ids=ids, exclude_self=True, normalized=normalized)
        for threads in (1, 3):
            whole = exact_topk(shards, shards, 4, query_ids=ids, exclude_self=True, threads=threads,
                               normalized=normalized)
            assert_same(whole, (one.indices, one.scores))


def test_exact_ties_across_shards_break_by_the_id_string(tmp_path):
    # every document is the same vector: the top-k is the k smallest ids in string order,
    # wherever their shards are ("d10" < "d9"; shard order is not id order)
    ids = np.array([f"d{x}" for x in (9, 30, 100, 10, 2, 1000, 11, 0, 31, 5)])
    c = np.ones((10, 3), np.float32)
    shards = open_shards(tmp_path / "s" if write_shards(tmp_path / "s", c, ids, [0, 3, 4, 9, 10]) else None)
    got = exact_topk(np.ones((2, 3)), shards, 6, query_ids=["d100", "zz"], exclude_self=True)
    assert got.doc_ids().tolist() == [["d0", "d10", "d1000", "d11", "d2", "d30"],
                                      ["d0", "d10", "d100", "d1000", "d11", "d2"]]
    assert (got.scores == got.scores[0, 0]).all()


def test_merge_of_partials_is_any_grouping():
    # top-k of a union = top-k of the union of the parts' top-k, in any order and grouping
    rng = np.random.default_rng(4)
    parts = []
    for p in range(5):
        rows = rng.permutation(40)[:6] + 40 * p
        scores = rng.integers(0, 3, size=(3, 6)).astype(np.float32) / 2
        rows = np.tile(rows, (3, 1))
        if p == 2:
            rows[:, 4:] = -1  # padding of a small piece
            scores[:, 4:] = -np.inf
        order = np.lexsort((np.char.add("d", rows.astype(str)), -scores), axis=1)
        take = np.take_along_axis
        r = take(rows, order, axis=1)
        parts.append(Partial(r, take(scores, order, axis=1), np.where(r >= 0, np.char.add("d", r.astype(str)), ""), p))
    left = parts[0]
    for p in parts[1:]:
        left = merge_partials(left, p, 6)
    tree = merge_partials(merge_partials(parts[3], parts[1], 6), merge_partials(parts[4], merge_partials(
        parts[0], parts[2], 6), 6), 6)
    for a, b in ((left.rows, tree.rows), (left.scores, tree.scores), (left.ids, tree.ids)):
        np.testing.assert_array_equal(a, b)
    assert left.zeros == tree.zeros == 10
    allr = np.hstack([p.rows for p in parts])
    alls = np.hstack([p.scores for p in parts])
    for q in range(3):
        valid = allr[q] >= 0
        best = sorted(zip(-alls[q][valid], [f"d{x}" for x in allr[q][valid]], strict=True))[:6]
        assert [f"d{x}" for x in left.rows[q]] == [x for _, x in best]


def test_pieces_cut_shards_evenly_and_never_join_them():
    assert [(p.shard, p.start, p.stop, p.offset) for p in plan_pieces((5, 12, 1), 4)] == [
        (0, 0, 2, 0), (0, 2, 5, 2), (1, 0, 4, 5), (1, 4, 8, 9), (1, 8, 12, 13), (2, 0, 1, 17)]
    assert len(plan_pieces((5, 12, 1))) == 3


def test_a_nan_row_names_its_shard(tmp_path):
    c = np.ones((20, 4), np.float32)
    c[13, 2] = np.nan
    shards = open_shards(tmp_path / "s" if write_shards(tmp_path / "s", c, [f"x{i}" for i in range(20)],
                                                        [0, 10, 20]) else None)
    with pytest.raises(NonFiniteValueError, match=r"part-1\.npy: .*NaN.*'x13'.*rows 10-19 of the corpus"):
        exact_topk(np.ones((2, 4)), shards, 3)


def test_corpus_ids_of_shards_are_their_own(tmp_path):
    c = np.eye(4, dtype=np.float32)
    shards = open_shards(tmp_path / "s" if write_shards(tmp_path / "s", c, list("abcd"), [0, 2, 4]) else None)
    assert exact_topk(c[:1], shards, 2, corpus_ids=list("abcd")).doc_ids().tolist() == [["a", "b"]]
    with pytest.raises(ShapeMismatchError, match="differ from the ids of the shards"):
        exact_topk(c[:1], shards, 2, corpus_ids=list("abdc"))
    with pytest.raises(Exception, match="corpus_ids is required"):
        exact_topk(c[:1], c, 2)


# ----------------------------------------------------------------------------- embeddings and the CLI
def test_shard_embeddings_rank_as_the_file(tmp_path):
    from evalcore.embedding_runs import embedding_run

    rng = np.random.default_rng(5)
    c, ids = tie_heavy(rng, 300)
    np.savez(tmp_path / "all.npz", ids=ids, embeddings=c)
    write_shards(tmp_path / "s", c, ids, [0, 100, 101, 300], kinds=["npz", "npy"])
    sharded = shard_embeddings(tmp_path / "s")
    assert isinstance(sharded.vectors, ShardSet) and sharded.dim == 6 and len(sharded) == 300
    np.testing.assert_array_equal(sharded.subset(ids[[5, 200]]).vectors, c[[5, 200]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        whole = load_embeddings(tmp_path / "all.npz")
        wanted = ids[rng.integers(0, 300, size=30)]
        for a, b in ((embedding_run(sharded, k=9, query_ids=wanted), embedding_run(whole, k=9, query_ids=wanted)),
                     (embedding_run(sharded, k=5), embedding_run(whole, k=5))):
            np.testing.assert_array_equal(a.query_ids[a.q], b.query_ids[b.q])
            np.testing.assert_array_equal(a.doc_ids, b.doc_ids)
            np.testing.assert_array_equal(a.scores, b.scores)
    one = shard_embeddings(tmp_path / "s" / "part-1.npy", tmp_path / "s" / "part-1_ids.txt")
    assert one.vectors.shard_rows == (1,) and one.ids.tolist() == [ids[100]]
    assert single_shard(tmp_path / "s" / "part-1.npy", tmp_path / "s" / "part-1_ids.txt").shape == (1, 6)


def test_topk_command_on_shards_writes_the_same_run(tmp_path, capsys):
    rng = np.random.default_rng(6)
    c, ids = tie_heavy(rng, 800)
    np.save(tmp_path / "all.npy", c)
    (tmp_path / "all_ids.txt").write_text("\n".join(ids) + "\n")
    write_shards(tmp_path / "s", c, ids, [0, 3, 400, 800])
    q = rng.integers(-2, 3, size=(30, 6)).astype(np.float32)
    np.save(tmp_path / "q.npy", q)
    (tmp_path / "q_ids.txt").write_text("".join(f"q{i}\n" for i in range(30)))
    common = ["--queries", str(tmp_path / "q.npy"), "--query-ids", str(tmp_path / "q_ids.txt"), "--k", "30",
              "--block-mb", "1"]
    assert cli_main(["topk", "--docs", str(tmp_path / "all.npy"), "--doc-ids", str(tmp_path / "all_ids.txt"),
                     *common, "--quiet", "--out", str(tmp_path / "one.trec")]) == 0
    assert cli_main(["topk", "--docs", str(tmp_path / "s"), *common, "--out", str(tmp_path / "dir.trec")]) == 0
    assert "blocks" in capsys.readouterr().err  # the progress bar follows the blocks of every shard
    assert cli_main(["topk", "--docs", str(tmp_path / "s" / "part-*.npy"), *common, "--quiet",
                     "--out", str(tmp_path / "glob.trec")]) == 0
    assert cli_main(["topk", "--docs", str(tmp_path / "s"), "--k", "5", "--exclude-self", "--quiet",
                     "--out", str(tmp_path / "i2i_s.trec")]) == 0
    assert cli_main(["topk", "--docs", str(tmp_path / "all.npy"), "--doc-ids", str(tmp_path / "all_ids.txt"),
                     "--k", "5", "--exclude-self", "--quiet", "--out", str(tmp_path / "i2i.trec")]) == 0
    one = (tmp_path / "one.trec").read_bytes()
    assert one == (tmp_path / "dir.trec").read_bytes() == (tmp_path / "glob.trec").read_bytes()
    assert (tmp_path / "i2i.trec").read_bytes() == (tmp_path / "i2i_s.trec").read_bytes()
    assert cli_main(["topk", "--docs", str(tmp_path / "s"), "--doc-ids", str(tmp_path / "all_ids.txt"),
                     "--quiet", "--out", str(tmp_path / "x.trec")]) == 2
    np.save(tmp_path / "lone.npy", c)  # no ids file beside it (all.npy has all_ids.txt)
    assert cli_main(["topk", "--docs", str(tmp_path / "lone.npy"), "--quiet", "--out", str(tmp_path / "x.trec")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error")]
    assert err[0] == ("error: --doc-ids goes with a single .npy file; shards carry their ids (X_ids.txt beside each "
                      ".npy, or 'ids' in each .npz)")
    assert err[1].startswith("error: ") and "lone.npy" in err[1] and "lone_ids.txt" in err[1]
    # a single .npy with its ids file beside it needs no --doc-ids (as evaluate --emb)
    assert cli_main(["topk", "--docs", str(tmp_path / "all.npy"), "--k", "5", "--exclude-self", "--quiet",
                     "--out", str(tmp_path / "beside.trec")]) == 0
    assert (tmp_path / "beside.trec").read_bytes() == (tmp_path / "i2i.trec").read_bytes()


def test_evaluate_emb_on_shards_gives_the_same_table(tmp_path):
    rng = np.random.default_rng(7)
    c, ids = tie_heavy(rng, 400)
    np.savez(tmp_path / "all.npz", ids=ids, embeddings=c)
    write_shards(tmp_path / "s", c, ids, [0, 150, 400], kinds=["npz"])
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{ids[i]} 0 {ids[(i * 7) % 400]} 1\n" for i in range(0, 400, 9)))
    out = {}
    for name, emb in (("file", tmp_path / "all.npz"), ("shards", tmp_path / "s")):
        assert cli_main(["evaluate", "--qrels", str(qrels), "--emb", f"m={emb}", "--metrics", "ndcg", "recall",
                         "--k", "5", "10", "--ties", "docid_asc", "--out", str(tmp_path / name)]) == 0
        out[name] = (tmp_path / name / "per_query.csv").read_bytes()
    assert out["file"] == out["shards"] and len(out["file"]) > 100


def test_dask_flag_without_dask_says_how_to_install(tmp_path, monkeypatch, capsys):
    write_shards(tmp_path / "s", np.eye(3, dtype=np.float32), list("abc"), [0, 3])
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails as if not installed
    assert cli_main(["topk", "--docs", str(tmp_path / "s"), "--k", "2", "--out", str(tmp_path / "r.trec"),
                     "--dask", "local:2"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: Dask is not installed: in evalcore's folder, pip install -e "
                                               "'.[dask]'")
    assert "evalcore is not on PyPI" in err[0]  # `pip install 'evalcore[dask]'` installs another project
    assert not (tmp_path / "r.trec").exists()


def test_evaluate_shards_into_a_workspace_records_the_ranking(tmp_path, capsys):
    """The corpus of shards is not copied into the workspace: its run is recorded as the ranking computed (was:
    'Is a directory' after the results, exit 1, nothing recorded; every sharded run with EVALCORE_WORKSPACE set)."""
    from evalcore.workspace import Workspace

    rng = np.random.default_rng(5)
    c = rng.normal(size=(60, 4)).astype(np.float32)
    ids = np.array([f"d{i}" for i in range(60)])
    write_shards(tmp_path / "s", c, ids, [0, 25, 60])
    np.save(tmp_path / "q.npy", c[:10])
    (tmp_path / "q_ids.txt").write_text("".join(f"q{i}\n" for i in range(10)))
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(10)))
    args = ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--emb", f"dense={tmp_path / 's'},{tmp_path / 'q.npy'}",
            "--k", "5", "--ties", "docid_asc", "--workspace", str(tmp_path / "ws"), "--out", str(tmp_path / "out")]
    assert cli_main(args) == 0
    assert "recorded the ground truth, 1 run" in capsys.readouterr().out
    ws = Workspace.open(tmp_path / "ws")
    (rec,) = ws.run_records()
    assert rec.kind == "ranked" and "sharded corpus" in rec.source_name
    top = exact_topk(c[:10], open_shards(tmp_path / "s"), 60, query_ids=[f"q{i}" for i in range(10)])
    stored = ws.load_run("dense")
    want = sorted((f"q{i}", str(d)) for i in range(10) for d in top.doc_ids()[i])
    got = zip(stored.query_ids[stored.q].tolist(), stored.docs_at(np.arange(len(stored.q))).tolist(), strict=True)
    assert sorted(got) == want
    assert cli_main(args) == 0  # again: the same run, kept
    assert "1 already there with the same content: kept" in capsys.readouterr().out


@pytest.mark.parametrize("decimals", [None, 1, 0])
def test_the_merge_order_is_lexsort_by_score_then_id(decimals):
    """merge_partials sorts by score alone where a row has no exact tie (stable float sort, near linear on two
    sorted lists) and by the strings where it has one: always np.lexsort((ids, -score)), padding included."""
    from evalcore.retrieval.sharded import _order

    rng = np.random.default_rng(0 if decimals is None else 10 + decimals)
    for _ in range(30):
        nq, w = 25, int(rng.integers(1, 60))
        scores = rng.normal(size=(nq, w))
        if decimals is not None:
            scores = np.round(scores, decimals)
        pad = rng.random((nq, w)) < 0.15
        neg = np.where(pad, np.inf, -scores)
        ids = np.where(pad, "", np.array([f"d{x}" for x in rng.integers(0, 50, size=nq * w)]).reshape(nq, w))
        assert (_order(neg, ids) == np.lexsort((ids, neg), axis=1)).all()

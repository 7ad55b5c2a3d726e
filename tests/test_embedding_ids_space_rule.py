"""Embedding files read ids by the rule of every id reader: ASCII white space only is stripped around an id; a
non-breaking or another Unicode space is part of it (``tests/test_ids_space_rule.py``,
``tests/test_table_ids_space_rule.py``); and ``save_embeddings`` writes, in every format, only what reads back.

Before, the embedding readers disagreed: the CSV reader and the ids file beside a ``.npy`` stripped ASCII white
space, the Parquet, ``.npz`` and JSON readers kept it, so `` d1`` saved by ``save_embeddings`` read back as ``d1``
from CSV or ``.npy`` but as `` d1`` from Parquet, ``.npz`` or JSON: the same vectors gave other documents by format.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.errors import DuplicateIdError, InputFormatError
from evalcore.io import Embeddings, load_embeddings, save_embeddings
from evalcore.io.source import ASCII_WS

UNICODE_SPACES = "\u00a0\u1680\u2000\u2003\u2007\u2009\u202f\u205f\u3000"
_CHAR = st.one_of(st.sampled_from(UNICODE_SPACES + " "),
                  st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Zs")))
#: An id as a writer may write it: Unicode spaces often at its ends, an ASCII space inside only
ID = st.text(_CHAR, min_size=1, max_size=6).filter(lambda s: s == s.strip(ASCII_WS))
FORMATS = ("e.npz", "e.npy", "e.parquet", "e.csv", "e.tsv", "e.json")


def _raw_file(tmp_path: Path, name: str, ids: list[str], vecs: np.ndarray) -> Path:
    """``ids`` and ``vecs`` written as another tool writes them (no evalcore writer: it refuses padded ids)."""
    path = tmp_path / name
    if name.endswith(".npz"):
        np.savez(path, ids=np.array(ids), embeddings=vecs)
    elif name.endswith(".npy"):
        np.save(path, vecs)
        (tmp_path / f"{name[:-4]}_ids.txt").write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
    elif name.endswith(".parquet"):
        pq.write_table(pa.table({"id": ids, "embedding": [list(map(float, v)) for v in vecs]}), path)
    elif name.endswith((".csv", ".tsv")):
        frame = pd.DataFrame(vecs, columns=[f"c{j}" for j in range(vecs.shape[1])])
        frame.insert(0, "id", ids)
        frame.to_csv(path, index=False, sep="\t" if name.endswith(".tsv") else ",")
    else:
        path.write_text(json.dumps(dict(zip(ids, vecs.tolist(), strict=True))), encoding="utf-8")
    return path


@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(st.lists(ID, min_size=1, max_size=6, unique=True))
def test_embeddings_read_back_with_the_same_ids_through_every_format(tmp_path_factory, ids) -> None:
    """Saved and read back through every format in turn (each one's output the next one's input): the very ids
    and vectors, Unicode spaces at the ends of ids included."""
    tmp = tmp_path_factory.mktemp("emb")
    vecs = np.arange(1, 2 * len(ids) + 1, dtype=np.float32).reshape(len(ids), 2)
    emb = Embeddings.from_arrays(ids, vecs)
    for name in (*FORMATS, *reversed(FORMATS)):
        save_embeddings(emb, tmp / name)
        back = load_embeddings(tmp / name)
        assert back.ids.tolist() == ids, name
        assert np.array_equal(back.vectors, vecs), name
        emb = back


@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(ID, st.sampled_from(["", " ", "\t", " \r", "\x0b", "\x0c "]),
                          st.sampled_from(["", " ", "\t", "  "])), min_size=1, max_size=5, unique_by=lambda t: t[0]))
def test_ascii_white_space_around_an_id_is_stripped_by_every_embedding_format(tmp_path_factory, padded) -> None:
    """The same ids, padded with ASCII white space by another tool, read as the same ids from every format (the
    ``.npz`` twice: read whole, and with its vectors memory-mapped)."""
    tmp = tmp_path_factory.mktemp("raw")
    ids = [i for i, _, _ in padded]
    raw = [f"{before}{i}{after}" for i, before, after in padded]
    vecs = np.eye(len(ids), dtype=np.float32) + 1
    for name in FORMATS:
        path = _raw_file(tmp, name, raw, vecs)
        for mmap in (False, True):
            assert load_embeddings(path, mmap=mmap).ids.tolist() == ids, (name, mmap)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("bad", [" d1", "d1 ", " "])
def test_save_embeddings_refuses_an_id_that_would_not_read_back_and_writes_nothing(tmp_path, name, bad) -> None:
    emb = Embeddings.from_arrays(["d0", bad], np.eye(2, dtype=np.float32))
    path = tmp_path / "out" / name
    with pytest.raises(InputFormatError) as info:
        save_embeddings(emb, path)
    assert str(info.value) == (f"{path}: id {bad!r} is empty or has surrounding ASCII white space and would not "
                               "read back"), str(info.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name,where", [("e.npz", " (row 2 of the array 'ids')"), ("e.parquet", " (row 2)"),
                                        ("e.json", " (a key of the object)")])
def test_an_id_of_ascii_white_space_only_is_refused_as_empty(tmp_path, name, where) -> None:
    path = _raw_file(tmp_path, name, ["d0", " \t"], np.eye(2, dtype=np.float32))
    with pytest.raises(InputFormatError) as info:
        load_embeddings(path)
    assert str(info.value) == f"{path}: empty id{where}", str(info.value)


@pytest.mark.parametrize("name", ["e.npz", "e.parquet", "e.json", "e.csv"])
def test_two_ids_the_same_once_stripped_are_one_id_given_twice(tmp_path, name) -> None:
    path = _raw_file(tmp_path, name, ["d1", " d1"], np.eye(2, dtype=np.float32))
    with pytest.raises(DuplicateIdError, match="id 'd1' appears twice"):
        load_embeddings(path)


def test_integer_ids_of_an_npz_are_still_read_as_their_text(tmp_path) -> None:
    np.savez(tmp_path / "e.npz", ids=np.array([7, 11]), embeddings=np.eye(2, dtype=np.float32))
    assert load_embeddings(tmp_path / "e.npz").ids.tolist() == ["7", "11"]


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.text(st.sampled_from("a\u00a0 \t\n\x00\x0b"), max_size=4), max_size=5))
def test_the_writers_check_refuses_exactly_the_ids_that_would_not_read_back(ids) -> None:
    """``refuse_unstripped_writes`` (one scan of the joined ids, then one by one) against its definition (imported
    here: the other tests of this file run on the code before it)."""
    from evalcore.io.source import refuse_unstripped_writes

    bad = next((s for s in ids if not s or s != s.strip(ASCII_WS)), None)
    if bad is None:
        refuse_unstripped_writes("x.csv", ("id", ids))
    else:
        with pytest.raises(InputFormatError) as info:
            refuse_unstripped_writes("x.csv", ("id", np.asarray(ids, dtype=object)))
        assert str(info.value).startswith(f"x.csv: id {bad!r} is empty"), str(info.value)


def test_a_categorical_parquet_id_column_is_stripped_alike(tmp_path) -> None:
    """A dictionary-encoded id column (pandas' category dtype, written as Parquet) kept its ASCII white space."""
    ids = pa.array([" d1", "d2\u00a0", "\td3"]).dictionary_encode()
    pq.write_table(pa.table({"id": ids, "embedding": np.eye(3).tolist()}), tmp_path / "e.parquet")
    assert load_embeddings(tmp_path / "e.parquet").ids.tolist() == ["d1", "d2\u00a0", "d3"]

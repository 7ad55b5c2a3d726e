"""Embedding files: every format, round trips, bytes input, and every validation error's message."""

from __future__ import annotations

import io
import json
import pickle
import zipfile

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import (
    DuplicateIdError,
    EmptyInputError,
    EvalcoreWarning,
    InputFormatError,
    MissingColumnError,
    NonFiniteValueError,
    ShapeMismatchError,
    UnreadableFileError,
    UnsafeFileError,
    ValueTypeError,
)
from evalcore.io import Embeddings, load_embeddings, read_ids, save_embeddings

IDS = ["doc-1", "doc-2", "doc-3"]
VECS = np.array([[0.1, 0.2, 0.3, 0.4], [1.5, -2.25, 3.0, 1e-8], [-0.5, 0.0, 7.0, 1.0]], dtype=np.float32)
FORMATS = ["x.npz", "x.npy", "x.parquet", "x.csv", "x.tsv", "x.json"]


@pytest.fixture()
def emb() -> Embeddings:
    return Embeddings.from_arrays(IDS, VECS, source="mem")


# ----------------------------------------------------------------------------- formats
@pytest.mark.parametrize("name", FORMATS)
def test_round_trip_every_format(emb, tmp_path, name):
    files = save_embeddings(emb, tmp_path / name)
    got = load_embeddings(files[0])
    assert got.ids.tolist() == IDS and got.ids.dtype == object
    assert got.vectors.dtype == np.float32 and got.vectors.shape == (3, 4)
    np.testing.assert_array_equal(got.vectors, VECS)  # exact, float32 preserved
    assert got.source == str(files[0])


@pytest.mark.parametrize("name", FORMATS)
def test_bytes_input_with_file_name(emb, tmp_path, name):
    files = save_embeddings(emb, tmp_path / name)
    ids_bytes = files[1].read_bytes() if len(files) > 1 else None
    got = load_embeddings(files[0].read_bytes(), label=f"upload/{name}", ids_src=ids_bytes)
    assert got.ids.tolist() == IDS and got.source == f"upload/{name}"
    np.testing.assert_array_equal(got.vectors, VECS)
    # a binary stream works the same way
    got2 = load_embeddings(io.BytesIO(files[0].read_bytes()), label=name, ids_src=ids_bytes)
    np.testing.assert_array_equal(got2.vectors, VECS)


@pytest.mark.parametrize("name", ["x.npz", "x.npy", "x.parquet", "x.json"])
def test_bytes_format_detected_from_content(emb, tmp_path, name):
    files = save_embeddings(emb, tmp_path / name)
    ids_bytes = files[1].read_bytes() if len(files) > 1 else None
    got = load_embeddings(files[0].read_bytes(), ids_src=ids_bytes)  # no file name
    np.testing.assert_array_equal(got.vectors, VECS)


def test_npy_ids_file_conventions_and_mmap(emb, tmp_path):
    np.save(tmp_path / "a.npy", VECS)
    (tmp_path / "a.ids.txt").write_text("doc-1\r\ndoc-2\r\ndoc-3\r\n\n")
    got = load_embeddings(tmp_path / "a.npy", mmap=True)
    assert got.ids.tolist() == IDS and isinstance(got.vectors, np.memmap)
    assert not got.vectors.flags.writeable
    np.save(tmp_path / "b.npy", VECS.astype(np.float64))
    (tmp_path / "elsewhere.txt").write_text("\n".join(IDS))
    got = load_embeddings(tmp_path / "b.npy", ids_src=tmp_path / "elsewhere.txt", mmap=True)
    assert got.vectors.dtype == np.float32
    np.testing.assert_array_equal(got.vectors, VECS)


def test_npz_with_integer_ids_and_vectors_key(tmp_path):
    np.savez(tmp_path / "i.npz", ids=np.array([10, 20, 30]), vectors=VECS.astype(np.float16))
    got = load_embeddings(tmp_path / "i.npz")
    assert got.ids.tolist() == ["10", "20", "30"] and got.vectors.dtype == np.float32


def test_csv_with_a_list_column_and_named_id_column(tmp_path):
    p = tmp_path / "l.csv"
    p.write_text('movie_id,title,embedding\n' + "".join(
        f'{i},"t {i}","{json.dumps(v.tolist())}"\n' for i, v in zip(IDS, VECS, strict=True)))
    got = load_embeddings(p)  # other columns (a title) beside the list column are ignored
    np.testing.assert_array_equal(got.vectors, VECS)
    p.write_text('movie_id,embedding\n' + "".join(
        f'{i},"{json.dumps(v.tolist())}"\n' for i, v in zip(IDS, VECS, strict=True)))
    got = load_embeddings(p)
    assert got.ids.tolist() == IDS
    np.testing.assert_array_equal(got.vectors, VECS)


def test_parquet_with_one_column_per_dimension(tmp_path):
    frame = pd.DataFrame(VECS, columns=["f0", "f1", "f2", "f3"])
    frame.insert(0, "doc_id", IDS)
    frame.to_parquet(tmp_path / "d.parquet")
    got = load_embeddings(tmp_path / "d.parquet")
    assert got.ids.tolist() == IDS
    np.testing.assert_array_equal(got.vectors, VECS)


def test_parquet_variable_list_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": IDS, "vec": [v.tolist() for v in VECS]}), tmp_path / "v.parquet")
    np.testing.assert_array_equal(load_embeddings(tmp_path / "v.parquet").vectors, VECS)
    pq.write_table(pa.table({"id": IDS, "vec": [[1.0, 2.0], [1.0], [3.0, 4.0]]}), tmp_path / "r.parquet")
    with pytest.raises(ShapeMismatchError, match=r"r.parquet.*id 'doc-2' has 1 values but the first \('doc-1'\) has 2"):
        load_embeddings(tmp_path / "r.parquet")


def test_read_ids_rejects_blank_lines(tmp_path):
    p = tmp_path / "ids.txt"
    p.write_text("a\n\nb\n")
    with pytest.raises(InputFormatError, match=r"ids.txt, line 2: empty id"):
        read_ids(p)
    assert read_ids(b"x\ny\n").tolist() == ["x", "y"]


# ----------------------------------------------------------------------------- unsafe / corrupt
def test_object_arrays_are_refused_never_unpickled(tmp_path):
    np.save(tmp_path / "o.npy", np.array([[1, "a"]], dtype=object), allow_pickle=True)
    (tmp_path / "o_ids.txt").write_text("x\n")
    for mmap in (False, True):  # memory-mapped (the CLI's way): numpy says so in other words
        with pytest.raises(UnsafeFileError, match=r"o.npy: .npy file holds Python objects .*refusing to unpickle"):
            load_embeddings(tmp_path / "o.npy", mmap=mmap)
    np.savez(tmp_path / "o.npz", ids=np.array(IDS, dtype=object), embeddings=VECS)
    with pytest.raises(UnsafeFileError, match=r"o.npz: .*Python objects"):
        load_embeddings(tmp_path / "o.npz")


def test_pickle_renamed_npy_is_refused(tmp_path):
    (tmp_path / "p.npy").write_bytes(pickle.dumps({"a": [1.0]}))
    (tmp_path / "p_ids.txt").write_text("a\n")
    with pytest.raises(UnsafeFileError, match="pickle"):
        load_embeddings(tmp_path / "p.npy")
    (tmp_path / "t.npy").write_text("hello")
    with pytest.raises(InputFormatError, match="not a .npy file"):
        load_embeddings(tmp_path / "t.npy")


@pytest.mark.parametrize("mmap", [False, True])
def test_truncated_npy(tmp_path, mmap):
    np.save(tmp_path / "full.npy", VECS)
    raw = (tmp_path / "full.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(raw[: len(raw) - 10])
    (tmp_path / "cut_ids.txt").write_text("\n".join(IDS))
    with pytest.raises(UnsafeFileError, match=r"cut.npy: truncated or corrupt .npy"):
        load_embeddings(tmp_path / "cut.npy", mmap=mmap)
    with pytest.raises(UnsafeFileError, match=r"upload.npy: truncated or corrupt"):
        load_embeddings(raw[: len(raw) - 10], label="upload.npy", ids_src=b"a\nb\nc\n")


def test_truncated_and_corrupt_npz(emb, tmp_path):
    save_embeddings(emb, tmp_path / "e.npz")
    raw = (tmp_path / "e.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(UnsafeFileError, match=r"cut.npz: truncated or corrupt .npz"):
        load_embeddings(tmp_path / "cut.npz")
    # a zip whose member is damaged
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("ids.npy", b"\x93NUMPY garbage")
        z.writestr("embeddings.npy", b"\x93NUMPY garbage")
    with pytest.raises(UnsafeFileError, match=r"bad.npz: truncated or corrupt"):
        load_embeddings(buf.getvalue(), label="bad.npz")


def test_npz_without_the_expected_arrays(tmp_path):
    np.savez(tmp_path / "k.npz", names=np.array(IDS), data=VECS)
    with pytest.raises(InputFormatError, match=r"k.npz: .*'ids' and 'embeddings'.*\['names', 'data'\]"):
        load_embeddings(tmp_path / "k.npz")


# ----------------------------------------------------------------------------- validation errors
def test_ids_and_rows_differ_in_number(tmp_path):
    np.save(tmp_path / "m.npy", VECS)
    (tmp_path / "m_ids.txt").write_text("a\nb\n")
    with pytest.raises(ShapeMismatchError, match=r"m.npy: 3 vectors but 2 ids in .*m_ids.txt"):
        load_embeddings(tmp_path / "m.npy")
    np.savez(tmp_path / "m.npz", ids=np.array(["a", "b"]), embeddings=VECS)
    with pytest.raises(ShapeMismatchError, match=r"m.npz: 3 rows in 'embeddings' but 2 ids"):
        load_embeddings(tmp_path / "m.npz")


def test_npy_without_ids_file(tmp_path):
    np.save(tmp_path / "lonely.npy", VECS)
    with pytest.raises(InputFormatError, match=r"lonely.npy: no ids file.*lonely_ids.txt or lonely.ids.txt"):
        load_embeddings(tmp_path / "lonely.npy")
    with pytest.raises(InputFormatError, match="needs its ids file"):
        load_embeddings((tmp_path / "lonely.npy").read_bytes(), label="lonely.npy")


@pytest.mark.parametrize("name", FORMATS)
def test_duplicate_id_is_named(tmp_path, name):
    if name.endswith(".json"):
        p = tmp_path / name
        p.write_text('{"doc-1": [1, 2], "doc-2": [3, 4], "doc-1": [5, 6]}')
    else:
        p = save_embeddings(Embeddings(np.array(["doc-1", "doc-2", "doc-1"], dtype=object), VECS), tmp_path / name)[0]
    # (a .npy holds no id: its ids file beside it, and the line, are named)
    where = f"{name[:-4]}_ids.txt, line 3" if name.endswith(".npy") else name
    with pytest.raises(DuplicateIdError, match=rf"{where}: id 'doc-1' appears twice"):
        load_embeddings(p)


def test_duplicate_ids_name_the_first_repeat_and_count_every_repeat():
    ids = ["a", "b", "b", "a", "c", "a"]
    vecs = np.arange(12, dtype=np.float32).reshape(6, 2) + 1
    with pytest.raises(DuplicateIdError, match=r"id 'b' appears twice \(3 duplicate ids\)"):
        Embeddings.from_arrays(ids, vecs, source="m.npy")
    emb = Embeddings.from_arrays(["x", "y", "z"], vecs[:3])
    np.testing.assert_array_equal(emb.rows_of(["z", "x"]), [2, 0])  # the id index, built when first asked for


@pytest.mark.parametrize("name", FORMATS)
def test_non_finite_values_name_the_first_id_and_the_count(tmp_path, name):
    bad = VECS.copy()
    bad[1, 2] = np.nan
    bad[2, 0] = np.inf
    p = save_embeddings(Embeddings(np.array(IDS, dtype=object), bad), tmp_path / name)[0]
    with pytest.raises(NonFiniteValueError, match=rf"{name}: vector of id 'doc-2' holds NaN or infinite values \(2 such"):
        load_embeddings(p)


def test_ragged_json_names_the_id(tmp_path):
    p = tmp_path / "r.json"
    p.write_text('{"a": [1, 2, 3], "b": [1, 2], "c": [1, 2, 3]}')
    with pytest.raises(ShapeMismatchError, match=r"r.json: vector of id 'b' has 2 values but the first \('a'\) has 3"):
        load_embeddings(p)


def test_json_shape_and_value_errors(tmp_path):
    p = tmp_path / "j.json"
    p.write_text('[[1, 2]]')
    with pytest.raises(InputFormatError, match=r"j.json: expected a JSON object"):
        load_embeddings(p)
    p.write_text('{"a": [1, "x"]}')
    with pytest.raises(ValueTypeError, match=r"j.json: vector of id 'a' holds 'x'"):
        load_embeddings(p)
    p.write_text('{"a": 3}')
    with pytest.raises(ValueTypeError, match=r"id 'a' is not a list"):
        load_embeddings(p)
    p.write_text('{"a": [1, 2],\n "b": [3, 4}')
    with pytest.raises(InputFormatError, match=r"j.json, line 2: invalid JSON"):
        load_embeddings(p)
    p.write_text("{}")
    with pytest.raises(EmptyInputError):
        load_embeddings(p)


def test_csv_value_errors(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("id,d0,d1\na,1,2\nb,3,oops\n")
    with pytest.raises(ValueTypeError, match=r"c.csv, line 3: column 'd1': value 'oops' of id 'b'"):
        load_embeddings(p)
    p.write_text("d0,d1\n1,2\n")
    with pytest.raises(MissingColumnError, match="no id column"):
        load_embeddings(p)


def test_zero_vectors_warn_with_the_count(tmp_path):
    v = VECS.copy()
    v[0] = 0
    v[2] = 0
    save_embeddings(Embeddings(np.array(IDS, dtype=object), v), tmp_path / "z.npz")
    with pytest.warns(EvalcoreWarning, match=r"z.npz: 2 all-zero vectors \(e.g. id 'doc-1'\)"):
        got = load_embeddings(tmp_path / "z.npz")
    assert len(got) == 3


def test_missing_empty_and_directory(tmp_path):
    with pytest.raises(UnreadableFileError, match=r"nope.npz: file not found"):
        load_embeddings(tmp_path / "nope.npz")
    with pytest.raises(UnreadableFileError, match="directory"):
        load_embeddings(tmp_path)
    (tmp_path / "empty.json").write_text("")
    with pytest.raises(EmptyInputError, match="empty.json"):
        load_embeddings(tmp_path / "empty.json")
    (tmp_path / "empty.npy").write_bytes(b"")
    with pytest.raises(EmptyInputError, match="empty.npy"):
        load_embeddings(tmp_path / "empty.npy")


def test_wrong_shapes():
    with pytest.raises(ShapeMismatchError, match="2-D"):
        Embeddings.from_arrays(["a"], np.zeros(3))
    with pytest.raises(ShapeMismatchError, match="1 ids but 2 vectors"):
        Embeddings.from_arrays(["a"], np.ones((2, 3)))
    with pytest.raises(ValueTypeError):
        Embeddings.from_arrays(["a"], np.array([["x"]]))


def test_subset_and_rows_of(emb):
    assert emb.rows_of(["doc-3", "zz"]).tolist() == [2, -1]
    sub = emb.subset(["doc-3", "doc-1"])
    assert sub.ids.tolist() == ["doc-3", "doc-1"]
    np.testing.assert_array_equal(sub.vectors, VECS[[2, 0]])


@pytest.mark.parametrize("ids", [[], np.array([])])
def test_empty_arrays_say_there_are_no_ids_not_a_dtype(ids):
    """np.asarray([]) is float64: an empty id list was refused as 'ids must be strings or integers, got dtype float64'."""
    from evalcore.errors import EmptyInputError

    with pytest.raises(EmptyInputError, match="no ids"):
        Embeddings.from_arrays(ids, np.zeros((0, 8), dtype=np.float32))

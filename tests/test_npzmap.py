"""Memory-mapped ``.npz`` vectors (evalcore.io.npzmap): the same embeddings as the ordinary read."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from evalcore.errors import EvalcoreWarning, NonFiniteValueError, UnsafeFileError
from evalcore.io import load_embeddings
from evalcore.io.npzmap import map_npz_member

RNG = np.random.default_rng(3)
IDS = np.array([f"d{i}" for i in range(50)] + ['q"x', "é", "12"])
VECS = RNG.standard_normal((len(IDS), 7)).astype(np.float32)


def _same(a, b) -> None:
    assert a.ids.tolist() == b.ids.tolist()
    assert a.vectors.dtype == b.vectors.dtype == np.float32
    assert np.array_equal(np.asarray(a.vectors), np.asarray(b.vectors))


@pytest.mark.parametrize("key", ["embeddings", "vectors"])
def test_savez_vectors_are_mapped_and_equal_the_read_ones(tmp_path, key):
    p = tmp_path / "e.npz"
    np.savez(p, **{"ids": IDS, key: VECS, "other": np.arange(3)})
    mapped = load_embeddings(p, mmap=True)
    assert isinstance(mapped.vectors, np.memmap) and not mapped.vectors.flags.writeable
    _same(mapped, load_embeddings(p))
    _same(mapped, load_embeddings(p.read_bytes(), label="e.npz", mmap=True))  # bytes: read, not mapped


def test_compressed_fortran_and_other_dtypes_are_read_the_ordinary_way(tmp_path):
    np.savez_compressed(tmp_path / "c.npz", ids=IDS, embeddings=VECS)
    got = load_embeddings(tmp_path / "c.npz", mmap=True)
    assert not isinstance(got.vectors, np.memmap)
    _same(got, load_embeddings(tmp_path / "c.npz"))
    np.savez(tmp_path / "f.npz", ids=IDS, embeddings=np.asfortranarray(VECS))
    got = load_embeddings(tmp_path / "f.npz", mmap=True)
    assert not isinstance(got.vectors, np.memmap)
    _same(got, load_embeddings(tmp_path / "f.npz"))
    np.savez(tmp_path / "h.npz", ids=IDS, embeddings=VECS.astype(np.float16))  # mapped, converted in memory
    _same(load_embeddings(tmp_path / "h.npz", mmap=True), load_embeddings(tmp_path / "h.npz"))
    with zipfile.ZipFile(tmp_path / "c.npz") as zf:
        assert map_npz_member(tmp_path / "c.npz", zf.getinfo("embeddings.npy"), name="c.npz") is None


def test_truncated_member_object_arrays_and_bad_values_are_refused(tmp_path):
    p = tmp_path / "t.npz"
    np.savez(p, ids=IDS, embeddings=VECS)
    raw = p.read_bytes()
    with zipfile.ZipFile(p) as zf:
        info = zf.getinfo("embeddings.npy")
    # the same archive whose vector member is cut short (its central directory intact)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(raw[: info.header_offset + 200])
    with pytest.raises(UnsafeFileError, match=r"cut.npz: truncated or corrupt .npz"):
        load_embeddings(cut, mmap=True)
    with pytest.raises(UnsafeFileError, match=r"truncated or corrupt"):
        map_npz_member(cut, info, name="cut.npz")
    np.savez(tmp_path / "o.npz", ids=IDS, embeddings=VECS.astype(object))
    with pytest.raises(UnsafeFileError, match=r"o.npz: .*Python objects"):
        load_embeddings(tmp_path / "o.npz", mmap=True)
    np.savez(tmp_path / "oi.npz", ids=IDS.astype(object), embeddings=VECS)
    with pytest.raises(UnsafeFileError, match=r"oi.npz: .*Python objects"):
        load_embeddings(tmp_path / "oi.npz", mmap=True)
    bad = VECS.copy()
    bad[4, 2] = np.nan
    bad[9] = 0.0
    np.savez(tmp_path / "n.npz", ids=IDS, embeddings=bad)
    with pytest.raises(NonFiniteValueError, match=r"id 'd4' holds NaN"):
        load_embeddings(tmp_path / "n.npz", mmap=True)
    bad[4, 2] = 1.0
    np.savez(tmp_path / "z.npz", ids=IDS, embeddings=bad)
    with pytest.warns(EvalcoreWarning, match=r"1 all-zero vectors \(e.g. id 'd9'\)"):
        load_embeddings(tmp_path / "z.npz", mmap=True)

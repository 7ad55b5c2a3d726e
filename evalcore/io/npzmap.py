"""A read-only memory map of one array stored uncompressed in a ``.npz`` archive.

``np.savez`` stores each array as a ``.npy`` file inside a zip archive without
compression (``ZIP_STORED``), so its bytes sit in the archive as they would in
a ``.npy`` file.  ``np.load`` nevertheless reads such a member through
``zipfile``: the whole member is copied (twice) and its CRC computed before
the array exists.  :func:`map_npz_member` instead maps the member's data
in place, as ``np.load(..., mmap_mode="r")`` does for a ``.npy`` file: nothing
is read until used, and a search can stream a corpus larger than memory.

Like a ``.npy`` file read in place, the member's CRC is not checked (its
length is: a member shorter than its header announces is an error).
Compressed members (``np.savez_compressed``), Fortran-ordered or empty arrays
and the version 3 header cannot be mapped: :func:`map_npz_member` returns
``None`` and the caller reads them the ordinary way.
"""

from __future__ import annotations

import os
import struct
import zipfile

import numpy as np

from ..errors import UnsafeFileError

__all__ = ["map_npz_member"]

_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, 22 bytes we skip, name length, extra length
_LOCAL_SIGNATURE = b"PK\x03\x04"
_READ_HEADER = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def map_npz_member(path: str | os.PathLike, info: zipfile.ZipInfo, *, name: str) -> np.ndarray | None:
    """``np.memmap`` (mode ``"r"``) of the ``.npy`` member ``info`` of the archive at ``path``, or None.

    Parameters
    ----------
    path : path of the ``.npz`` file
    info : the member, from ``zipfile.ZipFile(path).getinfo(...)``
    name : the file's name in messages

    Returns
    -------
    ndarray (a read-only ``np.memmap``) of the member's shape and dtype, or None
    when the member cannot be mapped (compressed or encrypted, Fortran order,
    no elements, header version 3): read it with ``np.load`` then.

    Raises
    ------
    UnsafeFileError
        An object (pickled) array; a member or file shorter than its header
        says (truncated); a broken local header.
    """
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        return None
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        head = fh.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or head[:4] != _LOCAL_SIGNATURE:
            raise UnsafeFileError(f"truncated or corrupt .npz archive (member {info.filename!r})", file=name)
        name_len, extra_len = _LOCAL_HEADER.unpack(head)[1:]
        start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        fh.seek(start)
        try:
            version = np.lib.format.read_magic(fh)
            reader = _READ_HEADER.get(version)
            if reader is None:
                return None
            shape, fortran, dtype = reader(fh)
        except ValueError as e:
            raise UnsafeFileError(f"truncated or corrupt .npz archive ({str(e).strip()})", file=name) from None
        offset = fh.tell()
        size = os.fstat(fh.fileno()).st_size
    if dtype.hasobject:
        raise UnsafeFileError(".npz archive holds Python objects (pickled object array); refusing to unpickle — "
                              "save ids as strings and vectors as floats", file=name)
    count = int(np.prod(shape, dtype=np.int64))
    if fortran or count == 0:
        return None
    nbytes = count * dtype.itemsize
    if offset - start + nbytes > info.file_size or offset + nbytes > size:
        raise UnsafeFileError(f"truncated or corrupt .npz archive (member {info.filename!r} holds "
                              f"{max(0, min(info.file_size - (offset - start), size - offset))} of its "
                              f"{nbytes} bytes)", file=name)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order="C")

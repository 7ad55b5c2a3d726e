"""Where every read starts: a path, bytes or a binary stream become bytes and a display name.

gzip-compressed input (recognised by its magic bytes ``1f 8b``, whatever its
name) is decompressed here, so every reader takes ``.gz`` qrels and runs; a
trailing ``.gz`` is ignored where the file name matters (format by extension,
a run named after its file).
"""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

# The id rule lives with the data model's input checks (layer 1: its constructors refuse such ids too);
# re-exported here, where every reader and writer has always taken it from.
from .._checks import (  # noqa: F401
    _ID_BREAKING,
    LINE_BREAKS,
    broken_id_text,
    first_broken_id,
    refuse_broken_ids,
)
from ..errors import (
    BinaryFileError,
    EmptyInputError,
    InputFormatError,
    OptionError,
    UnreadableFileError,
    UnsafeFileError,
)

__all__ = ["read_source", "source_filename", "decode_text", "read_bytes", "file_stem", "GZIP_MAGIC",
           "first_broken_id", "LINE_BREAKS", "broken_id_text", "refuse_broken_ids",
           "refuse_broken_writes", "ASCII_WS", "strip_ascii_ws", "strip_ids", "refuse_unstripped_writes",
           "run_name_of_file"]

#: the first two bytes of gzip data (RFC 1952)
GZIP_MAGIC = b"\x1f\x8b"

Source = str | os.PathLike | bytes | IO[bytes]
PathOrBytes = Source
#: White space that cannot appear inside a one-token id of a line (a TREC field; ``topk``'s ``--tag`` and its
#: one-id-per-line files): ASCII's, which separates TREC fields as trec_eval separates them (:data:`.trec._WS`),
#: line ends aside (they end the line or the id). Other white space (a non-breaking space, U+3000...) is part of an
#: id, as the TREC readers read it and the TREC writers write it; control characters and line separators (U+0085,
#: U+2028...) are refused by :func:`refuse_broken_ids`.
_TOKEN_WS = re.compile(r"[ \t\f\v]")
#: The white space a lenient reader strips around an id (an embedding id file, an embedding CSV's id column):
#: ASCII's, as :data:`_TOKEN_WS` and the TREC readers separate fields; a non-breaking or another Unicode space
#: stays part of the id, so that one id file gives the same ids by every path.
ASCII_WS = " \t\n\r\f\v"


def strip_ascii_ws(values: Any) -> Any:
    """A pyarrow string array with :data:`ASCII_WS` stripped around each value (``str.strip(ASCII_WS)`` of every
    cell): the id rule of the table readers (CSV/TSV/Parquet), as of the TREC, ids-file, JSON and query-text
    readers; a non-breaking or another Unicode space stays part of the value (``pyarrow.compute.utf8_trim_whitespace``
    would strip it)."""
    import pyarrow.compute as pc

    return pc.utf8_trim(values, characters=ASCII_WS)


def strip_ids(values: Any) -> np.ndarray:
    """``values`` (a sequence of ids as text: list, numpy or pandas) as an object array, each stripped of
    :data:`ASCII_WS` only (``str.strip(ASCII_WS)``): the id rule of every reader that is not a TREC one (embedding
    files of every format, ids files, tables, JSON, ``per_query.csv``); :func:`strip_ascii_ws` is the same rule
    for a pyarrow array. A non-breaking or another Unicode space stays part of the id, as trec_eval keeps it."""
    import numpy as np

    items = values.tolist() if hasattr(values, "tolist") else list(values)
    return np.asarray([s.strip(ASCII_WS) for s in items], dtype=object).reshape(-1)


#: In ids joined by NUL and edged with NULs: an empty id, or one with ASCII white space at its start or end (a NUL
#: inside an id may match too: the ids are then looked at one by one)
_UNSTRIPPED = re.compile("\x00\x00|\x00[ \t\n\r\f\v]|[ \t\n\r\f\v]\x00")


def refuse_unstripped_writes(dest: Any, *columns: tuple[str, Any]) -> None:
    """A writer's check, before it writes anything, for a file whose reader strips :data:`ASCII_WS` around ids
    (:func:`strip_ids`): each ``(what, ids)`` of ``columns`` holds no empty id and none with ASCII white space
    around it (it would read back as another id, or none), the error naming ``dest`` (a path or a stream) and the
    id. A non-breaking or another Unicode space is written as it is (it reads back)."""
    name = os.fspath(dest) if isinstance(dest, str | os.PathLike) else getattr(dest, "name", None)
    for what, ids in columns:
        items = list(map(str, ids.tolist() if hasattr(ids, "tolist") else ids))
        if _UNSTRIPPED.search("\x00" + "\x00".join(items) + "\x00") is None:
            continue  # (one C scan of the joined ids: none empty, none with ASCII white space at an end)
        for s in items:
            if not s or s != s.strip(ASCII_WS):
                raise InputFormatError(f"{what} {s!r} is empty or has surrounding ASCII white space and would not "
                                       "read back", file=None if name is None else str(name))


def refuse_broken_writes(dest: Any, *columns: tuple[str, Any]) -> None:
    """A writer's check, before it writes anything: each ``(what, ids)`` of ``columns`` as :func:`refuse_broken_ids`
    (the readers refuse such an id: the file would not read back), the error naming ``dest`` (a path or a stream)."""
    name = os.fspath(dest) if isinstance(dest, str | os.PathLike) else getattr(dest, "name", None)
    for what, ids in columns:
        refuse_broken_ids(ids, what=what, file=None if name is None else str(name))


# ============================================================================ sources and text
def read_source(src: Source, *, label: str | None = None) -> tuple[bytes, str]:
    """Raw content and display name of a path, bytes or binary stream (binary content allowed).

    A seekable stream is put back where it was, so the caller can read it again.
    Errors: :class:`UnreadableFileError` (missing, directory, no permission),
    :class:`EmptyInputError` (nothing but white space).
    """
    if isinstance(src, bytes | bytearray | memoryview):
        data, name = bytes(src), label or "<bytes>"
    elif hasattr(src, "read"):
        name = label or str(getattr(src, "name", "") or "<stream>")
        pos = None
        try:
            if src.seekable():
                pos = src.tell()
        except (AttributeError, OSError, ValueError):
            pos = None
        try:
            data = src.read()
        except (OSError, ValueError) as e:
            raise UnreadableFileError(f"cannot read the stream ({e})", file=name) from None
        finally:
            if pos is not None:
                try:
                    src.seek(pos)
                except (OSError, ValueError):
                    pass
        if isinstance(data, str):
            try:
                data = data.encode("utf-8")
            except UnicodeEncodeError:
                raise BinaryFileError("the stream gave text that cannot be encoded as UTF-8", file=name) from None
        if not isinstance(data, bytes | bytearray):
            raise UnreadableFileError(f"the stream gave {type(data).__name__}, expected bytes", file=name)
        data = bytes(data)
    elif isinstance(src, str | os.PathLike):
        name = label or os.fspath(src)
        try:
            data = Path(src).read_bytes()
        except FileNotFoundError:
            raise UnreadableFileError("file not found", file=name) from None
        except IsADirectoryError:
            raise UnreadableFileError("is a directory, expected a file", file=name) from None
        except PermissionError:
            raise UnreadableFileError("permission denied", file=name) from None
        except (OSError, ValueError) as e:
            raise UnreadableFileError(f"cannot read the file ({getattr(e, 'strerror', None) or e})",
                                      file=name) from None
    else:
        raise OptionError(f"expected a path, bytes or a binary stream, got {type(src).__name__}")
    if data[:2] == GZIP_MAGIC:
        data = _gunzip(data, name)
    if _blank(data):
        raise EmptyInputError("file is empty", file=name)
    return data, name


def _gunzip(data: bytes, name: str) -> bytes:
    """Content of gzip data (every member of a concatenated file); a damaged file is an error."""
    d = zlib.decompressobj(wbits=31)  # 31: gzip header and trailer
    parts = []
    try:
        while True:
            parts.append(d.decompress(data))
            if not d.eof:
                raise UnsafeFileError("truncated gzip data (the compressed stream ends early)", file=name)
            data = d.unused_data.lstrip(b"\x00")  # gzip allows zero padding between members
            if not data:
                break
            if data[:2] != GZIP_MAGIC:
                raise UnsafeFileError("bytes after the end of the gzip data", file=name)
            d = zlib.decompressobj(wbits=31)
    except zlib.error as e:
        raise UnsafeFileError(f"corrupt gzip data ({e})", file=name) from None
    return b"".join(parts)


def _strip_gz(name: str) -> str:
    return name[:-3] if name.lower().endswith(".gz") and len(name) > 3 else name


def source_filename(src: Source, label: str | None) -> str | None:
    """The file name used for extension-based detection (path, stream name, else the label);
    a trailing ``.gz`` is dropped (``run.tsv.gz`` is detected as ``.tsv``)."""
    if isinstance(src, str | os.PathLike):
        return _strip_gz(os.fspath(src))
    name = getattr(src, "name", None)
    if isinstance(name, str) and name:
        return _strip_gz(name)
    return None if label is None else _strip_gz(label)


def file_stem(label: str) -> str:
    """Stem of a file name, a trailing ``.gz`` aside: ``bm25.tsv.gz`` -> ``bm25``."""
    return Path(_strip_gz(str(label))).stem


def run_name_of_file(filename: str) -> str:
    """A run's default name: the file name without its folder and its known extensions (``runs/e5.npz`` -> ``e5``,
    ``bm25.tsv.gz`` -> ``bm25``; ``run`` when nothing is left): the dashboard's name of an uploaded file
    (:func:`evalcore.workspace.model.file_stem`) and the command line's of a bare ``--emb FILE``."""
    base = str(filename).replace("\\", "/").rsplit("/", 1)[-1]
    for ext in (".gz", ".parquet", ".jsonl", ".json", ".csv", ".tsv", ".txt", ".trec", ".run", ".npz", ".npy",
                ".qrels"):
        if base.lower().endswith(ext) and len(base) > len(ext):
            base = base[: -len(ext)]
    return base or "run"


_UTF16 = "UTF-16 encoded text, expected UTF-8: save the file as UTF-8"


def decode_text(data: bytes, label: str) -> str:
    """UTF-8 text of a file (a BOM is dropped); binary or undecodable content is an error."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise BinaryFileError(_UTF16, file=label)
    data, _ = read_bytes(data, name=label)  # empty / NUL-byte checks shared with the TREC readers
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BinaryFileError(f"not valid UTF-8 text (byte {e.start})", file=label, line=line) from None
    return text[1:] if text.startswith("\ufeff") else text



def read_bytes(src: PathOrBytes, *, name: str | None = None) -> tuple[bytes, str]:
    """Return (content, display name) of a text input: :func:`read_source` (unreadable or empty
    input) plus a check for binary content (NUL bytes)."""
    data, label = read_source(src, label=name)
    if b"\x00" in data[:65536]:
        if _looks_utf16(data[:4096]):
            raise BinaryFileError(_UTF16, file=label)
        raise BinaryFileError("binary content (NUL bytes), expected a text file", file=label)
    return data, label


def _looks_utf16(head: bytes) -> bool:
    """A UTF-16 byte-order mark, or mostly-ASCII text with a NUL as every other byte."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    even, odd = head[0::2], head[1::2]
    n = min(len(even), len(odd))
    return n >= 8 and max(even[:n].count(0), odd[:n].count(0)) >= 0.9 * n


_NON_BLANK = re.compile(rb"\S")


def _blank(data: bytes) -> bool:
    """True when the bytes hold only white space (no copy of large inputs, unlike ``strip``)."""
    return _NON_BLANK.search(data) is None

"""What the workspace accepts as input: paths, bytes, streams, engine objects, numpy arrays; names.

Each function turns one kind of input into the engine object to store plus its provenance
(the source file's name and the SHA-256 of its bytes, None for objects built in memory),
and validates names (run names, models, versions, steps, tags) with a clear
:class:`~evalcore.errors.OptionError`.
"""

from __future__ import annotations

import hashlib
import math
import os
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..data import Qrels, Run
from ..errors import OptionError, check_flag
from ..io.embeddings import Embeddings
from ..io.source import first_broken_id
from .locations import plain_text

__all__ = ["is_source", "source_bytes", "qrels_parts", "run_input", "embeddings_input", "embedding_files_key",
           "fusion_options",
           "check_run_name", "check_label", "check_step", "check_tags", "check_id", "check_bool",
           "is_whole"]

_MAX_NAME = 200


def is_source(value: Any) -> bool:
    """A path, bytes or a binary stream (what :mod:`evalcore.io` readers take)."""
    return isinstance(value, (str, os.PathLike, bytes, bytearray, memoryview)) or hasattr(value, "read")


def _basename(label: str) -> str:
    return label.replace("\\", "/").rsplit("/", 1)[-1]


def source_bytes(src: Any, label: str | None) -> tuple[bytes, str, str | None, str]:
    """(bytes, label for messages, file name to record, SHA-256) of a path, bytes or stream."""
    from ..io.source import read_source

    data, shown = read_source(src, label=label)
    name = label or (_basename(shown) if isinstance(src, (str, os.PathLike)) or hasattr(src, "read") else None)
    return data, shown, name, hashlib.sha256(data).hexdigest()


def qrels_parts(src: Any, *, format: str, label: str | None
                ) -> tuple[list[tuple[str | None, Qrels]], str | None, str | None, str | None]:
    """Ground-truth parts ``[(aspect, Qrels)]``, the source name, its SHA-256 and the detected format.

    A file with several ordered-list aspects (seed 001) gives one part per aspect, in file order.
    """
    from ..io import detect_qrels_format, list_aspects, load_qrels

    if isinstance(src, Qrels):
        return [(None, src)], label or src.source, None, None
    if isinstance(src, Mapping):
        parts = []
        for aspect, q in src.items():
            if not isinstance(q, Qrels):
                raise OptionError(f"ground truth aspect {aspect!r}: expected Qrels, got {type(q).__name__}")
            parts.append((str(aspect), q))
        if not parts:
            raise OptionError("an empty mapping of aspects is not a ground truth")
        return parts, label, None, None
    if not is_source(src):
        raise OptionError(f"a ground truth is a path, bytes, a stream, Qrels or {{aspect: Qrels}}, "
                          f"not {type(src).__name__}")
    data, shown, name, sha = source_bytes(src, label)
    fmt = format
    if fmt == "auto":
        fmt = detect_qrels_format(data, shown)
    aspects = list_aspects(data, format=fmt, label=shown)
    if aspects:
        parts = [(str(a), load_qrels(data, format=fmt, aspect=a, label=shown)) for a in aspects]
    else:
        parts = [(None, load_qrels(data, format=fmt, label=shown))]
    return parts, name, sha, fmt


def run_input(src: Any, *, name: str, format: str, label: str | None) -> tuple[Run, str | None, str | None]:
    """The Run of a path, bytes, stream or Run, renamed ``name``; its source name and SHA-256."""
    from ..io import load_run

    if isinstance(src, Run):
        return (src if src.name == name else src.renamed(name)), label or src.source, None
    if not is_source(src):
        raise OptionError(f"run {name!r}: expected a path, bytes, a stream or a Run, not {type(src).__name__}")
    data, shown, source_name, sha = source_bytes(src, label)
    return load_run(data, format=format, name=name, label=shown), source_name, sha


def _file_sha(src: Any) -> str:
    from .artifacts import sha256_file

    return sha256_file(src)


def embeddings_input(src: Any, ids: Any, *, what: str, label: str | None, owner: str | None = None,
                     id_what: str = "id") -> tuple[Embeddings, str | None, str | None]:
    """Embeddings from arrays, an :class:`~evalcore.io.Embeddings`, or a file (``.npy`` memory-mapped).

    Parameters
    ----------
    src : ndarray (n, dim), Embeddings, path, bytes or stream
    ids : sequence of str (n,), or an ids file (path, bytes, stream: one id per line), or None
        Required with an array; with a file, None means the file's own ids (or the
        ``X_ids.txt`` beside ``X.npy``).
    what : str
        What the vectors are, for messages (``run 'e5' (queries)``).
    label : str, optional
        The file name to record and show.
    owner, id_what : str, optional
        Whose ids they are and what they are (``run 'e5'``, ``document id``): an id of an array holding a
        control character is refused in the words of :func:`~.idchecks.check_embedding_ids` (owner default:
        ``what``), before :meth:`~evalcore.io.Embeddings.from_arrays` would refuse it in its own.
    """
    from ..io import load_embeddings

    if isinstance(src, Embeddings):
        if ids is not None:
            raise OptionError(f"{what}: the Embeddings carry their ids; pass ids=None")
        return src, label or src.source, None
    if isinstance(src, (str, os.PathLike)):
        name = label or _basename(os.fspath(src))
        sha = _file_sha(src) if Path(src).is_file() else None
        return load_embeddings(src, ids_src=_ids_source(ids, what), label=label, mmap=True), name, sha
    if isinstance(src, (bytes, bytearray, memoryview)) or hasattr(src, "read"):
        data, shown, name, sha = source_bytes(src, label)
        return load_embeddings(data, ids_src=_ids_source(ids, what), label=shown), name, sha
    if ids is None:
        raise OptionError(f"{what}: vectors given as an array need their ids (one per row)")
    if is_source(ids):
        raise OptionError(f"{what}: with vectors as an array, give the ids as a sequence of strings")
    values = _as_ids(ids, what)
    row = first_broken_id(values)
    if row is not None:
        from .idchecks import broken_id_error

        raise broken_id_error(owner or what, id_what, values[row], row, label)
    return Embeddings.from_arrays(values, src, source=label), label, None


def _file_bytes_sha(src: Any) -> str | None:
    """The SHA-256 of a file's bytes (a path to a regular file, or bytes); None for anything else (an array, an
    :class:`~evalcore.io.Embeddings`, a sequence of ids, a stream: nothing to recognise a file by)."""
    if isinstance(src, (str, os.PathLike)):
        return _file_sha(src) if Path(src).is_file() else None
    if isinstance(src, (bytes, bytearray, memoryview)):
        return hashlib.sha256(src).hexdigest()
    return None


def _is_npy(src: Any) -> bool:
    """A ``.npy`` array (its magic bytes), which holds no ids: they come from an ids file."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src[:6]) == b"\x93NUMPY"
    with open(src, "rb") as fh:
        return fh.read(6) == b"\x93NUMPY"


def embedding_files_key(embeddings: Any, ids: Any = None, *, query_embeddings: Any = None,
                        query_ids: Any = None, docs_sha256: str | None = None,
                        queries_sha256: str | None = None) -> str | None:
    """What recognises an embedding run's files by their bytes (the same files again are the same run): for one
    file holding its own ids (an item-to-item ``.npz``, Parquet, CSV, JSON) the SHA-256 of its bytes, which
    :meth:`~.run_changes.RunChanges.add_embedding_run` records as the run's ``source_sha256``; else the SHA-256 of
    the lines ``role:sha256`` of every file the run is read from, in the order documents, their ids, queries,
    their ids (a ``.npy`` path's ids: the ``X_ids.txt`` / ``X.ids.txt`` beside it, as the reader finds them).

    None when an input is not a file's bytes or path (arrays, :class:`~evalcore.io.Embeddings`, a sequence of ids,
    a stream) or a ``.npy`` has no ids file: such runs are not recognised by their files. ``docs_sha256``,
    ``queries_sha256``: the SHA-256 of the documents' / queries' file when already computed (not read twice).
    """
    from ..io.vectors import _ids_beside

    parts: list[tuple[str, str]] = []
    for role, vectors, vector_ids in (("docs", embeddings, ids), ("queries", query_embeddings, query_ids)):
        if vectors is None:
            if vector_ids is not None:
                return None
            continue
        known = docs_sha256 if role == "docs" else queries_sha256
        sha = known if known is not None else _file_bytes_sha(vectors)
        if sha is None:
            return None
        parts.append((role, sha))
        if vector_ids is None and _is_npy(vectors):
            vector_ids = None if isinstance(vectors, (bytes, bytearray, memoryview)) else _ids_beside(Path(vectors))
            if vector_ids is None:
                return None  # (not readable: its add is refused, as without this check)
        if vector_ids is not None:
            ids_sha = _file_bytes_sha(vector_ids)
            if ids_sha is None:
                return None
            parts.append((f"{role} ids", ids_sha))
    if len(parts) == 1:
        return parts[0][1]
    return hashlib.sha256("".join(f"{role}:{sha}\n" for role, sha in parts).encode()).hexdigest()


def _as_ids(ids: Any, what: str) -> np.ndarray:
    """Ids given as a sequence (or array) of values, one per row; anything else is a clear error."""
    if isinstance(ids, np.ndarray):
        return ids
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise OptionError(f"{what}: ids must be a sequence of strings (one per row) or an ids file, "
                          f"not {type(ids).__name__} {ids!r:.40}")
    return np.asarray(list(ids))


def _ids_source(ids: Any, what: str) -> Any:
    """An ids argument as an ids file for :func:`evalcore.io.load_embeddings` (a sequence -> its lines)."""
    if ids is None or is_source(ids):
        return ids
    from .idchecks import broken_id_error

    values = [str(x) for x in _as_ids(ids, what).tolist()]
    row = first_broken_id(values)
    if row is not None:  # (a line break would split it into two ids of the file)
        raise broken_id_error(what, "id", values[row], row)
    return ("\n".join(values) + "\n").encode("utf-8")


def fusion_options(name: str, inputs: Mapping[str, float] | Iterable[str], *, weights: Any, c: float,
                   top_n: int | None, ties: str | None, method: str, norm: str) -> dict[str, Any]:
    """The stored options of a fused run ``name`` (inputs by name, weights, c, top_n, ties; method and
    norm unless weighted RRF, whose record stays as it always was), checked."""
    from ..fusion import RANK_METHODS, canonical_method, canonical_norm, check_weights
    from ..ranking import canonical_ties

    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Iterable):  # "bm25" is not the runs b, m, 2, 5
        raise OptionError(f"run {name!r}: give the runs to fuse as a list of names or a mapping name -> weight, "
                          f"not {type(inputs).__name__} {inputs!r:.60}")
    names = [str(n) for n in inputs]
    if isinstance(inputs, Mapping):
        if weights is not None:
            raise OptionError("give weights either in the mapping or as weights=, not both")
        weights = [inputs[n] for n in inputs]
    try:
        weights = [1.0] * len(names) if weights is None else [float(w) for w in weights]
    except (TypeError, ValueError):
        raise OptionError(f"run {name!r}: weights must be numbers, got {weights!r:.80}") from None
    if not names or len(weights) != len(names) or len(set(names)) != len(names):
        raise OptionError(f"run {name!r}: give distinct runs to fuse, one weight each "
                          f"({len(names)} runs, {len(weights)} weights)")
    if name in names:
        raise OptionError(f"run {name!r} cannot fuse itself")
    check_weights(weights, names)  # finite, >= 0, not all 0 (as the fusion itself requires)
    if isinstance(top_n, bool) or not (top_n is None or isinstance(top_n, (int, np.integer)) and top_n >= 1):
        raise OptionError(f"run {name!r}: top_n must be an integer >= 1 (or None), got {top_n!r}")
    if isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating)) or not math.isfinite(c) or c <= -1:
        raise OptionError(f"run {name!r}: c must be a finite number > -1, got {c!r}")
    options = {"inputs": names, "weights": weights, "c": float(c), "top_n": None if top_n is None else int(top_n),
               "ties": None if ties is None else canonical_ties(ties)}
    method, norm = canonical_method(method), canonical_norm(norm)
    if method in RANK_METHODS and norm != "none":
        raise OptionError(f"run {name!r}: {method} fuses ranks, a score normalisation ({norm}) does not apply")
    if (method, norm) != ("rrf", "none"):
        options.update(method=method, norm=norm)
    return options


# ------------------------------------------------------------------ names
def check_run_name(name: Any) -> str:
    """A run name: text, stripped, 1–200 characters, no control characters (tabs, line breaks)."""
    return plain_text(name, what="a run name", limit=_MAX_NAME, error=OptionError)


def check_label(value: Any, what: str) -> str | None:
    """A model or version label: None, or text without control characters (stripped, Unicode NFC, so
    the same label typed or taken from a file name in another form is one label; empty -> None)."""
    if value is None:
        return None
    if not isinstance(value, (str, int, np.integer)) or isinstance(value, bool):  # (np.arange's epochs: integers)
        raise OptionError(f"{what} must be text, got {type(value).__name__}")
    text = unicodedata.normalize("NFC", str(int(value)) if isinstance(value, np.integer) else str(value).strip())
    if first_broken_id([text]) is not None:  # (the readers' one definition: C0, DEL, C1, U+2028/9)
        raise OptionError(f"{what} {text!r}: no control characters (tabs, line breaks)")
    return text or None


def check_step(step: Any) -> float | None:
    """A training step / epoch: None or a finite number (stored as float)."""
    if step is None:
        return None
    if isinstance(step, bool) or not isinstance(step, (int, float, np.integer, np.floating)):
        raise OptionError(f"step must be a number (a training step or epoch), got {step!r}")
    try:
        value = float(step)
    except OverflowError:  # an integer beyond any float
        value = math.inf
    if not math.isfinite(value):
        raise OptionError(f"step must be finite, got {step!r:.40}")
    return value


def check_bool(value: Any, what: str) -> bool:
    """A yes/no option (``replace``, ``record``, ``read_only``...): see :func:`evalcore.errors.check_flag`."""
    return check_flag(value, what)


def is_whole(value: Any) -> bool:
    """An integer, or a number or text of one (``10``, ``10.0``, ``"10"``; not ``True``, ``10.5``, ``"ten"``)."""
    try:
        return not isinstance(value, bool) and int(value) == float(value)
    except (TypeError, ValueError, OverflowError):
        return False


def check_id(value: Any, what: str) -> int:
    """A catalogue id (an evaluation's, a ground truth's): an integer, or text of one."""
    if isinstance(value, (str, np.str_)) and value.strip().isdecimal():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise OptionError(f"{what} is an integer id, got {type(value).__name__} {value!r:.40}")
    return int(value)


def check_tags(tags: Any) -> tuple[str, ...]:
    """Tags: an iterable of text (one string is one tag); duplicates dropped, order kept."""
    if tags is None:
        return ()
    if not isinstance(tags, (str, Iterable)) or isinstance(tags, (bytes, Mapping)):
        raise OptionError(f"tags must be text or a sequence of text, got {type(tags).__name__} {tags!r:.40}")
    items: Iterable[Any] = (tags,) if isinstance(tags, str) else tags
    out = []
    for t in items:
        if not isinstance(t, str):
            raise OptionError(f"a tag must be text, got {t!r}")
        text = check_label(t, "a tag")
        if text:
            out.append(text)
    return tuple(dict.fromkeys(out))

"""Writers of TREC runs, TREC qrels, BEIR qrels TSV and top-k results (their readers: :mod:`evalcore.io.trec`, which
re-exports every writer).

Whatever the TREC readers accept, these write and the readers read back identically: fields separated by one ASCII
space, an id holding other white space (a non-breaking space...) written as it is, with one warning.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from ..data import Qrels, Run
from ..errors import InputFormatError, OptionError, warn
from .source import _ID_BREAKING, first_broken_id, refuse_broken_writes, refuse_unstripped_writes

if TYPE_CHECKING:
    from ..retrieval import TopK

__all__ = ["write_trec_run", "write_trec_qrels", "write_beir_qrels", "format_trec_topk", "write_trec_topk"]


# ---------------------------------------------------------------------------- writers
#: What a writer cannot put inside a TREC field: the readers' separators (:data:`_WS`) and the line feed. Every other
#: character the readers keep in an id (a non-breaking space, U+3000...) is written as it is and reads back the same.
_SEPARATOR = re.compile(r"[ \t\n\r\f\v]")
#: White space a TREC reader (and trec_eval) keeps inside a field but Python's ``str.split()`` splits on.
_UNICODE_SPACE = re.compile(r"[^\S \t\n\r\f\v]")


def _check_ids(values: np.ndarray, what: str) -> None:
    """Ids must be one TREC field: not empty, no ASCII white space (after :func:`~.source.refuse_broken_writes`'
    check of control characters, only the space is left to check); a query id, which starts its line, must not
    start with ``#`` (the readers take such a line for a comment). Other white space (a non-breaking space...) is
    part of a field, as the readers and trec_eval read it (:func:`_warn_unicode_spaces`)."""
    at = first_broken_id(values, _SEPARATOR)
    if at is None:
        empty = np.flatnonzero(values.astype(str) == "")
        at = int(empty[0]) if empty.size else None
    if at is not None:
        v = str(values[at])
        raise InputFormatError(f"{what} {v!r} is empty or contains ASCII white space, which separates the fields of "
                               "a TREC line: it cannot be written to a TREC file")
    if what == "query id":
        _check_not_comment(values)


def _warn_unicode_spaces(dest: Any, *columns: tuple[str, Any]) -> None:
    """One warning naming the first id of ``columns`` (``(what, ids)``) holding white space other than ASCII's (a
    non-breaking space, U+2003, U+3000...). It is written as it is: the TREC readers, as trec_eval, separate fields by
    ASCII white space only, and read the file back with the very ids; a Python tool splitting its lines with
    ``str.split()`` would cut such an id in two."""
    for what, ids in columns:
        at = first_broken_id(ids, _UNICODE_SPACE)
        if at is None:
            continue
        value = str(ids[at])
        ch = _UNICODE_SPACE.search(value).group()
        name = os.fspath(dest) if isinstance(dest, str | os.PathLike) else getattr(dest, "name", None)
        warn(f"{'' if name is None else f'{name}: '}{what} {value!r} holds white space other than ASCII's "
             f"(U+{ord(ch):04X}); written as it is: trec_eval and evalcore read it back as the same id (only ASCII "
             "white space separates TREC fields), but a Python tool splitting lines on any white space (str.split()) "
             "would misread it")
        return


def _check_not_comment(query_ids: np.ndarray) -> None:
    for v in query_ids.tolist():
        if str(v).startswith("#"):
            raise InputFormatError(f"query id {str(v)!r} begins with '#' and cannot be written to a TREC file: its "
                                   "lines would be read back as comments")


def write_trec_run(run: Run, dest: str | os.PathLike | IO[str], *, tag: str | None = None,
                   ties: str = "trec", depth: int | None = None) -> int:
    """Write ``qid Q0 docid rank score tag`` lines in evaluation order (ranks from 1); returns how many.

    Scores are written with 17 significant digits so reading back gives the same floats.
    ``depth``: the first ``depth`` documents of each query only (an integer >= 1; None: all).
    """
    from ..ranking import rank_order

    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise OptionError(f"depth must be an integer >= 1 (or None: every document), got {depth!r}")
    order, pos = rank_order(run, ties=ties)
    keep = np.ones(len(order), dtype=bool) if depth is None else pos < depth
    order, pos = order[keep], pos[keep]
    refuse_broken_writes(dest, ("query id", run.query_ids), ("document id", run.doc_vocab))
    qs = run.query_ids[run.q[order]].astype(str)
    ds = run.doc_vocab[run.d[order]].astype(str)
    _check_ids(run.query_ids, "query id")
    _check_ids(run.doc_vocab, "document id")
    t = tag or run.name
    if _SEPARATOR.search(t) or _ID_BREAKING.search(t):  # (the tag is one field the reader takes)
        t = _ID_BREAKING.sub("_", _SEPARATOR.sub("_", t))
    _warn_unicode_spaces(dest, ("query id", run.query_ids), ("document id", run.doc_vocab), ("run tag", [t]))
    sc = np.char.mod("%.17g", run.scores[order])
    lines = np.char.add(np.char.add(np.char.add(np.char.add(qs, " Q0 "), ds), " "),
                        np.char.add(np.char.add((pos + 1).astype(str), " "), sc))
    lines = np.char.add(lines, f" {t}")
    text = "\n".join(lines.tolist()) + ("\n" if len(lines) else "")
    _write_text(dest, text)
    return len(lines)


def write_trec_qrels(qrels: Qrels, dest: str | os.PathLike | IO[str]) -> None:
    """Write ``qid 0 docid grade`` lines."""
    refuse_broken_writes(dest, ("query id", qrels.query_ids), ("document id", qrels.doc_ids))
    _check_ids(qrels.query_ids, "query id")
    _check_ids(qrels.doc_ids, "document id")
    _warn_unicode_spaces(dest, ("query id", qrels.query_ids), ("document id", qrels.doc_ids))
    qs = qrels.query_ids[qrels.q].astype(str)
    lines = [f"{q} 0 {d} {int(g)}" for q, d, g in zip(qs.tolist(), qrels.doc_ids.tolist(), qrels.grades.tolist(), strict=True)]
    _write_text(dest, "\n".join(lines) + ("\n" if lines else ""))


def write_beir_qrels(qrels: Qrels, dest: str | os.PathLike | IO[str]) -> None:
    """Write BEIR qrels TSV with header ``query-id corpus-id score``; an id its reader would not read back (empty,
    ASCII white space around it, a control character) is refused before anything is written."""
    refuse_broken_writes(dest, ("query id", qrels.query_ids), ("document id", qrels.doc_ids))  # (tab, line break...)
    refuse_unstripped_writes(dest, ("query id", qrels.query_ids), ("document id", qrels.doc_ids))  # (reader strips)
    qs = qrels.query_ids[qrels.q].astype(str)
    lines = ["query-id\tcorpus-id\tscore"] + [
        f"{q}\t{d}\t{int(g)}" for q, d, g in zip(qs.tolist(), qrels.doc_ids.tolist(), qrels.grades.tolist(), strict=True)]
    _write_text(dest, "\n".join(lines) + "\n")


def _write_text(dest: str | os.PathLike | IO[str], text: str) -> None:
    if hasattr(dest, "write"):
        dest.write(text)
    else:
        Path(dest).write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- output


def format_trec_topk(topk: TopK, tag: str, *, queries_per_chunk: int = 2000):
    """Yield the TREC run text of ``topk`` chunk by chunk (``qid Q0 docid rank score tag``).

    Vectorised: one ``%`` formatting of a whole chunk (C loop) instead of one
    Python f-string per line; scores use ``%.9g`` (round-trips float32).
    """
    if _SEPARATOR.search(tag) or not tag:
        raise OptionError(f"the run tag must be one field without ASCII white space, got {tag!r}")
    line = "%s Q0 %s %d %.9g " + tag.replace("%", "%%") + "\n"
    nq, k = topk.indices.shape
    ranks = list(range(1, k + 1))
    for q0 in range(0, nq, queries_per_chunk):
        idx = topk.indices[q0 : q0 + queries_per_chunk]
        m = idx.shape[0]
        if k and (idx >= 0).all():
            vals: list = [None] * (4 * m * k)
            vals[0::4] = np.repeat(topk.query_ids[q0 : q0 + m], k).tolist()
            vals[1::4] = topk.corpus_ids[idx.ravel()].tolist()
            vals[2::4] = ranks * m
            vals[3::4] = topk.scores[q0 : q0 + m].ravel().tolist()
            yield (line * (m * k)) % tuple(vals)
        else:  # padded rows (-1): write only the real items
            keep = idx >= 0
            n_lines = int(keep.sum())
            vals = [None] * (4 * n_lines)
            vals[0::4] = np.repeat(topk.query_ids[q0 : q0 + m], keep.sum(axis=1)).tolist()
            vals[1::4] = topk.corpus_ids[idx[keep]].tolist()
            vals[2::4] = (np.nonzero(keep)[1] + 1).tolist()
            vals[3::4] = topk.scores[q0 : q0 + m][keep].tolist()
            yield (line * n_lines) % tuple(vals)


def _check_trec_ids(ids: np.ndarray, what: str) -> None:
    """Ids must be non-empty single fields to fit a line whose fields ASCII white space separates (other white
    space is part of a field, as the readers and trec_eval read it)."""
    if ids.size == 0:
        return
    joined = "\x00".join(ids.tolist())
    bad = _SEPARATOR.search(joined) or re.search(r"\x00\x00|^\x00|\x00$", joined)
    if bad is None and joined:
        return
    row = next(i for i, s in enumerate(ids.tolist()) if not s or _SEPARATOR.search(s) or "\x00" in s)
    raise InputFormatError(
        f"{what} {str(ids[row])!r} (row {row}) is empty or contains ASCII white space; it cannot be written to a "
        "TREC file"
    )


def write_trec_topk(topk: TopK, dest: str | os.PathLike | IO[str], *, tag: str = "evalcore") -> None:
    """Write ``topk`` as a TREC run file (or to an open text stream)."""
    refuse_broken_writes(dest, ("query id", topk.query_ids), ("document id", topk.corpus_ids), ("run tag", [tag]))
    _check_trec_ids(topk.query_ids, "query id")
    _check_not_comment(topk.query_ids)
    _check_trec_ids(topk.corpus_ids, "document id")
    _warn_unicode_spaces(dest, ("query id", topk.query_ids), ("document id", topk.corpus_ids), ("run tag", [tag]))
    if hasattr(dest, "write"):
        for chunk in format_trec_topk(topk, tag):
            dest.write(chunk)
        return
    label = os.fspath(dest)
    try:
        with open(dest, "w", encoding="utf-8", newline="\n") as fh:
            for chunk in format_trec_topk(topk, tag):
                fh.write(chunk)
    except OSError as e:
        raise InputFormatError(f"cannot be written ({e.strerror or e})", file=label) from e

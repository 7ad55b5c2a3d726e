"""``evalcore topk``: exact cosine top-k of embeddings, written as a TREC run.

::

    python -m evalcore topk --docs DOCS.npy --doc-ids IDS.txt
        [--queries Q.npy --query-ids QIDS.txt] --k 100 [--exclude-self]
        [--block-mb 256] [--mmap] --out run.trec [--tag NAME] [--quiet]

Without ``--queries`` the documents are their own queries (item-to-item,
seeds 000/001); add ``--exclude-self`` so an item does not retrieve itself.
Id files hold one id per line, in the row order of the ``.npy`` file.
Output lines are ``qid Q0 docid rank score tag`` with scores printed with 9
significant digits (``%.9g``), enough to read back the exact float32.
A progress bar goes to stderr.  Bad input ends with one line
``error: ...`` on stderr and exit status 2.

The main CLI calls :func:`register`; this module also runs on its own
(``python -m evalcore.cli_topk ...``) through :func:`main`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import IO

import numpy as np

from .errors import (
    BinaryFileError,
    EmptyInputError,
    EvalcoreError,
    InputFormatError,
    OptionError,
    ShapeMismatchError,
    UnsafeFileError,
    ValueTypeError,
    plain_warnings,
)
from .retrieval import TopK, exact_topk, load_npy_mmap

EXIT_USAGE = 2
_WS = re.compile(r"[ \t\v\f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


# --------------------------------------------------------------------------- input


def read_ids(path: str | os.PathLike) -> np.ndarray:
    """One id per line (UTF-8; ``\\r\\n`` accepted; no blank lines, no white space in ids)."""
    label = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError as e:
        raise InputFormatError("file not found", file=label) from e
    except OSError as e:
        raise InputFormatError(f"cannot be read ({e.strerror or e})", file=label) from e
    if b"\x00" in data:
        raise BinaryFileError("is binary (NUL bytes); expected one id per line", file=label)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BinaryFileError("is not UTF-8 text", file=label, line=line) from e
    text = text.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    if not text:
        raise EmptyInputError("holds no ids", file=label)
    m = _WS.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        raise InputFormatError("an id contains white space (ids must be one token per line)", file=label, line=line)
    ids = text.split("\n")
    for pos in (i for i, s in enumerate(ids) if not s or s.endswith("\r")):
        what = "blank line" if not ids[pos] else "stray carriage return"
        raise InputFormatError(f"{what}; expected one id per line", file=label, line=pos + 1)
    return np.array(ids)


def load_vectors(path: str | os.PathLike, *, mmap: bool) -> np.ndarray:
    """A 2-D numeric ``.npy`` file, memory-mapped read-only when ``mmap``."""
    if mmap:
        return load_npy_mmap(path)
    label = os.fspath(path)
    try:
        arr = np.load(path, allow_pickle=False)
    except FileNotFoundError as e:
        raise InputFormatError("file not found", file=label) from e
    except ValueError as e:
        if "pickle" in str(e).lower() or "python objects" in str(e).lower():
            raise UnsafeFileError("holds Python objects (would need unpickling); refused", file=label) from e
        raise InputFormatError(f"not a readable .npy file ({e})", file=label) from e
    except OSError as e:
        raise InputFormatError(f"cannot be read as .npy ({e})", file=label) from e
    if not isinstance(arr, np.ndarray):
        raise InputFormatError("is an .npz archive; expected a single .npy array", file=label)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueTypeError(f"must hold real numbers, got dtype {arr.dtype}", file=label)
    if arr.ndim != 2:
        raise ShapeMismatchError(f"must be a 2-D array (rows x dimensions), got shape {arr.shape}", file=label)
    return arr


# --------------------------------------------------------------------------- output


def format_trec(topk: TopK, tag: str, *, queries_per_chunk: int = 2000):
    """Yield the TREC run text of ``topk`` chunk by chunk (``qid Q0 docid rank score tag``).

    Vectorised: one ``%`` formatting of a whole chunk (C loop) instead of one
    Python f-string per line; scores use ``%.9g`` (round-trips float32).
    """
    if _WS.search(tag) or not tag or "\n" in tag:
        raise OptionError(f"the run tag must be one token without white space, got {tag!r}")
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
    """Ids must be non-empty single tokens to fit a white-space separated line."""
    if ids.size == 0:
        return
    joined = "\x00".join(ids.tolist())
    bad = _WS.search(joined) or re.search(r"[\n\r]|\x00\x00|^\x00|\x00$", joined)
    if bad is None and joined:
        return
    row = joined.count("\x00", 0, bad.start()) if bad is not None else 0
    raise InputFormatError(
        f"{what} {str(ids[row])!r} (row {row}) is empty or contains white space; it cannot be written to a TREC file"
    )


def write_trec(topk: TopK, dest: str | os.PathLike | IO[str], *, tag: str = "evalcore") -> None:
    """Write ``topk`` as a TREC run file (or to an open text stream)."""
    _check_trec_ids(topk.query_ids, "query id")
    _check_trec_ids(topk.corpus_ids, "document id")
    if hasattr(dest, "write"):
        for chunk in format_trec(topk, tag):
            dest.write(chunk)
        return
    label = os.fspath(dest)
    try:
        with open(dest, "w", encoding="utf-8", newline="\n") as fh:
            for chunk in format_trec(topk, tag):
                fh.write(chunk)
    except OSError as e:
        raise InputFormatError(f"cannot be written ({e.strerror or e})", file=label) from e


# --------------------------------------------------------------------------- progress


class ProgressBar:
    """Plain-text progress bar on a stream: redrawn in place on a terminal
    (at most 10 times a second), a line per 10 % otherwise."""

    def __init__(self, label: str = "topk", stream: IO[str] | None = None, width: int = 30) -> None:
        self.label, self.width = label, width
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self._last_draw = 0.0
        self._last_decile = -1

    def __call__(self, done: int, total: int) -> None:
        frac = done / total if total else 1.0
        now = time.perf_counter()
        elapsed = now - self.start
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        bar = "#" * int(frac * self.width)
        msg = f"{self.label} [{bar:<{self.width}}] {100 * frac:5.1f}% {done}/{total} blocks {elapsed:6.1f}s eta {eta:6.1f}s"
        if self.tty:
            if done == total or now - self._last_draw >= 0.1:
                self.stream.write("\r" + msg + ("\n" if done == total else ""))
                self.stream.flush()
                self._last_draw = now
        else:
            decile = int(frac * 10)
            if decile != self._last_decile or done == total:
                self._last_decile = decile
                self.stream.write(msg + "\n")
                self.stream.flush()


# --------------------------------------------------------------------------- command


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--docs", required=True, metavar="DOCS.npy", help="document embeddings, one row per document")
    p.add_argument("--doc-ids", required=True, metavar="IDS.txt", help="document ids, one per line, in row order")
    p.add_argument("--queries", default=None, metavar="Q.npy", help="query embeddings (default: the documents)")
    p.add_argument("--query-ids", default=None, metavar="QIDS.txt", help="query ids, one per line (with --queries)")
    p.add_argument("--k", type=int, default=100, help="documents per query (default 100)")
    p.add_argument("--exclude-self", action="store_true", help="a query never retrieves the document with its own id")
    p.add_argument("--block-mb", type=int, default=256, help="working memory per block in MiB (default 256)")
    p.add_argument("--mmap", action="store_true", help="memory-map the .npy files instead of reading them")
    p.add_argument("--normalized", action="store_true", help="vectors are already unit length")
    p.add_argument("--out", required=True, metavar="run.trec", help="TREC run file to write")
    p.add_argument("--tag", default="evalcore", help="run tag (last column)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``topk`` subcommand to an argparse ``subparsers`` object."""
    p = subparsers.add_parser(
        "topk",
        help="exact cosine top-k of embeddings as a TREC run",
        description=__doc__.split("\n\n")[0],
    )
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Handler of ``topk``; raises :class:`EvalcoreError` on bad input."""
    if args.k <= 0:
        raise OptionError(f"--k must be a positive integer, got {args.k}")
    if args.block_mb <= 0:
        raise OptionError(f"--block-mb must be a positive integer, got {args.block_mb}")
    if (args.queries is None) != (args.query_ids is None):
        raise OptionError("--queries and --query-ids go together")
    if _WS.search(args.tag) or not args.tag:
        raise OptionError(f"--tag must be one token without white space, got {args.tag!r}")

    docs = load_vectors(args.docs, mmap=args.mmap)
    doc_ids = read_ids(args.doc_ids)
    if doc_ids.shape[0] != docs.shape[0]:
        raise ShapeMismatchError(
            f"{doc_ids.shape[0]} ids but {args.docs} has {docs.shape[0]} rows", file=args.doc_ids
        )
    if args.queries is None:
        queries, query_ids = docs, doc_ids
    else:
        queries = load_vectors(args.queries, mmap=args.mmap)
        query_ids = read_ids(args.query_ids)
        if query_ids.shape[0] != queries.shape[0]:
            raise ShapeMismatchError(
                f"{query_ids.shape[0]} ids but {args.queries} has {queries.shape[0]} rows", file=args.query_ids
            )
        if queries.shape[1] != docs.shape[1]:
            raise ShapeMismatchError(
                f"dimension mismatch: {args.queries} has {queries.shape[1]} dimensions "
                f"but {args.docs} has {docs.shape[1]}",
                file=args.queries,
            )
    progress = None if args.quiet else ProgressBar("topk")
    topk = exact_topk(
        queries,
        docs,
        args.k,
        corpus_ids=doc_ids,
        query_ids=query_ids,
        exclude_self=args.exclude_self,
        block_bytes=args.block_mb * 2**20,
        progress=progress,
        normalized=args.normalized,
    )
    write_trec(topk, args.out, tag=args.tag)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evalcore topk", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        with plain_warnings():
            return run(args)
    except EvalcoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print("error: out of memory; try --mmap or a smaller --block-mb", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

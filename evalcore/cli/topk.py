"""``evalcore topk``: exact cosine top-k of embeddings, written as a TREC run.

::

    python -m evalcore topk --docs DOCS.npy --doc-ids IDS.txt
        [--queries Q.npy --query-ids QIDS.txt] --k 100 [--exclude-self]
        [--block-mb 256] [--mmap] --out run.trec [--tag NAME] [--quiet]
        [--dask ADDRESS]

Without ``--queries`` the documents are their own queries (item-to-item,
seeds 000/001); add ``--exclude-self`` so an item does not retrieve itself.
Id files hold one id per line, in the row order of the ``.npy`` file.

``--docs`` may also name shards: a directory or a glob (quote it) of ``.npy``
files each with its ``X_ids.txt`` beside it, or of ``.npz`` files holding
``ids`` and ``embeddings`` (:mod:`evalcore.io.shards`); then ``--doc-ids`` is
not given.  The shards are searched one after the other, memory-mapped, and
the run is the same, byte for byte, as the search of their concatenation.

``--dask ADDRESS`` runs the search on a Dask cluster
(:mod:`evalcore.retrieval.dask_backend`; ``pip install -e '.[dask]' in evalcore's folder``):
ADDRESS is a scheduler (``tcp://host:8786``; the workers must see the shard
files at the same paths) or ``local:N``, a local cluster of N worker
processes started and stopped by the command.  Same run, byte for byte.
Output lines are ``qid Q0 docid rank score tag`` with scores printed with 9
significant digits (``%.9g``), enough to read back the exact float32.
A progress bar goes to stderr.  Bad input ends with one line
``error: ...`` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib

from .options import add_dask_options, progress_unit, search_backend

__all__ = ["register", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--docs", required=True, metavar="DOCS.npy",
                   help="document embeddings, one row per document: a .npy (with --doc-ids, or X_ids.txt beside "
                        "it) or a .npz with ids and embeddings; or a directory / glob of such shards")
    p.add_argument("--doc-ids", default=None, metavar="IDS.txt",
                   help="document ids, one per line, in row order (a single .npy file only)")
    p.add_argument("--queries", default=None, metavar="Q.npy",
                   help="query embeddings, .npy or .npz as --docs (default: the documents)")
    p.add_argument("--query-ids", default=None, metavar="QIDS.txt",
                   help="query ids, one per line (with --queries; not needed for a .npz, or a .npy with X_ids.txt "
                        "beside it)")
    p.add_argument("--k", type=int, default=100, help="documents per query (default 100)")
    p.add_argument("--exclude-self", action="store_true", help="a query never retrieves the document with its own id")
    p.add_argument("--block-mb", type=int, default=256, help="working memory per block in MiB (default 256)")
    p.add_argument("--mmap", action="store_true", help="memory-map the .npy files instead of reading them")
    p.add_argument("--normalized", action="store_true", help="vectors are already unit length")
    p.add_argument("--out", required=True, metavar="run.trec", help="TREC run file to write")
    p.add_argument("--tag", default="evalcore", help="run tag (last column; default evalcore)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_dask_options(p)


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``topk`` subcommand to an argparse ``subparsers`` object."""
    p = subparsers.add_parser(
        "topk",
        help="exact cosine top-k of embeddings as a TREC run",
        description="Exact cosine top-k of embeddings, written as a TREC run. Without --queries the documents are "
                    "their own queries (item-to-item); add --exclude-self so that an item does not retrieve itself.",
    )
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Handler of ``topk``; raises :class:`EvalcoreError` on bad input."""
    import numpy as np

    from ..errors import OptionError, ShapeMismatchError
    from ..io import load_vectors, read_token_ids, write_trec_topk
    from ..io.source import _ID_BREAKING, _TOKEN_WS
    from ..retrieval import exact_topk
    from .progress import ProgressBar

    if args.k <= 0:
        raise OptionError(f"--k must be a positive integer, got {args.k}")
    if args.block_mb <= 0:
        raise OptionError(f"--block-mb must be a positive integer, got {args.block_mb}")
    if args.queries is None and args.query_ids is not None:
        raise OptionError("--query-ids goes with --queries")
    if not args.tag or _TOKEN_WS.search(args.tag) or _ID_BREAKING.search(args.tag):  # what a TREC field holds
        raise OptionError(f"--tag must be one TREC field: not empty, no ASCII white space nor control character, "
                          f"got {args.tag!r}")

    backend = search_backend(args)  # says at once when --dask cannot work (dask not installed)
    docs, doc_ids = _load_docs(args)
    if args.queries is None:
        queries, query_ids = docs, doc_ids
    elif args.query_ids is None:  # a .npz with its ids, or a .npy with X_ids.txt beside it (as evaluate --emb)
        from ..io import load_embeddings

        q = load_embeddings(args.queries, mmap=args.mmap)
        queries, query_ids = q.vectors, np.asarray(q.ids, dtype=object)
    elif str(args.queries).lower().endswith(".npz"):
        raise OptionError(f"--query-ids goes with a .npy file; {args.queries} is a .npz, which carries its own ids: "
                          "give it alone")
    else:
        queries = load_vectors(args.queries, mmap=args.mmap)
        query_ids = read_token_ids(args.query_ids)
    if args.queries is not None:
        if query_ids.shape[0] != queries.shape[0]:  # (from an ids file)
            raise ShapeMismatchError(
                f"{query_ids.shape[0]} ids but {args.queries} has {queries.shape[0]} rows", file=args.query_ids
            )
        if queries.shape[1] != docs.shape[1]:
            raise ShapeMismatchError(
                f"dimension mismatch: {args.queries} has {queries.shape[1]} dimensions "
                f"but {args.docs} has {docs.shape[1]}",
                file=args.queries,
            )
    with backend as client, _duplicates_in_files({args.doc_ids: doc_ids, args.query_ids: query_ids}):
        progress = None if args.quiet else ProgressBar("topk", unit=progress_unit(args))  # once the cluster is up
        topk = exact_topk(
            queries,
            docs,
            args.k,
            corpus_ids=None if is_shard_set(docs) else doc_ids,
            query_ids=query_ids,
            exclude_self=args.exclude_self,
            block_bytes=args.block_mb * 2**20,
            progress=progress,
            normalized=args.normalized,
            backend=client,
        )
    write_trec_topk(topk, args.out, tag=args.tag)
    return 0


@contextlib.contextmanager
def _duplicates_in_files(files: dict):
    """A duplicate id the search finds (it sorts the ids anyway) named in its ids file with both lines (files:
    path -> its ids; a None path: ids of a .npz or of shards, named by the search)."""
    from ..errors import DuplicateIdError

    try:
        yield
    except DuplicateIdError as e:
        import numpy as np

        for path, ids in files.items():
            if path is None or e.item is None:
                continue
            rows = np.flatnonzero(np.asarray(ids, dtype=object) == e.item)[:2]
            if len(rows) == 2:
                raise DuplicateIdError(f"id {e.item!r} is listed twice (lines {rows[0] + 1} and {rows[1] + 1})",
                                       file=str(path), line=int(rows[1]) + 1, item=e.item) from None
        raise


def is_shard_set(docs) -> bool:
    from ..io import ShardSet

    return isinstance(docs, ShardSet)


def _load_docs(args: argparse.Namespace):
    """(documents, their ids): an array (or memory map), or a ShardSet for shards, for ``--dask`` and for a
    single file without ``--doc-ids`` (a ``.npz`` with its ids, a ``.npy`` with ``X_ids.txt`` beside it)."""
    import numpy as np

    from ..errors import OptionError, ShapeMismatchError
    from ..io import is_shard_spec, load_vectors, open_shards, read_token_ids
    from ..io.shards import single_shard

    if is_shard_spec(args.docs):
        if args.doc_ids is not None:
            raise OptionError("--doc-ids goes with a single .npy file; shards carry their ids "
                              "(X_ids.txt beside each .npy, or 'ids' in each .npz)")
        docs = open_shards(args.docs)
        return docs, docs.read_ids()
    if args.doc_ids is not None and str(args.docs).lower().endswith(".npz"):
        raise OptionError(f"--doc-ids goes with a .npy file; {args.docs} is a .npz, which carries its own ids: "
                          "give it alone")
    if args.doc_ids is None:  # a .npz with its ids, or a .npy with X_ids.txt beside it (as evaluate --emb)
        from ..io import shard_embeddings

        emb = shard_embeddings(args.docs)
        return emb.vectors, np.asarray(emb.ids, dtype=object)
    if args.dask:  # the workers read the file themselves, a range of rows each
        docs = single_shard(args.docs, args.doc_ids)
        return docs, docs.read_ids()
    docs = load_vectors(args.docs, mmap=args.mmap)
    doc_ids = read_token_ids(args.doc_ids)
    if doc_ids.shape[0] != docs.shape[0]:
        raise ShapeMismatchError(
            f"{doc_ids.shape[0]} ids but {args.docs} has {docs.shape[0]} rows", file=args.doc_ids
        )
    return docs, doc_ids

"""Reference for benchmarks/bench_retrieval.py: exact cosine top-k with faiss.

Same inputs and output as ``python -m evalcore topk`` (TREC run written
by the same :func:`evalcore.io.write_trec_topk`, same id reading), so the two
processes do the same loading and writing work and differ only in the search:
here faiss ``IndexFlatIP`` (exact inner product, its own BLAS + heaps) on
L2-normalised float32 vectors.  faiss does not break score ties by id.

    python benchmarks/faiss_topk.py --docs D.npy --doc-ids D.txt
        --queries Q.npy --query-ids Q.txt --k 100 --out run.trec [--mmap]

With ``--mmap`` the corpus is memory-mapped and added to the index in chunks
(the index itself still holds a full float32 copy: faiss needs it in RAM).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import faiss  # noqa: E402

from evalcore.io import load_vectors, write_trec_topk  # noqa: E402
from evalcore.io import read_token_ids as read_ids  # noqa: E402
from evalcore.retrieval import TopK  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", required=True)
    p.add_argument("--doc-ids", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--query-ids", required=True)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--mmap", action="store_true")
    p.add_argument("--out", required=True)
    p.add_argument("--tag", default="faiss")
    p.add_argument("--chunk-rows", type=int, default=65536)
    args = p.parse_args(argv)

    docs = load_vectors(args.docs, mmap=args.mmap)
    doc_ids = read_ids(args.doc_ids)
    queries = np.ascontiguousarray(load_vectors(args.queries, mmap=False), dtype=np.float32)
    query_ids = read_ids(args.query_ids)
    faiss.normalize_L2(queries)

    index = faiss.IndexFlatIP(docs.shape[1])
    if args.mmap:
        for s in range(0, docs.shape[0], args.chunk_rows):
            block = np.array(docs[s : s + args.chunk_rows], dtype=np.float32)  # a copy: never write the file
            faiss.normalize_L2(block)
            index.add(block)
    else:
        docs = np.ascontiguousarray(docs, dtype=np.float32)
        faiss.normalize_L2(docs)  # in place on our own copy, as a faiss user would
        index.add(docs)
        del docs
    scores, indices = index.search(queries, min(args.k, index.ntotal))
    topk = TopK(indices.astype(np.int64, copy=False), scores, query_ids, doc_ids)
    write_trec_topk(topk, args.out, tag=args.tag)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Reference for benchmarks/bench_user_path.py: what a faiss user does with two ``.npz`` files.

    python benchmarks/faiss_user_path.py --docs docs.npz --queries queries.npz --k 100 --out run.trec

Exactly this, and nothing from evalcore (numpy and faiss only):

1. ``np.load`` each ``.npz`` (``allow_pickle=False``) and take its ``ids`` and
   ``embeddings`` arrays (numpy reads the zip members into memory);
2. ``faiss.normalize_L2`` both matrices (in place, on the arrays just read);
3. ``faiss.IndexFlatIP`` (exact inner product = cosine on unit vectors):
   ``add`` the corpus, ``search`` the top ``k`` of every query;
4. write the TREC run ``qid Q0 docid rank score faiss`` (``%.9g`` scores, as
   ``evalcore topk`` writes them), one ``%``-formatting per chunk of queries.

It does not read qrels, evaluate, or write reports: those are extra work on
evalcore's side of the comparison (see bench_user_path.py).  faiss does not
break score ties by id.
"""

from __future__ import annotations

import argparse

import faiss
import numpy as np


def load_npz(path: str) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return z["ids"], z["embeddings"]


def write_trec(path: str, query_ids: np.ndarray, doc_ids: np.ndarray, indices: np.ndarray,
               scores: np.ndarray, *, tag: str = "faiss", chunk: int = 2000) -> None:
    nq, k = indices.shape
    line = "%s Q0 %s %d %.9g " + tag + "\n"
    ranks = list(range(1, k + 1))
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for q0 in range(0, nq, chunk):
            idx = indices[q0 : q0 + chunk]
            keep = idx >= 0  # faiss pads with -1 when the corpus is shorter than k
            vals: list = [None] * (4 * int(keep.sum()))
            vals[0::4] = np.repeat(query_ids[q0 : q0 + chunk], keep.sum(axis=1)).tolist()
            vals[1::4] = doc_ids[idx[keep]].tolist()
            vals[2::4] = (ranks * idx.shape[0]) if keep.all() else (np.nonzero(keep)[1] + 1).tolist()
            vals[3::4] = scores[q0 : q0 + chunk][keep].tolist()
            fh.write((line * (len(vals) // 4)) % tuple(vals))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", required=True, help=".npz with arrays 'ids' and 'embeddings'")
    p.add_argument("--queries", required=True, help=".npz with arrays 'ids' and 'embeddings'")
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)

    doc_ids, docs = load_npz(args.docs)
    query_ids, queries = load_npz(args.queries)
    docs = np.ascontiguousarray(docs, dtype=np.float32)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    faiss.normalize_L2(docs)
    faiss.normalize_L2(queries)
    index = faiss.IndexFlatIP(docs.shape[1])
    index.add(docs)
    del docs
    scores, indices = index.search(queries, min(args.k, index.ntotal))
    write_trec(args.out, query_ids, doc_ids, indices, scores)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

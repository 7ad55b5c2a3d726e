"""The result of a top-k search: :class:`TopK`, and :func:`topk_to_long` to flatten it."""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True, eq=False)
class TopK:
    """Result of :func:`exact_topk`.

    ``indices[i, r]`` is the corpus row at rank ``r + 1`` for query ``i`` and
    ``scores[i, r]`` its cosine (float32).  The width is
    ``k' = min(k, number of candidates)``; a query with fewer candidates than
    ``k'`` (only possible with ``exclude_self`` when some queries are absent
    from the corpus) is padded at the end with index ``-1`` and score ``-inf``.
    """

    indices: np.ndarray
    scores: np.ndarray
    query_ids: np.ndarray
    corpus_ids: np.ndarray

    @property
    def k(self) -> int:
        return int(self.indices.shape[1])

    def doc_ids(self) -> np.ndarray:
        """Corpus ids of ``indices`` (empty string for padding)."""
        out = self.corpus_ids[np.maximum(self.indices, 0)]
        return np.where(self.indices >= 0, out, "")


def topk_to_long(topk: TopK) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat ``(query_id, doc_id, score)`` arrays, query by query in rank order.

    Padding (index ``-1``) is dropped.  Ranks are the positions within each
    query's run of rows, starting at 1.
    """
    mask = topk.indices >= 0
    qid = np.repeat(topk.query_ids, topk.k)[mask.ravel()]
    doc = topk.corpus_ids[topk.indices[mask]]
    return qid, doc, topk.scores[mask]

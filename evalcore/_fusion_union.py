"""The union of several runs' ranked rows, on id codes (used by :func:`evalcore.fusion.prepare`).

Queries and documents get one shared numbering each, in order of first appearance along the
runs' rows, comparing only the runs' vocabularies as strings; (query, document) keys are then
sorted once with their row numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def _union_codes(lists: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Query and document codes of every row of ``lists`` (concatenated) in one shared vocabulary each.

    ``lists``: each run's ranked lists (:class:`evalcore.fusion._Lists`: ``run``, ``rows``, ``q``,
    ``starts``, ``length``).

    Returns ``(qc, query_ids, dc, doc_ids)``: the codes number the ids in order of first
    appearance along the concatenated rows (as ``pd.factorize`` of the id strings would), but
    only the runs' vocabularies are compared as strings, never one string per row.
    """
    # a query's rows are one group per run: its first appearance is a group's first row
    heads = np.concatenate([x.run.query_ids[x.q[x.starts]] for x in lists]) if lists else np.zeros(0, object)
    head_codes, query_ids = pd.factorize(heads, sort=False)
    qc = np.repeat(head_codes.astype(np.int64), np.concatenate([x.length for x in lists]) if lists else 0)
    # documents: the runs' vocabularies merged, the rows mapped through them, renumbered by first appearance
    vocabs = [x.run.doc_vocab for x in lists]
    vocab_codes, merged = pd.factorize(np.concatenate(vocabs) if vocabs else np.zeros(0, object), sort=False)
    offsets = np.cumsum([0] + [len(v) for v in vocabs])
    merged_rows = np.concatenate([vocab_codes[off + x.run.d[x.rows]] for x, off in zip(lists, offsets[:-1], strict=True)]
                                 or [np.zeros(0, np.int64)])
    dc, first = pd.factorize(merged_rows, sort=False)
    return qc, np.asarray(query_ids, dtype=object), dc.astype(np.int64), np.asarray(merged, dtype=object)[first]


def _unique_inverse(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` of non-negative int64 keys, faster when the row numbers fit beside them.

    The keys are sorted with their row numbers packed in the low bits (one plain sort
    instead of an argsort); keys too large for that are left to ``np.unique``.

    >>> [a.tolist() for a in _unique_inverse(np.array([5, 2, 5, 0]))]
    [[0, 2, 5], [2, 1, 2, 0]]
    """
    n = len(key)
    bits = max(1, int(n - 1).bit_length())
    if n == 0 or int(key.max()) >= 2 ** (62 - bits):
        uniq, inv = np.unique(key, return_inverse=True)
        return uniq, inv.reshape(-1).astype(np.int64)
    packed = (key.astype(np.int64) << bits) | np.arange(n, dtype=np.int64)
    packed.sort()
    keys = packed >> bits
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    inv = np.empty(n, dtype=np.int64)
    inv[packed & ((1 << bits) - 1)] = np.cumsum(new) - 1
    return keys[new], inv

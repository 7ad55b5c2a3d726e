"""The paired tests of single pairs kept on disk, so that a restarted dashboard tests only the pairs it never tested.

:func:`evalcore.stats.compare` keeps each pair's raw result in a per-process memo keyed by the pair's two columns of
per-query values and every option of the test (:func:`evalcore.stats.tables._test_pair`); a checkpoint added to a
model then costs the tests of its two new pairs. A restarted server starts with an empty memo: :func:`kept_pairs`
reads the pairs an earlier process tested from the disk cache of results (:mod:`.derived`: the same folder, keyed
by this engine's :func:`~.derived.code_fingerprint`) into the memo, and keeps there the pairs tested inside it.

Only each pair's raw result is kept (its test, its means, wins/ties/losses, and its own bootstrap interval when the
resamples are not shared): a pair's result depends on its two value columns and the options only. The intervals
over resamples shared by a family (they depend on the family's queries) and the multiple-comparison correction
(over the whole family's raw p-values) are computed again by every call, so a table built from kept pairs is the
table built from nothing, bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .._lazy import pd
from ..stats import tables
from . import derived

__all__ = ["KIND", "MAX_ROWS", "kept_pairs"]

#: Kind of the cache file (:func:`.derived.store_frame`) holding the kept pairs.
KIND = "tested_pairs"
#: Pairs kept at most (the latest tested; the memo holds as many).
MAX_ROWS = tables._PAIRS_KEPT
_KEY = "pairs"  # one file: each row's own key names its values and options


@contextmanager
def kept_pairs() -> Iterator[None]:
    """Inside the block, a pair tested by an earlier process (the same values, options and engine) is not tested
    again, and the pairs tested in the block are kept for the next one. Never raises for the cache (a missing,
    damaged or turned-off cache only means testing)."""
    kept = derived.load_frame(KIND, _KEY)
    if kept is not None:
        tables.remember_pairs(kept)
    with tables.fresh_pairs() as fresh:
        yield
    if not fresh:
        return
    rows = tables.pair_rows(fresh)
    if not len(rows):
        return
    kept = derived.load_frame(KIND, _KEY)  # (another process may have kept some since)
    if kept is not None and list(kept.columns) == list(rows.columns):
        rows = pd.concat([kept[~kept["key"].isin(set(rows["key"]))], rows], ignore_index=True)
    derived.store_frame(KIND, _KEY, rows.tail(MAX_ROWS).reset_index(drop=True))

"""Writers of the long tables (CSV/TSV/Parquet) of judgments and runs (their readers: :mod:`evalcore.io.tables`, which
re-exports every writer).

Whatever they write, the readers read back identically: ids with a non-breaking or another Unicode space are written
as they are (the readers strip ASCII white space only, :data:`.source.ASCII_WS`); an empty id, one with ASCII white
space around it or one holding a control character is refused before anything is written.
"""

from __future__ import annotations

import csv
import os
from typing import IO, Any

import numpy as np

from .._lazy import pd
from ..data import Qrels, Run
from .source import refuse_broken_writes, refuse_unstripped_writes

__all__ = ["write_qrels_csv", "write_run_csv", "write_qrels_parquet", "write_run_parquet"]


# ============================================================================ writers
def _check_write_qrels(qrels: Qrels, dest: Any) -> None:
    _refuse_broken_qrels(qrels, dest)
    refuse_unstripped_writes(dest, ("query id", qrels.query_ids),
                             ("document id", np.unique(qrels.doc_ids.astype(str))))


def _check_write_run(run: Run, dest: Any) -> None:
    refuse_broken_writes(dest, ("query id", run.query_ids), ("document id", run.doc_vocab))
    refuse_unstripped_writes(dest, ("query id", run.query_ids), ("document id", run.doc_vocab))


def _refuse_broken_qrels(qrels: Qrels, dest: Any) -> None:
    refuse_broken_writes(dest, ("query id", qrels.query_ids), ("document id", qrels.doc_ids),
                         ("domain", [] if qrels.domains is None else qrels.domains))


def _open_text(dest: str | os.PathLike | IO[str]) -> tuple[IO[str], bool]:
    if hasattr(dest, "write"):
        return dest, False  # type: ignore[return-value]
    return open(dest, "w", encoding="utf-8", newline=""), True


def write_qrels_csv(qrels: Qrels, dest: str | os.PathLike | IO[str], *, sep: str = ",") -> None:
    """Write ``query_id, doc_id, relevance[, domain]`` with a header (``sep="\\t"`` for TSV).

    Queries without any judgment cannot be represented in a long table and are not written.
    """
    _check_write_qrels(qrels, dest)
    fh, close = _open_text(dest)
    try:
        w = csv.writer(fh, delimiter=sep, lineterminator="\n")
        header = ["query_id", "doc_id", "relevance"] + (["domain"] if qrels.domains is not None else [])
        w.writerow(header)
        qs = qrels.query_ids[qrels.q]
        cols = [qs.tolist(), qrels.doc_ids.tolist(), [int(g) for g in qrels.grades.tolist()]]
        if qrels.domains is not None:
            cols.append(qrels.domains[qrels.q].tolist())
        w.writerows(zip(*cols, strict=True))
    finally:
        if close:
            fh.close()


def write_run_csv(run: Run, dest: str | os.PathLike | IO[str], *, sep: str = ",", ties: str = "trec",
                  depth: int | None = None) -> None:
    """Write ``query_id, doc_id, rank, score`` in evaluation order (scores with 17 significant digits)."""
    from ..ranking import rank_order

    _check_write_run(run, dest)
    order, pos = rank_order(run, ties=ties)
    keep = np.ones(len(order), dtype=bool) if depth is None else pos < depth
    order, pos = order[keep], pos[keep]
    fh, close = _open_text(dest)
    try:
        w = csv.writer(fh, delimiter=sep, lineterminator="\n")
        w.writerow(["query_id", "doc_id", "rank", "score"])
        w.writerows(zip(run.query_ids[run.q[order]].tolist(), run.doc_vocab[run.d[order]].tolist(),
                        (pos + 1).tolist(), [repr(float(s)) for s in run.scores[order].tolist()], strict=True))
    finally:
        if close:
            fh.close()


def _write_parquet(frame: pd.DataFrame, dest: str | os.PathLike | IO[bytes]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), dest)


def write_qrels_parquet(qrels: Qrels, dest: str | os.PathLike | IO[bytes]) -> None:
    """Write ``query_id, doc_id, relevance[, domain]`` as Parquet (ids as strings, grades int64); ids as the CSV
    writer takes them (none empty or with ASCII white space around it: the reader would strip it)."""
    _check_write_qrels(qrels, dest)
    frame = qrels.to_frame()
    frame["query_id"] = frame["query_id"].astype(str)
    frame["doc_id"] = frame["doc_id"].astype(str)
    _write_parquet(frame, dest)


def write_run_parquet(run: Run, dest: str | os.PathLike | IO[bytes]) -> None:
    """Write ``query_id, doc_id, score`` as Parquet; ids as :func:`write_qrels_parquet` takes them."""
    _check_write_run(run, dest)
    frame = run.to_frame()
    frame["query_id"] = frame["query_id"].astype(str)
    frame["doc_id"] = frame["doc_id"].astype(str)
    _write_parquet(frame, dest)

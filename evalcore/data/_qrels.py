"""Graded judgments: :class:`Qrels` (see :mod:`evalcore.data` for the rules both classes keep)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._checks import (
    _as_str_array,
    _check_unique_pairs,
    _domains_of,
    _has_repeats,
    _in_mapping,
    _integer_grades,
    refuse_broken_column,
)
from .._columns import (
    arrow_indices,
    factorize_strings,
    pair_keys,
    positions_in,
    string_hashes,
    strings,
)
from .._lazy import pd
from ..errors import EmptyInputError, ValueTypeError

__all__ = ["Qrels"]


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded relevance judgments.

    Attributes
    ----------
    query_ids : ndarray of str, shape (n_queries,)
        Unique query ids, in first-appearance order.
    q : ndarray of int64, shape (n_rows,)
        Index into ``query_ids`` of each judgment row.
    doc_ids : ndarray of str, shape (n_rows,)
    grades : ndarray of int64, shape (n_rows,)
        Integer grades; ``grade >= rel_threshold`` (default 1) means relevant,
        0 and negative grades are never relevant.
    domains : ndarray of str, shape (n_queries,), or None
        Optional domain of each query ("" where unknown).
    source : str or None
        File the judgments came from, for messages.
    """

    query_ids: np.ndarray
    q: np.ndarray
    doc_ids: np.ndarray
    grades: np.ndarray
    domains: np.ndarray | None = None
    source: str | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_records(
        cls,
        query_ids: Sequence[Any] | np.ndarray,
        doc_ids: Sequence[Any] | np.ndarray,
        grades: Sequence[Any] | np.ndarray,
        *,
        domains: Mapping[str, str] | None = None,
        source: str | None = None,
        lines: np.ndarray | None = None,
        extra_queries: Sequence[str] = (),
        check_ids: bool = True,
    ) -> Qrels:
        """Build from three parallel columns; validates types, duplicates and ids.

        ``lines`` (1-based file line numbers of the rows) only improves messages.
        ``extra_queries`` adds queries with no judgment rows (they then count
        as queries with no relevant document). An id or domain holding a control
        character is refused (:class:`~evalcore.errors.InputFormatError` naming
        it and its record, e.g. ``doc_ids[4]``; ``check_ids=False``: checked by the caller).
        """
        return cls._from_columns(query_ids, doc_ids, grades, domains=domains, source=source, lines=lines,
                                 extra_queries=extra_queries, check_ids=check_ids,
                                 place=lambda arg, i: f" ({arg}[{i}])")

    @classmethod
    def _from_columns(
        cls, query_ids: Any, doc_ids: Any, grades: Any, *, domains: Mapping[str, str] | None, source: str | None,
        lines: np.ndarray | None, extra_queries: Sequence[str], check_ids: bool, place: Any,
    ) -> Qrels:
        """:meth:`from_records`, ``place(argument, i)`` naming record ``i`` of ``query_ids``, ``doc_ids`` or
        ``extra_queries`` in a refusal (``from_dict``, ``from_frame``: in their own terms)."""
        qs = _as_str_array(query_ids)
        ds = _as_str_array(doc_ids)
        g = np.asarray(grades)
        if not (len(qs) == len(ds) == len(g)):
            raise ValueTypeError(
                f"query, document and grade columns differ in length ({len(qs)}, {len(ds)}, {len(g)})",
                file=source,
            )
        if len(qs) == 0 and not extra_queries:
            raise EmptyInputError("no judgments", file=source)
        g = _integer_grades(g, source=source, lines=lines)
        if len(extra_queries):  # (the judged queries' set built once, not once per extra query: linear)
            judged = set(qs.tolist())
            qs_all = np.concatenate([qs, np.asarray([str(x) for x in extra_queries if str(x) not in judged], dtype=object)])
        else:
            qs_all = qs
        codes, uniq = factorize_strings(qs_all)
        if check_ids:
            nq = len(qs)
            refuse_broken_column(uniq, codes=codes, what="query id", source=source, place=lambda i: place(
                "query_ids", i) if i < nq else place("extra_queries", [str(x) for x in extra_queries].index(qs_all[i])))
            refuse_broken_column(ds, what="document id", source=source, place=lambda i: place("doc_ids", i))
        codes = codes[: len(qs)]
        _check_unique_pairs(codes, ds, uniq, source=source, what="judgments", lines=lines)
        order = np.argsort(codes, kind="stable")
        dom = None
        if domains is not None:
            dom = _domains_of(uniq, domains, source)
        return cls(uniq, codes[order], ds[order], g[order], dom, source)

    @classmethod
    def from_arrow_docs(
        cls, query_ids: np.ndarray, q: np.ndarray, docs: Any, grades: np.ndarray, *, source: str | None = None,
        check_ids: bool = True,
    ) -> Qrels | None:
        """Build from query codes (first-appearance order), a pyarrow string array of document ids and int grades.

        The TREC reader's path; the result equals :meth:`from_records` on the same
        rows. Uniqueness of (query, document) is checked through 64-bit pair
        hashes; returns None (the caller then uses :meth:`from_records`, which
        names the duplicate exactly) when a hash repeats or ids are too long to hash.
        Ids as :meth:`from_records` (``query_ids[i]``, ``docs[i]``; the arrow data scanned in place).
        """
        if check_ids:
            refuse_broken_column(query_ids, what="query id", source=source, place=lambda i: f" (query_ids[{i}])")
            refuse_broken_column(docs, what="document id", source=source, place=lambda i: f" (docs[{i}])")
        q = np.asarray(q, dtype=np.int64)
        hashes = string_hashes(docs) if len(q) else None
        if hashes is None or _has_repeats(pair_keys(q, hashes), q):
            return None
        ds = strings(docs)
        order = np.argsort(q, kind="stable")
        out = cls(np.asarray(query_ids, dtype=object), q[order], ds[order], np.asarray(grades, dtype=np.int64)[order],
                  None, source)
        out._cache["doc_hashes"] = hashes[order]  # reused by evaluation's hash join
        out._cache["doc_arrow"] = docs.take(arrow_indices(order))  # (its check of the matched ids, on the bytes)
        return out

    @classmethod
    def from_dict(
        cls, judgments: Mapping[str, Mapping[str, int]], *, domains: Mapping[str, str] | None = None,
        source: str | None = None,
    ) -> Qrels:
        """Build from ``{query_id: {doc_id: grade}}`` (the pytrec_eval / ranx shape); ids as :meth:`from_records`."""
        qs: list[str] = []
        ds: list[str] = []
        gs: list[Any] = []
        empty: list[str] = []
        for qid, docs in judgments.items():
            if not docs:
                empty.append(str(qid))
            for did, grade in docs.items():
                qs.append(qid)
                ds.append(did)
                gs.append(grade)
        return cls._from_columns(qs, ds, gs, domains=domains, source=source, lines=None, extra_queries=empty,
                                 check_ids=True, place=lambda arg, i: _in_mapping(arg, i, qs))

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, *, query: str = "query_id", doc: str = "doc_id", grade: str = "relevance",
        domain: str | None = None, source: str | None = None,
    ) -> Qrels:
        """Build from a long DataFrame; an optional domain column gives each query its domain."""
        doms = None
        if domain is not None and domain in frame.columns:
            sub = frame[[query, domain]].dropna().astype(str).drop_duplicates(query)
            doms = dict(zip(sub[query], sub[domain], strict=True))
        columns = {"query_ids": query, "doc_ids": doc}
        return cls._from_columns(frame[query].to_numpy(), frame[doc].to_numpy(), frame[grade].to_numpy(),
                                 domains=doms, source=source, lines=None, extra_queries=(), check_ids=True,
                                 place=lambda arg, i: f" (column {columns[arg]!r}, row {i}, counted from 0)")

    # ------------------------------------------------------------------ views
    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return len(self.q)

    def with_domains(self, domains: Mapping[str, str]) -> Qrels:
        """A copy whose query domains come from ``domains`` (missing → ""; a domain holding a control
        character is refused)."""
        dom = _domains_of(self.query_ids, domains, self.source)
        return Qrels(self.query_ids, self.q, self.doc_ids, self.grades, dom, self.source)

    def domain_of(self) -> np.ndarray:
        """Domain per query (``""`` everywhere when none was given)."""
        if self.domains is None:
            return np.full(self.n_queries, "", dtype=object)
        return self.domains

    def subset(self, query_ids: Sequence[str]) -> Qrels:
        """Judgments of the given queries only (order of ``query_ids`` kept; unknown ids are an error)."""
        pos = positions_in(self.query_ids, np.asarray(list(query_ids), dtype=object))
        if (pos < 0).any():
            bad = np.asarray(list(query_ids), dtype=object)[pos < 0]
            raise ValueTypeError(f"{len(bad)} query ids are not in the qrels, e.g. {list(bad[:3])}", file=self.source)
        remap = np.full(self.n_queries, -1, dtype=np.int64)
        remap[pos] = np.arange(len(pos))
        newq = remap[self.q]
        keep = newq >= 0
        order = np.argsort(newq[keep], kind="stable")
        dom = None if self.domains is None else self.domains[pos]
        return Qrels(self.query_ids[pos], newq[keep][order], self.doc_ids[keep][order], self.grades[keep][order],
                     dom, self.source)

    def to_frame(self) -> pd.DataFrame:
        """Long table ``query_id, doc_id, relevance[, domain]``."""
        df = pd.DataFrame({
            "query_id": self.query_ids[self.q], "doc_id": self.doc_ids, "relevance": self.grades,
        })
        if self.domains is not None:
            df["domain"] = self.domains[self.q]
        return df

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {str(x): {} for x in self.query_ids}
        for qi, d, g in zip(self.q.tolist(), self.doc_ids.tolist(), self.grades.tolist(), strict=True):
            out[self.query_ids[qi]][d] = int(g)
        return out

    def n_relevant(self, rel_threshold: int = 1) -> np.ndarray:
        """R per query: number of judged documents with grade >= rel_threshold."""
        return np.bincount(self.q[self.grades >= rel_threshold], minlength=self.n_queries)

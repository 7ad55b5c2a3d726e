"""Ranked lists: :class:`Run` (see :mod:`evalcore.data` for the rules both classes keep)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._checks import (
    _as_str_array,
    _check_run_columns,
    _has_repeats,
    _in_mapping,
    refuse_broken_column,
    refuse_broken_name,
)
from .._columns import (
    arrow_indices,
    encode_strings,
    factorize_strings,
    numbers,
    pair_keys,
    positions_in,
    string_hashes,
    strings,
)
from .._lazy import pd
from ..errors import DuplicateIdError, NonFiniteValueError, ValueTypeError

__all__ = ["Run"]


@dataclass(frozen=True, eq=False)
class Run:
    """Ranked lists: per query, documents with scores (any depth).

    Attributes
    ----------
    query_ids : ndarray of str, shape (n_queries,)
    q : ndarray of int64, shape (n_rows,)
        Index into ``query_ids`` of each row.
    doc_vocab : ndarray of str, shape (n_docs,)
        Unique document ids of the run (a property: a run read from a TREC
        file builds it on first use, evaluation does not need it).
    d : ndarray of int64, shape (n_rows,)
        Index into ``doc_vocab`` of each row (same laziness).
    scores : ndarray of float64, shape (n_rows,)
        Higher is better. Order is decided by score, ties by the tie rule chosen
        at evaluation time (see :func:`evalcore.ranking.rank_order`); the rank
        column of a TREC file is ignored, as trec_eval does.
    name : str
    source : str or None
    search_depth : int or None
        The ``k`` of the exact top-k search that ranked the run (an embedding run, a fusion of such runs without
        ``top_n``; a random baseline of every candidate: ``random_baseline.EXHAUSTIVE``): each list holds ``k``
        documents, or every candidate where fewer. None: any other run; its lists are as long as it made them (:meth:`searched`).
    """

    query_ids: np.ndarray
    q: np.ndarray
    _doc_vocab: np.ndarray | None
    _d: np.ndarray | None
    scores: np.ndarray
    name: str = "run"
    source: str | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    _docs: Any = field(default=None, repr=False, compare=False)  # arrow string array, one id per row
    search_depth: int | None = field(default=None, compare=False)

    # ------------------------------------------------------------ documents
    @property
    def doc_vocab(self) -> np.ndarray:
        self._materialize_docs()
        return self._doc_vocab  # type: ignore[return-value]

    @property
    def d(self) -> np.ndarray:
        self._materialize_docs()
        return self._d  # type: ignore[return-value]

    def _materialize_docs(self) -> None:
        """Dictionary-encode the per-row document ids (lazy runs only; idempotent, thread-safe)."""
        if self._d is not None:
            return
        codes, vocab = encode_strings(self._docs)
        object.__setattr__(self, "_doc_vocab", vocab)  # vocabulary first: readers test _d
        object.__setattr__(self, "_d", codes)

    def doc_order_at(self, rows: np.ndarray) -> np.ndarray:
        """Integers in the code-point order of the given rows' document ids (equal ids, equal values).

        What a tie rule sorts by (:func:`evalcore.ranking.code_ranks`); only the distinct
        documents among ``rows`` are compared as strings.
        """
        from ..ranking import code_ranks, dense_ranks

        rows = np.asarray(rows, dtype=np.int64)
        if self._d is None:
            import pyarrow as pa
            import pyarrow.compute as pc

            enc = pc.dictionary_encode(self._docs.take(arrow_indices(rows)))  # no pandas: the CLI imports it meanwhile
            if isinstance(enc, pa.ChunkedArray):
                enc = enc.combine_chunks()
            # every entry of the dictionary is used and distinct: rank it as arrow strings
            return dense_ranks(enc.dictionary)[numbers(enc.indices).astype(np.int64)]
        return code_ranks(self._d[rows], self._doc_vocab)  # type: ignore[index]

    def docs_at(self, rows: np.ndarray) -> np.ndarray:
        """Document ids (object array) of the given rows, without building the vocabulary."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._d is None:  # (no pandas: the command line may never import it)
            return strings(self._docs.take(arrow_indices(rows)))
        return self._doc_vocab[self._d[rows]]  # type: ignore[index]

    def docs_arrow_at(self, rows: np.ndarray) -> Any:
        """Document ids of the given rows as an arrow string array (None when the run holds codes)."""
        return None if self._d is not None else self._docs.take(arrow_indices(np.asarray(rows, dtype=np.int64)))

    def doc_codes_in(self, values: np.ndarray, *, where: dict[str, int] | None = None) -> np.ndarray:
        """Per row, the index of its document in ``values`` (unique str ids), -1 where absent.

        Parameters
        ----------
        values : object ndarray (m,)
            Unique document ids (e.g. the judged documents of a qrels).
        where : dict, optional
            ``evalcore._columns.name_index(values)``, when the caller keeps it (one per ground truth, not one
            per run).

        Returns
        -------
        int64 ndarray (n_rows,)
        """
        if self._d is None:
            import pyarrow as pa
            import pyarrow.compute as pc

            found = pc.index_in(self._docs, value_set=pa.array(values, type=pa.string()))
            return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        return positions_in(values, self._doc_vocab, where=where)[self._d]

    @classmethod
    def from_codes(
        cls, query_ids: np.ndarray, q: np.ndarray, doc_vocab: np.ndarray, d: np.ndarray, scores: np.ndarray,
        *, name: str = "run", source: str | None = None, lines: np.ndarray | None = None,
        check_duplicates: bool = True, check_ids: bool = True,
    ) -> Run:
        """Build from integer codes (the readers' fast path); validates scores, duplicates and ids.

        A query id, document id (``query_ids[i]``, ``doc_vocab[i]``) or ``name`` holding a control character is
        refused (:class:`~evalcore.errors.InputFormatError`); ``check_ids=False``: the ids are checked by the
        caller (the name is always checked).
        """
        refuse_broken_name(name, source=source)
        if check_ids:
            refuse_broken_column(query_ids, what="query id", source=source, place=lambda i: f" (query_ids[{i}])")
            refuse_broken_column(doc_vocab, what="document id", source=source, place=lambda i: f" (doc_vocab[{i}])")
        s = np.asarray(scores, dtype=np.float64)
        _check_run_columns(len(q), len(d), len(s), source)
        bad = ~np.isfinite(s)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            line = int(lines[i]) if lines is not None else None
            raise NonFiniteValueError(
                f"score {s[i]!r} of document {doc_vocab[d[i]]!r} for query {query_ids[q[i]]!r} is not finite "
                f"({int(bad.sum())} such scores)", file=source, line=line, query=str(query_ids[q[i]]),
                item=str(doc_vocab[d[i]]),
            )
        q = np.asarray(q, dtype=np.int64)
        d = np.asarray(d, dtype=np.int64)
        if check_duplicates:
            key = q * max(len(doc_vocab), 1) + d
            if _has_repeats(key.astype(np.uint64), q):
                i = int(np.flatnonzero(pd.Index(key).duplicated())[0])
                line = int(lines[i]) if lines is not None else None
                raise DuplicateIdError(
                    f"document {doc_vocab[d[i]]!r} is listed twice for query {query_ids[q[i]]!r} in run {name!r}",
                    file=source, line=line, query=str(query_ids[q[i]]), item=str(doc_vocab[d[i]]),
                )
        return cls(np.asarray(query_ids, dtype=object), q, np.asarray(doc_vocab, dtype=object), d, s, name, source)

    @classmethod
    def from_arrow_docs(
        cls, query_ids: np.ndarray, q: np.ndarray, docs: Any, scores: np.ndarray,
        *, name: str = "run", source: str | None = None, check_ids: bool = True,
    ) -> Run:
        """Build from query codes and a pyarrow string array of per-row document ids (the TREC reader's path).

        The document vocabulary is built only when something asks for it
        (:attr:`doc_vocab`, :attr:`d`); evaluation joins the ids against the
        judged documents directly. Scores and (query, document) uniqueness are
        validated here: a 64-bit hash of every pair is checked for repeats, and
        only a repeated hash (a real duplicate, or a ~1e-7 chance collision)
        builds the vocabulary for the exact check and its message. Ids and ``name`` as
        :meth:`from_codes` (``query_ids[i]``, ``docs[i]``: the arrow data scanned in place).
        """
        s = np.asarray(scores, dtype=np.float64)
        q = np.asarray(q, dtype=np.int64)
        _check_run_columns(len(q), len(docs), len(s), source)
        if docs.null_count:
            raise ValueTypeError("a document id is missing", file=source)
        refuse_broken_name(name, source=source)
        if check_ids:
            refuse_broken_column(query_ids, what="query id", source=source, place=lambda i: f" (query_ids[{i}])")
            refuse_broken_column(docs, what="document id", source=source, place=lambda i: f" (docs[{i}])")
        run = cls(np.asarray(query_ids, dtype=object), q, None, None, s, name, source, {}, docs)
        bad = ~np.isfinite(s)
        doc_hashes = None if bad.any() else string_hashes(docs)
        keys = None if doc_hashes is None else pair_keys(q, doc_hashes)
        if doc_hashes is not None:
            run._cache["doc_hashes"] = doc_hashes  # evaluation joins on them (see evaluate._hashed_grades)
        if keys is None or _has_repeats(keys, q):
            # exact path: builds the vocabulary; raises the precise error (or finds a hash collision)
            cls.from_codes(run.query_ids, q, run.doc_vocab, run.d, s, name=name, source=source, check_ids=False)
        return run

    @classmethod
    def from_records(
        cls,
        query_ids: Sequence[Any] | np.ndarray,
        doc_ids: Sequence[Any] | np.ndarray,
        scores: Sequence[Any] | np.ndarray,
        *,
        name: str = "run",
        source: str | None = None,
        lines: np.ndarray | None = None,
        check_duplicates: bool = True,
        check_ids: bool = True,
    ) -> Run:
        """Build from parallel columns; validates scores, (query, doc) uniqueness and ids.

        A query or document id holding a control character is refused
        (:class:`~evalcore.errors.InputFormatError` naming it and its record, e.g. ``doc_ids[4]``; only the
        distinct ids are scanned), and so is such a ``name``; ``check_ids=False``: the ids are checked by the caller.
        """
        return cls._from_columns(query_ids, doc_ids, scores, name=name, source=source, lines=lines,
                                 check_duplicates=check_duplicates, check_ids=check_ids,
                                 place=lambda arg, i: f" ({arg}[{i}])")

    @classmethod
    def _from_columns(cls, query_ids: Any, doc_ids: Any, scores: Any, *, name: str, source: str | None,
                      lines: np.ndarray | None, check_duplicates: bool, check_ids: bool, place: Any) -> Run:
        """:meth:`from_records`, ``place(argument, i)`` naming record ``i`` of ``query_ids`` or ``doc_ids`` in a
        refusal (``from_dict``, ``from_ranked_lists``: in their own terms)."""
        qs = _as_str_array(query_ids)
        ds = _as_str_array(doc_ids)
        try:
            s = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError):
            for i, v in enumerate(list(scores)):
                try:
                    float(v)
                except (TypeError, ValueError):
                    line = int(lines[i]) if lines is not None else None
                    raise ValueTypeError(f"score {v!r} is not a number", file=source, line=line) from None
            raise
        if not (len(qs) == len(ds) == len(s)):
            raise ValueTypeError(
                f"query, document and score columns differ in length ({len(qs)}, {len(ds)}, {len(s)})",
                file=source,
            )
        qc, qu = factorize_strings(qs)
        dc, du = factorize_strings(ds)
        if check_ids:
            refuse_broken_column(qu, codes=qc, what="query id", source=source, place=lambda i: place("query_ids", i))
            refuse_broken_column(du, codes=dc, what="document id", source=source, place=lambda i: place("doc_ids", i))
        return cls.from_codes(qu, qc, du, dc, s, name=name, source=source, lines=lines,
                              check_duplicates=check_duplicates, check_ids=False)

    @property
    def doc_ids(self) -> np.ndarray:
        """Document id of each row (materialised once)."""
        hit = self._cache.get("doc_ids")
        if hit is None:
            if self._d is None:
                hit = self._docs.to_numpy(zero_copy_only=False).astype(object)
            else:
                hit = self.doc_vocab[self.d]
            self._cache["doc_ids"] = hit
        return hit

    @classmethod
    def from_dict(cls, results: Mapping[str, Mapping[str, float]], *, name: str = "run",
                  source: str | None = None) -> Run:
        """Build from ``{query_id: {doc_id: score}}``; ids and ``name`` as :meth:`from_records`."""
        qs: list[str] = []
        ds: list[str] = []
        ss: list[float] = []
        for qid, docs in results.items():
            for did, sc in docs.items():
                qs.append(qid)
                ds.append(did)
                ss.append(sc)
        return cls._from_columns(qs, ds, ss, name=name, source=source, lines=None, check_duplicates=True,
                                 check_ids=True, place=lambda arg, i: _in_mapping(arg, i, qs))

    @classmethod
    def from_ranked_lists(cls, lists: Mapping[str, Sequence[str]], *, name: str = "run") -> Run:
        """Build from ``{query_id: [doc_1, doc_2, ...]}`` (best first); score = depth − position; ids and ``name``
        as :meth:`from_records`."""
        qs: list[str] = []
        ds: list[str] = []
        ss: list[float] = []
        for qid, docs in lists.items():
            n = len(docs)
            for i, d in enumerate(docs):
                qs.append(qid)
                ds.append(d)
                ss.append(float(n - i))
        return cls._from_columns(qs, ds, ss, name=name, source=None, lines=None, check_duplicates=True,
                                 check_ids=True, place=lambda arg, i: _in_mapping(arg, i, qs))

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return len(self.q)

    def with_rows(self, keep: np.ndarray) -> Run:
        """The rows where ``keep`` (one bool per row) holds, in order; queries left without rows dropped."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != self.q.shape:
            raise ValueTypeError(f"keep must hold one bool per row ({len(self.q)}), got shape {keep.shape}")
        if keep.all():
            return self
        used = np.bincount(self.q[keep], minlength=len(self.query_ids)) > 0
        return Run.from_codes(self.query_ids[used], (np.cumsum(used) - 1)[self.q[keep]], self.doc_vocab, self.d[keep],
                              self.scores[keep], name=self.name, source=self.source, check_duplicates=False,
                              check_ids=False)

    def renamed(self, name: str) -> Run:
        """Same lists under another name (arrays shared, they are never written); a ``name`` holding a control
        character is refused."""
        refuse_broken_name(name, source=self.source)
        r = Run(self.query_ids, self.q, self._doc_vocab, self._d, self.scores, name, self.source, {}, self._docs,
                self.search_depth)
        r._cache.update(self._cache)
        return r

    def searched(self, depth: int | None) -> Run:
        """Same lists (arrays shared) marked as the top-``depth`` of an exact search (:attr:`search_depth`; None:
        unmarked). Evaluation does not call such a run shallow where a list is shorter than a cutoff: the corpus
        had no more candidates (:mod:`evalcore.evaluation_notes`)."""
        r = Run(self.query_ids, self.q, self._doc_vocab, self._d, self.scores, self.name, self.source, {}, self._docs,
                None if depth is None else int(depth))
        r._cache.update(self._cache)
        return r

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"query_id": self.query_ids[self.q], "doc_id": self.doc_ids, "score": self.scores})

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {str(x): {} for x in self.query_ids}
        for qi, d, s in zip(self.q.tolist(), self.doc_ids.tolist(), self.scores.tolist(), strict=True):
            out[self.query_ids[qi]][d] = s
        return out

    def ranked_lists(self, *, ties: str = "trec", depth: int | None = None) -> dict[str, list[tuple[str, float]]]:
        """``{query: [(doc, score), ...]}`` in evaluation order (:func:`evalcore.ranking.ranked_lists`)."""
        from ..ranking import ranked_lists

        return ranked_lists(self, ties=ties, depth=depth)

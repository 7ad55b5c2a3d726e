"""Data-model objects holding ids the constructors refuse (a control character), for the tests of the checks made
after construction (the workspace's, the writers'): each is the dataclass built directly, as other code (or an
object made before the constructors checked ids) could build it, after checking that the constructor refuses it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from evalcore import Qrels, Run
from evalcore._columns import factorize_strings
from evalcore.errors import InputFormatError
from evalcore.io import Embeddings


def _refused(build: Any) -> None:
    with pytest.raises(InputFormatError, match="holds a control character"):
        build()


def raw_run(query_ids: list[str], doc_ids: list[str], scores: list[float], *, name: str = "r") -> Run:
    """``Run.from_records(query_ids, doc_ids, scores, name=name)``, built around its refusal."""
    _refused(lambda: Run.from_records(query_ids, doc_ids, scores, name=name))
    (qc, qu), (dc, du) = factorize_strings(query_ids), factorize_strings(doc_ids)
    return Run(qu, qc, du, dc, np.asarray(scores, dtype=np.float64), name)


def raw_qrels(query_ids: list[str], doc_ids: list[str], grades: list[int], *,
              domains: dict[str, str] | None = None) -> Qrels:
    """``Qrels.from_records(query_ids, doc_ids, grades, domains=domains)``, built around its refusal."""
    _refused(lambda: Qrels.from_records(query_ids, doc_ids, grades, domains=domains))
    qc, qu = factorize_strings(query_ids)
    dom = None if domains is None else np.asarray([domains.get(q, "") for q in qu], dtype=object)
    return Qrels(qu, qc, np.asarray(doc_ids, dtype=object), np.asarray(grades, dtype=np.int64), dom)


def raw_embeddings(ids: list[str], vectors: np.ndarray) -> Embeddings:
    """``Embeddings.from_arrays(ids, vectors)``, built around its refusal."""
    _refused(lambda: Embeddings.from_arrays(ids, vectors))
    return Embeddings(np.asarray(ids, dtype=object), np.asarray(vectors, dtype=np.float32))

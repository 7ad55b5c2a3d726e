"""evalcore: exact retrieval evaluation — every metric at every k, paired statistics, fusion.

Pure Python (numpy, pandas, scipy, pyarrow, threadpoolctl); never imports Streamlit.

The public API a notebook needs is importable from here; each name is loaded on
first use (so ``python -m evalcore topk`` never pays for pandas or SciPy)::

    from evalcore import load_qrels, load_run, evaluate, summarize, compare
    qrels = load_qrels("qrels.txt")
    ev = evaluate(qrels, {"bm25": load_run("bm25.trec")}, metrics=["ndcg", "recall"], k=[10, 100])
    summarize(ev.table)

Layers, lowest first (an upper layer may import a lower one, never the reverse):
``errors`` → data model (``data``, ``ranking``, ``measures``, ``metrics``) → ``io`` and
``retrieval`` → engine (``evaluate``, ``aggregate``, ``stats``, ``fusion``, ``diversity``,
``combine``, ``report``, ``embedding_runs``) → ``workspace`` (the persistent
:class:`Workspace`) → ``cli``.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from . import _compat

# `evaluate` is also the name of a submodule: bound here, first, so that the function (not the
# module, which Python sets as a package attribute when it is first imported) is `evalcore.evaluate`
from .evaluate import Evaluation, evaluate

__version__ = "0.1.0"

#: public name -> module that defines it
_API: dict[str, str] = {
    # data model
    "Qrels": "evalcore.data", "Run": "evalcore.data",
    "Measure": "evalcore.measures", "parse_measure": "evalcore.measures", "parse_measures": "evalcore.measures",
    "EvalcoreError": "evalcore.errors", "EvalcoreWarning": "evalcore.errors",
    # reading and writing
    "load_qrels": "evalcore.io", "load_run": "evalcore.io", "load_embeddings": "evalcore.io",
    "Embeddings": "evalcore.io", "write_trec_run": "evalcore.io", "write_trec_qrels": "evalcore.io",
    # evaluation, aggregation, statistics
    "Evaluation": "evalcore.evaluate", "evaluate": "evalcore.evaluate",  # bound above
    "summarize": "evalcore.aggregate", "wide_per_query": "evalcore.aggregate",
    "compare": "evalcore.stats", "compare_many": "evalcore.stats", "compare_by_domain": "evalcore.stats",
    "paired_test": "evalcore.stats", "tukey_hsd": "evalcore.stats",
    "concat_evaluations": "evalcore.combine", "evaluate_per_ground_truth": "evalcore.combine",
    # fusion, embeddings, retrieval
    "weighted_rrf": "evalcore.fusion", "fuse": "evalcore.fusion", "normalize_run": "evalcore.fusion",
    "search_weights": "evalcore.fusion_search",
    "agreement": "evalcore.agreement", "summarize_agreement": "evalcore.agreement",
    "embedding_run": "evalcore.embedding_runs", "reference_ground_truth": "evalcore.embedding_runs",
    "evaluate_against_reference": "evalcore.embedding_runs",
    "exact_topk": "evalcore.retrieval", "TopK": "evalcore.retrieval",
    "diversity_table": "evalcore.diversity",
    "write_outputs": "evalcore.report", "build_report": "evalcore.report",
    # the persistent workspace
    "Workspace": "evalcore.workspace",
}

__all__ = [
    "agreement",
    "build_report",
    "compare",
    "compare_by_domain",
    "compare_many",
    "concat_evaluations",
    "diversity_table",
    "embedding_run",
    "Embeddings",
    "EvalcoreError",
    "EvalcoreWarning",
    "evaluate",
    "evaluate_against_reference",
    "evaluate_per_ground_truth",
    "Evaluation",
    "exact_topk",
    "fuse",
    "load_embeddings",
    "load_qrels",
    "load_run",
    "Measure",
    "normalize_run",
    "paired_test",
    "parse_measure",
    "parse_measures",
    "Qrels",
    "reference_ground_truth",
    "Run",
    "search_weights",
    "summarize",
    "summarize_agreement",
    "TopK",
    "tukey_hsd",
    "weighted_rrf",
    "wide_per_query",
    "Workspace",
    "write_outputs",
    "write_trec_qrels",
    "write_trec_run",
]


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'evalcore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _function_not_module(name: str) -> property:
    """A package attribute that is always the function ``name`` of the submodule of the same name."""

    def get(self: types.ModuleType) -> Any:
        return getattr(importlib.import_module(f".{name}", __name__), name)

    def set_(self: types.ModuleType, value: Any) -> None:  # the import system binding the submodule: ignored
        pass

    return property(get, set_)


class _Package(types.ModuleType):
    """The package's module type: ``evalcore.evaluate`` and ``evalcore.agreement`` are always the functions.

    Each function shares its name with its module (:mod:`evalcore.evaluate`, :mod:`evalcore.agreement`).
    Importing that module (``from evalcore.evaluate import Evaluation``, ``import evalcore.agreement``,
    directly or through a lazy name) makes Python bind the module on the package under that name, after
    which ``from evalcore import evaluate`` gave the module — depending on what had been imported before.
    These descriptors keep the public names meaning the functions (the modules stay importable as
    ``from evalcore.agreement import ...`` and in ``sys.modules``).
    """

    evaluate = _function_not_module("evaluate")
    agreement = _function_not_module("agreement")


sys.modules[__name__].__class__ = _Package

_compat.install()

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .aggregate import summarize, wide_per_query
    from .agreement import agreement, summarize_agreement
    from .combine import concat_evaluations, evaluate_per_ground_truth
    from .data import Qrels, Run
    from .diversity import diversity_table
    from .embedding_runs import embedding_run, evaluate_against_reference, reference_ground_truth
    from .errors import EvalcoreError, EvalcoreWarning
    from .fusion import fuse, normalize_run, weighted_rrf
    from .fusion_search import search_weights
    from .io import (
        Embeddings,
        load_embeddings,
        load_qrels,
        load_run,
        write_trec_qrels,
        write_trec_run,
    )
    from .measures import Measure, parse_measure, parse_measures
    from .report import build_report, write_outputs
    from .retrieval import TopK, exact_topk
    from .stats import compare, compare_by_domain, compare_many, paired_test, tukey_hsd
    # Workspace (evalcore.workspace, layer 4) is not imported here: the package face is layer 3

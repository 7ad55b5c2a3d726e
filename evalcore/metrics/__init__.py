"""Ranking metrics, every query and every cutoff k in one vectorised pass.

All metrics share one signature, ``metric(j: Judged, ks: ndarray) -> ndarray``
of shape ``(n_queries, len(ks))`` (a parameterised metric takes its parameters
as keywords with defaults: ``rbp(j, ks, p=0.8)``), so dispatch is a table
lookup (:data:`ALL_METRICS`). ``Judged`` holds, for a block of queries, the
grades of the ranked documents as a dense integer matrix (rank i ↦ column i−1),
which documents carry a judgment, and the qrels' judgments per grade, built
once per evaluation by :mod:`evalcore.evaluate`. The tables: :data:`METRICS`
(relevance in the top k), :data:`WHOLE_LIST_METRICS` (the whole retrieved
list, no cutoff), :data:`COVERAGE_METRICS` (judgments in the top k).

Notation of the docstrings: :mod:`evalcore.metrics._base`. The families:
:mod:`~evalcore.metrics.ranked` (binary metrics at k),
:mod:`~evalcore.metrics.graded` (nDCG, DCG, ERR),
:mod:`~evalcore.metrics.whole_list` (counts, set measures, bpref, infAP,
GM-MAP, RBP), :mod:`~evalcore.metrics.curves` (interpolated precision).

Every formula guards its denominator: a 0/0 is defined as 0 (trec_eval's
convention), never NaN, except ``first_rel_rank`` where "none found" is NaN by
definition (documented there and counted by the aggregations).

The relevance threshold θ affects every metric except nDCG (both gains), which
always uses the raw grades, as trec_eval does with ``-l``, and the metrics of
:data:`RELEVANCE_FREE`, which do not look at relevance at all.

How a summary aggregates a metric over queries is declared here too
(:data:`AGGREGATION`): the mean, except the counts (summed, as trec_eval's
summary line does) and ``gm_map`` (geometric mean: ``exp`` of the mean of its
per-query logs).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._base import K_ALL, Judged
from .curves import RECALL_LEVELS, eleven_pt_avg, iprec_at_recall
from .graded import ERR_MAX_GRADE, dcg, dcg_exp, err, ndcg, ndcg_exp
from .ranked import (
    average_precision,
    average_precision_found,
    f1,
    hit_rate,
    hits,
    judged,
    mrr,
    precision,
    recall,
    recall_capped,
)
from .whole_list import (
    GM_FLOOR,
    INFAP_EPSILON,
    RBP_P,
    bpref,
    first_rel_rank,
    gm_map,
    infap,
    num_q,
    num_rel,
    num_rel_ret,
    num_ret,
    rbp,
    rbp_residual,
    rprec,
    set_f,
    set_precision,
    set_recall,
)

__all__ = [
    "Judged", "METRICS", "WHOLE_LIST_METRICS", "COVERAGE_METRICS", "RELEVANCE_FREE", "CURVES", "ALL_METRICS", "K_FREE", "UNBOUNDED",
    "WHOLE_LIST", "NO_ALL_CUTOFF", "LOWER_IS_BETTER", "DESCRIPTIVE", "NAN_METRICS", "AGGREGATION", "AGGREGATIONS",
    "aggregation_of", "metric_base", "K_ALL",
    "RECALL_LEVELS", "ERR_MAX_GRADE", "GM_FLOOR", "INFAP_EPSILON", "RBP_P",
]

MetricFn = Callable[..., np.ndarray]

#: name -> function: relevance metrics of the top k (or of a rank: ``rprec``, ``first_rel_rank``);
#: every one takes ``(rel=N)`` except nDCG (raw grades).
METRICS: dict[str, MetricFn] = {
    "precision": precision,
    "recall": recall,
    "recall_capped": recall_capped,
    "hit_rate": hit_rate,
    "hits": hits,
    "f1": f1,
    "mrr": mrr,
    "map": average_precision,
    "map_found": average_precision_found,
    "ndcg": ndcg,
    "ndcg_exp": ndcg_exp,
    "dcg": dcg,
    "dcg_exp": dcg_exp,
    "err": err,
    "rprec": rprec,
    "first_rel_rank": first_rel_rank,
}

#: measures of the whole retrieved list, no cutoff (trec_eval's counts, set measures, bpref...).
WHOLE_LIST_METRICS: dict[str, MetricFn] = {
    "num_ret": num_ret,
    "num_rel": num_rel,
    "num_rel_ret": num_rel_ret,
    "num_q": num_q,
    "set_precision": set_precision,
    "set_recall": set_recall,
    "set_f": set_f,
    "bpref": bpref,
    "infap": infap,
    "gm_map": gm_map,
    "11pt_avg": eleven_pt_avg,
    "iprec_at_recall": iprec_at_recall,
    "rbp": rbp,
    "rbp_residual": rbp_residual,
}

#: how much of the top k the qrels judge.
COVERAGE_METRICS: dict[str, MetricFn] = {
    "judged": judged,
}

#: every metric: what the evaluator dispatches on.
ALL_METRICS: dict[str, MetricFn] = {**METRICS, **WHOLE_LIST_METRICS, **COVERAGE_METRICS}

#: metrics that do not depend on relevance: they take no ``(rel=N)``.
RELEVANCE_FREE = frozenset({"num_ret", "num_q", "judged", "rbp_residual"})

#: metrics that take no cutoff (k is recorded as 0 in the table).
K_FREE = frozenset({"rprec", "first_rel_rank", *WHOLE_LIST_METRICS})

#: families with a level parameter; the bare name stands for trec_eval's eleven levels.
CURVES = frozenset({"iprec_at_recall"})

#: metrics that read the whole retrieved list whatever the cutoffs asked for.
WHOLE_LIST = frozenset(WHOLE_LIST_METRICS) - {"num_ret", "num_rel", "num_q"}

#: cutoff metrics whose k is a denominator: no ``@all`` (use ``set_precision`` / ``set_f``; recall_capped's
#: min(k, R) without a cutoff is R: ``recall@all``).
NO_ALL_CUTOFF = frozenset({"precision", "f1", "recall_capped"})

#: metrics whose values are not in [0, 1].
UNBOUNDED = frozenset({
    "first_rel_rank", "hits", "dcg", "dcg_exp", "num_ret", "num_rel", "num_rel_ret", "num_q", "gm_map",
})

#: metrics where a lower value is the better one.
LOWER_IS_BETTER = frozenset({"first_rel_rank"})

#: metrics whose per-query value may be NaN by definition (first_rel_rank: nothing relevant retrieved).
NAN_METRICS = frozenset({"first_rel_rank"})

#: descriptive metrics (the list, the judgments, RBP's uncertainty): no run is "best" on them.
DESCRIPTIVE = frozenset({"num_ret", "num_rel", "num_rel_ret", "num_q", "judged", "rbp_residual"})

#: how a summary aggregates each metric's per-query values (metrics not listed: "mean").
AGGREGATION: dict[str, str] = {
    "num_ret": "sum",
    "num_rel": "sum",
    "num_rel_ret": "sum",
    "num_q": "sum",
    "gm_map": "gmean",
}

#: the aggregations and what they compute from the per-query values x_1..x_n.
AGGREGATIONS: dict[str, str] = {
    "mean": "arithmetic mean (1/n) Σ x_q, Student-t confidence interval",
    "sum": "total Σ x_q, as trec_eval's summary line (no confidence interval)",
    "gmean": "exp((1/n) Σ x_q) of per-query logs: a geometric mean; its interval is exp of the "
             "t interval on the log scale",
}


def metric_base(metric: str) -> str:
    """The metric's name without its parameters and cutoff, as the sets above list it.

    >>> metric_base("recall(rel=2)@10"), metric_base("gm_map"), metric_base("ndcg@5")
    ('recall', 'gm_map', 'ndcg')
    """
    return str(metric).split("(", 1)[0].split("@", 1)[0]


def aggregation_of(metric: str) -> str:
    """Aggregation of a metric named in a table (``"gm_map"``, ``"num_rel(rel=2)"``...)."""
    return AGGREGATION.get(metric_base(metric), "mean")

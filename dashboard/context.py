"""The per-rerun :class:`Context` of the dashboard: everything the pages need, resolved from the session's workspace
by :func:`dashboard.state.context` (which every page calls; ``S.Context`` there too)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dashboard.lazyruns import LazyRuns
from evalcore import workspace as W
from evalcore.data import Qrels
from evalcore.evaluate import Evaluation


@dataclass
class Context:
    """Everything the pages need for one rerun (built by :func:`dashboard.state.context`)."""

    ws: W.Snapshot
    settings: W.Settings | None = None
    settings_error: str | None = None
    gt_error: str | None = None
    gt_warnings: tuple[str, ...] = ()
    aspects: tuple[str, ...] = ()
    domain_error: str | None = None
    metadata_error: str | None = None
    qrels: dict = field(default_factory=dict)  # aspect -> sampled Qrels
    n_universe: int = 0
    runs: LazyRuns = field(default_factory=lambda: LazyRuns([], lambda name: None))  # evaluated runs, read on demand
    run_keys: dict[str, str] = field(default_factory=dict)  # uid -> content key
    qrels_keys: dict = field(default_factory=dict)  # aspect -> content key of its evaluated qrels
    run_errors: dict[str, str] = field(default_factory=dict)  # uid -> message
    run_warnings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    run_aspect: dict[str, str | None] = field(default_factory=dict)  # name -> aspect
    reference: Any = None  # ReferenceGroundTruth of a reference-model ground truth
    evaluation: Evaluation | None = None
    eval_inputs: tuple | None = None  # (qrels by aspect, () -> [(run, aspect)], read on call): what was evaluated
    eval_key: str | None = None
    eval_each: dict[str, str] = field(default_factory=dict)  # run name -> key of its own evaluation (judgments)
    eval_error: str | None = None
    # (key, rows) of the session's previous evaluation when this one is it with runs appended (a checkpoint added):
    # its first rows are that one's, so a view of them (a metric@k slice) is that view's with the new rows appended
    eval_continues: tuple[str, int] | None = None
    # the evaluation's warnings (e.g. a relevance threshold no grade reaches), less the settings' own notes (a metric
    # name renamed: said when the settings were applied), shown on every page like the coverage banner
    eval_warnings: tuple[str, ...] = ()
    metadata: pd.DataFrame | None = None
    query_texts: dict[str, str] | None = None  # query id -> text (a queries file, when loaded)
    queries_error: str | None = None

    @property
    def ready(self) -> bool:
        return self.evaluation is not None

    def qrels_for(self, run_name: str) -> Qrels | None:
        return self.qrels.get(self.run_aspect.get(run_name))

    @property
    def domain_mismatch(self) -> str | None:
        """The ground truth's warning that the domain mapping names none of its queries, if it gave one."""
        return next((w for w in self.gt_warnings if w.startswith(W.NO_DOMAIN_MATCH)), None)

    def qrels_at(self, run_name: str, k: int) -> Qrels | None:
        """The ground truth the run's metrics at cutoff ``k`` were computed against: with a reference model,
        its top-``k`` at that k (mode "tied"; :meth:`~evalcore.embedding_runs.ReferenceGroundTruth.qrels_at`),
        else the qrels of the run's aspect; ``k = 0`` (no cutoff): :meth:`qrels_for`."""
        if self.reference is not None and int(k) > 0:
            return self.reference.qrels_at(int(k))
        return self.qrels_for(run_name)

    @property
    def run_names(self) -> list[str]:
        return list(self.evaluation.runs) if self.evaluation is not None else []

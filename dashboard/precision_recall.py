"""The Overview's precision–recall curve: evalcore's interpolated precision at trec_eval's eleven recall
levels (``iprec_at_recall``), summarised per run from the per-query table (no metric math here).

When the settings hold ``iprec_at_recall``, the curve is read from the page's own summary; otherwise
the same runs, ground truth and settings are evaluated for that measure alone, once per evaluation
(cached like every other step).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pandas as pd
import streamlit as st

from dashboard import state as S
from dashboard import tables as T
from evalcore import workspace as W

__all__ = ["PR_METRIC", "pr_data", "in_settings"]

PR_METRIC = "iprec_at_recall"


@st.cache_data(show_spinner=False, max_entries=16)
def _c_pr(key: str, _qrels: dict, _runs: Callable[[], list], _settings: W.Settings, _reference: object) -> S.Outcome:
    from evalcore.aggregate import summarize

    def compute() -> pd.DataFrame:
        ev = W.evaluate_workspace(_qrels, _runs(), _settings, reference=_reference)
        return T.pr_frame(summarize(ev.table, aggregates=True))

    return S._attempt(compute)  # (an error as its message; its warnings collected, for the page to show)


def in_settings(ctx: S.Context) -> bool:
    """Whether the evaluation already holds the eleven levels (then the curve costs nothing)."""
    return len(T.pr_frame(S.summary(ctx))) > 0


def pr_data(ctx: S.Context) -> S.Outcome:
    """:func:`dashboard.tables.pr_frame` of the evaluation as an :class:`~dashboard.state.Outcome` (its value, or the
    error's message; the warnings of the evaluation made for it, which the evaluation's own warnings,
    :attr:`~dashboard.state.Context.eval_warnings`, may already hold)."""
    if in_settings(ctx):
        return S.memo(f"pr:{ctx.eval_key}", lambda: S.Outcome(T.pr_frame(S.summary(ctx))))
    settings = dataclasses.replace(ctx.settings, metrics=(PR_METRIC,))
    key = "pr:" + W.stable_key(ctx.eval_key, PR_METRIC)
    qrels, runs = ctx.eval_inputs
    return S.memo(key, lambda: _c_pr(key, qrels, runs, settings, ctx.reference))

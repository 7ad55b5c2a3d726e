"""Downloads generated when clicked (``st.download_button(data=callable)``).

Streamlit runs the callable outside the script run (another thread, no session state), so these
closures only use the objects they capture and evalcore's pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def report_json(ctx: Any, top_k: int, *, ci_method: str, n_resamples: int, ci_seed: int) -> Callable[[], bytes]:
    """Deferred ``report.json`` (:func:`evalcore.report.build_report`) with the intervals the pages show."""
    ev, runs = ctx.evaluation, dict(ctx.runs)
    meta = {"dashboard": True, "query_sample": ctx.settings.sample_size or "all", "seed": ctx.settings.seed,
            "ground_truth": ctx.ws.ground_truth.label if ctx.ws.ground_truth else None}

    def make() -> bytes:
        from evalcore.report import build_report

        rep = build_report(ev, runs, top_k=top_k, metadata=meta, ci_method=ci_method, n_resamples=n_resamples,
                           seed=ci_seed)
        return json.dumps(rep, indent=1, ensure_ascii=False, allow_nan=False, default=str).encode("utf-8")

    return make


def results_csv(ctx: Any, run: str) -> Callable[[], bytes]:
    """Deferred ``{run}_results.csv`` (:func:`evalcore.report.results_by_k`)."""
    ev = ctx.evaluation

    def make() -> bytes:
        from evalcore.report import results_by_k

        return results_by_k(ev, run).to_csv(index=False).encode("utf-8")

    return make


def per_query_csv(ctx: Any) -> Callable[[], bytes]:
    """Deferred per-query CSV (the long table ``run, query_id, domain, metric, k, value``)."""
    table = ctx.evaluation.table

    def make() -> bytes:
        return table.to_csv(index=False).encode("utf-8")

    return make

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
    ev = ctx.evaluation
    # the dashboard's runs (LazyRuns): those not read yet are read at the click; any other mapping: as it is
    runs = ctx.runs.deferred() if hasattr(ctx.runs, "deferred") else dict(ctx.runs)
    from evalcore.report import ground_truth_metadata

    # ground_truth: each run's (the mapping evaluate --out writes, with or without aspects)
    meta = {"dashboard": True, "query_sample": ctx.settings.sample_size or "all",
            "ground_truth": ground_truth_metadata(ev.runs, ctx.ws.ground_truth.label if ctx.ws.ground_truth
                                                  else None)}
    meta.update(cli_metadata(ctx.settings, ci_seed=ci_seed))
    qrels = ev.settings.get("qrels")
    if isinstance(qrels, dict):  # runs judged against several aspects: the one file, as evaluate --out writes it
        meta["qrels"] = "; ".join(dict.fromkeys(str(v) for v in qrels.values()))
    fusion = fusion_metadata(ctx)
    if fusion:
        meta["fusion"] = fusion

    meta = json.loads(json.dumps(meta, default=str))  # plain JSON values (numpy numbers...)

    def make() -> bytes:  # the per-query part written as text: 14 runs x 20,000 queries took 45 s and +4.7 GB
        from evalcore.report import report_json_text

        read = {n: r() if callable(r) else r for n, r in runs.items()}
        return report_json_text(ev, read, top_k=top_k, metadata=meta, indent=1, ci_method=ci_method,
                                n_resamples=n_resamples, seed=ci_seed).encode("utf-8")

    return make


def cli_metadata(settings: Any, *, ci_seed: int) -> dict[str, Any]:
    """The keys ``evaluate --out`` writes in report.json's metadata, with the meaning they have there
    (:func:`evalcore.report.sample_metadata`): ``command`` (``"dashboard"``), ``n_samples`` (the Data page's sample
    size, null for every query), ``seed`` (the intervals' seed, ``ci_seed``) and ``sample_seed`` (the Data page's
    sample seed, null without a sample). Before, the dashboard's ``seed`` was the sample's seed and ``evaluate``'s
    the intervals' (and the sample's unless ``--sample-seed``): the same evaluation's two reports disagreed on it.
    The dashboard's own ``query_sample`` (the sample size, or ``"all"``) is kept beside them."""
    from evalcore.report import sample_metadata

    return {"command": "dashboard", **sample_metadata(n_samples=int(settings.sample_size),
                                                      sample_seed=int(settings.seed), seed=int(ci_seed))}


def fusion_metadata(ctx: Any) -> dict[str, dict[str, Any]]:
    """Each evaluated fused run's recipe, as ``evaluate --out`` writes it: its inputs' weights, ``c``,
    ``top_n``, tie rule, method, normalisation, and the ranking depth of its embedding inputs."""
    names = {r.uid: r.name for r in ctx.ws.runs}
    kinds = {r.uid: r.kind for r in ctx.ws.runs}
    out = {}
    for src in ctx.ws.runs:
        if src.kind != "fused" or src.name not in ctx.runs:
            continue
        f = src.fusion
        out[src.name] = {"runs": {names.get(u, u): w for u, w in zip(f.inputs, f.weights, strict=True)}, "c": f.c,
                         "top_n": f.top_n, "ties": f.ties or ctx.settings.ties, "method": f.method, "norm": f.norm}
        deep = {names[u]: ctx.settings.depth for u in f.inputs if kinds.get(u) == "embedding"}
        if deep:
            out[src.name]["inputs_depth"] = deep
    return out


def results_csv(ctx: Any, run: str) -> Callable[[], bytes]:
    """Deferred ``{run}_results.csv`` (:func:`evalcore.report.results_by_k`)."""
    ev = ctx.evaluation

    def make() -> bytes:
        from evalcore.report import results_by_k

        return results_by_k(ev, run).to_csv(index=False).encode("utf-8")

    return make


def per_query_csv(ctx: Any) -> Callable[[], bytes]:
    """Deferred per-query CSV (the long table ``run, query_id, domain, metric, k, value``)."""
    ev = ctx.evaluation  # its DataFrame form is built at the click (a restarted Overview never needs it)

    def make() -> bytes:
        return ev.table.to_csv(index=False).encode("utf-8")

    return make

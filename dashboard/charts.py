"""Plotly figures of the dashboard (built from evalcore's aggregates; no metric math here).

Plotly renders a subset of HTML (``<b>``, ``<br>``, ``<a href>``...) in every
text it draws, so each user string (run, domain and query names) goes through
:func:`ptext`, which escapes ``&``, ``<`` and ``>`` (Plotly decodes those
entities back to the literal characters).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

PALETTE = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6", "#9D755D", "#BAB0AC",
           "#EECA3B")


def ptext(s: object) -> str:
    """A user string made safe for Plotly text (titles, legends, hovers, annotations)."""
    return html.escape(str(s), quote=False)


def ttext(s: object) -> str:
    """:func:`ptext` for a string placed inside a ``hovertemplate`` (``%{`` would start a substitution)."""
    return ptext(s).replace("%{", "%\u200b{")


def color_of(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _layout(fig: go.Figure, *, title: str | None = None, height: int = 420) -> go.Figure:
    fig.update_layout(title=title, height=height, margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    return fig


def _per_run(frame: pd.DataFrame, runs: Sequence[str] | None, x: str):
    """(index, run, its rows sorted by ``x``) for each run with rows, in ``runs`` order (default: the frame's)."""
    order = list(runs) if runs is not None else list(dict.fromkeys(frame["run"]))
    for i, run in enumerate(order):
        d = frame[frame["run"] == run].sort_values(x)
        if not d.empty:
            yield i, run, d


def _ci_n(d: pd.DataFrame) -> np.ndarray:
    """``customdata`` of a mean's hover: CI low, CI high, n."""
    return np.stack([d["ci_low"], d["ci_high"], d["n"]], axis=1)


def curves(curve: pd.DataFrame, *, metric_label: str, log_x: bool = False, runs: Sequence[str] | None = None) -> go.Figure:
    """Mean of one metric vs k, one line per run, its 95% CI as a band in the same legend group.

    ``curve``: :func:`evalcore.workspace.curve_frame` output (run, k, mean, ci_low, ci_high).
    Clicking a run in the legend hides its line and its band together.
    """
    fig = go.Figure()
    for i, run, d in _per_run(curve, runs, "k"):
        c = color_of(i)
        name = ptext(run)
        x = d["k"].to_numpy()
        fig.add_trace(go.Scatter(
            x=np.concatenate([x, x[::-1]]), y=np.concatenate([d["ci_high"].to_numpy(), d["ci_low"].to_numpy()[::-1]]),
            mode="lines", fill="toself", fillcolor=_rgba(c, 0.18), line={"width": 0}, hoverinfo="skip",
            showlegend=False,
            legendgroup=name, name=f"{name} 95% CI",
        ))
        fig.add_trace(go.Scatter(
            x=x, y=d["mean"], mode="lines+markers", name=name, legendgroup=name, line={"color": c, "width": 2},
            customdata=_ci_n(d),
            hovertemplate=f"{ttext(run)}<br>k=%{{x}}<br>mean=%{{y:.4f}}<br>95% CI [%{{customdata[0]:.4f}}, "
                          "%{customdata[1]:.4f}]<br>n=%{customdata[2]}<extra></extra>",
        ))
    fig.update_xaxes(title="k", type="log" if log_x else "linear",
                     tickvals=sorted(curve["k"].unique().tolist()) if len(curve) else None)
    fig.update_yaxes(title=ptext(metric_label))
    return _layout(fig)


def pr_curves(pr: pd.DataFrame, *, runs: Sequence[str] | None = None) -> go.Figure:
    """Interpolated precision vs recall, one line per run (the 11-point precision–recall curve).

    ``pr``: :func:`dashboard.tables.pr_frame` output (run, recall, mean, ci_low, ci_high, n). One
    trace per run, named after it; the hover gives the 95% CI of the mean at each level.
    """
    fig = go.Figure()
    for i, run, d in _per_run(pr, runs, "recall"):
        fig.add_trace(go.Scatter(
            x=d["recall"].to_numpy(), y=d["mean"].to_numpy(), mode="lines+markers", name=ptext(run),
            line={"color": color_of(i), "width": 2}, customdata=_ci_n(d),
            hovertemplate=f"{ttext(run)}<br>recall %{{x:.1f}}<br>interpolated precision %{{y:.4f}}<br>95% CI "
                          "[%{customdata[0]:.4f}, %{customdata[1]:.4f}]<br>n=%{customdata[2]}<extra></extra>",
        ))
    fig.update_xaxes(title="recall", range=[-0.02, 1.02], dtick=0.1)
    fig.update_yaxes(title="interpolated precision (mean over queries)", range=[0, 1.02])
    return _layout(fig)


def compare_heatmap(matrix: dict[str, pd.DataFrame], *, metric_label: str) -> go.Figure:
    """Runs × runs: colour = row − column mean difference, text = difference and corrected p-value (* significant)."""
    diff = matrix["diff"]
    z = diff.to_numpy(dtype=float)
    lim = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
    labels = [ptext(r) for r in diff.index]
    text = matrix["text"].map(lambda s: ptext(s).replace("\n", "<br>")).to_numpy()
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=labels, text=text, texttemplate="%{text}", colorscale="RdBu", zmid=0,
        zmin=-lim or -1, zmax=lim or 1, colorbar={"title": "row − col"},
        hovertemplate="row %{y} − column %{x}<br>%{text}<extra></extra>",
    ))
    fig.update_yaxes(autorange="reversed", title="run (row)")
    fig.update_xaxes(title="run (column)", side="top")
    return _layout(fig, title=f"{ptext(metric_label)}: row − column", height=max(300, 110 * len(labels) + 120))


def pair_scatter(pf: pd.DataFrame, *, run_a: str, run_b: str, metric_label: str) -> go.Figure:
    """Per-query values of run A (x) vs run B (y), one colour per domain, with the diagonal.

    Each point's ``customdata`` is the raw query id (read back from a selection).
    """
    fig = go.Figure()
    lo = float(min(pf["a"].min(), pf["b"].min(), 0.0)) if len(pf) else 0.0
    hi = float(max(pf["a"].max(), pf["b"].max(), 1.0)) if len(pf) else 1.0
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line={"color": "#888", "dash": "dash"},
                             name="equal (diagonal)", hoverinfo="skip"))
    for i, (dom, d) in enumerate(pf.groupby("domain", sort=True)):
        name = ptext(dom if dom else "(no domain)")
        fig.add_trace(go.Scatter(
            x=d["a"].to_numpy(), y=d["b"].to_numpy(), mode="markers", name=name,
            marker={"color": color_of(i), "size": 7, "opacity": 0.75},
            customdata=d["query_id"].to_numpy(dtype=str), hovertext=d["query_id"].map(ptext).to_numpy(dtype=str),
            hovertemplate="query %{hovertext}<br>domain %{fullData.name}<br>A=%{x:.4f}<br>B=%{y:.4f}"
                          "<extra></extra>",
        ))
    fig.update_xaxes(title=f"{ptext(run_a)} (A) {ptext(metric_label)}")
    fig.update_yaxes(title=f"{ptext(run_b)} (B) {ptext(metric_label)}", scaleanchor="x", scaleratio=1)
    return _layout(fig, height=480)


def diff_histogram(pf: pd.DataFrame, *, run_a: str, run_b: str, metric_label: str) -> go.Figure:
    """Histogram of per-query differences B − A (0 marked)."""
    fig = go.Figure(go.Histogram(x=pf["difference"].to_numpy(), nbinsx=40, marker={"color": PALETTE[0]},
                                 hovertemplate="B − A in %{x}<br>%{y} queries<extra></extra>"))
    fig.add_vline(x=0, line={"color": "#888", "dash": "dash"})
    fig.update_xaxes(title=f"{ptext(run_b)} − {ptext(run_a)} ({ptext(metric_label)}) per query")
    fig.update_yaxes(title="queries")
    return _layout(fig, height=360)


def domain_bars(dom: pd.DataFrame, *, metric_label: str, runs: Sequence[str]) -> go.Figure:
    """Grouped bars: the metric's aggregate (the mean, unless it declares another) per domain, one bar per
    run, its 95% CI as error bars."""
    fig = go.Figure()
    for i, run in enumerate(runs):
        d = dom[dom["run"] == run]
        fig.add_trace(go.Bar(
            x=[ptext(x) for x in d["domain"]], y=d["aggregate"], name=ptext(run), marker={"color": color_of(i)},
            error_y={"type": "data", "symmetric": False, "array": d["aggregate_ci_high"] - d["aggregate"],
                     "arrayminus": d["aggregate"] - d["aggregate_ci_low"]},
            customdata=d["n"], hovertemplate=f"{ttext(run)}<br>%{{x}}: %{{y:.4f}} (n=%{{customdata}})<extra></extra>",
        ))
    fig.update_layout(barmode="group")
    fig.update_yaxes(title=ptext(metric_label))
    return _layout(fig)


def domain_heatmap(dom: pd.DataFrame, *, metric_label: str, runs: Sequence[str]) -> go.Figure:
    """Run × domain heatmap of the metric's aggregate (the mean, unless it declares another)."""
    wide = dom.pivot(index="run", columns="domain", values="aggregate").reindex(list(runs))
    z = wide.to_numpy(dtype=float)
    text = np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.3f}")(z)
    fig = go.Figure(go.Heatmap(z=z, x=[ptext(c) for c in wide.columns], y=[ptext(r) for r in wide.index],
                               text=text, texttemplate="%{text}", colorscale="Viridis",
                               colorbar={"title": ptext(metric_label)},
                               hovertemplate="%{y} / %{x}: %{z:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, height=max(260, 70 * len(runs) + 120))


def agreement_heatmap(matrix: pd.DataFrame, *, measure_label: str, lo: float = 0.0) -> go.Figure:
    """Runs × runs agreement (symmetric): colour and text = the mean agreement of the pair.

    ``matrix``: :func:`evalcore.agreement.agreement_matrix` output; ``lo`` the lower end of
    the measure's range (−1 for Kendall's τ, 0 otherwise; the upper end is 1).
    """
    z = matrix.to_numpy(dtype=float)
    labels = [ptext(r) for r in matrix.index]
    text = np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.3f}")(z)
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=labels, text=text, texttemplate="%{text}", colorscale="Viridis",
                               zmin=lo, zmax=1.0, colorbar={"title": ptext(measure_label)},
                               hovertemplate="%{y} / %{x}: %{z:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(side="top")
    return _layout(fig, title=f"{ptext(measure_label)}, mean over queries",
                   height=max(300, 90 * len(labels) + 140))


def weight_trials(trials: pd.DataFrame, *, metric_label: str) -> go.Figure:
    """Value of every weight trial, sorted, the best marked (``trials``: ``WeightSearch.trials``)."""
    d = trials.sort_values("value", ascending=False, kind="mergesort").reset_index(drop=True)
    wcols = [c for c in d.columns if c.startswith("weight:")]
    hover = d[wcols].apply(lambda r: "<br>".join(f"{ptext(c[7:])}: {v:.3f}" for c, v in r.items()), axis=1)
    fig = go.Figure(go.Scatter(
        x=np.arange(1, len(d) + 1), y=d["value"].to_numpy(), mode="markers",
        marker={"color": np.where(d["best"], PALETTE[3], PALETTE[0]), "size": np.where(d["best"], 12, 6)},
        hovertext=hover.to_numpy(dtype=str), hovertemplate="%{hovertext}<br>value %{y:.4f}<extra></extra>",
    ))
    fig.update_xaxes(title="trial (sorted by value)")
    fig.update_yaxes(title=ptext(metric_label))
    return _layout(fig, height=320)

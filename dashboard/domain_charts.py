"""The Domains page's Plotly figures (built from evalcore's aggregates; no metric math here): the metric per
domain and run as bars (or one row per domain, beyond a few domains) and as a domain × run heatmap. User strings
go through :func:`dashboard.charts.ptext`, as in every chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.chartkit import (
    AGREEMENT_PLOT_PX,
    DASHES,
    PATTERNS,
    TICK_FONT_PX,
    _layout,
    ptext,
    short_labels,
    top_labels,
    ttext,
    value_title,
)
from dashboard.runstyles import LOW_COVERAGE_DASH, RunStyle, run_styles

#: Up to this many domains the Domains page draws grouped vertical bars; beyond, one row per domain (bars of 40
#: domains x 8 runs were 3 px wide and their tilted names unreadable).
DOMAIN_BARS_UP_TO = 12
#: Height (px) of one domain's row when the domains are rows (:func:`domain_bars` beyond DOMAIN_BARS_UP_TO,
#: :func:`domain_heatmap`).
DOMAIN_ROW_PX = 26


def bar_pattern(look: RunStyle) -> str:
    """The bar pattern standing for a run's line dash (none for a solid line; "." for a low-coverage run's dots), so
    two bars of one colour differ as their lines do."""
    if look.dash == LOW_COVERAGE_DASH:
        return "."
    return PATTERNS[DASHES.index(look.dash) % len(PATTERNS)] if look.dash in DASHES else ""


def domain_bars(dom: pd.DataFrame, *, metric_label: str, runs: Sequence[str], higher_is_better: bool = True,
                styles: Mapping[str, RunStyle] | None = None) -> go.Figure:
    """Per domain and run, the metric's aggregate (the mean, unless it declares another) with its 95% CI (none
    where n < 2 or for a total); the value axis' title says when lower is better.

    ``styles``: each run's look (:func:`dashboard.runstyles.run_styles` with the runs' models and versions, as the
    Overview's curves take it), so a run has the same colour here as there (a model's hue, its version's shade);
    without it, or when it lacks a run, the looks of runs without a model in this order. A bar takes the colour and
    a pattern for the dash (:func:`bar_pattern`), a dot the colour and the marker.

    Up to :data:`DOMAIN_BARS_UP_TO` domains: grouped bars, one per run. Beyond: one row per domain (its name
    horizontal, readable), each run a dot with its interval as a whisker, the runs side by side within the row, the
    value axis on top and the legend at the right."""
    domains = list(dict.fromkeys(dom["domain"]))
    many = len(domains) > DOMAIN_BARS_UP_TO
    looks = dict(styles) if styles is not None and all(r in styles for r in runs) else run_styles(list(runs))
    fig = go.Figure()
    for run in runs:
        look = looks[run]
        d = dom[dom["run"] == run]
        ok = np.isfinite(d["aggregate_ci_low"].to_numpy(dtype=float)) & (d["n"].to_numpy() >= 2)
        up = np.where(ok, d["aggregate_ci_high"] - d["aggregate"], np.nan)
        down = np.where(ok, d["aggregate"] - d["aggregate_ci_low"], np.nan)
        names = [ptext(x) for x in d["domain"]]
        err = {"type": "data", "symmetric": False, "array": up, "arrayminus": down}
        if many:
            fig.add_trace(go.Scatter(
                x=d["aggregate"], y=names, orientation="h", mode="markers", name=ptext(run), error_x=err,
                cliponaxis=False,  # (a dot at the axis' end, a mean of 0 or 1, was cut in half)
                marker={"color": look.color, "symbol": look.marker, "size": 7}, customdata=d["n"],
                hovertemplate=f"{ttext(run)}<br>%{{y}}: %{{x:.4f}} (n=%{{customdata}})<extra></extra>"))
        else:
            fig.add_trace(go.Bar(
                x=names, y=d["aggregate"], name=ptext(run),
                marker={"color": look.color, "pattern": {"shape": bar_pattern(look)}}, error_y=err, customdata=d["n"],
                hovertemplate=f"{ttext(run)}<br>%{{x}}: %{{y:.4f}} (n=%{{customdata}})<extra></extra>"))
    if not many:
        fig.update_layout(barmode="group")
        fig.update_yaxes(title=value_title(metric_label, higher_is_better))
        return _layout(fig)
    order = [ptext(x) for x in domains]
    fig.update_layout(scattermode="group", scattergap=0.3)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=order, autorange="reversed",
                     tickfont={"size": TICK_FONT_PX}, ticktext=[ptext(t) for t in short_labels(domains)],
                     tickvals=order)
    fig.update_xaxes(title=value_title(metric_label, higher_is_better), side="top")
    fig = _layout(fig, height=DOMAIN_ROW_PX * len(domains) + 140)
    # the value axis is drawn on top (readable above a tall chart): the legend goes to the right, top-aligned
    # (above the plot, where every other chart has it, it covered the axis' tick labels and title)
    fig.update_layout(legend={"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"})
    return fig


def domain_heatmap(dom: pd.DataFrame, *, metric_label: str, runs: Sequence[str], higher_is_better: bool = True
                   ) -> go.Figure:
    """Domain × run heatmap of the metric's aggregate (the mean, unless it declares another): one row per domain,
    its name horizontal (40 domains as columns were 20 px wide, nameless), one column per run, named on top
    (:func:`short_labels`; the hover has the whole name). The brightest cell is the best (the scale reversed
    where lower is better, which the colour bar's title says)."""
    wide = dom.pivot(index="domain", columns="run", values="aggregate").reindex(columns=list(runs))
    z = wide.to_numpy(dtype=float)
    text = np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.3f}", otypes=[object])(z) if z.size else z
    xs, ys = [ptext(c) for c in wide.columns], [ptext(r) for r in wide.index]
    fig = go.Figure(go.Heatmap(z=z, x=xs, y=ys, text=text, texttemplate="%{text}", colorscale="Viridis",
                               reversescale=not higher_is_better,
                               colorbar={"title": value_title(metric_label, higher_is_better)},
                               hovertemplate="%{y} / %{x}: %{z:.4f}<extra></extra>", xgap=1, ygap=1))
    fig.update_yaxes(autorange="reversed", tickvals=ys, ticktext=[ptext(t) for t in short_labels(wide.index)])
    fig.update_xaxes(tickvals=xs, ticktext=[ptext(t) for t in short_labels(wide.columns)])
    angle, label_px = top_labels(short_labels(wide.columns), plot_px=AGREEMENT_PLOT_PX)
    fig.update_xaxes(side="top", tickangle=angle, tickfont={"size": TICK_FONT_PX})
    fig = _layout(fig, height=max(260, DOMAIN_ROW_PX * len(ys) + 60 + label_px))
    fig.update_layout(margin={"t": label_px + 10})
    return fig

"""Plotly figures of the dashboard (built from evalcore's aggregates; no metric math here).

Plotly renders a subset of HTML (``<b>``, ``<br>``, ``<a href>``...) in every
text it draws, so each user string (run, domain and query names) goes through
:func:`ptext`, which escapes ``&``, ``<`` and ``>`` (Plotly decodes those
entities back to the literal characters).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.chartkit import (  # noqa: F401  (the shared pieces stay importable from here)
    AGREEMENT_PLOT_PX,
    DASHES,
    LABEL_CHARS,
    PALETTE,
    PATTERNS,
    SYMBOLS,
    TICK_FONT_PX,
    TITLE_BAND_PX,
    TITLE_FONT_PX,
    TITLE_PAD_PX,
    _layout,
    _rgba,
    color_of,
    dash_of,
    pattern_of,
    ptext,
    short_labels,
    symbol_of,
    top_labels,
    ttext,
    value_title,
)
from dashboard.domain_charts import DOMAIN_BARS_UP_TO, DOMAIN_ROW_PX, domain_bars, domain_heatmap  # noqa: F401
from dashboard.runstyles import RunStyle, model_styles, run_styles

#: From this many points on, scatter plots are drawn with WebGL (``scattergl``).
SCATTERGL_FROM = 1000
#: Beyond this many queries, the per-query scatter shows their density and only this many points.
SCATTER_POINTS = 400
#: Room (px) above a chart's plot for Plotly's toolbar (modebar: about 26 px at the top right, shown on hover): a
#: legend placed from the plot's top down starts below it.
TOOLBAR_PX = 34

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


def _looks(frame: pd.DataFrame, runs: Sequence[str] | None, flagged: Sequence[str],
           styles: Mapping[str, RunStyle] | None) -> dict[str, RunStyle]:
    """Each run's look: ``styles`` (:func:`dashboard.runstyles.run_styles` with the runs' models and versions),
    else by position among ``runs`` (default: the frame's), as for runs without a model."""
    order = [str(r) for r in (runs if runs is not None else dict.fromkeys(frame["run"]))]
    if styles is not None and all(r in styles for r in order):
        return dict(styles)
    return run_styles(order, flagged=flagged)


def _legend(run: str, flagged: Sequence[str]) -> str:
    """A run's legend name (plain text): low-coverage runs named so (their means count every query they do not
    answer as 0)."""
    return ptext(run) + (" (low coverage)" if run in flagged else "")


def _hover_head(run: str, look: RunStyle) -> str:
    """The hover's first line(s): the run, and its model and version when it has them."""
    return ttext(run) + (f"<br>{ttext(look.note)}" if look.note else "")


def _ok_spans(ok: np.ndarray) -> list[np.ndarray]:
    """Positions of each run of consecutive True values of ``ok`` (a band is drawn over each, never across a gap)."""
    idx = np.flatnonzero(ok)
    return [s for s in np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1) if len(s)] if len(idx) else []


def curves(curve: pd.DataFrame, *, metric_label: str, log_x: bool = False, runs: Sequence[str] | None = None,
           bands: bool = True, flagged: Sequence[str] = (), styles: Mapping[str, RunStyle] | None = None) -> go.Figure:
    """Mean of one metric vs k, one line per run; with ``bands``, its 95% CI as a band in the same legend group.

    ``curve``: :func:`dashboard.tables.curve_frame` output (run, k, n, mean, ci_low, ci_high).
    Clicking a run in the legend hides its line and its band together. Points without an
    interval (n < 2) get none (the band breaks there); a point with an interval between two without (a metric
    computed at a single k) gets an error bar, a band of one point being invisible; such points are dodged, each run's
    a little aside (:func:`_dodge`), so that one run's bar does not hide another's at the same k (the hover gives
    the real k). Runs in ``flagged`` (low coverage) are dotted and named "(low coverage)" in the legend.
    ``styles``: each run's look (:func:`dashboard.runstyles.run_styles`: a model's versions along one hue, light
    to dark); default: by position, as runs without a model.
    """
    fig = go.Figure()
    drawn = list(_per_run(curve, runs, "k"))
    looks = _looks(curve, runs, flagged, styles)
    ks = curve["k"].to_numpy(dtype=float) if len(curve) else np.zeros(0)
    for j, (_, run, d) in enumerate(drawn):
        look = looks[str(run)]
        c, name, dash = look.color, _legend(run, flagged), look.dash
        x = d["k"].to_numpy()
        lo, hi = d["ci_low"].to_numpy(dtype=float), d["ci_high"].to_numpy(dtype=float)
        mean = d["mean"].to_numpy(dtype=float)
        ok = np.isfinite(lo) & np.isfinite(hi)
        spans = _ok_spans(ok) if bands else []
        for span in (s for s in spans if len(s) > 1):
            fig.add_trace(go.Scatter(
                x=np.concatenate([x[span], x[span][::-1]]), y=np.concatenate([hi[span], lo[span][::-1]]),
                mode="lines", fill="toself", fillcolor=_rgba(c, 0.18), line={"width": 0}, hoverinfo="skip",
                showlegend=False, legendgroup=name, name=f"{name} 95% CI",
            ))
        # a point with an interval but no neighbour with one (a metric at a single k) has no band to draw:
        # an error bar shows its interval
        alone = np.zeros(len(x), dtype=bool)
        for span in (s for s in spans if len(s) == 1):
            alone[span] = True
        error_y = {"type": "data", "symmetric": False, "color": c, "thickness": 1.5, "width": 6,
                   "array": [float(h - m) if a else None for h, m, a in zip(hi, mean, alone, strict=True)],
                   "arrayminus": [float(m - v) if a else None for v, m, a in zip(lo, mean, alone, strict=True)],
                   } if alone.any() else None
        shown_x = _dodge(x, alone, j, len(drawn), ks, log_x=log_x) if alone.any() and len(drawn) > 1 else x
        fig.add_trace(go.Scatter(
            x=shown_x, y=mean, mode="lines+markers", name=name, legendgroup=name, error_y=error_y,
            line={"color": c, "width": 2, "dash": dash}, marker={"symbol": look.marker, "size": 7},
            customdata=np.stack([lo, hi, d["n"], x], axis=1),
            hovertemplate=f"{_hover_head(run, look)}<br>k=%{{customdata[3]}}<br>mean=%{{y:.4f}}<br>95% CI [%{{customdata[0]:.4f}}, "
                          "%{customdata[1]:.4f}]<br>n=%{customdata[2]}<extra></extra>",
        ))
    fig.update_xaxes(title="k", type="log" if log_x else "linear",
                     tickvals=sorted(curve["k"].unique().tolist()) if len(curve) else None)
    fig.update_yaxes(title=ptext(metric_label))
    return _layout(fig)


#: The dodge between two runs' isolated points on the metrics-vs-k chart, as a share of the k axis' span (of
#: k itself when every point sits at one k; of its decades on a log axis).
DODGE = 0.015


def _dodge(x: np.ndarray, alone: np.ndarray, j: int, n_runs: int, ks: np.ndarray, *, log_x: bool) -> np.ndarray:
    """``x`` with its ``alone`` points moved aside for run ``j`` of ``n_runs`` (symmetric about the real k:
    the middle run stays, the others step :data:`DODGE` of the axis apart); the other points unmoved."""
    shift = j - (n_runs - 1) / 2.0
    out = x.astype(float).copy()
    if log_x:
        pos = ks[ks > 0]
        decades = float(np.log10(pos.max() / pos.min())) if len(pos) else 0.0
        out[alone] = out[alone] * 10.0 ** (shift * DODGE * max(decades, 1.0))
    else:
        span = float(ks.max() - ks.min()) if len(ks) else 0.0
        out[alone] = out[alone] + shift * DODGE * (span if span > 0 else max(float(np.abs(ks).max()), 1.0))
    return out


def pr_curves(pr: pd.DataFrame, *, runs: Sequence[str] | None = None, flagged: Sequence[str] = (),
              styles: Mapping[str, RunStyle] | None = None) -> go.Figure:
    """Interpolated precision vs recall, one line per run (the 11-point precision–recall curve).

    ``pr``: :func:`dashboard.tables.pr_frame` output (run, recall, mean, ci_low, ci_high, n). One
    trace per run, named after it (low-coverage runs in ``flagged``: dotted, "(low coverage)");
    the hover gives the 95% CI of the mean at each level. ``styles``: as :func:`curves`'.
    """
    fig = go.Figure()
    looks = _looks(pr, runs, flagged, styles)
    for _, run, d in _per_run(pr, runs, "recall"):
        look = looks[str(run)]
        fig.add_trace(go.Scatter(
            x=d["recall"].to_numpy(), y=d["mean"].to_numpy(), mode="lines+markers", name=_legend(run, flagged),
            line={"color": look.color, "width": 2, "dash": look.dash}, marker={"symbol": look.marker, "size": 7},
            customdata=_ci_n(d),
            hovertemplate=f"{_hover_head(run, look)}<br>recall %{{x:.1f}}<br>interpolated precision %{{y:.4f}}<br>95% CI "
                          "[%{customdata[0]:.4f}, %{customdata[1]:.4f}]<br>n=%{customdata[2]}<extra></extra>",
        ))
    fig.update_xaxes(title="recall", range=[-0.02, 1.02], dtick=0.1)
    fig.update_yaxes(title="interpolated precision (mean over queries)", range=[0, 1.02])
    return _layout(fig)


#: Heatmap classes of :func:`compare_heatmap`: value -> (colour, legend text). Rows are compared with columns.
HEAT_CLASSES: dict[int, tuple[str, str]] = {
    -2: ("#B2182B", "row worse, significant"),
    -1: ("#F4C7BE", "row worse, not significant"),
    0: ("#F7F7F7", "equal / not tested"),
    1: ("#C6DBEF", "row better, not significant"),
    2: ("#2166AC", "row better, significant"),
}


def heat_classes(diff: pd.DataFrame, significant: pd.DataFrame, *, higher_is_better: bool = True) -> np.ndarray:
    """The colour class of each cell: ±2 significant, ±1 not significant, sign = row better (+) or worse (−)."""
    d = diff.to_numpy(dtype=float) * (1.0 if higher_is_better else -1.0)
    sig = significant.to_numpy(dtype=bool)
    sign = np.where(np.isfinite(d), np.sign(np.nan_to_num(d)), 0.0)
    return (sign * np.where(sig, 2, 1)).astype(int)


#: Width (px) the Compare matrix's cells share on a 1,400 px window (the main area less the row labels and
#: the colour bar); a cell is square up to :data:`CELL_PX_MAX`.
COMPARE_PLOT_PX = 560
CELL_PX_MAX = 110
#: Beyond this many runs a cell shows the difference (and * when significant) without its p-value line;
#: beyond :data:`TEXT_RUNS_MAX` no text at all (colour, hover and the table below say it).
FULL_TEXT_RUNS_MAX = 6
TEXT_RUNS_MAX = 12


def heat_text(full: np.ndarray, significant: pd.DataFrame) -> np.ndarray:
    """The cells' text for the number of runs, from their ``full`` text (difference ``<br>`` p-value line,
    as in the hover): all of it up to :data:`FULL_TEXT_RUNS_MAX` runs, the difference with * when
    significant up to :data:`TEXT_RUNS_MAX`, else empty (the cells are too small to read)."""
    n = len(full)
    if n <= FULL_TEXT_RUNS_MAX:
        return full
    if n > TEXT_RUNS_MAX:
        return np.full(full.shape, "", dtype=object)
    first = np.vectorize(lambda t: t.split("<br>", 1)[0], otypes=[object])(full)
    star = np.where(significant.to_numpy(dtype=bool) & (first != ""), "*", "")
    return (first + star).astype(object)


def heat_text_note(n_runs: int) -> str:
    """What a Compare matrix of ``n_runs`` leaves out of its cells (see :func:`heat_text`), for its caption."""
    if n_runs <= FULL_TEXT_RUNS_MAX:
        return ""
    if n_runs <= TEXT_RUNS_MAX:
        return f" With {n_runs} runs the cells show the difference and *; the p-value is in the hover."
    return f" With {n_runs} runs the cells show colour only; hover a cell for its numbers."


def compare_heatmap(matrix: dict[str, pd.DataFrame], *, metric_label: str, higher_is_better: bool = True) -> go.Figure:
    """Runs × runs: colour = sign and significance of row − column (pale when not significant), text =
    the difference and the corrected p-value (* significant), shortened as the runs grow (:func:`heat_text`).

    Cells are square (:data:`COMPARE_PLOT_PX` shared by the columns, at most :data:`CELL_PX_MAX`); the
    column labels sit on top, tilted when they do not fit, below a title band of their own.
    """
    diff = matrix["diff"]
    z = heat_classes(diff, matrix["significant"], higher_is_better=higher_is_better)
    labels = [ptext(r) for r in diff.index]
    n = max(len(labels), 1)
    hover = matrix["text"].map(lambda s: ptext(s).replace("\n", "<br>")).to_numpy()
    text = heat_text(hover, matrix["significant"])
    scale = []
    for i, v in enumerate(sorted(HEAT_CLASSES)):
        lo, hi = i / len(HEAT_CLASSES), (i + 1) / len(HEAT_CLASSES)
        scale += [[lo, HEAT_CLASSES[v][0]], [hi, HEAT_CLASSES[v][0]]]
    cell = max(24, min(CELL_PX_MAX, COMPARE_PLOT_PX // n))
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=labels, text=text, customdata=hover, texttemplate="%{text}", colorscale=scale,
        zmin=-2.5, zmax=2.5,
        colorbar={"tickvals": sorted(HEAT_CLASSES), "ticktext": [HEAT_CLASSES[v][1] for v in sorted(HEAT_CLASSES)],
                  "title": "", "lenmode": "pixels", "len": min(cell * n, 320), "yanchor": "top", "y": 1},
        hovertemplate="row %{y} − column %{x}<br>%{customdata}<extra></extra>", xgap=2, ygap=2,
    ))
    fig.update_yaxes(autorange="reversed", title="run (row)")
    _category_ticks(fig, diff.index)
    angle, label_px = top_labels(short_labels(diff.index), plot_px=cell * n)
    fig.update_xaxes(side="top", tickangle=angle, tickfont={"size": TICK_FONT_PX})
    fig = _layout(fig, title=f"{ptext(metric_label)}: row − column", height=cell * n + 60 + label_px + TITLE_BAND_PX)
    # the x labels sit on top: the title keeps a band of its own above them (at the very top)
    fig.update_layout(title={"yref": "container", "y": 1, "yanchor": "top", "pad": {"t": TITLE_PAD_PX},
                             "font": {"size": TITLE_FONT_PX}},
                      margin={"t": TITLE_PAD_PX + TITLE_BAND_PX + label_px})
    return fig


def pair_scatter(pf: pd.DataFrame, *, run_a: str, run_b: str, metric_label: str,
                 max_points: int = SCATTER_POINTS, bins: int = 40) -> go.Figure:
    """Per-query values of run A (x) vs run B (y), one colour per domain (up to the palette's; the rest grey,
    :func:`_domain_groups`), with the diagonal.

    Up to ``max_points`` queries every query is a point. Beyond, the queries are aggregated
    before plotting: their density as a grey 2-D histogram (``bins`` × ``bins``, counted
    here), and only the ``max_points`` queries where the runs differ most (largest
    ``|B − A|``, ties by query id) as points — the ones worth clicking. Each point's
    ``customdata`` is its query id, escaped for Plotly's text (read back, unescaped, from a
    selection), shown in the hover too.
    """
    fig = go.Figure()
    lo = float(min(pf["a"].min(), pf["b"].min(), 0.0)) if len(pf) else 0.0
    hi = float(max(pf["a"].max(), pf["b"].max(), 1.0)) if len(pf) else 1.0
    pts = pf
    if len(pf) > max_points:
        counts, xe, ye = np.histogram2d(pf["a"].to_numpy(float), pf["b"].to_numpy(float), bins=bins,
                                        range=[[lo, hi], [lo, hi]])
        z = np.where(counts > 0, counts, np.nan).T  # rows = B bins
        fig.add_trace(go.Heatmap(x=(xe[:-1] + xe[1:]) / 2, y=(ye[:-1] + ye[1:]) / 2, z=z, colorscale="Greys",
                                 showscale=False, opacity=0.55, name="all queries (density)",
                                 hovertemplate="A≈%{x:.3f}, B≈%{y:.3f}: %{z} queries<extra></extra>"))
        order = np.lexsort((pf["query_id"].to_numpy(dtype=str), -np.abs(pf["difference"].to_numpy(float))))
        pts = pf.iloc[order[:max_points]]
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line={"color": "#888", "dash": "dash"},
                             name="equal (diagonal)", hoverinfo="skip"))
    trace = go.Scattergl if len(pts) > SCATTERGL_FROM else go.Scatter
    for i, (name, d) in enumerate(_domain_groups(pts)):
        fig.add_trace(trace(
            x=d["a"].to_numpy(), y=d["b"].to_numpy(), mode="markers", name=name,
            marker={"color": OTHER_COLOUR if i == len(PALETTE) - 1 else color_of(i), "symbol": symbol_of(i),
                    "size": 7, "opacity": 0.75},
            customdata=d["query_id"].map(ptext).to_numpy(dtype=str),
            text=d["domain"].map(lambda x: ptext(x if x else "(no domain)")).to_numpy(dtype=str),
            hovertemplate="query %{customdata}<br>domain %{text}<br>A=%{x:.4f}<br>B=%{y:.4f}<extra></extra>",
        ))
    short_a, short_b = (ptext(t) for t in _pair_names(run_a, run_b))
    fig.update_xaxes(title=f"{short_a} (A) {ptext(metric_label)}", range=[lo - 0.02, hi + 0.02])
    fig.update_yaxes(title=f"{short_b} (B) {ptext(metric_label)}", scaleanchor="x", scaleratio=1,
                     range=[lo - 0.02, hi + 0.02])
    # the legend at the right of the (square) plot, from below Plotly's toolbar down: above the plot, as on the
    # other charts, its right end ran under the toolbar shown on hover (top right), a domain's name hidden
    _layout(fig, height=480)
    fig.update_layout(margin={"t": TOOLBAR_PX}, legend={"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1,
                                                        "yanchor": "top"})
    return fig


def shared_points(pf: pd.DataFrame) -> tuple[int, int, float, float]:
    """Where queries of :func:`pair_scatter` are drawn over each other (the same value of A and of B: with binary
    relevance and one relevant document, most queries sit at (0, 0) or (1, 1)): ``(places, most queries at one
    place, its A, its B)``, the place with most queries first in (A, B) order among equals. ``pf``: its frame
    (``a``, ``b`` per query)."""
    if not len(pf):
        return 0, 0, float("nan"), float("nan")
    at = pf.groupby(["a", "b"], sort=True).size()
    (a, b), most = at.idxmax(), int(at.max())
    return len(at), most, float(a), float(b)


def _pair_names(run_a: str, run_b: str) -> tuple[str, str]:
    """Runs A and B as an axis title names them: :func:`short_labels` (distinct, at most ~28 characters each; two
    names of 90 characters ran off both ends of the axis, neither run readable; the page names them in full)."""
    if run_a == run_b:
        return (short_labels([run_a])[0],) * 2
    a, b = short_labels([run_a, run_b])
    return a, b


#: The colour of the points of the domains beyond the palette's (:func:`_domain_groups`).
OTHER_COLOUR = "#9E9E9E"


def _domain_groups(pts: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(legend name, points) per domain, in name order; beyond ``len(PALETTE)`` domains, the largest
    ``len(PALETTE) - 1`` (most points; ties by name) keep a colour each and the others share one group,
    "other domains (N)", last (40 domains took 40 legend entries above a squeezed chart, each colour four
    times). The hover names each point's own domain."""
    groups = [(ptext(dom if dom else "(no domain)"), d) for dom, d in pts.groupby("domain", sort=True)]
    if len(groups) <= len(PALETTE):
        return groups
    size = pts["domain"].value_counts()
    top = set(sorted(size.index, key=lambda dom: (-int(size[dom]), str(dom)))[: len(PALETTE) - 1])
    rest = pts[~pts["domain"].isin(top)]
    kept = [(ptext(dom if dom else "(no domain)"), d) for dom, d in pts[pts["domain"].isin(top)].groupby(
        "domain", sort=True)]
    return [*kept, (f"other domains ({rest['domain'].nunique()})", rest)]


def diff_histogram(pf: pd.DataFrame, *, run_a: str, run_b: str, metric_label: str, bins: int = 40) -> go.Figure:
    """Histogram of per-query differences B − A (0 marked), binned here (only the bars are sent)."""
    d = pf["difference"].to_numpy(dtype=float)
    d = d[np.isfinite(d)]
    lo, hi = (float(d.min()), float(d.max())) if len(d) else (-1.0, 1.0)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(d, bins=bins, range=(lo, hi))
    mid = (edges[:-1] + edges[1:]) / 2
    fig = go.Figure(go.Bar(x=mid, y=counts, width=np.diff(edges), marker={"color": PALETTE[0]},
                           customdata=np.stack([edges[:-1], edges[1:]], axis=1),
                           hovertemplate="B − A in [%{customdata[0]:.3f}, %{customdata[1]:.3f})<br>%{y} queries"
                                         "<extra></extra>"))
    fig.add_vline(x=0, line={"color": "#888", "dash": "dash"})
    short_a, short_b = (ptext(t) for t in _pair_names(run_a, run_b))
    fig.update_xaxes(title=f"{short_b} − {short_a} ({ptext(metric_label)}) per query")
    fig.update_yaxes(title="queries", dtick=1 if counts.max(initial=0) <= 10 else None)  # (no 0.2 queries)
    fig.update_layout(bargap=0.05)
    return _layout(fig, height=360)


def _category_ticks(fig: go.Figure, names: Sequence[object]) -> None:
    """Both axes of a runs × runs heatmap labelled with :func:`short_labels` (the categories, and so the
    hover's ``%{x}``/``%{y}``, stay the full names)."""
    full = [ptext(r) for r in names]
    short = [ptext(t) for t in short_labels(names)]
    fig.update_xaxes(tickvals=full, ticktext=short)
    fig.update_yaxes(tickvals=full, ticktext=short)


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
    _category_ticks(fig, matrix.index)
    angle, label_px = top_labels(short_labels(matrix.index), plot_px=AGREEMENT_PLOT_PX)
    fig.update_xaxes(side="top", tickangle=angle, tickfont={"size": TICK_FONT_PX})
    fig = _layout(fig, title=f"{ptext(measure_label)}, mean over queries",
                  height=max(300, 90 * len(labels) + 140 + label_px))
    # the x labels sit on top: the title keeps a band of its own above them (at the very top)
    fig.update_layout(title={"yref": "container", "y": 1, "yanchor": "top", "pad": {"t": TITLE_PAD_PX},
                             "font": {"size": TITLE_FONT_PX}},
                      margin={"t": TITLE_PAD_PX + TITLE_BAND_PX + label_px})
    return fig


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


def version_curve(frame: pd.DataFrame, *, x: Sequence, labels: Sequence[str], by_step: bool, model: str,
                  metric_label: str, higher_is_better: bool = True, color: str | None = None) -> go.Figure:
    """A model's metric across its versions: the mean at each version, its 95% CI as a band.

    ``frame``: :func:`evalcore.workspace.version_curve` output (versions in order); ``x`` the
    steps (``by_step``: a numeric axis) or the version labels (a categorical axis in version
    order); ``labels`` the versions' texts (hover). Versions without an interval (n < 2) get
    no band there. ``color``: the model's colour (``#RRGGBB``; the Versions page gives its hue of every other
    chart, :func:`dashboard.runstyles.model_styles`); default: the first of the palette.
    """
    fig = go.Figure()
    c = color or color_of(0)
    lo, hi = frame["ci_low"].to_numpy(dtype=float), frame["ci_high"].to_numpy(dtype=float)
    xs = np.asarray(list(x), dtype=float) if by_step else np.asarray([ptext(v) for v in x], dtype=object)
    ok = np.isfinite(lo) & np.isfinite(hi)
    name = ptext(model)
    if ok.any():
        fig.add_trace(go.Scatter(
            x=np.concatenate([xs[ok], xs[ok][::-1]]), y=np.concatenate([hi[ok], lo[ok][::-1]]), mode="lines",
            fill="toself", fillcolor=_rgba(c, 0.18), line={"width": 0}, hoverinfo="skip", name="95% CI",
        ))
    custom = np.empty((len(frame), 5), dtype=object)  # texts and numbers side by side
    custom[:, 0] = [ttext(v) for v in labels]
    custom[:, 1] = [ttext(r) for r in frame["run"]]
    custom[:, 2], custom[:, 3], custom[:, 4] = lo, hi, frame["n"].to_numpy()
    fig.add_trace(go.Scatter(
        x=xs, y=frame["mean"].to_numpy(dtype=float), mode="lines+markers", name=name,
        line={"color": c, "width": 2}, marker={"size": 8}, customdata=custom,
        hovertemplate="%{customdata[0]} (run %{customdata[1]})<br>mean=%{y:.4f}<br>95% CI [%{customdata[2]:.4f}, "
                      "%{customdata[3]:.4f}]<br>n=%{customdata[4]}<extra></extra>",
    ))
    if by_step:
        fig.update_xaxes(title="step")
        _whole_step_ticks(fig, xs)
    else:
        fig.update_xaxes(title="version", type="category", categoryorder="array", categoryarray=list(xs))
    fig.update_yaxes(title=value_title(metric_label, higher_is_better))
    return _layout(fig)


def _whole_step_ticks(fig: go.Figure, xs: Sequence[float]) -> None:
    """Whole steps (epochs), at most 30 of them: a tick at each (plotly would tick 1, 1.5, 2...)."""
    steps = np.unique(np.asarray(xs, dtype=float))
    steps = steps[np.isfinite(steps)]
    if 0 < len(steps) <= 30 and np.all(steps == np.round(steps)):
        fig.update_xaxes(tickvals=steps.tolist(), ticktext=[f"{v:,.0f}" for v in steps])


def models_curves(curves: Sequence[tuple[str, pd.DataFrame, Sequence[str], Sequence[float] | None]], *,
                  metric_label: str, higher_is_better: bool = True,
                  styles: Mapping[str, RunStyle] | None = None) -> go.Figure:
    """Every model's metric across its versions on one axis: one line per model, no bands.

    ``curves``: per model ``(model, frame, labels, steps)`` — ``frame`` a
    :func:`evalcore.workspace.version_curve` output, ``labels`` the versions' texts, ``steps``
    their steps, or None when the model's versions have none (then every model is drawn at its
    version's position 1, 2, ...: the x axis is steps only when all models have them). ``styles``: each
    model's look (:func:`dashboard.runstyles.model_styles` of every model, as its versions' hue elsewhere);
    default: the models' own, in ``curves`` order.
    """
    fig = go.Figure()
    by_step = all(steps is not None for _, _, _, steps in curves)
    looks = dict(styles) if styles is not None and all(str(m) in styles for m, _, _, _ in curves) else \
        model_styles([str(m) for m, _, _, _ in curves])
    for model, frame, texts, steps in curves:
        look = looks[str(model)]
        xs = np.asarray(steps if by_step else np.arange(1, len(frame) + 1), dtype=float)
        custom = np.empty((len(frame), 5), dtype=object)
        custom[:, 0] = [ttext(v) for v in texts]
        custom[:, 1] = [ttext(r) for r in frame["run"]]
        custom[:, 2] = frame["ci_low"].to_numpy(dtype=float)
        custom[:, 3] = frame["ci_high"].to_numpy(dtype=float)
        custom[:, 4] = frame["n"].to_numpy()
        fig.add_trace(go.Scatter(
            x=xs, y=frame["mean"].to_numpy(dtype=float), mode="lines+markers", name=ptext(model),
            line={"color": look.color, "width": 2, "dash": look.dash}, marker={"symbol": look.marker, "size": 7},
            customdata=custom,
            hovertemplate=f"{ttext(model)}: %{{customdata[0]}} (run %{{customdata[1]}})<br>mean=%{{y:.4f}}<br>"
                          "95% CI [%{customdata[2]:.4f}, %{customdata[3]:.4f}]<br>n=%{customdata[4]}<extra></extra>",
        ))
    fig.update_xaxes(title="step" if by_step else "version (1 = each model's first)")
    _whole_step_ticks(fig, [float(x) for t in fig.data for x in t.x])
    fig.update_yaxes(title=value_title(metric_label, higher_is_better))
    return _layout(fig)


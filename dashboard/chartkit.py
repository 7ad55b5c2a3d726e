"""What every Plotly figure of the dashboard shares: plain-text safety of user strings (:func:`ptext`), the series'
colours, symbols, dashes and patterns, the layout, and the short tick labels of long run names.

Plotly renders a subset of HTML (``<b>``, ``<br>``, ``<a href>``...) in every text it draws, so each user string
(run, domain and query names) goes through :func:`ptext`, which escapes ``&``, ``<`` and ``>`` (Plotly decodes
those entities back to the literal characters).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import plotly.graph_objects as go

PALETTE = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6", "#9D755D", "#BAB0AC",
           "#EECA3B")


def ptext(s: object) -> str:
    """A user string made safe for Plotly text (titles, legends, hovers, annotations)."""
    return html.escape(str(s), quote=False)


def ttext(s: object) -> str:
    """:func:`ptext` for a string placed inside a ``hovertemplate`` (``%{`` would start a substitution)."""
    return ptext(s).replace("%{", "%\u200b{")


def value_title(metric_label: object, higher_is_better: bool = True) -> str:
    """An axis or colour-bar title for a metric's values (:func:`ptext`), "(lower is better)" when it is."""
    return ptext(metric_label) + ("" if higher_is_better else " (lower is better)")


#: Beyond the palette's colours the same colour comes back with another marker symbol, line dash and bar
#: pattern, so the first 50 series never look alike (a workspace of 3 models x 6 epochs has 18 runs).
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x")
DASHES = ("solid", "dash", "dashdot", "longdash", "longdashdot")
PATTERNS = ("", "/", "x", ".", "\\")


def color_of(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def symbol_of(i: int) -> str:
    """Marker symbol of series ``i`` (the same for the first ``len(PALETTE)`` series)."""
    return SYMBOLS[(i // len(PALETTE)) % len(SYMBOLS)]


def dash_of(i: int) -> str:
    """Line dash of series ``i`` (solid for the first ``len(PALETTE)`` series; "dot" is kept for low coverage)."""
    return DASHES[(i // len(PALETTE)) % len(DASHES)]


def pattern_of(i: int) -> str:
    """Bar pattern of series ``i`` (none for the first ``len(PALETTE)`` series)."""
    return PATTERNS[(i // len(PALETTE)) % len(PATTERNS)]


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _layout(fig: go.Figure, *, title: str | None = None, height: int = 420) -> go.Figure:
    fig.update_layout(title=title, height=height, margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    return fig


#: Tick label and title font sizes (px) of charts whose margins are computed from their text.
TICK_FONT_PX = 12
#: most characters of a run name on a heatmap's axes (:func:`short_labels`; the hover shows it whole)
LABEL_CHARS = 28
TITLE_FONT_PX = 16
#: A title's line (px, from its font size) and the room above it.
TITLE_BAND_PX = round(1.5 * TITLE_FONT_PX)
TITLE_PAD_PX = 8
#: Narrowest plot area (px) assumed for the agreement heatmap's x labels (the page's narrowest layout).
AGREEMENT_PLOT_PX = 360


def short_labels(names: Sequence[object], *, max_len: int = LABEL_CHARS) -> list[str]:
    """Tick labels of at most ``max_len`` characters (or as few more as keep them distinct): a long name keeps
    its start and, longer, its end — where checkpoints differ — around "…"; the hover keeps the full name.

    >>> short_labels(["sentence-transformers_finetuned_epoch_12_final", "bm25"], max_len=24)
    ['sentenc…d_epoch_12_final', 'bm25']
    """
    texts = [str(x) for x in names]
    longest = max((len(t) for t in texts), default=0)
    for n in range(max(max_len, 5), longest + 1):
        head = (n - 1) // 3
        out = [t if len(t) <= n else t[:head] + "…" + t[len(t) - (n - 1 - head):] for t in texts]
        if len(set(out)) == len(set(texts)):
            return out
    return texts


def top_labels(labels: Sequence[object], *, plot_px: int) -> tuple[int, int]:
    """(tick angle, px of height) of category labels drawn above a plot ``plot_px`` wide.

    Horizontal when every label fits its share of the width, else tilted by 45°. The height
    is an upper estimate (a character at most 0.65 of the font size wide, a line 1.3 of it
    high, plus Plotly's gap of the ticks) so that what is above (the title) never covers them.
    """
    texts = [str(x) for x in labels] or [""]
    width = max(len(t) for t in texts) * 0.65 * TICK_FONT_PX
    line = 1.3 * TICK_FONT_PX
    if width * len(texts) <= plot_px * 0.9:
        return 0, math.ceil(line + 8)
    return -45, math.ceil((width + line) * math.sqrt(0.5) + 8)

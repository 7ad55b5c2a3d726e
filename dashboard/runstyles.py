"""How each run drawn as a line looks: :func:`run_styles` gives every run a colour, a line dash and a marker.

Cycling ten colours, five dashes and five markers by the run's position repeated a look after 50 runs, so
two checkpoints (or two models) of a workspace with more runs looked the same. Here a run's look reads as
what it is:

* **A model's versions** (runs sharing a ``model`` in their run info, ordered as the Versions page orders them:
  :func:`evalcore.workspace.version_series`) take one hue of their own, from light (the first version drawn)
  to dark (the last) along a sequential scale (:data:`SCALES`) — the natural reading of a training run. A
  model's hue is its place among the workspace's models (the Versions page's order), the same whichever runs
  are drawn, and the same as its line on the Versions page's "Every model on one chart" (:func:`model_styles`). The
  scale is cut into at most :data:`MAX_SHADES` shades; consecutive versions also change dash and marker
  (:data:`COMBOS`, 25 pairs), so two neighbours never look alike even when their shades are close.
* **Runs without a model** keep the categorical look of every other chart: the ten colours of
  :data:`~dashboard.chartkit.PALETTE`, solid lines and round markers for the first ten, then another dash and
  marker for each further ten.
* Low-coverage runs (``flagged``) are dotted (their colour kept; only the marker then tells two apart).

**No two runs share (colour, dash, marker)** as long as no colour is asked for by more than 25 runs (the
25 pairs of :data:`COMBOS`; 5 markers for dotted runs): that holds for up to ``len(SCALES)`` = 8 models of up
to ``MAX_SHADES × 25`` = 800 versions each (8 models of the run info: a ninth reuses the first one's scale),
together with up to 250 runs without a model (10 colours × 25).
Beyond that, a look may repeat; the legend and the hover still name each run (and its model and version).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import pandas as pd

from dashboard.chartkit import DASHES, PALETTE, SYMBOLS

#: Sequential scales, one per model (light end, dark end), ColorBrewer's Blues, Oranges, Greens, Reds, Purples,
#: RdPu, Greys and BrBG's teal, from their third class (visible on white) to their darkest.
SCALES: tuple[tuple[str, str], ...] = (
    ("#9ECAE1", "#08306B"), ("#FDAE6B", "#7F2704"), ("#A1D99B", "#00441B"), ("#FC9272", "#67000D"),
    ("#BCBDDC", "#3F007D"), ("#FA9FB5", "#49006A"), ("#BDBDBD", "#252525"), ("#80CDC1", "#003C30"),
)
#: Most shades one model's versions are spread over (each at least ~3 units of a colour channel apart).
MAX_SHADES = 32
#: (dash, marker) pairs: pair ``j`` has dash ``j % 5`` and marker ``(j + j // 5) % 5``, so all 25 differ and two
#: consecutive pairs differ in both; the first five are (solid, circle), (dash, square)... as before.
COMBOS: tuple[tuple[str, str], ...] = tuple((DASHES[j % len(DASHES)], SYMBOLS[(j + j // len(DASHES)) % len(SYMBOLS)])
                                            for j in range(len(DASHES) * len(SYMBOLS)))
#: The dash of a low-coverage run (never one of :data:`~dashboard.chartkit.DASHES`).
LOW_COVERAGE_DASH = "dot"
#: Where a model with one version drawn sits on its scale (its middle shade: the darkest ones of two hues are hard
#: to tell apart).
SINGLE_SHADE = 0.65


@dataclass(frozen=True)
class RunStyle:
    """A run's look: ``color`` (``#RRGGBB``), line ``dash``, ``marker`` symbol; ``model`` and ``shade`` (its place
    on the model's scale, 0 light to 1 dark) when it is a model's version; ``note``: plain text for the hover
    ("model e5, version 3 of 122 drawn"), empty without a model."""

    color: str
    dash: str
    marker: str
    model: str | None = None
    shade: float | None = None
    note: str = ""


def _mix(light: str, dark: str, t: float) -> str:
    """The colour at ``t`` (0 light, 1 dark) between two ``#RRGGBB`` colours, component by component."""
    a = [int(light[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(dark[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02X}" for x, y in zip(a, b, strict=True))


def _versions(runs: Sequence[str], info: pd.DataFrame | None) -> list[tuple[int, str, list[str]]]:
    """``(rank, model, its runs among runs in version order)`` of each model with a run among ``runs``; ``rank``:
    the model's place among every model of ``info`` (the Versions page's order: natural order of the names), so a
    model keeps its hue whichever of its versions, or of the other models, are drawn."""
    if info is None or info.empty:
        return []
    from evalcore import workspace as W

    rows = info[info["model"].notna() & (info["model"].astype(str) != "")]
    if rows.empty:
        return []
    series = W.capture(W.version_series, rows, min_versions=1)[0]  # (its warnings: the Versions page says them)
    wanted = set(runs)
    by_model: dict[str, list[str]] = {}
    for model, run in zip(series["model"].astype(str), series["run"].astype(str), strict=True):
        by_model.setdefault(model, [])
        if run in wanted:
            by_model[model].append(run)
    return [(rank, model, versions) for rank, (model, versions) in enumerate(by_model.items()) if versions]


def model_styles(models: Sequence[str]) -> dict[str, RunStyle]:
    """One look per model (a line per model: the Versions page's "Every model on one chart"): model ``g`` of
    ``models`` (in the Versions page's order) takes the middle shade of scale ``g`` (:data:`SCALES`), as its
    versions' hue in :func:`run_styles`, and beyond the scales another (dash, marker) pair; distinct for up to
    ``len(SCALES) × 25`` = 200 models."""
    out = {}
    for g, model in enumerate(str(m) for m in models):
        light, dark = SCALES[g % len(SCALES)]
        dash, marker = COMBOS[(g // len(SCALES)) % len(COMBOS)]
        out[model] = RunStyle(_mix(light, dark, SINGLE_SHADE), dash, marker, model, SINGLE_SHADE, f"model {model}")
    return out


def run_styles(runs: Sequence[str], info: pd.DataFrame | None = None, *,
               flagged: Collection[str] = ()) -> dict[str, RunStyle]:
    """The look of each of ``runs`` (drawn in that order), see the module docstring.

    ``info``: the runs' run info, one row per run — ``name`` (or ``run``), ``model``, ``version``, ``step``
    (``created_at`` optional), as :func:`evalcore.workspace.version_series` takes; None: no run has a model.
    ``flagged``: runs drawn dotted (low coverage). Inputs are not modified.
    """
    runs = [str(r) for r in runs]
    flagged = set(flagged)
    wanted: dict[str, tuple[str, int, str | None, float | None, str]] = {}  # run -> colour, pair, model, shade, note
    for g, model, versions in _versions(runs, info):
        light, dark = SCALES[g % len(SCALES)]
        n = len(versions)
        levels = min(n, MAX_SHADES)
        for i, run in enumerate(versions):
            level = i * levels // n if n > 1 else None  # equal blocks of at most ceil(n / levels) versions
            shade = SINGLE_SHADE if level is None else (level / (levels - 1) if levels > 1 else 1.0)
            note = f"model {model}, version {i + 1} of {n} drawn" if n > 1 else f"model {model}"
            wanted[run] = (_mix(light, dark, shade), i % len(COMBOS), model, shade, note)
    plain = [r for r in runs if r not in wanted]
    for i, run in enumerate(plain):
        wanted[run] = (PALETTE[i % len(PALETTE)], (i // len(PALETTE)) % len(COMBOS), None, None, "")
    used: set[tuple[str, str, str]] = set()
    out: dict[str, RunStyle] = {}
    for run in runs:
        if run in out:
            continue
        color, pair, model, shade, note = wanted[run]
        if run in flagged:  # dotted: only the marker can differ
            marker0 = SYMBOLS.index(COMBOS[pair][1])
            options = [(LOW_COVERAGE_DASH, SYMBOLS[(marker0 + j) % len(SYMBOLS)]) for j in range(len(SYMBOLS))]
        else:
            options = [COMBOS[(pair + j) % len(COMBOS)] for j in range(len(COMBOS))]
        dash, marker = next(((d, m) for d, m in options if (color, d, m) not in used), options[0])
        used.add((color, dash, marker))
        out[run] = RunStyle(color, dash, marker, model, shade, note)
    return out

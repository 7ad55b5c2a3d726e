"""Selections kept by dashboards older than the kept-format marker, told apart from the user's choices where that can
be known.

Until 2026-11-29 the Versions page kept the versions A and B and the reference version it *showed*, and the Fusion
page the runs it showed, default or not: a workspace's ``ui_state`` (or the user's file of selections, for a
read-only workspace) holds the defaults of the moment they were first drawn, as if chosen, and they no longer
followed the checkpoints a training loop adds. Since then those selections hold only the user's choice, and every
writer adds :data:`FORMAT_KEY` to the kept selections (:func:`dashboard.persist.publish`): kept selections without
it were written by an older dashboard, which wrote defaults and choices alike.

Nothing in a row says which it was (no time is stored with it, and the default of the moment it was written depends
on the versions of that moment). What can be known: a kept value that no default of any moment could have been is a
choice; one that some default could have been is either. :func:`maybe_defaults` lists the second kind, which the
dashboard then drops once (the page follows the live default again) and, when the page then shows something else,
says so with a button that puts the old values back (:func:`dashboard.ui.say_legacy`):

* versions A and B of one model where A is the version just before B: the default pair of the moment B was the
  newest (a user may have chosen that very pair too: then the button restores it); any other pair holds at least
  one choice and is kept as one, even when one of the two was the default then (which one cannot be told);
* the reference version when it is the model's first version now (the default); a later one is kept as a choice;
* the runs to fuse when they are the first one to three runs of the workspace (the old default up to 8 runs: the
  first three runs); any other list is kept as a choice (beyond 8 runs the old default, the latest version of each
  model, cannot be told from a pick of distinct models).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from dashboard import state as S
from evalcore import workspace as W

#: The key of the kept selections that says which rules wrote them (not a ``sel_`` key: never a selection).
FORMAT_KEY = "dashboard_kept_format"
#: 2: a selection that follows a live default (Versions' A, B, reference; Fusion's runs) holds only a choice.
FORMAT = 2
#: Session key: the kept values :func:`maybe_defaults` dropped when the workspace was opened, until said
#: (:func:`dashboard.ui.say_legacy`).
DROPPED = "_ws_legacy_defaults"
#: The Fusion page's run list in :func:`maybe_defaults`' answer (its set-up is one dict, ``sel_fusion``).
FUSION_RUNS = "sel_fusion.runs"
#: At most this many runs were fused by default.
FUSED_BY_DEFAULT = 3


def is_legacy(kept: Mapping[str, Any]) -> bool:
    """Whether ``kept`` (a workspace's kept selections) was written by a dashboard older than :data:`FORMAT`."""
    return kept.get(FORMAT_KEY) != FORMAT and any(k.startswith("sel_") for k in kept)


def maybe_defaults(kept: Mapping[str, Any], records: Sequence[Any], *, fusion: str) -> dict[str, Any]:
    """The entries of ``kept`` (selections an older dashboard kept, see the module docstring) that its defaults could
    have been: ``{key: value}`` for the Versions page's keys, :data:`FUSION_RUNS` for the runs of the set-up
    ``fusion``. ``records``: the workspace's runs (``name, kind, model, version, step``, creation order). Never
    mutates ``kept``."""
    out: dict[str, Any] = {}
    info = pd.DataFrame([{"name": r.name, "model": r.model, "version": r.version, "step": r.step} for r in records
                         if r.model], columns=["name", "model", "version", "step"])
    series = W.capture(W.version_series, info, min_versions=1)[0] if len(info) else None
    versions: dict[str, list[str]] = {}
    model_of: dict[str, str] = {}
    if series is not None:
        for model, rows in series.groupby("model", sort=False):
            versions[str(model)] = rows["run"].astype(str).tolist()
            model_of.update({run: str(model) for run in versions[str(model)]})
    a, b = kept.get(S.SEL_VERSION_A), kept.get(S.SEL_VERSION_B)
    if isinstance(a, str) and isinstance(b, str) and a in model_of and model_of[a] == model_of.get(b):
        order = versions[model_of[a]]
        if order.index(a) + 1 == order.index(b):
            out[S.SEL_VERSION_A], out[S.SEL_VERSION_B] = a, b
    ref = kept.get(S.SEL_VERSION_REFERENCE)
    if isinstance(ref, str) and ref in model_of and versions[model_of[ref]][0] == ref:
        out[S.SEL_VERSION_REFERENCE] = ref
    setup = kept.get(fusion)
    runs = setup.get("runs") if isinstance(setup, dict) else None
    plain = [r.name for r in records if r.kind != "fused"]
    if isinstance(runs, list) and 0 < len(runs) <= FUSED_BY_DEFAULT and runs == plain[:len(runs)]:
        out[FUSION_RUNS] = list(runs)
    return out


def without(kept: Mapping[str, Any], dropped: Mapping[str, Any], *, fusion: str) -> dict[str, Any]:
    """``kept`` without the entries of ``dropped`` (:func:`maybe_defaults`); never mutates ``kept``."""
    out = {k: v for k, v in kept.items() if k not in dropped}
    if FUSION_RUNS in dropped and isinstance(kept.get(fusion), dict):
        out[fusion] = {k: v for k, v in kept[fusion].items() if k != "runs"}
    return out

"""Kept selections that still mean something: :func:`trimmed` drops what refers to things gone.

The selections a workspace keeps (its ``ui_state``, or the user's data folder for a read-only one:
:mod:`evalcore.workspace.localstate`) name runs, a model, an aspect and a query of the workspace as it was when
they were made. Runs are removed and renamed, ground truths replaced, keys of older dashboards retired; without
trimming, those entries stayed for ever. :func:`dashboard.persist._restore_selections` trims what it reads and
writes the difference back.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from dashboard import state as S

#: The shared selections that hold run names (one, or a list).
RUN_SELECTIONS = (S.SEL_RUN_A, S.SEL_RUN_B, S.SEL_BASELINE, S.SEL_INCLUDE_LOW, S.SEL_VERSION_REFERENCE,
                  S.SEL_VERSION_A, S.SEL_VERSION_B, S.SEL_CMP_RUNS)
#: The kept selections that hold only a choice of the user's (their widgets follow a live default until the user
#: chooses: ``follow`` of :func:`dashboard.ui.bound_selectbox`): one trimmed away is said where its widget is drawn.
CHOSEN = (S.SEL_VERSION_REFERENCE, S.SEL_VERSION_A, S.SEL_VERSION_B)
#: The kept selections trimmed away that are said where their widget is drawn (:func:`dropped_choices`): those of
#: :data:`CHOSEN` and the Versions page's model (its widget keeps the value shown, the user's or the default).
SAID = (*CHOSEN, S.SEL_VERSION_MODEL)
#: Keys of kept selections are the dashboard's when they start so (another key of a workspace's ui_state, set from
#: Python with ``Workspace.set_ui_state``, is left alone).
PREFIX = "sel_"


def trimmed(values: Mapping[str, Any], *, known: Collection[str], runs: Collection[str], models: Collection[str],
            aspects: Collection[str], queries: Collection[str] | None, fusion: str, fusion_search: str
            ) -> dict[str, Any]:
    """``values`` (kept selections) without what refers to things gone; never mutates ``values``.

    * a key of the dashboard's (:data:`PREFIX`) that is not among ``known`` (one an older dashboard kept): dropped;
    * a run selection (:data:`RUN_SELECTIONS`) naming a run not in ``runs``: dropped; a list of runs loses those
      runs (dropped when none is left of a list that had some);
    * the Versions page's model when no run has it (``models``); the aspect compared when the ground truth has
      no such aspect (``aspects``); the query when it is not one of the ground truth's (``queries``; None: not
      checked);
    * the Fusion page's set-up (``fusion``, a dict) loses the runs gone and their weights; its kept weight search
      (``fusion_search``) is dropped when one of the runs it fused is gone (the ground truth, the settings or a
      run's content changed: its key no longer matches, and the next search replaces it).
    """
    runs, models, aspects = set(runs), set(models), set(aspects)
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key.startswith(PREFIX) and key not in known:
            continue
        if key in RUN_SELECTIONS:
            if isinstance(value, list):
                left = [v for v in value if isinstance(v, str) and v in runs]
                if value and not left:
                    continue
                value = left
            elif not (isinstance(value, str) and value in runs):
                continue
        elif key == S.SEL_VERSION_MODEL and not (isinstance(value, str) and value in models):
            continue
        elif key == S.SEL_ASPECT and not (isinstance(value, str) and value in aspects):
            continue
        elif key == S.SEL_QUERY and queries is not None and str(value) not in queries:
            continue
        elif key == fusion and isinstance(value, dict):
            value = _fusion(value, runs)
        elif key == fusion_search and not (isinstance(value, dict) and isinstance(value.get("runs"), list)
                                           and all(isinstance(r, str) and r in runs for r in value["runs"])):
            continue
        out[key] = value
    return out


def _fusion(setup: dict[str, Any], runs: set[str]) -> dict[str, Any]:
    """The Fusion page's set-up without the runs gone (in its run list and its weights)."""
    out = dict(setup)
    if isinstance(setup.get("runs"), list):
        out["runs"] = [r for r in setup["runs"] if isinstance(r, str) and r in runs]
    if isinstance(setup.get("weights"), dict):
        out["weights"] = {r: w for r, w in setup["weights"].items() if r in runs}
    return out


def dropped_choices(before: Mapping[str, Any], after: Mapping[str, Any], *, fusion: str) -> dict[str, Any]:
    """The user's choices :func:`trimmed` took out of ``before`` (giving ``after``), to be said where they were made:
    a selection of :data:`SAID` dropped -> its value; ``fusion`` -> the runs its set-up lost (a list, when any)."""
    out: dict[str, Any] = {k: before[k] for k in SAID if before.get(k) is not None and after.get(k) is None}
    was, now = before.get(fusion), after.get(fusion)
    runs = was.get("runs") if isinstance(was, dict) else None
    if isinstance(runs, list):
        left = now.get("runs") if isinstance(now, dict) and isinstance(now.get("runs"), list) else []
        gone = [r for r in runs if isinstance(r, str) and r not in left]
        if gone:
            out[fusion] = gone
    return out


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """What to write so that kept ``before`` becomes ``after``: the changed values, None for the keys dropped."""
    return {k: after.get(k) for k in set(before) | set(after) if after.get(k) != before.get(k)}

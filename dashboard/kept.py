"""A page's own choices kept as one shared selection: a dict in ``st.session_state[pkey]`` (one of
:data:`dashboard.persist.SELECTIONS`, so the workspace's ui_state keeps it for a reload and a new tab).

A widget's own state is dropped by Streamlit while its page is not drawn (another page, a reload): entering
the page, :func:`start` sets each widget to its saved value when that is still valid (a run still there, an
option still offered, a number in range), else to its default; :func:`keep` records what the widgets drawn in
this run show. Widgets started so take no ``value=`` / ``default=`` / ``index=`` of their own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from typing import Any

import streamlit as st

from dashboard import persist as P

#: (pkey, field) of the widgets that show their default, not a choice of the user's (:func:`start` with ``follow``)
FOLLOWING = "_kept_following"


def saved(pkey: str) -> dict[str, Any]:
    """The shared selection ``pkey`` (a dict; empty when none was kept or it is not a dict)."""
    value = st.session_state.get(pkey)
    return value if isinstance(value, dict) else {}


def start(wkey: str, pkey: str, field: str, default: Any, valid: Callable[[Any], bool] = lambda v: True, *,
          clean: Callable[[Any], Any] | None = None, follow: bool = False) -> None:
    """Just before drawing widget ``wkey`` (a widget's state set in a run that does not draw it is lost): its value
    is the one it has (set again, so that a widget not drawn in the last run is not drawn at its own default) when
    ``valid`` says it still is one, else ``pkey[field]`` (through ``clean``, e.g. the runs still there) when
    ``valid`` says it still is one, else ``default``.

    ``follow``: the default is live (e.g. the latest version of each model, as a training loop logs them) until the
    user chooses: ``pkey[field]`` then holds only a choice of the user's (the widget's ``on_change`` is
    :func:`chose`), and while there is none the widget shows ``default`` as computed now, on every run, and
    :func:`keep` does not record it."""
    state = st.session_state
    following = state.setdefault(FOLLOWING, set())
    value = saved(pkey).get(field)
    try:
        value = clean(value) if clean is not None and value is not None else value
        ok = value is not None and bool(valid(value))
    except (TypeError, ValueError):
        ok = False
    if follow and not ok:
        following.add((pkey, field))
        state[wkey] = default
        if field in saved(pkey):  # (a choice no longer valid: the default is followed again)
            state[pkey] = {k: v for k, v in saved(pkey).items() if k != field}
        return
    following.discard((pkey, field))
    # a widget not drawn in the last run (another method chosen, a section stopped early) keeps its value under its
    # key, but a browser draws it again at its own default (seed 0, the first option, a toggle off) unless that value
    # is set again now: the widget's value (the user's, when they just changed it) is written back when still valid
    current, now_ok = state.get(wkey), False
    if wkey in state:
        try:
            now_ok = current is not None and bool(valid(current))
        except (TypeError, ValueError):
            now_ok = False
    state[wkey] = current if now_ok else value if ok else default


def gone(pkey: str, field: str, present: Collection[Any]) -> list[Any]:
    """The values of the list the user chose in ``pkey[field]`` that are not among ``present`` (runs removed since),
    with those trimmed away when the workspace was opened (:data:`dashboard.persist.DROPPED`, forgotten now): what
    :func:`dashboard.ui.no_longer_offered` says before :func:`start` drops them."""
    kept = saved(pkey).get(field)
    now = [v for v in kept if v not in present] if isinstance(kept, list) else []
    before = st.session_state.get(P.DROPPED, {}).pop(pkey, None)
    return list(dict.fromkeys([*(before if isinstance(before, list) else []), *now]))


def chose(wkey: str, pkey: str, field: str) -> None:
    """``on_change`` of a widget started with ``follow``: its value is the user's choice, kept from now on."""
    st.session_state.setdefault(FOLLOWING, set()).discard((pkey, field))
    keep(pkey, **{field: st.session_state[wkey]})


def keep(pkey: str, **values: Any) -> None:
    """After drawing widgets: their values into ``pkey`` (fields not given keep theirs; a field whose widget follows
    its default, :func:`start`, is not recorded), then published."""
    following = st.session_state.get(FOLLOWING, set())
    before = saved(pkey)
    after = {**before, **{k: v for k, v in values.items() if (pkey, k) not in following}}
    if after != before:
        st.session_state[pkey] = after
    P.publish()


# ------------------------------------------------------------------------------------------ checks


def one_of(options: Collection[Any]) -> Callable[[Any], bool]:
    return lambda v: v in options


def number(lo: float | None = None, hi: float | None = None, *, integer: bool = False) -> Callable[[Any], bool]:
    """A finite number (an integer when ``integer``) within ``[lo, hi]``."""
    def check(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return False
        if integer and int(v) != v:
            return False
        return (lo is None or v >= lo) and (hi is None or v <= hi)

    return check


def flag(v: Any) -> bool:
    return isinstance(v, bool)


def text(v: Any) -> bool:
    return isinstance(v, str)

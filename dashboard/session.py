"""The dashboard session's workspace snapshot and its per-session memo (split out of :mod:`dashboard.state`, which
re-exports every name here).

* The :class:`~evalcore.workspace.Snapshot` of the session's workspace (read from the persistent store by
  :mod:`dashboard.persist`) lives in ``st.session_state[WS_KEY]``.
* :func:`memo` is a small per-session LRU in front of the ``st.cache_data`` steps (the objects themselves: no
  unpickling on each rerun); :func:`shared` a value computed once per server.
"""

from __future__ import annotations

import os
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import streamlit as st

from evalcore import workspace as W

WS_KEY = "ws"
MEMO_KEY = "_memo"
FAILED_KEY = "_failed_runs"  # uids of the runs that failed to load in the last resolution (for the sidebar)
LAZY_FAILED_KEY = "_failed_run_keys"  # content keys of the runs that failed to load in this session
PREVIOUS_KEY = "_eval_previous"  # the session's last evaluation of its workspace (dashboard.cache.Previous)
PREVIOUS_EVAL_KEY = "_eval_previous_key"  # its key (the memo's "eval:..." entry)
#: kinds of runs read only when a page asks for one (stored or uploaded ranked files, demo runs; the fusions of the
#: session's own workspace too, see :func:`context`)
LAZY_KINDS = ("ranked", "demo")
MEMO_SIZE = 128
EVALUATIONS_KEPT = 6  # evaluations a session's memo keeps (the least recently used go first)
_TIMING = bool(os.environ.get("EVALCORE_DASH_TIMING"))  # log each computed step to stderr


# ------------------------------------------------------------------------------------------ workspace


def get_ws() -> W.Snapshot:
    """The session's workspace as a :class:`~evalcore.workspace.Snapshot` (read from the persistent store at
    the start of every run by :func:`dashboard.persist.sync`)."""
    ws = st.session_state.get(WS_KEY)
    return ws if ws is not None else W.Snapshot()


# ------------------------------------------------------------------------------------------ memo


def _memo() -> OrderedDict:
    if MEMO_KEY not in st.session_state:
        st.session_state[MEMO_KEY] = OrderedDict()
    return st.session_state[MEMO_KEY]


def memo(key: str, compute: Callable[[], Any]) -> Any:
    """Per-session memo in front of the ``st.cache_data`` steps (LRU of :data:`MEMO_SIZE` entries)."""
    m = _memo()
    if key in m:
        m.move_to_end(key)
        return m[key]
    t0 = time.perf_counter()
    value = compute()
    if _TIMING:
        sys.stderr.write(f"[evalcore dashboard] {key[:40]:<40} {time.perf_counter() - t0:8.3f}s\n")
    m[key] = value
    while len(m) > MEMO_SIZE:
        m.popitem(last=False)
    if key.startswith("eval:"):  # evaluations are big (a fusion preview makes one per c or weight tried)
        evals = [k for k in m if k.startswith("eval:")]
        for k in evals[: max(0, len(evals) - EVALUATIONS_KEPT)]:
            del m[k]
    return value


@st.cache_resource(show_spinner=False, max_entries=256)
def _shared(key: str, _compute: Callable[[], Any]) -> Any:
    return _compute()


def shared(key: str, compute: Callable[[], Any]) -> Any:
    """:func:`memo` of a value computed once per server (``st.cache_resource``, never copied; the caller
    must not change it): for big objects every tab needs, such as a metric@k slice of 50,000 queries."""
    return memo(key, lambda: _shared(key, compute))


def _key(*parts: Any) -> str:
    return W.stable_key(*parts)


def clear_caches() -> None:
    """Drop the session memo (the ``st.cache_data`` entries stay; they are keyed by content)."""
    st.session_state.pop(MEMO_KEY, None)

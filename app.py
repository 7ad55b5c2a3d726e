"""evalcore dashboard: ``streamlit run app.py`` (``EVALCORE_WORKSPACE=DIR``: opens DIR; a fresh machine opens the
built-in demo). Everything loaded is saved into the active workspace (see dashboard/persist.py)."""

from __future__ import annotations

import time

import streamlit as st

from dashboard import persist as P
from dashboard import state as S
from dashboard import ui

_t0 = time.perf_counter()
st.set_page_config(layout="wide", page_title="evalcore", page_icon=ui.ICON)

P.sync()  # the session's workspace (named by the URL), read again when it changed on disk

page = ui.navigation()  # st.navigation over st.Page("pages/*.py")
ui.sidebar()
st.session_state[ui.VIA_APP] = True
try:
    page.run()
finally:
    st.session_state.pop(ui.VIA_APP, None)
    S.warm_up()  # once the first page is drawn: what the next pages need (scipy.stats, the Styler), in the background
    # server-side duration of this rerun (read by benchmarks; never shown)
    st.session_state["_run_seconds"] = time.perf_counter() - _t0

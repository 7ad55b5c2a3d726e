"""evalcore dashboard: `streamlit run app.py` (opens on a built-in synthetic demo)."""

from __future__ import annotations

import time

import streamlit as st

from dashboard import state as S
from dashboard import ui

_t0 = time.perf_counter()
st.set_page_config(layout="wide", page_title="evalcore", page_icon=":material/leaderboard:")

S.get_ws()  # a new session starts on the demo
S.warm_up()  # import scipy.stats in the background before the Compare page needs it

pages = [
    st.Page(ui.PAGES["data"], title="Data", icon=":material/upload_file:"),
    st.Page(ui.PAGES["overview"], title="Overview", icon=":material/leaderboard:", default=True),
    st.Page(ui.PAGES["compare"], title="Compare", icon=":material/compare_arrows:"),
    st.Page(ui.PAGES["queries"], title="Queries", icon=":material/manage_search:"),
    st.Page(ui.PAGES["domains"], title="Domains", icon=":material/category:"),
    st.Page(ui.PAGES["fusion"], title="Fusion", icon=":material/merge:"),
]
page = st.navigation(pages)
ui.sidebar()
st.session_state[ui.VIA_APP] = True
try:
    page.run()
finally:
    st.session_state.pop(ui.VIA_APP, None)
    # server-side duration of this rerun (read by benchmarks; never shown)
    st.session_state["_run_seconds"] = time.perf_counter() - _t0

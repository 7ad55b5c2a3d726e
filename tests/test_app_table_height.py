"""The leaderboard shows every run (a review: with 14 runs it showed 10 in a scroll box, the ★ row could sit out
of view)."""

from __future__ import annotations

import streamlit as st
from test_app import goto, start
from test_app_versions import fixture

from dashboard.ui import rows_height


def test_the_leaderboard_is_tall_enough_for_every_run(monkeypatch):
    ws, _ = fixture()
    heights: dict[str, object] = {}
    real = st.dataframe

    def spy(data=None, *args, **kwargs):
        heights[kwargs.get("key")] = (len(data), kwargs.get("height", "auto"))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(st, "dataframe", spy)
    at = goto(start(ws), "overview")
    assert not at.exception
    n, height = heights["overview_table"]
    assert n > 10 and height == (n + 1) * 35 + 3  # a header and n rows of Streamlit's 35 px
    assert rows_height(3) == "auto" and rows_height(40) == 26 * 35 + 3  # at most 25 rows, then it scrolls

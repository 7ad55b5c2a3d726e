"""Finding one query among many: id search, sorting and pages (every query reachable, at any count).

A select box cannot list 50,000 ids (the browser would receive them on every rerun), so the
pickers show one page of the filtered, sorted list and say how many match; the id search
box reaches any query (an exact id is picked at once), and sorting plus paging reach the
rest. The pure helpers (:func:`search_ids`, :func:`page_of`) carry the logic; the widgets
only lay them out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from dashboard import state as S
from dashboard import ui

#: Options of a query select box (one page of the filtered, sorted list).
MAX_OPTIONS = 500
#: Rows per page of the queries table.
PAGE_ROWS = 50


def search_ids(ids: Sequence[str], text: str | None) -> tuple[list[str], str | None]:
    """The ids containing ``text`` (case-insensitive, order kept) and the one equal to it, if any.

    Parameters
    ----------
    ids : sequence of str
        In display order (already sorted).
    text : str or None
        What the user typed; blank means no filter.

    Returns
    -------
    (list of str, str or None)
        Matching ids in the same order; the exact match (``text`` stripped, compared
        as is, then case-insensitively) or None.
    """
    ids = [str(i) for i in ids]
    t = (text or "").strip()
    if not t:
        return ids, None
    low = t.lower()
    matches = [i for i in ids if low in i.lower()]
    exact = t if t in set(matches) else next((i for i in matches if i.lower() == low), None)
    return matches, exact


def page_count(n: int, rows: int = PAGE_ROWS) -> int:
    return max(1, math.ceil(n / rows))


def page_of(frame: pd.DataFrame, page: int, rows: int = PAGE_ROWS) -> pd.DataFrame:
    """Rows of page ``page`` (1-based, clipped to the last page) of ``frame``."""
    last = page_count(len(frame), rows)
    p = min(max(1, int(page)), last)
    return frame.iloc[(p - 1) * rows: p * rows]


def rows_caption(*, page: int, n_shown: int, n_matching: int, n_total: int, n_pages: int, search: str | None = None,
                 domains: bool = False) -> str:
    """The line under a page of the queries table (Markdown-safe: the search text is escaped).

    ``"Rows 51–100 of 5,000 queries, page 2 of 100."``, ``"... of 12 matching queries (300 in all) ..."``;
    when nothing matches, ``"No query matches the search “zzz” (300 queries in all)."`` (or the
    chosen domains) instead of an empty range of rows.
    """
    if n_matching == 0:
        what = [f"the search “{ui.md_escape(search.strip())}”"] if search and search.strip() else []
        what += ["the chosen domains"] if domains else []
        return (f"No query matches {' and '.join(what)} ({n_total:,} queries in all)." if what
                else "No query to show.")
    first = (int(page) - 1) * PAGE_ROWS
    return (f"Rows {first + 1:,}–{first + n_shown:,} of {n_matching:,} "
            + (f"matching queries ({n_total:,} in all)" if n_matching != n_total else "queries")
            + f", page {int(page):,} of {n_pages:,}.")


def options_around(ids: Sequence[str], current: str | None, limit: int = MAX_OPTIONS) -> list[str]:
    """At most ``limit`` ids for a select box: the first ones, with ``current`` kept (put first) when it
    matches but lies further down the list."""
    ids = list(ids)
    out = ids[:limit]
    if current is not None and current in set(ids) and current not in set(out):
        out = [current, *out[: limit - 1]]
    return out


def query_box(ids: Sequence[str], *, scope: str, label: str = "Query", search_label: str = "Find a query by id",
              what: str = "queries") -> str | None:
    """An id search box and a select box over ``ids`` (sorted as the page wants), bound to the shared query.

    Returns the chosen query id (or None when nothing matches). Typing an exact id picks it.
    """
    c1, c2 = st.columns([1, 2])
    with c1:
        text = st.text_input(search_label, key=f"{scope}_qsearch", placeholder="part of an id",
                             help="Case-insensitive; an exact id is picked at once. Every query is reachable.")
    matches, exact = search_ids(ids, text)
    if exact is not None and st.session_state.get(f"{scope}_qsearch_last") != exact:
        st.session_state[S.SEL_QUERY] = exact
    st.session_state[f"{scope}_qsearch_last"] = exact
    if not matches:
        with c2:
            st.caption("No id contains that text." if ids else f"No {what} to choose from here.")
        return None
    current = st.session_state.get(S.SEL_QUERY)
    options = options_around(matches, current if current in set(matches) else None)
    with c2:
        qid = ui.bound_selectbox(label, options, S.SEL_QUERY, scope=scope)
    if len(matches) > len(options):
        st.caption(f"{len(matches):,} of {len(ids):,} {what} match; the list shows the first {len(options):,}. Type "
                   "more of the id or change the sort to reach the others.")
    elif text and text.strip():
        st.caption(f"{len(matches):,} of {len(ids):,} {what} match.")
    return qid

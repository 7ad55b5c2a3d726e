"""Compare keeps what was chosen elsewhere and what was chosen on it (browser findings s30, 1 and 2): visiting
Compare does not replace the query picked on the Queries page by the worst query of the pair, and "Runs compared"
(the family of the correction) comes back on another visit, a reload or a new session."""

from __future__ import annotations

import test_app as T
from test_app_store import python_workspace


def test_a_query_chosen_on_queries_survives_a_visit_to_compare():
    name, _ = python_workspace()
    at = T.goto(T.open_app(name), "compare")  # Compare shows bm25 vs dense (its shown pair)
    T.goto(at, "queries")
    box = at.selectbox(key="w_queries_sel_run_b")
    box.select(next(o for o in box.options if o not in (box.value, "dense"))).run()
    box = at.selectbox(key="w_queries_sel_query")
    chosen = box.options[-1]
    box.select(chosen).run()
    T.goto(at, "compare")  # the pair differs from the one Compare showed last: changed on Queries, not here
    assert at.selectbox(key="w_compare_sel_query").value == chosen
    T.goto(at, "queries")
    assert at.selectbox(key="w_queries_sel_query").value == chosen
    # a pair changed on Compare itself still starts at its worst query
    T.goto(at, "compare")
    b = at.selectbox(key="w_compare_sel_run_b")
    b.select(next(o for o in b.options if o != b.value)).run()
    q = at.selectbox(key="w_compare_sel_query")
    assert q.value == q.options[0] != chosen

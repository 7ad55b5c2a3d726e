"""Compare keeps what was chosen elsewhere and what was chosen on it (browser findings s30, 1 and 2): visiting
Compare does not replace the query picked on the Queries page by the worst query of the pair, and "Runs compared"
(the family of the correction) comes back on another visit, a reload or a new session; so does the Domains page's
minimum queries to test a domain (finding 3: it also decides the family of the correction)."""

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


def test_runs_compared_and_the_hsd_design_come_back_after_a_reload_and_in_a_new_session():
    name, ws = python_workspace()
    at = T.goto(T.open_app(name), "compare")
    mine = ["bm25", "e5-ep5", "e5-ep25"]
    at.multiselect(key="cmp_runs").set_value(mine).run()
    at.selectbox(key="w_compare_sel_hsd_design").set_value("independent").run()
    assert not at.exception
    # another page and back: the same runs (the widget's state is dropped while it is not drawn)
    T.goto(at, "overview")
    T.goto(at, "compare")
    assert at.multiselect(key="cmp_runs").value == mine
    # a new session on the workspace (F5, a new tab): the runs, the family of the correction, and the design
    again = T.goto(T.open_app(name), "compare")
    assert again.multiselect(key="cmp_runs").value == mine
    assert any("across the 3 pairs of the 3 runs compared" in c.value for c in again.caption)
    assert again.selectbox(key="w_compare_sel_hsd_design").value == "independent"
    # a run renamed here follows; a run removed leaves the choice; none left (fewer than two): the default
    T.goto(again, "data")
    from dashboard import dataops
    dataops.follow_rename(again.session_state, "e5-ep5", "e5-five")
    ws.rename_run("e5-ep5", "e5-five")
    again.run()
    T.goto(again, "compare")
    assert again.multiselect(key="cmp_runs").value == ["bm25", "e5-five", "e5-ep25"]
    ws.remove_run("e5-ep25")
    assert T.goto(T.open_app(name), "compare").multiselect(key="cmp_runs").value == ["bm25", "e5-five"]
    ws.remove_run("bm25")
    assert set(T.goto(T.open_app(name), "compare").multiselect(key="cmp_runs").value) == {"dense", "e5-five"}


def test_the_domains_minimum_comes_back_after_a_reload_and_another_page():
    """It decides which domains are tested, so the family of the correction (browser finding s30 3)."""
    from test_app_domain_mapping import domains_snapshot

    from dashboard import persist as P

    doms = "query_id,domain\n" + "".join(f"q{i:05d},{'bio' if i < 30 else 'med'}\n" for i in range(40))
    at = T.goto(T.start(domains_snapshot(40, doms)), "domains")
    assert at.number_input(key="dom_minq").value == 5
    at.number_input(key="dom_minq").set_value(20).run()
    T.goto(at, "overview")
    assert T.goto(at, "domains").number_input(key="dom_minq").value == 20
    again = T.goto(T.open_app(at.session_state[P.ACTIVE]), "domains")
    assert again.number_input(key="dom_minq").value == 20
    assert any("has only 10 queries (fewer than 20)" in T.unescape(w.value) for w in again.warning), \
        [w.value for w in again.warning]


def test_the_overview_columns_come_back_after_another_page_and_a_reload():
    """The leaderboard's columns went back to the defaults on F5, a new tab or another page (browser finding 3)."""
    from dashboard import persist as P

    name, _ = python_workspace()
    at = T.goto(T.open_app(name), "overview")
    shown = at.multiselect(key="ov_columns").value
    assert len(shown) >= 2
    mine = shown[:1]
    at.multiselect(key="ov_columns").set_value(mine).run()
    assert not at.exception
    T.goto(at, "compare")
    assert T.goto(at, "overview").multiselect(key="ov_columns").value == mine
    again = T.goto(T.open_app(at.session_state[P.ACTIVE]), "overview")
    assert again.multiselect(key="ov_columns").value == mine


def test_the_queries_search_comes_back_after_another_page_and_a_reload():
    """The "Search query id" box was emptied by a reload (F5) while the query, runs and metric came back."""
    from dashboard import persist as P

    name, _ = python_workspace()
    at = T.goto(T.open_app(name), "queries")
    at.text_input(key="q_search").input("q1").run()  # q1, q10... q14: q1 is also an exact id
    assert not at.exception
    assert at.selectbox(key="w_queries_sel_query").value == "q1"
    box = at.selectbox(key="w_queries_sel_query")
    box.select("q12").run()  # chosen after the search: a reload must not go back to the exact match
    T.goto(at, "overview")
    assert T.goto(at, "queries").text_input(key="q_search").value == "q1"
    again = T.goto(T.open_app(at.session_state[P.ACTIVE]), "queries")
    assert again.text_input(key="q_search").value == "q1"
    assert again.selectbox(key="w_queries_sel_query").value == "q12"
    assert set(again.selectbox(key="w_queries_sel_query").options) <= {"q1", *(f"q1{i}" for i in range(5))}
    again.text_input(key="q_search").input("").run()  # emptied: emptied after a reload too
    assert T.goto(T.open_app(name), "queries").text_input(key="q_search").value == ""


def test_the_fusion_set_up_comes_back_after_another_page_and_a_reload():
    """Fusion -> Overview -> Fusion (and F5, a new tab) reset the method, the normalisation, c, top-N and the weight
    search with its options to their defaults; only the weights survived a page switch (browser walkthrough)."""
    from dashboard import persist as P

    name, ws = python_workspace()
    at = T.goto(T.open_app(name), "fusion")
    # the user picks the runs (the default until then follows the latest versions: dashboard.kept.start's follow)
    at.multiselect(key="fu_runs").set_value(["bm25", "dense"]).run()
    at.multiselect(key="fu_runs").set_value(["bm25", "dense", "e5-ep5"]).run()
    at.selectbox(key="fu_method").set_value("wsum").run()
    at.selectbox(key="fu_norm").set_value("z-score").run()
    at.number_input(key="fu_topn").set_value(20).run()
    weights = [n.key for n in at.number_input if n.key.startswith("fu_w_")]  # bm25's, dense's, e5-ep5's
    assert len(weights) == 3
    at.number_input(key=weights[0]).set_value(0.3).run()
    at.selectbox(key="fu_strategy").set_value("random").run()
    at.number_input(key="fu_trials").set_value(20).run()
    at.number_input(key="fu_seed").set_value(7).run()
    at.slider(key="fu_fraction").set_value(0.6).run()
    at.toggle(key="fu_search").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]

    def same(app) -> None:
        assert app.multiselect(key="fu_runs").value == ["bm25", "dense", "e5-ep5"]
        assert app.selectbox(key="fu_method").value == "wsum"
        assert app.selectbox(key="fu_norm").value == "z-score"
        assert app.number_input(key="fu_topn").value == 20
        assert app.number_input(key=weights[0]).value == 0.3
        assert app.selectbox(key="fu_strategy").value == "random"
        assert app.number_input(key="fu_trials").value == 20
        assert app.number_input(key="fu_seed").value == 7
        assert app.slider(key="fu_fraction").value == 0.6
        assert app.toggle(key="fu_search").value is True
        assert any(m.label.startswith("tuned on") for m in app.metric), "the search ran"

    T.goto(at, "overview")
    same(T.goto(at, "fusion"))
    same(T.goto(T.open_app(at.session_state[P.ACTIVE]), "fusion"))  # F5, a new tab
    # a run removed meanwhile leaves the choice; a value no longer offered falls back to the default
    ws.remove_run("e5-ep5")
    ws.set_ui_state(**{P.SEL_FUSION: {**ws.ui_state()[P.SEL_FUSION], "method": "no-such-method", "top_n": -3}})
    again = T.goto(T.open_app(name), "fusion")
    assert not again.exception, [e.value for e in again.exception]
    assert again.multiselect(key="fu_runs").value == ["bm25", "dense"]
    assert again.selectbox(key="fu_method").value == "rrf" and again.number_input(key="fu_topn").value == 0
    assert again.selectbox(key="fu_norm").value == "z-score"
    # a run renamed on the Data page: the set-up follows it (its weight too)
    from dashboard import dataops

    dataops.follow_rename(again.session_state, "dense", "dense-v1")
    kept = again.session_state[P.SEL_FUSION]
    assert kept["runs"] == ["bm25", "dense-v1"] and "dense-v1" in kept["weights"] and "dense" not in kept["weights"]

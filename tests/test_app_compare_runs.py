"""Compare tests the runs the user chooses (a review: with 18 checkpoints it tested all 153 pairs at once, and a
pair significant on Versions was not significant on Compare, the correction counting pairs nobody asked for)."""

from __future__ import annotations

from test_app import goto, start
from test_app_versions import LABELS, NAMES, STEPS, fixture
from test_app_views import frame_with

from dashboard.versions import COMPARE_ALL_UP_TO, default_compared


def test_default_runs_are_all_of_a_few_or_the_latest_version_of_each_model():
    ws, _ = fixture()
    names = [r.name for r in ws.runs]
    assert len(names) > COMPARE_ALL_UP_TO
    latest_encoder = NAMES[STEPS.index(max(STEPS))]
    # the labelled model has no steps: its latest is the last label in natural order (v10), not the last loaded
    assert set(default_compared(names, ws.runs)) == {latest_encoder, f"lab {LABELS[0]}", "solo", "bm25"}
    assert default_compared(names[:COMPARE_ALL_UP_TO], ws.runs) == names[:COMPARE_ALL_UP_TO]


def test_compare_tests_the_chosen_runs_and_says_how_many_pairs():
    ws, _ = fixture()
    at = goto(start(ws), "compare")
    chosen = at.multiselect(key="cmp_runs").value
    assert len(chosen) == 4
    assert any("across the 6 pairs of the 4 runs compared" in c.value for c in at.caption)
    pair = [NAMES[0], NAMES[1]]
    at.multiselect(key="cmp_runs").set_value(pair).run()
    assert not at.exception
    table = frame_with(at, "run", "run − baseline", "p adjusted")
    assert len(table) == 1 and any("across the 1 pair of the 2 runs compared" in c.value for c in at.caption)
    at.multiselect(key="cmp_runs").set_value([NAMES[0]]).run()
    assert any("Choose at least two runs" in i.value for i in at.info)


def test_the_query_box_starts_at_the_worst_query_of_a_newly_chosen_pair():
    ws, _ = fixture()
    at = goto(start(ws), "compare")
    box = at.selectbox(key="w_compare_sel_query")
    box.select(box.options[3]).run()  # a query picked by hand
    at.selectbox(key="w_compare_sel_run_b").select(
        next(o for o in at.selectbox(key="w_compare_sel_run_b").options
             if o != at.selectbox(key="w_compare_sel_run_b").value)).run()
    box = at.selectbox(key="w_compare_sel_query")
    assert box.value == box.options[0]  # "B − A, worst first": the worst one


def test_the_caption_says_what_the_cells_of_a_large_matrix_leave_to_the_hover():
    ws, _ = fixture()
    names = [r.name for r in ws.runs]
    assert len(names) > 12
    at = goto(start(ws), "compare")
    for chosen, says in ((names[:4], None), (names[:8], "With 8 runs the cells show the difference and *"),
                         (names[:13], "With 13 runs the cells show colour only")):
        at.multiselect(key="cmp_runs").set_value(chosen).run()
        assert not at.exception
        caption = next(c.value for c in at.caption if "Cell = row run − column run" in c.value)
        assert (says is None and "With " not in caption) or (says is not None and says in caption), caption


def test_the_reproduce_line_names_the_runs_compared_in_the_pages_order():
    """The caption's command names the runs the page tests, in the order it tests them (the workspace's, whatever
    order they were chosen in): each pair's direction, the correction's family. Before, it named none: the command
    compared every run of the file, sorted by name."""
    import shlex

    from test_same_numbers import caption_code

    ws, _ = fixture()
    at = goto(start(ws), "compare")
    clicked = ["lab v2", "encoder-a", "encoder-k"]
    at.multiselect(key="cmp_runs").set_value(clicked).run()
    assert not at.exception
    page_order = [r.name for r in ws.runs if r.name in clicked]
    assert page_order == ["encoder-k", "encoder-a", "lab v2"]  # neither the order clicked nor the names'
    line = next(c.value for c in at.caption if "Reproduce with" in c.value)
    words = shlex.split(caption_code(line))
    start_at = words.index("--runs") + 1
    assert words[start_at:start_at + 4] == [*page_order, "--test"]

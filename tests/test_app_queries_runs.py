"""The Queries drill-down follows the Run A / Run B pickers (a browser review's finding: after changing
Run A, the drill-down still showed the earlier runs, labelled "A" and "B")."""

from __future__ import annotations

from test_app_views import frames, start


def _headers(at) -> list[str]:
    """The first line of each run's list header in the drill-down ("A · run"...)."""
    return [t.value.split("\n")[0] for t in at.text if t.value[:4] in ("A · ", "B · ", "C · ", "D · ")]


def _lists(at) -> int:
    return sum(list(f.columns)[:3] == ["rank", "grade", "doc_id"] for f in frames(at))


def test_the_drilldown_shows_run_a_and_run_b_as_picked():
    at = start(None, "queries")
    a, b = at.selectbox(key="w_queries_sel_run_a"), at.selectbox(key="w_queries_sel_run_b")
    runs = list(a.options)
    assert len(runs) == 3
    assert _headers(at) == [f"A · {a.value}", f"B · {b.value}"]
    new_a = next(r for r in runs if r not in (a.value, b.value))
    at.selectbox(key="w_queries_sel_run_a").select(new_a).run()
    assert not at.exception
    b_now = at.selectbox(key="w_queries_sel_run_b").value
    assert _headers(at) == [f"A · {new_a}", f"B · {b_now}"] and _lists(at) == 2
    assert any(f"rank in {new_a}" in map(str, f.columns) for f in frames(at))
    # a third run beside them is C; picking it as run B takes it out of the extra runs
    third = next(r for r in runs if r not in (new_a, b_now))
    at.multiselect(key="q_more_runs").set_value([third]).run()
    assert _headers(at) == [f"A · {new_a}", f"B · {b_now}", f"C · {third}"] and _lists(at) == 3
    at.selectbox(key="w_queries_sel_run_b").select(third).run()
    assert not at.exception
    assert _headers(at) == [f"A · {new_a}", f"B · {third}"] and _lists(at) == 2
    assert at.multiselect(key="q_more_runs").value == []


def test_the_queries_table_shows_the_difference_and_runs_a_and_b_first():
    at = start(None, "queries")
    a, b = at.selectbox(key="w_queries_sel_run_a").value, at.selectbox(key="w_queries_sel_run_b").value
    table = next(f for f in frames(at) if "difference B − A" in f.columns)
    assert list(table.columns[:5]) == ["query_id", "domain", "difference B − A", a, b]
    assert set(table.columns[5:]) == set(at.selectbox(key="w_queries_sel_run_a").options) - {a, b}

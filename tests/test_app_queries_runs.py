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


def test_a_renamed_run_stays_picked():
    """Run A = c on Queries, then c renamed on the Data page: back on Queries, Run A was the first run ('a')."""
    from test_app import errors, goto, trec_qrels, trec_run

    from evalcore import workspace as W

    ws = W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))
    for i, name in enumerate(["a", "b", "c"]):
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", trec_run(i + 1)), name=name)
    at = start(ws, "queries")
    at.selectbox(key="w_queries_sel_run_a").select("c").run()
    at.selectbox(key="w_queries_sel_run_b").select("b").run()
    goto(at, "data")
    uid = {r.name: r.uid for r in at.session_state["ws"].runs}["c"]
    at.text_input(key=f"name_{uid}").input("C-renamed").run()
    assert not at.exception and not errors(at)
    goto(at, "queries")
    assert (at.selectbox(key="w_queries_sel_run_a").value, at.selectbox(key="w_queries_sel_run_b").value) == (
        "C-renamed", "b")
    assert _headers(at) == ["A · C-renamed", "B · b"]

"""The Domains page's baseline picker leaves the shared baseline alone when it cannot show it (the baseline is not
among the runs shown there): it shows another one, and the user's choice stays for the other pages, in the session
and the workspace's kept selections. Before, the page wrote the run it showed over the user's baseline."""

from __future__ import annotations

import test_app as T
from test_app_store import new_workspace

from dashboard import state as S
from evalcore import workspace as W


def ten_runs_with_domains() -> str:
    """A workspace of bm25 and nine checkpoints m-1 ... m-9 of model m (beyond 8 runs: the Domains page shows the
    latest version of each model and the runs without one, bm25 and m-9) and a domain mapping."""
    name, ws = new_workspace()
    ws.set_ground_truth(T.trec_qrels(), source_name="qrels.txt")
    ws.add_run("bm25", T.trec_run(1), source_name="bm25.trec")
    for i in range(1, 10):
        ws.add_run(f"m-{i}", T.trec_run(10 + i), source_name=f"m{i}.trec", model="m", version=f"v{i}", step=i)
    ws.set_domains({q: ("bio" if i < 8 else "med") for i, q in enumerate(T.QUERIES)}, name="domains.csv")
    return name


def test_the_domains_page_shows_another_baseline_without_changing_the_user_s():
    name = ten_runs_with_domains()
    at = T.goto(T.open_app(name), "overview")  # the leaderboard's marks offer every run as baseline
    at.selectbox(key="w_overview_sel_baseline").set_value("m-3").run()
    assert at.session_state[S.SEL_BASELINE] == "m-3"
    T.goto(at, "domains")
    assert not T.errors(at)
    shown = at.selectbox(key="w_domains_sel_baseline")
    assert shown.value != "m-3" and "m-3" not in shown.options  # (not among the runs shown here)
    assert at.session_state[S.SEL_BASELINE] == "m-3"  # the user's choice, for the other pages
    assert W.Workspace.open(T.stored(at).path, create=False).ui_state()[S.SEL_BASELINE] == "m-3"
    T.goto(at, "overview")
    assert at.selectbox(key="w_overview_sel_baseline").value == "m-3"
    # a baseline chosen on the Domains page is the user's choice
    T.goto(at, "domains")
    other = next(r for r in at.selectbox(key="w_domains_sel_baseline").options if r != shown.value)
    at.selectbox(key="w_domains_sel_baseline").set_value(other).run()
    assert at.session_state[S.SEL_BASELINE] == other
    assert W.Workspace.open(T.stored(at).path, create=False).ui_state()[S.SEL_BASELINE] == other
    T.goto(at, "overview")
    assert at.selectbox(key="w_overview_sel_baseline").value == other


def test_the_compare_page_shows_another_baseline_without_changing_the_user_s():
    """The same on Compare, whose "Runs compared" starts beyond 8 runs at the latest version of each model: a
    baseline chosen on the Overview among every run (m-3) was replaced by the run Compare showed, for every page and
    in the workspace, by a mere visit."""
    name = ten_runs_with_domains()
    at = T.goto(T.open_app(name), "overview")
    at.selectbox(key="w_overview_sel_baseline").set_value("m-3").run()
    T.goto(at, "compare")
    assert not T.errors(at)
    shown = at.selectbox(key="w_compare_sel_baseline")
    assert shown.value != "m-3" and "m-3" not in shown.options
    assert at.session_state[S.SEL_BASELINE] == "m-3"
    assert W.Workspace.open(T.stored(at).path, create=False).ui_state()[S.SEL_BASELINE] == "m-3"
    T.goto(at, "overview")
    assert at.selectbox(key="w_overview_sel_baseline").value == "m-3"
    T.goto(at, "compare")  # chosen here: the user's choice
    other = next(r for r in at.selectbox(key="w_compare_sel_baseline").options if r != shown.value)
    at.selectbox(key="w_compare_sel_baseline").set_value(other).run()
    assert at.session_state[S.SEL_BASELINE] == other
    assert W.Workspace.open(T.stored(at).path, create=False).ui_state()[S.SEL_BASELINE] == other

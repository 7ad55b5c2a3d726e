"""Issue 9 in a real browser (chromium + playwright on ``streamlit run app.py``): the dashboard lives on the
persistent store.

* files uploaded through the real file inputs, then the page reloaded, then the server restarted: the same
  workspace, runs and numbers (evalcore's, computed here on the same files);
* a deep link (the URL of a query's drill-down, with its metric@k and runs) pasted into a new tab opens the
  same drill-down;
* a run added by another process (as a training script would) appears on the open Data page without any
  click: the page's automatic check of the workspace's change counter.

The servers use a workspace root of their own (``EVALCORE_WORKSPACES``). Every wait is on content the
server must render (``browser_support.wait_for``), never on a sleep.
"""

from __future__ import annotations

import subprocess
import sys

import browser_support as B
import pytest
import test_browser as TB
from browser_fixtures import STEP

from evalcore import workspace as W
from evalcore.evaluate import evaluate
from evalcore.io.trec import read_trec_qrels, read_trec_run

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """This module's folder of named workspaces (also used by the tests to prepare workspaces)."""
    return tmp_path_factory.mktemp("store-home") / "workspaces"


def serve(home, log_dir, port: int | None = None) -> B.StreamlitServer:
    log_dir.mkdir(parents=True, exist_ok=True)
    return B.start_streamlit(log_dir, env={"EVALCORE_WORKSPACES": str(home)}, port=port)


def stop(srv: B.StreamlitServer) -> None:
    srv.stop()
    log = srv.log_text()
    assert "Traceback" not in log, f"the streamlit server logged an error:\n{log[-4000:]}"


@pytest.fixture(scope="module")
def store_server(browser, home, tmp_path_factory):
    try:
        srv = serve(home, tmp_path_factory.mktemp("store-server"))
    except B.BrowserSetupError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield srv
    finally:
        stop(srv)


def python_workspace(home, name: str, files, runs=("strong", "weak")) -> W.Workspace:
    """A workspace prepared from Python: the qrels and the given runs of ``test_browser.write_inputs``."""
    ws = W.WorkspaceRoot(home).create(name)
    ws.set_ground_truth(files["qrels"])
    for key in runs:
        ws.add_run(f"run_{key}", files[key])
    return ws


def overview_shows(page, cells: dict[str, str]) -> None:
    B.wait_for(page, main=["Metrics vs k"], grid=["run_strong", "run_weak", *cells.values()], timeout=STEP)
    assert "★ " + cells["run_strong"] in B.grid_text(page)


def test_uploads_survive_a_reload_and_a_server_restart(context, home, tmp_path):
    files = TB.write_inputs(tmp_path)
    summ = TB.expected(files)[0]
    cells = {r: TB.overview_cell(row) for r, row in summ.set_index("run").iterrows()}
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    srv = serve(home, tmp_path / "first")
    try:
        page.goto(srv.url + "/", wait_until="commit")
        B.wait_for(page, main=["Built-in demo: synthetic data", "Metrics vs k"], timeout=STEP)
        B.go_to(page, "Data", timeout=STEP, expect=["Loaded runs"])
        TB.upload(page, "up_gt", "Ground-truth file", [files["qrels"]], shows="qrels.txt",
                  main=["loaded ground truth", "saved in the new workspace"])
        TB.upload(page, "up_runs", "Run files", [files["strong"], files["weak"]], shows="run: run_weak",
                  main=["30 queries, 600 ranked items"])
        B.go_to(page, "Overview", timeout=STEP, expect=["Metrics vs k"])
        overview_shows(page, cells)
        url = page.url
        assert "ws=my-workspace" in url, url
        stored = W.WorkspaceRoot(home).open("my-workspace")
        assert stored.run_names() == ["run_strong", "run_weak"]

        B.act(page, lambda: page.reload(wait_until="commit"), timeout=STEP, main=["Metrics vs k"],
              sidebar=["qrels.txt", "run: run_strong", "run: run_weak"])
        overview_shows(page, cells)

        stop(srv)
        srv = serve(home, tmp_path / "second", port=srv.port)
        page.goto(url, wait_until="commit")
        B.wait_for(page, sidebar=["qrels.txt", "run: run_strong", "run: run_weak"], timeout=STEP)
        overview_shows(page, cells)
        TB.no_exception(page, "Overview after a restart")
        assert not errors, f"JavaScript errors: {errors}"
    finally:
        stop(srv)
        page.close()


def test_a_deep_link_opens_the_same_drilldown_in_a_new_page(store_server, context, home, tmp_path):
    files = TB.write_inputs(tmp_path)
    _, per_query, _, _ = TB.expected(files)
    python_workspace(home, "deep-link", files).close()
    page = context.new_page()
    page.goto(store_server.url + "/queries?ws=deep-link", wait_until="commit")
    B.wait_for(page, main=["All queries: ndcg@10"], sidebar=["run: run_strong"], timeout=STEP)
    kbox = B.widget(page, "w_queries_sel_k", "stSelectbox", "Cutoff k")
    B.act(page, lambda: B.choose(page, kbox, "20"), timeout=STEP, main=["All queries: ndcg@20"])
    ev = evaluate(read_trec_qrels(files["qrels"]),
                  {n: read_trec_run(files[k], name=n) for k, n in (("strong", "run_strong"), ("weak", "run_weak"))},
                  metrics=["ndcg"], k=[20]).table
    at20 = ev.assign(run=ev["run"].astype(str)).pivot(index="query_id", columns="run", values="value")
    qid = str((per_query["run_strong"] - per_query["run_weak"]).sort_values(kind="mergesort").index[-1])
    TB.search_query(page, "q_search", qid)
    shown = [f"query: {qid}", "A · run_strong", "B · run_weak", "All queries: ndcg@20",
             *(f"ndcg@20: {at20.loc[qid, r]:.4f}" for r in ("run_strong", "run_weak"))]
    B.wait_for(page, main=shown, timeout=STEP)
    link = page.url
    assert "query=" + qid in link and "metric=ndcg%4020" in link and "ws=deep-link" in link, link
    other = context.new_page()  # a new tab: a new session
    try:
        other.goto(link, wait_until="commit")
        B.wait_for(other, main=shown, timeout=STEP)
        assert TB.heading(other) == "Queries"
        TB.no_exception(other, "the deep link")
    finally:
        other.close()
        page.close()


def test_a_run_added_by_another_process_appears_on_the_open_data_page(store_server, context, home, tmp_path):
    files = TB.write_inputs(tmp_path)
    ws = python_workspace(home, "live", files, runs=("strong",))
    page = context.new_page()
    try:
        page.goto(store_server.url + "/data?ws=live", wait_until="commit")
        B.wait_for(page, main=["Loaded runs", "30 queries, 600 ranked items"], sidebar=["run: run_strong"],
                   timeout=STEP)
        code = ("import sys; from evalcore import Workspace; "
                "Workspace.open(sys.argv[1], create=False).add_run('late', sys.argv[2], model='m', step=3)")
        subprocess.run([sys.executable, "-c", code, str(ws.path), str(files["weak"])], check=True, cwd=B.ROOT,
                       timeout=120)
        # no click: the page's check of the change counter (every few seconds) brings it
        B.wait_for(page, sidebar=["run: late [ranked]"], js="""() => document.querySelector(
            '[data-testid="stMain"]').innerText.split('30 queries, 600 ranked items').length === 3""",
                   timeout=STEP)
        TB.no_exception(page, "Data after a run added by another process")
    finally:
        page.close()
        ws.close()

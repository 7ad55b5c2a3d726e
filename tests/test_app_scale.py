"""The dashboard at the scale of a training run (a review on 137 runs — a retriever's 120 checkpoints, other models'
versions, long-named baselines — over 5,000 queries in 40 domains): pages drew every run at once (a legend of 137
entries hiding the Overview's curves, a grouped bar per run and domain, a runs × runs agreement matrix of 18,769
cells computed in 143 s), the Data page drew and read every run (23 s), and the session's memo of 128 entries was
flushed by one entry per run, so a page visited again computed again.

Here the same shapes at a size a test affords: 15 runs (a model of 10 checkpoints, a model of 2 versions, three
runs without a model, one named like Markdown), 14 domains (three of 1-2 queries, one named like Markdown).
"""

from __future__ import annotations

import json
import uuid

import numpy as np
import pytest
from test_app import goto, open_app, unescape

from dashboard import drilldown as D
from dashboard import session
from dashboard import state as S
from evalcore import workspace as W
from evalcore.data import Qrels, Run

MD = "**bold** <b>x</b> [a](b) $x$"
LONG = ["BM25 + RM3 (Anserini, k1=0.9 b=0.4) — tuned on the dev split, ünïcödé ✓ baseline 2024-06",
        "ColBERTv2 late interaction (PLAID index, nbits=2) — zero-shot, 医学 domain adaptation off"]
CHECKPOINTS = [f"enc/step{s:03d}" for s in range(1, 11)]
RUNS = [*CHECKPOINTS, "e5-v1", "e5-v2", *LONG, MD]
#: the runs shown at first: the latest version of each model and every run without one
DEFAULT = ["enc/step010", "e5-v2", *LONG, MD]
DOMAINS = [f"dom-{i:02d}" for i in range(11)] + [MD, "tiny-a", "tiny-b"]
NQ, NJ, NDOC = 48, 4, 400


def build() -> str:
    """A new named workspace of the shapes above; returns its name."""
    rng = np.random.default_rng(7)
    qids = np.array([f"q{i:03d}" for i in range(NQ)], dtype=object)
    docs = np.array([f"d{i:04d}" for i in range(NDOC)], dtype=object)
    sizes = [6, 5, 5, 4, 4, 4, 3, 3, 3, 3, 3, 2, 1, 2]  # the Markdown-named domain and tiny-a/b: too small to test
    domain = dict(zip(qids, np.repeat(DOMAINS, sizes), strict=True))
    judged = np.arange(NQ)[:, None] * NJ + np.arange(NJ)[None, :]
    grades = rng.integers(0, 4, (NQ, NJ))
    grades[:, 0] = np.maximum(grades[:, 0], 1)
    qrels = Qrels.from_records(np.repeat(qids, NJ), docs[judged.ravel()], grades.ravel(), domains=domain)

    def run(quality: float, seed: int) -> Run:
        r = np.random.default_rng(seed)
        other = (judged[:, -1:] + 1 + np.arange(6)[None, :]) % NDOC
        cand = np.concatenate([judged, other], axis=1)
        score = np.concatenate([quality * grades + r.normal(0, 1, grades.shape), r.normal(0, 1, other.shape)], axis=1)
        return Run.from_codes(qids, np.repeat(np.arange(NQ), cand.shape[1]), docs, cand.ravel(), score.ravel())

    name = f"scale-{uuid.uuid4().hex[:8]}"
    with W.WorkspaceRoot().create(name) as ws:
        ws.set_ground_truth(qrels, name="graded.tsv")
        for i, n in enumerate(CHECKPOINTS):
            ws.add_run(n, run(0.2 + 0.15 * i, i), model="enc", version=f"step {i + 1}", step=i + 1)
        for i, n in enumerate(("e5-v1", "e5-v2")):
            ws.add_run(n, run(0.8 + 0.2 * i, 20 + i), model="e5", version=n[3:])
        for i, n in enumerate([*LONG, MD]):
            ws.add_run(n, run(0.6 + 0.3 * i, 30 + i))
    return name


@pytest.fixture(scope="module")
def workspace() -> str:
    """One workspace for the tests that only look (a test that changes a choice builds its own: choices are kept)."""
    return build()


def chart(at, key: str) -> dict:
    return json.loads(next(c for c in at.get("plotly_chart") if c.key == key).proto.spec)


def table(at, *columns: str):
    """The first table holding ``columns``."""
    return next(d.value for d in at.dataframe if set(columns) <= set(getattr(d.value, "columns", [])))


def names(fig: dict) -> list[str]:
    return [t.get("name") for t in fig["data"]]


def test_domains_show_the_chosen_runs_not_all_of_them(workspace):
    at = goto(open_app(workspace), "domains")
    box = at.multiselect(key=f"w_domains_{S.SEL_CMP_RUNS}")
    assert box.value == DEFAULT and box.options == RUNS
    from dashboard.charts import ptext

    bars, heat = chart(at, "dom_bars"), chart(at, "dom_heatmap")
    assert names(bars) == [ptext(r) for r in DEFAULT]  # one trace per shown run (15 before)
    # 14 domains: one row each, named horizontally; the heatmap likewise (its columns are the runs)
    assert bars["data"][0]["orientation"] == "h" and len(bars["layout"]["yaxis"]["categoryarray"]) == len(DOMAINS)
    assert len(heat["data"][0]["y"]) == len(DOMAINS) and len(heat["data"][0]["x"]) == len(DEFAULT)
    tested = table(at, "run", "run − baseline", "domain")
    assert set(tested["run"]) <= set(DEFAULT) and set(tested["run"])
    # the domains too small to test: one message naming them all (one warning each before), Markdown escaped
    small = [w.value for w in at.warning if "too small to test" in w.value]
    assert len(small) == 1 and unescape(small[0]).startswith("11 domains have fewer than 5 queries: ")
    assert "tiny-a (1 query)" in unescape(small[0])
    assert "**bold**" not in small[0] and f"{MD} (2 queries)" in unescape(small[0])


def test_the_runs_chosen_on_one_page_are_those_of_the_others():
    at = goto(open_app(build()), "domains")
    chosen = ["enc/step003", "enc/step007", LONG[0]]
    at.multiselect(key=f"w_domains_{S.SEL_CMP_RUNS}").set_value(chosen).run()
    assert not at.exception
    assert [t["name"] for t in chart(at, "dom_bars")["data"]] == ["enc/step003", "enc/step007", LONG[0]]
    goto(at, "agreement")
    assert at.multiselect(key=f"w_agreement_{S.SEL_CMP_RUNS}").value == chosen
    heat = chart(at, "ag_heatmap")["data"][0]
    assert len(heat["x"]) == len(heat["y"]) == 3  # 15 x 15 before
    goto(at, "compare")
    assert at.multiselect(key="cmp_runs").value == chosen


def test_agreement_compares_the_shown_runs(workspace):
    at = goto(open_app(workspace), "agreement")
    heat = chart(at, "ag_heatmap")["data"][0]
    assert len(heat["x"]) == len(heat["y"]) == len(DEFAULT)
    pairs = table(at, "run_a", "run_b", "n_undefined")
    assert set(pairs["run_a"].astype(str)) | set(pairs["run_b"].astype(str)) == set(DEFAULT)


def test_overview_draws_the_chosen_runs_and_one_download_button(workspace):
    at = goto(open_app(workspace), "overview")
    from dashboard.charts import ptext

    lines = [n for n in names(chart(at, "overview_curves")) if n]
    assert [n.removesuffix(" (low coverage)") for n in lines] == [ptext(r) for r in DEFAULT]
    results = [b for b in at.get("download_button") if b.key.startswith("dl_results")]
    assert len(results) == 1  # the results of the run chosen (15 buttons before)
    assert at.selectbox(key="dl_results_run").options == RUNS
    assert len(next(d.value for d in at.dataframe if d.value.index.name == "run")) == len(RUNS)  # the table: all
    at.toggle(key="ov_pr").set_value(True).run()
    assert [n for n in names(chart(at, "overview_pr")) if n] == [ptext(r) for r in DEFAULT]
    assert any(c.value.startswith("One line per run drawn") for c in at.caption)


def test_the_data_page_edits_the_runs_a_page_at_a_time(workspace):
    at = goto(open_app(workspace), "data")
    editors = lambda: [t.value for t in at.text_input if t.key and t.key.startswith("name_")]  # noqa: E731
    assert editors() == RUNS[:10]  # 15 boxes before
    at.number_input(key="data_runs_page_2").set_value(2).run()
    assert editors() == RUNS[10:]
    at.text_input(key="data_find_run").input("e5").run()
    assert editors() == ["e5-v1", "e5-v2"] and not at.exception


def test_a_page_visited_again_computes_nothing_again(workspace, monkeypatch):
    """The memo keeps a page's work while another page is visited, whatever the number of runs: one entry per
    run (the Overview's check for embeddings, each stored run read, each run's preview on the Data page) pushed
    out everything else beyond MEMO_SIZE runs (128; here the memo is made as small as the runs are few)."""
    monkeypatch.setattr(session, "MEMO_SIZE", len(RUNS) + 15)  # (where memo() reads it)
    calls = []
    real = D.domain_frame
    monkeypatch.setattr(D, "domain_frame", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    at = goto(open_app(workspace), "domains")
    goto(goto(at, "overview"), "data")
    at.number_input(key="data_runs_page_2").set_value(2).run()  # every run's preview seen
    goto(at, "domains")
    assert len(calls) == 1



def test_fusion_starts_from_the_latest_versions_not_the_first_checkpoints(workspace):
    at = goto(open_app(workspace), "fusion")
    assert at.multiselect(key="fu_runs").value == DEFAULT[:3]  # enc/step001..003 before


def pinned(at, *columns: str) -> set[str]:
    """The pinned columns of the first table holding ``columns``."""
    cfg = next(json.loads(d.proto.columns) for d in at.dataframe
               if set(columns) <= set(getattr(d.value, "columns", [])) | {d.value.index.name})
    return {c for c, v in cfg.items() if v.get("pinned")}


def test_the_key_columns_stay_in_view_beside_long_run_names(workspace):
    """Runs named in 90 characters push a table's other columns sideways: its key columns are pinned."""
    at = goto(open_app(workspace), "domains")
    assert {"domain", "run"} <= pinned(at, "domain", "run", "run − baseline")
    assert "_index" in pinned(at, "n_queries", *DEFAULT)  # the per-domain means: the domain is the index
    goto(at, "agreement")
    assert {"run_a", "run_b"} <= pinned(at, "run_a", "run_b", "n_undefined")
    goto(at, "overview")
    assert "run" in pinned(at, "run", "metric", "k", "sem")
    goto(at, "fusion")
    assert "run" in pinned(at, "run", "n", "mean", "ci_low")


def test_the_sidebar_counts_many_runs_and_keeps_the_settings_in_view(workspace):
    """137 runs were 274 lines of the sidebar above the queries evaluated and the settings."""
    at = open_app(workspace)
    side = "\n".join(t.value for t in at.sidebar.text)
    assert "runs: 15 (15 ranked)" in side and "run: " not in side
    assert f"queries evaluated: {NQ} of {NQ}" in side


def test_choosing_run_b_does_not_pivot_every_run_again(workspace, monkeypatch):
    """The Queries page pivoted the per-query table of every run again at each choice of run A or B (1.5-2.3 s
    at 137 runs x 5,000 queries); it keeps the pivot and adds the pair's difference."""
    calls = []
    real = D.query_table
    monkeypatch.setattr(D, "query_table", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    at = goto(open_app(workspace), "queries")
    for run_b in ("e5-v1", LONG[1]):
        at.selectbox(key=f"w_queries_{S.SEL_RUN_B}").set_value(run_b).run()
        assert not at.exception
        shown = table(at, "query_id", "difference B − A")
        run_a = at.selectbox(key=f"w_queries_{S.SEL_RUN_A}").value
        assert list(shown.columns[2:5]) == ["difference B − A", run_a, run_b]
        assert np.allclose(shown["difference B − A"], shown[run_b] - shown[run_a], equal_nan=True)
    assert len(calls) <= 1  # (none when an earlier test of this process pivoted this evaluation already)

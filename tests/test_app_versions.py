"""The Versions page under AppTest on a 10-version fixture (issue 9, "Must show"): the curve, the tests against
the previous version, the "what changed" lists and the drill-down they open, each checked against evalcore
called directly or against an independent computation; the empty state and the demo's checkpoints."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from test_app import _strings, errors, goto, shown, start, unescape
from test_app_measures import array

from dashboard import persist as P
from dashboard import state as S
from dashboard.drilldown import format_p_value
from evalcore import workspace as W
from evalcore.evaluate import evaluate
from evalcore.intervals import summarize_with_intervals
from evalcore.io import load_qrels, load_run
from evalcore.stats import adjust_pvalues, compare

QUERIES = [f"q{i:02d}" for i in range(40)]
DOCS = [f"d{j:02d}" for j in range(60)]
STEPS = [100 * (i + 1) for i in range(10)]
NAMES = [f"encoder-{c}" for c in "kqzbmxrtpa"]  # name order is not version order
LOAD_ORDER = [3, 0, 7, 1, 9, 4, 2, 8, 6, 5]  # nor is the order they are loaded in
MARKER = "lab_*x*<b>y</b>[l](javascript:1)"  # a model name full of Markdown and HTML
LABELS = ["v10", "v2", "v1"]


def qrels_bytes() -> bytes:
    rng = np.random.default_rng(0)
    lines = [f"{q} 0 {d} {g}" for q in QUERIES for d, g in zip(rng.choice(DOCS, 5, replace=False), (3, 2, 2, 1, 1),
                                                                strict=True)]
    return ("\n".join(lines) + "\n").encode()


def run_bytes(quality: float, seed: int) -> bytes:
    """A TREC run: relevant documents pushed up by ``quality``, plus this version's own noise."""
    truth = {(q, d): int(g) for q, _, d, g in (x.split() for x in qrels_bytes().decode().splitlines())}
    rng = np.random.default_rng(seed)
    lines = []
    for q in QUERIES:
        scores = {d: truth.get((q, d), 0) * quality + rng.normal() for d in DOCS}
        top = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:30]
        lines += [f"{q} Q0 {d} {r + 1} {s:.6f} t" for r, (d, s) in enumerate(top)]
    return ("\n".join(lines) + "\n").encode()


def fixture() -> tuple[W.Snapshot, dict[str, bytes]]:
    """Ten versions of "encoder" (steps 100..1000), three of a labelled model (no steps), one version of
    "solo", one run without a model."""
    files: dict[str, bytes] = {}
    ws = W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", qrels_bytes()))
    places: dict[str, tuple[str, str | None, float | None]] = {}
    for i in LOAD_ORDER:
        files[NAMES[i]] = run_bytes(0.25 + 0.12 * i, 100 + i)
        places[NAMES[i]] = ("encoder", None, float(STEPS[i]))
    for j, label in enumerate(LABELS):
        files[f"lab {label}"] = run_bytes(0.5 + 0.2 * j, 200 + j)
        places[f"lab {label}"] = (MARKER, label, None)
    files["solo"], places["solo"] = run_bytes(1.0, 300), ("solo", None, 1.0)
    files["bm25"] = run_bytes(0.8, 301)
    for name, data in files.items():
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", data), name=name)
    runs = tuple(replace(r, model=places[r.name][0], version=places[r.name][1], step=places[r.name][2])
                 if r.name in places else r for r in ws.runs)
    return replace(ws, runs=runs), files


@pytest.fixture(scope="module")
def built():
    ws, files = fixture()
    s = ws.settings.validated()
    ev = evaluate(load_qrels(qrels_bytes(), format="trec"),
                  {n: load_run(b, format="trec", name=n) for n, b in files.items()},
                  metrics=list(s.metrics), k=list(s.k), ties=s.ties)
    return ws, ev.table


@pytest.fixture(scope="module")
def app(built):
    return goto(start(built[0]), "versions")


def tables(at) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame)]


def family_table(at, against: str) -> pd.DataFrame:
    """A table of tests as shown (its p-values numbers that read as text: their text)."""
    found = [shown(d) for d in at.dataframe if isinstance(d.value, pd.DataFrame)
             and {"version", "against", "difference", "p adjusted"} <= set(d.value.columns)]
    assert len(found) == 2, [list(t.columns) for t in tables(at)]
    return found[0] if against == "previous" else found[1]


def curve_trace(at) -> dict:
    (chart,) = at.get("plotly_chart")
    spec = json.loads(chart.proto.spec)
    return spec, next(t for t in spec["data"] if t.get("mode") == "lines+markers")


def ordered(indices=range(10)) -> list[str]:
    return [NAMES[i] for i in indices]


def test_the_curve_is_evalcore_s_means_in_step_order(app, built):
    at = app
    assert not at.exception and not errors(at)
    assert at.selectbox(key="w_versions_sel_version_model").options == ["encoder", MARKER]  # solo: 1 version
    at.selectbox(key="w_versions_sel_version_model").select("encoder").run()
    assert at.selectbox(key="w_versions_sel_metric").value == "ndcg" and at.selectbox(key="w_versions_sel_k").value == 10
    spec, trace = curve_trace(at)
    assert array(trace["x"]) == [float(s) for s in STEPS]  # by step, whatever the names and the loading order
    table = built[1]
    nd = table[(table["metric"] == "ndcg") & (table["k"] == 10)]
    want = [nd.loc[nd["run"] == r, "value"].mean() for r in ordered()]
    np.testing.assert_allclose(array(trace["y"]), want, rtol=0, atol=1e-12)
    assert want[-1] > want[0]  # the fixture is a model that learns
    # the band is the 95% CI of the Overview (the same shared resamples)
    summ = summarize_with_intervals(table)  # the API's defaults, as the pages
    summ = summ[(summ["metric"] == "ndcg") & (summ["k"] == 10)].set_index("run").loc[ordered()]
    band = next(t for t in spec["data"] if t.get("fill") == "toself")
    np.testing.assert_allclose(array(band["y"]), [*summ["ci_high"], *summ["ci_low"][::-1]], atol=1e-12)
    assert [c[1] for c in trace["customdata"]] == ordered()  # each point names its run


def test_tests_against_the_previous_and_a_reference_version(app, built):
    at = app
    at.selectbox(key="w_versions_sel_version_model").select("encoder").run()
    at.selectbox(key="w_versions_sel_metric").select("map").run()
    at.selectbox(key="w_versions_sel_k").select(20).run()
    table = built[1]
    names = [f"step {s:,}" for s in STEPS]
    prev = family_table(at, "previous")
    assert prev["version"].tolist() == names[1:] and prev["against"].tolist() == names[:-1]
    expected = [compare(table, metric="map", k=20, runs=[a, b], correction="none", n_resamples=1000).iloc[0]
                for a, b in zip(ordered()[:-1], ordered()[1:], strict=True)]
    np.testing.assert_allclose(prev["difference"].astype(float), [e["diff"] for e in expected], atol=1e-12)
    assert prev["p-value"].tolist() == [format_p_value(e["p_value"]) for e in expected]
    holm = adjust_pvalues([e["p_value"] for e in expected], method="holm")  # one family: the 9 consecutive pairs
    assert prev["p adjusted"].tolist() == [format_p_value(p) for p in holm]
    assert prev["significant"].tolist() == [bool(p < 0.05) for p in holm]
    assert prev["wins / ties / losses"].tolist() == [f"{e['wins']} / {e['ties']} / {e['losses']}" for e in expected]
    # against a chosen reference: evalcore.stats.compare with that baseline over the model's versions
    at.selectbox(key="w_versions_sel_version_reference").select(NAMES[4]).run()
    ref = family_table(at, "reference")
    assert set(ref["against"]) == {"step 500"} and ref["version"].tolist() == [n for n in names if n != "step 500"]
    want = compare(table, metric="map", k=20, runs=ordered(), baseline=NAMES[4], n_resamples=1000)
    want = want.set_index("run_b").loc[[r for r in ordered() if r != NAMES[4]]]
    assert ref["p adjusted"].tolist() == [format_p_value(p) for p in want["p_adjusted"]]
    np.testing.assert_allclose(ref["difference"].astype(float), want["diff"], atol=1e-12)
    for t in (prev, ref):  # readable: no empty cell, p-values as text
        assert not t.isna().any().any()


def test_a_new_reference_recomputes_the_tests_against_the_reference_only(built, monkeypatch):
    """The tests against the previous version do not depend on the reference: choosing another reference runs
    the paired tests of that family only (the two tables: 2 x (m - 1) pairs before), and the tables shown are
    still the engine's version_tests of both families."""
    from evalcore.workspace import versions as engine

    at = goto(start(built[0]), "versions")
    at.selectbox(key="w_versions_sel_version_model").select("encoder").run()
    at.selectbox(key="w_versions_sel_metric").select("recall").run()
    at.selectbox(key="w_versions_sel_k").select(5).run()
    assert not at.exception
    families: list[str] = []
    real = engine.compare

    def counted(*args, **kw):
        families.append("previous" if kw.get("pairs") is not None else "reference")
        return real(*args, **kw)

    monkeypatch.setattr(engine, "compare", counted)
    at.selectbox(key="w_versions_sel_version_reference").select(NAMES[7]).run()
    assert not at.exception and families == ["reference"]
    names = dict(zip(ordered(), [f"step {s:,}" for s in STEPS], strict=True))
    want = W.version_tests(built[1], W.version_series(pd.DataFrame(
        {"name": ordered(), "model": "encoder", "version": None, "step": [float(s) for s in STEPS]})),
        model="encoder", metric="recall", k=5, reference=NAMES[7], n_resamples=S.N_RESAMPLES, seed=S.CI_SEED,
        ci_method=S.CI_METHOD, resampling="shared")
    for against in ("previous", "reference"):
        shown_table, rows = family_table(at, against), want[want["against"] == against]
        assert shown_table["version"].tolist() == [names[r] for r in rows["run_b"]]
        assert shown_table["against"].tolist() == [names[r] for r in rows["run_a"]]
        assert shown_table["p adjusted"].tolist() == [format_p_value(p) for p in rows["p_adjusted"]]
        np.testing.assert_allclose(shown_table["difference"].astype(float), rows["diff"], rtol=0, atol=1e-12)


def test_what_changed_lists_and_the_drilldown(app, built):
    at = app
    at.selectbox(key="w_versions_sel_version_model").select("encoder").run()
    at.selectbox(key="w_versions_sel_metric").select("ndcg").run()
    at.selectbox(key="w_versions_sel_k").select(10).run()
    a, b = at.selectbox(key="w_versions_sel_version_a"), at.selectbox(key="w_versions_sel_version_b")
    assert (a.value, b.value) == (NAMES[8], NAMES[9])  # the last two versions by default
    a.select(NAMES[2]).run()
    at.selectbox(key="w_versions_sel_version_b").select(NAMES[6]).run()
    at.number_input(key="ver_top").set_value(6).run()
    table = built[1]
    nd = table[(table["metric"] == "ndcg") & (table["k"] == 10)]
    va = nd[nd["run"] == NAMES[2]].set_index("query_id")["value"]
    vb = nd[nd["run"] == NAMES[6]].set_index("query_id")["value"]
    gain = {q: vb[q] - va[q] for q in va.index}
    up = sorted((q for q in gain if gain[q] > 0), key=lambda q: (-gain[q], q))[:6]
    down = sorted((q for q in gain if gain[q] < 0), key=lambda q: (gain[q], q))[:6]
    # (the fixture's queries have no domain: no empty domain column, as on the Queries page)
    assert not [t for t in tables(at) if list(t.columns) == ["query_id", "B − A", "A", "B", "domain"]]
    lists = [t for t in tables(at) if list(t.columns) == ["query_id", "B − A", "A", "B"]]
    assert [t["query_id"].tolist() for t in lists] == [up, down] and up and down
    np.testing.assert_allclose(lists[0]["B − A"], [gain[q] for q in up])
    counts = [int(m.value) for m in at.metric]
    assert counts == [sum(g > 0 for g in gain.values()), sum(g == 0 for g in gain.values()),
                      sum(g < 0 for g in gain.values())]
    # a query of the lists opens its drill-down on the Queries page, with versions A and B as runs A and B
    box = at.selectbox(key="ver_query")
    assert box.options == list(dict.fromkeys(up + down))
    box.select(down[0]).run()
    at.button(key="ver_open").click().run()
    assert not at.exception
    assert at.title[0].value == "Queries"
    assert at.selectbox(key="w_queries_sel_run_a").value == NAMES[2]
    assert at.selectbox(key="w_queries_sel_run_b").value == NAMES[6]
    assert at.selectbox(key="w_queries_sel_query").value == down[0]
    assert any(t.value.startswith(f"query: {down[0]}") for t in at.text)
    goto(at, "versions")


def test_labels_without_steps_and_user_text_never_markdown(app):
    at = app
    at.selectbox(key="w_versions_sel_version_model").select(MARKER).run()
    assert not at.exception
    spec, trace = curve_trace(at)
    assert trace["x"] == ["v1", "v2", "v10"]  # no steps: the labels, in natural order, on a category axis
    assert spec["layout"]["xaxis"]["type"] == "category"
    texts = list(_strings(spec))
    assert not any("<b>y</b>" in t for t in texts) and any("&lt;b&gt;y&lt;/b&gt;" in t for t in texts)
    md = [*at.markdown, *at.caption, *at.error, *at.warning, *at.info, *at.title, *at.subheader]
    assert not any(MARKER in el.value for el in md)
    assert not any(MARKER in str(w.label) for w in [*at.selectbox, *at.button, *at.number_input])
    assert at.selectbox(key="w_versions_sel_version_a").value == "lab v2"


def test_empty_state_explains_and_the_demo_offers_its_checkpoints():
    ws, _ = fixture()
    plain = replace(ws, runs=tuple(replace(r, model=None, version=None, step=None) for r in ws.runs))
    at = goto(start(plain), "versions")
    assert not at.exception
    assert any("No model has two or more versions" in i.value for i in at.info)
    assert any("add_embedding_run" in c.value and "model=" in c.value and "step=" in c.value for c in at.code)
    assert not at.get("plotly_chart") and not [b for b in at.button if b.key == "ver_demo_series"]
    at = goto(start(), "versions")  # the demo: three models of one version each
    assert any("No model has two or more versions" in i.value for i in at.info)
    at.button(key="ver_demo_series").click().run()
    assert not at.exception and not errors(at)
    ws = at.session_state["ws"]
    # issue 9: the demo is read-only: the checkpoints are saved in a copy of it, which the session shows
    assert not ws.is_demo and at.session_state[P.ACTIVE].startswith("demo-copy") and len(ws.runs) == 9
    assert at.selectbox(key="w_versions_sel_version_model").options == ["strong-128d"]
    _, trace = curve_trace(at)
    assert array(trace["x"]) == [1.0, 3.0, 6.0, 10.0, 15.0, 20.0, 25.0]
    prev = family_table(at, "previous")
    assert prev["version"].tolist() == [f"epoch {e}" for e in (3, 6, 10, 15, 20, 25)]
    assert [unescape(c.value) for c in at.caption if "Holm" in c.value]  # says which correction, and where


def _warnings(at) -> list[str]:
    return [unescape(w.value) for w in at.warning]


def test_a_version_without_a_step_is_flagged_as_placed_last(built):
    ws = built[0]
    assert not any("Order not certain" in w for w in _warnings(goto(start(ws), "versions")))  # every step given
    first = NAMES[LOAD_ORDER[0]]  # loaded first, step 400: placed last once its step is gone
    runs = tuple(replace(r, step=None) if r.name == first else r for r in ws.runs)
    at = goto(start(replace(ws, runs=runs)), "versions")
    at.selectbox(key="w_versions_sel_version_model").select("encoder").run()
    assert not at.exception
    (warning,) = [w for w in _warnings(at) if "Order not certain" in w]
    assert f"{first} has no step" in warning and "placed after the versions with one" in warning
    assert list(at.selectbox(key="w_versions_sel_version_model").options) == ["encoder", MARKER]
    assert at.selectbox(key="w_versions_sel_version_reference").options[-1] == first  # what the warning says
    # the labelled model (no steps): one version without a label is flagged the same way
    runs = tuple(replace(r, version=None) if r.name == f"lab {LABELS[1]}" else r for r in ws.runs)
    at = goto(start(replace(ws, runs=runs)), "versions")
    at.selectbox(key="w_versions_sel_version_model").select(MARKER).run()
    (warning,) = [w for w in _warnings(at) if "Order not certain" in w]
    assert f"lab {LABELS[1]} has no version label" in warning and MARKER in warning


def test_versions_sharing_a_step_are_flagged_and_drawn_one_per_x(built):
    """Every version has a step but some share one (a script that did not update its global step): the
    page says their order follows the labels, and the curve has one x per version (a categorical axis
    in version order) instead of a vertical segment at the shared step."""
    ws = built[0]
    runs = tuple(replace(r, step=0.0) if r.model == "encoder" else r for r in ws.runs)
    at = goto(start(replace(ws, runs=runs)), "versions")
    at.selectbox(key="w_versions_sel_version_model").select("encoder").run()
    assert not at.exception
    (warning,) = [w for w in _warnings(at) if "Order not certain" in w]
    assert "share a step" in warning and "follows the version label" in warning and "its own step" in warning
    spec, trace = curve_trace(at)
    xs = trace["x"] if isinstance(trace["x"], list) else array(trace["x"])
    assert len(set(map(str, xs))) == len(xs) == 10  # one distinct x per version, in version order
    assert all(isinstance(x, str) for x in xs)  # the versions' names, not the shared step
    assert any("some versions share a step" in c.value for c in at.caption)
    assert spec["layout"]["xaxis"].get("title", {}).get("text") != "step"


def test_a_version_that_finds_no_relevant_document_is_a_gap_in_the_curve():
    """first_rel_rank of an untrained first checkpoint is NaN on every query: the Versions page draws the
    curve without that point (it used to fail: the interval table had no row for it), the others as evalcore."""
    qrels = b"q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\nq3 0 d4 1\n"
    files = {"e1": b"q1 Q0 x 1 1 e\nq2 Q0 y 1 1 e\nq3 Q0 z 1 1 e\n",
             "e2": b"q1 Q0 x 1 3 e\nq1 Q0 d2 2 2 e\nq2 Q0 d3 1 1 e\nq3 Q0 y 1 2 e\nq3 Q0 d4 2 1 e\n",
             "e3": b"q1 Q0 d1 1 1 e\nq2 Q0 d3 1 1 e\nq3 Q0 d4 1 1 e\n"}
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(10,), metrics=("first_rel_rank", "ndcg"))),
                            W.Blob.of("q.txt", qrels))
    for name, data in files.items():
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", data), name=name)
    ws = replace(ws, runs=tuple(replace(r, model="enc", step=float(i + 1)) for i, r in enumerate(ws.runs)))
    at = goto(start(ws), "versions")
    at.selectbox(key="w_versions_sel_metric").select("first_rel_rank").run()
    assert not at.exception and not errors(at), [e.value for e in at.exception] + errors(at)
    _, trace = curve_trace(at)
    assert array(trace["x"]) == [1.0, 2.0, 3.0]
    y = array(trace["y"])
    assert np.isnan(y[0]) and y[1:] == [pytest.approx(5 / 3), 1.0]


def test_versions_all_left_out_for_low_coverage_are_named_not_a_keyerror():
    """Both versions answer 1 of 3 queries (below the 90% coverage): the run-info frame of the series was
    empty and version_series failed (KeyError: 'model'); the page now says which versions were left out."""
    qrels = b"q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n"
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(10,), metrics=("ndcg",))), W.Blob.of("q.txt", qrels))
    for name, data in {"a": b"q1 Q0 d1 1 2 a\n", "b": b"q1 Q0 x 1 2 b\n"}.items():
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", data), name=name)
    ws = replace(ws, runs=tuple(replace(r, model="m", step=float(i)) for i, r in enumerate(ws.runs)))
    at = goto(start(ws), "versions")
    assert not at.exception and not errors(at)
    shown = " ".join(unescape(w.value) for w in [*at.warning, *at.info])
    assert "'a'" in shown and "'b'" in shown and "coverage" in shown, shown
    at.multiselect(key=f"w_coverage_{S.SEL_INCLUDE_LOW}").set_value(["a", "b"]).run()  # included: the series
    assert not at.exception and not errors(at)
    _, trace = curve_trace(at)
    assert [c[1] for c in trace["customdata"]] == ["a", "b"]
    empty = W.version_series(pd.DataFrame(columns=["name", "model", "version", "step"]))
    assert list(empty.columns) == ["model", "position", "run", "version", "step"] and empty.empty

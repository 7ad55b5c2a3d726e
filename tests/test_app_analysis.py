"""Dashboard views of issue 11 items 8-10 under ``AppTest``: every number shown equals the engine's.

* Agreement page: the runs × runs matrix (heatmap values and table) of overlap@k, RBO and
  Kendall's τ; seed 000's Spearman / MAE of pair similarities with a reference model
  (the demo's, and an uploaded reference model's embeddings), absent for judgment files;
* Compare page: Tukey's HSD beside the paired tests, both designs;
* Fusion page: the fusion methods and normalisations, the weight search with its split and
  its overfitting warning, and "Use these weights".
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np
import pandas as pd
import pytest
from demo_oracle import oracle_demo
from test_app import (
    QUERIES,
    errors,
    goto,
    npz,
    overview_text,
    shown,
    start,
    trec_qrels,
    trec_run,
    unescape,
)

from dashboard import charts
from evalcore import evaluate
from evalcore import workspace as W
from evalcore.aggregate import summarize
from evalcore.agreement import agreement, agreement_matrix, summarize_agreement
from evalcore.embedding_runs import reference_agreement
from evalcore.fusion import fuse
from evalcore.fusion_search import search_weights
from evalcore.io import Embeddings, load_embeddings
from evalcore.stats import tukey_hsd
from evalcore.workspace.demo import DEMO_RUN_NAMES

SETTINGS = W.Settings().validated()


def frame(at, *columns: str) -> pd.DataFrame:
    """The first table showing all these columns (AppTest does not expose a dataframe's key)."""
    return next(d.value for d in at.dataframe if set(columns) <= set(getattr(d.value, "columns", [])))


def has_frame(at, *columns: str) -> bool:
    return any(set(columns) <= set(getattr(d.value, "columns", [])) for d in at.dataframe)


def chart(at, key: str) -> dict:
    return json.loads(next(c for c in at.get("plotly_chart") if c.key == key).proto.spec)


def heatmap_values(at, key: str) -> np.ndarray:
    """The ``z`` matrix of a heatmap (Plotly stores typed arrays as base64 ``bdata``)."""
    z = chart(at, key)["data"][0]["z"]
    if isinstance(z, dict):
        shape = tuple(int(x) for x in z["shape"].split(","))
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)
    return np.asarray(z, dtype=float)


def demo_runs() -> dict:
    demo = oracle_demo(0)
    return {n: demo.runs[n] for n in DEMO_RUN_NAMES}


# ------------------------------------------------------------------------------------------ agreement


def test_agreement_matrix_equals_the_engine():
    at = goto(start(), "agreement")
    assert not errors(at)
    demo = oracle_demo(0)
    runs = demo_runs()
    for measure, name in (("overlap", "overlap"), ("rbo", "rbo(p=0.9)"), ("kendall_tau", "kendall_tau")):
        at.selectbox(key="ag_measure").set_value(measure).run()
        for k in (SETTINGS.k[0], SETTINGS.k[-1]):
            at.selectbox(key="w_agreement_sel_k").set_value(k).run()
            assert not at.exception and not errors(at)
            summ = summarize_agreement(agreement(runs, k=[k], p=0.9, ties=SETTINGS.ties,
                                                 query_ids=demo.qrels.query_ids))  # fmt: skip
            mat = agreement_matrix(summ, measure=name, k=k, runs=list(runs))
            z = heatmap_values(at, "ag_heatmap")
            off = ~np.eye(len(runs), dtype=bool)
            assert np.allclose(z[off], mat.to_numpy()[off], rtol=0, atol=1e-12, equal_nan=True), (measure, k)
            diag = np.diag(z)
            assert np.allclose(diag[~np.isnan(diag)], 1.0)  # each run against itself, where defined
            shown = frame(at, "n_undefined")
            assert len(shown) == 3
            for row in shown.itertuples(index=False):
                exp = summ[(summ["run_a"] == row.run_a) & (summ["run_b"] == row.run_b)
                           & (summ["measure"] == name)].iloc[0]  # fmt: skip
                assert (row.n, row.n_undefined) == (exp["n"], exp["n_undefined"])
                assert row.n + row.n_undefined == demo.qrels.n_queries
                if exp["n"]:
                    assert abs(float(row.mean) - mat.loc[row.run_a, row.run_b]) < 1e-12
                else:  # tau@1: one item per list, never two shared: undefined everywhere, shown blank (placeholder)
                    assert measure == "kendall_tau" and k == 1 and math.isnan(row.mean)


def test_agreement_cutoff_is_the_k_shared_with_the_other_pages():
    """Agreement opens at the k the other pages show (10 at first, not the largest), and a k chosen
    there carries to the Compare page and back."""
    assert 10 in SETTINGS.k and SETTINGS.k[-1] != 10
    at = goto(start(), "agreement")
    assert at.selectbox(key="w_agreement_sel_k").value == 10
    other = SETTINGS.k[-1]
    at = goto(at, "compare")
    at.selectbox(key="w_compare_sel_k").set_value(other).run()
    at = goto(at, "agreement")
    assert not at.exception and not errors(at)
    assert at.selectbox(key="w_agreement_sel_k").value == other
    at.selectbox(key="w_agreement_sel_k").set_value(SETTINGS.k[0]).run()
    at = goto(at, "compare")
    assert at.selectbox(key="w_compare_sel_k").value == SETTINGS.k[0]


@pytest.mark.parametrize("labels", [list(DEMO_RUN_NAMES), ["a-very-long-run-name-number-one-bm25", "e5", "third"],
                                    [f"model-{i}-dense" for i in range(9)]])
def test_agreement_heatmap_title_never_covers_the_top_labels(labels):
    m = pd.DataFrame(np.full((len(labels), len(labels)), 0.5), index=labels, columns=labels)
    lay = charts.agreement_heatmap(m, measure_label="overlap@100").layout
    assert lay.xaxis.side == "top"
    # the title hangs from the figure's top edge: its line (and its padding) is all it takes of the margin
    assert (lay.title.yref, lay.title.y, lay.title.yanchor) == ("container", 1, "top")
    title_px = lay.title.pad.t + 1.2 * lay.title.font.size
    # the labels' angle is fixed (Plotly's "auto" could turn them upright, taller than any margin set here)
    assert isinstance(lay.xaxis.tickangle, (int, float))
    a, size = math.radians(lay.xaxis.tickangle), lay.xaxis.tickfont.size
    drawn = lay.xaxis.ticktext or labels  # long names are drawn shortened (charts.short_labels)
    label_px = 0.6 * size * max(map(len, drawn)) * abs(math.sin(a)) + 1.2 * size * abs(math.cos(a))
    assert lay.margin.t >= title_px + label_px


def test_rbo_persistence_is_enabled_for_rbo_only():
    at = goto(start(), "agreement")
    for measure in ("overlap", "rbo", "kendall_tau", "rbo"):
        at.selectbox(key="ag_measure").set_value(measure).run()
        assert not at.exception and not errors(at)
        assert at.number_input(key="ag_p").disabled is (measure != "rbo"), measure


def test_similarity_agreement_with_the_demo_reference():
    at = goto(start(), "agreement")
    demo = oracle_demo(0)
    ref = Embeddings.from_arrays(demo.item_ids, demo.embeddings["reference"])
    models = {n: Embeddings.from_arrays(demo.item_ids, demo.embeddings[n]) for n in ("strong-128d", "weak-64d")}
    expected = reference_agreement(ref, models, n_pairs=10_000, seed=42)
    shown = frame(at, "spearman")
    assert list(shown["model"]) == list(expected["model"])
    assert np.allclose(shown["spearman"], expected["spearman"], rtol=0, atol=1e-15)
    assert np.allclose(shown["mae"], expected["mae"], rtol=0, atol=1e-15)


def test_similarity_agreement_with_an_uploaded_reference_and_none_with_judgments():
    items = [f"i{j}" for j in range(60)]
    ref_bytes, a_bytes, b_bytes = npz(items, 12, 1), npz(items, 6, 2), npz(items, 8, 3)
    ws = W.set_ground_truth(W.Snapshot(), W.Blob.of("ref.npz", ref_bytes), kind="reference")
    ws, _ = W.add_embedding_run(ws, W.Blob.of("a.npz", a_bytes), name="a")
    ws, _ = W.add_embedding_run(ws, W.Blob.of("b.npz", b_bytes), name="b")
    at = goto(start(ws), "agreement")
    assert not errors(at)
    expected = reference_agreement(load_embeddings(ref_bytes, label="ref.npz"),
                                   {"a": load_embeddings(a_bytes), "b": load_embeddings(b_bytes)},
                                   n_pairs=10_000, seed=42)  # fmt: skip
    shown = frame(at, "spearman")
    assert np.allclose(shown[["spearman", "mae"]].to_numpy(float), expected[["spearman", "mae"]].to_numpy(float),
                       rtol=0, atol=1e-15)  # fmt: skip
    # a judgment file as ground truth: the matrix, but no similarity table
    ws = W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("one.trec", trec_run(1)), name="one")
    ws, _ = W.add_ranked_run(ws, W.Blob.of("two.trec", trec_run(2)), name="two")
    at = goto(start(ws), "agreement")
    assert not errors(at) and frame(at, "n_undefined")["n"].iloc[0] == len(QUERIES)
    assert not has_frame(at, "spearman")
    assert any("reference model's embeddings" in c.value for c in at.caption)


# ------------------------------------------------------------------------------------------ Tukey's HSD


def test_compare_page_shows_tukey_hsd_equal_to_the_engine():
    at = goto(start(), "compare")
    metric, k = at.session_state["sel_metric"], at.session_state["sel_k"]
    ev = evaluate(oracle_demo(0).qrels, demo_runs(), metrics=list(SETTINGS.metrics), k=list(SETTINGS.k),
                  ties=SETTINGS.ties)  # fmt: skip
    for design in ("paired", "independent"):
        at.selectbox(key="w_compare_sel_hsd_design").set_value(design).run()
        shown = frame(at, "q", "p-value")
        lib = tukey_hsd(ev.table, metric=metric, k=k, runs=sorted(DEMO_RUN_NAMES), design=design)
        assert list(zip(shown["run_a"], shown["run_b"], strict=True)) == list(zip(lib["run_a"], lib["run_b"],
                                                                                   strict=True))  # fmt: skip
        assert np.allclose(shown["q"], lib["statistic"], rtol=1e-12)
        assert np.allclose(shown["difference (B − A)"], lib["diff"], rtol=0, atol=1e-15)


def test_compare_page_tukey_hsd_turns_no_row_into_a_string(monkeypatch):
    """The HSD of the runs compared filters and pivots the metric@k slice on its categories' integer codes: no
    ``astype(str)`` of a slice column (a Python string per row) from the dashboard's HSD step or the engine's."""
    import sys
    from pathlib import Path

    at = goto(start(), "compare")
    watched = {str(Path("dashboard", "analysis.py")), str(Path("evalcore", "stats", "hsd.py"))}
    real = pd.Series.astype
    converted: list[tuple[str, int]] = []

    def spy(self, dtype, *args, **kwargs):
        if dtype is str:
            frame = sys._getframe(1)
            while frame is not None and "pandas" in frame.f_code.co_filename:
                frame = frame.f_back
            where = "" if frame is None else frame.f_code.co_filename
            if any(where.endswith(w) for w in watched):
                converted.append((where, len(self)))
        return real(self, dtype, *args, **kwargs)

    from dashboard import analysis
    from evalcore import stats

    computed: list[str] = []
    engine = stats.tukey_hsd
    monkeypatch.setattr(stats, "tukey_hsd", lambda *a, **kw: computed.append(kw["design"]) or engine(*a, **kw))
    analysis._c_hsd.clear()  # (another test may have computed this HSD in this process: compute it here)
    monkeypatch.setattr(pd.Series, "astype", spy)
    at.selectbox(key="w_compare_sel_hsd_design").set_value("independent").run()
    assert not at.exception and has_frame(at, "q", "p-value") and computed == ["independent"]
    assert converted == []


# ------------------------------------------------------------------------------------------ fusion


def test_fusion_methods_and_normalisations_equal_the_engine():
    at = goto(start(), "fusion")
    demo = oracle_demo(0)
    runs = demo_runs()
    for method, norm in (("combmnz", "min-max"), ("bordafuse", "none"), ("wsum", "z-score")):
        at.selectbox(key="fu_method").set_value(method).run()
        if norm != "none":
            at.selectbox(key="fu_norm").set_value(norm).run()
        assert not at.exception and not errors(at)
        fused = fuse(runs, method=method, norm=norm, ties=SETTINGS.ties, name=method)
        ev = evaluate(demo.qrels, {method: fused}, metrics=list(SETTINGS.metrics), k=list(SETTINGS.k),
                      ties=SETTINGS.ties)  # fmt: skip
        expected = summarize(ev.table)
        shown = frame(at, "run", "n", "mean", "ci_low").set_index("run")
        metric, k = at.session_state["sel_metric"], at.session_state["sel_k"]
        row = expected[(expected["metric"] == metric) & (expected["k"] == k)].iloc[0]
        assert abs(shown.loc[method, "mean"] - row["mean"]) < 1e-15, method


def test_weight_search_split_warning_and_use():
    at = goto(start(), "fusion")
    at.toggle(key="fu_search").set_value(True).run()
    assert not at.exception and not errors(at)
    metric, k = at.session_state["sel_metric"], at.session_state["sel_k"]
    demo = oracle_demo(0)
    # the page's defaults are the command line's: `evalcore fuse --search grid --tune-fraction 0.5` repeats it
    from evalcore.cli.main import build_parser

    cli = build_parser().parse_args(["fuse", "--search", "grid", "--run", "x", "--out", "y"])
    assert at.session_state["fu_seed"] == cli.seed and at.session_state["fu_step"] == cli.step
    res = search_weights(demo.qrels, demo_runs(), metric=f"{metric}@{k}", method="rrf", strategy="grid",
                         step=cli.step, seed=cli.seed, tune_fraction=0.5, ties=SETTINGS.ties)  # fmt: skip
    best = frame(at, "trial", "value")
    assert len(best) == 1 and abs(best["value"].iloc[0] - res.value_tune) < 1e-15
    assert [m.value for m in at.metric][:2] == [f"{res.value_tune:.4f}", f"{res.value_test:.4f}"]
    assert not any("overfit" in w.value for w in at.warning)
    at.button(key="fu_use").click().run()
    uids = {r.name: r.uid for r in at.session_state["ws"].runs}
    assert {n: at.session_state[f"fu_w_{uids[n]}"] for n in res.weights} == res.weights
    at.toggle(key="fu_split").set_value(False).run()
    assert any("overfit" in unescape(w.value) for w in at.warning)


def test_weight_search_shows_its_trials_can_be_cancelled_and_retried(monkeypatch):
    """The search (a minute at 20,000 queries) reports each trial to the page; cancelled, it says so with a
    Retry button, and Retry runs it."""
    from dashboard import analysis as A
    from dashboard import state as S
    from evalcore import workspace as W

    told = []
    real = W.search_fusion_weights

    def watched(*args, progress=None, **kw):
        def tell(done, total):
            told.append((done, total))
            progress(done, total)

        return real(*args, progress=tell, **kw)

    monkeypatch.setattr(W, "search_fusion_weights", watched)
    A._c_weights.clear()  # (an earlier test may have made the same search)
    at = goto(start(), "fusion")
    at.session_state[S.CANCEL_KEY] = True  # what the Cancel button's click leaves behind
    at.toggle(key="fu_search").set_value(True).run()
    assert not at.exception and any("cancelled" in unescape(e.value) for e in at.error) and told == []
    at.button(key="fu_retry").click().run()
    assert not at.exception and not errors(at)
    assert told and told[-1][0] == told[-1][1] == len(told) and len(frame(at, "trial", "value")) == 1


def test_agreement_page_says_which_runs_lack_queries():
    """A run that lists none of some evaluated queries counts there as an empty list: the page says so,
    as the command line does."""
    from test_app_views import many_queries

    qrels, a, b = many_queries(40)
    half = b"\n".join(ln for ln in b.splitlines() if int(ln.split()[0][1:]) < 20) + b"\n"
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(3,), metrics=("ndcg",))), W.Blob.of("q.txt", qrels))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("a.trec", a))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("half.trec", half))
    at = goto(start(ws), "agreement")
    assert not at.exception
    shown = [unescape(w.value) for w in at.warning]
    assert any("agreement: of the 40 queries, run 'half' lacks 20; there a run counts as an empty list" in w
               for w in shown), shown


def test_reference_settings_are_disabled_unless_the_ground_truth_is_a_reference():
    """The demo's Data page showed 'its top k at each k' beside a fixed graded top-10 ground truth."""
    items = [f"i{j}" for j in range(30)]
    ref = W.set_ground_truth(W.Snapshot(), W.Blob.of("ref.npz", npz(items, 6, 1)), kind="reference")
    judged = W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))
    for ws, disabled in ((ref, False), (judged, True)):
        at = goto(start(ws), "data")
        assert not errors(at)
        assert at.selectbox(key="set_gtmode").disabled is disabled
        assert at.number_input(key="set_gtdepth").disabled is disabled


def test_overview_of_a_run_that_never_finds_a_relevant_document():
    """first_rel_rank of a run that retrieves nothing relevant is NaN on every query (an untrained checkpoint):
    the Overview shows its row (n = 0, no mean, no interval) instead of failing on the summary."""
    qrels = b"q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\nq3 0 d4 1\n"
    good = b"q1 Q0 x 1 3 g\nq1 Q0 d2 2 2 g\nq2 Q0 d3 1 1 g\nq3 Q0 y 1 2 g\nq3 Q0 d4 2 1 g\n"
    blind = b"q1 Q0 x 1 1 b\nq2 Q0 y 1 1 b\nq3 Q0 z 1 1 b\n"
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(10,), metrics=("first_rel_rank", "ndcg"))),
                            W.Blob.of("q.txt", qrels))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("good.trec", good))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("blind.trec", blind))
    at = goto(start(ws), "overview")
    assert not at.exception and not errors(at), errors(at)
    numbers = shown(next(d for d in at.dataframe if {"run", "metric", "mean", "ci_low"} <= set(d.value.columns)))
    # (as drawn: "–", the placeholder, where there is no number)
    row = numbers[(numbers["run"] == "blind") & (numbers["metric"] == "first_rel_rank")].iloc[0]
    assert (row["n"], row["mean"], row["ci_low"], row["ci_high"]) == (0, "–", "–", "–")
    good_row = numbers[(numbers["run"] == "good") & (numbers["metric"] == "first_rel_rank")].iloc[0]
    assert good_row["n"] == 3 and float(good_row["mean"]) == pytest.approx(5 / 3, abs=1e-4)
    board = overview_text(at)
    assert board.loc["blind", "first_rel_rank"] == "– [n = 0]"  # not "nan [n < 2]", not a best run
    assert board.loc["good", "first_rel_rank"].startswith("★ 1.667 [")


@pytest.mark.parametrize("grades, threshold", [(0, 1), (1, 2)])
def test_pages_say_why_no_query_can_be_evaluated(grades, threshold):
    """No ground-truth query has a relevant document (every grade below the threshold) and such queries are
    skipped: the evaluation has no row. The pages said IndexError (Overview, Compare, Queries, Fusion) or "the
    queries have no domain" (Domains); now each says why and points to the settings."""
    qrels = f"q1 0 d1 {grades}\nq2 0 d3 {grades}\n".encode()
    settings = W.Settings(k=(10,), metrics=("ndcg",), no_relevant="skip", rel_threshold=threshold)
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("q.txt", qrels))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("a.trec", b"q1 Q0 d1 1 2 a\nq2 Q0 d3 1 1 a\n"))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("b.trec", b"q1 Q0 d2 1 2 b\nq2 Q0 x 1 1 b\n"))
    at = start(ws)
    for page in ("overview", "compare", "queries", "domains", "fusion", "versions"):
        goto(at, page)
        assert not errors(at)
        said = [unescape(w.value) for w in at.warning]
        assert any(f"No query can be evaluated: none of the 2 ground-truth queries has a relevant document (grade "
                   f"≥ {threshold})" in w for w in said), (page, said)


def test_weight_search_minimises_first_rel_rank_and_refuses_counts():
    """Run a finds the relevant document at rank 1, run b at rank 3: searching on first_rel_rank (lower is
    better) must find weights that put the relevant document first (it gave all the weight to b: "tuned value
    3"); a count offers no search."""
    qrels = b"q1 0 r1 1\nq2 0 r2 1\nq3 0 r3 1\nq4 0 r4 1\n"
    a = b"".join(f"q{i} Q0 r{i} 1 2 a\nq{i} Q0 x{i} 2 1 a\n".encode() for i in range(1, 5))
    b = b"".join(f"q{i} Q0 y{i} 1 3 b\nq{i} Q0 x{i} 2 2 b\nq{i} Q0 r{i} 3 1 b\n".encode() for i in range(1, 5))
    settings = W.Settings(k=(10,), metrics=("first_rel_rank", "ndcg", "num_rel_ret"))
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("q.txt", qrels))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("a.trec", a), name="a")
    ws, _ = W.add_ranked_run(ws, W.Blob.of("b.trec", b), name="b")
    at = goto(start(ws), "fusion")
    at.multiselect(key="fu_runs").set_value(["a", "b"]).run()
    at.toggle(key="fu_split").set_value(False).run()
    at.selectbox(key="w_fusion_sel_metric").select("first_rel_rank").run()
    assert any(c.value.startswith("Minimises the mean first_rel_rank (lower is better)") for c in at.caption)
    at.toggle(key="fu_search").set_value(True).run()
    assert not at.exception and not errors(at), errors(at)
    best = frame(at, "trial", "value")
    assert best["value"].iloc[0] == 1.0 and best["weight:a"].iloc[0] >= best["weight:b"].iloc[0]  # rank 1: a leads
    at.selectbox(key="w_fusion_sel_metric").select("num_rel_ret").run()
    assert not at.exception and not errors(at)
    assert any("has no better value" in c.value for c in at.caption) and not has_frame(at, "trial", "value")


def test_compare_says_why_a_pair_without_paired_values_is_not_tested():
    """first_rel_rank with a baseline that never finds a relevant document: no query has a value in both
    runs. The page read "mean of the baseline: nan", "fewer than 2 queries" (n = 0 of 3) and "No queries id
    contains that text." with nothing typed."""
    qrels = b"q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n"
    settings = W.Settings(k=(10,), metrics=("first_rel_rank", "ndcg"))
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("q.txt", qrels))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("blind.trec", b"q1 Q0 x 1 1 a\nq2 Q0 y 1 1 a\nq3 Q0 z 1 1 a\n"),
                             name="blind")
    ws, _ = W.add_ranked_run(ws, W.Blob.of("good.trec", b"q1 Q0 d1 1 1 b\nq2 Q0 d2 1 1 b\nq3 Q0 d3 1 1 b\n"),
                             name="good")
    at = goto(start(ws), "compare")
    at.selectbox(key="w_compare_sel_metric").select("first_rel_rank").run()
    at.selectbox(key="w_compare_sel_baseline").select("blind").run()
    assert not at.exception and not errors(at)
    captions = [c.value for c in at.caption]
    assert ("Against the baseline (no query where both the baseline and a run find a relevant document: no mean)."
            in captions)
    assert not any("nan" in c for c in captions)
    table = frame(at, "run", "note")
    assert table["note"].tolist() == ["not testable: no query has a value in both runs"]
    assert "No queries to choose from here." in captions


def test_gm_map_pages_say_the_per_query_values_are_logs():
    """gm_map per query is ln(AP): Compare, Queries, Versions, Domains and Fusion show means and differences of
    logs while the Overview shows the geometric mean; each page picking gm_map says which scale it shows."""
    from test_app_measures import apply_settings

    from dashboard.ui import GM_MAP_SCALE

    at = apply_settings(start(), metrics=["ndcg", "gm_map"], ks=[10])
    checked = []
    for page in ("compare", "queries", "domains", "fusion", "versions"):
        goto(at, page)
        box = next((s for s in at.selectbox if s.key == f"w_{page}_sel_metric"), None)
        if box is None:  # (Versions without a series: no picker)
            continue
        checked.append(page)
        if page == "compare":  # ndcg first: no note; the choice of gm_map is then kept from page to page
            assert box.value == "ndcg" and GM_MAP_SCALE not in [c.value for c in at.caption]
            box.select("gm_map").run()
        assert not at.exception and not errors(at)
        assert at.selectbox(key=f"w_{page}_sel_metric").value == "gm_map"
        assert GM_MAP_SCALE in [c.value for c in at.caption], page
        if page == "compare":  # the table's mean and the caption say which mean
            assert "mean ln AP (gm_map)" in frame(at, "run", "run − baseline").columns
            assert any(c.value.startswith("Against the baseline (mean ln AP of the baseline: ") for c in at.caption)
    assert checked == ["compare", "queries", "domains", "fusion"], checked


def test_compare_counts_a_lower_first_rel_rank_as_a_win():
    """first_rel_rank (lower is better): B finds the relevant document later on 3 queries, earlier on 1. The
    Compare page said 'B wins 3 / B loses 1' (the tests count B above A) and 'points above the diagonal: B is
    better'; the Versions page's improved/regressed said the opposite."""
    qrels = b"".join(f"q{i} 0 r{i} 1\n".encode() for i in range(1, 6))
    a = b"".join(f"q{i} Q0 r{i} 1 3 a\nq{i} Q0 x{i} 2 2 a\nq{i} Q0 y{i} 3 1 a\n".encode() for i in range(1, 5)) + \
        b"q5 Q0 x5 1 3 a\nq5 Q0 y5 2 2 a\nq5 Q0 r5 3 1 a\n"
    b = b"".join(f"q{i} Q0 x{i} 1 3 b\nq{i} Q0 y{i} 2 2 b\nq{i} Q0 r{i} 3 1 b\n".encode() for i in range(1, 4)) + \
        b"q4 Q0 r4 1 3 b\nq5 Q0 r5 1 3 b\n"
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(10,), metrics=("first_rel_rank", "ndcg"))),
                            W.Blob.of("q.txt", qrels))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("a.trec", a), name="A")
    ws, _ = W.add_ranked_run(ws, W.Blob.of("b.trec", b), name="B")
    at = goto(start(ws), "compare")
    at.selectbox(key="w_compare_sel_metric").select("first_rel_rank").run()
    at.selectbox(key="w_compare_sel_baseline").select("A").run()
    assert not at.exception and not errors(at)
    assert [(m.label, m.value) for m in at.metric][:3] == [("B wins", "1"), ("ties", "1"), ("B loses", "3")]
    table = frame(at, "run", "wins / ties / losses")
    assert table.set_index("run").loc["B", "wins / ties / losses"] == "1 / 1 / 3"
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Points below the diagonal: B is better") for c in captions)
    assert any("below / equal to / above run A's (lower is better for this metric)" in c for c in captions)
    at.selectbox(key="w_compare_sel_metric").select("ndcg").run()  # higher is better: counted as the tests count
    assert any(c.value.startswith("Points above the diagonal: B is better") for c in at.caption)

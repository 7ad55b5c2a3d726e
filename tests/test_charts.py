"""Chart styles: many runs never share a look (a review found 18 runs drawn in 10 colours, pairs alike)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard import charts as C


def _curve(runs: list[str]) -> pd.DataFrame:
    rows = [{"run": r, "k": k, "n": 50, "mean": 0.5 + 0.01 * i, "ci_low": 0.45, "ci_high": 0.55}
            for i, r in enumerate(runs) for k in (1, 10, 100)]
    return pd.DataFrame(rows)


def test_eighteen_runs_on_metrics_vs_k_all_look_different():
    runs = [f"s{d}-ep{e}" for d in (32, 64, 128) for e in range(1, 7)]
    fig = C.curves(_curve(runs), metric_label="ndcg", runs=runs, bands=False)
    looks = [(t.line.color, t.marker.symbol, t.line.dash) for t in fig.data]
    assert len(looks) == 18 and len(set(looks)) == 18
    # up to ten runs keep the plain look: solid lines, round markers, ten colours
    assert {lk[1:] for lk in looks[:10]} == {("circle", "solid")} and len({lk[0] for lk in looks[:10]}) == 10
    pr = C.pr_curves(_curve(runs).rename(columns={"k": "recall"}), runs=runs)
    assert len({(t.line.color, t.marker.symbol, t.line.dash) for t in pr.data}) == 18


def test_low_coverage_stays_dotted_whatever_the_position():
    runs = [f"r{i}" for i in range(12)]
    fig = C.curves(_curve(runs), metric_label="ndcg", runs=runs, bands=False, flagged=["r11"])
    by = {t.name: t for t in fig.data}
    assert by["r11 (low coverage)"].line.dash == "dot" and by["r10"].line.dash == "dash"


def test_domain_bars_of_many_runs_differ_by_colour_or_pattern():
    runs = [f"r{i}" for i in range(14)]
    dom = pd.DataFrame([{"run": r, "domain": d, "aggregate": 0.5, "aggregate_ci_low": 0.4, "aggregate_ci_high": 0.6,
                         "n": 10} for r in runs for d in ("a", "b")])
    fig = C.domain_bars(dom, metric_label="ndcg", runs=runs)
    looks = [(t.marker.color, t.marker.pattern.shape) for t in fig.data]
    assert len(set(looks)) == 14
    assert np.all([lk[1] == "" for lk in looks[:10]])


def test_versions_by_whole_steps_are_ticked_at_the_steps():
    """Five epochs were ticked 1, 1.5, 2, ... (a review); whole steps now get a tick each, other steps plotly's."""
    frame = pd.DataFrame({"mean": [0.1, 0.2, 0.3, 0.4, 0.5], "ci_low": 0.0, "ci_high": 1.0, "n": 10,
                          "run": [f"e{i}" for i in range(5)], "version": [None] * 5})
    for x, ticked in (([1, 2, 3, 4, 5], [1.0, 2.0, 3.0, 4.0, 5.0]), ([0.5, 1, 1.5, 2, 2.5], None)):
        fig = C.version_curve(frame, x=x, labels=[f"epoch {v}" for v in x], by_step=True, model="m",
                              metric_label="ndcg@10")
        assert (list(fig.layout.xaxis.tickvals) if fig.layout.xaxis.tickvals is not None else None) == ticked


def _pairs_matrix(n: int) -> dict[str, pd.DataFrame]:
    """A Compare matrix of ``n`` runs as ``dashboard.drilldown.compare_matrix`` builds it."""
    from dashboard.drilldown import compare_matrix
    from evalcore.stats import compare_many

    rng = np.random.default_rng(n)
    runs = [f"run-{i:02d} epoch {i}" for i in range(n)]
    rows = [(r, f"q{q}", "ndcg", 10, float(rng.uniform()) * (1 + i / n)) for i, r in enumerate(runs) for q in range(30)]
    table = pd.DataFrame(rows, columns=["run", "query_id", "metric", "k", "value"])
    return compare_matrix(compare_many(table, metrics_k=[("ndcg", 10)]), runs)


def test_the_pairs_matrix_shortens_its_cells_as_the_runs_grow_and_the_hover_keeps_everything():
    for n, kind in ((3, "full"), (6, "full"), (7, "diff"), (12, "diff"), (13, "none"), (18, "none")):
        m = _pairs_matrix(n)
        fig = C.compare_heatmap(m, metric_label="ndcg@10")
        text, hover = np.asarray(fig.data[0].text), np.asarray(fig.data[0].customdata)
        full = m["text"].map(C.ptext).to_numpy()  # escaped for Plotly ('<0.001' would open a tag)
        off = ~np.eye(n, dtype=bool)
        assert (hover[off] == np.vectorize(lambda s: s.replace("\n", "<br>"))(full[off])).all()
        first = np.vectorize(lambda s: s.split("\n")[0])(full)
        star = np.where(m["significant"].to_numpy(), "*", "")
        want = {"full": np.vectorize(lambda s: s.replace("\n", "<br>"))(full),
                "diff": np.char.add(first.astype(str), star.astype(str)), "none": np.full((n, n), "")}[kind]
        assert (text[off] == want[off]).all(), (n, text[off][:3], want[off][:3])
        assert all(str(x) == "" for x in text[~off])
        # square cells: the figure grows with the runs, at most CELL_PX_MAX per run
        cell = min(C.CELL_PX_MAX, max(24, C.COMPARE_PLOT_PX // n))
        assert fig.layout.height >= cell * n
        assert fig.layout.height <= cell * n + 400


def test_long_run_names_are_shortened_on_the_heatmaps_axes_but_stay_distinct_and_whole_in_the_hover():
    """A checkpoint's usual name (100+ characters) took the whole width: the 3 x 3 matrix shrank to a strip and
    the row label was cut from the left, hiding the part that tells checkpoints apart."""
    base = "sentence-transformers_all-MiniLM-L6-v2_finetuned_on_msmarco_hard_negatives_lr2e-5_epoch_{}_final"
    runs = [base.format(12), base.format(13), "bm25"]
    m = _pairs_matrix(3)
    m = {k: v.set_axis(runs, axis=0).set_axis(runs, axis=1) if isinstance(v, pd.DataFrame) else v
         for k, v in m.items()}
    agreement = pd.DataFrame(np.eye(3), index=runs, columns=runs)
    for fig in (C.compare_heatmap(m, metric_label="ndcg@10"), C.agreement_heatmap(agreement, measure_label="τ")):
        assert list(fig.data[0].x) == runs and list(fig.data[0].y) == runs  # the hover's %{x} / %{y}: whole
        for axis in (fig.layout.xaxis, fig.layout.yaxis):
            shown = list(axis.ticktext)
            assert list(axis.tickvals) == runs and shown[2] == "bm25"
            assert len(set(shown)) == 3 and all(len(t) <= C.LABEL_CHARS + 2 for t in shown)
            assert shown[0].startswith("sentence") and shown[0] != shown[1]
        assert fig.layout.margin.t < 300  # the tilted labels' band follows the short labels


def test_the_difference_histogram_counts_whole_queries():
    """With few queries Plotly ticked the count axis 0.2, 0.4, ...; whole queries up to 10, automatic beyond."""
    few = pd.DataFrame({"difference": [0.1, -0.2, 0.3]})
    many = pd.DataFrame({"difference": np.zeros(50)})
    assert C.diff_histogram(few, run_a="a", run_b="b", metric_label="ndcg@10").layout.yaxis.dtick == 1
    assert C.diff_histogram(many, run_a="a", run_b="b", metric_label="ndcg@10").layout.yaxis.dtick is None


def test_a_metric_at_a_single_k_shows_its_interval_as_an_error_bar():
    """Overview's metrics vs k of precision@5 alone (a fixed cutoff): one point per run, and the band of one point is
    invisible: the interval showed nowhere while the caption said "Bands: 95% CI" (browser walkthrough)."""
    one = pd.DataFrame([{"run": r, "k": 5, "n": 100, "mean": m, "ci_low": m - 0.03, "ci_high": m + 0.04}
                        for r, m in (("a", 0.18), ("b", 0.184))])
    fig = C.curves(one, metric_label="precision", runs=["a", "b"], bands=True)
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert [t.name for t in lines] == ["a", "b"] and not [t for t in fig.data if t.fill == "toself"]
    for t, m in zip(lines, (0.18, 0.184), strict=True):
        assert np.allclose(t.y, [m])
        assert t.error_y.visible is not False and t.error_y.symmetric is False
        assert np.allclose(t.error_y.array, [0.04]) and np.allclose(t.error_y.arrayminus, [0.03])
    assert not [t for t in C.curves(one, metric_label="precision", runs=["a", "b"], bands=False).data
                if t.error_y.array is not None]
    # several k: bands, no error bars; a gap (n < 2 at k = 10) breaks the band instead of bridging it
    rows = [{"run": "a", "k": k, "n": 50, "mean": 0.5, "ci_low": lo, "ci_high": hi}
            for k, lo, hi in ((1, 0.4, 0.6), (3, 0.4, 0.6), (10, np.nan, np.nan), (20, 0.45, 0.55), (50, 0.4, 0.6))]
    fig = C.curves(pd.DataFrame(rows), metric_label="ndcg", runs=["a"], bands=True)
    bands = [t for t in fig.data if t.fill == "toself"]
    assert [sorted(set(t.x)) for t in bands] == [[1, 3], [20, 50]]
    assert next(t for t in fig.data if t.mode == "lines+markers").error_y.array is None


def test_runs_at_a_single_k_are_dodged_so_every_error_bar_shows():
    """precision@5 alone: every run's point and error bar sat at x = 5, one bar hiding another (browser walkthrough).
    The isolated points are moved a little aside, symmetric about the real k, which the hover still gives."""
    rows = [{"run": r, "k": 5, "n": 100, "mean": m, "ci_low": m - 0.03, "ci_high": m + 0.04}
            for r, m in (("a", 0.18), ("b", 0.184), ("c", 0.2))]
    for log_x in (False, True):
        fig = C.curves(pd.DataFrame(rows), metric_label="precision", runs=["a", "b", "c"], bands=True, log_x=log_x)
        lines = [t for t in fig.data if t.mode == "lines+markers"]
        xs = [float(t.x[0]) for t in lines]
        assert len(set(xs)) == 3 and xs == sorted(xs), xs  # one x per run, in the legend's order
        assert xs[1] == 5.0 and 4.5 < xs[0] < 5.0 < xs[2] < 5.5
        if log_x:
            assert np.isclose(xs[0] * xs[2], 25.0)  # symmetric on the log axis
        else:
            assert np.isclose(xs[0] + xs[2], 10.0)
        for t in lines:  # the hover says k=5, not the dodged x
            assert "k=%{customdata[3]}" in t.hovertemplate and float(t.customdata[0][3]) == 5.0
        assert list(fig.layout.xaxis.tickvals) == [5]
    # a curve over several k is not moved
    many = pd.DataFrame([{"run": r, "k": k, "n": 50, "mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}
                         for r in ("a", "b") for k in (1, 5, 10)])
    for t in C.curves(many, metric_label="ndcg", runs=["a", "b"], bands=True).data:
        if t.mode == "lines+markers":
            assert list(t.x) == [1, 5, 10]


def _forty_domains(runs: list[str]) -> pd.DataFrame:
    return pd.DataFrame([{"run": r, "domain": f"domain-{d:02d}", "aggregate": 0.5, "aggregate_ci_low": 0.4,
                          "aggregate_ci_high": 0.6, "n": 10} for r in runs for d in range(40)])


def test_forty_domains_are_rows_named_across_not_columns_40_px_wide():
    """A review with 40 domains: grouped bars 3 px wide under tilted names, a run × domain heatmap of 40 nameless
    columns; beyond DOMAIN_BARS_UP_TO domains each domain is a row (its name horizontal), runs side by side."""
    runs = ["a", "b", "c"]
    dom = _forty_domains(runs)
    domains = sorted(set(dom["domain"]))
    bars = C.domain_bars(dom, metric_label="ndcg@10", runs=runs)
    assert [t.type for t in bars.data] == ["scatter"] * 3 and all(t.orientation == "h" for t in bars.data)
    assert list(bars.layout.yaxis.categoryarray) == domains and bars.layout.scattermode == "group"
    assert bars.layout.height >= C.DOMAIN_ROW_PX * 40  # a row per domain, not squeezed
    heat = C.domain_heatmap(dom, metric_label="ndcg@10", runs=runs)
    assert list(heat.data[0].y) == domains and list(heat.data[0].x) == runs
    few = C.domain_bars(dom[dom["domain"].isin(domains[:5])], metric_label="ndcg@10", runs=runs)
    assert [t.type for t in few.data] == ["bar"] * 3  # a few domains: grouped bars as before


def test_a_scatter_of_forty_domains_colours_the_largest_and_groups_the_others():
    """40 domains were 40 legend entries above a squeezed chart, each colour used four times."""
    sizes = {f"d{i:02d}": 40 - i for i in range(40)}
    domain = [d for d, n in sizes.items() for _ in range(n)]
    rng = np.random.default_rng(3)
    pf = pd.DataFrame({"query_id": [f"q{i}" for i in range(len(domain))], "domain": domain,
                       "a": rng.random(len(domain)), "b": rng.random(len(domain))})
    pf["difference"] = pf["b"] - pf["a"]
    fig = C.pair_scatter(pf, run_a="A", run_b="B", metric_label="ndcg@10", max_points=len(pf))
    points = [t for t in fig.data if t.mode == "markers"]
    assert len(points) == len(C.PALETTE) and len({t.marker.color for t in points}) == len(points)
    assert [t.name for t in points[:-1]] == [f"d{i:02d}" for i in range(len(C.PALETTE) - 1)]  # the largest
    assert points[-1].name == f"other domains ({40 - len(C.PALETTE) + 1})"
    assert sum(len(t.x) for t in points) == len(pf)  # every query still a point, its own domain in its hover
    assert set(points[-1].text) == set(list(sizes)[len(C.PALETTE) - 1:]) and "%{text}" in points[-1].hovertemplate


def test_long_run_names_fit_the_per_query_axes_and_stay_distinct():
    """Two names of 90 characters ran off both ends of the scatter's and the histogram's axis titles (a review at
    scale): neither run could be read. They are shortened (short_labels), distinct, the metric kept."""
    a = "ColBERTv2 late interaction (PLAID index, nbits=2) — zero-shot, domain adaptation off, epoch 3"
    b = "ColBERTv2 late interaction (PLAID index, nbits=2) — zero-shot, domain adaptation off, epoch 4"
    pf = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "domain": "", "a": [0.1, 0.5, 0.9], "b": [0.2, 0.4, 0.9]})
    pf["difference"] = pf["b"] - pf["a"]
    scatter = C.pair_scatter(pf, run_a=a, run_b=b, metric_label="ndcg@10")
    x, y = scatter.layout.xaxis.title.text, scatter.layout.yaxis.title.text
    hist = C.diff_histogram(pf, run_a=a, run_b=b, metric_label="ndcg@10").layout.xaxis.title.text
    sa, sb = C.short_labels([a, b])
    assert sa != sb and sa.endswith("epoch 3") and sb.endswith("epoch 4")
    assert x == f"{sa} (A) ndcg@10" and y == f"{sb} (B) ndcg@10" and hist == f"{sb} − {sa} (ndcg@10) per query"
    assert max(len(x), len(y)) < 50 and len(hist) < 80

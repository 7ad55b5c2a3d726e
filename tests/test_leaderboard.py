"""Leaderboard exports (issue 10, item 11): Markdown and LaTeX checked cell by cell."""

from __future__ import annotations

import re

import numpy as np
import pytest

from evalcore.aggregate import summarize
from evalcore.data import Qrels, Run
from evalcore.errors import OptionError
from evalcore.evaluate import evaluate
from evalcore.leaderboard import BETTER, WORSE, leaderboard, to_latex, to_markdown
from evalcore.stats import compare_many

ODD = "sys_1&50%|*x*"  # characters special in Markdown and LaTeX


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in range(40)]
    docs = [f"d{j}" for j in range(30)]
    qrels = Qrels.from_dict({q: {d: int(g) for d, g in zip(rng.choice(docs, 6, replace=False),
                                                           [3, 2, 1, 1, 0, 0], strict=True)} for q in qids})
    truth = {q: dict(qrels.to_frame().query("query_id == @q")[["doc_id", "relevance"]].values) for q in qids}

    def run(noise, name):
        return Run.from_dict({q: {d: float(truth[q].get(d, 0)) + rng.normal(0, noise) for d in docs}
                              for q in qids}, name=name)

    runs = {"base": run(2.0, "base"), "good": run(0.3, "good"), ODD: run(2.0, ODD), "bad": run(8.0, "bad")}
    ev = evaluate(qrels, runs, metrics=["ndcg", "recall", "first_rel_rank"], k=[5, 10])
    return ev


COLUMNS = [("ndcg", 10), ("recall", 5), ("first_rel_rank", 0)]


def expected(ev, compared):
    s = summarize(ev.table)
    s = s.assign(run=s["run"].astype(str), metric=s["metric"].astype(str))
    cmp = compare_many(ev.table, metrics_k=COLUMNS, baseline="base", n_resamples=200, ci_method="percentile")
    return s, cmp


def parse_md(text):
    rows = [ln for ln in text.splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in rows[0].strip("|").split(" | ")]
    body = {}
    for ln in rows[1:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", ln.strip())[1:-1]]
        body[cells[0]] = cells[1:]
    return head, body


@pytest.mark.parametrize("seed", [0, 1])
def test_markdown_and_latex_cell_by_cell(seed):
    ev = data(seed)
    runs = ["base", "good", ODD, "bad"]
    compared = ["base", "good", ODD]  # "bad" left out (e.g. low coverage): no bold, no mark
    s, cmp = expected(ev, compared)
    board = leaderboard(s, columns=COLUMNS, runs=runs, comparison=cmp, baseline="base", compared=compared,
                        caption="Mean over 40 queries.")
    md = to_markdown(board)
    tex = to_latex(board)
    head, body = parse_md(md)
    assert head == ["run", "ndcg@10", "recall@5", "first\\_rel\\_rank"]
    md_names = {"base": "base (baseline)", "good": "good", ODD: r"sys\_1\&50%\|\*x\*", "bad": "bad"}
    tex_rows = {}
    lines = tex.splitlines()
    for ln in lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]:
        name, *cells = ln.removesuffix(r" \\").split(" & ")
        tex_rows[name] = cells
    tex_names = {"base": "base (baseline)", "good": "good", ODD: r"sys\_1\&50\%\textbar{}*x*", "bad": "bad"}
    for m, k in COLUMNS:
        col = [(m2, k2) for m2, k2 in COLUMNS].index((m, k))
        sel = s[(s["metric"] == m) & (s["k"] == k)].set_index("run")["mean"]
        pool = sel[compared]
        best_val = pool.min() if m == "first_rel_rank" else pool.max()
        for r in runs:
            mean = sel[r]
            num = f"{mean:.3f}"
            bold = r in compared and mean == best_val
            row = cmp[(cmp["run_b"] == r) & (cmp["metric"].astype(str) == m) & (cmp["k"] == k)]
            mark = ""
            if r in compared and len(row) and bool(row.iloc[0]["significant"]):
                d = float(row.iloc[0]["diff"])
                mark = BETTER if (d < 0 if m == "first_rel_rank" else d > 0) else WORSE
            assert body[md_names[r]][col] == (f"**{num}**" if bold else num) + mark, (r, m, k)
            tmark = {"": "", BETTER: r"$^{\dagger}$", WORSE: r"$^{\ddagger}$"}[mark]
            assert tex_rows[tex_names[r]][col] == (rf"\textbf{{{num}}}" if bold else num) + tmark, (r, m, k)
    assert any(board.marks.to_numpy().ravel() != "")  # the good run beats the baseline somewhere
    assert r"\caption{Mean over 40 queries. $\dagger$ / $\ddagger$: significantly better / worse than the " \
           r"baseline base. Not compared (no best mark, no test): bad.}" in tex
    assert "Not compared \\(no best mark, no test\\): bad\\." in md
    assert tex.startswith(r"\begin{table}") and r"\toprule" in tex and tex.rstrip().endswith(r"\end{table}")


def test_without_baseline_and_bad_options():
    ev = data(0)
    s = summarize(ev.table)
    board = leaderboard(s, columns=[("ndcg", 5)], runs=["good", "base"])
    assert (board.marks == "").all().all() and board.notes == []
    _, body = parse_md(to_markdown(board))
    assert set(body) == {"good", "base"}
    with pytest.raises(OptionError, match="baseline 'x' is not among"):
        leaderboard(s, columns=[("ndcg", 5)], runs=["good"], baseline="x")
    with pytest.raises(OptionError, match="digits"):
        leaderboard(s, columns=[("ndcg", 5)], runs=["good"], digits=-1)


def check_demo_exports(md: str, tex: str, baseline: str) -> None:
    """The demo's leaderboard exports (the Overview's default columns), cell by cell, against evalcore:
    the mean to 3 decimals, bold when best, † / ‡ when compare_many finds it significantly better / worse
    than the baseline (used by the AppTest and the browser test)."""
    from evalcore import workspace as W
    from evalcore.intervals import summarize_with_intervals
    from evalcore.workspace.demo import make_demo

    demo = make_demo(0)
    st = W.Settings().validated()
    ev = evaluate(demo.qrels, demo.runs, metrics=list(st.metrics), k=list(st.k), ties=st.ties)
    summ = summarize_with_intervals(ev.table)
    cols = [("ndcg", 10), ("recall", 10), ("mrr", 10), ("map", 10), ("recall", 100)]
    cmp = compare_many(ev.table, metrics_k=cols, runs=list(demo.runs), baseline=baseline, n_resamples=1000,
                       ci_method="percentile", resampling="shared")
    md_rows = {ln.strip("| ").split(" | ")[0].replace("\\-", "-"): ln.strip("| ").split(" | ")[1:]
               for ln in md.splitlines() if ln.startswith("| ") and "---" not in ln}
    tex_rows = {ln.split(" & ")[0]: ln.removesuffix(r" \\").split(" & ")[1:]
                for ln in tex.splitlines() if " & " in ln and not ln.startswith("Run")}
    for run in demo.runs:
        name = f"{run} (baseline)" if run == baseline else run
        for c, (m, k) in enumerate(cols):
            sel = summ[(summ["metric"] == m) & (summ["k"] == k)].set_index("run")["mean"]
            num = f"{sel[run]:.3f}"
            best = sel[run] == sel.max()
            row = cmp[(cmp["run_b"] == run) & (cmp["metric"] == m) & (cmp["k"] == k)]
            mark = "" if not (len(row) and bool(row.iloc[0]["significant"])) else (
                BETTER if row.iloc[0]["diff"] > 0 else WORSE)
            assert md_rows[name][c] == (f"**{num}**" if best else num) + mark, (run, m, k)
            tmark = {"": "", BETTER: r"$^{\dagger}$", WORSE: r"$^{\ddagger}$"}[mark]
            assert tex_rows[name][c] == (rf"\textbf{{{num}}}" if best else num) + tmark, (run, m, k)
    assert md.count(BETTER) + md.count(WORSE) >= 2 and r"\begin{tabular}" in tex


def test_the_export_shows_what_the_screen_shows_for_gm_map_and_counts():
    """The exports took the summary's mean: gm_map as the mean of ln AP (-4.12 beside the screen's 0.016),
    num_rel_ret as a per-query mean (1.375 beside the total 22), and bold / marks on the counts."""
    from evalcore.intervals import summarize_with_intervals

    qrels, runs = _qrels_runs()
    ev = evaluate(qrels, runs, metrics=["ndcg", "gm_map", "num_rel_ret"], k=[10])
    summ = summarize_with_intervals(ev.table, n_resamples=200, aggregates=True)
    cols = [("ndcg", 10), ("gm_map", 0), ("num_rel_ret", 0)]
    cmp = compare_many(ev.table, metrics_k=cols, baseline="base", n_resamples=200, ci_method="percentile")
    board = leaderboard(summ, columns=cols, runs=["base", "good", "bad"], comparison=cmp, baseline="base")
    agg = summ.assign(run=summ["run"].astype(str), metric=summ["metric"].astype(str)).set_index(["run", "metric"])
    for r in ("base", "good", "bad"):
        gm = float(agg.loc[(r, "gm_map"), "aggregate"])
        assert gm == pytest.approx(np.exp(float(agg.loc[(r, "gm_map"), "mean"]))) and gm > 0
        assert board.cell(r, "gm_map")[0] == f"{gm:.3f}"
        total = float(agg.loc[(r, "num_rel_ret"), "aggregate"])
        assert total.is_integer() and board.cell(r, "num_rel_ret")[0] == f"{total:.0f}"
        assert board.cell(r, "num_rel_ret")[1:] == (False, "")  # a count: no best, no mark
    assert board.best["gm_map"].any() and board.best["ndcg@10"].any()
    head, body = parse_md(to_markdown(board))
    assert head == ["run", "ndcg@10", r"gm\_map", r"num\_rel\_ret"]
    assert all("**" not in cells[2] and not cells[2].endswith((BETTER, WORSE)) for cells in body.values())


def _qrels_runs():
    rng = np.random.default_rng(5)
    qids = [f"q{i}" for i in range(30)]
    docs = [f"d{j}" for j in range(25)]
    qrels = Qrels.from_dict({q: {d: int(g) for d, g in zip(rng.choice(docs, 5, replace=False), [3, 2, 1, 0, 0],
                                                           strict=True)} for q in qids})
    truth = {q: qrels.to_dict().get(q, {}) for q in qids}
    runs = {n: Run.from_dict({q: {d: float(truth[q].get(d, 0)) + rng.normal(0, s) for d in docs} for q in qids},
                             name=n) for n, s in (("base", 2.0), ("good", 0.2), ("bad", 6.0))}
    return qrels, runs


def test_runs_of_several_aspects_are_compared_within_their_aspect():
    """With two ground-truth aspects the export picked bold across aspects and tested a run judged against one
    aspect against a baseline judged against the other; it had no aspect column."""
    from evalcore.intervals import summarize_with_intervals

    qrels, runs = _qrels_runs()
    ev = evaluate(qrels, runs, metrics=["ndcg"], k=[10])
    summ = summarize_with_intervals(ev.table, n_resamples=200, aggregates=True)
    groups = {"base": "content", "good": "overall", "bad": "content"}
    tested = [r for r in runs if groups[r] == groups["base"]]
    sel = ev.table[ev.table["run"].astype(str).isin(tested)]
    cmp = compare_many(sel, metrics_k=[("ndcg", 10)], runs=tested, baseline="base", n_resamples=200,
                       ci_method="percentile")
    board = leaderboard(summ, columns=[("ndcg", 10)], runs=["base", "good", "bad"], comparison=cmp,
                        baseline="base", groups=groups)
    best = board.best["ndcg@10"]
    assert bool(best["good"]) and bool(best["base"]) and not bool(best["bad"])  # the best of each aspect
    assert board.marks.loc["good", "ndcg@10"] == ""  # another aspect: not tested against the baseline
    assert board.marks.loc["bad", "ndcg@10"] in (BETTER, WORSE, "")
    md, tex = to_markdown(board), to_latex(board)
    assert md.splitlines()[0] == "| run | aspect | ndcg@10 |" and "| good | overall |" in md
    assert "Run & Aspect & ndcg@10" in tex and r"good & overall & \textbf{" in tex
    assert r"\(runs judged against its aspect, content, only\)" in md


def test_latex_escapes_characters_that_print_as_other_glyphs():
    from evalcore.leaderboard import tex_text

    assert tex_text('a|b<c>"d"`e`') == (r"a\textbar{}b\textless{}c\textgreater{}\textquotedbl{}d\textquotedbl{}"
                                        r"\textasciigrave{}e\textasciigrave{}")

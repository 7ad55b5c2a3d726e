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
    tex_names = {"base": "base (baseline)", "good": "good", ODD: r"sys\_1\&50\%|*x*", "bad": "bad"}
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

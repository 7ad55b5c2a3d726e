"""The leaderboard as Markdown and LaTeX (:mod:`evalcore.leaderboard`), with its choices on the Overview."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import state as S
from dashboard import tables as T
from dashboard import ui


def _board_maker(evaluation: Any, summ: pd.DataFrame, cols: list[tuple[str, int]], runs: list[str],
                 compared: list[str], baseline: str | None, test: str, correction: str,
                 n_queries: int, groups: dict[str, str] | None = None) -> Callable[[], Any]:
    """A closure building the :class:`~evalcore.leaderboard.Leaderboard` from captured data only (it may run
    in a download's thread, without session state).  ``evaluation``'s per-query table: the compared runs'
    rows are taken, with plain-string domains, only when a download or the preview asks for the board.
    ``groups`` (run -> ground-truth aspect, several in use): best within each, tests within the baseline's."""

    def make():
        from evalcore.leaderboard import leaderboard
        from evalcore.stats import compare_many

        cmp = None
        tested = [r for r in compared if not groups or groups.get(r) == groups.get(baseline)]
        if baseline is not None and len(tested) > 1:
            table = evaluation.table
            sel = T.plain_table(table[table["run"].astype(str).isin(tested)])
            cmp = compare_many(sel, metrics_k=cols, runs=tested, baseline=baseline, test=test,
                               correction=correction, n_resamples=S.TEST_RESAMPLES, seed=S.CI_SEED,
                               ci_method=S.CI_METHOD, resampling=S.RESAMPLING)
        cap = (f"Mean over {ui.plural(n_queries, 'query', 'queries')} (a count: its total; gm_map: the geometric "
               f"mean). Best per column in bold. Significance: {ui.TESTS[test]}, {ui.CORRECTIONS[correction]} "
               "correction across the table's comparisons, alpha = 0.05"
               + (f" ({S.TEST_RESAMPLES:,} sign flips, seed {S.CI_SEED}, as evalcore compare --baseline B --test "
                  f"permutation --n-resamples {S.TEST_RESAMPLES} --seed {S.CI_SEED})" if test == "permutation" else "")
               + ".")
        return leaderboard(summ, columns=cols, runs=runs, comparison=cmp, baseline=baseline, compared=compared,
                           caption=cap, groups=groups)

    return make


def _text_of(make: Callable[[], Any], fmt: str) -> Callable[[], bytes]:
    def data() -> bytes:
        from evalcore.leaderboard import to_latex, to_markdown

        board = make()
        return (to_markdown(board) if fmt == "md" else to_latex(board)).encode("utf-8")

    return data


def leaderboard_exports(ctx: S.Context, summ: pd.DataFrame, cols: Sequence[tuple[str, int]], runs: list[str],
                        compared: list[str]) -> None:
    """Baseline / test / correction of the significance marks, Markdown and LaTeX downloads, a preview."""
    with st.expander("Export the leaderboard (Markdown, LaTeX)", icon=":material/table_view:"):
        c1, c2, c3 = st.columns(3)
        with c1:
            baseline = ui.bound_selectbox("Baseline of the significance marks", compared or runs, S.SEL_BASELINE,
                                          scope="overview")
        with c2:
            test = ui.test_picker("overview")
        with c3:
            correction = ui.correction_picker("overview")
        n_q = int(S.coverage(ctx)["n_ground_truth"].max()) if len(runs) else 0
        groups = {r: str(S.aspect_of(ctx, r)) for r in runs} if len(S.aspects_in_use(ctx)) > 1 else None
        make = _board_maker(ctx.evaluation, summ, list(cols), runs, compared,
                            baseline if baseline in compared else None, test, correction, n_q, groups)
        with st.container(horizontal=True):
            st.download_button("Markdown", data=_text_of(make, "md"), file_name="leaderboard.md",
                               mime="text/markdown", key="dl_lb_md", on_click="ignore", icon=":material/download:")
            st.download_button("LaTeX", data=_text_of(make, "tex"), file_name="leaderboard.tex",
                               mime="application/x-tex", key="dl_lb_tex", on_click="ignore",
                               icon=":material/download:")
        st.caption("The table's columns, best per column in bold among the compared runs, † / ‡ = significantly "
                   "better / worse than the baseline (the LaTeX uses booktabs).")
        if st.toggle("Show the Markdown and LaTeX here", key="ov_lb_preview"):
            key = S._key("lb", ctx.eval_key, list(cols), runs, compared, baseline, test, correction, groups,
                         S.TEST_RESAMPLES, S.CI_SEED, S.RESAMPLING)
            board = S.memo(key, make)
            from evalcore.leaderboard import to_latex, to_markdown

            st.code(to_markdown(board), language="markdown")
            st.code(to_latex(board), language="latex")

"""Compare page: paired significance between runs, Tukey's HSD, per-query scatter, drill-down into a query."""

from __future__ import annotations

import streamlit as st

from dashboard import analysis as A
from dashboard import charts, ui
from dashboard import drilldown as D
from dashboard import state as S
from dashboard import tables as T
from evalcore.stats import win_tie_loss

GOTO = "compare_goto_query"
TESTS, CORRECTIONS = ui.TESTS, ui.CORRECTIONS
HSD_DESIGNS = {"paired": "paired by query (two-way ANOVA)", "independent": "independent groups (as ranx)"}
HSD_SHOWN = ["run_a", "run_b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "statistic", "p_value",
             "significant", "note"]


def on_point_selected() -> None:
    """Scatter selection: remember the query and open its drill-down (switch_page runs in the script, below)."""
    sel = st.session_state.get("cmp_scatter")
    points = (sel or {}).get("selection", {}).get("points", []) if sel else []
    for p in points:
        cd = p.get("customdata")
        if isinstance(cd, list):
            cd = cd[0] if cd else None
        if cd is not None:
            st.session_state[S.SEL_QUERY] = str(cd)
            st.session_state[S.SEL_RUN_A] = st.session_state.get(S.SEL_BASELINE)
            st.session_state[GOTO] = True
            return


ui.page_setup()
if st.session_state.pop(GOTO, False):
    st.switch_page(ui.PAGES["queries"])

st.title("Compare runs")
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)
runs = ui.need_runs(ctx, what="compare them")

c1, c2, c3, c4 = st.columns(4)
metric, k = ui.metric_k_picker(ctx, "compare", columns=(c1, c2))
with c3:
    test = ui.bound_selectbox("Test", list(TESTS), S.SEL_TEST, scope="compare", format_func=TESTS.get,
                              help="Paired by query id. t-test (default), Wilcoxon signed-rank, or a paired "
                                   f"randomization test ({S.N_RESAMPLES} sign flips, seeded).")
with c4:
    correction = ui.bound_selectbox("Correction", list(CORRECTIONS), S.SEL_CORRECTION, scope="compare",
                                    format_func=CORRECTIONS.get,
                                    help="Multiple-comparison correction across all pairs of runs shown.")
label = ui.label_of(metric, k)

out = S.comparison(ctx, metric, k, test, correction)
if not out.ok:
    ui.show_error(out.error, prefix="Comparison failed")
    st.stop()
cmp = out.value
matrix = S.memo(f"matrix:{ctx.eval_key}:{metric}:{k}:{test}:{correction}",
                lambda: D.compare_matrix(cmp, runs))

baseline = ui.bound_selectbox("Baseline", runs, S.SEL_BASELINE, scope="compare",
                              help="The run the table below compares every other run with; run A of the "
                                   "per-query view.")

st.subheader("Every pair of runs")
st.plotly_chart(S.memo(f"fig:matrix:{ctx.eval_key}:{metric}:{k}:{test}:{correction}",
                       lambda: charts.compare_heatmap(matrix, metric_label=label)), key="cmp_matrix")
st.caption("Cell = row run − column run (mean of the per-query differences); blue = the row run is better. "
           f"p = {TESTS[test]} p-value after {CORRECTIONS[correction]} correction across all pairs; "
           "* = significant at 0.05 after correction; p-values below 0.001 read <0.001.")

rows = S.memo(f"vsbase:{ctx.eval_key}:{metric}:{k}:{test}:{correction}:{baseline}",
              lambda: D.against_baseline(cmp, baseline).rename(columns={
                  "mean": f"mean {label}", "difference": "difference (run − baseline)", "ci_low": "95% CI low",
                  "ci_high": "95% CI high", "effect_size": "effect size dz", "p_value": "p-value",
                  "p_adjusted": "p adjusted"}))
st.caption("Against the baseline (wins/ties/losses: queries where the run beats / equals / loses to the baseline; "
           f"95% CI of the difference: percentile bootstrap, {S.N_RESAMPLES} paired resamples, seeded)")
st.dataframe(T.display_table(rows), hide_index=True, key="cmp_table")

# ---------------------------------------------------------------- all runs at once
st.subheader("All runs at once: Tukey's HSD")
design = st.selectbox("Design", list(HSD_DESIGNS), format_func=HSD_DESIGNS.get, key="cmp_hsd_design",
                      help="Paired: queries are blocks (two-way ANOVA error), the design of the paired tests above. "
                           "Independent: the runs' values as independent groups (scipy.stats.tukey_hsd), as ranx.")
hsd = A.hsd(ctx, metric, k, design)
if hsd.ok:
    st.dataframe(T.display_table(hsd.value[HSD_SHOWN].rename(columns={
        "diff": "difference (B − A)", "ci_low": "95% CI low", "ci_high": "95% CI high", "statistic": "q",
        "p_value": "p-value"})), hide_index=True, key="cmp_hsd")
    st.caption("Every pair of runs tested at once with the studentized range q; the p-values hold a family-wise "
               "error rate of 0.05 over all the pairs of this metric@k (no further correction); the intervals are "
               "simultaneous. Only queries with a value for every run take part (n).")
else:
    ui.show_error(hsd.error, prefix="Tukey's HSD failed")

# ---------------------------------------------------------------- one pair, per query
st.subheader("Per query: run A vs run B")
run_a = baseline
others = [r for r in runs if r != run_a]
c1, c2 = st.columns(2)
with c1:
    st.caption("Run A (x axis) = the baseline")
    st.text(run_a)
with c2:
    run_b = ui.bound_selectbox("Run B (y axis)", others, S.SEL_RUN_B, scope="compare")
pf = S.memo(f"pair:{ctx.eval_key}:{metric}:{k}:{run_a}:{run_b}",
            lambda: D.pair_frame(S.metric_slice(ctx, metric, k), metric=metric, k=k, run_a=run_a, run_b=run_b))
w, t, lo = S.memo(f"wtl:{ctx.eval_key}:{metric}:{k}:{run_a}:{run_b}", lambda: win_tie_loss(pf["a"], pf["b"]))
m1, m2, m3 = st.columns(3)
m1.metric("B wins", w)
m2.metric("ties", t)
m3.metric("B loses", lo)
st.caption("Counts of queries where run B's value is above / equal to / below run A's.")
s1, s2 = st.columns([3, 2])
with s1:
    pair_key = f"{ctx.eval_key}:{metric}:{k}:{run_a}:{run_b}"
    st.plotly_chart(S.memo("fig:scatter:" + pair_key,
                           lambda: charts.pair_scatter(pf, run_a=run_a, run_b=run_b, metric_label=label)),
                    key="cmp_scatter", on_select=on_point_selected, selection_mode="points")
    st.caption("Points above the diagonal: B is better on that query. Click a point to open its drill-down.")
with s2:
    st.plotly_chart(S.memo("fig:hist:" + pair_key,
                           lambda: charts.diff_histogram(pf, run_a=run_a, run_b=run_b, metric_label=label)),
                    key="cmp_hist")

# ---------------------------------------------------------------- drill-down by select box
worst = S.memo(f"worst:{ctx.eval_key}:{metric}:{k}:{run_a}:{run_b}",
               lambda: pf.sort_values(["difference", "query_id"], kind="mergesort")["query_id"].tolist()[:2000])
c1, c2 = st.columns([3, 1])
with c1:
    current = st.session_state.get(S.SEL_QUERY)
    if current is not None and current not in worst and current in S.memo(
            f"pairids:{ctx.eval_key}:{metric}:{k}:{run_a}:{run_b}", lambda: set(pf["query_id"])):
        worst = [current, *worst]
    ui.bound_selectbox("Query (sorted by B − A, worst first; up to 2,000)", worst, S.SEL_QUERY, scope="compare")
with c2:
    st.write("")
    if st.button("Open its drill-down", key="cmp_open", type="primary"):
        st.session_state[S.SEL_RUN_A] = run_a
        st.session_state[S.SEL_RUN_B] = run_b
        st.switch_page(ui.PAGES["queries"])

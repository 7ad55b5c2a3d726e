"""Domains page: each run per domain, significance against a baseline per domain, domain sizes."""

from __future__ import annotations

import streamlit as st

from dashboard import analysis as A
from dashboard import domain_charts as charts
from dashboard import drilldown as D
from dashboard import persist as P
from dashboard import reproduce as R
from dashboard import state as S
from dashboard import tables as T
from dashboard import ui
from dashboard import versions as VS
from evalcore import workspace as W
from evalcore.defaults import MIN_DOMAIN_QUERIES
from evalcore.errors import EvalcoreError
from evalcore.workspace import sidechecks

TESTS, CORRECTIONS = ui.TESTS, ui.CORRECTIONS


def own_domains(ctx: S.Context) -> bool:
    """Whether the ground truth (a file one; any of its aspects) has domains of its own (a domain column)."""
    gt = ctx.ws.ground_truth
    if gt is None or gt.kind == "reference":
        return False
    try:
        return any(sidechecks.own_domains(W.load_ground_truth(gt, a)) for a in (ctx.aspects or (None,)))
    except EvalcoreError:
        return False


ui.page_setup()
st.title("Domains")
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)
runs = ctx.run_names
m0, k0 = S.metric_k_pairs(ctx)[0]  # (the queries of one metric@k: every evaluated query, for every run)
sizes = S.memo("dsizes:" + ctx.eval_key, lambda: D.domain_sizes(S.metric_slice(ctx, m0, k0)))
if (sizes["domain"] == "(none)").all():
    if ctx.domain_mismatch:  # a mapping is loaded, but names none of these queries
        ui.show_warning(f"The queries have no domain: {ctx.domain_mismatch}. Check the ids of the domain mapping "
                        "file on the Data page.")
    else:
        st.info("The queries have no domain. Give a ground truth with domains (e.g. a graded JSON file with a domain "
                "per query) or a domain mapping file on the Data page.", icon=":material/info:")
    st.stop()

shown = ui.runs_shown(ctx, runs, scope="domains", label="Runs shown")
if not shown:
    st.info("Choose the runs to show.", icon=":material/info:")
    st.stop()
# tested against the baseline: the shown runs that tests consider (enough coverage, the aspect compared)
compared = [r for r in S.comparable_runs(ctx, aspect=st.session_state.get(S.SEL_ASPECT)) if r in set(shown)]
c1, c2, c3, c4, c5 = st.columns(5)
metric, k = ui.metric_k_picker(ctx, "domains", columns=(c1, c2))
with c3:
    # a baseline not among the runs shown here (an earlier checkpoint chosen on the Overview...): another one shown,
    # the user's choice kept for the other pages until one is chosen here
    baseline = ui.bound_selectbox("Baseline", compared or shown, S.SEL_BASELINE, scope="domains", keep_other=True)
with c4:
    test = ui.test_picker("domains")
with c5:  # which domains are tested is the family of the correction: kept with the shared selections
    if "dom_minq" not in st.session_state:
        saved = st.session_state.get(S.SEL_DOM_MIN_QUERIES)
        st.session_state["dom_minq"] = saved if isinstance(saved, int) and saved >= 2 else MIN_DOMAIN_QUERIES
    min_q = st.number_input("Minimum queries to test a domain", min_value=2, step=1, key="dom_minq")
    st.session_state[S.SEL_DOM_MIN_QUERIES] = int(min_q)
    P.publish()
label = ui.label_of(metric, k)
higher = W.higher_is_better(metric)

dkey = f"{ctx.eval_key}:{metric}:{k}:{shown}:{S.N_RESAMPLES}:{S.CI_SEED}"  # (the intervals' resamples and seed)
dom = S.memo(f"dom:{dkey}", lambda: D.domain_frame(
    S.metric_slice(ctx, metric, k), metric=metric, k=k, n_resamples=S.N_RESAMPLES, seed=S.CI_SEED, runs=shown))

st.subheader(f"{label} per domain")
skey, looks = VS.drawn_styles(ctx, shown, S.low_coverage(ctx))  # each run in its colour of the Overview's curves
ui.chart(S.memo(f"fig:dombars:{dkey}:{skey}", lambda: charts.domain_bars(dom, metric_label=label, runs=shown,
                                                                         higher_is_better=higher, styles=looks)),
         key="dom_bars", name="per_domain_bars")
st.caption(("Bars: mean per domain; error bars: " if len(sizes) <= charts.DOMAIN_BARS_UP_TO else
            "One row per domain, a dot per run: the mean; whiskers: ") + f"{S.ci_caption()} (none where a domain has "
           "fewer than 2 queries). " + R.intervals_caption(by_domain=True, sample_size=ctx.settings.sample_size,
                                                  sample_seed=ctx.settings.seed,
                                                  domain_mapping=ctx.ws.domain_blob is not None)
           + ("" if higher else f" Lower is better for {ui.md_escape(label)}: the shortest bar is the best; on "
                                "the heatmap the brightest cell is the best."))
h1, h2 = st.columns([3, 1])
with h1:
    ui.chart(S.memo(f"fig:domheat:{dkey}", lambda: charts.domain_heatmap(
        dom, metric_label=label, runs=shown, higher_is_better=higher)), key="dom_heatmap", name="per_domain_heatmap")
with h2:
    st.caption("Domain sizes (evaluated queries)")
    st.dataframe(sizes, hide_index=True, key="dom_sizes")
    none = sizes.loc[sizes["domain"] == "(none)", "n_queries"]
    if len(none):  # (the queries a domain mapping leaves out: said when it was loaded, and here)
        blob = ctx.ws.domain_blob
        # (with a domain column of its own in the ground truth, the mapping overrides it per query and the queries it
        # does not list keep theirs: those of '(none)' have a domain in neither)
        gt = ctx.ws.ground_truth
        both = blob is not None and gt is not None and S.memo("gtdomains:" + gt.universe_key(), lambda: own_domains(ctx))
        st.caption(ui.md_escape(f"(none): {ui.plural(int(none.iloc[0]), 'query', 'queries')} without a domain"
                                + (f" in {blob.name}" if blob is not None else "")
                                + (" nor in the ground truth's own domain column" if both else "")))
small = sizes[sizes["n_queries"] < min_q]
if len(small) == 1:
    row = small.iloc[0]
    ui.show_warning(f"domain {row['domain']} has only {ui.plural(int(row['n_queries']), 'query', 'queries')} (fewer "
                    f"than {min_q}): too small to test; its means are shown but not tested")
elif len(small):  # one message, however many (40 domains of a few queries each made a wall of warnings)
    ui.show_warning(f"{len(small)} domains have fewer than {min_q} queries: " + ", ".join(
        f"{row.domain} ({ui.plural(int(row.n_queries), 'query', 'queries')})" for row in small.itertuples(index=False))
        + "; too small to test, their means are shown but not tested")

wide = dom.pivot(index="domain", columns="run", values="aggregate").reindex(columns=shown)
st.caption("Mean per run and domain (n = queries); a count's total, gm_map's geometric mean")
ui.dataframe(T.display_table(wide.join(sizes.set_index("domain"))), key="dom_table", pin=("_index",))

if len(compared) >= 2 and baseline in compared:
    correction = ui.correction_picker("domains")
    out = A.domain_comparison(ctx, metric, k, baseline, test, correction, int(min_q), runs=compared)
    st.subheader("Significance against the baseline, per domain")
    if not out.ok:
        ui.show_error(out.error, prefix="Comparison failed")
    else:
        cd = out.value
        cd = cd.assign(domain=cd["domain"].replace("", "(none)"))
        better, worse = T.better_worse(cd["wins"], cd["losses"], higher_is_better=higher)
        cd = cd.assign(wins=better, losses=worse, note=T.ci_test_notes(cd["note"], cd["ci_low"], cd["ci_high"],
                                                                       cd["p_value"], cd["significant"]))
        tested = cd[["domain", "run_b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_value", "p_adjusted",
                    "significant", "wins", "ties", "losses", "note"]].rename(columns={
                        "run_b": "run", "mean_a": "baseline mean", "mean_b": "run mean", "diff": "run − baseline"})
        ui.dataframe(T.display_table(tested), hide_index=True, key="dom_significance", pin=("domain", "run"))
        st.caption(f"{TESTS[test]} per domain, {CORRECTIONS[correction]} correction across every tested "
                   "domain × run. Domains with fewer queries than the minimum are not tested (note; – in "
                   f"their CI and p-value columns). 95% CI: percentile bootstrap, {S.TEST_RESAMPLES:,} resamples of "
                   f"the queries (seed {S.CI_SEED}), the same for every pair: neither the test nor corrected, it "
                   "can exclude 0 next to a domain that is not significant (the note says why). Reproduce with "
                   + R.domain_tests_command(metric, k, baseline=baseline, runs=compared, test=test,
                                            correction=correction, min_queries=int(min_q))
                   + " (per_query.csv: the Overview's per-query table)."
                   + ("" if higher else f" Lower is better for {ui.md_escape(label)}: a negative run − baseline "
                                        "means the run is better; wins / losses count the queries where the run is "
                                        "better / worse."))
        overall = A.comparison(ctx, metric, k, test, correction, runs=compared)
        if overall.ok:
            flips = D.domain_flips(overall.value, cd, baseline)
            if len(flips):
                st.caption(ui.md_escape(
                    f"Domains that disagree with the overall result (significant, opposite sign): {label} of the run − "
                    f"the baseline ({baseline}), over every evaluated query (overall difference) and over the "
                    "domain's queries (domain difference)"))
                ui.dataframe(flips, hide_index=True, key="dom_flips", pin=("run", "domain"))
            else:
                st.caption("No domain disagrees with the overall result (none is significant with the opposite sign).")

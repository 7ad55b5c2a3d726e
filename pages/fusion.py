"""Fusion page: fuse loaded runs (weighted RRF of Cormack et al., SIGIR 2009, CombSUM, CombMNZ, ...), search the weights,
add the result as a run everywhere."""

from __future__ import annotations

import dataclasses

import streamlit as st

from dashboard import analysis as A
from dashboard import charts, legacy, ui
from dashboard import kept as K
from dashboard import persist as P
from dashboard import reproduce as R
from dashboard import state as S
from dashboard import tables as T
from dashboard import versions as VS
from evalcore import defaults as DEF
from evalcore import workspace as W
from evalcore.fusion import METHODS, NORMS, RANK_METHODS, WEIGHTED_METHODS
from evalcore.metrics import DESCRIPTIVE, metric_base

METHOD_LABELS = {"rrf": "weighted RRF", "combsum": "CombSUM", "combmnz": "CombMNZ", "wsum": "weighted sum",
                 "isr": "ISR (inverse square rank)", "bordafuse": "BordaFuse"}
STRATEGIES = {"grid": "grid on the simplex", "random": "random (Dirichlet, seeded)"}


def use_weights(uids: list[str], weights: list[float]) -> None:
    """Button callback: put the searched weights into the weight inputs (runs before the widgets exist)."""
    for uid, w in zip(uids, weights, strict=True):
        st.session_state[f"fu_w_{uid}"] = st.session_state[f"fu_weight_{uid}"] = float(w)


#: What "Runs to fuse" shows until the user picks runs (:func:`dashboard.versions.default_fused`).
FOLLOWED = ("Until you pick runs: the latest version of each model and the runs without a model (three at most; "
            "a single model's latest versions when it is the only one), among the runs judged against one "
            "ground-truth aspect with enough coverage. A checkpoint added takes its model's place; runs you pick are "
            "kept (a reload, a restart).")


def forget_runs() -> None:
    """``on_click``: forget the runs to fuse the user picked: the page follows the latest versions again."""
    setup = K.saved(P.SEL_FUSION)
    if "runs" in setup:
        st.session_state[P.SEL_FUSION] = {k: v for k, v in setup.items() if k != "runs"}
    st.session_state.pop("fu_runs", None)


def fuse_again(old: list[list[str]]) -> None:
    """``on_click``: the runs an older dashboard kept (:mod:`dashboard.legacy`) as the user's pick."""
    st.session_state[P.SEL_FUSION] = {**K.saved(P.SEL_FUSION), "runs": list(old[0])}
    st.session_state.pop("fu_runs", None)


def keep_weight(uid: str) -> None:
    """A weight input changed: keep its value where a run without the inputs (an unweighted method) leaves it."""
    st.session_state[f"fu_weight_{uid}"] = st.session_state[f"fu_w_{uid}"]


ui.page_setup()
st.title("Fusion")
st.caption("Per query, the runs' lists are fused into one: "
           + "; ".join(f"{METHOD_LABELS[m]} = {f}" for m, f in METHODS.items())
           + ". rank_S = position in run S (the settings' tie rule); s_S = score after the normalisation; a run "
             "that does not list an item adds nothing for it (BordaFuse: the unranked points). With top-N, only "
             "the first N items of each run take part. Equal fused scores are ordered by the tie rule.")
slot = st.empty()
ctx = S.context(slot)
ui.need_evaluation(ctx)
ws = ctx.ws
loaded = [r for r in ws.runs if r.name in ctx.runs]
if not loaded:
    st.stop()
by_name = {r.name: r for r in loaded}
like = S.comparable_runs(ctx, aspect=st.session_state.get(S.SEL_ASPECT))  # one aspect, enough coverage
# the page's set-up is the shared selection S.SEL_FUSION (another page, a reload, a new tab): each widget starts at
# its kept value while that is still valid (runs still there, options offered, numbers in range), else its default
FU = P.SEL_FUSION
gone = K.gone(FU, "runs", by_name)  # runs the user chose, removed since (said below, as on the Versions page)
if "fu_runs" in st.session_state:  # a run removed meanwhile leaves the choice
    st.session_state["fu_runs"] = [n for n in st.session_state["fu_runs"] if n in by_name]
# by default the latest version of each model and the runs without one, three at most (not a model's first three
# checkpoints), followed until the user picks runs: a checkpoint logged meanwhile takes its model's place
K.start("fu_runs", FU, "runs", VS.default_fused([r.name for r in loaded if r.kind != "fused" and r.name in like],
                                                loaded),
        bool, clean=lambda v: [n for n in v if n in by_name] if isinstance(v, list) else None,  # runs gone leave it
        follow=True)
following = (FU, "runs") in st.session_state[K.FOLLOWING]
if gone:
    ui.no_longer_offered("Runs to fuse", gone, default_again=following)
names = st.multiselect("Runs to fuse", list(by_name), key="fu_runs", on_change=K.chose, args=("fu_runs", FU, "runs"),
                       help=FOLLOWED)
ui.say_legacy((legacy.FUSION_RUNS,), (list(names),), chosen=not following, what="The runs to fuse",
              label=str, restore=fuse_again, button="Fuse them again", key="fu_legacy")  # (runs gone: trimmed before)
if following:
    st.caption(FOLLOWED)
else:
    st.button("Follow the latest versions", key="fu_follow", on_click=forget_runs, icon=":material/update:",
              help="Forgets the runs you picked. " + FOLLOWED)
mixed = list(dict.fromkeys(S.aspect_of(ctx, n) for n in names))
fused_aspect = mixed[0] if mixed else None
if len(mixed) > 1:  # e.g. seed 001 §7: spaces tuned on content and vibes, fused and judged on overall similarity
    st.info("These runs are evaluated against different ground-truth aspects (" + "; ".join(
        f"{ui.md_escape(n)}: {ui.md_escape(str(S.aspect_of(ctx, n)))}" for n in names) + "). Choose the aspect the "
            "fused run is judged against; ★ compares it with the runs of that aspect.", icon=":material/call_split:")
    K.start("fu_aspect", FU, "aspect", mixed[0], K.one_of(mixed))
    fused_aspect = st.selectbox("Judge the fused run against the aspect", mixed, format_func=str, key="fu_aspect")
    K.keep(FU, aspect=fused_aspect)
cut = A.cut_embedding_runs(ctx, names)
if cut:  # seed 001 §7.2 fuses whole rankings
    st.info(f"The fusion sees the top {ctx.settings.depth} of the embedding runs "
            + ", ".join(ui.md_escape(n) for n in cut) + f" (the settings' ranking depth), not their whole rankings "
            f"({max(cut.values())} items): an item ranked deeper adds nothing to its fused score. A ranking depth of "
            f"{max(cut.values())} (Data page, Settings) fuses whole rankings.", icon=":material/vertical_align_top:")
low = [n for n in names if n in set(S.low_coverage(ctx))]
if low:
    ui.show_warning("Low coverage among the fused runs: " + ", ".join(low) + ".")
c1, c2 = st.columns(2)
K.start("fu_method", FU, "method", next(iter(METHODS)), K.one_of(METHODS))
K.start("fu_norm", FU, "norm", "none", K.one_of(NORMS))
with c1:
    method = st.selectbox("Method", list(METHODS), format_func=METHOD_LABELS.get, key="fu_method")
with c2:
    norm = st.selectbox("Score normalisation", list(NORMS), key="fu_norm", disabled=method in RANK_METHODS,
                        help="Per query and run, before a score-based method: " + "; ".join(
                            f"{n}: {f}" for n, f in NORMS.items() if n != "none")
                        + ". Rank-based methods (RRF, ISR, BordaFuse) use ranks only.")
kept_weights = K.saved(FU).get("weights")
kept_weights = kept_weights if isinstance(kept_weights, dict) else {}
K.keep(FU, runs=list(names), method=method, norm=norm)
norm = "none" if method in RANK_METHODS else norm
weights = []
if names and method in WEIGHTED_METHODS:
    cols = st.columns(min(len(names), 4))
    for i, n in enumerate(names):
        with cols[i % len(cols)]:
            st.text(n)
            ruid = by_name[n].uid
            # the value lives in a key of its own: a run of an unweighted method (no inputs drawn) made Streamlit
            # drop the widget's, and back on RRF every weight read 0.00 ("at least one weight must be positive")
            # (entering the page after a reload: the weight kept for this run, when it is one)
            w0 = kept_weights.get(n)
            st.session_state[f"fu_w_{ruid}"] = st.session_state.setdefault(
                f"fu_weight_{ruid}", float(w0) if K.number(0.0)(w0) else 1.0)
            weights.append(st.number_input("Weight", min_value=0.0, step=0.1, key=f"fu_w_{ruid}",
                                           on_change=keep_weight, args=(ruid,)))
if weights:
    K.keep(FU, weights={**{k: w for k, w in kept_weights.items() if k in by_name},
                        **{n: float(w) for n, w in zip(names, weights, strict=True)}})
K.start("fu_c", FU, "c", 60.0, lambda v: isinstance(v, float) and K.number(0.0)(v))
K.start("fu_topn", FU, "top_n", 0, K.number(0, integer=True))
K.start("fu_name", FU, "name", "", K.text)
c1, c2, c3 = st.columns(3)
with c1:
    c = st.number_input("c (RRF)", min_value=0.0, step=1.0, key="fu_c", disabled=method != "rrf")
with c2:
    top_n = st.number_input("Top-N per run (0 = every item listed)", min_value=0, step=10, key="fu_topn")
with c3:
    name = st.text_input("Name of the fused run", key="fu_name", placeholder="the method's name")
K.keep(FU, c=float(c), top_n=int(top_n), name=name)
if not names:
    st.info("Choose at least one run.", icon=":material/info:")
    st.stop()
weights = weights or [1.0] * len(names)
if not any(w > 0 for w in weights):
    ui.show_error("at least one weight must be positive", prefix="Invalid weights")
    st.stop()
uids = [by_name[n].uid for n in names]
spec = dict(c=c, top_n=int(top_n) or None, method=method, norm=norm)

# preview: the fused run evaluated next to its inputs (a temporary workspace; every step cached)
preview_ws, uid = W.add_fused_run(ws, uids, weights, name=ws.unique_name(name.strip() or method),
                                  aspect=fused_aspect, **spec)
keep = set(uids) | {uid}
preview_ws = dataclasses.replace(preview_ws, runs=tuple(r for r in preview_ws.runs if r.uid in keep))
pctx = S.context(ws=preview_ws)
if uid in pctx.run_errors:
    ui.show_error(pctx.run_errors[uid], prefix="Fusion failed")
    st.stop()
if not pctx.ready:
    ui.show_error(pctx.eval_error or "evaluation failed", prefix="Fusion failed")
    st.stop()
for w in pctx.run_warnings.get(uid, ()):
    ui.show_warning(w)
for w in pctx.eval_warnings:  # what its evaluation says of the fused run (a shallow one); its inputs': said on top
    if w not in ctx.eval_warnings:
        ui.show_warning(w)
summ = S.summary(pctx)
metric, k = ui.metric_k_picker(pctx, "fusion")
label = ui.label_of(metric, k)
text, best = T.overview_table(summ, runs=pctx.run_names, eligible=S.comparable_runs(pctx, mix=True),
                              groups={r: S.aspect_of(pctx, r) for r in pctx.run_names})
st.subheader("The fused run next to its inputs")
several = len(S.aspects_in_use(pctx)) > 1
if several:
    text = text.copy()
    text.insert(0, "aspect", [str(S.aspect_of(pctx, r)) for r in text.index])
st.dataframe(text, key="fu_table", height=ui.rows_height(len(text)),
             column_config={"_index": st.column_config.TextColumn("run", pinned=True)})
st.caption("★ = best of the column" + (" among the runs of the same aspect" if several else "")
           + f". Mean [{S.ci_caption()}] over {ui.md_escape(ui.evaluated_text(ctx))}.")
sel = summ[(summ["metric"].astype(str) == metric) & (summ["k"] == k)]
st.caption(ui.md_escape(f"{label} (the Metric and Cutoff k above) of each run: mean over its n queries and the "
                        "95% CI's bounds (ci_low, ci_high)."))
ui.dataframe(T.display_table(sel[["run", "n", "mean", "ci_low", "ci_high"]]), hide_index=True, key="fu_metric", pin=("run",))

locked = P.locked()  # a folder this user cannot write: the fused run is not added there (the Data page offers a copy)
if locked is not None:
    st.caption(ui.md_escape(f"Not added to every page: {P.locked_text(locked)}."))
if st.button("Add the fused run to every page", type="primary", key="fu_add", disabled=locked is not None):
    in_names = [ws.run_by_uid(u).name for u in uids]
    done = P.write(lambda store: store.add_fused_run(
        W.free_name(name.strip() or method, store.run_names()), in_names, weights=weights, c=c,
        top_n=spec["top_n"], method=method, norm=norm, aspect=fused_aspect))
    if done.ok:
        st.success("Added and saved in the workspace; it now appears on every page (remove or rename it on the Data "
                   "page)." + (f" The demo is read-only: it was saved in a copy of it, {ui.md_escape(done.created)}."
                               if done.created else ""), icon=":material/check_circle:")
    else:
        ui.show_error(done.error, prefix="Not added")

# ---------------------------------------------------------------- weight search
st.subheader("Search the weights")
if method not in WEIGHTED_METHODS or len(names) < 2:
    st.caption("The weights of two or more runs can be searched for weighted RRF and the weighted sum.")
    st.stop()
if metric_base(metric) in DESCRIPTIVE:
    st.caption(f"{label} describes the lists (a count), it has no better value: choose a measure of quality above "
               "to search the weights on.")
    st.stop()
lower = not W.higher_is_better(metric)
against = f" against the aspect {ui.md_escape(str(fused_aspect))}" if len(ctx.aspects) > 1 else ""
st.caption(f"{'Minimises' if lower else 'Maximises'} the mean {label}{' (lower is better)' if lower else ''}{against} "
           "over weight vectors on the simplex (weights ≥ 0 summing to 1). "
           "Weights tuned on the queries they are evaluated on overfit them: tune on one split and read the "
           "result on the other.")
STEPS = [0.5, 0.25, 0.2, 0.1, 0.05]
K.start("fu_strategy", FU, "strategy", DEF.FUSION_STRATEGY, K.one_of(STRATEGIES))
K.start("fu_seed", FU, "seed", DEF.SEED, K.number(0, integer=True))
K.start("fu_split", FU, "split", True, K.flag)
K.start("fu_fraction", FU, "fraction", DEF.DASHBOARD_TUNE_FRACTION,
        lambda v: isinstance(v, float) and K.number(0.1, 0.9)(v))
K.start("fu_search", FU, "search", False, K.flag)
c1, c2, c3, c4 = st.columns(4)
with c1:
    strategy = st.selectbox("Search", list(STRATEGIES), format_func=STRATEGIES.get, key="fu_strategy")
with c2:
    if strategy == "grid":  # (a widget is started only in a run that draws it: one set undrawn loses its value)
        K.start("fu_step", FU, "step", DEF.FUSION_STEP, K.one_of(STEPS))
        step = st.selectbox("Grid step", STEPS, key="fu_step")
        n_trials = DEF.FUSION_TRIALS
        K.keep(FU, step=step)
    else:
        K.start("fu_trials", FU, "trials", DEF.FUSION_TRIALS, K.number(1, 2000, integer=True))
        n_trials = int(st.number_input("Trials", min_value=1, max_value=2000, step=10, key="fu_trials"))
        step = DEF.FUSION_STEP
        K.keep(FU, trials=n_trials)
with c3:
    seed = int(st.number_input("Seed", min_value=0, step=1, key="fu_seed",
                               help=f"Seed of the split and of the random trials; {DEF.SEED} as `evalcore fuse "
                                    "--seed`, so the command line's defaults repeat this search"))
with c4:
    split = st.toggle("Tune on a split of the queries", key="fu_split")
    fraction = st.slider("Share tuned on", 0.1, 0.9, step=0.05, key="fu_fraction", disabled=not split)
search = st.toggle("Run the search", key="fu_search")
K.keep(FU, strategy=strategy, seed=seed, split=split, fraction=float(fraction), search=search)
if not search:
    st.stop()
found = A.weight_search(ctx, names, metric=metric, k=k, strategy=strategy, step=step, n_trials=n_trials, seed=seed,
                        tune_fraction=fraction if split else None, progress_slot=st.empty(), aspect=fused_aspect,
                        **spec)
if not found.ok:
    ui.show_error(found.error, prefix="Weight search failed")
    if found.error == S.CANCELLED:
        st.button("Retry", on_click=S.retry, key="fu_retry", icon=":material/refresh:")
    st.stop()
for w in found.warnings:
    ui.show_warning(w)
res = found.value
m1, m2, m3 = st.columns(3)
m1.metric(f"tuned on {res.n_tune} queries", f"{res.value_tune:.4f}")
m2.metric(f"held out: {res.n_test} queries", "–" if not res.n_test else f"{res.value_test:.4f}")
m3.metric("trials", len(res.trials))
ui.dataframe(T.display_table(res.trials[res.trials["best"]].drop(columns=["best"])), hide_index=True,
             key="fu_best")
ui.chart(charts.weight_trials(res.trials, metric_label=label), key="fu_trials_chart", name="fusion_weight_trials")
st.caption(R.fusion_caption(
    method=method, norm=norm, strategy=strategy, step=step, n_trials=n_trials, seed=seed,
    fraction=fraction if split else None, metric_label=label, ties=ctx.settings.ties,
    rel_threshold=ctx.settings.rel_threshold, c=c, top_n=spec["top_n"], sample_size=ctx.settings.sample_size,
    sample_seed=ctx.settings.seed, no_relevant=ctx.settings.no_relevant, judged_only=ctx.settings.judged_only,
    aspect=fused_aspect if len(ctx.aspects) > 1 else None, ground_truth=R.ground_truth_kind(ctx.ws.ground_truth),
    reference_mode=ctx.settings.gt_mode, reference_depth=ctx.settings.gt_depth,
    embedding_depth=ctx.settings.depth if any(W.has_embeddings(by_name[n]) for n in names) else None))
st.button("Use these weights", key="fu_use", on_click=use_weights,
          args=(uids, [res.weights[n] for n in names]))

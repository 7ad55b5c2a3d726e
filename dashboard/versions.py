"""The Versions page's data: a model's version series, its curve, its tests, what changed (cached).

Every number comes from :mod:`evalcore.workspace.versions` over the evaluation's per-query
table; this module only caches those calls (``st.cache_data`` keyed by content keys, behind
the per-session memo, like :mod:`dashboard.state`) and lays their results out for display.

A run's place in a series is its :class:`~evalcore.workspace.RunSource` ``model``,
``version`` and ``step`` (the run info of the Data page and of the persistent store). Runs
left out for low coverage (:func:`dashboard.state.excluded_runs`) are left out of the series,
as they are out of every test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dashboard import state as S
from dashboard import tables as T
from dashboard.cache import kept_outcome
from dashboard.runstyles import RunStyle, model_styles, run_styles
from evalcore import workspace as W
from evalcore.workspace import pairstore

#: Set when a query of "what changed" is chosen: the page then opens the Queries page.
GOTO = "versions_goto_query"
#: Rows of the most-improved and most-regressed lists by default.
TOP = 10

#: How to record versions, shown when no model has two (plain text, no user data).
PYTHON_SNIPPET = """from evalcore import Workspace

ws = Workspace.open("my-workspace")          # EVALCORE_WORKSPACE=my-workspace streamlit run app.py
for epoch in range(1, 26):
    ...                                      # train, then embed the validation items
    ws.add_embedding_run(f"encoder epoch {epoch}", embeddings, ids,
                         model="encoder", version=f"epoch {epoch}", step=epoch)"""


@dataclass(frozen=True)
class Series:
    """The version series of the evaluated runs (:func:`series`)."""

    table: pd.DataFrame  # evalcore.workspace.version_series
    singles: tuple[str, ...]  # models with one evaluated version only
    left_out: tuple[str, ...]  # runs of a model left out for low coverage
    key: str  # content key of the series (its runs and their places)
    warnings: tuple[str, ...] = ()  # the engine's (model labels differing only in case), for the page to show

    def models(self) -> list[str]:
        return W.version_models(self.table)


def run_info(ctx: S.Context, *, exclude: Sequence[str] = ()) -> pd.DataFrame:
    """``name, model, version, step, created_at`` of the evaluated runs (``created_at``: the order in
    which they were loaded), without ``exclude``."""
    evaluated = set(ctx.run_names) - set(exclude)
    rows = [(r.name, r.model, r.version, r.step, f"{i:09d}") for i, r in enumerate(ctx.ws.runs) if r.name in evaluated]
    frame = pd.DataFrame(rows, columns=["name", "model", "version", "step", "created_at"])
    frame["step"] = frame["step"].astype(float)
    return frame


def drawn_styles(ctx: S.Context, runs: Sequence[str], flagged: Sequence[str] = ()) -> tuple[str, dict[str, RunStyle]]:
    """(a key of, the look of) each of ``runs`` drawn as a line (:func:`dashboard.runstyles.run_styles`): a model's
    versions along one hue, light to dark in version order, from the runs' run info; memoized. The key changes
    with the run info (a model or step set on the Data page), which the evaluation's key does not hold."""
    info = run_info(ctx)
    key = "styles:" + S._key(info.astype(str).to_numpy().tolist(), [str(r) for r in runs], sorted(map(str, flagged)))
    return key, S.memo(key, lambda: run_styles(list(runs), info, flagged=flagged))


def model_looks(ctx: S.Context) -> dict[str, RunStyle]:
    """Each model's look on "Every model on one chart" (:func:`dashboard.runstyles.model_styles`), ranked among the
    models of every evaluated run as :func:`drawn_styles` ranks them: a model has the hue of its versions elsewhere."""
    info = run_info(ctx)
    models = info[info["model"].notna() & (info["model"].astype(str) != "")]
    key = "modelstyles:" + S._key(models.astype(str).to_numpy().tolist())
    return S.memo(key, lambda: model_styles(W.version_models(quiet_series(models)) if len(models) else []))


def series(ctx: S.Context) -> Series:
    """The models with two or more evaluated versions, each in version order (memoized)."""
    excluded = S.excluded_runs(ctx)
    info = run_info(ctx, exclude=excluded)
    key = S._key("verseries", ctx.eval_key, info.astype(str).to_numpy().tolist())
    placed = [r.name for r in ctx.ws.runs if r.model and r.name in set(excluded)]

    def compute() -> Series:
        every, told = W.capture(W.version_series, info, min_versions=1)
        size = every.groupby("model", sort=False)["run"].transform("size").to_numpy()
        singles = tuple(every.loc[size == 1, "model"].astype(str))
        return Series(every[size >= 2].reset_index(drop=True), singles, tuple(placed), key, tuple(told))

    return S.memo(key, compute)


def quiet_series(info: pd.DataFrame) -> pd.DataFrame:
    """:func:`evalcore.workspace.version_series` of ``info`` (every model, one version or more) for the pages that
    only draw or pick runs by it: its warnings (model labels differing only in case) are the Versions page's
    (:attr:`Series.warnings`) and the Data page's where a model label is saved, collected here rather than going to
    the server's log."""
    return W.capture(W.version_series, info, min_versions=1)[0]


def labels(rows: pd.DataFrame) -> list[str]:
    """One short text per version: its label, else its step, else its run's name (made unique)."""
    out = []
    for run, version, step in zip(rows["run"], rows["version"], rows["step"], strict=True):
        if isinstance(version, str) and version:
            out.append(version)
        elif pd.notna(step):
            out.append(f"step {step_text(step)}")
        else:
            out.append(str(run))
    seen = pd.Series(out).duplicated(keep=False).to_numpy()
    return [f"{t} ({r})" if dup else t for t, r, dup in zip(out, rows["run"], seen, strict=True)]


def step_text(step: float) -> str:
    s = float(step)
    return f"{int(s):,}" if s.is_integer() else f"{s:g}"


def version_names(sr: Series, model: str) -> dict[str, str]:
    """run -> its version's label, in version order (the pickers' texts)."""
    rows = sr.table[sr.table["model"] == model]
    return dict(zip(rows["run"].astype(str), labels(rows), strict=True))


# ------------------------------------------------------------------------------------------ cached steps


def _kept(kind: str, key: str, compute: Callable[[], S.Outcome]) -> S.Outcome:
    """:func:`dashboard.cache.kept_outcome`: a restarted server shows a model's curve and tests the next morning
    without testing 2 x 121 pairs again or drawing their resamples (seconds on a shared machine). ``key`` names every
    input and option: the dashboard's code is not in the engine's fingerprint."""
    return kept_outcome(kind, key, compute)


@st.cache_data(show_spinner=False, max_entries=64)
def _c_curve(key: str, _table: Callable[[], pd.DataFrame], _series: pd.DataFrame, model: str, metric: str,
             k: int) -> S.Outcome:
    """:func:`evalcore.workspace.version_curve` of the metric@k slice ``_table()`` (built only when not kept)."""
    return _kept("version_curve", key, lambda: S._attempt(
        W.version_curve, _table(), _series, model=model, metric=metric, k=k, method=S.MEAN_CI,
        n_resamples=S.N_RESAMPLES, seed=S.CI_SEED))


@st.cache_data(show_spinner=False, max_entries=64)
def _c_tests(key: str, _table: Callable[[], pd.DataFrame], _series: pd.DataFrame, model: str, metric: str, k: int,
             reference: str | None, test: str, correction: str, against: str) -> S.Outcome:
    """One family of :func:`evalcore.workspace.version_tests` (``against``: ``"previous"`` or ``"reference"``) of
    the metric@k slice ``_table()`` (built only when not kept). Its pairs tested by an earlier server are not tested
    again (:func:`evalcore.workspace.pairstore.kept_pairs`): the first checkpoint added after a restart tests its
    two new pairs, not the model's every pair."""
    def compute() -> S.Outcome:
        with pairstore.kept_pairs():
            return S._attempt(
                W.version_tests, _table(), _series, model=model, metric=metric, k=k, reference=reference, test=test,
                correction=correction, n_resamples=S.TEST_RESAMPLES, seed=S.CI_SEED, ci_method=S.CI_METHOD,
                resampling=S.RESAMPLING, against=(against,))

    return _kept("version_tests", key, compute)


@st.cache_data(show_spinner=False, max_entries=64)
def _c_changes(key: str, _table: pd.DataFrame, metric: str, k: int, run_a: str, run_b: str, top: int) -> S.Outcome:
    return S._attempt(W.version_changes, _table, metric=metric, k=k, run_a=run_a, run_b=run_b, top=top)


@dataclass(frozen=True)
class Curve:
    """The curve of one model at one metric@k: the engine's frame, its x values and labels."""

    frame: pd.DataFrame  # evalcore.workspace.version_curve
    x: list  # steps (numeric axis) or version labels (categorical)
    labels: list[str]
    by_step: bool  # every version has a step: x is the step


def curve(ctx: S.Context, sr: Series, model: str, metric: str, k: int) -> S.Outcome:
    """Mean and 95% CI of metric@k at each version of ``model`` (``Outcome`` of a :class:`Curve`)."""
    key = S._key("vercurve", sr.key, model, metric, int(k), S.MEAN_CI, S.N_RESAMPLES, S.CI_SEED)

    def compute() -> S.Outcome:
        out = _c_curve(key, lambda: S.metric_slice(ctx, metric, k), sr.table, model, metric, int(k))
        if not out.ok:
            return out
        frame = out.value
        steps = frame["step"]
        by_step = bool(steps.notna().all() and steps.is_unique)  # shared steps: one x per version instead
        names = labels(frame)
        return S.Outcome(Curve(frame, frame["step"].astype(float).tolist() if by_step else names, names, by_step))

    return S.memo(key, compute)


def tests(ctx: S.Context, sr: Series, model: str, metric: str, k: int, reference: str, test: str,
          correction: str) -> S.Outcome:
    """Each version against the previous one and against ``reference`` (``Outcome`` of the engine's frame).

    The two families are computed and kept on their own (each is its own correction family with its own
    resamples: :func:`evalcore.workspace.version_tests`' ``against``), so choosing another reference
    recomputes the tests against the reference only."""
    parts = []
    for against in W.AGAINST:
        ref = reference if against == "reference" else None  # the previous version's tests do not depend on it
        key = f"vertests-{against}:" + S._key(sr.key, model, metric, int(k), ref, test, correction, S.TEST_RESAMPLES,
                                              S.CI_METHOD, S.CI_SEED, S.RESAMPLING)
        out = S.memo(key, lambda key=key, against=against, ref=ref: _c_tests(
            key, lambda: S.metric_slice(ctx, metric, k), sr.table, model, metric, int(k), ref, test, correction,
            against))
        if not out.ok:
            return out
        parts.append(out)
    return S.Outcome(pd.concat([o.value for o in parts], ignore_index=True),
                     warnings=tuple(dict.fromkeys(w for o in parts for w in o.warnings)))


def changes(ctx: S.Context, metric: str, k: int, run_a: str, run_b: str, top: int = TOP) -> S.Outcome:
    """What changed from ``run_a`` to ``run_b`` (``Outcome`` of :class:`evalcore.workspace.VersionChanges`)."""
    key = S._key("verchanges", ctx.eval_key, metric, int(k), run_a, run_b, int(top))
    return S.memo(key, lambda: _c_changes(key, S.metric_slice(ctx, metric, k), metric, int(k), run_a, run_b,
                                          int(top)))


# ------------------------------------------------------------------------------------------ display


def unsure_order_text(why: str, runs: list[str], model: str) -> str:
    """The warning for :func:`evalcore.workspace.unsure_order`'s ``(why, runs)`` (``runs`` not empty)."""
    one = len(runs) == 1
    names = ", ".join(runs)
    if why.startswith("same "):
        key = why[len("same "):]
        then = "the version label, then the loading order" if key == "step" else "the loading order"
        head = f"{names} share a {key}, so their order among themselves follows {then}."
        fix = f"give each version of {model} its own {key}"
    else:
        head = (f"{names} {'has' if one else 'have'} no {why}, so {'it is' if one else 'they are'} placed after "
                f"the versions with one.")
        fix = f"give every version of {model} a {why}"
    return f"Order not certain: {head} The tests against the previous version follow this order: {fix} on the " \
           "Data page (run info)."


def tests_view(rows: pd.DataFrame, names: dict[str, str], against: str, *, higher_is_better: bool = True
               ) -> pd.DataFrame:
    """One family of :func:`tests` for display: version, against, difference, its CI, p adjusted, significant,
    then the means, wins/ties/losses (a win: a better value, :func:`dashboard.tables.wtl_cells`), effect size,
    raw p-value, n, note."""
    r = rows[rows["against"] == against]
    return pd.DataFrame({
        "version": [names.get(x, x) for x in r["run_b"].astype(str)],
        "against": [names.get(x, x) for x in r["run_a"].astype(str)],
        "difference": r["diff"].astype(float).to_numpy(),
        "95% CI (bootstrap)": T.ci_cells(r["ci_low"], r["ci_high"]),
        "p adjusted": r["p_adjusted"].to_numpy(),
        "significant": r["significant"].astype(bool).to_numpy(),
        "mean": r["mean_b"].astype(float).to_numpy(),
        "mean against": r["mean_a"].astype(float).to_numpy(),
        "wins / ties / losses": T.wtl_cells(r["wins"], r["ties"], r["losses"], higher_is_better=higher_is_better),
        "effect size dz": r["effect_size"].astype(float).to_numpy(),
        "p-value": r["p_value"].to_numpy(),
        "n": r["n"].astype(int).to_numpy(),
        "run": r["run_b"].astype(str).to_numpy(),
        "note": T.ci_test_notes(r["note"], r["ci_low"], r["ci_high"], r["p_value"], r["significant"]),
    })


def change_list(frame: pd.DataFrame, *, domains: bool = True) -> pd.DataFrame:
    """A most-improved / most-regressed list for display: query, B − A, A, B, domain (what matters first: the
    lists sit side by side and a narrow window shows their first columns); without ``domains`` (no query of the
    evaluation has one) no empty domain column, as on the Queries page."""
    out = pd.DataFrame({"query_id": frame["query_id"].astype(str).to_numpy(),
                        "B − A": frame["difference"].to_numpy(),
                        "A": frame["a"].to_numpy(), "B": frame["b"].to_numpy(),
                        "domain": frame["domain"].astype(str).to_numpy()})
    return out if domains else out.drop(columns=["domain"])


def open_query(qid: str, run_a: str, run_b: str) -> None:
    """Remember the query and the two versions, and ask the page to open the Queries page."""
    st.session_state[S.SEL_QUERY] = str(qid)
    st.session_state[S.SEL_RUN_A] = run_a
    st.session_state[S.SEL_RUN_B] = run_b
    st.session_state[GOTO] = True


#: The Versions page's versions A and B: the user's choice (the pickers, a deep link, the workspace's kept one), else
#: the newest two versions, followed as checkpoints are added (:func:`dashboard.ui.bound_selectbox`'s ``follow``);
#: one chosen, the other pairs with it (:func:`default_a`, :func:`default_b`).
CHOSEN_AB = (S.SEL_VERSION_A, S.SEL_VERSION_B)


def default_a(runs: Sequence[str], chosen_b: str | None) -> str:
    """Version A shown while the user has not chosen it (``runs``: the model's versions in order, two or more):
    the version just before the B the user chose (the one after it when B is the first), else the one before the
    newest. "What changed" is then always a step of the series into B, never a pair adjacent to neither."""
    runs = list(runs)
    if chosen_b in runs:
        i = runs.index(chosen_b)
        return runs[i - 1] if i > 0 else runs[1]
    return runs[-2]


def default_b(runs: Sequence[str], run_a: str) -> str:
    """Version B shown while the user has not chosen it: the newest version other than A (the newest; the one just
    before A when A is the newest, so that A = the newest compares it with its previous version, not the first)."""
    return [r for r in runs if r != run_a][-1]


def ab_chosen() -> bool:
    """Whether the user chose version A or B (else "what changed" follows the newest two versions)."""
    return any(st.session_state.get(key) is not None for key in CHOSEN_AB)


def choose_ab(values: list[str]) -> None:
    """``on_click``: versions A and B (``values``) as the user's choice."""
    st.session_state[S.SEL_VERSION_A], st.session_state[S.SEL_VERSION_B] = values


def follow_newest() -> None:
    """``on_click``: forget the versions A and B chosen: "what changed" follows the newest two versions again (the URL
    and the workspace forget them at the next publish)."""
    for key in CHOSEN_AB:
        st.session_state.pop(key, None)


def on_row_selected(table_key: str, ids_key: str, run_a: str, run_b: str) -> None:
    """``st.dataframe`` selection callback of a what-changed list: open the selected query."""
    sel = st.session_state.get(table_key)
    rows = (sel or {}).get("selection", {}).get("rows", []) if sel else []
    ids = st.session_state.get(ids_key, [])
    if rows and rows[0] < len(ids):
        open_query(ids[rows[0]], run_a, run_b)


def add_demo_checkpoints() -> None:
    """Button callback: the demo's strong model with its training checkpoints (a version series to look at),
    saved in a copy of the read-only demo (dashboard.persist), which the session then shows."""
    from dashboard import persist as P
    from evalcore.workspace.demostore import store_demo_checkpoints

    done = P.write(lambda ws: store_demo_checkpoints(ws, S.get_ws().demo_seed or 0), on_demo="copy")
    if done.ok and done.created:
        P.notice("success", f"The demo is read-only: its checkpoints were added to a copy of it, {done.created!r}.")
    elif not done.ok:
        P.notice("error", f"The checkpoints were not added: {done.error}")


#: Compare tests every pair of the runs it shows (one correction family): beyond this many runs its default
#: is the latest version of each model.
COMPARE_ALL_UP_TO = 8


#: The Fusion page's default runs: at most this many.
FUSED_BY_DEFAULT = 3


def default_fused(runs: Sequence[str], sources: Sequence[W.RunSource]) -> list[str]:
    """Runs the Fusion page starts with, in ``runs`` order: the latest version of each model and every run without a
    model (:func:`latest_versions`), the first :data:`FUSED_BY_DEFAULT` of them; when that is a single run (one model's
    checkpoints only), its versions before it too, newest first, up to :data:`FUSED_BY_DEFAULT`. Never a model's first
    checkpoints (the first three runs were, up to 8 runs: epochs 1, 2 and 3 of a training loop)."""
    runs = list(runs)
    out = latest_versions(runs, sources)[:FUSED_BY_DEFAULT]
    if len(out) == 1:
        wanted = set(runs)
        info = pd.DataFrame([{"name": s.name, "model": s.model, "version": s.version, "step": s.step}
                             for s in sources if s.name in wanted], columns=["name", "model", "version", "step"])
        series = quiet_series(info)
        same = series.loc[series["run"] == out[0], "model"]
        if len(same):
            versions = series.loc[series["model"] == same.iloc[0], "run"].astype(str).tolist()
            out = versions[::-1][:FUSED_BY_DEFAULT]
    chosen = set(out)
    return [r for r in runs if r in chosen]


def default_compared(runs: Sequence[str], sources: Sequence[W.RunSource]) -> list[str]:
    """Runs Compare starts with: all of ``runs`` when at most :data:`COMPARE_ALL_UP_TO`, else the latest
    version of each model (the last in :func:`evalcore.workspace.version_series` order: step, then the
    version label in natural order) and every run without a model, in ``runs`` order."""
    runs = list(runs)
    return runs if len(runs) <= COMPARE_ALL_UP_TO else latest_versions(runs, sources)


def latest_versions(runs: Sequence[str], sources: Sequence[W.RunSource]) -> list[str]:
    """The latest version of each model among ``runs`` (the last in :func:`evalcore.workspace.version_series` order:
    step, then the version label in natural order) and every run without a model, in ``runs`` order."""
    runs = list(runs)
    wanted = set(runs)
    info = pd.DataFrame([{"name": s.name, "model": s.model, "version": s.version, "step": s.step}
                         for s in sources if s.name in wanted], columns=["name", "model", "version", "step"])
    series = quiet_series(info)
    latest = set(series.groupby("model", sort=False)["run"].last())
    in_series = set(series["run"])
    return [r for r in runs if r in latest or r not in in_series]

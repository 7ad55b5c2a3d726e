"""Small shared UI pieces: plain-text safety, messages, bound selections, the sidebar.

Ids, names and texts come from the user's files. They are shown only through
elements that render plain text (``st.dataframe``, ``st.text``, ``st.code``,
widget *options*), never in Markdown bodies or widget labels; the messages
(``st.error``, ``st.warning``... render Markdown) pass user text through
:func:`md_escape` first.
"""

from __future__ import annotations

import re
import sys
import threading
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard import analysis as A
from dashboard import busy, legacy
from dashboard import persist as P
from dashboard import state as S
from dashboard import workspaces as WS
from evalcore.stacked import row_count

#: The browser tab's icon: a file here, so the dashboard asks nothing of the internet (a Material
#: icon name as ``page_icon`` makes the browser fetch it from fonts.gstatic.com; offline, no icon).
ICON = str(Path(__file__).with_name("icon.png"))

PAGES = {
    "data": "pages/data.py",
    "overview": "pages/overview.py",
    "compare": "pages/compare.py",
    "versions": "pages/versions.py",
    "queries": "pages/queries.py",
    "domains": "pages/domains.py",
    "fusion": "pages/fusion.py",
    "agreement": "pages/agreement.py",
}

VIA_APP = "_via_app"

#: Paired tests and multiple-comparison corrections offered (names of :mod:`evalcore.stats`).
TESTS = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "permutation": "randomization (permutation)"}
CORRECTIONS = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg (FDR)", "none": "none"}

_LOCAL = threading.local()  # per script thread: the sidebar's placeholder of the current run

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&\"'=^%@/])")


def navigation():
    """The app's pages (``st.navigation``); called by ``app.py``."""
    return st.navigation([
        st.Page(PAGES["data"], title="Data", icon=":material/upload_file:"),
        st.Page(PAGES["overview"], title="Overview", icon=":material/leaderboard:", default=True),
        st.Page(PAGES["compare"], title="Compare", icon=":material/compare_arrows:"),
        st.Page(PAGES["versions"], title="Versions", icon=":material/timeline:"),
        st.Page(PAGES["queries"], title="Queries", icon=":material/manage_search:"),
        st.Page(PAGES["domains"], title="Domains", icon=":material/category:"),
        st.Page(PAGES["fusion"], title="Fusion", icon=":material/merge:"),
        st.Page(PAGES["agreement"], title="Agreement", icon=":material/join_inner:"),
    ])


def page_setup() -> None:
    """First call of every page: what ``app.py`` does, when the page runs without it.

    With a ``pages/`` folder, Streamlit starts in its pages-directory mode and
    may run a page file directly, without the entry point (the first request
    of a fresh server opened on a page URL — a deep link, a reload after a
    restart; every rerun under ``AppTest``). On a real server the page then
    registers the app's navigation, which switches Streamlit to ``st.navigation``
    mode, and reruns at once: the page is first drawn by ``app.py``, so its
    widgets keep one id from the first run on (a widget drawn in the
    directory mode changes id on the next run, and the change the user made
    to it is lost). Under ``AppTest``, which resets that mode before every
    run, the page runs on its own, its widget ids stable between runs.
    """
    if st.session_state.get(VIA_APP):
        return
    st.set_page_config(layout="wide", page_title="evalcore", page_icon=ICON)
    from streamlit import config

    if not config.get_option("global.appTest"):
        navigation()
        st.rerun()
    P.sync()
    sidebar()


def md_escape(text: Any) -> str:
    """Text safe to put in a Markdown body: every Markdown / directive / math character backslash-escaped.

    CommonMark lets any ASCII punctuation be escaped with a backslash; that also
    disables Streamlit's ``:color[...]`` directives, ``:emoji:`` shortcodes,
    ``$math$``, autolinks and raw HTML. Newlines become spaces (one line).
    """
    s = str(text).replace("\r", " ").replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", s)


def show_error(message: Any, *, prefix: str = "Not loaded") -> None:
    """An error next to the file it concerns (no traceback); an unknown measure without the catalogue of every
    measure (3,000 characters: the metric list on the Data page and `python -m evalcore metrics` give it)."""
    text = str(message)
    head, _, catalogue = text.partition("; supported: ")
    if catalogue and " measure " in f" {head} " and len(catalogue) > 200:  # (a short list of choices stays)
        text = head + " (the Metrics list of the Data page holds every measure; `python -m evalcore metrics` " \
            "describes them)"
    st.error(f"{prefix}: {md_escape(text)}", icon=":material/error:")


def dataframe(data: Any, *, digits: int = 4, column_config: dict | None = None, pin: Sequence[str] = (),
              **kwargs: Any) -> Any:
    """``st.dataframe`` with every float column shown to ``digits`` decimals, trailing zeros kept (``0.5700``
    beside ``0.5744``, not ``0.57``); columns given in ``column_config`` keep their own format. Every table's
    p-value columns (:data:`dashboard.tables.P_VALUE_COLUMNS` holding numbers, as :func:`~dashboard.tables.display_table`
    leaves them) read as p-values (``0.387``, ``<0.001``, ``1``: :func:`dashboard.tables.p_values_read`) while they
    stay numbers: right-aligned among the numbers, sorted by value (a number column without a format, which would
    replace the text); a column config given for one must be a number column without a format. A missing value
    reads ``–`` (the browser draws a number column's missing cell as its ``placeholder``, "None" by default, whatever
    the Styler says; :func:`~dashboard.tables.display_table`'s blank), in every number column: display_table leaves a
    number column with gaps a number column (whole numbers ``Int64``, read ``37``; others float, ``digits`` here).
    ``pin``: columns kept in view (pinned, as text) when the table scrolls sideways (long run names push the others
    out of view)."""
    import pandas as pd

    from dashboard.tables import p_value_columns, p_values_read

    # a Styler exists only once pandas' style module is imported: not imported here for the check (0.4-0.6 s of
    # jinja2 on a newcomer's first Overview, which shows none)
    Styler = getattr(sys.modules.get("pandas.io.formats.style"), "Styler", ())  # noqa: N806

    config = dict(column_config or {})
    for col in pin:  # the key columns (``"_index"``: the index) stay in view when the others scroll sideways
        config.setdefault(col, st.column_config.TextColumn(None if col == "_index" else col, pinned=True))
    if isinstance(data, pd.DataFrame) and p_value_columns(data):
        data = p_values_read(data)
    frame = data.data if isinstance(data, Styler) else data
    if isinstance(frame, pd.DataFrame):
        styled = set(p_value_columns(frame)) if isinstance(data, Styler) else set()
        for col in frame.columns:
            if col in styled and col not in config:
                config[col] = st.column_config.NumberColumn(str(col))
            elif col not in config and pd.api.types.is_float_dtype(frame[col].dtype):
                config[col] = st.column_config.NumberColumn(str(col), format=f"%.{int(digits)}f")
    kwargs.setdefault("placeholder", "–")
    return st.dataframe(data, column_config=config or None, **kwargs)


def show_warning(message: Any) -> None:
    st.warning(md_escape(message), icon=":material/warning:")


def evaluated_text(ctx: S.Context) -> str:
    """How many queries the numbers are means over: "the 300 evaluated queries", or with a query sample (Data page,
    Settings) "the 100 evaluated queries (a seeded sample of the ground truth's 300, seed 42)", else fewer than the
    ground truth's (queries without a relevant document skipped) "(of the ground truth's 300)" (plain text)."""
    n = next(iter(ctx.qrels.values())).n_queries if ctx.qrels else 0
    text = f"the {plural(n, 'evaluated query', 'evaluated queries')}"
    if n < ctx.n_universe:
        text += (f" (a seeded sample of the ground truth's {ctx.n_universe:,}, seed {ctx.settings.seed})"
                 if ctx.settings.sample_size else f" (of the ground truth's {ctx.n_universe:,})")
    return text


def plural(n: int, one: str, many: str | None = None) -> str:
    """``"1 query"``, ``"2 queries"``, ``"1,234 queries"``."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def need_evaluation(ctx: S.Context) -> None:
    """Refresh the sidebar; stop the page with a hint when there is nothing to show yet, else flag the runs
    that answer too few queries (every page shows that)."""
    refresh_sidebar(ctx)
    if ctx.ready:
        coverage_banner(ctx)
        for w in ctx.eval_warnings:  # (the Data page shows them next to the settings)
            show_warning(w)
        if not row_count(ctx.evaluation):  # every query skipped: no metric@k to show, nothing to compare
            st.warning(no_query_evaluated(ctx.evaluation.coverage, ctx.settings), icon=":material/report:")
            st.page_link(PAGES["data"], label="Go to the Data page", icon=":material/upload_file:")
            st.stop()
        return
    if ctx.settings_error:
        show_error(ctx.settings_error, prefix="Invalid settings")
    elif ctx.ws.ground_truth is None:
        st.info("No ground truth loaded. Load one (and at least one run) on the Data page, or reload the demo.",
                icon=":material/info:")
    elif ctx.gt_error:
        show_error(ctx.gt_error, prefix="The ground truth could not be loaded")
    elif ctx.eval_error:
        show_error(ctx.eval_error, prefix="Evaluation failed")
    else:
        st.info("No run loaded (or every run failed to load). Add runs on the Data page.", icon=":material/info:")
    st.page_link(PAGES["data"], label="Go to the Data page", icon=":material/upload_file:")
    st.stop()


def no_query_evaluated(coverage: Any, settings: Any) -> str:
    """Why an evaluation has no row, in words (``coverage``: the evaluation's, one row per run)."""
    from evalcore.coverage import nothing_evaluated

    reason = nothing_evaluated(coverage, rel_threshold=settings.rel_threshold, no_relevant=settings.no_relevant)
    return (f"No query can be evaluated: {reason or 'no row'}. On the Data page, lower the relevance threshold, or "
            "set \"Queries without a relevant document\" to zero.")


def need_runs(ctx: S.Context, *, minimum: int = 2, what: str = "compare them") -> list[str]:
    """The evaluated runs; stop the page with a hint when there are fewer than ``minimum``."""
    runs = ctx.run_names
    if len(runs) < minimum:
        st.info(f"Load at least {minimum} runs to {what}.", icon=":material/info:")
        st.stop()
    return runs


def _sync(wkey: str, pkey: str) -> None:
    st.session_state[pkey] = st.session_state[wkey]
    P.publish()


def no_longer_offered(label: str, gone: Sequence[str], *, default_again: bool = True) -> None:
    """Say (once: the caller then forgets them) that values the user chose in the widget ``label`` are no longer
    offered (a run removed since, in this session or before the workspace was opened); ``default_again``: none of
    the choice is left, the widget shows its default again (else: the rest of the choice is kept)."""
    one = len(gone) == 1
    names = ", ".join(repr(str(g)) for g in gone)
    said = (f"{label} as you chose it, {names}, is" if one else f"{label} as you chose them: {names} are")
    st.info(md_escape(f"{said} no longer offered here (removed, or not among these choices): "
                      + ("showing the default again." if default_again else "the rest of your choice is kept.")),
            icon=":material/info:")


def say_legacy(keys: Sequence[str], shown: Sequence[Any], *, chosen: bool, what: str, label: Callable[[Any], str],
               restore: Callable[[list[Any]], None], button: str, key: str,
               offered: Collection[Any] | None = None) -> None:
    """On the page of ``keys`` (entries of :data:`dashboard.legacy.DROPPED`, the kept values an older
    dashboard may have written as defaults): when the values an older dashboard kept there differ from
    what the page shows now (``shown``, the same order), say so, with a button that puts them back as the user's
    choice (``restore`` gets the old values); while they equal what is shown, or once the user chose there
    (``chosen``), nothing is said and they are forgotten. ``what``, ``button``: fixed text; ``label``: a value's
    plain text; ``offered``: the page's options now (values not among them are said when they are, e.g. the versions
    of another model than the one shown)."""
    dropped = st.session_state.get(legacy.DROPPED, {})
    if not all(k in dropped for k in keys):
        return
    old = [dropped[k] for k in keys]
    if offered is not None and not all(v in offered for v in old):
        return
    if list(shown) == old or chosen:
        for k in keys:
            dropped.pop(k, None)
        return
    names = ", ".join(repr(label(v)) if not isinstance(v, list) else ", ".join(repr(label(x)) for x in v) for v in old)
    st.info(md_escape(f"{what} kept by an earlier version of the dashboard ({names}) may have been its default at "
                      "the time rather than your choice: it kept both alike. The page now follows the default; the "
                      "button puts them back as your choice."), icon=":material/history:")

    def put_back() -> None:
        for k in keys:
            dropped.pop(k, None)
        restore(old)

    st.button(button, key=key, on_click=put_back, icon=":material/undo:")


def bound_selectbox(label: str, options: Sequence[Any], pkey: str, *, scope: str,
                    format_func: Callable[[Any], str] | None = None, help: str | None = None,
                    default: Any = None, follow: bool = False, keep_other: bool = False) -> Any:
    """A selectbox whose value is the shared selection ``st.session_state[pkey]`` (kept across pages).

    ``keep_other``: a shared value this page does not offer but other pages do (k = 0, no cutoff, of a whole-list
    metric chosen on Compare, on the Agreement page that needs a cutoff; a baseline not among the Domains page's runs)
    is not replaced by the default shown here, in the session, the URL and the workspace, until the user chooses here.

    ``follow``: the default is live (e.g. the newest versions, as a training loop adds them) until the user chooses:
    ``pkey`` then holds only a choice of the user's (the widget, a deep link, the workspace's kept one), never the
    default drawn, so the URL and the workspace keep no default either; a choice no longer among ``options`` (a run
    removed) is said once and dropped (back to the default). Without it, the value shown is kept, default or not
    (one trimmed when the workspace was opened, :data:`dashboard.persist.DROPPED`, is said once as well).

    ``label`` must be fixed text (labels render Markdown); options are plain text.
    """
    options = list(options)
    if not options:
        return None
    wkey = f"w_{scope}_{pkey}"
    desired = st.session_state.get(pkey)
    # (a choice gone: in this session when followed, or trimmed when the workspace was opened, e.g. after a restart)
    gone = desired if follow else None
    if gone is None:
        gone = st.session_state.get(P.DROPPED, {}).pop(pkey, None)
    if gone is not None and gone not in options:
        no_longer_offered(label, [(format_func(gone) if format_func is not None else None) or str(gone)])
        st.session_state.pop(pkey, None)
        desired = None
    if desired not in options:
        desired = default if default in options else options[0]
    if st.session_state.get(wkey) != desired:
        st.session_state[wkey] = desired
    kwargs: dict[str, Any] = {"key": wkey, "on_change": _sync, "args": (wkey, pkey), "help": help}
    if format_func is not None:
        kwargs["format_func"] = format_func
    other = keep_other and st.session_state.get(pkey) is not None and st.session_state.get(pkey) not in options
    value = st.selectbox(label, options, **kwargs)
    if not follow and not other:  # (followed: only the user's choice, set by _sync, is kept)
        st.session_state[pkey] = value
    P.publish()  # the URL and the workspace remember it
    return value


def test_picker(scope: str) -> str:
    """The paired test, shared by every page (:data:`TESTS`)."""
    return bound_selectbox("Test", list(TESTS), S.SEL_TEST, scope=scope, format_func=TESTS.get,
                           help="Paired by query id: t-test (default), Wilcoxon signed-rank, or a paired "
                                f"randomization test ({S.TEST_RESAMPLES:,} sign flips, seed {S.CI_SEED}).")


def correction_picker(scope: str, *, help: str = "Multiple-comparison correction across the pairs tested.") -> str:
    """The multiple-comparison correction, shared by every page (:data:`CORRECTIONS`)."""
    return bound_selectbox("Correction", list(CORRECTIONS), S.SEL_CORRECTION, scope=scope,
                           format_func=CORRECTIONS.get, help=help)


def metric_k_picker(ctx: S.Context, scope: str, *, with_k: bool = True, columns: Any = None) -> tuple[str, int]:
    """Metric and k selectboxes over what the evaluation computed (changing them only filters the table)."""
    pairs = S.metric_k_pairs(ctx)
    metrics = list(dict.fromkeys(m for m, _ in pairs))
    c1, c2 = columns if columns is not None else st.columns(2)
    with c1:
        metric = bound_selectbox("Metric", metrics, S.SEL_METRIC, scope=scope,
                                 default="ndcg" if "ndcg" in metrics else None)
    ks = [k for m, k in pairs if m == metric]
    k = ks[0]
    if with_k:
        with c2:
            k = bound_selectbox("Cutoff k", ks, S.SEL_K, scope=scope, default=10 if 10 in ks else ks[-1],
                                format_func=lambda x: "no cutoff" if x == 0 else str(x))
    from evalcore.metrics import metric_base

    if metric_base(metric) == "gm_map":
        st.caption(GM_MAP_SCALE)
    return metric, int(k)


#: Under a metric picker set to gm_map: the per-query values are logs (the Overview shows the geometric mean).
GM_MAP_SCALE = ("gm_map: each query's value is ln(max(AP, 0.00001)), as trec_eval's; the means, differences and "
                "tests on this page are on that log scale (a difference d between two runs is a ratio e^d between "
                "their geometric mean APs). The Overview shows the geometric mean of AP, exp of the mean.")


def label_of(metric: str, k: int) -> str:
    from evalcore.aggregate import metric_at_k_label

    return metric_at_k_label(metric, k)


def sidebar(ctx: S.Context | None = None) -> None:
    """The shared sidebar: the workspace picker, then in a placeholder (filled again by
    :func:`refresh_sidebar` once the page knows which files failed) the loaded data set and the
    settings summary, as plain text."""
    WS.picker()
    for kind, text in st.session_state.pop(P.NOTICES, []):
        {"error": st.sidebar.error, "warning": st.sidebar.warning}.get(kind, st.sidebar.success)(md_escape(text))
    _LOCAL.slot = st.sidebar.empty()
    _fill_sidebar(ctx)
    busy.note_here()  # kept selections another process's writing keeps from being saved for now
    wkey = "w_" + SEL_IMAGE_FORMAT  # the widget's own key; the choice itself is kept across pages in SEL_IMAGE_FORMAT
    if st.session_state.get(wkey) != image_format():
        st.session_state[wkey] = image_format()
    st.sidebar.segmented_control("Chart images", list(IMAGE_FORMATS), format_func=IMAGE_FORMATS.get,
                                 key=wkey, required=True, on_change=_sync, args=(wkey, SEL_IMAGE_FORMAT),
                                 help="The format the camera button of each chart's toolbar saves: PNG (bitmap) or "
                                      "SVG (vector), drawn by your browser.")


#: Runs the sidebar names one by one; beyond, it counts them (by kind) and names only those not loaded.
SIDEBAR_RUNS = 12


def refresh_sidebar(ctx: S.Context) -> None:
    """Redraw the sidebar with what this run resolved (failed files marked "(not loaded)", query counts)."""
    if getattr(_LOCAL, "slot", None) is not None and ctx.ws is S.get_ws():
        _fill_sidebar(ctx)


def _fill_sidebar(ctx: S.Context | None) -> None:
    ws = S.get_ws()
    slot = getattr(_LOCAL, "slot", None)
    box = slot.container() if slot is not None else st.sidebar.container()
    with box:
        st.subheader("Loaded data")
        if ws.is_demo:
            st.caption("Built-in demo: synthetic data (read-only)")
        elif (locked := P.locked()) is not None:
            st.caption(md_escape(f"Read-only: {locked}. Copy it to change it (Data page)."))
        gt = ws.ground_truth
        lines = [f"ground truth: {gt.label if gt else '(none)'}"]
        if gt is not None and gt.kind == "reference":
            lines[0] += " (reference model)"
        if ctx is not None and ctx.gt_error:
            lines[0] += " (not loaded)"
        failed = set(ctx.run_errors) if ctx is not None else st.session_state.get(S.FAILED_KEY, set())
        many = len(ws.runs) > SIDEBAR_RUNS  # then counted, and only those not loaded named (137 runs took 274 lines
        if many:  # above the settings)
            kinds = Counter(r.kind for r in ws.runs)
            lines.append(f"runs: {len(ws.runs):,} (" + ", ".join(f"{n:,} {k}" for k, n in kinds.items()) + ")")
        for r in ws.runs:
            if not many or r.uid in failed:
                lines.append(f"run: {r.name} [{r.kind}]" + (" (not loaded)" if r.uid in failed else ""))
        for blob, what, err in ((ws.domain_blob, "domains", ctx and ctx.domain_error),
                                (ws.metadata_blob, "metadata", ctx and ctx.metadata_error),
                                (getattr(ws, "queries_blob", None), "query texts", ctx and ctx.queries_error)):
            if blob is not None:
                lines.append(f"{what}: {blob.name}" + (" (not loaded)" if err else ""))
        if ctx is not None and ctx.ready and ctx.qrels:
            q = next(iter(ctx.qrels.values()))
            lines.append(f"queries evaluated: {q.n_queries:,} of {ctx.n_universe:,}")
        st.text("\n".join(lines))
        st.subheader("Settings")
        st.text("\n".join(ws.settings.summary_lines(reference=gt is not None and gt.kind == "reference")))
        tied = A.tie_reordered(ctx) if ctx is not None and ctx.evaluation is not None else []
        if tied:
            st.warning(f"Equal scores of {', '.join(md_escape(n) for n in tied)} were ranked by id ascending (as "
                       "the search ranks); the tie rule trec evaluates them by id descending. The tie rule "
                       "docid_asc (Data page, Settings) keeps the search's order.", icon=":material/swap_vert:")


# ------------------------------------------------------------------------------------------ coverage, aspects


def rows_height(n_rows: int, *, most: int = 25) -> int | str:
    """A table height showing every row up to ``most`` (Streamlit's default shows 10 and scrolls the rest:
    with 14 runs the leaderboard's ★ row could sit out of view)."""
    return "auto" if n_rows <= 10 else (min(n_rows, most) + 1) * 35 + 3


def coverage_banner(ctx: S.Context) -> None:
    """Flag each run below the coverage threshold; let the user include it in ★ and tests anyway."""
    low = S.low_coverage(ctx)
    if not low:
        return
    cov = S.coverage(ctx).set_index("run")
    from evalcore.coverage import coverage_text

    lines = []
    for r in low:
        c = cov.loc[r]
        lines.append(f"{md_escape(r)}: results for {coverage_text(int(c['n_with_results']), int(c['n_ground_truth']))}"
                     " of the ground-truth queries")
    st.warning(f"Low coverage (below {ctx.settings.min_coverage:.0%}): " + "; ".join(lines) + ". A query a run "
               "does not answer counts as 0 on every metric, so these runs are left out of ★ and significance "
               "tests unless you include them.", icon=":material/report:")
    bound_multiselect("Include anyway in ★ and tests", low, S.SEL_INCLUDE_LOW, scope="coverage")


def bound_multiselect(label: str, options: Sequence[Any], pkey: str, *, scope: str,
                      help: str | None = None) -> list:
    """A multiselect whose value is the shared selection ``st.session_state[pkey]`` (kept across pages)."""
    options = list(options)
    wkey = f"w_{scope}_{pkey}"
    desired = [v for v in st.session_state.get(pkey, []) if v in options]
    st.session_state[wkey] = desired  # always: the same key on another page is another widget
    value = st.multiselect(label, options, key=wkey, on_change=_sync, args=(wkey, pkey), help=help)
    st.session_state[pkey] = list(value)
    P.publish()
    return list(value)


def runs_shown(ctx: S.Context, candidates: Sequence[str], *, scope: str, label: str = "Runs compared",
               help: str | None = None) -> list[str]:
    """The runs a page draws or compares: every one of ``candidates`` up to
    :data:`dashboard.versions.COMPARE_ALL_UP_TO`; beyond, those of a multiselect whose value is the Compare page's
    shared choice :data:`~dashboard.state.SEL_CMP_RUNS` (chosen once, it follows the user from page to page),
    starting at :func:`dashboard.versions.default_compared` (the latest version of each model and every run without
    one): 120 checkpoints drawn at once make a legend that hides the chart, colours that repeat and a runs × runs
    matrix of 14,000 cells. ``label`` must be fixed text (labels render Markdown). In ``candidates`` order."""
    from dashboard import versions as VS

    candidates = list(candidates)
    if len(candidates) <= VS.COMPARE_ALL_UP_TO:
        return candidates
    own = st.session_state.get(S.SEL_CMP_RUNS)
    desired = [r for r in own or [] if r in candidates]
    if own is None or (own and not desired):  # never chosen, or chosen among other runs (another aspect)
        desired = VS.default_compared(candidates, ctx.ws.runs)
    wkey = f"w_{scope}_{S.SEL_CMP_RUNS}"
    st.session_state[wkey] = desired  # always: the same key on another page is another widget
    value = st.multiselect(label, candidates, key=wkey, on_change=_sync, args=(wkey, S.SEL_CMP_RUNS),
                           help=help or f"With more than {VS.COMPARE_ALL_UP_TO} runs: the latest version of each "
                                        "model and every run without a model at first. The choice is shared with "
                                        "the other pages (Compare's \"Runs compared\"). Type to search.")
    P.publish()
    chosen = set(value)
    return [r for r in candidates if r in chosen]


def aspect_note(ctx: S.Context) -> None:
    """Say which runs are evaluated against which ground-truth aspect, when there are several."""
    in_use = S.aspects_in_use(ctx)
    if len(in_use) < 2:
        return
    groups = "; ".join(f"{md_escape(a)}: " + ", ".join(md_escape(r) for r in ctx.run_names
                                                        if ctx.run_aspect.get(r) == a) for a in in_use)
    st.info("The runs are evaluated against different ground-truth aspects (" + groups + "). Their numbers are "
            "not comparable across aspects: ★ marks the best within each aspect, and tests compare runs of "
            "one aspect.", icon=":material/call_split:")


# ------------------------------------------------------------------------------------------ charts


#: The charts' image formats: the camera button of each chart's toolbar saves the chart in the one chosen in
#: the sidebar, rendered by Plotly in the browser (no server-side renderer, nothing sent back to the server).
IMAGE_FORMATS = {"png": "PNG", "svg": "SVG"}
SEL_IMAGE_FORMAT = S.SEL_IMAGE_FORMAT


def image_format() -> str:
    """The format the charts' camera button saves (``"png"`` unless the sidebar says otherwise)."""
    fmt = st.session_state.get(SEL_IMAGE_FORMAT)
    return fmt if fmt in IMAGE_FORMATS else "png"


def chart_config(name: str) -> dict[str, Any]:
    """Plotly's config of a chart: its toolbar's camera button saves ``name``.png or ``name``.svg."""
    fmt = image_format()
    return {"displaylogo": False, "toImageButtonOptions": {"format": fmt, "filename": name,
                                                           "scale": 2 if fmt == "png" else 1}}


def chart(fig: Any, *, key: str, name: str, **kwargs: Any) -> Any:
    """``st.plotly_chart`` whose toolbar camera button downloads the chart as PNG or SVG.

    ``name`` (fixed text, no user string) is the file name; the format is the sidebar's
    "Chart images" choice (:func:`image_format`).
    """
    return st.plotly_chart(fig, key=key, config=chart_config(name), **kwargs)

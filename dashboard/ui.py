"""Small shared UI pieces: plain-text safety, messages, bound selections, the sidebar.

Ids, names and texts come from the user's files. They are shown only through
elements that render plain text (``st.dataframe``, ``st.text``, ``st.code``,
widget *options*), never in Markdown bodies or widget labels; the messages
(``st.error``, ``st.warning``... render Markdown) pass user text through
:func:`md_escape` first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from dashboard import state as S

PAGES = {
    "data": "pages/data.py",
    "overview": "pages/overview.py",
    "compare": "pages/compare.py",
    "queries": "pages/queries.py",
    "domains": "pages/domains.py",
    "fusion": "pages/fusion.py",
    "agreement": "pages/agreement.py",
}

VIA_APP = "_via_app"

#: Paired tests and multiple-comparison corrections offered (names of :mod:`evalcore.stats`).
TESTS = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "permutation": "randomization (permutation)"}
CORRECTIONS = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg (FDR)", "none": "none"}

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&\"'=^%@/])")


def navigation():
    """The app's pages (``st.navigation``); called by ``app.py``."""
    return st.navigation([
        st.Page(PAGES["data"], title="Data", icon=":material/upload_file:"),
        st.Page(PAGES["overview"], title="Overview", icon=":material/leaderboard:", default=True),
        st.Page(PAGES["compare"], title="Compare", icon=":material/compare_arrows:"),
        st.Page(PAGES["queries"], title="Queries", icon=":material/manage_search:"),
        st.Page(PAGES["domains"], title="Domains", icon=":material/category:"),
        st.Page(PAGES["fusion"], title="Fusion", icon=":material/merge:"),
        st.Page(PAGES["agreement"], title="Agreement", icon=":material/join_inner:"),
    ])


def page_setup() -> None:
    """First call of every page: what ``app.py`` does, when the page runs without it.

    With a ``pages/`` folder, Streamlit starts in its pages-directory mode and
    may run a page file directly, without the entry point (the first request
    of a fresh server opened on a page URL; every rerun under ``AppTest``).
    The page then sets itself up and, on a real server, registers the app's
    navigation, which switches Streamlit to ``st.navigation`` mode for the next
    runs (under ``AppTest``, which resets that mode before every run, the page
    keeps running on its own so that widget ids stay stable between runs).
    """
    if st.session_state.get(VIA_APP):
        return
    st.set_page_config(layout="wide", page_title="evalcore", page_icon=":material/leaderboard:")
    from streamlit import config

    if not config.get_option("global.appTest"):
        navigation()
    S.get_ws()
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
    """An error next to the file it concerns (no traceback)."""
    st.error(f"{prefix}: {md_escape(message)}", icon=":material/error:")


def show_warning(message: Any) -> None:
    st.warning(md_escape(message), icon=":material/warning:")


def need_evaluation(ctx: S.Context) -> None:
    """Stop the page with a hint when there is nothing to show yet."""
    if ctx.ready:
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


def need_runs(ctx: S.Context, *, minimum: int = 2, what: str = "compare them") -> list[str]:
    """The evaluated runs; stop the page with a hint when there are fewer than ``minimum``."""
    runs = ctx.run_names
    if len(runs) < minimum:
        st.info(f"Load at least {minimum} runs to {what}.", icon=":material/info:")
        st.stop()
    return runs


def _sync(wkey: str, pkey: str) -> None:
    st.session_state[pkey] = st.session_state[wkey]


def bound_selectbox(label: str, options: Sequence[Any], pkey: str, *, scope: str,
                    format_func: Callable[[Any], str] | None = None, help: str | None = None,
                    default: Any = None) -> Any:
    """A selectbox whose value is the shared selection ``st.session_state[pkey]`` (kept across pages).

    ``label`` must be fixed text (labels render Markdown); options are plain text.
    """
    options = list(options)
    if not options:
        return None
    wkey = f"w_{scope}_{pkey}"
    desired = st.session_state.get(pkey)
    if desired not in options:
        desired = default if default in options else options[0]
    if st.session_state.get(wkey) != desired:
        st.session_state[wkey] = desired
    kwargs: dict[str, Any] = {"key": wkey, "on_change": _sync, "args": (wkey, pkey), "help": help}
    if format_func is not None:
        kwargs["format_func"] = format_func
    value = st.selectbox(label, options, **kwargs)
    st.session_state[pkey] = value
    return value


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
    return metric, int(k)


def label_of(metric: str, k: int) -> str:
    from evalcore.aggregate import metric_at_k_label

    return metric_at_k_label(metric, k)


def sidebar(ctx: S.Context | None = None) -> None:
    """The shared sidebar: the loaded data set and the settings summary (plain text)."""
    ws = S.get_ws()
    with st.sidebar:
        st.subheader("Loaded data")
        if ws.is_demo:
            st.caption("Built-in demo: synthetic data")
        gt = ws.ground_truth
        lines = [f"ground truth: {gt.label if gt else '(none)'}"]
        if gt is not None and gt.kind == "reference":
            lines[0] += " (reference model)"
        failed = st.session_state.get(S.FAILED_KEY, set())
        for r in ws.runs:
            lines.append(f"run: {r.name} [{r.kind}]" + (" (not loaded)" if r.uid in failed else ""))
        if ws.domain_blob is not None:
            lines.append(f"domains: {ws.domain_blob.name}")
        if ws.metadata_blob is not None:
            lines.append(f"metadata: {ws.metadata_blob.name}")
        if ctx is not None and ctx.ready:
            q = next(iter(ctx.qrels.values()))
            lines.append(f"queries evaluated: {q.n_queries} of {ctx.n_universe}")
        st.text("\n".join(lines))
        st.subheader("Settings")
        st.text("\n".join(ws.settings.summary_lines(reference=gt is not None and gt.kind == "reference")))

"""Cached analyses beyond the evaluation: agreement between runs, Tukey's HSD, fusion weight search,
diversity.

Same pattern as :mod:`dashboard.state`: one ``st.cache_data`` step per analysis,
keyed by content keys (the evaluation's key plus the options), behind the
per-session memo; each returns an :class:`~dashboard.state.Outcome`. The work
is one evalcore call each (:mod:`evalcore.workspace.analysis`, :mod:`evalcore.stats`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import state as S
from dashboard.cache import kept_outcome
from evalcore import defaults as DEF
from evalcore import workspace as W
from evalcore._categorical import isin_strings

#: RBO persistence offered by default, and the sampled pairs of seed 000's similarity agreement (with their seed:
#: :mod:`evalcore.defaults`', as ``evalcore evaluate --agreement-pairs`` and the Python API).
DEFAULT_P = 0.9
SIMILARITY_PAIRS = DEF.SIMILARITY_PAIRS
SIMILARITY_SEED = DEF.SEED


@st.cache_data(show_spinner=False, max_entries=16)
def _c_agreement(key: str, _runs: dict, _query_ids: list, k: tuple[int, ...], p: float, ties: str,
                 measure: str) -> S.Outcome:
    return S._attempt(W.run_agreement, _runs, query_ids=_query_ids, k=list(k), p=p, ties=ties, measures=[measure])


@st.cache_data(show_spinner=False, max_entries=64)
def _c_hsd(key: str, _table: Callable[[], pd.DataFrame], metric: str, k: int, design: str) -> S.Outcome:
    """Tukey's HSD of the slice ``_table()`` (built only when not kept), kept on disk for a restarted server
    (:func:`dashboard.cache.kept_outcome`; ``key`` names the evaluation, metric@k, design and runs): its p-values
    are one numerical integral per pair, ~0.02 s each (45 pairs of 10 runs: ~1 s a metric@k)."""
    from evalcore.stats import tukey_hsd

    return kept_outcome("hsd", key, lambda: S._attempt(tukey_hsd, _table(), metric=metric, k=k, design=design))


@st.cache_data(show_spinner=False, max_entries=8)
def _c_similarity(key: str, _gt: W.GroundTruthSource, _sources: list) -> S.Outcome:
    return S._attempt(W.similarity_agreement, _gt, _sources, n_pairs=SIMILARITY_PAIRS, seed=SIMILARITY_SEED)


@st.cache_data(show_spinner=False, max_entries=32)
def _c_weights(key: str, _qrels: Any, _reference: Any, _runs: dict, _settings: W.Settings, metric: str, k: int,
               options: dict, _progress: Any = None) -> S.Outcome:
    return S._attempt(W.search_fusion_weights, _qrels, _reference, _runs, metric=metric, k=k, settings=_settings,
                      progress=_progress, **options)


def evaluated_queries(ctx: S.Context) -> list[str]:
    """The evaluated (sampled) query ids, in ground-truth order."""
    return S.memo("evalqueries:" + ctx.eval_key, lambda: list(dict.fromkeys(
        str(q) for qrels in ctx.qrels.values() for q in qrels.query_ids)))


def agreement(ctx: S.Context, p: float, k: int, measure: str, runs: list[str] | None = None) -> S.Outcome:
    """``measure`` (``overlap``, ``rbo`` with persistence ``p``, ``kendall_tau``) of every pair of ``runs``
    (default: every evaluated run; each with itself too) at ``k``.

    One k and one measure at a time: at 14 runs x 20,000 queries each costs seconds to tens of seconds (the
    pairs grow as the square of the runs: the page passes the runs it shows).
    """
    names = list(ctx.run_names if runs is None else runs)
    ks = (int(k),)
    key = S._key("agree", ctx.eval_key, float(p) if measure == "rbo" else None, ks, measure,
                 None if runs is None else names)
    runs = {n: ctx.runs[n] for n in names}
    return S.memo(key, lambda: _c_agreement(key, runs, evaluated_queries(ctx), ks, float(p), ctx.settings.ties,
                                            measure))


def comparison(ctx: S.Context, metric: str, k: int, test: str, correction: str,
               runs: list[str] | None = None) -> S.Outcome:
    """Every pair of ``runs`` (default all) on metric@k (``evalcore.stats.compare``, resamples shared by
    every pair), cached: changing the baseline is a filter."""
    runs_t = None if runs is None else tuple(runs)
    key = S._key("compare", ctx.eval_key, metric, k, test, correction, S.TEST_RESAMPLES, S.CI_METHOD, runs_t,
                 S.CI_SEED, S.RESAMPLING)
    return S.memo(key, lambda: S._c_compare(key, S.metric_slice(ctx, metric, k), metric, k, test, correction,
                                            S.TEST_RESAMPLES, S.CI_METHOD, runs_t, seed=S.CI_SEED,
                                            resampling=S.RESAMPLING))


def domain_comparison(ctx: S.Context, metric: str, k: int, baseline: str, test: str, correction: str,
                      min_queries: int, runs: list[str] | None = None) -> S.Outcome:
    runs_t = None if runs is None else tuple(runs)
    key = S._key("cmpdom", ctx.eval_key, metric, k, baseline, test, correction, min_queries, S.TEST_RESAMPLES,
                 S.CI_METHOD, runs_t, S.CI_SEED, S.RESAMPLING)
    return S.memo(key, lambda: S._c_compare_domains(key, S.metric_slice(ctx, metric, k), metric, k, baseline, test,
                                                    correction, min_queries, S.TEST_RESAMPLES, S.CI_METHOD, runs_t,
                                                    seed=S.CI_SEED, resampling=S.RESAMPLING))


def hsd(ctx: S.Context, metric: str, k: int, design: str, *, runs: list[str] | None = None) -> S.Outcome:
    """Tukey's HSD on metric@k of ``runs`` (default: every evaluated run)."""
    runs = list(ctx.run_names if runs is None else runs)
    key = S._key("hsd", ctx.eval_key, metric, int(k), design, runs)

    def rows() -> pd.DataFrame:
        sl = S.metric_slice(ctx, metric, k)
        return sl[isin_strings(sl["run"], runs)]  # (codes, no string a row)

    return S.memo(key, lambda: _c_hsd(key, rows, metric, int(k), design))


def similarity(ctx: S.Context) -> S.Outcome:
    """Seed 000's Spearman ρ / MAE of pair similarities, reference vs each run with embeddings (maybe no rows)."""
    gt = ctx.ws.ground_truth
    sources = [src for src in ctx.ws.runs if src.name in ctx.run_names]
    key = S._key("simagree", gt.universe_key(), [ctx.run_keys[s.uid] for s in sources], [s.name for s in sources],
                 SIMILARITY_PAIRS, SIMILARITY_SEED)
    return S.memo(key, lambda: _c_similarity(key, gt, sources))


@dataclass(frozen=True)
class FoundWeights:
    """What the Fusion page shows of a weight search (:func:`weight_search`): the best weights by run, every
    trial (``trial``, ``weight:<run>``..., ``value``, ``best``, as :class:`evalcore.fusion_search.WeightSearch`'s),
    the best mean on the tuning queries and on the held-out ones (NaN without a split), and how many of each."""

    weights: dict[str, float]
    trials: pd.DataFrame
    value_tune: float
    value_test: float
    n_tune: int
    n_test: int


#: A weight search is kept for a reload or a restarted server (:func:`weight_search`) when its trials hold at most
#: this many numbers (a weight per run and a value per trial: ~1 MB of JSON); a bigger one is searched again.
KEPT_SEARCH_NUMBERS = 60_000


def _number(x: Any) -> float | None:
    """A float for JSON (NaN: None)."""
    x = float(x)
    return None if math.isnan(x) else x


def search_record(key: str, found: S.Outcome) -> dict[str, Any] | None:
    """A successful :func:`weight_search` outcome as a JSON-able record under its ``key`` (None when it is too big
    to keep, :data:`KEPT_SEARCH_NUMBERS`)."""
    res: FoundWeights = found.value
    names = list(res.weights)
    if len(res.trials) * (len(names) + 1) > KEPT_SEARCH_NUMBERS:
        return None
    best = res.trials.index[res.trials["best"].to_numpy(dtype=bool)]
    return {"key": key, "runs": names, "weights": [float(res.weights[n]) for n in names],
            "trial_weights": [[float(w) for w in res.trials[f"weight:{n}"]] for n in names],
            "values": [_number(v) for v in res.trials["value"]], "best": int(best[0]) if len(best) else None,
            "value_tune": _number(res.value_tune), "value_test": _number(res.value_test),
            "n_tune": int(res.n_tune), "n_test": int(res.n_test), "warnings": list(found.warnings)}


def search_of_record(record: Any, key: str) -> S.Outcome | None:
    """The outcome a :func:`search_record` holds when it was kept for these very inputs (``key``), else None
    (another key, or not a record: a changed input, an older dashboard's state)."""
    if not isinstance(record, dict) or record.get("key") != key:
        return None
    try:
        names = [str(n) for n in record["runs"]]
        frame = pd.DataFrame({"trial": np.arange(len(record["values"]))})
        for n, column in zip(names, record["trial_weights"], strict=True):
            frame[f"weight:{n}"] = np.asarray(column, dtype=float)
        frame["value"] = np.asarray([np.nan if v is None else v for v in record["values"]], dtype=float)
        frame["best"] = frame["trial"] == record["best"]
        nan = float("nan")
        found = FoundWeights(dict(zip(names, map(float, record["weights"]), strict=True)), frame,
                             nan if record["value_tune"] is None else float(record["value_tune"]),
                             nan if record["value_test"] is None else float(record["value_test"]),
                             int(record["n_tune"]), int(record["n_test"]))
        return S.Outcome(found, None, tuple(str(w) for w in record["warnings"]))
    except (KeyError, TypeError, ValueError):
        return None


def _found(out: S.Outcome) -> S.Outcome:
    """The engine's :class:`~evalcore.fusion_search.WeightSearch` outcome as :class:`FoundWeights`."""
    if not out.ok:
        return out
    r = out.value
    return S.Outcome(FoundWeights(dict(r.weights), r.trials, float(r.value_tune), float(r.value_test),
                                  len(r.tune_queries), len(r.test_queries)), None, out.warnings)


def weight_search(ctx: S.Context, names: list[str], *, metric: str, k: int, progress_slot: Any = None,
                  aspect: str | None = None, **options: Any) -> S.Outcome:
    """Fusion weight search of the named runs on metric@k (:func:`evalcore.workspace.search_fusion_weights`), as
    :class:`FoundWeights`; a search not yet made shows its trials in ``progress_slot`` with a Cancel button (a
    minute at 20,000 queries).

    Its result is kept with the session's selections (:data:`dashboard.persist.SEL_FUSION_SEARCH`, in the
    workspace's ui_state or the user's data folder), under a key of everything it depends on: the evaluation's
    key (the runs' names and contents, the ground truth's content, the settings), the fused runs' contents, the
    metric@k, every option of the search (method, normalisation, strategy, step, trials, seed, split, c, top-N)
    and the engine's code (:func:`evalcore.workspace.derived.code_fingerprint`). A reload, a new tab or a restarted
    server with the same inputs shows it without searching again; any other input searches again (and keeps that).
    """
    from dashboard import persist as P
    from evalcore.workspace.derived import code_fingerprint

    if aspect is None:  # (``aspect``: the one the fused run is judged against, that of the first run by default)
        aspect = ctx.run_aspect[names[0]]
    key = S._key("weights", ctx.eval_key, [ctx.run_keys[S.ws_uid(ctx.ws, n)] for n in names], aspect, metric, int(k),
                 sorted(options.items()), code_fingerprint())
    if key not in S._memo():
        kept = search_of_record(st.session_state.get(P.SEL_FUSION_SEARCH), key)
        if kept is not None:
            return S.memo(key, lambda: kept)
    cb, skip = S.long_step(progress_slot, "searching the fusion weights (trials)", key, known=key in S._memo())
    if skip:
        return S.Outcome(error=S.CANCELLED)
    runs = {n: ctx.runs[n] for n in names}
    try:
        out = S.memo(key, lambda: _found(_c_weights(key, ctx.qrels[aspect], ctx.reference, runs, ctx.settings,
                                                    metric, int(k), dict(options), cb)))
    finally:
        if progress_slot is not None:
            progress_slot.empty()
    before = st.session_state.get(P.SEL_FUSION_SEARCH)
    if out.ok and not (isinstance(before, dict) and before.get("key") == key):
        st.session_state[P.SEL_FUSION_SEARCH] = search_record(key, out)  # (None: too big, the older one dropped)
        P.publish()
    return out


def tie_reordered(ctx: S.Context) -> list[str]:
    """Runs ranked with equal scores by id ascending (embedding runs; fusions with a tie rule of their own)
    whose order the settings' tie rule ``trec`` turns to id descending (``evaluate`` warns alike)."""
    from evalcore.ranking import canonical_ties, has_equal_scores

    if canonical_ties(ctx.settings.ties) != "trec":
        return []
    out = []
    for src in ctx.ws.runs:
        own = src.kind == "embedding" or (src.kind == "fused" and bool(src.fusion.ties)
                                          and canonical_ties(src.fusion.ties) != "trec")
        if own and src.name in ctx.runs and src.uid in ctx.run_keys:
            if S.memo("ties:" + ctx.run_keys[src.uid], lambda r=ctx.runs[src.name]: has_equal_scores(r)):
                out.append(src.name)
    return out


def cut_embedding_runs(ctx: S.Context, names: list[str]) -> dict[str, int]:
    """Embedding runs among ``names`` ranked to fewer items than they rank in all (the settings' depth):
    name -> the length of their whole ranking (the corpus, less the item itself when item-to-item)."""
    out = {}
    for src in ctx.ws.runs:
        if src.name not in names or src.kind != "embedding" or src.uid not in ctx.run_keys:
            continue
        docs = S.memo("ndocs:" + ctx.run_keys[src.uid], lambda src=src: len(W.run_embeddings(src)))
        own_queries = src.query_blob is not None or bool(src.store is not None and src.store.record.query_artifact)
        whole = docs - (0 if own_queries else 1)
        if ctx.settings.depth < whole:
            out[src.name] = whole
    return out


@dataclass(frozen=True)
class Diversity:
    """ILD@k and α-nDCG@k of the runs with embeddings (:func:`diversity`)."""

    summary: pd.DataFrame  # evalcore.workspace.diversity_summary of the runs with embeddings
    runs: tuple[str, ...]  # runs with embeddings, in display order
    without: tuple[str, ...]  # runs without (ranked files, fusions)
    errors: dict[str, str] = field(default_factory=dict)  # run -> message


def diversity(ctx: S.Context, k: int, alpha: float = W.DIVERSITY_ALPHA) -> Diversity:
    """Diversity at cutoff ``k`` (α-nDCG at ``alpha``) of every evaluated run whose items have embeddings.

    One :func:`evalcore.workspace.run_diversity` per run, cached by the run's
    and its ground truth's content keys and the settings, over the queries the
    evaluation kept for that run.
    """
    m0, k0 = S.metric_k_pairs(ctx)[0]
    first = S.metric_slice(ctx, m0, k0)
    tables, runs, without, errs = [], [], [], {}
    sources = {r.name: r for r in ctx.ws.runs}
    # one entry for every run (one per run pushed the rest of the session's memo out beyond MEMO_SIZE runs)
    with_embeddings = S.memo("hasemb:" + ctx.eval_key, lambda: {
        name: W.has_embeddings(sources[name]) for name in ctx.run_names})
    for name in ctx.run_names:
        src = sources[name]
        if not with_embeddings[name]:
            without.append(name)
            continue
        aspect = ctx.run_aspect[name]
        key = "div:" + S._key(ctx.run_keys[src.uid], name, ctx.qrels_keys.get(aspect), ctx.settings.eval_key(), int(k),
                            float(alpha))  # the name too: the table's run column (two runs may share their content)
        qids = S.shared(f"evalq:{ctx.eval_key}:{name}", lambda name=name: sorted(
            set(first.loc[first["run"].astype(str) == name, "query_id"].astype(str))))
        # judged against what nDCG@k was judged against (a reference model's top-k at this k)
        gt = ctx.qrels_at(name, int(k))
        out = S.memo(key, lambda src=src, name=name, key=key, gt=gt, qids=qids: S._c_diversity(
            key, src, ctx.runs[name], gt, int(k), ctx.settings.ties, qids, bool(ctx.settings.judged_only),
            float(alpha)))
        if out.ok:
            tables.append(out.value)
            runs.append(name)
        else:
            errs[name] = out.error
    skey = "divsum:" + S._key([ctx.eval_key, int(k), float(alpha), runs, S.MEAN_CI, S.N_RESAMPLES, S.CI_SEED])
    summ = S.shared(skey, lambda: S.kept_frame("diversity_summary", skey, lambda: W.diversity_summary(
        tables, ci_method=S.MEAN_CI, n_resamples=S.N_RESAMPLES, seed=S.CI_SEED)))
    return Diversity(summ, tuple(runs), tuple(without), errs)

"""From aggregates down to single queries: the data behind the Compare, Queries and Domains pages.

Pure Python (pandas/numpy), no Streamlit, no metric formulas: every value is
read from the per-query table of :func:`evalcore.evaluate` or aggregated by
:mod:`evalcore.aggregate` / :mod:`evalcore.stats`; the per-query view reads
the qrels and the runs' rankings in the evaluation order of the chosen tie rule
(:func:`evalcore.ranking.rank_order`), so the ranks shown are the ranks the
metrics used.

* :func:`query_table` — one row per query: each run's metric@k and the
  difference between two runs; :func:`filter_queries` sorts and filters it.
* :func:`query_view` — one query: the ground truth with grades and where each
  run placed each judged item ("g1 at rank 37", "g2 not in top 100"), each
  run's top-k with hits marked by grade, and what one run has that another lacks.
* :func:`pair_frame`, :func:`compare_matrix` — the Compare page's scatter and
  runs × runs matrix.
* :func:`domain_frame`, :func:`domain_sizes` — the Domains page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalcore.aggregate import metric_at_k_label, wide_per_query
from evalcore.data import Qrels, Run
from evalcore.defaults import MEAN_RESAMPLES, SEED
from evalcore.errors import OptionError
from evalcore.intervals import summarize_with_intervals
from evalcore.ranking import rank_order

__all__ = [
    "DIFF_COLUMN", "P_THRESHOLD", "format_p_value", "query_table", "filter_queries", "QueryView", "query_view", "placement_text",
    "pair_frame", "compare_matrix", "against_baseline", "domain_flips", "domain_frame", "domain_sizes", "hit_mark",
]

#: Name of the difference column of :func:`query_table`.
DIFF_COLUMN = "difference"
#: p-values below this read ``"<0.001"`` (:func:`format_p_value`).
P_THRESHOLD = 0.001


def signed3(x: float) -> str:
    """A difference to 3 decimals with its sign ("+0.012", "-0.300"); "0.000" when it rounds to zero
    (no "-0.000" / "+0.000" for identical runs).

    >>> [signed3(v) for v in (0.0123, -0.3, 0.0, -0.0004, 0.0005)]
    ['+0.012', '-0.300', '0.000', '0.000', '+0.001']
    """
    text = f"{float(x):+.3f}"
    return "0.000" if text in ("+0.000", "-0.000") else text


def format_p_value(p: object, *, threshold: float = P_THRESHOLD, digits: int = 4, missing: str = "–") -> str:
    """A p-value as readable text: ``"0.387"``, ``"0.04962"``, ``"<0.001"``.

    Parameters
    ----------
    p : float or None
        The p-value.
    threshold : float, default :data:`P_THRESHOLD`
        Values below it read ``"<0.001"`` (their digits tell a reader nothing
        more, and scientific notation such as ``3.9e-21`` is easy to misread).
    digits : int, default 4
        Significant digits of the other values, trailing zeros dropped
        (``0.3870`` -> ``"0.387"``, ``1.0`` -> ``"1"``; ``0.04996`` stays
        ``"0.04996"``, never rounded across 0.05).
    missing : str, default "–"
        Text of a missing value (None, NaN: a comparison that was not tested).

    Returns
    -------
    str
    """
    if p is None or p is pd.NA:
        return missing
    v = float(p)
    if not np.isfinite(v):
        return missing
    if v < threshold:
        return f"<{threshold:g}"
    return f"{v:.{int(digits)}g}"


def _plain(table: pd.DataFrame) -> pd.DataFrame:
    if isinstance(table["domain"].dtype, pd.CategoricalDtype):
        return table.assign(domain=table["domain"].astype(object).fillna("").astype(str))
    return table


# ------------------------------------------------------------------------------------------ query table


def query_table(
    table: pd.DataFrame,
    *,
    metric: str,
    k: int,
    runs: Sequence[str] | None = None,
    run_a: str | None = None,
    run_b: str | None = None,
) -> pd.DataFrame:
    """One row per query: domain, each run's value of metric@k, and ``difference`` = B − A.

    Built with :func:`evalcore.aggregate.wide_per_query` (paired by query id).
    Columns: ``query_id, domain, <run>..., difference`` (the last only when
    both ``run_a`` and ``run_b`` are given); a run lacking a query is NaN.
    """
    t = _plain(table)
    wide = wide_per_query(t, metric=metric, k=k, runs=list(runs) if runs is not None else None)
    out = wide.reset_index()
    if run_a is not None and run_b is not None:
        return with_difference(out, run_a=run_a, run_b=run_b)
    return out


def with_difference(qt: pd.DataFrame, *, run_a: str, run_b: str) -> pd.DataFrame:
    """A :func:`query_table` (without runs A and B) with its ``difference`` column, B − A: a new frame, ``qt``
    unchanged (a page keeps the table of every run once and adds the difference of the pair it shows)."""
    for r in (run_a, run_b):
        if r not in qt.columns:
            raise OptionError(f"run {r!r} is not among the runs of the table")
    return qt.assign(**{DIFF_COLUMN: qt[run_b] - qt[run_a]})


def filter_queries(
    qt: pd.DataFrame,
    *,
    domains: Sequence[str] | None = None,
    search: str | None = None,
    sort_by: str | None = None,
    ascending: bool = True,
) -> pd.DataFrame:
    """Filter a :func:`query_table` by domain and by a case-insensitive substring of the query id, then sort.

    ``sort_by`` is a column (a run, ``difference``, ``query_id``); ties keep
    query-id order, NaN last. Worst first = ``ascending=True`` on a run column.
    """
    out = qt
    if domains:
        out = out[out["domain"].astype(str).isin([str(d) for d in domains])]
    if search:
        out = out[out["query_id"].astype(str).str.contains(str(search), case=False, regex=False)]
    if sort_by is not None:
        if sort_by not in out.columns:
            raise OptionError(f"cannot sort by {sort_by!r}; columns are {list(out.columns)}")
        out = out.sort_values([sort_by, "query_id"], ascending=[ascending, True], kind="mergesort",
                              na_position="last")
    return out.reset_index(drop=True)


# ------------------------------------------------------------------------------------------ one query


def hit_mark(grade: int | None, rel_threshold: int = 1) -> str:
    """Plain-text mark of a retrieved item: ``"✔ g3"`` relevant (grade 3), ``"✗ g0"`` judged not relevant, ``""`` unjudged."""
    if grade is None or (isinstance(grade, float) and np.isnan(grade)):
        return ""
    g = int(grade)
    return f"✔ grade {g}" if g >= rel_threshold else f"✗ grade {g}"


def placement_text(label: str, rank: int | None, depth: int) -> str:
    """``"g1 at rank 37"`` or ``"g1 not in top 100"`` (``depth`` = the run's list length for the query)."""
    if rank is None:
        return f"{label} not in top {depth}" if depth else f"{label} not retrieved (query absent from the run)"
    return f"{label} at rank {rank}"


@dataclass(frozen=True)
class QueryView:
    """Everything the Queries page shows for one query (see :func:`query_view`).

    Attributes
    ----------
    query_id : str
    domain : str
    ground_truth : DataFrame
        One row per judged item, best grade first: ``label`` (g1, g2, ...),
        ``doc_id``, ``grade``, ``relevant``, [``title``,] then per run
        ``rank: <run>`` (int, NaN when not retrieved) and ``placed by <run>``
        (text such as ``"g1 at rank 37"``).
    lists : dict of run -> DataFrame
        The run's top-k: ``rank, doc_id, score, grade, hit, label`` [``, title``]
        (``grade`` NaN when unjudged, ``label`` the item's g-label if judged relevant).
    depth : dict of run -> int
        Number of items the run ranked for this query.
    """

    query_id: str
    domain: str
    k: int
    ground_truth: pd.DataFrame
    lists: dict[str, pd.DataFrame]
    depth: dict[str, int]
    full: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def only_in(self, run_a: str, run_b: str, *, k: int | None = None) -> pd.DataFrame:
        """Items in ``run_a``'s top-k that are not in ``run_b``'s top-k, with grade and ``run_b``'s rank of them."""
        k = self.k if k is None else int(k)
        if run_a == run_b:
            raise OptionError("choose two different runs")
        a = self.full[run_a]
        b = self.full[run_b]
        a_top = a[a["rank"] <= k]
        b_top = set(b.loc[b["rank"] <= k, "doc_id"])
        out = a_top[~a_top["doc_id"].isin(b_top)].copy()
        b_rank = dict(zip(b["doc_id"], b["rank"], strict=True))
        out[f"rank: {run_b}"] = [b_rank.get(d, np.nan) for d in out["doc_id"]]
        keep = ["rank", "doc_id", "score", "grade", "hit", f"rank: {run_b}"] + (["title"] if "title" in out else [])
        return out[keep].rename(columns={"rank": f"rank: {run_a}"}).reset_index(drop=True)


def _run_rows(run: Run, query_id: str, ties: str) -> pd.DataFrame:
    """The run's ranked list for one query, in evaluation order: ``rank`` (1-based), ``doc_id``, ``score``."""
    pos_q = pd.Index(run.query_ids).get_indexer([query_id])[0]
    if pos_q < 0:
        return pd.DataFrame({"rank": pd.Series(dtype=np.int64), "doc_id": pd.Series(dtype=object),
                             "score": pd.Series(dtype=np.float64)})
    order, pos = rank_order(run, ties=ties)
    q_sorted = run.q[order]
    lo, hi = np.searchsorted(q_sorted, [pos_q, pos_q + 1])
    rows = order[lo:hi]
    return pd.DataFrame({"rank": pos[lo:hi] + 1, "doc_id": run.doc_vocab[run.d[rows]], "score": run.scores[rows]})


def query_view(
    qrels: Qrels,
    runs: Mapping[str, Run],
    query_id: str,
    *,
    k: int,
    ties: str = "trec",
    rel_threshold: int = 1,
    metadata: pd.DataFrame | None = None,
) -> QueryView:
    """Ground truth and every run's list for one query, side by side (see :class:`QueryView`).

    Judged items are labelled ``g1, g2, ...`` by grade (highest first; equal
    grades keep the ground truth's order). ``metadata`` (``doc_id, title[, text]``)
    adds a ``title`` column.
    """
    if int(k) < 1:
        raise OptionError(f"k must be >= 1, got {k!r}")
    k = int(k)
    qpos = pd.Index(qrels.query_ids).get_indexer([query_id])[0]
    if qpos < 0:
        raise OptionError(f"query {query_id!r} is not in the ground truth")
    sel = qrels.q == qpos
    gt = pd.DataFrame({"doc_id": qrels.doc_ids[sel], "grade": qrels.grades[sel].astype(np.int64)})
    gt = gt.sort_values("grade", ascending=False, kind="mergesort").reset_index(drop=True)
    gt.insert(0, "label", [f"g{i + 1}" for i in range(len(gt))])
    gt["relevant"] = gt["grade"] >= rel_threshold
    titles = None
    if metadata is not None and len(metadata):
        titles = dict(zip(metadata["doc_id"].astype(str), metadata["title"].astype(str), strict=True))
        gt["title"] = [titles.get(str(d), "") for d in gt["doc_id"]]
    grade_of = dict(zip(gt["doc_id"], gt["grade"], strict=True))
    label_of = dict(zip(gt["doc_id"], gt["label"], strict=True))

    lists: dict[str, pd.DataFrame] = {}
    full: dict[str, pd.DataFrame] = {}
    depth: dict[str, int] = {}
    for name, run in runs.items():
        rows = _run_rows(run, query_id, ties)
        rows["grade"] = [grade_of.get(d, np.nan) for d in rows["doc_id"]]
        rows["hit"] = [hit_mark(g, rel_threshold) for g in rows["grade"]]
        rows["label"] = [label_of.get(d, "") for d in rows["doc_id"]]
        if titles is not None:
            rows["title"] = [titles.get(str(d), "") for d in rows["doc_id"]]
        full[name] = rows
        lists[name] = rows[rows["rank"] <= k].reset_index(drop=True)
        depth[name] = int(len(rows))
        rank_of = dict(zip(rows["doc_id"], rows["rank"], strict=True))
        ranks = [rank_of.get(d) for d in gt["doc_id"]]
        gt[f"rank: {name}"] = pd.array([r if r is not None else pd.NA for r in ranks], dtype="Int64")
        gt[f"placed by {name}"] = [placement_text(lab, r, depth[name]) for lab, r in zip(gt["label"], ranks, strict=True)]
    dom = qrels.domain_of()[qpos]
    return QueryView(str(query_id), str(dom), k, gt, lists, depth, full)


# ------------------------------------------------------------------------------------------ pairs


def pair_frame(table: pd.DataFrame, *, metric: str, k: int, run_a: str, run_b: str) -> pd.DataFrame:
    """Per-query values of two runs (paired by query id): ``query_id, domain, a, b, difference`` (b − a).

    Queries missing from either run are dropped (as the paired tests do).
    """
    qt = query_table(table, metric=metric, k=k, runs=[run_a] if run_a == run_b else [run_a, run_b],
                     run_a=run_a, run_b=run_b)
    out = pd.DataFrame({"query_id": qt["query_id"], "domain": qt["domain"], "a": qt[run_a], "b": qt[run_b]})
    out[DIFF_COLUMN] = out["b"] - out["a"]
    return out.dropna(subset=["a", "b"]).reset_index(drop=True)


def one_sided(table: pd.DataFrame, *, metric: str, k: int, run_a: str, run_b: str) -> tuple[int, int]:
    """``(only_a, only_b)``: queries of both runs where only A (only B) has a value — for ``first_rel_rank``,
    where only that run finds a relevant document; :func:`pair_frame` and the paired tests leave them out.
    """
    if run_a == run_b:
        return 0, 0
    qt = query_table(table, metric=metric, k=k, runs=[run_a, run_b], run_a=run_a, run_b=run_b)
    a, b = qt[run_a].notna().to_numpy(), qt[run_b].notna().to_numpy()
    return int((a & ~b).sum()), int((b & ~a).sum())


def compare_matrix(cmp: pd.DataFrame, runs: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Runs × runs matrices from :func:`evalcore.stats.compare` (all pairs of one metric@k).

    Cell (row R, column C) is about R − C: ``diff`` = mean(R) − mean(C) (so a
    positive cell means the row run is better), ``p`` the raw and ``p_adjusted``
    the corrected p-value, ``significant`` after correction; the diagonal is
    NaN / False. ``text`` holds the display text ``"+0.085\\np=0.01234 *"`` (:func:`format_p_value`).
    """
    runs = [str(r) for r in runs]
    diff = pd.DataFrame(np.nan, index=runs, columns=runs)
    p = diff.copy()
    padj = diff.copy()
    sig = pd.DataFrame(False, index=runs, columns=runs)
    for row in cmp.itertuples(index=False):
        a, b = str(row.run_a), str(row.run_b)
        if a not in diff.index or b not in diff.index:
            continue
        diff.loc[b, a] = row.diff
        diff.loc[a, b] = -row.diff
        for m, v in ((p, row.p_value), (padj, row.p_adjusted)):
            m.loc[a, b] = m.loc[b, a] = v
        sig.loc[a, b] = sig.loc[b, a] = bool(row.significant)
    text = pd.DataFrame("", index=runs, columns=runs)
    for r in runs:
        for c in runs:
            if r == c or np.isnan(diff.loc[r, c]):
                continue
            pv = padj.loc[r, c]
            ptxt = "p=n/a" if np.isnan(pv) else f"p{'' if pv < P_THRESHOLD else '='}{format_p_value(pv)}"
            text.loc[r, c] = f"{signed3(diff.loc[r, c])}\n{ptxt}{' *' if sig.loc[r, c] else ''}"
    return {"diff": diff, "p": p, "p_adjusted": padj, "significant": sig, "text": text}


def against_baseline(cmp: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Rows of :func:`evalcore.stats.compare` involving ``baseline``, oriented as *run − baseline*.

    ``compare`` reports each pair once as B − A; a pair where the baseline is
    B is flipped (difference, CI and effect size negated, wins and losses
    swapped) so that every row reads "this run against the baseline".
    Columns: ``run, mean, baseline mean, difference, ci_low, ci_high,
    effect_size, p_value, p_adjusted, significant, wins, ties, losses, n, note``.
    """
    rows = []
    for r in cmp.itertuples(index=False):
        if baseline not in (r.run_a, r.run_b):
            continue
        forward = r.run_a == baseline
        rows.append({
            "run": r.run_b if forward else r.run_a,
            "mean": r.mean_b if forward else r.mean_a,
            "baseline mean": r.mean_a if forward else r.mean_b,
            "difference": r.diff if forward else -r.diff,
            "ci_low": r.ci_low if forward else -r.ci_high,
            "ci_high": r.ci_high if forward else -r.ci_low,
            "effect_size": r.effect_size if forward else -r.effect_size,
            "p_value": r.p_value, "p_adjusted": r.p_adjusted, "significant": bool(r.significant),
            "wins": int(r.wins if forward else r.losses), "ties": int(r.ties),
            "losses": int(r.losses if forward else r.wins), "n": int(r.n), "note": r.note,
        })
    cols = ["run", "mean", "baseline mean", "difference", "ci_low", "ci_high", "effect_size", "p_value",
            "p_adjusted", "significant", "wins", "ties", "losses", "n", "note"]
    return pd.DataFrame(rows, columns=cols)


def domain_flips(overall: pd.DataFrame, by_domain: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Domains where a run's difference to the baseline is significant and of the opposite sign overall.

    ``overall``: :func:`evalcore.stats.compare` output (any pairs); ``by_domain``:
    :func:`evalcore.stats.compare_by_domain` against ``baseline``. Columns:
    ``run, domain, overall difference, domain difference`` (both run − baseline).
    """
    ov = against_baseline(overall, baseline).set_index("run")["difference"]
    rows = []
    for d in by_domain.itertuples(index=False):
        if d.run_a != baseline or d.run_b not in ov.index or not d.significant:
            continue
        if ov[d.run_b] * d.diff < 0:
            rows.append({"run": d.run_b, "domain": d.domain or "(none)", "overall difference": float(ov[d.run_b]),
                         "domain difference": float(d.diff)})
    return pd.DataFrame(rows, columns=["run", "domain", "overall difference", "domain difference"])


# ------------------------------------------------------------------------------------------ domains


def domain_frame(table: pd.DataFrame, *, metric: str, k: int, n_resamples: int = MEAN_RESAMPLES, seed: int = SEED,
                 runs: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean, CI and n of metric@k per run × domain (:func:`evalcore.intervals.summarize_with_intervals` by
    domain: percentile-bootstrap CIs on resamples shared by every run, none where n < 2), with the
    metric's declared aggregate (``aggregate``, ``aggregate_ci_low``, ``aggregate_ci_high``: the total
    of a count, the geometric mean of ``gm_map``), which the Domains page shows.

    ``runs``: only these runs' rows (the resamples are still drawn over every query of ``table`` with a value,
    so a run's intervals do not depend on which other runs are shown). Unknown domains (``""``) are shown as
    ``"(none)"``.
    """
    t = _plain(table)
    sel = t[(t["metric"].astype(str) == metric) & (t["k"] == int(k))]
    if sel.empty:
        raise OptionError(f"no values for {metric_at_k_label(metric, k)!r}")
    drawn = None
    if runs is not None:
        drawn = sorted({str(q) for q in sel.loc[np.isfinite(sel["value"].to_numpy(dtype=float)), "query_id"]})
        sel = sel[sel["run"].astype(str).isin(set(runs)).to_numpy()]
        if sel.empty:
            raise OptionError("no run chosen")
    s = summarize_with_intervals(sel, by=("run", "domain", "metric", "k"), n_resamples=n_resamples, seed=seed,
                                 aggregates=True, query_ids=drawn)
    s["run"] = s["run"].astype(str)
    s["domain"] = s["domain"].replace("", "(none)")
    return s


def domain_sizes(table: pd.DataFrame) -> pd.DataFrame:
    """Number of evaluated queries per domain: ``domain, n_queries`` (largest first).

    ``table``: the per-query table, or one metric@k of it (:func:`dashboard.tables.metric_slice`: every evaluated
    query has a row there for each run, and it is a small part of the whole table to read)."""
    q = table["query_id"].astype(str).to_numpy(dtype=object)
    d = _plain(table[["domain"]])["domain"].to_numpy(dtype=object)
    per = pd.DataFrame({"query_id": q, "domain": d}).drop_duplicates()
    out = per.groupby("domain").size().rename("n_queries").reset_index()
    out["domain"] = out["domain"].replace("", "(none)")
    return out.sort_values(["n_queries", "domain"], ascending=[False, True], kind="mergesort").reset_index(drop=True)

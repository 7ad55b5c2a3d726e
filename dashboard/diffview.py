"""One query as a diff of the runs' lists (the Queries page's drill-down), in the manner of DiffIR.

Pure pandas (no Streamlit): :func:`query_diff` reads the runs' rankings in the evaluation order of
the tie rule (:func:`evalcore.ranking.rank_order`, so the ranks are those the metrics used) and
each run's **own** ground truth (its aspect's qrels: a run evaluated against seed 001's
``content`` list is shown with the content grades), and lays out

* each run's top k as aligned rows: rank, a grade badge (``✔ 3`` relevant, ``✗ 0`` judged not
  relevant, ``·`` unjudged), the document id, its title, the score, and where the other runs
  ranked the same document (``B 3, C –``);
* a colour per document that appears in more than one list, the same in every list and in the
  ground truth, so that the same document is visibly the same;
* per ground truth (aspect), its judged items, best grade first, with the rank each run of that
  aspect gave them (``> 100`` when not in its list).

:func:`style_list` / :func:`style_truth` add the colours (``pandas.Styler``, which
``st.dataframe`` renders as cell backgrounds; the text stays plain).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dashboard.drilldown import _run_rows
from evalcore.data import Qrels, Run

__all__ = ["RUN_CODES", "DOC_COLOURS", "Diff", "query_diff", "style_list", "style_truth", "badge"]

RUN_CODES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: Light colours (dark text stays readable) given to documents listed by more than one run: yellows,
#: blues and violets only, far (CIELAB ΔE ≥ 25) from every grade colour (green, pink, grey), so that a
#: shared document's fill never reads as a grade; they repeat beyond six shared documents.
DOC_COLOURS = ("#FFE08A", "#87DDFF", "#E3B8FF", "#C9A85C", "#B0B7F8", "#71BEF3")
GRADE_COLOURS = {"relevant": "#C8EFC8", "not relevant": "#F8D0CC", "unjudged": "#EEEEEE"}
UNJUDGED = "·"
#: Columns of a run's list, in display order (the title last: it takes the width that is left).
LIST_COLUMNS = ["rank", "grade", "doc_id", "elsewhere", "score", "title"]


def badge(grade: float | None, rel_threshold: int = 1) -> str:
    """``"✔ 3"`` (relevant, grade 3), ``"✗ 0"`` (judged, not relevant), ``"·"`` (not judged)."""
    if grade is None or (isinstance(grade, float) and np.isnan(grade)):
        return UNJUDGED
    g = int(grade)
    return f"✔ {g}" if g >= rel_threshold else f"✗ {g}"


@dataclass(frozen=True)
class Diff:
    """Everything the drill-down shows for one query (see :func:`query_diff`).

    ``lists[run]`` columns: ``rank, grade, doc_id, elsewhere, score, title`` (``grade`` is the
    badge text; ``grade_value`` the number, NaN when unjudged). ``truth`` is one entry per
    aspect in use: ``(aspect, runs of that aspect, table)`` with table columns ``doc_id, grade``
    (led by ``ref #`` with a reference model), ``rank in <run>`` per run of the aspect, then ``title``.
    """

    query_id: str
    domain: str
    k: int
    codes: dict[str, str]
    aspects: dict[str, str | None]
    lists: dict[str, pd.DataFrame]
    depth: dict[str, int]
    truth: list[tuple[str | None, list[str], pd.DataFrame]]
    colours: dict[str, str] = field(default_factory=dict)


def _rows_of(qrels: Qrels, query_id: str) -> np.ndarray | None:
    """Mask of the judgment rows of ``query_id`` (in stored order), None for an unknown query."""
    qpos = pd.Index(qrels.query_ids).get_indexer([query_id])[0]
    return None if qpos < 0 else qrels.q == qpos


def _judged(qrels: Qrels, query_id: str) -> pd.DataFrame:
    sel = _rows_of(qrels, query_id)
    if sel is None:
        return pd.DataFrame({"doc_id": pd.Series(dtype=object), "grade": pd.Series(dtype=np.int64)})
    gt = pd.DataFrame({"doc_id": qrels.doc_ids[sel].astype(str), "grade": qrels.grades[sel].astype(np.int64)})
    return gt.sort_values("grade", ascending=False, kind="mergesort").reset_index(drop=True)


def reference_order(qrels: Qrels, query_id: str) -> list[str]:
    """A reference model's neighbours of ``query_id``, best first: the rows of its ground truth (built in
    neighbour order, :func:`evalcore.embedding_runs.reference_ground_truth`); ``[]`` for an unknown query."""
    sel = _rows_of(qrels, query_id)
    return [] if sel is None else [str(d) for d in qrels.doc_ids[sel]]


def query_diff(
    qrels_of: Mapping[str, Qrels],
    runs: Mapping[str, Run],
    query_id: str,
    *,
    k: int,
    ties: str = "trec",
    rel_threshold: int = 1,
    titles: Mapping[str, str] | None = None,
    aspects: Mapping[str, str | None] | None = None,
    domain: str = "",
    reference_order: Sequence[str] | None = None,
) -> Diff:
    """The drill-down of ``query_id``: each run against its own ground truth ``qrels_of[run]``.

    Parameters
    ----------
    qrels_of : mapping run -> Qrels
        The evaluated ground truth of each run (its aspect's).
    runs : mapping run -> Run
        In display order (the codes A, B, C... follow it).
    query_id : str
    k : int
        Rows per list (>= 1).
    ties, rel_threshold
        As in the evaluation.
    titles : mapping doc id -> title, optional
    aspects : mapping run -> aspect name, optional
    domain : str
        Shown as is.
    reference_order : sequence of str, optional
        A reference model as the ground truth: its neighbours of the query, best first (as deep as
        it was ranked). Each list then gets ``ref #`` (the item's rank there, ``> N`` beyond its
        ``N``), and so does the ground-truth table.
    """
    k = max(1, int(k))
    names = list(runs)
    codes = {r: RUN_CODES[i % len(RUN_CODES)] + ("" if i < len(RUN_CODES) else str(i // len(RUN_CODES)))
             for i, r in enumerate(names)}
    aspects = {r: (aspects or {}).get(r) for r in names}
    titles = titles or {}
    full = {r: _run_rows(runs[r], str(query_id), ties).assign(doc_id=lambda d: d["doc_id"].astype(str))
            for r in names}
    depth = {r: int(len(full[r])) for r in names}
    rank_of = {r: dict(zip(full[r]["doc_id"], full[r]["rank"], strict=True)) for r in names}
    judged_of: dict[int, pd.DataFrame] = {}
    for r in names:
        judged_of.setdefault(id(qrels_of[r]), _judged(qrels_of[r], str(query_id)))
    lists: dict[str, pd.DataFrame] = {}
    ref_rank = None if reference_order is None else {str(d): i + 1 for i, d in enumerate(reference_order)}
    beyond = f"> {len(reference_order)}" if reference_order is not None else ""
    for r in names:
        top = full[r][full[r]["rank"] <= k]
        jd = judged_of[id(qrels_of[r])]
        grades = dict(zip(jd["doc_id"], jd["grade"], strict=True))
        g = np.array([grades.get(d, np.nan) for d in top["doc_id"]], dtype=float)
        others = [o for o in names if o != r]
        lists[r] = pd.DataFrame({
            "rank": top["rank"].to_numpy(dtype=np.int64),
            "grade": [badge(x, rel_threshold) for x in g],
            "doc_id": top["doc_id"].to_numpy(dtype=object),
            "elsewhere": [", ".join(f"{codes[o]} {rank_of[o].get(d, '–')}" for o in others) for d in top["doc_id"]],
            "score": top["score"].to_numpy(dtype=float),
            "title": [titles.get(d, "") for d in top["doc_id"]],
            "grade_value": g,
        })
        if ref_rank is not None:
            lists[r].insert(3, "ref #", [str(ref_rank[d]) if d in ref_rank else beyond for d in top["doc_id"]])
    seen: dict[str, int] = {}
    for r in names:
        for d in lists[r]["doc_id"]:
            seen[d] = seen.get(d, 0) + 1
    shared = [d for r in names for d in lists[r]["doc_id"] if seen[d] > 1]
    colours = {d: DOC_COLOURS[i % len(DOC_COLOURS)] for i, d in enumerate(dict.fromkeys(shared))}
    truth = []
    for key in dict.fromkeys(id(qrels_of[r]) for r in names):
        group = [r for r in names if id(qrels_of[r]) == key]
        gt = judged_of[key].copy()
        if ref_rank is not None:  # (without a reference the rows need no label: a g1, g2... counter said nothing)
            gt.insert(0, "ref #", [str(ref_rank[d]) if d in ref_rank else beyond for d in gt["doc_id"]])
        for r in group:
            gt[f"rank in {r}"] = [(str(rank_of[r][d]) if d in rank_of[r] else
                                   (f"> {depth[r]}" if depth[r] else "– (query not in the run)"))
                                  for d in gt["doc_id"]]
        gt["title"] = [titles.get(d, "") for d in gt["doc_id"]]
        truth.append((aspects[group[0]], group, gt))
    return Diff(str(query_id), str(domain), k, codes, aspects, lists, depth, truth, colours)


def _grade_colour(text: str) -> str:
    if text.startswith("✔"):
        return GRADE_COLOURS["relevant"]
    if text.startswith("✗"):
        return GRADE_COLOURS["not relevant"]
    return GRADE_COLOURS["unjudged"]


def style_list(frame: pd.DataFrame, colours: Mapping[str, str], *, columns: Sequence[str] | None = None):
    """A ``pandas.Styler`` of one run's list: grade badges coloured, shared documents in their colour."""
    cols = list(columns or LIST_COLUMNS)
    view = frame[cols]

    def paint(df: pd.DataFrame) -> pd.DataFrame:
        out = pd.DataFrame("", index=df.index, columns=df.columns)
        if "grade" in df:
            out["grade"] = [f"background-color: {_grade_colour(t)}" for t in df["grade"]]
        if "doc_id" in df:
            out["doc_id"] = [f"background-color: {colours[d]}" if d in colours else "" for d in df["doc_id"]]
        return out

    return view.style.apply(paint, axis=None).format({"score": "{:.4f}"} if "score" in cols else {})


def style_truth(frame: pd.DataFrame, colours: Mapping[str, str]):
    """A ``pandas.Styler`` of a ground-truth table: documents listed by several runs in their colour."""
    def paint(df: pd.DataFrame) -> pd.DataFrame:
        out = pd.DataFrame("", index=df.index, columns=df.columns)
        out["doc_id"] = [f"background-color: {colours[d]}" if d in colours else "" for d in df["doc_id"]]
        return out

    return frame.style.apply(paint, axis=None)

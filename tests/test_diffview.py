"""The drill-down as a diff (issue 10, item 2) and the query pickers at 50,000 queries (item 3): pure helpers."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd

from dashboard import drilldown as D
from dashboard import picker as P
from dashboard.diffview import (
    DOC_COLOURS,
    GRADE_COLOURS,
    LIST_COLUMNS,
    badge,
    query_diff,
    style_list,
)
from evalcore.data import Qrels, Run


def test_badges():
    assert badge(3) == "✔ 3" and badge(0) == "✗ 0" and badge(float("nan")) == "·" and badge(1, 2) == "✗ 1"


def test_each_run_against_its_own_ground_truth_with_ranks_elsewhere_and_shared_colours():
    content = Qrels.from_dict({"q": {"d1": 3, "d2": 1, "d9": 2}})
    overall = Qrels.from_dict({"q": {"d1": 1, "d3": 3}})
    a = Run.from_dict({"q": {"d1": 3.0, "d2": 2.0, "d4": 1.0}}, name="a")
    b = Run.from_dict({"q": {"d3": 3.0, "d1": 2.0, "d5": 1.0}}, name="b")
    c = Run.from_dict({"other": {"d1": 1.0}}, name="c")  # lacks the query
    diff = query_diff({"a": content, "b": overall, "c": overall}, {"a": a, "b": b, "c": c}, "q", k=2,
                      titles={"d1": "One"}, aspects={"a": "content", "b": "overall", "c": "overall"})
    assert diff.codes == {"a": "A", "b": "B", "c": "C"}
    la, lb = diff.lists["a"], diff.lists["b"]
    assert list(la["doc_id"]) == ["d1", "d2"] and list(la["grade"]) == ["✔ 3", "✔ 1"]  # content grades
    assert list(lb["doc_id"]) == ["d3", "d1"] and list(lb["grade"]) == ["✔ 3", "✔ 1"]  # overall grades
    assert list(la["elsewhere"]) == ["B 2, C –", "B –, C –"]
    assert list(lb["elsewhere"]) == ["A –, C –", "A 1, C –"]  # a does not list d3
    assert list(la["title"]) == ["One", ""] and diff.lists["c"].empty
    # d1 is listed by a and b: one colour, the same in both; the others none
    assert set(diff.colours) == {"d1"} and diff.colours["d1"] in DOC_COLOURS
    styled = style_list(la, diff.colours).to_html()
    assert diff.colours["d1"].lower() in styled.lower()
    # one ground-truth table per ground truth, with the ranks its runs gave
    assert [(asp, runs) for asp, runs, _ in diff.truth] == [("content", ["a"]), ("overall", ["b", "c"])]
    ov = diff.truth[1][2]
    assert list(ov["doc_id"]) == ["d3", "d1"] and list(ov["rank in b"]) == ["1", "2"]
    assert list(ov["rank in c"]) == ["– (query not in the run)"] * 2
    ct = diff.truth[0][2]
    assert list(ct["doc_id"]) == ["d1", "d9", "d2"] and list(ct["rank in a"]) == ["1", "> 3", "2"]


def lab(hex_colour: str) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour ``#RRGGBB``."""
    c = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ c
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str) -> float:
    """CIE76 colour difference (about 2.3 = just noticeable side by side; 25 = clearly another colour)."""
    return float(np.linalg.norm(lab(a) - lab(b)))


def backgrounds(styler) -> dict[tuple[int, int], str]:
    """(row, column) -> background colour of each styled cell of a Styler's HTML."""
    out = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", styler.to_html()):
        colour = re.search(r"background-color:\s*(#[0-9A-Fa-f]{6})", body)
        for cell in re.findall(r"_row(\d+)_col(\d+)", selectors):
            if colour:
                out[(int(cell[0]), int(cell[1]))] = colour.group(1).upper()
    return out


def test_shared_document_colours_cannot_be_taken_for_grade_colours():
    for doc, (grade, colour) in itertools.product(DOC_COLOURS, GRADE_COLOURS.items()):
        assert delta_e(doc, colour) >= 25, (doc, grade, colour)
    for a, b in itertools.combinations(DOC_COLOURS, 2):
        assert delta_e(a, b) >= 15, (a, b)  # and each shared document's colour tells it from the next
    # the drill-down still marks the shared documents: an unjudged one (x), a relevant one (r)
    q = Qrels.from_dict({"q": {"r": 2, "n": 0}})
    a = Run.from_dict({"q": {"x": 4.0, "r": 3.0, "only_a": 2.0, "n": 1.0}}, name="a")
    b = Run.from_dict({"q": {"r": 4.0, "x": 3.0, "only_b": 2.0}}, name="b")
    diff = query_diff({"a": q, "b": q}, {"a": a, "b": b}, "q", k=4)
    assert set(diff.colours) == {"x", "r"} and diff.colours["x"] != diff.colours["r"]
    la = diff.lists["a"]
    cells = backgrounds(style_list(la, diff.colours))
    grade_col, doc_col = LIST_COLUMNS.index("grade"), LIST_COLUMNS.index("doc_id")
    for row, (doc, grade) in enumerate(zip(la["doc_id"], la["grade"], strict=True)):
        expected_grade = {"·": "unjudged", "✔ 2": "relevant", "✗ 0": "not relevant"}[grade]
        assert cells[(row, grade_col)] == GRADE_COLOURS[expected_grade].upper()
        if doc in diff.colours:
            assert cells[(row, doc_col)] == diff.colours[doc].upper()
            assert delta_e(cells[(row, doc_col)], cells[(row, grade_col)]) >= 25
        else:
            assert (row, doc_col) not in cells


def test_rank_elsewhere_counts_the_whole_list_not_only_the_top_k():
    q = Qrels.from_dict({"q": {"x": 1}})
    a = Run.from_dict({"q": {"x": 9.0, "y": 8.0}}, name="a")
    b = Run.from_dict({"q": {f"z{i}": float(20 - i) for i in range(10)} | {"x": 1.0}}, name="b")
    diff = query_diff({"a": q, "b": q}, {"a": a, "b": b}, "q", k=2)
    assert diff.lists["a"]["elsewhere"].iloc[0] == "B 11"


def test_every_query_is_reachable_among_50000_by_search_sort_and_pages():
    n = 50_000
    ids = [f"query-{i:06d}" for i in np.random.default_rng(0).permutation(n)]
    last = "query-049999"
    matches, exact = P.search_ids(ids, last)
    assert matches == [last] and exact == last
    matches, exact = P.search_ids(ids, "QUERY-04999")
    assert len(matches) == 10 and exact is None and last in matches
    assert P.search_ids(ids, "  ")[0] == ids
    qt = pd.DataFrame({"query_id": ids, "domain": "", "a": np.linspace(0, 1, n), "b": 0.5})
    qt["difference"] = qt["b"] - qt["a"]
    desc = D.filter_queries(qt, sort_by="query_id", ascending=False)
    assert desc["query_id"].iloc[0] == last
    asc = D.filter_queries(qt, sort_by="query_id", ascending=True)
    assert P.page_count(len(asc)) == 1000
    assert P.page_of(asc, 1000)["query_id"].iloc[-1] == last
    assert P.page_of(asc, 5000)["query_id"].iloc[-1] == last  # clipped to the last page
    opts = P.options_around(asc["query_id"].tolist(), last)
    assert len(opts) == P.MAX_OPTIONS and opts[0] == last


def test_the_rows_line_says_when_nothing_matches():
    kw = {"page": 1, "n_shown": 0, "n_matching": 0, "n_total": 300, "n_pages": 1}
    assert P.rows_caption(**kw, search=" zzz ") == "No query matches the search “zzz” (300 queries in all)."
    assert P.rows_caption(**kw, search="a_b*", domains=True) == (
        "No query matches the search “a\\_b\\*” and the chosen domains (300 queries in all).")
    assert P.rows_caption(**kw, domains=True) == "No query matches the chosen domains (300 queries in all)."
    assert P.rows_caption(**(kw | {"n_total": 0})) == "No query to show."
    assert P.rows_caption(page=2, n_shown=50, n_matching=120, n_total=300, n_pages=3, search="q") == (
        "Rows 51–100 of 120 matching queries (300 in all), page 2 of 3.")
    assert P.rows_caption(page=1, n_shown=7, n_matching=7, n_total=7, n_pages=1) == "Rows 1–7 of 7 queries, page 1 of 1."


def test_the_scatter_aggregates_thousands_of_queries_and_keeps_the_largest_differences_as_points():
    from dashboard.charts import pair_scatter

    rng = np.random.default_rng(1)
    n = 5000
    a = rng.random(n).round(3)
    b = np.clip(a + rng.normal(0, 0.2, n), 0, 1).round(3)
    pf = pd.DataFrame({"query_id": [f"q{i:05d}" for i in range(n)], "domain": "", "a": a, "b": b})
    pf["difference"] = pf["b"] - pf["a"]
    fig = pair_scatter(pf, run_a="A", run_b="B", metric_label="ndcg@10", max_points=300)
    density = [t for t in fig.data if t.type == "heatmap"]
    points = [t for t in fig.data if t.type in ("scatter", "scattergl") and t.mode == "markers"]
    assert len(density) == 1 and np.nansum(density[0].z) == n  # every query counted
    shown = set(np.concatenate([p.customdata for p in points]))
    assert len(shown) == 300
    top = pf.assign(abs_d=pf["difference"].abs()).sort_values(["abs_d", "query_id"], ascending=[False, True])
    assert shown == set(top["query_id"].head(300))
    small = pair_scatter(pf.head(200), run_a="A", run_b="B", metric_label="m", max_points=300)
    assert not [t for t in small.data if t.type == "heatmap"]
    assert sum(len(t.x) for t in small.data if t.mode == "markers") == 200

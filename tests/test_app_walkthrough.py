"""What a walk through every page in chromium found (the demo and a SciFact workspace, 2026-11-29), fixed and
checked here with AppTest: a run or a model drawn in one colour on one page and another elsewhere, ..."""

from __future__ import annotations

import json

import test_app as T

from dashboard import charts


def _specs(at) -> dict[str, dict]:
    return {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def _line_colours(spec: dict) -> dict[str, str]:
    """Each named line's colour (the traces drawn with lines and markers)."""
    return {t["name"]: t["line"]["color"] for t in spec["data"] if t.get("mode") == "lines+markers"}


def test_a_run_has_the_same_colour_on_the_domains_bars_as_on_the_overview_curves():
    """The Domains page coloured its bars by position (strong-128d blue, weak-64d orange, lexical green) while the
    Overview's curves colour each run by its model (lexical blue, strong-128d orange, weak-64d green): the same
    colour named another run on the next page."""
    at = T.start()
    curves = _line_colours(_specs(at)["overview_curves"])
    assert len(curves) == 3, curves
    T.goto(at, "domains")
    bars = {t["name"]: t["marker"]["color"] for t in _specs(at)["dom_bars"]["data"] if t["type"] == "bar"}
    assert bars == curves
    assert len(set(bars.values())) == 3


def test_the_versions_curve_has_its_model_s_colour_of_every_model_on_one_chart():
    """The single model's curve was always the palette's first blue; on "Every model on one chart" (and as its
    versions' hue on the Overview) the same model had a colour of its own."""
    from test_app_versions import fixture

    at = T.goto(T.start(fixture()[0]), "versions")
    model = at.selectbox(key="w_versions_sel_version_model").value
    single = _line_colours(_specs(at)["ver_curve"])[charts.ptext(model)]
    at.toggle(key="ver_all_models").set_value(True).run()
    assert not at.exception
    every = _line_colours(_specs(at)["ver_all_curve"])
    assert single == every[charts.ptext(model)]
    assert len(set(every.values())) == len(every) > 1


def _read_as_markdown(body: str) -> tuple[str, set[str]]:
    """(the text a reader sees, the inline token types) of a Markdown body as CommonMark (Streamlit's Markdown)
    reads it."""
    from markdown_it import MarkdownIt

    blocks = [b for b in MarkdownIt("commonmark").parse(body) if b.children is not None]
    tokens = [t for b in blocks for t in b.children]
    return "".join(t.content for t in tokens if t.type in ("text", "code_inline")), {t.type for t in tokens}


def test_the_data_page_s_path_caption_shows_its_globs():
    """"Add from a local path" said "a folder or a glob (/data/runs/.trec) ... ids files (_ids.txt)" in italics: the
    two '*' of its globs paired up as Markdown emphasis, so the example a user copies had lost its '*'. No caption
    of the Data page is read as emphasis."""
    at = T.empty_data_page()
    texts = {}
    for caption in at.caption:
        text, kinds = _read_as_markdown(caption.value)
        assert "em_open" not in kinds, caption.value
        texts[text] = kinds
    path = next(t for t in texts if t.startswith("A file on this server's disk"))
    assert "/data/runs/*.trec" in path and "(*_ids.txt)" in path


def test_the_data_page_says_how_many_documents_the_metadata_gave():
    """The query texts said "1,109 query texts" under their file; the document metadata (a 5,183-document SciFact
    corpus.jsonl) said nothing: a file read as no document looked the same as a file read whole."""
    from evalcore.workspace.demo import cached_demo

    at = T.goto(T.start(), "data")
    n = cached_demo().metadata["doc_id"].nunique()
    assert f"{n:,} documents" in [c.value for c in at.caption]


def _headers(element) -> list[str]:
    """The headers a table shows: its column config's labels, else its column names."""
    config = json.loads(element.proto.columns or "{}")
    return [config.get(str(c), {}).get("label", str(c)) for c in element.value.columns]


def test_the_agreement_pairs_table_names_its_measure():
    """Its columns read "mean" and "std" beside a heatmap titled with the measure: which mean, once the table is read
    (or copied) alone? They name the measure at k now."""
    at = T.goto(T.start(), "agreement")
    table = next(d for d in at.dataframe if "n_undefined" in d.value.columns)
    assert {"mean overlap@10", "std of overlap@10"} <= set(_headers(table))


def test_the_domains_that_disagree_name_the_baseline_and_the_metric():
    """"Domains that disagree with the overall result" gave an "overall difference" and a "domain difference"
    without saying of what: they are the metric@k of the run minus the baseline's, named now."""
    at = T.goto(T.start(), "domains")
    caption = next(T.unescape(c.value) for c in at.caption if c.value.startswith("Domains that disagree"))
    assert "ndcg@10 of the run − the baseline (strong-128d)" in caption


def test_the_leaderboard_says_over_how_many_queries_and_whether_sampled():
    """With a query sample (Data page, Settings) every mean of the leaderboard moved (SciFact's BM25 nDCG@10: 0.679 on
    its 300 queries, 0.787 on a sample of 100) while its caption said "mean over the evaluated queries" and the
    coverage column 100/100: how many, and that they are a sample, was only in the sidebar. So on the Fusion page's
    table of the fused run beside its inputs."""
    from dataclasses import replace

    from test_same_numbers import SETTINGS, snapshot

    at = T.goto(T.start(snapshot(replace(SETTINGS, sample_size=6, seed=7))), "overview")
    n = len(T.stored(at).load_qrels().query_ids)
    assert n > 6
    caption = next(T.unescape(c.value) for c in at.caption if c.value.startswith("★"))
    assert f"mean over the 6 evaluated queries (a seeded sample of the ground truth's {n}, seed 7)" in caption
    T.goto(at, "fusion")  # (its table of the fused run beside its inputs, the same way)
    caption = next(T.unescape(c.value) for c in at.caption if c.value.startswith("★"))
    assert f"over the 6 evaluated queries (a seeded sample of the ground truth's {n}, seed 7)." in caption
    at = T.goto(T.start(snapshot()), "overview")
    caption = next(T.unescape(c.value) for c in at.caption if c.value.startswith("★"))
    assert f"mean over the {n} evaluated queries [" in caption


def _binary_snapshot():
    """12 queries of one relevant document each; run a ranks it first on q00-q08, run b on q03-q11 (else they list
    one other document): every nDCG@k is 0 or 1, at (1, 0) three times, (1, 1) six times, (0, 1) three times."""
    from evalcore import workspace as W

    qids = [f"q{i:02d}" for i in range(12)]
    qrels = "".join(f"{q} 0 rel-{q} 1\n" for q in qids)

    def run(found: range, tag: str) -> bytes:
        return "".join(f"{q} Q0 {'rel-' if i in found else 'other-'}{q} 1 1.0 {tag}\n"
                       for i, q in enumerate(qids)).encode()

    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(5, 10), metrics=("ndcg",))),
                            W.Blob.of("qrels.txt", qrels.encode()))
    for name, found in (("a", range(0, 9)), ("b", range(3, 12))):
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", run(found, name)), name=name)
    return ws


def test_compare_says_when_queries_are_drawn_over_each_other():
    """On SciFact (one relevant document per query) the per-query scatter of BM25 against MiniLM showed a few dozen
    points for 300 queries: 165 ties sat on (0, 0) and (1, 1), one point each, and nothing said so. The caption
    counts the places and the largest pile."""
    at = T.goto(T.start(_binary_snapshot()), "compare")
    assert not at.exception and not T.errors(at)
    caption = next(T.unescape(c.value) for c in at.caption if c.value.startswith("Points above the diagonal"))
    assert ("The 12 queries are drawn at 3 places: queries with the same two values share a point (6 at A = 1, "
            "B = 1)") in caption
    spec = _specs(at)["cmp_scatter"]
    from test_app_measures import array

    drawn = [(x, y) for t in spec["data"] if t.get("mode") == "markers"
             for x, y in zip(array(t["x"]), array(t["y"]), strict=True)]
    assert len(drawn) == 12 and len(set(drawn)) == 3

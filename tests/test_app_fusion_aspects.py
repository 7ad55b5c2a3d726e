"""Fusion of runs judged against different aspects (seed 001 §7: spaces tuned on content and vibes, fused and
judged on overall similarity). A review: the fused run silently took the first input's aspect, and the table
starred "the best of the column" within each aspect without showing the aspects (vibe 0.151 ★, anchor 0.219)."""

from __future__ import annotations

from test_app_views import CONTENT, OVERALL, VIBES, goto, seed001_run, seed001_workspace, start

from dashboard import ui
from evalcore import workspace as W


def _fusion_table(at):
    return next(d.value for d in at.dataframe if getattr(d.value, "index", None) is not None
                and d.value.index.name == "run" and "ndcg@10" in d.value.columns)


def test_the_fused_run_is_judged_against_the_aspect_chosen_and_the_table_shows_aspects():
    ws, _ = W.add_ranked_run(seed001_workspace(), W.Blob.of("overall_run.trec", seed001_run(OVERALL)),
                             aspect=OVERALL)
    at = goto(start(ws, "overview"), "fusion")
    at.multiselect(key="fu_runs").set_value(["content_run", "vibes_run", "overall_run"]).run()
    assert not at.exception
    box = at.selectbox(key="fu_aspect")
    assert box.options == [CONTENT, VIBES, OVERALL] and box.value == CONTENT  # default: the first input's
    box.select(OVERALL).run()
    table = _fusion_table(at)
    assert dict(zip(table.index, table["aspect"], strict=True)) == {
        "content_run": CONTENT, "vibes_run": VIBES, "overall_run": OVERALL, "rrf": OVERALL}
    stars = table["ndcg@10"].str.startswith("★")
    assert stars["content_run"] and stars["vibes_run"]  # each alone in its aspect
    assert stars[["overall_run", "rrf"]].sum() == 1
    assert any("among the runs of the same aspect" in c.value for c in at.caption)
    at.button(key="fu_add").click().run()
    assert not at.exception
    fused = next(r for r in at.session_state["ws"].runs if r.kind == "fused")
    assert fused.aspect == OVERALL


def test_the_weight_search_tunes_against_the_aspect_the_fused_run_is_judged_against(tmp_path):
    # seed 001's user fuses content, vibes and overall runs and judges the fusion on overall similarity: the search
    # tuned the weights against the first input's aspect (content) whatever the aspect chosen, and its command had
    # no --aspect (the command line refused the file of three lists)
    import re
    import shlex

    import pandas as pd
    from test_app_views import FIX, seed001_run

    from evalcore.cli import main

    ws, _ = W.add_ranked_run(seed001_workspace(), W.Blob.of("overall_run.trec", seed001_run(OVERALL)),
                             aspect=OVERALL)
    at = goto(start(ws, "overview"), "fusion")
    at.multiselect(key="fu_runs").set_value(["content_run", "vibes_run", "overall_run"]).run()
    at.selectbox(key="fu_aspect").select(OVERALL).run()
    at.selectbox(key="fu_step").select(0.5).run()
    at.toggle(key="fu_search").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    # the caption names the aspect searched against (it said only "Maximises the mean ndcg@10")
    (said,) = [c.value for c in at.caption if "the mean" in c.value and "simplex" in c.value]
    assert f"against the aspect {ui.md_escape(OVERALL)} " in said, said
    best = next(d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame) and "weight:overall_run" in
                d.value.columns)  # fmt: skip
    weights = best.filter(like="weight:").iloc[0]
    assert weights.idxmax() == "weight:overall_run", weights  # the only run that ranks overall's lists first
    (caption,) = [c.value for c in at.caption if "evalcore fuse" in c.value]
    command = re.search(r"`(evalcore fuse [^`]*)`", caption).group(1)
    assert f"--aspect {OVERALL}" in command
    words = shlex.split(command)[1:]
    words = [w for w in words if w not in ("--run", "NAME=FILE", "...")]
    files = []
    for aspect, name in ((CONTENT, "content_run"), (VIBES, "vibes_run"), (OVERALL, "overall_run")):
        (tmp_path / f"{name}.trec").write_bytes(seed001_run(aspect))
        files += ["--run", f"{name}={tmp_path / f'{name}.trec'}"]
    words = [str(FIX / "seed001_movies.json") if w == "QRELS" else str(tmp_path / "f.trec") if w == "fused.trec"
             else w for w in words]  # fmt: skip
    trials = tmp_path / "trials.csv"
    assert main([*words, *files, "--search-out", str(trials)]) == 0
    cli = pd.read_csv(trials, float_precision="round_trip")
    top = cli.loc[cli["value"].idxmax()]
    assert top.filter(like="weight:").astype(float).idxmax() == "weight:overall_run"


def test_the_agreement_pages_command_reads_a_ground_truth_of_several_aspects(tmp_path):
    # its command had no --aspect: on seed 001's file of three lists, agree --qrels stopped with 'choose one'
    import re
    import shlex

    import pandas as pd
    from test_app_views import FIX, seed001_run

    from evalcore.cli import main

    at = goto(start(seed001_workspace(), "overview"), "agreement")
    assert not at.exception, [e.value for e in at.exception]
    (caption,) = [c.value for c in at.caption if "evalcore agree" in c.value]
    command = re.search(r"`(evalcore agree [^`]*)`", caption).group(1)
    assert f"--aspect {CONTENT}" in command  # (the first run's: every list has the same queries)
    words = [w for w in shlex.split(command)[1:] if w not in ("--run", "NAME=FILE", "...")]
    files = []
    for aspect, name in ((CONTENT, "content_run"), (VIBES, "vibes_run")):
        (tmp_path / f"{name}.trec").write_bytes(seed001_run(aspect))
        files += ["--run", f"{name}={tmp_path / f'{name}.trec'}"]
    words = [str(FIX / "seed001_movies.json") if w == "QRELS" else str(tmp_path / "s.csv") if w == "summary.csv"
             else w for w in words]  # fmt: skip
    assert main([*words, *files]) == 0
    cli = pd.read_csv(tmp_path / "s.csv", float_precision="round_trip")
    shown = next(d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame) and "run_a" in d.value.columns)
    got = cli[cli["run_a"] != cli["run_b"]]["mean"].to_numpy()
    assert len(got) == 1 and got[0] == shown["mean"].iloc[0]


def test_the_reading_guide_places_the_runs_by_the_ndcg_computed_with_exponential_gains():
    # seed 001's user computes ndcg_exp (gain 2^grade - 1): the guide showed nDCG's bands with no run placed, and
    # defined the gain as the grade
    from dataclasses import replace

    import pandas as pd

    ws = replace(seed001_workspace(), settings=W.Settings(k=(5,), metrics=("ndcg_exp", "recall")))
    at = start(ws, "overview")
    assert not at.exception, [e.value for e in at.exception]
    placed = [d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame) and "band" in d.value.columns
              and "run" in d.value.columns]  # fmt: skip
    ndcg = next(f for f in placed if "ndcg_exp@5" in f.columns)
    assert sorted(ndcg["run"]) == ["content_run", "vibes_run"] and ndcg["band"].notna().all()
    assert any("2^grade − 1 (ndcg_exp)" in c.value for c in at.caption)


def test_the_queries_page_says_when_run_a_and_run_b_are_judged_against_different_aspects():
    # the difference B − A of a space judged on content and one judged on vibes was listed and sorted by without a
    # word (the Compare page compares runs of one aspect only)
    from test_app import unescape

    at = start(seed001_workspace(), "queries")
    assert not at.exception, [e.value for e in at.exception]
    assert {at.selectbox(key="w_queries_sel_run_a").value, at.selectbox(key="w_queries_sel_run_b").value} == {
        "content_run", "vibes_run"}  # fmt: skip
    said = [unescape(i.value) for i in at.info if "different ground-truth aspects" in i.value]
    assert len(said) == 1 and CONTENT in said[0] and VIBES in said[0]
    ws, _ = W.add_ranked_run(seed001_workspace(), W.Blob.of("again.trec", seed001_run(VIBES)), name="again",
                             aspect=VIBES)  # fmt: skip
    at = start(ws, "queries")
    at.selectbox(key="w_queries_sel_run_a").select("vibes_run").run()
    at.selectbox(key="w_queries_sel_run_b").select("again").run()
    assert not at.exception and not [i for i in at.info if "different ground-truth aspects" in i.value]

"""Compare with a metric that has no value where a run finds no relevant document (``first_rel_rank``): each
pair is compared on its own queries.  The caption gave one "mean of the baseline" (the first row's pair) for
rows whose baseline means differ, and the pair view's wins/ties/losses silently left out the queries where
only one of the two runs finds a relevant document — for a checkpoint that starts finding them, the change
that matters most."""

from __future__ import annotations

from test_app import errors, goto, start
from test_app_analysis import frame

from evalcore import workspace as W

QRELS = b"q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\nq4 0 d4 1\n"
# a finds q1 (rank 1), q2 (rank 2); b finds q2 (rank 1), q3 (rank 1), q4 (rank 3); c finds q1 (rank 2) only
RUNS = {
    "a": b"q1 Q0 d1 1 3 a\nq2 Q0 x 1 3 a\nq2 Q0 d2 2 2 a\nq3 Q0 x 1 1 a\nq4 Q0 x 1 1 a\n",
    "b": b"q1 Q0 x 1 1 b\nq2 Q0 d2 1 3 b\nq3 Q0 d3 1 1 b\nq4 Q0 x 1 3 b\nq4 Q0 y 2 2 b\nq4 Q0 d4 3 1 b\n",
    "c": b"q1 Q0 x 1 2 c\nq1 Q0 d1 2 1 c\nq2 Q0 y 1 1 c\nq3 Q0 y 1 1 c\nq4 Q0 y 1 1 c\n",
}


def workspace() -> W.Snapshot:
    settings = W.Settings(k=(10,), metrics=("first_rel_rank", "ndcg"))
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("q.txt", QRELS))
    for name, body in RUNS.items():
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", body), name=name)
    return ws


def test_each_row_shows_the_baseline_mean_on_its_own_queries():
    at = goto(start(workspace()), "compare")
    at.selectbox(key="w_compare_sel_metric").select("first_rel_rank").run()
    at.selectbox(key="w_compare_sel_baseline").select("a").run()
    assert not at.exception and not errors(at), errors(at)
    table = frame(at, "run", "baseline mean first_rel_rank").set_index("run")
    # a with b: q2 only (a: 2, b: 1); a with c: q1 only (a: 1, c: 2)
    assert table.loc["b", "mean first_rel_rank"] == 1.0 and table.loc["b", "baseline mean first_rel_rank"] == 2.0
    assert table.loc["c", "mean first_rel_rank"] == 2.0 and table.loc["c", "baseline mean first_rel_rank"] == 1.0
    assert table.loc["b", "n"] == 1 and table.loc["c", "n"] == 1
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Against the baseline. Means over the n queries where both runs find a relevant")
               for c in captions), captions
    assert not any(c.startswith("Against the baseline (mean of the baseline:") for c in captions)


def test_pair_view_says_which_queries_only_one_run_answers():
    at = goto(start(workspace()), "compare")
    at.selectbox(key="w_compare_sel_metric").select("first_rel_rank").run()
    at.selectbox(key="w_compare_sel_baseline").select("a").run()
    at.selectbox(key="w_compare_sel_run_b").select("b").run()
    assert not at.exception and not errors(at), errors(at)
    said = " ".join(c.value for c in at.caption)
    assert ("Not counted: 1 query where only A finds a relevant document, 2 queries where only B finds a relevant "
            "document.") in said, said
    at.selectbox(key="w_compare_sel_metric").select("ndcg").run()  # every query has a value: nothing to say
    said = " ".join(c.value for c in at.caption)
    assert "Not counted" not in said and "baseline mean ndcg@10" not in frame(at, "run", "n").columns

"""The Overview's "Reproduce with" command with a fused run kept from the Fusion page: the command makes it with
``evaluate --fuse NAME=RUN1:W1,...`` and the fusion's method, normalisation, ``c``, ``top_n`` and input tie rule, and
run through the command line's ``main`` (the ``...`` completed with the runs' files: the fused run has none) writes
the page's "Report (JSON)" to the last bit. Fused runs one command cannot make (another recipe than the first
fusion's) are named as files to give.

With a query sample, the fused run's ``coverage.n_ignored`` differs: the command fuses the sampled queries only
(``evaluate --fuse`` with ``--n-samples``), the dashboard every query of its inputs; its values do not.

Before, the fused run was one more run of ``...``: no file holds it, and no recipe was given, so the command could
not give its numbers (completed with the other runs' files, its report lacked the fused run).
"""

from __future__ import annotations

import json
import shlex
import warnings

import pytest
from test_app import goto, start
from test_report_keys import assert_same_report
from test_repro_overview import case, snapshot, write_runs
from test_sample_seed import spans

from dashboard import reproduce as R
from dashboard import state as S
from evalcore import workspace as W
from evalcore.cli.main import main
from evalcore.errors import EvalcoreWarning

#: (base case of test_repro_overview, the fused run's inputs, weights, and add_fused_run's options)
FUSIONS = {
    "trec-rrf": ("trec", ["a", "b"], [0.1 + 0.2, 0.7], dict(c=30.0, top_n=8)),
    "seed001-combsum": ("seed001", ["content_run", "vibes_run"], [1.0, 1.0], dict(method="combsum", norm="min-max")),
    "seed001-wsum": ("seed001", ["vibes_run", "mixed"], [0.25, 1 / 3], dict(method="wsum", norm="z-score")),
    "seed003-emb-rrf": ("seed003-emb", ["small", "large"], [2.0, 0.5], dict(top_n=5)),  # (embedding inputs)
}


def fused_snapshot(name: str) -> W.Snapshot:
    base, inputs, weights, options = FUSIONS[name]
    ws = snapshot(base)
    uids = {r.name: r.uid for r in ws.runs}
    aspect = ws.run_by_uid(uids[inputs[-1]]).aspect  # (seed 001: judged against the last input's list)
    ws, _ = W.add_fused_run(ws, [uids[r] for r in inputs], weights, name="fused", aspect=aspect, **options)
    return ws


@pytest.mark.parametrize("name", sorted(FUSIONS))
def test_the_overviews_command_makes_the_fused_run_with_its_numbers(tmp_path, name):
    gt_name, gt, _, runs, settings = case(FUSIONS[name][0])
    (tmp_path / gt_name).write_bytes(gt)
    run_words = write_runs(tmp_path, runs)  # the runs' files: the fused run has none
    at = goto(start(fused_snapshot(name)), "overview")
    assert not at.exception, [e.value for e in at.exception]
    found = [c for cap in at.caption for c in spans(cap.value) if c.startswith("evalcore evaluate")
             and "--diversity" not in c]
    assert len(found) == 1, [cap.value for cap in at.caption]
    words = shlex.split(found[0])
    assert any(w.startswith("fused=") for w in words), words
    out = tmp_path / "out"
    given = []
    for w in words[1:]:
        given += run_words if w == "..." else [{"QRELS": str(tmp_path / gt_name), "DIR": str(out)}.get(w, w)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        assert main(given) == 0, given
    cli = json.loads((out / "report.json").read_text())
    ctx = S.context(ws=fused_snapshot(name))
    assert ctx.ready, ctx.eval_error
    download = json.loads(S.report_json(ctx, 10)())  # the Overview's "Report (JSON)"
    assert "fused" in download["aggregates"]
    # With a query sample the command fuses the sampled queries only (evaluate --fuse, so that an embedding input
    # is not said to lack the others), the dashboard its inputs' every query: the fused run's count of run queries
    # outside the (sampled) ground truth differs, nothing else (left as it is; see the module's docstring)
    if settings.sample_size:
        for report in (download, cli):
            report["coverage"]["fused"].pop("n_ignored")
    assert_same_report(download, cli)  # every number to the last bit, the fusion's recipe in metadata.fusion too


def test_fusions_one_command_cannot_make_are_named_as_files():
    settings = W.Settings()
    rrf = {"name": "f1", "inputs": ["a", "b"], "weights": [0.5, 0.5], "method": "rrf", "norm": "none", "c": 60.0,
           "top_n": None, "ties": None}
    other_c = {**rrf, "name": "f2", "c": 10.0}
    of_fused = {**rrf, "name": "f3", "inputs": ["f2", "a"]}  # (f2 is not made by the command: nor is f3)
    twice = {**rrf, "name": "f4", "inputs": ["a", "a"]}
    hidden = {**rrf, "name": "f5", "shown": False}  # (an input not on the Overview)
    made, own = R.fusion_options([rrf, other_c, of_fused, twice, hidden], ties="trec")
    assert own == ["f2", "f3", "f4", "f5"]
    assert shlex.split(made) == ["--fuse", "f1=a:0.5,b:0.5", "--rrf-ties", "trec"]
    caption = R.overview_caption(settings, ground_truth=R.QRELS, fusions=[rrf, other_c, of_fused, twice])
    assert "f2, f3, f4: no --fuse of this command makes them" in caption and "as its own file" in caption
    assert R.fusion_options([], ties="trec") == ("", [])

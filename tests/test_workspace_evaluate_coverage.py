"""``Workspace.evaluate()`` warns, in the command line's words (``evalcore.coverage.missing_queries_message``),
when a stored ranked run does not answer some of the evaluated ground-truth queries (they count 0), and
``strict=True`` makes it an error (``evalcore.errors.coverage_problem``); embedding and fused runs keep their
own warnings, not repeated. Before: the command line warned, the Python path said nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from coverage_support import DOCS, QIDS, qrels_of, run_of, warned

from evalcore import Workspace
from evalcore.cli import main
from evalcore.coverage import missing_queries_message
from evalcore.errors import MissingIdsError
from evalcore.io.trec import write_trec_qrels, write_trec_run

RNG = np.random.default_rng(4)


@pytest.mark.parametrize("sample", [(), ("--n-samples", "6", "--seed", "3")])
def test_evaluate_warns_of_a_ranked_run_missing_queries_in_the_command_lines_words(tmp_path: Path, capsys,
                                                                                  sample) -> None:
    write_trec_qrels(qrels_of(QIDS), tmp_path / "qrels.txt")
    write_trec_run(run_of(QIDS[:7], "part"), tmp_path / "part.trec")
    write_trec_run(run_of(QIDS[2:3], "one"), tmp_path / "one.trec")
    write_trec_run(run_of(QIDS, "full"), tmp_path / "full.trec")
    runs = [a for n in ("part", "one", "full") for a in ("--run", f"{n}={tmp_path / f'{n}.trec'}")]
    assert main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), *runs, "--k", "5", *sample]) == 0
    cli = [ln[len("warning: "):] for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning: ")]
    assert cli and all(" answers " in w for w in cli)  # (what the command line says of these runs)

    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(tmp_path / "qrels.txt")
    for name in ("part", "one", "full"):
        ws.add_run(name, tmp_path / f"{name}.trec")
    settings = {"sample_size": int(sample[1]), "seed": int(sample[3])} if sample else {}
    assert warned(ws.evaluate, k=[5], record=False, **settings) == cli
    with pytest.raises(MissingIdsError) as info:  # strict: the first of them, an error, nothing recorded
        ws.evaluate(k=[5], strict=True, **settings)
    run, missing = re.match(r"run ('[^']+') answers .*; the other (\d+) count 0", cli[0]).groups()
    assert str(info.value).startswith(f"run {run} does not answer {missing} of the ")  # (the same run and count)
    assert str(info.value).endswith("; refused because of strict=True (without it they count 0 in its values and "
                                    "tests)")
    assert ws.evaluations().empty


def test_embedding_and_fused_runs_keep_their_own_warnings_without_repeats(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(qrels_of(QIDS))
    ws.add_run("part", run_of(QIDS[:5], "part"))
    ws.add_embedding_run("e5", RNG.normal(size=(20, 4)), DOCS, query_embeddings=RNG.normal(size=(6, 4)),
                         query_ids=QIDS[:6])
    ws.add_fused_run("mix", ["part", "e5"])
    got = warned(ws.evaluate, k=[5], record=False)
    assert missing_queries_message("part", 10, 5) in got
    assert not [w for w in got if w.startswith(("run 'e5' answers", "run 'mix' answers"))]
    assert any("e5" in w for w in got)  # the search's own warning about its missing queries
    assert len(got) == len(set(got))

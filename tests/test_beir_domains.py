"""A BEIR qrels TSV with a domain column (``query-id corpus-id score domain``) keeps its domains.

Before: the header's first three names made it ``beir``, whose reader has no domain column: the domains were
dropped without a word (the command line's per-query ``domain`` empty, the dashboard's Domains page saying the
queries have none), while the same file read with ``--qrels-format tsv`` had them.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from evalcore import Workspace
from evalcore.cli import main
from evalcore.io import load_qrels

ROWS = [("q1", "d1", 2, "bio"), ("q1", "d2", 0, "bio"), ("q2", "d3", 1, "chem"), ("q3", "d1", 1, "bio")]


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    with_domain = tmp_path / "qrels_dom.tsv"
    with_domain.write_text("query-id\tcorpus-id\tscore\tdomain\n"
                           + "".join(f"{q}\t{d}\t{g}\t{m}\n" for q, d, g, m in ROWS), encoding="utf-8")
    plain = tmp_path / "qrels.tsv"
    plain.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g, _ in ROWS),
                     encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text("".join(f"{q} Q0 d{j} {j} {10 - j} r\n" for q in ("q1", "q2", "q3") for j in (1, 2, 3)),
                   encoding="utf-8")
    return with_domain, plain, run


def test_auto_detection_keeps_the_domain_column_and_the_same_judgments(tmp_path: Path) -> None:
    with_domain, plain, _ = _files(tmp_path)
    got, beir = load_qrels(with_domain), load_qrels(plain)
    assert dict(zip(got.query_ids, got.domain_of(), strict=True)) == {"q1": "bio", "q2": "chem", "q3": "bio"}
    assert list(got.query_ids) == list(beir.query_ids)
    assert list(got.doc_ids) == list(beir.doc_ids) and np.array_equal(got.grades, beir.grades)


def test_the_command_line_and_a_workspace_see_the_domains(tmp_path: Path) -> None:
    with_domain, _, run = _files(tmp_path)
    out = tmp_path / "out"
    assert main(["evaluate", "--qrels", str(with_domain), "--run", f"r={run}", "--metrics", "ndcg", "--k", "3",
                 "--out", str(out)]) == 0
    with open(out / "per_query.csv", newline="", encoding="utf-8") as fh:
        assert {(r["query_id"], r["domain"]) for r in csv.DictReader(fh)} == {("q1", "bio"), ("q2", "chem"),
                                                                              ("q3", "bio")}
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(with_domain)
    ws.add_run("r", run)
    table = ws.evaluate(metrics=["ndcg"], k=[3], record=False).table
    pairs = set(zip(table["query_id"].astype(str), table["domain"].astype(str), strict=True))
    assert pairs == {("q1", "bio"), ("q2", "chem"), ("q3", "bio")}

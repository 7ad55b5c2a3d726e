"""Side files whose ids are not the data's are said once, naming the file, with counts and a few ids of both sides.

Before: ``Workspace.set_domains`` / ``set_query_texts`` / ``set_metadata`` stored a file whose ids matched none (or
only some) of the ground truth's queries or documents without a word; the evaluation said only a domain mapping
naming none of the evaluated queries (two ids of each side, no count, no file name), and nothing of the
ground-truth queries left without a domain (they fell in the Domains page's group '(none)'). Now each is said when
the file is stored, and when another ground truth becomes the active one (domains, query texts).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from coverage_support import DOCS, QIDS, qrels_of, warned

from evalcore import Workspace
from evalcore.cli import main
from evalcore.io import Embeddings
from evalcore.io.trec import write_trec_qrels, write_trec_run
from evalcore.workspace import NO_DOMAIN_MATCH
from evalcore.workspace.pipeline import sample_and_label

RNG = np.random.default_rng(5)


def _only(messages: list[str]) -> str:
    assert len(messages) == 1, messages
    return messages[0]


def workspace(tmp_path: Path) -> Workspace:
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(qrels_of(QIDS), name="qrels.txt")  # queries q0..q9, judged documents d0..d12
    return ws


def test_a_domain_mapping_naming_none_of_the_queries_is_said_strongly_with_both_sides_ids(tmp_path):
    ws = workspace(tmp_path)
    data = "query_id,domain\n" + "".join(f"{i},bio\n" for i in range(10))  # '0' .. '9' against 'q0' .. 'q9'
    msg = _only(warned(ws.set_domains, data.encode(), name="dom.csv"))
    assert msg == (f"{NO_DOMAIN_MATCH} 10 queries (dom.csv: its 10 query ids look like '0', '1', '2'; those of the "
                   "ground truth 'qrels.txt' like 'q0', 'q1', 'q2'): no query has a domain, so the Domains page has "
                   "nothing to show; the wrong file, or ids written another way?")
    assert ws.side_files()["domains"]["name"] == "dom.csv"  # stored all the same


def test_a_domain_mapping_naming_some_queries_counts_both_sides_and_the_queries_left_without(tmp_path):
    ws = workspace(tmp_path)
    mapping = {"q0": "bio", "q1": "law", "Q2": "bio", "Q3": "law", "zz": "bio"}
    msg = _only(warned(ws.set_domains, mapping, name="dom.json"))
    assert msg == ("dom.json: 8 of the 10 queries of the ground truth 'qrels.txt' have no domain in it (e.g. 'q2', "
                   "'q3', 'q4'): on the Domains page they form the group '(none)'; of its 5 query ids, 2 match and 3 "
                   "are not the ground truth's (e.g. 'Q2', 'Q3', 'zz')")
    # every query and more (BEIR's files cover every split): nothing to say; a subset: the queries left without
    assert warned(ws.set_domains, {**{q: "bio" for q in QIDS}, "train7": "law"}) == []
    assert _only(warned(ws.set_domains, {q: "bio" for q in QIDS[:9]})) == (
        "the domain mapping: 1 of the 10 queries of the ground truth 'qrels.txt' has no domain in it (e.g. 'q9'): on "
        "the Domains page they form the group '(none)'; its 9 query ids all match")


def test_query_texts_and_metadata_are_matched_to_the_queries_and_the_judged_documents(tmp_path):
    ws = workspace(tmp_path)
    texts = "".join(f"Q{i}\twhat is {i}\n" for i in range(10)).encode()
    assert _only(warned(ws.set_query_texts, texts, name="queries.tsv")).startswith(
        "the query texts name none of the ground truth's 10 queries (queries.tsv: its 10 query ids look like 'Q0', "
        "'Q1', 'Q2'; those of the ground truth 'qrels.txt' like 'q0', 'q1', 'q2'): no query's drill-down shows its "
        "text")
    meta = "doc_id,title\n" + "".join(f"{d},title {d}\n" for d in DOCS[:5]) + "*x*,a title\n"
    msg = _only(warned(ws.set_metadata, meta.encode(), name="corpus.csv"))
    assert msg == ("corpus.csv: 8 of the 13 judged documents of the ground truth 'qrels.txt' have no title or text in "
                   "it (e.g. 'd5', 'd6', 'd7'): their drill-down shows no title or text; of its 6 document ids, 5 "
                   "match and 1 is not the ground truth's (e.g. '*x*')")  # an id as repr: never Markdown
    corpus = "doc_id,title\n" + "".join(f"{d},title {d}\n" for d in DOCS)  # every judged document, and others
    assert warned(ws.set_metadata, corpus.encode(), name="corpus.csv") == []


def test_nothing_is_said_without_a_ground_truth_and_a_new_ground_truth_rechecks_the_stored_files(tmp_path):
    ws = Workspace.open(tmp_path / "W")
    assert warned(ws.set_domains, {"x0": "bio", "x1": "law"}, name="dom.csv") == []  # nothing to match yet
    assert warned(ws.set_query_texts, {q: "a text" for q in QIDS}, name="q.tsv") == []
    said = warned(ws.set_ground_truth, qrels_of(QIDS), name="qrels.txt")
    assert said == [f"{NO_DOMAIN_MATCH} 10 queries (dom.csv: its 2 query ids look like 'x0', 'x1'; those of the "
                    "ground truth 'qrels.txt' like 'q0', 'q1', 'q2'): no query has a domain, so the Domains page has "
                    "nothing to show; the wrong file, or ids written another way?"]  # the query texts match
    ref = Embeddings.from_arrays(["x0", "x1", *DOCS], RNG.normal(size=(22, 4)))  # its items are the queries
    said = warned(ws.set_reference, ref, name="teacher")
    assert [m for m in said if not m.startswith("stored run")] == [
        "dom.csv: 20 of the 22 queries of the ground truth 'teacher' have no domain in it (e.g. 'd0', 'd1', 'd2'): "
        "on the Domains page they form the group '(none)'; its 2 query ids all match",
        "the query texts name none of the ground truth's 22 queries (q.tsv: its 10 query ids look like 'q0', 'q1', "
        "'q2'; those of the ground truth 'teacher' like 'x0', 'x1', 'd0'): no query's drill-down shows its text; the "
        "wrong file, or ids written another way?"], said


def test_the_evaluation_still_says_a_mapping_naming_none_of_the_evaluated_queries():
    q = qrels_of(QIDS)
    msg = _only(warned(sample_and_label, q, sample=None, domains={"Q1": "bio"}))
    assert msg.startswith(f"{NO_DOMAIN_MATCH} 10 queries (its 1 query id looks like 'Q1'; those of the ground truth "
                          "like 'q0', 'q1', 'q2')")


def test_the_command_line_says_it_once_when_it_records_a_new_ground_truth(tmp_path: Path, capsys):
    ws = Workspace.open(tmp_path / "W")
    ws.set_domains({f"Q{i}": "bio" for i in range(10)}, name="dom.csv")
    write_trec_qrels(qrels_of(QIDS), tmp_path / "qrels.txt")
    from coverage_support import run_of

    write_trec_run(run_of(QIDS, "bm25"), tmp_path / "bm25.trec")
    code = main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--run", f"bm25={tmp_path / 'bm25.trec'}",
                 "--metrics", "P", "--k", "5", "--workspace", str(tmp_path / "W")])
    err = capsys.readouterr().err
    assert code == 0
    lines = [line for line in err.splitlines() if "domain mapping" in line]
    assert lines == [f"warning: {NO_DOMAIN_MATCH} 10 queries (dom.csv: its 10 query ids look like 'Q0', 'Q1', 'Q2'; "
                     "those of the ground truth 'qrels.txt' like 'q0', 'q1', 'q2'): no query has a domain, so the "
                     "Domains page has nothing to show; the wrong file, or ids written another way?"], err
    assert "Traceback" not in err

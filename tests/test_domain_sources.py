"""A domain mapping file and the ground truth's own domain column: the mapping overrides per query, the queries it
does not list keep the ground truth's domain, and one note says how many queries each source gave.

Before, the mapping replaced the column whole: queries missing from it fell into '(none)' although the qrels gave
them a domain, and the note said they "have no domain"."""

from __future__ import annotations

import uuid
import warnings

import pytest
import test_app as T

from evalcore import workspace as W
from evalcore.errors import EvalcoreWarning

# q1, q2: news; q3, q4: law; q5: no domain in the qrels (an empty cell)
QRELS = ("query_id,doc_id,relevance,domain\nq1,d1,1,news\nq2,d2,1,news\nq3,d3,1,law\nq4,d4,1,law\nq5,d5,1,\n")
MAPPING = "query_id,domain\nq1,sports\nq2,sports\nqX,other\n"  # q1, q2 and an id the ground truth does not have
RUN = "".join(f"q{i} Q0 d{i} 1 1.0 r\n" for i in range(1, 6))
NOTE = ("dom.csv: of the 5 queries of the ground truth 'qrels.csv', 2 take their domain from the mapping (in place "
        "of the ground truth's own domain column), 2 keep their own domain (not in the mapping; e.g. 'q3', 'q4') and "
        "1 has neither (e.g. 'q5'): on the Domains page it forms the group '(none)'; of its 3 query ids, 1 is not the "
        "ground truth's (e.g. 'qX')")


def _files(tmp_path):
    for name, text in (("qrels.csv", QRELS), ("dom.csv", MAPPING), ("r.trec", RUN)):
        (tmp_path / name).write_text(text)
    return tmp_path


def _domains(ws: W.Workspace) -> dict[str, str]:
    table = ws.evaluate().table
    return dict(zip(table["query_id"].astype(str), table["domain"].astype(str), strict=True))


def test_the_mapping_overrides_per_query_and_the_others_keep_the_qrels_domain(tmp_path):
    d = _files(tmp_path)
    ws = W.Workspace.open(d / "ws")
    ws.set_ground_truth(d / "qrels.csv")
    ws.add_run("r", d / "r.trec")
    with pytest.warns(EvalcoreWarning) as got:
        ws.set_domains(d / "dom.csv")
    assert [str(w.message) for w in got] == [NOTE]
    assert _domains(ws) == {"q1": "sports", "q2": "sports", "q3": "law", "q4": "law", "q5": ""}


def test_the_note_is_said_when_the_ground_truth_comes_after_the_mapping(tmp_path):
    d = _files(tmp_path)
    ws = W.Workspace.open(d / "ws")
    ws.set_domains(d / "dom.csv")
    with pytest.warns(EvalcoreWarning) as got:
        ws.set_ground_truth(d / "qrels.csv")
    assert NOTE in [str(w.message) for w in got]


def test_a_mapping_naming_none_of_the_queries_leaves_the_qrels_domains(tmp_path):
    d = _files(tmp_path)
    (d / "dom.csv").write_text("query_id,domain\nQ1,sports\n")
    ws = W.Workspace.open(d / "ws")
    ws.set_ground_truth(d / "qrels.csv")
    ws.add_run("r", d / "r.trec")
    with pytest.warns(EvalcoreWarning, match=r"0 take their domain from the mapping .*; the mapping names none of "
                                             r"them: the wrong file, or ids written another way\?"):
        ws.set_domains(d / "dom.csv")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        domains = _domains(ws)
    assert domains == {"q1": "news", "q2": "news", "q3": "law", "q4": "law", "q5": ""}
    assert not [w for w in got if W.NO_DOMAIN_MATCH in str(w.message)]  # (every query does not lack a domain)


def test_the_data_page_says_where_the_domains_come_from(tmp_path):
    d = _files(tmp_path)
    name = f"domains-{uuid.uuid4().hex[:10]}"
    ws = W.WorkspaceRoot().create(name)
    ws.set_ground_truth(d / "qrels.csv")
    ws.add_run("r", d / "r.trec")
    at = T.goto(T.open_app(name), "data")
    at.file_uploader(key="up_domains").set_value(("dom.csv", MAPPING.encode(), "text/csv")).run()
    assert not at.exception and not T.errors(at)
    shown = [T.unescape(w.value) for w in at.warning]
    assert shown.count(NOTE) == 1, shown


def test_the_domains_page_says_the_group_none_has_a_domain_in_neither_source(tmp_path):
    """'(none): 1 query without a domain in dom.csv' was true but misleading where the qrels have a domain column: the
    queries the mapping does not list keep theirs, so '(none)' holds those with a domain in neither source. A ground
    truth without a domain column keeps the plain words (test_app_warnings.py)."""
    d = _files(tmp_path)
    name = f"domains-{uuid.uuid4().hex[:10]}"
    ws = W.WorkspaceRoot().create(name)
    ws.set_ground_truth(d / "qrels.csv")
    ws.add_run("r", d / "r.trec")
    with pytest.warns(EvalcoreWarning):
        ws.set_domains(d / "dom.csv")
    at = T.goto(T.open_app(name), "domains")
    assert not T.errors(at), T.errors(at)
    captions = [T.unescape(c.value) for c in at.caption]
    assert "(none): 1 query without a domain in dom.csv nor in the ground truth's own domain column" in captions, \
        captions

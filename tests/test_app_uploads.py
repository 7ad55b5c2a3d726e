"""Uploads on the Data page that went wrong without saying how: a file uploaded twice, a file in the wrong
uploader, a stored run that cannot be evaluated (found by a sweep of the Data page under AppTest)."""

from __future__ import annotations

from test_app import (
    DOCS,
    QUERIES,
    empty_data_page,
    errors,
    goto,
    npz,
    open_app,
    start,
    store_snapshot,
    stored,
    trec_qrels,
    trec_run,
    unescape,
)

from evalcore import workspace as W


def test_a_file_uploaded_twice_is_said_so_with_the_name_it_got():
    """The second upload of bm25.trec became run 'bm25 (2)' under the message 'added run file(s) bm25.trec'; then,
    named as the run it duplicated, it was still stored a second time: now it is not stored again, and said so."""
    at = empty_data_page()

    def upload(name: str, data: bytes) -> list[str]:  # (a new uploader after each stored upload: its key changes)
        box = next(u for u in at.get("file_uploader") if str(u.key).startswith("up_runs"))
        box.set_value([(name, data, "text/plain")]).run()
        assert not at.exception and not errors(at)
        return [unescape(s.value) for s in at.success]

    upload("bm25.trec", trec_run(1))
    said = upload("bm25.trec", trec_run(1))
    assert [r.name for r in at.session_state["ws"].runs] == ["bm25"]  # not stored a second time
    assert "already in the workspace, not stored again: bm25.trec (the same file as run 'bm25')" in said, said
    assert not any(s.startswith("added") for s in said), said
    assert "added run file(s) dense.trec" in upload("dense.trec", trec_run(2))  # its own name, new content


def test_a_file_in_the_wrong_uploader_is_told_where_it_belongs():
    """A TREC run in the embedding form read 'no vector columns besides the id column 'q0 Q0 d16 1 0.97 tag''; a
    .npz as judgments 'binary content (NUL bytes)' without a word of the reference-model choice."""
    at = empty_data_page()
    at.file_uploader(key="up_emb").set_value(("t.trec", trec_run(2), "text/plain"))
    at.button[[b.label for b in at.button].index("Add embedding run")].click().run()
    assert not at.exception
    assert any("t.trec, line 1: this looks like a TREC run file (qid Q0 docid rank score tag), not embeddings: add "
               "it as a ranked run" in e for e in errors(at)), errors(at)
    at.file_uploader(key="up_gt").set_value(("emb.npz", npz(QUERIES + DOCS, 4, 1), "application/octet-stream")).run()
    assert not at.exception
    assert any("these are vectors: choose \"Ground truth from: a reference model's embeddings\" above" in e
               for e in errors(at)), errors(at)
    assert at.session_state["ws"].ground_truth is None and not at.session_state["ws"].runs


def test_a_kept_run_that_cannot_be_evaluated_is_not_said_not_loaded():
    """An item-to-item embedding run none of whose ids is a ground-truth query is stored (it stays in the
    workspace) but cannot be evaluated: it read 'Not loaded'. (Such a run is stored before the ground truth:
    once there is one, the workspace refuses it.)"""
    ws, _ = W.add_ranked_run(W.Snapshot(), W.Blob.of("bm25.trec", trec_run(1)), name="bm25")
    ws, _ = W.add_embedding_run(ws, W.Blob.of("items.npz", npz([f"x{i}" for i in range(8)], 4, 1)), name="items")
    name = store_snapshot(ws)
    with W.WorkspaceRoot().open(name) as stored_ws:
        stored_ws.set_ground_truth(trec_qrels(), source_name="qrels.txt")
    at = goto(open_app(name), "data")
    assert not at.exception
    errs = errors(at)
    assert any(e.startswith("Not evaluated (the run is kept): ") for e in errs), errs
    assert not any(e.startswith("Not loaded") for e in errs)
    assert [r.name for r in at.session_state["ws"].runs] == ["bm25", "items"]


def test_removing_a_run_names_the_fused_runs_that_go_with_it():
    """Removing an input of a fused run removes the fused run too (as the button's help says); the message
    only said 'removed a'."""
    ws = W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))
    for i, name in enumerate(["a", "b"]):
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", trec_run(i + 1)), name=name)
    ws, _ = W.add_fused_run(ws, [r.uid for r in ws.runs], [1.0, 1.0], name="ab")
    at = goto(start(ws), "data")
    uid = {r.name: r.uid for r in at.session_state["ws"].runs}["a"]
    at.button(key=f"rm_{uid}").click().run()
    assert not at.exception and not errors(at)
    assert [r.name for r in at.session_state["ws"].runs] == ["b"]
    assert "removed a and the fused run(s) made of it: ab" in [unescape(s.value) for s in at.success]


def test_a_run_answering_no_query_of_the_ground_truth_is_refused_at_its_uploader():
    """A run file none of whose query ids is a query of the ground truth (an id mismatch) was stored and showed
    0% coverage everywhere; the workspace refuses it, as for a training script: the message is next to the
    uploader and nothing is stored."""
    at = goto(start(W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))), "data")
    box = next(u for u in at.get("file_uploader") if str(u.key).startswith("up_runs"))
    box.set_value([("other.trec", b"x1 Q0 d1 1 1.0 t\nx2 Q0 d2 1 1.0 t\n", "text/plain")]).run()
    assert not at.exception
    said = errors(at)
    assert any("run 'other': none of its query ids (2) is a query of the ground truth 'qrels.txt' (e.g. ['x1', "
               "'x2']; the ground truth has query ids like ['q0', 'q1', 'q2'])" in e for e in said), said
    assert not at.session_state["ws"].runs and stored(at).run_names() == []


def test_an_id_holding_a_control_character_is_refused_at_its_uploader_in_the_readers_words():
    """The Data page's uploads go through the workspace to the file readers: a ground truth, a run and a side file
    whose ids hold a NUL, a line feed or U+2028 are refused next to their uploader with the reader's one line
    (the file, its line, the id as repr shows it); nothing is stored. Before, the ground truth and the run met the
    workspace's own check (its row counted from 0, no line), and the domain file was stored as it was."""
    at = empty_data_page()
    at.file_uploader(key="up_gt").set_value(("gt.json", b'{"q0": {"d0": 1},\n "q\\u00001": {"d1": 1}}',
                                             "application/json")).run()
    assert not at.exception
    assert errors(at) == ["Not loaded: gt.json, line 2: query id 'q\\x001' holds a control character (U+0000, NUL); "
                          "ids and names may not hold a tab, a line break, NUL or any other control character "
                          "(nothing was changed)"]
    assert at.session_state["ws"].ground_truth is None
    box = next(u for u in at.get("file_uploader") if str(u.key).startswith("up_runs"))
    box.set_value([("r.csv", b'query_id,doc_id,score\nq0,"d\n0",1.0\n', "text/csv")]).run()
    assert not at.exception
    assert any(e.startswith("Not loaded: r.csv, line 2: document id 'd\\n0' holds a control character (U+000A, a "
                            "line feed)") for e in errors(at)), errors(at)
    assert not at.session_state["ws"].runs
    at.file_uploader(key="up_domains").set_value(("dom.csv", "q0,news\nq1,sp\u2028ort\n".encode(), "text/csv")).run()
    assert not at.exception
    assert any(e.startswith("Not loaded: dom.csv, line 2: domain 'sp\\u2028ort' holds a control character (U+2028")
               for e in errors(at)), errors(at)
    assert stored(at).side_files() == {}

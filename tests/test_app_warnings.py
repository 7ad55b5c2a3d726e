"""Every evalcore warning a dashboard action causes is shown on the page, not left to the server's log.

An audit (AppTest, every action of the Data page and each page's main controls, Python's warnings and the
warnings collected by the dashboard's cached steps both watched) found these said only in the log, or collected
and dropped: a run file's comment lines and all-zero vectors (uploaded, in the embedding form or added from a
local path; the search later quiets the zero-vector note, so reading the file was the only place it was said),
the notes of the metric names typed in the settings (a renamed 'hits', a trec_eval group holding measures
evalcore does not compute; 'hits' then went to the log at every rerun of every page), a relevance threshold no
grade reaches (the evaluation's warning, collected and dropped; the precision-recall curve's evaluation sent it to
the log), model labels differing only in case, and the similarity agreement's notes on the Agreement page. Each is
now shown next to the action (the Data page's flash of its section) or on the page whose view it concerns, once,
as plain text (st.warning of the escaped text, never Markdown of the file or run names).
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator

import numpy as np
from streamlit.testing.v1 import AppTest
from test_app import DOCS, QUERIES, empty_data_page, goto, start, trec_qrels, trec_run, unescape

import evalcore.errors as E
from evalcore import workspace as W
from evalcore.errors import EvalcoreWarning

MARK = "r_*x*_"  # a file name that Markdown would turn into emphasis


def said(at: AppTest) -> list[str]:
    """The warnings the page shows, as the user reads them."""
    return [unescape(w.value) for w in at.warning]


def count(at: AppTest, text: str) -> int:
    return sum(text in w for w in said(at))


@contextlib.contextmanager
def escaped() -> Iterator[list[str]]:
    """The evalcore warnings that went through Python's warnings (to the server's log) inside the block."""
    out: list[str] = []
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        yield out
    out.extend(str(w.message) for w in got if issubclass(w.category, EvalcoreWarning))


def npz_of(ids: list[str], vectors: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(ids), embeddings=np.asarray(vectors, dtype=np.float32))
    return buf.getvalue()


def with_zeros(ids: list[str], rows: list[int], seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(len(ids), 8))
    v[rows] = 0
    return v


def commented(run: bytes) -> bytes:
    return b"# produced by a script\n" + run


def upload_runs(at: AppTest, files: list[tuple[str, bytes, str]]) -> None:
    box = next(u for u in at.get("file_uploader") if str(u.key).startswith("up_runs"))
    box.set_value(files).run()
    assert not at.exception, at.exception


def apply_settings(at: AppTest, **values) -> None:
    """Set the settings form's widgets (by key) and apply it."""
    for key, value in values.items():
        widget = at.text_input(key=key) if isinstance(value, str) else at.number_input(key=key)
        widget.set_value(value)
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert not at.exception, at.exception


def ground_truth_and_a_run() -> W.Snapshot:
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(3, 10), metrics=("ndcg", "recall"))),
                            W.Blob.of("qrels.txt", trec_qrels()))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("a.trec", trec_run(1)), name="a")
    ws, _ = W.add_ranked_run(ws, W.Blob.of("b.trec", trec_run(2)), name="b")
    return ws


# ------------------------------------------------------------------------------------------ each path


def test_uploaded_run_files_say_their_comment_lines_and_zero_vectors_next_to_the_uploader():
    """store_runs wrote through persist.write without collecting: both notes went to the log only."""
    at = goto(start(W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))), "data")
    items = QUERIES + DOCS
    with escaped() as log:
        upload_runs(at, [(f"{MARK}.trec", commented(trec_run(1)), "text/plain"),
                         ("items.npz", npz_of(items, with_zeros(items, [3, 20])), "application/octet-stream")])
    comment = f"{MARK}.trec: 1 line beginning with '#' read as comment and skipped (line 1)"
    zeros = "items.npz: 2 all-zero vectors (e.g. id 'q3'); their cosine with anything is 0"
    assert count(at, comment) == 1 and count(at, zeros) == 1, said(at)
    assert not log, log
    assert all(MARK not in w.value for w in at.warning)  # the name arrives escaped, never as Markdown
    assert [r.name for r in at.session_state["ws"].runs] == [MARK, "items"]
    at.run()
    assert count(at, comment) == 0 and count(at, zeros) == 0  # said once, next to the action


def test_the_embedding_form_says_the_all_zero_vectors_of_its_files():
    """store_embedding_run reported the run added; the zero vectors of its documents and queries went to the log
    (the search quiets them later: reading the files is where they are said)."""
    at = goto(start(W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))), "data")
    at.file_uploader(key="up_emb").set_value(("docs.npz", npz_of(DOCS, with_zeros(DOCS, [5])), "application/x"))
    at.file_uploader(key="up_qemb").set_value(("queries.npz", npz_of(QUERIES, with_zeros(QUERIES, [1, 2], 1)),
                                              "application/x"))
    with escaped() as log:
        at.button[[b.label for b in at.button].index("Add embedding run")].click().run()
    assert not at.exception
    assert count(at, "docs.npz: 1 all-zero vectors (e.g. id 'd5')") == 1, said(at)
    assert count(at, "queries.npz: 2 all-zero vectors (e.g. id 'q1')") == 1, said(at)
    assert not log, log
    assert [r.name for r in at.session_state["ws"].runs] == ["docs"]


def test_add_from_a_local_path_says_what_reading_a_run_file_said(tmp_path):
    """"Add from a local path" collected the warnings of a new ground truth only: a ranked run's comment lines and
    an embedding run's zero vectors went to the log."""
    (tmp_path / "bm25.trec").write_bytes(commented(trec_run(1)))
    items = QUERIES + DOCS
    np.save(tmp_path / "items.npy", with_zeros(items, [4]).astype(np.float32))
    (tmp_path / "items_ids.txt").write_text("\n".join(items) + "\n")  # beside it: the ids of a .npy
    at = goto(start(W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))), "data")
    for kind, name, text in (("ranked", "bm25.trec", "bm25.trec: 1 line beginning with '#' read as comment and "
                                                     "skipped (line 1)"),
                             ("embedding", "items.npy", "items.npy: 1 all-zero vectors (e.g. id 'q4')")):
        at.radio(key="path_kind").set_value(kind)
        at.text_input(key="path_main").input(str(tmp_path / name))
        with escaped() as log:
            at.button[[b.label for b in at.button].index("Add from this path")].click().run()
        assert not at.exception
        assert count(at, text) == 1, said(at)
        assert not log, log
    assert [r.name for r in at.session_state["ws"].runs] == ["bm25", "items"]


def test_the_notes_of_metric_names_are_said_next_to_the_settings_once_and_never_logged():
    """Typing 'hits' (renamed) or trec_eval's 'set' group (it holds measures evalcore does not compute) warned in
    the log only, and 'hits' again at every rerun of every page (the settings validated, the precision-recall
    check parsing the summary's metric names)."""
    at = goto(start(ground_truth_and_a_run()), "data")
    with escaped() as log:
        apply_settings(at, set_extra_metrics="hits, set")
        renamed = count(at, "'hits' is now the number of relevant documents in the top k")
        group = count(at, "trec_eval's set also holds utility, set_relative_P, set_map, which evalcore does not "
                          "compute")
        assert renamed == 1 and group == 1, said(at)
        assert "hits" in at.session_state["ws"].settings.metrics
        at.run()
        assert not count(at, "'hits' is now"), said(at)  # said when applied, not at every rerun
        goto(at, "overview")
        goto(at, "compare")
    assert not log, log


def test_a_relevance_threshold_no_grade_reaches_is_said_on_the_data_page_and_every_page():
    """The evaluation's warning was collected with it and dropped: every metric read 0 without a word; the
    precision-recall curve's own evaluation sent it to the log."""
    text = "no judgment reaches the relevance threshold (grade >= 9; the highest grade is 3)"
    at = goto(start(ground_truth_and_a_run()), "data")
    with escaped() as log:
        apply_settings(at, set_rel=9)
        assert count(at, text) == 1, said(at)  # next to the settings
        at.run()
        assert count(at, text) == 1, said(at)  # stands while the settings do, never piled up
        goto(at, "overview")
        assert count(at, text) == 1, said(at)
        at.toggle(key="ov_pr").set_value(True).run()
        assert not at.exception and count(at, text) == 1, said(at)
    assert not log, log
    goto(at, "data")
    apply_settings(at, set_rel=1)
    assert count(at, "no judgment reaches") == 0


def test_model_labels_differing_only_in_case_are_said_where_set_and_on_the_versions_page():
    """version_series warned in the log (from the Overview's curves, Compare's defaults, the Versions page)."""
    ws, _ = W.add_ranked_run(ground_truth_and_a_run(), W.Blob.of("c.trec", trec_run(3)), name="c")
    at = goto(start(ws), "data")
    uid = {r.name: r.uid for r in at.session_state["ws"].runs}
    text = "model labels that differ only in case are separate models here: 'E5' and 'e5'"
    with escaped() as log:
        at.text_input(key=f"model_{uid['a']}").input("E5").run()
        assert not count(at, text)
        at.text_input(key=f"model_{uid['b']}").input("e5").run()
        assert count(at, text) == 1, said(at)  # next to the run info just saved
        at.run()
        assert not count(at, text)
        at.text_input(key=f"model_{uid['c']}").input("bert").run()
        assert not count(at, text)  # another label saved: not its business
        goto(at, "overview")
        goto(at, "versions")
        assert count(at, text) == 1, said(at)
    assert not log, log


def test_the_similarity_agreement_says_its_notes_on_the_agreement_page():
    """A reference model's ids absent from a model, and pairs drawn among few items: collected and dropped."""
    rng = np.random.default_rng(2)
    ids = [f"i{i:02d}" for i in range(40)]
    ref = rng.normal(size=(len(ids), 8))
    settings = W.Settings(k=(3, 10), metrics=("ndcg",), gt_mode="tied")
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("ref.npz", npz_of(ids, ref)), kind="reference")
    for name, keep in (("student", ids[:30]), ("other", ids)):
        vectors = ref[[ids.index(i) for i in keep]] + rng.normal(scale=0.5, size=(len(keep), 8))
        ws, _ = W.add_embedding_run(ws, W.Blob.of(f"{name}.npz", npz_of(keep, vectors)), name=name)
    at = start(ws)
    with escaped() as log:
        goto(at, "agreement")
    assert not log, log
    assert count(at, "similarity agreement uses the 30 of 40 reference ids present in every model") == 1, said(at)
    assert count(at, "pairs drawn (with replacement) among only 870 distinct ordered pairs of 30 items") == 1, said(at)


def test_a_shallow_run_is_said_on_the_data_page_and_every_page_an_embedding_run_never():
    """A run cut at 3 documents, evaluated at the default k up to 100: its values were shown without a word. Said
    once per page (the evaluation's warning: under the settings on the Data page, on top of the others), never for
    an embedding run (its lists hold its whole small corpus)."""
    at = goto(start(W.set_ground_truth(W.Snapshot(), W.Blob.of("qrels.txt", trec_qrels()))), "data")
    cut = b"".join(f"{q} Q0 d{j} {j + 1} {10 - j} t\n".encode() for q in QUERIES for j in range(3))
    items = QUERIES + DOCS
    with escaped() as log:
        upload_runs(at, [(f"{MARK}.trec", cut, "text/plain"), ("items.npz", npz_of(items, with_zeros(items, [])),
                                                                 "application/octet-stream")])
        text = (f"shallow run '{MARK}': it lists at most 3 documents per query, but the largest k evaluated is 100: "
                "ranks 4 to 100 count as non-relevant")
        assert count(at, text) == 1, said(at)
        assert not [w for w in said(at) if "shallow run 'items'" in w]
        assert all(MARK not in w.value for w in at.warning)  # the run's name arrives escaped
        at.run()
        assert count(at, text) == 1, said(at)  # stands while it holds, never piled up
        goto(at, "overview")
        assert count(at, text) == 1, said(at)
    assert not log, log
    goto(at, "data")
    apply_settings_k(at, [1, 3])
    assert count(at, "shallow run") == 0, said(at)


def apply_settings_k(at: AppTest, ks: list[int]) -> None:
    at.multiselect(key="set_k").set_value(ks)
    at.button[[b.label for b in at.button].index("Apply settings")].click().run()
    assert not at.exception, at.exception


def test_side_files_naming_other_ids_are_said_next_to_their_uploader_once():
    """A domain mapping matching some queries only, query texts matching none: stored without a word (the domains
    of the queries left out fell in the group '(none)'; no drill-down showed a text)."""
    at = goto(start(ground_truth_and_a_run()), "data")
    dom = b"query_id,domain\nq0,bio\nq1,law\n*Q2*,bio\n"
    with escaped() as log:
        at.file_uploader(key="up_domains").set_value(("dom.csv", dom, "text/csv")).run()
        partial = ("dom.csv: 13 of the 15 queries of the ground truth 'qrels.txt' have no domain in it (e.g. 'q2', "
                   "'q3', 'q4'): on the Domains page they form the group '(none)'; of its 3 query ids, 2 match and 1 "
                   "is not the ground truth's (e.g. '*Q2*')")
        assert count(at, partial) == 1, said(at)
        assert all("*Q2*" not in w.value for w in at.warning)  # the id arrives escaped, never as Markdown
        at.file_uploader(key="up_queries").set_value(("q.tsv", b"Q0\tfirst\nQ1\tsecond\n", "text/plain")).run()
        none = ("the query texts name none of the ground truth's 15 queries (q.tsv: its 2 query ids look like 'Q0', "
                "'Q1'; those of the ground truth 'qrels.txt' like 'q0', 'q1', 'q2'): no query's drill-down shows its "
                "text")
        assert count(at, none) == 1, said(at)
        at.file_uploader(key="up_domains_1").set_value(("dom2.csv", b"query_id,domain\nQ0,bio\n", "text/csv")).run()
        assert count(at, "the domain mapping names none of the ground truth's 15 queries (dom2.csv:") == 1, said(at)
        assert count(at, "the domain mapping names none") == 1, said(at)  # the evaluation's note: not twice at once
        at.run()
        assert count(at, partial) == 0 and count(at, none) == 0  # said once, next to the action
    assert not log, log
    at.file_uploader(key="up_domains_2").set_value(("dom.csv", dom, "text/csv")).run()
    goto(at, "domains")  # where the queries left out are: a group of their own, said so
    assert "(none): 13 queries without a domain in dom.csv" in [unescape(c.value) for c in at.caption]


# ------------------------------------------------------------------------------------------ a whole session


class _Heard:
    """Stands for ``evalcore.errors._SINK`` (the list a collecting context gathers warnings into): hands each
    collecting context its own list, and hears every message added to any of them."""

    def __init__(self, var) -> None:
        self.var, self.heard = var, []

    def get(self):
        sink = self.var.get()
        return None if sink is None else _Tee(sink, self.heard)

    def set(self, value):
        return self.var.set(value)

    def reset(self, token) -> None:
        self.var.reset(token)


class _Tee:
    def __init__(self, sink: list, heard: list) -> None:
        self.sink, self.heard = sink, heard

    def append(self, text: str) -> None:
        self.heard.append(text)
        self.sink.append(text)


def test_every_evalcore_warning_of_a_data_page_session_reaches_a_page(tmp_path, monkeypatch):
    """The whole Data-page flow with awkward inputs, then every page: each evalcore warning raised meanwhile —
    through Python's warnings (the server's log) or collected by the dashboard — is shown on some page. A warning
    lost in a future change fails here."""
    heard = _Heard(E._SINK)
    monkeypatch.setattr(E, "_SINK", heard)
    seen: list[str] = []
    log: list[str] = []

    def run(action) -> None:
        with escaped() as out:
            action()
        log.extend(out)
        assert not at.exception, at.exception
        seen.extend(said(at))

    at = empty_data_page()
    items = QUERIES + DOCS
    gt = b"# judged by hand\n" + trec_qrels() + b"qz 0 d1 0\n"  # a comment; a query without a relevant document
    run(lambda: at.file_uploader(key="up_gt").set_value((f"{MARK}.txt", gt, "text/plain")).run())
    partial = b"".join(f"q{i} Q0 d{j} {j + 1} 1.0 t\n".encode() for i in range(8) for j in range(3))  # ties, shallow
    run(lambda: upload_runs(at, [("full.trec", trec_run(1), "text/plain"),
                                 ("partial.trec", commented(partial), "text/plain"),
                                 ("items.npz", npz_of(items, with_zeros(items, [3, 20])), "application/x")]))
    docs, queries = DOCS[5:], QUERIES[:-2]  # relevant documents and queries missing from the embedding run

    def embedding_form() -> None:
        at.file_uploader(key="up_emb").set_value(("docs.npz", npz_of(docs, with_zeros(docs, [0])), "application/x"))
        at.file_uploader(key="up_qemb").set_value(("q.npz", npz_of(queries, with_zeros(queries, [1], 1)), "x/y"))
        at.button[[b.label for b in at.button].index("Add embedding run")].click().run()

    run(embedding_form)
    for key, name, data in (("up_domains", "dom.csv", b"query_id,domain\nQX1,bio\n"),  # names no query
                            ("up_domains_1", "dom2.csv", b"query_id,domain\nq1,bio\nQX1,law\n"),  # one of them
                            ("up_meta", "meta.csv", b"doc_id,title\nzz,unknown document\n"),
                            ("up_queries", "q.tsv", b"zz\tan unknown query\n")):
        run(lambda key=key, name=name, data=data: at.file_uploader(key=key).set_value((name, data, "text/csv")).run())
    run(lambda: apply_settings(at, set_extra_metrics="hits, set", set_rel=9, set_sample=10))
    run(lambda: apply_settings(at, set_extra_metrics="", set_rel=1, set_sample=0))
    (tmp_path / "p.trec").write_bytes(commented(partial))
    np.save(tmp_path / "z.npy", with_zeros(items, [7]).astype(np.float32))
    (tmp_path / "z_ids.txt").write_text("\n".join(items) + "\n")
    for kind, name in (("ranked", "p.trec"), ("embedding", "z.npy")):
        def path(kind: str = kind, name: str = name) -> None:
            at.radio(key="path_kind").set_value(kind)
            at.text_input(key="path_main").input(str(tmp_path / name))
            at.button[[b.label for b in at.button].index("Add from this path")].click().run()

        run(path)
    uid = {r.name: r.uid for r in at.session_state["ws"].runs}
    run(lambda: at.text_input(key=f"model_{uid['full']}").input("E5").run())
    run(lambda: at.text_input(key=f"model_{uid['partial']}").input("e5").run())
    for page in ("overview", "compare", "versions", "queries", "domains", "fusion", "agreement", "data"):
        run(lambda page=page: goto(at, page))
    raised = list(dict.fromkeys([*heard.heard, *log]))
    for kind in ("read as comment", "all-zero vectors", "ground-truth queries are not in", "relevant documents are "
                 "not in the corpus", "the domain mapping names none", "'hits' is now", "trec_eval's set also holds",
                 "no judgment reaches the relevance threshold", "differ only in case", "agreement: of the",
                 "shallow run 'partial'", "the document metadata names none", "the query texts name none",
                 "have no domain in it"):
        assert any(kind in w for w in raised), (kind, raised)  # the inputs are awkward enough to say each of these
    assert not [w for w in raised if any(f"shallow run {n!r}" in w for n in ("items", "docs", "z"))]  # embeddings
    lost = [w for w in raised if not any(w in s for s in seen)]
    assert not lost, lost
    assert not log, log  # and none went to the server's log

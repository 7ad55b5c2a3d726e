"""Embedding files are one run of a workspace, as ranked run files are (``tests/test_run_same_file_names.py``): the very
same files again (their bytes: the documents' file, the queries' file of a run of queries against a corpus, the ids
files of a ``.npy``) are the run already stored, not a second run; a run name given stores a deliberate copy, whose
content-addressed artifacts are the first run's.

Before, an ``.npz`` uploaded twice on the Data page (either uploader) or added twice from its path became runs
``e5`` and ``e5 (2)``.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
from test_app import DOCS, QUERIES, empty_data_page, errors, npz, unescape

from evalcore import Workspace
from evalcore.workspace.inputs import embedding_files_key
from evalcore.workspace.runfiles import add_embedding_file

ALREADY = "already in the workspace, not stored again: "


def _npy(n: int, dim: int, seed: int) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32))
    return buf.getvalue()


def _ids(ids: list[str]) -> bytes:
    return "".join(f"{i}\n" for i in ids).encode()


def _objects(ws: Workspace) -> list[Path]:
    return sorted(p for p in (Path(ws.path) / "objects").rglob("*") if p.is_file())


def _artifact_rows(ws: Workspace) -> int:
    import sqlite3

    with sqlite3.connect(Path(ws.path) / "catalogue.sqlite") as conn:
        return conn.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0]


def test_the_same_embedding_files_again_are_the_stored_run_and_write_nothing(tmp_path) -> None:
    items = npz(QUERIES + DOCS, 4, 1)
    (tmp_path / "e5.npz").write_bytes(items)
    docs, qry = _npy(len(DOCS), 4, 2), _npy(len(QUERIES), 4, 3)
    for name, data in (("docs.npy", docs), ("docs_ids.txt", _ids(DOCS)), ("q.npy", qry), ("q_ids.txt", _ids(QUERIES))):
        (tmp_path / name).write_bytes(data)
    ws = Workspace.open(tmp_path / "W")
    first = add_embedding_file(ws, tmp_path / "e5.npz", file=str(tmp_path / "e5.npz"))
    pair = add_embedding_file(ws, docs, _ids(DOCS), file="docs.npy", query_embeddings=qry, query_ids=_ids(QUERIES),
                              query_source_name="q.npy")
    assert (first.run, first.new, pair.run, pair.new) == ("e5", True, "docs", True)
    objects, rows, generation = _objects(ws), _artifact_rows(ws), ws.generation
    again = [add_embedding_file(ws, items, file="e5.npz"),  # the path's bytes uploaded
             add_embedding_file(ws, tmp_path / "e5.npz", file="e5.npz"),
             add_embedding_file(ws, tmp_path / "docs.npy", file="docs.npy", query_embeddings=tmp_path / "q.npy"),
             add_embedding_file(ws, docs, _ids(DOCS), file="copy.npy", query_embeddings=qry, query_ids=_ids(QUERIES))]
    assert [(a.run, a.new, a.same) for a in again] == [("e5", False, ("e5",))] * 2 + [("docs", False, ("docs",))] * 2
    assert ws.run_names() == ["e5", "docs"]
    assert (_objects(ws), _artifact_rows(ws), ws.generation) == (objects, rows, generation)  # nothing written
    assert ws.same_embedding_run(tmp_path / "e5.npz") == "e5"
    assert ws.same_embedding_run(tmp_path / "docs.npy", query_embeddings=tmp_path / "q.npy") == "docs"


def test_other_files_are_another_run(tmp_path) -> None:
    """The documents' file alone (item-to-item) is not the run of those documents against queries; other ids
    beside the same ``.npy``, or other queries, are other content."""
    docs, qry = _npy(len(QUERIES + DOCS), 4, 2), _npy(len(QUERIES), 4, 3)
    ws = Workspace.open(tmp_path / "W")
    base = add_embedding_file(ws, docs, _ids(QUERIES + DOCS), file="e.npy", query_embeddings=qry,
                              query_ids=_ids(QUERIES))
    others = [add_embedding_file(ws, docs, _ids(QUERIES + DOCS), file="e.npy"),
              add_embedding_file(ws, docs, _ids(list(reversed(QUERIES + DOCS))), file="e.npy"),
              add_embedding_file(ws, docs, _ids(QUERIES + DOCS), file="e.npy", query_embeddings=_npy(15, 4, 4),
                                 query_ids=_ids(QUERIES))]
    assert base.new and all(o.new for o in others)
    assert ws.run_names() == ["e", "e (2)", "e (3)", "e (4)"]
    assert embedding_files_key(docs) is None  # (a .npy upload without its ids cannot be read: not recognised)


def test_a_name_given_stores_a_deliberate_copy_sharing_its_artifacts(tmp_path) -> None:
    items = npz(QUERIES + DOCS, 4, 1)
    ws = Workspace.open(tmp_path / "W")
    add_embedding_file(ws, items, file="e5.npz")
    objects = _objects(ws)
    copy = add_embedding_file(ws, items, file="e5.npz", name="e5 again")
    assert (copy.run, copy.new, copy.same) == ("e5 again", True, ("e5",))
    assert ws.run_names() == ["e5", "e5 again"]
    assert _objects(ws) == objects  # content-addressed: the copy's vectors and ids are the first run's files
    assert ws.run_record("e5 again").artifacts == ws.run_record("e5").artifacts


def test_the_same_files_against_another_aspect_are_another_run(tmp_path) -> None:
    import json

    lists = [{"id": q, "overall": [QUERIES[(i + 1) % 15]], "content": [QUERIES[(i + 2) % 15]]}
             for i, q in enumerate(QUERIES)]
    (tmp_path / "gt.json").write_text(json.dumps(lists), encoding="utf-8")
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(tmp_path / "gt.json")
    items = npz(QUERIES + DOCS, 4, 1)
    add_embedding_file(ws, items, file="e5.npz", aspect="overall")
    other = add_embedding_file(ws, items, file="e5.npz", aspect="content")
    assert (other.run, other.new, other.same) == ("e5 (2)", True, ("e5",))
    assert not add_embedding_file(ws, items, file="e5.npz", aspect="content").new


def test_a_run_recorded_before_the_files_key_is_the_same_run_again(tmp_path) -> None:
    """A run of two files stored without the key of its files (as before it was recorded, or from arrays) is the
    very same run when its name and content are given again: nothing changes, no 'other content' error."""
    from evalcore.io import Embeddings

    docs, qry = _npy(len(DOCS), 4, 2), _npy(len(QUERIES), 4, 3)
    ws = Workspace.open(tmp_path / "W")
    as_arrays = [Embeddings.from_arrays(i, np.load(io.BytesIO(v))) for i, v in ((DOCS, docs), (QUERIES, qry))]
    ws.add_embedding_run("e", as_arrays[0], query_embeddings=as_arrays[1], source_name="docs.npy",
                         source_sha256=hashlib.sha256(docs).hexdigest())
    assert "files_sha256" not in ws.run_record("e").options
    generation = ws.generation
    assert ws.add_embedding_run("e", docs, _ids(DOCS), query_embeddings=qry, query_ids=_ids(QUERIES),
                                source_name="docs.npy") == "e"
    assert ws.generation == generation and ws.run_names() == ["e"]


def test_the_same_content_from_other_files_under_its_name_is_the_same_run(tmp_path) -> None:
    """The files' key is provenance, as the source's SHA-256: the same vectors and ids saved again in another file
    (an ``.npz`` written anew has other bytes: its zip entries' times) under the run's name change nothing, as
    before the key was recorded, instead of 'already exists with other content'."""
    docs, qry = _npy(len(DOCS), 4, 2), _npy(len(QUERIES), 4, 3)
    ws = Workspace.open(tmp_path / "W")
    ws.add_embedding_run("e", docs, _ids(DOCS), query_embeddings=qry, query_ids=_ids(QUERIES))
    assert "files_sha256" in ws.run_record("e").options
    generation = ws.generation

    def as_npz(ids: list[str], npy: bytes) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, ids=np.asarray(ids), embeddings=np.load(io.BytesIO(npy)))
        return buf.getvalue()

    assert ws.add_embedding_run("e", as_npz(DOCS, docs), query_embeddings=as_npz(QUERIES, qry)) == "e"
    assert ws.generation == generation and ws.run_names() == ["e"]


def test_the_data_page_does_not_store_the_same_embedding_files_twice() -> None:
    """Uploaded twice in the runs' uploader (item-to-item) and in the embedding form (documents and queries): the
    second time is said as for a ranked file and stores nothing."""
    at = empty_data_page()

    def upload(name: str, data: bytes) -> list[str]:
        box = next(u for u in at.get("file_uploader") if str(u.key).startswith("up_runs"))
        box.set_value([(name, data, "application/octet-stream")]).run()
        assert not at.exception and not errors(at)
        return [unescape(s.value) for s in at.success]

    items = npz(QUERIES + DOCS, 4, 1)
    upload("e5.npz", items)
    said = upload("e5.npz", items)
    assert ALREADY + "e5.npz (the same file as run 'e5')" in said, said
    assert [r.name for r in at.session_state["ws"].runs] == ["e5"]

    def form(docs: bytes, queries: bytes) -> list[str]:
        at.file_uploader(key="up_emb").set_value(("docs.npz", docs, "application/octet-stream"))
        at.file_uploader(key="up_qemb").set_value(("queries.npz", queries, "application/octet-stream"))
        at.button[[b.label for b in at.button].index("Add embedding run")].click().run()
        assert not at.exception and not errors(at)
        return [unescape(s.value) for s in at.success]

    docs, queries = npz(DOCS, 4, 2), npz(QUERIES, 4, 3)
    assert any(s.startswith("added embedding run docs") for s in form(docs, queries))
    said = form(docs, queries)
    assert ALREADY + "docs.npz and queries.npz (the same files as run 'docs')" in said, said
    assert [r.name for r in at.session_state["ws"].runs] == ["e5", "docs"]
    assert any(s.startswith("added embedding run docs (2)") for s in form(docs, npz(QUERIES, 4, 4)))  # other queries


def test_adding_from_a_path_twice_does_not_store_the_files_again(tmp_path) -> None:
    (tmp_path / "e5.npy").write_bytes(_npy(len(QUERIES + DOCS), 4, 1))
    (tmp_path / "e5_ids.txt").write_bytes(_ids(QUERIES + DOCS))
    at = empty_data_page()

    def add(**fields: str) -> list[str]:
        at.radio(key="path_kind").set_value("embedding")
        for key, value in {"path_main": str(tmp_path / "e5.npy"), "path_name": "", **fields}.items():
            at.text_input(key=key).input(value)
        at.button[[b.label for b in at.button].index("Add from this path")].click().run()
        assert not at.exception and not errors(at)
        return [unescape(s.value) for s in at.success]

    add()
    assert ALREADY + "e5.npy (the same file as run 'e5')" in add()
    assert [r.name for r in at.session_state["ws"].runs] == ["e5"]
    add(path_name="mine")  # a name given: a run wanted
    assert [r.name for r in at.session_state["ws"].runs] == ["e5", "mine"]

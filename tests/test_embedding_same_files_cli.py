"""``evaluate --workspace WS --emb DOCS[,QUERIES]``: embedding files the workspace already holds are that run, as a bare
``--run FILE`` is (``tests/test_run_same_file_names.py``): evaluated, printed and recorded under the stored name, said
in one ``warning:`` line, not stored again; ``--emb NAME=FILES`` names a run as given (a deliberate copy).

Before, ``--emb`` needed ``NAME=`` and recorded the files uploaded on the dashboard as 'e5' a second time under the
name given; a bare ``--emb FILE`` was refused (``--emb expects NAME=DOCS_FILE[,QUERIES_FILE]``).
"""

from __future__ import annotations

from test_app import DOCS, QUERIES, npz, trec_qrels

from evalcore import Workspace
from evalcore.cli import main
from evalcore.workspace.runfiles import add_embedding_file


def _setup(tmp_path):
    (tmp_path / "qrels.txt").write_bytes(trec_qrels())
    (tmp_path / "e5.npz").write_bytes(npz(QUERIES + DOCS, 4, 1))
    (tmp_path / "docs.npz").write_bytes(npz(DOCS, 4, 2))
    (tmp_path / "queries.npz").write_bytes(npz(QUERIES, 4, 3))
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(tmp_path / "qrels.txt")
    return ws


def _evaluate(tmp_path, *emb: str) -> int:
    args = ["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--k", "5", "--workspace", str(tmp_path / "W")]
    for spec in emb:
        args += ["--emb", spec]
    return main(args)


def test_embedding_files_uploaded_before_are_evaluated_and_recorded_under_their_stored_name(tmp_path, capsys):
    ws = _setup(tmp_path)
    add_embedding_file(ws, (tmp_path / "e5.npz").read_bytes(), file="model-a.npz")  # (an upload of them)
    add_embedding_file(ws, (tmp_path / "docs.npz").read_bytes(), file="pair.npz",
                       query_embeddings=(tmp_path / "queries.npz").read_bytes())
    ws.close()
    capsys.readouterr()
    assert _evaluate(tmp_path, str(tmp_path / "e5.npz"), f"{tmp_path / 'docs.npz'},{tmp_path / 'queries.npz'}") == 0
    out, err = capsys.readouterr()
    assert Workspace.open(tmp_path / "W").run_names() == ["model-a", "pair"]  # not stored again
    said = [ln for ln in err.splitlines() if "not stored again" in ln]
    assert said == [f"warning: {tmp_path / 'e5.npz'}: the workspace holds this very file as embedding run 'model-a': "
                    f"evaluated and recorded under that name, not stored again (--emb NAME={tmp_path / 'e5.npz'} "
                    "names it otherwise)",
                    f"warning: {tmp_path / 'docs.npz'} and {tmp_path / 'queries.npz'}: the workspace holds these very "
                    "files as embedding run 'pair': evaluated and recorded under that name, not stored again (--emb "
                    f"NAME={tmp_path / 'docs.npz'},{tmp_path / 'queries.npz'} names it otherwise)"], err
    assert {"model-a:", "pair:"} <= set(out.split()) and "e5:" not in out.split()
    recorded = Workspace.open(tmp_path / "W").load_evaluation()
    assert sorted(set(recorded.table["run"].astype(str))) == ["model-a", "pair"]


def test_a_name_given_is_a_run_wanted_and_a_bare_new_file_is_named_after_it(tmp_path, capsys):
    ws = _setup(tmp_path)
    add_embedding_file(ws, (tmp_path / "e5.npz").read_bytes(), file="model-a.npz")
    ws.close()
    assert _evaluate(tmp_path, f"copy={tmp_path / 'e5.npz'}", f"{tmp_path / 'docs.npz'},{tmp_path / 'queries.npz'}") == 0
    assert "not stored again" not in capsys.readouterr().err
    again = Workspace.open(tmp_path / "W")
    assert again.run_names() == ["model-a", "copy", "docs"]
    assert again.run_record("copy").artifacts == again.run_record("model-a").artifacts  # (shared, not written twice)


def test_files_the_command_line_recorded_are_not_stored_again_by_an_upload(tmp_path, capsys):
    """The key of both files is recorded by the command line too (it stores vectors it read), so the dashboard's
    upload of the same pair is that run."""
    _setup(tmp_path).close()
    assert _evaluate(tmp_path, f"cli={tmp_path / 'docs.npz'},{tmp_path / 'queries.npz'}") == 0
    ws = Workspace.open(tmp_path / "W")
    out = add_embedding_file(ws, (tmp_path / "docs.npz").read_bytes(), file="docs.npz",
                             query_embeddings=(tmp_path / "queries.npz").read_bytes())
    assert (out.run, out.new) == ("cli", False)
    assert ws.run_names() == ["cli"]


def test_a_bare_emb_without_a_workspace_is_named_after_its_documents_file(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_bytes(trec_qrels())
    (tmp_path / "e5.npz").write_bytes(npz(QUERIES + DOCS, 4, 1))
    assert main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--k", "5", "--emb", str(tmp_path / "e5.npz")]) == 0
    assert "e5:" in capsys.readouterr().out.split()

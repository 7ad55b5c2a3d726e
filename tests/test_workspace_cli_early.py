"""``evaluate --workspace`` stops at once on what the workspace holds: a run of the same name with other
content, another ground truth, other stored settings (without ``--replace``: one error line, exit 2) are
found from the inputs, before any embedding or reference is ranked, anything is evaluated or printed, or
an ``--out`` file is written (before: minutes of ranking, the results printed and ``--out`` written, and
then the recording refused). The runs of a sharded corpus, whose content is the ranking, are compared
once it is computed, still before anything is printed or written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from retrieval_support import write_shards

import evalcore.cli.inputs as cli_inputs
from evalcore import Qrels, Run, Workspace
from evalcore.cli import main
from evalcore.io import Embeddings, save_embeddings
from evalcore.io.trec import write_trec_qrels, write_trec_run

QIDS = [f"q{i}" for i in range(8)]
DOCS = [f"d{j}" for j in range(30)]


def _run(seed: int, name: str, qids=QIDS) -> Run:
    rng = np.random.default_rng(seed)
    return Run.from_dict({q: {d: float(rng.integers(1, 9)) for d in rng.choice(DOCS, 10, replace=False)}
                          for q in qids}, name=name)


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(7)
    qrels = Qrels.from_dict({q: {d: int(rng.integers(1, 3)) for d in rng.choice(DOCS, 4, replace=False)} for q in QIDS})
    paths = {name: tmp_path / name for name in ("qrels.txt", "subset.txt", "bm25.trec", "other.trec", "docs.npy",
                                                "queries.npy", "docs2.npy", "items.npy", "items2.npy")}
    write_trec_qrels(qrels, paths["qrels.txt"])
    write_trec_qrels(qrels.subset(QIDS[:3]), paths["subset.txt"])
    write_trec_run(_run(1, "bm25"), paths["bm25.trec"])
    write_trec_run(_run(2, "other"), paths["other.trec"])
    save_embeddings(Embeddings.from_arrays(DOCS, rng.normal(size=(len(DOCS), 6))), paths["docs.npy"])
    save_embeddings(Embeddings.from_arrays(DOCS, rng.normal(size=(len(DOCS), 6))), paths["docs2.npy"])
    save_embeddings(Embeddings.from_arrays(QIDS, rng.normal(size=(len(QIDS), 6))), paths["queries.npy"])
    save_embeddings(Embeddings.from_arrays(QIDS + DOCS, rng.normal(size=(38, 5))), paths["items.npy"])
    save_embeddings(Embeddings.from_arrays(QIDS + DOCS, rng.normal(size=(38, 5))), paths["items2.npy"])
    vectors = rng.normal(size=(len(DOCS), 6)).astype(np.float32)
    write_shards(tmp_path / "shards", vectors, DOCS, [0, 12, 30])
    paths["shards"] = tmp_path / "shards"
    return paths


@pytest.fixture()
def ranked(monkeypatch) -> list[str]:
    """The names of the embedding runs ranked and of the reference ground truths searched by the command."""
    calls: list[str] = []
    real_run, real_reference = cli_inputs.embedding_run, cli_inputs.reference_ground_truth

    def run(*a, **k):
        calls.append(k.get("name", "?"))
        return real_run(*a, **k)

    def reference(*a, **k):
        calls.append("reference")
        return real_reference(*a, **k)

    monkeypatch.setattr(cli_inputs, "embedding_run", run)
    monkeypatch.setattr(cli_inputs, "reference_ground_truth", reference)
    return calls


def _state(ws: Path) -> tuple:
    """The catalogue's rows and the artifact files: what a refused command must leave as they were."""
    conn = sqlite3.connect(ws / "catalogue.sqlite")
    try:
        rows = tuple(conn.execute(sql).fetchall() for sql in (
            "SELECT * FROM runs ORDER BY id", "SELECT * FROM ground_truths", "SELECT * FROM settings",
            "SELECT * FROM evaluations", "SELECT * FROM derived", "SELECT value FROM meta WHERE key = 'generation'"))
    finally:
        conn.close()
    return rows, sorted(p.name for p in (ws / "objects").rglob("*") if p.is_file())


def _command(files: dict[str, Path], ws: Path, out: Path, *extra: str, gt: str = "qrels.txt") -> list[str]:
    base = ["evaluate", "--qrels", str(files[gt])] if gt else ["evaluate"]
    return [*base, "--metrics", "ndcg", "--k", "5", "--ties", "docid_asc", "--workspace", str(ws), "--out", str(out),
            *extra]


def _holding(tmp_path: Path, files: dict[str, Path], conflict: str) -> tuple[Workspace, list[str], str]:
    """A workspace recorded by a first command, then changed from Python so that the second command (returned
    with what its error must say) conflicts with it on ``conflict``."""
    ws_dir = tmp_path / "W"
    emb = ["--run", f"bm25={files['bm25.trec']}", "--emb", f"e5={files['docs.npy']},{files['queries.npy']}"]
    fuse = ["--fuse", "mix=bm25:0.6,e5:0.4"]
    assert main(_command(files, ws_dir, tmp_path / "first", *emb, *fuse)) == 0
    ws = Workspace.open(ws_dir)
    if conflict == "run":
        ws.add_run("bm25", files["other.trec"], model="lexical", version="v2", replace=True)
        said = "run 'bm25' (model lexical, version v2) already recorded there with other content"
    elif conflict == "embedding run":
        ws.add_embedding_run("e5", files["docs2.npy"], query_embeddings=files["queries.npy"], replace=True)
        said = "run 'e5' already recorded there with other content"
    elif conflict == "fusion":
        ws.add_fused_run("mix", {"bm25": 0.5, "e5": 0.5}, replace=True)
        said = "run 'mix' already recorded there with other content"
    elif conflict == "ground truth":
        ws.set_ground_truth(files["subset.txt"])
        said = "its ground truth is subset.txt (3 queries), not qrels.txt (8 queries)"
    else:
        ws.set_settings(k=(1, 3))
        said = "its settings are k 1 3 (this command: 5)"
    return ws, [*emb, *fuse], said


@pytest.mark.parametrize("conflict", ["run", "embedding run", "fusion", "ground truth", "settings"])
def test_a_conflict_stops_the_command_before_any_ranking_output_or_write(files, tmp_path, capsys, ranked,
                                                                        conflict) -> None:
    ws, args, said = _holding(tmp_path, files, conflict)
    before = _state(ws.path)
    ranked.clear()
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(_command(files, ws.path, out, *args)) == 2
    std = capsys.readouterr()
    assert std.err.startswith(f"error: nothing recorded in workspace {ws.path}: ") and std.err.count("\n") == 1
    assert said in std.err and "pass --replace" in std.err
    assert ranked == []  # the embedding run was not ranked
    assert std.out == ""  # nothing evaluated or printed
    assert not out.exists()  # no --out file
    assert _state(ws.path) == before
    # --replace still records
    assert main(_command(files, ws.path, out, *args, "--replace")) == 0
    assert (out / "per_query.csv").exists() and _state(ws.path) != before


def test_another_reference_model_stops_the_command_before_its_neighbours_are_searched(files, tmp_path, capsys,
                                                                                   ranked) -> None:
    ws_dir, out = tmp_path / "R", tmp_path / "out"
    args = ["--emb", f"m={files['items.npy']}", "--agreement-pairs", "0"]
    assert main(_command(files, ws_dir, tmp_path / "first", "--reference-emb", str(files["items.npy"]), *args,
                         gt="")) == 0
    before = _state(ws_dir)
    ranked.clear()
    capsys.readouterr()
    assert main(_command(files, ws_dir, out, "--reference-emb", str(files["items2.npy"]), *args, gt="")) == 2
    std = capsys.readouterr()
    assert "its ground truth is items.npy" in std.err and "not the reference model items2.npy" in std.err
    assert ranked == [] and std.out == "" and not out.exists() and _state(ws_dir) == before


def test_a_folder_holding_other_files_is_refused_before_the_work(files, tmp_path, capsys, ranked) -> None:
    folder, out = tmp_path / "notes", tmp_path / "out"
    folder.mkdir()
    (folder / "todo.txt").write_text("not a workspace")
    code = main(_command(files, folder, out, "--emb", f"e5={files['docs.npy']},{files['queries.npy']}"))
    std = capsys.readouterr()
    assert code == 2 and "this folder holds other files and no evalcore workspace" in std.err
    assert ranked == [] and std.out == "" and not out.exists()
    assert sorted(p.name for p in folder.iterdir()) == ["todo.txt"]


def test_a_run_the_workspace_would_refuse_stops_the_command_before_the_out_files(files, tmp_path, capsys,
                                                                                ranked) -> None:
    write_trec_run(_run(3, "none", qids=["x1", "x2"]), tmp_path / "none.trec")
    out, ws_dir = tmp_path / "out", tmp_path / "W"
    code = main(_command(files, ws_dir, out, "--run", f"none={tmp_path / 'none.trec'}",
                         "--emb", f"e5={files['docs.npy']},{files['queries.npy']}"))
    std = capsys.readouterr()
    assert code == 2 and "error: run 'none': none of its query ids (2) is a query of the ground truth" in std.err
    assert ranked == [] and std.out == "" and not out.exists() and not ws_dir.exists()


def test_a_sharded_corpus_run_is_compared_after_its_ranking_but_before_any_output(files, tmp_path, capsys,
                                                                               ranked) -> None:
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(files["qrels.txt"])
    ws.set_settings(k=(5,), metrics=("ndcg",), ties="docid_asc", depth=100)
    ws.add_run("dense", files["other.trec"])  # a ranked run under the name: compared with the ranking
    before = _state(ws.path)
    out = tmp_path / "out"
    args = ["--emb", f"dense={files['shards']},{files['queries.npy']}"]
    assert main(_command(files, ws.path, out, *args)) == 2
    std = capsys.readouterr()
    assert "run 'dense' already recorded there with other content" in std.err
    assert ranked == ["dense"]  # its content is the ranking: it had to be computed
    assert std.out == "" and not out.exists() and _state(ws.path) == before
    # stored as an embedding run: another kind, refused before the ranking
    ws.add_embedding_run("dense", files["docs.npy"], query_embeddings=files["queries.npy"], replace=True)
    ranked.clear()
    assert main(_command(files, ws.path, out, *args)) == 2
    assert "run 'dense' already recorded there with other content" in capsys.readouterr().err
    assert ranked == [] and not out.exists()


def test_a_run_recorded_elsewhere_while_the_command_ranks_is_found_before_any_output(files, tmp_path, capsys,
                                                                                  monkeypatch) -> None:
    """The workspace changed between the check before the work and the end of the ranking (its generation
    moved): everything is checked again, and the conflict still stops the command before the output."""
    ws_dir, out = tmp_path / "W", tmp_path / "out"
    args = ["--run", f"bm25={files['bm25.trec']}", "--emb", f"e5={files['docs.npy']},{files['queries.npy']}"]
    assert main(_command(files, ws_dir, tmp_path / "first", *args)) == 0
    real = cli_inputs.embedding_run

    def rank_while_another_writer_records(*a, **k):
        Workspace.open(ws_dir).add_run("bm25", files["other.trec"], replace=True)
        return real(*a, **k)

    monkeypatch.setattr(cli_inputs, "embedding_run", rank_while_another_writer_records)
    capsys.readouterr()
    assert main(_command(files, ws_dir, out, *args)) == 2
    std = capsys.readouterr()
    assert "run 'bm25' already recorded there with other content" in std.err
    assert std.out == "" and not out.exists()

"""``evaluate --workspace`` with the ground truth the workspace already holds, from the very same file.

The file's name, bytes (SHA-256) and format (a reference model: also its ids) match what was
recorded: the ground truth is neither parsed again to compare it nor stored again (a large
reference model was written and hashed again by every command of a training loop). Any
difference still goes the careful way: compared, and refused or recorded as before.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from evalcore import Qrels, Run, Workspace
from evalcore.cli import main
from evalcore.io import Embeddings, save_embeddings
from evalcore.io.trec import write_trec_qrels, write_trec_run


@pytest.fixture()
def trec(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(5)
    qids = [f"q{i}" for i in range(12)]
    docs = [f"d{j}" for j in range(30)]
    paths = {"qrels": tmp_path / "qrels.txt"}
    write_trec_qrels(Qrels.from_dict({q: {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 5, replace=False)}
                                      for q in qids}), paths["qrels"])
    for name in ("r1", "r2"):
        paths[name] = tmp_path / f"{name}.trec"
        write_trec_run(Run.from_dict({q: {d: float(rng.integers(0, 5)) for d in rng.choice(docs, 10, replace=False)}
                                      for q in qids}, name=name), paths[name])
    return paths


def _evaluate(qrels: Path, run: str, ws: Path, *extra: str) -> int:
    return main(["evaluate", "--qrels", str(qrels), "--run", run, "--k", "5", "--workspace", str(ws), *extra])


def _refuse(*_a, **_k):
    raise RuntimeError("parsed or stored the ground truth again")


def test_the_same_judgments_file_is_not_parsed_or_stored_again(trec, tmp_path: Path, monkeypatch, capsys) -> None:
    ws_dir = tmp_path / "W"
    assert _evaluate(trec["qrels"], f"r1={trec['r1']}", ws_dir) == 0
    gt = Workspace.open(ws_dir).ground_truth()
    with monkeypatch.context() as m:
        m.setattr("evalcore.workspace.inputs.qrels_parts", _refuse)
        m.setattr(Workspace, "set_ground_truth", _refuse)
        assert _evaluate(trec["qrels"], f"r2={trec['r2']}", ws_dir) == 0
        assert _evaluate(trec["qrels"], f"r2={trec['r2']}", ws_dir, "--qrels-format", "trec") == 0
    ws = Workspace.open(ws_dir)
    assert ws.ground_truth()["id"] == gt["id"] and set(ws.runs()["name"]) == {"r1", "r2"}
    # the same name with other bytes: compared, and refused as another ground truth
    lines = trec["qrels"].read_text().splitlines()
    trec["qrels"].write_text("\n".join(lines[:-1] + [lines[-1].rsplit(" ", 1)[0] + " 7"]) + "\n")
    capsys.readouterr()
    assert _evaluate(trec["qrels"], f"r1={trec['r1']}", ws_dir) == 2
    assert "its ground truth is qrels.txt" in capsys.readouterr().err
    # the same bytes under another name: compared (equal), recorded under the new name as before
    trec["qrels"].write_text("\n".join(lines) + "\n")
    other = tmp_path / "renamed.txt"
    shutil.copyfile(trec["qrels"], other)
    assert _evaluate(other, f"r1={trec['r1']}", ws_dir) == 0
    assert Workspace.open(ws_dir).ground_truth()["name"] == "renamed.txt"


def test_a_reference_model_from_the_same_file_is_not_stored_again(tmp_path: Path, monkeypatch, capsys) -> None:
    rng = np.random.default_rng(9)
    ids = [f"p{i}" for i in range(40)]
    teacher, student = tmp_path / "teacher.npy", tmp_path / "student.npy"
    save_embeddings(Embeddings.from_arrays(ids, rng.normal(size=(40, 12))), teacher)
    save_embeddings(Embeddings.from_arrays(ids, rng.normal(size=(40, 4))), student)
    ws_dir = tmp_path / "R"

    def evaluate(name: str, *extra: str) -> int:
        return main(["evaluate", "--reference-emb", str(teacher), "--emb", f"{name}={student}", "--k", "1", "3",
                     "--workspace", str(ws_dir), *extra])

    # recorded from Python without its file's SHA-256 (as before this change): the first command adds it
    ws = Workspace.open(ws_dir)
    ws.set_reference(Embeddings.from_arrays(ids, np.load(teacher)), name="teacher.npy")
    gt = ws.ground_truth()
    assert gt["source_sha256"] is None
    assert evaluate("e1") == 0
    assert Workspace.open(ws_dir).ground_truth()["id"] == gt["id"]
    assert Workspace.open(ws_dir).ground_truth()["source_sha256"] is not None
    with monkeypatch.context() as m:
        m.setattr(Workspace, "set_reference", _refuse)
        m.setattr(Workspace, "load_reference", _refuse)
        assert evaluate("e2") == 0
    assert set(Workspace.open(ws_dir).runs()["name"]) == {"e1", "e2"}
    # the same vectors file with other ids: another ground truth, refused
    shutil.move(tmp_path / "teacher_ids.txt", tmp_path / "kept_ids.txt")
    (tmp_path / "teacher_ids.txt").write_text("\n".join(reversed(ids)) + "\n")
    capsys.readouterr()
    assert evaluate("e3") == 2
    assert "its ground truth is teacher.npy" in capsys.readouterr().err

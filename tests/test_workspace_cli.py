"""The workspace on the command line (issue #9): ``evaluate --workspace``, ``workspace list|remove|export|import``."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore import Qrels, Run, Workspace
from evalcore.cli import main
from evalcore.io import Embeddings, save_embeddings
from evalcore.io.trec import write_trec_qrels, write_trec_run
from evalcore.workspace.store import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(11)
    qids = [f"q{i}" for i in range(25)]
    docs = [f"d{j}" for j in range(50)]
    qrels = Qrels.from_dict({q: {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 6, replace=False)}
                             for q in qids})
    paths = {"qrels": tmp_path / "qrels.txt", "docs": tmp_path / "docs.npy", "queries": tmp_path / "queries.npy"}
    write_trec_qrels(qrels, paths["qrels"])
    for name in ("bm25", "dense"):
        paths[name] = tmp_path / f"{name}.trec"
        write_trec_run(Run.from_dict({q: {d: float(rng.integers(0, 6)) for d in rng.choice(docs, 20, replace=False)}
                                      for q in qids[:-2]}, name=name), paths[name])
    save_embeddings(Embeddings.from_arrays(docs, rng.normal(size=(50, 8))), paths["docs"])
    save_embeddings(Embeddings.from_arrays(qids, rng.normal(size=(25, 8))), paths["queries"])
    save_embeddings(Embeddings.from_arrays(qids + docs, rng.normal(size=(75, 6))), tmp_path / "items.npy")
    paths["items"] = tmp_path / "items.npy"
    return paths


def _evaluate(files: dict[str, Path], ws: Path, *extra: str) -> int:
    return main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"bm25={files['bm25']}",
                 "--run", str(files["dense"]), "--emb", f"e5={files['docs']},{files['queries']}",
                 "--fuse", "mix=bm25:0.6,e5:0.4", "--metrics", "ndcg", "recall", "P@5", "--k", "5", "10",
                 "--ties", "docid_asc", "--workspace", str(ws), *extra])



def test_evaluate_records_the_fusion_method_and_the_api_fuses_the_same(files, tmp_path: Path) -> None:
    """``--fuse-method``/``--fuse-norm`` are stored with the fused run: a reopened workspace evaluates it alike."""
    ws_dir = tmp_path / "W"
    code = main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"bm25={files['bm25']}",
                 "--run", str(files["dense"]), "--fuse", "mix=bm25:0.6,dense:0.4", "--fuse-method", "wsum",
                 "--fuse-norm", "min-max", "--metrics", "ndcg", "--k", "5", "10", "--ties", "docid_asc",
                 "--workspace", str(ws_dir), "--out", str(tmp_path / "out")])
    assert code == 0
    ws = Workspace.open(ws_dir)
    options = ws.runs().set_index("name").loc["mix", "options"]
    assert (options["method"], options["norm"], options["weights"]) == ("wsum", "min-max", [0.6, 0.4])
    again = ws.evaluate(record=False).table
    per_query = pd.read_csv(tmp_path / "out" / "per_query.csv", dtype={"query_id": str}, float_precision="round_trip")
    mine = per_query[per_query["run"] == "mix"]["value"].to_numpy()
    assert np.array_equal(again[again["run"] == "mix"]["value"].to_numpy(), mine, equal_nan=True)

def _list(ws: Path, capsys) -> list[str]:
    capsys.readouterr()
    assert main(["workspace", "list", "--workspace", str(ws)]) == 0
    return capsys.readouterr().out.splitlines()


def test_evaluate_records_everything_and_the_api_gives_the_same_numbers(files, tmp_path: Path, capsys) -> None:
    ws_dir = tmp_path / "W"
    assert _evaluate(files, ws_dir, "--out", str(tmp_path / "out")) == 0
    assert "recorded the ground truth, 4 runs and the evaluation" in capsys.readouterr().out
    ws = Workspace.open(ws_dir)
    frame = ws.runs().set_index("name")
    assert frame["kind"].to_dict() == {"bm25": "ranked", "dense": "ranked", "e5": "embedding", "mix": "fused"}
    assert frame.loc["bm25", "source_name"] == "bm25.trec" and frame.loc["e5", "source_name"] == "docs.npy"
    assert frame.loc["mix", "options"]["weights"] == [0.6, 0.4] and frame.loc["mix", "options"]["ties"] == "docid_asc"
    assert ws.ground_truth()["source_name"] == "qrels.txt"
    recorded = ws.load_evaluation()
    per_query = pd.read_csv(tmp_path / "out" / "per_query.csv", dtype={"query_id": str}, float_precision="round_trip")
    assert np.array_equal(per_query["value"].to_numpy(), recorded.table["value"].to_numpy(), equal_nan=True)
    # the settings of the command are the workspace's: evaluating again gives the same table,
    # without ranking the embeddings again (the CLI's ranking is kept)
    import evalcore.embedding_runs as ER

    called = []
    original = ER.embedding_run
    ER.embedding_run = lambda *a, **k: called.append(1) or original(*a, **k)
    try:
        again = ws.evaluate(record=False)
    finally:
        ER.embedding_run = original
    assert called == []
    pd.testing.assert_frame_equal(again.table, recorded.table)
    assert _list(ws_dir, capsys) == ["bm25\tranked\t\t\t", "dense\tranked\t\t\t", "e5\tembedding\t\t\t",
                                     "mix\tfused\t\t\t"]
    # running the command again keeps the runs (same content) and the one ground truth
    assert _evaluate(files, ws_dir) == 0
    assert "4 runs (4 already there with the same content: kept)" in capsys.readouterr().out
    assert len(ws.run_names()) == 4 and ws.generation > 0
    conn = sqlite3.connect(ws_dir / "catalogue.sqlite")
    assert conn.execute("SELECT count(*) FROM ground_truths").fetchone()[0] == 1
    conn.close()


def test_list_prints_model_version_and_step(files, tmp_path: Path, capsys) -> None:
    ws = Workspace.open(tmp_path / "W")
    ws.add_run("ep5", files["bm25"], model="e5-base", version="epoch 5", step=5)
    ws.add_run("ep7.5", files["dense"], model="e5-base", version="v2", step=7.5)
    ws.add_run("plain", files["dense"])
    assert _list(ws.path, capsys) == ["ep5\tranked\te5-base\tepoch 5\t5", "ep7.5\tranked\te5-base\tv2\t7.5",
                                      "plain\tranked\t\t\t"]
    out = subprocess.run([sys.executable, "-m", "evalcore", "workspace", "list", "--workspace", str(ws.path)],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out == "ep5\tranked\te5-base\tepoch 5\t5\nep7.5\tranked\te5-base\tv2\t7.5\nplain\tranked\t\t\t\n"


def test_remove_export_import(files, tmp_path: Path, capsys) -> None:
    ws_dir = tmp_path / "W"
    assert _evaluate(files, ws_dir) == 0
    capsys.readouterr()
    assert main(["workspace", "remove", "e5", "--workspace", str(ws_dir)]) == 0
    assert capsys.readouterr().out.strip() == "removed e5, mix"
    lines = _list(ws_dir, capsys)
    assert lines == ["bm25\tranked\t\t\t", "dense\tranked\t\t\t"]
    bundle = tmp_path / "ws.zip"
    assert main(["workspace", "export", "--workspace", str(ws_dir), "--out", str(bundle)]) == 0
    assert main(["workspace", "import", str(bundle), "--workspace", str(tmp_path / "W2")]) == 0
    assert _list(tmp_path / "W2", capsys) == lines
    a, b = (sqlite3.connect(p / "catalogue.sqlite") for p in (ws_dir, tmp_path / "W2"))
    assert list(a.iterdump()) == list(b.iterdump())
    a.close()
    b.close()
    capsys.readouterr()
    assert main(["workspace", "import", str(bundle), "--workspace", str(tmp_path / "W2")]) == 2
    assert "not empty" in capsys.readouterr().err
    assert main(["workspace", "gc", "--workspace", str(ws_dir)]) == 0


def test_environment_variable_is_the_default(files, tmp_path: Path, monkeypatch, capsys) -> None:
    ws_dir = tmp_path / "from-env"
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(ws_dir))
    assert main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"bm25={files['bm25']}"]) == 0
    assert _list(ws_dir, capsys) == ["bm25\tranked\t\t\t"]
    capsys.readouterr()
    main_help = subprocess.run([sys.executable, "-m", "evalcore", "workspace", "list", "--help"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout
    assert "EVALCORE_WORKSPACE" in main_help
    group_help = subprocess.run([sys.executable, "-m", "evalcore", "workspace", "--help"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
    assert "$EVALCORE_WORKSPACE" in group_help and "$evalcore_workspace" not in group_help.replace("\n", " ")


def test_evaluate_never_replaces_what_the_workspace_holds_silently(files, tmp_path: Path, capsys) -> None:
    """A run recorded from Python (with its model, version and step) and the ground truth every run is
    evaluated against are not replaced by ``evaluate --workspace`` unless ``--replace`` is given; the
    same content again is kept as it is; a replaced run keeps its model, version and step."""
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(files["qrels"])
    ws.add_run("bm25", files["bm25"], model="lexical", version="v1", step=1)

    def evaluate(run: Path, qrels: Path = files["qrels"], *extra: str) -> tuple[int, str]:
        capsys.readouterr()
        code = main(["evaluate", "--qrels", str(qrels), "--run", f"bm25={run}", "--k", "5",
                     "--workspace", str(ws.path), *extra])
        out = capsys.readouterr()
        return code, out.out + out.err

    code, text = evaluate(files["dense"])  # other content under the same name
    assert code == 2
    assert "nothing recorded in workspace" in text and "'bm25' (model lexical, version v1, step 1)" in text
    assert "--replace" in text
    assert ws.evaluations().empty
    rec = ws.run_record("bm25")
    assert (rec.model, rec.version, rec.step, rec.source_name) == ("lexical", "v1", 1.0, "bm25.trec")
    code, text = evaluate(files["bm25"])  # the same content: kept, with its model, version and step
    assert code == 0 and "recorded the ground truth, 1 run (1 already there with the same content: kept)" in text
    rec = ws.run_record("bm25")
    assert (rec.model, rec.version, rec.step) == ("lexical", "v1", 1.0) and len(ws.evaluations()) == 1
    from evalcore.io import load_run

    ws.add_run("other", load_run(files["dense"]), model="from-python")  # stored from a Run: no file bytes to match
    capsys.readouterr()
    assert main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"other={files['dense']}", "--k", "5",
                 "--workspace", str(ws.path)]) == 0
    assert "(1 already there with the same content: kept)" in capsys.readouterr().out
    assert ws.run_record("other").model == "from-python"
    code, _ = evaluate(files["dense"], files["qrels"], "--replace")
    assert code == 0
    rec = ws.run_record("bm25")
    assert (rec.model, rec.version, rec.step, rec.source_name) == ("lexical", "v1", 1.0, "dense.trec")
    # another ground truth: refused (naming both), then replaced on request
    lines = files["qrels"].read_text().splitlines()
    subset = tmp_path / "subset.txt"
    subset.write_text("\n".join(ln for ln in lines if ln.split()[0] in ("q0", "q1")) + "\n")
    code, text = evaluate(files["dense"], subset)
    assert code == 2 and "ground truth is qrels.txt (25 queries), not subset.txt (2 queries)" in text
    assert ws.load_qrels().n_queries == 25
    code, _ = evaluate(files["dense"], subset, "--replace")
    assert code == 0 and ws.load_qrels().n_queries == 2


def test_reference_and_aspects_are_recorded(files, tmp_path: Path) -> None:
    ws_dir = tmp_path / "R"
    assert main(["evaluate", "--reference-emb", str(files["items"]), "--emb", f"m={files['items']}",
                 "--k", "1", "3", "--n-samples", "10", "--reference-mode", "fixed", "--reference-depth", "4",
                 "--workspace", str(ws_dir)]) == 0
    ws = Workspace.open(ws_dir)
    assert ws.ground_truth()["kind"] == "reference"
    s = ws.settings()
    assert (s.gt_mode, s.gt_depth, s.sample_size, s.k) == ("fixed", 4, 10, (1, 3))
    pd.testing.assert_frame_equal(ws.evaluate(record=False).table, ws.load_evaluation().table)
    seed001 = ROOT / "tests" / "fixtures" / "seed001_movies.json"
    data = json.loads(seed001.read_text())
    ids = [d["movie_id"] for d in data]
    emb = tmp_path / "movies.npy"
    save_embeddings(Embeddings.from_arrays(ids, np.random.default_rng(0).normal(size=(len(ids), 5))), emb)
    ws_dir = tmp_path / "A"
    assert main(["evaluate", "--qrels", str(seed001), "--emb", f"a={emb}", "--emb", f"b={emb}",
                 "--aspect", "a=content", "--aspect", "overall", "--k", "3", "--ties", "docid_asc",
                 "--workspace", str(ws_dir)]) == 0
    ws = Workspace.open(ws_dir)
    assert ws.runs().set_index("name")["aspect"].to_dict() == {  # stored under the file's own names
        "a": "5_most_similar_movies_content_ordered", "b": "5_most_similar_movies_overall_ordered"}
    assert len(ws.aspects()) >= 2
    pd.testing.assert_frame_equal(ws.evaluate(record=False).table, ws.load_evaluation().table)


def test_errors_are_one_line(tmp_path: Path, capsys) -> None:
    assert main(["workspace", "list", "--workspace", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no workspace here" in err and err.count("\n") == 1
    assert not (tmp_path / "nothing").exists()
    ws = Workspace.open(tmp_path / "W")
    ws.close()
    conn = sqlite3.connect(tmp_path / "W" / "catalogue.sqlite")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 3}")
    conn.close()
    assert main(["workspace", "list", "--workspace", str(tmp_path / "W")]) == 2
    assert f"newer evalcore (schema {SCHEMA_VERSION + 3} > {SCHEMA_VERSION})" in capsys.readouterr().err
    assert main(["workspace", "remove", "x", "--workspace", str(tmp_path / "W")]) == 2
    ws2 = Workspace.open(tmp_path / "W3")
    assert main(["workspace", "remove", "x", "--workspace", str(ws2.path)]) == 2
    assert "no run named 'x'" in capsys.readouterr().err
    assert os.path.isdir(ws2.path)


def test_the_run_info_of_one_run_from_the_command_line(files, tmp_path: Path, capsys) -> None:
    """A training script calling the command line once per checkpoint gives the run's model, version and
    step (--run-model/--run-version/--run-step); again with the same content, only the info changes."""
    ws_dir = tmp_path / "W"
    base = ["evaluate", "--qrels", str(files["qrels"]), "--emb", f"ep9={files['docs']},{files['queries']}",
            "--k", "5", "--workspace", str(ws_dir)]
    assert main([*base, "--run-model", "dense", "--run-version", "epoch 9", "--run-step", "9"]) == 0
    assert _list(ws_dir, capsys) == ["ep9\tembedding\tdense\tepoch 9\t9"]
    assert main([*base, "--run-step", "10"]) == 0  # same vectors: kept, its step updated, the rest as it was
    assert _list(ws_dir, capsys) == ["ep9\tembedding\tdense\tepoch 9\t10"]
    capsys.readouterr()
    two = ["evaluate", "--qrels", str(files["qrels"]), "--run", f"a={files['bm25']}", "--run", f"b={files['dense']}",
           "--workspace", str(ws_dir), "--run-model", "m"]
    assert main(two) == 2
    assert "--run-model describes one run, and this command has 2" in capsys.readouterr().err
    assert main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"a={files['bm25']}", "--run-step", "3"]) == 2
    assert "--run-step describes a run recorded in a workspace: give --workspace DIR" in capsys.readouterr().err
    assert _list(ws_dir, capsys) == ["ep9\tembedding\tdense\tepoch 9\t10"]  # nothing recorded by the errors

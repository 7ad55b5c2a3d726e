"""With no run to evaluate, the command line says what to give, as its options take it: ``--run`` and ``--emb`` take a
bare file too (named after it). Before, the message asked for ``--run NAME=FILE or --emb NAME=FILE`` only."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.cli.main import main
from evalcore.io import Embeddings, save_embeddings


@pytest.mark.parametrize("command, metric", [("evaluate", "--metrics"), ("compare", "--metric")])
def test_no_run_names_the_bare_and_the_named_forms_and_the_bare_form_works(tmp_path, capsys, command, metric) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    assert main([command, "--qrels", str(tmp_path / "qrels.txt"), metric, "ndcg@10"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: give at least one --run [NAME=]FILE or --emb [NAME=]DOCS[,QUERIES] (a bare file is named "
                   "after it)\n"), err
    # as the message says: a bare FILE for each (compare needs two runs)
    (tmp_path / "bm25.txt").write_text("q1 Q0 d1 1 2 t\nq2 Q0 d1 1 2 t\n", encoding="utf-8")
    save_embeddings(Embeddings.from_arrays(["q1", "q2", "d1", "d2"], np.eye(4, dtype=np.float32) + 0.1),
                    tmp_path / "e5.npz")
    args = ["--run", str(tmp_path / "bm25.txt"), "--emb", str(tmp_path / "e5.npz"), "--ties", "docid_asc"]
    assert main([command, "--qrels", str(tmp_path / "qrels.txt"), metric, "ndcg@10", *args,
                 *(["--out", str(tmp_path / "out")] if command == "evaluate" else [])]) == 0, capsys.readouterr().err

"""A fusion of embedding runs says how deep its inputs were ranked (a review: seed 001 §7.2 fuses whole
rankings; at the default --emb-depth 100 of 500 movies, 19 of 500 fused top-5 lists differed from the guide's,
while report.json said top_n null)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalcore.cli import main
from evalcore.io import Embeddings, save_embeddings


@pytest.fixture()
def items(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(17)
    ids = [f"m{i:02d}" for i in range(40)]
    paths = {"qrels": tmp_path / "gt.txt"}
    paths["qrels"].write_text("".join(f"{ids[i]} 0 {ids[(i + 3) % 40]} 1\n" for i in range(40)))
    for name in ("a", "b"):
        paths[name] = tmp_path / f"{name}.npz"
        save_embeddings(Embeddings.from_arrays(ids, rng.normal(size=(40, 5))), paths[name])
    return paths


def _fuse(items: dict[str, Path], out: Path, *extra: str) -> dict:
    assert main(["evaluate", "--qrels", str(items["qrels"]), "--emb", f"a={items['a']}", "--emb", f"b={items['b']}",
                 "--fuse", "mix=a:1,b:0.5", "--metrics", "mrr", "--k", "5", "--ties", "docid_asc", "--out", str(out),
                 *extra]) == 0
    return json.loads((out / "report.json").read_text())["metadata"]["fusion"]["mix"]


def test_a_fusion_of_embedding_runs_cut_short_warns_and_records_their_depth(items, tmp_path, capsys):
    meta = _fuse(items, tmp_path / "cut", "--emb-depth", "10")
    err = capsys.readouterr().err
    assert "fusion 'mix' fuses the top 10 of 'a', 'b'" in err and "--emb-depth 39 fuses whole rankings" in err
    assert meta["inputs_depth"] == {"a": 10, "b": 10}
    # whole rankings (39 other items; the default depth, 100, is more than that): nothing to say
    for extra in (("--emb-depth", "39"), ()):
        meta = _fuse(items, tmp_path / f"whole{len(extra)}", *extra)
        assert "fuses the top" not in capsys.readouterr().err
        depth = 39 if extra else 100
        assert meta["inputs_depth"] == {"a": depth, "b": depth}

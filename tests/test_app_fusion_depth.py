"""The Fusion page says when embedding runs take part with only their top ``depth`` (a review: seed 001 §7.2
fuses whole rankings; "Top-N per run (0 = whole lists)" hid that each space was cut at 100 of 499)."""

from __future__ import annotations

import io

import numpy as np
from test_app_views import goto, start

from evalcore import workspace as W


def _npz(ids: list[str], vectors: np.ndarray, name: str) -> W.Blob:
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(ids), embeddings=vectors.astype(np.float32))
    return W.Blob.of(name, buf.getvalue())


def _fusion_page(depth: int):
    rng = np.random.default_rng(8)
    ids = [f"m{i:02d}" for i in range(40)]
    qrels = "".join(f"{ids[i]} 0 {ids[(i + 2) % 40]} 1\n" for i in range(40)).encode()
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(5,), metrics=("mrr",), depth=depth)),
                            W.Blob.of("gt.txt", qrels))
    for name in ("anchor", "content"):
        ws, _ = W.add_embedding_run(ws, _npz(ids, rng.normal(size=(40, 6)), f"{name}.npz"), name=name)
    at = goto(start(ws, "overview"), "fusion")
    at.multiselect(key="fu_runs").set_value(["anchor", "content"]).run()
    assert not at.exception
    return at


def _notes(at) -> list[str]:
    return [i.value for i in at.info if "The fusion sees the top" in i.value]


def test_the_fusion_page_says_when_embedding_runs_are_cut_short():
    notes = _notes(_fusion_page(10))
    assert len(notes) == 1 and "top 10 of the embedding runs anchor, content" in notes[0]
    assert "(39 items)" in notes[0] and "ranking depth of 39" in notes[0]
    assert not _notes(_fusion_page(39))  # whole rankings: 39 other items, item-to-item

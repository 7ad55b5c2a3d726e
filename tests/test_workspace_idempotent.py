"""The very same run added again from Python changes nothing (a review: the CLI kept it, the API raised, so a
training script restarted after a crash stopped at the first epoch it had already logged)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_workspace_store import tie_heavy

from evalcore import Workspace
from evalcore.errors import OptionError


def test_the_same_run_again_is_kept_and_anything_else_is_refused(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "W")
    qrels, runs = tie_heavy(3)
    ws.set_ground_truth(qrels)
    items = [str(q) for q in qrels.query_ids] + [f"x{i}" for i in range(20)]
    vectors = np.random.default_rng(1).normal(size=(len(items), 6)).astype(np.float32)
    ws.add_run("bm25", runs["bm25"], model="lexical", tags=("baseline",))
    ws.add_embedding_run("e5-ep1", vectors, items, model="e5", version="epoch 1", step=1)
    ws.add_fused_run("mix", {"bm25": 1.0, "e5-ep1": 0.5})
    before, listing = ws.generation, ws.runs()
    # a restarted script logs the same again: no error, nothing changes (not even the change counter)
    assert ws.add_run("bm25", runs["bm25"], model="lexical", tags=("baseline",)) == "bm25"
    assert ws.add_embedding_run("e5-ep1", vectors.copy(), list(items), model="e5", version="epoch 1",
                                step=1) == "e5-ep1"
    assert ws.add_fused_run("mix", {"bm25": 1.0, "e5-ep1": 0.5}) == "mix"
    assert ws.generation == before
    pd.testing.assert_frame_equal(ws.runs(), listing)
    # other content, or the same content with other run info: refused, nothing changes
    other = vectors.copy()
    other[0, 0] += 1.0
    for add in (lambda: ws.add_run("bm25", runs["dense"], model="lexical", tags=("baseline",)),
                lambda: ws.add_run("bm25", runs["bm25"], model="other"),
                lambda: ws.add_embedding_run("e5-ep1", other, items, model="e5", version="epoch 1", step=1),
                lambda: ws.add_embedding_run("e5-ep1", vectors, items, model="e5", version="epoch 1", step=2),
                lambda: ws.add_fused_run("mix", {"bm25": 1.0, "e5-ep1": 0.25})):
        with pytest.raises(OptionError, match="already exists with other content or run info"):
            add()
    assert ws.generation == before
    pd.testing.assert_frame_equal(ws.runs(), listing)

"""A run logged while Compare is open does not reset the runs the user chose to compare (a review: a colleague's
script logging a checkpoint silently put "Runs compared" back to the default, which changed the family of the
correction and every p-value)."""

from __future__ import annotations

import numpy as np
import test_app as T
from test_app_store import python_workspace


def test_a_run_logged_meanwhile_is_offered_not_added_and_the_choice_is_kept():
    name, ws = python_workspace()
    at = T.goto(T.open_app(name), "compare")
    assert set(at.multiselect(key="cmp_runs").value) == {"bm25", "dense", "e5-ep5", "e5-ep25"}  # 4: all
    mine = ["bm25", "e5-ep5", "e5-ep25"]
    at.multiselect(key="cmp_runs").set_value(mine).run()
    items = T.QUERIES + T.DOCS
    ws.add_embedding_run("e5-ep50", np.random.default_rng(9).normal(size=(len(items), 8)).astype(np.float32), items,
                         model="e5", version="epoch 50", step=50)
    at.run()
    at.run()
    assert not at.exception
    box = at.multiselect(key="cmp_runs")
    assert "e5-ep50" in box.options and box.value == mine
    assert any("New since your choice, not compared: e5-ep50" in c.value.replace("\\", "") for c in at.caption)
    # the choice is the workspace's: another session keeps it too (e5-ep50 offered, not added)
    other = T.goto(T.open_app(name), "compare")
    assert other.multiselect(key="cmp_runs").value == mine
    # untouched, the choice follows the default (all runs, up to 8)
    name, ws = python_workspace()
    at = T.goto(T.open_app(name), "compare")
    ws.add_embedding_run("e5-ep50", np.random.default_rng(9).normal(size=(len(items), 8)).astype(np.float32), items,
                         model="e5", version="epoch 50", step=50)
    at.run()
    assert set(at.multiselect(key="cmp_runs").value) == {"bm25", "dense", "e5-ep5", "e5-ep25", "e5-ep50"}

"""An id listed twice in a ``.npy``'s ids file is reported against that ids file and its line, where the fix is.

Before: ``error: vecs.npy: id 'd1' appears twice (1 duplicate ids)`` on the command line, and the dashboard's
"Not loaded: vecs.npy: ..." for an uploaded pair of files: the ``.npy`` holds no id, so a user opening it could
not find the duplicate (the ids file, line 4 here). Now the ids file (an upload: "ids of vecs.npy") and the line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalcore import workspace as W
from evalcore.errors import DuplicateIdError
from evalcore.io import load_embeddings

IDS = ["d0", "d1", "d2", "d1", "d4"]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    vecs = tmp_path / "vecs.npy"
    np.save(vecs, np.arange(20, dtype=np.float32).reshape(5, 4) + 1)
    ids = tmp_path / "vecs_ids.txt"
    ids.write_text("\n".join(IDS) + "\n", encoding="utf-8")
    return vecs, ids


@pytest.mark.parametrize("explicit", [True, False])
def test_a_repeated_id_names_the_ids_file_and_its_line(tmp_path: Path, explicit: bool) -> None:
    vecs, ids = _files(tmp_path)
    with pytest.raises(DuplicateIdError) as info:
        load_embeddings(vecs, ids_src=ids) if explicit else load_embeddings(vecs)  # (beside it: found by name)
    assert str(info.value).startswith(f"{ids}, line 4: id 'd1' appears twice (first on line 2")


def test_an_uploaded_pair_names_the_ids_of_the_uploaded_npy(tmp_path: Path) -> None:
    """The dashboard's upload: the two files' bytes, the .npy's name (what the Data page stores)."""
    vecs, ids = _files(tmp_path)
    ws = W.Workspace.open(tmp_path / "W")
    with pytest.raises(DuplicateIdError) as info:
        ws.add_embedding_run("vecs", vecs.read_bytes(), ids.read_bytes(), source_name="vecs.npy")
    assert str(info.value).startswith("ids of vecs.npy, line 4: id 'd1' appears twice (first on line 2")
    assert ws.runs().empty

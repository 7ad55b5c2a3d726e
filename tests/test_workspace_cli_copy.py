"""``evalcore workspace copy SRC DEST``: the writable copy of a workspace from the command line.

Before, a user with a workspace they could not write (a colleague's folder, a read-only mount) could copy it only
from Python (``Workspace.copy_to``) or the dashboard's "Copy this workspace to a new workspace": ``workspace``
had no ``copy`` (argparse: invalid choice). The command calls the same engine function; its errors are one line:
a destination that is not an empty folder, a source that is no workspace, a destination whose disk is full (the
disk full is real: a child whose file-size limit, ``RLIMIT_FSIZE``, stops its writes with ``EFBIG`` as a full or
over-quota disk stops them), after which nothing is left in the destination.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from readonly_reader import chmod_tree, dump, unprivileged
from test_workspace_readonly_wal import (
    _files,
    _killed_writer,
    _qrels,
    _run,
    _runs_in_the_file_alone,
)

from evalcore import Workspace
from evalcore.cli import main

ROOT = Path(__file__).resolve().parents[1]
resource = pytest.importorskip("resource")


def _workspace(path: Path, *, dim: int = 8) -> Workspace:
    """A workspace of two ranked runs, an embedding run (``dim`` numbers per item), settings and an evaluation."""
    ws = Workspace.open(path)
    ws.set_ground_truth(_qrels())
    ws.add_run("r1", _run(1), model="m", version="v1", step=1)
    ws.add_run("r2", _run(2))
    items = [f"q{i}" for i in range(12)] + [f"d{j}" for j in range(30)]
    ws.add_embedding_run("e", np.random.default_rng(3).normal(size=(len(items), dim)).astype(np.float32), items)
    ws.set_settings(k=(5, 10), metrics=("ndcg", "recall"))
    ws.evaluate()
    return ws


def _cli(args: list[str], *, privileged: bool = True, limit: int | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m evalcore ARGS`` in a child: without root's permission override unless ``privileged``; with a
    file-size limit of ``limit`` bytes (its writes past it fail with EFBIG: Python ignores SIGXFSZ)."""
    cmd = [sys.executable, "-m", "evalcore", *args]

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    return subprocess.run(cmd if privileged else unprivileged(cmd), cwd=ROOT, capture_output=True, text=True,
                          timeout=300, preexec_fn=limited if limit is not None else None,
                          env={**os.environ, **(env or {})})


def _same_workspace(copy: Workspace, ref: Workspace) -> None:
    """The copy holds what ``ref`` holds: the catalogue row for row, every stored file, the same evaluation."""
    assert not copy.read_only and copy.run_names() == ref.run_names()
    assert sorted(dump(copy).splitlines()) == sorted(dump(ref).splitlines())
    assert copy.verify() == []
    pd.testing.assert_frame_equal(copy.evaluate(record=False).table, ref.evaluate(record=False).table,
                                  check_exact=True)


def test_copy_gives_a_writable_workspace_holding_what_the_source_holds(tmp_path: Path, capsys) -> None:
    src = _workspace(tmp_path / "W")
    dest = tmp_path / "new" / "copy"  # its parent made too
    assert main(["workspace", "copy", str(src.path), str(dest)]) == 0
    assert capsys.readouterr().out.strip() == f"copied {src.path} into {dest}: 3 runs, writable"
    with Workspace.open(dest, create=False) as copy:
        _same_workspace(copy, src)
        copy.add_run("r3", _run(3))  # writable
    assert src.run_names() == ["r1", "r2", "e"]


def test_copy_of_a_read_only_folder_whose_wal_holds_changes_copies_them(tmp_path: Path) -> None:
    """A colleague's folder: a writer was killed after its last changes (r2 and e in catalogue.sqlite-wal only), and
    this user may not write the folder. The copy holds everything a writable open of those files shows."""
    folder = tmp_path / "W"
    _killed_writer(folder)
    assert (folder / "catalogue.sqlite-wal").stat().st_size > 0
    assert _runs_in_the_file_alone(folder) == ["r1"]  # r2 and e are in the WAL only
    shutil.copytree(folder, tmp_path / "writable")
    ref = Workspace.open(tmp_path / "writable")  # what a writable open of the same files shows
    assert ref.run_names() == ["r1", "r2", "e"]
    before = _files(folder)
    dest, tmp = tmp_path / "mine", tmp_path / "tmp"
    tmp.mkdir()
    chmod_tree(folder, writable=False)
    try:
        done = _cli(["workspace", "copy", str(folder), str(dest)], privileged=False, env={"TMPDIR": str(tmp)})
    finally:
        chmod_tree(folder, writable=True)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.strip() == f"copied {folder} into {dest}: 3 runs, writable"
    with Workspace.open(dest, create=False) as copy:
        _same_workspace(copy, ref)
    assert _files(folder) == before  # nothing written there
    assert list(tmp.iterdir()) == []  # the private copy of the catalogue, read meanwhile, is gone


@pytest.mark.parametrize("case", ["not empty", "a file", "under a file", "the source itself"])
def test_a_destination_that_is_no_new_folder_is_one_line_and_nothing_is_written(tmp_path: Path, capsys, case) -> None:
    src = _workspace(tmp_path / "W")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    (tmp_path / "file").write_text("x")
    dest, says = {"not empty": (tmp_path / "full", "is not empty: import or copy into a new folder"),
                  "a file": (tmp_path / "file", "exists and is not a folder"),
                  "under a file": (tmp_path / "file" / "ws", f"cannot be made: {tmp_path / 'file'} is a file, not a "
                                                             "folder"),
                  "the source itself": (src.path, "is not empty: import or copy into a new folder")}[case]
    before = _files(tmp_path)
    assert main(["workspace", "copy", str(src.path), str(dest)]) == 2
    assert capsys.readouterr().err == f"error: {dest}: {says}\n"
    assert _files(tmp_path) == before


@pytest.mark.parametrize("case", ["missing", "a folder of other files"])
def test_a_source_that_is_no_workspace_is_one_line(tmp_path: Path, capsys, case) -> None:
    src = tmp_path / "src"
    if case != "missing":
        src.mkdir()
        (src / "notes.txt").write_text("mine")
    assert main(["workspace", "copy", str(src), str(tmp_path / "dest")]) == 2
    assert capsys.readouterr().err == f"error: {src}: no workspace here (no catalogue.sqlite)\n"
    assert not (tmp_path / "dest").exists()


@pytest.mark.parametrize("where, limit", [("a stored file", 160_000), ("the catalogue", 16_384)])
def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path: Path, where: str, limit: int) -> None:
    """The copy stops where its disk takes no more: writing an artifact (the embeddings, 200 KB, above the limit;
    the catalogue's copy, below it, was written), or the catalogue's copy itself (SQLite's "disk I/O error", as on
    a disk over its quota). Either way one line naming the destination, and nothing is left there."""
    src = _workspace(tmp_path / "W", dim=1200)
    sizes = {p.suffix: p.stat().st_size for p in (src.path / "objects").rglob("*.*")}
    catalogue = tmp_path / "probe.sqlite"
    src.catalogue.snapshot(catalogue)
    assert catalogue.stat().st_size < 160_000 < sizes[".npy"] and catalogue.stat().st_size > 16_384
    before = _files(src.path)
    dest = tmp_path / "new" / "copy"
    done = _cli(["workspace", "copy", str(src.path), str(dest)], limit=limit)
    reason = ("no space left on its disk (or the disk quota is used up)" if where == "a stored file" else
              "SQLite could not write the copy of the catalogue (disk I/O error: is its disk full or over its quota?)")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"error: {dest}: cannot copy the workspace here: {reason}; nothing was left here and the "
                           "workspace copied from is unchanged; free some space and copy again\n")
    assert not (tmp_path / "new").exists()  # the folders it made are gone with what it wrote
    assert _files(src.path) == before and src.verify() == []
    assert _cli(["workspace", "copy", str(src.path), str(dest)]).returncode == 0  # with room, the copy is made
    with Workspace.open(dest, create=False) as copy:
        _same_workspace(copy, src)


def test_copy_is_listed_in_the_help() -> None:
    done = _cli(["workspace", "--help"])
    assert done.returncode == 0 and "copy" in done.stdout
    done = _cli(["workspace", "copy", "--help"])
    assert done.returncode == 0 and "SRC" in done.stdout and "DEST" in done.stdout

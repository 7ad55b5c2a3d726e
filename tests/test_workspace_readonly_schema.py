"""A workspace written by an older evalcore, in a folder this user cannot write, reads as the upgraded workspace.

Before, opening it said "this catalogue has schema version 1 and needs migrating to 2; open it once for writing",
which its reader cannot do (a colleague's shared folder, a read-only mount, an unpacked archive), and every way to a
writable copy opened it first (``copy_to``, ``evalcore workspace export``, the dashboard's copy), so none was left:
even ``cp -r`` keeps the files read-only. Its private copy of the catalogue (:mod:`evalcore.workspace.readcopy`) is
now migrated as a writable open would migrate the folder: the reader sees exactly what that open shows, and its
copies are of the current schema. Without a private copy (no writable temporary folder), the error says what to do.

The readers run without root's permission override (``tests/readonly_reader.py``), so the folder's mode bits apply.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from readonly_reader import chmod_tree, dump, unprivileged
from test_workspace_readonly_wal import QUERIES, Reader, _files, _qrels, _run

from evalcore import Workspace
from evalcore.errors import WorkspaceError
from evalcore.workspace.store import MIGRATIONS, SCHEMA_VERSION, upgrade_copy

ROOT = Path(__file__).resolve().parents[1]

#: The side files table as schema version 1 had it (version 2 added the role 'queries': tests/test_workspace_view.py)
_SIDE_FILES_V1 = """
CREATE TABLE side_files_v1 (
    role TEXT PRIMARY KEY CHECK (role IN ('domains', 'metadata')), name TEXT, source_sha256 TEXT,
    artifact TEXT NOT NULL REFERENCES artifacts (sha256), created_at TEXT NOT NULL);
INSERT INTO side_files_v1 SELECT role, name, source_sha256, artifact, created_at FROM side_files;
DROP TABLE side_files;
ALTER TABLE side_files_v1 RENAME TO side_files;
PRAGMA user_version = 1;
"""


def _version(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def _older_workspace(tmp_path: Path) -> Path:
    """A workspace as evalcore wrote it at schema version 1 (runs, a domain mapping), whose last change (a run
    renamed by that evalcore's writer) still sits in the WAL: the folder was copied while the writer had it open."""
    assert SCHEMA_VERSION == 2 and len(MIGRATIONS) == 2  # (a new migration: say here what its older schema was)
    live = tmp_path / "live"
    with Workspace.open(live) as ws:
        ws.set_ground_truth(_qrels())
        ws.add_run("r1", _run(1))
        ws.add_run("r2", _run(2), model="m", version="v2")
        ws.set_domains({q: ("a" if i % 2 else "b") for i, q in enumerate(QUERIES)}, name="domains.csv")
    conn = sqlite3.connect(live / "catalogue.sqlite", isolation_level=None)
    conn.executescript("BEGIN;" + _SIDE_FILES_V1 + "COMMIT;")
    conn.close()
    writer = sqlite3.connect(live / "catalogue.sqlite", isolation_level=None)
    writer.execute("UPDATE runs SET name = 'r2-renamed' WHERE name = 'r2'")  # in the WAL while it stays open
    folder = tmp_path / "older"
    shutil.copytree(live, folder, ignore=shutil.ignore_patterns("*-shm"))
    writer.close()
    assert (folder / "catalogue.sqlite-wal").stat().st_size > 0 and _version(folder / "catalogue.sqlite") == 1
    return folder


def test_an_older_workspace_in_a_read_only_folder_reads_upgraded_and_copies_current(tmp_path: Path):
    folder = _older_workspace(tmp_path)
    shutil.copytree(folder, tmp_path / "writable")  # what a writable open of the same files shows: migrated
    with Workspace.open(tmp_path / "writable") as ref:
        expected = {"read_only": True, "runs": ["r1", "r2-renamed"], "generation": ref.generation, "dump": dump(ref)}
        assert ref.run_names() == expected["runs"] and _version(ref.path / "catalogue.sqlite") == SCHEMA_VERSION
        table = ref.evaluate(record=False).table
    files = _files(folder)
    chmod_tree(folder, writable=False)
    reader = Reader(folder, tmp_path / "out", tmp_path / "tmp")
    try:
        assert reader.ask("api") == {"held": expected, "fresh": expected}  # was: "... open it once for writing"
        assert reader.ask("evaluate") == {}
        import pandas as pd

        pd.testing.assert_frame_equal(pd.read_pickle(tmp_path / "out" / "table.pkl"), table, check_exact=True)
        assert reader.ask("copy") == {"runs": expected["runs"]}
        assert reader.ask("app") == {"exception": [], "runs": expected["runs"]}  # the dashboard opens it
        assert reader.stop() == 0
    finally:
        chmod_tree(folder, writable=True)
    assert _files(folder) == files and _version(folder / "catalogue.sqlite") == 1  # the folder was not written
    copy = tmp_path / "out" / "copy"  # the reader's copy: current, writable, a query texts file fits in it
    assert _version(copy / "catalogue.sqlite") == SCHEMA_VERSION
    with Workspace.open(copy) as ws:
        assert not ws.read_only and ws.run_names() == expected["runs"]
        ws.set_query_texts({"q1": "a text"}, name="queries.tsv")
        assert set(ws.side_files()) == {"domains", "queries"}


def test_without_a_private_copy_an_older_read_only_folder_says_what_to_do(tmp_path: Path):
    """No temporary folder it can write, a merged catalogue (read in place): one line naming the catalogue, saying
    to set TMPDIR or copy the folder writable; a folder it could write, opened read_only=True: open it for writing."""
    folder = _older_workspace(tmp_path)
    last = sqlite3.connect(folder / "catalogue.sqlite")  # its last connection: the WAL merged (as root may)
    last.execute("SELECT count(*) FROM runs").fetchone()
    last.close()
    assert not (folder / "catalogue.sqlite-wal").exists()
    nowhere = tmp_path / "no-temp"
    nowhere.mkdir()
    chmod_tree(folder, writable=False)
    chmod_tree(nowhere, writable=False)
    copied = tmp_path / "copied"
    script = textwrap.dedent(f"""
        import subprocess, tempfile
        from evalcore import Workspace
        tempfile.tempdir = {str(nowhere)!r}
        try:
            Workspace.open({str(folder)!r})
        except Exception as e:
            print(f"{{type(e).__name__}}: {{e}}")
        # what the message says: copy the folder to one this user can write, open the copy
        subprocess.run(["cp", "-r", "--no-preserve=mode", {str(folder)!r}, {str(copied)!r}], check=True)
        with Workspace.open({str(copied)!r}) as ws:
            print(ws.read_only, ws.run_names())
        """)
    try:
        done = subprocess.run(unprivileged([sys.executable, "-c", script]), cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
    finally:
        chmod_tree(folder, writable=True)
        chmod_tree(nowhere, writable=True)
    assert done.returncode == 0, done.stderr
    line, opened = done.stdout.strip().split("\n")
    assert opened == "False ['r1', 'r2-renamed']" and _version(copied / "catalogue.sqlite") == SCHEMA_VERSION
    assert line.startswith(f"WorkspaceError: {folder / 'catalogue.sqlite'}: "), line
    assert "schema version 1" in line and "set TMPDIR" in line and "cp -r --no-preserve=mode" in line
    assert "open it once for writing" not in line
    with pytest.raises(WorkspaceError, match=r"open it once for writing \(without read_only\)"):
        Workspace.open(folder, read_only=True)  # this process may write the folder: that does it
    assert _version(folder / "catalogue.sqlite") == 1


def test_a_private_copy_that_cannot_be_upgraded_is_an_os_error_and_a_damaged_one_names_the_catalogue(tmp_path: Path):
    """A copy that cannot be written (its disk full, its folder gone) is what no copy at all is to the catalogue (an
    OSError: read in place, or the TMPDIR message), not a damaged catalogue; a damaged one names the workspace's."""
    source = tmp_path / "W" / "catalogue.sqlite"
    with pytest.raises(OSError, match="cannot upgrade the private copy of the catalogue") as e:
        upgrade_copy(tmp_path / "gone" / "catalogue.sqlite", source)
    assert not isinstance(e.value, WorkspaceError)
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all " * 200)
    with pytest.raises(WorkspaceError, match="the catalogue is damaged or not a workspace") as e:
        upgrade_copy(bad, source)
    assert str(source) in str(e.value)

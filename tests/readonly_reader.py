"""A reader of a workspace in a folder it cannot write, for ``tests/test_workspace_readonly_wal.py``.

Run as ``python tests/readonly_reader.py FOLDER OUT`` in a child without root's permission override
(:func:`unprivileged`), so that the folder's mode bits apply as for any other user. It reads one
command a line on stdin and answers one JSON line on stdout:

* ``api``: the workspace as seen by one Workspace kept open across commands (``held``) and by a fresh
  ``Workspace.open`` (``fresh``): read-only flag, runs, change counter, the catalogue's whole SQL dump;
* ``evaluate``: pickles the held workspace's ``evaluate(record=False).table`` to ``OUT/table.pkl``;
* ``copy``: ``copy_to(OUT/copy)`` of the held workspace, and the copy's runs;
* ``app``: the dashboard (``app.py`` under ``AppTest``, ``EVALCORE_WORKSPACE`` = FOLDER), one run: its runs;
* ``copies``: the private catalogue copies of this process that exist (:mod:`evalcore.workspace.readcopy`);
* ``cycle N``: opens, reads and closes the workspace N times, also dropping some unclosed, then ``copies``;
* ``close``: closes and drops the held workspace, then ``copies``.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def unprivileged(cmd: list[str]) -> list[str]:
    """``cmd`` run without root's permission override (``setpriv``) when this process is root."""
    import pytest

    if os.geteuid() != 0:
        return cmd
    setpriv = shutil.which("setpriv")
    if setpriv is None:  # pragma: no cover - Debian's util-linux has it
        pytest.skip("running as root without setpriv: mode bits cannot be made to apply")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner", *cmd]


def chmod_tree(path: Path, *, writable: bool) -> None:
    """Take away (or give back) the write permission of ``path`` and everything in it."""
    for p in [path, *path.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def dump(ws) -> str:  # noqa: ANN001
    """The catalogue's whole content as SQL text."""
    return "\n".join(ws.catalogue.connection().iterdump())


def copies() -> list[str]:
    from evalcore.workspace.readcopy import PREFIX

    return sorted(p.name for p in Path(tempfile.gettempdir()).glob(PREFIX + "*"))


def main(folder: str, out: str) -> None:
    sys.path.insert(0, str(ROOT))
    from evalcore import Workspace

    held = None
    app = None

    def view(ws) -> dict:  # noqa: ANN001
        return {"read_only": ws.read_only, "runs": ws.run_names(), "generation": ws.generation, "dump": dump(ws)}

    for line in sys.stdin:
        command, *args = line.split()
        try:
            if command == "api":
                held = held or Workspace.open(folder)
                with Workspace.open(folder) as fresh:
                    answer = {"held": view(held), "fresh": view(fresh)}
            elif command == "evaluate":
                held = held or Workspace.open(folder)
                held.evaluate(record=False).table.to_pickle(Path(out) / "table.pkl")
                answer = {}
            elif command == "copy":
                held = held or Workspace.open(folder)
                answer = {"runs": held.copy_to(Path(out) / "copy").run_names()}
            elif command == "app":
                if app is None:
                    from streamlit.testing.v1 import AppTest

                    os.environ["EVALCORE_WORKSPACE"] = folder
                    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
                app.run()
                answer = {"exception": [str(e.value) for e in app.exception],
                          "runs": [r.name for r in app.session_state["ws"].runs]}
            elif command == "cycle":
                kept = []
                for i in range(int(args[0])):
                    ws = Workspace.open(folder)
                    ws.run_names()
                    if i % 3:
                        ws.close()
                    else:
                        kept.append(ws)  # dropped without close
                    if len(kept) > 2:
                        kept.clear()
                kept.clear()
                gc.collect()
                answer = {"copies": copies()}
            elif command == "copies":
                answer = {"copies": copies()}
            elif command == "close":
                held.close()
                held = None
                gc.collect()
                answer = {"copies": copies()}
            else:
                raise ValueError(f"unknown command {command!r}")
        except Exception as e:  # the test reads the message
            answer = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

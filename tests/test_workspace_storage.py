"""A workspace on a full disk: every change ends with one clear error naming the workspace, nothing
stored changes, and the next change after space is freed works.

The full disk is real: a child process whose file-size limit (``RLIMIT_FSIZE``, the kernel's
``EFBIG``) stops its writes, as a full or over-quota disk stops them (``ENOSPC``/``EDQUOT``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from evalcore import Qrels, Run, Workspace
from evalcore.cli import main
from evalcore.errors import EvalcoreError

ROOT = Path(__file__).resolve().parents[1]
resource = pytest.importorskip("resource")

QIDS = [f"q{i}" for i in range(150)]
DOCS = [f"d{j}" for j in range(400)]


def _run(seed: int, name: str) -> Run:
    rng = np.random.default_rng(seed)
    return Run.from_dict({q: {d: float(rng.random()) for d in rng.choice(DOCS, 40, replace=False)} for q in QIDS},
                         name=name)


def _workspace(path: Path) -> Workspace:
    rng = np.random.default_rng(0)
    ws = Workspace.open(path)
    ws.set_ground_truth(Qrels.from_dict({q: {d: 1 for d in rng.choice(DOCS, 3, replace=False)} for q in QIDS}))
    ws.add_run("a", _run(1, "a"), model="m", step=1)
    ws.evaluate(metrics=["ndcg"], k=[10])
    return ws


_CHILD = textwrap.dedent("""
    import json, resource, signal, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    from evalcore import Run, Workspace
    ws = Workspace.open(sys.argv[2])
    rng = np.random.default_rng(5)
    docs = [f"d{j}" for j in range(400)]
    run = Run.from_dict({f"q{i}": {d: float(rng.random()) for d in rng.choice(docs, 40, replace=False)}
                         for i in range(150)}, name="b")
    vectors = rng.normal(size=(400, 32)).astype(np.float32)
    items = [f"q{i}" for i in range(150)] + docs[150:]  # an item-to-item run: the queries among its items
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    out = {}
    for what, call in [("add_run", lambda: ws.add_run("b", run, model="m", step=2)),
                       ("add_embedding_run", lambda: ws.add_embedding_run("e", vectors, items, model="m", step=3)),
                       ("evaluate", lambda: ws.evaluate(metrics=["ndcg", "recall"], k=[5]))]:
        try:
            call()
            out[what] = ["no error", ""]
        except Exception as e:
            out[what] = [type(e).__name__, str(e)]
    print(json.dumps(out))
""")


def test_a_full_disk_is_one_clear_error_and_changes_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "W")
    runs, evaluations = ws.run_names(), len(ws.evaluations())
    child = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), str(ws.path)], capture_output=True, text=True,
                           timeout=300)
    assert child.returncode == 0, child.stderr
    got = json.loads(child.stdout.strip().splitlines()[-1])
    for what, (kind, message) in got.items():
        assert kind == "WorkspaceStorageError", (what, kind, message)
        assert message.startswith(f"{ws.path}: cannot write to the workspace: no space left on its disk"), message
        assert "nothing was changed" in message and "\n" not in message
    again = Workspace.open(ws.path)
    assert again.run_names() == runs and len(again.evaluations()) == evaluations
    assert again.verify() == []
    again.add_run("b", _run(5, "b"))  # space again: the next change works
    assert again.run_names() == [*runs, "b"]


def test_storage_errors_are_evalcore_errors_and_os_errors(tmp_path: Path) -> None:
    import errno

    from evalcore.errors import WorkspaceStorageError
    from evalcore.workspace.writelock import storage_error

    for code, words in [(errno.ENOSPC, "no space left"), (errno.EACCES, "read-only for this user"),
                        (errno.EROFS, "mounted read-only")]:
        e = storage_error(OSError(code, "x"), tmp_path)
        assert isinstance(e, WorkspaceStorageError) and isinstance(e, EvalcoreError) and isinstance(e, OSError)
        assert words in str(e) and str(tmp_path) in str(e)
    # pyarrow gives the errno only in its text
    assert storage_error(OSError("[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device"),
                         tmp_path) is not None
    assert storage_error(OSError(errno.EIO, "x"), tmp_path) is None


def test_a_read_only_folders_error_names_the_copy_command_with_its_folder(tmp_path: Path) -> None:
    """Before, the hint named only the Python method (``copy_to``); a command-line user now reads the command
    that makes a writable copy, with the folder to give it (quoted for the shell), and the dashboard's action."""
    import errno
    import shlex

    from evalcore.workspace.writelock import storage_error

    folder = tmp_path / "my workspace"
    for code in (errno.EACCES, errno.EROFS):
        text = str(storage_error(OSError(code, "x"), folder))
        assert f"evalcore workspace copy {shlex.quote(str(folder))} DEST" in text and "copy_to" in text
        assert "dashboard" in text and "\n" not in text
    assert "workspace copy" not in str(storage_error(OSError(errno.ENOSPC, "x"), folder))  # a full disk: no copy


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc (a folder where no file can be created)")
def test_cli_export_that_cannot_create_its_file_names_the_file_asked_for(tmp_path: Path, capsys) -> None:
    ws = _workspace(tmp_path / "W")
    target = Path("/proc") / "evalcore-export-test.zip"  # /proc takes no new file, whoever asks
    assert main(["workspace", "export", "--workspace", str(ws.path), "--out", str(target)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"error: {target}: No such file or directory"  # was the temporary name, {target}.<hex>.part


_HOLDER = textwrap.dedent("""
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)            # as a live export holds its .part
    open(sys.argv[2], "w").close()            # tell the test the lock is held
    sys.stdin.read()                          # until the test closes our stdin
""")


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_an_export_removes_what_killed_exports_of_the_same_file_left_but_not_a_live_one(tmp_path: Path) -> None:
    import os
    import time

    ws = _workspace(tmp_path / "W")
    out = tmp_path / "ws.zip"
    killed = tmp_path / f"ws.zip.{'a' * 32}.part"  # a killed export's leftover: nobody holds its lock
    live = tmp_path / f"ws.zip.{'b' * 32}.part"  # another export still writing
    other = tmp_path / f"other.zip.{'c' * 32}.part"  # an export of another file
    for p in (killed, live, other):
        p.write_bytes(b"PK partial")
        os.utime(p, (1_000_000_000, 1_000_000_000))  # long ago
    ready = tmp_path / "held"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(live), str(ready)], stdin=subprocess.PIPE)
    try:
        for _ in range(6000):  # bounded wait for the file the child writes once it holds the lock
            if ready.exists() or holder.poll() is not None:
                break
            time.sleep(0.01)
        assert ready.exists(), "the child did not take the lock"
        ws.export(out)
        assert out.is_file() and not killed.exists()
        assert live.exists() and other.exists()
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


def test_the_same_judgments_from_a_file_of_another_name_do_not_make_evaluations_stale(tmp_path: Path, capsys) -> None:
    """A qrels file copied under another name (or the command run with it) recorded a second, identical
    ground truth: every earlier evaluation then read as stale ('ground truth replaced') and the list of
    earlier ground truths grew by a duplicate. Now the active one is renamed; other judgments still replace it."""
    import warnings

    from evalcore.io.trec import write_trec_qrels, write_trec_run

    ws = _workspace(tmp_path / "W")
    qrels = ws.load_qrels()
    first, copy = tmp_path / "qrels.txt", tmp_path / "qrels-copy.txt"
    write_trec_qrels(qrels, first)
    copy.write_bytes(first.read_bytes())
    ws.set_ground_truth(first)
    ws.evaluate(metrics=["ndcg"], k=[10])
    n_truths = len(ws.ground_truths())
    write_trec_run(_run(7, "b"), tmp_path / "b.trec")
    assert main(["evaluate", "--qrels", str(copy), "--run", f"b={tmp_path / 'b.trec'}", "--metrics", "ndcg",
                 "--k", "10", "--workspace", str(ws.path), "--out", str(tmp_path / "out")]) == 0, capsys.readouterr()
    assert len(ws.ground_truths()) == n_truths and ws.ground_truth()["name"] == "qrels-copy.txt"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ws.load_evaluation(int(ws.evaluations()["id"].iloc[0]))
    assert not any(ws.evaluations()["stale"])
    other = Qrels.from_dict({"q0": {"d1": 1}})
    ws.set_ground_truth(other, name="qrels-copy.txt")  # other judgments under the same name: replaced
    assert len(ws.ground_truths()) == n_truths + 1

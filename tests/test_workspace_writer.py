"""One writer at a time: the writer lock, ``evaluate --workspace`` checking and writing under it, the
settings it records, and a damaged cached ranking computed again."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from evalcore import Qrels, Run, Workspace
from evalcore.cli import main
from evalcore.errors import EvalcoreWarning
from evalcore.io.trec import write_trec_qrels, write_trec_run
from evalcore.workspace.writelock import LOCK_NAME

ROOT = Path(__file__).resolve().parents[1]


def _lock_is_free(folder: Path) -> bool:
    """Probe the writer lock from an open file of its own (flock: another holder conflicts, even in this process)."""
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # (closing releases a lock taken here)
    return True


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(3)
    qids, docs = [f"q{i}" for i in range(20)], [f"d{j}" for j in range(40)]
    qrels = Qrels.from_dict({q: {d: int(rng.integers(1, 3)) for d in rng.choice(docs, 5, replace=False)} for q in qids})
    out = {"qrels": tmp_path / "qrels.txt"}
    write_trec_qrels(qrels, out["qrels"])
    for name in ("b", "c"):
        out[name] = tmp_path / f"{name}.trec"
        write_trec_run(Run.from_dict({q: {d: float(rng.integers(0, 9)) for d in rng.choice(docs, 15, replace=False)}
                                      for q in qids}, name=name), out[name])
    return out


def _record(files: dict[str, Path], ws: Path, name: str, path: Path, *extra: str) -> int:
    return main(["evaluate", "--qrels", str(files["qrels"]), "--run", f"{name}={path}", "--workspace", str(ws),
                 *extra])


def test_exclusive_holds_the_lock_and_every_change_takes_it(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "W")
    assert _lock_is_free(ws.path)
    with ws.exclusive():
        assert not _lock_is_free(ws.path)
        ws.set_settings(k=(3,))  # this thread may change the workspace meanwhile (re-entrant)
        assert not _lock_is_free(ws.path)
    assert _lock_is_free(ws.path)
    seen = []
    ws.catalogue.write(lambda conn: seen.append(_lock_is_free(ws.path)), bump=False)
    assert seen == [False] and _lock_is_free(ws.path)


def test_a_writer_waits_for_the_process_holding_the_lock(tmp_path: Path) -> None:
    """A child holds ``exclusive()``; a change here with no patience (deadline 0) is refused with the
    holder's pid, and goes through once the child let go."""
    from evalcore.errors import WorkspaceError
    from evalcore.workspace.writelock import writer_lock

    ws = Workspace.open(tmp_path / "W")
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from evalcore import Workspace
        ws = Workspace.open({str(ws.path)!r})
        with ws.exclusive():
            print("holding", flush=True)
            sys.stdin.readline()
        """)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "holding"
        assert not _lock_is_free(ws.path)
        with pytest.raises(WorkspaceError, match=rf"another process \(pid {child.pid}\) has been changing"):
            with writer_lock(ws.path, deadline=0.0):
                pass  # pragma: no cover - never reached
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(timeout=120) == 0
    finally:
        if child.poll() is None:  # pragma: no cover - only after a failure above
            child.kill()
    ws.set_settings(k=(5,))
    assert ws.settings().k == (5,)


def test_a_run_recorded_by_another_writer_meanwhile_is_never_replaced_silently(files, tmp_path: Path,
                                                                             monkeypatch) -> None:
    """Between the command's check and its writes another process tries to add a run of the same name with
    other content: it cannot (the command holds the writer lock), so exactly one content is stored, and the
    party that lost says so (before: both exited 0 and one silently replaced the other)."""
    from evalcore.cli import workspace as cli_ws

    ws_dir = tmp_path / "W"
    child_code: list[int] = []
    child_err: list[str] = []
    real = cli_ws._check_existing

    def check_then_race(ws, args, **kw):
        out = real(ws, args, **kw)
        script = textwrap.dedent(f"""
            import evalcore.workspace.store as store
            from evalcore import Workspace, load_run
            store.BUSY_DEADLINE = 0.0  # no patience: a held lock is an error at once
            ws = Workspace.open({str(ws_dir)!r})
            ws.set_ground_truth({str(files['qrels'])!r})
            ws.add_run("same", load_run({str(files['c'])!r}))
            """)
        done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
        child_code.append(done.returncode)
        child_err.append(done.stderr)
        return out

    monkeypatch.setattr(cli_ws, "_check_existing", check_then_race)
    code = _record(files, ws_dir, "same", files["b"])
    assert not (code == 0 and child_code == [0])  # never both "recorded"
    assert code == 0 and child_code[0] != 0 and "has been changing this workspace" in child_err[0]
    from evalcore import load_run

    assert Workspace.open(ws_dir).load_run("same").to_dict() == load_run(files["b"]).to_dict()


def test_the_command_does_not_replace_a_run_added_between_its_check_and_its_write(files, tmp_path: Path,
                                                                                 monkeypatch) -> None:
    """Without the lock (a platform without flock), the store's own check refuses: an error, no overwrite."""
    import contextlib

    from evalcore import load_run
    from evalcore.cli import workspace as cli_ws
    from evalcore.workspace.core import WorkspaceCore

    ws_dir = tmp_path / "W"
    real = cli_ws._check_existing
    monkeypatch.setattr(WorkspaceCore, "exclusive", lambda self: contextlib.nullcontext())

    def check_then_add(ws, args, **kw):
        out = real(ws, args, **kw)
        other = Workspace.open(ws_dir)
        other.set_ground_truth(files["qrels"])
        other.add_run("same", load_run(files["c"]))
        return out

    monkeypatch.setattr(cli_ws, "_check_existing", check_then_add)
    assert _record(files, ws_dir, "same", files["b"]) == 2
    assert Workspace.open(ws_dir).load_run("same").to_dict() == load_run(files["c"]).to_dict()


def test_settings_chosen_elsewhere_are_not_reset_silently(files, tmp_path: Path, capsys) -> None:
    ws_dir = tmp_path / "W"
    ws = Workspace.open(ws_dir)
    ws.set_ground_truth(files["qrels"])
    ws.set_settings(k=(1, 3, 5), metrics=("ndcg", "map"), rel_threshold=2, ties="docid_asc")
    before = ws.settings()
    assert _record(files, ws_dir, "b", files["b"]) == 2
    err = capsys.readouterr().err
    assert "nothing recorded" in err and "its settings are k 1 3 5 (this command: 10)" in err
    assert "rel_threshold 2 (this command: 1)" in err and "ties docid_asc (this command: trec)" in err
    flags = "--k 1 3 5 --metrics ndcg map --ties docid_asc --rel-threshold 2"
    assert f"give the workspace's settings: {flags}" in err
    assert Workspace.open(ws_dir).settings() == before and Workspace.open(ws_dir).run_names() == []
    # the flags the message gives are enough
    assert _record(files, ws_dir, "b", files["b"], *flags.split()) == 0
    assert Workspace.open(ws_dir).settings() == before and Workspace.open(ws_dir).run_names() == ["b"]
    # --replace replaces them, and says nothing
    assert _record(files, ws_dir, "c", files["c"], "--replace") == 0
    after = Workspace.open(ws_dir).settings()
    assert (after.k, after.rel_threshold, after.ties) == ((10,), 1, "trec")


def test_a_fresh_workspace_takes_the_command_settings_and_judged_only_is_among_them(files, tmp_path: Path) -> None:
    ws_dir = tmp_path / "W"
    assert _record(files, ws_dir, "b", files["b"], "-J", "--k", "5", "--out", str(tmp_path / "o")) == 0
    ws = Workspace.open(ws_dir)
    assert ws.settings().judged_only is True and ws.settings().k == (5,)
    import pandas as pd

    cli = pd.read_csv(tmp_path / "o" / "per_query.csv", dtype={"query_id": str})
    api = ws.evaluate(record=False).table
    for metric in ("ndcg", "map"):
        a = cli[(cli["metric"] == metric) & (cli["k"] == 5)].set_index("query_id")["value"].sort_index()
        rows = api[(api["metric"].astype(str) == metric) & (api["k"] == 5)]
        b = rows.set_index(rows["query_id"].astype(str))["value"].sort_index()
        np.testing.assert_allclose(b.to_numpy(), a.to_numpy(), rtol=1e-12, atol=0)
    # the same command again: same settings, nothing to refuse
    assert _record(files, ws_dir, "c", files["c"], "-J", "--k", "5") == 0


def test_a_damaged_cached_ranking_is_computed_again(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    ids = [f"d{i}" for i in range(60)]
    ws = Workspace.open(tmp_path / "W")
    ws.set_ground_truth(Qrels.from_dict({d: {ids[(i + 1) % 60]: 1} for i, d in enumerate(ids[:20])}))
    ws.add_embedding_run("emb", rng.normal(size=(60, 8)).astype(np.float32), ids)
    first = ws.evaluate(record=False).table
    (key, sha), = ws.catalogue.read(lambda c: c.execute("SELECT key, artifact FROM derived").fetchall())
    path = ws.objects.path(sha, "parquet")
    path.write_bytes(path.read_bytes()[:100])
    from evalcore.workspace.artifacts import clear_cache

    clear_cache()
    again_ws = Workspace.open(tmp_path / "W")
    with pytest.warns(EvalcoreWarning, match="cached ranking, computed again"):
        again = again_ws.evaluate(record=False).table
    np.testing.assert_array_equal(again["value"].to_numpy(), first["value"].to_numpy())
    assert again_ws.verify() == []  # the artifact was written again


def test_the_module_s_busy_deadline_is_read_when_a_change_waits(tmp_path: Path, monkeypatch) -> None:
    """``evalcore.workspace.store.BUSY_DEADLINE`` is the wait of every change that gives none of its own, read when
    the change waits: a script (or a test) that sets it to 0 gets no patience. Before, the new ``wait=`` keywords
    took it as a default argument, frozen at import: setting it changed nothing, and the race test above waited
    its full 120 s for the lock instead of failing at once."""
    import evalcore.workspace.store as store
    from evalcore.workspace import writelock

    seen: list[float] = []
    real = writelock._PathLock.acquire

    def spy(self, deadline: float) -> None:
        seen.append(deadline)
        return real(self, deadline)

    monkeypatch.setattr(writelock._PathLock, "acquire", spy)
    monkeypatch.setattr(store, "BUSY_DEADLINE", 0.25)
    ws = Workspace.open(tmp_path / "W")
    ws.add_run("r", Run.from_records(["q1"], ["d1"], [1.0]))
    with ws.exclusive():
        pass
    assert seen and set(seen) == {0.25}, seen

"""The Dask backend on a LocalCluster of 2 worker processes: the same top-k, bit for bit, as one process.

One cluster for the module (``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``);
the shard files are written under pytest's tmp_path, which the workers read themselves.
"""

from __future__ import annotations

import os
import signal
import sys
import uuid
import warnings

import numpy as np
import pytest
from retrieval_support import assert_same, brute_topk, tie_heavy, write_shards

from evalcore.cli import main as cli_main
from evalcore.errors import EvalcoreWarning, NonFiniteValueError, OptionError, ShapeMismatchError
from evalcore.io import open_shards
from evalcore.io.shards import single_shard
from evalcore.retrieval import exact_topk
from evalcore.retrieval.dask_backend import DaskBackend

distributed = pytest.importorskip("distributed", reason="the Dask backend's tests need dask[distributed]")

pytestmark = pytest.mark.dask


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Tie-heavy vectors in uneven shards (.npy and .npz) and the same data as one array."""
    tmp = tmp_path_factory.mktemp("dask")
    rng = np.random.default_rng(11)
    c, ids = tie_heavy(rng, 2500)
    c[1900:1950] = c[:50]  # exact copies in another shard: ties across shards
    write_shards(tmp / "s", c, ids, [0, 1, 6, 900, 1000, 1800, 2500], kinds=["npy", "npz", "npy", "npz_c"])
    return tmp, c, ids


def quiet_topk(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        return exact_topk(*args, **kwargs)


@pytest.mark.parametrize("tasks_per_thread", [1, 3])
def test_dask_search_is_the_single_process_search(client, corpus, tasks_per_thread):
    tmp, c, ids = corpus
    shards = open_shards(tmp / "s")
    rng = np.random.default_rng(12)
    q = np.vstack([c[:40], c[1900:1910], rng.integers(-2, 3, size=(20, 6))]).astype(np.float32)
    q[7] = 0  # an all-zero query
    # item-to-item across shards: queries are corpus items (their own rows in various shards), some absent
    qids = np.concatenate([ids[:40], ids[1900:1910], [f"absent{i}" for i in range(20)]])
    backend = DaskBackend(client, tasks_per_thread=tasks_per_thread)  # 3: shards cut into pieces as well
    for k, excl in ((30, True), (8, False)):
        got = quiet_topk(q, shards, k, query_ids=qids, exclude_self=excl, backend=backend, block_bytes=2**16)
        one = quiet_topk(q, c, k, corpus_ids=ids, query_ids=qids, exclude_self=excl)
        assert_same(got, (one.indices, one.scores))
        assert_same(got, brute_topk(q, c, k, ids, qids, exclude_self=excl))
    # the client itself as the backend keyword; the corpus as its own queries
    got = quiet_topk(shards, shards, 3, query_ids=ids, exclude_self=True, backend=client)
    one = quiet_topk(c, c, 3, corpus_ids=ids, query_ids=ids, exclude_self=True)  # checked against brute_topk
    assert_same(got, (one.indices, one.scores))                                  # in test_retrieval


def test_one_file_is_searched_in_pieces_by_the_workers(client, tmp_path):
    rng = np.random.default_rng(13)
    c, ids = tie_heavy(rng, 700)
    np.save(tmp_path / "all.npy", c)
    (tmp_path / "all_ids.txt").write_text("\n".join(ids) + "\n")
    one = single_shard(tmp_path / "all.npy", tmp_path / "all_ids.txt")
    seen = []
    got = quiet_topk(c[:25], one, 12, progress=lambda done, total: seen.append((done, total)),
                     backend=DaskBackend(client, tasks_per_thread=4))
    assert_same(got, brute_topk(c[:25], c, 12, ids))
    assert seen == [(i, 8) for i in range(1, 9)]  # 2 threads x 4: eight pieces of one shard


def test_an_array_corpus_is_refused(client):
    with pytest.raises(OptionError, match="shard files that its workers read"):
        exact_topk(np.ones((1, 2)), np.ones((3, 2)), 1, corpus_ids=list("abc"), backend=client)


def test_a_nan_row_names_its_shard_through_the_cluster(client, tmp_path):
    c = np.ones((30, 4), np.float32)
    c[17, 0] = np.inf
    shards = open_shards(tmp_path / "s" if write_shards(tmp_path / "s", c, [f"x{i}" for i in range(30)],
                                                        [0, 10, 30]) else None)
    with pytest.raises(NonFiniteValueError, match=r"part-1\.npy: .*'x17'"):
        exact_topk(np.ones((2, 4)), shards, 3, backend=client)


class GatedShards:
    """A ShardSet whose shards other than 0 wait for a distributed Event before they are read.

    A piece that reaches the gate says so first (shard and worker address, on a distributed
    Queue); every opening is logged (one line per shard opened) in a file beside the shards."""

    def __init__(self, shards, gate: str, started: str, log: str) -> None:
        self.shards, self.gate, self.started, self.log = shards, gate, started, log
        self.shape, self.shard_rows = shards.shape, shards.shard_rows

    def open_shard(self, i):
        if i != 0:
            distributed.Queue(self.started).put((i, distributed.get_worker().address))
            if not distributed.Event(self.gate).wait(timeout=60):
                raise RuntimeError("the gate of the kill test never opened")
        with open(self.log, "a") as fh:
            fh.write(f"{i}\n")
        return self.shards.open_shard(i)

    def shard_label(self, i):
        return self.shards.shard_label(i)

    def read_ids(self):
        return self.shards.read_ids()


def test_a_worker_killed_mid_search_changes_nothing(client, corpus):
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers need not import this module
    tmp, c, ids = corpus
    log = tmp / "opened.log"
    log.write_text("")
    names = (f"gate-{uuid.uuid4().hex}", f"started-{uuid.uuid4().hex}")  # nothing left from another run
    gated = GatedShards(open_shards(tmp / "s"), *names, str(log))
    gate, started = distributed.Event(names[0]), distributed.Queue(names[1])
    gate.clear()
    killed, running = [], []

    def kill_the_holder_of_the_first_result(done, total):
        if done != 1:
            return
        # piece 0 (shard 0) is done and the others wait at the gate: its result is needed by a merge
        # that cannot run yet.  Wait until each worker (one thread each) runs a piece blocked at the
        # gate, then kill the worker process holding piece 0's result (mid-task), then open the gate
        running.extend(started.get(timeout=60) for _ in range(2))
        holders = {w for key, ws in client.who_has().items() if "search_piece" in str(key) for w in ws}
        assert len(holders) == 1
        (address,) = holders
        pid = client.run(os.getpid, workers=[address])[address]
        os.kill(pid, signal.SIGKILL)
        killed.append(address)
        gate.set()

    q = np.vstack([c[:20], c[1900:1905]])
    got = quiet_topk(q, gated, 10, query_ids=ids[np.r_[0:20, 1900:1905]], exclude_self=True,
                     backend=DaskBackend(client, tasks_per_thread=1), progress=kill_the_holder_of_the_first_result)
    assert len(killed) == 1
    inside = {worker for _, worker in running}
    assert len(inside) == 2 and killed[0] in inside  # the killed worker was inside a piece when it died
    opened = log.read_text().split()
    assert opened.count("0") == 2  # shard 0 was searched again after its worker died
    assert sorted(set(opened)) == [str(i) for i in range(6)]
    assert_same(got, brute_topk(q, c, 10, ids, ids[np.r_[0:20, 1900:1905]], exclude_self=True))
    client.wait_for_workers(2, timeout=60)  # the nanny restarts the worker for the next tests


def test_topk_command_on_the_cluster_writes_the_same_run(client, corpus, capsys):
    tmp, c, ids = corpus
    np.save(tmp / "all.npy", c)
    (tmp / "all_ids.txt").write_text("\n".join(ids) + "\n")
    base = ["topk", "--k", "7", "--exclude-self"]
    assert cli_main([*base, "--docs", str(tmp / "all.npy"), "--doc-ids", str(tmp / "all_ids.txt"), "--quiet",
                     "--out", str(tmp / "one.trec")]) == 0
    address = client.scheduler.address
    assert cli_main([*base, "--docs", str(tmp / "s"), "--dask", address, "--out", str(tmp / "dask.trec")]) == 0
    assert "tasks" in capsys.readouterr().err  # the progress bar counts the tasks
    assert cli_main([*base, "--docs", str(tmp / "all.npy"), "--doc-ids", str(tmp / "all_ids.txt"),
                     "--dask", address, "--quiet", "--out", str(tmp / "dask1.trec")]) == 0
    one = (tmp / "one.trec").read_bytes()
    assert one == (tmp / "dask.trec").read_bytes() == (tmp / "dask1.trec").read_bytes()


def test_evaluate_emb_on_a_local_cluster_gives_the_same_table(corpus):
    tmp, c, ids = corpus
    qrels = tmp / "qrels.txt"
    qrels.write_text("".join(f"{ids[i]} 0 {ids[(i * 7) % 2500]} 1\n" for i in range(0, 2500, 50)))
    out = {}
    for name, extra in (("here", []), ("cluster", ["--dask", "local:1"])):
        assert cli_main(["evaluate", "--qrels", str(qrels), "--emb", f"m={tmp / 's'}", "--metrics", "ndcg",
                         "--k", "10", "--ties", "docid_asc", "--out", str(tmp / name), *extra]) == 0
        out[name] = (tmp / name / "per_query.csv").read_bytes()
    assert out["here"] == out["cluster"] and len(out["here"]) > 100


def test_an_unreachable_scheduler_is_one_line(tmp_path, capsys):
    import socket

    write_shards(tmp_path / "s", np.eye(3, dtype=np.float32), list("abc"), [0, 3])
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc = cli_main(["topk", "--docs", str(tmp_path / "s"), "--k", "2", "--out", str(tmp_path / "r.trec"),
                   "--dask", f"tcp://127.0.0.1:{port}", "--dask-timeout", "1"])
    err = capsys.readouterr().err.splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].startswith(f"error: cannot reach the Dask scheduler at tcp://127.0.0.1:{port} (")
    assert cli_main(["topk", "--docs", str(tmp_path / "s"), "--k", "2", "--out", str(tmp_path / "r.trec"),
                     "--dask", "local:two"]) == 2
    assert capsys.readouterr().err.startswith("error: --dask expects local:N")


def test_workers_that_read_other_files_are_refused(client, tmp_path):
    """The client read the shards; the workers then read a copy with another row order, or a stale one with
    fewer rows (another machine's copy): an error naming the shard, never scores beside the wrong ids."""
    rng = np.random.default_rng(21)
    c = rng.normal(size=(300, 8)).astype(np.float32)
    ids = np.array([f"d{i}" for i in range(300)])
    q = rng.normal(size=(12, 8)).astype(np.float32)
    for change, text in (("reorder", "where it was searched"), ("stale", "rows and")):
        folder = tmp_path / change
        write_shards(folder, c, ids, [0, 100, 300])
        shards = open_shards(folder)  # the client reads ids and sizes now
        keep = np.arange(100, 300)[::-1] if change == "reorder" else np.arange(100, 250)
        np.save(folder / "part-1.npy", c[keep])
        (folder / "part-1_ids.txt").write_text("".join(f"{x}\n" for x in ids[keep]))
        with pytest.raises(ShapeMismatchError, match=text) as e:
            quiet_topk(q, shards, 10, backend=client)
        assert "same files as the client" in str(e.value) and "part-1.npy" in str(e.value)


def test_relative_shard_paths_are_made_absolute(tmp_path, monkeypatch):
    write_shards(tmp_path / "s", np.eye(3, dtype=np.float32), list("abc"), [0, 1, 3])
    monkeypatch.chdir(tmp_path)
    shards = open_shards("s")
    assert all(os.path.isabs(s.path) and os.path.isabs(s.ids_path) for s in shards.shards)
    monkeypatch.chdir("/")  # a worker elsewhere still finds them
    assert list(shards.read_ids()) == list("abc") and shards[0:3].shape == (3, 3)


def test_a_port_that_is_not_a_scheduler_is_one_error(capsys, tmp_path):
    """An HTTP server (the scheduler's dashboard port, say) kept the client waiting forever."""
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        write_shards(tmp_path / "s", np.eye(3, dtype=np.float32), list("abc"), [0, 3])
        address = f"tcp://127.0.0.1:{server.server_address[1]}"
        rc = cli_main(["topk", "--docs", str(tmp_path / "s"), "--k", "2", "--out", str(tmp_path / "r.trec"),
                       "--dask", address, "--dask-timeout", "1"])
        err = capsys.readouterr().err.splitlines()
        assert rc == 2 and len(err) == 1 and err[0].startswith(f"error: cannot reach the Dask scheduler at {address}")
    finally:
        server.shutdown()


def test_queries_lost_with_the_only_worker_are_scattered_again(corpus):
    """One worker, killed inside a piece: the queries scattered to it are gone with it (tasks that need them
    cannot be rerun), so the search starts again on the restarted worker; the same result."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    tmp, c, ids = corpus
    log = tmp / "opened1.log"
    log.write_text("")
    names = (f"gate-{uuid.uuid4().hex}", f"started-{uuid.uuid4().hex}")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50) as cluster, distributed.Client(cluster) as one:
        gated = GatedShards(open_shards(tmp / "s"), *names, str(log))
        gate, started = distributed.Event(names[0], client=one), distributed.Queue(names[1], client=one)
        gate.clear()
        killed = []

        def kill_the_worker(done, total):
            if done != 1 or killed:
                return
            started.get(timeout=60)  # the worker is inside piece 1, at the gate
            (address,) = one.scheduler_info()["workers"]
            os.kill(one.run(os.getpid, workers=[address])[address], signal.SIGKILL)
            killed.append(address)
            gate.set()

        q = c[:15]
        got = quiet_topk(q, gated, 10, query_ids=ids[:15], exclude_self=True,
                         backend=DaskBackend(one, tasks_per_thread=1), progress=kill_the_worker)
    assert len(killed) == 1
    assert log.read_text().split().count("0") == 2  # searched again from the start
    assert_same(got, brute_topk(q, c, 10, ids, ids[:15], exclude_self=True))

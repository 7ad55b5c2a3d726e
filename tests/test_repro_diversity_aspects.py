"""The Overview's diversity line on a ground truth of several aspects (seed 001's ordered lists) with ranked and
embedding runs: its command's ``...`` is the embedding runs only, so its ``--aspect`` words name those runs only.

Before, the line named every run's aspect (``--aspect content_run=...`` for a ranked run), and the command, completed
as the line says, stopped with "--aspect names unknown runs".
"""

from __future__ import annotations

import json
import shlex
import warnings

import numpy as np
from test_app import goto, start
from test_app_views import CONTENT, FIX, VIBES, seed001_run
from test_sample_seed import spans

from dashboard import analysis as A
from dashboard import state as S
from evalcore import workspace as W
from evalcore.cli.main import main
from evalcore.errors import EvalcoreWarning


def _movies_npz(path, *, dim: int, seed: int) -> bytes:
    ids = [m["movie_id"] for m in json.loads((FIX / "seed001_movies.json").read_text())]
    rng = np.random.default_rng(seed)
    np.savez(path, ids=np.asarray(ids), embeddings=rng.normal(size=(len(ids), dim)).astype(np.float32))
    return path.read_bytes()


def test_the_diversity_command_names_the_aspects_of_its_embedding_runs_only(tmp_path):
    gt = (FIX / "seed001_movies.json").read_bytes()
    (tmp_path / "movies.json").write_bytes(gt)
    emb = {"small": _movies_npz(tmp_path / "small.npz", dim=4, seed=1),
           "large": _movies_npz(tmp_path / "large.npz", dim=6, seed=2)}
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(1, 3), metrics=("recall", "ndcg"))),
                            W.Blob.of("movies.json", gt), kind="file")
    ws, _ = W.add_ranked_run(ws, W.Blob.of("content_run.trec", seed001_run(VIBES)), name="content_run",
                             aspect=VIBES)
    ws, _ = W.add_embedding_run(ws, W.Blob.of("small.npz", emb["small"]), name="small", aspect=CONTENT)
    ws, _ = W.add_embedding_run(ws, W.Blob.of("large.npz", emb["large"]), name="large", aspect=CONTENT)
    at = goto(start(ws), "overview")
    at.selectbox(key="ov_div_k").select(3).run()
    assert not at.exception, [e.value for e in at.exception]
    found = [c for cap in at.caption for c in spans(cap.value) if "--diversity" in c]
    assert len(found) == 1, [cap.value for cap in at.caption]
    words = shlex.split(found[0])
    assert not any("content_run" in w for w in words), words  # a ranked run: not among the command's runs
    emb_words = [w for n in emb for w in ("--emb", f"{n}={tmp_path / f'{n}.npz'}")]  # "...: the embedding runs"
    out = tmp_path / "out"
    given = []
    for w in words[1:]:
        given += emb_words if w == "..." else [{"QRELS": str(tmp_path / "movies.json"), "DIR": str(out)}.get(w, w)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        assert main(given) == 0, given
    cli = json.loads((out / "report.json").read_text())["aggregates"]
    div = A.diversity(S.context(ws=ws), 3, float(at.number_input(key="ov_div_alpha").value))
    assert set(div.runs) == set(emb) and not div.errors
    assert len(div.summary) == 2 * len(emb)
    for r in div.summary.itertuples():
        entry = cli[str(r.run)][f"{r.metric}@{r.k}"]
        assert (r.mean, r.ci_low, r.ci_high) == (entry["mean"], entry["ci_low"], entry["ci_high"]), (r, entry)

"""Each page's "Reproduce with" line under each kind of ground truth: the command it gives, run through the command
line's ``main`` on the same files, gives the page's numbers to the last bit; where no command can take the ground
truth (the built-in demo's), the line says so and names no command.

Before, with a reference model's embeddings as the ground truth (seed 000) the Fusion page's caption named
``evalcore fuse ... --qrels QRELS``: there is no such file, and ``fuse --search`` took judgments only. It now takes
``--reference-emb`` (with ``--reference-mode``/``--reference-depth``), judged as ``evaluate --reference-emb`` judges,
and the caption names it.
"""

from __future__ import annotations

import io
import json
import shlex
import warnings
from dataclasses import replace

import numpy as np
import pytest
from test_app import goto, start
from test_same_numbers import read_csv
from test_sample_seed import spans

from dashboard import analysis as A
from dashboard import reproduce as R
from dashboard import state as S
from evalcore import workspace as W
from evalcore.cli.main import main
from evalcore.errors import EvalcoreWarning

ITEMS = [f"i{j:02d}" for j in range(40)]
#: a reference model's top-k (tied) on a sample of 12 of the 40 items drawn with seed 7, ties ordered by id
REFERENCE_SETTINGS = W.Settings(k=(5, 10), metrics=("ndcg", "recall"), sample_size=12, seed=7, ties="docid_asc")


def npz(dim: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(ITEMS), embeddings=rng.normal(size=(len(ITEMS), dim)).astype(np.float32))
    return buf.getvalue()


def reference_snapshot(settings: W.Settings = REFERENCE_SETTINGS) -> W.Snapshot:
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("ref.npz", npz(8, 1)), kind="reference")
    for name, dim, seed in (("a", 8, 2), ("b", 6, 3), ("c", 8, 4)):
        ws, _ = W.add_embedding_run(ws, W.Blob.of(f"{name}.npz", npz(dim, seed)), name=name)
    return ws


@pytest.fixture
def ref_files(tmp_path):
    (tmp_path / "ref.npz").write_bytes(npz(8, 1))
    for name, dim, seed in (("a", 8, 2), ("b", 6, 3), ("c", 8, 4)):
        (tmp_path / f"{name}.npz").write_bytes(npz(dim, seed))
    return tmp_path


def commands(at, prefix: str) -> list[list[str]]:
    """The words of every command of the page's captions starting with ``prefix``."""
    return [shlex.split(c) for cap in at.caption for c in spans(cap.value) if c.startswith(prefix)]


def quiet_main(words: list[str]) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        return main(words)


# ------------------------------------------------------------------------------------------------ Fusion


@pytest.mark.parametrize("mode", ["tied", "fixed"])
def test_the_fusion_command_on_a_reference_ground_truth_gives_the_pages_search(ref_files, mode):
    settings = replace(REFERENCE_SETTINGS, gt_mode=mode, gt_depth=7)
    at = goto(start(reference_snapshot(settings)), "fusion")
    at.multiselect(key="fu_runs").set_value(["a", "b", "c"]).run()
    at.selectbox(key="fu_step").select(0.25).run()
    at.toggle(key="fu_search").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    [words] = commands(at, "evalcore fuse")
    assert "--qrels" not in words and words[words.index("--reference-emb") + 1] == "REFERENCE"
    assert ("--reference-mode" in words) == (mode == "fixed")
    # the runs as TREC files: the page's own rankings (each embedding run's exact top-k), written out
    ctx = S.context(ws=reference_snapshot(settings))
    assert ctx.ready, ctx.eval_error
    names = list(at.session_state["fu_runs"])
    # the runs as TREC files, written as the caption says: each embedding run's ranking by `evalcore topk`
    [topk] = [w for w in commands(at, "evalcore topk --docs FILE")]
    for n in names:
        assert quiet_main([*[{"FILE": str(ref_files / f"{n}.npz"), "NAME.trec": str(ref_files / f"{n}.trec")}.get(w, w)
                             for w in topk[1:]], "--quiet"]) == 0
    assert words[:5] == ["evalcore", "fuse", "--run", "NAME=FILE", "..."], words
    trials = ref_files / "trials.csv"
    given = [words[1], *[w for n in names for w in ("--run", f"{n}={ref_files / f'{n}.trec'}")],
             *[{"REFERENCE": str(ref_files / "ref.npz"), "fused.trec": str(ref_files / "f.trec")}.get(w, w)
               for w in words[5:]], "--search-out", str(trials)]
    assert quiet_main(given) == 0
    cli = read_csv(trials)
    metric, k = at.session_state["sel_metric"], at.session_state["sel_k"]
    options = dict(strategy="grid", step=0.25, n_trials=50, seed=at.session_state["fu_seed"],
                   tune_fraction=at.session_state["fu_fraction"], c=60.0, top_n=None, method="rrf", norm="none")
    found = A._found(A._c_weights(f"repro-ref-{mode}", ctx.qrels[None], ctx.reference, {n: ctx.runs[n] for n in names},
                                  ctx.settings, metric, k, options))
    assert found.ok, found.error
    columns = [*(f"weight:{n}" for n in names), "value"]
    np.testing.assert_array_equal(cli[columns].to_numpy(float), found.value.trials[columns].to_numpy(float))
    assert [m.value for m in at.metric][0] == f"{cli.loc[cli['best'].astype(bool), 'value'].iloc[0]:.4f}"
    assert found.value.n_tune + found.value.n_test == settings.sample_size


def test_the_fusion_caption_on_the_demo_names_no_command():
    at = goto(start(), "fusion")
    at.toggle(key="fu_search").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not commands(at, "evalcore ")
    assert any(R.BUILT_IN_NOTE in c.value for c in at.caption)


@pytest.mark.parametrize("extra, named", [(["--qrels", "q.txt"], "--qrels"), (["-J"], "--judged-only"),
                                          (["--reference-depth", "3"], "--reference-depth"),
                                          (["--metric", "mrr"], "--metric")])
def test_fuse_refuses_what_does_not_apply_to_a_reference(ref_files, extra, named, capsys):
    for n in ("a", "b"):
        (ref_files / f"{n}.trec").write_text(f"i00 Q0 i01 1 1.0 {n}\n")
    (ref_files / "q.txt").write_text("i00 0 i01 1\n")
    words = ["fuse", "--run", str(ref_files / "a.trec"), "--run", str(ref_files / "b.trec"), "--out",
             str(ref_files / "f.trec"), "--search", "grid", "--reference-emb", str(ref_files / "ref.npz"), *extra]
    assert quiet_main([w if w != "q.txt" else str(ref_files / "q.txt") for w in words]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0], err
    assert quiet_main(words[:7] + ["--reference-emb", str(ref_files / "ref.npz")]) == 2  # (only with --search)
    assert "--reference-emb" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------ Agreement


def test_the_similarity_command_gives_the_pages_spearman_and_mae_to_the_last_bit(ref_files):
    at = goto(start(reference_snapshot()), "agreement")
    assert not at.exception, [e.value for e in at.exception]
    [words] = commands(at, "evalcore evaluate --reference-emb")
    assert words[:6] == ["evalcore", "evaluate", "--reference-emb", "REFERENCE", "--emb", "NAME=FILE"], words
    out = ref_files / "out"
    given = ["evaluate", "--reference-emb", str(ref_files / "ref.npz"),
             *[w for n in ("a", "b", "c") for w in ("--emb", f"{n}={ref_files / f'{n}.npz'}")],
             *[str(out) if w == "DIR" else w for w in words[7:]]]
    assert quiet_main(given) == 0
    cli = json.loads((out / "report.json").read_text())["metadata"]["similarity_agreement"]
    ctx = S.context(ws=reference_snapshot())
    shown = A.similarity(ctx)
    assert shown.ok, shown.error
    table = shown.value
    assert sorted(table["model"].astype(str)) == sorted(cli) == ["a", "b", "c"]
    for row in table.itertuples(index=False):
        assert (row.spearman, row.mae, row.n_pairs) == tuple(cli[str(row.model)][c] for c in ("spearman", "mae",
                                                                                              "n_pairs"))


def test_the_similarity_caption_on_the_demo_names_no_command():
    at = goto(start(), "agreement")
    assert not at.exception, [e.value for e in at.exception]
    assert not commands(at, "evalcore evaluate")
    assert any(R.BUILT_IN_NOTE in c.value and "reference_agreement" in c.value for c in at.caption)

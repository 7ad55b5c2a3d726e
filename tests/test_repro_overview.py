"""The Overview's "Reproduce with" ``evalcore evaluate`` command under each kind of ground truth the users have (TREC
qrels, seed 001's ordered lists with several aspects, seed 003's graded judgments with a domain per query, seed 000's
reference model's embeddings, tied and fixed) and the settings that change the numbers (tie rule, relevance threshold,
judged-only, no-relevant rule, query sample with its own seed, the embedding runs' depth): completed with the files
and run through the command line's ``main``, it writes the report.json of the page's "Report (JSON)" (every number,
to the last bit, and every shared metadata key) and the page's per-query table; on the built-in demo it says no
command takes the ground truth.

Before, the caption gave ``evalcore evaluate ... --ci-method bootstrap --n-resamples 1000 --seed 42 --out DIR`` and
nothing of the settings: completed with the ground truth and the runs, the command scored with ties ``trec``,
threshold 1, without ``-J``, at k 10, and refused a ground truth of several lists without ``--aspect``.
"""

from __future__ import annotations

import io
import json
import shlex
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from test_app import goto, start, trec_run
from test_app_views import CONTENT, FIX, VIBES, seed001_run
from test_fusion_agree_repro import qrels_bytes
from test_report_keys import assert_same_report
from test_same_numbers import RUNS, read_csv
from test_sample_seed import spans

from dashboard import reproduce as R
from dashboard import state as S
from evalcore import workspace as W
from evalcore.cli.main import main
from evalcore.errors import EvalcoreWarning

ITEMS = [f"i{j:02d}" for j in range(40)]
TERMS = [f"t{j:02d}" for j in range(30)]


def npz(dim: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(ITEMS), embeddings=rng.normal(size=(len(ITEMS), dim)).astype(np.float32))
    return buf.getvalue()


def vectors(ids: list[str], dim: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(ids), embeddings=rng.normal(size=(len(ids), dim)).astype(np.float32))
    return buf.getvalue()


def graded_json() -> bytes:
    """Seed 003's graded judgments: per query, terms graded 3/2/1 and a domain."""
    rng = np.random.default_rng(5)
    rows = [{"query": f"q{i:02d}", "domain": ("legal", "medical", "tech")[i % 3],
             "relevance_judgments": {str(t): int(g) for t, g in zip(rng.choice(TERMS, 5, replace=False),
                                                                     (3, 3, 2, 1, 1), strict=True)}}
            for i in range(15)]
    return json.dumps(rows, ensure_ascii=False).encode()


def graded_run(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    return "".join(f"q{i:02d} Q0 {t} {r + 1} {round(float(s), 2)} x\n" for i in range(15)
                   for r, (t, s) in enumerate(zip(TERMS, np.sort(rng.random(len(TERMS)))[::-1], strict=True))
                   ).encode()


#: each case: (ground truth file, its bytes, kind, {run: (file, bytes, its aspect)}, settings)
def case(name: str):
    if name == "trec":
        settings = W.Settings(k=(5, 10), metrics=("ndcg", "recall", "P"), sample_size=9, seed=7, judged_only=True,
                              no_relevant="skip", rel_threshold=2, ties="docid_asc")
        return ("qrels.txt", qrels_bytes(), "file",
                {n: (f"{n}.trec", trec_run(s), None) for s, n in enumerate(RUNS, start=1)}, settings)
    if name == "seed001":
        gt = (FIX / "seed001_movies.json").read_bytes()
        settings = W.Settings(k=(1, 5), metrics=("recall", "mrr", "ndcg_exp"))
        return ("movies.json", gt, "file", {"content_run": ("content_run.trec", seed001_run(CONTENT), CONTENT),
                                            "vibes_run": ("vibes_run.trec", seed001_run(VIBES), VIBES),
                                            "mixed": ("mixed.trec", seed001_run(VIBES), CONTENT)}, settings)
    if name == "seed003":
        settings = W.Settings(k=(5, 10, 20), metrics=("ndcg", "recall", "mrr"), sample_size=8, seed=S.CI_SEED,
                              rel_threshold=2, ties="input")
        return ("graded.json", graded_json(), "file",
                {"splade": ("splade.trec", graded_run(1), None), "bm25": ("bm25.trec", graded_run(2), None)}, settings)
    if name == "seed003-emb":  # the graded judgments, two embedding models (queries against a corpus of terms)
        settings = W.Settings(k=(5, 10), metrics=("ndcg", "recall"), sample_size=8, seed=3, judged_only=True,
                              ties="docid_asc")
        queries = [f"q{i:02d}" for i in range(15)]
        return ("graded.json", graded_json(), "file",
                {n: (f"{n}.npz", (vectors(TERMS, d, s), vectors(queries, d, s + 10)), "emb")
                 for n, d, s in (("small", 6, 1), ("large", 9, 2))}, settings)
    mode = name.split("-")[1]
    settings = W.Settings(k=(5, 10), metrics=("ndcg", "recall", "map"), sample_size=12, seed=7, ties="docid_asc",
                          gt_mode=mode, gt_depth=7, depth=20 if mode == "fixed" else 100)
    return ("ref.npz", npz(8, 1), "reference", {n: (f"{n}.npz", npz(d, s), "emb") for n, d, s in
                                                (("a", 8, 2), ("b", 6, 3))}, settings)


CASES = ["trec", "seed001", "seed003", "seed003-emb", "reference-tied", "reference-fixed"]


def snapshot(name: str) -> W.Snapshot:
    gt_name, gt, kind, runs, settings = case(name)
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of(gt_name, gt), kind="reference"
                            if kind == "reference" else "file")
    for run, (file, data, aspect) in runs.items():
        if aspect == "emb" and isinstance(data, tuple):  # queries against a corpus
            ws, _ = W.add_embedding_run(ws, W.Blob.of(file, data[0]), query_blob=W.Blob.of("q_" + file, data[1]),
                                        name=run)
        elif aspect == "emb":
            ws, _ = W.add_embedding_run(ws, W.Blob.of(file, data), name=run)
        else:
            ws, _ = W.add_ranked_run(ws, W.Blob.of(file, data), name=run, aspect=aspect)
    return ws


def write_runs(folder, runs) -> list[str]:
    """Write the runs' files into ``folder``; the command's words naming them (``--run``, ``--emb``)."""
    words = []
    for run, (file, data, aspect) in runs.items():
        if isinstance(data, tuple):  # an embedding run of queries against a corpus: two files
            (folder / file).write_bytes(data[0])
            (folder / f"q_{file}").write_bytes(data[1])
            words += ["--emb", f"{run}={folder / file},{folder / f'q_{file}'}"]
        else:
            (folder / file).write_bytes(data)
            words += ["--emb" if aspect == "emb" else "--run", f"{run}={folder / file}"]
    return words


@pytest.mark.parametrize("name", CASES)
def test_the_overviews_command_writes_the_pages_report_to_the_last_bit(tmp_path, name):
    gt_name, gt, kind, runs, settings = case(name)
    (tmp_path / gt_name).write_bytes(gt)
    run_words = write_runs(tmp_path, runs)
    at = goto(start(snapshot(name)), "overview")
    found = [c for cap in at.caption for c in spans(cap.value) if c.startswith("evalcore evaluate")
             and "--diversity" not in c]
    assert len(found) == 1, [cap.value for cap in at.caption]
    words = shlex.split(found[0])
    assert ("--reference-emb" in words) == (kind == "reference") and ("--qrels" in words) == (kind != "reference")
    out = tmp_path / "out"
    given = []
    for w in words[1:]:
        given += run_words if w == "..." else [{"QRELS": str(tmp_path / gt_name), "REFERENCE": str(tmp_path / gt_name),
                                                "DIR": str(out)}.get(w, w)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        assert main(given) == 0, given
    cli = json.loads((out / "report.json").read_text())

    ctx = S.context(ws=snapshot(name))
    assert ctx.ready, ctx.eval_error
    download = json.loads(S.report_json(ctx, 10)())  # the Overview's "Report (JSON)"
    assert_same_report(download, cli)
    assert download["metadata"]["sample_seed"] == (settings.seed if settings.sample_size else None)
    # the page's per-query table is per_query.csv, row for row
    key = ["run", "query_id", "metric", "k"]
    page = ctx.evaluation.table.astype({"run": str, "query_id": str, "metric": str}).sort_values(key)
    file = read_csv(out / "per_query.csv").astype({"run": str, "query_id": str, "metric": str}).sort_values(key)
    assert len(page) == len(file) > 0
    np.testing.assert_array_equal(page[key[:3]].to_numpy(), file[key[:3]].to_numpy())
    np.testing.assert_array_equal(page["k"].to_numpy(int), file["k"].to_numpy(int))
    np.testing.assert_array_equal(page["value"].to_numpy(float), file["value"].to_numpy(float))
    # the leaderboard's cells are report.json's aggregates
    shown = S.summary(ctx)
    got = pd.DataFrame([cli["aggregates"][str(r.run)][f"{r.metric}@{r.k}" if r.k else str(r.metric)]
                        for r in shown.itertuples()])
    for c in ("mean", "ci_low", "ci_high"):
        np.testing.assert_array_equal(shown[c].to_numpy(float), got[c].to_numpy(float), err_msg=c)


def test_the_overview_on_the_demo_names_no_command():
    at = goto(start(), "overview")
    assert not [c for cap in at.caption for c in spans(cap.value) if c.startswith("evalcore ")]
    assert any(R.BUILT_IN_NOTE in cap.value and "summarize_with_intervals" in cap.value for cap in at.caption)


def test_the_command_names_each_runs_aspect_once():
    assert R.aspect_options({"a": "x", "b": "y", "c": "x"}) == " --aspect x --aspect b=y"
    assert R.aspect_options({"a": None}) == ""
    assert R.aspect_options({"-a": "o v", "b": "w"}) == " --aspect 'o v' --aspect b=w"
    command = R.evaluate_command(replace(W.Settings(), k=(5, 200)).validated(), ground_truth=R.QRELS, embeddings=True)
    assert "--emb-depth" not in command  # (the command's default depth: max(100, the largest k))


@pytest.mark.parametrize("name", ["seed003-emb", "reference-tied", "reference-fixed"])
def test_the_diversity_command_writes_the_pages_diversity_table(tmp_path, name):
    """The Overview's diversity table (ILD@k, α-nDCG@k of the embedding runs, mean [95% CI]) had no "Reproduce
    with" line; ``evaluate --diversity`` computes them: its command, completed, gives the table to the last bit."""
    gt_name, gt, _, runs, settings = case(name)
    (tmp_path / gt_name).write_bytes(gt)
    run_words = write_runs(tmp_path, runs)
    at = goto(start(snapshot(name)), "overview")
    at.selectbox(key="ov_div_k").select(5).run()
    at.number_input(key="ov_div_alpha").set_value(0.3).run()
    assert not at.exception, [e.value for e in at.exception]
    found = [c for cap in at.caption for c in spans(cap.value) if "--diversity" in c]
    assert len(found) == 1, [cap.value for cap in at.caption]
    words = shlex.split(found[0])
    out = tmp_path / "out"
    given = []
    for w in words[1:]:
        given += run_words if w == "..." else [{"REFERENCE": str(tmp_path / gt_name), "QRELS": str(tmp_path / gt_name),
                                                "DIR": str(out)}.get(w, w)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        assert main(given) == 0, given
    cli = json.loads((out / "report.json").read_text())["aggregates"]
    from dashboard import analysis as A

    div = A.diversity(S.context(ws=snapshot(name)), 5, 0.3)
    assert set(div.runs) == set(runs) and not div.errors
    summ = div.summary
    assert len(summ) == 2 * len(runs)
    for r in summ.itertuples():
        entry = cli[str(r.run)][f"{r.metric}@{r.k}"]
        assert (r.mean, r.ci_low, r.ci_high) == (entry["mean"], entry["ci_low"], entry["ci_high"]), (r, entry)


@pytest.mark.parametrize("name", ["trec", "seed001", "reference-fixed"])
def test_the_queries_pages_command_writes_its_values(tmp_path, name):
    """The Queries page (every query's value per run at the metric@k) had no "Reproduce with" line; its command's
    per_query.csv holds the page's values, to the last bit."""
    gt_name, gt, _, runs, _ = case(name)
    (tmp_path / gt_name).write_bytes(gt)
    run_words = write_runs(tmp_path, runs)
    at = goto(start(snapshot(name)), "queries")
    found = [c for cap in at.caption for c in spans(cap.value) if c.startswith("evalcore evaluate")]
    assert len(found) == 1, [cap.value for cap in at.caption]
    out = tmp_path / "out"
    given = []
    for w in shlex.split(found[0])[1:]:
        given += run_words if w == "..." else [{"REFERENCE": str(tmp_path / gt_name), "QRELS": str(tmp_path / gt_name),
                                                "DIR": str(out)}.get(w, w)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        assert main(given) == 0, given
    file = read_csv(out / "per_query.csv").astype({"run": str, "query_id": str, "metric": str})
    metric, k = at.session_state["sel_metric"], int(at.session_state["sel_k"])
    file = file[(file["metric"] == metric) & (file["k"] == k)]
    shown = at.dataframe[0].value
    checked = 0
    for run in runs:
        if run not in shown.columns:
            continue
        want = file[file["run"] == run].set_index("query_id")["value"]
        got = shown.set_index(shown["query_id"].astype(str))[run].astype(float)
        np.testing.assert_array_equal(got.to_numpy(), want.reindex(got.index).to_numpy(), err_msg=run)
        checked += len(got)
    assert checked > 0

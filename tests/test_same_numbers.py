"""The same inputs with the options left at their defaults give the same seeded numbers in the Python API, the
command line and the dashboard.

Before, the API's intervals and tests drew with seed 0 (``evalcore.intervals``, ``evalcore.stats``,
``evalcore.retrieval.similarity_agreement``), the command line and the similarity agreement with 42, the
dashboard its own constants (seed 0, 1,000 resamples), and the API's random weight search tried 100 weight
vectors where ``evalcore fuse`` and the Fusion page tried 50: a bootstrap interval or a randomization test's
p-value seen on a page came out different from a script or the command line. Every test here runs the command
line's ``main`` in-process on small files in ``tmp_path``, the API's function with its defaults, and the function
the page calls (a dashboard context resolved in Streamlit's bare mode), on the same data.
"""

from __future__ import annotations

import json
import shlex
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from test_app import npz, trec_qrels, trec_run

from dashboard import analysis as A
from dashboard import drilldown as D
from dashboard import reproduce as R
from dashboard import state as S
from dashboard import versions as V
from evalcore import defaults as DEF
from evalcore import workspace as W
from evalcore.cli.main import build_parser, main
from evalcore.errors import EvalcoreWarning
from evalcore.evaluate import evaluate
from evalcore.fusion_search import search_weights
from evalcore.intervals import summarize_with_intervals
from evalcore.io import load_embeddings, load_qrels, load_run
from evalcore.io.per_query import read_per_query_csv
from evalcore.retrieval import similarity_agreement
from evalcore.stats import compare, compare_by_domain
from evalcore.workspace.pipeline import sample_query_ids

RUNS = ("a", "b", "c")
SETTINGS = W.Settings(k=(5, 10), metrics=("ndcg", "recall"))
ITEMS = [f"i{j}" for j in range(120)]


@pytest.fixture
def files(tmp_path):
    """qrels.txt and a.trec, b.trec, c.trec (15 queries: 2^15 sign vectors, so the randomization test draws)."""
    (tmp_path / "qrels.txt").write_bytes(trec_qrels())
    for seed, name in enumerate(RUNS, start=1):
        (tmp_path / f"{name}.trec").write_bytes(trec_run(seed))
    return tmp_path


def run_args(folder, names=RUNS) -> list[str]:
    return [w for n in names for w in ("--run", f"{n}={folder / f'{n}.trec'}")]


def cli_default(*words: str):
    """The command line's parsed options with nothing but ``words`` given (its defaults)."""
    return build_parser().parse_args(list(words))


def snapshot(settings: W.Settings = SETTINGS, names=RUNS) -> W.Snapshot:
    """The files of :func:`files` as the dashboard holds them."""
    ws = W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("qrels.txt", trec_qrels()))
    for seed, name in enumerate(RUNS, start=1):
        if name in names:
            ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", trec_run(seed)), name=name)
    return ws


def context(ws: W.Snapshot) -> S.Context:
    ctx = S.context(ws=ws)
    assert ctx.ready, ctx.eval_error
    return ctx


def api_evaluation(folder, *, metrics=("ndcg", "recall"), k=(5, 10)):
    qrels = load_qrels(folder / "qrels.txt")
    runs = {n: load_run(folder / f"{n}.trec", name=n) for n in RUNS}
    return evaluate(qrels, runs, metrics=list(metrics), k=list(k))


def caption_command(code: str, **paths: str) -> list[str]:
    """The words after ``evalcore`` of a caption's ``reproduce with`` command, its placeholders replaced."""
    words = shlex.split(code.strip("`"))
    assert words[0] == "evalcore"
    return [paths.get(w, w) for w in words[1:]]


def read_csv(path) -> pd.DataFrame:
    """A CSV the command line wrote (``%.17g``), every float read back to the bit."""
    return pd.read_csv(path, float_precision="round_trip")


def same(got, want, columns) -> None:
    """Equal to the last bit (NaN where NaN)."""
    for c in columns:
        np.testing.assert_array_equal(np.asarray(got[c], dtype=float), np.asarray(want[c], dtype=float), err_msg=c)


# ------------------------------------------------------------------------------------------ intervals of means


def test_mean_intervals_api_cli_dashboard_and_its_download(files):
    out = files / "out"
    assert main(["evaluate", "--qrels", str(files / "qrels.txt"), *run_args(files), "--metrics", "ndcg", "recall",
                 "--k", "5", "10", "--ci-method", "bootstrap", "--out", str(out)]) == 0
    cli = json.loads((out / "report.json").read_text())
    api = summarize_with_intervals(api_evaluation(files).table, aggregates=True)  # every option at its default
    ctx = context(snapshot())
    shown = S.summary(ctx)  # the Overview's leaderboard and curves
    download = json.loads(S.report_json(ctx, 10)())  # the Overview's "Report (JSON)"
    assert download["metadata"]["ci"] == cli["metadata"]["ci"]
    rows = api.assign(run=api["run"].astype(str), metric=api["metric"].astype(str))
    for report in (cli, download):
        got = pd.DataFrame([report["aggregates"][r.run][f"{r.metric}@{r.k}"] for r in rows.itertuples()])
        same(got, rows, ["mean", "ci_low", "ci_high"])
    key = ["run", "metric", "k"]
    shown = shown.assign(run=shown["run"].astype(str), metric=shown["metric"].astype(str)).sort_values(key)
    # the pages summarize run by run over the whole table's queries: the same rows, to the last bit or two
    # (OpenBLAS sums a narrow product in another order than a wide one; README, "A restarted server")
    for c in ("mean", "ci_low", "ci_high"):
        np.testing.assert_allclose(shown[c].to_numpy(float), rows.sort_values(key)[c].to_numpy(float), rtol=0,
                                   atol=1e-15, err_msg=c)
    # the caption's command is the one run above
    words = caption_command(R.intervals_caption().split("`")[1])
    assert words[words.index("--ci-method") + 1] == "bootstrap" and "--n-resamples" in words and "--seed" in words
    parsed = cli_default("evaluate", "--qrels", "q", *[w for w in words[1:] if w not in ("...",)])
    assert (parsed.ci_method, parsed.n_resamples, parsed.seed) == ("bootstrap",) + (
        cli_default("evaluate", "--qrels", "q").n_resamples, cli_default("evaluate", "--qrels", "q").seed)


def test_domain_intervals_and_tests_are_the_apis(files):
    domains = "query_id,domain\n" + "".join(f"q{i},{'bio' if i % 2 else 'med'}\n" for i in range(15))
    ctx = context(replace(snapshot(), domain_blob=W.Blob.of("dom.csv", domains.encode())))
    sl = S.metric_slice(ctx, "ndcg", 10)
    # the Domains page's bars and table
    shown = D.domain_frame(sl, metric="ndcg", k=10, n_resamples=S.N_RESAMPLES, seed=S.CI_SEED, runs=list(RUNS))
    api = summarize_with_intervals(D._plain(sl), by=("run", "domain", "metric", "k"), aggregates=True)
    same(shown, api, ["mean", "ci_low", "ci_high"])
    # its per-domain tests: the API with the options the page states, the seed left at its default (the CLI's)
    tested = A.domain_comparison(ctx, "ndcg", 10, "a", "permutation", "holm", 2, runs=list(RUNS))
    assert tested.ok, tested.error
    api = compare_by_domain(D._plain(sl), metric="ndcg", k=10, baseline="a", test="permutation", min_queries=2,
                            n_resamples=DEF.DASHBOARD_TEST_RESAMPLES, ci_method=DEF.DASHBOARD_CI_METHOD,
                            resampling=DEF.DASHBOARD_RESAMPLING)
    same(tested.value, api, ["diff", "ci_low", "ci_high", "p_value", "p_adjusted"])
    assert S.CI_SEED == cli_default("compare", "--per-query", "x").seed


# ------------------------------------------------------------------------------------------ paired tests


def test_paired_tests_api_cli_dashboard(files):
    # the command line and the API, every option at its default but the test
    cli_csv = files / "cmp.csv"
    assert main(["compare", "--qrels", str(files / "qrels.txt"), *run_args(files), "--metric", "ndcg@10", "--test",
                 "permutation", "--out", str(cli_csv)]) == 0
    cli = read_csv(cli_csv)
    table = api_evaluation(files, metrics=("ndcg",), k=(10,)).table
    api = compare(table, metric="ndcg", k=10, test="permutation")
    assert list(zip(cli["run_a"], cli["run_b"], strict=True)) == list(zip(api["run_a"], api["run_b"], strict=True))
    columns = ["diff", "ci_low", "ci_high", "p_value", "p_adjusted"]
    same(cli, api, columns)
    # the Compare page: the command its caption gives, on the Overview's per-query download, gives its numbers
    ctx = context(snapshot())
    shown = A.comparison(ctx, "ndcg", 10, "permutation", "holm").value
    (files / "per_query.csv").write_bytes(S.per_query_csv(ctx)())
    words = caption_command(R.compare_command("ndcg@10", "permutation", "holm"),
                            **{"per_query.csv": str(files / "per_query.csv")})
    again = files / "again.csv"
    assert main([*words, "--out", str(again)]) == 0
    same(read_csv(again), shown, columns)
    # and the API with the options the page states, the seed left at its default
    stated = compare(read_per_query_csv(files / "per_query.csv"), metric="ndcg", k=10, test="permutation",
                     n_resamples=DEF.DASHBOARD_TEST_RESAMPLES, ci_method=DEF.DASHBOARD_CI_METHOD,
                     resampling=DEF.DASHBOARD_RESAMPLING)
    same(stated, shown, columns)


#: Runs in the workspace's order (the Compare page's), not alphabetical; names a shell or Markdown would read
CHOSEN_ORDER = ("zeta `x` *$<b>", "alpha's run", "-minus", "mid")


def helped_run(seed: int, share: float) -> bytes:
    """:func:`trec_run` of ``seed`` with the judged relevant documents of about ``share`` of the queries raised to
    the top: a run better than the others on those queries (small p-values, which a correction moves)."""
    rel = [line.split() for line in trec_qrels().decode().splitlines()]
    rng = np.random.default_rng(seed)
    helped = {q for q in dict.fromkeys(r[0] for r in rel) if rng.random() < share}
    lines = []
    for line in trec_run(seed).decode().splitlines():
        q, q0, d, rank, score, tag = line.split()
        bonus = 10 * int(next((g for qq, _, dd, g in rel if qq == q and dd == d), 0)) if q in helped else 0
        lines.append(f"{q} {q0} {d} {rank} {float(score) + bonus} {tag}")
    return ("\n".join(lines) + "\n").encode()


def caption_code(caption: str) -> str:
    """The one code span of a caption, as CommonMark (Streamlit's Markdown) reads it: the rest is plain text."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parseInline(caption)[0].children
    assert {t.type for t in tokens} <= {"text", "code_inline"}, [(t.type, t.content) for t in tokens]
    spans = [t.content for t in tokens if t.type == "code_inline"]
    assert len(spans) == 1, spans
    return spans[0]


def test_the_compare_pages_chosen_runs_in_its_order_are_its_captions_command(tmp_path):
    """The Compare page tests the runs chosen in "Runs compared" only (every pair of them: the correction's family,
    the shared resamples' queries), in its order (the workspace's: pair (A, B) with A first, diff = B − A); its
    caption's command gives the very numbers, sign and p-values included. Before, the command had no way to choose
    runs: it compared every run of the file, sorted by name (a pair's sign flipped, the family was larger)."""
    ws = W.set_ground_truth(W.Snapshot(settings=SETTINGS), W.Blob.of("qrels.txt", trec_qrels()))
    for seed, name in enumerate(CHOSEN_ORDER, start=1):  # "mid" better on about 2 queries of 3
        data = helped_run(seed, 0.7) if name == "mid" else trec_run(seed)
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"run{seed}.trec", data), name=name)
    ctx = context(ws)
    chosen = {"mid", "-minus", "zeta `x` *$<b>"}  # "alpha's run" not compared
    runs = [r for r in S.comparable_runs(ctx) if r in chosen]  # the page's runs (pages/compare.py)
    assert runs == ["zeta `x` *$<b>", "-minus", "mid"] and runs != sorted(runs)
    shown = A.comparison(ctx, "ndcg", 10, "permutation", "holm", runs=runs)
    assert shown.ok, shown.error
    shown = shown.value
    pq = tmp_path / "per_query.csv"
    pq.write_bytes(S.per_query_csv(ctx)())  # the Overview's download: every run
    code = caption_code(R.compare_caption("ndcg@10", "permutation", "holm", runs=runs))
    words = caption_command(code, **{"per_query.csv": str(pq)})
    out = tmp_path / "cmp.csv"
    assert main([*words, "--out", str(out)]) == 0
    cli = read_csv(out)
    pairs = [("zeta `x` *$<b>", "-minus"), ("zeta `x` *$<b>", "mid"), ("-minus", "mid")]
    assert list(zip(shown["run_a"], shown["run_b"], strict=True)) == pairs
    assert list(zip(cli["run_a"], cli["run_b"], strict=True)) == pairs
    same(cli, shown, ["mean_a", "mean_b", "diff", "ci_low", "ci_high", "effect_size", "statistic", "p_value",
                      "p_adjusted"])
    assert (cli[["n", "wins", "ties", "losses"]].to_numpy() == shown[["n", "wins", "ties", "losses"]].to_numpy()).all()
    # what the command gave without --runs (all that it could before): every run, sorted; other signs and p-values
    every = tmp_path / "every.csv"
    assert main([*[w for w in words if w not in ("--runs", *runs) and not w.startswith("--runs=")],
                 "--out", str(every)]) == 0
    old = read_csv(every).set_index(["run_a", "run_b"])
    assert len(old) == 6  # the four runs' pairs: the family the correction counted
    for a, b in pairs:
        flipped = (b, a) in old.index
        row = old.loc[(b, a) if flipped else (a, b)]
        got = shown.set_index(["run_a", "run_b"]).loc[(a, b)]
        assert row["diff"] == (-got["diff"] if flipped else got["diff"])
    assert any((b, a) in old.index for a, b in pairs)  # at least one pair's direction (sign) was the other one
    assert shown["p_value"].min() < 0.05  # ("mid" is better): corrected over the 3 pairs compared, not 6
    assert not np.array_equal(old.loc[[p if p in old.index else p[::-1] for p in pairs], "p_adjusted"].to_numpy(),
                              shown["p_adjusted"].to_numpy())


def test_version_curve_and_tests_are_the_apis(files):
    ws = snapshot()
    ws = replace(ws, runs=tuple(replace(r, model="enc", version=f"v{i}", step=i) for i, r in enumerate(ws.runs)))
    ctx = context(ws)
    sr = V.series(ctx)
    curve = V.curve(ctx, sr, "enc", "ndcg", 10)
    tests = V.tests(ctx, sr, "enc", "ndcg", 10, "a", "permutation", "holm")
    assert curve.ok and tests.ok, (curve.error, tests.error)
    sl = S.metric_slice(ctx, "ndcg", 10)
    same(curve.value.frame, W.version_curve(sl, sr.table, model="enc", metric="ndcg", k=10), ["mean", "ci_low",
                                                                                              "ci_high"])
    api = W.version_tests(sl, sr.table, model="enc", metric="ndcg", k=10, reference="a", test="permutation",
                          n_resamples=DEF.DASHBOARD_TEST_RESAMPLES, ci_method=DEF.DASHBOARD_CI_METHOD,
                          resampling=DEF.DASHBOARD_RESAMPLING)
    same(tests.value, api, ["diff", "ci_low", "ci_high", "p_value", "p_adjusted"])
    assert S.CI_SEED == cli_default("compare", "--per-query", "x").seed


# ------------------------------------------------------------------------------------------ similarity agreement


def test_similarity_agreement_api_cli_dashboard(tmp_path):
    (tmp_path / "ref.npz").write_bytes(npz(ITEMS, 12, 1))
    (tmp_path / "m.npz").write_bytes(npz(ITEMS, 6, 2))
    out = tmp_path / "out"
    assert main(["evaluate", "--reference-emb", str(tmp_path / "ref.npz"), "--emb", f"m={tmp_path / 'm.npz'}",
                 "--metrics", "ndcg", "--k", "5", "--agreement-pairs", "--out", str(out)]) == 0
    cli = json.loads((out / "report.json").read_text())["metadata"]["similarity_agreement"]["m"]
    ref, model = load_embeddings(tmp_path / "ref.npz"), load_embeddings(tmp_path / "m.npz")
    api = similarity_agreement(ref.vectors, model.vectors)  # the function behind every surface, at its defaults
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(5,), metrics=("ndcg",))),
                            W.Blob.of("ref.npz", (tmp_path / "ref.npz").read_bytes()), kind="reference")
    ws, _ = W.add_embedding_run(ws, W.Blob.of("m.npz", (tmp_path / "m.npz").read_bytes()), name="m")
    shown = A.similarity(context(ws))  # the Agreement page's table
    assert shown.ok, shown.error
    row = shown.value.set_index("model").loc["m"]
    for got in (cli, row):
        assert (got["spearman"], got["mae"], got["n_pairs"]) == (api["spearman"], api["mae"], api["n_pairs"])


# ------------------------------------------------------------------------------------------ fusion weight search


def _trials(frame: pd.DataFrame) -> np.ndarray:
    return frame[["weight:a", "weight:b", "value"]].to_numpy(dtype=float)


def test_weight_search_api_cli_dashboard(files):
    qrels = load_qrels(files / "qrels.txt")
    runs = {n: load_run(files / f"{n}.trec", name=n) for n in ("a", "b")}
    with pytest.warns(EvalcoreWarning, match="overfit"):  # no split: the defaults of the API and the CLI
        api = search_weights(qrels, runs, metric="ndcg@10", strategy="random")
    trials = files / "trials.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        assert main(["fuse", *run_args(files, ("a", "b")), "--search", "random", "--qrels", str(files / "qrels.txt"),
                     "--search-out", str(trials), "--out", str(files / "fused.trec")]) == 0
    np.testing.assert_array_equal(_trials(read_csv(trials)), _trials(api.trials))
    # the Fusion page with its controls at their defaults (a split of the queries by default, the settings' tie
    # rule): what the command of its caption gives
    ctx = context(snapshot(names=("a", "b")))
    options = dict(strategy="random", step=DEF.FUSION_STEP, n_trials=DEF.FUSION_TRIALS, seed=DEF.SEED,
                   tune_fraction=DEF.DASHBOARD_TUNE_FRACTION, c=60.0, top_n=None, method="rrf", norm="none")
    found = A._found(A._c_weights("same-numbers", ctx.qrels[None], ctx.reference, {n: ctx.runs[n] for n in ("a", "b")},
                                  ctx.settings, "ndcg", 10, options))
    assert found.ok, found.error
    code = R.fusion_command(method="rrf", norm="none", strategy="random", step=DEF.FUSION_STEP,
                            n_trials=DEF.FUSION_TRIALS, seed=DEF.SEED, fraction=DEF.DASHBOARD_TUNE_FRACTION,
                            metric_label="ndcg@10", ties=ctx.settings.ties, rel_threshold=ctx.settings.rel_threshold,
                            c=60.0, top_n=None)
    words = caption_command(code, QRELS=str(files / "qrels.txt"), **{"fused.trec": str(files / "again.trec")})
    words = [w for w in words if w not in ("--run", "NAME=FILE", "...")]
    again = files / "again.csv"
    assert main([*words, *run_args(files, ("a", "b")), "--search-out", str(again)]) == 0
    np.testing.assert_array_equal(_trials(read_csv(again)), _trials(found.value.trials))
    parsed = cli_default("fuse", "--run", "x", "--out", "o")
    assert (DEF.FUSION_TRIALS, DEF.FUSION_STEP, DEF.SEED) == (parsed.trials, parsed.step, parsed.seed)


# ------------------------------------------------------------------------------------------ query sample


def test_query_sample_api_cli_dashboard(files):
    """A guard: the sample was drawn with 42 everywhere already (seed 000's step 3)."""
    out = files / "out"
    assert main(["evaluate", "--qrels", str(files / "qrels.txt"), *run_args(files), "--metrics", "ndcg", "--k", "10",
                 "--n-samples", "6", "--out", str(out)]) == 0
    cli = set(read_per_query_csv(out / "per_query.csv")["query_id"].astype(str))
    api = set(sample_query_ids(load_qrels(files / "qrels.txt").query_ids, 6, W.Settings().seed))
    shown = set(context(snapshot(replace(SETTINGS, sample_size=6))).evaluation.table["query_id"].astype(str))
    assert cli == api == shown and len(cli) == 6

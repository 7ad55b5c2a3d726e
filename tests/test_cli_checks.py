"""What the command line says about its inputs before it reports a test or an agreement (a review's findings).

A run whose query ids do not match, or that answers half the queries, was reported "significantly
worse" without a word; a per_query.csv read back with pandas' default float parser gave another
Wilcoxon p-value than the run files; runs scored against different ground-truth aspects were
tested together; one run gave pandas' "Empty DataFrame"; queries left out by ``--n-samples`` were
called "not in the qrels"; agreement counted unanswered queries as 0 without saying so.
"""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    """200 graded queries and two depth-100 runs (recall@100 has many tied values)."""
    d = tmp_path_factory.mktemp("cli_checks")
    rng = np.random.default_rng(7)
    qids = [f"q{i}" for i in range(200)]
    rel: dict[str, dict[str, int]] = {}
    with open(d / "qrels.txt", "w") as f:
        for q in qids:
            rel[q] = {f"d{x}": int(rng.choice([0, 0, 1, 2, 3])) for x in rng.choice(500, 30, replace=False)}
            f.writelines(f"{q} 0 {doc} {g}\n" for doc, g in rel[q].items())
    paths = {"qrels": d / "qrels.txt"}
    for name, quality, seed in (("bm25", 0.5, 1), ("dense", 0.6, 2)):
        r = np.random.default_rng(seed)
        lines = []
        for q in qids:
            docs = list(dict.fromkeys(list(rel[q])[:15] + [f"d{x}" for x in r.choice(500, 100, replace=False)]))[:100]
            scores = {doc: r.normal() + quality * rel[q].get(doc, 0) for doc in docs}
            lines += [f"{q} Q0 {doc} {i + 1} {s:.6f} {name}\n"
                      for i, (doc, s) in enumerate(sorted(scores.items(), key=lambda x: -x[1]))]
        paths[name] = d / f"{name}.trec"
        paths[name].write_text("".join(lines))
        half = [ln for ln in lines if int(ln.split()[0][1:]) < 100]
        paths[f"{name}_half"] = d / f"{name}_half.trec"
        paths[f"{name}_half"].write_text("".join(half))
        paths[f"{name}_upper"] = d / f"{name}_upper.trec"
        paths[f"{name}_upper"].write_text("".join("Q" + ln[1:] for ln in lines))
    return paths


def _compare(data, *runs: str, extra: tuple[str, ...] = ()) -> list[str]:
    return ["compare", "--qrels", str(data["qrels"]), *[a for r in runs for a in ("--run", r)], *extra]


def test_per_query_csv_gives_the_same_wilcoxon_as_the_run_files(data, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["evaluate", "--qrels", str(data["qrels"]), "--run", f"bm25={data['bm25']}", "--run",
                 f"dense={data['dense']}", "--metrics", "recall", "--k", "100", "--out", str(out)]) == 0
    written = pd.read_csv(out / "per_query.csv", float_precision="round_trip")["value"].to_numpy()
    default = pd.read_csv(out / "per_query.csv")["value"].to_numpy()
    assert (written != default).any()  # the default parser moves some values: the case this test is about
    table = tmp_path / "a.csv"
    table2 = tmp_path / "b.csv"
    assert main(_compare(data, f"bm25={data['bm25']}", f"dense={data['dense']}",
                         extra=("--metric", "recall@100", "--test", "wilcoxon", "--out", str(table)))) == 0
    assert main(["compare", "--per-query", str(out / "per_query.csv"), "--metric", "recall@100", "--test",
                 "wilcoxon", "--out", str(table2)]) == 0
    a, b = pd.read_csv(table), pd.read_csv(table2)
    assert a["p_value"].tolist() == b["p_value"].tolist() and a["ties"].tolist() == b["ties"].tolist()


def test_compare_warns_about_partial_and_no_coverage(data, capsys):
    assert main(_compare(data, f"bm25={data['bm25']}", f"dense={data['dense_half']}")) == 0
    err = capsys.readouterr().err
    assert ("warning: run 'dense' answers 100/200 (50%) of the ground-truth queries, below the 90% the dashboard "
            "flags; the other 100 count 0 in its values and tests") in err
    assert main(_compare(data, f"bm25={data['bm25']}", f"dense={data['dense_upper']}")) == 0
    err = capsys.readouterr().err
    assert ("warning: run 'dense' answers none of the 200 ground-truth queries (its query ids look like 'Q0', 'Q1'; "
            "the ground truth's like 'q0', 'q1'): every value is 0") in err
    assert main(["evaluate", "--qrels", str(data["qrels"]), "--run", f"dense={data['dense_upper']}"]) == 0
    assert "answers none of the 200 ground-truth queries" in capsys.readouterr().err
    assert main(_compare(data, f"bm25={data['bm25']}", f"dense={data['dense']}")) == 0
    assert "warning" not in capsys.readouterr().err  # full coverage: nothing to say


def test_compare_needs_two_runs_and_a_known_baseline(data, capsys):
    assert main(_compare(data, f"bm25={data['bm25']}")) == 2
    assert "error: compare needs at least two runs, got 1: ['bm25']" in capsys.readouterr().err
    assert main(_compare(data, f"bm25={data['bm25']}", f"dense={data['dense']}", extra=("--baseline", "zz"))) == 2
    assert "--baseline 'zz' is not a run; the runs are ['bm25', 'dense']" in capsys.readouterr().err
    assert main(_compare(data, f"bm25={data['bm25']}", f"dense={data['dense']}")) == 0
    assert "across 1 comparison," in capsys.readouterr().out


def test_compare_tests_runs_of_one_aspect_only(tmp_path, capsys):
    """Seed 001's ordered lists have one ground truth per aspect: a paired difference of two runs scored
    against different aspects means nothing, so only runs of one aspect are compared."""
    seed001 = ROOT / "tests" / "fixtures" / "seed001_movies.json"
    ids = [m["movie_id"] for m in json.loads(seed001.read_text())]
    rng = np.random.default_rng(0)
    specs = []
    for name in ("a", "b", "c"):
        path = tmp_path / f"{name}.trec"
        path.write_text("".join(f"{q} Q0 {d} 1 {rng.random():.6f} {name}\n" for q in ids for d in ids if d != q))
        specs += ["--run", f"{name}={path}"]
    base = ["compare", "--qrels", str(seed001), *specs, "--metric", "ndcg@3", "--out", str(tmp_path / "c.csv")]
    assert main([*base, "--aspect", "a=content", "--aspect", "b=content", "--aspect", "overall"]) == 0
    err = capsys.readouterr().err
    assert ("different ground-truth aspects (5_most_similar_movies_content_ordered: a, b; "
            "5_most_similar_movies_overall_ordered: c): only runs of one aspect are compared") in err
    pairs = pd.read_csv(tmp_path / "c.csv")[["run_a", "run_b"]].values.tolist()
    assert pairs == [["a", "b"]]
    # the same field typed two ways is one aspect
    assert main([*base, "--aspect", "a=content", "--aspect", "b=CONTENT", "--aspect", "c=content"]) == 0
    assert "different ground-truth aspects" not in capsys.readouterr().err
    assert main([*base, "--aspect", "a=content", "--aspect", "overall", "--baseline", "b"]) == 0
    assert "not compared with the baseline: a" in capsys.readouterr().err
    assert pd.read_csv(tmp_path / "c.csv")[["run_a", "run_b"]].values.tolist() == [["b", "c"]]
    assert main([*base, "--aspect", "a=content", "--aspect", "b=vibes", "--aspect", "overall"]) == 2
    assert "no two runs are scored against the same ground-truth aspect" in capsys.readouterr().err


def test_queries_left_out_by_the_sample_are_not_called_missing_from_the_qrels(data, capsys):
    assert main(["evaluate", "--qrels", str(data["qrels"]), "--run", f"bm25={data['bm25']}", "--n-samples", "20"]) == 0
    out = capsys.readouterr().out
    assert "bm25: 20 queries evaluated; 180 run queries not in the sample of 20 (ignored)" in out
    assert "not in the qrels" not in out


def test_a_sample_larger_than_the_queries_says_every_query_is_evaluated(data, capsys):
    base = ["evaluate", "--qrels", str(data["qrels"]), "--run", f"bm25={data['bm25']}", "--n-samples"]
    assert main([*base, "5000"]) == 0
    captured = capsys.readouterr()
    assert "warning: --n-samples 5,000 is more than the 200 queries of the ground truth: every one is evaluated" \
        in captured.err
    assert "bm25: 200 queries evaluated" in captured.out
    assert main([*base, "200"]) == 0  # exactly all: nothing to say
    assert "--n-samples" not in capsys.readouterr().err


def test_agree_says_which_runs_lack_queries(data, capsys):
    assert main(["agree", "--run", f"bm25={data['bm25']}", "--run", f"dense={data['dense_half']}",
                 "--measures", "overlap", "--k", "10"]) == 0
    err = capsys.readouterr().err
    assert "warning: agreement: of the 200 queries, run 'dense' lacks 100; there a run counts as an empty list" in err
    assert "do their query ids match" not in err
    assert main(["agree", "--run", f"bm25={data['bm25']}", "--run", f"dense={data['dense_upper']}",
                 "--measures", "overlap", "--k", "10"]) == 0
    err = capsys.readouterr().err
    assert "run 'bm25' lacks 200, run 'dense' lacks 200" in err and "no query is listed by every run" in err
    assert main(["agree", "--run", f"bm25={data['bm25']}", "--run", f"dense={data['dense']}",
                 "--measures", "overlap", "--k", "10"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_results_csv_keeps_the_metrics_without_a_cutoff_in_the_row_k_0(data, tmp_path):
    out = tmp_path / "out"
    assert main(["evaluate", "--qrels", str(data["qrels"]), "--run", f"bm25={data['bm25']}", "--metrics", "ndcg",
                 "map@all", "bpref", "first_rel_rank", "--k", "2", "10", "--out", str(out)]) == 0
    res = pd.read_csv(out / "bm25_results.csv", float_precision="round_trip").set_index("k")
    assert list(res.columns) == ["ndcg_mean", "ndcg_std", "map_mean", "map_std", "bpref_mean", "bpref_std",
                                 "first_rel_rank_mean", "first_rel_rank_std"]  # the order asked for
    assert list(res.index) == [0, 2, 10] and res.loc[0, ["ndcg_mean"]].isna().all()
    pq = pd.read_csv(out / "per_query.csv", float_precision="round_trip")
    for metric in ("map", "bpref", "first_rel_rank", "ndcg"):
        for k, rows in pq[pq["metric"] == metric].groupby("k"):
            assert res.loc[k, f"{metric}_mean"] == pytest.approx(rows["value"].mean(), rel=1e-12, abs=0)
    assert main(["evaluate", "--qrels", str(data["qrels"]), "--run", f"bm25={data['bm25']}", "--metrics", "bpref",
                 "--out", str(out)]) == 0
    only = pd.read_csv(out / "bm25_results.csv")
    assert list(only.columns) == ["k", "bpref_mean", "bpref_std"] and only["k"].tolist() == [0]


def test_a_sampled_fusion_does_not_say_its_embedding_input_lacks_the_unsampled_queries(data, tmp_path, capsys):
    """With --n-samples the embedding run ranks the sampled queries only; the fusion is of those queries
    (each query is fused on its own), so nothing "lacks" the others and the fused values are unchanged."""
    rng = np.random.default_rng(3)
    docs, queries = tmp_path / "docs.npz", tmp_path / "queries.npz"
    np.savez(docs, ids=np.array([f"d{i}" for i in range(500)]), embeddings=rng.normal(size=(500, 8)).astype("f4"))
    np.savez(queries, ids=np.array([f"q{i}" for i in range(200)]), embeddings=rng.normal(size=(200, 8)).astype("f4"))
    base = ["evaluate", "--qrels", str(data["qrels"]), "--emb", f"e={docs},{queries}", "--run", f"bm25={data['bm25']}",
            "--fuse", "f=e:1,bm25:1", "--metrics", "ndcg", "--k", "10", "--ties", "docid_asc"]
    assert main([*base, "--n-samples", "20", "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert "lacks" not in err
    assert main([*base, "--out", str(tmp_path / "all")]) == 0
    capsys.readouterr()
    read = [pd.read_csv(tmp_path / d / "per_query.csv", dtype={"query_id": str}, float_precision="round_trip")
            for d in ("s", "all")]
    sampled, full = (t[t["run"] == "f"].set_index("query_id")["value"] for t in read)
    assert len(sampled) == 20
    assert sampled.to_dict() == full.loc[sampled.index].to_dict()


def test_judged_only_diversity_is_on_the_lists_ndcg_scores(data, tmp_path):
    """evaluate --diversity -J: α-nDCG@k on the judged-only lists, so never above nDCG@k (linear gains)."""
    rng = np.random.default_rng(5)
    docs, queries = tmp_path / "docs.npz", tmp_path / "queries.npz"
    np.savez(docs, ids=np.array([f"d{i}" for i in range(500)]), embeddings=rng.normal(size=(500, 8)).astype("f4"))
    np.savez(queries, ids=np.array([f"q{i}" for i in range(200)]), embeddings=rng.normal(size=(200, 8)).astype("f4"))
    wides = []
    for flag in ([], ["-J"]):
        out = tmp_path / f"out{len(flag)}"
        assert main(["evaluate", "--qrels", str(data["qrels"]), "--emb", f"e={docs},{queries}", "--metrics", "ndcg",
                     "--k", "5", "10", "--diversity", *flag, "--ties", "docid_asc", "--out", str(out)]) == 0
        pq = pd.read_csv(out / "per_query.csv", dtype={"query_id": str}, float_precision="round_trip")
        wides.append(pq.pivot_table(index=["query_id", "k"], columns="metric", values="value"))
    name = next(c for c in wides[1].columns if c.startswith("alpha_ndcg"))
    for wide in wides:
        assert (wide[name] <= wide["ndcg"] + 1e-12).all()
    # -J lifts nDCG (unjudged documents removed); α-nDCG follows it instead of staying on the full lists
    assert (wides[1]["ndcg"] > wides[0]["ndcg"]).any() and (wides[1][name] > wides[0][name]).any()


def _diversity_at(data, tmp_path, *extra) -> tuple[int, pd.DataFrame | None]:
    rng = np.random.default_rng(6)
    docs, queries = tmp_path / "docs.npz", tmp_path / "queries.npz"
    np.savez(docs, ids=np.array([f"d{i}" for i in range(500)]), embeddings=rng.normal(size=(500, 8)).astype("f4"))
    np.savez(queries, ids=np.array([f"q{i}" for i in range(200)]), embeddings=rng.normal(size=(200, 8)).astype("f4"))
    out = tmp_path / ("out" + "_".join(extra).replace("-", ""))
    code = main(["evaluate", "--qrels", str(data["qrels"]), "--emb", f"e={docs},{queries}", "--metrics", "ndcg",
                 "--k", "10", *extra, "--ties", "docid_asc", "--out", str(out)])
    if code:
        return code, None
    pq = pd.read_csv(out / "per_query.csv", dtype={"query_id": str}, float_precision="round_trip")
    return code, pq.pivot_table(index="query_id", columns="metric", values="value")


def test_diversity_alpha_names_the_metric_and_moves_it_between_novelty_and_ndcg(data, tmp_path):
    """--diversity-alpha A: alpha_ndcg(alpha=A); 1 gives nDCG itself, and a smaller α never scores higher."""
    by_alpha = {a: _diversity_at(data, tmp_path, "--diversity", "--diversity-alpha", a)[1] for a in ("0.2", "0.8", "1")}
    assert "alpha_ndcg(alpha=0.2)" in by_alpha["0.2"].columns and "alpha_ndcg(alpha=0.5)" not in by_alpha["0.2"]
    np.testing.assert_allclose(by_alpha["1"]["alpha_ndcg(alpha=1)"], by_alpha["1"]["ndcg"], rtol=1e-12, atol=0)
    low, high = by_alpha["0.2"]["alpha_ndcg(alpha=0.2)"], by_alpha["0.8"]["alpha_ndcg(alpha=0.8)"]
    assert (low <= high + 1e-12).all() and (low < high).any()
    default = _diversity_at(data, tmp_path, "--diversity")[1]
    assert "alpha_ndcg(alpha=0.5)" in default.columns


@pytest.mark.parametrize("extra,needle", [
    (["--diversity", "--diversity-alpha", "1.5"], "must be in [0, 1], got 1.5"),
    (["--diversity", "--diversity-alpha", "nan"], "must be in [0, 1]"),
    (["--diversity-alpha", "0.3"], "add --diversity"),
])
def test_diversity_alpha_is_checked_before_any_work(data, tmp_path, capsys, extra, needle):
    from evalcore.cli import inputs

    with mock.patch.object(inputs, "evaluate_from_args", side_effect=AssertionError("work started")):
        code, _ = _diversity_at(data, tmp_path, *extra)
    assert code == 2 and needle in capsys.readouterr().err


def test_names_and_paths_may_hold_an_equals_sign(data, tmp_path, capsys):
    """--run NAME=FILE splits where FILE exists: 'a=b=run' names the run 'a=b', and 'x=dir/lr=0.1/run' or a bare
    'dir/lr=0.1/run' reads that file (the first '=' split both wrongly: 'file not found')."""
    folder = tmp_path / "lr=0.1"
    folder.mkdir()
    run = folder / "run.trec"
    run.write_bytes(Path(data["bm25"]).read_bytes())
    for spec, name in ((f"a=b={run}", "a=b"), (f"x={run}", "x"), (str(run), "bm25")):  # bare: its TREC tag
        out = tmp_path / f"o{abs(hash(spec))}"
        assert main(["evaluate", "--qrels", str(data["qrels"]), "--run", spec, "--metrics", "ndcg", "--k", "5",
                     "--out", str(out)]) == 0, capsys.readouterr().err
        pq = pd.read_csv(out / "per_query.csv")
        assert set(pq["run"].astype(str)) == {name}
    assert main(["evaluate", "--qrels", str(data["qrels"]), "--run", f"a=b={tmp_path}/missing.trec"]) == 2
    assert "b=" in capsys.readouterr().err  # none exists: the first '=' splits, and the reader names that file


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_no_query_can_be_evaluated_is_an_error_with_the_reason(tmp_path, capsys, command):
    """Every grade below the threshold and such queries skipped: evaluate printed '0 queries evaluated' and wrote
    empty files with exit 0; compare said 'needs at least two runs, got 0' though two were given."""
    (tmp_path / "q.txt").write_text("q1 0 d1 0\nq2 0 d3 0\n")
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 2.0 a\nq2 Q0 d3 1 3.0 a\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d2 1 2.0 b\nq2 Q0 d3 1 3.0 b\n")
    extra = ["--out", str(tmp_path / "out")] if command == "evaluate" else []
    code = main([command, "--qrels", str(tmp_path / "q.txt"), "--run", f"A={tmp_path / 'a.trec'}",
                 "--run", f"B={tmp_path / 'b.trec'}", "--no-relevant", "skip", *extra])
    err = capsys.readouterr().err
    assert code == 2 and "error: no query can be evaluated: none of the 2 ground-truth queries has a relevant " \
                         "document (grade ≥ 1), and queries without one are skipped" in err, err
    assert not (tmp_path / "out").exists()
    assert main([command, "--qrels", str(tmp_path / "q.txt"), "--run", f"A={tmp_path / 'a.trec'}",
                 "--run", f"B={tmp_path / 'b.trec'}", *extra]) == 0  # scored 0 instead (the default): fine


@pytest.mark.parametrize("args, message", [
    (["evaluate", "--report-depth", "-1"], "argument --report-depth: must be >= 0, got -1"),
    (["evaluate", "--n-samples", "0"], "argument --n-samples: must be >= 1, got 0"),
    (["compare", "--n-samples", "0"], "argument --n-samples: must be >= 1, got 0"),
    (["compare", "--n-samples", "x"], "argument --n-samples: 'x' is not an integer"),
])
def test_counts_out_of_range_are_refused(tmp_path, capsys, args, message):
    """--report-depth -1 and --n-samples 0 were accepted without a word."""
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 2.0 a\n")
    with pytest.raises(SystemExit) as stop:
        main([*args, "--qrels", str(tmp_path / "q.txt"), "--run", f"A={tmp_path / 'a.trec'}"])
    assert stop.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("emb_names, run_name, message", [
    (["m", "m"], "bm25", "two --emb runs are named 'm'"),
    (["m", "bm25"], "bm25", "run names used twice (--run and --emb): ['bm25']"),
])
def test_emb_names_used_twice_are_refused_before_any_ranking(tmp_path, capsys, monkeypatch, emb_names, run_name,
                                                             message):
    """The second --emb of a name was refused only after the first was ranked (minutes on a large corpus)."""
    from evalcore.cli import inputs

    rng = np.random.default_rng(0)
    np.savez(tmp_path / "docs.npz", ids=np.array([f"d{i}" for i in range(5)]), embeddings=rng.normal(size=(5, 4)))
    np.savez(tmp_path / "queries.npz", ids=np.array(["q1"]), embeddings=rng.normal(size=(1, 4)))
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 2.0 r\n")

    def never(*a, **k):
        raise AssertionError("ranked before the names were checked")

    monkeypatch.setattr(inputs, "embedding_run", never)
    embs = [x for n in emb_names for x in ("--emb", f"{n}={tmp_path / 'docs.npz'},{tmp_path / 'queries.npz'}")]
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", f"{run_name}={tmp_path / 'r.trec'}",
                 *embs]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["evaluate", "compare", "fuse", "agree"])
def test_every_run_option_says_how_a_bare_file_is_named(command, capsys):
    """`--run FILE` without NAME= works everywhere (named by its TREC tag, else its file stem), which no help said."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--run [NAME=]FILE" in help_text and "a bare FILE is named by its TREC run tag, else its file stem" in help_text


def test_a_bare_table_run_is_named_by_its_file_stem(tmp_path, capsys):
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "dense_v2.csv").write_text("query_id,doc_id,score\nq1,d1,2.0\n")
    out = tmp_path / "out"
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "dense_v2.csv"),
                 "--metrics", "ndcg", "--k", "5", "--out", str(out)]) == 0, capsys.readouterr().err
    assert set(pd.read_csv(out / "per_query.csv")["run"].astype(str)) == {"dense_v2"}

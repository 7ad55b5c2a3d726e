"""Command line of issue 11 items 8-10: ``fuse --method/--norm/--search``, ``agree``, ``compare --hsd``.

Each command's output equals the library call it stands for; bad combinations end
with one ``error:`` line and exit status 2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore import Qrels, Run, evaluate
from evalcore.agreement import agreement, summarize_agreement
from evalcore.cli import main
from evalcore.errors import OptionError
from evalcore.fusion import fuse
from evalcore.fusion_search import search_weights
from evalcore.io import load_qrels
from evalcore.io.trec import read_trec_run, write_trec_qrels, write_trec_run
from evalcore.stats import tukey_hsd


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(11)
    judg = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(40, 8, replace=False)} for i in range(30)}
    paths = {"qrels": tmp_path / "qrels.txt"}
    write_trec_qrels(Qrels.from_dict(judg), paths["qrels"])
    for name in ("a", "b", "c"):
        res = {f"q{i}": {f"d{j}": float(rng.normal()) for j in rng.choice(40, 20, replace=False)} for i in range(30)}
        paths[name] = tmp_path / f"{name}.trec"
        write_trec_run(Run.from_dict(res, name=name), paths[name])
    return paths


def runs_of(files: dict[str, Path]) -> dict[str, Run]:
    return {n: read_trec_run(files[n], name=n) for n in ("a", "b", "c")}


def run_args(files: dict[str, Path]) -> list[str]:
    return [x for n in ("a", "b", "c") for x in ("--run", f"{n}={files[n]}")]


def assert_runs_equal(got: Run, expected: Run) -> None:
    g, e = got.to_dict(), expected.to_dict()
    assert g.keys() == e.keys()
    for q in e:
        assert g[q].keys() == e[q].keys()
        for d, v in e[q].items():
            assert g[q][d] == pytest.approx(v, rel=1e-15, abs=1e-300)


@pytest.mark.parametrize("method, norm", [("combmnz", "min-max"), ("wsum", "z-score"), ("bordafuse", "none"),
                                          ("isr", "none"), ("sum", "rank")])
def test_fuse_method_and_norm(files, tmp_path, method, norm, capsys):
    out = tmp_path / "f.trec"
    weights = ["--weight", "a=2"] if method == "wsum" else []
    assert main(["fuse", *run_args(files), "--method", method, "--norm", norm, *weights, "--top-n", "15",
                 "--out", str(out)]) == 0
    expected = fuse(runs_of(files), method=method, norm=norm, weights={"a": 2.0} if weights else None, top_n=15)
    assert_runs_equal(read_trec_run(out), expected)
    assert f"norm {norm}" in capsys.readouterr().out


def test_fuse_weight_search_with_split(files, tmp_path, capsys):
    out, trials = tmp_path / "f.trec", tmp_path / "trials.csv"
    args = ["fuse", *run_args(files), "--method", "wsum", "--norm", "min-max", "--search", "random", "--trials",
            "8", "--seed", "3", "--qrels", str(files["qrels"]), "--metric", "ndcg@10", "--tune-fraction", "0.5",
            "--out", str(out), "--search-out", str(trials)]  # fmt: skip
    assert main(args) == 0
    text, err = capsys.readouterr()
    res = search_weights(load_qrels(files["qrels"]), runs_of(files), metric="ndcg@10", method="wsum", norm="min-max",
                         strategy="random", n_trials=8, seed=3, tune_fraction=0.5)  # fmt: skip
    assert "held-out" in text and f"{res.value_test:.4f}" in text and "overfit" not in err
    assert_runs_equal(read_trec_run(out), fuse(runs_of(files), method="wsum", norm="min-max", weights=res.weights))
    got = pd.read_csv(trials, float_precision="round_trip")
    assert np.array_equal(got["value"].to_numpy(), res.trials["value"].to_numpy())
    assert np.array_equal(got.filter(like="weight:").to_numpy(), res.trials.filter(like="weight:").to_numpy())
    # the same command again gives the same file (seeded)
    first = out.read_text()
    assert main(args) == 0 and out.read_text() == first


def test_fuse_weight_search_without_split_warns(files, tmp_path, capsys):
    assert main(["fuse", *run_args(files), "--search", "grid", "--step", "0.5", "--qrels", str(files["qrels"]),
                 "--metric", "recall@5", "--out", str(tmp_path / "f.trec")]) == 0
    out, err = capsys.readouterr()
    assert "optimistic" in out
    assert "warning: fusion weights tuned on the evaluated queries overfit" in err


@pytest.mark.parametrize("extra, fragment", [
    (["--search", "grid"], "--search needs --qrels"),
    (["--search", "grid", "--qrels", "QRELS", "--weight", "a=1"], "either --weight or --search"),
    (["--method", "isr", "--norm", "min-max"], "fuses ranks"),
    (["--method", "combsum", "--weight", "a=1"], "takes no weights"),
    (["--method", "condorcet"], "unknown fusion method"),
    (["--search", "grid", "--qrels", "QRELS", "--method", "combmnz"], "weights only act"),
])  # fmt: skip
def test_fuse_bad_options_are_one_line_errors(files, tmp_path, capsys, extra, fragment):
    extra = [str(files["qrels"]) if x == "QRELS" else x for x in extra]
    assert main(["fuse", *run_args(files), *extra, "--out", str(tmp_path / "f.trec")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and fragment in err[0]


def test_agree_writes_the_library_tables(files, tmp_path, capsys):
    out, summ = tmp_path / "agree.csv", tmp_path / "summary.csv"
    assert main(["agree", *run_args(files), "--k", "5", "0", "--p", "0.8", "--out", str(out),
                 "--summary-out", str(summ)]) == 0
    text = capsys.readouterr().out
    assert "rbo(p=0.8)@5" in text and "kendall_tau@all" in text
    lib = agreement(runs_of(files), k=[5, 0], p=0.8)
    got = pd.read_csv(out, dtype={"query_id": str}, float_precision="round_trip")
    assert list(got.columns) == list(lib.columns) and len(got) == len(lib)
    assert np.array_equal(got["value"].to_numpy(), lib["value"].to_numpy(), equal_nan=True)
    assert (got["query_id"].to_numpy() == lib["query_id"].astype(str).to_numpy()).all()
    s = pd.read_csv(summ, float_precision="round_trip")
    assert np.allclose(s["mean"], summarize_agreement(lib)["mean"], equal_nan=True, rtol=0, atol=0)


def test_agree_needs_two_runs(files, capsys):
    assert main(["agree", "--run", f"a={files['a']}"]) == 2
    assert "at least two" in capsys.readouterr().err


def test_compare_hsd(files, tmp_path, capsys):
    out = tmp_path / "hsd.csv"
    assert main(["compare", "--qrels", str(files["qrels"]), *run_args(files), "--metric", "ndcg@10",
                 "--hsd", "paired", "--hsd-out", str(out), "--n-resamples", "100"]) == 0
    assert "Tukey's HSD (paired design)" in capsys.readouterr().out
    ev = evaluate(load_qrels(files["qrels"]), runs_of(files), metrics=["ndcg"], k=[10])
    lib = tukey_hsd(ev.table, metric="ndcg", k=10, runs=["a", "b", "c"])
    got = pd.read_csv(out, float_precision="round_trip")
    assert list(got.columns) == list(lib.columns)
    assert np.array_equal(got["p_value"].to_numpy(), lib["p_value"].to_numpy())
    assert main(["compare", "--qrels", str(files["qrels"]), *run_args(files), "--hsd-out", str(out)]) == 2


def test_fuse_depth_is_checked_and_the_documents_written_are_counted(files, tmp_path, capsys):
    """--depth 0 and -1 wrote an empty file with exit 0 and 'N documents' of the whole fusion; --depth 1 also
    said the whole count; one --run was accepted though the help says two or more."""
    out = tmp_path / "f.trec"
    for bad in ("0", "-1"):
        assert main(["fuse", *run_args(files), "--depth", bad, "--out", str(out)]) == 2
        assert f"--depth must be >= 1, got {bad}" in capsys.readouterr().err and not out.exists()
    assert main(["fuse", "--run", f"a={files['a']}", "--out", str(out)]) == 2
    assert "fuse needs two or more --run, got 1" in capsys.readouterr().err
    assert main(["fuse", *run_args(files), "--depth", "3", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 30 * 3 and "30 queries, 90 documents" in capsys.readouterr().out
    with pytest.raises(OptionError, match="depth must be an integer >= 1"):
        write_trec_run(read_trec_run(files["a"], name="a"), tmp_path / "x.trec", depth=0)


def test_fuse_search_on_gm_map_says_its_scale_and_equal_trials_warn(files, tmp_path, capsys):
    """gm_map's searched mean is a mean of ln(AP): it was printed as 'gm_map: -0.4377', beside evaluate's
    geometric mean; the geometric mean is now printed with it. Judgments that tell no trial apart warn."""
    assert main(["fuse", *run_args(files), "--search", "grid", "--step", "0.5", "--qrels", str(files["qrels"]),
                 "--metric", "gm_map", "--tune-fraction", "0.5", "--search-out", str(tmp_path / "t.csv"),
                 "--out", str(tmp_path / "f.trec")]) == 0
    out = capsys.readouterr().out
    trials = pd.read_csv(tmp_path / "t.csv")
    v = float(trials.loc[trials["best"], "value"].iloc[0])
    assert f"gm_map: {v:.4f} (mean of ln AP; geometric mean AP {np.exp(v):.4f}) on the " in out and v < 0
    zero = tmp_path / "zero.txt"
    zero.write_text("".join(f"q{i} 0 d{i} 0\n" for i in range(30)))  # no relevant document anywhere
    assert main(["fuse", *run_args(files), "--search", "grid", "--step", "0.5", "--qrels", str(zero),
                 "--metric", "ndcg@10", "--out", str(tmp_path / "g.trec")]) == 0
    assert "warning: every trial gives the same mean ndcg@10 (0) on the tuning queries" in capsys.readouterr().err


def test_agree_refuses_one_file_for_the_table_and_the_summary(files, tmp_path, capsys):
    same = tmp_path / "x.csv"
    assert main(["agree", *run_args(files), "--out", str(same), "--summary-out", str(tmp_path / "." / "x.csv")]) == 2
    assert "--out and --summary-out are one file" in capsys.readouterr().err and not same.exists()


def _two_aspect_lists(tmp_path: Path) -> Path:
    """A seed-001 ground truth with two ordered lists (aspects) over the runs' queries and documents."""
    import json

    ids = [f"m{i}" for i in range(12)]
    rng = np.random.default_rng(5)
    rows = [{"movie_id": q, **{f"5_most_similar_movies_{a}_ordered": [str(x) for x in rng.permutation(
        [i for i in ids if i != q])[:5]] for a in ("overall", "content")}} for q in ids]  # fmt: skip
    path = tmp_path / "movies.json"
    path.write_text(json.dumps(rows))
    return path


def _item_runs(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(6)
    ids = [f"m{i}" for i in range(12)]
    paths = {}
    for name in ("a", "b"):
        res = {q: {d: float(rng.normal()) for d in ids if d != q} for q in ids}
        paths[name] = tmp_path / f"{name}.trec"
        write_trec_run(Run.from_dict(res, name=name), paths[name])
    return paths


def test_fuse_search_and_agree_take_the_aspect_of_a_ground_truth_with_several(tmp_path, capsys):
    # seed 001's user: a weight search against the overall list of a file with several; before, fuse and agree had
    # no --aspect, so such a file could not be searched on (or compared on) from the command line at all
    gt, runs = _two_aspect_lists(tmp_path), _item_runs(tmp_path)
    run_args_ = [f"--run={n}={p}" for n, p in runs.items()]
    out = tmp_path / "f.trec"
    assert main(["fuse", *run_args_, "--search", "grid", "--step", "0.25", "--qrels", str(gt), "--aspect", "content",
                 "--metric", "ndcg@5", "--tune-fraction", "0.5", "--out", str(out)]) == 0  # fmt: skip
    text = capsys.readouterr().out
    loaded = {n: read_trec_run(p, name=n) for n, p in runs.items()}
    res = search_weights(load_qrels(gt, aspect="content"), loaded, metric="ndcg@5", strategy="grid", step=0.25,
                         tune_fraction=0.5)  # fmt: skip
    assert f"{res.value_test:.4f} on the {len(res.test_queries)} held-out" in text
    assert_runs_equal(read_trec_run(out), fuse(loaded, weights=res.weights))
    summ = tmp_path / "s.csv"
    assert main(["agree", *run_args_, "--qrels", str(gt), "--aspect", "overall", "--k", "5",
                 "--summary-out", str(summ)]) == 0  # fmt: skip
    capsys.readouterr()
    lib = agreement(loaded, k=[5], query_ids=[str(q) for q in load_qrels(gt, aspect="overall").query_ids])
    assert np.allclose(pd.read_csv(summ, float_precision="round_trip")["mean"], summarize_agreement(lib)["mean"], equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("cmd, extra, fragment", [
    ("fuse", ["--aspect", "overall", "--out", "OUT"], "--aspect is only used by --search"),
    ("agree", ["--aspect", "overall"], "--aspect needs --qrels"),
])  # fmt: skip
def test_aspect_without_its_ground_truth_is_one_line_error(tmp_path, capsys, cmd, extra, fragment):
    runs = _item_runs(tmp_path)
    extra = [str(tmp_path / "f.trec") if x == "OUT" else x for x in extra]
    assert main([cmd, *[f"--run={n}={p}" for n, p in runs.items()], *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0]


@pytest.mark.parametrize("cmd", ["evaluate", "fuse", "agree"])
def test_several_aspects_without_one_name_the_command_line_option(tmp_path, capsys, cmd):
    # the message named only the Python keyword (aspect=), which a command-line user cannot give
    gt, runs = _two_aspect_lists(tmp_path), _item_runs(tmp_path)
    extra = {"evaluate": ["--metrics", "ndcg", "--k", "5"], "agree": [],
             "fuse": ["--search", "grid", "--out", str(tmp_path / "f.trec")]}[cmd]
    assert main([cmd, *[f"--run={n}={p}" for n, p in runs.items()], "--qrels", str(gt), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2 ordered lists" in err[0] and "--aspect" in err[0]


@pytest.mark.parametrize("cmd, extra", [("evaluate", ["--metrics", "ndcg", "--k", "5"]),
                                        ("compare", ["--metric", "ndcg@5"])])  # fmt: skip
def test_a_run_left_without_aspect_among_runs_given_one_is_named(tmp_path, capsys, cmd, extra):
    # seed 001's user gives --aspect to each space but forgets the fused run's: the error said only 'choose one
    # with aspect=', not which run lacked one
    gt, runs = _two_aspect_lists(tmp_path), _item_runs(tmp_path)
    given = [f"--run={n}={p}" for n, p in runs.items()]
    assert main([cmd, *given, "--qrels", str(gt), "--aspect", "a=overall", "--fuse", "mix=a,b", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no --aspect for runs 'b', 'mix'" in err[0] and "--aspect NAME=ASPECT" in err[0]
    assert main([cmd, *given, "--qrels", str(gt), "--aspect", "a=overall", "--aspect", "overall", *extra]) == 0


def test_evaluate_says_each_runs_aspect_when_they_differ(tmp_path, capsys):
    # the printed table put a run judged on overall next to one judged on content with nothing telling them apart
    # (report.json had it; the screen did not)
    gt, runs = _two_aspect_lists(tmp_path), _item_runs(tmp_path)
    given = [f"--run={n}={p}" for n, p in runs.items()]
    assert main(["evaluate", *given, "--qrels", str(gt), "--aspect", "a=overall", "--aspect", "b=content",
                 "--metrics", "ndcg", "--k", "5"]) == 0  # fmt: skip
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("ground-truth aspect of each run")]
    assert len(lines) == 1 and "a: 5_most_similar_movies_overall_ordered" in lines[0] and (
        "b: 5_most_similar_movies_content_ordered" in lines[0])  # fmt: skip
    assert main(["evaluate", *given, "--qrels", str(gt), "--aspect", "overall", "--metrics", "ndcg", "--k", "5"]) == 0
    assert "ground-truth aspect of each run" not in capsys.readouterr().out  # one aspect: nothing to tell apart


def test_a_run_listing_each_querys_own_item_is_said_once(tmp_path, capsys):
    # seed 001's user made each space's neighbours with topk (without --exclude-self, its default): every list began
    # with the movie itself, ndcg fell (0.609 -> 0.414 on a tour's data) and nothing said why
    import warnings

    from evalcore.errors import EvalcoreWarning

    gt, runs = _two_aspect_lists(tmp_path), _item_runs(tmp_path)
    loaded = read_trec_run(runs["a"], name="a")
    with_self = Run.from_dict({q: {q: 99.0, **docs} for q, docs in loaded.to_dict().items()}, name="self")
    path = tmp_path / "self.trec"
    write_trec_run(with_self, path)
    qrels = load_qrels(gt, aspect="overall")
    with pytest.warns(EvalcoreWarning, match=r"run 'self' lists the query's own id in 12 of its 12 lists"):
        evaluate(qrels, {"self": with_self}, metrics=["ndcg"], k=[5])
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalcoreWarning)
        evaluate(qrels, {"a": loaded}, metrics=["ndcg"], k=[5])  # no query lists itself
        # a ground truth whose queries are not items: nothing to say, whatever the run's ids
        evaluate(Qrels.from_dict({"x": {"d1": 1}}), {"r": Run.from_dict({"x": {"x": 1.0, "d1": 0.5}})},
                 metrics=["ndcg"], k=[2])  # fmt: skip
    assert main(["evaluate", "--qrels", str(gt), "--aspect", "overall", "--run", f"self={path}", "--run",
                 f"a={runs['a']}", "--metrics", "ndcg", "--k", "5"]) == 0  # fmt: skip
    err = [x for x in capsys.readouterr().err.splitlines() if "own id" in x]
    assert len(err) == 1 and err[0].startswith("warning: run 'self'") and "--exclude-self" in err[0]
    # a weight search's trial fusions do not repeat it
    assert main(["fuse", "--run", f"self={path}", "--run", f"a={runs['a']}", "--search", "grid", "--step", "0.5",
                 "--qrels", str(gt), "--aspect", "overall", "--metric", "ndcg@5", "--tune-fraction", "0.5",
                 "--out", str(tmp_path / "f.trec")]) == 0  # fmt: skip
    assert "own id" not in capsys.readouterr().err

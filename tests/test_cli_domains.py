"""Per-domain evaluation on the command line (seed 003's "Report per-domain metrics", from a script or CI).

Before, the command line had no per-domain numbers at all: ``evaluate`` and ``compare`` had no ``--domains`` or
``--by-domain`` (argparse refused them), only the dashboard's Domains page and the Python API gave them, and the
page's caption could only name a Python call. Here: golden numbers computed independently with numpy / pandas /
scipy from the per-query table (the per-domain means, the percentile-bootstrap intervals as their definition states,
the paired t-tests and Holm's correction), the domain mapping's per-query override, the error lines, the workspace's
mapping, and the Domains page's "Reproduce with" command run through ``main`` to the page's numbers, bit for bit.
"""

from __future__ import annotations

import shlex
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from test_app import QUERIES, goto, start, trec_qrels, trec_run
from test_same_numbers import RUNS, SETTINGS, read_csv, run_args, same

from dashboard import analysis as A
from dashboard import state as S
from evalcore import workspace as W
from evalcore.cli.domains import PER_DOMAIN_COLUMNS
from evalcore.cli.main import main
from evalcore.errors import EvalcoreWarning

#: each query's own domain in the ground truth (its domain column): two domains of 6, one of 2 (too small to test
#: at the default 5), one query without
OWN = {q: ("legal" if i < 6 else "medical" if i < 12 else "tech" if i < 14 else "") for i, q in enumerate(QUERIES)}
#: a domain mapping over some of them: overrides 4 queries' own domain, gives the domainless one a domain
MAPPING = {"q0": "finance", "q1": "finance", "q6": "finance", "q7": "legal", "q14": "tech", "x99": "nowhere"}


def qrels_csv() -> bytes:
    """trec_qrels() as a graded table with a domain column (seed 003's judgments with a domain per query)."""
    rows = ["query_id,doc_id,relevance,domain"]
    for line in trec_qrels().decode().splitlines():
        q, _, d, g = line.split()
        rows.append(f"{q},{d},{g},{OWN[q]}")
    return ("\n".join(rows) + "\n").encode()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.csv").write_bytes(qrels_csv())
    (tmp_path / "qrels.txt").write_bytes(trec_qrels())  # no domain column
    (tmp_path / "dom.csv").write_text("query_id,domain\n" + "".join(f"{q},{d}\n" for q, d in MAPPING.items()))
    for seed, name in enumerate(RUNS, start=1):
        (tmp_path / f"{name}.trec").write_bytes(trec_run(seed))
    return tmp_path


def evaluate(files, *extra: str, qrels: str = "qrels.csv", out: str = "out") -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        return main(["evaluate", "--qrels", str(files / qrels), *run_args(files), "--metrics", "ndcg", "recall",
                     "num_rel_ret", "--k", "5", "10", "--out", str(files / out), *extra])


# ------------------------------------------------------------------------------------------------ golden numbers


def bootstrap_interval(values: dict[str, float], universe: list[str], *, n_resamples=1000, seed=42):
    """The stated definition, written out: resample b draws len(universe) of the universe's queries (sorted as
    strings) with replacement (numpy's default_rng(seed), blocks of 50 resamples, each ``integers(0, n, (b, n))``);
    the domain's resampled mean is the weighted mean of its queries' values over the draws that hit them (a resample
    hitting none is left out); the interval is the 2.5% and 97.5% quantiles."""
    rng = np.random.default_rng(seed)
    n = len(universe)
    pos = {q: i for i, q in enumerate(sorted(universe))}
    idx = np.array([pos[q] for q in values])
    x = np.array(list(values.values()))
    means = []
    for start_at in range(0, n_resamples, 50):
        draws = rng.integers(0, n, size=(min(50, n_resamples - start_at), n))
        for row in draws:
            w = np.bincount(row, minlength=n)[idx]
            if w.sum():
                means.append((w * x).sum() / w.sum())
    return tuple(np.quantile(means, [0.025, 0.975]))


def test_evaluate_by_domain_gives_each_domains_mean_interval_and_size(files, capsys):
    assert evaluate(files, "--by-domain") == 0
    printed = capsys.readouterr().out
    got = read_csv(files / "out" / "per_domain.csv").fillna({"domain": ""})
    assert tuple(got.columns) == PER_DOMAIN_COLUMNS
    pq = read_csv(files / "out" / "per_query.csv").fillna({"domain": ""})
    assert dict(zip(pq["query_id"], pq["domain"], strict=False)) == OWN  # the ground truth's own domains
    pq["domain"] = pq["domain"].replace("", "(none)")
    assert len(got) == len(pq.groupby(["run", "domain", "metric", "k"]))
    for (metric, k), rows in pq.groupby(["metric", "k"]):
        universe = sorted(set(rows["query_id"]))
        for (run, domain), cell in rows.groupby(["run", "domain"]):
            row = got[(got["run"] == run) & (got["domain"] == domain) & (got["metric"] == metric) & (got["k"] == k)]
            assert len(row) == 1, (run, domain, metric, k)
            row = row.iloc[0]
            v = cell["value"].to_numpy(float)
            assert row["n"] == len(v)
            np.testing.assert_allclose(row["mean"], v.mean(), rtol=0, atol=1e-15)
            if len(v) > 1:
                np.testing.assert_allclose(row["std"], v.std(ddof=1), rtol=0, atol=1e-15)
            if metric == "num_rel_ret":  # a count: its total, without an interval
                assert row["aggregation"] == "sum" and row["aggregate"] == v.sum()
                assert np.isnan(row["aggregate_ci_low"])
                continue
            if len(v) < 2:
                assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
                continue
            lo, hi = bootstrap_interval(dict(zip(cell["query_id"], v, strict=True)), universe)
            np.testing.assert_allclose([row["ci_low"], row["ci_high"]], [lo, hi], rtol=0, atol=1e-14)
            assert (row["aggregate"], row["aggregate_ci_low"]) == (row["mean"], row["ci_low"])
    # printed: the domain sizes (the group "(none)" included) and each run's mean [interval]
    assert "domain sizes (evaluated queries; (none): no domain): legal 6, medical 6, tech 2, (none) 1" in printed
    a_legal = got[(got["run"] == "a") & (got["domain"] == "legal") & (got["metric"] == "ndcg") & (got["k"] == 10)].iloc[0]
    assert f"{a_legal['mean']:.4f} [{a_legal['ci_low']:.4f}, {a_legal['ci_high']:.4f}]" in printed


def test_other_seeds_and_resamples_are_the_flags(files):
    assert evaluate(files, "--by-domain", "--n-resamples", "200", "--seed", "7", "--metrics", "ndcg", "--k", "10") == 0
    got = read_csv(files / "out" / "per_domain.csv")
    pq = read_csv(files / "out" / "per_query.csv")
    legal = pq[(pq["run"] == "b") & (pq["domain"] == "legal")]
    row = got[(got["run"] == "b") & (got["domain"] == "legal")].iloc[0]
    lo, hi = bootstrap_interval(dict(zip(legal["query_id"], legal["value"], strict=True)), sorted(set(pq["query_id"])),
                                n_resamples=200, seed=7)
    np.testing.assert_allclose([row["ci_low"], row["ci_high"]], [lo, hi], rtol=0, atol=1e-14)


def test_a_mapping_overrides_the_ground_truths_own_domain_per_query_with_one_note(files, capsys):
    assert main(["evaluate", "--qrels", str(files / "qrels.csv"), *run_args(files, ("a",)), "--metrics", "ndcg",
                 "--k", "10", "--domains", str(files / "dom.csv"), "--by-domain", "--out", str(files / "out")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    pq = read_csv(files / "out" / "per_query.csv").fillna({"domain": ""})
    want = {q: MAPPING.get(q, OWN[q]) for q in QUERIES}
    assert dict(zip(pq["query_id"], pq["domain"], strict=False)) == want
    listed = sum(q in MAPPING for q in QUERIES)
    kept = sum(q not in MAPPING and bool(OWN[q]) for q in QUERIES)
    notes = [line for line in err if "dom.csv" in line]
    assert len(notes) == 1, err
    assert (f"of the {len(QUERIES)} queries of the ground truth 'qrels.csv', {listed} take their domain from the "
            f"mapping" in notes[0] and f"{kept} keep their own domain" in notes[0] and "neither" not in notes[0])
    assert "1 is not the ground truth's (e.g. 'x99')" in notes[0]
    sizes = read_csv(files / "out" / "per_domain.csv").groupby("domain")["n"].max().to_dict()
    assert sizes == pd.Series(want).value_counts().to_dict()


# ------------------------------------------------------------------------------------------------ error lines


@pytest.mark.parametrize("command, says", [
    (["evaluate", "--by-domain"], ["--by-domain", "qrels.txt", "--domains FILE", "domain column", "--workspace"]),
    (["compare", "--metric", "ndcg@10", "--by-domain", "--baseline", "a"], ["--by-domain", "--domains FILE"]),
    (["compare", "--metric", "ndcg@10", "--by-domain"], ["--by-domain", "--baseline NAME"]),
    (["compare", "--metric", "ndcg@10", "--domains", "DOM"], ["--domains", "--by-domain"]),
    (["compare", "--metric", "ndcg@10", "--by-domain", "--baseline", "a", "--hsd", "paired"], ["--hsd", "--by-domain"]),
    (["compare", "--metric", "ndcg@10", "--by-domain", "--baseline", "a", "--min-queries", "1"], ["--min-queries", ">= 2"]),
])
def test_one_error_line(files, capsys, command, says):
    words = [str(files / "dom.csv") if w == "DOM" else w for w in command]
    assert main([*words, "--qrels", str(files / "qrels.txt"), *run_args(files)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert all(s in err[0] for s in says), err[0]
    assert "Traceback" not in captured.err and "EVALUATION" not in captured.out


def test_a_bad_domain_mapping_is_one_line_naming_it(files, capsys):
    (files / "bad.json").write_text("[1, 2")
    assert evaluate(files, "--domains", str(files / "bad.json")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "bad.json" in err[0], err
    assert not (files / "out").exists()


# ------------------------------------------------------------------------------------------------ the workspace


def test_the_workspaces_mapping_is_used_and_another_one_is_not_replaced_silently(files, capsys):
    ws = files / "ws"
    assert evaluate(files, "--domains", str(files / "dom.csv"), "--workspace", str(ws), qrels="qrels.txt") == 0
    assert W.Workspace.open(ws).domains() == MAPPING  # stored as the Data page stores one
    # no --domains, no --by-domain: the workspace's mapping labels the per-query table as Workspace.evaluate does
    assert evaluate(files, "--workspace", str(ws), qrels="qrels.txt", out="plain") == 0
    pq = read_csv(files / "plain" / "per_query.csv").fillna({"domain": ""})
    assert dict(zip(pq["query_id"], pq["domain"], strict=False)) == {q: MAPPING.get(q, "") for q in QUERIES}
    # no --domains: --by-domain takes the workspace's mapping (the ground truth has no domain column)
    assert evaluate(files, "--by-domain", "--workspace", str(ws), qrels="qrels.txt", out="again") == 0
    pq = read_csv(files / "again" / "per_query.csv").fillna({"domain": ""})
    assert dict(zip(pq["query_id"], pq["domain"], strict=False)) == {q: MAPPING.get(q, "") for q in QUERIES}
    assert "(none)" in set(read_csv(files / "again" / "per_domain.csv")["domain"])
    # and what Workspace.evaluate gives (the dashboard's evaluation) has the same domains
    table = W.Workspace.open(ws).evaluate(record=False).table
    assert dict(zip(table["query_id"].astype(str), table["domain"].astype(str), strict=False)) == \
        {q: MAPPING.get(q, "") for q in QUERIES}
    # another mapping: stopped before any work, unless --replace
    (files / "dom2.csv").write_text("query_id,domain\nq0,x\n")
    capsys.readouterr()
    assert evaluate(files, "--domains", str(files / "dom2.csv"), "--workspace", str(ws), qrels="qrels.txt",
                    out="third") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "dom2.csv" in err[0] and "--replace" in err[0] and "dom.csv" in err[0], err
    assert not (files / "third").exists() and W.Workspace.open(ws).domains() == MAPPING
    assert evaluate(files, "--domains", str(files / "dom2.csv"), "--workspace", str(ws), "--replace",
                    qrels="qrels.txt", out="third") == 0
    assert W.Workspace.open(ws).domains() == {"q0": "x"}


# ------------------------------------------------------------------------------------------------ compare --by-domain


def holm(p: list[float]) -> np.ndarray:
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adj[i] = running
    return adj


def test_compare_by_domain_is_the_paired_t_test_within_each_domain(files, capsys):
    out = files / "cmp.csv"
    assert main(["compare", "--qrels", str(files / "qrels.csv"), *run_args(files), "--metric", "ndcg@10",
                 "--by-domain", "--baseline", "b", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    got = read_csv(out).fillna({"note": ""})
    pq = pd.DataFrame([(r, q, OWN[q] or "(none)") for r in RUNS for q in QUERIES], columns=["run", "query_id", "domain"])
    assert evaluate(files, "--metrics", "ndcg", "--k", "10", out="pq") == 0
    values = read_csv(files / "pq" / "per_query.csv").set_index(["run", "query_id"])["value"]
    pq["value"] = [values[(r, q)] for r, q in zip(pq["run"], pq["query_id"], strict=True)]
    expected, p = [], []
    for domain in sorted(set(pq["domain"])):
        queries = [q for q in QUERIES if (OWN[q] or "(none)") == domain]
        base = np.array([values[("b", q)] for q in queries])
        for run in ("a", "c"):
            other = np.array([values[(run, q)] for q in queries])
            row = {"domain": domain, "run_b": run, "n": len(queries), "diff": (other - base).mean()}
            if len(queries) >= 5:
                row["p_value"] = sps.ttest_rel(other, base).pvalue
                p.append(row["p_value"])
            expected.append(row)
    adjusted = iter(holm(p))
    for row in expected:
        if "p_value" in row:
            row["p_adjusted"] = next(adjusted)
    want = pd.DataFrame(expected)
    assert list(got["domain"]) == list(want["domain"]) and list(got["run_b"]) == list(want["run_b"])
    assert set(got["run_a"]) == {"b"}
    np.testing.assert_allclose(got["diff"], want["diff"], rtol=0, atol=1e-15)
    tested = want["p_value"].notna().to_numpy()
    np.testing.assert_allclose(got["p_value"][tested], want["p_value"][tested], rtol=1e-12)
    np.testing.assert_allclose(got["p_adjusted"][tested], want["p_adjusted"][tested], rtol=1e-12)
    assert got["p_value"][~tested].isna().all()
    # printed per domain; the domains too small to test named once
    assert printed.count("too small to test") == 1
    small = next(line for line in printed.splitlines() if line.startswith("too small to test"))
    assert "tech (2 queries)" in small and "(none) (1 query)" in small
    assert "domain legal (6 queries)" in printed and "domain medical (6 queries)" in printed
    assert "domain tech" not in printed


def test_compare_by_domain_reads_a_per_query_file_and_a_mapping_over_its_domains(files):
    assert evaluate(files, "--metrics", "ndcg", "--k", "10") == 0
    out = files / "cmp.csv"
    assert main(["compare", "--per-query", str(files / "out" / "per_query.csv"), "--metric", "ndcg@10",
                 "--by-domain", "--baseline", "a", "--domains", str(files / "dom.csv"), "--min-queries", "2",
                 "--out", str(out)]) == 0
    got = read_csv(out)
    want = pd.Series({q: MAPPING.get(q, OWN[q]) or "(none)" for q in QUERIES}).value_counts()
    assert got.groupby("domain")["n"].max().to_dict() == want.to_dict()


# ------------------------------------------------------------------------------------------------ the Domains page


def the_command(at, prefix: str) -> list[str]:
    """The words of the page's one "Reproduce with" command starting with ``prefix``."""
    from test_sample_seed import spans

    found = [c for cap in at.caption for c in spans(cap.value) if c.startswith(prefix)]
    assert len(found) == 1, [cap.value for cap in at.caption]
    return shlex.split(found[0])


DOMAINS = "query_id,domain\n" + "".join(f"{q},{'bio' if i % 3 else 'med'}\n" for i, q in enumerate(QUERIES[:13]))


def test_the_domains_pages_command_gives_its_per_domain_tests_to_the_last_bit(tmp_path):
    """The caption's "Reproduce with" is now an ``evalcore compare --by-domain`` command (it was a Python call): run
    through ``main`` on the Overview's per-query download it gives the page's per-domain tests bit for bit, for
    the runs the page tests in its order, its baseline, test, correction and minimum of queries."""
    ws = replace(W.set_ground_truth(W.Snapshot(settings=SETTINGS), W.Blob.of("qrels.txt", trec_qrels())),
                 domain_blob=W.Blob.of("dom.csv", DOMAINS.encode()))
    for seed, name in enumerate(("c", "a", "b"), start=1):  # the workspace's order, not the names'
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", trec_run(seed)), name=name)
    at = goto(start(ws), "domains")
    at.selectbox(key="w_domains_sel_baseline").select("a").run()
    at.selectbox(key="w_domains_sel_test").select("permutation").run()
    at.number_input(key="dom_minq").set_value(3).run()
    assert not at.exception, [e.value for e in at.exception]
    words = the_command(at, "evalcore compare")
    assert words[:2] == ["evalcore", "compare"] and "--by-domain" in words
    ctx = S.context(ws=ws)
    assert ctx.ready, ctx.eval_error
    pq = tmp_path / "per_query.csv"
    pq.write_bytes(S.per_query_csv(ctx)())  # the Overview's download
    out = tmp_path / "cmp.csv"
    assert main([*[str(pq) if w == "per_query.csv" else w for w in words[1:]], "--out", str(out)]) == 0
    cli = read_csv(out)
    metric, k = at.session_state["sel_metric"], at.session_state["sel_k"]
    shown = A.domain_comparison(ctx, metric, k, "a", "permutation", at.session_state["sel_correction"], 3,
                                runs=["c", "a", "b"])  # the page's computation, as it calls it
    assert shown.ok, shown.error
    shown = shown.value.assign(domain=shown.value["domain"].replace("", "(none)"))
    assert list(zip(cli["domain"], cli["run_b"], strict=True)) == list(zip(shown["domain"], shown["run_b"], strict=True))
    assert set(cli["domain"]) == {"bio", "med", "(none)"}  # (none): q13, q14, not in the mapping
    same(cli, shown, ["n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "effect_size", "statistic", "p_value",
                      "p_adjusted", "wins", "ties", "losses"])
    # and the page's table shows those numbers (its p-values as it formats them)
    table = next(d.value for d in at.dataframe if "run − baseline" in getattr(d.value, "columns", []))
    assert len(table) == len(cli)


def test_the_domains_pages_intervals_are_its_evaluate_by_domain_command(tmp_path):
    """The bars' caption gives ``evalcore evaluate ... --by-domain`` (it gave a Python call): with the settings' query
    sample (12 of the 15 queries drawn with seed 7, the intervals with 42) and the domain mapping, its per_domain.csv
    holds the page's means and intervals to the last bit, for the runs shown."""
    settings = replace(SETTINGS, sample_size=12, seed=7)
    ws = replace(W.set_ground_truth(W.Snapshot(settings=settings), W.Blob.of("qrels.txt", trec_qrels())),
                 domain_blob=W.Blob.of("dom.csv", DOMAINS.encode()))
    for seed, name in enumerate(RUNS, start=1):
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", trec_run(seed)), name=name)
        (tmp_path / f"{name}.trec").write_bytes(trec_run(seed))
    (tmp_path / "qrels.txt").write_bytes(trec_qrels())
    (tmp_path / "dom.csv").write_text(DOMAINS)
    at = goto(start(ws), "domains")
    words = the_command(at, "evalcore evaluate")
    assert words[2] == "..." and words[words.index("--sample-seed") + 1] == "7" and "--domains" in words
    given = {"...": [str(tmp_path / "qrels.txt"), *run_args(tmp_path)], "DOMAINS": [str(tmp_path / "dom.csv")],
             "DIR": [str(tmp_path / "out")]}
    command = [w2 for w in words[1:] for w2 in given.get(w, [w])]
    command.insert(1, "--qrels")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalcoreWarning)
        assert main([*command, "--metrics", *settings.metrics, "--k", *map(str, settings.k)]) == 0
    cli = read_csv(tmp_path / "out" / "per_domain.csv")
    ctx = S.context(ws=ws)
    assert ctx.ready, ctx.eval_error
    from dashboard import drilldown as D

    for metric, k in S.metric_k_pairs(ctx):
        for shown_runs in (list(RUNS), ["a", "c"]):  # every run (the page's 3), or those a user shows of more
            shown = D.domain_frame(S.metric_slice(ctx, metric, k), metric=metric, k=k, n_resamples=S.N_RESAMPLES,
                                   seed=S.CI_SEED, runs=shown_runs)  # the page's bars and table, as it calls it
            got = cli[(cli["metric"] == metric) & (cli["k"] == k) & cli["run"].isin(shown_runs)]
            merged = got.merge(shown, on=["run", "domain"], suffixes=("", "_page"))
            assert len(merged) == len(shown) == len(got)
            for c in ("n", "mean", "ci_low", "ci_high", "aggregate", "aggregate_ci_low", "aggregate_ci_high"):
                np.testing.assert_array_equal(merged[c].to_numpy(float), merged[f"{c}_page"].to_numpy(float),
                                              err_msg=c)
    assert cli.groupby(["run", "metric", "k"])["n"].sum().eq(12).all()  # the sample's 12 queries, not 15


def test_by_domain_refuses_a_mapping_naming_none_of_the_queries(files, capsys):
    (files / "upper.csv").write_text("query_id,domain\n" + "".join(f"{q.upper()},x\n" for q in QUERIES))
    assert evaluate(files, "--by-domain", "--domains", str(files / "upper.csv"), qrels="qrels.txt") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --by-domain: the domain mapping names none") and "'Q0'" in err[0]
    assert not (files / "out").exists()


def test_the_domains_command_names_any_metric_and_run_as_the_command_line_reads_them():
    from dashboard import reproduce as R
    from evalcore.cli.main import build_parser
    from evalcore.measures import parse_measure

    assert (R.compare_metric("ndcg", 10), R.compare_metric("map", 0), R.compare_metric("rprec", 0)) == (
        "ndcg@10", "map@all", "rprec")  # compare refuses a bare name that takes a cutoff
    for metric, k in (("ndcg", 10), ("map", 0), ("rprec", 0), ("recall(rel=2)", 5)):
        m = parse_measure(shlex.split(R.compare_metric(metric, k))[0])
        assert (m.base, m.k or 0) == (metric, k)  # the metric@k compare looks up in the table (k 0: whole list)
    runs = ["-minus", "zeta `x` *$<b>", "alpha's run"]
    code = R.domain_tests_command("ndcg", 10, baseline="-minus", runs=runs, test="t", correction="bh", min_queries=3)
    from test_same_numbers import caption_code

    args = build_parser().parse_args(shlex.split(caption_code(code))[1:])
    assert (args.baseline, args.runs, args.min_queries, args.by_domain, args.correction) == ("-minus", runs, 3, True,
                                                                                              "bh")

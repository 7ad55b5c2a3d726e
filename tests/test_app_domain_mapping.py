"""A domain mapping whose ids match none of the ground truth's queries is said so, where the user looks.

It used to be accepted silently: the Domains page then asked for a domain mapping file that was
already loaded.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_app import goto, unescape
from test_app_views import many_queries, start

from evalcore import workspace as W
from evalcore.errors import EvalcoreWarning
from evalcore.io import load_qrels


def test_the_pipeline_warns_when_a_mapping_names_none_of_the_queries():
    qrels = load_qrels(many_queries(30)[0], format="trec")
    with pytest.warns(EvalcoreWarning, match=r"names none of the ground truth's 30 queries \(its 2 query ids look "
                                             r"like 'QX1', 'QX2'; those of the ground truth like 'q00000', 'q00001', "
                                             r"'q00002'\): no query has a domain"):
        labelled = W.sample_and_label(qrels, sample=None, domains={"QX1": "bio", "QX2": "med"})
    assert set(labelled.domain_of()) == {""}
    half = {f"q{i:05d}": "bio" for i in range(15)}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalcoreWarning)  # a partial mapping is fine: the rest has no domain
        assert set(W.sample_and_label(qrels, sample=None, domains=half).domain_of()) == {"bio", ""}


def domains_snapshot(n: int, domains_csv: str, *, same: bool = False) -> W.Snapshot:
    """Ground truth of ``n`` queries (ndcg@3), runs ``a`` and ``b`` (``same``: ``a_again``, a's lists) and the
    domain mapping ``domains_csv`` (text of a query_id,domain file)."""
    qrels, a, b = many_queries(n)
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(3,), metrics=("ndcg",))), W.Blob.of("q.txt", qrels))
    ws, _ = W.add_ranked_run(ws, W.Blob.of("a.trec", a), name="a")
    ws, _ = W.add_ranked_run(ws, W.Blob.of("a.trec", a) if same else W.Blob.of("b.trec", b),
                             name="a_again" if same else "b")
    return replace(ws, domain_blob=W.Blob.of("dom.csv", domains_csv.encode()))


def test_domains_and_data_pages_say_the_loaded_mapping_matches_no_query():
    at = start(domains_snapshot(40, "query_id,domain\nQX1,bio\nQX2,med\n"), "domains")
    assert not at.exception
    (warning,) = [unescape(w.value) for w in at.warning]
    assert warning.startswith("The queries have no domain: the domain mapping names none of the ground truth's "
                              "40 queries") and "Check the ids of the domain mapping file" in warning
    assert not [i for i in at.info if "no domain" in i.value]  # not "give a domain mapping file": one is loaded
    goto(at, "data")
    shown = [unescape(w.value) for w in at.warning]
    assert sum("names none of the ground truth's 40 queries" in w for w in shown) == 1  # once, by the mapping


def test_domains_page_says_when_no_domain_disagrees():
    """The 'disagree' table was left out without a word when empty: two runs with the same lists disagree nowhere."""
    doms = "query_id,domain\n" + "".join(f"q{i:05d},{'bio' if i % 2 else 'med'}\n" for i in range(40))
    at = start(domains_snapshot(40, doms, same=True), "domains")
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert any(c.startswith("No domain disagrees with the overall result") for c in captions), captions
    assert not any(c.startswith("Domains that disagree") for c in captions)


def test_a_domain_too_small_to_test_is_counted_in_words():
    """'domain law has only 1 queries' read wrong: one query, two queries."""
    doms = "query_id,domain\nq00000,law\nq00001,art\nq00002,art\n" + "".join(
        f"q{i:05d},{'bio' if i % 2 else 'med'}\n" for i in range(3, 40))
    at = start(domains_snapshot(40, doms), "domains")
    assert not at.exception
    shown = [unescape(w.value) for w in at.warning]
    # (one message for all of them: 40 domains of a few queries each made a wall of warnings)
    small = [w for w in shown if "too small to test" in w]
    assert len(small) == 1 and small[0].startswith("2 domains have fewer than 5 queries: art (2 queries), law (1 "
                                                   "query)"), shown


def _graded_with_domains() -> W.Snapshot:
    """Seed 003's graded judgments with a domain per query (60 queries, three domains) and two runs: dense better on
    two domains, worse on 'legal' by a margin whose bootstrap interval excludes 0 while the t-test's p is above
    0.05 (numpy's seeded generator)."""
    import json

    import numpy as np

    rng = np.random.default_rng(1)
    docs = [f"w{i}" for i in range(200)]
    gt, runs = [], {"bm25": [], "dense": []}
    for i in range(60):
        q, dom = f"q{i}", ("legal", "medical", "tech")[i % 3]
        rel = {str(x): int(rng.integers(1, 4)) for x in rng.choice(docs, 6, replace=False)}
        gt.append({"query": q, "relevance_judgments": rel, "domain": dom})
        for name, boost in (("bm25", 0.3), ("dense", 0.0 if dom == "legal" else 0.6)):
            sc = {str(x): float(rng.normal()) for x in rng.choice(docs, 40, replace=False)}
            for x, g in rel.items():
                if rng.random() < 0.8:
                    sc[x] = float(rng.normal() + boost * g)
            runs[name] += [f"{q} Q0 {x} {r} {s!r} {name}" for r, (x, s) in
                           enumerate(sorted(sc.items(), key=lambda t: -t[1]), 1)]  # fmt: skip
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(10,), metrics=("ndcg",))),
                            W.Blob.of("graded.json", json.dumps(gt).encode()))  # fmt: skip
    for name, lines in runs.items():
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", ("\n".join(lines) + "\n").encode()), name=name)
    return ws


def test_a_domain_whose_interval_excludes_0_but_is_not_significant_says_why():
    # seed 003's user reads per domain: legal −0.118, 95% CI [−0.236, −0.008], not significant, and the note was
    # empty (the Compare page's table says why such a row is not significant; the Domains page did not)
    at = start(_graded_with_domains(), "domains")
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "run − baseline" in getattr(d.value, "columns", ()))
    rows = table.set_index("domain")
    odd = (~rows["significant"].astype(bool)) & ((rows["ci_low"] > 0) | (rows["ci_high"] < 0))
    assert list(rows.index[odd]) == ["legal"], rows  # the case at hand (else the test could not fail)
    assert "the CI excludes 0 but the test's p ≥ 0.05" in rows.loc["legal", "note"]
    assert not any(rows.loc[d, "note"] for d in rows.index[~odd])
    assert any("the note says why" in c.value for c in at.caption)

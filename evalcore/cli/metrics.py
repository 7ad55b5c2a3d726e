"""``evalcore metrics``: the supported metric names."""

from __future__ import annotations

import argparse

__all__ = ["register", "run"]


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("metrics", help="list supported metrics")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..measures import ALIASES, DESCRIPTIONS
    from ..measures.trec import GROUPS
    from ..metrics import AGGREGATION, AGGREGATIONS

    width = max(map(len, DESCRIPTIONS)) + 1
    for name, desc in DESCRIPTIONS.items():
        print(f"{name:<{width}} {desc}")
    print("aliases: " + ", ".join(f"{a}->{c}" for a, c in sorted(ALIASES.items())))
    print("parameters: name(rel=N) sets the relevance threshold; rbp(p=0.9), set_f(beta=0.5), err(max_grade=3), "
          "ndcg(gains=1:3,2:9), iprec_at_recall(recall=0.1); a parameter at its default is not printed")
    print("cutoffs: name@k, name@all (the whole list); without one, each --k")
    print("trec_eval names: P_5, P.5,10, recall_1000, map_cut_100, ndcg_cut_10, success_1, iprec_at_recall_0.10, "
          "set_F, set_P, infAP, Rprec, rbp_resid; groups: " + ", ".join(GROUPS))
    kinds = {kind: [m for m, a in AGGREGATION.items() if a == kind] for kind in AGGREGATIONS if kind != "mean"}
    print("summaries: the mean over queries, except " + "; ".join(
        f"{', '.join(ms)}: {AGGREGATIONS[kind]}" for kind, ms in kinds.items()))
    return 0

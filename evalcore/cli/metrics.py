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

    for name, desc in DESCRIPTIONS.items():
        print(f"{name:<16} {desc}")
    print("aliases: " + ", ".join(f"{a}->{c}" for a, c in sorted(ALIASES.items())))
    print("parameter: name(rel=N)@k sets the relevance threshold of a binary metric")
    return 0

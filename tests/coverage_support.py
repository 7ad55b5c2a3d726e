"""Small ground truths and runs for the workspace coverage tests (a ground truth over q0..q9 or x0..x3, ranked
runs over d0..d19) and the evalcore warnings a call gives."""

from __future__ import annotations

import warnings

from evalcore import Qrels, Run
from evalcore.errors import EvalcoreWarning

QIDS = [f"q{i}" for i in range(10)]
XIDS = [f"x{i}" for i in range(4)]
DOCS = [f"d{j}" for j in range(20)]


def qrels_of(qids) -> Qrels:
    return Qrels.from_dict({q: {DOCS[i % 20]: 1, DOCS[(i + 3) % 20]: 2} for i, q in enumerate(qids)})


def run_of(qids, name: str) -> Run:
    return Run.from_dict({q: {d: float(20 - j) for j, d in enumerate(DOCS[i % 5:i % 5 + 6])} for i, q in enumerate(qids)},
                         name=name)


def warned(fn, *args, **kwargs) -> list[str]:
    """The messages of the evalcore warnings ``fn(*args, **kwargs)`` gives."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn(*args, **kwargs)
    return [str(w.message) for w in got if issubclass(w.category, EvalcoreWarning)]

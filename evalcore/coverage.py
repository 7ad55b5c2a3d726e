"""How much of the ground truth each run answers: the coverage next to every mean.

A ground-truth query absent from a run is scored 0 on every metric (trec_eval ``-c``).
That is the right convention for a run that skipped a few queries, and a misleading one
for a run whose query ids do not match the ground truth at all: it is then "significantly
worse" than every other run while it was never evaluated. :func:`run_coverage` gives,
per run,

    coverage = (queries of the ground truth the run returned a list for) / (queries of the ground truth)

from :attr:`evalcore.evaluate.Evaluation.coverage`, and :func:`low_coverage` the runs
below a threshold, which a report should flag and leave out of "best" marks and tests
unless asked to include them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ._columns import positions_in
from ._lazy import pd
from .data import Qrels, Run
from .errors import OptionError, coverage_problem

__all__ = ["DEFAULT_MIN_COVERAGE", "run_coverage", "low_coverage", "coverage_text", "nothing_evaluated",
           "missing_queries_message", "missing_queries_refusal", "missing_queries_problem", "missing_query_count",
           "warn_missing_queries"]

#: Coverage below which a run is flagged by default (answers fewer than 90% of the ground truth's queries).
DEFAULT_MIN_COVERAGE = 0.9


def _check_threshold(threshold: float) -> float:
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise OptionError(f"the coverage threshold must be a number in [0, 1], got {threshold!r}") from None
    if not 0.0 <= t <= 1.0:
        raise OptionError(f"the coverage threshold must be in [0, 1], got {threshold!r}")
    return t


def run_coverage(coverage: pd.DataFrame, *, runs: Iterable[str] | None = None) -> pd.DataFrame:
    """Per run: ``run, n_ground_truth, n_with_results, coverage`` (a fraction in [0, 1]).

    Parameters
    ----------
    coverage : DataFrame
        :attr:`Evaluation.coverage` (``run, n_qrels_queries, n_missing, ...``). Not modified.
    runs : iterable of str, optional
        Rows in this order (default: the table's order); a run absent from ``coverage``
        raises :class:`OptionError`.

    Returns
    -------
    DataFrame
        ``n_with_results = n_qrels_queries - n_missing``; ``coverage`` is
        ``n_with_results / n_ground_truth`` (1.0 for an empty ground truth).
    """
    need = {"run", "n_qrels_queries", "n_missing"}
    if not need <= set(coverage.columns):
        raise OptionError(f"coverage lacks column(s) {sorted(need - set(coverage.columns))}")
    cov = coverage.assign(run=coverage["run"].astype(str)).drop_duplicates("run").set_index("run")
    order = list(cov.index) if runs is None else [str(r) for r in runs]
    unknown = [r for r in order if r not in cov.index]
    if unknown:
        raise OptionError(f"no coverage row for run(s) {unknown}")
    n_gt = cov.loc[order, "n_qrels_queries"].astype("int64")
    n_with = n_gt - cov.loc[order, "n_missing"].astype("int64")
    frac = (n_with / n_gt.where(n_gt > 0, 1)).where(n_gt > 0, 1.0)
    return pd.DataFrame({"run": order, "n_ground_truth": n_gt.to_numpy(), "n_with_results": n_with.to_numpy(),
                         "coverage": frac.to_numpy(dtype=float)})


def low_coverage(coverage: pd.DataFrame, *, threshold: float = DEFAULT_MIN_COVERAGE) -> list[str]:
    """Runs whose :func:`run_coverage` is below ``threshold`` (in [0, 1]), in table order."""
    t = _check_threshold(threshold)
    cov = run_coverage(coverage)
    return cov.loc[cov["coverage"] < t, "run"].tolist()


def coverage_text(n_with_results: int, n_ground_truth: int) -> str:
    """``"30/30 (100%)"``, ``"15/30 (50%)"``, ``"0/30 (0%)"``; percentages floored, and never rounded to an end.

    ``0%`` and ``100%`` only when none / all of the ground truth's queries have results: a share
    below 1% reads ``"<1%"`` (``"1/300 (<1%)"``), one above 99% ``">99%"`` (``"2997/3000 (>99%)"``).
    """
    if n_ground_truth <= 0:
        return "0/0"
    n, total = int(n_with_results), int(n_ground_truth)
    if 0 < 100 * n < total:
        pct = "<1"
    elif 99 * total < 100 * n < 100 * total:
        pct = ">99"
    else:
        pct = str(100 * n // total)
    return f"{n_with_results}/{n_ground_truth} ({pct}%)"


def missing_queries_message(run: str, n_ground_truth: int, n_missing: int, *, run_query_ids: Sequence[Any] = (),
                            ground_truth_query_ids: Sequence[Any] | None = None) -> str:
    """What is said of a run that does not answer ``n_missing`` of the ``n_ground_truth`` ground-truth queries.

    The command line's warning (its missing queries count 0 in its values and tests); in strict mode the
    error says it as an error (:func:`missing_queries_refusal`). When it answers none, the first ids of
    the run (``run_query_ids``) and of the ground truth name a likely id mismatch.

    >>> missing_queries_message("dense", 200, 100)
    "run 'dense' answers 100/200 (50%) of the ground-truth queries, below the 90% the dashboard flags; the other 100 count 0 in its values and tests"
    """
    total, missing = int(n_ground_truth), int(n_missing)
    if missing == total:
        return (f"run {run!r} answers none of the {total} ground-truth queries "
                f"{_id_mismatch(run_query_ids, ground_truth_query_ids)}: every value is 0")
    flag = f", below the {DEFAULT_MIN_COVERAGE:.0%} the dashboard flags" if (total - missing) < \
        DEFAULT_MIN_COVERAGE * total else ""
    return (f"run {run!r} answers {coverage_text(total - missing, total)} of the ground-truth queries{flag}; "
            f"the other {missing} count 0 in its values and tests")


def _id_mismatch(run_query_ids: Sequence[Any], ground_truth_query_ids: Sequence[Any] | None) -> str:
    """``(its query ids look like 'Q1', 'Q2'; the ground truth's like 'q1', 'q2')``: a likely id mismatch."""
    ids = ", ".join(repr(str(x)) for x in run_query_ids[:2])
    want = "" if ground_truth_query_ids is None else "; the ground truth's like " + ", ".join(
        repr(str(x)) for x in ground_truth_query_ids[:2])
    return f"(its query ids look like {ids}{want})"


def missing_queries_refusal(run: str, n_ground_truth: int, n_missing: int, *, run_query_ids: Sequence[Any] = (),
                            ground_truth_query_ids: Sequence[Any] | None = None) -> tuple[str, str]:
    """``(problem, without)`` of a run that does not answer ``n_missing`` of the ``n_ground_truth`` ground-truth
    queries, for strict mode's error (:func:`evalcore.errors.strict_refusal`): the run, the count, the first two
    unanswered queries (when the ground truth's query ids are given), and what happens without strict mode.

    >>> missing_queries_refusal("dense", 4, 2, run_query_ids=["q1", "q4"], ground_truth_query_ids=["q1", "q2", "q3", "q4"])
    ("run 'dense' does not answer 2 of the 4 ground-truth queries (e.g. 'q2', 'q3')", 'they count 0 in its values and tests')
    """
    total, missing = int(n_ground_truth), int(n_missing)
    if missing == total:
        return (f"run {run!r} does not answer any of the {total} ground-truth queries "
                f"{_id_mismatch(run_query_ids, ground_truth_query_ids)}", "every value is 0")
    example = ""
    if ground_truth_query_ids is not None:
        gt = np.asarray(ground_truth_query_ids, dtype=object)
        answered = set(np.asarray(run_query_ids, dtype=object).tolist())
        lacking = [x for x in gt.tolist() if x not in answered][:2]
        example = " (e.g. " + ", ".join(repr(str(x)) for x in lacking) + ")" if lacking else ""
    return (f"run {run!r} does not answer {missing} of the {total} ground-truth queries{example}",
            "they count 0 in its values and tests")


def missing_queries_problem(run: str, n_ground_truth: int, n_missing: int, *, run_query_ids: Sequence[Any] = (),
                            ground_truth_query_ids: Sequence[Any] | None = None, warning: bool = True,
                            stacklevel: int = 2) -> None:
    """The coverage problem (:func:`evalcore.errors.coverage_problem`) of a run not answering ``n_missing`` of the
    ground truth's queries: :func:`missing_queries_message` as a warning (``warning=False``: only counted), in strict
    mode an error in :func:`missing_queries_refusal`'s words. ``stacklevel`` as :func:`evalcore.errors.warn`'s."""
    coverage_problem(
        missing_queries_message(run, n_ground_truth, n_missing, run_query_ids=run_query_ids,
                                ground_truth_query_ids=ground_truth_query_ids),
        refusal=lambda: missing_queries_refusal(run, n_ground_truth, n_missing, run_query_ids=run_query_ids,
                                                ground_truth_query_ids=ground_truth_query_ids),
        warning=warning, stacklevel=stacklevel + 1)


def warn_missing_queries(coverage_rows: Iterable[Mapping[str, Any]], run_query_ids: Mapping[str, Sequence[Any]],
                         ground_truth_query_ids: Mapping[str, Sequence[Any] | None], *, stacklevel: int = 2) -> None:
    """One coverage problem per run of ``run_query_ids`` answering only part of its ground truth's queries:
    :func:`missing_queries_message` as a warning, or in strict mode an error
    (:func:`evalcore.errors.coverage_problem`).

    ``coverage_rows``: the evaluation's (:attr:`evalcore.evaluate.Evaluation.coverage_rows`; a run's
    ``n_missing`` of its ``n_qrels_queries``); ``run_query_ids``: the query ids of each run to report,
    by name (the others are left to their own warnings: an embedding run's search, a fusion);
    ``ground_truth_query_ids``: each run's evaluated ground-truth query ids (shown when it answers none).
    The command line's ``evaluate`` and :meth:`evalcore.workspace.Workspace.evaluate` both report
    ranked runs this way. ``stacklevel`` as :func:`evalcore.errors.warn`'s, from the caller.
    """
    for row in coverage_rows:
        name, total, missing = str(row["run"]), int(row["n_qrels_queries"]), int(row["n_missing"])
        if name not in run_query_ids or not missing or not total:
            continue
        missing_queries_problem(name, total, missing, run_query_ids=run_query_ids[name],
                                ground_truth_query_ids=ground_truth_query_ids.get(name), stacklevel=stacklevel + 1)


def missing_query_count(qrels: Qrels, run: Run) -> int:
    """How many of the ground truth's queries ``run`` has no row for: its ``n_missing`` in
    :attr:`evalcore.evaluate.Evaluation.coverage`, without evaluating.

    >>> missing_query_count(Qrels.from_dict({"q1": {"d": 1}, "q2": {"d": 1}}), Run.from_dict({"q1": {"d": 1.0}}))
    1
    """
    qi = positions_in(qrels.query_ids, run.query_ids)[run.q]
    return int(qrels.n_queries - len(np.unique(qi[qi >= 0])))


def nothing_evaluated(coverage: pd.DataFrame | Iterable[Mapping[str, Any]], *, rel_threshold: int = 1,
                      no_relevant: str = "zero") -> str | None:
    """Why no query of an evaluation was evaluated, in words (None when some query was).

    ``coverage``: :attr:`evalcore.evaluate.Evaluation.coverage`, or its ``coverage_rows`` (no pandas);
    ``rel_threshold`` and ``no_relevant``: the evaluation's. The usual cause: no ground-truth query has a
    relevant document at that threshold and such queries are skipped.

    >>> cov = pd.DataFrame({"run": ["a"], "n_qrels_queries": [2], "n_evaluated": [0], "n_skipped": [2]})
    >>> nothing_evaluated(cov, rel_threshold=2, no_relevant="skip")
    'none of the 2 ground-truth queries has a relevant document (grade ≥ 2), and queries without one are skipped'
    """
    rows = coverage.to_dict("records") if hasattr(coverage, "to_dict") else list(coverage)
    if not rows or max(int(r["n_evaluated"]) for r in rows) > 0:
        return None
    n = max(int(r["n_qrels_queries"]) for r in rows)
    skipped = max(int(r.get("n_skipped", 0)) for r in rows)
    if n and skipped == n and no_relevant == "skip":
        return (f"none of the {n:,} ground-truth queries has a relevant document (grade ≥ {int(rel_threshold)}), "
                "and queries without one are skipped")
    return f"0 of the {n:,} ground-truth queries remain with these settings"

"""What an evaluation says about its inputs that is probably a mistake, though every value stays defined.

:func:`evalcore.evaluate` gives these warnings (:class:`~evalcore.errors.EvalcoreWarning`, never errors, not even
in strict mode: they are no coverage problem), each once per evaluation:

* a relevance threshold no judgment reaches (:func:`warn_threshold_above_grades`): every query is then one
  without a relevant document;
* a run that lists **each query's own item** where the ground truth's queries are items (seed 001: the candidates of
  a movie are the other movies; :func:`self_listed_text`): a top-k of item embeddings made without excluding the
  query (``topk`` without ``--exclude-self``) puts the query first in every list, where it counts as non-relevant
  and pushes the neighbours down;
* a run **shallower than the cutoffs** it is evaluated at (:func:`shallow_run_text`), one warning per run, not
  per metric. A rank a list does not fill counts as non-relevant, so the values stay correct by their
  definitions (P@100 of a list of 10 documents is at most 0.1), but they are not comparable with those of a run
  that lists 100 documents: a run cut at 10 documents, then evaluated at k = 100, was most likely truncated by
  mistake.

When a run is shallow: more than half of the lists it gives for the evaluated queries hold fewer documents than
the largest cutoff k of the evaluation (the largest ``k`` of its metrics with a cutoff; a metric without one —
``map@all``, ``bpref``, ``rprec``, the precision-recall levels — reads the whole list and is left out). So a run
whose every list is shorter than k (its deepest list is shorter) is named, and so is a run cut short for most
queries but not all; a run returning fewer documents for a few queries (at most half: a lexical run that matches
fewer documents for some queries) is not. Counted on the lists as the run gives them, before judged-only mode
removes the unjudged documents; queries the run does not answer are left to the coverage warning
(:mod:`evalcore.coverage`). A run ranked by an exact search (an embedding run, or a fusion of such runs without
``top_n``; a random baseline listing every candidate, :func:`evalcore.fusion.random_run`:
:attr:`evalcore.data.Run.search_depth`) is judged by its search instead: a list shorter than its search depth holds
every candidate of its corpus, so it is shallow only when its search depth is below the largest k and more than
half of its lists are full to that depth (the search cut them, not the corpus): an embedding run searched to
k = 10, then evaluated at k = 100, is named with its search depth, as a cut file run is (the command line's
``--emb-depth`` below the largest k is said so this way, once per run).

Cheap: the list lengths are the per-query counts the evaluation computes anyway.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .data import Qrels, Run
from .errors import warn
from .measures import Measure
from .metrics import K_FREE

__all__ = ["SELF_LISTED_PATTERN", "SHALLOW_PREFIX", "largest_cutoff", "run_notes", "self_listed_text", "shallow_run_text",
           "warn_threshold_above_grades"]

#: How the warning of a shallow run starts (:func:`shallow_run_text`; a weight search quiets it for its trial
#: fusions, :mod:`evalcore.fusion_search`).
SHALLOW_PREFIX = "shallow run "
#: A regular expression matching the start of :func:`self_listed_text`'s warning (quieted as the shallow one is).
SELF_LISTED_PATTERN = r"run .* lists the query's own id "


def warn_threshold_above_grades(qrels: Qrels, theta: int, *, stacklevel: int = 2) -> None:
    """A relevance threshold no judgment reaches makes every query one without a relevant document: say so.

    ``stacklevel`` as :func:`evalcore.errors.warn`'s, counted from the caller of this function."""
    grades = qrels.grades
    if len(grades) and int(grades.max()) < theta:
        warn(f"no judgment reaches the relevance threshold (grade >= {theta}; the highest grade is "
             f"{int(grades.max())}): no query has a relevant document, and every metric counting relevant "
             "documents is 0", stacklevel=stacklevel + 1)


def largest_cutoff(measures: Iterable[Measure]) -> int | None:
    """The largest cutoff k of ``measures`` (those with one: not ``@all``, not the k-free metrics); None: none has.

    >>> from evalcore.measures import expand_measures
    >>> largest_cutoff(expand_measures(["ndcg", "P@5", "map@all", "bpref"], [10, 100]))
    100
    >>> largest_cutoff(expand_measures(["bpref", "recall@all"], [10])) is None
    True
    """
    ks = [int(m.k) for m in measures if m.k and m.name not in K_FREE]
    return max(ks) if ks else None


def _docs(n: int) -> str:
    return f"{n:,} document{'' if n == 1 else 's'}"


def shallow_run_text(name: str, listed: np.ndarray, k: int | None, *, search_depth: int | None = None) -> str | None:
    """The warning that run ``name`` is shallower than the cutoffs (see the module docstring), or None.

    ``listed``: the number of documents the run lists for each evaluated query (0: a query it does not answer);
    ``k``: the largest cutoff evaluated (:func:`largest_cutoff`; None: no cutoff, nothing to say);
    ``search_depth``: the run's :attr:`~evalcore.data.Run.search_depth` (set: shallow only when it is below ``k``
    and more than half of the answered lists hold at least that many documents).

    >>> shallow_run_text("bm25", np.array([10, 10, 7, 0]), 100)[:61]
    "shallow run 'bm25': it lists at most 10 documents per query, "
    >>> shallow_run_text("bm25", np.array([100, 100, 7, 100]), 100) is None  # one short list of four
    True
    """
    if k is None:
        return None
    answered = np.asarray(listed)[np.asarray(listed) > 0]
    n = len(answered)
    if search_depth is not None:
        return _searched_too_shallow(name, answered, k, int(search_depth))
    short = int(np.count_nonzero(answered < k))
    if not n or 2 * short <= n:
        return None
    deepest = int(answered.max())
    why = (f"the ranks they leave empty count as non-relevant, so its values at the larger k are not comparable "
           f"with those of a run listing {_docs(k)}; was the run cut short?")
    if short == n:
        empty = f"rank {k:,} counts as" if deepest + 1 == k else f"ranks {deepest + 1:,} to {k:,} count as"
        return (f"{SHALLOW_PREFIX}{name!r}: it lists at most {_docs(deepest)} per query, but the largest k evaluated "
                f"is {k:,}: {empty} non-relevant, so its values at k > {deepest:,} "
                f"are not comparable with those of a run listing {_docs(k)}; was the run cut short?")
    median = float(np.median(answered))
    return (f"{SHALLOW_PREFIX}{name!r}: {short:,} of its {n:,} lists hold fewer than {_docs(k)} (median length "
            f"{median:,.{0 if median.is_integer() else 1}f}, the deepest {deepest:,}), the largest k evaluated: {why}")


def _searched_too_shallow(name: str, answered: np.ndarray, k: int, depth: int) -> str | None:
    """The warning for an exact search's run (search depth ``depth``) evaluated at ``k``, or None: when ``depth``
    is below ``k`` and more than half of the ``answered`` lists are full to ``depth`` (cut by the search)."""
    cut = int(np.count_nonzero(answered >= depth))
    if depth >= k or not len(answered) or 2 * cut <= len(answered):
        return None
    empty = f"rank {k:,} counts as" if depth + 1 == k else f"ranks {depth + 1:,} to {k:,} count as"
    return (f"{SHALLOW_PREFIX}{name!r}: it was ranked by an exact search to depth {depth:,} (its top {depth:,} per "
            f"query), but the largest k evaluated is {k:,}: {empty} non-relevant where the corpus held more "
            f"candidates, so its values at k > {depth:,} are not comparable with those of a run listing "
            f"{_docs(k)}; search to depth {k:,} at least")


def self_listed_text(name: str, run: Run, qrels: Qrels) -> str | None:
    """The warning that run ``name`` lists each query's own id, or None.

    Said when the ground truth's queries are items (some query id is also a judged document id, as in seed 001's
    lists, where a movie is never its own neighbour) and more than half of the queries the run answers list their
    own id. Such a row is not relevant (the ground truth never judges a query's own item), so the value stays that
    of the definitions, but a neighbour list of item embeddings was most likely made without excluding the query.

    >>> gt = Qrels.from_dict({"a": {"b": 1}, "b": {"a": 1}})
    >>> self_listed_text("emb", Run.from_dict({"a": {"a": 1.0, "b": 0.5}, "b": {"b": 1.0, "a": 0.5}}), gt)[:53]
    "run 'emb' lists the query's own id in 2 of its 2 list"
    >>> self_listed_text("emb", Run.from_dict({"a": {"b": 1.0}, "b": {"a": 1.0}}), gt) is None
    True
    """
    items = qrels._cache.get("queries_are_items")
    if items is None:  # (once per ground truth: a set lookup per judgment, short-circuited on the first hit)
        ids = set(qrels.query_ids.tolist())
        items = qrels._cache["queries_are_items"] = any(d in ids for d in qrels.doc_ids.tolist())
    if not items or not len(run):
        return None
    own = run.doc_codes_in(np.asarray(run.query_ids, dtype=object)) == run.q
    n_self, n = int(np.unique(run.q[own]).size), int(np.unique(run.q).size)
    if 2 * n_self <= n:
        return None
    first = str(run.query_ids[run.q[own][0]])
    return (f"run {name!r} lists the query's own id in {n_self:,} of its {n:,} lists (e.g. {first!r} in its own "
            "list): the ground truth never judges a query's own item, so it counts as non-relevant and pushes the "
            "neighbours down; was the item itself left in an item-to-item top-k (topk --exclude-self leaves it out)?")


def run_notes(name: str, run: Run, listed: np.ndarray, k: int | None, qrels: Qrels) -> list[str | None]:
    """The notes of one run of an evaluation: :func:`shallow_run_text` and :func:`self_listed_text`."""
    return [shallow_run_text(name, listed, k, search_depth=run.search_depth), self_listed_text(name, run, qrels)]


r"""Seeded search of fusion weights on one metric@k, with an optional tune/report split of the queries.

For the weighted methods (``rrf``, ``wsum``, see :mod:`evalcore.fusion`), each
trial is a weight vector ``w`` on the simplex (``w_S >= 0``, ``Σ_S w_S = 1``;
scaling all weights by a constant does not change a ranking, so nothing is lost):

``grid``
    every vector whose entries are multiples of ``step`` (``1 / step`` must be an
    integer), in ascending lexicographic order — for 3 runs and step 0.1, the 66
    vectors ``(0, 0, 1), (0, 0.1, 0.9), ..., (1, 0, 0)``. ranx's ``optimize_fusion``
    searches the same vectors (``sum(w) == 1.0`` in floating point, which misses
    some of them).
``random``
    ``n_trials`` vectors drawn uniformly on the simplex, ``Dirichlet(1, ..., 1)``.

Each trial's fused run is evaluated (:func:`evalcore.evaluate.evaluate`) on the
tuning queries and scored by the mean of the metric@k; the best trial is the
first with the highest mean (ranx keeps the last of equal bests) — the lowest for
a metric where lower is better (``first_rel_rank``). A metric without a cutoff is
searched as it is defined (``rprec``, ``bpref``, ``gm_map``: the mean of the log
AP, highest where the geometric mean is); the descriptive counts (``num_rel_ret``,
``judged``...) have no better value and are refused.

**Overfitting.** Weights chosen on the queries they are then evaluated on are
tuned to those queries' noise: the best mean is optimistic. With
``tune_fraction=None`` every qrels query is used for tuning and
:func:`search_weights` warns so. With ``tune_fraction=f`` the qrels queries are
split by the seed (:func:`split_queries`) into a tuning share ``f`` and a
held-out rest; weights are chosen on the first and the best trial is reported
on the second (``value_test``), an honest estimate.

Randomness: ``numpy.random.SeedSequence(seed)`` spawns two independent streams,
one for the split and one for the random trials, so equal inputs and seed give
equal results, and the split does not depend on the strategy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .data import Qrels, Run
from .defaults import FUSION_STEP, FUSION_STRATEGY, FUSION_TRIALS, SEED
from .errors import OptionError, quiet_warnings, warn
from .evaluate import evaluate
from .evaluation_notes import SELF_LISTED_PATTERN, SHALLOW_PREFIX
from .fusion import WEIGHTED_METHODS, canonical_method, prepare
from .measures import Measure, parse_measure
from .metrics import DESCRIPTIVE, K_FREE, LOWER_IS_BETTER
from .stats.paired import _check_prob

__all__ = ["STRATEGIES", "OVERFIT_WARNING", "WeightSearch", "weight_grid", "split_queries", "search_weights"]

#: Search strategies.
STRATEGIES: tuple[str, ...] = ("grid", "random")
#: Most trials a grid may have (a smaller step or more runs: use ``random``).
MAX_GRID_TRIALS = 20_000
#: Warning given when weights are tuned on every evaluated query.
OVERFIT_WARNING = (
    "fusion weights tuned on the evaluated queries overfit them: the best value is optimistic; "
    "tune on one split of the queries and report on the other"
)


@dataclass(frozen=True)
class WeightSearch:
    """Result of :func:`search_weights`.

    Attributes
    ----------
    weights : dict run name -> float
        The best trial's weights (they sum to 1).
    trials : DataFrame
        One row per trial: ``trial`` (0-based), ``weight:<run>`` per run,
        ``value`` (mean metric@k on the tuning queries), ``best`` (bool).
    metric : str
        The metric@k searched on, canonical (``"ndcg@10"``).
    method, strategy : str
    seed : int
    value_tune : float
        Best mean on the tuning queries.
    value_test : float
        The best weights' mean on the held-out queries (NaN without a split).
    tune_queries, test_queries : tuple of str
        The split (``test_queries`` empty without a split).
    note : str
        :data:`OVERFIT_WARNING` without a split, else ``""``.
    higher_is_better : bool
        Whether the search maximised the mean (False: minimised, ``first_rel_rank``).
    """

    weights: dict[str, float]
    trials: pd.DataFrame
    metric: str
    method: str
    strategy: str
    seed: int
    value_tune: float
    value_test: float
    tune_queries: tuple[str, ...]
    test_queries: tuple[str, ...] = field(default_factory=tuple)
    note: str = ""
    higher_is_better: bool = True


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Non-negative integer vectors of length ``parts`` summing to ``total``, ascending lexicographic."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def weight_grid(n_runs: int, *, step: float = FUSION_STEP) -> np.ndarray:
    """Every weight vector on the simplex with entries multiple of ``step`` (see the module docstring).

    Returns
    -------
    float64 array (n_trials, n_runs)

    Examples
    --------
    >>> weight_grid(2, step=0.5).tolist()
    [[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]]
    """
    if isinstance(n_runs, bool) or not isinstance(n_runs, (int, np.integer)) or n_runs < 1:
        raise OptionError(f"the weight grid needs at least one run, got {n_runs!r}")
    try:
        inv = 1.0 / float(step)
    except (TypeError, ValueError, ZeroDivisionError):
        raise OptionError(f"step must be a number in (0, 1], got {step!r}") from None
    total = round(inv)
    if not (0 < float(step) <= 1) or abs(inv - total) > 1e-9:
        raise OptionError(f"step must be in (0, 1] with 1/step an integer (0.5, 0.25, 0.1...), got {step!r}")
    from math import comb

    n = comb(total + n_runs - 1, n_runs - 1)
    if n > MAX_GRID_TRIALS:
        raise OptionError(f"a grid of step {step} over {n_runs} runs has {n} trials (> {MAX_GRID_TRIALS}); "
                          "use a larger step or the random strategy")
    return np.asarray(list(_compositions(total, n_runs)), dtype=np.float64) / total


def split_queries(query_ids: Sequence[str] | np.ndarray, *, fraction: float, seed: int
                  ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split query ids into a tuning share ``fraction`` and the held-out rest, by the seed.

    The ids are sorted first (the split does not depend on their order), then
    permuted by ``numpy.random.default_rng(SeedSequence(seed).spawn(2)[0])``; the
    first ``round(fraction · n)`` (at least 1, at most n − 1) tune. Both parts
    are returned sorted.
    """
    ids = np.asarray(sorted({str(x) for x in query_ids}), dtype=object)
    f = _check_prob("tune_fraction", fraction)
    if len(ids) < 2:
        raise OptionError(f"a tune/report split needs at least 2 queries, got {len(ids)}")
    rng = np.random.default_rng(_streams(seed)[0])
    perm = rng.permutation(len(ids))
    n_tune = min(max(int(round(f * len(ids))), 1), len(ids) - 1)
    return tuple(sorted(ids[perm[:n_tune]])), tuple(sorted(ids[perm[n_tune:]]))


def _streams(seed: int) -> list[np.random.SeedSequence]:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise OptionError(f"seed must be an integer >= 0, got {seed!r}")
    return np.random.SeedSequence(int(seed)).spawn(2)


def _mean_value(qrels: Qrels, run: Run, measure: Measure, *, ties: str, rel_threshold: int,
                no_relevant: str, judged_only: bool = False) -> float:
    quiet = f"{re.escape(SHALLOW_PREFIX)}|{SELF_LISTED_PATTERN}"  # (a trial's fusion: its inputs' evaluation says it)
    with quiet_warnings(quiet):
        ev = evaluate(qrels, {"fused": run}, metrics=[measure], k=[measure.k or 1], ties=ties,
                      rel_threshold=rel_threshold, no_relevant=no_relevant, judged_only=judged_only)
    return float(ev.table["value"].mean())


def search_weights(
    qrels: Qrels,
    runs: Sequence[Run] | Mapping[str, Run],
    *,
    metric: str = "ndcg@10",
    method: str = "rrf",
    norm: str | None = "none",
    strategy: str = FUSION_STRATEGY,
    step: float = FUSION_STEP,
    n_trials: int = FUSION_TRIALS,
    seed: int = SEED,
    tune_fraction: float | None = None,
    c: float = 60.0,
    top_n: int | None = None,
    ties: str = "docid_asc",
    eval_ties: str | None = None,
    rel_threshold: int = 1,
    no_relevant: str = "zero",
    judged_only: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> WeightSearch:
    """Search fusion weights maximising the mean of ``metric`` (minimising it where lower is better; see the
    module docstring).

    Parameters
    ----------
    qrels : Qrels
        Judgments; its queries are the ones tuned on (and split).
    runs : sequence of Run or mapping name -> Run
        At least two.
    metric : str
        One metric with its cutoff, e.g. ``"ndcg@10"``, ``"recall(rel=2)@100"``; a metric that takes
        none without (``"rprec"``, ``"bpref"``, ``"first_rel_rank"``). Not a descriptive count
        (:data:`evalcore.metrics.DESCRIPTIVE`).
    method : {"rrf", "wsum"}
    norm, c, top_n, ties
        Passed to :func:`evalcore.fusion.fuse` (``ties`` ranks the input lists).
    strategy : {"grid", "random"}, default "grid"
    step : float, default 0.1
        Grid step (``grid``).
    n_trials : int, default 50
        Number of random vectors (``random``; 50 as ``evalcore fuse --trials`` and the Fusion page).
    seed : int, default 42
        Seed of the split and of the random trials (as ``evalcore fuse --seed``
        and the Fusion page, so the same search gives the same weights everywhere; every default
        here is :mod:`evalcore.defaults`').
    tune_fraction : float in (0, 1), optional
        Tune on this share of the queries, report on the rest; default: tune on
        all (with a warning, see :data:`OVERFIT_WARNING`).
    eval_ties : str, optional
        Tie rule for evaluating the fused runs (default: ``ties``).
    rel_threshold, no_relevant, judged_only
        As in :func:`evalcore.evaluate.evaluate` (``judged_only``: trec_eval's ``-J``, each fused list scored on
        its judged documents only).
    progress : callable (done, total), optional
        Called after each trial.

    Returns
    -------
    WeightSearch
    """
    method = canonical_method(method)
    if method not in WEIGHTED_METHODS:
        raise OptionError(f"weights only act on {', '.join(sorted(WEIGHTED_METHODS))}; got method {method!r}")
    if strategy not in STRATEGIES:
        raise OptionError(f"strategy must be one of {list(STRATEGIES)}, got {strategy!r}")
    measure = parse_measure(metric)
    if measure.name in DESCRIPTIVE:
        raise OptionError(f"{metric!r} describes the lists (a count, a share of judged documents), it has no "
                          "better value: search the weights on a measure of quality, e.g. ndcg@10")
    if measure.k is None and measure.name not in K_FREE:
        raise OptionError(f"give the metric with its cutoff, e.g. {measure.base}@10; got {metric!r}")
    higher = measure.name not in LOWER_IS_BETTER
    prepared = prepare(runs, method=method, norm=norm, c=c, top_n=top_n, ties=ties)
    names = prepared.names
    if len(names) < 2:
        raise OptionError("a weight search needs at least two runs")
    streams = _streams(seed)
    if strategy == "grid":
        trials = weight_grid(len(names), step=step)
    else:
        if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or n_trials < 1:
            raise OptionError(f"n_trials must be an integer >= 1, got {n_trials!r}")
        trials = np.random.default_rng(streams[1]).dirichlet(np.ones(len(names)), size=int(n_trials))
    if tune_fraction is None:
        tune, test = tuple(str(x) for x in qrels.query_ids), ()
        warn(OVERFIT_WARNING)
        note = OVERFIT_WARNING
    else:
        tune, test = split_queries(qrels.query_ids, fraction=tune_fraction, seed=seed)
        note = ""
    tune_qrels = qrels.subset(list(tune))
    opts = dict(ties=ties if eval_ties is None else eval_ties, rel_threshold=rel_threshold, no_relevant=no_relevant,
                judged_only=bool(judged_only))
    tuned = prepared.subset(tune) if test else prepared  # each trial fuses the tuning queries only
    values = np.empty(len(trials))
    for i, w in enumerate(trials):
        values[i] = _mean_value(tune_qrels, tuned.run(w), measure, **opts)
        if progress is not None:
            progress(i + 1, len(trials))
    if np.all(np.isnan(values)):
        raise OptionError(f"no tuning query has a {measure} value (all skipped?)")
    if len(values) > 1 and np.nanmax(values) == np.nanmin(values):
        warn(f"every trial gives the same mean {measure} ({np.nanmax(values):.4g}) on the tuning queries: the judgments "
             "do not tell the weights apart (the first trial is kept)")
    best = int(np.nanargmax(values) if higher else np.nanargmin(values))  # the first of equal bests
    value_test = float("nan")
    if test:
        value_test = _mean_value(qrels.subset(list(test)), prepared.run(trials[best]), measure, **opts)
    frame = pd.DataFrame({"trial": np.arange(len(trials))})
    for j, n in enumerate(names):
        frame[f"weight:{n}"] = trials[:, j]
    frame["value"] = values
    frame["best"] = frame["trial"] == best
    return WeightSearch(
        weights={n: float(trials[best, j]) for j, n in enumerate(names)}, trials=frame, metric=str(measure),
        method=method, strategy=strategy, seed=int(seed), value_tune=float(values[best]), value_test=value_test,
        tune_queries=tune, test_queries=test, note=note, higher_is_better=higher,
    )  # fmt: skip

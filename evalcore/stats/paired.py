r"""One pair of runs: the paired test, its bootstrap CI, wins/ties/losses, and p-value corrections.

See :mod:`evalcore.stats` for the conventions (``d_i = b_i - a_i``, seeded resampling,
degenerate inputs).
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._lazy import sps as _sps
from ..defaults import SEED, TEST_CI_METHOD, TEST_RESAMPLES
from ..errors import OptionError
from ..results import exact_mean

__all__ = [
    "TESTS",
    "CORRECTIONS",
    "NOTE_TOO_FEW",
    "NOTE_NO_QUERY",
    "NOTE_TOO_SMALL",
    "PairedTestResult",
    "paired_test",
    "sign_flip_test",
    "win_tie_loss",
    "adjust_pvalues",
]

#: Supported paired tests.
TESTS: tuple[str, ...] = ("t", "wilcoxon", "permutation")
#: Supported multiple-comparison corrections.
CORRECTIONS: tuple[str, ...] = ("holm", "bonferroni", "bh", "none")
#: Note of a pair with fewer than 2 paired queries.
NOTE_TOO_FEW = "not testable: fewer than 2 queries"
#: The note of a pair without a query where both runs have a value (first_rel_rank of a run that finds nothing).
NOTE_NO_QUERY = "not testable: no query has a value in both runs"
#: Note (prefix) of a domain with fewer than ``min_queries`` paired queries.
NOTE_TOO_SMALL = "too small to test"

_ZERO_METHODS = ("wilcox", "pratt", "zsplit")
_CI_METHODS = ("BCa", "percentile", "basic")
#: Relative spread below which the paired differences count as constant: a
#: difference computed in floating point (e.g. ``(x + 0.25) - x``) varies by a few
#: ulps, which would otherwise give ``t ~ 1e16`` with a meaningless p-value.
_CONSTANT_RTOL = 1e-12
#: Memory budget (number of float64) of one batch of bootstrap/permutation resamples.
_BATCH_BUDGET = 4_000_000



@dataclass(frozen=True)
class PairedTestResult:
    r"""Result of :func:`paired_test` on paired values :math:`a_i, b_i`, :math:`d_i=b_i-a_i`.

    Attributes
    ----------
    n : int
        Number of pairs.
    mean_a, mean_b : float
        :math:`\bar a`, :math:`\bar b` (NaN when ``n == 0``): the correctly rounded sum over n
        (:func:`evalcore.results.exact_mean`), to the bit the means of the summaries over the same queries.
    diff : float
        Mean difference :math:`\bar d = \frac1n\sum_i (b_i - a_i)` (:func:`~evalcore.results.exact_mean` of the differences).
    ci_low, ci_high : float
        Paired bootstrap confidence interval of :math:`\bar d`.
    effect_size : float
        Cohen's :math:`d_z = \bar d / s_d` with :math:`s_d` the sample standard
        deviation (``ddof=1``) of the differences.
    statistic : float
        Test statistic: t of ``ttest_rel(b, a)``; Wilcoxon's statistic as
        returned by ``scipy.stats.wilcoxon`` (smaller of the signed-rank sums,
        two-sided); :math:`\bar d` for the permutation test.
    p_value : float
        Two-sided p-value.
    wins, ties, losses : int
        Number of queries where B beats, ties, loses to A (see :func:`win_tie_loss`).
    test : str
        ``"t"``, ``"wilcoxon"`` or ``"permutation"``.
    note : str
        ``""`` normally; otherwise explains a degenerate case or a NaN.
    """

    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    effect_size: float
    statistic: float
    p_value: float
    wins: int
    ties: int
    losses: int
    test: str
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for a DataFrame row or JSON)."""
        return asdict(self)


# --------------------------------------------------------------------------- option checks


def _check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise OptionError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def _check_int(name: str, value: Any, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise OptionError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_prob(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if isinstance(value, bool) or not (0.0 < v < 1.0):
        raise OptionError(f"{name} must be in (0, 1), got {value!r}")
    return v


def _check_tolerance(value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"tie_tolerance must be a number >= 0, got {value!r}") from None
    if not (math.isfinite(v) and v >= 0.0):
        raise OptionError(f"tie_tolerance must be a finite number >= 0, got {value!r}")
    return v


def _as_float_1d(x: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise OptionError(f"{name} must be a 1-D sequence of numbers") from None
    if arr.ndim != 1:
        raise OptionError(f"{name} must be 1-D, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise OptionError(
            f"{name} holds {int(bad.sum())} non-finite value(s); first {arr[i]!r} at position {i}"
        )
    return arr.copy()


def _paired_arrays(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two aligned float arrays; two pandas Series are aligned on their index."""
    if isinstance(a, pd.Series) and isinstance(b, pd.Series):
        if not (a.index.is_unique and b.index.is_unique):
            raise OptionError("a and b are Series with duplicated index labels; cannot pair them")
        if len(a) != len(b) or not a.index.isin(b.index).all():
            raise OptionError(
                f"a and b are Series whose indexes (query ids) differ "
                f"({len(a)} vs {len(b)} labels); pair them first"
            )
        b = b.reindex(a.index)
    x = _as_float_1d(a, "a")
    y = _as_float_1d(b, "b")
    if len(x) != len(y):
        raise OptionError(f"a and b must have the same length (paired), got {len(x)} and {len(y)}")
    return x, y


#: Sign vectors drawn per block by :func:`sign_flip_test` (the draw does not depend on memory).
_SIGN_BLOCK = 50


def sign_flip_test(d: Any, *, n_resamples: int = TEST_RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    r"""Fisher's two-sided randomization test of :math:`\bar d = 0` by sign flips.

    Under the null hypothesis each paired difference is as likely to be
    :math:`+d_i` as :math:`-d_i`. The null distribution holds
    :math:`T_b = \frac1n \sum_i s_{bi} d_i` for sign vectors :math:`s_b \in \{-1, 1\}^n`:

    * every one of the :math:`2^n` vectors when :math:`2^n \le` ``n_resamples``
      (exact test, :math:`B = 2^n`, :math:`c = 0`);
    * otherwise ``n_resamples`` random ones (:math:`B` = ``n_resamples``,
      :math:`c = 1`): ``numpy.random.default_rng(seed).integers(0, 2, (50, n))``
      per block of 50 vectors, in order, 1 meaning :math:`s_{bi} = +1`.

    With the observed :math:`t = \bar d`,
    :math:`p = \min\bigl(1, 2 \min(P_{\le}, P_{\ge})\bigr)` with
    :math:`P_{\le} = (\#\{T_b \le t + \gamma\} + c) / (B + c)` and
    :math:`P_{\ge} = (\#\{T_b \ge t - \gamma\} + c) / (B + c)` — the conventions of
    ``scipy.stats.permutation_test`` (Phipson & Smyth 2010 for :math:`c = 1`).
    :math:`\gamma = 100\,\epsilon\,\frac1n\sum_i |d_i|` (float64 :math:`\epsilon`)
    makes sums equal in exact arithmetic but rounded in another order count as
    equal (a flip of a zero difference, the all-plus vector); SciPy's
    :math:`100\,\epsilon\,|t|` is smaller than that rounding when :math:`t` is near 0.

    Parameters
    ----------
    d : array-like of float, shape (n,)
        Paired differences :math:`b_i - a_i`, finite, :math:`n \ge 1`.
    n_resamples : int, default 10000 (:data:`evalcore.defaults.TEST_RESAMPLES`)
    seed : int, default 42 (:data:`evalcore.defaults.SEED`)

    Returns
    -------
    (statistic, p_value) : tuple of float
        :math:`\bar d` and the two-sided p-value.

    Examples
    --------
    Two differences give four sign vectors, of which two reach :math:`|\bar d|`:

    >>> sign_flip_test([0.5, 0.5], n_resamples=100)
    (0.5, 0.5)
    """
    d = _as_float_1d(d, "d")
    n_resamples = _check_int("n_resamples", n_resamples, minimum=1)
    seed = _check_int("seed", seed, minimum=0)
    n = len(d)
    if n < 1:
        raise OptionError("sign_flip_test needs at least one difference")
    t = float(np.mean(d))
    gamma = 100 * float(np.finfo(np.float64).eps) * float(np.abs(d).mean())
    exact = n < 63 and 2**n <= n_resamples
    if exact:
        signs = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1
        null = (2.0 * (signs.astype(np.float64) @ d) - d.sum()) / n
        total, c = len(null), 0
        less, greater = _sign_counts(null, t, gamma)
    else:
        rng = np.random.default_rng(seed)
        total, c, less, greater, dsum = n_resamples, 1, 0, 0, d.sum()
        for start in range(0, n_resamples, _SIGN_BLOCK):
            s = rng.integers(0, 2, size=(min(_SIGN_BLOCK, n_resamples - start), n), dtype=np.int8)
            lo, hi = _sign_counts((2.0 * (s.astype(np.float64) @ d) - dsum) / n, t, gamma)
            less, greater = less + lo, greater + hi
    p = 2.0 * min((less + c) / (total + c), (greater + c) / (total + c))
    return t, min(p, 1.0)


def _sign_counts(null: np.ndarray, t: float, gamma: float) -> tuple[int, int]:
    return int(np.count_nonzero(null <= t + gamma)), int(np.count_nonzero(null >= t - gamma))


def _rng_kwargs(func: Callable[..., Any], seed: int) -> dict[str, Any]:
    """Seeded generator keyword: ``rng`` (SciPy >= 1.15) or ``random_state`` (older)."""
    gen = np.random.default_rng(seed)
    params = inspect.signature(func).parameters
    return {"rng": gen} if "rng" in params else {"random_state": gen}


def _batch(n: int, n_resamples: int) -> int:
    return int(max(1, min(n_resamples, _BATCH_BUDGET // max(n, 1))))


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y - x, axis=axis)


# --------------------------------------------------------------------------- one pair


def win_tie_loss(a: Any, b: Any, *, tolerance: float = 0.0) -> tuple[int, int, int]:
    r"""Count the queries where B wins, ties with, or loses to A.

    With :math:`d_i = b_i - a_i` and tolerance :math:`\tau \ge 0`:
    win :math:`d_i > \tau`, tie :math:`|d_i| \le \tau`, loss :math:`d_i < -\tau`.
    The default :math:`\tau = 0` counts only exactly equal values as ties.

    Parameters
    ----------
    a, b : array-like of float
        Paired values (same length; two Series are aligned on their index).
    tolerance : float, default 0.0
        Absolute tie tolerance :math:`\tau`.

    Returns
    -------
    (wins, ties, losses) : tuple of int
    """
    x, y = _paired_arrays(a, b)
    tol = _check_tolerance(tolerance)
    d = y - x
    wins = int(np.count_nonzero(d > tol))
    losses = int(np.count_nonzero(d < -tol))
    return wins, len(d) - wins - losses, losses


def paired_test(
    a: Any,
    b: Any,
    *,
    test: str = "t",
    n_resamples: int = TEST_RESAMPLES,
    seed: int = SEED,
    confidence: float = 0.95,
    zero_method: str = "wilcox",
    tie_tolerance: float = 0.0,
    ci_method: str = TEST_CI_METHOD,
) -> PairedTestResult:
    r"""Paired two-sided test of run B against run A on aligned per-query values.

    With :math:`d_i = b_i - a_i`, :math:`i = 1..n`:

    * ``diff`` :math:`\bar d = \frac1n \sum_i d_i`
    * ``effect_size`` Cohen's :math:`d_z = \bar d / s_d`,
      :math:`s_d = \sqrt{\frac{1}{n-1}\sum_i (d_i - \bar d)^2}`
    * ``ci_low``/``ci_high``: ``scipy.stats.bootstrap((a, b), mean(b - a),
      paired=True, method=ci_method, confidence_level=confidence,
      n_resamples=n_resamples)`` with ``rng = numpy.random.default_rng(seed)``
      (resampling whole pairs).
    * ``test="t"``: ``scipy.stats.ttest_rel(b, a)``,
      :math:`t = \bar d / (s_d/\sqrt n)` with :math:`n-1` degrees of freedom.
    * ``test="wilcoxon"``: ``scipy.stats.wilcoxon(b, a, zero_method=zero_method)``
      (signed-rank test; the default ``"wilcox"`` drops zero differences before
      ranking, ``"zsplit"`` splits their ranks between the two signs,
      ``"pratt"`` ranks them then drops them; ``method="auto"``: exact
      distribution for small samples without ties, normal approximation else).
    * ``test="permutation"``: Fisher's randomization (sign-flip) test,
      :func:`sign_flip_test` on :math:`d`: the null distribution flips the sign
      of each :math:`d_i` independently (exact when :math:`2^n \le`
      ``n_resamples``); the statistic is :math:`\bar d`. It is the null and
      p-value of ``scipy.stats.permutation_test((a, b), mean(b - a),
      permutation_type="samples")``, with its own draw of the signs (SciPy's
      loops over the queries: 0.35 s against 0.01 s at 5,000 queries).

    Degenerate cases (``note`` says which applied):

    * :math:`n < 2`: not testable.  ``statistic``, ``p_value``, CI and
      ``effect_size`` are NaN with note ``"not testable: fewer than 2
      queries"``, or for :math:`n = 0` ``"not testable: no query has a value in
      both runs"`` (e.g. ``first_rel_rank`` of a run that finds nothing
      relevant); means and ``diff`` are given when :math:`n = 1` (NaN when
      :math:`n = 0`).
    * every :math:`d_i = 0` (identical runs; in practice :math:`|d_i| \le
      10^{-12}\max(1, \max|d|)` so that floating-point noise counts as zero):
      ``statistic = 0``, ``p_value = 1.0``, ``effect_size = 0``,
      CI = ``[diff, diff]`` (``[0, 0]`` for exactly equal values).
    * constant non-zero difference (:math:`s_d = 0`, again up to a relative
      :math:`10^{-12}`): ``effect_size`` = :math:`\pm\infty` (sign of
      :math:`\bar d`), CI = ``[diff, diff]`` (every bootstrap resample has the
      same mean); for the t-test ``statistic`` = :math:`\pm\infty` and
      ``p_value = 0.0`` (the limit of the t-test as :math:`s_d \to 0`); the
      Wilcoxon test is computed by SciPy as usual, the permutation test as always.
    * if the BCa interval is undefined (too few distinct bootstrap means), the
      percentile interval is used and the note says so.

    Parameters
    ----------
    a, b : array-like of float
        Per-query values of run A and run B, aligned (element ``i`` of both
        belongs to the same query).  Two pandas Series are aligned on their
        index (query ids), which must hold the same labels.  Not modified.
    test : {"t", "wilcoxon", "permutation"}, default "t"
    n_resamples : int, default 10000 (:data:`evalcore.defaults.TEST_RESAMPLES`)
        Resamples of the bootstrap CI and of the permutation test.
    seed : int, default 42 (:data:`evalcore.defaults.SEED`)
        Seed of ``numpy.random.default_rng`` for the bootstrap and permutation test.
    confidence : float, default 0.95
        Confidence level of the bootstrap interval.
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        Treatment of zero differences by the Wilcoxon test.
    tie_tolerance : float, default 0.0
        Tie tolerance of wins/ties/losses (:func:`win_tie_loss`).
    ci_method : {"BCa", "percentile", "basic"}, default "BCa"
        Bootstrap interval method.

    Returns
    -------
    PairedTestResult

    Raises
    ------
    OptionError
        Different lengths, non-finite or non-numeric values, invalid options.
    """
    _check_choice("test", test, TESTS)
    n_resamples = _check_int("n_resamples", n_resamples, minimum=1)
    seed = _check_int("seed", seed, minimum=0)
    confidence = _check_prob("confidence", confidence)
    _check_choice("zero_method", zero_method, _ZERO_METHODS)
    _check_choice("ci_method", ci_method, _CI_METHODS)
    x, y = _paired_arrays(a, b)
    return _paired_test(x, y, test=test, n_resamples=n_resamples, seed=seed, confidence=confidence,
                        zero_method=zero_method, tie_tolerance=tie_tolerance, ci_method=ci_method)


def _paired_test(
    x: np.ndarray, y: np.ndarray, *, test: str, n_resamples: int, seed: int, confidence: float,
    zero_method: str, tie_tolerance: float, ci_method: str, bootstrap: bool = True,
) -> PairedTestResult:
    """:func:`paired_test` on checked float arrays and options.

    ``bootstrap=False`` skips the pair's own bootstrap interval where it would
    be drawn (``ci_low``/``ci_high`` are then NaN, as for an untestable pair):
    for callers that replace it by an interval over shared resamples.
    """
    wins, ties, losses = win_tie_loss(x, y, tolerance=tie_tolerance)
    n = len(x)
    nan = float("nan")

    def result(**kw: Any) -> PairedTestResult:
        base: dict[str, Any] = dict(
            n=n, mean_a=nan, mean_b=nan, diff=nan, ci_low=nan, ci_high=nan, effect_size=nan,
            statistic=nan, p_value=nan, wins=wins, ties=ties, losses=losses, test=test, note="",
        )  # fmt: skip
        base.update(kw)
        for key in ("mean_a", "mean_b", "diff", "ci_low", "ci_high", "effect_size",
                    "statistic", "p_value"):  # fmt: skip
            base[key] = float(base[key])
        return PairedTestResult(**base)

    if n == 0:
        return result(note=NOTE_NO_QUERY)
    d = y - x
    mean_a, mean_b, diff = exact_mean(x), exact_mean(y), exact_mean(d)
    common = dict(mean_a=mean_a, mean_b=mean_b, diff=diff)
    if n < 2:
        return result(**common, note=NOTE_TOO_FEW)

    scale = max(1.0, float(np.max(np.abs(d))))
    if float(np.max(np.abs(d))) <= _CONSTANT_RTOL:
        return result(
            **common, ci_low=diff, ci_high=diff, effect_size=0.0, statistic=0.0, p_value=1.0,
            note="all paired differences are zero (identical values, up to floating-point "
            "noise): statistic 0, p-value 1, effect size 0 by definition",
        )
    constant = float(np.ptp(d)) <= _CONSTANT_RTOL * scale
    notes: list[str] = []
    batch = _batch(n, n_resamples)

    # -- confidence interval and effect size
    if constant:
        ci_low = ci_high = diff
        effect = math.copysign(math.inf, diff)
        notes.append(
            "constant non-zero difference (sd of differences is 0): effect size "
            f"{'+' if diff > 0 else '-'}inf, CI reduced to the mean difference"
        )
    else:
        effect = diff / float(np.std(d, ddof=1))
        ci_low = ci_high = nan
    if not constant and bootstrap:
        ci_low, ci_high = _bootstrap_ci(x, y, n_resamples, seed, confidence, ci_method, batch)
        if not (math.isfinite(ci_low) and math.isfinite(ci_high)) and ci_method == "BCa":
            ci_low, ci_high = _bootstrap_ci(x, y, n_resamples, seed, confidence, "percentile", batch)
            notes.append("BCa interval undefined for these data; percentile interval used")

    # -- test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if test == "t":
            if constant:
                statistic, p_value = math.copysign(math.inf, diff), 0.0
                notes.append("t statistic is inf with p-value 0 (limit as sd -> 0)")
            else:
                res = _sps.ttest_rel(y, x)
                statistic, p_value = float(res.statistic), float(res.pvalue)
        elif test == "wilcoxon":
            res = _sps.wilcoxon(y, x, zero_method=zero_method)
            statistic, p_value = float(res.statistic), float(res.pvalue)
        else:
            statistic, p_value = sign_flip_test(d, n_resamples=n_resamples, seed=seed)
    if not math.isfinite(p_value):
        notes.append(f"scipy could not compute the {test} test on these data (p-value NaN)")
    return result(
        **common, ci_low=ci_low, ci_high=ci_high, effect_size=effect, statistic=statistic,
        p_value=min(max(p_value, 0.0), 1.0) if math.isfinite(p_value) else p_value,
        note="; ".join(notes),
    )  # fmt: skip


def _bootstrap_ci(
    x: np.ndarray, y: np.ndarray, n_resamples: int, seed: int, confidence: float, method: str,
    batch: int,
) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _sps.bootstrap(
            (x, y), _mean_diff, paired=True, vectorized=True, n_resamples=n_resamples,
            confidence_level=confidence, method=method, batch=batch,
            **_rng_kwargs(_sps.bootstrap, seed),
        )  # fmt: skip
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


# --------------------------------------------------------------------------- corrections


def adjust_pvalues(p_values: Any, *, method: str = "holm") -> np.ndarray:
    r"""Adjust p-values for multiple comparisons; NaN entries stay NaN and do not count.

    Let :math:`p_{(1)} \le \dots \le p_{(m)}` be the :math:`m` finite p-values
    sorted increasingly.

    * ``"bonferroni"``: :math:`\tilde p_i = \min(1, m\,p_i)`.
    * ``"holm"`` (step-down, controls the family-wise error rate):
      :math:`\tilde p_{(i)} = \min\bigl(1, \max_{j \le i} (m - j + 1)\,p_{(j)}\bigr)`.
    * ``"bh"`` (Benjamini-Hochberg, controls the false discovery rate):
      ``scipy.stats.false_discovery_control(p, method="bh")``, i.e.
      :math:`\tilde p_{(i)} = \min\bigl(1, \min_{j \ge i} \frac{m}{j} p_{(j)}\bigr)`.
    * ``"none"``: unchanged.

    Parameters
    ----------
    p_values : array-like of float
        p-values in [0, 1] or NaN (untestable comparisons).
    method : {"holm", "bonferroni", "bh", "none"}, default "holm"

    Returns
    -------
    ndarray of float
        Adjusted p-values, same order and length as the input.
    """
    _check_choice("correction", method, CORRECTIONS)
    try:
        p = np.array(p_values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise OptionError("p_values must be numbers") from None
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise OptionError("p-values must lie in [0, 1]")
    out = p.copy()
    q = p[ok]
    m = len(q)
    if m == 0 or method == "none":
        return out
    if method == "bonferroni":
        adj = np.minimum(1.0, m * q)
    elif method == "holm":
        order = np.argsort(q, kind="mergesort")
        stepped = np.maximum.accumulate((m - np.arange(m)) * q[order])
        adj = np.empty(m)
        adj[order] = np.minimum(1.0, stepped)
    else:
        adj = np.asarray(_sps.false_discovery_control(q, method="bh"), dtype=float)
    out[ok] = adj
    return out

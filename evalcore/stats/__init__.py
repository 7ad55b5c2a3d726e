r"""Paired statistics between runs, paired by query id.

Two runs evaluated on the same queries give paired per-query values
:math:`a_i` (run A) and :math:`b_i` (run B).  Everything here works on the
paired differences :math:`d_i = b_i - a_i`, so a positive difference means B is
better than A for a higher-is-better metric.

* :func:`paired_test` tests one pair of aligned arrays and returns a
  :class:`PairedTestResult` (means, mean difference with a paired bootstrap
  confidence interval, Cohen's :math:`d_z`, test statistic and p-value,
  wins/ties/losses).
* :func:`compare`, :func:`compare_many` and :func:`compare_by_domain` take the
  long per-query table (see :mod:`evalcore.aggregate`), pair the runs by
  ``query_id`` and correct the p-values for multiple comparisons
  (:func:`adjust_pvalues`: Holm, Bonferroni, Benjamini-Hochberg).
* :func:`tukey_hsd` compares many runs at once with Tukey's HSD (paired by
  query, or as independent groups like ranx; :mod:`evalcore.stats.hsd`).

Reproducibility: every random procedure (bootstrap, permutation test) draws
from ``numpy.random.default_rng(seed)``, so equal inputs and seed give equal
outputs; the seed and the number of resamples default to :mod:`evalcore.defaults`'
(42 and 10,000), as ``evalcore compare``'s ``--seed`` and ``--n-resamples`` do.

Degenerate inputs never raise nor return an unexplained NaN; see
:func:`paired_test` for the exact rules.  Invalid options or non-finite input
values raise :class:`~evalcore.errors.OptionError`.
"""

from .hsd import HSD_COLUMNS, HSD_DESIGNS, tukey_hsd, tukey_hsd_values
from .paired import (
    CORRECTIONS,
    NOTE_NO_QUERY,
    NOTE_TOO_FEW,
    NOTE_TOO_SMALL,
    TESTS,
    PairedTestResult,
    adjust_pvalues,
    paired_test,
    win_tie_loss,
)
from .tables import COMPARE_COLUMNS, RESAMPLING, compare, compare_by_domain, compare_many

__all__ = [
    "TESTS",
    "CORRECTIONS",
    "NOTE_TOO_FEW",
    "NOTE_NO_QUERY",
    "NOTE_TOO_SMALL",
    "COMPARE_COLUMNS",
    "RESAMPLING",
    "PairedTestResult",
    "paired_test",
    "win_tie_loss",
    "adjust_pvalues",
    "compare",
    "compare_many",
    "compare_by_domain",
    "HSD_DESIGNS",
    "HSD_COLUMNS",
    "tukey_hsd",
    "tukey_hsd_values",
]

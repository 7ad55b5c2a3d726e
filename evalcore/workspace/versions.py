r"""A model across its versions: the series, the metric curve, the paired tests, what changed.

A training script records the checkpoints of one model as runs with the same ``model`` and a
``step`` (or a ``version`` label); this module follows the model across them, from the long
per-query table (``run, query_id, domain, metric, k, value``) and a run-info frame
(:meth:`~.api.Workspace.runs`, or the dashboard's runs: ``name``/``run``, ``model``,
``version``, ``step``, optionally ``created_at``).

* :func:`version_series` — each model's runs in version order (:func:`~.roots.order_versions`:
  step, else natural version label, else creation order); runs without a model are no series.
* :func:`version_curve` — mean and confidence interval of metric@k at each version
  (:func:`evalcore.intervals.mean_intervals`: by default the percentile bootstrap on
  resamples of the queries shared by every run of the table).
* :func:`version_tests` — the paired test of each version against the previous one, and of
  each version against a reference version (:func:`evalcore.stats.compare`,
  :math:`d_q = v_q - u_q` for version :math:`v` against :math:`u`). Each of the two lists is
  its own family of the multiple-comparison correction (the :math:`m - 1` consecutive pairs of
  the model's :math:`m` versions at this metric@k; the :math:`m - 1` pairs with the reference).
* :func:`version_changes` — version A against B query by query: the per-query differences
  :math:`d_q = b_q - a_q`, the queries that improved and regressed most, and how many did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._categorical import distinct_strings
from .._lazy import pd
from ..aggregate import _select_metric_k, _validate_table, metric_at_k_label, wide_per_query
from ..coverage import DEFAULT_MIN_COVERAGE, coverage_text, low_coverage, run_coverage
from ..defaults import MEAN_CI_METHOD, SEED, TEST_CI_METHOD, TEST_RESAMPLES, TEST_RESAMPLING
from ..errors import OptionError, warn
from ..intervals import DEFAULT_RESAMPLES, mean_intervals
from ..metrics import LOWER_IS_BETTER, metric_base
from ..stats import compare, win_tie_loss
from .roots import order_versions

__all__ = ["SERIES_COLUMNS", "CURVE_COLUMNS", "AGAINST", "VersionChanges", "version_series", "version_models",
           "unsure_order", "version_curve", "version_tests", "version_changes", "higher_is_better"]

#: Columns of :func:`version_series`.
SERIES_COLUMNS = ["model", "position", "run", "version", "step"]
#: Columns of :func:`version_curve`.
CURVE_COLUMNS = ["position", "run", "version", "step", "n", "mean", "ci_low", "ci_high"]
#: The two families of :func:`version_tests` (its ``against`` column).
AGAINST = ("previous", "reference")


def higher_is_better(metric: str) -> bool:
    """False for the metrics where a lower value is better (``first_rel_rank``, parameters or not)."""
    return metric_base(metric) not in LOWER_IS_BETTER


def _text(v: object) -> str | None:
    if v is None or (isinstance(v, float) and v != v) or v is pd.NA:
        return None
    s = str(v).strip()
    return s or None


def version_series(runs: pd.DataFrame, *, min_versions: int = 2, coverage: pd.DataFrame | None = None,
                   min_coverage: float = DEFAULT_MIN_COVERAGE, include: Sequence[str] = ()) -> pd.DataFrame:
    """Each model's runs in version order.

    Parameters
    ----------
    runs : DataFrame
        One row per run: the run's name in ``name`` (or ``run``), ``model``, ``version`` (label)
        and ``step`` (number), any of them missing; ``created_at`` optional (default: the row
        order). Not modified.
    min_versions : int, default 2
        Models with fewer runs are left out (a single version is no series).
    coverage : DataFrame, optional
        An evaluation's :attr:`~evalcore.evaluate.Evaluation.coverage`: then, as on the Versions
        page, a version answering fewer than ``min_coverage`` of the ground truth's queries (its
        missing ones count 0, so against any other version it looks like a regression) is left
        out of the series, with a warning naming it, unless listed in ``include``.
    min_coverage : float, default 0.9
        See ``coverage`` (:func:`evalcore.coverage.low_coverage`).
    include : sequence of str
        Runs kept whatever their coverage.

    Returns
    -------
    DataFrame
        :data:`SERIES_COLUMNS`, one row per run of a model with at least ``min_versions``
        runs: models sorted by name (natural order, case-insensitive), then the versions in the order of
        :func:`~.roots.order_versions` — step ascending (runs without a step after those
        with one), then the version label in natural order (``epoch 9`` < ``epoch 10``),
        then creation order. ``position`` counts 0, 1, ... within the model; ``step`` is
        float (NaN when missing), ``version`` str or None.

    Raises
    ------
    OptionError
        Missing columns, a run listed twice, ``min_versions`` < 1.
    """
    if isinstance(min_versions, bool) or not isinstance(min_versions, (int, np.integer)) or min_versions < 1:
        raise OptionError(f"min_versions must be an integer >= 1, got {min_versions!r}")
    if not isinstance(runs, pd.DataFrame):
        raise OptionError(f"runs must be a pandas DataFrame, got {type(runs).__name__}")
    name_col = "name" if "name" in runs.columns else "run"
    missing = [c for c in (name_col, "model", "version", "step") if c not in runs.columns]
    if missing:
        raise OptionError(f"the run-info frame lacks column(s) {missing}; it has {list(runs.columns)}")
    names = runs[name_col].astype(str)
    dup = sorted(set(names[names.duplicated()]))
    if dup:
        raise OptionError(f"the run-info frame lists run(s) {dup} more than once")
    try:
        step = pd.to_numeric(runs["step"], errors="raise").astype(float)
    except (TypeError, ValueError):
        raise OptionError("the run-info frame's step column must hold numbers (or be empty)") from None
    frame = pd.DataFrame({
        "name": names.to_numpy(), "model": [_text(m) for m in runs["model"]],
        "version": [_text(v) for v in runs["version"]], "step": step.to_numpy(),
        "created_at": (runs["created_at"].astype(str).to_numpy() if "created_at" in runs.columns
                       else [f"{i:012d}" for i in range(len(runs))]),
    })
    frame = frame[np.array([m is not None for m in frame["model"]], dtype=bool)]  # (a list [] would pick columns)
    _warn_case_variants(frame["model"])
    if coverage is not None:
        frame = frame[~frame["name"].isin(_left_out(coverage, frame["name"], min_coverage, include))]
    ordered = order_versions(frame.reset_index(drop=True))
    sizes = ordered.groupby("group", sort=False)["name"].transform("size")
    ordered = ordered[sizes.to_numpy() >= min_versions]
    return pd.DataFrame({
        "model": ordered["group"].astype(str).to_numpy(), "position": ordered["version_index"].astype(np.int64).to_numpy(),
        "run": ordered["name"].astype(str).to_numpy(), "version": ordered["version"].to_numpy(dtype=object),
        "step": ordered["step"].astype(float).to_numpy(),
    }, columns=SERIES_COLUMNS)


def _warn_case_variants(models: pd.Series) -> None:
    """Warn about model labels that differ only in case (``E5`` and ``e5``): each is its own series, so a
    version logged under the other spelling drops out of the model's curve (or, alone, out of the series)."""
    spellings: dict[str, set[str]] = {}
    for m in models:
        spellings.setdefault(str(m).casefold(), set()).add(str(m))
    variants = [sorted(v) for v in spellings.values() if len(v) > 1]
    if variants:
        warn("model labels that differ only in case are separate models here: "
             + "; ".join(" and ".join(repr(m) for m in v) for v in variants)
             + " (give their runs one spelling with Workspace.set_run_info(name, model=...) to follow them as one)")


def _left_out(coverage: pd.DataFrame, names: pd.Series, min_coverage: float, include: Sequence[str]) -> list[str]:
    """Versions below ``min_coverage`` and not in ``include`` (warned about), of the runs ``names``."""
    keep = {include} if isinstance(include, str) else {str(r) for r in include}
    cov = run_coverage(coverage)
    cov = cov[cov["run"].isin(set(names)) & ~cov["run"].isin(keep)]
    low = cov[cov["run"].isin(set(low_coverage(coverage, threshold=min_coverage)))]
    if len(low):
        warn("left out of the version series for low coverage (their missing queries count 0): " + ", ".join(
            f"{r} ({coverage_text(int(a), int(b))})" for r, a, b in
            zip(low["run"], low["n_with_results"], low["n_ground_truth"], strict=True))
            + "; pass include=[...] or min_coverage=0 to keep them")
    return low["run"].tolist()


def version_models(series: pd.DataFrame) -> list[str]:
    """The models of a :func:`version_series`, in its order."""
    return list(dict.fromkeys(series["model"].astype(str)))


def unsure_order(series: pd.DataFrame, model: str) -> tuple[str, list[str]]:
    """The versions of ``model`` that :func:`version_series` places by a weaker key than the others.

    ``("step", runs)``: some versions have a step and these do not (they come after every version
    with one); ``("same step", runs)``: every version has a step and these share theirs with
    another (among themselves they follow the version label, then the creation order); else,
    without any step, ``("version label", runs)``: some have a label and these do not (they come
    after the labelled ones), or ``("same version label", runs)``: these share their label (they
    follow the creation order); else ``("", [])``. A test "against the previous version" follows
    that order, so a caller should say so.

    >>> s = pd.DataFrame({"model": ["m"] * 3, "position": [0, 1, 2], "run": ["a", "b", "c"],
    ...                   "version": ["v1", "v2", "v3"], "step": [0.0, 0.0, 1.0]})
    >>> unsure_order(s, "m")
    ('same step', ['a', 'b'])
    """
    rows = series[series["model"].astype(str) == str(model)].sort_values("position", kind="mergesort")
    has_step = rows["step"].notna().to_numpy()
    if has_step.any() and not has_step.all():
        return "step", rows.loc[~has_step, "run"].astype(str).tolist()
    if has_step.all():
        shared = rows["step"].astype(float).duplicated(keep=False).to_numpy()
        return ("same step", rows.loc[shared, "run"].astype(str).tolist()) if shared.any() else ("", [])
    labelled = np.array([isinstance(v, str) and bool(v) for v in rows["version"]], dtype=bool)
    if labelled.any() and not labelled.all():
        return "version label", rows.loc[~labelled, "run"].astype(str).tolist()
    shared = pd.Series([str(v) for v in rows["version"]]).duplicated(keep=False).to_numpy() & labelled
    return ("same version label", rows.loc[shared, "run"].astype(str).tolist()) if shared.any() else ("", [])


def _model_runs(series: pd.DataFrame, model: str) -> pd.DataFrame:
    missing = [c for c in SERIES_COLUMNS if c not in series.columns]
    if missing:
        raise OptionError(f"series lacks column(s) {missing}: pass the output of version_series")
    rows = series[series["model"].astype(str) == str(model)].sort_values("position", kind="mergesort")
    if len(rows) < 2:
        have = version_models(series)
        raise OptionError(f"model {model!r} has {len(rows)} version(s) in the series; a series needs 2 or more "
                          f"(models with a series: {have if have else 'none'})")
    return rows.reset_index(drop=True)


def _check_runs_in_table(sel: pd.DataFrame, runs: Sequence[str], metric: str, k: int) -> None:
    present = distinct_strings(sel["run"])
    lost = [r for r in runs if r not in present]
    if lost:
        raise OptionError(f"version run(s) {lost} have no {metric_at_k_label(metric, k)!r} values in the table")


def version_curve(
    table: pd.DataFrame,
    series: pd.DataFrame,
    *,
    model: str,
    metric: str,
    k: int,
    method: str = MEAN_CI_METHOD,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = SEED,
) -> pd.DataFrame:
    r"""Mean and confidence interval of metric@k at each version of ``model``.

    For version :math:`v` with per-query values :math:`x_{vq}` over its :math:`n_v` queries,
    ``mean`` :math:`= \frac{1}{n_v}\sum_q x_{vq}` and ``ci_low`` / ``ci_high`` its interval
    by :func:`evalcore.intervals.mean_intervals` (``method``), computed over every run of the
    table's metric@k rows, so the resamples are shared by all of them (pass the whole
    metric@k slice and each version's interval equals the one the other views show).

    Parameters
    ----------
    table : DataFrame
        The long per-query table. Not modified.
    series : DataFrame
        :func:`version_series` output.
    model : str
    metric : str
        Canonical metric name.
    k : int
        Cutoff (0 = none).
    method, confidence, n_resamples, seed
        As in :func:`evalcore.intervals.mean_intervals`.

    Returns
    -------
    DataFrame
        :data:`CURVE_COLUMNS`, one row per version in order (NaN interval when ``n < 2``; ``n = 0`` and
        no mean for a version whose values are all NaN: ``first_rel_rank`` of a version that finds no
        relevant document on any query).

    Raises
    ------
    OptionError
        Unknown model or metric@k, a version without values, bad options.
    """
    rows = _model_runs(series, model)
    _validate_table(table)
    sel = _select_metric_k(table, metric, k)
    runs = rows["run"].astype(str).tolist()
    _check_runs_in_table(sel, runs, metric, k)
    ci = mean_intervals(sel, by=("run",), method=method, confidence=confidence, n_resamples=n_resamples,
                        seed=seed)
    ci = ci.assign(run=ci["run"].astype(str)).set_index("run").reindex(runs)  # a version without a value: NaN
    out = rows[["position", "run", "version", "step"]].copy()
    out["n"] = ci["n"].fillna(0).to_numpy(dtype=np.int64)
    for col in ("mean", "ci_low", "ci_high"):
        out[col] = ci[col].to_numpy(dtype=np.float64)
    return out[CURVE_COLUMNS]


def version_tests(
    table: pd.DataFrame,
    series: pd.DataFrame,
    *,
    model: str,
    metric: str,
    k: int,
    reference: str | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = TEST_RESAMPLES,
    seed: int = SEED,
    confidence: float = 0.95,
    ci_method: str = TEST_CI_METHOD,
    resampling: str = TEST_RESAMPLING,
    against: Sequence[str] = AGAINST,
) -> pd.DataFrame:
    r"""Paired tests of each version of ``model`` against the previous one and against a reference.

    With the versions :math:`v_0, \dots, v_{m-1}` of the series and the reference :math:`v_r`:

    * ``against = "previous"``: :math:`(v_{i-1}, v_i)` for :math:`i = 1 .. m-1`;
    * ``against = "reference"``: :math:`(v_r, v_i)` for every :math:`i \ne r`.

    Each pair is one row of :func:`evalcore.stats.compare` (``run_a`` the earlier version or
    the reference, ``run_b`` the version; ``diff`` = mean of :math:`b_q - a_q`, paired by query
    id; ``test``; ``ci_method`` and ``resampling`` for the interval of ``diff``). The
    ``correction`` is applied within each family — the :math:`m - 1` consecutive pairs, and
    separately the :math:`m - 1` pairs with the reference — at this one metric@k.

    Parameters
    ----------
    table : DataFrame
        The long per-query table. Not modified.
    series : DataFrame
        :func:`version_series` output (built with its ``coverage=``, the low-coverage versions are
        left out, as on the Versions page: a version missing most queries, scored 0 there, would
        otherwise test as a large regression).
    model : str
    metric : str
    k : int
    reference : str, optional
        The reference version's run; default the model's first version.
    test, correction, alpha, n_resamples, seed, confidence, ci_method, resampling
        As in :func:`evalcore.stats.compare`.
    against : sequence of str, default :data:`AGAINST`
        The families computed, among ``"previous"`` and ``"reference"``. Each family is computed on its
        own (its tests, its shared resamples, its correction), so the rows of one family are those
        of both: a caller that keeps the ``"previous"`` family recomputes only the other when the
        reference changes.

    Returns
    -------
    DataFrame
        ``against`` (:data:`AGAINST`), ``position`` (the version's, of ``run_b``), then the
        columns of :func:`evalcore.stats.compare`; the consecutive pairs first, then the pairs
        with the reference, each in version order (only the families of ``against``).

    Raises
    ------
    OptionError
        Unknown model, metric@k or reference, a version without values, bad options.
    """
    families = _families(against)
    rows = _model_runs(series, model)
    runs = rows["run"].astype(str).tolist()
    position = dict(zip(runs, rows["position"].astype(int), strict=True))
    reference = runs[0] if reference is None else str(reference)
    if reference not in position:
        raise OptionError(f"reference {reference!r} is not a version of model {model!r}; its versions: {runs}")
    _validate_table(table)
    sel = _select_metric_k(table, metric, k)
    _check_runs_in_table(sel, runs, metric, k)
    opts = dict(metric=metric, k=k, runs=runs, test=test, correction=correction, alpha=alpha,
                n_resamples=n_resamples, seed=seed, confidence=confidence, ci_method=ci_method,
                resampling=resampling)
    parts = []
    if AGAINST[0] in families:
        parts.append(compare(sel, pairs=list(zip(runs[:-1], runs[1:], strict=True)), **opts).assign(against=AGAINST[0]))
    if AGAINST[1] in families:
        ref = compare(sel, baseline=reference, **opts)
        ref = ref.assign(_pos=ref["run_b"].map(position)).sort_values("_pos", kind="mergesort").drop(columns="_pos")
        parts.append(ref.assign(against=AGAINST[1]))
    out = pd.concat(parts, ignore_index=True)
    out.insert(1, "position", out["run_b"].map(position).astype(np.int64))
    return out[["against", "position", *[c for c in parts[0].columns if c != "against"]]]


def _families(against: Sequence[str]) -> list[str]:
    """``against`` of :func:`version_tests` checked: a non-empty selection of :data:`AGAINST`, no family twice."""
    chosen = [against] if isinstance(against, str) else list(against) if isinstance(against, Sequence) else None
    if not chosen or any(a not in AGAINST for a in chosen) or len(set(chosen)) != len(chosen):
        raise OptionError(f"against must name one or both of {list(AGAINST)}, each once, got {against!r}")
    return chosen


@dataclass(frozen=True)
class VersionChanges:
    """Version A against version B query by query (:func:`version_changes`).

    Attributes
    ----------
    run_a, run_b : str
    metric : str
    k : int
    higher_is_better : bool
        Whether a higher value of the metric is better (the direction of "improved").
    per_query : DataFrame
        ``query_id, domain, a, b, difference, gain, change`` of every query both runs have,
        sorted by query id: ``difference`` :math:`= b_q - a_q`, ``gain`` the difference in
        the better direction (:math:`-d_q` for a lower-is-better metric), ``change`` one of
        ``"improved"`` (gain > tolerance), ``"regressed"`` (gain < -tolerance), ``"unchanged"``.
    improved, regressed : DataFrame
        The ``top`` rows of ``per_query`` that improved most (gain descending) and regressed
        most (gain ascending), ties by query id ascending.
    n_improved, n_unchanged, n_regressed : int
        Counts over ``per_query`` (:func:`evalcore.stats.win_tie_loss` with the tolerance).
    n_unpaired : int
        Queries only one of the two runs has a value for (left out).
    """

    run_a: str
    run_b: str
    metric: str
    k: int
    higher_is_better: bool
    per_query: pd.DataFrame
    improved: pd.DataFrame
    regressed: pd.DataFrame
    n_improved: int
    n_unchanged: int
    n_regressed: int
    n_unpaired: int


def version_changes(
    table: pd.DataFrame,
    *,
    metric: str,
    k: int,
    run_a: str,
    run_b: str,
    top: int = 10,
    tolerance: float = 0.0,
) -> VersionChanges:
    r"""What changed from version A to version B: per-query differences, most improved and regressed.

    The two runs' values of metric@k are paired by query id
    (:func:`evalcore.aggregate.wide_per_query`); for each query both have,
    :math:`d_q = b_q - a_q` and the gain :math:`g_q = d_q` (:math:`-d_q` when a lower value is
    better, :func:`higher_is_better`). A query improved when :math:`g_q > \tau`, regressed when
    :math:`g_q < -\tau`, else is unchanged (:math:`\tau` = ``tolerance``).

    Parameters
    ----------
    table : DataFrame
        The long per-query table. Not modified.
    metric : str
    k : int
    run_a, run_b : str
        The earlier and the later version (any two distinct runs of the table).
    top : int, default 10
        Rows of the most-improved and most-regressed lists (>= 1).
    tolerance : float, default 0.0
        :math:`\tau` >= 0.

    Returns
    -------
    VersionChanges

    Raises
    ------
    OptionError
        The same run twice, unknown run or metric@k, bad ``top`` or ``tolerance``.
    """
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
        raise OptionError(f"top must be an integer >= 1, got {top!r}")
    run_a, run_b = str(run_a), str(run_b)
    if run_a == run_b:
        raise OptionError(f"version A and version B are the same run ({run_a!r}): choose two versions")
    wide = wide_per_query(table, metric=metric, k=k, runs=[run_a, run_b])
    a, b = wide[run_a].to_numpy(dtype=float), wide[run_b].to_numpy(dtype=float)
    both = np.isfinite(a) & np.isfinite(b)
    higher = higher_is_better(metric)
    wins, ties, losses = win_tie_loss(a[both], b[both], tolerance=tolerance)
    d = b[both] - a[both]
    gain = d if higher else -d
    tol = float(tolerance)
    per_query = pd.DataFrame({
        "query_id": wide.index[both].astype(str), "domain": wide["domain"].to_numpy()[both].astype(str),
        "a": a[both], "b": b[both], "difference": d, "gain": gain,
        "change": np.where(gain > tol, "improved", np.where(gain < -tol, "regressed", "unchanged")),
    })
    up = per_query[per_query["change"] == "improved"].assign(_g=lambda f: -f["gain"])
    down = per_query[per_query["change"] == "regressed"].assign(_g=lambda f: f["gain"])

    def most(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.sort_values(["_g", "query_id"], kind="mergesort").drop(columns="_g").head(int(top)) \
            .reset_index(drop=True)

    n_improved, n_regressed = (wins, losses) if higher else (losses, wins)
    n_unpaired = int(np.count_nonzero(np.isfinite(a) ^ np.isfinite(b)))
    return VersionChanges(run_a, run_b, str(metric), int(k), higher, per_query.reset_index(drop=True), most(up),
                          most(down), int(n_improved), int(ties), int(n_regressed), n_unpaired)

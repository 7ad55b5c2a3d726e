"""Per-domain evaluation on the command line: ``--domains FILE`` and ``--by-domain`` of ``evaluate`` and ``compare``.

Where a query's domain comes from, as in the workspace and the dashboard (:func:`evalcore.workspace.sidechecks.
label_domains`): a domain mapping file (``--domains FILE``, read by :func:`evalcore.io.load_domains`, the reader of
the Data page and :meth:`~evalcore.workspace.Workspace.set_domains`; without it, the mapping the ``--workspace``
holds) gives the queries it lists their domain, over the ground truth's own domain column; a query it does not list
keeps its own domain; a query with neither has none and forms the group ``(none)``. When both sources give domains,
one note says how many queries each gave (:func:`~evalcore.workspace.sidechecks.domain_sources_text`); a mapping
naming none of the queries, or leaving some without, is said as the workspace says it.

``evaluate --by-domain`` prints each run's mean of each metric@k per domain with the Domains page's intervals
(:func:`per_domain_summary`: :func:`evalcore.intervals.summarize_with_intervals` by run and domain on each
metric@k's rows, percentile bootstrap on ``--n-resamples`` resamples seeded by ``--seed``) and, with ``--out``,
writes them as ``per_domain.csv`` (:data:`PER_DOMAIN_COLUMNS`). ``compare --by-domain`` prints the per-domain
paired tests against ``--baseline`` of :func:`evalcore.stats.compare_by_domain` (:func:`compare_per_domain`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..defaults import MIN_DOMAIN_QUERIES
from ..errors import OptionError, quiet_warnings, warn

__all__ = ["NO_DOMAIN", "PER_DOMAIN_COLUMNS", "PER_DOMAIN_FILE", "DomainSource", "add_domain_options",
           "domain_source", "per_domain_summary", "per_domain_text", "write_per_domain", "compare_per_domain",
           "check_stored_mapping", "record_mapping"]

#: How the queries without a domain are shown and written (the Domains page's group).
NO_DOMAIN = "(none)"
#: The file ``evaluate --by-domain --out DIR`` writes.
PER_DOMAIN_FILE = "per_domain.csv"
#: Its columns (README, "Command line"): the run, the domain (``(none)``: no domain), the metric and its cutoff (0: the
#: whole list), the queries with a value, their mean, standard deviation (n - 1) and the mean's 95% percentile-bootstrap
#: interval (empty below 2 queries), then the metric's declared aggregate (``mean``, ``sum`` of a count, ``gmean`` of
#: ``gm_map``), its value and interval (as the Domains page shows them).
PER_DOMAIN_COLUMNS = ("run", "domain", "metric", "k", "n", "mean", "std", "ci_low", "ci_high", "aggregation",
                      "aggregate", "aggregate_ci_low", "aggregate_ci_high")


def add_domain_options(p: argparse.ArgumentParser, *, command: str) -> None:
    """``--domains FILE`` and ``--by-domain`` (``compare``: also ``--min-queries``)."""
    g = p.add_argument_group("domains")
    g.add_argument("--domains", default=None, metavar="FILE",
                   help="domain mapping file, query id -> domain (CSV/TSV with or without header, Parquet, JSON; the "
                        "dashboard's domain mapping): the queries it lists take its domain, over the ground truth's own "
                        "domain column (kept by the queries it does not list; a query with neither forms the group "
                        f"{NO_DOMAIN})" + (", in place of the mapping the --workspace holds (and stored there as "
                                           "its domain mapping; another one there is replaced only with --replace)"
                                           if command == "evaluate" else "; with --per-query, over the file's domain "
                                           "column; only with --by-domain"))
    if command == "evaluate":
        g.add_argument("--by-domain", action="store_true",
                       help="also print each run's mean per domain with its 95%% interval (the Domains page's: "
                            "percentile bootstrap on --n-resamples resamples of each metric@k's queries, shared by every "
                            "run, drawn with --seed, whatever --ci-method; none below 2 queries) and the domain "
                            f"sizes; with --out also {PER_DOMAIN_FILE}. The domains: --domains, else the mapping the --workspace holds, over the "
                            "ground truth's own domain column")
    else:
        g.add_argument("--by-domain", action="store_true",
                       help="test each run against --baseline within each domain (evalcore.stats.compare_by_domain, the "
                            "Domains page's significance; the correction across every tested domain x run of each "
                            "metric@k) instead of over all queries; domains with fewer than --min-queries queries are "
                            "named and not tested. The domains: --domains, else the ground truth's (or --per-query "
                            "file's) domain column")
        g.add_argument("--min-queries", type=int, default=MIN_DOMAIN_QUERIES, metavar="N",
                       help=f"with --by-domain: the fewest queries a domain needs to be tested (default "
                            f"{MIN_DOMAIN_QUERIES}, as the Domains page; >= 2)")


@dataclass
class DomainSource:
    """Where the command's query domains come from: a mapping (``mapping``, read from the file named ``file``) over the
    ground truth's own domain column, or the ground truth's column alone (``mapping`` None).

    ``required`` (``--by-domain``): some query must have a domain, checked as soon as the ground truth is read
    (:meth:`note`), before anything is ranked. :meth:`label` / :meth:`label_reference` / :meth:`label_table` give
    the evaluated ground truth (or a per-query table) its domains. ``noted`` False (the mapping a workspace holds,
    used without ``--by-domain``): what its ids are against the ground truth is not said again at every command (the
    workspace said it when it was stored, and says it when the command makes another ground truth the active one).
    """

    mapping: dict[str, str] | None
    file: str | None = None
    required: bool = False
    workspace: bool = False
    noted: bool = True
    _said_none: bool = field(default=False, repr=False)
    #: whether the ground truth has domains of its own (set by :meth:`note`)
    own_column: bool = field(default=False, repr=False)

    def note(self, query_ids: Any, own: Mapping[str, str], *, ground_truth: str | None = None) -> None:
        """Said once the ground truth is read (``query_ids``: its queries before any sample, every aspect's; ``own``:
        its own domains): the workspace's note on a domain mapping (how many queries each source gives, or that
        it names none or only some of them); ``required`` with no domain anywhere: OptionError."""
        from ..workspace.sidechecks import NO_DOMAIN_MATCH, side_ids_text

        self.own_column = bool(own)
        if self.mapping is None or not self.noted:
            if self.mapping is None and self.required and not own:
                raise OptionError(f"--by-domain: no query of {ground_truth or 'the ground truth'} has a domain: give "
                                  "--domains FILE (query id -> domain: CSV/TSV, Parquet or JSON, the dashboard's "
                                  "domain mapping), or a ground truth with a domain column (a qrels table with a "
                                  "domain column, a graded JSON file with a domain per query)"
                                  + (", or a --workspace holding a domain mapping" if self.workspace else ""))
            return
        text = side_ids_text("domains", list(self.mapping), query_ids, label=self.file, ground_truth=ground_truth,
                             own=own)
        if self.required and not own and text is not None and text.startswith(NO_DOMAIN_MATCH):
            raise OptionError(f"--by-domain: {text}")  # (every query would be in the group (none))
        if text is not None:
            warn(text)
            self._said_none = text.startswith(NO_DOMAIN_MATCH) or "names none of them" in text

    def note_ground_truths(self, parts: Sequence[Any], *, ground_truth: str | None = None) -> None:
        """:meth:`note` of parsed ground truths (every aspect's :class:`~evalcore.data.Qrels`, before any sample)."""
        from ..workspace.sidechecks import own_domains

        own: dict[str, str] = {}
        for q in parts:
            own = {**own_domains(q), **own}  # (a query in two aspects: the first one's domain, as the workspace)
        ids = np.concatenate([np.asarray(q.query_ids, dtype=object) for q in parts]) if parts else []
        self.note(ids, own, ground_truth=ground_truth)

    def _quiet(self):
        from ..workspace.sidechecks import NO_DOMAIN_MATCH

        # (said by note() already, against every query of the ground truth: not a second time; a workspace's mapping
        # without --by-domain: said by the workspace when it was stored, or when the command makes another ground
        # truth the active one, not at every command)
        quiet = self._said_none or not self.noted
        return quiet_warnings(re.escape(NO_DOMAIN_MATCH)) if quiet else contextlib.nullcontext()

    def label(self, qrels: Any) -> Any:
        """``qrels`` (sampled) with the mapping's domains over its own (:func:`~evalcore.workspace.sidechecks.
        label_domains`, the workspace's rule); itself without a mapping."""
        from ..workspace.sidechecks import label_domains

        if self.mapping is None:
            return qrels
        with self._quiet():
            return label_domains(qrels, self.mapping, label=self.file, stacklevel=3)

    def label_reference(self, gt: Any) -> Any:
        """A reference model's ground truth (:class:`~evalcore.embedding_runs.ReferenceGroundTruth`) with the
        mapping's domains (it has none of its own), as the workspace labels it."""
        from ..embedding_runs import ReferenceGroundTruth
        from ..workspace.sidechecks import check_domain_ids

        if self.mapping is None:
            return gt
        d = self.mapping
        with self._quiet():
            check_domain_ids(gt.deepest, d, label=self.file, stacklevel=3)
        return ReferenceGroundTruth(gt.mode, gt.ks, gt.query_ids, gt.deepest.with_domains(d),
                                    {k: q.with_domains(d) for k, q in gt.by_k.items()},
                                    None if gt.fixed is None else gt.fixed.with_domains(d), gt.settings)

    def label_table(self, table: Any, *, name: str) -> Any:
        """A per-query table (``compare --per-query``; file ``name``) with the mapping's domains over its domain
        column (a copy; the table itself without a mapping), after :meth:`note`."""
        from .._lazy import pd

        queries = table["query_id"].astype(str)
        column = table["domain"].astype(object).fillna("").astype(str)
        has = (column != "").to_numpy()
        first = pd.Series(column.to_numpy()[has], index=queries.to_numpy()[has])
        own = first[~first.index.duplicated()].to_dict()  # (a query's first domain, as the table lists it)
        self.note(pd.unique(queries.to_numpy(dtype=object)), own, ground_truth=name)
        if self.mapping is None:
            return table
        mapped = queries.map(self.mapping)
        return table.assign(domain=mapped.where(mapped.notna(), column).to_numpy(dtype=object))


def domain_source(args: argparse.Namespace) -> DomainSource | None:
    """The command's :class:`DomainSource`: ``--domains FILE``; else (``evaluate``) the domain mapping the
    ``--workspace`` holds; else, with ``--by-domain``, the ground truth's own domain column (required). None when the
    command needs no domains (no mapping, no ``--by-domain``): the evaluation is then the same as before."""
    from ..io import load_domains

    by_domain = bool(getattr(args, "by_domain", False))
    path = getattr(args, "domains", None)
    if path:
        mapping = {str(k): str(v) for k, v in load_domains(path).items()}
        return DomainSource(mapping, os.path.basename(str(path)), required=by_domain)
    stored = _workspace_domains(args, needed=by_domain)
    if stored is not None:
        return DomainSource(stored[0], stored[1], required=by_domain, noted=by_domain)
    return DomainSource(None, required=True, workspace=hasattr(args, "workspace")) if by_domain else None


def _workspace_domains(args: argparse.Namespace, *, needed: bool) -> tuple[dict[str, str], str | None] | None:
    """The domain mapping the ``--workspace`` holds (and its file's name), None when there is none (or no
    workspace). One that cannot be read is an error with ``needed`` (``--by-domain``), else a warning: the evaluation
    goes on without it."""
    folder = getattr(args, "workspace", None)
    if not folder:
        return None
    from ..errors import EvalcoreError
    from ..workspace import Workspace
    from ..workspace.locations import is_workspace

    if not is_workspace(Path(folder).expanduser()):
        return None
    ws = Workspace.open(Path(folder).expanduser(), create=False)
    try:
        try:
            mapping = ws.domains()
        except EvalcoreError as e:
            if needed:
                raise
            warn(f"the domain mapping of workspace {ws.path} is not applied: {e}")
            return None
        return None if mapping is None else ({str(k): str(v) for k, v in mapping.items()}, ws.side_name("domains"))
    finally:
        ws.close()


def _file_mapping(args: argparse.Namespace) -> dict[str, str]:
    from ..io import load_domains

    return {str(k): str(v) for k, v in load_domains(args.domains).items()}


def check_stored_mapping(ws: Any, args: argparse.Namespace) -> bool:
    """``evaluate --domains FILE --workspace WS``: whether WS already holds this very mapping (then nothing is
    stored). Another mapping there stops the command, before any work, unless ``--replace`` (the workspace's rule:
    nothing replaced silently)."""
    stored = ws.domains()
    if stored is None:
        return False
    mine = _file_mapping(args)
    if {str(k): str(v) for k, v in stored.items()} == mine:
        return True
    if not getattr(args, "replace", False):
        raise OptionError(f"nothing recorded in workspace {ws.path}: it holds another domain mapping "
                          f"({ws.side_name('domains') or 'given in Python'}, {len(stored):,} queries) than --domains "
                          f"{os.path.basename(str(args.domains))} ({len(mine):,} queries); pass --replace to replace "
                          "it, or leave --domains out to use the workspace's")
    return False


def record_mapping(ws: Any, args: argparse.Namespace) -> None:
    """Store ``--domains FILE`` as the workspace's domain mapping (as the Data page stores one), unless it holds this
    very mapping; what the file's ids are against the ground truth was said already (its warning is not repeated)."""
    from ..errors import collected_warnings

    if not getattr(args, "domains", None) or check_stored_mapping(ws, args):
        return
    with collected_warnings():
        ws.set_domains(args.domains, name=os.path.basename(str(args.domains)))


# ------------------------------------------------------------------------------------------- evaluate --by-domain
def _plain_rows(rows: Any) -> Any:
    """The rows ``run, query_id, domain, metric, k, value`` as plain columns (strings, ``""`` for no domain)."""
    from .._lazy import pd

    return pd.DataFrame({
        "run": rows["run"].astype(str).to_numpy(dtype=object),
        "query_id": rows["query_id"].astype(str).to_numpy(dtype=object),
        "domain": rows["domain"].astype(object).fillna("").astype(str).to_numpy(dtype=object),
        "metric": rows["metric"].astype(str).to_numpy(dtype=object),
        "k": rows["k"].to_numpy(dtype=np.int64),
        "value": rows["value"].to_numpy(dtype=np.float64)})


def _metric_k_slices(table: Any) -> list[tuple[str, int, Any]]:
    """``(metric, k, rows)`` of each metric@k of the per-query table, in the order the table first lists them."""
    t = _plain_rows(table)
    keys = list(dict.fromkeys(zip(t["metric"].tolist(), t["k"].tolist(), strict=True)))
    groups = t.groupby(["metric", "k"], sort=False).indices
    return [(m, int(k), t.iloc[groups[(m, k)]].reset_index(drop=True)) for m, k in keys]


def per_domain_summary(table: Any, *, n_resamples: int, seed: int) -> tuple[Any, Any]:
    """``(summary, sizes)`` of the per-query table by domain, as the Domains page computes them.

    ``summary``: :data:`PER_DOMAIN_COLUMNS`, one row per metric@k, run and domain: on each metric@k's rows,
    :func:`evalcore.intervals.summarize_with_intervals` by ``run, domain, metric, k`` with ``aggregates=True``
    (percentile-bootstrap interval of the mean over ``n_resamples`` resamples of that metric@k's queries with a
    value, drawn with ``seed`` and shared by every run and domain; NaN below 2 queries). Ordered by metric@k and run
    as the table lists them, then by domain size (largest first; ties by name). ``sizes``: ``domain, n_queries``,
    the evaluated queries of each domain (largest first). The queries without a domain are the domain
    :data:`NO_DOMAIN`.
    """
    from .._lazy import pd
    from ..intervals import summarize_with_intervals

    parts = []
    slices = _metric_k_slices(table)
    runs = list(dict.fromkeys(table["run"].astype(str).tolist()))
    first = slices[0][2]
    per = first[["query_id", "domain"]].drop_duplicates()
    sizes = per.groupby("domain").size().rename("n_queries").reset_index()
    sizes = sizes.sort_values(["n_queries", "domain"], ascending=[False, True], kind="mergesort")
    order = {d: i for i, d in enumerate(sizes["domain"].tolist())}
    for _, _, rows in slices:
        s = summarize_with_intervals(rows, by=("run", "domain", "metric", "k"), n_resamples=n_resamples, seed=seed,
                                     aggregates=True)
        s = s.assign(_run=s["run"].map({r: i for i, r in enumerate(runs)}),
                     _dom=s["domain"].map(lambda d: order.get(d, len(order))))
        parts.append(s.sort_values(["_run", "_dom", "domain"], kind="mergesort"))
    out = pd.concat(parts, ignore_index=True)
    out["domain"] = out["domain"].replace("", NO_DOMAIN)
    out["k"] = out["k"].astype(np.int64)
    out["n"] = out["n"].astype(np.int64)
    sizes = sizes.assign(domain=sizes["domain"].replace("", NO_DOMAIN)).reset_index(drop=True)
    return out[list(PER_DOMAIN_COLUMNS)].reset_index(drop=True), sizes


def _cell(row: Any, size: int) -> str:
    """One run's value in one domain as printed: the declared aggregate and its interval."""
    kind, value = str(row.aggregation), float(row.aggregate)
    if kind == "sum":
        text = f"{value:g} (sum)"
    else:
        text = f"{value:.4f}" + (" (gm)" if kind == "gmean" else "")
        lo, hi = float(row.aggregate_ci_low), float(row.aggregate_ci_high)
        if lo == lo and hi == hi:
            text += f" [{lo:.4f}, {hi:.4f}]"
    return text + ("" if int(row.n) == size else f" n={int(row.n)}")


def per_domain_text(summary: Any, sizes: Any, *, n_resamples: int, seed: int, source: str) -> str:
    """The printed per-domain means: the domain sizes, then one table per metric@k (a row per domain, a column per
    run: the mean [95% CI]; a count's total, gm_map's geometric mean)."""
    from .._lazy import pd
    from ..aggregate import metric_at_k_label

    runs = list(dict.fromkeys(summary["run"].tolist()))
    size_of = dict(zip(sizes["domain"].tolist(), sizes["n_queries"].tolist(), strict=True))
    lines = [f"PER DOMAIN ({source}): mean [95% CI: percentile bootstrap, {n_resamples:,} resamples of the queries "
             f"shared by every run and domain, seed {seed}; none below 2 queries]; a count's total (sum), gm_map's "
             "geometric mean (gm)",
             f"domain sizes (evaluated queries; {NO_DOMAIN}: no domain): "
             + ", ".join(f"{d} {int(n):,}" for d, n in size_of.items())]
    keys = list(dict.fromkeys(zip(summary["metric"].tolist(), summary["k"].tolist(), strict=True)))
    for metric, k in keys:
        block = summary[(summary["metric"] == metric) & (summary["k"] == k)]
        cells = {(r.domain, r.run): _cell(r, int(size_of.get(r.domain, -1))) for r in block.itertuples(index=False)}
        domains = [d for d in size_of if any((d, r) in cells for r in runs)]
        frame = pd.DataFrame({"domain": domains, "n": [int(size_of[d]) for d in domains],
                              **{r: [cells.get((d, r), "-") for d in domains] for r in runs}})
        lines.append(f"\n{metric_at_k_label(metric, k) if k else metric}")
        lines.append(frame.to_string(index=False))
    return "\n".join(lines)


def write_per_domain(summary: Any, folder: str | os.PathLike) -> Path:
    """``per_domain.csv`` in ``folder`` (:data:`PER_DOMAIN_COLUMNS`; floats with 17 significant digits, read back
    to the bit)."""
    path = Path(folder) / PER_DOMAIN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    summary.to_csv(path, index=False, float_format="%.17g")
    return path


# ------------------------------------------------------------------------------------------- compare --by-domain
def compare_per_domain(table: Any, *, metrics_k: Sequence[tuple[str, int]], baseline: str, runs: Sequence[str],
                       args: argparse.Namespace) -> Any:
    """:func:`evalcore.stats.compare_by_domain` of each metric@k (its own correction family: every tested domain x
    run), with the command's test options; printed per domain, the domains too small to test named once. Returns
    the rows of every metric@k (domain ``(none)`` for the queries without one)."""
    from .._lazy import pd
    from ..aggregate import metric_at_k_label
    from ..stats import compare_by_domain

    frames = []
    for metric, k in metrics_k:
        res = compare_by_domain(table, metric=metric, k=k, baseline=baseline, runs=list(runs), test=args.test,
                                min_queries=args.min_queries, correction=args.correction, alpha=args.alpha,
                                n_resamples=args.n_resamples, seed=args.seed, ci_method=args.ci_method,
                                resampling=args.resampling)
        res = res.assign(domain=res["domain"].replace("", NO_DOMAIN))
        frames.append(res)
        print(_domain_tests_text(res, metric_at_k_label(metric, k) if k else metric, baseline, args))
    return pd.concat(frames, ignore_index=True)


def _domain_tests_text(res: Any, label: str, baseline: str, args: argparse.Namespace) -> str:
    """The printed tests of one metric@k: a header, the domains too small to test (once), a table per domain."""
    from .._lazy import pd
    from .options import p_text as _p_text

    small_rows = res["note"].astype(str).str.startswith("too small to test").to_numpy()
    tested = res[~small_rows]
    n_of = res.groupby("domain", sort=False)["n"].max()
    lines = [f"\n{label}: paired {args.test} test per domain against baseline {baseline!r}, correction "
             f"{args.correction} across the {len(tested)} tested domain x run row{'' if len(tested) == 1 else 's'}, "
             f"alpha {args.alpha}; diff = run mean - baseline mean (paired by query); wins / ties / losses = queries "
             "where the run is above / equal to / below the baseline"]
    small = [d for d in dict.fromkeys(res.loc[small_rows, "domain"].tolist()) if d not in set(tested["domain"])]
    if small:
        lines.append(f"too small to test (fewer than {args.min_queries} queries; not tested, their rows in --out "
                     "keep the means): " + ", ".join(f"{d} ({int(n_of[d])} quer{'y' if int(n_of[d]) == 1 else 'ies'})"
                                             for d in small))
    cols = ["run_b", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "effect_size", "p_value", "p_adjusted",
            "significant", "wins", "ties", "losses", "note"]
    for domain, rows in tested.groupby("domain", sort=False):
        show = rows[[c for c in cols if c in rows.columns]].rename(columns={"run_b": "run", "mean_a": "baseline",
                                                                            "mean_b": "mean"})
        for c in ("p_value", "p_adjusted"):
            if c in show.columns:
                show[c] = [_p_text(p) for p in show[c]]
        lines.append(f"domain {domain} ({int(n_of[domain])} quer{'y' if int(n_of[domain]) == 1 else 'ies'})")
        with pd.option_context("display.max_rows", 500, "display.max_columns", 50, "display.width", 200,
                               "display.float_format", "{:.4f}".format):
            lines.append(show.to_string(index=False))
    if tested.empty:
        lines.append("no domain has enough queries to test")
    return "\n".join(lines)

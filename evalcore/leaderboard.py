r"""A leaderboard (runs × metric@k means) as Markdown or LaTeX, in the manner of ranx's tables.

:func:`leaderboard` lays out a summary (:func:`evalcore.aggregate.summarize` or
:func:`evalcore.intervals.summarize_with_intervals`): each metric's declared aggregate when the
summary has it (``aggregates=True``: the mean; a count's total; ``gm_map``'s geometric mean), as
the dashboard's table shows it, else the mean; and marks, per column,

* the **best** run (highest value; lowest for ``first_rel_rank``; ties all marked),
  sought among the compared runs only, within each group of runs (``groups``: the
  ground-truth aspect each run is judged against) — set in bold; none for the
  descriptive counts (:data:`evalcore.metrics.DESCRIPTIVE`);
* a **significant difference against the baseline**, from the rows of
  :func:`evalcore.stats.compare_many` (``baseline=...``): ``†`` when the run is
  significantly better than the baseline, ``‡`` when significantly worse
  (``significant`` = corrected p-value below α, as that call decided); only for runs
  of the baseline's group, none for the descriptive counts.

:func:`to_markdown` and :func:`to_latex` write it; user strings (run names) are
escaped for each language. ranx (Bassani, ECIR 2022) marks significance with
superscript letters against every other system; against one baseline a single
mark reads more easily, and the caption states the test, correction and α.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ._lazy import pd
from .aggregate import best_per_column, metric_at_k_label
from .errors import OptionError
from .metrics import DESCRIPTIVE, LOWER_IS_BETTER, metric_base

__all__ = ["BETTER", "WORSE", "Leaderboard", "leaderboard", "to_markdown", "to_latex"]

#: Marks of a significant difference against the baseline.
BETTER, WORSE = "†", "‡"


@dataclass(frozen=True)
class Leaderboard:
    """What :func:`to_markdown` / :func:`to_latex` write.

    Attributes
    ----------
    runs : list of str
        Rows, in order.
    columns : list of str
        Column labels (``ndcg@10``...).
    means : DataFrame
        runs × columns, float (NaN where a run lacks the metric@k): the values shown (see the module
        docstring: the declared aggregate where the summary has it).
    best : DataFrame
        runs × columns, bool.
    marks : DataFrame
        runs × columns, ``""``, :data:`BETTER` or :data:`WORSE`.
    baseline : str or None
    caption : str
    digits : int
    notes : list of str
    totals : list of str
        Columns holding totals (counts): written as integers.
    groups : dict run -> str
        The group (ground-truth aspect) of each run when there is more than one: a column of its own.
    """

    runs: list[str]
    columns: list[str]
    means: pd.DataFrame
    best: pd.DataFrame
    marks: pd.DataFrame
    baseline: str | None
    caption: str
    digits: int = 3
    notes: list[str] = field(default_factory=list)
    totals: list[str] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)

    def cell(self, run: str, column: str) -> tuple[str, bool, str]:
        """``(number text, is best, mark)`` of one cell; the number is ``"–"`` when missing, a total an integer."""
        v = self.means.loc[run, column]
        whole = column in self.totals and np.isfinite(v) and float(v).is_integer()
        num = "–" if not np.isfinite(v) else f"{v:.0f}" if whole else f"{v:.{self.digits}f}"
        return num, bool(self.best.loc[run, column]), str(self.marks.loc[run, column])


def leaderboard(
    summary: pd.DataFrame,
    *,
    columns: Sequence[tuple[str, int]],
    runs: Sequence[str],
    comparison: pd.DataFrame | None = None,
    baseline: str | None = None,
    compared: Collection[str] | None = None,
    digits: int = 3,
    caption: str = "",
    groups: Mapping[str, object] | None = None,
) -> Leaderboard:
    """Values of ``runs`` at ``columns`` with the best per column and significance marks against ``baseline``.

    Parameters
    ----------
    summary : DataFrame
        ``run, metric, k, mean`` (at least); with ``aggregation, aggregate`` (``aggregates=True``) the
        declared aggregate is shown. Not modified.
    columns : sequence of (metric, k)
    runs : sequence of str
        Rows, in order.
    comparison : DataFrame, optional
        :func:`evalcore.stats.compare_many` rows with ``run_a`` = ``baseline``
        (``run_b``, ``metric``, ``k``, ``diff``, ``significant``). Without it no mark is set.
    baseline : str, optional
        The run the marks refer to (listed in the caption; never marked itself).
    compared : collection of str, optional
        Runs eligible for best and marks (default all ``runs``; e.g. leave out a run
        that answers too few queries).
    digits : int, default 3
    caption : str, default ""
        Text under the table; the legend of the marks is appended when a baseline is given.
    groups : mapping run -> group, optional
        The ground-truth aspect of each run: best within each group, marks only for the baseline's
        group, a column of its own when there are several. Give ``comparison`` for those runs only
        (the correction's family).

    Returns
    -------
    Leaderboard
    """
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 0 <= digits <= 10:
        raise OptionError(f"digits must be an integer in [0, 10], got {digits!r}")
    runs = [str(r) for r in runs]
    if baseline is not None and str(baseline) not in runs:
        raise OptionError(f"the baseline {baseline!r} is not among the runs {runs}")
    eligible = set(runs if compared is None else (str(r) for r in compared))
    group_of = {str(r): str(g) for r, g in (groups or {}).items()}
    s = summary.assign(run=summary["run"].astype(str), metric=summary["metric"].astype(str))
    value = "aggregate" if "aggregate" in s.columns else "mean"
    labels = [metric_at_k_label(m, int(k)) for m, k in columns]
    means = pd.DataFrame(np.nan, index=runs, columns=labels)
    idx = s.set_index(["run", "metric", "k"])[value]
    for (m, k), lab in zip(columns, labels, strict=True):
        for r in runs:
            if (r, m, int(k)) in idx.index:
                means.loc[r, lab] = float(idx.loc[(r, m, int(k))])
    totals = sorted({metric_at_k_label(m, int(k)) for m, k, a in zip(s["metric"], s["k"], s["aggregation"],
                                                                      strict=True) if a == "sum"} & set(labels)) \
        if value == "aggregate" and "aggregation" in s.columns else []
    pool = s[s["run"].isin(eligible) & ~s["metric"].map(metric_base).isin(DESCRIPTIVE)]
    pool = pool.assign(group=[group_of.get(r, "") for r in pool["run"]])
    lower = {m: False for m in pool["metric"].unique() if metric_base(m) in LOWER_IS_BETTER}
    marked = (best_per_column(pool, higher_is_better=lower, within=("metric", "k", "group"), value=value)
              if len(pool) else pool.assign(is_best=False))
    best_keys = set(marked.loc[marked["is_best"], ["run", "metric", "k"]].itertuples(index=False, name=None))
    best = pd.DataFrame(False, index=runs, columns=labels)
    marks = pd.DataFrame("", index=runs, columns=labels)
    for (m, k), lab in zip(columns, labels, strict=True):
        for r in runs:
            best.loc[r, lab] = (r, m, int(k)) in best_keys
    if comparison is not None and baseline is not None and len(comparison):
        c = comparison.assign(run_a=comparison["run_a"].astype(str), run_b=comparison["run_b"].astype(str),
                              metric=comparison["metric"].astype(str))
        for row in c.itertuples(index=False):
            if row.run_a != str(baseline) or row.run_b not in eligible or not bool(row.significant):
                continue
            if metric_base(row.metric) in DESCRIPTIVE or group_of.get(row.run_b) != group_of.get(str(baseline)):
                continue  # (a count has no better value; a run judged against another aspect is not comparable)
            lab = metric_at_k_label(row.metric, int(row.k))
            if lab not in marks.columns or row.run_b not in marks.index:
                continue
            better = row.diff > 0 if lower.get(row.metric, True) else row.diff < 0
            marks.loc[row.run_b, lab] = BETTER if better else WORSE
    notes = []
    if baseline is not None:
        notes.append(f"{BETTER} / {WORSE}: significantly better / worse than the baseline {baseline}"
                     + (f" (runs judged against its aspect, {group_of.get(str(baseline))}, only)."
                        if len(set(group_of.values())) > 1 else "."))
    left_out = [r for r in runs if r not in eligible]
    if left_out:
        notes.append("Not compared (no best mark, no test): " + ", ".join(left_out) + ".")
    shown_groups = group_of if len({group_of.get(r, "") for r in runs}) > 1 else {}
    return Leaderboard(runs, labels, means, best, marks, None if baseline is None else str(baseline),
                       caption, int(digits), notes, totals, {r: shown_groups.get(r, "") for r in runs}
                       if shown_groups else {})


# ------------------------------------------------------------------------------------------ writers

_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()<>#+-.!|~$&"})
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        # (in the default OT1 encoding these print as other glyphs: | — < ¡ > ¿ " ” ` ‘)
        "|": r"\textbar{}", "<": r"\textless{}", ">": r"\textgreater{}", '"': r"\textquotedbl{}",
        "`": r"\textasciigrave{}"}


def md_text(s: object) -> str:
    """A string made literal in Markdown (every special character backslash-escaped; one line)."""
    return str(s).replace("\r", " ").replace("\n", " ").translate(_MD_SPECIAL)


def tex_text(s: object) -> str:
    """A string made literal in LaTeX (special characters escaped; one line)."""
    return "".join(_TEX.get(ch, ch) for ch in str(s).replace("\r", " ").replace("\n", " "))


def to_markdown(board: Leaderboard) -> str:
    """A GitHub-flavoured Markdown table: best in bold, † / ‡ after significant cells, the baseline named."""
    aspect = bool(board.groups)
    head = "| run | " + ("aspect | " if aspect else "") + " | ".join(md_text(c) for c in board.columns) + " |"
    rule = "|:---|" + (":---|" if aspect else "") + "|".join("---:" for _ in board.columns) + "|"
    lines = [head, rule]
    for r in board.runs:
        name = md_text(r) + (" (baseline)" if r == board.baseline else "")
        if aspect:
            name += " | " + md_text(board.groups.get(r, ""))
        cells = []
        for c in board.columns:
            num, is_best, mark = board.cell(r, c)
            cells.append((f"**{num}**" if is_best else num) + mark)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    foot = " ".join(md_text(t) for t in (board.caption, *board.notes) if t)
    return "\n".join(lines) + ("\n\n" + foot if foot else "") + "\n"


def to_latex(board: Leaderboard, *, label: str = "tab:leaderboard") -> str:
    r"""A ``table`` with a ``tabular`` (booktabs rules): best in ``\textbf``, ``$^{\dagger}$`` / ``$^{\ddagger}$``
    after significant cells, the caption with the legend."""
    tex_mark = {"": "", BETTER: r"$^{\dagger}$", WORSE: r"$^{\ddagger}$"}
    aspect = bool(board.groups)
    cols = "l" + ("l" if aspect else "") + "r" * len(board.columns)
    lines = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{cols}}}", r"\toprule",
             "Run & " + ("Aspect & " if aspect else "") + " & ".join(tex_text(c) for c in board.columns) + r" \\",
             r"\midrule"]
    for r in board.runs:
        name = tex_text(r) + (" (baseline)" if r == board.baseline else "")
        if aspect:
            name += " & " + tex_text(board.groups.get(r, ""))
        cells = []
        for c in board.columns:
            num, is_best, mark = board.cell(r, c)
            cells.append((rf"\textbf{{{num}}}" if is_best else num) + tex_mark[mark])
        lines.append(name + " & " + " & ".join(cells) + r" \\")
    cap = " ".join(t for t in (board.caption, *board.notes) if t)
    cap = tex_text(cap).replace(tex_text(BETTER), r"$\dagger$").replace(tex_text(WORSE), r"$\ddagger$")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if cap:
        lines.append(rf"\caption{{{cap}}}")
    lines += [rf"\label{{{tex_text(label)}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"

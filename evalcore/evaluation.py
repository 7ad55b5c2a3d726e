"""The result of an evaluation: the per-query results table, its coverage and the settings used.

:class:`Evaluation` holds the long per-query table (see :mod:`evalcore.aggregate`)
as a pandas DataFrame, as integer codes (:class:`~evalcore.results.ResultColumns`),
or both; see its docstring.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._lazy import pd
from .errors import OptionError
from .results import ResultColumns

__all__ = ["Evaluation"]


class Evaluation:
    """Result of :func:`evaluate`.

    Attributes
    ----------
    table : DataFrame
        Long per-query table ``run, query_id, domain, metric, k, value``
        (``k`` is 0 for metrics without a cutoff). ``run``, ``query_id``,
        ``domain`` and ``metric`` are categoricals.
    coverage : DataFrame
        One row per run: ``n_qrels_queries, n_evaluated, n_missing, n_ignored,
        n_no_relevant, n_skipped``.
    settings : dict
        Options used (ties, rel_threshold, no_relevant, measures).
    columns : ResultColumns
        The same table as integer codes (:mod:`evalcore.results`).
    coverage_rows : list of dict
        The same coverage as one dict per run.

    Built from a table and a coverage DataFrame, or (``evaluate``) from columns
    and coverage rows (both forms, when given, must hold the same); either form
    is made from the other on first use, so code that needs no pandas (the
    command line's summary and files) never imports it.  Treat it as
    immutable: :meth:`with_settings` gives a copy with more settings.
    """

    def __init__(self, table: pd.DataFrame | None = None, coverage: pd.DataFrame | None = None,
                 settings: dict[str, Any] | None = None, *, columns: ResultColumns | None = None,
                 coverage_rows: list[dict[str, Any]] | None = None) -> None:
        if table is None and columns is None:
            raise OptionError("give an Evaluation a table or columns")
        if coverage is None and coverage_rows is None:
            raise OptionError("give an Evaluation a coverage table or coverage rows")
        self._table, self._columns = table, columns
        self._coverage, self._coverage_rows = coverage, coverage_rows
        self.settings: dict[str, Any] = {} if settings is None else settings

    @property
    def table(self) -> pd.DataFrame:
        if self._table is None:
            self._table = self._columns.to_table()  # type: ignore[union-attr]
        return self._table

    @property
    def columns(self) -> ResultColumns:
        if self._columns is None:
            self._columns = ResultColumns.from_table(self._table)
        return self._columns

    @property
    def coverage(self) -> pd.DataFrame:
        if self._coverage is None:
            self._coverage = pd.DataFrame(self._coverage_rows)
        return self._coverage

    @property
    def coverage_rows(self) -> list[dict[str, Any]]:
        if self._coverage_rows is None:
            self._coverage_rows = self._coverage.to_dict("records")  # type: ignore[union-attr]
        return self._coverage_rows

    @property
    def has_table(self) -> bool:
        """Whether the DataFrame form exists already (given, or built by a first use of ``table``)."""
        return self._table is not None

    @property
    def runs(self) -> list[str]:
        if self._columns is not None:
            return list(self._columns.runs)
        return list(self.table["run"].cat.categories)

    def with_settings(self, extra: Mapping[str, Any]) -> Evaluation:
        """The same evaluation with ``extra`` added to (or replacing keys of) its settings."""
        return Evaluation(self._table, self._coverage, {**self.settings, **extra}, columns=self._columns,
                          coverage_rows=self._coverage_rows)

    def summary(self, **kwargs: Any) -> pd.DataFrame:
        """Mean, std, sem and 95% CI per run × metric × k (see :func:`evalcore.aggregate.summarize`)."""
        from .aggregate import summarize

        return summarize(self.table, **kwargs)

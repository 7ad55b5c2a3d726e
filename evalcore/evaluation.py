"""The result of an evaluation: the per-query results table, its coverage and the settings used.

:class:`Evaluation` holds the long per-query table (see :mod:`evalcore.aggregate`)
as a pandas DataFrame, as integer codes (:class:`~evalcore.results.ResultColumns`),
or both; see its docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._lazy import pd
from .errors import OptionError
from .results import ResultColumns

__all__ = ["Evaluation"]


class _Derived:
    """A field of :class:`Evaluation` that, when not given, is built from the other form on first read.

    A descriptor-typed dataclass field: its default (``None``) means "derive me"; the value is kept in
    the instance's ``__dict__`` under ``_<name>`` once given or built.
    """

    def __init__(self, build: Callable[[Evaluation], Any]) -> None:
        self.build = build

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = "_" + name

    def __get__(self, obj: Evaluation | None, objtype: type | None = None) -> Any:
        if obj is None:
            return None  # the dataclass field's default
        value = obj.__dict__.get(self.key)
        if value is None:
            value = self.build(obj)
            obj.__dict__[self.key] = value
        return value

    def __set__(self, obj: Evaluation, value: Any) -> None:
        obj.__dict__[self.key] = value  # (the dataclass's __init__ only: frozen for everybody else)


@dataclass(frozen=True, eq=False)
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

    A frozen dataclass.  Built from a table and a coverage DataFrame, or
    (``evaluate``) from columns and coverage rows (both forms, when given, must
    hold the same); a form not given is built from the other on first read, so
    code that needs no pandas (the command line's summary and files) never
    imports it.  :meth:`with_settings` gives a copy with more settings without
    building anything.
    """

    table: pd.DataFrame = _Derived(lambda ev: ev.columns.to_table())  # type: ignore[assignment]
    coverage: pd.DataFrame = _Derived(lambda ev: pd.DataFrame(ev.coverage_rows))  # type: ignore[assignment]
    settings: dict[str, Any] = field(default_factory=dict)
    columns: ResultColumns = _Derived(lambda ev: ResultColumns.from_table(ev.table))  # type: ignore[assignment]
    coverage_rows: list[dict[str, Any]] = _Derived(  # type: ignore[assignment]
        lambda ev: ev.coverage.to_dict("records"))

    def __post_init__(self) -> None:
        given = self.__dict__
        if given.get("_table") is None and given.get("_columns") is None:
            raise OptionError("give an Evaluation a table or columns")
        if given.get("_coverage") is None and given.get("_coverage_rows") is None:
            raise OptionError("give an Evaluation a coverage table or coverage rows")
        if self.settings is None:
            object.__setattr__(self, "settings", {})

    @property
    def has_table(self) -> bool:
        """Whether the DataFrame form exists already (given, or built by a first read of ``table``)."""
        return self.__dict__.get("_table") is not None

    @property
    def runs(self) -> list[str]:
        """Names of the runs: the table's run categories (sorted names for a plain string column)."""
        return list(self.columns.runs)

    def with_settings(self, extra: Mapping[str, Any]) -> Evaluation:
        """The same evaluation with ``extra`` added to (or replacing keys of) its settings."""
        d = self.__dict__
        return Evaluation(d.get("_table"), d.get("_coverage"), {**self.settings, **extra}, d.get("_columns"),
                          d.get("_coverage_rows"))

    def summary(self, **kwargs: Any) -> pd.DataFrame:
        """Mean, std, sem and 95% CI per run × metric × k (see :func:`evalcore.aggregate.summarize`)."""
        from .aggregate import summarize

        return summarize(self.table, **kwargs)

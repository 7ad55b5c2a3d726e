"""Deferred import of pandas (and of ``scipy.stats``).

Modules say ``from ._lazy import pd``; pandas (about a third of a second to
import) is imported on the first attribute access. A plain ``evaluate`` command
never touches it (its summary and files come from the results held as codes,
:mod:`evalcore.results`); the commands and options that use pandas start its
import in a background thread while arrow parses the input files without the
GIL (:func:`evalcore.cli.main`, :func:`evalcore.cli.evaluate.needs_pandas`), so
start-up and parsing overlap. Library users see no difference: the first use of
``pd.<anything>`` imports pandas.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _Deferred(ModuleType):
    """A module stand-in that imports the real module on first attribute access."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_target"] = name

    def __getattr__(self, attr: str) -> Any:  # only called for names not yet copied
        module = importlib.import_module(self.__dict__["_target"])
        self.__dict__.update({k: v for k, v in module.__dict__.items() if k != "__name__"})
        return getattr(module, attr)


pd: Any = _Deferred("pandas")
#: ``scipy.stats`` (about 0.6 s to import): only the significance tests use it, so importing
#: :mod:`evalcore.workspace` (a training script's hook) or the dashboard's first page does not wait for it.
sps: Any = _Deferred("scipy.stats")

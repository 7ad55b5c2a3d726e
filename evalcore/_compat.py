"""Old import paths of modules that moved when evalcore was split into packages.

``import evalcore.loaders`` (and the other names below) still works: it gives the
module that now holds the same functions, with a :class:`DeprecationWarning`
naming the new path. Nothing here is imported by evalcore itself.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED", "install"]

#: old module -> new module (same public functions)
MOVED: dict[str, str] = {
    "evalcore.loaders": "evalcore.io",
    "evalcore.formats": "evalcore.io.tables",
    "evalcore.formats_json": "evalcore.io.jsonfmt",
    "evalcore.io_trec": "evalcore.io.trec",
    "evalcore.embeddings": "evalcore.io",
    "evalcore.embeddings_cli": "evalcore.cli.options",
    "evalcore.cli_topk": "evalcore.cli.topk",
    "evalcore.demo": "evalcore.workspace.demo",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        return None


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        warnings.warn(f"{fullname} moved to {new}; import it from there", DeprecationWarning, stacklevel=3)
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put the alias finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())

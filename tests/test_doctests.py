"""The examples in evalcore's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import evalcore

MODULES = sorted(  # subpackages' modules too (evalcore.retrieval.scoring, ...)
    m.name for m in pkgutil.walk_packages(evalcore.__path__, "evalcore.") if m.name != "evalcore.__main__"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_engine_has_examples():
    attempted = sum(doctest.testmod(importlib.import_module(n)).attempted for n in MODULES)
    assert attempted >= 10

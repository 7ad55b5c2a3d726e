"""How many threads: the cores this process may use, or a count the caller gave (checked)."""

from __future__ import annotations

import os

import numpy as np

from .errors import OptionError


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def thread_count(value: int | None, *, name: str) -> int:
    """``value`` checked as a positive integer (the option is called ``name``), or :func:`usable_cores` for None.

    >>> thread_count(3, name="workers")
    3
    """
    if value is None:
        return usable_cores()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise OptionError(f"{name} must be a positive integer, got {value!r}")
    return int(value)

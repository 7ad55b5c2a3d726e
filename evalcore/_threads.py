"""Worker threads: how many (the cores this process may use, or a count the caller gave, checked), and
what they carry from the thread that starts them (its context variables)."""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from .errors import OptionError

T = TypeVar("T")


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


def in_caller_context(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn``, to be called in other threads with the context variables of the thread calling this now.

    Each call runs in its own copy of that context (one context cannot be entered by two threads at
    once), so the warnings collected by :func:`evalcore.errors.collected_warnings` in the caller reach
    its list from the worker threads.
    """
    ctx = contextvars.copy_context()

    def call(*args, **kwargs) -> T:
        return ctx.copy().run(fn, *args, **kwargs)

    return call

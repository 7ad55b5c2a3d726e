"""The built-in demo's data for the tests' oracles, built once per test session.

``make_demo(0)`` takes about 0.3 s; the dashboard tests computed it again for each expected number. The object
here is the tests' own (not the dashboard's ``cached_demo``, so an oracle never reads what the app holds), and
the tests only read it: the engine never mutates its inputs.
"""

from __future__ import annotations

import functools

from evalcore.workspace.demo import Demo, make_demo


@functools.cache
def oracle_demo(seed: int = 0) -> Demo:
    """``make_demo(seed)`` with the default sizes, built on the first call of the session."""
    return make_demo(seed)

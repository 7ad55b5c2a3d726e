"""The data model: graded judgments (:class:`Qrels`) and ranked lists (:class:`Run`).

String ids live at the edges only. Both classes store flat numpy columns, one
row per (query, document), with the query as a dense integer index into
``query_ids``; documents are turned into dense integer codes once per
evaluation (see :mod:`evalcore.evaluate`), never per metric.

Both are immutable: constructors copy what they keep, no method writes into
arrays the caller passed.

Every public constructor (``from_records``, ``from_dict``, ``from_frame``,
``from_codes``, ``from_arrow_docs``, ``from_ranked_lists``, ``with_domains``,
``renamed``) refuses an id, domain or run name holding a control character (a
tab, a line break, NUL...: it would break a TREC line or a label later) with
the readers' rule and words (:func:`evalcore._checks.refuse_broken_ids`),
naming the id (its ``repr``) and the argument and record holding it. The ids
are scanned once, vectorised (the distinct ids where the constructor has them).
``check_ids=False`` skips that scan for ids checked already (the readers check
them first, naming the file's line).

The classes live in :mod:`evalcore.data._qrels` and :mod:`evalcore.data._run`; every name this module offered
when it was one file (``evalcore/data.py``) is still importable from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence  # noqa: F401
from dataclasses import dataclass, field  # noqa: F401
from typing import Any  # noqa: F401

import numpy as np  # noqa: F401

from .._checks import (  # noqa: F401 - the names this module offered as one file (tests use some)
    _NO_KEY,
    _as_str_array,
    _check_run_columns,
    _check_unique_pairs,
    _domains_of,
    _has_repeats,
    _in_mapping,
    _integer_grades,
    _pair_hashes,
    refuse_broken_column,
    refuse_broken_name,
)
from .._columns import (  # noqa: F401
    arrow_indices,
    encode_strings,
    factorize_strings,
    numbers,
    pair_keys,
    positions_in,
    string_hashes,
    strings,
)
from .._lazy import pd  # noqa: F401
from ..errors import DuplicateIdError, EmptyInputError, NonFiniteValueError, ValueTypeError  # noqa: F401
from ._qrels import Qrels
from ._run import Run

__all__ = ["Qrels", "Run"]

Qrels.__module__ = Run.__module__ = __name__  # their public home (reprs, pickles, documentation)

"""Error and warning types of evalcore.

Every problem with user input raises a subclass of :class:`EvalcoreError` whose
message names the file (when there is one), the line, query or id at fault, and
what is wrong, in one line, so that the CLI can print it as is and the dashboard
can show it next to the file it concerns.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import sys
import warnings
from collections.abc import Callable, Iterator


class EvalcoreError(Exception):
    """Base class of every error evalcore raises for bad input or bad options."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        query: str | None = None,
        item: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.query = query
        self.item = item
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = []
        if self.file is not None:
            where.append(str(self.file))
        if self.line is not None:
            where.append(f"line {self.line}")
        prefix = ":".join(where[:1]) + (f", {where[1]}" if len(where) > 1 else "")
        return f"{prefix}: {self.message}" if prefix else self.message


class InputFormatError(EvalcoreError):
    """A file cannot be parsed: wrong column count, unreadable, binary, empty..."""


class EmptyInputError(InputFormatError):
    """A file or input holds no usable record."""


class BinaryFileError(InputFormatError):
    """A text file was expected but the content is binary or not decodable."""


class ColumnCountError(InputFormatError):
    """A line has fewer columns than the format requires."""


class ValueTypeError(InputFormatError):
    """A grade, score or rank is not a number of the expected kind."""


class NonFiniteValueError(InputFormatError):
    """A score or vector component is NaN or infinite."""


class DuplicateIdError(InputFormatError):
    """An id appears twice where it must be unique (a document twice for one query...)."""


class ConstraintError(InputFormatError):
    """A rule of a ground-truth schema is broken (e.g. seed 001 §1.3)."""


class ShapeMismatchError(InputFormatError):
    """Arrays disagree in size: ids vs rows, corpus vs query dimension..."""


class UnsafeFileError(InputFormatError):
    """A file would need unpickling (object arrays) or is a truncated archive."""


class MissingIdsError(EvalcoreError):
    """Ids required by the ground truth are absent from a run or embedding file."""


class UnknownMeasureError(EvalcoreError, ValueError):
    """A metric name that evalcore does not know; the message lists what is supported."""


class OptionError(EvalcoreError, ValueError):
    """An invalid option value (unknown tie rule, k <= 0, ...)."""


class EvalcoreWarning(UserWarning):
    """Partial coverage that still allows evaluation (missing queries, zero vectors...)."""


#: The list that :func:`collected_warnings` gathers this context's warnings into (None: emit them).
_SINK: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("evalcore_warning_sink", default=None)
#: Patterns of the warnings :func:`quiet_warnings` drops in this context.
_QUIET: contextvars.ContextVar[tuple[re.Pattern[str], ...]] = contextvars.ContextVar("evalcore_quiet", default=())


def warn(message: str, *, stacklevel: int = 2) -> None:
    """Emit an :class:`EvalcoreWarning` attributed to the caller of the library.

    ``stacklevel`` counts as :func:`warnings.warn`'s does from the function calling ``warn`` (2: its
    caller). Inside :func:`collected_warnings` the message is added to that list instead (nothing goes
    through the :mod:`warnings` module); inside :func:`quiet_warnings` a message it names is dropped.
    """
    text = str(message)
    if any(p.match(text) for p in _QUIET.get()):
        return
    sink = _SINK.get()
    if sink is not None:
        sink.append(text)
        return
    warnings.warn(text, EvalcoreWarning, stacklevel=stacklevel + 1)


@contextlib.contextmanager
def collected_warnings() -> Iterator[list[str]]:
    """Inside, the :class:`EvalcoreWarning` messages of this thread's work are appended to the list yielded.

    Unlike :class:`warnings.catch_warnings`, which swaps the process's warning hooks, this holds
    per context (a :mod:`contextvars` variable): two threads collecting at once (two dashboard
    sessions) each get their own messages, and no hook is left behind. The threads evalcore starts
    for the work carry the caller's context (:func:`evalcore._threads.in_caller_context`), so their
    messages arrive here too. Nested: the innermost list gets them.

    >>> with collected_warnings() as got:
    ...     warn("three queries lack results")
    >>> got
    ['three queries lack results']
    """
    sink: list[str] = []
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


@contextlib.contextmanager
def quiet_warnings(pattern: str) -> Iterator[None]:
    """Inside, the :class:`EvalcoreWarning` messages matching ``pattern`` (a regular expression matched at
    the start, ignoring case, as :func:`warnings.filterwarnings`' ``message``) are dropped, in this context
    only (see :func:`collected_warnings`)."""
    token = _QUIET.set((*_QUIET.get(), re.compile(pattern, re.IGNORECASE)))
    try:
        yield
    finally:
        _QUIET.reset(token)


# --------------------------------------------------------------------------- strict mode (coverage problems)
#: The coverage problems strict mode stops on (``--strict``, ``strict=True``), each an error of the class named
#: whose message says what is wrong, what refused it and what happens without it (:func:`strict_refusal`); without
#: strict mode, a warning (its words unchanged). Every other warning (zero vectors, tie notes, depth notes...)
#: stays a warning.
COVERAGE_PROBLEMS = (
    "a ground-truth query a run does not answer (it would count 0): MissingIdsError",
    "a ground-truth query absent from the (query) embeddings of an embedding run: MissingIdsError",
    "a relevant document absent from an embedding run's corpus (it could never be retrieved): MissingIdsError",
    "reference ids absent from a model's embeddings (the similarity agreement): MissingIdsError",
)

#: The switch that made coverage problems errors in this context (``"--strict"``, ``"strict=True"``); None: warnings.
_STRICT: contextvars.ContextVar[str | None] = contextvars.ContextVar("evalcore_strict", default=None)


def check_flag(value: object, name: str) -> bool:
    """A yes/no option: ``True`` or ``False`` (a numpy bool too), returned as a bool.

    Anything else — ``"yes"``, ``"false"``, ``1``, ``None`` — is an :class:`OptionError` naming the
    option and the value (``bool("false")`` is true: taking it as given would do the opposite).
    """
    if isinstance(value, bool):
        return value
    kind = type(value)
    if kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"):
        return bool(value)
    raise OptionError(f"{name} must be True or False, got {type(value).__name__} {value!r:.60}")


@contextlib.contextmanager
def strict_coverage(strict: bool = True, *, switch: str = "strict=True") -> Iterator[None]:
    """Inside, with ``strict``, each coverage problem (:data:`COVERAGE_PROBLEMS`) raises instead of warning.

    In this context only, and in the threads evalcore starts for the work (like
    :func:`collected_warnings`). ``switch`` names what turned strict mode on, for the error's hint
    (``"--strict"`` on the command line). Without ``strict`` nothing changes: a strict caller
    further out stays strict (its switch is named).

    >>> with strict_coverage():
    ...     coverage_problem("run 'a' lacks 2 queries: they count 0",
    ...                      refusal=("run 'a' does not answer 2 queries", "they count 0"))
    Traceback (most recent call last):
    evalcore.errors.MissingIdsError: run 'a' does not answer 2 queries; refused because of strict=True (without it they count 0)
    """
    if not check_flag(strict, "strict") or _STRICT.get() is not None:
        yield
        return
    token = _STRICT.set(str(switch))
    try:
        yield
    finally:
        _STRICT.reset(token)


def coverage_is_strict() -> bool:
    """Whether coverage problems are errors here (inside a strict :func:`strict_coverage`)."""
    return _STRICT.get() is not None


def strict_refusal(problem: str, without: str, switch: str) -> str:
    """The message of a coverage problem refused in strict mode, in one place: what is wrong (``problem``), what
    refused it (``switch``: ``"--strict"``, ``"strict=True"``) and what happens without it (``without``).

    >>> strict_refusal("run 'a' does not answer 3 of the 20 ground-truth queries (e.g. 'q1', 'q2')",
    ...                "they count 0 in its values and tests", "--strict")
    "run 'a' does not answer 3 of the 20 ground-truth queries (e.g. 'q1', 'q2'); refused because of --strict (without it they count 0 in its values and tests)"
    """
    return f"{problem}; refused because of {switch} (without it {without})"


Refusal = tuple[str, str] | Callable[[], tuple[str, str]]


def coverage_problem(message: str, *, refusal: Refusal | None = None, error: type[EvalcoreError] | None = None,
                     warning: bool = True, stacklevel: int = 2) -> None:
    """Report a coverage problem: the warning ``message`` (:func:`warn`), or in strict mode an ``error`` (default
    :class:`MissingIdsError`) worded as an error (:func:`strict_refusal`).

    ``refusal``: ``(problem, without)`` for :func:`strict_refusal`, or a function returning them (called in strict
    mode only: e.g. the ids it names are looked up then); None: the warning's message is the problem.
    ``warning=False``: a problem that is only counted (not warned about) outside strict mode.
    """
    switch = _STRICT.get()
    if switch is None:
        if warning:
            warn(message, stacklevel=stacklevel + 1)
        return
    if refusal is None:
        raise (error or MissingIdsError)(f"{message}; refused because of {switch}")
    problem, without = refusal() if callable(refusal) else refusal
    raise (error or MissingIdsError)(strict_refusal(problem, without, switch))


@contextlib.contextmanager
def plain_warnings():
    """Inside, an :class:`EvalcoreWarning` prints as one line ``warning: <message>`` on stderr.

    For the command lines: Python's default format adds the engine's file,
    line number and source line, which mean nothing to the person reading it.
    Other warnings keep the default format; the previous handler comes back
    on exit.
    """
    with warnings.catch_warnings():
        default = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, EvalcoreWarning):
                print(f"warning: {message}", file=file if file is not None else sys.stderr)
            else:
                default(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


# --------------------------------------------------------------------------- loaders (files and validation)
class UnreadableFileError(InputFormatError):
    """A file cannot be opened: missing, a directory, no permission..."""


class InvalidJsonError(InputFormatError):
    """A JSON/JSONL file does not parse; the message gives line and column."""


class JsonShapeError(InputFormatError):
    """Valid JSON of the wrong shape; the message names the path (e.g. ``[3].relevance_judgments``)."""


class MissingColumnError(InputFormatError):
    """A table lacks a required column; the message lists the columns it has."""


class MissingValueError(InputFormatError):
    """A required cell or field is empty or null (an empty query id, a null score...)."""


class ConflictingValueError(InputFormatError):
    """One key is given two different values (a query with two domains...)."""


class DuplicateListIdError(ConstraintError, DuplicateIdError):
    """Seed 001 §1.3: an id twice in one ordered list, or two entries for one id."""


class AspectError(OptionError):
    """No, an unknown or an ambiguous ordered-list field (aspect); the message lists the aspects."""


# --------------------------------------------------------------------------- the workspace store
class WorkspaceError(EvalcoreError):
    """A workspace folder cannot be used: not a workspace, busy for too long, a bad name..."""


class SchemaVersionError(WorkspaceError):
    """The catalogue was written by a newer evalcore (its schema version is unknown here)."""


class CorruptArtifactError(WorkspaceError):
    """A stored artifact is missing or its bytes no longer match their SHA-256 (named in the message)."""


class ReadOnlyWorkspaceError(WorkspaceError):
    """A change was asked of a read-only workspace (the built-in demo)."""


class WorkspaceStorageError(WorkspaceError, OSError):
    """The workspace's folder cannot be written: its disk is full, or the folder or its files are
    read-only for this user. Nothing was changed. Also an :class:`OSError` (the command line ends
    such an error with exit status 1, as for any file it cannot write)."""

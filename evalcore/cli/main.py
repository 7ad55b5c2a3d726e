"""The ``evalcore`` command: the parser of every subcommand, dispatch, and one-line errors.

Bad input ends with one line ``error: <file>, line N: <what is wrong>`` on
stderr and exit status 2 — never a traceback; a file or folder that cannot be
written (or read) ends with ``error: <path>: <reason>`` and exit status 1. With ``--strict`` (``evaluate``,
``compare``) a coverage problem (:data:`evalcore.errors.COVERAGE_PROBLEMS`) is such an error too, instead of
a warning. Each subcommand lives in its own
module (:mod:`.evaluate`, :mod:`.compare`, :mod:`.fuse`, :mod:`.agree`, :mod:`.topk`,
:mod:`.metrics`, :mod:`.workspace`) with ``register`` (its arguments) and ``run`` (the work).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import EvalcoreError, plain_warnings, strict_coverage
from . import agree, compare, evaluate, fuse, metrics, topk, workspace
from .background import close_loader, open_loader

__all__ = ["main", "process_main", "build_parser", "EXIT_USAGE"]

EXIT_USAGE = 2
SUBCOMMANDS = (evaluate, compare, fuse, agree, metrics, topk, workspace)


def build_parser() -> argparse.ArgumentParser:
    return _build()[0]


def _build() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(prog="evalcore", description="Exact retrieval evaluation.")
    parser.add_argument("--version", action="version", version=f"evalcore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in SUBCOMMANDS:
        command.register(sub)
    return parser, sub


def _unrecognized(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """argparse's "unrecognized arguments" for the subcommand's own parser (its usage, not the top
    level's), with the closest option of that subcommand for each unknown one."""
    import difflib

    known = sorted(parser._option_string_actions)  # every option string of this subcommand
    hints = []
    for word in extras:
        if word.startswith("--"):
            close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.75)
            if close and close[0] not in hints:
                hints.append(close[0])
    text = "unrecognized arguments: " + " ".join(extras)
    return text + (f" (did you mean {' or '.join(hints)}? `{parser.prog} --help` lists its options)" if hints
                   else f" (`{parser.prog} --help` lists its options)")


def main(argv: Sequence[str] | None = None) -> int:
    # pandas is imported on first use (evalcore._lazy); start that import now, in a thread, so it
    # overlaps with reading and parsing the input files (arrow releases the GIL)
    words = list(sys.argv[1:] if argv is None else argv)
    # `topk` never uses pandas: importing it there would only take CPU from the search; `evaluate`
    # needs it only for some options, and asks for it itself (evalcore.cli.evaluate.run)
    wants_pandas = words[:1] not in (["topk"], ["evaluate"]) and "pandas" not in sys.modules
    loader = open_loader(*(["pandas"] if wants_pandas else []))  # subcommands add theirs (preload)
    try:
        with plain_warnings():
            return _run(argv)
    finally:
        close_loader(loader)  # never exit while an import runs (see background.Loader)


def process_main() -> int:
    """Entry point of an ``evalcore`` process (``python -m evalcore``, the ``evalcore`` script): :func:`main`,
    then the objects still alive are frozen (``gc.freeze``) so that the interpreter's exit does not
    walk them all in its final garbage collections (with pandas, pyarrow and scipy imported that
    exit took ~0.13 s, ~0.03 s frozen, measured).  Not for in-process callers, whose objects must
    stay collectable: they call :func:`main`.  atexit handlers, thread joins and the flushing of
    the standard streams happen as usual; only finalizers of objects left alive at exit, which
    Python never promises to run, may now be skipped (every file the command writes is closed
    before :func:`main` returns)."""
    with _blas_own_threads_off(sys.argv[1:]):
        code = main()
    import gc

    gc.freeze()
    return code


def _blas_own_threads_off(words: Sequence[str]):
    """For an ``evaluate`` or ``topk`` process searching here (no ``--dask``): BLAS libraries run one thread.

    The search runs its own worker threads, one per core, each with single-threaded BLAS
    (:mod:`evalcore.retrieval.local`); nothing else in these commands needs BLAS threads. Left on,
    OpenBLAS's idle threads spin after each use and after loading (SciPy loads its own copy for
    the report's t quantile): ~0.24 CPU-s of the 5.5 CPU-s of the benchmark's user path, measured.
    Libraries already loaded are limited with ``threadpoolctl``; ``OPENBLAS_NUM_THREADS=1`` (unless
    the user set it) is seen by those loaded later. A process entry only: in-process callers of
    :func:`main` keep their settings.
    """
    import contextlib
    import os

    if words[:1] not in (["evaluate"], ["topk"]) or any(w == "--dask" or w.startswith("--dask=") for w in words):
        return contextlib.nullcontext()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _run(argv: Sequence[str] | None) -> int:
    parser, sub = _build()
    args, extras = parser.parse_known_args(argv)
    if extras:
        chosen = sub.choices[args.command]
        chosen.error(_unrecognized(chosen, extras))  # exits with argparse's status 2
    try:
        with strict_coverage(getattr(args, "strict", False), switch="--strict"):  # evaluate, compare
            return int(args.func(args) or 0)
    except EvalcoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1 if isinstance(e, OSError) else EXIT_USAGE  # a workspace that cannot be written: as any file
    except MemoryError:
        print("error: out of memory; try smaller inputs, --n-samples, or a smaller block size", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # a file or folder that cannot be written (or read): its name and the reason
        print(f"error: {_os_message(e)}", file=sys.stderr)
        return 1


def _os_message(e: OSError) -> str:
    """``<path>: <reason>`` of an operating-system error (arrow's own message when it names no file)."""
    if e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return str(e)

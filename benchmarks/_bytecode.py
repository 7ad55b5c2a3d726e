"""Byte-compile the project's Python files before timing processes that import them.

An installed package has its ``.pyc`` files: ``pip install`` compiles them, as
it did for numpy, faiss, pyarrow and SciPy, and a clone run once writes them
in ``__pycache__``.  A fresh worktree run with ``PYTHONDONTWRITEBYTECODE=1``
(set on some machines, this one among them) has none and never writes them:
every child process would compile evalcore's modules from source again
(~0.1 s of CPU per ``evaluate`` process, measured with ``cProfile``: 71
``compile`` calls) — a cost no installed user pays and the peers are not
charged.  :func:`compile_project` writes them once (``compileall`` writes
whatever ``PYTHONDONTWRITEBYTECODE`` says); ``__pycache__`` is ignored by git.
"""

from __future__ import annotations

import compileall
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("evalcore", "dashboard", "benchmarks")  # (app.py and pages/ Streamlit compiles itself)


def compile_project(root: str = REPO) -> str:
    """Write the ``.pyc`` of every module of the project's packages; a line saying so."""
    ok = all(compileall.compile_dir(os.path.join(root, p), quiet=1) for p in PACKAGES
             if os.path.isdir(os.path.join(root, p)))
    if not ok:
        raise SystemExit(f"byte-compiling {root} failed (a syntax error?)")
    return f"# {os.path.basename(root) or root}: byte-compiled before timing, as an installed package is"

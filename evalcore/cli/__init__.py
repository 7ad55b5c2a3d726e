"""Command-line interface: ``python -m evalcore {evaluate, compare, fuse, agree, topk, metrics} ...``.

:mod:`.main` builds the parser and dispatches; each subcommand has its module (arguments in
``register``, the work in ``run``); :mod:`.options` and :mod:`.inputs` hold what several share.
"""

from .main import build_parser, main

__all__ = ["main", "build_parser"]

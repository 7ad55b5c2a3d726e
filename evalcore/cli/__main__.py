"""``python -m evalcore.cli``: the same as ``python -m evalcore``."""

from .main import process_main

raise SystemExit(process_main())

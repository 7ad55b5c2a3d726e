"""``python -m evalcore.cli``: the same as ``python -m evalcore``."""

from .main import main

raise SystemExit(main())

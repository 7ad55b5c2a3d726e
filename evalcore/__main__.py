"""``python -m evalcore``: see :mod:`evalcore.cli`."""

from .cli import main

raise SystemExit(main())

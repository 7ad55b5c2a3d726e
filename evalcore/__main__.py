"""``python -m evalcore``: see :mod:`evalcore.cli`."""

from .cli.main import process_main

raise SystemExit(process_main())

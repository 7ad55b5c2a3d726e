"""The runs of a resolved workspace as a mapping that reads each run when a page first asks for it.

A restarted dashboard finds the evaluation of its runs in the disk cache; the Overview, Compare and
Domains pages read only that evaluation.  Reading every stored run as well cost most of a restart
(14 runs x 2,000,000 rows: ~3 s of ~7 s).  :class:`LazyRuns` knows the names of the runs (membership,
order and length cost nothing) and reads a run at its first lookup, through the session's loader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["LazyRuns"]


class LazyRuns(Mapping):
    """``name -> Run`` of ``names``, each read by ``load(name)`` at its first lookup (then kept).

    ``load`` returns the run, or None when it failed to load (the loader records why); a failed
    lookup then calls ``on_failure(name)`` (the dashboard reruns its script, which resolves the
    workspace again without that run) and raises ``KeyError`` if that returns.  ``ready`` holds the
    runs already in memory; ``reader(name)`` gives a call that reads a run outside the script
    (:meth:`deferred`).  Iteration, ``len`` and ``in`` never read a run; ``dict(lazy)`` reads all.
    """

    def __init__(self, names: list[str], load: Callable[[str], Any], *, ready: Mapping[str, Any] | None = None,
                 on_failure: Callable[[str], None] | None = None,
                 reader: Callable[[str], Callable[[], Any]] | None = None) -> None:
        self._names = list(dict.fromkeys(names))
        self._known = set(self._names)
        self._load = load
        self._reader = reader
        self._got: dict[str, Any] = {n: r for n, r in (ready or {}).items() if n in self._known}
        self._on_failure = on_failure

    def __getitem__(self, name: str) -> Any:
        if name in self._got:
            return self._got[name]
        if name not in self._known:
            raise KeyError(name)
        run = self._load(name)
        if run is None:
            if self._on_failure is not None:
                self._on_failure(name)
            raise KeyError(name)
        self._got[name] = run
        return run

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._known

    def loaded(self) -> dict[str, Any]:
        """The runs read so far (nothing is read)."""
        return {n: self._got[n] for n in self._names if n in self._got}

    def deferred(self) -> dict[str, Any]:
        """Every run: the run when already read, else a call reading it with no session state (a download
        runs in another thread) from ``reader(name)``; without ``reader``, every run is read now."""
        if self._reader is None:
            return dict(self)
        return {n: self._got[n] if n in self._got else self._reader(n) for n in self._names}

    def __repr__(self) -> str:
        return f"LazyRuns({len(self._got)} of {len(self._names)} read: {self._names!r})"

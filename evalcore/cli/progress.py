"""The command line's progress bar (on stderr)."""

from __future__ import annotations

import sys
import time
from typing import IO

__all__ = ["ProgressBar"]


class ProgressBar:
    """Plain-text progress bar on a stream: redrawn in place on a terminal
    (at most 10 times a second), a line per 10 % otherwise."""

    def __init__(self, label: str = "topk", stream: IO[str] | None = None, width: int = 30, *,
                 unit: str = "blocks") -> None:
        self.label, self.width, self.unit = label, width, unit
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self._last_draw = 0.0
        self._last_decile = -1

    def __call__(self, done: int, total: int) -> None:
        frac = done / total if total else 1.0
        now = time.perf_counter()
        elapsed = now - self.start
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        bar = "#" * int(frac * self.width)
        msg = f"{self.label} [{bar:<{self.width}}] {100 * frac:5.1f}% {done}/{total} {self.unit} {elapsed:6.1f}s eta {eta:6.1f}s"
        if self.tty:
            if done == total or now - self._last_draw >= 0.1:
                self.stream.write("\r" + msg + ("\n" if done == total else ""))
                self.stream.flush()
                self._last_draw = now
        else:
            decile = int(frac * 10)
            if decile != self._last_decile or done == total:
                self._last_decile = decile
                self.stream.write(msg + "\n")
                self.stream.flush()

"""Peak resident memory of a child process, as the child itself sees it.

``ru_maxrss`` from ``wait4`` is not usable for a child of a large process:
Linux carries the pre-``exec`` address space's high-water mark into the
child's ``maxrss``, and with ``vfork`` (what ``subprocess`` uses) that address
space is the parent's, so every child "peaks" at least at the benchmark's own
size.  ``VmHWM`` in ``/proc/self/status`` belongs to the address space after
``exec``.  :func:`wrap` runs a Python command (``python -m MOD ...``, ``python
SCRIPT ...`` or ``python -c CODE ...``) unchanged inside a tiny wrapper that
writes that figure (KiB) to a file at exit; :func:`read` returns it in MiB.
"""

from __future__ import annotations

import os
import sys
import tempfile

_WRAPPER = r"""
import atexit, runpy, sys
out = sys.argv[1]
def _report():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                with open(out, "w") as o:
                    o.write(line.split()[1])
atexit.register(_report)
mode, target = sys.argv[2], sys.argv[3]
if mode == "-m":
    sys.argv = [target] + sys.argv[4:]
    runpy.run_module(target, run_name="__main__", alter_sys=True)
elif mode == "-c":
    sys.argv = ["-c"] + sys.argv[4:]
    exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})
else:
    sys.argv = [target] + sys.argv[4:]
    runpy.run_path(target, run_name="__main__")
"""


def wrap(cmd: list[str]) -> tuple[list[str], str]:
    """``cmd`` (``[sys.executable, "-m"|"-c"|SCRIPT, ...]``) run under the wrapper, and the report file."""
    if not cmd or cmd[0] != sys.executable:
        raise ValueError("only Python commands can be wrapped")
    fd, path = tempfile.mkstemp(prefix="peak_", suffix=".kib")
    os.close(fd)
    if cmd[1] in ("-m", "-c"):
        mode, target, rest = cmd[1], cmd[2], cmd[3:]
    else:
        mode, target, rest = "script", cmd[1], cmd[2:]
    return [sys.executable, "-c", _WRAPPER, path, mode, target, *rest], path


def read(path: str) -> float:
    """The reported peak in MiB (NaN when the child died before reporting); removes the file."""
    try:
        with open(path) as fh:
            text = fh.read().strip()
        return int(text) / 1024.0 if text else float("nan")
    finally:
        os.unlink(path)

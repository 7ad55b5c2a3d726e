"""Loading ground truth and runs from any supported file, with format auto-detection.

``load_qrels(src, format="auto")`` and ``load_run(src, format="auto")`` are the
single entry points used by the CLI and the dashboard.
"""

from __future__ import annotations

from .data import Qrels, Run
from .errors import OptionError
from .io_trec import PathOrBytes, read_beir_qrels, read_bytes, read_trec_qrels, read_trec_run

__all__ = ["load_qrels", "load_run", "detect_qrels_format", "detect_run_format", "QRELS_FORMATS", "RUN_FORMATS"]

QRELS_FORMATS = ("trec", "beir")
RUN_FORMATS = ("trec",)


def detect_qrels_format(data: bytes) -> str:
    """Guess the ground-truth format from the content."""
    head = data.lstrip()[:200].lower()
    if head.startswith(b"query-id"):
        return "beir"
    return "trec"


def detect_run_format(data: bytes) -> str:
    return "trec"


def load_qrels(src: PathOrBytes, *, format: str = "auto", label: str | None = None) -> Qrels:
    data, label = read_bytes(src, name=label)
    fmt = detect_qrels_format(data) if format == "auto" else format
    if fmt == "trec":
        return read_trec_qrels(data, label=label)
    if fmt == "beir":
        return read_beir_qrels(data, label=label)
    raise OptionError(f"unknown ground-truth format {format!r}; supported: auto, {', '.join(QRELS_FORMATS)}")


def load_run(src: PathOrBytes, *, format: str = "auto", name: str | None = None, label: str | None = None) -> Run:
    data, label = read_bytes(src, name=label)
    fmt = detect_run_format(data) if format == "auto" else format
    if fmt == "trec":
        return read_trec_run(data, name=name, label=label)
    raise OptionError(f"unknown run format {format!r}; supported: auto, {', '.join(RUN_FORMATS)}")

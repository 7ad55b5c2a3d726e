"""What differs between a workspace and an ``evalcore evaluate ... --workspace`` command.

The comparisons behind :func:`evalcore.cli.workspace.record_evaluation`'s checks (split out of
:mod:`evalcore.cli.workspace`, whose names they stay): the stored settings against the command's,
the ground truth (from the very same file, or the same judgments / reference vectors), a run's
content (the same file bytes, parsed run, vectors or fusion) and a run's description.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

__all__: list[str] = []


def _step(value: Any) -> str:
    if value is None or value != value:  # None or NaN
        return ""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


#: The command-line form of each setting ``evaluate --workspace`` records.
_SETTING_FLAGS = {"k": "--k", "metrics": "--metrics", "ties": "--ties", "rel_threshold": "--rel-threshold",
                  "no_relevant": "--no-relevant", "sample_size": "--n-samples", "seed": "--sample-seed",
                  "judged_only": "-J", "depth": "--emb-depth", "gt_mode": "--reference-mode",
                  "gt_depth": "--reference-depth"}


def _setting_text(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return " ".join(map(str, value))
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _settings_change(ws: Any, settings: dict[str, Any]) -> tuple[str, str]:
    """(what differs between the workspace's stored settings and the command's, the flags giving the
    workspace's), ('', '') when they agree or the workspace has none stored yet."""
    from dataclasses import replace as dc_replace

    if not ws.has_settings():
        return "", ""
    have = ws.settings()
    new = dc_replace(have, **settings).validated()
    diff = [n for n in settings if getattr(have, n) != getattr(new, n)]
    if not diff:
        return "", ""
    parts = [f"{n} {_setting_text(getattr(have, n))} (this command: {_setting_text(getattr(new, n))})"
             for n in diff]
    flags = []
    for n in diff:
        flag, value = _SETTING_FLAGS[n], getattr(have, n)
        if isinstance(value, bool):
            flags.append(flag if value else f"no {flag}")
        elif n == "sample_size" and not value:
            flags.append(f"no {flag}")
        else:
            flags.append(f"{flag} {_setting_text(value)}")
    return "its settings are " + "; ".join(parts), " ".join(flags)


def _info_text(rec: Any) -> str:
    parts = [f"{k} {v}" for k, v in (("model", rec.model), ("version", rec.version), ("step", _step(rec.step))) if v]
    return f" ({', '.join(parts)})" if parts else ""


def _same_source_ground_truth(ws: Any, args: argparse.Namespace, ref: Any) -> bool:
    """Whether the workspace's active ground truth was recorded from the very file the command reads.

    The same name, kind and SHA-256 of the bytes; for judgments the same format (the one asked
    for, or detected from these bytes and name, as when it was recorded); for a reference model
    the same ids too (a ``.npy``'s ids come from another file). Then nothing needs parsing,
    comparing or storing again (a 300 MB reference was written and hashed twice per command).
    """
    import hashlib

    import numpy as np

    from ..io import detect_qrels_format
    from ..workspace.artifacts import sha256_file

    gt = ws.ground_truth()
    path = str(args.reference_emb if ref is not None else args.qrels)
    name = os.path.basename(path)
    if (gt is None or gt["kind"] != ("reference" if ref is not None else "qrels") or not gt.get("source_sha256")
            or gt["name"] != name or not os.path.isfile(path)):
        return False
    if ref is not None:
        return (gt["source_sha256"] == sha256_file(path)
                and np.array_equal(np.asarray(ws.reference_ids(), dtype=str), np.asarray(ref.ids, dtype=str)))
    with open(path, "rb") as fh:
        data = fh.read()
    fmt = getattr(args, "qrels_format", "auto") or "auto"
    return (gt["source_sha256"] == hashlib.sha256(data).hexdigest()
            and (detect_qrels_format(data, name) if fmt == "auto" else fmt) == gt["format"])


def _ground_truth_change(ws: Any, args: argparse.Namespace, ref: Any) -> str:
    """What differs between the workspace's ground truth and the command's ('' when nothing does or it has none)."""
    gt = ws.ground_truth()
    if gt is None:
        return ""
    if ref is not None:
        if gt["kind"] == "reference" and _same_embeddings(ws.load_reference(), ref):
            return ""
        new = f"the reference model {os.path.basename(args.reference_emb)}"
    else:
        from ..workspace.inputs import qrels_parts

        parts, *_ = qrels_parts(args.qrels, format=getattr(args, "qrels_format", "auto") or "auto", label=None)
        if gt["kind"] == "qrels" and [a for a, _ in parts] == list(gt["aspects"] or [None]) and all(
                _same_qrels(ws.load_qrels(a), q) for a, q in parts):
            return ""
        new = f"{os.path.basename(str(args.qrels))} ({sum(q.n_queries for _, q in parts[:1])} queries)"
    old = f"{gt['name']}" + (f" ({gt['n_queries']} queries)" if gt.get("n_queries") else "")
    return f"its ground truth is {old}, not {new} (every run there is evaluated against it)"


def _same_qrels(a: Any, b: Any) -> bool:
    import numpy as np

    return (list(map(str, a.query_ids)) == list(map(str, b.query_ids)) and np.array_equal(a.q, b.q)
            and list(map(str, a.doc_ids)) == list(map(str, b.doc_ids)) and np.array_equal(a.grades, b.grades))


def _same_run(a: Any, b: Any) -> bool:
    import numpy as np

    return (len(a) == len(b) and list(map(str, a.query_ids)) == list(map(str, b.query_ids))
            and np.array_equal(a.q, b.q) and np.array_equal(a.scores, b.scores)
            and list(map(str, a.doc_ids)) == list(map(str, b.doc_ids)))


def _same_embeddings(a: Any, b: Any) -> bool:
    """Same ids and the same float32 vectors (as stored), compared in blocks of rows."""
    import numpy as np

    if a is None or b is None:
        return a is None and b is None
    if len(a) != len(b) or a.dim != b.dim or list(map(str, a.ids)) != list(map(str, b.ids)):
        return False
    step = max(1, 2**24 // max(a.dim, 1))
    return all(np.array_equal(np.asarray(a.vectors[i:i + step], dtype=np.float32),
                              np.asarray(b.vectors[i:i + step], dtype=np.float32)) for i in range(0, len(a), step))


def _same_vectors_pair(stored: tuple, new: tuple) -> bool:
    return _same_embeddings(stored[0], new[0]) and _same_embeddings(stored[1], new[1])


def _same_fusion(stored: dict, new: dict) -> bool:
    return {k: v for k, v in stored.items() if k != "aspect"} == {k: v for k, v in new.items() if k != "aspect"}

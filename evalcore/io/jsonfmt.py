"""JSON formats: ``{query: {doc: grade}}`` dicts, seed 001 ordered lists, seed 003 graded judgments.

``json_dict``
    Qrels ``{"q1": {"d1": 2, "d7": 1}}`` (the pytrec_eval / ranx shape; grades
    integers, numeric strings accepted) and runs ``{"q1": {"d1": 12.5}}``. A run
    may also give ``{"q1": ["d3", "d1", ...]}`` (best first; score = −position).
``ordered_lists`` (seed 001)
    A JSON array (or JSONL, one object per line) of objects, each with an id
    field and one or more ordered list fields — the *aspects*, e.g.
    ``5_most_similar_movies_overall_ordered``. The id field is the first of
    ``id, _id, query_id, qid, query`` present, else the first field whose name
    ends in ``_id``. A list-valued field is an aspect when at least one of its
    items is an entry id (so metadata lists such as ``genres`` are ignored).
    Grade of the item at position p (1-based) of a list of n items = n + 1 − p.
    Every hard constraint of §1.3 is checked on every aspect (fail fast).
``graded_json`` (seed 003)
    A JSON array (or JSONL, or ``{"queries": [...]}``) of objects
    ``{"query", "relevance_judgments": {item: grade}, "domain"}`` or the
    synonym-pairs form ``{"source", "synonyms": {"exact": [...], "partial": [...],
    "related": [...]}, "domain"}`` (grades from ``grade_scheme``, default 3/2/1).
    The domain of each query is kept in :attr:`Qrels.domains`.

Errors name the file, the JSON path (``[3].relevance_judgments``), the query
and the item; JSONL records also get their line. Duplicated object keys, which
``json`` would silently collapse, are reported as :class:`DuplicateIdError`.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import IO, Any

import numpy as np

from ..data import Qrels, Run
from ..errors import (
    DuplicateIdError,
    EmptyInputError,
    InvalidJsonError,
    JsonShapeError,
    MissingValueError,
    OptionError,
)
from .columns import kind_of, to_grade, to_score
from .source import (
    _ID_BREAKING,
    ASCII_WS,
    decode_text,
    refuse_broken_ids,
    refuse_broken_writes,
    refuse_unstripped_writes,
)

__all__ = ["SYNONYM_GRADES", "ID_FIELDS", "GRADED_QUERY_FIELDS", "parse_json", "read_json_dict_qrels", "read_json_dict_run", "write_qrels_json", "write_run_json"]

SYNONYM_GRADES: Mapping[str, int] = MappingProxyType({"exact": 3, "partial": 2, "related": 1})
ID_FIELDS = ("id", "_id", "query_id", "qid", "query")
GRADED_QUERY_FIELDS = ("query", "query_id", "qid", "source")


# ============================================================================ parsing
class _JDict(dict):
    """A JSON object whose source repeated some keys (``dups``); ``json`` would keep the last silently."""

    dups: list[str]


def _hook(pairs: list[tuple[str, Any]]) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        dups = []
        for k, _ in pairs:
            if k in seen:
                dups.append(k)
            seen.add(k)
        d = _JDict(d)
        d.dups = dups
    return d


class _Doc:
    """A parsed JSON document: the value, and the line of each top-level record when read as JSONL."""

    def __init__(self, value: Any, label: str, lines: list[int] | None = None, text: str | None = None):
        self.value = value
        self.label = label
        self.lines = lines
        self.text = text  # the source text (to find the line of a refused id)

    def line(self, index: int | None) -> int | None:
        if self.lines is None or index is None or not 0 <= index < len(self.lines):
            return None
        return self.lines[index]


def parse_json(data: bytes, label: str, *, filename: str | None = None) -> _Doc:
    """Parse JSON (or JSONL: one value per line) with line/column in errors; never evaluates anything."""
    text = decode_text(data, label)
    jsonl_ext = bool(filename) and str(filename).lower().endswith((".jsonl", ".ndjson"))
    try:
        value = json.loads(text, object_pairs_hook=_hook)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data" or jsonl_ext:
            doc = _try_jsonl(text, label, force=jsonl_ext)
            if doc is not None:
                return doc
        raise InvalidJsonError(f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})", file=label,
                               line=e.lineno) from None
    except RecursionError:
        raise InvalidJsonError("invalid JSON: nested too deeply", file=label) from None
    except ValueError as e:  # e.g. an integer literal with too many digits
        raise InvalidJsonError(f"invalid JSON: {str(e)[:200]}", file=label) from None
    if jsonl_ext and isinstance(value, dict):  # a JSONL file of one record
        first = next(i for i, ln in enumerate(text.split("\n"), start=1) if ln.strip())
        return _Doc([value], label, [first], text)
    return _Doc(value, label, text=text)


def _try_jsonl(text: str, label: str, *, force: bool) -> _Doc | None:
    values: list[Any] = []
    lines: list[int] = []
    for lineno, ln in enumerate(text.split("\n"), start=1):
        if not ln.strip():
            continue
        try:
            values.append(json.loads(ln, object_pairs_hook=_hook))
        except json.JSONDecodeError as e:
            if not values and not force:
                return None  # the first line alone is not a value: report the JSON error instead
            raise InvalidJsonError(f"invalid JSON on this JSONL line: {e.msg} (column {e.colno})", file=label,
                                   line=lineno) from None
        except (RecursionError, ValueError) as e:
            raise InvalidJsonError(f"invalid JSON on this JSONL line ({type(e).__name__})", file=label,
                                   line=lineno) from None
        if not isinstance(values[-1], dict) and not force:
            return None
        lines.append(lineno)
    return _Doc(values, label, lines, text)


def _key(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _at(path: str) -> str:
    return f"at {path}" if path else "at the top level"


def _shape(doc: _Doc, path: str, expected: str, found: Any, *, index: int | None = None) -> JsonShapeError:
    if not path and index is None:
        return _top_shape(doc, expected, found)
    return JsonShapeError(f"{_at(path)}: expected {expected}, found {kind_of(found)}", file=doc.label,
                          line=doc.line(index))


#: Records that are not judgments or a run, by their fields: (fields all present, what the file looks like).
_LOOKS_LIKE = ((("_id", "title"), "a corpus file (BEIR corpus.jsonl: _id, title, text)"),
               (("_id", "text"), "a queries file (BEIR queries.jsonl: _id, text)"),
               (("query-id", "corpus-id"), "a BEIR qrels file in JSON (query-id, corpus-id, score)"))


def _looks_like(found: Any) -> str | None:
    """What kind of other file a list of records whose first record has these fields looks like (:data:`_LOOKS_LIKE`)."""
    first = found[0] if isinstance(found, list) and found else None
    fields = list(first) if isinstance(first, dict) else []
    return next((kind for need, kind in _LOOKS_LIKE if all(f in fields for f in need)), None)


def refuse_other_file(doc: _Doc, expected: str, *, what: str) -> None:
    """Raise :func:`_top_shape`'s error when the file's records look like another kind of file (a BEIR corpus or
    queries file): for a reader that would otherwise only say that a field is missing."""
    if _looks_like(doc.value) is not None:
        raise _top_shape(doc, expected, doc.value, what=what)


def _top_shape(doc: _Doc, expected: str, found: Any, *, what: str | None = None) -> JsonShapeError:
    """The file as a whole is not what ``what`` (``"run"``, ``"ground truth"``) is given as: the error says how the
    file was read (JSON lines: the first record's line; JSON: the line where its value starts), what it holds there
    and, when its records' fields say it, what kind of file it looks like."""
    first = found[0] if isinstance(found, list) and found else None
    fields = list(first) if isinstance(first, dict) else []
    looks = _looks_like(found)
    holds = kind_of(first) + (f" with the fields {', '.join(map(repr, fields[:6]))}" if fields else "")
    if doc.lines is not None:  # JSON lines: one value a line, the file as a whole is a list of them
        line = doc.line(0)
        msg = (f"read as JSON lines (one JSON value a line): the first line holds {holds}, "
               + (f"but {expected} is expected for the whole file" if isinstance(found, list) and not expected.startswith(
                   "an array") else f"expected {expected}"))
    else:
        text = doc.text or ""
        start = len(text) - len(text.lstrip())
        line = text.count("\n", 0, start) + 1 if text else None
        msg = (f"read as JSON: at the top level: expected {expected}, found {kind_of(found)}"
               + (f" (its first item: {holds})" if first is not None else ""))
    if looks:
        msg += f"; this looks like {looks}" + (f", not a {what}" if what else "")
    return JsonShapeError(msg, file=doc.label, line=line)


def _no_dup_keys(doc: _Doc, obj: dict, path: str, *, index: int | None = None, what: str = "field",
                 query: str | None = None) -> None:
    dups = getattr(obj, "dups", None)
    if dups:
        k = dups[0]
        if what == "document":
            msg = f"document {k!r} is listed twice for query {query!r}"
            msg += f" ({_at(path)})" if path.startswith("[") else ""
        elif what == "query":
            msg = f"query {k!r} appears twice ({_at(path)})"
        else:
            msg = f"{what} {k!r} appears twice {_at(path)}"
        raise DuplicateIdError(msg, file=doc.label, line=doc.line(index), query=query if query else None,
                               item=str(k))


def _id_text(doc: _Doc, v: Any, path: str, what: str, *, index: int | None = None) -> str:
    """An id given as a JSON string or integer, as text (ASCII white space around it stripped, :data:`.source.ASCII_WS`:
    a non-breaking or another Unicode space is part of the id, as in TREC files); anything else is a shape error."""
    if isinstance(v, str):
        s = v.strip(ASCII_WS)
    elif isinstance(v, int) and not isinstance(v, bool):
        s = str(v)
    else:
        raise _shape(doc, path, f"{what} (a string)", v, index=index)
    if not s:
        raise MissingValueError(f"empty {what} {_at(path)}", file=doc.label, line=doc.line(index))
    return s


_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')


def text_line(text: str | None, value: str) -> int | None:
    """The line of the first JSON string in ``text`` that reads as ``value`` (ASCII white space around it aside, as
    the readers strip it), or None.

    For the refusal of an id holding a control character, which JSON writes escaped (``"d\\t1"``), so
    the id's text cannot be searched for as it is.
    """
    found = _ID_BREAKING.search(value)
    if text is None or found is None:
        return None
    for m in _STRING_LITERAL.finditer(text):
        raw = m.group()
        if "\\" not in raw and found.group() not in raw:
            continue  # (quick: neither an escape nor the character as it is)
        try:
            if json.loads(raw).strip(ASCII_WS) == value:
                return text.count("\n", 0, m.start()) + 1
        except ValueError:
            continue
    return None


def refuse_broken(doc: _Doc, ids: list[str], what: str) -> None:
    """Refuse the first of ``ids`` (read from ``doc``) holding a control character, naming its line."""
    refuse_broken_ids(ids, what=what, file=doc.label, line=lambda i: text_line(doc.text, ids[i]))


def _records(doc: _Doc, expected: str) -> list[Any]:
    """The top-level array, or the ``queries`` / ``data`` array of a wrapping object."""
    v = doc.value
    if isinstance(v, dict):
        _no_dup_keys(doc, v, "")
        for k in ("queries", "data"):
            if isinstance(v.get(k), list):
                return v[k]
    if not isinstance(v, list):
        raise _shape(doc, "", expected, v)
    return v


# ============================================================================ json_dict
def read_json_dict_qrels(data: bytes, *, label: str, filename: str | None = None) -> Qrels:
    """Judgments from ``{query: {doc: grade}}``; a query with ``{}`` has no relevant document."""
    doc = parse_json(data, label, filename=filename)
    obj = doc.value
    if not isinstance(obj, dict):
        raise _top_shape(doc, "an object {query: {doc: grade}}", obj, what="ground truth")
    _no_dup_keys(doc, obj, "", what="query")
    if not obj:
        raise EmptyInputError("no queries (empty object)", file=label)
    qs: list[str] = []
    ds: list[str] = []
    gs: list[int] = []
    empty: list[str] = []
    for qid, docs in obj.items():
        path = _key("", qid)
        q = _id_text(doc, qid, path, "query id")
        if not isinstance(docs, dict):
            hint = " (an ordered list per query is the ordered_lists format: an array of objects)" \
                if isinstance(docs, list) else ""
            raise JsonShapeError(f"{_at(path)}: expected an object {{doc: grade}}, found {kind_of(docs)}{hint}",
                                 file=label, query=q)
        _no_dup_keys(doc, docs, path, what="document", query=q)
        if not docs:
            empty.append(q)
        for did, g in docs.items():
            d = _id_text(doc, did, _key(path, did), "document id")
            gs.append(to_grade(g, where=f"document {d!r} of query {q!r}", label=label, query=q, item=d))
            qs.append(q)
            ds.append(d)
    _refuse_broken_ids(doc, qs + empty, ds)
    return Qrels.from_records(qs, ds, np.asarray(gs, dtype=np.int64), source=label, extra_queries=empty,
                              check_ids=False)


def _refuse_broken_ids(doc: _Doc, qs: list[str], ds: list[str], docs: str = "document id") -> None:
    refuse_broken(doc, qs, "query id")
    refuse_broken(doc, ds, docs)


def read_json_dict_run(data: bytes, *, label: str, name: str | None = None, filename: str | None = None) -> Run:
    """A run from ``{query: {doc: score}}`` or ``{query: [doc, ...]}`` (best first, score = −position)."""
    doc = parse_json(data, label, filename=filename)
    obj = doc.value
    if not isinstance(obj, dict):
        raise _top_shape(doc, "an object {query: {doc: score}}", obj, what="run")
    _no_dup_keys(doc, obj, "", what="query")
    qs: list[str] = []
    ds: list[str] = []
    ss: list[float] = []
    for qid, docs in obj.items():
        path = _key("", qid)
        q = _id_text(doc, qid, path, "query id")
        if isinstance(docs, dict):
            _no_dup_keys(doc, docs, path, what="document", query=q)
            for did, s in docs.items():
                d = _id_text(doc, did, _key(path, did), "document id")
                ss.append(to_score(s, where=f"document {d!r} of query {q!r}", label=label, query=q, item=d))
                qs.append(q)
                ds.append(d)
        elif isinstance(docs, list):
            seen: set[str] = set()
            for i, did in enumerate(docs):
                d = _id_text(doc, did, _key(path, i), "document id")
                if d in seen:
                    raise DuplicateIdError(f"document {d!r} is listed twice for query {q!r} ({_at(_key(path, i))})",
                                           file=label, query=q, item=d)
                seen.add(d)
                qs.append(q)
                ds.append(d)
                ss.append(-float(i + 1))
        else:
            raise _shape(doc, path, "an object {doc: score} or a list of document ids", docs)
    if not qs:
        raise EmptyInputError("run has no ranked documents", file=label)
    run_name = name or os.path.splitext(os.path.basename(label))[0] or "run"
    _refuse_broken_ids(doc, qs, ds)
    refuse_broken_ids([run_name], what="run name", file=label)
    return Run.from_records(qs, ds, np.asarray(ss, dtype=np.float64), name=run_name, source=label, check_ids=False)


# ============================================================================ ordered lists (seed 001)


def _cell(v: Any) -> Any:
    if isinstance(v, dict | list):
        return json.dumps(v, ensure_ascii=False)
    return v


# ============================================================================ writers
def _dump(obj: Any, dest: str | os.PathLike | IO[str]) -> None:
    text = json.dumps(obj, ensure_ascii=False, indent=1, allow_nan=False) + "\n"
    if hasattr(dest, "write"):
        dest.write(text)
    else:
        with open(dest, "w", encoding="utf-8") as fh:
            fh.write(text)


def write_qrels_json(qrels: Qrels, dest: str | os.PathLike | IO[str], *, form: str = "dict") -> None:
    """Write judgments as ``{query: {doc: grade}}`` (``form="dict"``, read back as ``json_dict``) or as
    seed-003 ``[{query, relevance_judgments, domain}]`` (``form="graded"``, keeps the domains)."""
    refuse_broken_writes(dest, ("query id", qrels.query_ids), ("document id", qrels.doc_ids),
                         ("domain", [] if qrels.domains is None or form != "graded" else qrels.domains))
    refuse_unstripped_writes(dest, ("query id", qrels.query_ids), ("document id", qrels.doc_ids))  # (read stripped)
    if form == "dict":
        _dump(qrels.to_dict(), dest)
    elif form == "graded":
        dom = qrels.domains
        out = []
        for i, (q, rj) in enumerate(qrels.to_dict().items()):
            rec: dict[str, Any] = {"query": q, "relevance_judgments": rj}
            if dom is not None:
                rec["domain"] = str(dom[i])
            out.append(rec)
        _dump(out, dest)
    else:
        raise OptionError(f"unknown JSON form {form!r}; supported: dict, graded")


def write_run_json(run: Run, dest: str | os.PathLike | IO[str]) -> None:
    """Write ``{query: {doc: score}}`` (floats written exactly; read back as ``json_dict``)."""
    refuse_broken_writes(dest, ("query id", run.query_ids), ("document id", run.doc_vocab))
    refuse_unstripped_writes(dest, ("query id", run.query_ids), ("document id", run.doc_vocab))  # (read stripped)
    _dump(run.to_dict(), dest)

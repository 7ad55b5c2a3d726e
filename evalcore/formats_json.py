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
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import IO, Any

import numpy as np

from ._lazy import pd
from .data import Qrels, Run
from .errors import (
    AspectError,
    ConflictingValueError,
    ConstraintError,
    DuplicateIdError,
    DuplicateListIdError,
    EmptyInputError,
    InvalidJsonError,
    JsonShapeError,
    MissingColumnError,
    MissingValueError,
    OptionError,
)
from .formats import (
    DOMAIN_COLUMNS,
    META_ID_COLUMNS,
    QUERY_COLUMNS,
    decode_text,
    kind_of,
    metadata_frame,
    norm_column,
    to_grade,
    to_score,
)

__all__ = [
    "SYNONYM_GRADES", "parse_json", "read_json_dict_qrels", "read_json_dict_run", "read_ordered_lists",
    "ordered_list_aspects", "read_graded_json", "read_json_domains", "read_json_metadata",
    "write_qrels_json", "write_run_json", "write_ordered_lists", "declared_length",
]

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

    def __init__(self, value: Any, label: str, lines: list[int] | None = None):
        self.value = value
        self.label = label
        self.lines = lines

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
        return _Doc([value], label, [first])
    return _Doc(value, label)


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
    return _Doc(values, label, lines)


def _key(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _at(path: str) -> str:
    return f"at {path}" if path else "at the top level"


def _shape(doc: _Doc, path: str, expected: str, found: Any, *, index: int | None = None) -> JsonShapeError:
    return JsonShapeError(f"{_at(path)}: expected {expected}, found {kind_of(found)}", file=doc.label,
                          line=doc.line(index))


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
    """An id given as a JSON string or integer, as text; anything else is a shape error."""
    if isinstance(v, str):
        s = v.strip()
    elif isinstance(v, int) and not isinstance(v, bool):
        s = str(v)
    else:
        raise _shape(doc, path, f"{what} (a string)", v, index=index)
    if not s:
        raise MissingValueError(f"empty {what} {_at(path)}", file=doc.label, line=doc.line(index))
    return s


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
        raise _shape(doc, "", "an object {query: {doc: grade}}", obj)
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
    return Qrels.from_records(qs, ds, np.asarray(gs, dtype=np.int64), source=label, extra_queries=empty)


def read_json_dict_run(data: bytes, *, label: str, name: str | None = None, filename: str | None = None) -> Run:
    """A run from ``{query: {doc: score}}`` or ``{query: [doc, ...]}`` (best first, score = −position)."""
    doc = parse_json(data, label, filename=filename)
    obj = doc.value
    if not isinstance(obj, dict):
        raise _shape(doc, "", "an object {query: {doc: score}}", obj)
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
    return Run.from_records(qs, ds, np.asarray(ss, dtype=np.float64), name=run_name, source=label)


# ============================================================================ ordered lists (seed 001)
def declared_length(field: str) -> int | None:
    """The list length a field name declares: ``5_most_similar...`` → 5, ``top_10`` / ``top10`` → 10."""
    for tok in re.split(r"[_\-\s.]+", field.lower()):
        m = re.fullmatch(r"(?:top)?([0-9]+)", tok)
        if m:
            return int(m.group(1))
    return None


class _Ordered:
    """A validated seed-001 document: entry ids, the aspects and their lists per entry."""

    def __init__(self, id_field: str, ids: list[str], aspects: list[str], lists: dict[str, list[list[str]]],
                 other_lists: list[str]):
        self.id_field = id_field
        self.ids = ids
        self.aspects = aspects
        self.lists = lists
        self.other_lists = other_lists  # list fields naming no entry id (metadata such as 'genres')


def _pick_id_field(doc: _Doc, first: dict) -> str:
    keys = list(first)
    lower = {k.lower(): k for k in reversed(keys)}
    for name in ID_FIELDS:
        k = lower.get(name)
        if k is not None and isinstance(first[k], str | int) and not isinstance(first[k], bool):
            return k
    for k in keys:
        if k.lower().endswith(("_id", "-id")) and isinstance(first[k], str | int) \
                and not isinstance(first[k], bool):
            return k
    raise JsonShapeError(
        f"at [0]: no id field (expected one of {', '.join(ID_FIELDS)} or a field ending in _id); "
        f"the fields are {keys}", file=doc.label, line=doc.line(0))


def _validate_ordered(doc: _Doc, force: Sequence[str] = ()) -> _Ordered:
    """Shape checks, then every hard constraint of seed 001 §1.3, in file order (first failure raises)."""
    entries = doc.value
    if isinstance(entries, dict):
        raise _shape(doc, "", "a JSON array of objects (one per query, with ordered list fields)", entries)
    if not isinstance(entries, list):
        raise _shape(doc, "", "a JSON array of objects", entries)
    if not entries:
        raise EmptyInputError("no entries (empty array)", file=doc.label)
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise _shape(doc, f"[{i}]", "an object", e, index=i)
        _no_dup_keys(doc, e, f"[{i}]", index=i)
    id_field = _pick_id_field(doc, entries[0])
    ids: list[str] = []
    where: dict[str, int] = {}
    for i, e in enumerate(entries):
        if id_field not in e:
            raise JsonShapeError(f"at [{i}]: no {id_field!r} field (the id field of the first entry)",
                                 file=doc.label, line=doc.line(i))
        qid = _id_text(doc, e[id_field], _key(f"[{i}]", id_field), id_field, index=i)
        if qid in where:  # §1.3: exactly one entry per id
            raise DuplicateListIdError(
                f"{id_field} {qid!r} has two entries, [{where[qid]}] and [{i}]; exactly one entry per id is "
                f"required (seed 001 §1.3)", file=doc.label, line=doc.line(i), query=qid, item=qid)
        where[qid] = i
        ids.append(qid)
    known = set(ids)
    # list-valued fields in first-appearance order; aspects are those that name at least one entry
    list_fields: list[str] = []
    for e in entries:
        for k, v in e.items():
            if k != id_field and isinstance(v, list) and k not in list_fields:
                list_fields.append(k)
    aspects = [f for f in list_fields
               if f in force or any(isinstance(x, str | int) and not isinstance(x, bool) and str(x).strip() in known
                      for e in entries if isinstance(e.get(f), list) for x in e[f])]
    lists: dict[str, list[list[str]]] = {f: [] for f in aspects}
    for i, e in enumerate(entries):
        qid = ids[i]
        for f in aspects:
            path = _key(f"[{i}]", f)
            if f not in e:
                raise JsonShapeError(f"at [{i}]: no {f!r} field (other entries have this ordered list); "
                                     f"query {qid!r}", file=doc.label, line=doc.line(i), query=qid)
            raw = e[f]
            if not isinstance(raw, list):
                raise JsonShapeError(f"{_at(path)}: expected a list of ids, found {kind_of(raw)}; query {qid!r}",
                                     file=doc.label, line=doc.line(i), query=qid)
            items = [_id_text(doc, x, _key(path, j), "id", index=i) for j, x in enumerate(raw)]
            _check_list(doc, i, qid, f, items, known)
            lists[f].append(items)
    return _Ordered(id_field, ids, aspects, lists, [f for f in list_fields if f not in aspects])


def _check_list(doc: _Doc, i: int, qid: str, field: str, items: list[str], known: set[str]) -> None:
    line = doc.line(i)
    n = declared_length(field)
    if n is not None and len(items) != n:
        raise ConstraintError(
            f"query {qid!r}: field {field!r} has {len(items)} items, its name declares exactly {n} "
            f"(seed 001 §1.3; at [{i}])", file=doc.label, line=line, query=qid)
    if qid in items:
        raise ConstraintError(
            f"query {qid!r} appears in its own list {field!r} at position {items.index(qid) + 1} "
            f"(seed 001 §1.3; at [{i}])", file=doc.label, line=line, query=qid, item=qid)
    seen: set[str] = set()
    for p, x in enumerate(items, start=1):
        if x in seen:
            raise DuplicateListIdError(
                f"query {qid!r}: id {x!r} is listed twice in {field!r} (again at position {p}); ids in a list "
                f"must be unique (seed 001 §1.3; at [{i}])", file=doc.label, line=line, query=qid, item=x)
        seen.add(x)
    for p, x in enumerate(items, start=1):
        if x not in known:
            raise ConstraintError(
                f"query {qid!r}: id {x!r} in {field!r} (position {p}) is not the id of any entry; listed ids "
                f"must come from the same set (seed 001 §1.3; at [{i}])", file=doc.label, line=line,
                query=qid, item=x)


def pick_aspect(aspects: Sequence[str], aspect: str | None, *, label: str,
                list_fields: Sequence[str] = ()) -> str:
    """Resolve ``aspect``: exact name, else case-insensitive name, else a unique substring (``"overall"``)."""
    avail = ", ".join(repr(a) for a in aspects) or "none"
    if not aspects:
        other = f"; list fields that name no entry: {list(list_fields)}" if list_fields else ""
        raise AspectError(f"no ordered-list field (aspect) whose items are entry ids{other}", file=label)
    if aspect is None:
        if len(aspects) == 1:
            return aspects[0]
        raise AspectError(f"the file has {len(aspects)} ordered lists (aspects): {avail}; choose one with "
                          f"aspect=", file=label)
    if not isinstance(aspect, str):
        raise OptionError(f"aspect must be a string, got {type(aspect).__name__}", file=label)
    if aspect in aspects:
        return aspect
    low = [a for a in aspects if a.lower() == aspect.lower()]
    if len(low) == 1:
        return low[0]
    sub = [a for a in aspects if aspect.strip().lower() and aspect.strip().lower() in a.lower()]
    if len(sub) == 1:
        return sub[0]
    if len(sub) > 1:
        raise AspectError(f"aspect {aspect!r} is ambiguous: it matches {', '.join(map(repr, sub))}; "
                          f"the aspects are {avail}", file=label)
    raise AspectError(f"unknown aspect {aspect!r}; the aspects are {avail}", file=label)


def _match(fields: Sequence[str], aspect: str | None, label: str) -> str | None:
    if aspect is None or not fields:
        return None
    try:
        return pick_aspect(fields, aspect, label=label)
    except AspectError:
        return None


def ordered_list_aspects(data: bytes, *, label: str, filename: str | None = None) -> list[str]:
    """The aspects (ordered list fields) of a seed-001 file, after validating it."""
    od = _validate_ordered(parse_json(data, label, filename=filename))
    if not od.aspects:
        pick_aspect(od.aspects, None, label=label, list_fields=od.other_lists)  # raises, naming the list fields
    return list(od.aspects)


def read_ordered_lists(data: bytes, *, label: str, aspect: str | None = None,
                       filename: str | None = None) -> Qrels:
    """Judgments of one aspect of a seed-001 file: grade = n + 1 − position (n = list length)."""
    doc = parse_json(data, label, filename=filename)
    od = _validate_ordered(doc)
    try:
        f = pick_aspect(od.aspects, aspect, label=label, list_fields=od.other_lists)
    except AspectError:
        forced = _match(od.other_lists, aspect, label)
        if forced is None:
            raise
        # the user asked for a list field that names no entry: check it as an aspect (a §1.3 error)
        od = _validate_ordered(doc, force=[forced])
        f = forced
    qs: list[str] = []
    ds: list[str] = []
    gs: list[int] = []
    empty: list[str] = []
    for qid, items in zip(od.ids, od.lists[f], strict=True):
        n = len(items)
        if not n:
            empty.append(qid)
        for p, x in enumerate(items, start=1):
            qs.append(qid)
            ds.append(x)
            gs.append(n + 1 - p)
    return Qrels.from_records(qs, ds, np.asarray(gs, dtype=np.int64), source=label, extra_queries=empty)


# ============================================================================ graded judgments (seed 003)
def check_grade_scheme(grade_scheme: Any) -> dict[str, int]:
    """A copy of ``grade_scheme`` as {category: int grade}; anything else is an :class:`OptionError`."""
    if not isinstance(grade_scheme, Mapping) or not grade_scheme:
        raise OptionError("grade_scheme must be a non-empty mapping {category: grade}, e.g. "
                          "{'exact': 3, 'partial': 2, 'related': 1}")
    out: dict[str, int] = {}
    for k, v in grade_scheme.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise OptionError(f"grade_scheme entry {k!r}: {v!r} must map a category name to an integer grade")
        out[k] = int(v)
    return out


def read_graded_json(data: bytes, *, label: str, grade_scheme: Mapping[str, int] = SYNONYM_GRADES,
                     filename: str | None = None) -> Qrels:
    """Judgments (with domains) from seed-003 graded judgments or synonym pairs."""
    scheme = check_grade_scheme(grade_scheme)
    doc = parse_json(data, label, filename=filename)
    recs = _records(doc, "a JSON array of objects {query, relevance_judgments, domain}")
    if not recs:
        raise EmptyInputError("no queries (empty array)", file=label)
    qs: list[str] = []
    ds: list[str] = []
    gs: list[int] = []
    empty: list[str] = []
    domains: dict[str, str] = {}
    any_domain = False
    where: dict[str, int] = {}
    for i, r in enumerate(recs):
        base = f"[{i}]"
        if not isinstance(r, dict):
            raise _shape(doc, base, "an object {query, relevance_judgments, domain}", r, index=i)
        _no_dup_keys(doc, r, base, index=i)
        qf = next((k for k in GRADED_QUERY_FIELDS if k in r), None)
        if "synonyms" in r and "source" in r:
            qf = "source"
        if qf is None:
            raise JsonShapeError(f"at {base}: no query field (expected 'query', or 'source' with 'synonyms'); "
                                 f"the fields are {list(r)}", file=label, line=doc.line(i))
        q = _id_text(doc, r[qf], _key(base, qf), "query", index=i)
        if q in where:
            raise DuplicateIdError(f"query {q!r} has two entries, [{where[q]}] and [{i}]", file=label,
                                   line=doc.line(i), query=q, item=q)
        where[q] = i
        dom = r.get("domain")
        if "domain" in r:
            any_domain = True
            if dom is not None and not isinstance(dom, str):
                raise _shape(doc, _key(base, "domain"), "a string", dom, index=i)
        domains[q] = (dom or "").strip()
        n_before = len(qs)
        if "relevance_judgments" in r:
            rj = r["relevance_judgments"]
            path = _key(base, "relevance_judgments")
            if not isinstance(rj, dict):
                raise JsonShapeError(f"{_at(path)}: expected an object {{item: grade}}, found {kind_of(rj)}; "
                                     f"query {q!r}", file=label, line=doc.line(i), query=q)
            _no_dup_keys(doc, rj, path, index=i, what="document", query=q)
            for item, g in rj.items():
                d = _id_text(doc, item, _key(path, item), "item", index=i)
                gs.append(to_grade(g, where=f"item {d!r} of query {q!r} ({_at(_key(path, item))})", label=label,
                                   line=doc.line(i), query=q, item=d))
                qs.append(q)
                ds.append(d)
        elif "synonyms" in r:
            syn = r["synonyms"]
            path = _key(base, "synonyms")
            if not isinstance(syn, dict):
                raise JsonShapeError(f"{_at(path)}: expected an object {{exact: [...], partial: [...], "
                                     f"related: [...]}}, found {kind_of(syn)}; query {q!r}", file=label,
                                     line=doc.line(i), query=q)
            _no_dup_keys(doc, syn, path, index=i)
            seen: dict[str, str] = {}
            for cat, items in syn.items():
                cpath = _key(path, cat)
                if cat not in scheme:
                    raise JsonShapeError(f"{_at(cpath)}: unknown category {cat!r}; grade_scheme knows "
                                         f"{list(scheme)}; query {q!r}", file=label, line=doc.line(i), query=q)
                if not isinstance(items, list):
                    raise JsonShapeError(f"{_at(cpath)}: expected a list of items, found {kind_of(items)}; "
                                         f"query {q!r}", file=label, line=doc.line(i), query=q)
                for j, x in enumerate(items):
                    d = _id_text(doc, x, _key(cpath, j), "item", index=i)
                    if d in seen:
                        raise DuplicateIdError(f"item {d!r} of query {q!r} is listed twice, under {seen[d]!r} "
                                               f"and {cat!r} ({_at(cpath)})", file=label, line=doc.line(i),
                                               query=q, item=d)
                    seen[d] = cat
                    qs.append(q)
                    ds.append(d)
                    gs.append(scheme[cat])
        else:
            raise JsonShapeError(f"at {base}: expected a 'relevance_judgments' object or a 'synonyms' object; "
                                 f"the fields are {list(r)}", file=label, line=doc.line(i), query=q)
        if len(qs) == n_before:
            empty.append(q)
    return Qrels.from_records(qs, ds, np.asarray(gs, dtype=np.int64), source=label, extra_queries=empty,
                              domains=domains if any_domain else None)


# ============================================================================ domains / metadata
def read_json_domains(data: bytes, *, label: str, filename: str | None = None) -> dict[str, str]:
    """query -> domain from ``{query: domain}`` or an array of objects with a query and a domain field."""
    doc = parse_json(data, label, filename=filename)
    v = doc.value
    out: dict[str, str] = {}
    if isinstance(v, dict) and not any(isinstance(v.get(k), list) for k in ("queries", "data")):
        _no_dup_keys(doc, v, "", what="query")
        for k, dom in v.items():
            q = _id_text(doc, k, _key("", k), "query id")
            if dom is not None and not isinstance(dom, str):
                raise _shape(doc, _key("", k), "a domain (string)", dom)
            out[q] = (dom or "").strip()
    else:
        recs = _records(doc, "an object {query: domain} or an array of objects {query_id, domain}")
        for i, r in enumerate(recs):
            base = f"[{i}]"
            if not isinstance(r, dict):
                raise _shape(doc, base, "an object {query_id, domain}", r, index=i)
            names = {norm_column(k): k for k in reversed(list(r))}
            qk = next((names[c] for c in QUERY_COLUMNS + ("source", "id") if c in names), None)
            dk = next((names[c] for c in DOMAIN_COLUMNS if c in names), None)
            if qk is None or dk is None:
                role = "query id" if qk is None else "domain"
                raise MissingColumnError(f"at {base}: no {role} field; the fields are {list(r)}", file=label,
                                         line=doc.line(i))
            q = _id_text(doc, r[qk], _key(base, qk), "query id", index=i)
            dom = r[dk]
            if dom is not None and not isinstance(dom, str):
                raise _shape(doc, _key(base, dk), "a domain (string)", dom, index=i)
            dom = (dom or "").strip()
            if q in out and out[q] != dom:
                raise ConflictingValueError(f"query {q!r} is given two domains, {out[q]!r} and {dom!r} "
                                            f"({_at(base)})", file=label, line=doc.line(i), query=q)
            out[q] = dom
    if not out:
        raise EmptyInputError("no query domains", file=label)
    return out


def read_json_metadata(data: bytes, *, label: str, filename: str | None = None) -> pd.DataFrame:
    """Document metadata from JSON/JSONL: BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``), an array of
    objects, or ``{doc_id: {title, text}}`` / ``{doc_id: "text"}``. Nested values are kept as JSON text."""
    doc = parse_json(data, label, filename=filename)
    v = doc.value
    ids: list[str] = []
    rows: list[dict[str, Any]] = []
    if isinstance(v, dict) and not any(isinstance(v.get(k), list) for k in ("queries", "data")):
        _no_dup_keys(doc, v, "", what="document id")
        for k, body in v.items():
            ids.append(_id_text(doc, k, _key("", k), "document id"))
            if isinstance(body, dict):
                rows.append(dict(body))
            elif isinstance(body, str):
                rows.append({"text": body})
            else:
                raise _shape(doc, _key("", k), "an object {title, text} or a text", body)
    else:
        recs = _records(doc, "an array of objects {_id, title, text}")
        for i, r in enumerate(recs):
            base = f"[{i}]"
            if not isinstance(r, dict):
                raise _shape(doc, base, "an object {_id, title, text}", r, index=i)
            _no_dup_keys(doc, r, base, index=i)
            names = {norm_column(k): k for k in reversed(list(r))}
            ik = next((names[c] for c in META_ID_COLUMNS if c in names), None)
            if ik is None:
                raise MissingColumnError(f"at {base}: no document id field (accepted: "
                                         f"{', '.join(META_ID_COLUMNS)}); the fields are {list(r)}",
                                         file=label, line=doc.line(i))
            ids.append(_id_text(doc, r[ik], _key(base, ik), "document id", index=i))
            rows.append({k: x for k, x in r.items() if k != ik})
    if not ids:
        raise EmptyInputError("no documents", file=label)
    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    columns = {c: [_cell(r.get(c)) for r in rows] for c in cols}
    return metadata_frame(ids, columns, label=label, line_of=lambda i: doc.line(i),
                          where=lambda i: f" (at [{i}])" if doc.lines is None else "")


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
    _dump(run.to_dict(), dest)


def write_ordered_lists(lists: Qrels | Mapping[str, Qrels], dest: str | os.PathLike | IO[str], *,
                        aspect: str = "ordered", id_field: str = "id") -> None:
    """Write seed-001 ordered lists: one entry per query, one list field per aspect.

    ``lists`` is one Qrels (written under ``aspect``) or ``{aspect: Qrels}``. Per query the
    documents with grade >= 1 are listed by grade descending (ties in input order), so a list
    read back gets grades n..1. The result is validated against seed 001 §1.3 before anything
    is written (:class:`ConstraintError` if, e.g., a listed id is not itself a query).
    """
    by_aspect: dict[str, Qrels] = {aspect: lists} if isinstance(lists, Qrels) else dict(lists)
    if not by_aspect:
        raise OptionError("no aspect to write")
    ids: list[str] = []
    seen: set[str] = set()
    for qr in by_aspect.values():
        for q in qr.query_ids.tolist():
            if q not in seen:
                seen.add(q)
                ids.append(q)
    entries: dict[str, dict[str, Any]] = {q: {id_field: q} for q in ids}
    for name, qr in by_aspect.items():
        if name == id_field:
            raise OptionError(f"aspect {name!r} clashes with the id field")
        ranked: dict[str, list[str]] = {q: [] for q in ids}
        frame = qr.to_frame()
        frame = frame[frame["relevance"] >= 1]
        frame = frame.iloc[np.argsort(-frame["relevance"].to_numpy(), kind="stable")]
        for q, d in zip(frame["query_id"].tolist(), frame["doc_id"].tolist(), strict=True):
            ranked[q].append(d)
        for q in ids:
            entries[q][name] = ranked[q]
    out = list(entries.values())
    label = str(getattr(dest, "name", dest)) if not isinstance(dest, str) else dest
    _validate_ordered(_Doc(out, label))
    _dump(out, dest)

"""Seed 001 ordered lists (one aspect per list field) and seed 003 graded judgments, as JSON."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import IO, Any

import numpy as np

from ..data import Qrels
from ..errors import (
    AspectError,
    ConstraintError,
    DuplicateIdError,
    DuplicateListIdError,
    EmptyInputError,
    JsonShapeError,
    OptionError,
)
from .columns import kind_of, to_grade
from .jsonfmt import (
    GRADED_QUERY_FIELDS,
    ID_FIELDS,
    SYNONYM_GRADES,
    _at,
    _Doc,
    _dump,
    _id_text,
    _key,
    _no_dup_keys,
    _records,
    _shape,
    parse_json,
    refuse_broken,
    refuse_other_file,
)
from .source import ASCII_WS, refuse_broken_writes, refuse_unstripped_writes

__all__ = ["declared_length", "pick_aspect", "ordered_list_aspects", "read_ordered_lists", "check_grade_scheme", "read_graded_json", "write_ordered_lists"]


def declared_length(field: str) -> int | None:
    """The list length a field name declares, or None.

    A number that opens the name (``5_most_similar_movies_overall_ordered`` → 5, seed 001 §1.1) or
    follows ``top`` (``top_10``, ``top10``, ``similar_top5`` → 10, 10, 5). Any other number in a name
    declares nothing: ``neighbors_model_2``, ``similar_2024`` or ``e5_similar`` name a model, a year or
    a version, not a length, and their lists may have any length.

    >>> [declared_length(f) for f in ("5_most_similar", "top_10", "similar_top5", "neighbors_model_2", "e5_similar")]
    [5, 10, 5, None, None]
    """
    toks = [t for t in re.split(r"[_\-\s.]+", field.lower()) if t]
    for i, tok in enumerate(toks):
        m = re.fullmatch(r"top([0-9]+)", tok)
        if m:
            return int(m.group(1))
        if tok.isdigit() and tok.isascii() and (i == 0 or toks[i - 1] == "top"):
            return int(tok)
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
    refuse_broken(doc, ids, id_field)
    known = set(ids)
    # entries whose id is a JSON number: named when a listed id is unknown (a string id typed as a number)
    numbers = {i: e[id_field] for i, e in enumerate(entries) if not isinstance(e[id_field], str)}
    # list-valued fields in first-appearance order; aspects are those that name at least one entry
    list_fields: list[str] = []
    for e in entries:
        for k, v in e.items():
            if k != id_field and isinstance(v, list) and k not in list_fields:
                list_fields.append(k)
    aspects = [f for f in list_fields
               if f in force or any(isinstance(x, str | int) and not isinstance(x, bool) and str(x).strip(ASCII_WS) in known
                      for e in entries if isinstance(e.get(f), list) for x in e[f])]
    refuse_broken(doc, aspects, "ordered-list field (aspect)")
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
            refuse_broken(doc, items, f"id in {f!r}")
            _check_list(doc, i, qid, f, items, known, numbers=numbers if len(numbers) < len(entries) else {},
                        id_field=id_field)
            lists[f].append(items)
    return _Ordered(id_field, ids, aspects, lists, [f for f in list_fields if f not in aspects])


def _check_list(doc: _Doc, i: int, qid: str, field: str, items: list[str], known: set[str], *,
                numbers: dict[int, Any], id_field: str) -> None:
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
            hint = ""
            if numbers:  # some ids are strings, some numbers: likely the cause
                j, v = next(iter(numbers.items()))
                hint = (f"; note that entry [{j}]'s {id_field} is the number {v}, where other entries' ids are strings "
                        f"(seed 001 §1.2: ids are strings)")
            raise ConstraintError(
                f"query {qid!r}: id {x!r} in {field!r} (position {p}) is not the id of any entry; listed ids "
                f"must come from the same set (seed 001 §1.3; at [{i}]){hint}", file=doc.label, line=line,
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
                          "aspect= (on the command line: --aspect, e.g. --aspect overall)", file=label)
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
    doc = parse_json(data, label, filename=filename)
    od = _validate_ordered(doc)
    if not od.aspects:
        refuse_other_file(doc, "an array of objects, each with an id and ordered lists of ids (seed 001)", what="ground truth")
        pick_aspect(od.aspects, None, label=label, list_fields=od.other_lists)  # raises, naming the list fields
    return list(od.aspects)


def read_ordered_lists(data: bytes, *, label: str, aspect: str | None = None,
                       filename: str | None = None) -> Qrels:
    """Judgments of one aspect of a seed-001 file: grade = n + 1 − position (n = list length)."""
    doc = parse_json(data, label, filename=filename)
    od = _validate_ordered(doc)
    if not od.aspects:
        refuse_other_file(doc, "an array of objects, each with an id and ordered lists of ids (seed 001)", what="ground truth")
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
    return Qrels.from_records(qs, ds, np.asarray(gs, dtype=np.int64), source=label, extra_queries=empty,
                              check_ids=False)


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
    refuse_broken(doc, list(where), "query")
    refuse_broken(doc, ds, "item")
    refuse_broken(doc, list(domains.values()), "domain")
    return Qrels.from_records(qs, ds, np.asarray(gs, dtype=np.int64), source=label, extra_queries=empty,
                              domains=domains if any_domain else None, check_ids=False)


# ============================================================================ domains / metadata


def write_ordered_lists(lists: Qrels | Mapping[str, Qrels], dest: str | os.PathLike | IO[str], *,
                        aspect: str = "ordered", id_field: str = "id") -> None:
    """Write seed-001 ordered lists: one entry per query, one list field per aspect.

    ``lists`` is one Qrels (written under ``aspect``) or ``{aspect: Qrels}``. Per query the
    documents with grade >= 1 are listed by grade descending (ties in input order), so a list
    read back gets grades n..1. The result is validated against seed 001 §1.3 before anything
    is written (:class:`ConstraintError` if, e.g., a listed id is not itself a query), and so that it reads
    back: an aspect whose lists name no entry is refused (:class:`ConstraintError`; all of them empty:
    :class:`EmptyInputError`), as the reader would not take it for an ordered list.
    """
    by_aspect: dict[str, Qrels] = {aspect: lists} if isinstance(lists, Qrels) else dict(lists)
    if not by_aspect:
        raise OptionError("no aspect to write")
    refuse_broken_writes(dest, ("aspect", list(by_aspect)), ("id field", [id_field]),
                         *[(what, ids) for qr in by_aspect.values()
                           for what, ids in (("query id", qr.query_ids), ("document id", qr.doc_ids))])
    refuse_unstripped_writes(dest, *[(what, ids) for qr in by_aspect.values()  # (the reader strips ids)
                                     for what, ids in (("query id", qr.query_ids), ("document id", qr.doc_ids))])
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
    label = os.fspath(dest) if isinstance(dest, str | os.PathLike) else str(getattr(dest, "name", dest))
    for name in by_aspect:
        _refuse_unreadable_aspect(name, [(q, entries[q][name]) for q in ids], set(ids), label)
    _validate_ordered(_Doc(out, label))
    _dump(out, dest)


def _refuse_unreadable_aspect(name: str, lists: list[tuple[str, list[str]]], known: set[str], label: str) -> None:
    """Refuse an aspect whose lists name no entry: the reader takes a list field for an aspect only when it names
    one (others are metadata, e.g. 'genres'), so the file would hold no such list, or lose this one of several."""
    listed = [(q, d) for q, items in lists for d in items]
    if not listed:
        raise EmptyInputError(f"aspect {name!r} lists no id: no query has a document with grade >= 1, and a list "
                              "field of empty lists is not read back as an ordered list", file=label)
    if not any(d in known for _, d in listed):
        q, d = listed[0]
        raise ConstraintError(f"aspect {name!r}: none of its listed ids is the id of an entry ({d!r}, listed by query "
                              f"{q!r}, is not); ordered lists name other entries (seed 001 §1.3), as documents "
                              "that are queries themselves", file=label)

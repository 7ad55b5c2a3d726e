"""Side files whose ids are not those of the data: said once, when the file is stored or the ground truth changes.

A side file (a domain mapping, query texts: query id -> domain / text; document metadata: document id -> title,
text) is matched to the ground truth by id, as text. A file whose ids match nothing is most likely the wrong file,
or its ids are written another way than the ground truth's (``'q1'`` against ``'1'``, ``'Q1'`` against ``'q1'``):
nothing is refused (the file is stored, its ids may match a ground truth set later), but the user is told, in one
:class:`~evalcore.errors.EvalcoreWarning` naming the file, the counts and a few ids of both sides (as Python's
``repr`` shows them):

* **none matches**: the file names none of the ground truth's queries (documents): said strongly — nothing it
  holds will be shown (the Domains page has nothing to show; no drill-down shows a query's text or a document's
  title);
* **some ground-truth queries (documents) are not in the file**: how many are not (with a few of them), and, of
  the file's ids, how many match and how many do not (with a few of those): a query without a domain falls in the
  Domains page's group ``(none)``, one without a text shows none.

A file naming every ground-truth query (document) and more ids besides is not warned about: BEIR's
``queries.jsonl`` holds every split's queries, a corpus holds documents no judgment names.

The ground truth's ids: its queries (every aspect's, before any sampling) for a domain mapping and query texts, its
judged documents (every grade, every aspect) for the metadata; a reference model's items for all three. Checked by
:meth:`~evalcore.workspace.Workspace.set_domains`, ``set_query_texts`` and ``set_metadata`` when a ground truth is
there (with the ids just read: no extra read of the file), and, for the stored domain mapping and query texts, when
another ground truth becomes the active one (:func:`warn_stored_side_ids`; the metadata is not read again then: a
corpus's metadata may be gigabytes). The evaluation itself warns when the domain mapping names none of the queries
evaluated (:func:`check_domain_ids`, :data:`NO_DOMAIN_MATCH`: the Domains page says it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._lazy import pd
from ..data import Qrels
from ..errors import EvalcoreError, warn

__all__ = ["NO_DOMAIN_MATCH", "SIDE_WORDS", "side_ids_text", "domain_sources_text", "own_domains", "label_domains",
           "check_domain_ids", "warn_side_ids", "warn_stored_side_ids"]

#: Start of the warning that the domain mapping names none of the ground truth's queries (the Domains page and
#: the Data page look for it).
NO_DOMAIN_MATCH = "the domain mapping names none of the ground truth's"

#: Per side file (its role): what it is called, what its ids are, and what a missing id means to the user.
SIDE_WORDS: dict[str, dict[str, str]] = {
    "domains": {"the": "the domain mapping", "names": "names", "id": "query id", "item": "query", "items": "queries",
                "thing": "domain", "none": "no query has a domain, so the Domains page has nothing to show",
                "without": "on the Domains page they form the group '(none)'"},
    "queries": {"the": "the query texts", "names": "name", "id": "query id", "item": "query", "items": "queries",
                "thing": "text", "none": "no query's drill-down shows its text",
                "without": "their drill-down shows no text"},
    "metadata": {"the": "the document metadata", "names": "names", "id": "document id", "item": "judged document",
                 "items": "judged documents",
                 "thing": "title or text", "none": "no judged document shows a title or text",
                 "without": "their drill-down shows no title or text"},
}

#: How many ids a warning shows of each side.
SHOWN = 3


def _some(ids: Iterable[Any]) -> str:
    out = []
    for x in ids:
        out.append(repr(str(x)))
        if len(out) == SHOWN:
            break
    return ", ".join(out)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _text_ids(values: Any, *, distinct: bool) -> np.ndarray:
    """``values`` as text (an object array: no fixed-width copy); ``distinct``: each once, in first-seen order."""
    arr = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=object)
    if pd.api.types.infer_dtype(arr, skipna=False) != "string":
        arr = pd.Series(arr, dtype=object).astype(str).to_numpy(dtype=object)
    return pd.unique(arr) if distinct else arr


def side_ids_text(role: str, ids: Any, known: Any, *, label: str | None = None,
                  ground_truth: str | None = None, own: Mapping[str, str] | None = None) -> str | None:
    """The warning about a side file of ``role`` (a key of :data:`SIDE_WORDS`) whose ``ids`` (in file order, each
    once: a side file's keys) are matched against the ground truth's ``known`` ids (see the module docstring), or
    None when nothing is wrong.

    ``label``: the file's name (None: a mapping given in Python); ``ground_truth``: its name, when known. One hash
    table of the ground truth's distinct ids, probed with the file's. ``own`` (a domain mapping only): the ground
    truth's own domains (query id -> domain, from its domain column); when it has any, the note says how many of
    its queries take their domain from the file, keep their own, and have none (:func:`domain_sources_text`).

    >>> side_ids_text("domains", ["Q1", "Q2"], ["q1", "q2", "q3"], label="dom.csv")[:75]
    "the domain mapping names none of the ground truth's 3 queries (dom.csv: its"
    >>> side_ids_text("queries", ["q1", "q2", "q3", "x"], ["q1", "q2", "q3"]) is None  # every query, and more
    True
    """
    words = SIDE_WORDS[role]
    ids, known = _text_ids(ids, distinct=False), _text_ids(known, distinct=True)
    if not len(ids) or not len(known):
        return None
    if role == "domains" and own:
        return domain_sources_text(ids, known, own, label=label, ground_truth=ground_truth)
    at = pd.Index(known).get_indexer(ids)  # where each of the file's ids is among the ground truth's, or -1
    found = at >= 0
    covered = np.zeros(len(known), dtype=bool)
    covered[at[found]] = True
    matched, n, n_known = int(found.sum()), len(ids), len(known)
    gt = f" {ground_truth!r}" if ground_truth else ""
    its = f"{label}: its" if label else "its"
    n_ids = _plural(n, words["id"], words["id"] + "s")
    if not matched:
        return (f"{words['the']} {words['names']} none of the ground truth's "
                f"{_plural(n_known, words['item'], words['items'])} ({its} {n_ids} look{'s' if n == 1 else ''} "
                f"like {_some(ids)}; those of the ground truth{gt} like {_some(known)}): {words['none']}; the wrong "
                "file, or ids written another way?")
    lacking = n_known - int(covered.sum())
    if not lacking:
        return None
    unknown = n - matched
    theirs = (f"; of its {n_ids}, {matched:,} match and {unknown:,} {'is' if unknown == 1 else 'are'} not the "
              f"ground truth's (e.g. {_some(ids[~found])})" if unknown else f"; its {n_ids} all match")
    return (f"{label or words['the']}: {lacking:,} of the {_plural(n_known, words['item'], words['items'])} of the "
            f"ground truth{gt} {'has' if lacking == 1 else 'have'} no {words['thing']} in it (e.g. "
            f"{_some(known[~covered])}): {words['without']}{theirs}")


def domain_sources_text(ids: Any, known: Any, own: Mapping[str, str], *, label: str | None = None,
                        ground_truth: str | None = None) -> str:
    """The note about a domain mapping (its query ``ids``) stored with a ground truth that has domains of its own
    (``own``: query id -> domain): how many of the ground truth's ``known`` queries (distinct) take their domain
    from the mapping (it overrides their own), how many keep the ground truth's own domain (the mapping does not
    list them), and how many have neither (the Domains page's group ``(none)``), with a few ids of the last two.

    >>> domain_sources_text(["q1"], ["q1", "q2", "q3"], {"q1": "a", "q2": "b"}, label="dom.csv")[:65]
    'dom.csv: of the 3 queries of the ground truth, 1 takes its domain'
    """
    ids, known = _text_ids(ids, distinct=True), _text_ids(known, distinct=True)
    listed = pd.Index(ids).get_indexer(known) >= 0
    has_own = np.fromiter((bool(own.get(q)) for q in known), dtype=bool, count=len(known))
    kept, neither = ~listed & has_own, ~listed & ~has_own
    gt = f" {ground_truth!r}" if ground_truth else ""
    n_map, n_kept, n_none = int(listed.sum()), int(kept.sum()), int(neither.sum())
    said = [f"{n_map:,} take{'s its' if n_map == 1 else ' their'} domain from the mapping (in place of the ground "
            "truth's own domain column)"]
    if n_kept:
        said.append(f"{n_kept:,} keep{'s its' if n_kept == 1 else ' their'} own domain (not in the mapping; e.g. "
                    f"{_some(known[kept])})")
    if n_none:
        without = SIDE_WORDS["domains"]["without"]
        said.append(f"{n_none:,} {'has' if n_none == 1 else 'have'} neither (e.g. {_some(known[neither])}): "
                    + (without.replace("they form", "it forms") if n_none == 1 else without))
    text = (f"{label or 'the domain mapping'}: of the {_plural(len(known), 'query', 'queries')} of the ground "
            f"truth{gt}, " + (", ".join(said[:-1]) + " and " + said[-1] if len(said) > 1 else said[0]))
    if not n_map:
        text += "; the mapping names none of them: the wrong file, or ids written another way?"
    else:
        unknown = ids[pd.Index(known).get_indexer(ids) < 0]
        if len(unknown):
            text += (f"; of its {_plural(len(ids), 'query id', 'query ids')}, {len(unknown):,} "
                     f"{'is' if len(unknown) == 1 else 'are'} not the ground truth's (e.g. {_some(unknown)})")
    return text


def own_domains(qrels: Qrels) -> dict[str, str]:
    """The ground truth's own domains (its domain column): query id -> domain, queries without one left out."""
    if qrels.domains is None:
        return {}
    return {str(q): str(d) for q, d in zip(qrels.query_ids.tolist(), qrels.domains.tolist(), strict=True) if d}


def label_domains(qrels: Qrels, domains: Mapping[str, str], *, label: str | None = None,
                  stacklevel: int = 2) -> Qrels:
    """``qrels`` with the domains of a domain mapping (its file's name ``label``): the mapping gives its queries their
    domain, overriding the ground truth's own (its domain column); a query it does not list keeps its own domain;
    a query with neither has none (the Domains page's group ``(none)``). A mapping naming none of the queries of a
    ground truth without domains of its own is said (:func:`check_domain_ids`)."""
    own = own_domains(qrels)
    check_domain_ids(qrels, domains, label=label, stacklevel=stacklevel + 1)
    return qrels.with_domains({**own, **domains} if own else domains)


def check_domain_ids(qrels: Qrels, domains: Mapping[str, str], *, label: str | None = None,
                     stacklevel: int = 2) -> None:
    """Warn when a domain mapping (its file's name ``label``) names none of the evaluated ground truth's queries
    (then no query has a domain; :data:`NO_DOMAIN_MATCH`): the words :func:`warn_side_ids` gave when it was stored,
    unless a sample or an aspect evaluates other queries. One naming some of them is said when it is stored only;
    so is one whose ground truth has domains of its own (its queries keep them, :func:`label_domains`)."""
    if not qrels.n_queries or any(str(q) in domains for q in qrels.query_ids) or own_domains(qrels):
        return
    source = qrels.source if qrels.source and not str(qrels.source).startswith("<") else None  # (not '<bytes>')
    warn(side_ids_text("domains", list(domains), qrels.query_ids, label=label, ground_truth=source),
         stacklevel=stacklevel + 1)


def _known_ids(ws: Any, role: str) -> tuple[np.ndarray, str, dict[str, str]] | None:
    """The active ground truth's ids a side file of ``role`` is matched against, its name and (a domain mapping)
    its own domains (:func:`own_domains`, every aspect's); None without a ground truth, or when it cannot be read
    (a damaged artifact: evaluating says so)."""
    gt = ws.ground_truth_record()
    if gt is None:
        return None
    try:
        if gt.kind == "reference":
            return np.asarray(ws.reference_ids(), dtype=object), gt.name, {}
        parts = [ws.read_qrels(p, label=gt.name) for p in gt.parts]
    except EvalcoreError:
        return None
    ids = [q.doc_ids if role == "metadata" else q.query_ids for q in parts]
    own: dict[str, str] = {}
    for q in parts if role == "domains" else ():
        own = {**own_domains(q), **own}  # (a query in two aspects: the first one's domain)
    return (ids[0] if len(ids) == 1 else np.concatenate(ids)), gt.name, own


def warn_side_ids(ws: Any, role: str, ids: Any, *, label: str | None, stacklevel: int = 2) -> None:
    """The warning of :func:`side_ids_text` about a side file of ``role`` just read (its ``ids``), against the
    workspace's active ground truth (nothing without one). ``stacklevel`` as :func:`evalcore.errors.warn`'s,
    counted from the caller of this function."""
    known = _known_ids(ws, role)
    if known is None:
        return
    text = side_ids_text(role, ids, known[0], label=label, ground_truth=known[1], own=known[2])
    if text is not None:
        warn(text, stacklevel=stacklevel + 1)


def warn_stored_side_ids(ws: Any, *, stacklevel: int = 2) -> None:
    """After the active ground truth changed: :func:`warn_side_ids` of the stored domain mapping and query texts
    (not of the metadata, see the module docstring)."""
    for role, read in (("domains", ws.domains), ("queries", ws.query_texts)):
        try:
            stored = read()
        except EvalcoreError:  # (a damaged side file: reading it for the page says so)
            continue
        if stored is not None:
            warn_side_ids(ws, role, list(stored), label=ws.side_files().get(role, {}).get("name"),
                          stacklevel=stacklevel + 1)

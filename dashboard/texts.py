"""Texts for reading: document titles and texts (the metadata file), query texts (a queries file)."""

from __future__ import annotations

import pandas as pd

from dashboard.state import Context, memo


def _meta_key(ctx: Context) -> str:
    mb = ctx.ws.metadata_blob
    return mb.sha256 if mb is not None else f"demo{ctx.ws.demo_seed}"


def titles(ctx: Context) -> dict[str, str]:
    """Document id -> title from the metadata (empty without metadata), built once per metadata file."""
    if ctx.metadata is None or not len(ctx.metadata):
        return {}
    m = ctx.metadata
    return memo("titles:" + _meta_key(ctx), lambda: dict(zip(m["doc_id"].astype(str), m["title"].astype(str),
                                                             strict=True)))


def document(ctx: Context, doc_id: str) -> tuple[str, str] | None:
    """(title, text) of a document from the metadata, or None."""
    if ctx.metadata is None or not len(ctx.metadata):
        return None
    m = ctx.metadata
    idx = memo("metaidx:" + _meta_key(ctx), lambda: pd.Index(m["doc_id"].astype(str)))
    pos = idx.get_indexer([str(doc_id)])[0]
    if pos < 0:
        return None
    row = m.iloc[int(pos)]
    return str(row["title"]), str(row["text"])


def query_text(ctx: Context, query_id: str) -> tuple[str, str] | None:
    """What the query says: (source, text) from the queries file, else the item's own metadata (a query that
    is an item, item-to-item), else None."""
    if ctx.query_texts is not None and str(query_id) in ctx.query_texts:
        return "query text", ctx.query_texts[str(query_id)]
    doc = document(ctx, query_id)
    if doc is not None:
        return "the query item", f"{doc[0]}\n{doc[1]}".strip()
    return None

"""A BEIR corpus.jsonl given as the query texts: read, and said once on the Data page with how many texts."""

from __future__ import annotations

import json

from test_app import unescape
from test_app_views import start, two_query_workspace


def test_a_corpus_given_as_the_query_texts_is_loaded_and_said_once():
    at = start(two_query_workspace(), "data")
    docs = [{"_id": q, "title": f"Title of {q}", "text": f"body of {q}"} for q in ("q1", "q2", "q3")]
    data = "\n".join(json.dumps(d) for d in docs).encode()
    at.file_uploader(key="up_queries").set_value(("corpus.jsonl", data, "application/json")).run()
    assert not at.exception and not at.error
    assert at.session_state["ws"].queries_blob.name == "corpus.jsonl"  # loaded all the same
    said = [unescape(w.value) for w in at.warning if "like a corpus" in w.value]
    assert len(said) == 1 and "read 3 texts from the field 'text'" in said[0]
    at.run()  # said once: not again on the next run, which shows what was read
    assert not any("like a corpus" in w.value for w in at.warning)
    assert any(c.value == "3 query texts" for c in at.caption)

"""Polish of the views found in a browser walkthrough (the Queries drill-down, Compare's Tukey HSD table)."""

from __future__ import annotations

import json

import test_app as T


def _shown_columns(element) -> list[tuple[str, str]]:
    """(column, the header the browser shows) of a dataframe element: its column config's label, else its name."""
    config = json.loads(element.proto.columns or "{}")
    return [(str(c), config.get(str(c), {}).get("label", str(c))) for c in element.value.columns]


def test_the_drilldown_ground_truth_table_has_no_unlabelled_counter_column():
    """Its first column had no header and read g1, g2, ... (a row counter: nothing else on the page names g1)."""
    at = T.goto(T.start(), "queries")
    truth = next(d for d in at.dataframe if any(str(c).startswith("rank in ") for c in d.value.columns))
    assert all(header.strip() for _, header in _shown_columns(truth)), _shown_columns(truth)
    for column in truth.value.columns:
        values = truth.value[column].astype(str).tolist()
        assert values[:2] != ["g1", "g2"], column

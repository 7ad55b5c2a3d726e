"""Polish of the views found in a browser walkthrough (the Queries drill-down, the p-value columns of every table)."""

from __future__ import annotations

import io
import json

import pandas as pd
import pyarrow as pa
import test_app as T

from dashboard.drilldown import format_p_value


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


def shown_text(element) -> pd.DataFrame | None:
    """The text a ``pandas.Styler`` table shows in its cells (its display values), None for a plain frame."""
    raw = element.proto.arrow_data.styler.display_values
    return pa.ipc.open_stream(io.BytesIO(raw)).read_all().to_pandas() if raw else None


def assert_p_values_are_numbers_read_as_p_values(element, columns) -> None:
    """Each of ``columns`` holds numbers (right-aligned, sorted by value) in a number column without a format,
    whose cells read as p-values (``0.387``, ``<0.001``, ``1``, ``–`` when not tested)."""
    config = json.loads(element.proto.columns or "{}")
    assert shown_text(element) is not None
    text = T.shown(element)  # (a missing value: the table's placeholder, which the browser draws instead)
    for col in columns:
        p = element.value[col]
        assert pd.api.types.is_float_dtype(p.dtype), (col, p.dtype, p.tolist()[:3])
        assert config[col]["type_config"]["type"] == "number" and not config[col]["type_config"].get("format"), \
            (col, config[col])
        assert text[col].tolist() == [format_p_value(v) for v in p], (col, text[col].tolist(), p.tolist())


def test_every_p_value_column_is_a_number_that_reads_as_a_p_value():
    """Compare's table against the baseline, the Versions page's tests and the Domains page's significance showed
    their p-values as text (left-aligned, '1' and '<0.001' sorted as words); like the Tukey HSD table's, they are
    numbers now and still read 0.387 / <0.001 / 1."""
    from test_app_versions import fixture

    at = T.goto(T.start(), "compare")
    table = next(d for d in at.dataframe if {"run − baseline", "p adjusted"} <= set(d.value.columns))
    assert_p_values_are_numbers_read_as_p_values(table, ["p adjusted", "p-value"])
    assert "<0.001" in T.shown(table)["p adjusted"].tolist()
    T.goto(at, "domains")
    table = next(d for d in at.dataframe if {"p_value", "p_adjusted"} <= set(d.value.columns))
    assert_p_values_are_numbers_read_as_p_values(table, ["p_value", "p_adjusted"])
    assert "–" in T.shown(table)["p_adjusted"].tolist()  # a domain too small to test (drawn "None" before)
    at = T.goto(T.start(fixture()[0]), "versions")
    at.selectbox(key="w_versions_sel_version_model").select("encoder").run()
    tables = [d for d in at.dataframe if {"version", "against", "p adjusted"} <= set(d.value.columns)]
    assert len(tables) == 2
    for table in tables:
        assert_p_values_are_numbers_read_as_p_values(table, ["p adjusted", "p-value"])


def test_the_tukey_hsd_p_values_are_numbers_that_read_as_p_values():
    """The p-value column was text ('1' sat left of the right-aligned numbers and '<0.001' sorted after '0.9'):
    it is numeric now (aligned and sorted as numbers), its cells still read 0.387 / <0.001 / 1."""
    at = T.goto(T.start(), "compare")
    table = next(d for d in at.dataframe if {"q", "p-value"} <= set(d.value.columns))
    p = table.value["p-value"]
    assert pd.api.types.is_float_dtype(p.dtype), p.dtype
    config = json.loads(table.proto.columns)["p-value"]
    assert config["type_config"]["type"] == "number" and not config["type_config"].get("format"), config
    text = shown_text(table)
    assert text is not None
    assert text["p-value"].tolist() == [format_p_value(v) for v in p], (text["p-value"].tolist(), p.tolist())
    assert "<0.001" in text["p-value"].tolist()  # the demo's models differ clearly
    for col in ("q", "95% CI low"):  # the other numbers keep the table's format
        assert json.loads(table.proto.columns)[col]["type_config"]["format"] == "%.4f"


def _number_column(element, col: str, fmt: str | None) -> pd.Series:
    """``col`` of a table element as the browser gets it: numbers (right-aligned, sorted by value) in a number column
    of format ``fmt`` (None: an integer column without format, read ``37``), its gaps drawn as ``–``."""
    config = json.loads(element.proto.columns or "{}").get(col, {}).get("type_config", {})
    arrow = pa.ipc.open_stream(io.BytesIO(element.proto.arrow_data.data)).read_all().schema.field(col).type
    assert (pa.types.is_floating(arrow) if fmt else pa.types.is_integer(arrow)), (col, arrow)
    assert config.get("format") == fmt and config.get("type", "number") == "number", (col, config)
    assert element.proto.placeholder == "–"
    return T.shown(element)[col]


def test_number_columns_with_gaps_stay_numbers():
    """A number column with a missing value (an untested domain's CI, a run without that query, an unjudged grade) was
    text with '–' in the gaps: left-aligned beside the numbers, sorted as words ('10' before '9'). It is a number column
    now: 4 decimals (or the page's own format), whole numbers as integers, '–' (the placeholder) in the gaps."""
    from streamlit.testing.v1 import AppTest
    from test_app_views import trec

    from evalcore import workspace as W

    at = T.goto(T.start(), "domains")
    table = next(d for d in at.dataframe if {"ci_low", "p_adjusted"} <= set(d.value.columns))
    untested = table.value["note"].astype(str) != ""
    assert untested.any() and not untested.all()
    for col in ("ci_low", "ci_high"):
        cells = _number_column(table, col, "%.4f")
        assert (cells[untested] == "–").all() and table.value[col][~untested].notna().all(), cells.tolist()

    qrels = trec(["q1 0 d1 1", "q2 0 d1 1", "q3 0 d9 1"])  # first_rel_rank: none where no relevant document is found
    ws = W.set_ground_truth(W.Snapshot(settings=W.Settings(k=(10,), metrics=("ndcg", "first_rel_rank"))),
                            W.Blob.of("qrels.txt", qrels))
    for name, lines in (("A", ["q1 Q0 d1 1 2.0 A", "q2 Q0 d5 1 2.0 A", "q3 Q0 d9 1 1.0 A"]),
                        ("E", ["q1 Q0 d4 1 3.0 E", "q1 Q0 d1 2 2.0 E", "q2 Q0 d5 1 2.0 E"])):  # E: no q3
        ws, _ = W.add_ranked_run(ws, W.Blob.of(f"{name}.trec", trec(lines)))
    at = T.goto(T.start(ws), "queries")
    at.selectbox(key="w_queries_sel_metric").select("first_rel_rank").run()
    table = next(d for d in at.dataframe if {"query_id", "A", "E"} <= set(d.value.columns))
    by_query = lambda col: dict(zip(table.value["query_id"], _number_column(table, col, None), strict=True))  # noqa: E731
    assert by_query("A") == {"q1": 1, "q2": "–", "q3": 1} and by_query("E") == {"q1": 2, "q2": "–", "q3": "–"}

    def grades():
        import numpy as np
        import pandas as pd

        from dashboard import tables, ui

        ui.dataframe(tables.display_table(pd.DataFrame({"doc": ["d1", "d2", None], "grade": [37.0, np.nan, 9.0],
                                                        "score": [0.5, np.nan, 0.25]})), key="grades")

    at = AppTest.from_function(grades).run()
    table = at.dataframe[0]
    assert _number_column(table, "grade", None).tolist() == [37, "–", 9]
    assert _number_column(table, "score", "%.4f").tolist() == [0.5, "–", 0.25]
    assert table.value["doc"].tolist() == ["d1", "d2", "–"]  # text stays text

"""TREC fields are separated as trec_eval separates them, on the fast path (pyarrow) and the line-by-line path alike.

trec_eval splits a line on ASCII white space (C's ``isspace``: space, tab, and CR, VT, FF) and nothing else, so a
non-breaking space (U+00A0) or any other Unicode space is part of an id; a control character that Python's
``str.split()`` also splits on (``\\x1c``-``\\x1f``, U+0085, U+2028, U+2029) is part of the id too, which the id
check then refuses. Before, the line-by-line path split on every Unicode white space: the same records read as
``d\\xa01`` on the fast path and as ``d`` (the rest dropped as a trailing column) on the other, and an id holding
U+2028 was refused on one path and silently cut on the other; the run tag was cut on both.

What decides the path is the content: the fast path takes a file whose lines all hold exactly the layout's number
of fields (and whose numbers pyarrow parses); an extra trailing field on one line (legal: it is ignored) sends
the file to the line-by-line path. Each case is read from both files, and each file is checked to take its path.
"""

from __future__ import annotations

import pytest

from evalcore.errors import InputFormatError
from evalcore.io.trec import _fast_table, read_trec_qrels, read_trec_run

#: (character, whether an id may hold it): Unicode white space trec_eval keeps inside a field, and control
#: characters Python's str.split() splits on, which the readers refuse in an id.
CHARACTERS = [("\u00a0", True), ("\u2007", True), ("\u3000", True), ("\u205f", True),
              ("\x1c", False), ("\x1f", False), ("\x85", False), ("\u2028", False), ("\u2029", False)]


def _qrels_lines(c: str) -> list[str]:
    return ["q1 0 d1 1", f"q1 0 d{c}2 2", f"q{c}2 0 d3 1", "q3 0 d4 0"]


def _run_lines(c: str) -> list[str]:
    return [f"q1 Q0 d1 1 2.5 t{c}x", f"q1 Q0 d{c}2 2 1.5 t{c}x", f"q{c}2 Q0 d3 1 0.5 t{c}x"]


def _both_paths(lines: list[str]) -> tuple[bytes, bytes]:
    """The records as a fast-path file, and as a file with an extra (ignored) field on its last line."""
    fast = "".join(f"{ln}\n" for ln in lines).encode("utf-8")
    slow = "".join(f"{ln}\n" for ln in lines[:-1]).encode("utf-8") + f"{lines[-1]} extra\n".encode()
    return fast, slow


def _outcome(read, data: bytes) -> tuple:
    try:
        got = read(data, label="in.txt")
    except InputFormatError as e:
        return ("refused", type(e).__name__, str(e))
    return ("read", got.to_frame().values.tolist(), getattr(got, "name", None))


@pytest.mark.parametrize("char,legal", CHARACTERS, ids=[f"U+{ord(c):04X}" for c, _ in CHARACTERS])
@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_a_file_reads_the_same_on_either_path(kind, char, legal) -> None:
    read, lines, ncols, usecols, types = (
        (read_trec_qrels, _qrels_lines(char), 4, [0, 2, 3], {0: "str", 2: "str", 3: "int"}) if kind == "qrels" else
        (read_trec_run, _run_lines(char), 6, [0, 2, 4], {0: "str", 2: "str", 4: "float", 5: "str"}))
    fast, slow = _both_paths(lines)
    assert _fast_table(fast, ncols, usecols, types) is not None  # (each file takes the path it is meant to)
    assert _fast_table(slow, ncols, usecols, types) is None
    on_fast, on_slow = _outcome(read, fast), _outcome(read, slow)
    assert on_fast == on_slow
    if legal:  # the character is part of the id, as trec_eval reads it
        assert on_fast[0] == "read"
        rows = on_fast[1]
        assert f"d{char}2" in [r[1] for r in rows] and f"q{char}2" in [r[0] for r in rows]
        if kind == "run":
            assert on_fast[2] == f"t{char}x"
    else:  # the id check refuses it (query ids are checked first), naming the id's line
        assert on_fast[0] == "refused"
        assert on_fast[2].startswith(f"in.txt, line 3: query id {f'q{char}2'!r} holds a control character"), \
            on_fast[2]


def test_ascii_white_space_still_separates_fields_on_both_paths() -> None:
    """Space, tab, CR, VT and FF separate fields (C's isspace, as trec_eval); CRLF line ends read as before."""
    for sep in (" ", "\t", "\r", "\x0b", "\x0c", " \t "):
        lines = [f"q1{sep}0{sep}d1{sep}1", f"q1{sep}0{sep}d2{sep}2"]
        fast, slow = _both_paths(lines)
        assert read_trec_qrels(fast).to_frame().values.tolist() == [["q1", "d1", 1], ["q1", "d2", 2]], repr(sep)
        assert read_trec_qrels(slow).to_frame().values.tolist() == [["q1", "d1", 1], ["q1", "d2", 2]], repr(sep)

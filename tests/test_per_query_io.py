"""Reading back per_query.csv (``compare --per-query``): the very values, and every fault with its file and line."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from evalcore.data import Qrels, Run
from evalcore.errors import EmptyInputError, InputFormatError, MissingColumnError
from evalcore.evaluate import evaluate
from evalcore.io.per_query import read_per_query_csv
from evalcore.report import write_per_query_csv

HEAD = '"run","query_id","domain","metric","k","value"\n'


def tie_heavy_evaluation(seed: int):
    """Two tie-heavy runs; ids pandas would read as missing ("NA", "null"); "lost" has its relevant document
    never retrieved (first_rel_rank NaN: an empty field in the file)."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in range(30)] + ["NA", "null"]
    qq = [q for q in qids for _ in range(3)] + ["lost"]
    dd = [f"d{j}" for _ in qids for j in range(3)] + ["never"]
    gg = rng.integers(0, 3, 3 * len(qids)).tolist() + [2]
    qrels = Qrels.from_records(qq, dd, gg)
    qids = [*qids, "lost"]
    runs = [Run.from_records([q for q in qids for _ in range(5)], [f"d{j}" for _ in qids for j in range(5)],
                             rng.integers(0, 3, 5 * len(qids)).astype(float).tolist(), name=f"r{i}") for i in range(2)]
    return evaluate(qrels, runs, metrics=["ndcg", "first_rel_rank", "map"], k=[3, 10])


@pytest.mark.parametrize("seed", range(3))
def test_the_file_gives_back_the_very_table(tmp_path, seed):
    ev = tie_heavy_evaluation(seed)
    path = tmp_path / "per_query.csv"
    write_per_query_csv(ev, path)
    got = read_per_query_csv(path)
    want = ev.table
    assert got["run"].tolist() == want["run"].astype(str).tolist()
    assert got["query_id"].tolist() == want["query_id"].astype(str).tolist()  # "NA", "null" kept as ids
    assert got["metric"].tolist() == want["metric"].astype(str).tolist()
    assert got["k"].tolist() == want["k"].astype(int).tolist()
    assert np.array_equal(got["value"].to_numpy(), want["value"].to_numpy(), equal_nan=True)  # bit for bit
    assert np.isnan(got["value"]).any()  # first_rel_rank's empty fields read back as NaN


@pytest.mark.parametrize("body, error, message", [
    ("", EmptyInputError, r"x\.csv: file is empty"),
    (HEAD, EmptyInputError, r"x\.csv: no rows below the header"),
    ('"run","query_id","metric","value"\n"A","q1","ndcg",1\n', MissingColumnError, r"x\.csv, line 1: .*lacks \['k'\]"),
    (HEAD + '"A","q1","","ndcg",10,1\n"A","q2","","ndcg",ten,1\n', InputFormatError,
     r"x\.csv, line 3: k 'ten' is not an integer cutoff"),
    (HEAD + '"A","q1","","ndcg",10,1\n"A","q2","","ndcg",10,abc\n', InputFormatError,
     r"x\.csv, line 3: value 'abc' is not a number"),
    (HEAD + '"A","q1","","ndcg",10,1\n"A","q2","","ndcg",10\n', InputFormatError,
     r"x\.csv, line 3: no value for run 'A', query 'q2', ndcg@10"),
    (HEAD + '"A","q1","","ndcg",10,1\n"A","q2","","ndcg"\n', InputFormatError, r"x\.csv, line 3: k "),
    (HEAD + '"A","q1","","ndcg",10,inf\n', InputFormatError, r"x\.csv, line 2: value inf is not finite"),
    (HEAD + '"","q1","","ndcg",10,1\n', InputFormatError, r"x\.csv, line 2: empty run"),
])
def test_faults_name_the_file_and_line(body, error, message):
    with pytest.raises(error, match=message):
        read_per_query_csv(body.encode(), name="x.csv")


def test_compare_per_query_says_what_is_wrong_without_a_traceback(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(HEAD + '"A","q1","","ndcg",10,1\n"B","q1","","ndcg",ten,1\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "evalcore", "compare", "--per-query", str(bad)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"error: {bad}, line 3: k 'ten' is not an integer cutoff"


def test_compare_per_query_reads_what_evaluate_wrote(tmp_path):
    ev = tie_heavy_evaluation(7)
    write_per_query_csv(ev, tmp_path / "per_query.csv")
    done = subprocess.run([sys.executable, "-m", "evalcore", "compare", "--per-query", str(tmp_path / "per_query.csv"),
                           "--metric", "ndcg@10"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "r0" in done.stdout and "r1" in done.stdout
    assert isinstance(read_per_query_csv(tmp_path / "per_query.csv"), pd.DataFrame)

"""The examples in evalcore's docstrings and in the README run and give what they show.

README: every ``python -m evalcore ...`` line of its ``bash`` blocks is run in README order (one test, in a
scratch folder holding small files under the names the README uses; ``[optional flags]`` given, the first of
``a|b`` alternatives taken; a ``--dask`` command is only parsed: the Dask tests run the cluster), and every
``python`` block runs with the few names a training script would define (:data:`PRELUDE`). The set-up
section holds the two commands of a fresh machine, and ``.ci/run`` runs the test one verbatim.
"""

from __future__ import annotations

import doctest
import importlib
import json
import pkgutil
import re
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest

import evalcore

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(evalcore.__path__, "evalcore.") if not m.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_engine_has_examples():
    attempted = sum(doctest.testmod(importlib.import_module(n)).attempted for n in MODULES)
    assert attempted >= 10


# ---------------------------------------------------------------------------------------------- README


def blocks(lang: str, text: str = README) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


#: words of the README's commands that stand for something the reader chooses
PLACEHOLDERS = {"NAME": "bm25"}


def readme_commands() -> list[list[str]]:
    """The arguments of every ``python -m evalcore`` command of the README's bash blocks, in order."""
    out = []
    for block in blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:3] != ["python", "-m", "evalcore"]:
                continue
            args = []
            for w in words[3:]:
                w = w.strip("[]")  # an optional flag: given
                w = w.split("|")[0] if "|" in w else w  # t|wilcoxon|permutation: the first
                args.append(PLACEHOLDERS.get(w, w))
            out.append(args)
    return out


def _write_trec(path: Path, rng, n_q: int, n_docs: int, depth: int, tag: str) -> None:
    lines = []
    for q in range(n_q):
        docs = rng.choice(n_docs, depth, replace=False)
        scores = np.sort(rng.random(depth))[::-1]
        lines += [f"q{q} Q0 d{d} {r + 1} {s:.6f} {tag}" for r, (d, s) in enumerate(zip(docs, scores, strict=True))]
    path.write_text("\n".join(lines) + "\n")


def _save_npy(path: Path, vectors: np.ndarray, ids: list[str]) -> None:
    np.save(path, vectors)
    path.with_name(path.stem + "_ids.txt").write_text("\n".join(ids) + "\n")


def readme_files(folder: Path) -> None:
    """Small files under every name the README's commands and Python blocks read."""
    import gzip

    rng = np.random.default_rng(0)
    n_q, n_docs, dim = 12, 60, 8
    (folder / "qrels.txt").write_text("".join(
        f"q{q} 0 d{d} {rng.integers(0, 3)}\n" for q in range(n_q) for d in rng.choice(n_docs, 6, replace=False)))
    for name in ("bm25", "dense", "a", "b", "c", "base", "tuned", "ada"):
        _write_trec(folder / f"{name}.trec", rng, n_q, n_docs, 30, name)
    for name in ("qrels.txt", "bm25.trec"):
        (folder / f"{name}.gz").write_bytes(gzip.compress((folder / name).read_bytes()))
    # seed 003: graded judgments with a domain per query (the last two queries without one), and a domain mapping
    (folder / "graded.json").write_text(json.dumps([
        {"query": f"q{q}", "relevance_judgments": {f"d{d}": int(g) for d, g in zip(
            rng.choice(n_docs, 5, replace=False), rng.integers(1, 4, 5), strict=True)},
         **({"domain": ("legal", "medical")[q % 2]} if q < n_q - 2 else {})} for q in range(n_q)]))
    (folder / "domains.csv").write_text("query_id,domain\nq0,finance\nq11,finance\n")
    doc_ids, query_ids = [f"d{i}" for i in range(n_docs)], [f"q{i}" for i in range(n_q)]
    docs, queries = rng.standard_normal((n_docs, dim), dtype=np.float32), rng.standard_normal((n_q, dim), dtype=np.float32)
    for stem in ("corpus", "docs"):
        _save_npy(folder / f"{stem}.npy", docs, doc_ids)
    for stem in ("q", "queries"):
        _save_npy(folder / f"{stem}.npy", queries, query_ids)
        np.savez(folder / f"{stem}.npz", ids=np.array(query_ids), embeddings=queries)
    np.savez(folder / "corpus.npz", ids=np.array(doc_ids), embeddings=docs)
    (folder / "corpus_shards").mkdir()
    for i, rows in enumerate(np.array_split(np.arange(n_docs), 3)):
        _save_npy(folder / "corpus_shards" / f"part-{i}.npy", docs[rows], [doc_ids[r] for r in rows])
    # seed 001: a movies file with three aspects, one embedding space per aspect
    shutil.copy(ROOT / "tests" / "fixtures" / "seed001_movies.json", folder / "movies.json")
    movies = [m["movie_id"] for m in json.loads((folder / "movies.json").read_text())]
    for name in ("anchor", "content", "vibe"):
        np.savez(folder / f"{name}.npz", ids=np.array(movies), embeddings=rng.standard_normal((len(movies), 4)))
    # seed 000: a reference model and two candidates over the same items (more than --n-samples 500)
    items = [f"i{i}" for i in range(520)]
    for name, d in (("ada", 16), ("base_st", 8), ("finetuned", 8)):
        _save_npy(folder / f"{name}.npy", rng.standard_normal((len(items), d), dtype=np.float32), items)
    for name in ("base_st", "finetuned"):  # (their rankings as TREC runs of the items, e.g. written by `topk`)
        (folder / f"{name}.trec").write_text("".join(
            f"{q} Q0 {items[d]} {r + 1} {30 - r} {name}\n" for q in items
            for r, d in enumerate(rng.choice(len(items), 30, replace=False))))


def _out_names(args: list[str]) -> list[str]:
    """Run names an `evaluate` command writes ``{run}_results.csv`` for."""
    return [args[i + 1].split("=")[0] for i, w in enumerate(args) if w in ("--run", "--emb", "--fuse")]


def test_readme_commands_run_as_written(tmp_path, monkeypatch, capsys):
    from evalcore.cli import main
    from evalcore.cli.main import build_parser

    readme_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    commands = readme_commands()
    assert len(commands) >= 20
    for args in commands:
        if "--dask" in args:  # a cluster: only the spelling of the command is checked here
            build_parser().parse_args(args)
            continue
        code = main(args)
        out, err = capsys.readouterr()
        assert code == 0, (args, err)
        assert "error" not in err, (args, err)
        if args[0] == "evaluate":  # "prints mean ± std per run, metric and k"
            assert "±" in out, (args, out)
        if args[0] == "evaluate" and "--out" in args:  # "writes DIR/per_query.csv, DIR/report.json, DIR/{run}_results.csv"
            out = tmp_path / args[args.index("--out") + 1]
            for name in ["per_query.csv", "report.json", *(f"{n}_results.csv" for n in _out_names(args))]:
                assert (out / name).is_file(), (args, name)
        elif "--out" in args:
            assert (tmp_path / args[args.index("--out") + 1]).exists(), args


#: what a training script has that the README's Python blocks use without defining it
PRELUDE = '''
import numpy as _np
_rng = _np.random.default_rng(0)
doc_ids = [f"d{i}" for i in range(60)]
query_ids = [f"q{i}" for i in range(12)]
docs, queries, epochs = [f"text of {d}" for d in doc_ids], [f"text of {q}" for q in query_ids], 3

class _Model:  # encode(texts): one vector per text, as a sentence-embedding model
    def encode(self, texts):
        return _rng.standard_normal((len(texts), 8), dtype=_np.float32)

model = _Model()

def train_one_epoch(model):
    pass
'''


def test_readme_python_blocks_run_as_written(tmp_path, monkeypatch):
    from evalcore import Evaluation

    readme_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    python = blocks("python")
    assert python
    for block in python:
        ns: dict = {}
        exec(compile(PRELUDE + block, "README.md", "exec"), ns)
    # the Workspace block's comments
    ws, ev = ns["ws"], ns["ev"]
    assert isinstance(ev, Evaluation) and set(ev.runs) == {"e5-ep3"}
    assert len(ws.evaluations()) == 2  # "also recorded"
    runs = ws.runs()
    assert list(runs.columns[:6]) == ["name", "kind", "model", "version", "step", "tags"]
    assert list(runs["name"]) == ["e5-ep1", "e5-ep2", "e5-ep3"]  # bm25 removed
    assert (tmp_path / "experiments" / "e5" / "catalogue.sqlite").is_file()


def test_the_package_docstring_example_runs(tmp_path, monkeypatch):
    """``help(evalcore)``'s notebook example (a literal block, not a doctest: it reads files) runs as written."""
    import textwrap

    import pandas as pd

    example = textwrap.dedent(re.search(r"::\n\n((?: {4}.*\n)+)", evalcore.__doc__).group(1))
    assert "evaluate(" in example
    readme_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(example, "evalcore/__init__.py", "exec"), ns)
    summary = ns["summarize"](ns["ev"].table)
    assert isinstance(summary, pd.DataFrame) and set(summary["k"]) == {10, 100}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the README names the old module paths too
def test_readme_names_of_the_python_api_exist():
    """Every dotted name ``evalcore.x.y`` the README cites imports (a module, or a name in one)."""
    cited = sorted(set(re.findall(r"`(evalcore(?:\.\w+)+)", README)))
    assert len(cited) >= 10
    for name in cited:
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
            break


def test_readme_set_up_is_two_commands_and_ci_runs_the_test_one():
    section = README.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    commands = [line for block in blocks("bash", section) for line in block.splitlines() if line.strip()]
    assert len(commands) == 2, commands
    dashboard, suite = commands
    assert dashboard.endswith("streamlit run app.py") and suite.endswith("python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert suite in [line.strip() for line in ci]  # the README's test command, verbatim

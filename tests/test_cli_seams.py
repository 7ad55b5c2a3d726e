"""Small seams of the command line's sampling options.

``--sample-seed`` seeds ``--n-samples``' query sample alone; without ``--n-samples`` it did nothing, silently
(``evaluate``, ``compare``, ``fuse --search``, ``agree --qrels``): a user who types it expects an effect, so it is
refused with one line naming both options (``evaluate --workspace`` records it as the stored sample seed: kept).
Its help said the sample could get "intervals or tests" drawn with another seed, wrong for ``fuse`` (the split and
random trials) and ``agree`` (nothing else is drawn). ``fuse`` and ``agree`` imported the private
``_warn_sample_above`` of :mod:`evalcore.cli.inputs`: it is its public ``warn_sample_above`` now.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_same_numbers import files, run_args  # noqa: F401

from evalcore.cli import inputs
from evalcore.cli.main import main

CLI = Path(inputs.__file__).parent


def _command(kind: str, folder: Path) -> list[str]:
    qrels = ["--qrels", str(folder / "qrels.txt")]
    return {"evaluate": ["evaluate", *qrels, *run_args(folder), "--metrics", "ndcg", "--k", "5"],
            "compare": ["compare", *qrels, *run_args(folder), "--metric", "ndcg@5"],
            "fuse": ["fuse", *run_args(folder, ("a", "b")), "--method", "rrf", "--search", "grid", "--step", "0.5",
                     *qrels, "--out", str(folder / "f.trec")],
            "agree": ["agree", *run_args(folder, ("a", "b")), *qrels]}[kind]


@pytest.mark.parametrize("kind", ["evaluate", "compare", "fuse", "agree"])
def test_a_sample_seed_without_a_sample_is_refused_in_one_line(kind, files, capsys):  # noqa: F811
    assert main([*_command(kind, files), "--sample-seed", "7"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "--sample-seed" in err[0] and "--n-samples" in err[0], err
    # with a sample it is what it was
    assert main([*_command(kind, files), "--sample-seed", "7", "--n-samples", "5"]) == 0
    capsys.readouterr()


def test_evaluate_workspace_keeps_a_sample_seed_alone(files, tmp_path):  # noqa: F811
    """With --workspace it is the sample seed recorded in the stored settings (the Data page's sample seed)."""
    from evalcore.workspace import Workspace

    assert main([*_command("evaluate", files), "--sample-seed", "7", "--workspace", str(tmp_path / "ws")]) == 0
    assert Workspace(tmp_path / "ws").settings().seed == 7


def _sample_seed_help(command: str) -> str:
    """The ``--sample-seed`` help of a subcommand, as ``evalcore COMMAND --help`` prints it (``%%`` aside)."""
    import argparse

    from evalcore.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if "--sample-seed" in a.option_strings)
    return action.help


def test_each_commands_sample_seed_help_names_what_its_seed_seeds():
    helps = {c: _sample_seed_help(c) for c in ("evaluate", "compare", "fuse", "agree")}
    assert "trials" in helps["fuse"] and "interval" not in helps["fuse"] and "test" not in helps["fuse"], helps
    assert "interval" not in helps["agree"] and "test" not in helps["agree"], helps
    assert "interval" in helps["evaluate"] and "test" in helps["compare"], helps
    assert all("--n-samples" in h for h in helps.values()), helps


def test_fuse_and_agree_use_only_public_helpers_of_inputs():
    assert "warn_sample_above" in inputs.__all__ and inputs.warn_sample_above.__doc__
    for name in ("fuse.py", "agree.py"):
        tree = ast.parse((CLI / name).read_text())
        private = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "inputs"
                   for a in n.names if a.name.startswith("_")]
        assert not private, (name, private)


def test_warn_sample_above_warns_once_above_the_total():
    from evalcore.errors import collected_warnings

    with collected_warnings() as got:
        inputs.warn_sample_above(3, 3, "queries")
        inputs.warn_sample_above(None, 3, "queries")
    assert got == []
    with collected_warnings() as got:
        inputs.warn_sample_above(4, 3, "queries of the ground truth")
    assert got == ["--n-samples 4 is more than the 3 queries of the ground truth: every one is evaluated"]

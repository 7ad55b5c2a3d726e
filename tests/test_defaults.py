"""Every seed and count of a seeded computation takes its default from :mod:`evalcore.defaults`.

Before, the intervals and tests of the Python API wrote ``seed: int = 0`` in their signatures, the command line
``default=42``, the dashboard its own constants: three literals that had drifted apart. Here the source of the
engine, the dashboard and the pages is read with :mod:`ast` (no signature, command-line flag or page control may
write such a default as a number), and the public functions' signatures and the command line's parsed defaults
are compared with the module's values.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import warnings
from pathlib import Path

import pytest

import evalcore
from evalcore import defaults as DEF
from evalcore.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
#: parameters of a seeded or resampled computation
SEEDED = {"seed", "ci_seed", "n_resamples", "n_pairs", "n_trials", "ci_method", "resampling"}
#: command-line flags of one, and the page controls (``K.start(key, scope, name, default, ...)``) of one
FLAGS = {"--seed", "--n-resamples", "--trials", "--step", "--agreement-pairs", "--ci-method", "--resampling"}
CONTROLS = {"seed", "trials", "step", "fraction", "strategy"}


def _sources() -> list[Path]:
    return [*sorted((ROOT / "evalcore").rglob("*.py")), *sorted((ROOT / "dashboard").rglob("*.py")),
            *sorted((ROOT / "pages").rglob("*.py")), ROOT / "app.py"]


def _literal(node: ast.expr | None) -> bool:
    """A number or text written as such (None is no default: "not given")."""
    return isinstance(node, ast.Constant) and node.value is not None and not isinstance(node.value, bool)


def _hard_coded(path: Path) -> list[str]:
    found = []
    where = path.relative_to(ROOT)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True))
            pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
            name = getattr(node, "name", "lambda")
            found += [f"{where}:{d.lineno} {name}({arg.arg}={ast.unparse(d)})" for arg, d in pairs
                      if arg.arg in SEEDED and _literal(d)]
        elif isinstance(node, ast.ClassDef):  # a dataclass field (Settings.seed)
            found += [f"{where}:{f.lineno} {node.name}.{f.target.id} = {ast.unparse(f.value)}" for f in node.body
                      if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name) and f.target.id in SEEDED
                      and _literal(f.value)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            args = node.args
            if node.func.attr == "add_argument" and args and _literal(args[0]) and args[0].value in FLAGS:
                found += [f"{where}:{k.lineno} {args[0].value} {k.arg}={ast.unparse(k.value)}" for k in node.keywords
                          if k.arg in ("default", "const") and _literal(k.value)
                          and not (args[0].value == "--agreement-pairs" and k.arg == "default" and k.value.value == 0)]
            if node.func.attr == "start" and len(args) >= 4 and _literal(args[2]) and args[2].value in CONTROLS:
                if _literal(args[3]):
                    found.append(f"{where}:{node.lineno} control {args[2].value}={ast.unparse(args[3])}")
        if isinstance(node, ast.Call):
            found += [f"{where}:{k.lineno} {ast.unparse(node.func)}({k.arg}={ast.unparse(k.value)})"
                      for k in node.keywords if k.arg in ("seed", "ci_seed", "n_resamples", "n_pairs", "n_trials")
                      and _literal(k.value)]
    return found


def test_no_signature_flag_or_control_writes_a_seed_or_count_of_its_own():
    found = [f for path in _sources() if path.name != "defaults.py" for f in _hard_coded(path)]
    assert not found, "defaults written as numbers (take them from evalcore.defaults):\n" + "\n".join(found)


def _public_functions():
    """(qualified name, function) of every function and method the evalcore package defines (old module paths
    that only warn and forward are skipped; so are modules needing an optional package, e.g. dask)."""
    seen = set()
    for info in pkgutil.walk_packages(evalcore.__path__, "evalcore."):
        if info.name.endswith("__main__"):  # (importing it runs the command)
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                module = importlib.import_module(info.name)
        except (ImportError, DeprecationWarning):
            continue
        for name, obj in vars(module).items():
            items = [(name, obj)]
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                items += [(f"{name}.{m}", f) for m, f in vars(obj).items() if inspect.isfunction(f)]
                items += [(f"{name}.{m}", f.__func__) for m, f in vars(obj).items() if isinstance(f, classmethod)]
            for qual, fn in items:
                if inspect.isfunction(fn) and fn.__module__ == module.__name__ and id(fn) not in seen:
                    seen.add(id(fn))
                    yield f"{module.__name__}.{qual}", fn


def test_every_engine_signature_takes_the_defaults_modules_values():
    want = {"seed": {DEF.SEED}, "n_resamples": {DEF.MEAN_RESAMPLES, DEF.TEST_RESAMPLES},
            "n_pairs": {DEF.SIMILARITY_PAIRS}, "n_trials": {DEF.FUSION_TRIALS}}
    checked, wrong = 0, []
    for name, fn in _public_functions():
        for p in inspect.signature(fn).parameters.values():
            if p.name not in want or p.default is inspect.Parameter.empty or p.default is None:
                continue
            checked += 1
            allowed = {DEF.DEMO_SEED} if p.name == "seed" and "demo" in name.lower() else want[p.name]
            if p.default not in allowed:
                wrong.append(f"{name}({p.name}={p.default!r})")
    assert checked > 20  # (the walk found the engine: intervals, stats, fusion, sampling, workspace...)
    assert not wrong, wrong


@pytest.mark.parametrize("words, expected", [
    (["evaluate", "--qrels", "q"], {"seed": DEF.SEED, "n_resamples": DEF.MEAN_RESAMPLES, "ci_method": "t"}),
    (["evaluate", "--qrels", "q", "--agreement-pairs"], {"agreement_pairs": DEF.SIMILARITY_PAIRS}),
    (["compare", "--per-query", "x"], {"seed": DEF.SEED, "n_resamples": DEF.TEST_RESAMPLES,
                                       "ci_method": DEF.TEST_CI_METHOD, "resampling": DEF.TEST_RESAMPLING}),
    (["fuse", "--run", "x", "--out", "o"], {"seed": DEF.SEED, "trials": DEF.FUSION_TRIALS, "step": DEF.FUSION_STEP}),
])
def test_the_command_lines_defaults_are_the_modules(words, expected):
    args = vars(build_parser().parse_args(words))
    assert {k: args[k] for k in expected} == expected


def test_the_dashboards_constants_are_the_modules():
    from dashboard import analysis as A
    from dashboard import state as S

    assert (S.CI_SEED, S.N_RESAMPLES, S.MEAN_CI) == (DEF.SEED, DEF.MEAN_RESAMPLES, DEF.MEAN_CI_METHOD)
    assert (S.TEST_RESAMPLES, S.CI_METHOD, S.RESAMPLING) == (DEF.DASHBOARD_TEST_RESAMPLES, DEF.DASHBOARD_CI_METHOD,
                                                             DEF.DASHBOARD_RESAMPLING)
    assert (A.SIMILARITY_PAIRS, A.SIMILARITY_SEED, S.DEMO_SEED) == (DEF.SIMILARITY_PAIRS, DEF.SEED, DEF.DEMO_SEED)

"""The layout keeps its rules: no import circle, no upward import, no module over 600 lines.

Every module of the project (``evalcore/``, ``dashboard/``, ``pages/``, ``app.py``) is read
with :mod:`ast` (the line limit also holds for ``tests/`` and ``benchmarks/``); every import counts — at the top, inside a function, or under
``TYPE_CHECKING`` — because each is a dependency somebody has to understand.

Layers, lowest first; a module may import its own layer or a lower one, never a higher one:

0. ``evalcore.errors``, ``evalcore.defaults``, ``evalcore._lazy``, ``evalcore._columns``, ``evalcore._compat``, ``evalcore._threads``
1. the data model: ``evalcore.data`` (and its input checks, ``evalcore._checks``), ``ranking``, ``measures``,
   ``metrics``
2. ``evalcore.io`` and ``evalcore.retrieval`` (readers, writers, exact top-k)
3. the engine: every other module at the top of ``evalcore/`` (evaluate, aggregate, stats,
   fusion, diversity, combine, report, embedding_runs, ...)
4. ``evalcore.workspace``
5. ``evalcore.cli``
6. ``dashboard``
7. ``pages`` and ``app``

and evalcore never imports Streamlit.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600

LAYER_OF_PREFIX: list[tuple[str, int]] = [
    ("evalcore.errors", 0), ("evalcore.defaults", 0), ("evalcore._lazy", 0), ("evalcore._columns", 0), ("evalcore._compat", 0), ("evalcore._threads", 0),
    ("evalcore.data", 1), ("evalcore._checks", 1), ("evalcore.ranking", 1), ("evalcore.measures", 1), ("evalcore.metrics", 1),
    ("evalcore.io", 2), ("evalcore.retrieval", 2),
    ("evalcore.workspace", 4), ("evalcore.cli", 5), ("evalcore.__main__", 5),
    ("dashboard", 6), ("pages", 7), ("app", 7),
]


def _module_files() -> dict[str, Path]:
    files = {}
    for top in ("evalcore", "dashboard", "pages"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            files[".".join(parts)] = path
    files["app"] = ROOT / "app.py"
    return files


FILES = _module_files()


def layer(module: str) -> int:
    """Layer of a project module (see the module docstring); the engine's top level is 3."""
    for prefix, value in LAYER_OF_PREFIX:
        if module == prefix or module.startswith(prefix + "."):
            return value
    if module == "evalcore":
        return 3  # the package face (its lazy imports are not ``import`` statements)
    if module.startswith("evalcore."):
        return 3
    raise AssertionError(f"no layer for {module}")


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path) -> set[str]:
    """Project modules (and 'streamlit') that ``module`` imports anywhere in its text."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _target(module, path, node)
            # `from pkg import sub` imports the submodule pkg.sub when there is one
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in FILES else target for a in node.names]
        for name in names:
            if name.split(".")[0] == "streamlit":
                out.add("streamlit")
                continue
            while name and name not in FILES:  # `import evalcore.io.trec` -> the module itself
                name = name.rpartition(".")[0]
            if name and name != module:
                out.add(name)
    return out


GRAPH = {m: imports_of(m, p) for m, p in FILES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_module_list_is_read():
    assert {"evalcore.data", "evalcore.io.trec", "evalcore.cli.main", "evalcore.workspace.pipeline",
            "dashboard.state", "pages.overview", "app"} <= set(FILES)
    assert "evalcore.io" in GRAPH["evalcore.cli.inputs"]  # imports are seen at all


def test_no_import_circle():
    assert _cycles(GRAPH) == []


def test_the_circle_finder_finds_circles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_upward_import():
    upward = sorted(
        f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)})"
        for m, targets in GRAPH.items() for t in targets if t != "streamlit" and layer(t) > layer(m)
    )
    assert upward == []


def test_evalcore_never_imports_streamlit_or_the_dashboard():
    bad = sorted(f"{m} -> {t}" for m, targets in GRAPH.items() if m.startswith("evalcore")
                 for t in targets if t == "streamlit" or t.split(".")[0] in ("dashboard", "pages", "app"))
    assert bad == []


EVERY_MODULE = sorted({*FILES.values(), *(ROOT / "tests").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")})


@pytest.mark.parametrize("path", EVERY_MODULE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_over_600_lines(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines"


def test_public_api_of_the_package():
    import evalcore

    assert sorted(evalcore.__all__) == sorted(evalcore._API)
    for name in evalcore.__all__:
        assert getattr(evalcore, name) is not None
    from evalcore.io import load_qrels

    assert evalcore.load_qrels is load_qrels
    import evalcore.evaluate  # noqa: F401  (the submodule of the same name does not shadow the function)

    assert callable(evalcore.evaluate) and evalcore.evaluate.__module__ == "evalcore.evaluate"
    with pytest.raises(AttributeError):
        evalcore.no_such_name  # noqa: B018


def test_old_import_paths_still_work():
    import importlib
    import sys
    import warnings

    from evalcore._compat import MOVED
    from evalcore.io import load_run as new_load_run

    for old, new in MOVED.items():
        sys.modules.pop(old, None)  # so that the alias is found (and warns) again
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(old)
        assert module is importlib.import_module(new)
        assert [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)] == \
            [f"{old} moved to {new}; import it from there"]
    assert importlib.import_module("evalcore.loaders").load_run is new_load_run


@pytest.mark.parametrize("name", ["evaluate", "agreement"])
def test_a_function_named_like_its_module_is_the_function_whatever_was_imported_first(name):
    """`import evalcore.agreement` first, then `from evalcore import agreement` gave the module (not callable):
    the answer depended on what the session had imported before."""
    import subprocess
    import sys

    code = (f"import evalcore.{name}\nfrom evalcore import {name} as f\nimport evalcore\n"
            f"assert callable(f) and f.__module__ == 'evalcore.{name}', type(f)\n"
            f"assert evalcore.{name} is f\nfrom evalcore.{name} import {name} as g\nassert g is f\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

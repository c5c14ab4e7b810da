"""The layout stays as designed: modules of at most 400 lines, functions of at most 40, no import
cycle among our modules, and nothing importing upward (read statically with ast, nothing runs).
Every import counts: at module level, inside functions and under ``if TYPE_CHECKING:`` (a cycle
for the type checker is a cycle of design). The benchmarks are held to the same rules."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 400, 40
# The layers, bottom first: a module may import from its own layer and the ones below it.
LAYERS = (
    ("gym_tictactoe.checks", "gym_tictactoe.seeding", "gym_tictactoe.extras",
     "gym_tictactoe.files"),
    ("gym_tictactoe.game",),
    ("gym_tictactoe.players",),
    ("gym_tictactoe.envs",),
    ("gym_tictactoe.evaluation",),
    ("gym_tictactoe.cli",),
    ("gym_tictactoe",),  # the package itself, textbook and __main__
    ("agents",),
    ("train",),
    ("benchmarks",),  # may import anything above; nothing imports them but the tests
)
# No exceptions: the command line finds the loader of saved models in a registry that `agents`
# fills (gym_tictactoe.players.loaders, through an entry point) instead of importing it.


def _files() -> list[Path]:
    return sorted([*(ROOT / "gym_tictactoe").rglob("*.py"), *(ROOT / "agents").rglob("*.py"),
                   ROOT / "train.py", *(ROOT / "benchmarks").rglob("*.py")])


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, ast.Module]:
    return {_name(path): ast.parse(path.read_text(), str(path)) for path in _files()}


def _imports(module: str, tree: ast.Module) -> set[str]:
    """Our modules that ``module`` imports, at module level or inside functions."""
    known, found = _modules(), set()
    package = module if (ROOT / module.replace(".", "/") / "__init__.py").exists() else (
        module.rpartition(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1],
                                 *([base] if base else [])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {name for name in found if name in known and name != module}


def _layer(module: str) -> int:
    best = max((prefix for layer in LAYERS for prefix in layer
                if module == prefix or module.startswith(prefix + ".")), key=len)
    return next(i for i, layer in enumerate(LAYERS) if best in layer)


def _graph() -> dict[str, set[str]]:
    return {module: _imports(module, tree) for module, tree in _modules().items()}


def test_no_module_is_over_400_lines():
    long = {_name(p): n for p in _files() if (n := len(p.read_text().splitlines())) > 400}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_is_over_40_lines():
    long = {f"{module}.{node.name}": node.end_lineno - node.lineno + 1
            for module, tree in _modules().items() for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_nothing_imports_upward():
    upward = sorted((module, target) for module, targets in _graph().items() for target in targets
                    if _layer(target) > _layer(module))
    assert not upward, f"imports from a higher layer: {upward}"


def test_no_import_cycles():
    graph, state, cycles = _graph(), {}, []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, f"import cycles: {cycles}"


def test_the_checks_see_the_layout():
    """The checks above would pass vacuously if they read nothing: they see our packages and the
    known import of the rules by the solver."""
    graph = _graph()
    assert "gym_tictactoe.game" in graph["gym_tictactoe.game.solver"]
    assert "benchmarks.timing" in graph["benchmarks.speed"]
    assert _layer("gym_tictactoe.envs.env") > _layer("gym_tictactoe.game.engine")
    assert _layer("benchmarks.speed") > _layer("agents.models") > _layer("gym_tictactoe.cli")
    assert len(graph) > 60


def test_imports_for_the_type_checker_count_too():
    """An import under ``if TYPE_CHECKING:`` is an edge like any other."""
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from gym_tictactoe.game import solver\n")
    assert _imports("gym_tictactoe.envs.env", tree) == {"gym_tictactoe.game.solver"}


def test_every_benchmark_and_script_imports() -> None:
    """Benchmarks and scripts sit outside the package and its tests: after a module moves, only
    importing them shows a stale path (two benchmarks once imported `gym_tictactoe.arguments`)."""
    import importlib.util
    import sys

    benchmarks = sorted((ROOT / "benchmarks").glob("*.py"))
    assert len(benchmarks) > 10
    for path in benchmarks:  # a package: imported by name, as the runner imports them
        importlib.import_module(_name(path))
    for path in sorted((ROOT / "scripts").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_imported_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules.pop(spec.name, None)
        spec.loader.exec_module(module)  # a stale import fails here, naming the path

"""agents/ keeps its shape: the three families (tabular, sb3, alphazero) import only the shared
modules below them and never each other; the loader and self-play pools sit above them, the run
package on top, and nothing imports the run package from below. TYPE_CHECKING imports count too
(read statically with ast, nothing runs)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Bottom first: a module may import from its own level and the ones below it; the families at
# one level never import each other.
LEVELS = (
    ("agents", "agents.archives", "agents.limits", "agents.hyperparams"),
    ("agents.tabular", "agents.sb3", "agents.alphazero"),
    ("agents.models", "agents.self_play"),
    ("agents.run",),
)
FAMILIES = LEVELS[1]


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _group(module: str) -> str:
    return max((prefix for level in LEVELS for prefix in level
                if module == prefix or module.startswith(prefix + ".")), key=len)


def _level(module: str) -> int:
    return next(i for i, level in enumerate(LEVELS) if _group(module) in level)


def _imports(tree: ast.Module) -> set[str]:
    """The agents modules a module imports anywhere in it (TYPE_CHECKING blocks included)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
            found.add(node.module)
    return {name for name in found if name == "agents" or name.startswith("agents.")}


def _edges() -> list[tuple[str, str]]:
    modules = {_name(path): path for path in (ROOT / "agents").rglob("*.py")}
    return [(module, target) for module, path in sorted(modules.items())
            for target in sorted(_imports(ast.parse(path.read_text(), str(path))))
            if target in modules]


def test_agents_import_only_downward_and_the_families_not_each_other():
    wrong = [(module, target) for module, target in _edges()
             if _level(target) > _level(module)
             or (_group(module) in FAMILIES and _group(target) in FAMILIES
                 and _group(module) != _group(target))]
    assert not wrong, f"imports against agents' layering: {wrong}"


def test_the_check_sees_the_subpackages():
    """It would pass vacuously if it read nothing: it sees the run importing each family, and
    the families importing the shared modules."""
    edges = set(_edges())
    assert ("agents.run.training", "agents.tabular.batched") in edges
    assert ("agents.run.alphazero", "agents.alphazero.training") in edges
    assert ("agents.sb3.files", "agents.limits") in edges
    assert _level("agents.run.cli") > _level("agents.models") > _level("agents.tabular.files")

"""Every dotted path the README and docs name (``gym_tictactoe.game.positions``, the API
reference's ``::: gym_tictactoe.envs.wrappers``) imports: the flat shims of earlier layouts
(``gym_tictactoe.env``, ``gym_tictactoe.solver``...) are gone, so a page that still named one
would send a reader to an ImportError."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A dotted name in code spans and mkdocstrings directives; a trailing file suffix
# (``gym_tictactoe.json``, a results file) names a file, not a module.
_PATH = re.compile(r"(?<![\w/])gym_tictactoe(?:\.[A-Za-z_]\w*)+")
_FILE_SUFFIXES = {"json", "npz", "zip", "py", "md", "png", "svg", "txt", "yml"}


def _documented() -> list[str]:
    found = {match for page in PAGES for match in _PATH.findall(page.read_text())}
    return sorted(path for path in found if path.rpartition(".")[2] not in _FILE_SUFFIXES)


def _resolve(path: str) -> object:
    """The module or attribute a dotted path names: the longest importable module prefix, then
    attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        # This checkout's module: an editable install elsewhere must not answer for a path
        # that is gone here.
        assert Path(found.__file__).is_relative_to(ROOT), found  # type: ignore[attr-defined]
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ModuleNotFoundError(path)


def test_the_pages_name_paths() -> None:
    paths = _documented()
    assert "gym_tictactoe.game.positions" in paths and len(paths) > 20


@pytest.mark.parametrize("path", _documented())
def test_every_documented_path_imports(path: str) -> None:
    assert _resolve(path) is not None

import os
from pathlib import Path

# Any pygame window a test opens goes to SDL's dummy driver: CI has no screen.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pytest


@pytest.fixture(autouse=True, scope="session")
def _solution_cache(tmp_path_factory):
    """Solved boards go to a fresh folder, never the user's cache: tests see a clean start."""
    os.environ["GYM_TICTACTOE_CACHE"] = str(tmp_path_factory.mktemp("solutions"))


E2E = Path(__file__).parent / "e2e"


@pytest.hookimpl(tryfirst=True)  # before `-m` selects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e/ runs the project's programs as processes: the e2e marker
    comes from the folder, so that no file there can forget it."""
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)

import os

# Any pygame window a test opens goes to SDL's dummy driver: CI has no screen.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pytest


@pytest.fixture(autouse=True, scope="session")
def _solution_cache(tmp_path_factory):
    """Solved boards go to a fresh folder, never the user's cache: tests see a clean start."""
    os.environ["GYM_TICTACTOE_CACHE"] = str(tmp_path_factory.mktemp("solutions"))

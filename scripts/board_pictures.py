"""Write the board pictures of the documentation: ``docs/img/board-<board>.png``.

    python scripts/board_pictures.py            # (the render extra: pygame writes the PNGs)

Each picture is ``rendering.rgb_array`` of a fixed position at the board's default cell size,
with its last move and winning line marked; ``tests/envs/test_rendering.py`` checks that the
committed PNGs are what the code draws now.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.envs import rendering

OUT = Path(__file__).resolve().parents[1] / "docs" / "img"
# (board, moves in order, X first): a finished game on each board the docs show.
GAMES = {
    "3x3x3": [4, 1, 0, 8, 6, 2, 3],  # X wins down the left column
    "6x6x4": [13, 19, 14, 20, 16, 21, 15],  # X fills the gap of its row: four in a row
    "15x15x5": [112, 113, 98, 126, 84, 140, 70, 154, 56],  # X's diagonal h8-l12; O's e5-i8 short
}


def picture(board: str) -> npt.NDArray[np.uint8]:
    """The picture of ``board``'s game, as the docs show it."""
    rules = game.rules(*game.parse_board(board))
    cells = np.zeros(rules.n_cells, dtype=np.int8)
    for ply, cell in enumerate(GAMES[board]):
        cells[cell] = game.X if ply % 2 == 0 else game.O
    return rendering.rgb_array(cells, shape=rules.shape, last=GAMES[board][-1],
                               win_length=rules.win_length)


def main() -> int:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        import pygame
    except ImportError:
        print("board_pictures.py: error: needs pygame: pip install \".[render]\"", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    for board in GAMES:
        image = picture(board)
        path = OUT / f"board-{board}.png"
        pygame.image.save(pygame.surfarray.make_surface(image.swapaxes(0, 1)), str(path))
        print(f"{path.relative_to(OUT.parents[1])}: {image.shape[1]}x{image.shape[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

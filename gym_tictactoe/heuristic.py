"""Seed 003's rule-based player as a table: for every position, the moves of the first rule that
applies, for the side to move.

Rules in order: win; block the opponent's win; make a double threat (fork); take a cell where the
opponent could fork; centre; a corner opposite one of the opponent's; any corner; any side.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game

CENTRE = 4
CORNERS = np.array([0, 2, 6, 8])
OPPOSITE_CORNER = {0: 8, 2: 6, 6: 2, 8: 0}
# MEMBERSHIP[l, c] is 1 when line l passes through cell c.
MEMBERSHIP = np.zeros((len(game.LINES), game.N_CELLS), dtype=np.int64)
for _line, _cells in enumerate(game.LINES):
    MEMBERSHIP[_line, list(_cells)] = 1


def _lines_through(condition: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """For each code and cell, how many lines satisfying ``condition`` (codes x lines) pass it."""
    return condition.astype(np.int64) @ MEMBERSHIP


def _rules(cells: npt.NDArray[np.int8], me: npt.NDArray, them: npt.NDArray) -> tuple[list, Any]:
    on_line = cells[:, game.LINE_ARRAY]
    mine = (on_line == me[:, None, None]).sum(axis=2)
    theirs = (on_line == them[:, None, None]).sum(axis=2)
    free = (on_line == game.EMPTY).sum(axis=2)
    empty = cells == game.EMPTY
    opposite = np.zeros_like(empty)
    for corner, other in OPPOSITE_CORNER.items():
        opposite[:, corner] = cells[:, other] == them
    is_corner = np.isin(np.arange(game.N_CELLS), CORNERS)
    return [
        _lines_through((mine == 2) & (free == 1)) > 0,
        _lines_through((theirs == 2) & (free == 1)) > 0,
        _lines_through((mine == 1) & (free == 2)) >= 2,
        _lines_through((theirs == 1) & (free == 2)) >= 2,
        np.broadcast_to(np.arange(game.N_CELLS) == CENTRE, empty.shape),
        opposite,
        np.broadcast_to(is_corner, empty.shape),
        np.broadcast_to(~is_corner, empty.shape),
    ], empty


@cache
def table() -> npt.NDArray[np.bool_]:
    """(3**9, 9) mask of the heuristic player's candidate moves; empty for finished games."""
    me = game.TO_MOVE.astype(np.int8)
    them = game.SWAP[me]
    rules, empty = _rules(game.CELLS, me, them)
    chosen = np.zeros((game.N_CODES, game.N_CELLS), dtype=bool)
    undecided = game.LEGAL_MASK.any(axis=1)
    for rule in rules:
        moves = rule & empty
        applies = undecided & moves.any(axis=1)
        chosen[applies] = moves[applies]
        undecided &= ~applies
    chosen.setflags(write=False)
    return chosen

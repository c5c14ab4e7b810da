"""The game and its solver: the rules of every m,n,k-game (:mod:`.engine`, built from
:mod:`.basics`), positions for one board and a batch (:mod:`.positions`, :mod:`.batch`), the
exact solver and its disk cache (:mod:`.solver`, :mod:`.cache`), symmetries, opening positions,
facts and cell names.

``gym_tictactoe.game`` names the rules API: ``Rules``, ``rules``, ``TICTACTOE`` and the marks;
a board's tables and functions are its ``Rules``' own (``game.TICTACTOE.tables.cells``,
``game.TICTACTOE.play``, ...)."""

from gym_tictactoe.game.basics import (
    BOTH_WIN,
    EMPTY,
    EMPTY_BOARD,
    MARK_NAMES,
    MARKS,
    MAX_SIDE,
    NO_WINNER,
    SOLVED_CELLS,
    SWAP,
    TABLE_CELLS,
    Code,
    Layer,
    O,
    Tables,
    X,
    board_text,
    check_board_size,
    parse_board,
    swap_marks,
    win_lines,
)
from gym_tictactoe.game.counting import count_games, random_play_outcome
from gym_tictactoe.game.engine import TICTACTOE, Rules, rules

__all__ = [
    "BOTH_WIN",
    "EMPTY",
    "EMPTY_BOARD",
    "MARKS",
    "MARK_NAMES",
    "MAX_SIDE",
    "NO_WINNER",
    "SOLVED_CELLS",
    "SWAP",
    "TABLE_CELLS",
    "TICTACTOE",
    "Code",
    "Layer",
    "O",
    "Rules",
    "Tables",
    "X",
    "board_text",
    "check_board_size",
    "count_games",
    "parse_board",
    "random_play_outcome",
    "rules",
    "swap_marks",
    "win_lines",
]

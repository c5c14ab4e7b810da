"""The assignment's functional API over list-of-lists boards, answered by the game tables.

A board is a list of three rows, each a list of three values ``X``, ``O`` or ``EMPTY``; an action
is a tuple ``(i, j)`` of a row and a column, each 0, 1 or 2::

    board = initial_state()
    board = result(board, minimax(board))

**Invalid boards.** One rule for all seven functions (``player``, ``actions``, ``result``,
``winner``, ``terminal``, ``utility``, ``minimax``): a board must be three rows of three values
``X``, ``O`` or ``EMPTY`` *and* a position some game can reach: X moved first and the sides
alternated (X has as many marks as O or one more), at most one side has three in a row, and
nobody moved after the game was won. Any other board raises ValueError saying which rule it
breaks; no function answers for a position no game can reach (``utility`` of three rows of O,
say, which no game ends in).

Every function turns the board into its position code (``game.TICTACTOE.encode``) and reads the
answer from tic-tac-toe's tables (``game.TICTACTOE.tables``) and :mod:`gym_tictactoe.game.solver`,
so this module holds no second copy of the rules and ``minimax`` is a look-up, not a search.
Boards are never modified: ``result`` builds a new board from the new code.
"""

from __future__ import annotations

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.checks import is_integer
from gym_tictactoe.game import solver

X = "X"
O = "O"
EMPTY = None

Mark = str | None  # X, O or EMPTY (None)
Board = list[list[Mark]]
Action = tuple[int, int]

_CELL_CODES = {EMPTY: game.EMPTY, X: game.X, O: game.O}
_CELL_MARKS = {code: mark for mark, code in _CELL_CODES.items()}
_RULES = game.TICTACTOE  # the textbook's board, named once: every look-up below reads it
_TABLES = _RULES.tables
_REACHABLE = np.zeros(_RULES.n_codes, dtype=bool)
_REACHABLE[_RULES.reachable] = True
_SIZE = _RULES.rows


def initial_state() -> Board:
    """The empty board, X to move."""
    return [[EMPTY] * _SIZE for _ in range(_SIZE)]


def player(board: Board) -> str:
    """The side to move: X on the empty board, then alternating (X or O on a finished board).

    Like every function here, raises ValueError for a board no game can reach."""
    return _CELL_MARKS[int(_TABLES.to_move[_code(board)])]


def actions(board: Board) -> set[Action]:
    """Every empty cell ``(i, j)`` of a game in progress; the empty set once the game is over."""
    return {divmod(cell, _SIZE) for cell in _RULES.legal_moves(_code(board))}


def result(board: Board, action: Action) -> Board:
    """The new board after the side to move plays ``action``; ``board`` is left unchanged.

    Raises ValueError when the action is not a ``(row, column)`` pair of 0-2, the cell is taken
    or the game is already over.
    """
    row, col = _check_action(action)
    code = _code(board)
    if _TABLES.terminal[code]:
        raise ValueError(f"action {action!r} is not allowed: the game is over")
    cell = row * _SIZE + col
    if not _TABLES.legal_mask[code, cell]:
        taken = _CELL_MARKS[int(_TABLES.cells[code, cell])]
        raise ValueError(f"action {action!r} is not allowed: cell ({row}, {col}) holds {taken}")
    return _board(_RULES.play(code, cell))


def winner(board: Board) -> str | None:
    """X or O when that side has three in a row, otherwise None (game in progress or tie)."""
    return _CELL_MARKS[int(_TABLES.winner[_code(board)])]


def terminal(board: Board) -> bool:
    """True once someone has three in a row or every cell is filled."""
    return bool(_TABLES.terminal[_code(board)])


def utility(board: Board) -> int:
    """1 if X has won, -1 if O has won, 0 for a tie (the spec only asks about finished boards)."""
    return {X: 1, O: -1, None: 0}[winner(board)]


def minimax(board: Board) -> Action | None:
    """An optimal action for the side to move (fastest win, slowest loss); None once it is over.

    The solver has already valued every position, so this reads its best-move table.
    """
    code = _code(board)
    if _TABLES.terminal[code]:
        return None
    return divmod(solver.best_moves(code, _RULES)[0], _SIZE)


def _code(board: Board) -> game.Code:
    """The position code of a valid board (see the module docstring), else ValueError."""
    rows = board if isinstance(board, (list, tuple)) else ()
    if len(rows) != _SIZE or any(
        not isinstance(row, (list, tuple)) or len(row) != _SIZE for row in rows
    ):
        raise ValueError(f"a board is a list of {_SIZE} rows of {_SIZE} values; got {board!r}")
    cells = [value for row in rows for value in row]
    # `is` for EMPTY and exact str equality, so 0, False or "x" are rejected, not coerced.
    if not all(value is EMPTY or (isinstance(value, str) and value in (X, O)) for value in cells):
        raise ValueError(f"board cells must be X, O or EMPTY (None); got {board!r}")
    code = _RULES.encode([_CELL_CODES[value] for value in cells])
    if not _REACHABLE[code]:
        raise ValueError(f"no game reaches the board {board!r}: {_why_unreachable(code)}")
    return code


def _why_unreachable(code: game.Code) -> str:
    """Which rule of a real game an unreachable position breaks."""
    cells = _RULES.decode(code)
    x, o = int((cells == game.X).sum()), int((cells == game.O).sum())
    if x - o not in (0, 1):
        return (f"X moves first and the sides alternate, so X has as many marks as O or one "
                f"more; got {x} X and {o} O")
    won = int(_TABLES.winner[code])
    if won == game.BOTH_WIN:
        return "both X and O have three in a row, but the first line ends the game"
    if won == game.X and x == o:
        return "O moved after X had already won"
    if won == game.O and x > o:
        return "X moved after O had already won"
    return "no sequence of legal moves leads to it"  # none such on 3x3; kept for safety


def _check_action(action: Action) -> Action:
    """The action as two ints, or ValueError when it is not a (row, column) pair of 0-2."""
    ok = (
        isinstance(action, tuple)
        and len(action) == 2
        and all(is_integer(v) for v in action)
        and all(0 <= v < _SIZE for v in action)
    )
    if not ok:
        raise ValueError(f"an action is a tuple (row, column) of ints 0-2; got {action!r}")
    return int(action[0]), int(action[1])


def _board(code: game.Code) -> Board:
    """A fresh list-of-lists board for a code."""
    marks = [_CELL_MARKS[int(v)] for v in _RULES.decode(code)]
    return [marks[r * _SIZE : (r + 1) * _SIZE] for r in range(_SIZE)]

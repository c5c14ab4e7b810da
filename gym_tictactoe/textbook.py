"""The assignment's functional API over list-of-lists boards, answered by the game tables.

A board is a list of three rows, each a list of three values ``X``, ``O`` or ``EMPTY``; an action
is a tuple ``(i, j)`` of a row and a column, each 0, 1 or 2::

    board = initial_state()
    board = result(board, minimax(board))

Every function turns the board into its position code (``game.encode``) and reads the answer from
the tables in :mod:`gym_tictactoe.game` and :mod:`gym_tictactoe.solver`, so this module holds no
second copy of the rules and ``minimax`` is a look-up, not a search. Boards are never modified:
``result`` builds a new board from the new code.
"""

from __future__ import annotations

from numbers import Integral

from gym_tictactoe import game, solver

X = "X"
O = "O"
EMPTY = None

Mark = str | None  # X, O or EMPTY (None)
Board = list[list[Mark]]
Action = tuple[int, int]

_CELL_CODES = {EMPTY: game.EMPTY, X: game.X, O: game.O}
_CELL_MARKS = {code: mark for mark, code in _CELL_CODES.items()}
_SIZE = game.ROWS


def initial_state() -> Board:
    """The empty board, X to move."""
    return [[EMPTY] * _SIZE for _ in range(_SIZE)]


def player(board: Board) -> str:
    """The side to move: X on the empty board, then alternating (X or O on a finished board)."""
    return _CELL_MARKS[int(game.TO_MOVE[_playable_code(board)])]


def actions(board: Board) -> set[Action]:
    """Every empty cell ``(i, j)`` of a game in progress; the empty set once the game is over."""
    return {divmod(cell, _SIZE) for cell in game.legal_moves(_playable_code(board))}


def result(board: Board, action: Action) -> Board:
    """The new board after the side to move plays ``action``; ``board`` is left unchanged.

    Raises ValueError when the action is not a ``(row, column)`` pair of 0-2, the cell is taken
    or the game is already over.
    """
    row, col = _check_action(action)
    code = _playable_code(board)
    if game.TERMINAL[code]:
        raise ValueError(f"action {action!r} is not allowed: the game is over")
    cell = row * _SIZE + col
    if not game.LEGAL_MASK[code, cell]:
        taken = _CELL_MARKS[int(game.CELLS[code, cell])]
        raise ValueError(f"action {action!r} is not allowed: cell ({row}, {col}) holds {taken}")
    return _board(game.play(code, cell))


def winner(board: Board) -> str | None:
    """X or O when that side has three in a row, otherwise None (game in progress or tie)."""
    mark = int(game.WINNER[_code(board)])
    if mark == game.BOTH_WIN:
        # Cannot happen in a game: the first three-in-a-row ends it.
        raise ValueError(f"both X and O have three in a row, so this is no game's board: {board!r}")
    return _CELL_MARKS[mark]


def terminal(board: Board) -> bool:
    """True once someone has three in a row or every cell is filled."""
    return bool(game.TERMINAL[_code(board)])


def utility(board: Board) -> int:
    """1 if X has won, -1 if O has won, 0 for a tie (the spec only asks about finished boards)."""
    return {X: 1, O: -1, None: 0}[winner(board)]


def minimax(board: Board) -> Action | None:
    """An optimal action for the side to move (fastest win, slowest loss); None once it is over.

    The solver has already valued every position, so this reads its best-move table.
    """
    code = _playable_code(board)
    if game.TERMINAL[code]:
        return None
    return divmod(solver.best_moves(code)[0], _SIZE)


def _code(board: Board) -> game.Position:
    """The position code of a board of 3 rows of 3 values X, O or EMPTY (else ValueError)."""
    rows = board if isinstance(board, (list, tuple)) else ()
    if len(rows) != _SIZE or any(
        not isinstance(row, (list, tuple)) or len(row) != _SIZE for row in rows
    ):
        raise ValueError(f"a board is a list of {_SIZE} rows of {_SIZE} values; got {board!r}")
    cells = [value for row in rows for value in row]
    # `is` for EMPTY and exact str equality, so 0, False or "x" are rejected, not coerced.
    if not all(value is EMPTY or (isinstance(value, str) and value in (X, O)) for value in cells):
        raise ValueError(f"board cells must be X, O or EMPTY (None); got {board!r}")
    return game.encode([_CELL_CODES[value] for value in cells])


def _playable_code(board: Board) -> game.Position:
    """The code of a board whose mark counts allow a side to move (X first, then alternating)."""
    code = _code(board)
    if game.TO_MOVE[code] == game.EMPTY:
        counts = {mark: sum(row.count(mark) for row in board) for mark in (X, O)}
        raise ValueError(
            f"X moves first and the sides alternate, so X has as many marks as O or one more; "
            f"got {counts[X]} X and {counts[O]} O"
        )
    return code


def _check_action(action: Action) -> Action:
    """The action as two ints, or ValueError when it is not a (row, column) pair of 0-2."""
    ok = (
        isinstance(action, tuple)
        and len(action) == 2
        and all(isinstance(v, Integral) and not isinstance(v, bool) for v in action)
        and all(0 <= v < _SIZE for v in action)
    )
    if not ok:
        raise ValueError(f"an action is a tuple (row, column) of ints 0-2; got {action!r}")
    return int(action[0]), int(action[1])


def _board(code: game.Position) -> Board:
    """A fresh list-of-lists board for a code."""
    marks = [_CELL_MARKS[int(v)] for v in game.decode(code)]
    return [marks[r * _SIZE : (r + 1) * _SIZE] for r in range(_SIZE)]

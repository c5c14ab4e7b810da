"""The rules of tic-tac-toe as tables indexed by a position's base-3 code.

Cells are numbered row by row::

     0 | 1 | 2
    ---+---+---
     3 | 4 | 5
    ---+---+---
     6 | 7 | 8

A position is a plain ``int``: ``sum(cell[i] * 3**i)`` with 0 = empty, 1 = X, 2 = O. It is
immutable and hashable, and it indexes every table below, so the questions the environment asks at
step time (whose turn, who won, which moves are legal, what is the next position) are one look-up.
All 3**9 codes have an entry; only the 5,478 codes in ``REACHABLE`` can occur in a game.
"""

from __future__ import annotations

from itertools import product

import numpy as np
import numpy.typing as npt

Position = int

EMPTY, X, O = 0, 1, 2
MARKS = {"X": X, "O": O}
MARK_NAMES = {X: "X", O: "O"}
NO_WINNER, BOTH_WIN = 0, 3

ROWS = COLS = WIN_LENGTH = 3
N_CELLS = ROWS * COLS
N_CODES = 3**N_CELLS
POW3 = 3 ** np.arange(N_CELLS, dtype=np.int64)
EMPTY_BOARD: Position = 0


def win_lines(rows: int, cols: int, length: int) -> tuple[tuple[int, ...], ...]:
    """Every straight line of ``length`` cells on a ``rows`` x ``cols`` board, row-major cells."""
    steps = ((0, 1), (1, 0), (1, 1), (1, -1))
    lines = []
    for r, c, (dr, dc) in product(range(rows), range(cols), steps):
        end_r, end_c = r + dr * (length - 1), c + dc * (length - 1)
        if 0 <= end_r < rows and 0 <= end_c < cols:
            lines.append(tuple((r + dr * i) * cols + c + dc * i for i in range(length)))
    return tuple(sorted(lines))


LINES = win_lines(ROWS, COLS, WIN_LENGTH)
LINE_ARRAY = np.array(LINES, dtype=np.intp)


def _symmetries() -> npt.NDArray[np.intp]:
    """The 8 symmetries of the square as cell permutations: new_board = board[perm]."""
    grid = np.arange(N_CELLS).reshape(ROWS, COLS)
    perms = []
    for k in range(4):
        rotated = np.rot90(grid, k)
        perms += [rotated.ravel(), rotated.T.ravel()]
    return np.array(perms, dtype=np.intp)


SYMMETRIES = _symmetries()
# INVERSE_SYMMETRIES[s] maps a cell of the transformed board back to the original board's cell.
INVERSE_SYMMETRIES = np.argsort(SYMMETRIES, axis=1)


def _tables():
    codes = np.arange(N_CODES, dtype=np.int64)
    cells = (codes[:, None] // POW3 % 3).astype(np.int8)
    on_line = cells[:, LINE_ARRAY]  # (codes, lines, length)
    x_wins = (on_line == X).all(axis=2).any(axis=1)
    o_wins = (on_line == O).all(axis=2).any(axis=1)
    winner = (x_wins * X + o_wins * O).astype(np.int8)
    n_x, n_o = (cells == X).sum(axis=1), (cells == O).sum(axis=1)
    to_move = np.where(n_x == n_o, X, np.where(n_x == n_o + 1, O, EMPTY)).astype(np.int8)
    terminal = (winner != NO_WINNER) | (n_x + n_o == N_CELLS)
    # Empty cells of every unfinished code, even where nobody can be to move: an O agent's
    # observation (its own marks as 1) is such a code, one 2 more than 1s, and agents look
    # its moves up here too. NEXT, though, only moves where a side is to move.
    legal_mask = ((cells == EMPTY) & ~terminal[:, None]).astype(np.int8)
    nxt = np.where((legal_mask == 1) & (to_move[:, None] != EMPTY),
                   codes[:, None] + to_move[:, None] * POW3, -1)
    canonical = (cells[:, SYMMETRIES].astype(np.int64) @ POW3).min(axis=1)
    return cells, winner, to_move, terminal, legal_mask, nxt.astype(np.int32), canonical


CELLS, WINNER, TO_MOVE, TERMINAL, LEGAL_MASK, NEXT, CANONICAL = _tables()
for _table in (CELLS, WINNER, TO_MOVE, TERMINAL, LEGAL_MASK, NEXT, CANONICAL):
    _table.setflags(write=False)


def _reachable_layers() -> tuple[npt.NDArray[np.int64], ...]:
    """Positions reachable from the empty board, grouped by the number of marks (0..9)."""
    layers = [np.array([EMPTY_BOARD], dtype=np.int64)]
    for _ in range(N_CELLS):
        children = NEXT[layers[-1]].ravel()
        # Sorted and unique, like np.unique, which would import numpy.ma (~10 ms) with it.
        seen = np.zeros(N_CODES, dtype=bool)
        seen[children[children >= 0]] = True
        layers.append(np.flatnonzero(seen).astype(np.int64))
    return tuple(layers)


LAYERS = _reachable_layers()
REACHABLE = np.concatenate(LAYERS)
IS_REACHABLE = np.zeros(N_CODES, dtype=bool)
IS_REACHABLE[REACHABLE] = True
IS_REACHABLE.setflags(write=False)


def encode(board) -> Position:
    """The code of a 9-cell board (any sequence of 0/1/2, row-major)."""
    try:
        cells = np.asarray(board).ravel()
    except ValueError:  # ragged nested lists
        cells = np.empty(0)
    if cells.dtype.kind not in "iu":  # floats, bools and strings are not cells
        cells = np.empty(0)
    if cells.shape == (N_CELLS,):
        code = int(cells @ POW3)
        # Decoding back is the exact check that every cell is 0, 1 or 2 (and cheaper than isin).
        if 0 <= code < N_CODES and (CELLS[code] == cells).all():
            return code
    raise ValueError(f"a board is {N_CELLS} cells of 0 (empty), 1 (X) or 2 (O); got {board!r}")


def decode(code: Position) -> npt.NDArray[np.int8]:
    """The 9 cells of a position (a read-only view of the decode table)."""
    return CELLS[code]


def legal_moves(code: Position) -> list[int]:
    """The empty cells of a position that is still being played, in increasing order."""
    return np.flatnonzero(LEGAL_MASK[code]).tolist()


def play(code: Position, cell: int) -> Position:
    """The position after the side to move puts its mark on ``cell``."""
    if TO_MOVE[code] == EMPTY:
        raise ValueError(f"position {code} cannot arise in a game (impossible mark counts)")
    if not 0 <= cell < N_CELLS or NEXT[code, cell] < 0:
        raise ValueError(f"move {cell!r} is not legal here; legal moves: {legal_moves(code)}")
    return int(NEXT[code, cell])


def winner(code: Position) -> int:
    """X (1), O (2) or 0 when nobody has three in a row."""
    return int(WINNER[code])


def is_terminal(code: Position) -> bool:
    return bool(TERMINAL[code])


def to_move(code: Position) -> int:
    """The mark (1 = X, 2 = O) of the side to move; X moves first."""
    return int(TO_MOVE[code])


def swap_marks(cells: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """Exchange X and O, leaving empty cells: the board seen from the other side."""
    return SWAP[cells]


SWAP = np.array([EMPTY, O, X], dtype=np.int8)


def transform(code: Position, symmetry: int) -> Position:
    """The position under one of the 8 board symmetries (0 is the identity)."""
    return int(CELLS[code][SYMMETRIES[symmetry]].astype(np.int64) @ POW3)


def canonical(code: Position) -> Position:
    """The smallest code among the position's 8 symmetric images."""
    return int(CANONICAL[code])


def render_text(code: Position, first: int = 0) -> str:
    """Three lines with X, O and the number of each empty cell (counting from ``first``)."""
    cells = decode(code)
    marks = [MARK_NAMES.get(int(v), str(i + first)) for i, v in enumerate(cells)]
    rows = [" " + " | ".join(marks[r * COLS : (r + 1) * COLS]) for r in range(ROWS)]
    return "\n---+---+---\n".join(rows)


def _flow_to_the_end(split: bool) -> dict[str, npt.NDArray]:
    """Mass sent from the empty board down every move, summed over the finished positions by
    result. Each position passes its mass to every child, or, with ``split``, an equal share."""
    mass = np.zeros(N_CODES, dtype=np.float64 if split else np.int64)
    mass[EMPTY_BOARD] = 1
    for layer in LAYERS[:-1]:
        children = NEXT[layer]
        legal = children >= 0
        share = mass[layer] / np.maximum(legal.sum(axis=1), 1) if split else mass[layer]
        # add.at, not +=, because many parents in a layer share a child.
        np.add.at(mass, children[legal], np.broadcast_to(share[:, None], children.shape)[legal])
    ended = REACHABLE[TERMINAL[REACHABLE]]
    return {name: mass[ended[WINNER[ended] == mark]].sum()
            for mark, name in ((X, "X"), (O, "O"), (NO_WINNER, "draw"))}


def count_games() -> dict[str, int]:
    """Distinct complete games (move sequences) from the empty board, by result."""
    by_result = {name: int(count) for name, count in _flow_to_the_end(split=False).items()}
    return {"games": sum(by_result.values()), **by_result}


def random_play_outcome() -> dict[str, float]:
    """Exact probabilities of "X", "O" and "draw" when both sides play uniformly random moves."""
    return {name: float(p) for name, p in _flow_to_the_end(split=True).items()}

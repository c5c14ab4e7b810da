"""How a board answers its rules questions, chosen once by its ``Rules``: by look-ups in per-code
tables (:class:`TableRegime`, boards of at most ``TABLE_CELLS`` cells) or computed from a code's
base-3 digits, its cells (:class:`DigitRegime`, bigger boards). ``Rules`` checks a code or an
array of codes and hands it on; a regime answers without asking again which board it is on."""

from __future__ import annotations

from functools import cached_property
from typing import Protocol

import numpy as np
import numpy.typing as npt

from gym_tictactoe.game.basics import (
    _CHUNK,
    _DIGITS,
    _GROUP,
    EMPTY,
    NO_WINNER,
    TABLE_CELLS,
    O,
    Tables,
    X,
    _to_move,
)

Codes = npt.NDArray[np.int64]


class Board(Protocol):
    """What a regime reads of its board (a ``Rules``)."""

    @property
    def name(self) -> str: ...
    @property
    def n_cells(self) -> int: ...
    @property
    def n_codes(self) -> int: ...
    @property
    def pow3(self) -> npt.NDArray[np.int64] | None: ...
    @property
    def pow3_int(self) -> tuple[int, ...]: ...
    @property
    def line_array(self) -> npt.NDArray[np.intp]: ...
    @property
    def symmetries(self) -> npt.NDArray[np.intp]: ...
    def transform(self, code: int, symmetry: int) -> int: ...


def cells_winner(cells: npt.NDArray[np.int8], line_array: npt.NDArray[np.intp]
                 ) -> npt.NDArray[np.int8]:
    """(N,) the winner of each row of cells: X, O, NO_WINNER, or BOTH_WIN (X + O)."""
    winner = np.zeros(len(cells), dtype=np.int8)
    for start in range(0, len(cells), _CHUNK):
        on_line = cells[start : start + _CHUNK, line_array]  # (chunk, lines, length)
        x_wins = (on_line == X).all(axis=2).any(axis=1)
        o_wins = (on_line == O).all(axis=2).any(axis=1)
        winner[start : start + _CHUNK] = x_wins * X + o_wins * O
    return winner


def cells_terminal(cells: npt.NDArray[np.int8], line_array: npt.NDArray[np.intp]) -> bool:
    """Whether one board's cells are a finished game: a line, or no empty cell."""
    return bool(cells_winner(cells[None], line_array)[0] != NO_WINNER or (cells != EMPTY).all())


def facts_of_cells(codes: Codes, cells: npt.NDArray[np.int8], line_array: npt.NDArray[np.intp],
                   pow3: Codes) -> tuple[npt.NDArray, ...]:
    """(winner, terminal, legal, next) of positions ``codes`` with these ``cells``."""
    winner = cells_winner(cells, line_array)
    terminal = (winner != NO_WINNER) | (cells != EMPTY).all(axis=1)
    legal = ((cells == EMPTY) & ~terminal[:, None]).astype(np.int8)
    mark = _to_move(cells).astype(np.int64)
    nxt = np.where((legal == 1) & (mark[:, None] != EMPTY),
                   codes[:, None] + mark[:, None] * pow3, -1)
    return winner, terminal, legal, nxt


class TableRegime:
    """A tabled board's answers: each one look-up in its per-code tables."""

    def __init__(self, board: Board) -> None:
        self.board = board

    @cached_property
    def tables(self) -> Tables:
        """Built on first use: a board's Rules costs nothing until a question is asked."""
        board = self.board
        pow3 = np.array(board.pow3_int, dtype=np.int64)
        codes = np.arange(board.n_codes, dtype=np.int64)
        cells = (codes[:, None] // pow3 % 3).astype(np.int8)
        winner, terminal, legal, nxt = facts_of_cells(codes, cells, board.line_array, pow3)
        canonical = np.full(board.n_codes, board.n_codes, dtype=np.int64)
        for perm in board.symmetries:  # one symmetry at a time bounds the temporary to one image
            np.minimum(canonical, cells[:, perm].astype(np.int64) @ pow3, out=canonical)
        tables = Tables(cells, winner, _to_move(cells), terminal, legal,
                        nxt.astype(np.int32), canonical)
        for table in vars(tables).values():
            table.setflags(write=False)
        return tables

    def decode(self, code: int) -> npt.NDArray[np.int8]:
        return self.tables.cells[code]

    def legal_moves(self, code: int) -> list[int]:
        return np.flatnonzero(self.tables.legal_mask[code]).tolist()

    def winner(self, code: int) -> int:
        return int(self.tables.winner[code])

    def is_terminal(self, code: int) -> bool:
        return bool(self.tables.terminal[code])

    def to_move(self, code: int) -> int:
        return int(self.tables.to_move[code])

    def canonical(self, code: int) -> int:
        return int(self.tables.canonical[code])

    def cells_of(self, codes: Codes) -> npt.NDArray[np.int8]:
        return self.tables.cells[codes]

    def winner_of(self, codes: Codes) -> npt.NDArray[np.int8]:
        return self.tables.winner[codes]

    def to_move_of(self, codes: Codes) -> npt.NDArray[np.int8]:
        return self.tables.to_move[codes]

    def terminal_of(self, codes: Codes) -> npt.NDArray[np.bool_]:
        return self.tables.terminal[codes]

    def legal_of(self, codes: Codes) -> npt.NDArray[np.int8]:
        return self.tables.legal_mask[codes]

    def next_of(self, codes: Codes) -> Codes:
        return self.tables.next[codes].astype(np.int64)


class DigitRegime:
    """A bigger board's answers, computed from each code's base-3 digits (its cells)."""

    def __init__(self, board: Board) -> None:
        self.board = board

    @property
    def tables(self) -> Tables:
        board = self.board
        raise ValueError(f"the {board.name} board has {board.n_cells} cells: per-code tables "
                         f"exist for boards of at most {TABLE_CELLS} cells")

    def decode(self, code: int) -> npt.NDArray[np.int8]:
        pow3 = self.board.pow3
        if pow3 is not None:
            return (np.int64(code) // pow3 % 3).astype(np.int8)
        digits = []
        for _ in range(self.board.n_cells):
            code, digit = divmod(code, 3)
            digits.append(digit)
        return np.array(digits, dtype=np.int8)

    def legal_moves(self, code: int) -> list[int]:
        cells = self.decode(code)
        if cells_terminal(cells, self.board.line_array):
            return []
        return np.flatnonzero(cells == EMPTY).tolist()

    def winner(self, code: int) -> int:
        return int(cells_winner(self.decode(code)[None], self.board.line_array)[0])

    def is_terminal(self, code: int) -> bool:
        return cells_terminal(self.decode(code), self.board.line_array)

    def to_move(self, code: int) -> int:
        return int(_to_move(self.decode(code)[None])[0])

    def canonical(self, code: int) -> int:
        board = self.board
        return min(board.transform(code, s) for s in range(len(board.symmetries)))

    def cells_of(self, codes: Codes) -> npt.NDArray[np.int8]:
        # Eight cells at a time from a table of every 8-digit base-3 number: two divisions a
        # code on 16 cells instead of thirty-two.
        n_cells = self.board.n_cells
        groups = -(-n_cells // _GROUP)
        cells = np.empty((codes.size, groups * _GROUP), dtype=np.int8)
        rest = codes.copy()
        for group in range(groups):
            rest, low = np.divmod(rest, 3**_GROUP)
            cells[:, group * _GROUP : (group + 1) * _GROUP] = _DIGITS[low]
        return cells[:, :n_cells]

    def winner_of(self, codes: Codes) -> npt.NDArray[np.int8]:
        return self._facts(codes)[0]

    def to_move_of(self, codes: Codes) -> npt.NDArray[np.int8]:
        return _to_move(self.cells_of(codes))

    def terminal_of(self, codes: Codes) -> npt.NDArray[np.bool_]:
        return self._facts(codes)[1]

    def legal_of(self, codes: Codes) -> npt.NDArray[np.int8]:
        return self._facts(codes)[2]

    def next_of(self, codes: Codes) -> Codes:
        return self._facts(codes)[3]

    @cached_property
    def _pow3(self) -> Codes:
        """3**i per cell, for arrays of codes (boards of at most ``SOLVED_CELLS`` cells)."""
        return np.array(self.board.pow3_int, dtype=np.int64)

    def _facts(self, codes: Codes) -> tuple[npt.NDArray, ...]:
        return facts_of_cells(codes, self.cells_of(codes), self.board.line_array, self._pow3)


Regime = TableRegime | DigitRegime

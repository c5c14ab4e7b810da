"""Tic-tac-toe, the default board: the tables and methods of ``TICTACTOE`` under short names
(``CELLS``, ``NEXT``, ``play``, ...), re-exported by :mod:`gym_tictactoe.game`."""

import numpy as np

from gym_tictactoe.game.engine import TICTACTOE

ROWS, COLS, WIN_LENGTH = TICTACTOE.size
N_CELLS = TICTACTOE.n_cells
N_CODES = TICTACTOE.n_codes
POW3 = TICTACTOE.pow3
LINES = TICTACTOE.lines
LINE_ARRAY = TICTACTOE.line_array
SYMMETRIES = TICTACTOE.symmetries
INVERSE_SYMMETRIES = TICTACTOE.inverse_symmetries
_TABLES = TICTACTOE.tables
CELLS, WINNER, TO_MOVE, TERMINAL = _TABLES.cells, _TABLES.winner, _TABLES.to_move, _TABLES.terminal
LEGAL_MASK, NEXT, CANONICAL = _TABLES.legal_mask, _TABLES.next, _TABLES.canonical
LAYERS = TICTACTOE.layers
REACHABLE = TICTACTOE.reachable
IS_REACHABLE = np.zeros(N_CODES, dtype=bool)
IS_REACHABLE[REACHABLE] = True
IS_REACHABLE.setflags(write=False)

encode, decode, legal_moves, play = (TICTACTOE.encode, TICTACTOE.decode, TICTACTOE.legal_moves,
                                     TICTACTOE.play)
winner, is_terminal, to_move = TICTACTOE.winner, TICTACTOE.is_terminal, TICTACTOE.to_move
transform, canonical = TICTACTOE.transform, TICTACTOE.canonical

"""Tic-tac-toe, the default board: the tables and methods of ``TICTACTOE`` that the textbook API,
the tabular agents and the wrappers use under short names (``CELLS``, ``LEGAL_MASK``, ``play``,
...), re-exported by :mod:`gym_tictactoe.game`. Anything else is ``game.TICTACTOE``'s own."""

import numpy as np

from gym_tictactoe.game.engine import TICTACTOE

ROWS = TICTACTOE.rows
N_CELLS = TICTACTOE.n_cells
N_CODES = TICTACTOE.n_codes
POW3 = TICTACTOE.pow3
_TABLES = TICTACTOE.tables
CELLS, WINNER, TO_MOVE, TERMINAL = _TABLES.cells, _TABLES.winner, _TABLES.to_move, _TABLES.terminal
LEGAL_MASK = _TABLES.legal_mask
IS_REACHABLE = np.zeros(N_CODES, dtype=bool)
IS_REACHABLE[TICTACTOE.reachable] = True
IS_REACHABLE.setflags(write=False)

encode, decode, legal_moves, play = (TICTACTOE.encode, TICTACTOE.decode, TICTACTOE.legal_moves,
                                     TICTACTOE.play)
winner = TICTACTOE.winner

"""Pure Monte Carlo search (seed 002): random playouts after each legal move, on every board
(per-code tables where the board has them, cell arrays in bounded chunks beyond)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_int
from gym_tictactoe.game.positions import Position
from gym_tictactoe.players.protocol import (
    Player,
    pick,
)

__all__ = ["MAX_PLAYOUTS", "MonteCarloOpponent", "playout_chunk", "random_playouts",
           "random_playouts_cells"]


# Every playout of every move is one row of an array: 10,000 per move keep a 3x3 reply within a
# few MB (seed 002 used 50-100), while 10**8 would need tens of GB.
MAX_PLAYOUTS = 10_000
# A reply plays ``playouts`` games after each of up to ``cells`` moves, each of up to ``cells``
# moves: playouts * cells**2 stays within this, so boards up to 6x6 keep 10,000 playouts a move
# while 15x15 allows 331 (200 took 12 to 19 s a reply on a loaded machine; 10,000 would take
# some ten minutes).
MAX_REPLY_MOVES = 2**24
# On boards without tables a playout row costs about 20 bytes a cell while it plays (its cells,
# the empty mask and float64 noise with its product), so 10,000 playouts on 15x15 would take
# 5 GB at once: the rows are played in chunks of at most this many bytes. One chunk holds a
# whole reply at the default 50 playouts on every board, which keeps those draws as they were.
PLAYOUT_BYTES = 64 * 2**20
PLAYOUT_ROW_BYTES = 20  # per cell


class MonteCarloOpponent(Player):
    """Pure Monte Carlo search (seed 002): ``playouts`` random games after each legal move, then
    the move with the best mean result for this player (ties broken at random).

    ``playouts`` is at most 10,000, and at most 2**24 / cells**2 (331 on 15x15), since a reply
    plays that many games after each empty cell. On boards of more than 12 cells the games are
    played in chunks of at most 64 MB (``PLAYOUT_BYTES``)."""

    name = "montecarlo"

    def __init__(self, playouts: int = 50, *, rows: int = 3, cols: int = 3,
                 win_length: int = 3) -> None:
        self._set_board(rows, cols, win_length)
        most = min(MAX_PLAYOUTS, MAX_REPLY_MOVES // self.rules.n_cells**2)
        n = self.rules.n_cells
        where = "" if most == MAX_PLAYOUTS else (
            f" on the {self.rules.name} board (a reply plays that many games of up to {n} moves "
            f"after each of its {n} cells)")
        self.playouts = check_int(playouts, "playouts", 1, most, note=where)

    @property
    def cost(self) -> str:
        """What one move costs (``protocol.Costly``: too much to ask at every position of a big
        board)."""
        return f"{self.playouts} random playouts after each move"

    def move(self, position: Position, rng: np.random.Generator) -> int:
        if self.rules.tabled:
            return self.act_code(position.code, position.mark, rng)
        return self.act_cells(position.cells, position.mark, rng)

    def act_code(self, code: game.Code, mark: int, rng: np.random.Generator) -> int:
        tables = self.rules.tables
        moves = np.flatnonzero(tables.legal_mask[code])
        starts = np.repeat(tables.next[code, moves].astype(np.int64), self.playouts)
        return self._best(moves, random_playouts(starts, rng, self.rules), mark, rng)

    def act_cells(self, cells: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        moves = np.flatnonzero(cells == game.EMPTY)
        total, chunk = moves.size * self.playouts, playout_chunk(cells.size)
        winners = np.empty(total, dtype=np.int8)
        for first in range(0, total, chunk):  # row r is a playout after moves[r // playouts]
            played = moves[np.arange(first, min(first + chunk, total)) // self.playouts]
            starts = np.repeat(cells[None], played.size, axis=0)
            starts[np.arange(played.size), played] = mark
            winners[first:first + played.size] = random_playouts_cells(
                starts, played, mark, rng, self.rules)
        return self._best(moves, winners, mark, rng)

    def _best(self, moves, winners, mark: int, rng: np.random.Generator) -> int:
        # +1 win, 0 draw, -1 loss as int8; integer sums give exactly the float means' order.
        results = (winners == mark).view(np.int8) - ((winners != mark) & (winners != 0))
        totals = results.reshape(moves.size, self.playouts).sum(axis=1)
        return int(moves[pick((totals == totals.max()).nonzero()[0], rng)])

    def __repr__(self) -> str:
        return f"MonteCarloOpponent(playouts={self.playouts}{self._board_args()})"


def playout_chunk(n_cells: int) -> int:
    """How many playout rows of a board of ``n_cells`` cells are played at once: as many as fit
    in ``PLAYOUT_BYTES``, at least one."""
    return max(1, PLAYOUT_BYTES // (PLAYOUT_ROW_BYTES * (n_cells + 1)))


def random_playouts(codes: npt.NDArray[np.int64], rng: np.random.Generator,
                    rules: game.Rules) -> npt.NDArray:
    """Finish every game in ``codes`` (a tabled board's) with uniformly random moves; returns the
    winners (0 draw)."""
    tables = rules.tables
    codes = codes.copy()
    for _ in range(rules.n_cells):
        playing = ~tables.terminal[codes]
        if not playing.any():
            break
        masks = tables.legal_mask[codes[playing]]
        # The argmax of uniform noise over the legal cells is a uniform legal move.
        cells = np.argmax(rng.random(masks.shape) * masks, axis=1)
        codes[playing] = tables.next[codes[playing], cells]
    return tables.winner[codes]


def random_playouts_cells(boards: npt.NDArray[np.int8], last: npt.NDArray[np.intp], mark: int,
                          rng: np.random.Generator, rules: game.Rules) -> npt.NDArray[np.int8]:
    """Finish games on boards without tables, each just played by ``mark`` at ``last``, with
    uniformly random moves; the winners (0 draw). Wins are checked on the lines through each
    move only."""
    boards = np.concatenate([boards, np.full((len(boards), 1), -1, np.int8)], axis=1)
    winners = np.where(rules.wins_at(boards, last, np.full(len(boards), mark)), mark, 0)
    playing = (winners == 0) & (boards == game.EMPTY).any(axis=1)
    marks = np.full(len(boards), game.SWAP[mark], dtype=np.int8)
    while playing.any():
        rows = np.flatnonzero(playing)
        empty = boards[rows, :-1] == game.EMPTY
        cells = np.argmax(rng.random(empty.shape) * empty, axis=1)
        boards[rows, cells] = marks[rows]
        won = rules.wins_at(boards[rows], cells, marks[rows])
        winners[rows[won]] = marks[rows[won]]
        playing[rows] = ~won & (empty.sum(axis=1) > 1)
        marks[rows] = game.SWAP[marks[rows]]
    return winners.astype(np.int8)

"""Exact game values and optimal moves for every reachable position of a board of at most 16 cells.

The game is solved backwards, one layer of positions (by number of marks) at a time, with NumPy
over whole layers. Each position gets a *score* from the point of view of the side to move:
``+(H - d)`` for a win in ``d`` plies, ``-(H - d)`` for a loss in ``d`` plies, ``0`` for a draw,
with ``H = cells + 1``. Maximising the score therefore prefers any win to a draw to any loss, the
fastest win among wins and the slowest loss among losses.

The result is one int8 per position code (3**cells of them: 43 MB on 16 cells); moves and values
are derived from it on demand. Tabled boards (3x3 among them) are solved in memory in
milliseconds and also get full per-code tables of moves. Bigger boards take seconds to a minute, so
their scores are cached on disk (``cache.py``) and later processes load them in well under a second.
"""

from __future__ import annotations

from functools import cache, cached_property

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game import Rules

_NO_MOVE = -128  # below every real score, so max() never picks an illegal cell


class Solution:
    """The solved board: per-code arrays (entries of unreachable codes are zero).

    Attributes:
        rules: the board.
        score: int8 per code, the score for the side to move (see the module docstring).
        reachable: bool per code, whether a game can reach it.

    ``*_of(codes)`` methods answer for arrays of codes on every solved board; on tabled boards the
    full tables ``value``, ``distance``, ``best`` and ``keeps_value`` exist too.
    """

    def __init__(self, rules: Rules, score: npt.NDArray[np.int8],
                 reachable: npt.NDArray[np.bool_]) -> None:
        self.rules, self.score, self.reachable = rules, score, reachable
        self.horizon = rules.n_cells + 1
        for array in (score, reachable):
            array.setflags(write=False)

    def child_scores(self, codes: npt.ArrayLike, mark: int | None = None) -> npt.NDArray[np.int16]:
        """(N, cells): each move's score for the side to move at ``codes``, ``_NO_MOVE`` where
        the cell is not a legal move. ``mark``: every code is unfinished with ``mark`` to move
        (a faster path, as in ``Rules.children_of``)."""
        return _child_scores(self.rules, self.score, codes, mark)

    def best_of(self, codes: npt.ArrayLike, mark: int | None = None) -> npt.NDArray[np.bool_]:
        """(N, cells) mask of the perfect player's moves: best value, fastest win, slowest loss."""
        moves = self.child_scores(codes, mark)
        return (moves == moves.max(axis=1, keepdims=True)) & (moves != _NO_MOVE)

    def keeps_value_of(self, codes: npt.ArrayLike,
                       mark: int | None = None) -> npt.NDArray[np.bool_]:
        """(N, cells) mask of every move that keeps the position's game value."""
        moves = self.child_scores(codes, mark)
        top = moves.max(axis=1, keepdims=True)
        return (np.sign(moves) == np.sign(top)) & (moves != _NO_MOVE)

    def value_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """Game value for X under perfect play: +1 X wins, 0 draw, -1 O wins (0 if unreachable)."""
        codes = np.asarray(codes, dtype=np.int64)
        x_to_move = self.rules.to_move_of(codes) == game.X
        return (np.sign(self.score[codes]) * np.where(x_to_move, 1, -1)).astype(np.int8)

    def distance_of(self, codes: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """Plies to the end of the game under perfect play (0 if unreachable)."""
        codes = np.asarray(codes, dtype=np.int64)
        score = self.score[codes].astype(np.int16)
        empties = (self.rules.cells_of(codes) == game.EMPTY).sum(axis=1)
        distance = np.where(score == 0, empties, self.horizon - np.abs(score))
        return np.where(self.reachable[codes], distance, 0).astype(np.int8)

    # Full per-code tables, on tabled boards only (a 16-cell board's would take gigabytes).

    @cached_property
    def value(self) -> npt.NDArray[np.int8]:
        return self._table(self.value_of)

    @cached_property
    def distance(self) -> npt.NDArray[np.int8]:
        return self._table(self.distance_of)

    @cached_property
    def best(self) -> npt.NDArray[np.bool_]:
        """(codes, cells): ``best_of`` for every code (empty rows where nobody moves)."""
        return self._table(self.best_of)

    @cached_property
    def keeps_value(self) -> npt.NDArray[np.bool_]:
        return self._table(self.keeps_value_of)

    def _table(self, of):
        if not self.rules.tabled:
            raise ValueError(f"full per-code tables exist for boards of at most "
                             f"{game.TABLE_CELLS} cells; on {self.rules.name} ask for the "
                             "codes you need with the *_of methods")
        table = of(np.arange(self.rules.n_codes))
        table[~self.reachable] = 0
        table.setflags(write=False)
        return table


def _child_scores(rules: Rules, score: npt.NDArray[np.int8], codes: npt.ArrayLike,
                  mark: int | None = None) -> npt.NDArray[np.int16]:
    # ``mark``: the side to move at every one of ``codes``, all unfinished (a faster path).
    children = rules.next_of(codes) if mark is None else rules.children_of(codes, mark)
    child = score[np.maximum(children, 0)].astype(np.int16)
    # One more ply to the end: the child's score negated and shrunk one step towards zero.
    return np.where(children >= 0, -child + np.sign(child), _NO_MOVE).astype(np.int16)


def build(rules: Rules) -> Solution:
    """Solve ``rules`` from scratch (see ``solve`` for the cached result)."""
    rules.check_solvable("solving")
    score = np.zeros(rules.n_codes, dtype=np.int8)
    horizon = rules.n_cells + 1
    for layer in reversed(rules.positions):
        # The side to move at a won terminal position is the side that lost, just now.
        lost = layer.winner[layer.terminal] != game.NO_WINNER
        score[layer.codes[layer.terminal]] = np.where(lost, -horizon, 0)
        for codes in game._chunks(layer.codes[~layer.terminal]):
            score[codes] = _child_scores(rules, score, codes, layer.mark).max(axis=1)
    reachable = np.zeros(rules.n_codes, dtype=bool)
    reachable[rules.reachable] = True
    return Solution(rules, score, reachable)


@cache
def solve(rules: Rules = game.TICTACTOE) -> Solution:
    """The board solved, once per process: in memory for tabled boards, else through the disk
    cache (built and saved on first use)."""
    if rules.tabled:
        return build(rules)
    from gym_tictactoe import cache as disk_cache  # only boards that are not tabled need it

    return disk_cache.load_or_build(rules, build)


def value(code: game.Position, rules: Rules = game.TICTACTOE) -> int:
    """The game value for X under perfect play: +1, 0 or -1."""
    return int(solve(rules).value_of([code])[0])


def best_moves(code: game.Position, rules: Rules = game.TICTACTOE) -> list[int]:
    """The perfect player's moves: best value, then fastest win or slowest loss."""
    return np.flatnonzero(solve(rules).best_of([code])[0]).tolist()


def value_keeping_moves(code: game.Position, rules: Rules = game.TICTACTOE) -> list[int]:
    """Every move that keeps the position's game value (the non-blunders)."""
    return np.flatnonzero(solve(rules).keeps_value_of([code])[0]).tolist()

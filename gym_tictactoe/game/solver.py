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

from functools import cache

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.game import Rules, basics
from gym_tictactoe.game.solution import Solution, _child_scores


def build(rules: Rules) -> Solution:
    """Solve ``rules`` from scratch (see ``solve`` for the cached result)."""
    rules.check_solvable("solving")
    score = np.zeros(rules.n_codes, dtype=np.int8)
    horizon = rules.n_cells + 1
    for layer in reversed(rules.positions):
        # The side to move at a won terminal position is the side that lost, just now.
        lost = layer.winner[layer.terminal] != game.NO_WINNER
        score[layer.codes[layer.terminal]] = np.where(lost, -horizon, 0)
        for codes in basics._chunks(layer.codes[~layer.terminal]):
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
    from gym_tictactoe.game import cache as disk_cache  # only boards that are not tabled need it

    return disk_cache.load_or_build(rules, build)


def value(code: game.Code, rules: Rules = game.TICTACTOE) -> int | None:
    """The game value for X under perfect play: +1, 0 or -1. Boards of 17 to 64 cells are
    proved (:mod:`.proven`): None when the proof ran out of its budget."""
    if not rules.solvable:
        return _proven().value(code, rules)
    return int(solve(rules).value_of([code])[0])


def best_moves(code: game.Code, rules: Rules = game.TICTACTOE) -> list[int] | None:
    """The perfect player's moves: best value, then fastest win or slowest loss. Proved boards
    (17 to 64 cells) know no distances: every value-keeping move (None: unknown)."""
    if not rules.solvable:
        return _proven().value_keeping_moves(code, rules)
    return np.flatnonzero(solve(rules).best_of([code])[0]).tolist()


def value_keeping_moves(code: game.Code,
                        rules: Rules = game.TICTACTOE) -> list[int] | None:
    """Every move that keeps the position's game value (the non-blunders); on proved boards
    None when a move's value is unknown."""
    if not rules.solvable:
        return _proven().value_keeping_moves(code, rules)
    return np.flatnonzero(solve(rules).keeps_value_of([code])[0]).tolist()


def _proven():
    from gym_tictactoe.game import proven  # the proof solver's edge: only beyond 16 cells

    return proven

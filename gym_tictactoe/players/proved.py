"""The ``minimax`` opponent's moves on boards of 17 to 64 cells: proved, not tabled.

Each reply is a uniform choice (the lowest cell when deterministic) among the moves that keep the
position's game value: read from the opening book in the first plies
(:mod:`gym_tictactoe.game.book`, built once and cached on disk), else proved move by move by the
proof solver, each proof within ``budget`` nodes. Where a proof runs out of its budget and no
move is proved a win, the value-keeping moves are unknown: the reply is then ``alphabeta``'s
(its default budget), and ``fallbacks`` counts those replies. So the player is perfect exactly
where every reply was proved, and ``fallbacks`` says whether a game had a reply that was not.
"""

from __future__ import annotations

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.game import book
from gym_tictactoe.game.positions import Position, code_of
from gym_tictactoe.game.proofs import check_provable
from gym_tictactoe.players.protocol import pick
from gym_tictactoe.players.search import AlphaBetaPlayer

BUDGET = 2 * 10**6  # nodes per proof of one move; a few seconds at most


class ProvedMoves:
    """The value-keeping moves of a board of 17 to 64 cells, with alphabeta where unproved."""

    def __init__(self, rules: game.Rules, budget: int = BUDGET) -> None:
        if rules.n_cells > 64:
            raise ValueError(f"minimax plays perfectly from proofs on boards of at most 64 cells; "
                             f"{rules.name} has {rules.n_cells}: use 'alphabeta' (search) there")
        check_provable(rules)
        self.rules, self.budget = rules, budget
        self.fallbacks = 0  # replies that were alphabeta's, not proved
        self._search: AlphaBetaPlayer | None = None

    def choices(self, code: int) -> list[int] | None:
        """The value-keeping moves at ``code``, or None when a proof ran out of its budget."""
        return book.best_of(book.move_values(code, self.rules, self.budget))

    def move(self, position: Position, rng: np.random.Generator, deterministic: bool) -> int:
        choices = self.choices(code_of(position))
        if choices:
            return pick(choices, rng, deterministic)
        self.fallbacks += 1
        if self._search is None:
            self._search = AlphaBetaPlayer(**self.rules.kwargs)
        return int(self._search.act(position.cells.copy(), position.mark, rng))

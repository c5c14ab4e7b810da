"""OpenSpiel's ``MCTSBot`` as the benchmarks build it, and as a player of the arena's games.

One construction for every benchmark that meets it (``mcts.py``, ``elo.py``): UCT constant 2
(OpenSpiel's examples'), MCTS-Solver on (``solve=True``), one random rollout a leaf, its
random numbers from one ``numpy.random.RandomState`` seeded per game. OpenSpiel's m,n,k-game
numbers a cell ``row * cols + col``, as we do (``m`` is the columns, ``n`` the rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.game.positions import Position
from gym_tictactoe.players.protocol import Player

UCT_C = 2.0
SIMULATIONS = 1000
SETTINGS: dict[str, Any] = {"simulations": SIMULATIONS, "uct_c": UCT_C, "solve": True,
                            "rollouts_per_leaf": 1}  # as the results files record them
NAME = "MCTSBot"  # the player's name in the Elo benchmark's tables
MISSING = ("OpenSpiel is not installed (pip install open_spiel): MCTSBot is left out of the "
           "table")


def installed() -> bool:
    """Whether OpenSpiel imports (it is in the ``bench`` extra, not a dependency)."""
    try:
        import pyspiel  # noqa: F401
        from open_spiel.python.algorithms import mcts  # noqa: F401
    except ImportError:
        return False
    return True


def openspiel_bot(rules: game.Rules, simulations: int, seed: int) -> tuple[Any, Any]:
    """OpenSpiel's m,n,k-game for ``rules`` and an ``MCTSBot`` on it seeded with ``seed``."""
    import pyspiel
    from open_spiel.python.algorithms import mcts

    spiel = pyspiel.load_game("mnk", {"m": rules.cols, "n": rules.rows, "k": rules.win_length})
    state = np.random.RandomState(seed)
    bot = mcts.MCTSBot(spiel, UCT_C, simulations, mcts.RandomRolloutEvaluator(1, state),
                       solve=True, random_state=state)
    return spiel, bot


class MCTSBotPlayer(Player):
    """``MCTSBot`` of ``simulations`` a move on ``rules``; each game (``reset``) seeds a new bot
    from the game's generator, so seeded games reproduce."""

    def __init__(self, rules: game.Rules, simulations: int = SIMULATIONS) -> None:
        self.rules, self.simulations = rules, simulations
        self._spiel, self._bot = openspiel_bot(rules, simulations, 0)

    def reset(self, rng: np.random.Generator) -> None:
        self._spiel, self._bot = openspiel_bot(self.rules, self.simulations,
                                               int(rng.integers(2**31)))

    def move(self, position: Position, rng: np.random.Generator) -> int:
        state = self._spiel.new_initial_state()
        xs = np.flatnonzero(position.cells == game.X).tolist()
        os_ = np.flatnonzero(position.cells == game.O).tolist()
        # X and O alternately from X: any order reaches the position, and none of its parts
        # has a line the position lacks, so no state on the way is over.
        for ply in range(len(xs) + len(os_)):
            state.apply_action(int((xs if ply % 2 == 0 else os_)[ply // 2]))
        return int(self._bot.mcts_search(state).best_child().action)

    def __repr__(self) -> str:
        return f"MCTSBotPlayer({self.rules.name}, simulations={self.simulations})"

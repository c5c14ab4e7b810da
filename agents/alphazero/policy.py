"""A trained network as a Policy: greedy on its prior (the raw network), or greedy on the visit
counts of a PUCT search of a fixed number of simulations (network plus search).

Both are deterministic (the search has no randomness at play: no noise, first of equal
counts), so the exact evaluation (``gym_tictactoe.evaluation``) scores them as they play. Both
answer a whole batch of positions in one call (``act_batch``), the search growing one tree per
position side by side. Being deterministic, the search player keeps its last moves asked one
at a time (games, ``play``, ``arena``) by position: a position met again costs no search.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from agents.alphazero.network import PolicyValueNet, infer
from agents.alphazero.search import C_PUCT, search, tree_bytes
from gym_tictactoe import game
from gym_tictactoe.checks import check_flag, check_int, check_number
from gym_tictactoe.game import Rules

RAW_CHUNK = 8192  # positions per network call
# The trees of one batch (search.tree_bytes) are cut to this many bytes, one tree at least.
SEARCH_BYTES = 256 * 2**20
MAX_SIMULATIONS = 10_000
CACHED_MOVES = 2**16  # positions whose searched move is kept (under 10 MB)


class AlphaZeroPolicy:
    """``policy(observation, action_mask) -> cell`` over the env's agent view (1 own mark,
    2 the other's) on ``rules``'s board; ``max_simulations`` None plays the raw network. With
    ``threats`` the search reads each position's immediate threats (``search.search``): it
    plays a win at once, blocks the opponent's one threat and scores such positions exactly."""

    def __init__(self, net: PolicyValueNet, rules: Rules, max_simulations: int | None = None,
                 c_puct: float = C_PUCT, threats: bool = False) -> None:
        self.net, self.rules = net, rules
        self.threats = check_flag(threats, "threats")
        self.max_simulations = check_int(max_simulations, "max_simulations", 1,
                                         MAX_SIMULATIONS, none=True)
        self.c_puct = check_number(c_puct, "c_puct", 0.0, low_open=True)
        self._moves: dict[bytes, int] = {}  # searched moves by position (the board, its mask)

    @property
    def cost(self) -> str | None:
        """What one move costs where that is too much to ask at every position of a big board
        (``players.protocol.Costly``): the search's simulations; None for the raw network."""
        if self.max_simulations is None:
            return None
        return f"search of {self.max_simulations} simulations a move"

    def evaluator(self, boards: npt.NDArray[np.int8]) -> tuple[npt.NDArray, npt.NDArray]:
        """Priors and values of boards seen by their mover: the search's evaluator."""
        return infer(self.net, boards, self.rules.shape)

    def act_batch(self, observations: npt.ArrayLike, masks: npt.ArrayLike) -> npt.NDArray:
        """The cells played on each of ``observations`` (N, cells), in chunks of positions."""
        boards = np.asarray(observations, dtype=np.int8).reshape(-1, self.rules.n_cells)
        legal = np.asarray(masks).reshape(boards.shape).astype(bool)
        chunk = RAW_CHUNK if self.max_simulations is None else max(
            1, SEARCH_BYTES // tree_bytes(self.rules.n_cells, self.max_simulations))
        cells = np.empty(len(boards), dtype=np.int64)
        for first in range(0, len(boards), chunk):
            part = slice(first, first + chunk)
            cells[part] = self._choose(boards[part], legal[part])
        return cells

    def _choose(self, boards: npt.NDArray[np.int8], legal: npt.NDArray[np.bool_]) -> npt.NDArray:
        if self.max_simulations is None:
            scores = infer(self.net, boards, self.rules.shape)[0]
        else:
            # The observation is the board as its mover sees it: an absolute board with mover 1.
            movers = np.full(len(boards), game.X, dtype=np.int8)
            scores = search(self.rules, self.evaluator, boards, movers, self.max_simulations,
                            c_puct=self.c_puct, threats=self.threats).visits
        return np.where(legal, scores + 1.0, 0.0).argmax(axis=1)  # legal cells first

    def __call__(self, observation: npt.ArrayLike, action_mask: npt.ArrayLike) -> int:
        board = np.asarray(observation, dtype=np.int8).reshape(-1)
        legal = np.asarray(action_mask).reshape(-1).astype(bool)
        if self.max_simulations is None:
            return int(self._choose(board[None], legal[None])[0])
        key = board.tobytes() + legal.tobytes()
        move = self._moves.get(key)
        if move is None:
            if len(self._moves) >= CACHED_MOVES:  # bounded: start afresh
                self._moves.clear()
            move = self._moves[key] = int(self._choose(board[None], legal[None])[0])
        return move

    def __repr__(self) -> str:
        how = ("raw network" if self.max_simulations is None
               else f"search of {self.max_simulations} simulations"
               + (", threat checks" if self.threats else ""))
        return f"AlphaZeroPolicy({self.rules.name}, {how})"

    def with_search(self, max_simulations: Any, threats: bool = False) -> AlphaZeroPolicy:
        """The same network playing through a search of ``max_simulations`` simulations (that
        reads the immediate threats with ``threats``)."""
        return AlphaZeroPolicy(self.net, self.rules, max_simulations, self.c_puct, threats)

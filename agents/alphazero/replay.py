"""The replay buffer: the latest ``capacity`` samples, drawn in batches each under a random
symmetry of the board (``gym_tictactoe.game.symmetry``), so the network sees every orientation of a
position for the cost of one."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.alphazero.self_play import Samples
from gym_tictactoe.game import Rules
from gym_tictactoe.game.symmetry import transform_cells


class ReplayBuffer:
    """A ring of the latest ``capacity`` samples of one board."""

    def __init__(self, rules: Rules, capacity: int) -> None:
        cells = rules.n_cells
        self.rules, self.capacity = rules, capacity
        self.boards = np.zeros((capacity, cells), np.int8)
        self.policies = np.zeros((capacity, cells), np.float32)
        self.outcomes = np.zeros(capacity, np.float32)
        self.size = self.next = 0

    @staticmethod
    def sample_bytes(cells: int) -> int:
        """The bytes one sample takes on a board of ``cells``: its board (int8), its policy
        target (float32) and its outcome (float32)."""
        return 5 * cells + 4

    def __len__(self) -> int:
        return self.size

    def add(self, samples: Samples) -> None:
        """Append ``samples``, overwriting the oldest when full."""
        count = len(samples.outcomes)
        if count > self.capacity:  # only the newest fit
            samples = Samples(samples.boards[-self.capacity:], samples.policies[-self.capacity:],
                              samples.outcomes[-self.capacity:])
            count = self.capacity
        where = (self.next + np.arange(count)) % self.capacity
        self.boards[where], self.policies[where] = samples.boards, samples.policies
        self.outcomes[where] = samples.outcomes
        self.next = int((self.next + count) % self.capacity)
        self.size = min(self.capacity, self.size + count)

    def sample(self, batch: int, rng: np.random.Generator
               ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """``batch`` samples drawn uniformly, each seen under a uniformly random symmetry."""
        rows = rng.integers(0, self.size, size=batch)
        symmetry = rng.integers(0, len(self.rules.symmetries), size=batch)
        boards = transform_cells(self.rules, self.boards[rows], symmetry)
        policies = transform_cells(self.rules, self.policies[rows], symmetry)
        return boards, policies, self.outcomes[rows]

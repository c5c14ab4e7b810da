"""The vector env on every kind of board (tabled, solvable, big) against one single env per
board, stepped together with deterministic opponents and compared exactly (as in test_vector)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector.utils import batch_space

from gym_tictactoe import game
from gym_tictactoe.env import TicTacToeEnv
from gym_tictactoe.opponents import (
    EpsilonOpponent,
    HeuristicOpponent,
    MinimaxOpponent,
    MixtureOpponent,
    RandomOpponent,
)
from gym_tictactoe.vector import TicTacToeVectorEnv

Size = tuple[int, int, int]


def board_kwargs(size: Size) -> dict[str, int]:
    return dict(zip(("rows", "cols", "win_length"), size, strict=True))


def deterministic(name: str, size: Size) -> Any:
    kwargs = board_kwargs(size)
    if name == "lowest":
        return RandomOpponent(deterministic=True, **kwargs)
    if name == "heuristic":
        return HeuristicOpponent(deterministic=True, **kwargs)
    minimax = MinimaxOpponent(deterministic=True, **kwargs)
    if name == "epsilon0":
        return EpsilonOpponent(0.0, minimax, **kwargs)
    if name == "mixture":
        return MixtureOpponent([minimax, RandomOpponent(**kwargs)], weights=[1, 0], **kwargs)
    return minimax


def batch_singles(steps: list[tuple], n_cells: int) -> tuple:
    """Single-env results laid out as the vector env lays out its own (see test_vector)."""
    obs, rewards, terminated, truncated, infos = zip(*steps, strict=True)
    cell_dtype = np.int8 if n_cells <= 127 else np.int16
    illegal = np.array([i.get("illegal_action", False) for i in infos])
    info = {
        "action_mask": np.stack([i["action_mask"] for i in infos]),
        "agent_mark": np.array([game.MARKS[i["agent_mark"]] for i in infos], dtype=np.int8),
        "board": np.stack([i["board"] for i in infos]),
        "opponent_action": np.array([i.get("opponent_action", -1) for i in infos], cell_dtype),
        "_opponent_action": np.array(["opponent_action" in i for i in infos]),
        "winner": np.array([game.MARKS.get(i.get("winner"), 0) for i in infos], dtype=np.int8),
        "_winner": np.array(["winner" in i for i in infos]),
        "illegal_action": illegal,
        "_illegal_action": illegal.copy(),
    }
    return (np.stack(obs), np.array(rewards, dtype=np.float32), np.array(terminated),
            np.array(truncated), info)


def as_step(obs: np.ndarray, info: dict) -> tuple:
    """A reset as the step that autoresets in NEXT_STEP mode: reward 0, not terminated."""
    return obs, 0.0, False, False, info


class Lockstep:
    """A vector env and one single env per board, stepped together and compared exactly."""

    def __init__(self, size: Size, name: str, agent_mark: str, n: int) -> None:
        kwargs, self.cells = board_kwargs(size), size[0] * size[1]
        self.vec = TicTacToeVectorEnv(n, deterministic(name, size), agent_mark, **kwargs)
        self.singles = [TicTacToeEnv(deterministic(name, size), agent_mark, **kwargs)
                        for _ in range(n)]
        assert self.vec.single_observation_space == self.singles[0].observation_space
        assert self.vec.observation_space == batch_space(self.singles[0].observation_space, n)
        assert self.vec.single_action_space == self.singles[0].action_space
        obs, self.info = self.vec.reset(seed=0)
        expected = batch_singles([as_step(*env.reset(seed=i))
                                  for i, env in enumerate(self.singles)], self.cells)
        assert data_equivalence((obs, self.info), (expected[0], expected[4]), exact=True)
        self.ended, self.episodes = [False] * n, 0

    def step(self, actions: np.ndarray) -> None:
        live = ~np.array(self.ended)
        masks = np.stack([env.action_masks() for env in self.singles])
        assert (self.vec.action_masks()[live] == masks[live]).all()
        *result, self.info = self.vec.step(actions)
        # NEXT_STEP autoreset by hand: a board whose episode ended resets instead of stepping.
        steps = [as_step(*env.reset()) if done else env.step(int(action))
                 for env, action, done in zip(self.singles, actions, self.ended, strict=True)]
        self.ended = [bool(step[2]) for step in steps]
        assert data_equivalence((*result, self.info), batch_singles(steps, self.cells),
                                exact=True)
        self.episodes += sum(self.ended)


def run_lockstep(size: Size, name: str, agent_mark: str, n: int = 6, steps: int = 60) -> int:
    lockstep, rng = Lockstep(size, name, agent_mark, n), np.random.default_rng(7)
    cells = size[0] * size[1]
    for _ in range(steps):
        masks = lockstep.info["action_mask"]
        legal = np.argmax(rng.random(masks.shape) + masks, axis=1)
        anything = rng.integers(-1, cells + 1, size=n)
        lockstep.step(np.where(rng.random(n) < 0.9, legal, anything))
    return lockstep.episodes


LOCKSTEP = [(size, name) for size in [(3, 4, 3), (4, 4, 3), (6, 6, 4), (15, 15, 5), (1, 13, 4)]
            for name in ("lowest", "heuristic")]
LOCKSTEP += [(size, name) for size in [(3, 4, 3), (2, 7, 3)]
             for name in ("minimax", "epsilon0", "mixture")]


@pytest.mark.parametrize("agent_mark", ["X", "O"])
@pytest.mark.parametrize(("size", "name"), LOCKSTEP, ids=str)
def test_vector_env_agrees_with_single_envs_board_by_board(size, name, agent_mark):
    assert run_lockstep(size, name, agent_mark) > 6  # several autoresets per board on average

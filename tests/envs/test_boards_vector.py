"""The vector env on every kind of board (tabled, solvable, big) against one single env per
board, stepped together with deterministic opponents and compared exactly (as in test_vector),
and its invariants with randomised opponents."""

from __future__ import annotations

import numpy as np
import pytest
from boards_helpers import Size, board_kwargs, expected_end, run_lockstep

from gym_tictactoe import game
from gym_tictactoe.envs.vector import TicTacToeVectorEnv

LOCKSTEP = [(size, name) for size in [(3, 4, 3), (4, 4, 3), (6, 6, 4), (15, 15, 5), (1, 13, 4)]
            for name in ("lowest", "heuristic")]
LOCKSTEP += [(size, name) for size in [(3, 4, 3), (2, 7, 3)]
             for name in ("minimax", "epsilon0", "mixture")]


@pytest.mark.slow
@pytest.mark.parametrize("agent_mark", ["X", "O"])
@pytest.mark.parametrize(("size", "name"), LOCKSTEP, ids=str)
def test_vector_env_agrees_with_single_envs_board_by_board(size, name, agent_mark):
    assert run_lockstep(size, name, agent_mark) > 6  # several autoresets per board on average


def check_board(size: Size, before: np.ndarray, action: int, reset: bool,
                step: tuple) -> None:
    """One board of a vector step against the rules (``reset``: it was waiting to autoreset)."""
    obs, reward, terminated, info = step
    board, agent = info["board"], int(info["agent_mark"])
    assert (obs == (board if agent == game.X else game.SWAP[board])).all()
    replied = bool(info["_opponent_action"])
    assert bool(info["opponent_action"] >= 0) is replied
    if replied:
        assert board[info["opponent_action"]] == 3 - agent
    if reset:
        assert (reward, terminated, info["illegal_action"]) == (0.0, False, False)
        assert (board != 0).sum() == int(replied) and replied is (agent == game.O)
        return
    legal = 0 <= action < len(board) and before[action] == 0
    assert bool(info["illegal_action"]) is (not legal)
    if not legal:
        assert (board == before).all() and terminated and reward == -1.0
        assert info["winner"] == 3 - agent
        return
    assert board[action] == agent and (board != before).sum() == 1 + int(replied)
    over, winner = expected_end(board, size)
    assert terminated == over == bool(info["_winner"]) and (replied or over)
    assert info["winner"] == game.MARKS.get(winner, 0)
    assert reward == (0.0 if winner is None else 1.0 if game.MARKS[winner] == agent else -1.0)


EPSILON, MIXTURE = "epsilon:epsilon=0.5,inner=heuristic", "random+heuristic*2"
RANDOMISED = [((1, 2, 2), "random"), ((1, 2, 2), MIXTURE), ((3, 4, 3), "random"),
              ((3, 4, 3), EPSILON), ((2, 7, 3), "heuristic"), ((2, 7, 3), MIXTURE),
              ((6, 6, 4), "random"), ((6, 6, 4), EPSILON), ((15, 15, 5), "random"),
              ((15, 15, 5), MIXTURE)]


@pytest.mark.slow
@pytest.mark.parametrize(("size", "opponent"), RANDOMISED, ids=str)
def test_vector_env_keeps_the_rules_with_randomised_opponents(size, opponent):
    n, cells = 8, size[0] * size[1]
    vec = TicTacToeVectorEnv(n, opponent, "random", **board_kwargs(size))
    rng = np.random.default_rng(1)
    obs, info = vec.reset(seed=2)
    assert obs in vec.observation_space and not info["_winner"].any()
    waiting, episodes = np.zeros(n, dtype=bool), 0
    for _ in range(50):
        masks, before = info["action_mask"], info["board"]
        legal = np.argmax(rng.random(masks.shape) + masks, axis=1)
        actions = np.where(rng.random(n) < 0.9, legal, rng.integers(-1, cells + 1, size=n))
        obs, rewards, terminated, truncated, info = vec.step(actions)
        assert obs in vec.observation_space and not truncated.any()
        for b in range(n):
            board_info = {key: value[b] for key, value in info.items()}
            check_board(size, before[b], int(actions[b]), bool(waiting[b]),
                        (obs[b], float(rewards[b]), bool(terminated[b]), board_info))
        mask = np.where(terminated[:, None], 0, info["board"] == 0)
        assert (info["action_mask"] == mask).all()
        waiting, episodes = terminated, episodes + int(terminated.sum())
    assert episodes >= n


@pytest.mark.parametrize("size", [(3, 4, 3), (2, 7, 3), (6, 6, 4)], ids=str)
def test_partial_resets_with_a_new_seat_and_returned_arrays_on_every_board(size):
    vec = TicTacToeVectorEnv(4, "random", "X", **board_kwargs(size))
    _, info = vec.reset(seed=0)
    for _ in range(2):
        obs, *_, info = vec.step(np.argmax(info["action_mask"], axis=1))
    kept = (obs.copy(), {key: value.copy() for key, value in info.items()})
    reset = np.array([True, False, True, False])
    obs, info = vec.reset(options={"reset_mask": reset, "agent_mark": "O"})
    assert info["agent_mark"].tolist() == [2, 1, 2, 1]
    assert ((info["board"] != 0).sum(axis=1) == np.where(reset, 1, 4)).all()
    views = np.where(info["agent_mark"][:, None] == game.X, info["board"],
                     game.SWAP[info["board"]])
    assert (obs == views).all() and (obs[~reset] == kept[0][~reset]).all()
    masks = vec.action_masks().copy()
    for array in (obs, *info.values()):
        array[...] = 0  # the caller's own arrays: the env keeps its state
    assert (vec.action_masks() == masks).all() and (vec.positions.cells() != 0).any()

"""Tests of gym_tictactoe.wrappers: the one-hot and absolute-board observations."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.utils.env_match import data_equivalence

from gym_tictactoe import game
from gym_tictactoe.env import TicTacToeEnv
from gym_tictactoe.wrappers import AbsoluteBoard, OneHotObservation

WRAPPERS = [OneHotObservation, AbsoluteBoard]
SEEDS = range(20)
# check_env always warns that a wrapped env is not the raw env; every other warning is an error.
WRAPPED_WARNING = ".*is different from the unwrapped version"


def rollout(env: gym.Env, seed: int) -> Iterator[tuple[np.ndarray, float, dict]]:
    """Observation, reward and info of every reset and step of one seeded random game."""
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    yield obs, 0.0, info
    terminated = False
    while not terminated:
        action = env.action_space.sample(mask=info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        yield obs, float(reward), info


@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("agent_mark", ["X", "O", "random"])
def test_observations_lie_in_the_space(wrapper: type, agent_mark: str) -> None:
    env = wrapper(TicTacToeEnv(opponent="random", agent_mark=agent_mark))
    for seed in SEEDS:
        for obs, _, _ in rollout(env, seed):
            assert obs in env.observation_space


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_rewards_and_info_pass_through_unchanged(wrapper: type) -> None:
    for seed in SEEDS:
        plain = TicTacToeEnv(opponent="random", agent_mark="random")
        wrapped = wrapper(TicTacToeEnv(opponent="random", agent_mark="random"))
        for (_, *expected), (_, *got) in zip(rollout(plain, seed), rollout(wrapped, seed),
                                             strict=True):
            assert data_equivalence(expected, got, exact=True)


def test_one_hot_planes_are_empty_own_opponent_in_cell_order() -> None:
    env = OneHotObservation(TicTacToeEnv())
    board = np.array([0, 1, 2, 2, 0, 1, 0, 0, 1], dtype=np.int8)
    planes = env.observation(board).reshape(3, 9)
    assert planes.dtype == np.float32
    assert planes[0].tolist() == [1, 0, 0, 0, 1, 0, 1, 1, 0]
    assert planes[1].tolist() == [0, 1, 0, 0, 0, 1, 0, 0, 1]
    assert planes[2].tolist() == [0, 0, 1, 1, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("agent_mark", ["X", "O"])
def test_one_hot_has_one_plane_per_cell_matching_the_relative_board(agent_mark: str) -> None:
    env = OneHotObservation(TicTacToeEnv(opponent="random", agent_mark=agent_mark))
    for seed in SEEDS:
        for obs, _, info in rollout(env, seed):
            planes = obs.reshape(3, 9)
            assert np.array_equal(planes.sum(axis=0), np.ones(9))
            relative = info["board"] if agent_mark == "X" else game.SWAP[info["board"]]
            assert np.array_equal(planes.argmax(axis=0), relative)


def test_one_hot_observations_are_fresh_arrays() -> None:
    env = OneHotObservation(TicTacToeEnv())
    first, _ = env.reset(seed=0)
    first[:] = 7
    second, _ = env.reset(seed=0)
    assert second.reshape(3, 9)[0].tolist() == [1.0] * 9


@pytest.mark.parametrize("agent_mark", ["X", "O", "random"])
def test_absolute_board_equals_info_board(agent_mark: str) -> None:
    env = AbsoluteBoard(TicTacToeEnv(opponent="random", agent_mark=agent_mark))
    seats = set()
    for seed in SEEDS:
        for obs, _, info in rollout(env, seed):
            assert obs.dtype == np.int8
            assert np.array_equal(obs, info["board"])
            seats.add(info["agent_mark"])
    assert seats == ({"X", "O"} if agent_mark == "random" else {agent_mark})


def test_absolute_board_differs_from_the_relative_view_when_playing_o() -> None:
    obs, _ = AbsoluteBoard(TicTacToeEnv(agent_mark="O")).reset(seed=1)
    relative, _ = TicTacToeEnv(agent_mark="O").reset(seed=1)
    assert (obs == game.X).sum() == 1 and (relative == 2).sum() == 1  # X opened, from both views
    assert np.array_equal(obs, game.SWAP[relative])


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_wrappers_reject_other_observation_spaces(wrapper: type) -> None:
    with pytest.raises(ValueError, match="MultiDiscrete"):
        wrapper(gym.make("CartPole-v1"))


@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("agent_mark", ["X", "O", "random"])
def test_check_env_passes_without_warnings(wrapper: type, agent_mark: str) -> None:
    env = wrapper(TicTacToeEnv(opponent="random", agent_mark=agent_mark))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=WRAPPED_WARNING)
        # Without a registered spec the checker cannot remake the env in other render modes.
        check_env(env, skip_render_check=True)


@pytest.fixture
def registered_id() -> Iterator[str]:
    """A throwaway registration, so the checker can remake the env from its spec."""
    env_id = "gym_tictactoe_wrapper_tests/TicTacToe-v0"
    gym.register(id=env_id, entry_point="gym_tictactoe.env:TicTacToeEnv")
    yield env_id
    del gym.registry[env_id]


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_check_env_remakes_the_wrapped_env_in_every_render_mode(
    wrapper: type, registered_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # the checker also opens a "human" window
    env = wrapper(gym.make(registered_id, opponent="random", render_mode="rgb_array"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=WRAPPED_WARNING)
        check_env(env)
    remade = env.spec.make()
    assert isinstance(remade, wrapper)
    assert remade.reset(seed=0)[0] in env.observation_space
    remade.close()
    env.close()


def test_grid_observation_reshapes_any_board_and_one_hot_grows_with_it():
    from gym_tictactoe.wrappers import GridObservation

    env = GridObservation(TicTacToeEnv(rows=4, cols=5, win_length=4, agent_mark="O"))
    obs, info = env.reset(seed=3)
    assert obs.shape == (4, 5) and env.observation_space.contains(obs)
    assert (obs.ravel() == game.SWAP[info["board"]]).all()  # the O agent's own view
    wide = OneHotObservation(TicTacToeEnv(rows=6, cols=6, win_length=4))
    obs, _ = wide.reset(seed=0)
    assert obs.shape == (108,) and obs.reshape(3, 36)[0].all()
    with pytest.raises(ValueError, match=r"expected a MultiDiscrete\(\[3\] \* cells\)"):
        GridObservation(OneHotObservation(TicTacToeEnv()))

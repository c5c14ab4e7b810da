"""Tests of gym_tictactoe.envs.wrappers: the one-hot and absolute-board observations."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.utils.env_match import data_equivalence

from gym_tictactoe import game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.wrappers import AbsoluteBoard, OneHotObservation, one_hot

T3 = game.TICTACTOE  # tic-tac-toe's rules, for lines that would not fit

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
    gym.register(id=env_id, entry_point="gym_tictactoe.envs.env:TicTacToeEnv")
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
    from gym_tictactoe.envs.wrappers import GridObservation

    env = GridObservation(TicTacToeEnv(rows=4, cols=5, win_length=4, agent_mark="O"))
    obs, info = env.reset(seed=3)
    assert obs.shape == (4, 5) and env.observation_space.contains(obs)
    assert (obs.ravel() == game.SWAP[info["board"]]).all()  # the O agent's own view
    wide = OneHotObservation(TicTacToeEnv(rows=6, cols=6, win_length=4))
    obs, _ = wide.reset(seed=0)
    assert obs.shape == (108,) and obs.reshape(3, 36)[0].all()
    with pytest.raises(ValueError, match=r"expected a MultiDiscrete\(\[3\] \* cells\)"):
        GridObservation(OneHotObservation(TicTacToeEnv()))


# --- CanonicalObservation -----------------------------------------------------------------------

# Tabled (3x3, 3x4), code arrays on Stones (1x13), computed images on a big board (6x6).
CANONICAL_BOARDS = [(3, 3, 3), (3, 4, 3), (1, 13, 3), (6, 6, 4)]


def canonical_env(size, **kwargs):
    from gym_tictactoe.envs.wrappers import CanonicalObservation

    rows, cols, k = size
    return CanonicalObservation(TicTacToeEnv(rows=rows, cols=cols, win_length=k, **kwargs))


@pytest.mark.parametrize("size", CANONICAL_BOARDS)
@pytest.mark.parametrize("agent_mark", ["X", "O"])
def test_canonical_check_env_passes(size, agent_mark: str) -> None:
    env = canonical_env(size, opponent="random", agent_mark=agent_mark)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=WRAPPED_WARNING)
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("size", CANONICAL_BOARDS)
def test_canonical_env_plays_the_plain_env_game_through_the_symmetry(size) -> None:
    """The wrapped env and a plain one, same seed: the wrapper's observation and mask are the
    image of the plain ones under info['symmetry'], its action the image of the plain action."""
    wrapped = canonical_env(size, opponent="random", agent_mark="random")
    plain = TicTacToeEnv(rows=size[0], cols=size[1], win_length=size[2], opponent="random",
                         agent_mark="random")
    rules, rng, seen = plain.rules, np.random.default_rng(0), set()
    for seed in range(6):
        (obs, info), (p_obs, p_info) = wrapped.reset(seed=seed), plain.reset(seed=seed)
        done = False
        while True:
            perm = rules.symmetries[info["symmetry"]]
            seen.add(info["symmetry"])
            assert np.array_equal(obs, p_obs[perm])
            assert rules.encode(obs) == rules.canonical(rules.encode(p_obs))
            assert np.array_equal(info["action_mask"], p_info["action_mask"][perm])
            assert np.array_equal(wrapped.action_masks(), plain.action_masks()[perm])
            assert np.array_equal(info["board"], p_info["board"])
            if done:
                break
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, done, _, info = wrapped.step(action)
            p_obs, p_reward, p_done, _, p_info = plain.step(int(perm[action]))
            assert (reward, done) == (p_reward, p_done)
    assert len(seen) > 1  # the games met more than the identity


def test_canonical_mask_marks_the_empty_cells_of_the_canonical_board() -> None:
    env = canonical_env((3, 3, 3), opponent="random", agent_mark="random")
    for seed in SEEDS:
        for obs, _, info in rollout(env, seed):
            if info["winner"] == "":  # the game goes on, or a draw (a full board)
                assert np.array_equal(info["action_mask"], (obs == 0).astype(np.int8))
                assert np.array_equal(env.action_masks(), obs == 0)


def test_the_wrapper_examples_hold() -> None:
    import doctest

    from gym_tictactoe.envs import wrappers

    failed, attempted = doctest.testmod(wrappers)
    assert failed == 0 and attempted > 10


def test_canonical_passes_actions_that_name_no_cell_to_the_env() -> None:
    env = canonical_env((3, 3, 3), agent_mark="O", opponent="minimax")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(9)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)
    env = canonical_env((3, 3, 3), agent_mark="O", illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action 'a'"):
        env.step("a")


def test_canonical_composes_with_one_hot_and_maskable_ppo_sees_its_mask() -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from gym_tictactoe.envs.wrappers import CanonicalObservation

    inner = canonical_env((3, 3, 3), opponent="random", agent_mark="O")
    env = OneHotObservation(inner)
    obs, info = env.reset(seed=2)
    assert np.array_equal(obs, one_hot(inner.unwrapped._observation()[
        inner.rules.symmetries[info["symmetry"]]]))
    assert np.array_equal(get_action_masks(env), info["action_mask"].astype(bool))
    vec = DummyVecEnv([lambda: Monitor(OneHotObservation(canonical_env((3, 3, 3),
                                                                       agent_mark="O")))])
    vec.seed(3)
    vec.reset()
    canonical = vec.envs[0].get_wrapper_attr("symmetry")
    raw = vec.envs[0].unwrapped.action_masks()
    masks = get_action_masks(vec)
    assert masks.shape == (1, 9) and np.array_equal(masks[0], raw[T3.symmetries[canonical]])
    with pytest.raises(ValueError, match="MultiDiscrete"):
        CanonicalObservation(OneHotObservation(TicTacToeEnv()))


@pytest.mark.slow
def test_maskable_ppo_trains_and_plays_legally_through_canonical_one_hot() -> None:
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # smoke-sized: one thread beats spawning several
    try:
        env = OneHotObservation(canonical_env((3, 3, 3), opponent="random", agent_mark="random"))
        model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0)
        model.learn(128)
        for seed in range(10):
            obs, info = env.reset(seed=seed)
            done = False
            while not done:
                masks = env.get_wrapper_attr("action_masks")()
                action, _ = model.predict(obs, action_masks=masks, deterministic=True)
                assert info["action_mask"][int(action)] == 1
                obs, _, done, _, info = env.step(int(action))
                assert info["illegal_action"] is False
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("size", CANONICAL_BOARDS)
def test_batched_canonicalize_agrees_with_the_wrapper_on_vector_env_boards(size) -> None:
    """A vector env played through ``canonicalize``/``uncanonical_actions`` and one wrapped
    single env per board, stepped together (deterministic opponent, agent X)."""
    from boards_helpers import board_kwargs, deterministic

    from gym_tictactoe.envs.vector import TicTacToeVectorEnv
    from gym_tictactoe.game.symmetry import canonicalize, transform_cells, uncanonical_actions

    n, kwargs = 8, board_kwargs(size)
    vec = TicTacToeVectorEnv(n, deterministic("heuristic", size), "X", **kwargs)
    singles = [canonical_env(size, opponent=deterministic("heuristic", size), agent_mark="X")
               for _ in range(n)]
    obs, info = vec.reset(seed=0)
    steps = [env.reset(seed=i) for i, env in enumerate(singles)]
    rng, ended, rules = np.random.default_rng(1), np.zeros(n, bool), vec.rules
    for _ in range(40):
        images, chosen = canonicalize(rules, obs)
        masks = transform_cells(rules, info["action_mask"], chosen)
        assert np.array_equal(images, np.stack([step[0] for step in steps]))
        assert chosen.tolist() == [step[-1]["symmetry"] for step in steps]
        assert np.array_equal(masks, np.stack([step[-1]["action_mask"] for step in steps]))
        actions = np.argmax(rng.random(masks.shape) + masks, axis=1)  # legal where any is
        obs, _, terminated, _, info = vec.step(uncanonical_actions(rules, actions, chosen))
        steps = [env.reset() if done else env.step(int(a))
                 for env, a, done in zip(singles, actions, ended, strict=True)]
        ended = terminated

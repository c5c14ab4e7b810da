"""TicTacToeSB3VecEnv: the same transitions as SB3's DummyVecEnv of monitored TicTacToeEnv's,
same-step resets, masks, seeding, the VecEnv methods, and short MaskablePPO / PPO runs."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")  # the [sb3] extra is optional: skip, not fail, without it

from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3 import PPO
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv

from agents.sb3.vec_env import TicTacToeSB3VecEnv
from gym_tictactoe import game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.wrappers import OneHotObservation
from gym_tictactoe.players.opponents import parse_opponent

T3 = game.TICTACTOE  # tic-tac-toe's rules, for lines that would not fit

N_BOARDS = 6
DETERMINISTIC = ["minimax:deterministic=true", "heuristic:deterministic=true",
                 "random:deterministic=true"]


def dummy(opponent: str, agent_mark: str, one_hot: bool) -> DummyVecEnv:
    def thunk():
        env = Monitor(TicTacToeEnv(opponent=parse_opponent(opponent), agent_mark=agent_mark))
        return OneHotObservation(env) if one_hot else env
    return DummyVecEnv([thunk] * N_BOARDS)


def scripted_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """Mostly legal cells, sometimes an occupied one (an illegal move ends the game)."""
    legal = np.argmax(rng.random(masks.shape) + masks, axis=1)
    return np.where(rng.random(len(masks)) < 0.9, legal, rng.integers(0, 9, len(masks)))


def assert_same_step(ours: tuple, theirs: tuple) -> None:
    (obs, rewards, dones, infos), (obs2, rewards2, dones2, infos2) = ours, theirs
    np.testing.assert_array_equal(obs, obs2)
    np.testing.assert_array_equal(rewards, rewards2)
    np.testing.assert_array_equal(dones, dones2)
    for done, info, info2 in zip(dones, infos, infos2, strict=True):
        assert ("terminal_observation" in info) == done
        if done:
            np.testing.assert_array_equal(info["terminal_observation"],
                                          info2["terminal_observation"])
            assert info["TimeLimit.truncated"] is False and info["winner"] == info2["winner"]
            assert info["episode"]["r"] == info2["episode"]["r"]
            assert info["episode"]["l"] == info2["episode"]["l"]


@pytest.mark.parametrize("opponent", DETERMINISTIC)
@pytest.mark.parametrize(("agent_mark", "one_hot"), [("X", False), ("O", False), ("O", True)])
def test_transitions_match_a_dummy_vec_env_across_episode_ends(opponent, agent_mark, one_hot):
    ours = TicTacToeSB3VecEnv(N_BOARDS, opponent, agent_mark, one_hot=one_hot)
    theirs = dummy(opponent, agent_mark, one_hot)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    rng, ends = np.random.default_rng(0), 0
    for _ in range(30):
        masks = get_action_masks(ours)
        np.testing.assert_array_equal(masks, get_action_masks(theirs))
        actions = scripted_actions(rng, masks)
        step = ours.step(actions)
        assert_same_step(step, theirs.step(actions))
        ends += step[2].sum()
    assert ends >= 2 * N_BOARDS  # every board went through episode ends


def test_masks_are_the_legal_cells_of_the_new_episodes():
    env = TicTacToeSB3VecEnv(4, "minimax", agent_mark="O", seed=0)
    obs = env.reset()
    for _ in range(12):
        masks = np.stack(env.env_method("action_masks"))
        np.testing.assert_array_equal(masks, obs == 0)  # no board ever waits for a reset
        np.testing.assert_array_equal(env.action_masks(), masks)
        obs, *_ = env.step(np.argmax(masks, axis=1))


def rollout(seed: int, steps: int = 20) -> list:
    env = TicTacToeSB3VecEnv(8, "random+minimax", agent_mark="random")
    env.seed(seed)
    trace, rng = [env.reset()], np.random.default_rng(0)
    for _ in range(steps):
        obs, rewards, dones, _ = env.step(scripted_actions(rng, env.action_masks()))
        trace += [obs, rewards, dones]
    return trace


def test_seeding_is_reproducible():
    same = [np.array_equal(a, b) for a, b in zip(rollout(3), rollout(3), strict=True)]
    other = [np.array_equal(a, b) for a, b in zip(rollout(3), rollout(4), strict=True)]
    assert all(same) and not all(other)


def test_vec_env_methods_reach_the_shared_vector_env():
    env = TicTacToeSB3VecEnv(3, "random", seed=0)
    env.reset()
    assert env.get_attr("render_mode") == [None] * 3 and env.has_attr("action_masks")
    assert env.env_is_wrapped(Monitor) == [True] * 3
    assert env.env_is_wrapped(OneHotObservation, 1) == [False]
    assert len(env.env_method("action_masks", indices=[0, 2])) == 2
    env.env_method("set_opponent", "minimax")
    env.set_attr("agent_mark_option", "O")
    assert env.get_attr("agent_mark_option", indices=0) == ["O"]
    with pytest.raises(ValueError, match="every board"):
        env.set_attr("agent_mark_option", "X", indices=[1])
    with pytest.raises(ValueError, match="every board"):
        env.env_method("set_opponent", "random", indices=0)
    assert env.seed(7) == [7] * 3
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize(("algo", "one_hot"), [(MaskablePPO, False), (PPO, True)])
def test_sb3_learns_on_the_adapter_and_logs_episodes(algo, one_hot):
    env = TicTacToeSB3VecEnv(16, "random+minimax", one_hot=one_hot, seed=0)
    model = algo("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0,
                 policy_kwargs={"net_arch": [16]})
    model.learn(512)
    assert model.num_timesteps == 512 and len(model.ep_info_buffer) > 20
    assert {"r", "l", "t"} <= set(model.ep_info_buffer[0])


@pytest.mark.parametrize("actions", [np.zeros(3, dtype=int), np.zeros((4, 2), dtype=int),
                                     np.zeros(5, dtype=int)])
def test_actions_of_the_wrong_shape_are_named(actions):
    env = TicTacToeSB3VecEnv(4, "random", seed=0)
    env.reset()
    with pytest.raises(ValueError, match=r"one cell per board, shape \(4,\) or \(4, 1\); got"):
        env.step(actions)
    assert env.step(np.zeros((4, 1), dtype=int))[1].shape == (4,)  # SB3's own column is fine


@pytest.mark.parametrize("seed", [-1, 2**32, 1.5, "0", True])
def test_a_bad_seed_is_refused_when_given(seed):
    env = TicTacToeSB3VecEnv(2, "random")
    message = r"seed must be None or an integer with 0 <= seed < 2\*\*32"
    with pytest.raises(ValueError, match=message):
        env.seed(seed)
    with pytest.raises(ValueError, match="seed must be None or an integer"):
        TicTacToeSB3VecEnv(2, "random", seed=seed)


def test_canonical_adapter_shows_canonical_boards_and_maps_moves_and_masks_back():
    from sb3_contrib.common.maskable.utils import get_action_masks

    from gym_tictactoe.game.symmetry import uncanonical_actions

    env = TicTacToeSB3VecEnv(64, "random", "random", canonical=True, start="random",
                             start_probability=0.5, seed=0)
    obs, rng = env.reset(), np.random.default_rng(0)
    for _ in range(60):
        codes = obs.astype(np.int64) @ T3.pow3
        assert (T3.tables.canonical[codes] == codes).all()  # every board in its lowest orientation
        masks = env.action_masks()
        assert (masks == (obs == 0)).all()  # the mask of the board as shown
        # MaskablePPO asks through env_method: the same canonical masks.
        assert (get_action_masks(env) == masks).all()
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        real = uncanonical_actions(game.TICTACTOE, actions, env._symmetry)
        assert env.venv.action_masks()[np.arange(64), real].all()  # legal where it is played
        obs, _, _, infos = env.step(actions)
        assert not any(info.get("illegal_action") for info in infos)
    with pytest.raises(ValueError, match="canonical must be True or False"):
        TicTacToeSB3VecEnv(2, canonical="yes")

"""Tianshou 2.x as a real client (issue 29): its replay buffer stacks every step's ``info`` into
arrays and refuses a buffer with missing values, so an info key that comes and goes, or a
``None``, stopped training at the first step. Smoke-sized, seeded runs of the two patterns its
documentation teaches: DQN on the single-agent env, and its tic-tac-toe tutorial (PettingZoo's
AEC env under ``PettingZooEnv``, DQN against a masked random player)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("tianshou", reason='the examples extra: pip install ".[examples]"')
pytest.importorskip("pettingzoo", reason='the multiagent extra: pip install ".[multiagent]"')

import torch  # after the skips: it comes with tianshou
from tianshou.algorithm import (
    DQN,
    MARLRandomDiscreteMaskedOffPolicyAlgorithm,
    MultiAgentOffPolicyAlgorithm,
)
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import gym_tictactoe  # noqa: F401  (registers TicTacToe-v0)
from gym_tictactoe.envs import pettingzoo as pz

BOARDS = [(3, 3, 3), (6, 6, 4)]
STEPS = 200  # env steps of training after a 64-step warm-up: enough for several games


def board(size: tuple[int, int, int]) -> dict[str, int]:
    return dict(zip(("rows", "cols", "win_length"), size, strict=True))


def dqn(observation_space: gym.Space, action_space: gym.spaces.Discrete) -> DQN:
    net = Net(state_shape=observation_space.shape, action_shape=int(action_space.n),
              hidden_sizes=[32])
    policy = DiscreteQLearningPolicy(model=net, action_space=action_space, eps_training=0.2,
                                     eps_inference=0.0)
    return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.9,
               target_update_freq=50)


def train(algorithm: Any, make_env: Callable[[], Any], **params: Any) -> tuple[Any, Any]:
    """Tianshou's off-policy trainer for one short epoch; the training buffer and the result."""
    torch.manual_seed(0)
    train_envs, test_envs = DummyVectorEnv([make_env] * 2), DummyVectorEnv([make_env] * 2)
    train_envs.seed(0)
    test_envs.seed(1)
    buffer = VectorReplayBuffer(1000, 2)
    collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    collector.reset()
    collector.collect(n_step=64)
    result = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, test_collector=Collector[CollectStats](algorithm, test_envs),
        max_epochs=1, epoch_num_steps=STEPS, collection_step_num_env_steps=10,
        test_step_num_episodes=2, batch_size=32, update_step_num_gradient_steps_per_sample=0.1,
        **params))
    return buffer, result


def check_buffer(buffer: Any, result: Any, nobody: str | int) -> None:
    """Training went on, the buffer holds no missing value, and its infos say who won (the
    single env as "X" / "O", the two-agent env in the vector env's codes 1 / 2)."""
    assert result.train_step >= STEPS and result.train_episode > 0 and result.update_step > 0
    assert not buffer.hasnull()
    winners = set(buffer[:].info.winner.tolist())
    names = {"", "X", "O"} if nobody == "" else {0, 1, 2}
    assert winners <= names and winners - {nobody}  # games were played to a win
    assert buffer[:].info.illegal_action.dtype == bool


@pytest.mark.slow
@pytest.mark.parametrize("size", BOARDS, ids=lambda s: "x".join(map(str, s)))
def test_dqn_trains_on_the_single_agent_env(size):
    env = gym.make("TicTacToe-v0", **board(size))
    buffer, result = train(dqn(env.observation_space, env.action_space),
                           lambda: gym.make("TicTacToe-v0", **board(size)))
    check_buffer(buffer, result, nobody="")


@pytest.mark.slow
@pytest.mark.parametrize("size", BOARDS, ids=lambda s: "x".join(map(str, s)))
def test_tianshous_tic_tac_toe_tutorial_trains_on_the_two_agent_env(size):
    def make_env() -> PettingZooEnv:
        return PettingZooEnv(pz.env(**board(size)))

    env = make_env()
    learner = dqn(env.observation_space["observation"], env.action_space)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[opponent, learner], env=env)
    buffer, result = train(algorithm, make_env,
                           multi_agent_return_reduction=lambda rewards: rewards[:, 1])
    check_buffer(buffer, result, nobody=0)

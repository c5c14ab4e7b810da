"""Batched tabular Q-learning: the collision rule, legal moves on every board, seeding, the
budget and checkpoints, bad batch sizes, files, and train.py's wiring (smoke-sized: the learning
itself is shown by benchmarks/q_perfect.py)."""

from __future__ import annotations

import numpy as np
import pytest

import train
from agents import EXPLORING_STARTS
from agents.tabular import batched as q_batched
from agents.tabular.q_learning import TRAINING_OPPONENT, QLearningAgent
from gym_tictactoe import evaluation
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.vector import TicTacToeVectorEnv


def batched_agent(episodes: int, batch: int = 64, seed: int = 0, **board) -> QLearningAgent:
    agent = QLearningAgent(seed=seed, **board)
    envs = q_batched.make_envs(agent, batch, TRAINING_OPPONENT, **EXPLORING_STARTS)
    q_batched.train_batched(agent, envs, episodes, seed=seed)
    return agent


def test_one_update_per_entry_is_the_sequential_rule():
    agent = QLearningAgent(seed=0, alpha=0.1)
    agent.q[5, 2], agent.visits[5, 2] = 0.5, 30
    q_batched.update(agent, np.array([5 * 9 + 2]), np.array([1.0]))
    assert agent.visits[5, 2] == 31
    assert agent.q[5, 2] == pytest.approx(0.5 + 0.1 * 0.5)  # max(alpha, 1/31) = alpha


def test_colliding_updates_keep_the_running_mean_while_counts_are_low():
    agent = QLearningAgent(seed=0, alpha=0.01)
    agent.q[7, 4], agent.visits[7, 4] = 0.2, 2  # the mean of two earlier targets
    q_batched.update(agent, np.array([7 * 9 + 4] * 3), np.array([1.0, 0.0, -1.0]))
    assert agent.visits[7, 4] == 5
    assert agent.q[7, 4] == pytest.approx((2 * 0.2 + 0.0) / 5)  # the mean of all five targets


def test_colliding_updates_at_the_floor_rate_take_the_compound_rate():
    agent = QLearningAgent(seed=0, alpha=0.5)
    agent.visits[3, 0] = 1000
    q_batched.update(agent, np.array([3 * 9] * 2 + [3 * 9 + 1]), np.array([1.0, 1.0, -1.0]))
    assert agent.q[3, 0] == pytest.approx(0.75)  # two sequential steps of rate 0.5 towards 1
    assert agent.q[3, 1] == pytest.approx(-1.0)  # a first visit takes its target
    assert agent.visits[3].tolist()[:2] == [1002, 1]


def test_every_move_is_legal_and_every_moved_board_updates_one_entry():
    agent = QLearningAgent(seed=1)
    envs = TicTacToeVectorEnv(32, TRAINING_OPPONENT, "random", illegal_action="raise",
                              **EXPLORING_STARTS)
    stats = q_batched.train_batched(agent, envs, 2000, seed=1)
    assert stats.episodes == 2000 == stats.wins + stats.draws + stats.losses
    assert agent.visits.sum() == stats.steps and agent.episodes == stats.episodes


def test_the_same_seed_trains_the_same_table():
    first, second = batched_agent(3000, seed=3), batched_agent(3000, seed=3)
    assert np.array_equal(first.q, second.q) and np.array_equal(first.visits, second.visits)
    assert not np.array_equal(first.q, batched_agent(3000, seed=4).q)


def test_a_short_batched_run_plays_far_better_than_an_untrained_table():
    rate = evaluation.optimal_move_rate(batched_agent(20_000)).rate
    assert rate > evaluation.optimal_move_rate(QLearningAgent(seed=0)).rate + 0.2


def test_checkpoints_run_at_each_multiple_and_can_stop_training():
    agent, seen = QLearningAgent(seed=0), []
    envs = q_batched.make_envs(agent, 16, TRAINING_OPPONENT)
    stats = q_batched.train_batched(agent, envs, 10_000, eval_every=500,
                                    on_eval=lambda a, n: seen.append(n) or len(seen) == 3)
    assert stats.stopped and seen == [500, 1000, 1500] and agent.episodes == 1500


def test_without_on_eval_no_checkpoint_drops_episodes():
    # 256 boards finish far more than 10 episodes a step: cutting at multiples of eval_every
    # would drop most of them unlearned, though no checkpoint runs.
    tables = []
    for eval_every in (10, 0):
        agent = QLearningAgent(seed=0)
        envs = q_batched.make_envs(agent, 256, TRAINING_OPPONENT, **EXPLORING_STARTS)
        stats = q_batched.train_batched(agent, envs, 3000, seed=0, eval_every=eval_every)
        assert stats.episodes == 3000 == agent.episodes
        tables.append(agent.visits.copy())
    assert np.array_equal(*tables)


@pytest.mark.slow
def test_a_compact_board_trains_and_its_file_refuses_another_board(tmp_path):
    # About 6 s, most of it building 4x4x3's index: the one test of the batched learner on the
    # compact layout (13-16 cells), where it is train.py's default.
    agent = batched_agent(2000, batch=256, rows=4, cols=4, win_length=3)
    assert agent.visits.sum() > 2000
    path = agent.save(tmp_path / "model.npz")
    loaded = QLearningAgent.load(path, rows=4, cols=4, win_length=3)
    assert np.array_equal(loaded.q, agent.q)
    with pytest.raises(ValueError, match="trained on 4x4x3, not 3x3x3"):
        QLearningAgent.load(path, rows=3, cols=3, win_length=3)


@pytest.mark.parametrize("batch", [0, -3, 2**30, True, 4.0, "64"])
def test_a_bad_batch_size_is_one_clear_error(batch):
    with pytest.raises(ValueError, match=r"^num_envs must be an integer from 1 to [\d,]+ \(the "
                                         r"boards trained at once: .* on this board\); got"):
        q_batched.make_envs(QLearningAgent(seed=0), batch, "random")


def test_an_env_of_another_board_or_kind_is_refused():
    agent = QLearningAgent(seed=0)
    with pytest.raises(ValueError, match="the agent plays 3x3x3, the vector env 4x4x3"):
        q_batched.train_batched(agent, TicTacToeVectorEnv(4, rows=4, cols=4, win_length=3), 10)
    with pytest.raises(TypeError, match="needs a TicTacToeVectorEnv"):
        q_batched.train_batched(agent, TicTacToeEnv(), 10)


def test_train_py_trains_q_batched_by_default():
    from agents.run.training import q_batch

    assert q_batch(train.parse_args(["--no-progress"])) == q_batched.SMALL_BATCH
    assert q_batch(train.parse_args(["--no-progress", "--board", "4x4x3"])) == 4096
    assert q_batch(train.parse_args(["--no-progress", "--opponent", "self"])) == 64
    assert q_batch(train.parse_args(["--no-progress", "--n-envs", "256"])) == 256


def test_train_py_without_exploring_starts_keeps_the_batch_to_the_empty_board(monkeypatch,
                                                                              tmp_path):
    from agents.run.training import Checkpointer, train_q

    made, make_envs = [], q_batched.make_envs

    def recording(*args, **kwargs):
        envs = make_envs(*args, **kwargs)
        reset = envs.reset

        def recorded_reset(**reset_kwargs):
            obs, info = reset(**reset_kwargs)
            made.append(int((info["board"] != 0).sum(axis=1).max()))
            return obs, info
        envs.reset = recorded_reset
        return envs

    monkeypatch.setattr(q_batched, "make_envs", recording)
    config = train.parse_args(["--start", "empty", "--episodes", "50", "--no-progress",
                               "--out", str(tmp_path)])
    trained = train_q(config, Checkpointer(config))
    assert trained.settings["env_options"] == {"start": "empty"} and trained.settings["batch"]
    assert trained.policy.episodes == 50 and made == [1]  # empty, or X's first move played


@pytest.mark.slow
def test_batched_self_play_refreshes_the_pool_and_evaluates_at_its_marks():
    from agents.self_play import SnapshotPool

    def run(seed: int) -> tuple[QLearningAgent, SnapshotPool, list[int]]:
        agent, pool, seen = QLearningAgent(seed=seed), SnapshotPool(seed=seed), []
        q_batched.train_self_play(agent, pool, 3000, 500, batch=32, seed=seed, eval_every=1000,
                                  on_eval=lambda a, n: seen.append(n))
        return agent, pool, seen

    agent, pool, seen = run(2)
    assert pool.added == 6 and seen == [1000, 2000, 3000] and agent.episodes == 3000
    assert pool.slots[-1].policy is not agent and pool.slots[-1].policy.episodes == 2500
    assert np.array_equal(agent.q, run(2)[0].q)

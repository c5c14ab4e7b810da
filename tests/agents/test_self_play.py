"""Self-play: the snapshot pool as an opponent, its refreshes, and the tabular trainer."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bench_helpers import benchmark_module

from agents.self_play import SnapshotPool, train_q
from agents.tabular.q_learning import QLearningAgent
from gym_tictactoe import evaluation, game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.players.opponents import MixtureOpponent
from gym_tictactoe.players.stochastic import UniformPolicy

T3 = game.TICTACTOE  # tic-tac-toe's rules


def _positions() -> tuple[np.ndarray, np.ndarray]:
    codes = T3.reachable[~T3.tables.terminal[T3.reachable]]
    o_to_move = (T3.tables.to_move[codes] == game.O)[:, None]
    boards = np.where(o_to_move, game.SWAP[T3.tables.cells[codes]], T3.tables.cells[codes])
    return boards.astype(np.int8), T3.tables.legal_mask[codes]


def test_a_new_pool_plays_uniformly_random_snapshots():
    pool = SnapshotPool(size=3)
    assert all(isinstance(slot.policy, UniformPolicy) for slot in pool.slots)
    opponent = pool.opponent()
    assert isinstance(opponent, MixtureOpponent)
    np.testing.assert_allclose(opponent.weights, [1 / 3] * 3)


def test_snapshots_replace_the_oldest_and_stay_frozen():
    pool, agent = SnapshotPool(size=2), QLearningAgent(seed=0)
    env = TicTacToeEnv("random", "random")
    boards, masks = _positions()
    frozen_moves = []
    for _ in range(3):
        agent.train(env, 300)
        pool.add(agent)
        frozen_moves.append(agent.act_batch(boards, masks))
    assert pool.added == 3
    # Slot 0 holds the third snapshot, slot 1 the second; both play as the agent did then.
    np.testing.assert_array_equal(pool.slots[0].act_batch(boards, masks), frozen_moves[2])
    np.testing.assert_array_equal(pool.slots[1].act_batch(boards, masks), frozen_moves[1])
    agent.train(env, 300)
    np.testing.assert_array_equal(pool.slots[0].act_batch(boards, masks), frozen_moves[2])
    assert not np.array_equal(agent.act_batch(boards, masks), frozen_moves[1])


def test_a_mixed_pool_gives_the_built_in_its_share():
    opponent = SnapshotPool(size=4, mix="minimax", share=0.2).opponent()
    np.testing.assert_allclose(opponent.weights, [0.2] * 5)
    assert type(opponent.opponents[-1]).__name__ == "MinimaxOpponent"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"size": 0}, "size must be an integer >= 1 \\(snapshots\\); got 0"),
     ({"share": 0.3}, "share 0.3 of the episodes needs a mix opponent"),
     ({"mix": "minimax", "share": 1.0}, r"share must be a number in \(0, 1\) \(the episodes"),
     ({"mix": "perfect", "share": 0.5}, "unknown opponent 'perfect'")],
)
def test_bad_pool_arguments_say_what_is_allowed(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SnapshotPool(**kwargs).opponent()


@pytest.mark.slow
def test_a_snapshot_of_another_board_or_without_frozen_is_refused():
    pool = SnapshotPool()
    with pytest.raises(ValueError, match="a snapshot of a 4x4x3 policy cannot join a pool of "
                                         "the 3x3x3 board"):
        pool.add(QLearningAgent(rows=4, cols=4, win_length=3))
    with pytest.raises(ValueError, match=r"needs policy.frozen\(\)"):
        pool.add(lambda obs, mask: 0)
    assert pool.added == 0


@pytest.mark.slow
def test_tabular_self_play_refreshes_evaluates_and_repeats_with_its_seed():
    results = []
    for _ in range(2):
        agent, pool, evaluated = QLearningAgent(seed=4), SnapshotPool(size=3), []

        def on_eval(agent, episodes, evaluated=evaluated):
            evaluated.append((episodes, evaluation.optimal_move_rate(agent).rate))
            return False

        done = train_q(agent, pool, 2_500, refresh_every=500, eval_every=1_000,
                       on_eval=on_eval)
        assert done == 2_500 and pool.added == 5 and agent.episodes == 2_500
        assert [episodes for episodes, _ in evaluated] == [1_000, 2_000, 2_500]
        results.append((agent.q.copy(), evaluated))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


def test_tabular_self_play_stops_when_asked():
    agent, pool = QLearningAgent(seed=0), SnapshotPool()
    done = train_q(agent, pool, 10_000, refresh_every=500, eval_every=500,
                   on_eval=lambda agent, episodes: episodes >= 1_000)
    assert done == 1_000 and agent.episodes == 1_000


def test_tabular_self_play_starts_episodes_as_told(monkeypatch):
    """Exploring starts by default (agents.EXPLORING_STARTS); ``env_options={}`` for none."""
    import gymnasium as gym

    from agents import EXPLORING_STARTS

    made, make = [], gym.make

    def recording_make(*args, **kwargs):
        env = make(*args, **kwargs)
        made.append(env.unwrapped)
        return env

    monkeypatch.setattr(gym, "make", recording_make)
    for options, expected in ((None, ("random", 0.75)), ({}, ("empty", 1.0))):
        train_q(QLearningAgent(seed=0), SnapshotPool(), 200, refresh_every=100,
                env_options=options)
        assert (made[-1].start, made[-1].start_probability) == expected
    assert EXPLORING_STARTS == {"start": "random", "start_probability": 0.75}


def test_tabular_self_play_checks_its_counts():
    with pytest.raises(ValueError, match="refresh_every must be an integer >= 1; got 0"):
        train_q(QLearningAgent(), SnapshotPool(), 100, refresh_every=0)


class _Lowest:
    """A policy that plays the lowest free cell; its snapshot is itself."""

    rules = game.TICTACTOE

    def frozen(self):
        return self

    def __call__(self, obs, mask):
        return int(np.flatnonzero(mask)[0])

    def act_batch(self, observations, masks):
        return np.asarray(masks).argmax(axis=1)


def test_envs_holding_the_pool_opponent_see_each_refresh_at_once():
    from gym_tictactoe.envs.vector import TicTacToeVectorEnv

    pool = SnapshotPool(size=1)
    vec = TicTacToeVectorEnv(32, opponent=pool.opponent(), agent_mark="O")
    single = TicTacToeEnv(pool.opponent(), "O")
    obs, _ = vec.reset(seed=0)
    assert len({int(np.argmax(row)) for row in obs}) > 1  # random openings before the refresh
    pool.add(_Lowest())  # the envs were built before: they must play the new snapshot now
    obs, _ = vec.reset(seed=1)
    assert (obs[:, 0] == 2).all() and (obs != 0).sum() == 32  # X (the pool) opened in cell 0
    assert single.reset(seed=1)[0].tolist() == [2] + [0] * 8


def _benchmark():
    """benchmarks/self_play.py as a module."""
    return benchmark_module("self_play")


@pytest.mark.slow
def test_the_benchmark_runs_train_py_and_keeps_earlier_rows(tmp_path, monkeypatch):
    bench = _benchmark()
    assert bench.RUNS["q-3x3-empty"] == [*bench.RUNS["q-3x3"], "--start", "empty"]
    monkeypatch.setitem(bench.RUNS, "tiny", ["--algo", "q", "--episodes", "2000",
                                             "--eval-every", "1000"])
    row = bench.run("tiny", 3, tmp_path)
    assert row["clock"] == "episodes" and row["trained"] == 2000 and row["seed"] == 3
    assert row["command"].startswith("train.py --algo q --episodes 2000")
    assert f"--out {tmp_path}" in row["command"]  # outside the repository: the whole path
    summary = tmp_path / "summary.json"
    bench.write_summary(summary, "first", [row, {**row, "seed": 4}])
    bench.write_summary(summary, "second", [{**row, "best_rate": 0.5}])
    written = json.loads(summary.read_text())
    assert written["commands"] == ["first", "second"]
    assert [(r["seed"], r["best_rate"]) for r in written["runs"]] == [(4, row["best_rate"]),
                                                                     (3, 0.5)]

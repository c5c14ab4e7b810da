"""Starts aimed at the positions still played wrong (agents.tabular.starts): the wrong positions are
the evaluation's blunders, the predecessors are the positions two plies back, the weights keep
a uniform share, and the vector env draws from them (smoke-sized and seeded)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bench_helpers import benchmark_module

from agents import EXPLORING_STARTS
from agents.tabular import batched as q_batched
from agents.tabular import starts as q_starts
from agents.tabular.q_learning import TRAINING_OPPONENT, QLearningAgent
from gym_tictactoe import evaluation, game
from gym_tictactoe.game import starts


def trained(episodes: int) -> QLearningAgent:
    agent = QLearningAgent(seed=0)
    envs = q_batched.make_envs(agent, 64, TRAINING_OPPONENT, **EXPLORING_STARTS)
    q_batched.train_batched(agent, envs, episodes, seed=0)
    return agent


def test_the_wrong_positions_are_the_evaluations_blunders():
    agent = trained(3000)
    moves = evaluation.policy_moves(agent)
    wrong = q_starts.wrong_positions(agent.rules, moves)
    rate = evaluation.optimal_move_rate(agent, moves=moves)
    assert wrong.shape == starts.start_codes(agent.rules).shape
    assert 0 < wrong.sum() == rate.n_blunders
    assert set(starts.start_codes(agent.rules)[wrong]) == {b.code for b in rate.blunders}
    moves[starts.start_codes(agent.rules)[0]] = evaluation.NOT_A_CELL  # illegal: wrong too
    assert q_starts.wrong_positions(agent.rules, moves)[0]


def test_predecessors_are_the_positions_two_plies_back():
    rules = game.TICTACTOE
    codes = starts.start_codes(rules)
    index = {int(code): i for i, code in enumerate(codes)}
    wrong = np.random.default_rng(0).random(codes.size) < 0.02
    expected = np.zeros(codes.size, dtype=bool)
    for i, code in enumerate(codes.tolist()):
        for move in rules.legal_moves(code):
            after = rules.play(code, move)
            if not rules.is_terminal(after):
                expected[i] |= any(wrong[index[rules.play(after, reply)]] for reply in
                                   rules.legal_moves(after) if rules.play(after, reply) in index)
    found = q_starts.predecessors(rules, wrong)
    assert found.sum() > wrong.sum() and np.array_equal(found, expected)
    ahead = np.zeros(codes.size, dtype=bool)  # the other way: two plies after a wrong one
    for i in np.flatnonzero(wrong):
        code = int(codes[i])
        for move in rules.legal_moves(code):
            after = rules.play(code, move)
            for reply in ([] if rules.is_terminal(after) else rules.legal_moves(after)):
                if rules.play(after, reply) in index:
                    ahead[index[rules.play(after, reply)]] = True
    assert ahead.sum() > wrong.sum() and np.array_equal(q_starts.successors(rules, wrong), ahead)


def test_focus_weights_keep_a_uniform_share():
    wrong = np.array([True, False, False, False])
    back = np.array([False, True, False, False])
    weights = q_starts.focus_weights(wrong, 0.5, back, 0.25)
    assert np.allclose(weights, [0.5 + 0.0625, 0.25 + 0.0625, 0.0625, 0.0625])
    assert np.allclose(q_starts.focus_weights(np.zeros(4, bool), 0.5), 0.25)  # nothing wrong


def test_focus_points_the_envs_random_starts_at_the_wrong_positions():
    agent = trained(3000)
    envs = q_batched.make_envs(agent, 2000, TRAINING_OPPONENT, start="random")
    moves = evaluation.policy_moves(agent)
    found = q_starts.focus(envs, moves, share=1.0)
    wrong = q_starts.wrong_positions(agent.rules, moves)
    assert np.array_equal(found, wrong) and wrong.sum() > 0
    _, info = envs.reset(seed=0)
    drawn = info["board"] @ agent.rules.pow3
    assert set(drawn) <= set(starts.start_codes(agent.rules)[wrong])
    with pytest.raises(ValueError, match=r"share \+ back_share \+ ahead_share must be a number"):
        q_starts.focus(envs, moves, share=0.8, back_share=0.1, ahead_share=0.2)
    q_starts.focus(envs, moves, share=0.5, back_share=0.2, ahead_share=0.3)  # no uniform share
    weights = np.diff(envs.start_weights.cumulative, prepend=0.0)
    assert weights.sum() == pytest.approx(1.0) and weights.min() >= 0
    assert weights[wrong].sum() >= 0.5 - 1e-9


def q_perfect():
    """benchmarks/q_perfect.py as a module."""
    return benchmark_module("q_perfect")


@pytest.mark.parametrize("extra", [[], ["--self-play", "--refresh-every", "500"]])
def test_q_perfect_writes_its_json_at_every_checkpoint(tmp_path, monkeypatch, extra):
    bench, out = q_perfect(), tmp_path / "q.json"
    seen = []
    record = bench.Checkpoint._record

    def recorded(self, point, elapsed):
        record(self, point, elapsed)
        seen.append(len(json.loads(out.read_text())["curve"]))

    monkeypatch.setattr(bench.Checkpoint, "_record", recorded)
    bench.main(["--board", "3x3x3", "--batch", "64", "--episodes", "3000", "--eval-every", "1000",
                "--focus-share", "0.5", "--back-share", "0.2", "--alpha-end", "0.01",
                "--alpha-episodes", "2000", "--out", str(out), *extra])
    results = json.loads(out.read_text())
    assert seen == [1, 2, 3] and [p["episodes"] for p in results["curve"]] == [1000, 2000, 3000]
    assert [p["alpha"] for p in results["curve"]] == pytest.approx([0.05 * 0.2**0.5, 0.01, 0.01])
    assert results["peak_rss_mb"] > 0 and results["focus"] == {"share": 0.5, "back_share": 0.2,
                                                             "ahead_share": 0.0, "forget": False}
    assert results["curve"][0]["wrong"] > 0
    assert results["opponent"] == ("self" if extra else TRAINING_OPPONENT)


def test_q_margins_finds_perfect_play_the_fixed_point_against_the_training_opponent():
    bench = benchmark_module("q_margins")
    trained_against = bench.margins(game.TICTACTOE, 0.4, 0.99)  # q_learning's docstring: >= 0.23
    assert trained_against["wrong_at_fixed_point"] == 0
    assert 0.23 <= trained_against["min_margin"] < 0.24
    random = bench.margins(game.TICTACTOE, 1.0, 0.99)  # against random play: no such guarantee
    assert random["wrong_at_fixed_point"] > 0 > random["min_margin"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--focus-share", "0.7", "--ahead-share", "0.4"], "must be at most 1"),
    (["--alpha-end", "0"], "--alpha-end must be above 0"),
])
def test_q_perfect_refuses_bad_shares_before_training(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        q_perfect().parse_args(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_forget_zeroes_the_visits_of_the_wrong_positions_rows_only():
    agent = trained(3000)
    rules, codes = agent.rules, starts.start_codes(agent.rules)
    wrong = q_starts.wrong_positions(rules, evaluation.policy_moves(agent))
    before = agent.visits.copy()
    q_starts.forget(agent, wrong)
    cleared = np.flatnonzero((before != agent.visits).any(axis=1))
    assert cleared.size > 0 and (agent.visits[cleared] == 0).all()
    for code in codes[wrong][:20]:  # each wrong position's row, seen by the side to move
        cells = rules.cells_of([code])[0]
        view = cells if (cells != 0).sum() % 2 == 0 else game.SWAP[cells]
        row, _ = agent.index.locate_one(int(view @ rules.pow3))
        assert row in cleared
    assert np.array_equal(np.delete(agent.visits, cleared, 0), np.delete(before, cleared, 0))


@pytest.mark.parametrize("extra", [[], ["--opponent", "self", "--refresh-every", "500"]])
def test_train_py_aims_its_starts_and_anneals_at_each_checkpoint(tmp_path, extra):
    """train.py --algo q with the flags q_perfect.py measured: the checkpoint's own moves table
    aims the starts (no second evaluation), the floor follows agents.tabular.focus' rule, and
    results.json's config records the settings."""
    from agents.run.training import Checkpointer, train_q
    from train import parse_args

    config = parse_args(["--episodes", "2000", "--eval-every", "1000", "--seed", "3",
                         "--focus-share", "0.5", "--back-share", "0.2", "--forget",
                         "--alpha-end", "0.01", "--alpha-episodes", "4000", "--no-progress",
                         "--out", str(tmp_path), *extra])
    checkpoint = Checkpointer(config)
    trained_run = train_q(config, checkpoint, q_pool(config))
    agent, envs = trained_run.policy, checkpoint.steer.envs
    rules = agent.rules
    # Training stops at the last checkpoint: its focus read the agent as it is now.
    wrong = q_starts.wrong_positions(rules, evaluation.policy_moves(agent))
    back = q_starts.predecessors(rules, wrong) & ~wrong
    weights = np.diff(envs.start_weights.cumulative, prepend=0.0)
    assert 0 < wrong.sum() < wrong.size and weights[wrong].sum() >= 0.5
    assert weights[~wrong & ~back] == pytest.approx(0.3 / wrong.size)  # the uniform rest
    curve = checkpoint.curve
    assert [e["episodes"] for e in curve] == [1000, 2000] and curve[-1]["wrong"] == wrong.sum()
    assert [e["alpha"] for e in curve] == pytest.approx([0.05 * 0.2**0.25, 0.05 * 0.2**0.5])
    assert agent.config.alpha == pytest.approx(0.05 * 0.2**0.5)
    assert trained_run.settings["focus"] == {"share": 0.5, "back_share": 0.2,
                                             "ahead_share": 0.0, "forget": True}
    assert trained_run.settings["alpha_schedule"] == {"end": 0.01, "episodes": 4000}
    assert trained_run.settings["hyperparameters"]["alpha"] == 0.05  # where it started


def q_pool(config):
    from agents.run.training import snapshot_pool

    return snapshot_pool(config)


def test_without_the_flags_train_py_keeps_uniform_starts_and_its_floor(tmp_path):
    from agents.run.training import Checkpointer, train_q
    from train import parse_args

    config = parse_args(["--episodes", "1000", "--eval-every", "500", "--no-progress",
                         "--out", str(tmp_path)])
    checkpoint = Checkpointer(config)
    trained_run = train_q(config, checkpoint)
    assert config.focus is None and checkpoint.steer is None
    assert trained_run.policy.config.alpha == 0.05
    assert not {"wrong", "alpha"} & {key for entry in checkpoint.curve for key in entry}
    assert trained_run.settings["focus"] == {"share": 0.0, "back_share": 0.0,
                                             "ahead_share": 0.0, "forget": False}
    assert trained_run.settings["alpha_schedule"] is None


@pytest.mark.parametrize(("argv", "message"), [
    (["--algo", "dqn", "--focus-share", "0.5"], "--focus-share applies to --algo q and alphazero"),
    (["--algo", "alphazero", "--alpha-end", "0.01"], "--alpha-end applies to --algo q only"),
    (["--focus-share", "0.9", "--back-share", "0.2"],
     "--focus-share + --back-share must be at most 1 (the rest of the random starts stays "
     "uniform); got 1.1"),
    (["--focus-share", "1.5"], "expected a probability, a number in [0, 1]; got '1.5'"),
    (["--back-share", "half"], "expected a probability, a number in [0, 1]; got 'half'"),
    (["--alpha-end", "0"], "--alpha-end: value must be a number in (0, 1]; got 0.0"),
    (["--alpha-end", "2"], "--alpha-end: value must be a number in (0, 1]; got 2.0"),
    (["--alpha-end", "nan"], "--alpha-end: value must be a number in (0, 1]"),
    (["--alpha-end", "0.01", "--alpha-episodes", "0"], "expected a positive integer, got '0'"),
    (["--alpha-episodes", "1000"], "--alpha-episodes needs --alpha-end"),
    (["--forget"], "--forget needs --focus-share or --back-share above 0"),
    (["--focus-share", "0", "--forget"], "--forget needs --focus-share or --back-share"),
    (["--start", "empty", "--focus-share", "0.5"], "they need --start random"),
])
def test_train_py_refuses_bad_steering_flags_in_one_line(argv, message, tmp_path, capsys):
    from train import parse_args

    with pytest.raises(SystemExit) as exit_:
        parse_args([*argv, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert ": error: " in err.strip().splitlines()[-1] and message in err.strip().splitlines()[-1]


def test_focus_settings_are_checked_where_they_are_made():
    from agents.tabular.focus import Focus, annealed_alpha

    with pytest.raises(ValueError, match=r"share \+ back_share \+ ahead_share must be a number "
                                         r"in \[0, 1\] \(the rest"):
        Focus(share=0.6, back_share=0.3, ahead_share=0.2)
    with pytest.raises(ValueError, match=r"alpha_end must be a number in \(0, 1\] or None"):
        Focus(alpha_end=0.0)
    with pytest.raises(ValueError, match="forget must be True or False"):
        Focus(share=0.5, forget=1)
    with pytest.raises(ValueError, match="alpha_episodes must be an integer"):
        Focus(alpha_end=0.01, alpha_episodes=0)
    assert annealed_alpha(0.05, 0.01, 100, 0) == 0.05
    assert annealed_alpha(0.05, 0.01, 100, 50) == pytest.approx(0.05 * 0.2**0.5)
    assert annealed_alpha(0.05, 0.01, 100, 10**9) == pytest.approx(0.01)

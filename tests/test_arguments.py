"""One argument checker: every public argument that takes a number accepts Python and NumPy
scalars alike and refuses bools, with one wording; one seed rule wherever a seed is taken;
``Rules`` is a value."""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from agents.self_play import SnapshotPool, train_q
from agents.tabular.q_learning import QLearningAgent
from gym_tictactoe import checks, cli, evaluation, game
from gym_tictactoe.envs import rendering
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.vector import TicTacToeVectorEnv
from gym_tictactoe.game import starts
from gym_tictactoe.players.mcts import MCTSPlayer
from gym_tictactoe.players.opponents import (
    EpsilonOpponent,
    HeuristicOpponent,
    MinimaxOpponent,
    MixtureOpponent,
    MonteCarloOpponent,
    RandomOpponent,
    make_opponent,
    resolve_opponent,
)
from gym_tictactoe.players.search import AlphaBetaPlayer
from gym_tictactoe.players.stochastic import UniformPolicy
from gym_tictactoe.players.symmetrized import SymmetrizedPolicy


class _MultiagentExtra:
    """gym_tictactoe.envs.pettingzoo, imported when a case first uses it: without the multiagent
    extra those cases skip, and the rest of this file still runs."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # pytest's collection asks every module global for some
            raise AttributeError(name)
        module = pytest.importorskip("gym_tictactoe.envs.pettingzoo", exc_type=ImportError,
                                     reason="the multiagent extra")
        return getattr(module, name)


pettingzoo = _MultiagentExtra()


def first_legal(obs: Any, mask: Any) -> int:
    return int(np.flatnonzero(mask)[0])


# --- the checker itself ------------------------------------------------------------------------

@pytest.mark.parametrize("value", [3, np.int8(3), np.int64(3), np.uint16(3)])
def test_check_int_takes_python_and_numpy_integers_as_plain_ints(value):
    checked = checks.check_int(value, "count", 1, 5)
    assert checked == 3 and type(checked) is int


@pytest.mark.parametrize(("value", "kwargs", "message"), [
    (True, {"low": 1, "high": 5}, "count must be an integer from 1 to 5; got True"),
    (np.bool_(True), {"low": 1}, "count must be an integer >= 1; got np.True_"),
    (np.timedelta64(3), {"low": 1}, "count must be an integer >= 1; got np.timedelta64(3)"),
    (3.0, {"low": 1}, "count must be an integer >= 1; got 3.0"),
    ("3", {}, "count must be an integer; got '3'"),
    (0, {"low": 1, "high": 20_000}, "count must be an integer from 1 to 20,000; got 0"),
    (None, {"low": 1, "none": True}, None),
    (-1, {"low": 1, "none": True}, "count must be an integer >= 1 or None; got -1"),
    (9, {"high": 5, "note": " (five fingers)"}, r"count must be an integer <= 5 (five fingers); "
                                                "got 9"),
], ids=repr)
def test_check_int_says_what_is_allowed(value, kwargs, message):
    if message is None:
        assert checks.check_int(value, "count", **kwargs) is None
        return
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        checks.check_int(value, "count", **kwargs)


@pytest.mark.parametrize("value", [0.5, np.float32(0.5), np.float64(0.5), np.float16(0.5)])
def test_check_number_takes_python_and_numpy_numbers_as_floats(value):
    checked = checks.check_number(value, "p", 0.0, 1.0)
    assert checked == 0.5 and type(checked) is float
    assert checks.check_number(np.int64(1), "p", 0.0, 1.0) == 1.0


@pytest.mark.parametrize(("value", "kwargs", "message"), [
    (True, {"low": 0.0, "high": 1.0}, "p must be a number in [0, 1]; got True"),
    (np.bool_(False), {"low": 0.0, "high": 1.0}, "p must be a number in [0, 1]; got np.False_"),
    (float("nan"), {"low": 0.0, "high": 1.0}, "p must be a number in [0, 1]; got nan"),
    (float("inf"), {}, "p must be a finite number; got inf"),
    (0.0, {"low": 0.0, "high": 1.0, "low_open": True}, "p must be a number in (0, 1]; got 0.0"),
    (1, {"low": 0.0, "high": 1.0, "high_open": True}, "p must be a number in [0, 1); got 1"),
    (-1, {"low": 0.0}, "p must be a number >= 0; got -1"),
    ("0.5", {"low": 0.0, "high": 1.0}, "p must be a number in [0, 1]; got '0.5'"),
], ids=repr)
def test_check_number_says_what_is_allowed(value, kwargs, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        checks.check_number(value, "p", **kwargs)


def test_check_flag_and_check_choice():
    assert checks.check_flag(np.bool_(True), "flag") is True
    for bad in (1, 0, "yes", None):
        with pytest.raises(ValueError, match=r"^flag must be True or False; got "):
            checks.check_flag(bad, "flag")
    assert checks.check_choice(np.str_("X"), "mark", ("X", "O")) == "X"
    assert type(checks.check_choice(np.str_("X"), "mark", ("X", "O"))) is str
    for bad in (np.array(["X", "O"]), ["X"], True, 1):
        with pytest.raises(ValueError, match=r"^mark must be one of \['X', 'O', None\]; got "):
            checks.check_choice(bad, "mark", ("X", "O", None))


# --- every public argument that takes a number ---------------------------------------------------
# (name, call with the argument set to a value, a valid value). NumPy scalars of the valid value
# are accepted; True is refused with a message that names the argument.

def _sb3_vec(**kwargs: Any) -> Any:
    from agents.sb3.vec_env import TicTacToeSB3VecEnv

    return TicTacToeSB3VecEnv(**{"num_envs": 2, **kwargs})


def _sb3(name: str) -> Any:
    from agents import sb3

    return getattr(sb3, name)


def _eval_callback(every: Any) -> Any:
    from agents.sb3 import ExactEvalCallback

    return ExactEvalCallback("ppo", eval_every=every)


def _snapshot_callback(every: Any) -> Any:
    from agents.self_play import snapshot_callback

    return snapshot_callback(SnapshotPool(), every, "ppo", False)


def _alphazero_policy(**kwargs: Any) -> Any:
    from agents.alphazero.network import NetworkSettings, build
    from agents.alphazero.policy import AlphaZeroPolicy

    return AlphaZeroPolicy(build(NetworkSettings(channels=2, blocks=0)), game.TICTACTOE, **kwargs)


def _alphazero_settings(**kwargs: Any) -> Any:
    from agents.alphazero.self_play import PlaySettings
    from agents.alphazero.training import AlphaZeroSettings

    play = {key: kwargs.pop(key) for key in list(kwargs) if hasattr(PlaySettings, key)}
    return AlphaZeroSettings(play=PlaySettings(**play), **kwargs)


def _network(**kwargs: Any) -> Any:
    from agents.alphazero.network import NetworkSettings

    return NetworkSettings(**kwargs)


def _batched(**kwargs: Any) -> Any:
    from agents.tabular import batched as q_batched

    counts = {"episodes": 2, **kwargs}
    return q_batched.train_batched(QLearningAgent(seed=0), TicTacToeVectorEnv(2),
                                   counts.pop("episodes"), **counts)


def _make_envs(num_envs: Any) -> Any:
    from agents.tabular import batched as q_batched

    return q_batched.make_envs(QLearningAgent(seed=0), num_envs, "random")


def _train_q(**kwargs: Any) -> Any:
    counts = {"episodes": 2, "refresh_every": 2, "eval_every": 2, **kwargs}
    return train_q(QLearningAgent(seed=0), SnapshotPool(), counts.pop("episodes"),
                   counts.pop("refresh_every"), **counts)


NUMBERS: list[tuple[str, Callable[[Any], Any], int | float]] = [
    *[(f"rules {name}", lambda v, name=name: game.rules(**{name: v}), 3)
      for name in ("rows", "cols", "win_length")],
    ("Rules rows", lambda v: game.Rules(v, 3, 3), 3),
    *[(f"TicTacToeEnv {name}", lambda v, name=name: TicTacToeEnv(**{name: v}), 3)
      for name in ("rows", "cols", "win_length")],
    ("TicTacToeEnv start_probability", lambda v: TicTacToeEnv(start_probability=v), 0.5),
    ("vector num_envs", lambda v: TicTacToeVectorEnv(v), 3),
    ("vector rows", lambda v: TicTacToeVectorEnv(2, rows=v), 3),
    ("vector start_probability", lambda v: TicTacToeVectorEnv(2, start_probability=v), 0.5),
    ("AEC win_length", lambda v: pettingzoo.raw_env(win_length=v), 3),
    ("RandomOpponent rows", lambda v: RandomOpponent(rows=v), 3),
    ("MinimaxOpponent cols", lambda v: MinimaxOpponent(cols=v), 3),
    ("HeuristicOpponent win_length", lambda v: HeuristicOpponent(win_length=v), 3),
    ("EpsilonOpponent epsilon", lambda v: EpsilonOpponent(v), 0.5),
    ("make_opponent epsilon", lambda v: make_opponent("epsilon", epsilon=v), 0.5),
    ("MonteCarloOpponent playouts", lambda v: MonteCarloOpponent(v), 3),
    ("MixtureOpponent weights", lambda v: MixtureOpponent(["random", "heuristic"], [v, 1]), 3),
    ("AlphaBetaPlayer depth", lambda v: AlphaBetaPlayer(depth=v), 3),
    ("AlphaBetaPlayer max_nodes", lambda v: AlphaBetaPlayer(max_nodes=v), 3),
    ("AlphaBetaPlayer radius", lambda v: AlphaBetaPlayer(radius=v), 3),
    ("AlphaBetaPlayer width", lambda v: AlphaBetaPlayer(width=v), 3),
    *[(f"QLearningAgent {name}", lambda v, name=name: QLearningAgent(**{name: v}), 0.5)
      for name in ("alpha", "gamma", "epsilon_start", "epsilon_end")],
    ("QLearningAgent epsilon_decay_episodes",
     lambda v: QLearningAgent(epsilon_decay_episodes=v), 3),
    ("QLearningAgent rows", lambda v: QLearningAgent(rows=v), 3),
    ("QLearningAgent.train episodes",
     lambda v: QLearningAgent(seed=0).train(TicTacToeEnv(), v), 3),
    ("QLearningAgent.train eval_every",
     lambda v: QLearningAgent(seed=0).train(TicTacToeEnv(), 1, eval_every=v), 3),
    ("SnapshotPool size", lambda v: SnapshotPool(size=v), 3),
    ("SnapshotPool share", lambda v: SnapshotPool(mix="random", share=v), 0.5),
    ("train_q episodes", lambda v: _train_q(episodes=v), 3),
    ("train_q refresh_every", lambda v: _train_q(refresh_every=v), 3),
    ("train_q eval_every", lambda v: _train_q(eval_every=v), 3),
    ("snapshot_callback every", _snapshot_callback, 3),
    ("play_games n", lambda v: evaluation.play_games(first_legal, "random", v), 3),
    ("results_table n", lambda v: evaluation.results_table(first_legal, "random", n=v), 3),
    ("solver_policy rows", lambda v: evaluation.solver_policy(rows=v), 3),
    ("evaluate win_length", lambda v: evaluation.evaluate(first_legal, win_length=v), 3),
    ("rgb_array size", lambda v: rendering.rgb_array(0, size=v), 90),
    ("cli.arena games", lambda v: cli.arena(["random"], v, 0, game.TICTACTOE), 3),
    ("start_probability", starts.check_start_probability, 0.5),
    ("TicTacToeSB3VecEnv num_envs", lambda v: _sb3_vec(num_envs=v), 3),
    ("TicTacToeSB3VecEnv start_probability", lambda v: _sb3_vec(start_probability=v), 0.5),
    ("ExactEvalCallback eval_every", _eval_callback, 3),
    ("TicTacToeEnv cell_size", lambda v: TicTacToeEnv(cell_size=v), 40),
    ("vector cols", lambda v: TicTacToeVectorEnv(2, cols=v), 3),
    ("vector win_length", lambda v: TicTacToeVectorEnv(2, win_length=v), 3),
    ("parallel_env rows", lambda v: pettingzoo.parallel_env(rows=v), 3),
    ("AlphaBetaPlayer time_limit", lambda v: AlphaBetaPlayer(time_limit=v), 0.5),
    ("MCTSPlayer max_simulations", lambda v: MCTSPlayer(v), 3),
    ("MCTSPlayer exploration", lambda v: MCTSPlayer(exploration=v), 0.5),
    ("MCTSPlayer radius", lambda v: MCTSPlayer(radius=v), 2),
    ("MCTSPlayer rows", lambda v: MCTSPlayer(rows=v), 3),
    ("rgb_array last", lambda v: rendering.rgb_array(0, last=v), 3),
    ("ansi last", lambda v: rendering.ansi(0, last=v), 3),
    ("q_batched.make_envs num_envs", _make_envs, 3),
    ("train_batched episodes", lambda v: _batched(episodes=v), 3),
    ("train_batched eval_every", lambda v: _batched(eval_every=v), 3),
    ("sb3.make_vec_env n_envs", lambda v: _sb3("make_vec_env")("ppo", n_envs=v), 3),
    ("sb3.make_training_env n_envs", lambda v: _sb3("make_training_env")("ppo", n_envs=v), 3),
    ("AlphaZeroPolicy max_simulations", lambda v: _alphazero_policy(max_simulations=v), 3),
    ("AlphaZeroPolicy c_puct", lambda v: _alphazero_policy(c_puct=v), 0.5),
    ("NetworkSettings channels", lambda v: _network(channels=v), 3),
    ("NetworkSettings blocks", lambda v: _network(blocks=v), 3),
    *[(f"AlphaZeroSettings {name}", lambda v, name=name: _alphazero_settings(**{name: v}), 3)
      for name in ("games_per_round", "steps_per_round", "batch_size", "buffer_size",
                   "temperature_moves")],
    *[(f"AlphaZeroSettings {name}", lambda v, name=name: _alphazero_settings(**{name: v}), 0.5)
      for name in ("learning_rate", "weight_decay", "temperature", "dirichlet_alpha",
                   "noise_fraction", "start_probability")],
]
IDS = [name for name, _, _ in NUMBERS]


def _numpy(value: int | float) -> list[Any]:
    if isinstance(value, int):
        return [np.int64(value), np.int32(value), np.uint8(value)]
    return [np.float32(value), np.float64(value)]


@pytest.mark.parametrize(("name", "call", "valid"), NUMBERS, ids=IDS)
def test_numpy_scalars_are_accepted_as_their_python_values(name, call, valid):
    for value in _numpy(valid):
        call(value)


@pytest.mark.parametrize(("name", "call", "valid"), NUMBERS, ids=IDS)
def test_bools_are_refused_where_a_number_is_meant(name, call, valid):
    argument = name.split()[-1]
    for value in (True, np.bool_(True)):
        message = rf"^{argument} must be .*; got .*{re.escape(repr(value))}"
        with pytest.raises(ValueError, match=message):
            call(value)


def test_numpy_values_are_stored_as_plain_python_values():
    agent = QLearningAgent(alpha=np.float32(0.25), epsilon_decay_episodes=np.int64(7),
                           symmetric=np.bool_(True), seed=np.uint32(5))
    config = agent.config
    assert (config.alpha, config.epsilon_decay_episodes, config.symmetric, config.seed) == \
        (0.25, 7, True, 5)
    assert [type(v) for v in (config.alpha, config.epsilon_decay_episodes, config.symmetric,
                              config.seed)] == [float, int, bool, int]
    assert SnapshotPool(size=np.int64(3)).size == 3
    assert type(MonteCarloOpponent(np.int16(7)).playouts) is int
    assert type(TicTacToeVectorEnv(np.int64(3)).num_envs) is int


# --- one seed rule -----------------------------------------------------------------------------

def _aec_reset(seed: Any) -> Any:
    env = pettingzoo.env()
    return env.reset(seed=seed)


SEEDED: dict[str, Callable[[Any], Any]] = {
    "TicTacToeEnv.reset": lambda s: TicTacToeEnv().reset(seed=s),
    "vector reset": lambda s: TicTacToeVectorEnv(2).reset(seed=s),
    "AEC reset": _aec_reset,
    "play_games": lambda s: evaluation.play_games(first_legal, "random", 1, seed=s),
    "results_table": lambda s: evaluation.results_table(first_legal, "random", n=1, seed=s),
    "solver_policy": lambda s: evaluation.solver_policy(seed=s),
    "SolverPolicy": lambda s: evaluation.SolverPolicy(False, s),
    "UniformPolicy": lambda s: UniformPolicy(s),
    "SymmetrizedPolicy": lambda s: SymmetrizedPolicy(first_legal, seed=s),
    "SnapshotPool": lambda s: SnapshotPool(seed=s),
    "QLearningAgent": lambda s: QLearningAgent(seed=s),
    "QLearningAgent.train": lambda s: QLearningAgent(seed=0).train(TicTacToeEnv(), 1, seed=s),
    "train_q": lambda s: _train_q(seed=s),
    "TicTacToeSB3VecEnv": lambda s: _sb3_vec(seed=s),
    "cli.arena": lambda s: cli.arena(["random"], 1, s, game.TICTACTOE),
    "sb3.make_vec_env": lambda s: _sb3("make_vec_env")("ppo", n_envs=1, seed=s),
    "sb3.build_model": lambda s: _sb3("build_model")("dqn", _sb3("make_vec_env")("dqn", 1), s),
    "TicTacToeSB3VecEnv.seed": lambda s: _sb3_vec().seed(s),
}
BAD_SEEDS = [-1, 2**32, 2**100, True, np.bool_(False), 1.5, np.float64(3), "3",
             np.timedelta64(3)]
GOOD_SEEDS = [None, 0, 2**32 - 1, np.int64(3), np.uint32(3), np.int8(3)]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
@pytest.mark.parametrize("taker", sorted(SEEDED))
def test_every_seed_follows_one_rule_in_one_wording(taker, seed):
    message = f"seed must be None or an integer with 0 <= seed < 2**32; got {seed!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        SEEDED[taker](seed)


@pytest.mark.parametrize("seed", GOOD_SEEDS, ids=repr)
@pytest.mark.parametrize("taker", sorted(SEEDED))
def test_every_seed_taker_accepts_python_and_numpy_integers(taker, seed):
    SEEDED[taker](seed)


def _episode(env: TicTacToeEnv, seed: Any) -> list:
    obs, _ = env.reset(seed=seed)
    trace, done = [obs.tolist()], False
    while not done:
        obs, reward, done, _, _ = env.step(first_legal(obs, env.action_masks()))
        trace.append((obs.tolist(), reward))
    return trace


def test_a_numpy_seed_plays_the_same_games_as_the_python_one():
    env = TicTacToeEnv("random", agent_mark="random")
    assert _episode(env, np.int64(12)) == _episode(env, 12) == _episode(env, np.uint32(12))
    venv = TicTacToeVectorEnv(4, "random", agent_mark="random")
    first, second = venv.reset(seed=np.int64(5))[0], venv.reset(seed=5)[0]
    assert (first == second).all()
    assert evaluation.play_games(first_legal, "random", 5, "O", np.int64(9)) == \
        evaluation.play_games(first_legal, "random", 5, "O", 9)


# --- Rules is a value ------------------------------------------------------------------------

def test_equal_boards_compare_equal_and_hash_alike():
    fresh = game.Rules(3, 3, 3)
    assert fresh is not game.TICTACTOE
    assert fresh == game.TICTACTOE and hash(fresh) == hash(game.TICTACTOE)
    assert game.Rules(4, 4, 3) == game.rules(np.int64(4), 4, 3)
    assert fresh != game.rules(4, 4, 3) and fresh != game.rules(3, 3, 2)
    assert fresh != (3, 3, 3) and fresh != "3x3x3"
    assert len({fresh, game.TICTACTOE, game.rules(4, 4, 3), game.Rules(4, 4, 3)}) == 2
    numpy = game.Rules(np.int64(3), np.int32(3), np.uint8(3))  # NumPy sizes: the same value
    assert numpy == fresh and hash(numpy) == hash(fresh) and {game.TICTACTOE: "t"}[numpy] == "t"
    assert type(numpy.rows) is int and numpy.name == "3x3x3"
    assert pickle.loads(pickle.dumps(fresh)) == fresh


def test_an_opponent_of_an_equal_board_is_accepted():
    minimax = MinimaxOpponent()
    assert resolve_opponent(minimax, game.Rules(3, 3, 3)) is minimax
    alphabeta = AlphaBetaPlayer(4, 4, 3)
    assert resolve_opponent(alphabeta, game.Rules(4, 4, 3)) is alphabeta
    with pytest.raises(ValueError, match="plays on the 3x3x3 board, not on 4x4x3"):
        resolve_opponent(minimax, game.Rules(4, 4, 3))
    pool = SnapshotPool(game.Rules(3, 3, 3))
    pool.add(QLearningAgent(seed=0))  # the agent's board is the cached rules(3, 3, 3)
    assert pool.added == 1


# --- things that are not cells --------------------------------------------------------------

def test_a_numpy_duration_is_not_a_cell():
    env = TicTacToeEnv(illegal_action="lose")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(np.timedelta64(4))
    assert (reward, terminated, info.get("illegal_action")) == (-1.0, True, True)
    with pytest.raises(ValueError, match="is not legal here"):
        game.TICTACTOE.play(0, np.timedelta64(4))
    venv = TicTacToeVectorEnv(2)
    venv.reset(seed=0)
    _, rewards, _, _, _ = venv.step(np.array([4, 4], dtype="m8"))
    assert rewards.tolist() == [-1.0, -1.0]


def test_a_masked_element_is_not_a_value():
    venv = TicTacToeVectorEnv(2, illegal_action="lose")
    venv.reset(seed=0)
    _, rewards, terminated, _, infos = venv.step(np.ma.masked_array([4, 4], mask=[True, False]))
    assert rewards[0] == -1.0 and terminated.tolist() == [True, False]
    assert infos["illegal_action"].tolist() == [True, False]
    env = TicTacToeEnv()
    env.reset(seed=0)
    assert env.step(np.ma.masked_array(4, mask=True))[1] == -1.0
    board = np.ma.masked_array([1] + [0] * 8, mask=[True] + [False] * 8)
    with pytest.raises(ValueError, match="board is 9 cells"):
        game.TICTACTOE.encode(board)
    with pytest.raises(ValueError, match="board is 9 cells"):
        RandomOpponent().act(board, game.O, np.random.default_rng(0))
    with pytest.raises(ValueError, match="board is a position code or 9 cells"):
        rendering.ansi(board)
    unmasked = np.ma.masked_array([1] + [0] * 8, mask=False)
    assert game.TICTACTOE.encode(unmasked) == 1


def test_evaluate_with_an_empty_path_says_so(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evaluate", ""])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert "argument path: expected the path of a model file" in err and "got ''" in err
    assert "is a folder" not in err


def test_messages_stay_one_short_line_whatever_the_value():
    grid = np.arange(100).reshape(10, 10)
    env = TicTacToeEnv(illegal_action="raise")
    env.reset(seed=0)
    calls = [lambda: TicTacToeEnv(agent_mark=np.array([["X", "O"], ["O", "X"]])),
             lambda: env.step(grid), lambda: checks.check_int("9" * 10_000, "count"),
             lambda: TicTacToeVectorEnv(2).reset(seed=grid)]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        assert "\n" not in str(info.value) and len(str(info.value)) < 250, str(info.value)

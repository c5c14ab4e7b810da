"""The mcts player: its proofs against the solver, its playouts against exact random play, the
never-lose claim on 3x3 by walking the game tree, every board size, and bad arguments."""

from __future__ import annotations

from functools import cache

import gymnasium as gym
import numpy as np
import pytest

import gym_tictactoe  # noqa: F401  (registers the env)
from gym_tictactoe import game
from gym_tictactoe.game import solver
from gym_tictactoe.players.mcts import MCTSPlayer, RolloutEvaluator, Tree
from gym_tictactoe.players.mcts_board import SearchBoard, Stream
from gym_tictactoe.players.opponents import make_opponent, parse_opponent


def _tree(rules: game.Rules, code: int, rng: np.random.Generator, **kwargs) -> Tree:
    board = SearchBoard(rules)
    return Tree(board, board.root(rules.decode(code), rules.to_move(code)), RolloutEvaluator(),
                Stream(rng), **kwargs)


def _live(rules: game.Rules) -> np.ndarray:
    reachable = rules.reachable
    return reachable[~rules.terminal_of(reachable)]


@pytest.mark.parametrize("size", [(3, 3, 3), (3, 4, 3), (3, 4, 4)])
def test_proven_results_and_moves_agree_with_the_solver(size):
    rules, rng = game.rules(*size), np.random.default_rng(0)
    solution = solver.solve(rules)
    proven = 0
    for code in rng.choice(_live(rules), 60).tolist():
        result = _tree(rules, code, rng).search(2000)
        score = int(solution.score[code])
        child = int(solution.score[rules.play(code, result.move)])
        if result.proven is not None:
            proven += 1
            assert np.sign(result.proven) == np.sign(score), code
            assert np.sign(np.sign(child) - child) == np.sign(score), code  # keeps the value
    assert proven >= 30  # the solver part is doing the work, not luck


def test_it_never_plays_into_a_proven_loss_when_another_move_holds():
    rng = np.random.default_rng(1)
    for code in _live(game.TICTACTOE).tolist():
        tree = _tree(game.TICTACTOE, code, rng)
        move = tree.search(30).move
        if tree.root.moves:  # some move is not proven lost
            assert move not in tree.root.lost, code


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_3x3_with_1000_simulations_never_loses_exactly(seed):
    """Seeded, the player is one move per position: walk every game against it where the
    other side plays any move (minimax's among them), in both seats; none is lost."""
    rules, player, rng = game.TICTACTOE, MCTSPlayer(1000, seed=seed), np.random.default_rng(0)

    @cache
    def reply(code: int) -> int:
        return player.act(rules.decode(code).copy(), rules.to_move(code), rng)

    def worst(code: int, me: int) -> int:
        if rules.is_terminal(code):
            won = rules.winner(code)
            return 0 if won == game.NO_WINNER else (1 if won == me else -1)
        if rules.to_move(code) == me:
            return worst(rules.play(code, reply(code)), me)
        return min(worst(rules.play(code, move), me) for move in rules.legal_moves(code))

    assert worst(game.EMPTY_BOARD, game.X) == 0 and worst(game.EMPTY_BOARD, game.O) == 0
    assert reply.cache_info().currsize > 200  # every reply to every opponent move was asked


def test_seeded_player_is_one_move_per_position():
    board = np.array([1, 0, 0, 0, 2, 0, 0, 0, 0], dtype=np.int8)
    player = MCTSPlayer(200, seed=5)
    moves = {player.act(board, game.X, np.random.default_rng(s)) for s in range(5)}
    assert len(moves) == 1
    unseeded = MCTSPlayer(200)
    assert unseeded.act(board, 1, np.random.default_rng(3)) == \
        unseeded.act(board, 1, np.random.default_rng(3))


def test_it_wins_at_once_and_blocks_without_searching():
    player = MCTSPlayer(1)
    win = np.array([1, 1, 0, 2, 2, 0, 0, 0, 0], dtype=np.int8)
    assert player.act(win, game.X, np.random.default_rng(0)) == 2
    block = np.array([1, 0, 0, 2, 2, 0, 1, 0, 0], dtype=np.int8)
    assert player.act(block, game.X, np.random.default_rng(0)) == 5
    assert player.last.simulations == 0


@pytest.mark.parametrize("playouts", ["python", "numpy"])
def test_playouts_follow_exact_random_play(playouts):
    rules = game.TICTACTOE
    board = SearchBoard(rules)
    board.python_playouts = playouts == "python"
    stream = Stream(np.random.default_rng(0))
    state = board.root(np.zeros(9, dtype=np.int8), game.X)
    results = np.array([board.playout(state, stream) for _ in range(20_000)])
    exact = game.random_play_outcome(rules)
    for value, name in ((1, "X"), (-1, "O"), (0, "draw")):
        assert abs((results == value).mean() - exact[name]) < 0.015


@pytest.mark.parametrize("size", [(1, 1, 1), (1, 5, 3), (2, 2, 2), (4, 4, 4), (5, 7, 4),
                                  (9, 9, 5), (15, 15, 5)])
def test_games_on_every_board_size(size):
    env = gym.make("TicTacToe-v0", opponent="mcts:max_simulations=30", rows=size[0],
                   cols=size[1], win_length=size[2])
    _, info = env.reset(seed=0)
    rng, done, steps = np.random.default_rng(0), False, 0
    while not done and steps < 40:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, terminated, truncated, info = env.step(action)
        done, steps = terminated or truncated, steps + 1
    assert done or steps == 40


def test_first_move_on_a_big_board_is_central():
    player = MCTSPlayer(20, rows=15, cols=15, win_length=5)
    move = player.act(np.zeros(225, dtype=np.int8), game.X, np.random.default_rng(0))
    assert move == 7 * 15 + 7


def test_puct_selection_runs_with_uniform_priors():
    rules, rng = game.TICTACTOE, np.random.default_rng(0)
    code = rules.encode([1, 0, 0, 0, 2, 0, 0, 0, 1])
    tree = _tree(rules, code, rng, selection="puct")
    # O must take an edge: each corner lets X make two lines at once.
    assert tree.search(3000).move in (1, 3, 5, 7)
    assert sorted(tree.root.lost) == [2, 6]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_simulations": 0},
     "max_simulations must be an integer from 1 to 932,067 on the 3x3x3 board"),
    ({"max_simulations": 2.5}, "max_simulations must be an integer"),
    ({"max_simulations": True}, "max_simulations must be an integer"),
    ({"max_simulations": 40_000, "rows": 15, "cols": 15, "win_length": 5},
     "from 1 to 37,282 on the 15x15x5 board"),
    ({"exploration": -0.5}, "exploration must be a number in [0, 1000]; got -0.5"),
    ({"exploration": float("nan")}, "exploration must be a number"),
    ({"solve": 1}, "solve must be True or False; got 1"),
    ({"seed": -1}, "seed must be None or an integer with 0 <= seed < 2**32"),
])
def test_bad_arguments_are_one_line(kwargs, message):
    with pytest.raises(ValueError, match=None) as error:
        make_opponent("mcts", **kwargs)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_spec_and_game_over_board():
    assert parse_opponent("mcts:max_simulations=10,exploration=0.5").max_simulations == 10
    with pytest.raises(ValueError, match="max_simulations must be an integer"):
        parse_opponent("mcts:max_simulations=-3")
    with pytest.raises(ValueError, match="the game is over"):
        MCTSPlayer(10).act(np.array([1, 1, 1, 2, 2, 0, 0, 0, 0], np.int8), game.O,
                           np.random.default_rng(0))

"""The mcts player: its proofs against the solver, its playouts against exact random play, the
never-lose claim on 3x3 by walking the game tree, a proven win on 15x15x5, seeded moves, every
board size, and bad arguments."""

from __future__ import annotations

import subprocess
import sys
from functools import cache

import gymnasium as gym
import numpy as np
import pytest

import gym_tictactoe  # noqa: F401  (registers the env)
from gym_tictactoe import game
from gym_tictactoe.game import solver
from gym_tictactoe.players.mcts import MCTSPlayer, Tree, board_tables
from gym_tictactoe.players.opponents import make_opponent, parse_opponent


def _tree(rules: game.Rules, code: int, rng: np.random.Generator, **kwargs) -> Tree:
    return Tree(rules, rules.decode(code), rules.to_move(code), rng, **kwargs)


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
    rng, checked = np.random.default_rng(1), 0
    for code in _live(game.TICTACTOE).tolist():
        tree = _tree(game.TICTACTOE, code, rng)
        move = tree.search(30).move
        live, lost = tree.root_moves()
        if live:  # some move is not proven lost
            assert move not in lost, code
            checked += bool(lost)
    assert checked > 20  # positions where some move was proven lost and another held


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


@pytest.mark.parametrize("size", [(3, 3, 3), (4, 4, 3)])
def test_playouts_follow_exact_random_play(size):
    """The compiled playout, many times from the empty board, against the exact outcome of
    uniformly random play."""
    core = pytest.importorskip("gym_tictactoe.players.mcts_core")
    rules = game.rules(*size)
    board = board_tables(rules, 1)
    words = board[0].shape[1]
    state, rng = np.zeros((5, words), np.uint64), np.array([12345], np.uint64)
    core.root(state, False, board)
    sides, free = np.zeros((2, board[6][-1, 1]), np.uint64), np.zeros(rules.n_cells, np.int64)
    results = np.array([core.playout(state, board, rng, sides, free) for _ in range(20_000)])
    exact = game.random_play_outcome(rules)
    for value, name in ((1, "X"), (-1, "O"), (0, "draw")):
        assert abs((results == value).mean() - exact[name]) < 0.015


def test_solver_proves_an_open_four_on_15x15():
    """X to move with three in a row, both ends open: an open four wins in three plies. The
    search proves it (both cells of a four to block make O's node a proven loss) and plays it."""
    rules, cells = game.rules(15, 15, 5), np.zeros(225, np.int8)
    cells[[7 * 15 + 5, 7 * 15 + 6, 7 * 15 + 7]] = game.X
    cells[[0, 14, 14 * 15]] = game.O
    result = MCTSPlayer(2000, seed=0, rows=15, cols=15, win_length=5).search(
        cells, game.X, np.random.default_rng(0))
    assert result.proven == rules.n_cells + 1 - 3
    assert result.move in (7 * 15 + 4, 7 * 15 + 8)
    assert result.simulations < 2000  # it stopped once the root was proven


@pytest.mark.parametrize("size", [(6, 6, 4), (15, 15, 5)])
def test_seeded_moves_are_deterministic(size):
    """The same seed, or the same generator state, gives the same move from a fresh player;
    another seed searches differently (the visits are not all alike)."""
    rules, rng = game.rules(*size), np.random.default_rng(7)
    cells = np.zeros(rules.n_cells, np.int8)
    cells[rng.choice(rules.n_cells // 3, 4, replace=False) + rules.n_cells // 3] = [1, 2, 1, 2]
    kwargs = {"rows": size[0], "cols": size[1], "win_length": size[2]}
    moves = {MCTSPlayer(300, seed=3, **kwargs).act(cells, game.X, np.random.default_rng(s))
             for s in range(3)}
    assert len(moves) == 1
    unseeded = [MCTSPlayer(300, **kwargs).act(cells, game.X, np.random.default_rng(11))
                for _ in range(2)]
    assert unseeded[0] == unseeded[1]
    trees = [_tree(rules, rules.encode(cells), np.random.default_rng(s)) for s in (1, 1, 2)]
    results = [tree.search(300) for tree in trees]
    assert results[0] == results[1]
    assert [t.edges[:40].tolist() for t in trees[:2]] == [trees[0].edges[:40].tolist()] * 2
    assert trees[0].edges[:40].tolist() != trees[2].edges[:40].tolist()


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


def test_without_numba_the_player_builds_and_a_search_is_one_line():
    """The spec parses and the player is built without numba (nothing compiled before the first
    search); the search then stops with the compiled core's one line."""
    result = subprocess.run([sys.executable, "-c",
                             "import sys\n"
                             "sys.modules['numba'] = None  # as if not installed\n"
                             "import numpy as np\n"
                             "from gym_tictactoe.game.proofs import CoreUnavailable\n"
                             "from gym_tictactoe.players.opponents import parse_opponent\n"
                             "player = parse_opponent('mcts:max_simulations=10')\n"
                             "try:\n"
                             "    player.act(np.zeros(9, np.int8), 1, np.random.default_rng(0))\n"
                             "except CoreUnavailable as error:\n"
                             "    print(error)\n"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1 and "needs numba" in result.stdout


@pytest.mark.parametrize("size", [(15, 15, 5), (6, 6, 4), (4, 5, 2), (3, 3, 3)])
def test_a_childs_winning_cells_are_found_from_its_parents(size):
    """The tree updates each side's winning cells on the lines through the move only; along
    seeded random games they equal the cells found from scratch over every line."""
    core = pytest.importorskip("gym_tictactoe.players.mcts_core")
    wide = pytest.importorskip("gym_tictactoe.game.wide")
    rules, rng = game.rules(*size), np.random.default_rng(sum(size))
    board = board_tables(rules, 1)
    words, narrow = board[0].shape[1], rules.n_cells > 64
    checked = 0
    for _ in range(3):
        state = np.zeros((5, words), np.uint64)
        core.root(state, narrow, board)
        for cell in rng.permutation(rules.n_cells)[: rules.n_cells - 1].tolist():
            if wide.has(state[core.MY_WINS], cell) or state[core.THEIR_WINS].any():
                break  # the tree never plays on past a win at once or a block
            after = np.zeros_like(state)
            core.child(state, cell, after, narrow, board)
            fresh = after.copy()
            core.root(fresh, narrow, board)
            np.testing.assert_array_equal(after[:4], fresh[:4])
            state, checked = after, checked + 1
    assert checked >= 3

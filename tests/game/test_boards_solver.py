"""The solver and the game facts on every board of at most 12 cells against a plain brute-force
search, the published m,n,k results, and (marked slow) the 16-cell boards.

``BruteForce`` is textbook recursion over tuples, independent of the code under test: wins are
found by walking runs of marks from the last move, values and distances by negamax with the
solver's tie-break (fastest win, slowest loss), and game counts and random-play probabilities
by summing over children.
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

import numpy as np
import pytest
from boards_helpers import RESULTS, BruteForce, Node, O, run_lockstep

from gym_tictactoe import game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.game import solver
from gym_tictactoe.players.opponents import RandomOpponent


def masks(nodes: list[Node], field: str, n: int) -> np.ndarray:
    mask = np.zeros((len(nodes), n), dtype=bool)
    for row, node in enumerate(nodes):
        mask[row, list(getattr(node, field))] = True
    return mask


def codes_of(positions, rules: game.Rules) -> np.ndarray:
    return np.array(list(positions), dtype=np.int64).reshape(-1, rules.n_cells) @ rules.pow3


def check_against(solution: solver.Solution, brute: BruteForce, positions) -> None:
    """The solver's answers at ``positions`` (cell tuples) equal the brute force's."""
    rules, nodes = solution.rules, [brute.visit(p) for p in positions]
    codes = codes_of(positions, rules)
    assert solution.value_of(codes).tolist() == [node.value for node in nodes]
    assert solution.distance_of(codes).tolist() == [node.plies for node in nodes]
    assert (solution.best_of(codes) == masks(nodes, "best", rules.n_cells)).all()
    assert (solution.keeps_value_of(codes) == masks(nodes, "keeps", rules.n_cells)).all()


def boards(cells: range) -> list[tuple[int, int, int]]:
    return [(rows, n // rows, k) for n in cells for rows in range(1, n + 1) if n % rows == 0
            for k in range(1, max(rows, n // rows) + 1)]


@pytest.mark.slow
@pytest.mark.parametrize("size", boards(range(1, 10)), ids=str)
def test_every_position_of_every_board_of_at_most_9_cells_matches_brute_force(size):
    rules, brute = game.rules(*size), BruteForce(*size)
    root = brute.visit((0,) * rules.n_cells)
    positions = list(brute.nodes)
    codes = codes_of(positions, rules)
    assert sorted(codes.tolist()) == sorted(rules.reachable.tolist())
    marks = (np.array(positions) != 0).sum(axis=1)
    assert [np.sort(codes[marks == i]).tolist() for i in range(rules.n_cells + 1)] == [
        layer.tolist() for layer in rules.layers]
    ended = [node.plies == 0 for node in brute.nodes.values()]
    assert rules.terminal_of(codes).tolist() == ended
    check_against(solver.solve(rules), brute, positions)
    by_result = dict(zip(RESULTS, root.games, strict=True))
    assert game.count_games(rules) == {"games": sum(root.games), **by_result}
    chances = zip(RESULTS, root.chances, strict=True)
    exact = {r: Fraction(c, factorial(rules.n_cells)) for r, c in chances}
    assert sum(exact.values()) == 1
    assert game.random_play_outcome(rules) == pytest.approx(exact, rel=1e-12, abs=0)


# Tables of a 12-cell board take about half a second and tens of MB: the default run checks
# four of the 44 12-cell boards, the slow run all of them.
TWELVE = [(3, 4, 3), (4, 3, 4), (2, 6, 3), (12, 1, 4)]
MID_BOARDS = boards(range(10, 12)) + TWELVE
MID_BOARDS += [pytest.param(size, marks=pytest.mark.slow)
               for size in boards(range(12, 13)) if size not in TWELVE]


@pytest.mark.slow
@pytest.mark.parametrize("size", MID_BOARDS, ids=str)
def test_a_sample_of_positions_of_boards_of_10_to_12_cells_matches_brute_force(size):
    rules = game.Rules(*size)  # not game.rules(): freed after the test, not cached
    solution = solver.build(rules)
    rng = np.random.default_rng(list(size))
    # Positions with at most 5 empty cells keep each brute-force search small; boards where
    # games end early (k <= 2) have few positions, and short searches, from the empty board on.
    pool = np.concatenate(rules.layers[rules.n_cells - 5 :])
    pool = rules.reachable if pool.size < 300 else pool
    codes = rng.choice(pool, size=min(300, pool.size), replace=False)
    positions = [tuple(cells) for cells in rules.cells_of(codes).tolist()]
    check_against(solution, BruteForce(*size), positions)


# --- published results -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("size", "value"), [
    ((3, 3, 3), 0),  # tic-tac-toe is a draw
    ((3, 4, 3), 1), ((4, 3, 3), 1),  # three in a row on 3x4: a first-player win
    ((3, 4, 4), 0),  # only rows hold four: O blocks each
    ((2, 2, 2), 1), ((1, 3, 2), 1), ((1, 2, 2), 0), ((2, 1, 2), 0),
])
def test_published_values_of_the_empty_board(size, value):
    assert solver.value(game.EMPTY_BOARD, game.rules(*size)) == value


@pytest.mark.slow
@pytest.mark.parametrize("size", [s for s in boards(range(1, 10)) if s[2] <= 2]
                         + [(3, 4, 1), (2, 6, 2), (1, 13, 1), (1, 13, 2), (2, 7, 2)], ids=str)
def test_one_or_two_in_a_row_is_a_first_player_win(size):
    """k = 1: the first move wins. k = 2: X wins in 3 plies wherever a line of 3 cells lets it
    make two threats; only the 1x2 board, where O blocks the only line, is a draw."""
    solution = solver.solve(game.rules(*size))
    value, plies = (int(a[0]) for a in (solution.value_of([0]), solution.distance_of([0])))
    if size[2] == 1:
        assert (value, plies) == (1, 1)
    elif max(size[:2]) == 2 and min(size[:2]) == 1:
        assert (value, plies) == (0, 2)
    else:
        assert (value, plies) == (1, 3)


def test_the_13_to_16_cell_boards_solve_through_the_disk_cache_like_tabled_ones():
    """2x7x3 (14 cells): values from code arrays match the brute force on deep positions."""
    rules = game.rules(2, 7, 3)
    solution = solver.solve(rules)
    assert solver.solve(rules) is solution and not rules.tabled
    rng = np.random.default_rng(14)
    pool = np.concatenate(rules.layers[7:])
    codes = rng.choice(pool, size=300, replace=False)
    check_against(solution, BruteForce(2, 7, 3), [tuple(c) for c in rules.cells_of(codes)])
    with pytest.raises(ValueError, match=r"at most 12 cells.*_of methods"):
        solution.best  # noqa: B018


# --- the 16-cell boards (slow: each takes seconds to solve) ---------------------------------


@pytest.fixture(scope="session")
def four_by_four() -> dict[int, solver.Solution]:
    """4x4 with 3 and 4 in a row, solved once for the session (into the session's cache)."""
    return {k: solver.solve(game.rules(4, 4, k)) for k in (3, 4)}


@pytest.mark.slow
def test_four_by_four_results_and_position_count(four_by_four):
    assert solver.value(game.EMPTY_BOARD, game.rules(4, 4, 3)) == 1  # first-player win
    assert solver.value(game.EMPTY_BOARD, game.rules(4, 4, 4)) == 0  # draw
    assert four_by_four[4].distance_of([0])[0] == 16  # a drawn 4x4 game fills the board
    assert len(game.rules(4, 4, 4).reachable) == 9_722_011
    assert int(four_by_four[4].reachable.sum()) == 9_722_011


@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 4])
def test_four_by_four_deep_positions_match_brute_force(four_by_four, k):
    rules = game.rules(4, 4, k)
    codes = np.random.default_rng(k).choice(np.concatenate(rules.layers[9:]), 300, replace=False)
    check_against(four_by_four[k], BruteForce(4, 4, k), [tuple(c) for c in rules.cells_of(codes)])


@pytest.mark.slow
def test_four_by_four_minimax_wins_every_game_as_x(four_by_four):
    """4x4x3 is a first-player win, so perfect X beats any agent."""
    env = TicTacToeEnv("minimax", "O", rows=4, cols=4, win_length=3)
    agent, rng = RandomOpponent(rows=4, cols=4, win_length=3), np.random.default_rng(0)
    for seed in range(20):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            _, reward, done, _, info = env.step(agent.act(info["board"], O, rng))
        assert (reward, info["winner"]) == (-1.0, "X")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["minimax", "epsilon0", "mixture"])
@pytest.mark.parametrize("agent_mark", ["X", "O"])
def test_four_by_four_vector_env_agrees_with_single_envs(four_by_four, name, agent_mark):
    assert run_lockstep((4, 4, 3), name, agent_mark) > 6


def test_solving_an_uncached_board_is_said_once_through_logging(tmp_path, monkeypatch, caplog):
    import logging

    from gym_tictactoe.game import cache, solver

    monkeypatch.setenv("GYM_TICTACTOE_CACHE", str(tmp_path))
    rules = game.rules(1, 13, 4)
    with caplog.at_level(logging.WARNING, logger="gym_tictactoe"):
        cache.load_or_build(rules, solver.build)
        cache.load_or_build(rules, solver.build)  # cached now: nothing to say
    notes = [record.getMessage() for record in caplog.records]
    assert len(notes) == 1 and "solving the 1x13x4 board once" in notes[0]
    assert str(tmp_path) in notes[0] and caplog.records[0].name.startswith("gym_tictactoe.")
    # What docs/boards.md tells a user who wants it quiet.
    caplog.clear()
    cache.cache_path(rules).unlink()
    monkeypatch.setattr(logging.getLogger("gym_tictactoe"), "level", logging.ERROR)
    with caplog.at_level(logging.WARNING):
        cache.load_or_build(rules, solver.build)
    assert caplog.records == []

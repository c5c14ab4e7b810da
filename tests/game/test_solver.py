"""The solver against an independent plain minimax and against known positions."""

from functools import cache

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.game import solver

T3 = game.TICTACTOE  # tic-tac-toe's rules, for lines that would not fit

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


@cache
def plain_minimax(cells: tuple) -> tuple[int, int]:
    """(value for X, plies to the end) by textbook recursion over tuples: fastest win and
    slowest loss break ties. Independent of the tables under test."""
    for a, b, c in LINES:
        if cells[a] and cells[a] == cells[b] == cells[c]:
            return (1 if cells[a] == 1 else -1), 0
    empty = [i for i, v in enumerate(cells) if v == 0]
    if not empty:
        return 0, 0
    mark = 1 if cells.count(1) == cells.count(2) else 2
    sign = 1 if mark == 1 else -1
    results = []
    for i in empty:
        value, plies = plain_minimax(cells[:i] + (mark,) + cells[i + 1 :])
        own = value * sign
        # Prefer a higher own value, then a short win / long loss.
        results.append((own, -plies if own > 0 else plies, value, plies + 1))
    best = max(results)
    return best[2], best[3]


def board(text: str) -> int:
    return T3.encode([".XO".index(ch) for ch in text])


def test_values_and_distances_match_plain_minimax_everywhere():
    solution = solver.solve()
    for code in T3.reachable:
        value, plies = plain_minimax(tuple(int(v) for v in T3.tables.cells[code]))
        assert (solution.value[code], solution.distance[code]) == (value, plies), code


def test_empty_board_is_a_draw_lasting_nine_plies():
    assert solver.value(game.EMPTY_BOARD) == 0
    assert solver.solve().distance[game.EMPTY_BOARD] == 9
    assert solver.best_moves(game.EMPTY_BOARD) == list(range(9))


def test_known_openings():
    assert solver.value(board("XO.......")) == 1  # corner, then an adjacent edge: X wins
    assert solver.value(board("X...O....")) == 0  # corner, then the centre holds
    assert solver.value(board("O...X....")) == 0
    assert solver.value(board(".O..X....")) == 1  # O's edge reply to the centre loses


def test_best_moves_win_fastest_and_lose_slowest():
    # X to move can win now at 2, or set up other wins later; only the immediate win is best.
    position = board("XX.OO....")
    assert solver.best_moves(position) == [2]
    assert set(solver.value_keeping_moves(position)) >= {2}
    # O to move is lost; blocking at 8 loses four plies later, anything else two plies later.
    lost = board("XO..X....")
    assert solver.value(lost) == 1 and solver.solve().distance[lost] == 4
    assert solver.best_moves(lost) == [8]


def test_best_moves_are_exactly_the_moves_plain_minimax_prefers():
    best = solver.solve().best
    for code in T3.reachable[~T3.tables.terminal[T3.reachable]]:
        cells = tuple(int(v) for v in T3.tables.cells[code])
        target = plain_minimax(cells)
        mark = T3.to_move(int(code))
        chosen = []
        for i in (i for i in range(9) if cells[i] == 0):
            value, plies = plain_minimax(cells[:i] + (mark,) + cells[i + 1 :])
            if (value, plies + 1) == target:
                chosen.append(i)
        assert np.flatnonzero(best[code]).tolist() == chosen, code


def test_move_masks_nest_inside_the_legal_moves():
    solution = solver.solve()
    playing = T3.reachable[~T3.tables.terminal[T3.reachable]]
    legal = T3.tables.legal_mask[playing].astype(bool)
    assert (solution.best[playing] <= solution.keeps_value[playing]).all()
    assert (solution.keeps_value[playing] <= legal).all()
    assert solution.best[playing].any(axis=1).all()
    assert not solution.keeps_value[T3.reachable[T3.tables.terminal[T3.reachable]]].any()


def test_value_keeping_moves_keep_the_value():
    solution = solver.solve()
    for code in T3.reachable[::5]:
        for cell in np.flatnonzero(T3.tables.legal_mask[code]):
            kept = solution.value[T3.tables.next[code, cell]] == solution.value[code]
            assert solution.keeps_value[code, cell] == kept


def test_solution_is_built_once_and_read_only():
    assert solver.solve() is solver.solve()
    assert not solver.solve().best.flags.writeable

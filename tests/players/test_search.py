"""The alpha-beta player: perfect without limits (against the solver and an independent brute
force), known m,n,k-game values, threats and budgets on big boards, determinism, bad input, and
the scratch position's bookkeeping."""

from __future__ import annotations

from functools import cache
from itertools import pairwise
from operator import itemgetter

import numpy as np
import pytest
from bench_helpers import benchmark_module

from gym_tictactoe import game
from gym_tictactoe.game import solver
from gym_tictactoe.players import negamax, search
from gym_tictactoe.players.compiled import Search, compiled
from gym_tictactoe.players.opponents import make_opponent, parse_opponent
from gym_tictactoe.players.search import MAX_NODES, AlphaBetaPlayer
from gym_tictactoe.players.threats import FOUR_BONUS, geometry

T3 = game.TICTACTOE  # tic-tac-toe's rules

PLAYING = T3.reachable[~T3.tables.terminal[T3.reachable]]


def perfect(rows: int = 3, cols: int = 3, k: int = 3) -> AlphaBetaPlayer:
    return AlphaBetaPlayer(rows, cols, k, depth=None, max_nodes=None)


def grid(text: str) -> np.ndarray:
    """A board from rows of '.', 'X', 'O' (spaces ignored)."""
    return np.array([".XO".index(ch) for ch in text if ch in ".XO"], dtype=np.int8)


def to_move(board: np.ndarray) -> int:
    return game.X if np.count_nonzero(board) % 2 == 0 else game.O


def random_game(rows: int, cols: int, k: int, seed: int) -> list[np.ndarray]:
    """The unfinished positions of one uniformly random game."""
    rng, board, seen = np.random.default_rng(seed), np.zeros(rows * cols, np.int8), []
    while True:
        seen.append(board.copy())
        empty = np.flatnonzero(board == 0)
        cell = int(empty[int(rng.random() * empty.size)])
        board[cell] = to_move(board)
        if brute_won(rows, cols, k, tuple(board.tolist()), cell) or empty.size == 1:
            return seen


# --- an independent brute force: plain negamax over every move, memoised on the position ----

@cache
def _lines_through(rows: int, cols: int, k: int) -> list[list[itemgetter]]:
    """For each cell, a getter of the marks on each line through it."""
    through: list[list[itemgetter]] = [[] for _ in range(rows * cols)]
    for line in game.win_lines(rows, cols, k):
        for c in line:
            through[c].append(itemgetter(*line) if k > 1 else lambda cells, c=c: (cells[c],))
    return through


def brute_won(rows: int, cols: int, k: int, cells: tuple[int, ...], cell: int) -> bool:
    full = (cells[cell],) * k
    return any(line(cells) == full for line in _lines_through(rows, cols, k)[cell])


def finished(rows: int, cols: int, k: int, cells: tuple[int, ...]) -> bool:
    return 0 not in cells or any(v and brute_won(rows, cols, k, cells, c)
                                 for c, v in enumerate(cells))


@cache
def brute_scores(rows: int, cols: int, k: int, cells: tuple[int, ...]) -> dict[int, int]:
    """Each legal move's score for the side to move, on the solver's scale: +(n + 1 - d) for a
    win d plies away, the negative for a loss, 0 for a draw."""
    horizon = rows * cols + 1
    mark = game.X if (len(cells) - cells.count(0)) % 2 == 0 else game.O
    scores = {}
    for cell in (c for c, v in enumerate(cells) if v == 0):
        after = cells[:cell] + (mark,) + cells[cell + 1 :]
        if brute_won(rows, cols, k, after, cell):
            scores[cell] = horizon - 1
        elif 0 not in after:
            scores[cell] = 0
        else:
            child = max(brute_scores(rows, cols, k, after).values())
            scores[cell] = -child + (child > 0) - (child < 0)  # one ply further from the end
    return scores


# --- perfect play without limits -------------------------------------------------------------

def test_perfect_on_every_tic_tac_toe_position():
    solution, player = solver.solve(), perfect()
    assert len(PLAYING) == 4520
    for code in PLAYING:
        result = player.search(T3.tables.cells[code], T3.to_move(int(code)))
        assert set(result.moves) == set(np.flatnonzero(solution.best[code]).tolist()), code
        assert result.score == solution.score[code] and result.proven, code


def test_perfect_play_draws_like_minimax_from_the_same_rng():
    """Uniform among the best moves, with the same draw as the table players: the same move as
    the solver's best list indexed by one rng.random()."""
    solution, player = solver.solve(), perfect()
    mine, theirs = np.random.default_rng(7), np.random.default_rng(7)
    for code in PLAYING:
        best = np.flatnonzero(solution.best[code])
        expected = best[int(theirs.random() * best.size)] if best.size > 1 else best[0]
        assert player.act(T3.tables.cells[code], T3.to_move(int(code)), mine) == expected


@pytest.mark.parametrize("settings", [{}, {"max_nodes": 300}])
def test_with_limits_it_still_keeps_the_value_of_every_tic_tac_toe_position(settings):
    """Small boards are searched at full width, so even a budgeted search never blunders."""
    keeps, player = solver.solve().keeps_value, AlphaBetaPlayer(**settings)
    for code in PLAYING:
        moves = player.search(T3.tables.cells[code], T3.to_move(int(code))).moves
        assert keeps[code, list(moves)].all(), (code, moves)


@pytest.mark.slow
@pytest.mark.parametrize(("rows", "cols", "k"), [
    (3, 4, 3), (4, 3, 3), (2, 5, 2), (1, 5, 3), (2, 3, 2), (3, 3, 2), (1, 1, 1), (2, 2, 2),
    (1, 6, 6), (5, 2, 2),
])
def test_perfect_matches_brute_force_on_small_boards(rows, cols, k):
    player = perfect(rows, cols, k)
    positions = {tuple(np.zeros(rows * cols, dtype=np.int8).tolist())}
    for first in range(rows * cols):  # every position within two plies ...
        for second in range(rows * cols):
            board = np.zeros(rows * cols, np.int8)
            board[first] = game.X
            positions.add(tuple(board.tolist()))
            if second != first:
                board[second] = game.O
                positions.add(tuple(board.tolist()))
    for seed in range(6):  # ... and along a few random games
        positions |= {tuple(b.tolist()) for b in random_game(rows, cols, k, seed)}
    for cells in sorted(positions):
        if finished(rows, cols, k, cells):
            continue
        scores = brute_scores(rows, cols, k, cells)
        top = max(scores.values())
        result = player.search(np.array(cells, dtype=np.int8), to_move(np.array(cells)))
        assert result.score == top, cells
        assert set(result.moves) == {c for c, s in scores.items() if s == top}, cells


@pytest.mark.parametrize(("rows", "cols", "k", "first_player_wins"), [
    (3, 3, 3, False), (4, 3, 3, True), (3, 4, 3, True), (4, 4, 3, True),
    (2, 2, 2, True), (1, 1, 1, True), (1, 5, 3, False), (2, 4, 4, False),
    (4, 4, 4, False),  # a few seconds: every first move has to be proven a draw
])
def test_known_mnk_results(rows, cols, k, first_player_wins):
    result = perfect(rows, cols, k).search(np.zeros(rows * cols, np.int8), game.X)
    assert result.proven
    assert (result.score > 0) == first_player_wins and result.score >= 0


def test_known_result_beyond_the_solvable_boards():
    """5x4x3 is a first-player win: searched in full width and to the end (20 plies, no node
    budget under the ceiling), every reply to X's centre opening loses. (An exhaustive search,
    ``depth=None, max_nodes=None``, is refused on boards of more than 16 cells.)"""
    player = AlphaBetaPlayer(5, 4, 3, depth=20, max_nodes=None, width=None)
    for centre in geometry(5, 4, 3).centre_cells():
        board = np.zeros(20, np.int8)
        board[centre] = game.X
        result = player.search(board, game.O)
        assert result.proven and result.score < 0 and len(result.moves) == 19


# --- big boards with the default limits -------------------------------------------------------

def gomoku(*stones: tuple[int, int, int]) -> np.ndarray:
    """A 15x15 board with (row, col, mark) stones."""
    board = np.zeros(225, np.int8)
    for r, c, mark in stones:
        board[r * 15 + c] = mark
    return board


def test_first_move_is_the_centre():
    rng = np.random.default_rng(0)
    assert AlphaBetaPlayer(15, 15, 5).act(np.zeros(225, np.int8), game.X, rng) == 112
    even = AlphaBetaPlayer(6, 6, 4)
    assert {even.act(np.zeros(36, np.int8), game.X, rng) for _ in range(40)} == {14, 15, 20, 21}


def test_wins_now_and_blocks_the_opponents_win():
    player, rng = AlphaBetaPlayer(15, 15, 5), np.random.default_rng(0)
    four = [(7, c, game.X) for c in range(3, 7)] + [(8, c, game.O) for c in range(4, 7)]
    board = gomoku(*four, (0, 0, game.O))  # X to move, with a four open at both ends
    assert player.act(board, game.X, rng) in {7 * 15 + 2, 7 * 15 + 7}
    board = gomoku(*[(r, 4, game.O) for r in range(2, 6)], (1, 4, game.X), (9, 9, game.X),
                   (10, 12, game.X), (13, 1, game.X))  # O's four in a column, capped: block it
    result = player.search(board, game.X)
    assert result.moves == (6 * 15 + 4,)


def test_two_winning_cells_is_a_proven_loss_yet_blocks_one():
    board = gomoku(*[(7, c, game.O) for c in range(4, 8)], (0, 0, game.X), (0, 1, game.X),
                   (0, 3, game.X), (14, 14, game.X))
    result = AlphaBetaPlayer(15, 15, 5).search(board, game.X)
    assert result.proven and result.score == -(226 - 2)
    assert set(result.moves) == {7 * 15 + 3, 7 * 15 + 8}


def test_answers_and_wins_with_an_open_three():
    """An open three becomes an open four, which can be blocked at one end only: the side to
    move against it must close it at once, and the side that owns it wins in three plies."""
    ends = {7 * 15 + 4, 7 * 15 + 8}
    board = gomoku((7, 5, game.X), (7, 6, game.X), (7, 7, game.X), (3, 3, game.O),
                   (11, 11, game.O))
    assert set(AlphaBetaPlayer(15, 15, 5).search(board, game.O).moves) <= ends
    board[0] = game.O
    result = AlphaBetaPlayer(15, 15, 5).search(board, game.X)
    assert result.proven and result.score == 226 - 3 and set(result.moves) == ends


def test_limits_are_respected():
    """``depth`` caps the iterations; ``max_nodes`` stops after the first iteration once the
    count passes it."""
    board = random_game(15, 15, 5, seed=3)[20]
    mark = to_move(board)
    assert AlphaBetaPlayer(15, 15, 5, depth=2, max_nodes=None).search(board, mark).depth == 2
    first = AlphaBetaPlayer(15, 15, 5, depth=1, max_nodes=None).search(board, mark).nodes
    for budget in (1, 50, 400):
        result = AlphaBetaPlayer(15, 15, 5, max_nodes=budget).search(board, mark)
        assert result.depth >= 1 and result.nodes <= max(first, budget) + 1
        assert all(board[m] == game.EMPTY for m in result.moves)


def test_a_search_without_a_node_budget_stops_at_the_ceiling(monkeypatch):
    """On a board too big to solve, ``max_nodes=None`` with a depth still has a node ceiling
    (issue 16: an unbounded search never returned)."""
    board = random_game(15, 15, 5, seed=3)[20]
    first = AlphaBetaPlayer(15, 15, 5, depth=1, max_nodes=None).search(board, to_move(board))
    monkeypatch.setattr(search, "MAX_NODES", 300)
    result = AlphaBetaPlayer(15, 15, 5, depth=12, max_nodes=None).search(board, to_move(board))
    assert result.depth < 12 and result.nodes <= max(first.nodes, 300) + 1


class FakeClock:
    """A clock that moves one millisecond every time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def test_a_time_limit_stops_the_search(monkeypatch):
    """With ``time_limit`` the clock is read every ``CLOCK_EVERY`` positions and the search stops
    once it has run out; the node budget is then the ceiling. Timed by a fake clock."""
    board = random_game(15, 15, 5, seed=3)[20]
    mark = to_move(board)
    first = AlphaBetaPlayer(15, 15, 5, depth=1).search(board, mark).nodes
    monkeypatch.setattr(negamax.time, "perf_counter", FakeClock())
    player = AlphaBetaPlayer(15, 15, 5, time_limit=0.02)
    assert player.max_nodes == MAX_NODES
    result = player.search(board, mark)
    # at most 20 readings of the clock after the first iteration, CLOCK_EVERY positions apart
    assert result.depth >= 1 and result.nodes <= first + 20 * negamax.CLOCK_EVERY
    assert all(board[m] == game.EMPTY for m in result.moves)
    untimed = AlphaBetaPlayer(15, 15, 5, max_nodes=MAX_NODES, depth=8).search(board, mark)
    assert untimed.nodes > result.nodes  # so the limit, not the depth, stopped it


def test_time_limit_in_a_spec():
    player = parse_opponent("alphabeta:time_limit=0.5", game.rules(15, 15, 5))
    assert player.time_limit == 0.5 and player.max_nodes == MAX_NODES
    assert "time_limit=0.5" in repr(player)
    assert AlphaBetaPlayer(time_limit=1, max_nodes=50).max_nodes == 50


@pytest.mark.parametrize("spec", ["alphabeta:depth=None,max_nodes=None",
                                  "alphabeta:max_nodes=none"])
def test_a_spec_can_say_none(spec):
    """``none`` in a spec is None (issue 16: the error offered None, which no spec could say)."""
    player = parse_opponent(spec)
    assert player.max_nodes is None and player.exhaustive
    with pytest.raises(ValueError, match="at most 16 cells; the 15x15 board has 225"):
        parse_opponent(spec, game.rules(15, 15, 5))


@pytest.mark.parametrize(("rows", "cols", "k"), [(15, 15, 5), (5, 4, 4), (9, 9, 5)])
def test_exhaustive_search_is_refused_where_the_board_is_not_solvable(rows, cols, k):
    with pytest.raises(ValueError, match=r"give max_nodes \(1 to 1,000,000\), depth or time_l"):
        make_opponent("alphabeta", depth=None, max_nodes=None, rows=rows, cols=cols,
                      win_length=k)
    assert AlphaBetaPlayer(4, 4, 4, depth=None, max_nodes=None).exhaustive


@pytest.mark.parametrize(("rows", "cols", "k"), [(15, 15, 5), (6, 6, 4), (7, 5, 4)])
def test_same_board_mark_and_rng_state_give_the_same_move(rows, cols, k):
    for seed in range(3):
        for board in random_game(rows, cols, k, seed)[4:40:6]:
            moves = {AlphaBetaPlayer(rows, cols, k).act(board, to_move(board),
                                                        np.random.default_rng(seed))
                     for _ in range(2)}
            assert len(moves) == 1 and board[moves.pop()] == game.EMPTY


def _play(rows, cols, k, x, o, rng) -> int:
    board = np.zeros(rows * cols, np.int8)
    for ply in range(rows * cols):
        mark = game.X if ply % 2 == 0 else game.O
        player = x if mark == game.X else o
        if player is None:
            empty = np.flatnonzero(board == 0)
            cell = int(empty[int(rng.random() * empty.size)])
        else:
            cell = player.act(board.copy(), mark, rng)
        assert board[cell] == game.EMPTY
        board[cell] = mark
        if brute_won(rows, cols, k, tuple(board.tolist()), cell):
            return mark
    return 0


@pytest.mark.parametrize(("rows", "cols", "k", "games"), [(6, 6, 4, 6), (15, 15, 5, 2)])
def test_beats_a_random_player(rows, cols, k, games):
    player, rng = AlphaBetaPlayer(rows, cols, k), np.random.default_rng(0)
    for i in range(games):
        mark = game.X if i % 2 == 0 else game.O
        x, o = (player, None) if mark == game.X else (None, player)
        assert _play(rows, cols, k, x, o, rng) == mark


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "message"), [
    ({"rows": 0}, "rows must be an integer from 1 to 15"),
    ({"rows": 16}, "rows must be an integer from 1 to 15"),
    ({"cols": 2.0}, "cols must be an integer from 1 to 15"),
    ({"rows": True}, "rows must be"),
    ({"win_length": 4}, r"win_length must be an integer from 1 to 3 \(the longer side"),
    ({"win_length": 0}, "win_length must be"),
    ({"depth": 0}, "depth must be an integer from 1 to 9 or None"),
    ({"depth": "3"}, "depth must be"),
    ({"max_nodes": 0}, "max_nodes must be an integer from 1 to 1,000,000 or None"),
    ({"max_nodes": 10**7}, "max_nodes must be"),
    ({"time_limit": 0}, r"time_limit must be a number in \(0, 60\] or None \(seconds a move\)"),
    ({"time_limit": 61}, "time_limit must be"),
    ({"time_limit": float("nan")}, "time_limit must be"),
    ({"time_limit": "1"}, "time_limit must be"),
    ({"time_limit": True}, "time_limit must be"),
    ({"radius": 0}, "radius must be an integer from 1 to 14"),
    ({"radius": None}, "radius must be"),
    ({"width": 0}, "width must be an integer from 1 to 225 or None"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AlphaBetaPlayer(**kwargs)


@pytest.mark.parametrize(("board", "mark", "message"), [
    (np.zeros(8, np.int8), 1, "board must be a 1-D integer array of the 9 cells"),
    (np.zeros((3, 3), np.int8), 1, "board must be a 1-D integer array"),
    (np.zeros(9), 1, "board must be a 1-D integer array"),
    ("X........", 1, "board must be a 1-D integer array"),
    (np.array([1, 0, 0, 0, 0, 0, 0, 0, 3]), 2, r"cells must be 0 \(empty\), 1 \(X\) or 2 \(O\)"),
    (grid("... ... ..."), 3, r"mark must be 1 \(X\) or 2 \(O\)"),
    (grid("... ... ..."), True, "mark must be"),
    (grid("XX. ... ..."), 2, "impossible board: 2 X and 0 O"),
    (grid("O.. ... ..."), 1, "impossible board: 0 X and 1 O"),
    (grid("X.. ... ..."), 1, "it is O's turn on this board, not X's"),
    (grid("XXX OO. ..."), 2, "the game is over: X has 3 in a row"),
    (grid("XOX XOO OXX"), 2, "the game is over: the board is full"),
])
def test_bad_boards_are_explained(board, mark, message):
    with pytest.raises(ValueError, match=message):
        AlphaBetaPlayer().act(board, mark, np.random.default_rng(0))


def test_accepts_any_integer_board_and_returns_a_python_int():
    move = AlphaBetaPlayer().act([1, 0, 0, 0, 2, 0, 0, 0, 0], 1, np.random.default_rng(0))
    assert type(move) is int and move in {1, 2, 3, 5, 6, 7, 8}


# --- the scratch position ------------------------------------------------------------------------

def _search(board: np.ndarray, rows: int, cols: int, k: int) -> Search:
    geo = geometry(rows, cols, k)
    return Search(compiled(), geo, board, geo.near(2), budget=100, exhaustive=False, width=12,
                  time_limit=None)


def _state(search: Search) -> tuple:
    """Everything a search reads (an occupied cell's gain is never read)."""
    code, sums, four, counts, gains, cover, occupied, keys, state = search.pos
    empty = occupied == 0
    return tuple(a.tolist() for a in (code, sums, four, counts, gains[:, empty], cover, occupied,
                                      keys, state))


@pytest.mark.slow
@pytest.mark.parametrize(("rows", "cols", "k"), [(15, 15, 5), (6, 6, 4), (3, 3, 3), (4, 7, 2)])
def test_place_and_undo_keep_every_table_as_a_fresh_build_would(rows, cols, k):
    core, rng = compiled(), np.random.default_rng(1)
    for seed in range(3):
        boards = random_game(rows, cols, k, seed)
        boards = boards[len(boards) // 3 :]
        moves = [int(np.flatnonzero(b != a)[0]) for a, b in pairwise(boards)]
        search = _search(boards[0], rows, cols, k)
        before = _state(search)
        for cell in moves:
            core.place(cell, True, search.geo, search.pos)
        assert _state(search) == _state(_search(boards[-1], rows, cols, k))
        for cell in reversed(moves):
            core.undo(cell, True, search.geo, search.pos)
        assert _state(search) == before
        keep = [bool(g) for g in rng.integers(0, 2, len(moves))]  # some moves without gains
        for cell, gains in zip(moves, keep, strict=True):
            core.place(cell, gains, search.geo, search.pos)
        for cell, gains in reversed(list(zip(moves, keep, strict=True))):
            core.undo(cell, gains, search.geo, search.pos)
        assert _state(search) == before


@pytest.mark.slow
def test_a_moves_gain_is_the_evaluation_it_leads_to():
    """The frontier's shortcut: after a move, the evaluation from the mover's side is base() +
    gain, without playing the move (less FOUR_BONUS for each four the move makes)."""
    core, fours = compiled(), 0
    for board in random_game(15, 15, 5, seed=5)[3:40:3]:
        search = _search(board, 15, 15, 5)
        side = int(search.pos[8][1])
        for cell in np.flatnonzero(board == 0)[::7].tolist():
            gain = int(search.pos[4][side, cell])
            fours += gain >= FOUR_BONUS
            expected = core.base(search.pos) + gain % FOUR_BONUS
            core.place(cell, True, search.geo, search.pos)
            assert -core.static(search.pos) == expected
            core.undo(cell, True, search.geo, search.pos)
    assert fours > 0  # the case of moves that make a four came up


def test_the_benchmark_measures_times_and_results():
    """benchmarks/alphabeta.py, which benchmarks/speed.py calls, on a tiny run."""
    bench = benchmark_module("alphabeta")
    results = bench.measure(boards=((5, 5, 4),), count=6, games=4, seed=0)
    entry = results["5x5x4"]
    assert entry["reply"]["positions"] == 6 and entry["reply"]["median_ms"] > 0
    assert entry["versus_random"] == {seat: {"win": 2, "draw": 0, "loss": 0}
                                      for seat in ("as_X", "as_O")}
    assert "5x5x4: reply median" in bench.report(results)


def test_a_kept_table_is_emptied_after_each_search():
    """Small tables are kept per thread between searches and emptied slot by slot: a search
    after others answers as one with a fresh table (the transposition table's entries never
    leak from one position to the next)."""
    from gym_tictactoe.players import compiled as edge

    boards = random_game(15, 15, 5, seed=4)[6:30:6]
    player = AlphaBetaPlayer(15, 15, 5, max_nodes=2000)
    kept = [player.search(b, to_move(b)) for b in boards]
    for table in edge._kept.tables.values():
        assert not table[1][:, 0].any() and table[2][0] == 0
    edge._kept.tables.clear()
    fresh = [AlphaBetaPlayer(15, 15, 5, max_nodes=2000).search(boards[i], to_move(boards[i]))
             for i in (3, 0)]
    assert fresh == [kept[3], kept[0]]


@pytest.mark.e2e
def test_without_numba_a_search_is_one_line():
    """numba is imported by the first search only; missing, it is one line (CoreUnavailable,
    which the command line prints), not a traceback from deep inside."""
    import subprocess
    import sys

    code = ("import sys\n"
            "sys.modules['numba'] = None  # as if not installed\n"
            "import numpy as np\n"
            "from gym_tictactoe.players.search import AlphaBetaPlayer\n"
            "from gym_tictactoe.game.proofs import CoreUnavailable\n"
            "player = AlphaBetaPlayer(6, 6, 4)\n"
            "board = np.zeros(36, np.int8); board[14] = 1\n"
            "try:\n"
            "    player.search(board, 2)\n"
            "except CoreUnavailable as error:\n"
            "    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1 and "needs numba" in result.stdout

"""The rules tables against the known facts and against independent, spelled-out rules."""

import itertools

import numpy as np
import pytest

from gym_tictactoe import game

T3 = game.TICTACTOE  # tic-tac-toe's rules, for lines that would not fit

# Written out by hand, independently of game.win_lines, to check the table it derives.
HAND_LINES = {(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8),
              (0, 4, 8), (2, 4, 6)}


def slow_winner(cells):
    return {cells[a] for a, b, c in HAND_LINES if cells[a] and cells[a] == cells[b] == cells[c]}


def test_lines_are_the_eight_lines_of_the_board():
    assert set(T3.lines) == HAND_LINES and len(T3.lines) == 8


def test_win_lines_generalise_to_other_boards():
    # 4x4 with three in a row: 8 horizontal, 8 vertical and 8 diagonal segments.
    assert len(game.win_lines(4, 4, 3)) == 24
    assert len(game.win_lines(3, 4, 4)) == 3
    assert game.win_lines(1, 3, 3) == ((0, 1, 2),)


def test_known_counts_of_positions():
    assert len(T3.reachable) == 5478
    assert int(T3.tables.terminal[T3.reachable].sum()) == 958
    assert len(np.unique(T3.tables.canonical[T3.reachable])) == 765
    assert [len(layer) for layer in T3.layers] == [1, 9, 72, 252, 756, 1260, 1520, 1140, 390, 78]


def test_known_counts_of_games():
    assert game.count_games() == {"games": 255168, "X": 131184, "O": 77904, "draw": 46080}


def test_winner_and_terminal_tables_match_spelled_out_rules():
    for code in T3.reachable:
        cells = [int(v) for v in T3.tables.cells[code]]
        winners = slow_winner(cells)
        assert len(winners) <= 1, "a reachable position never has two winners"
        assert T3.winner(int(code)) == (winners.pop() if winners else 0)
        assert T3.is_terminal(int(code)) == (T3.winner(int(code)) != 0 or 0 not in cells)


def test_side_to_move_and_legal_mask():
    for code in T3.reachable[::7]:
        cells = T3.tables.cells[code]
        n_x, n_o = int((cells == 1).sum()), int((cells == 2).sum())
        assert T3.to_move(int(code)) == (1 if n_x == n_o else 2)
        expected = [] if T3.is_terminal(int(code)) else np.flatnonzero(cells == 0).tolist()
        assert T3.legal_moves(int(code)) == expected


def test_encode_decode_round_trip():
    rng = np.random.default_rng(0)
    for code in rng.integers(T3.n_codes, size=200):
        assert T3.encode(T3.decode(int(code))) == code


@pytest.mark.parametrize(
    "bad",
    [[0] * 8, [0] * 8 + [3], [[0, 0, 0]] * 2, "XOX", [1.7] + [0] * 8, [True] * 9, [[0], [0, 0]]],
)
def test_encode_rejects_bad_boards(bad):
    with pytest.raises(ValueError, match="9 cells of 0"):
        T3.encode(bad)


# A whole game, with the board after every move.
GAME = [
    (4, "....X...."),
    (0, "O...X...."),
    (2, "O.X.X...."),
    (6, "O.X.X.O.."),
    (3, "O.XXX.O.."),
    (5, "O.XXXOO.."),
    (1, "OXXXXOO.."),
    (7, "OXXXXOOO."),
    (8, "OXXXXOOOX"),
]


def test_table_driven_game():
    code = game.EMPTY_BOARD
    for cell, expected in GAME:
        assert not T3.is_terminal(code)
        code = T3.play(code, cell)
        assert "".join(".XO"[v] for v in T3.decode(code)) == expected
    assert T3.is_terminal(code) and T3.winner(code) == 0


def test_play_leaves_the_position_alone_and_rejects_illegal_moves():
    code = T3.play(game.EMPTY_BOARD, 4)
    assert T3.play(code, 0) != code and T3.decode(code)[0] == 0
    with pytest.raises(ValueError, match=r"move 4 is not legal here; legal moves: \[0, 1, 2, 3, 5"):
        T3.play(code, 4)
    with pytest.raises(ValueError, match="move 9"):
        T3.play(code, 9)
    with pytest.raises(ValueError, match="cannot arise in a game"):
        T3.play(T3.encode([1, 1, 0, 0, 0, 0, 0, 0, 0]), 2)
    won = T3.encode([1, 1, 1, 2, 2, 0, 0, 0, 0])
    with pytest.raises(ValueError, match=r"legal moves: \[\]"):
        T3.play(won, 5)


def test_symmetries_form_the_group_of_the_square():
    perms = {tuple(p) for p in T3.symmetries}
    assert len(perms) == 8
    for a, b in itertools.product(T3.symmetries, repeat=2):
        assert tuple(a[b]) in perms
    for perm in T3.symmetries:
        mapped = {tuple(sorted(perm[list(line)])) for line in HAND_LINES}
        assert mapped == HAND_LINES  # a symmetry maps lines to lines


def test_canonical_form_is_shared_by_all_images():
    rng = np.random.default_rng(1)
    for code in rng.choice(T3.reachable, size=100):
        images = {T3.transform(int(code), s) for s in range(8)}
        assert {T3.canonical(image) for image in images} == {min(images)}
        assert all(T3.winner(image) == T3.winner(int(code)) for image in images)


def test_inverse_symmetries_undo_the_symmetries():
    cells = np.arange(9)
    for perm, inverse in zip(T3.symmetries, T3.inverse_symmetries, strict=True):
        assert (cells[perm][inverse] == cells).all()


def test_tables_are_read_only():
    with pytest.raises(ValueError):
        T3.tables.winner[0] = 1


def test_copies_and_pickles_of_a_board_are_the_one_cached_board():
    import copy
    import pickle

    board = game.rules(4, 4, 3)
    assert copy.deepcopy(board) is board and pickle.loads(pickle.dumps(board)) is board

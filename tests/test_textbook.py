"""The assignment's specification, bullet by bullet, against gym_tictactoe.textbook."""

from __future__ import annotations

import copy

import pytest

from gym_tictactoe.textbook import (
    EMPTY,
    O,
    X,
    actions,
    initial_state,
    minimax,
    player,
    result,
    terminal,
    utility,
    winner,
)

ALL_CELLS = {(i, j) for i in range(3) for j in range(3)}


def board(text: str) -> list[list[str | None]]:
    """A board from three space-separated rows such as ``"XO. .X. ..O"`` ('.' is EMPTY)."""
    marks = {"X": X, "O": O, ".": EMPTY}
    return [[marks[c] for c in row] for row in text.split()]


# Every way to win, for each side; the loser's marks never make a line.
X_WINS = {
    "top row": "XXX OO. ...",
    "middle row": "OO. XXX ...",
    "bottom row": "OO. ... XXX",
    "left column": "XO. XO. X..",
    "middle column": ".XO .XO .X.",
    "right column": "O.X O.X ..X",
    "diagonal": "XO. OX. ..X",
    "anti-diagonal": "O.X .XO X..",
}
O_WINS = {
    "top row": "OOO XX. X..",
    "middle row": "XX. OOO X..",
    "bottom row": "XX. X.. OOO",
    "left column": "OX. OX. O.X",
    "middle column": ".OX XO. .OX",
    "right column": "X.O X.O .XO",
    "diagonal": "OX. XO. X.O",
    "anti-diagonal": "XXO .O. OX.",
}
TIE = "XOX XOO OXX"
IN_PROGRESS = ["... ... ...", "X.. .O. ...", "XOX .O. ..X"]


# initial_state: the starting board is three rows of three EMPTY values.
def test_initial_state_is_three_empty_rows():
    start = initial_state()
    assert start == [[EMPTY] * 3 for _ in range(3)]
    start[0][0] = X  # each call builds a fresh board, so this must not leak into the next
    assert initial_state()[0][0] is EMPTY


# player: X moves first, then the players alternate with each additional move.
def test_x_moves_first():
    assert player(initial_state()) == X


def test_player_alternates_with_each_move():
    moves = [(1, 1), (0, 0), (2, 2), (0, 2), (0, 1), (2, 1), (1, 0), (1, 2)]
    state = initial_state()
    for turn, move in enumerate(moves):
        assert player(state) == (X if turn % 2 == 0 else O)
        state = result(state, move)


# actions: a set of (i, j) tuples, exactly the cells without an X or an O.
def test_actions_on_the_empty_board_are_every_cell():
    moves = actions(initial_state())
    assert isinstance(moves, set)
    assert moves == ALL_CELLS
    assert all(isinstance(a, tuple) and len(a) == 2 for a in moves)


def test_actions_are_the_empty_cells():
    assert actions(board("X.. .O. ..X")) == ALL_CELLS - {(0, 0), (1, 1), (2, 2)}


# result: a new board with the mover's mark added; the input board is left unmodified.
def test_result_places_the_movers_mark():
    assert result(initial_state(), (0, 2)) == board("..X ... ...")
    assert result(board("..X ... ..."), (1, 1)) == board("..X .O. ...")


def test_result_does_not_modify_the_input_board():
    before = board("X.. .O. ...")
    snapshot = copy.deepcopy(before)
    after = result(before, (2, 2))
    assert before == snapshot
    assert after is not before
    assert all(new is not old for new, old in zip(after, before, strict=True))
    after[0][1] = O  # nor does the new board share rows with the old one
    assert before == snapshot


def test_result_raises_on_an_occupied_cell():
    with pytest.raises(ValueError, match=r"cell \(1, 1\) holds O"):
        result(board("X.. .O. ..."), (1, 1))


@pytest.mark.parametrize("action", [(3, 0), (0, 3), (-1, 0), (0, -1), (1,), (0, 1, 2), [0, 1],
                                    "a1", (0.0, 1), (True, 0), None])
def test_result_raises_on_an_action_out_of_range_or_malformed(action):
    with pytest.raises(ValueError, match="an action is a tuple"):
        result(initial_state(), action)


def test_result_raises_once_the_game_is_over():
    with pytest.raises(ValueError, match="game is over"):
        result(board(X_WINS["top row"]), (2, 2))


# winner: X or O for three in a row horizontally, vertically or diagonally.
@pytest.mark.parametrize("line", X_WINS)
def test_winner_x(line):
    assert winner(board(X_WINS[line])) == X


@pytest.mark.parametrize("line", O_WINS)
def test_winner_o(line):
    assert winner(board(O_WINS[line])) == O


# winner: None while the game is in progress or when it ended in a tie.
@pytest.mark.parametrize("text", [*IN_PROGRESS, TIE])
def test_no_winner_in_progress_or_tie(text):
    assert winner(board(text)) is None


# terminal: True when someone has won or every cell is filled, else False.
@pytest.mark.parametrize("text", [*X_WINS.values(), *O_WINS.values(), TIE])
def test_terminal_when_won_or_full(text):
    assert terminal(board(text)) is True


@pytest.mark.parametrize("text", IN_PROGRESS)
def test_not_terminal_in_progress(text):
    assert terminal(board(text)) is False


# utility: 1 when X has won, -1 when O has won, 0 for a tie.
def test_utility_values():
    assert {utility(board(t)) for t in X_WINS.values()} == {1}
    assert {utility(board(t)) for t in O_WINS.values()} == {-1}
    assert utility(board(TIE)) == 0


# minimax: an allowable action for the player to move ...
@pytest.mark.slow
def test_minimax_returns_an_allowed_action_in_every_position():
    for state in _every_position():
        if not terminal(state):
            assert minimax(state) in actions(state), state


# ... and None on a terminal board.
@pytest.mark.parametrize("text", [X_WINS["diagonal"], O_WINS["left column"], TIE])
def test_minimax_on_a_terminal_board_is_none(text):
    assert minimax(board(text)) is None


# ... and optimal: it takes an immediate win and blocks an immediate loss.
@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("XX. OO. ...", (0, 2)),  # X completes the top row
        ("XX. OO. X..", (1, 2)),  # O wins at once rather than blocking X
        ("XX. .O. ...", (0, 2)),  # O blocks the top row
        ("OO. X.. X..", (0, 2)),  # X blocks the top row
    ],
)
def test_minimax_wins_now_or_blocks(text, move):
    assert minimax(board(text)) == move


# "You should never be able to beat the AI": every line the other side can play, in both seats.
@pytest.mark.parametrize("ai", [X, O])
def test_minimax_never_loses(ai):
    assert _worst_outcome(initial_state(), ai) == 0  # never a loss, and perfect play draws


def _worst_outcome(state, ai) -> int:
    """The worst final result for ``ai`` (+1 win, 0 tie, -1 loss) over all the other's replies."""
    if terminal(state):
        return utility(state) * (1 if ai == X else -1)
    if player(state) == ai:
        return _worst_outcome(result(state, minimax(state)), ai)
    return min(_worst_outcome(result(state, a), ai) for a in actions(state))


def _every_position():
    """Every board reachable from the start, found with the textbook functions alone."""
    seen, frontier = {}, [initial_state()]
    while frontier:
        state = frontier.pop()
        key = str(state)
        if key not in seen:
            seen[key] = state
            frontier += [] if terminal(state) else [result(state, a) for a in actions(state)]
    assert len(seen) == 5478
    return seen.values()


# The spec lets functions assume a valid board; ours still reject an invalid one clearly.
@pytest.mark.parametrize(
    "bad",
    [[], [[EMPTY] * 3] * 2, [[EMPTY] * 3, [EMPTY] * 3, [EMPTY] * 2], "X........", None],
)
def test_malformed_board_shape_raises(bad):
    with pytest.raises(ValueError, match="3 rows of 3 values"):
        terminal(bad)


@pytest.mark.parametrize("value", ["x", 0, 1, False, "", "XO"])
def test_bad_cell_value_raises(value):
    with pytest.raises(ValueError, match="X, O or EMPTY"):
        winner([[value, EMPTY, EMPTY], [EMPTY] * 3, [EMPTY] * 3])


def test_impossible_mark_counts_raise():
    with pytest.raises(ValueError, match="got 2 X and 0 O"):
        player(board("XX. ... ..."))


# One rule for invalid boards, the same in all seven functions: a board no game can reach is
# refused, whatever the function (utility of three rows of O used to answer -1).
SEVEN = {"player": player, "actions": actions, "result": lambda b: result(b, (0, 0)),
         "winner": winner, "terminal": terminal, "utility": utility, "minimax": minimax}
UNREACHABLE = {
    "all O": ("OOO OOO OOO", "got 0 X and 9 O"),
    "O moved after X won": ("XXX OO. O..", "O moved after X had already won"),
    "X moved after O won": ("OOO XX. XX.", "X moved after O had already won"),
    "both have a line": ("XXX OOO ...", "both X and O have three in a row"),
    "too many X": ("XX. ... ...", "got 2 X and 0 O"),
}


@pytest.mark.parametrize("name", SEVEN)
@pytest.mark.parametrize("case", UNREACHABLE)
def test_every_function_refuses_a_board_no_game_reaches(name, case):
    text, reason = UNREACHABLE[case]
    with pytest.raises(ValueError, match=rf"no game reaches the board \[\[.*\]\]: .*{reason}"):
        SEVEN[name](board(text))


def test_the_rule_is_exactly_reachability():
    from gym_tictactoe import game
    from gym_tictactoe.textbook import _board

    refused = 0
    for code in range(game.TICTACTOE.n_codes):
        try:
            terminal(_board(code))
        except ValueError as error:
            assert "no game reaches the board" in str(error)
            assert "no sequence of legal moves" not in str(error)  # a specific reason
            refused += 1
    assert refused == game.TICTACTOE.n_codes - 5478

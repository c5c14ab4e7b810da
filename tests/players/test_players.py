"""One player protocol: a player behaves the same in the single env and the vector env, whatever
it overrides, on tabled boards and on cell boards; the combinators serve both envs."""

from __future__ import annotations

import numpy as np
import pytest

from gym_tictactoe import game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.vector import TicTacToeVectorEnv
from gym_tictactoe.game.positions import from_board, new_position
from gym_tictactoe.players.opponents import EpsilonOpponent, MixtureOpponent, RandomOpponent
from gym_tictactoe.players.protocol import as_player

T3 = game.TICTACTOE  # tic-tac-toe's rules

BOARDS = [(3, 3, 3), (4, 5, 4), (6, 6, 4)]  # tables; codes kept on cell boards; cells only


class Lowest(RandomOpponent):
    """The issue's case: a RandomOpponent whose ``act`` always plays the lowest free cell."""

    def act(self, board: np.ndarray, mark: int, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(board == game.EMPTY)[0])


class Highest(RandomOpponent):
    """The same through the protocol's own entry point: ``move`` on a position."""

    def move(self, position, rng: np.random.Generator) -> int:
        return int(max(position.moves()))


def lowest(board: np.ndarray) -> int:
    return int(np.flatnonzero(board == game.EMPTY)[0])


def highest(board: np.ndarray) -> int:
    return int(np.flatnonzero(board == game.EMPTY)[-1])


def single_replies(opponent, size, rule, moves: int = 3) -> None:
    """Replies of the single env's opponent (the agent plays O, then its lowest free cells)."""
    env = TicTacToeEnv(opponent, "O", rows=size[0], cols=size[1], win_length=size[2])
    _, info = env.reset(seed=0)
    assert info["opponent_action"] == rule(np.zeros(size[0] * size[1], np.int8))
    for _ in range(moves):
        before = info["board"].copy()
        _, _, terminated, _, info = env.step(int(np.flatnonzero(before == 0)[0]))
        if terminated:
            break
        played = before.copy()
        played[np.flatnonzero(before == 0)[0]] = game.O
        assert info["opponent_action"] == rule(played)


def vector_replies(opponent, size, rule, moves: int = 3) -> None:
    envs = TicTacToeVectorEnv(16, opponent, "O", rows=size[0], cols=size[1], win_length=size[2])
    _, info = envs.reset(seed=0)
    assert (info["opponent_action"] == rule(np.zeros(size[0] * size[1], np.int8))).all()
    for _ in range(moves):
        before = info["board"].copy()
        actions = np.argmax(before == 0, axis=1)
        _, _, terminated, _, info = envs.step(actions)
        if terminated.any():
            break
        played = before.copy()
        played[np.arange(16), actions] = game.O
        assert (info["opponent_action"] == [rule(board) for board in played]).all()


@pytest.mark.parametrize("size", BOARDS)
@pytest.mark.parametrize(("kind", "rule"), [(Lowest, lowest), (Highest, highest)])
def test_a_subclass_of_a_builtin_plays_its_override_in_both_envs(size, kind, rule):
    # Before one protocol, Lowest played 0 in the single env and random cells in the vector env
    # (which read RandomOpponent's table and ignored the override).
    opponent = kind(rows=size[0], cols=size[1], win_length=size[2])
    single_replies(opponent, size, rule)
    vector_replies(opponent, size, rule)


@pytest.mark.parametrize("size", BOARDS)
def test_combinators_over_a_subclass_serve_both_envs(size):
    kwargs = {"rows": size[0], "cols": size[1], "win_length": size[2]}
    for opponent in (EpsilonOpponent(0.0, Lowest(**kwargs), **kwargs),
                     MixtureOpponent([Lowest(**kwargs)], **kwargs)):
        single_replies(opponent, size, lowest)
        vector_replies(opponent, size, lowest)


def test_an_object_with_act_is_wrapped_once_and_a_builtin_is_not():
    builtin, custom = RandomOpponent(), Lowest()
    assert as_player(builtin, game.TICTACTOE) is builtin
    wrapped = as_player(custom, game.TICTACTOE)
    assert wrapped is not custom and wrapped.opponent is custom
    assert wrapped.move(new_position(T3), np.random.default_rng(0)) == 0


@pytest.mark.parametrize("size", BOARDS)
def test_positions_play_undo_and_agree_with_the_rules(size):
    rules = game.rules(*size)
    rng = np.random.default_rng(1)
    position, code = new_position(rules), game.EMPTY_BOARD
    while not position.terminal:
        cell = int(rng.choice(position.moves()))
        before = (position.cells.copy(), position.code, position.mark)
        assert position.play(cell) and not position.play(cell)  # taken: the second is refused
        code = code + before[2] * 3**cell
        assert position.code in (None, code)
        twin = from_board(rules, position.cells)
        assert (twin.winner, twin.terminal) == (position.winner, position.terminal)
        if not position.terminal:
            assert twin.mark == position.mark and (twin.mask() == position.mask()).all()
            position.undo(cell)
            assert (position.cells == before[0]).all() and position.code == before[1]
            assert position.mark == before[2] and position.play(cell)
    assert rules.winner(code) == position.winner and rules.is_terminal(code)
    assert not position.mask().any() and len(position.moves()) == 0


def test_a_player_written_as_one_class_plays_the_command_lines_game():
    from gym_tictactoe.cli import play_game

    # Highest (X) takes 8, 7, 6 while Lowest (O) takes 0, 1: X completes the bottom row.
    seen = []
    final = play_game({game.X: Highest(), game.O: Lowest()}, np.random.default_rng(0),
                      lambda code, mark, cell: seen.append((mark, cell)), rules=T3)
    assert seen == [(game.X, 8), (game.O, 0), (game.X, 7), (game.O, 1), (game.X, 6)]
    assert T3.winner(final) == game.X
    big = game.rules(6, 6, 4)  # a board without codes kept: the final code is computed
    final = play_game({game.X: Highest(**big.kwargs), game.O: Lowest(**big.kwargs)},
                      np.random.default_rng(0), rules=big)
    assert big.winner(final) == game.X and big.decode(final)[-4:].tolist() == [1] * 4

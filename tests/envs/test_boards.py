"""Every m,n,k-board (issue 8): the 3x3 invariants of the env and the rules on random boards and
random play, the Gymnasium checker, seeding, and the heuristic's first rules.

Wins are checked here by sliding a window along every row, column and diagonal of the grid,
independently of ``game.win_lines`` and the bit masks under test.
"""

from __future__ import annotations

import warnings
from itertools import product
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from boards_helpers import BruteForce, Size, board_kwargs, expected_end, has_line
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env, data_equivalence
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import gym_tictactoe  # noqa: F401  (registers TicTacToe-v0)
from gym_tictactoe import game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.vector import TicTacToeVectorEnv
from gym_tictactoe.game import basics
from gym_tictactoe.players.opponents import HeuristicOpponent

INFO_KEYS = {"action_mask", "agent_mark", "board", "opponent_action", "winner", "illegal_action"}
# Tables of an 11- or 12-cell board take tens of MB and a few tenths of a second to build: the
# property tests meet this one only (smaller boards and boards without tables are cheap).
TABLED_BIG = (3, 4, 3)


@st.composite
def board_sizes(draw: Any) -> Size:
    side = st.integers(1, 6) | st.integers(1, game.MAX_SIDE)  # mostly small, some up to 15
    rows, cols = draw(side), draw(side)
    return rows, cols, draw(st.integers(1, max(rows, cols)))


def affordable(size: Size) -> bool:
    cells = size[0] * size[1]
    return cells <= 10 or cells > game.TABLE_CELLS or size == TABLED_BIG


BOARDS = board_sizes().filter(affordable)


def check_reset(env: TicTacToeEnv, size: Size, obs: np.ndarray, info: dict) -> None:
    n = size[0] * size[1]
    assert obs in env.observation_space and obs.dtype == np.int8 and obs.shape == (n,)
    board = info["board"]
    opens = info["agent_mark"] == "O"
    assert set(info) == INFO_KEYS and (info["winner"], info["illegal_action"]) == ("", False)
    assert (info["opponent_action"] >= 0) is opens
    assert (board != 0).sum() == int(opens) and (not opens or board[info["opponent_action"]] == 1)
    assert (obs == (board if not opens else game.SWAP[board])).all()
    assert info["action_mask"].dtype == np.int8 and (info["action_mask"] == (board == 0)).all()
    assert (env.action_masks() == (board == 0)).all()


def check_step(env: TicTacToeEnv, size: Size, before: np.ndarray, action: Any,
               result: tuple) -> None:
    """Every invariant of a step from the board ``before`` (absolute cells)."""
    obs, reward, terminated, truncated, info = result
    board, agent = info["board"], game.MARKS[info["agent_mark"]]
    assert obs in env.observation_space and obs.dtype == np.int8
    assert (obs == (board if agent == game.X else game.SWAP[board])).all()
    assert type(reward) is float and type(terminated) is bool and truncated is False
    assert set(info) == INFO_KEYS and info["action_mask"].dtype == np.int8
    n_x, n_o = int((board == game.X).sum()), int((board == game.O).sum())
    assert n_x - n_o in (0, 1)  # marks alternate, X first
    assert (board[before != 0] == before[before != 0]).all()  # marks never change or vanish
    legal = type(action) is int and 0 <= action < len(board) and before[action] == 0
    assert info["illegal_action"] is (not legal)
    added = set(np.flatnonzero(board != before).tolist())
    if not legal:
        assert added == set() and terminated and reward == -1.0
        assert info["winner"] == game.MARK_NAMES[3 - agent]  # the illegal move forfeits
    else:
        reply = info["opponent_action"]
        assert added == {action} | ({reply} if reply != -1 else set())
        assert board[action] == agent and (reply == -1 or board[reply] == 3 - agent)
        over, winner = expected_end(board, size)
        assert terminated == over and (reply != -1 or over)
        assert info["winner"] == (winner or "")
        assert reward == (0.0 if winner is None else 1.0 if game.MARKS[winner] == agent else -1.0)
    mask = np.zeros(len(board), dtype=bool) if terminated else board == 0
    assert (info["action_mask"] == mask).all() and (env.action_masks() == mask).all()


OPPONENTS = ["random", "heuristic", "epsilon:epsilon=0.5,inner=heuristic", "random+heuristic*2"]


@pytest.mark.slow
@settings(max_examples=200, deadline=None, derandomize=True)
@given(size=BOARDS, seed=st.integers(0, 2**16), agent_mark=st.sampled_from(["X", "O"]),
       opponent=st.sampled_from(OPPONENTS), data=st.data())
def test_random_play_keeps_the_invariants_on_every_board(size, seed, agent_mark, opponent, data):
    assume(not (size[2] == 1 and agent_mark == "O"))  # see test_win_length_one_as_o_...
    env = TicTacToeEnv(opponent, agent_mark, **board_kwargs(size))
    n = size[0] * size[1]
    assert env.observation_space == spaces.MultiDiscrete([3] * n, dtype=np.int8)
    assert env.action_space == spaces.Discrete(n)
    obs, info = env.reset(seed=seed)
    check_reset(env, size, obs, info)
    before = info["board"]
    for _ in range(80):
        legal = np.flatnonzero(before == 0).tolist()
        # Now and then any number, often an occupied cell or off the board: an illegal move.
        strays = data.draw(st.integers(0, 15)) == 0
        action = data.draw(st.integers(-1, n) if strays else st.sampled_from(legal))
        result = env.step(action)
        check_step(env, size, before, action, result)
        before = result[4]["board"]
        if result[2]:
            with pytest.raises(RuntimeError, match=r"call reset\(\)"):
                env.step(action)
            break


@settings(max_examples=40, deadline=None, derandomize=True)
@given(size=BOARDS, seed=st.integers(0, 2**16))
def test_illegal_actions_under_raise_name_the_legal_moves_and_change_nothing(size, seed):
    assume(size[2] > 1)
    env = TicTacToeEnv("random", "O", "raise", **board_kwargs(size))
    _, info = env.reset(seed=seed)
    n, taken = size[0] * size[1], int(info["opponent_action"])
    legal = np.flatnonzero(info["board"] == 0).tolist()
    for action in (taken, n, -1, 1.0, True, None, np.array([0, 1])):
        with pytest.raises(ValueError, match=rf"illegal action .*: legal moves are \[{legal[0]}"):
            env.step(action)
        assert (env.action_masks() == (info["board"] == 0)).all()
    check_step(env, size, info["board"], legal[-1], env.step(legal[-1]))  # still playable


@pytest.mark.parametrize("action", [-1, "n", 0.0, True, None, np.array([0, 1])])
@pytest.mark.parametrize("size", [(1, 4, 2), (2, 7, 3), (15, 15, 5)], ids=str)
def test_malformed_actions_under_lose_end_the_episode(size, action):
    env = TicTacToeEnv("random", "O", **board_kwargs(size))
    _, info = env.reset(seed=0)
    action = size[0] * size[1] if isinstance(action, str) else action  # one past the last cell
    obs, reward, terminated, truncated, info = env.step(action)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert info["winner"] == "X" and not info["action_mask"].any()
    assert (obs == 2).sum() == 1 and (obs == 1).sum() == 0


@pytest.mark.parametrize("size", [(1, 3, 2), (3, 4, 3), (2, 7, 3), (15, 15, 5)], ids=str)
def test_step_before_reset_raises_and_returned_arrays_are_the_callers(size):
    env, n = TicTacToeEnv("heuristic", "O", **board_kwargs(size)), size[0] * size[1]
    assert env.action_masks().tolist() == [False] * n
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    obs, info = env.reset(seed=0)
    board, obs_before = info["board"].copy(), obs.copy()
    for array in (obs, info["board"], info["action_mask"]):
        array[...] = 1  # the env must not share these with its state
    assert (env.action_masks() == (board == 0)).all()
    cell = int(np.flatnonzero(board == 0)[0])
    obs, *_, info = env.step(cell)
    assert obs[cell] == 1 and (obs[obs_before != 0] == obs_before[obs_before != 0]).all()


def rollout(env: gym.Env, seed: int, n_episodes: int = 3) -> list:
    """Seeded episodes of a seeded random legal agent (as in test_env)."""
    rng = np.random.default_rng(seed)
    trace = [env.reset(seed=seed)]
    for _ in range(n_episodes):
        while not (len(trace[-1]) == 5 and trace[-1][2]):
            trace.append(env.step(int(rng.choice(np.flatnonzero(trace[-1][-1]["action_mask"])))))
        trace.append(env.reset())
    return trace


SEEDED = [((1, 4, 2), "random"), ((3, 4, 3), "minimax"), ((3, 4, 3), "montecarlo:playouts=4"),
          ((2, 7, 3), "minimax"), ((2, 7, 3), "epsilon:epsilon=0.3,inner=heuristic"),
          ((5, 5, 4), "montecarlo:playouts=2"), ((6, 6, 4), "random+heuristic*2"),
          ((15, 15, 5), "random"), ((15, 15, 5), "heuristic")]


@pytest.mark.slow
@pytest.mark.parametrize(("size", "opponent"), SEEDED, ids=str)
def test_same_seed_same_episodes_on_every_board(size, opponent):
    def make() -> gym.Env:
        return gym.make("TicTacToe-v0", opponent=opponent, agent_mark="random",
                        **board_kwargs(size))

    first, second = rollout(make(), seed=3), rollout(make(), seed=3)
    assert data_equivalence(first, second, exact=True)
    assert not data_equivalence(first, rollout(make(), seed=4), exact=True)


CHECKED = [((1, 1, 1), "X"), ((1, 5, 2), "O"), ((2, 3, 3), "random"), ((3, 4, 3), "O"),
           ((2, 7, 3), "random"), ((4, 4, 3), "X"), ((6, 6, 4), "random"), ((7, 3, 3), "O"),
           ((15, 15, 5), "X"), ((15, 15, 5), "O")]


@pytest.mark.parametrize(("size", "agent_mark"), CHECKED, ids=str)
def test_gymnasium_checker_passes_without_warnings(size, agent_mark):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("TicTacToe-v0", agent_mark=agent_mark, opponent="heuristic",
                       **board_kwargs(size))
        # The render check shows a "human" window at 4 fps (a sleep): on a few boards only.
        check_env(env.unwrapped, skip_render_check=size not in ((2, 7, 3), (15, 15, 5)))
    assert env.observation_space.shape == (size[0] * size[1],)


@pytest.mark.parametrize("agent_mark", ["O", "random"])
def test_win_length_one_as_o_is_rejected_or_playable(agent_mark):
    kwargs = {"agent_mark": agent_mark, **board_kwargs((2, 3, 1))}
    try:
        env = gym.make("TicTacToe-v0", **kwargs)
    except ValueError:  # refusing the seat at construction is a fix too
        with pytest.raises(ValueError):
            TicTacToeVectorEnv(2, **kwargs)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    vec = TicTacToeVectorEnv(2, **kwargs)
    vec.reset(seed=0)
    assert not vec.step(np.array([0, 1]))[4]["illegal_action"].any()


# --- the rules on any board ----------------------------------------------------------------


def expected_line_count(rows: int, cols: int, k: int) -> int:
    if k == 1:
        return rows * cols
    count = rows * max(cols - k + 1, 0) + cols * max(rows - k + 1, 0)
    return count + 2 * max(rows - k + 1, 0) * max(cols - k + 1, 0)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(size=board_sizes())
def test_lines_and_symmetries_of_every_board(size):
    rows, cols, k = size
    lines = game.win_lines(rows, cols, k)
    assert len(lines) == len(set(lines)) == expected_line_count(rows, cols, k)
    for line in lines[:: max(1, len(lines) // 12)]:
        board = np.zeros(rows * cols, dtype=np.int8)
        board[list(line)] = game.O
        assert has_line(board, size, game.O) and (board == game.O).sum() == k
    perms = {tuple(p) for p in basics._symmetries(rows, cols)}
    expected = 1 if rows == cols == 1 else 8 if rows == cols else 2 if 1 in (rows, cols) else 4
    assert len(perms) == expected and tuple(range(rows * cols)) in perms
    line_set = {tuple(sorted(line)) for line in lines}
    for a, b in product(perms, repeat=2):
        assert tuple(np.array(a)[list(b)]) in perms  # a group
    for perm in perms:
        assert {tuple(sorted(np.array(perm)[list(line)])) for line in lines} == line_set


@settings(max_examples=60, deadline=None, derandomize=True)
@given(size=BOARDS, seed=st.integers(0, 2**16))
def test_positions_of_random_games_follow_the_rules_on_every_board(size, seed):
    rules, rng = game.rules(*size), np.random.default_rng(seed)
    code, codes = game.EMPTY_BOARD, [game.EMPTY_BOARD]
    while not rules.is_terminal(code):
        cells = rules.decode(code)
        empty = np.flatnonzero(cells == 0).tolist()
        assert rules.legal_moves(code) == empty
        assert rules.to_move(code) == (game.X if len(codes) % 2 else game.O)
        cell = int(rng.choice(empty))
        with pytest.raises(ValueError, match="not legal here"):
            rules.play(code, int(np.flatnonzero(cells != 0)[0]) if len(codes) > 1 else -1)
        code = rules.play(code, cell)
        assert rules.decode(code)[cell] == 3 - rules.to_move(code) and (cells != 0).sum() + 1 == (
            rules.decode(code) != 0).sum()
        codes.append(code)
    over, winner = expected_end(rules.decode(code), size)
    assert over and rules.winner(code) == game.MARKS.get(winner, 0)
    assert rules.legal_moves(code) == []
    for code in rng.choice(codes, size=min(len(codes), 4), replace=False).tolist():
        check_position(rules, code)


def check_position(rules: game.Rules, code: int) -> None:
    cells = rules.decode(code)
    assert rules.encode(cells) == code and rules.encode(cells.tolist()) == code
    images = {rules.transform(code, s) for s in range(len(rules.symmetries))}
    assert rules.canonical(code) == min(images)
    assert {rules.winner(image) for image in images} == {rules.winner(code)}
    if rules.solvable:  # the array methods agree with the one-position ones
        codes = np.array([code], dtype=np.int64)
        assert rules.cells_of(codes)[0].tolist() == cells.tolist()
        assert rules.winner_of(codes)[0] == rules.winner(code)
        assert rules.terminal_of(codes)[0] == rules.is_terminal(code)
        assert rules.to_move_of(codes)[0] == rules.to_move(code)
        assert np.flatnonzero(rules.legal_of(codes)[0]).tolist() == rules.legal_moves(code)
        moves = rules.legal_moves(code)
        assert rules.next_of(codes)[0, moves].tolist() == [rules.play(code, m) for m in moves]


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True)
@given(size=BOARDS.filter(lambda size: size[2] >= 2), seed=st.integers(0, 2**16))
def test_heuristic_takes_a_win_else_blocks_one_on_every_board(size, seed):
    """At every position of a random game: a winning move if there is one, else a move onto
    a cell where the other side would win."""
    rules, rng = game.rules(*size), np.random.default_rng(seed)
    player, lines = HeuristicOpponent(**board_kwargs(size)), BruteForce(*size)
    code = game.EMPTY_BOARD
    for _ in range(40):
        if rules.is_terminal(code):
            break
        board, mark = rules.decode(code), rules.to_move(code)
        move = player.act(board.copy(), mark, rng)
        wins, blocks = (lines.completing(board.tolist(), who) for who in (mark, 3 - mark))
        assert board[move] == 0 and move in (wins or blocks or {move})
        code = rules.play(code, int(rng.choice(rules.legal_moves(code))))

"""Helpers shared by the tests of every board size (test_boards*.py): the board's keyword
arguments, a win check and a brute-force search written independently of the code under test, and
the vector-env lockstep of test_boards_vector.py."""

from __future__ import annotations

from math import factorial
from typing import Any, NamedTuple

import numpy as np
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector.utils import batch_space

from gym_tictactoe import game
from gym_tictactoe.envs.env import TicTacToeEnv
from gym_tictactoe.envs.options import WINNER_NAMES
from gym_tictactoe.envs.vector import TicTacToeVectorEnv
from gym_tictactoe.players.opponents import (
    EpsilonOpponent,
    HeuristicOpponent,
    MinimaxOpponent,
    MixtureOpponent,
    RandomOpponent,
)

Size = tuple[int, int, int]
X, O = game.X, game.O
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
RESULTS = ("X", "O", "draw")


def board_kwargs(size: Size) -> dict[str, int]:
    return dict(zip(("rows", "cols", "win_length"), size, strict=True))


def has_line(board: np.ndarray, size: Size, mark: int) -> bool:
    """Whether ``mark`` has ``win_length`` in a row on the flat ``board``."""
    rows, cols, k = size
    grid = np.asarray(board).reshape(rows, cols) == mark
    lines = [*grid, *grid.T]
    for offset in range(-rows + 1, cols):
        lines += [np.diagonal(grid, offset), np.diagonal(grid[:, ::-1], offset)]
    return any(len(line) >= k and np.lib.stride_tricks.sliding_window_view(line, k).all(1).any()
               for line in lines)


def expected_end(board: np.ndarray, size: Size) -> tuple[bool, str | None]:
    """(game over, winner) of a board, from the rules written out above."""
    x_won, o_won = has_line(board, size, game.X), has_line(board, size, game.O)
    assert not (x_won and o_won), "a game never has two winners"
    winner = "X" if x_won else "O" if o_won else None
    return winner is not None or bool((board != game.EMPTY).all()), winner


class Node(NamedTuple):
    value: int  # for X under perfect play: +1, 0, -1
    plies: int  # to the end under perfect play
    best: tuple[int, ...]  # the moves that keep both (empty at the end)
    keeps: tuple[int, ...]  # the moves that keep the value
    games: tuple[int, int, int]  # complete games from here won by X, won by O, drawn
    # The same results under uniformly random play, as probabilities times e! (e: empty cells
    # here): integers, and a node's are its children's sums, each child having chance 1/e.
    chances: tuple[int, int, int]


class BruteForce:
    """Every position reachable from the ones visited, by depth-first search with a memo."""

    def __init__(self, rows: int, cols: int, k: int) -> None:
        self.rows, self.cols, self.k = rows, cols, k
        self.nodes: dict[tuple[int, ...], Node] = {}

    def completes_line(self, cells: tuple[int, ...] | list[int], cell: int) -> bool:
        """Whether the mark on ``cell`` has ``k`` in a row through it."""
        mark, (row, col) = cells[cell], divmod(cell, self.cols)
        for dr, dc in DIRECTIONS:
            run = 1
            for sign in (1, -1):
                r, c = row + sign * dr, col + sign * dc
                inside = 0 <= r < self.rows and 0 <= c < self.cols
                while inside and cells[r * self.cols + c] == mark:
                    run, r, c = run + 1, r + sign * dr, c + sign * dc
                    inside = 0 <= r < self.rows and 0 <= c < self.cols
            if run >= self.k:
                return True
        return False

    def completing(self, cells: list[int], mark: int) -> set[int]:
        """The empty cells where ``mark`` would complete a line."""
        found = set()
        for cell in (i for i, v in enumerate(cells) if v == 0):
            cells[cell] = mark
            if self.completes_line(cells, cell):
                found.add(cell)
            cells[cell] = 0
        return found

    def winner(self, cells: tuple[int, ...]) -> int:
        return next((v for i, v in enumerate(cells) if v and self.completes_line(cells, i)), 0)

    def visit(self, cells: tuple[int, ...], winner: int | None = None) -> Node:
        node = self.nodes.get(cells)
        if node is None:
            winner = self.winner(cells) if winner is None else winner
            node = self.nodes[cells] = self._node(cells, winner)
        return node

    def _node(self, cells: tuple[int, ...], winner: int) -> Node:
        if winner or 0 not in cells:
            one_hot = tuple(int(r == {X: "X", O: "O", 0: "draw"}[winner]) for r in RESULTS)
            scale = factorial(cells.count(0))
            return Node({X: 1, O: -1, 0: 0}[winner], 0, (), (), one_hot,
                        tuple(n * scale for n in one_hot))
        mark = X if cells.count(X) == cells.count(O) else O
        outcomes, games, chances = {}, (0, 0, 0), (0, 0, 0)
        for cell in (i for i, v in enumerate(cells) if v == 0):
            child = cells[:cell] + (mark,) + cells[cell + 1 :]
            node = self.visit(child, mark if self.completes_line(child, cell) else 0)
            outcomes[cell] = (node.value, node.plies + 1)
            games = tuple(a + b for a, b in zip(games, node.games, strict=True))
            chances = tuple(a + b for a, b in zip(chances, node.chances, strict=True))
        sign = 1 if mark == X else -1

        def preference(outcome: tuple[int, int]) -> tuple[int, int]:
            own = outcome[0] * sign
            return own, -outcome[1] if own > 0 else outcome[1]

        top = max(outcomes.values(), key=preference)
        best = tuple(cell for cell, outcome in outcomes.items() if outcome == top)
        keeps = tuple(cell for cell, outcome in outcomes.items() if outcome[0] == top[0])
        return Node(top[0], top[1], best, keeps, games, chances)


def deterministic(name: str, size: Size) -> Any:
    kwargs = board_kwargs(size)
    if name == "lowest":
        return RandomOpponent(deterministic=True, **kwargs)
    if name == "heuristic":
        return HeuristicOpponent(deterministic=True, **kwargs)
    minimax = MinimaxOpponent(deterministic=True, **kwargs)
    if name == "epsilon0":
        return EpsilonOpponent(0.0, minimax, **kwargs)
    if name == "mixture":
        return MixtureOpponent([minimax, RandomOpponent(**kwargs)], weights=[1, 0], **kwargs)
    return minimax


def batch_singles(steps: list[tuple], n_cells: int) -> tuple:
    """Single-env results laid out as the vector env lays out its own (see test_vector)."""
    obs, rewards, terminated, truncated, infos = zip(*steps, strict=True)
    cell_dtype = np.int8 if n_cells <= 127 else np.int16
    illegal = np.array([i["illegal_action"] for i in infos])
    opponent = np.array([i["opponent_action"] for i in infos], cell_dtype)
    info = {
        "action_mask": np.stack([i["action_mask"] for i in infos]),
        "agent_mark": np.array([game.MARKS[i["agent_mark"]] for i in infos], dtype=np.int8),
        "board": np.stack([i["board"] for i in infos]),
        "opponent_action": opponent,
        "_opponent_action": opponent != -1,
        "winner": np.array([WINNER_NAMES.index(i["winner"]) for i in infos], dtype=np.int8),
        "_winner": np.array(terminated),
        "illegal_action": illegal,
        "_illegal_action": illegal.copy(),
    }
    return (np.stack(obs), np.array(rewards, dtype=np.float32), np.array(terminated),
            np.array(truncated), info)


def as_step(obs: np.ndarray, info: dict) -> tuple:
    """A reset as the step that autoresets in NEXT_STEP mode: reward 0, not terminated."""
    return obs, 0.0, False, False, info


class Lockstep:
    """A vector env and one single env per board, stepped together and compared exactly."""

    def __init__(self, size: Size, name: str, agent_mark: str, n: int) -> None:
        kwargs, self.cells = board_kwargs(size), size[0] * size[1]
        self.vec = TicTacToeVectorEnv(n, deterministic(name, size), agent_mark, **kwargs)
        self.singles = [TicTacToeEnv(deterministic(name, size), agent_mark, **kwargs)
                        for _ in range(n)]
        assert self.vec.single_observation_space == self.singles[0].observation_space
        assert self.vec.observation_space == batch_space(self.singles[0].observation_space, n)
        assert self.vec.single_action_space == self.singles[0].action_space
        obs, self.info = self.vec.reset(seed=0)
        expected = batch_singles([as_step(*env.reset(seed=i))
                                  for i, env in enumerate(self.singles)], self.cells)
        assert data_equivalence((obs, self.info), (expected[0], expected[4]), exact=True)
        self.ended, self.episodes = [False] * n, 0

    def step(self, actions: np.ndarray) -> None:
        live = ~np.array(self.ended)
        masks = np.stack([env.action_masks() for env in self.singles])
        assert (self.vec.action_masks()[live] == masks[live]).all()
        *result, self.info = self.vec.step(actions)
        # NEXT_STEP autoreset by hand: a board whose episode ended resets instead of stepping.
        steps = [as_step(*env.reset()) if done else env.step(int(action))
                 for env, action, done in zip(self.singles, actions, self.ended, strict=True)]
        self.ended = [bool(step[2]) for step in steps]
        assert data_equivalence((*result, self.info), batch_singles(steps, self.cells),
                                exact=True)
        self.episodes += sum(self.ended)


def run_lockstep(size: Size, name: str, agent_mark: str, n: int = 6, steps: int = 60) -> int:
    lockstep, rng = Lockstep(size, name, agent_mark, n), np.random.default_rng(7)
    cells = size[0] * size[1]
    for _ in range(steps):
        masks = lockstep.info["action_mask"]
        legal = np.argmax(rng.random(masks.shape) + masks, axis=1)
        anything = rng.integers(-1, cells + 1, size=n)
        lockstep.step(np.where(rng.random(n) < 0.9, legal, anything))
    return lockstep.episodes

"""PUCT search over a batch of trees at once: arrays, not objects (as mctx does it), so the
leaves of every tree are evaluated in one network call per simulation.

A batch of ``B`` trees of at most ``simulations + 1`` nodes each lives in arrays indexed
``[tree, node, ...]``: each node's absolute board (with a -1 pad cell past the board), its
player to move, whether it is finished and its value there, and per move the child's index (-1:
not expanded), prior, visit count and total value (for the player to move at the node). A
simulation descends all trees together (a Python loop over the depth, vectorised over the trees),
expands one leaf per tree, evaluates the new leaves in one call and backs the values up. A
new leaf's win test is the compiled core's (``game/wide.py``: numba, compiled on the first
search and cached on disk), on the lines through the move that made it.

With ``threats``, each node also reads the position's immediate threats (``wide.tactics``): a
node whose mover can complete a line is a win and one whose opponent has two threats (and the
mover none) a loss, both finished without a network call, and a node whose opponent has one
threat searches only the block (``forced``). These are exact facts of the position, so the
search wastes no simulations on moves that lose at once; at the root, the win is played.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.game import Rules
from gym_tictactoe.game.proofs import import_compiled

# relative boards (K, cells) -> priors (K, cells) over the empty cells, values (K,) in [-1, 1]
Evaluator = Callable[[npt.NDArray[np.int8]], tuple[npt.NDArray, npt.NDArray]]
C_PUCT = 1.5


@dataclass
class Trees:
    boards: npt.NDArray[np.int8]      # (B, M, cells + 1) absolute, last column -1
    mover: npt.NDArray[np.int8]       # (B, M)
    terminal: npt.NDArray[np.bool_]   # (B, M)
    value: npt.NDArray[np.float32]    # (B, M) a finished node's value for its mover
    children: npt.NDArray[np.int32]   # (B, M, cells)
    prior: npt.NDArray[np.float32]    # (B, M, cells)
    visits: npt.NDArray[np.float32]   # (B, M, cells)
    total: npt.NDArray[np.float32]    # (B, M, cells) for the node's mover
    size: npt.NDArray[np.int64]       # (B,) nodes used
    forced: npt.NDArray[np.int32]     # (B, M) the only move searched there, -1: none
    threats: bool = False             # read each new node's threats (``wide.tactics``)


def tree_bytes(cells: int, simulations: int) -> int:
    """The bytes of one tree of ``simulations`` on a board of ``cells``: per node, its board
    with the pad cell and per move four arrays of 4 bytes (:class:`Trees`), and 10 more."""
    return (simulations + 1) * (17 * cells + 11)


def relative(boards: npt.NDArray[np.int8], movers: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """Absolute boards (K, cells) as their player to move sees them: 1 own, 2 the other's."""
    movers = np.asarray(movers)[:, None]
    return np.where(boards == 0, 0, np.where(boards == movers, 1, 2)).astype(np.int8)


def new_trees(roots: npt.NDArray[np.int8], movers: npt.NDArray[np.int8], nodes: int,
              threats: bool = False) -> Trees:
    """Trees holding only their roots (absolute boards ``roots`` (B, cells))."""
    count, cells = roots.shape
    boards = np.full((count, nodes, cells + 1), -1, dtype=np.int8)
    boards[:, 0, :cells] = roots
    mover = np.zeros((count, nodes), dtype=np.int8)
    mover[:, 0] = movers
    per_move = (count, nodes, cells)
    return Trees(boards, mover, np.zeros((count, nodes), bool),
                 np.zeros((count, nodes), np.float32), np.full(per_move, -1, np.int32),
                 np.zeros(per_move, np.float32), np.zeros(per_move, np.float32),
                 np.zeros(per_move, np.float32), np.ones(count, np.int64),
                 np.full((count, nodes), -1, np.int32), threats)


def search(rules: Rules, evaluate: Evaluator, roots: npt.NDArray[np.int8],
           movers: npt.NDArray[np.int8], simulations: int, *,
           noise: tuple[np.random.Generator, float, float] | None = None,
           c_puct: float = C_PUCT, threats: bool = False) -> Result:
    """The roots' figures after ``simulations`` simulations on each of the unfinished boards
    ``roots`` (absolute, (B, cells)) with ``movers`` to move. ``noise``: (generator, Dirichlet
    alpha, fraction) mixed into the roots' priors, as in self-play; ``threats``: read the
    immediate threats at every node (the module's docstring)."""
    roots = np.asarray(roots, dtype=np.int8)
    trees = new_trees(roots, movers, simulations + 1, threats)
    if threats:  # the root's win or forced block is the only move searched
        kinds, cells = _tactics(rules, roots, np.asarray(movers, np.int8))
        trees.forced[:, 0] = np.where((kinds == 1) | (kinds == 2), cells, -1)
    priors, values = evaluate(relative(roots, movers))
    trees.prior[:, 0] = priors if noise is None else _with_noise(priors, roots == 0, *noise)
    for _ in range(simulations):
        _simulate(rules, trees, evaluate, c_puct)
    visits, total = trees.visits[:, 0].copy(), trees.total[:, 0]
    q = np.divide(total, visits, out=np.repeat(values[:, None], visits.shape[1], axis=1)
                  .astype(np.float32), where=visits > 0)
    return Result(visits, q, np.asarray(priors, np.float32), trees.forced[:, 0].copy())


@dataclass
class Result:
    """Per root (B, cells): visit counts, each move's mean value for the root's mover (the
    network's value of the root where unvisited: "completed" as in Gumbel MuZero), the
    network's priors (before any noise) and per root the one move searched there (``threats``:
    a win or the only block; -1: none)."""

    visits: npt.NDArray[np.float32]
    q: npt.NDArray[np.float32]
    priors: npt.NDArray[np.float32]
    forced: npt.NDArray[np.int32]

    def improved_policy(self, legal: npt.NDArray[np.bool_], c_visit: float = 50.0,
                        c_scale: float = 0.1) -> npt.NDArray[np.float32]:
        """softmax(log prior + (c_visit + max visits) * c_scale * q) over the legal cells
        (Danihelka et al. 2022): a target that follows the values the search found, sharp
        where few simulations leave the visit counts flat. A root whose move was forced (a win,
        the only block) gets that move alone: the other moves' completed values would be the
        network's guess where the position says they lose or win less surely."""
        scale = (c_visit + self.visits.max(axis=1, keepdims=True)) * c_scale
        logits = np.log(np.maximum(self.priors, 1e-12)) + scale * self.q
        logits = np.where(legal, logits - logits.max(axis=1, keepdims=True), -np.inf)
        weights = np.exp(logits)
        policy = (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)
        rows = np.flatnonzero(self.forced >= 0)
        policy[rows] = 0.0
        policy[rows, self.forced[rows]] = 1.0
        return policy


def _with_noise(priors: npt.NDArray, legal: npt.NDArray[np.bool_], rng: np.random.Generator,
                alpha: float, fraction: float) -> npt.NDArray:
    """``(1 - fraction) * prior + fraction * Dirichlet(alpha)`` over each row's legal cells."""
    gamma = rng.gamma(alpha, 1.0, size=priors.shape) * legal
    sums = gamma.sum(axis=1, keepdims=True)
    dirichlet = np.divide(gamma, sums, out=np.zeros_like(gamma), where=sums > 0)
    return ((1 - fraction) * priors + fraction * dirichlet).astype(np.float32)


def _select(trees: Trees, idx: npt.NDArray, nodes: npt.NDArray, c_puct: float) -> npt.NDArray:
    """The PUCT move at ``nodes`` of trees ``idx`` (first of equals: deterministic)."""
    visits, total = trees.visits[idx, nodes], trees.total[idx, nodes]
    q = np.divide(total, visits, out=np.zeros_like(total), where=visits > 0)
    u = c_puct * trees.prior[idx, nodes] * np.sqrt(visits.sum(axis=1, keepdims=True) + 1)
    score = q + u / (1 + visits)
    score[trees.boards[idx, nodes, :-1] != game.EMPTY] = -np.inf
    forced = trees.forced[idx, nodes]
    return np.where(forced >= 0, forced, score.argmax(axis=1))


def _descend(trees: Trees, c_puct: float
             ) -> tuple[npt.NDArray, npt.NDArray, npt.NDArray, npt.NDArray]:
    """From every root down to a move not yet expanded or a finished node: the path's nodes
    and moves (B, depth) and each tree's depth and last node."""
    count, cells = trees.children.shape[0], trees.children.shape[2]
    path_nodes = np.zeros((count, cells + 1), np.int64)
    path_moves = np.zeros((count, cells + 1), np.int64)
    depth, node = np.zeros(count, np.int64), np.zeros(count, np.int64)
    active = ~trees.terminal[:, 0]
    for step in range(cells + 1):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        moves = _select(trees, idx, node[idx], c_puct)
        path_nodes[idx, step], path_moves[idx, step] = node[idx], moves
        depth[idx] = step + 1
        child = trees.children[idx, node[idx], moves]
        known = child >= 0
        node[idx[known]] = child[known]
        active[idx[~known]] = False
        active[idx[known]] = ~trees.terminal[idx[known], child[known]]
    return path_nodes, path_moves, depth, node


def _simulate(rules: Rules, trees: Trees, evaluate: Evaluator, c_puct: float) -> None:
    path_nodes, path_moves, depth, node = _descend(trees, c_puct)
    count = len(depth)
    rows = np.arange(count)
    last = np.maximum(depth - 1, 0)
    parent, move = path_nodes[rows, last], path_moves[rows, last]
    expand = (depth > 0) & (trees.children[rows, parent, move] < 0)
    leaf_value = trees.value[rows, node].copy()  # finished nodes reached again
    idx = np.flatnonzero(expand)
    if idx.size:
        leaf_value[idx] = _expand(rules, trees, evaluate, idx, parent[idx], move[idx])
    _backup(trees, path_nodes, path_moves, depth, leaf_value)


def _expand(rules: Rules, trees: Trees, evaluate: Evaluator, idx: npt.NDArray,
            parent: npt.NDArray, move: npt.NDArray) -> npt.NDArray[np.float32]:
    """Add the child of ``parent`` by ``move`` in trees ``idx``; its value for its mover."""
    new = trees.size[idx]
    trees.size[idx] += 1
    trees.children[idx, parent, move] = new
    marks = trees.mover[idx, parent]
    boards = trees.boards[idx, parent].copy()
    boards[np.arange(idx.size), move] = marks
    won = _wins(rules, boards, move, marks)
    finished = won | (boards[:, :-1] != game.EMPTY).all(axis=1)
    trees.boards[idx, new], trees.mover[idx, new] = boards, game.SWAP[marks]
    trees.terminal[idx, new] = finished
    values = np.where(won, -1.0, 0.0).astype(np.float32)  # the mover there has lost, or a draw
    if trees.threats:
        finished = _read_threats(rules, trees, idx, new, boards, finished, values)
    trees.value[idx, new] = values
    open_ = np.flatnonzero(~finished)
    if open_.size:
        priors, net_values = evaluate(relative(boards[open_, :-1], game.SWAP[marks[open_]]))
        trees.prior[idx[open_], new[open_]] = priors
        values[open_] = net_values
    return values


def _read_threats(rules: Rules, trees: Trees, idx: npt.NDArray, new: npt.NDArray,
                  boards: npt.NDArray[np.int8], finished: npt.NDArray[np.bool_],
                  values: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """The new nodes' threats: a win (+1) or a loss (-1) for their mover now finishes them
    (``values`` set, the finished mask returned), a forced block is their only move."""
    open_ = np.flatnonzero(~finished)
    kinds, cells = _tactics(rules, boards[open_, :-1], trees.mover[idx[open_], new[open_]])
    values[open_] = np.where(kinds == 1, 1.0, np.where(kinds == 3, -1.0, values[open_]))
    trees.forced[idx[open_], new[open_]] = np.where(kinds == 2, cells, -1)
    solved = finished.copy()
    solved[open_] = (kinds == 1) | (kinds == 3)
    trees.terminal[idx, new] = solved
    return solved


def _backup(trees: Trees, path_nodes: npt.NDArray, path_moves: npt.NDArray,
            depth: npt.NDArray, leaf_value: npt.NDArray) -> None:
    """Each edge on a path gains a visit and the leaf's value for the player moving there
    (negated once per ply between them)."""
    for step in range(int(depth.max(initial=0))):
        idx = np.flatnonzero(depth > step)
        sign = np.where((depth[idx] - step) % 2 == 0, 1.0, -1.0)
        nodes, moves = path_nodes[idx, step], path_moves[idx, step]
        trees.visits[idx, nodes, moves] += 1
        trees.total[idx, nodes, moves] += sign * leaf_value[idx]


@cache
def _rays(rules: Rules) -> npt.NDArray[np.int64]:
    return import_compiled("gym_tictactoe.game.wide").rays(rules)


@cache
def _masks(rules: Rules) -> npt.NDArray[np.uint64]:
    return import_compiled("gym_tictactoe.game.wide").tables(rules)[0]


def _tactics(rules: Rules, boards: npt.NDArray[np.int8], movers: npt.NDArray[np.int8]
             ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64]]:
    """``wide.tactics`` of absolute ``boards`` (K, cells) with ``movers`` to move."""
    wide = import_compiled("gym_tictactoe.game.wide")
    return wide.tactics(np.ascontiguousarray(boards, np.int8),
                        np.ascontiguousarray(movers, np.int8), _masks(rules), rules.n_cells)


def _wins(rules: Rules, boards: npt.NDArray[np.int8], cells: npt.NDArray,
          marks: npt.NDArray[np.int8]) -> npt.NDArray[np.bool_]:
    """Whether ``marks`` has a line through ``cells`` on each of ``boards`` (the compiled win
    test; the same answers as ``Rules.wins_at``)."""
    wide = import_compiled("gym_tictactoe.game.wide")
    return wide.wins_on_boards(boards, np.asarray(cells, np.int64), np.asarray(marks, np.int8),
                               _rays(rules))

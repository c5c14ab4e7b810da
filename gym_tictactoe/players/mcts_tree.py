"""The compiled tree of the ``mcts`` player (numba; imported by :mod:`.mcts` on the first search):
UCT with random playouts and MCTS-Solver, one simulation after another, over arrays.

``tree`` is the tuple ``(states, nodes, edges, stats, counters, rng)``: per node its state
(:mod:`.mcts_core`) and the integers ``PROVEN`` (the exact result for its side to move on the
solver's scale, or ``UNPROVEN``), ``N`` (visits), ``FIRST`` (its first edge, -1 until expanded),
``LIVE`` (moves not proven lost), ``COUNT`` (every move), ``TRIED`` and ``DRAWS`` (moves proven
drawn); per edge (a node's moves are the edges ``FIRST .. FIRST + COUNT``, the live ones first,
then those proven lost, the latest first) ``MOVE``, ``CHILD`` (-1: not created) and ``VISITS``,
and the rows of ``stats`` (3, edges): ``TOTAL``, the sum of the results for the node's side to
move, its ``MEAN`` and ``BONUS``, 1 / sqrt(visits), kept so that selection reads two rows.
``counters``: nodes and edges used, simulations run, and the settings ``SOLVE``, ``NARROW``,
``WIN`` (cells + 1).
``scratch``: the path (nodes, edges), a cell list, the playout's cells and its two sides'
lanes (``wide.lanes``; the first words of a row also serve as a bitboard).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from gym_tictactoe.game.wide import put
from gym_tictactoe.players.mcts_core import (
    MINE,
    MY_WINS,
    THEIR_WINS,
    THEIRS,
    ZERO,
    below,
    candidates,
    cells_of,
    child,
    count,
    playout,
    root,
)

PROVEN, N, FIRST, LIVE, COUNT, TRIED, DRAWS = range(7)
NODE_INTS = 7
MOVE, CHILD, VISITS = range(3)
TOTAL, MEAN, BONUS = range(3)
NODES, EDGES, SIMULATIONS, SOLVE, NARROW, WIN = range(6)
UNPROVEN = 1 << 40  # beyond any proven result (at most cells + 1 in size)
DONE, ROOM, PAUSED = 0, 1, 2  # what a call stopped for: see search()


@njit(cache=True, inline="always")
def classify(state, board, win: int) -> int:
    """A new node's proven result: a win at once, a full board, or two cells to block (one of
    them will be lost); else UNPROVEN."""
    if count(state[MY_WINS]) > 0:
        return win - 1
    full = board[4]
    filled = True
    for w in range(full.size):
        filled &= state[MINE, w] | state[THEIRS, w] == full[w]
    if filled:
        return 0
    return 2 - win if count(state[THEIR_WINS]) > 1 else UNPROVEN


@njit(cache=True)
def start(tree, board, scratch, cells, mark: int) -> None:
    """Make node 0 the root: the absolute ``cells`` (0 empty, 1 X, 2 O), ``mark`` to move.
    Expand it unless proven."""
    states, nodes, counters = tree[0], tree[1], tree[4]
    states[0] = ZERO
    for c in range(cells.size):
        if cells[c] != 0:
            put(states[0, MINE if cells[c] == mark else THEIRS], c)
    root(states[0], counters[NARROW] != 0, board)
    nodes[0] = 0
    nodes[0, FIRST] = -1
    nodes[0, PROVEN] = classify(states[0], board, counters[WIN])
    counters[NODES], counters[EDGES], counters[SIMULATIONS] = 1, 0, 0
    if nodes[0, PROVEN] == UNPROVEN:
        expand(tree, 0, board, scratch)


@njit(cache=True, inline="always")
def expand(tree, node: int, board, scratch) -> None:
    """Give ``node`` its moves. The root's are shuffled, so that its final choice breaks ties
    at random; elsewhere :func:`select` draws each untried move when it tries one."""
    states, nodes, edges, _, counters, rng = tree
    moves = scratch[1]
    n = candidates(states[node], counters[NARROW] != 0, board,
                   scratch[3][0, :board[4].size], moves)
    for i in range(n - 1 if node == 0 else 0, 0, -1):  # Fisher-Yates
        j = below(rng, i + 1)
        moves[i], moves[j] = moves[j], moves[i]
    first = counters[EDGES]
    counters[EDGES] += n
    for i in range(n):  # the rest of an edge is written when it is first tried
        edges[first + i, MOVE] = moves[i]
    nodes[node, FIRST], nodes[node, LIVE], nodes[node, COUNT] = first, n, n
    nodes[node, TRIED], nodes[node, DRAWS] = 0, 0


@njit(cache=True, inline="always")
def select(tree, node: int, exploration: float) -> int:
    """The edge to follow: an untried move drawn at random (it joins the tried ones, in the
    order tried), then the highest ``mean + c * sqrt(ln N / n)`` (the first of equals)."""
    nodes, edges, stats, rng = tree[1], tree[2], tree[3], tree[5]
    first, live, tried = nodes[node, FIRST], nodes[node, LIVE], nodes[node, TRIED]
    if tried < live:  # a Fisher-Yates step: untried edges have only their move set
        e, pick = first + tried, first + tried + below(rng, live - tried)
        edges[e, MOVE], edges[pick, MOVE] = edges[pick, MOVE], edges[e, MOVE]
        edges[e, CHILD], edges[e, VISITS] = -1, 0
        stats[TOTAL, e] = stats[MEAN, e] = stats[BONUS, e] = 0.0
        nodes[node, TRIED] += 1
        return e
    scale, best, choice = exploration * math.sqrt(math.log(nodes[node, N])), -np.inf, first
    means, bonus = stats[MEAN], stats[BONUS]
    for e in range(first, first + live):
        value = means[e] + scale * bonus[e]
        if value > best:
            best, choice = value, e
    return choice


@njit(cache=True, inline="always")
def descend(tree, board, scratch, exploration: float) -> tuple[int, int]:
    """Follow the selection rule from the root to a leaf: a node visited for the first time
    (created here) or a proven one. The path's (node, edge) pairs go to ``scratch[0]``; returns
    (leaf, path length)."""
    states, nodes, edges, counters = tree[0], tree[1], tree[2], tree[4]
    path, node, depth = scratch[0], 0, 0
    while nodes[node, PROVEN] == UNPROVEN and (nodes[node, N] > 0 or node == 0):
        if nodes[node, FIRST] < 0:
            expand(tree, node, board, scratch)
        e = select(tree, node, exploration)
        path[0, depth], path[1, depth] = node, e
        depth += 1
        if edges[e, CHILD] < 0:
            new = counters[NODES]
            counters[NODES] += 1
            child(states[node], edges[e, MOVE], states[new], counters[NARROW] != 0, board)
            nodes[new] = 0
            nodes[new, FIRST] = -1
            nodes[new, PROVEN] = classify(states[new], board, counters[WIN])
            edges[e, CHILD] = new
            return new, depth
        node = edges[e, CHILD]
    return node, depth


@njit(cache=True, inline="always")
def backup(tree, leaf: int, depth: int, value: float, path) -> None:
    """Add the leaf's result, ``value`` for its side to move (its proven result's sign where it
    has one), to every edge of the path, each from its own side; a result proven at the leaf's
    first visit settles what it decides above it (MCTS-Solver)."""
    nodes, edges, stats, counters = tree[1], tree[2], tree[3], tree[4]
    counters[SIMULATIONS] += 1
    proven = nodes[leaf, PROVEN]
    settling = proven != UNPROVEN and nodes[leaf, N] == 0 and counters[SOLVE] != 0
    if proven != UNPROVEN:
        value = float((proven > 0) - (proven < 0))
    nodes[leaf, N] += 1
    for d in range(depth - 1, -1, -1):
        value = -value
        node, e = path[0, d], path[1, d]
        nodes[node, N] += 1
        edges[e, VISITS] += 1
        stats[TOTAL, e] += value
        stats[MEAN, e] = stats[TOTAL, e] / edges[e, VISITS]
        stats[BONUS, e] = 1.0 / math.sqrt(edges[e, VISITS])
        if settling:
            settling = settle(tree, node, e)


@njit(cache=True)
def child_result(tree, e: int) -> int:
    """The proven result of the move ``e`` for the side playing it: one ply further from the
    other side, a win in d is a loss in d + 1, and the reverse."""
    value = tree[1][tree[2][e, CHILD], PROVEN]
    return (value > 0) - (value < 0) - value


@njit(cache=True)
def settle(tree, node: int, e: int) -> bool:
    """The move ``e`` of ``node`` was just proven: record it; whether ``node`` is proven now."""
    nodes = tree[1]
    value = child_result(tree, e)
    if value > 0:
        nodes[node, PROVEN] = value
    elif value < 0:
        drop(tree, node, e)  # never selected again
        first, live = nodes[node, FIRST], nodes[node, LIVE]
        if live == 0:
            best = -UNPROVEN
            for lost in range(first, first + nodes[node, COUNT]):
                best = max(best, child_result(tree, lost))
            nodes[node, PROVEN] = best
        elif nodes[node, DRAWS] == live:
            nodes[node, PROVEN] = 0
    else:
        nodes[node, DRAWS] += 1
        if nodes[node, DRAWS] == nodes[node, LIVE]:
            nodes[node, PROVEN] = 0
    return nodes[node, PROVEN] != UNPROVEN


@njit(cache=True)
def drop(tree, node: int, e: int) -> None:
    """Move the edge ``e`` from the live moves of ``node`` to the head of its lost ones."""
    nodes, edges, stats = tree[1], tree[2], tree[3]
    first = nodes[node, FIRST]
    last = first + nodes[node, LIVE] - 1
    for column in range(3):
        kept = edges[e, column]
        for i in range(e, last):
            edges[i, column] = edges[i + 1, column]
        edges[last, column] = kept
    for column in range(3):
        held = stats[column, e]
        for i in range(e, last):
            stats[column, i] = stats[column, i + 1]
        stats[column, last] = held
    nodes[node, LIVE] -= 1
    nodes[node, TRIED] -= e - first < nodes[node, TRIED]


@njit(cache=True, _nrt=False)  # type: ignore[call-overload]  # numba's stubs omit _nrt
def run(budget: int, exploration: float, tree, board, scratch) -> int:
    """Simulate until ``budget`` simulations in all or a proven root (DONE), or until the
    arrays may lack room for the next simulation's node and moves (ROOM)."""
    states, nodes, edges, _, counters, rng = tree
    cells = scratch[1].size
    while counters[SIMULATIONS] < budget and nodes[0, PROVEN] == UNPROVEN:
        if counters[NODES] >= states.shape[0] or counters[EDGES] + cells > edges.shape[0]:
            return ROOM
        leaf, depth = descend(tree, board, scratch, exploration)
        value = 0.0
        if nodes[leaf, PROVEN] == UNPROVEN:
            value = float(playout(states[leaf], board, rng, scratch[3], scratch[2]))
        backup(tree, leaf, depth, value, scratch[0])
    return DONE


@njit(cache=True)
def search(budget: int, most: int, exploration: float, tree, board, scratch, cells,
           mark: int) -> tuple[int, int]:
    """(DONE, the move) once ``most`` simulations are run or the root is proven, or at once
    where the move is decided or forced (a win, a block); (PAUSED, -1) at ``budget`` simulations
    short of that; (ROOM, -1) when the arrays must grow first. A tree with no node yet gets its
    root first (see :func:`start`)."""
    nodes, edges, counters = tree[1], tree[2], tree[4]
    if counters[NODES] == 0:
        start(tree, board, scratch, cells, mark)
        if nodes[0, PROVEN] == UNPROVEN and nodes[0, COUNT] == 1:
            return DONE, edges[nodes[0, FIRST], MOVE]  # a forced block: nothing to search
    if run(budget, exploration, tree, board, scratch) == ROOM:
        return ROOM, -1
    if counters[SIMULATIONS] < most and nodes[0, PROVEN] == UNPROVEN:
        return PAUSED, -1
    return DONE, best_move(tree, scratch)


@njit(cache=True)
def best_move(tree, scratch) -> int:
    """The move to play: a proven win (the fastest), then the most visited move not proven to
    lose (ties: the better mean, then the shuffled order), then the slowest proven loss. At a
    root proven before any search: a winning cell, or a cell to block."""
    states, nodes, edges, stats, rng = tree[0], tree[1], tree[2], tree[3], tree[5]
    if nodes[0, FIRST] < 0:
        wins = states[0, MY_WINS] if count(states[0, MY_WINS]) else states[0, THEIR_WINS]
        n = cells_of(wins, scratch[1])
        return scratch[1][below(rng, n)]
    first, live, tried = nodes[0, FIRST], nodes[0, LIVE], nodes[0, TRIED]
    choice, tier, key, mean = -1, -1, -UNPROVEN, -np.inf
    for e in range(first, first + nodes[0, COUNT]):
        t, k, m = 1, 0, 0.0  # an untried move: its edge holds only the move
        if first + tried <= e < first + live:
            pass
        elif e >= live + first:
            t, k, m = 0, child_result(tree, e), 0.0
        elif edges[e, CHILD] >= 0 and nodes[edges[e, CHILD], PROVEN] < 0:
            t, k, m = 2, child_result(tree, e), 0.0
        else:
            k, m = edges[e, VISITS], stats[MEAN, e]
        if t > tier or (t == tier and (k > key or (k == key and m > mean))):
            choice, tier, key, mean = edges[e, MOVE], t, k, m
    return choice

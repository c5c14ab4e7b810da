"""The board as the compiled tree search sees it (numba; imported by :mod:`.mcts` on the first
search, never by ``import gym_tictactoe``): a search state, its children, its candidate moves, a
random playout, and the search's random numbers.

A state is a (5, words) uint64 array of multi-word bitboards (:mod:`gym_tictactoe.game.wide`; bit
``c % 64`` of word ``c // 64`` is cell ``c``): rows ``MINE`` and ``THEIRS``, the stones of the
side to move and of the other side; ``MY_WINS`` and ``THEIR_WINS``, the empty cells where each
side would complete a line; ``NEAR``, the cells a move is looked for in (every cell on boards of
at most 64 cells; elsewhere those within ``radius`` king moves of a stone, as the alpha-beta
player does). A move only changes the lines through its cell, so a child's winning cells are
its parent's updated on those lines alone.

``board`` is the tuple ``(masks, starts, through, near, full, centre, lanes, star)``: the line
masks and the lines through each cell (``wide.tables``), each cell's neighbourhood (``radius``),
the board's cells and its centre cells (each a bitboard), the playouts' ``wide.lanes``, and each
cell's star: the other cells of the lines through it (a bitboard). The small kernels called on
every move are inlined (``inline="always"``): a call between compiled functions costs about as
much as the work of one. Random numbers come from splitmix64 (Steele et al. 2014) on one uint64 of
state, seeded from the player's NumPy generator: the search owns its stream.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from gym_tictactoe.game.bitboard import lowest_cell, popcount
from gym_tictactoe.game.wide import lane_put, lane_wins, put, threats

MINE, THEIRS, MY_WINS, THEIR_WINS, NEAR = range(5)
ONE = np.uint64(1)
ZERO = np.uint64(0)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def next_u64(rng) -> np.uint64:
    """The next 64 random bits of the stream whose state is ``rng[0]`` (splitmix64)."""
    rng[0] += _GOLDEN
    z = rng[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def below(rng, n: int) -> int:
    """A uniform integer in [0, n) (n >= 1), from 53 random bits."""
    return int(float(next_u64(rng) >> np.uint64(11)) * _UNIT * n)


@njit(cache=True, inline="always")
def cells_of(mask, out) -> int:
    """Write the cells of the bitboard ``mask`` into ``out``, increasing; return how many."""
    n = 0
    for w in range(mask.size):
        rest = mask[w]
        while rest != ZERO:
            # One instruction (numba's intrinsic, which mypy cannot type): expand's hot loop.
            out[n] = w * 64 + trailing_zeros(rest)  # type: ignore[call-arg]
            rest &= rest - ONE
            n += 1
    return n


@njit(cache=True, inline="always")
def count(mask) -> int:
    n = 0
    for w in range(mask.size):
        n += popcount(mask[w])
    return n


@njit(cache=True)
def root(state, narrow: bool, board) -> None:
    """Fill the winning cells and the candidate cells of ``state`` from its stones."""
    masks, near = board[0], board[3]
    threats(state[MINE], state[THEIRS], masks, state[MY_WINS])
    threats(state[THEIRS], state[MINE], masks, state[THEIR_WINS])
    state[NEAR] = board[4]
    if narrow:
        state[NEAR] = ZERO
        cells = np.zeros(state.shape[1] * 64, np.int64)
        for i in range(cells_of(state[MINE] | state[THEIRS], cells)):
            state[NEAR] |= near[cells[i]]


@njit(cache=True, inline="always")
def child(src, cell: int, dst, narrow: bool, board) -> None:
    """Write into ``dst`` the state after the side to move at ``src`` plays ``cell`` (empty, and
    not a winning cell): the sides swap, and the mover's new winning cells are found on the
    lines through ``cell``."""
    masks, starts, through, near = board[0], board[1], board[2], board[3]
    at, bit = cell >> 6, ONE << np.uint64(cell & 63)
    for w in range(src.shape[1]):
        drop = bit if w == at else ZERO
        dst[MINE, w], dst[THEIRS, w] = src[THEIRS, w], src[MINE, w] | drop
        dst[MY_WINS, w] = src[THEIR_WINS, w] & ~drop
        dst[THEIR_WINS, w] = src[MY_WINS, w] & ~drop
        dst[NEAR, w] = src[NEAR, w] | near[cell, w] if narrow else src[NEAR, w]
    # A line through the move is one short only with k - 2 of the mover's stones already on
    # the move's star: on a sparse board most moves have none to look at.
    if not at_least(src[MINE], board[7][cell], board[6][board[6].shape[0] - 1, 0] - 2):
        return
    for j in range(starts[cell], starts[cell + 1]):
        missing = one_missing(masks[through[j]], dst[THEIRS], dst[MINE])
        if missing >= 0:
            put(dst[THEIR_WINS], missing)


@njit(cache=True, inline="always")
def one_missing(line, own, other) -> int:
    """The one empty cell of ``line`` that ``own`` lacks, when ``other`` has no stone on it;
    else -1."""
    missing = -1
    for w in range(line.size):
        if line[w] & other[w] != ZERO:
            return -1
        rest = line[w] & ~own[w]
        if rest != ZERO:
            if missing >= 0 or rest & (rest - ONE) != ZERO:
                return -1
            missing = w * 64 + lowest_cell(rest)
    return missing


@njit(cache=True, inline="always")
def candidates(state, narrow: bool, board, scratch, out) -> int:
    """Write the moves searched at ``state`` into ``out``, increasing; return how many: the one
    block when the other side has a winning cell, else every empty cell (on boards of more than
    64 cells those near a stone, the centre on an empty board)."""
    full, centre = board[4], board[5]
    if count(state[THEIR_WINS]) > 0:
        return cells_of(state[THEIR_WINS], out)
    stones = 0
    for w in range(full.size):
        scratch[w] = full[w] & ~(state[MINE, w] | state[THEIRS, w])
        stones += popcount(state[MINE, w] | state[THEIRS, w])
    if narrow:
        for w in range(full.size):
            scratch[w] &= state[NEAR, w] if stones else centre[w]
    return cells_of(scratch, out)


@njit(cache=True, inline="always")
def playout(state, board, rng, sides, free) -> int:
    """The result of one uniformly random game from ``state`` for its side to move: 1 win, -1
    loss, 0 draw. ``sides`` (2, lane words: ``wide.lanes``) and ``free`` (cells) are room to
    work in: the empty cells are drawn from ``free`` (each leaves the pool), and each side's
    stones are kept in lanes, where the win test through a move is a few shifts."""
    full, lanes = board[4], board[6]
    for w in range(full.size):
        sides[0, w] = full[w] & ~(state[MINE, w] | state[THEIRS, w])
    n = cells_of(sides[0, :full.size], free)
    sides[:] = ZERO
    for side in range(2):  # MINE, THEIRS
        for i in range(n, n + cells_of(state[side], free[n:])):
            lane_put(sides, side, free[i], lanes)
    side, sign = 0, 1
    while n > 0:
        pick = below(rng, n)
        n -= 1
        cell = free[pick]
        free[pick] = free[n]
        if lane_wins(sides, side, cell, lanes):
            return sign
        side, sign = 1 - side, -sign
    return 0


@njit(cache=True, inline="always")
def at_least(stones, mask, need: int) -> bool:
    """Whether ``stones`` have at least ``need`` cells in ``mask``."""
    found = 0
    for w in range(mask.size):
        found += popcount(stones[w] & mask[w])
        if found >= need:
            return True
    return found >= need

"""Bitboards for every board up to 15 x 15 (numba; imported only when a compiled search asks for
it, never by ``import gym_tictactoe``): a side's stones are ``words`` uint64 words (one per 64
cells, 4 on 15 x 15; bit ``c % 64`` of word ``c // 64`` is cell ``c``, row-major).

:func:`tables` builds a board's arrays once from ``Rules.lines``: ``masks`` (lines, words) the
bit mask of each win line and ``starts``/``through`` the lines through each cell
(``through[starts[c] : starts[c + 1]]``); :func:`rays` the cells along each line direction from
each cell. The kernels answer what a search asks of a position: the win test on the lines
through the last move (:func:`wins_at`, on the rays; :func:`lane_wins`, a random playout's, on
each side's stones laid out in :func:`lanes`), the immediate threats (empty cells that would
complete a line of a side) and the forced block (the opponent's one threat, or a lost position
when it has two), and :func:`tactics`, both at once for a batch of boards (AlphaZero's search).
The boards of at most 64 cells have their own one-word kernels (:mod:`.bitboard`), which the
proof solver uses.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from gym_tictactoe.game import Rules
from gym_tictactoe.game.bitboard import lowest_cell, popcount

ONE = np.uint64(1)
ZERO = np.uint64(0)
LANE = np.uint64(0xFFFF)


def tables(rules: Rules) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64],
                                  npt.NDArray[np.int64]]:
    """(masks, starts, through) of the board (see the module's docstring)."""
    words = (rules.n_cells + 63) // 64
    masks = np.zeros((len(rules.lines), words), np.uint64)
    through: list[list[int]] = [[] for _ in range(rules.n_cells)]
    for j, line in enumerate(rules.lines):
        for c in line:
            masks[j, c // 64] |= np.uint64(1 << (c % 64))
            through[c].append(j)
    starts = np.cumsum([0] + [len(t) for t in through]).astype(np.int64)
    return masks, starts, np.array([j for t in through for j in t], dtype=np.int64)


def bits_of(cells: npt.ArrayLike, words: int) -> npt.NDArray[np.uint64]:
    """The bitboard of the given cells."""
    out = np.zeros(words, np.uint64)
    for c in np.asarray(cells, dtype=np.int64).ravel():
        out[c // 64] |= np.uint64(1 << (int(c) % 64))
    return out


@njit(cache=True, inline="always")
def has(stones, cell: int) -> bool:
    return (stones[cell >> 6] >> np.uint64(cell & 63)) & ONE != ZERO


@njit(cache=True, inline="always")
def put(stones, cell: int) -> None:
    stones[cell >> 6] |= ONE << np.uint64(cell & 63)


def rays(rules: Rules) -> npt.NDArray[np.int64]:
    """(cells + 2, 8) int64, :func:`wins_at`'s table: for each cell, how many cells a line may
    extend from it each way of each line direction (at most win_length - 1, fewer at the
    board's edge); then each way's step between cells; then the win length (first column)."""
    k, cols = rules.win_length, rules.cols
    table = np.zeros((rules.n_cells + 2, 8), np.int64)
    if k > 1:
        table[:-2] = (rules.rays[..., :k - 1] != rules.n_cells).sum(axis=3).reshape(-1, 8)
    table[-2] = [1, -1, cols, -cols, cols + 1, -cols - 1, cols - 1, -cols + 1]
    table[-1, 0] = k
    return table


@njit(cache=True, inline="always")
def wins_at(stones, cell: int, rays) -> bool:
    """Whether ``stones`` fill a line through ``cell`` (the win test after a move there): the
    run of stones through it in some direction, counted both ways, reaches the win length. A
    run stops at the first cell without a stone, which after a random move is most often the
    first one looked at."""
    steps, length = rays.shape[0] - 2, rays[rays.shape[0] - 1, 0]
    for direction in range(4):
        run = 1
        for way in range(2 * direction, 2 * direction + 2):
            c = cell
            for _ in range(rays[cell, way]):
                c += rays[steps, way]  # indices, not a row: a view would count references
                if not has(stones, c):
                    break
                run += 1
        if run >= length:
            return True
    return False


def lanes(rules: Rules) -> npt.NDArray[np.int64]:
    """(cells + 1, 4) int64, :func:`lane_wins`'s table: each cell's bit in each line direction's
    lanes (row, column, diagonal, anti-diagonal). A lane is 16 bits of a word, one row, column or
    diagonal of the board in order, so that a run of stones along it is a run of bits, with at
    least one bit always clear at its top (a side is at most 15 cells). Last row: the win length
    and the words a side's lanes take."""
    rows, cols = rules.rows, rules.cols
    diagonals = rows + cols - 1
    table = np.zeros((rules.n_cells + 1, 4), np.int64)
    for cell in range(rules.n_cells):
        r, c = divmod(cell, cols)
        lane = (r, rows + c, rows + cols + c - r + rows - 1, rows + cols + diagonals + r + c)
        table[cell] = [16 * n + (c if d == 0 else r) for d, n in enumerate(lane)]
    table[-1, :2] = rules.win_length, (rows + cols + 2 * diagonals + 3) // 4
    return table


@njit(cache=True, inline="always")
def lane_put(bits, side: int, cell: int, lanes) -> np.uint64:
    """Put a stone of ``side`` (a row of ``bits``, its lanes) on ``cell``; return the four lanes
    through it, one in each 16 bits (the row first)."""
    found = ZERO
    for d in range(4):
        b = lanes[cell, d]
        bits[side, b >> 6] |= ONE << np.uint64(b & 63)
        found |= ((bits[side, b >> 6] >> np.uint64(b & 48)) & LANE) << np.uint64(16 * d)
    return found


@njit(cache=True, inline="always")
def lane_wins(bits, side: int, cell: int, lanes) -> bool:
    """Put a stone of ``side`` on ``cell`` (see :func:`lane_put`); whether it completes a line.
    The four lanes through the move are tested at once, a few shifts and no branch: a run of the
    win length in one lane cannot spill into the next, whose lowest bit meets a clear top bit."""
    found = lane_put(bits, side, cell, lanes)
    run = found
    for i in range(1, lanes[lanes.shape[0] - 1, 0]):
        run &= found >> np.uint64(i)
    return run != ZERO


@njit(cache=True)
def threats(own, other, masks, out) -> int:
    """Write into ``out`` (words) the empty cells that would complete a line of ``own`` (each
    line free of ``other`` with one cell missing); return how many there are."""
    out[:] = ZERO
    for j in range(masks.shape[0]):
        missing, count, blocked = -1, 0, False
        for w in range(out.size):
            if masks[j, w] & other[w] != ZERO:
                blocked = True
                break
            rest = masks[j, w] & ~own[w]
            while rest != ZERO and count < 2:
                low = rest & (~rest + ONE)
                missing, count = w * 64 + lowest_cell(low), count + 1
                rest ^= low
            if rest != ZERO:
                count = 2
        if not blocked and count == 1:
            put(out, missing)
    n = 0
    for w in range(out.size):
        n += popcount(out[w])
    return n


@njit(cache=True, inline="always")
def first_cell(bits) -> int:
    """The lowest cell set in ``bits`` (words), -1 when none."""
    for w in range(bits.size):
        if bits[w] != ZERO:
            return w * 64 + lowest_cell(bits[w])
    return -1


@njit(cache=True)
def forced_block(me, opp, masks, scratch) -> int:
    """The cell the side to move (``me``) must play to stop ``opp`` completing a line next
    move: -1 when ``opp`` has no such cell, -2 when it has two or more (the position is lost
    unless ``me`` wins at once). ``scratch``: words of room."""
    n = threats(opp, me, masks, scratch)
    if n == 0:
        return -1
    if n > 1:
        return -2
    return first_cell(scratch)


@njit(cache=True)
def wins_on_boards(boards, cells, marks, rays):
    """Whether ``marks[i]`` has a line through ``cells[i]`` on each of ``boards`` (rows of
    absolute cells, 0 empty, 1 X, 2 O; columns past the board's cells are ignored): each
    board's stones of that mark made a bitboard, then :func:`wins_at`."""
    n_cells = rays.shape[0] - 2
    stones = np.zeros((n_cells + 63) // 64, np.uint64)
    won = np.zeros(boards.shape[0], np.bool_)
    for i in range(boards.shape[0]):
        stones[:] = ZERO
        for c in range(n_cells):
            if boards[i, c] == marks[i]:
                put(stones, c)
        won[i] = wins_at(stones, cells[i], rays)
    return won


@njit(cache=True)
def tactics(boards, movers, masks, n_cells):
    """For each absolute board (rows of cells, 0 empty, 1 X, 2 O; columns past ``n_cells``
    ignored) and its side to move ``movers[i]``: (kind, cell). Kind 1: the mover completes a
    line at ``cell`` now (a won position); 2: it must play ``cell``, the opponent's one threat;
    3: the opponent has two threats or more and the mover none (a lost position); 0: none of
    these (cell -1)."""
    words = masks.shape[1]
    own, other, scratch = (np.zeros(words, np.uint64), np.zeros(words, np.uint64),
                           np.zeros(words, np.uint64))
    kinds = np.zeros(boards.shape[0], np.int8)
    cells = np.full(boards.shape[0], -1, np.int64)
    for i in range(boards.shape[0]):
        own[:] = ZERO
        other[:] = ZERO
        for c in range(n_cells):
            if boards[i, c] == movers[i]:
                put(own, c)
            elif boards[i, c] != 0:
                put(other, c)
        if threats(own, other, masks, scratch) > 0:
            kinds[i], cells[i] = 1, first_cell(scratch)
            continue
        block = forced_block(own, other, masks, scratch)
        if block >= 0:
            kinds[i], cells[i] = 2, block
        elif block == -2:
            kinds[i] = 3
    return kinds, cells

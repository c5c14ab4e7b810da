"""The compiled bitboard kernels of boards of at most 64 cells (numba, compiled on first call and
cached on disk).

A position is two ``uint64`` bit sets, one per side (bit ``i`` is cell ``i``, row-major). A board
is described by arrays built once in Python (:mod:`gym_tictactoe.game.proofs`, from
``Rules.lines``): ``masks`` (lines,) the bit mask of each win line, ``line_cells`` (lines, k) the
cells of each line, ``starts``/``through`` the lines through each cell (``through[starts[c] :
starts[c + 1]]``) and ``perms`` (symmetries, cells) the board's symmetries.

This module imports numba: it is imported only by the edge (:mod:`.proofs`) when a compiled
search is first asked for, never by ``import gym_tictactoe``. Every function here is pure: arrays
and integers in, integers out.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ONE = np.uint64(1)
ZERO = np.uint64(0)


@njit(cache=True)
def popcount(x: np.uint64) -> int:
    """The number of set bits (the classic SWAR count: numba has no portable intrinsic)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True)
def lowest_cell(x: np.uint64) -> int:
    """The index of the lowest set bit of a non-zero ``x``."""
    low = x & (~x + ONE)
    return popcount(low - ONE)


@njit(cache=True)
def cell_bit(cell: int) -> np.uint64:
    return ONE << np.uint64(cell)


@njit(cache=True)
def wins_through(stones: np.uint64, cell: int, masks, starts, through) -> bool:
    """Whether ``stones`` fill a line through ``cell`` (the win test after a move there)."""
    for j in range(starts[cell], starts[cell + 1]):
        line = masks[through[j]]
        if stones & line == line:
            return True
    return False


@njit(cache=True)
def threats(own: np.uint64, other: np.uint64, masks) -> np.uint64:
    """The cells that would complete a line of ``own``: each line free of ``other`` whose one
    missing cell is empty (a line already full of ``own`` is not a threat)."""
    found = ZERO
    for line in masks:
        if line & other == ZERO:
            rest = line & ~own
            if rest != ZERO and rest & (rest - ONE) == ZERO:
                found |= rest
    return found


@njit(cache=True)
def openness(me: np.uint64, opp: np.uint64, masks) -> tuple[bool, bool, np.uint64]:
    """(a line is open for ``me``, one is open for ``opp``, the cells of every line open for
    either side). A line is open for a side while the other side has no stone on it."""
    mine, theirs, live = False, False, ZERO
    for line in masks:
        free_of_opp, free_of_me = line & opp == ZERO, line & me == ZERO
        mine |= free_of_opp
        theirs |= free_of_me
        if free_of_opp or free_of_me:
            live |= line
    return mine, theirs, live


@njit(cache=True)
def cell_scores(me: np.uint64, opp: np.uint64, masks, line_cells, scores) -> None:
    """``scores[c]`` += a weight for each open line through cell ``c``, growing fourfold with
    each stone already on it: cells on many and fuller lines come first in the search."""
    scores[:] = 0
    for j in range(masks.size):
        line = masks[j]
        weight = 0
        if line & opp == ZERO:
            weight += 1 << (2 * popcount(line & me))
        if line & me == ZERO:
            weight += 1 << (2 * popcount(line & opp))
        if weight:
            for c in line_cells[j]:
                scores[c] += weight


@njit(cache=True)
def image(stones: np.uint64, perm) -> np.uint64:
    """``stones`` under one symmetry: cell ``j`` of the image is cell ``perm[j]`` of the board,
    so the stone on cell ``c`` goes to ``inverse[c]``; ``perm`` here is that inverse."""
    out = ZERO
    while stones != ZERO:
        c = lowest_cell(stones)
        stones &= stones - ONE
        out |= ONE << np.uint64(perm[c])
    return out


@njit(cache=True)
def canonical(me: np.uint64, opp: np.uint64, inverse) -> tuple[np.uint64, np.uint64]:
    """The least (me, opp) pair among the position's symmetric images: one key per class."""
    best_me, best_opp = me, opp
    for s in range(1, inverse.shape[0]):
        a, b = image(me, inverse[s]), image(opp, inverse[s])
        if a < best_me or (a == best_me and b < best_opp):
            best_me, best_opp = a, b
    return best_me, best_opp


@njit(cache=True)
def pairing(attacker: np.uint64, defender: np.uint64, empty: np.uint64, masks, line_cells,
            scratch) -> bool:
    """Whether every line still open for ``attacker`` can be given two empty cells of its own,
    no cell shared (a matching, grown by augmenting paths). Then the defender, answering each
    of these cells with its partner, stops every line: the attacker cannot win."""
    lines, owner = scratch[0], scratch[1]
    n_lines = 0
    for j in range(masks.size):
        if masks[j] & defender == ZERO:
            if popcount(masks[j] & empty) < 2:
                return False
            lines[n_lines] = j
            n_lines += 1
    if 2 * n_lines > popcount(empty):
        return False  # too few cells for two each
    owner[:] = -1
    for slot in range(2 * n_lines):
        if not augment(slot, lines, owner, line_cells, empty, scratch):
            return False
    return True


@njit(cache=True)
def augment(start: int, lines, owner, line_cells, empty, scratch) -> bool:
    """Give slot ``start`` (copy ``start % 2`` of line ``lines[start // 2]``) a cell, moving
    owners along an alternating path found breadth first; False when there is none."""
    queue, via, back, seen = scratch[2], scratch[3], scratch[4], scratch[5]
    seen[:] = 0
    queue[0], back[start], head, tail = start, -1, 0, 1
    while head < tail:
        slot = queue[head]
        head += 1
        for c in line_cells[lines[slot // 2]]:
            if (empty >> np.uint64(c)) & ONE == ZERO or seen[c]:
                continue
            seen[c] = 1
            if owner[c] < 0:
                while slot >= 0:  # each slot on the path takes the cell after it
                    given_up = via[slot]
                    owner[c] = slot
                    c, slot = given_up, back[slot]
                return True
            holder = owner[c]
            via[holder], back[holder] = c, slot
            queue[tail] = holder
            tail += 1
    return False

"""The compiled scratch position of the alpha-beta search (numba; see :mod:`.negamax`, which
imports it on first use): a move and its undo on the line codes, open-line sums, fours, gains and
nearness counts of :mod:`.threats`, and what the search reads from them.

``geo`` and ``pos`` are the tuples described in :mod:`.negamax`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

TEMPO = 2  # as threats.TEMPO
EMPTIES, SIDE = 0, 1


@njit(cache=True, inline="always")
def place(cell: int, gains: bool, geo, pos) -> None:
    """The side to move puts a stone on ``cell`` (empty, not winning); ``gains=False`` leaves
    the cells' gains as they were, for a position that will only be evaluated."""
    line_cells, starts, through, own_gain, other_loss, change, steps, fours = geo[:8]
    zobrist, near_starts, near = geo[9], geo[10], geo[11]
    code, sums, four, counts, gain, cover, occupied, keys, state = pos
    side = state[SIDE]
    step, mine, theirs = steps[side], fours[side], fours[1 - side]
    for j in range(starts[cell], starts[cell + 1]):
        line = through[j]
        v = code[line]
        after = code[line] = v + step
        sums[side] += own_gain[side, v]
        sums[1 - side] -= other_loss[side, v]
        if v == theirs:
            counts[1 - side, 0] -= four[1 - side, line]
            counts[1 - side, 1] -= four[1 - side, line] * line
            four[1 - side, line] = 0
        elif after == mine:
            counts[side, 0] += 1 - four[side, line]
            counts[side, 1] += (1 - four[side, line]) * line
            four[side, line] = 1
        if gains and (change[side, 0, v] or change[side, 1, v]):
            for c in line_cells[line]:
                if c != cell:
                    gain[0, c] += change[side, 0, v]
                    gain[1, c] += change[side, 1, v]
    occupied[cell] = 1
    keys[0] ^= zobrist[0, side, cell]
    keys[1] ^= zobrist[1, side, cell]
    state[EMPTIES] -= 1
    state[SIDE] = 1 - side
    for j in range(near_starts[cell], near_starts[cell + 1]):
        cover[near[j]] += 1


@njit(cache=True, inline="always")
def undo(cell: int, gains: bool, geo, pos) -> None:
    """Take back :func:`place` (``cell`` the last stone placed; the same ``gains``)."""
    line_cells, starts, through, own_gain, other_loss, change, steps, fours = geo[:8]
    zobrist, near_starts, near = geo[9], geo[10], geo[11]
    code, sums, four, counts, gain, cover, occupied, keys, state = pos
    side = state[SIDE] = 1 - state[SIDE]
    step, mine, theirs = steps[side], fours[side], fours[1 - side]
    for j in range(starts[cell], starts[cell + 1]):
        line = through[j]
        after = code[line]
        v = code[line] = after - step
        sums[side] -= own_gain[side, v]
        sums[1 - side] += other_loss[side, v]
        if v == theirs:
            counts[1 - side, 0] += 1 - four[1 - side, line]
            counts[1 - side, 1] += (1 - four[1 - side, line]) * line
            four[1 - side, line] = 1
        elif after == mine:
            counts[side, 0] -= four[side, line]
            counts[side, 1] -= four[side, line] * line
            four[side, line] = 0
        if gains and (change[side, 0, v] or change[side, 1, v]):
            for c in line_cells[line]:
                if c != cell:
                    gain[0, c] -= change[side, 0, v]
                    gain[1, c] -= change[side, 1, v]
    occupied[cell] = 0
    keys[0] ^= zobrist[0, side, cell]
    keys[1] ^= zobrist[1, side, cell]
    state[EMPTIES] += 1
    for j in range(near_starts[cell], near_starts[cell + 1]):
        cover[near[j]] -= 1


@njit(cache=True)
def setup(board, geo, pos) -> None:
    """Fill ``pos`` (zeroed) from ``board``'s cells (0 empty, 1 X, 2 O): its stones placed in
    turn on the empty board give the same tables as counting them at once."""
    x_cells, o_cells = np.flatnonzero(board == 1), np.flatnonzero(board == 2)
    order = geo[12]
    code, gain, state = pos[0], pos[4], pos[8]
    state[EMPTIES], state[SIDE] = board.size, 0
    for c in range(board.size):  # the empty board: every line worth nothing, code 0
        lines = geo[1][c + 1] - geo[1][c]
        gain[0, c], gain[1, c] = lines * order[0, 0], lines * order[1, 0]
    if geo[0].shape[1] == 1:  # k = 1: every empty line is a four of both sides
        for line in range(code.size):
            pos[2][0, line] = pos[2][1, line] = 1
        for side in range(2):
            pos[3][side, 0], pos[3][side, 1] = code.size, code.size * (code.size - 1) // 2
    for i in range(max(x_cells.size, o_cells.size)):
        if i < x_cells.size:
            place(x_cells[i], True, geo, pos)
        if i < o_cells.size:
            place(o_cells[i], True, geo, pos)


@njit(cache=True, inline="always")
def static(pos) -> int:
    """The evaluation for the side to move: its open lines (TEMPO times, since it moves next)
    against the other side's."""
    x, o = pos[1][0], pos[1][1]
    return TEMPO * o - x if pos[8][SIDE] else TEMPO * x - o


@njit(cache=True, inline="always")
def base(pos) -> int:
    """The side to move's view of the evaluation after its move, before the move's gain."""
    x, o = pos[1][0], pos[1][1]
    return o - TEMPO * x if pos[8][SIDE] else x - TEMPO * o


@njit(cache=True, inline="always")
def candidate_mask(pos, everything: bool) -> bool:
    """Whether a cell needs a stone near it to be a candidate: not when ``everything`` is
    asked for (an exhaustive search) or no empty cell is near a stone."""
    cover, occupied = pos[5], pos[6]
    if everything:
        return False
    found = False
    for c in range(cover.size):
        if cover[c] and not occupied[c]:
            found = True
            break
    return found


@njit(cache=True, inline="always")
def block_cells(pos, geo) -> tuple[int, int]:
    """(the cell where the side not to move would complete a line, how many such cells: 1, or
    2 for two or more). One four line is found from the sum of the fours' line numbers."""
    other = 1 - pos[8][SIDE]
    four, counts, line_cells, occupied = pos[2][other], pos[3][other], geo[0], pos[6]
    first, count = -1, 0
    for line in range(four.size) if counts[0] > 1 else range(counts[1], counts[1] + 1):
        if four[line]:
            cell = -1
            for c in line_cells[line]:
                if not occupied[c]:
                    cell = max(cell, c)
            if first < 0:
                first, count = cell, 1
            elif cell != first:
                return first, 2
    return first, count

"""The compiled proof search: the game value (+1 win, 0 draw, -1 loss for the side to move) of a
position of a board of at most 64 cells, by negamax alpha-beta over bitboards.

The values are only -1, 0 and +1, so the root asks two null-window questions ("a win?", then "at
least a draw?"), and a transposition table keeps for each position the bounds ``lo <= value <=
hi`` proved so far. Before any move is searched, facts that need no search:

- a win in one for the side to move: +1; two cells where the opponent wins in one: -1; one such
  cell: blocking it is the only move searched;
- extra stones never hurt the side that owns them, so a position with no line open (free of the
  opponent's stones) for the side to move is at best a draw for it, one where no line is open
  for the opponent at worst a draw, and one with no open line at all a draw; a cell on no open
  line is a pass, never better than a cell on one, so only cells of open lines are searched;
- a pairing strategy: when every line open for a side can be given two empty cells of its own
  (no cell shared), the other side answers each of these cells with its partner and that side
  cannot win (asked only where the window needs it).

Moves are then ordered by the weight of the open lines through them. Positions with at most
``stats[SYM]`` stones are stored under the least of their symmetric images (one entry per
class). ``stats[NODES]`` counts the nodes; past ``stats[BUDGET]`` the search stops, sets
``stats[ABORTED]`` and its answer is *unknown* (2), never a value: no entry is stored from an
unfinished search. ``prove`` releases the GIL, so another thread stops it (Ctrl-C) by setting
``stats[BUDGET]`` to 0. The table is a fixed array that overwrites (one slot per hash).

Argument tuples: ``board = (full, masks, line_cells, inverse)`` (:mod:`.bitboard`), ``tt =
(keys_me, keys_opp, bounds)`` (bounds -1: empty slot, else ``(lo + 1) * 3 + hi + 1``) and
``work = (moves, scores, frames, bits, scratch)``: one row per ply of the ordered moves and the
cell scores (cells,) and of the search's own stack frame (``FRAME_INTS`` ints, 4 uint64); and
the pairing test's scratch rows (6, max(2 lines, cells)).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gym_tictactoe.game.bitboard import (
    ONE,
    ZERO,
    canonical,
    cell_bit,
    cell_scores,
    lowest_cell,
    openness,
    pairing,
    popcount,
    threats,
)

NODES, BUDGET, ABORTED, SYM = 0, 1, 2, 3
UNKNOWN = 2
_MIX_A, _MIX_B = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)


@njit(cache=True)
def static_facts(me, opp, empty, masks):
    """(value known without search or UNKNOWN, lo, hi, cells to search)."""
    if empty == ZERO:
        return 0, 0, 0, ZERO
    if threats(me, opp, masks) & empty != ZERO:
        return 1, 1, 1, ZERO
    theirs = threats(opp, me, masks) & empty
    if theirs & (theirs - ONE) != ZERO:
        return -1, -1, -1, ZERO
    mine_open, theirs_open, live = openness(me, opp, masks)
    if not mine_open and not theirs_open:
        return 0, 0, 0, ZERO
    lo = -1 if theirs_open else 0
    hi = 1 if mine_open else 0
    return UNKNOWN, lo, hi, theirs if theirs != ZERO else live & empty


@njit(cache=True)
def order(me, opp, todo, masks, line_cells, moves, scores) -> int:
    """Write the cells of ``todo`` into ``moves``, best first; return how many."""
    if todo & (todo - ONE) == ZERO:
        moves[0] = lowest_cell(todo)
        return 1
    cell_scores(me, opp, masks, line_cells, scores)
    n = 0
    while todo != ZERO:
        c = lowest_cell(todo)
        todo &= todo - ONE
        i = n
        while i > 0 and scores[moves[i - 1]] < scores[c]:
            moves[i] = moves[i - 1]
            i -= 1
        moves[i] = c
        n += 1
    return n


@njit(cache=True)
def _slot(a, b, size: int) -> int:
    """The table slot of key (a, b): a mixed hash's high 32 bits scaled onto ``size`` (any
    size below 2**32, not only powers of two)."""
    h = a * _MIX_A ^ b * _MIX_B
    h ^= h >> np.uint64(29)
    return int(((h >> np.uint64(32)) * np.uint64(size)) >> np.uint64(32))


@njit(cache=True)
def probe(a, b, tt):
    """The stored (lo, hi) of the position keyed (a, b), or (-1, 1) when not stored."""
    keys_me, keys_opp, bounds = tt
    i = _slot(a, b, bounds.size)
    code = bounds[i]
    if code >= 0 and keys_me[i] == a and keys_opp[i] == b:
        return code // 3 - 1, code % 3 - 1
    return -1, 1


@njit(cache=True)
def store(a, b, lo: int, hi: int, tt) -> None:
    keys_me, keys_opp, bounds = tt
    i = _slot(a, b, bounds.size)
    keys_me[i], keys_opp[i] = a, b
    bounds[i] = (lo + 1) * 3 + hi + 1


@njit(cache=True)
def key(me, opp, inverse, sym_stones: int):
    if popcount(me | opp) <= sym_stones:
        return canonical(me, opp, inverse)
    return me, opp


# Columns of a frame, one per ply of the search's explicit stack (numba cannot cache a
# recursive function, so the recursion is a loop over these rows).
ALPHA, BETA, LO, HI, FIRST_ALPHA, BEST, COUNT, NEXT = range(8)
FRAME_INTS = 8
ME, OPP, KEY_A, KEY_B = range(4)
OPEN = 3  # enter()'s answer when the node's moves must be searched


@njit(cache=True)
def paired(me, opp, empty, alpha: int, beta: int, lo: int, hi: int, board, scratch):
    """(lo, hi) tightened by pairings, asked only where the window needs the answer: a side
    whose open lines all get a pair of their own cells cannot win."""
    masks, line_cells = board[1], board[2]
    if alpha >= 0 and hi > 0 and pairing(me, opp, empty, masks, line_cells, scratch):
        hi = 0
    if beta <= 0 and lo < 0 and pairing(opp, me, empty, masks, line_cells, scratch):
        lo = 0
    return lo, hi


@njit(cache=True)
def enter(ply: int, me, opp, alpha: int, beta: int, board, tt, work, stats) -> int:
    """Count the node; return its value (or a bound outside the window) when known without
    searching its moves, else fill frame ``ply`` and return OPEN."""
    stats[NODES] += 1
    if stats[NODES] > stats[BUDGET]:
        stats[ABORTED] = 1
        return 0
    full, masks, line_cells, inverse = board
    known, lo, hi, todo = static_facts(me, opp, full & ~(me | opp), masks)
    if known != UNKNOWN:
        return known
    a, b = key(me, opp, inverse, stats[SYM])
    stored_lo, stored_hi = probe(a, b, tt)
    lo, hi = max(lo, stored_lo), min(hi, stored_hi)
    if lo < beta and hi > alpha:
        lo, hi = paired(me, opp, full & ~(me | opp), alpha, beta, lo, hi, board, work[4])
    if lo >= beta or lo == hi:
        return lo
    if hi <= alpha:
        return hi
    alpha, beta = max(alpha, lo), min(beta, hi)
    moves, scores, frames, bits = work[0], work[1], work[2], work[3]
    frame = frames[ply]
    frame[COUNT] = order(me, opp, todo, masks, line_cells, moves[ply], scores[ply])
    frame[ALPHA], frame[BETA], frame[LO], frame[HI] = alpha, beta, lo, hi
    frame[FIRST_ALPHA], frame[BEST], frame[NEXT] = alpha, -1, 0
    bits[ply, ME], bits[ply, OPP], bits[ply, KEY_A], bits[ply, KEY_B] = me, opp, a, b
    return OPEN


@njit(cache=True)
def close(ply: int, tt, work) -> int:
    """Store what the finished frame ``ply`` proved (a bound or the value); return its best."""
    frame, bits = work[2][ply], work[3][ply]
    best, lo, hi = frame[BEST], frame[LO], frame[HI]
    if best <= frame[FIRST_ALPHA]:
        hi = best
    elif best >= frame[BETA]:
        lo = best
    else:
        lo, hi = best, best
    store(bits[KEY_A], bits[KEY_B], lo, hi, tt)
    return best


@njit(cache=True)
def search(me, opp, alpha: int, beta: int, board, tt, work, stats) -> int:
    """The value of (me to move, opp) if inside (alpha, beta), else a bound on the side of the
    window it fell (fail-soft); 0 and ``stats[ABORTED]`` set when the budget ran out."""
    value = enter(0, me, opp, alpha, beta, board, tt, work, stats)
    if value != OPEN:
        return value
    moves, frames, bits, ply = work[0], work[2], work[3], 0
    while True:
        frame = frames[ply]
        if frame[NEXT] < frame[COUNT] and frame[ALPHA] < frame[BETA]:
            child = bits[ply, ME] | cell_bit(moves[ply, frame[NEXT]])
            frame[NEXT] += 1
            value = enter(ply + 1, bits[ply, OPP], child, -frame[BETA], -frame[ALPHA],
                          board, tt, work, stats)
            if stats[ABORTED]:
                return 0
            if value == OPEN:
                ply += 1
                continue
        else:
            value = close(ply, tt, work)
            if ply == 0:
                return value
            ply -= 1
            frame = frames[ply]
        frame[BEST] = max(frame[BEST], -value)
        frame[ALPHA] = max(frame[ALPHA], -value)


@njit(cache=True, nogil=True)
def prove(me, opp, board, tt, work, stats) -> int:
    """The value of (me to move, opp): "a win?", then "at least a draw?"; UNKNOWN when the
    budget in ``stats`` ran out first."""
    if search(me, opp, 0, 1, board, tt, work, stats) >= 1:
        return 1
    if stats[ABORTED]:
        return UNKNOWN
    value = search(me, opp, -1, 0, board, tt, work, stats)
    if stats[ABORTED]:
        return UNKNOWN
    return 0 if value >= 0 else -1


@njit(cache=True)
def has_line(stones, masks) -> bool:
    full = False  # a plain loop: numba compiles no any() over a generator
    for line in masks:
        full |= stones & line == line
    return full


@njit(cache=True, nogil=True)
def prove_each(mes, opps, board, tt, work, stats, out) -> int:
    """``out[i]``: the value of (``mes[i]`` to move, ``opps[i]``), every position on the one
    table (what one proof stored makes the next cheaper). A position the other side has won is
    -1, a full board 0, one where the side to move has a line -2 (no game reaches it). The
    budget in ``stats`` is for the whole batch: past it the rest are UNKNOWN; returns how many
    were proved."""
    full, masks = board[0], board[1]
    for i in range(mes.size):
        me, opp = mes[i], opps[i]
        if has_line(me, masks):
            out[i] = -2
        elif has_line(opp, masks):
            out[i] = -1
        elif me | opp == full:
            out[i] = 0
        else:
            out[i] = prove(me, opp, board, tt, work, stats)
            if stats[ABORTED]:
                out[i:] = UNKNOWN
                return i
    return mes.size

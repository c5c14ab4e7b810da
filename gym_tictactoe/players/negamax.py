"""The compiled alpha-beta search of :mod:`.search` (numba, compiled on first use and cached on
disk; imported only when an alpha-beta search is first run, never by ``import gym_tictactoe``).

Negamax alpha-beta with iterative deepening over the line codes of :mod:`.threats`. Scores are
for the side to move. Inside the search a win is ``WIN - ply``, counted from the root, so negamax
needs no rescaling between plies (a loss is the negative, a draw 0, anything else an evaluation,
far smaller); the transposition table stores a win counted from the stored position instead,
because a win's distance belongs to the position, not to the path that reached it.

Argument tuples, built by :mod:`.search`: ``geo`` the board's tables (line cells, the lines
through each cell, the line tables, steps, fours, nearness, Zobrist keys, the cells near each
cell); ``pos`` the scratch position (line codes, the two open-line sums, each side's four flags
and count, each cell's gain for each side, how many stones are near each cell, the occupied
cells, the two hash keys, and (empties, side)); ``tt`` the transposition table, open addressing
on the first key (both keys, depth + 1 (0: empty), bound, score, move); ``run`` (moves by ply,
the ordering's scratch keys, counters ``NODES, LIMIT, ABORTED, MAX_NODES, TIMED, EXHAUSTIVE,
WIDTH``, and the floats (start, time limit)).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, objmode

from gym_tictactoe.players.linepos import (
    EMPTIES,
    SIDE,
    base,
    block_cells,
    candidate_mask,
    place,
    static,
    undo,
)
from gym_tictactoe.players.linepos import setup as setup  # the edge builds positions with it

WIN = 1 << 60  # above any evaluation; a win in d plies from the root scores WIN - d
INFINITY = 1 << 61
PROVEN = WIN - 256  # scores beyond this are forced wins or losses (boards have <= 225 cells)
EXACT, LOWER, UPPER = 0, 1, 2  # transposition-table bounds
FRONTIER_FOURS = 2  # at most this many four-making moves are searched at the frontier
FOUR_BONUS = 1 << 50  # as threats.FOUR_BONUS
# An iteration costs about this many times the one before; one predicted to overrun the node
# budget is not started.
GROWTH = 3
# With a time limit the clock is read once every this many positions (well under a millisecond
# of search): the node counter's check stays the only cost of the hot path.
CLOCK_EVERY = 1024
PROBES = 64  # a full table overwrites the slot a key hashes to after this many probes
NODES, LIMIT, ABORTED, MAX_NODES, TIMED, EXHAUSTIVE, WIDTH = range(7)
DONE, FORCED, FRONTIER, EXPAND = range(4)
# Columns of a stack frame of negamax, one row per ply.
DEPTH, ALPHA, BETA, KIND, COUNT, NEXT, BEST, BEST_MOVE, BELOW = range(9)
FRAME_INTS = 9
OPEN = 1 << 62  # enter()'s answer when the node's children are to be searched


@njit(cache=True)
def clock() -> float:
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True, inline="always")
def ordered(hint: int, ply: int, geo, pos, run) -> int:
    """Write the candidate moves of ply ``ply`` into ``run[0][ply]``, best first: the table's
    move, then by gain (fours made first), then nearest the centre; at most ``WIDTH`` of them
    (plus the table's move). Returns how many."""
    nearness, gain, cover, occupied = geo[8], pos[4], pos[5], pos[6]
    moves, keys, counters = run[0][ply], run[1], run[2]
    side, width = pos[8][SIDE], counters[WIDTH]
    near_only = candidate_mask(pos, counters[EXHAUSTIVE] != 0)
    n = 0
    for c in range(occupied.size):
        if occupied[c] or (near_only and not cover[c]):
            continue
        g, r = gain[side, c], nearness[c]
        if n == width and (g < keys[0, n - 1] or (g == keys[0, n - 1] and r < keys[1, n - 1])):
            continue
        i = n if n < width else n - 1
        while i > 0 and (g > keys[0, i - 1] or (g == keys[0, i - 1] and r > keys[1, i - 1])):
            moves[i], keys[0, i], keys[1, i] = moves[i - 1], keys[0, i - 1], keys[1, i - 1]
            i -= 1
        moves[i], keys[0, i], keys[1, i] = c, g, r
        n = min(n + 1, width)
    if hint >= 0 and moves[0] != hint:  # the table's move leads, wherever it was
        i = 0
        while i < n and moves[i] != hint:
            i += 1
        n += i == n
        for j in range(min(i, n - 1), 0, -1):
            moves[j] = moves[j - 1]
        moves[0] = hint
    return n


@njit(cache=True, inline="always")
def find(pos, tt) -> tuple[int, bool]:
    """The slot of the position in the table and whether it is stored there (else an empty
    slot, or after PROBES the slot it hashes to, to overwrite)."""
    a, b = pos[7][0], pos[7][1]
    hashes, ints = tt[0], tt[1]
    mask = ints.shape[0] - 1
    home = np.int64(a & np.uint64(mask))
    slot = home
    for _ in range(PROBES):
        if ints[slot, 0] == 0:
            return slot, False
        if hashes[slot, 0] == a and hashes[slot, 1] == b:
            return slot, True
        slot = (slot + 1) & mask
    return home, False


@njit(cache=True, inline="always")
def to_table(score: int, ply: int) -> int:
    """A score counted from the root becomes one counted from the position ``ply`` deep."""
    return score + ply if score > PROVEN else score - ply if score < -PROVEN else score


@njit(cache=True, inline="always")
def from_table(score: int, ply: int) -> int:
    return score - ply if score > PROVEN else score + ply if score < -PROVEN else score


@njit(cache=True, inline="always")
def store(depth: int, bound: int, score: int, move: int, pos, tt) -> None:
    slot, _ = find(pos, tt)
    tt[0][slot, 0], tt[0][slot, 1] = pos[7][0], pos[7][1]
    ints, used = tt[1][slot], tt[2]
    if ints[0] == 0 and used[0] < used.size - 1:  # a new slot: listed for clear()
        used[0] += 1
        used[used[0]] = slot
    ints[0], ints[1], ints[2], ints[3] = depth + 1, bound, score, move


@njit(cache=True)
def next_limit(run) -> None:
    """Set the node count at which to look again: the node budget, or, with a time limit, the
    next reading of the clock. Sets ABORTED once either has run out."""
    counters, floats = run[2], run[3]
    if counters[NODES] > counters[MAX_NODES] or (
            counters[TIMED] and clock() - floats[0] > floats[1]):
        counters[ABORTED] = 1
    elif counters[TIMED]:
        counters[LIMIT] = min(counters[NODES] + CLOCK_EVERY, counters[MAX_NODES])
    else:
        counters[LIMIT] = counters[MAX_NODES]


@njit(cache=True)
def clear(tt) -> None:
    """Empty the table for the next search: the slots listed as used, or all of them when the
    list overflowed (a table reused by many short searches is not wiped whole each time)."""
    used = tt[2]
    if used[0] >= used.size - 1:
        tt[1][:, 0] = 0
    else:
        for i in range(1, used[0] + 1):
            tt[1][used[i], 0] = 0
    used[0] = 0


# Without the runtime's reference counts (_nrt=False): the loop allocates nothing, and counting
# the references of every array it unpacks would cost more than the search itself.
@njit(cache=True, _nrt=False)  # type: ignore[call-overload]  # numba's stubs omit _nrt
def negamax(depth: int, alpha: int, beta: int, ply: int, geo, pos, tt, run) -> int:
    """The score of the position for the side to move (fail-soft alpha-beta); 0 with
    ``ABORTED`` set once the budget or the time has run out. The recursion is a loop over
    stack frames, one per ply (numba's cache cannot hold a recursive function safely): each
    node's children, their depth and the score before them come from :func:`prepare`, and a
    child's window is (-beta, -max(alpha, best))."""
    value = enter(depth, alpha, beta, ply, geo, pos, tt, run)
    if value != OPEN:
        return value
    top, moves, frames, counters = ply, run[0], run[4], run[2]
    while True:
        frame = frames[ply]
        if value != OPEN:  # a child finished with ``value``
            undo(moves[ply, frame[NEXT] - 1], frame[BELOW] > 0, geo, pos)
            if -value > frame[BEST]:
                frame[BEST], frame[BEST_MOVE] = -value, moves[ply, frame[NEXT] - 1]
        if frame[NEXT] < frame[COUNT] and frame[BEST] < frame[BETA]:
            cell = moves[ply, frame[NEXT]]
            frame[NEXT] += 1
            place(cell, frame[BELOW] > 0, geo, pos)  # a child at depth 0 is only evaluated
            value = enter(frame[BELOW], -frame[BETA], -max(frame[ALPHA], frame[BEST]), ply + 1,
                          geo, pos, tt, run)
            if counters[ABORTED]:
                return 0
            if value == OPEN:
                ply += 1
            continue
        value = close(ply, pos, tt, run)
        if ply == top:
            return value
        ply -= 1


@njit(cache=True, inline="always")
def enter(depth: int, alpha: int, beta: int, ply: int, geo, pos, tt, run) -> int:
    """Count the node; its score when no child is to be searched, else OPEN with frame
    ``ply`` filled in."""
    counters = run[2]
    counters[NODES] += 1
    if counters[NODES] > counters[LIMIT]:
        next_limit(run)
        if counters[ABORTED]:
            return 0
    kind, n, best, below = prepare(depth, alpha, beta, ply, geo, pos, tt, run)
    if kind == DONE:
        return best
    frame = run[4][ply]
    frame[DEPTH], frame[ALPHA], frame[BETA], frame[KIND] = depth, alpha, beta, kind
    frame[COUNT], frame[NEXT], frame[BEST], frame[BEST_MOVE] = n, 0, best, -1
    frame[BELOW] = below
    return OPEN


@njit(cache=True, inline="always")
def close(ply: int, pos, tt, run) -> int:
    """The finished node's score; an expanded node stores what it proved."""
    frame = run[4][ply]
    best = frame[BEST]
    if frame[KIND] == EXPAND:
        bound = LOWER if best >= frame[BETA] else UPPER if best <= frame[ALPHA] else EXACT
        store(frame[DEPTH], bound, to_table(best, ply), frame[BEST_MOVE], pos, tt)
    return best


@njit(cache=True, inline="always")
def prepare(depth: int, alpha: int, beta: int, ply: int, geo, pos, tt, run
            ) -> tuple[int, int, int, int]:
    """(kind, children written into ``run[0][ply]``, the score before them, their depth):
    DONE with the score when no child is searched; FORCED: the one cell that blocks the
    opponent's win, at the same depth; FRONTIER: the last ply of a limited search (see
    :func:`frontier_moves`); EXPAND: the ordered moves, one ply less deep."""
    state, counts, moves = pos[8], pos[3], run[0][ply]
    side = state[SIDE]
    if counts[side, 0]:
        return DONE, 0, WIN - ply - 1, 0
    if counts[1 - side, 0]:  # the opponent threatens to win: block, or lose to two threats
        cell, count = block_cells(pos, geo)
        moves[0] = cell
        return (DONE, 0, -(WIN - ply - 2), 0) if count > 1 else (FORCED, 1, -INFINITY, depth)
    if state[EMPTIES] == 0:
        return DONE, 0, 0, 0
    if depth <= 0:
        return DONE, 0, static(pos), 0
    if depth == 1 and not run[2][EXHAUSTIVE] and state[EMPTIES] > 1:
        top, rest, n = frontier_moves(geo, pos, moves)
        if top < FOUR_BONUS:
            return DONE, 0, base(pos) + top, 0
        return FRONTIER, n, base(pos) + rest if rest >= 0 else -INFINITY, 0
    slot, found = find(pos, tt)
    hint = -1
    if found:
        entry = tt[1][slot]
        hint, bound, value = entry[3], entry[1], from_table(entry[2], ply)
        if entry[0] - 1 >= depth and (bound == EXACT or (bound == LOWER and value >= beta)
                                      or (bound == UPPER and value <= alpha)):
            return DONE, 0, value, 0
    return EXPAND, ordered(hint, ply, geo, pos, run), -INFINITY, depth - 1


@njit(cache=True, inline="always")
def frontier_moves(geo, pos, fours) -> tuple[int, int, int]:
    """At the last ply a quiet move's child is only evaluated, worth ``base() + gain`` to
    this side, so the best of them is one max(). The (at most FRONTIER_FOURS) four-making
    candidates of highest (gain, cell) are searched instead, best first, written into
    ``fours``, since the reply is forced (a threat extension); any other is evaluated like a
    quiet move. Returns (the best gain of a candidate, the best gain mod FOUR_BONUS among
    those not in ``fours`` (-1: none), how many are in ``fours``)."""
    gain, cover, occupied = pos[4][pos[8][SIDE]], pos[5], pos[6]
    near_only = candidate_mask(pos, False)
    best, n = -1, 0
    for c in range(occupied.size - 1, -1, -1):  # decreasing cells: ties go to the higher cell
        if occupied[c] or (near_only and not cover[c]):
            continue
        g = gain[c]
        best = max(best, g)
        if g >= FOUR_BONUS and (n < FRONTIER_FOURS or g > gain[fours[n - 1]]):
            i = min(n, FRONTIER_FOURS - 1)
            while i > 0 and g > gain[fours[i - 1]]:
                fours[i] = fours[i - 1]
                i -= 1
            fours[i] = c
            n = min(n + 1, FRONTIER_FOURS)
    rest = -1
    if best < FOUR_BONUS:
        return best, rest, n  # no four: the rest is not asked for
    for c in range(occupied.size):
        if occupied[c] or (near_only and not cover[c]) or c == fours[0] or (
                n > 1 and c == fours[1]):
            continue
        rest = max(rest, gain[c] & (FOUR_BONUS - 1))  # gains are >= 0: the remainder
    return best, rest, n


@njit(cache=True)
def root(moves, depth: int, values, ties, geo, pos, tt, run) -> tuple[int, int]:
    """Search every root move; after the first, with the window (best - 1, inf), so that a
    move as good as the best gets its exact score and joins the ties: (best, ties)."""
    best, count = -INFINITY, 0
    for i in range(moves.size):
        cell = moves[i]
        place(cell, depth > 1, geo, pos)
        value = -negamax(depth - 1, -INFINITY, 1 - best, 1, geo, pos, tt, run)
        undo(cell, depth > 1, geo, pos)
        if run[2][ABORTED]:
            break
        values[i] = value
        if value > best:
            best, count = value, 0
        if value == best:
            ties[count] = cell
            count += 1
    return best, count


@njit(cache=True)
def out_of_budget(start: int, started_at: float, run) -> bool:
    """Whether the next iteration would most likely run out (it costs about GROWTH times the
    last one): then it is not started."""
    counters, floats = run[2], run[3]
    nodes = counters[NODES]
    if nodes + GROWTH * (nodes - start) > counters[MAX_NODES]:
        return True
    if counters[TIMED]:
        now = clock()
        if now - floats[0] + GROWTH * (now - started_at) > floats[1]:
            return True
    next_limit(run)
    return counters[ABORTED] != 0


@njit(cache=True)
def deepen(moves, max_depth: int, best_moves, geo, pos, tt, run) -> tuple[int, int, int]:
    """Iterative deepening over the root ``moves`` (reordered in place): (best score, how many
    best moves, written increasing into ``best_moves``, depth done). An exhaustive search
    goes straight to the end: shallower iterations would end in evaluations."""
    counters = run[2]
    values, ties = np.zeros(moves.size, np.int64), np.zeros(moves.size, np.int64)
    best, count, done = -INFINITY, moves.size, 0
    best_moves[: moves.size] = moves
    first = max_depth if counters[EXHAUSTIVE] else 1
    for depth in range(first, max_depth + 1):
        start, started_at = counters[NODES], clock() if counters[TIMED] else 0.0
        score, found = root(moves, depth, values, ties, geo, pos, tt, run)
        if counters[ABORTED]:
            break
        best, count, done = score, found, depth
        best_moves[:found] = ties[:found]
        if out_of_budget(start, started_at, run):
            break
        # The best moves of this iteration lead the next one (a stable sort keeps the rest).
        moves[:] = moves[np.argsort(-values, kind="mergesort")]
        # A forced result within the nominal depth is final: every line that short was
        # searched in full. One found only through forced replies may have a faster twin.
        if abs(best) > PROVEN and WIN - abs(best) <= depth:
            break
    best_moves[:count] = np.sort(best_moves[:count])
    return best, count, done

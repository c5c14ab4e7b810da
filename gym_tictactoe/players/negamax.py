"""Negamax alpha-beta over a :class:`~.threats.LinePosition`: the engine of :mod:`.search`.

Scores are for the side to move. Inside the search a win is ``WIN - ply``, counted from the root,
so negamax needs no rescaling between plies (a loss is the negative, a draw 0, anything else an
evaluation, far smaller); the transposition table stores a win counted from the stored position
instead, because a win's distance belongs to the position, not to the path that reached it.
"""

from __future__ import annotations

import time

from gym_tictactoe.players.threats import FOUR_BONUS, GAIN_SHIFT, LOW, LinePosition

WIN = 1 << 60  # above any evaluation; a win in d plies from the root scores WIN - d
INFINITY = 1 << 61
PROVEN = WIN - 256  # scores beyond this are forced wins or losses (boards have <= 225 cells)
EXACT, LOWER, UPPER = 0, 1, 2  # transposition-table bounds
FRONTIER_FOURS = 2  # at most this many four-making moves are searched at the frontier
# An iteration costs about this many times the one before (2.6 to 5 times, median, measured on
# 15x15 gomoku from depth 3 on); one predicted to overrun the node budget is not started.
GROWTH = 3
# With a time limit the clock is read once every this many positions (about a millisecond of
# search), not at every node: the node counter's check stays the only cost of the hot path.
CLOCK_EVERY = 64


class OutOfNodes(Exception):
    """The node budget or the time ran out: the iteration under way is dropped."""


class Searcher:
    """One search from one position; its scratch position and table live as long as it does."""

    def __init__(self, pos: LinePosition, *, exhaustive: bool, width: int | None,
                 max_nodes: int | None, time_limit: float | None = None) -> None:
        self.pos = pos
        self.exhaustive = exhaustive
        self.width = width if width is not None and not exhaustive else pos.geo.cells
        self.max_nodes = max_nodes if max_nodes is not None else INFINITY
        self.time_limit = time_limit
        self.started = time.perf_counter()
        self.limit = INFINITY  # no budget until a first iteration has finished (see deepen)
        self.nodes = 0
        self.table: dict[int, tuple[int, int, int, int]] = {}
        # Sort keys pack (gain, nearness to the centre, lower cell first) into one int.
        self.nearness = [(1023 - d) << 8 | (255 - c)
                         for c, d in enumerate(pos.geo.centre_distance)]

    def deepen(self, moves: list[int], max_depth: int) -> tuple[int, list[int], int]:
        """Iterative deepening over the root ``moves``: (best score, best moves, depth done)."""
        best, ties, done = -INFINITY, list(moves), 0
        # An exhaustive search goes straight to the end: shallower iterations would end in
        # evaluations, which cost more than they teach a search whose every leaf is a result.
        for depth in [max_depth] if self.exhaustive else range(1, max_depth + 1):
            start, clock = self.nodes, time.perf_counter()
            try:
                score, found, values = self.root(moves, depth)
            except OutOfNodes:
                break
            best, ties, done = score, found, depth
            now = time.perf_counter()
            if self.nodes + GROWTH * (self.nodes - start) > self.max_nodes or (
                    self.time_limit is not None
                    and now - self.started + GROWTH * (now - clock) > self.time_limit):
                break  # the next iteration would most likely run out: save the time
            self._next_limit()
            # The best moves of this iteration lead the next one (a stable sort keeps the rest).
            moves = sorted(moves, key=values.__getitem__, reverse=True)
            # A forced result within the nominal depth is final: every line that short was
            # searched in full. One found only through forced replies may have a faster twin.
            if abs(best) > PROVEN and WIN - abs(best) <= depth:
                break
        return best, sorted(ties), done

    def root(self, moves: list[int], depth: int) -> tuple[int, list[int], dict[int, int]]:
        """Search every root move; after the first, with the window (best - 1, inf), so that a
        move as good as the best gets its exact score and joins the ties."""
        pos, best, ties, values = self.pos, -INFINITY, [], {}
        for cell in moves:
            pos.place(cell, gains=depth > 1)
            value = -self.negamax(depth - 1, -INFINITY, 1 - best, 1)
            pos.undo(cell, gains=depth > 1)
            values[cell] = value
            if value > best:
                best, ties = value, [cell]
            elif value == best:
                ties.append(cell)
        return best, ties, values

    def negamax(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """The score of the position for the side to move (fail-soft alpha-beta). One function
        on purpose: it runs for every node, and Python calls are not free."""
        self.nodes += 1
        if self.nodes > self.limit:
            self._next_limit()
        pos = self.pos
        side = pos.side
        if pos.fours[side]:
            return WIN - ply - 1
        if pos.fours[1 - side]:
            return self.forced(depth, alpha, beta, ply)
        if pos.empties == 0:
            return 0
        if depth <= 0:
            return pos.static()
        if depth == 1 and not self.exhaustive and pos.empties > 1:
            return self.frontier(alpha, beta, ply)
        entry, hint = self.table.get(pos.key), -1
        if entry is not None:
            stored_depth, bound, stored, hint = entry
            if stored_depth >= depth:
                value = _from_table(stored, ply)
                if (bound == EXACT or (bound == LOWER and value >= beta)
                        or (bound == UPPER and value <= alpha)):
                    return value
        best, best_move, floor = -INFINITY, -1, alpha
        for cell in self.ordered(hint):
            pos.place(cell, gains=depth > 1)  # a child at depth 0 is only evaluated
            value = -self.negamax(depth - 1, -beta, -alpha, ply + 1)
            pos.undo(cell, gains=depth > 1)
            if value > best:
                best, best_move = value, cell
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        bound = LOWER if best >= beta else UPPER if best <= floor else EXACT
        self.table[pos.key] = (depth, bound, _to_table(best, ply), best_move)
        return best

    def _next_limit(self) -> None:
        """Set the node count at which to look again: the node budget, or, with a time limit,
        the next reading of the clock. Raises OutOfNodes once either has run out."""
        if self.nodes > self.max_nodes or (
                self.time_limit is not None
                and time.perf_counter() - self.started > self.time_limit):
            raise OutOfNodes
        if self.time_limit is None:
            self.limit = self.max_nodes
        else:
            self.limit = min(self.nodes + CLOCK_EVERY, self.max_nodes)

    def frontier(self, alpha: int, beta: int, ply: int) -> int:
        """The last ply of a limited search: a quiet move's child is only evaluated, worth
        ``base() + gain`` to this side, so the best of them is one max(). The (at most
        FRONTIER_FOURS) best moves that make a four are searched instead, since the reply is
        forced (a threat extension); any other is evaluated like a quiet move."""
        pos = self.pos
        shift = GAIN_SHIFT if pos.side else 0
        gains = pos.gains
        cells = list(pos.candidates())
        values = [gains[c] >> shift & LOW for c in cells]
        best = max(values)
        if best < FOUR_BONUS:
            return pos.base() + best
        fours = sorted([(g, c) for g, c in zip(values, cells, strict=True) if g >= FOUR_BONUS],
                       reverse=True)[:FRONTIER_FOURS]
        searched = {cell for _, cell in fours}
        rest = [g % FOUR_BONUS for g, c in zip(values, cells, strict=True) if c not in searched]
        best = pos.base() + max(rest) if rest else -INFINITY
        for _, cell in fours:
            if best >= beta:
                break
            pos.place(cell, gains=False)
            best = max(best, -self.negamax(0, -beta, -max(alpha, best), ply + 1))
            pos.undo(cell, gains=False)
        return best

    def forced(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """The opponent threatens to win: block its one winning cell, or lose if it has two.
        The forced reply does not use up depth."""
        pos = self.pos
        blocks = pos.four_cells(1 - pos.side)
        if len(blocks) > 1:
            return -(WIN - ply - 2)
        (cell,) = blocks
        pos.place(cell, gains=depth > 0)
        value = -self.negamax(depth, -beta, -alpha, ply + 1)
        pos.undo(cell, gains=depth > 0)
        return value

    def ordered(self, hint: int) -> list[int]:
        """The candidate moves, best first: the table's move, then by gain (fours made first),
        then nearest the centre; at most ``width`` of them. Candidates are the empty cells near a
        stone, or every empty cell when the search is exhaustive or nothing is near."""
        pos = self.pos
        cells = pos.free_cells() if self.exhaustive else pos.candidates()
        shift = GAIN_SHIFT if pos.side else 0
        gains, nearness = pos.gains, self.nearness
        keys = sorted([(gains[c] >> shift & LOW) << 18 | nearness[c] for c in cells],
                      reverse=True)
        moves = [255 - (key & 255) for key in keys[: self.width]]
        if hint >= 0 and moves[0] != hint:
            if hint in moves:
                moves.remove(hint)
            moves.insert(0, hint)
        return moves


def _to_table(score: int, ply: int) -> int:
    """A score counted from the root becomes one counted from the position ``ply`` deep."""
    return score + ply if score > PROVEN else score - ply if score < -PROVEN else score


def _from_table(score: int, ply: int) -> int:
    return score - ply if score > PROVEN else score + ply if score < -PROVEN else score

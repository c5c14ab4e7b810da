"""The one exact evaluator: a policy's best response per seat, by one backward pass.

A policy answers at each position with a distribution over its moves: ``(cells, weights)``
arrays of shape ``(N, K)`` for ``N`` positions. A deterministic policy is the sparse one-hot
case, ``K = 1`` and ``weights`` None (one cell per position, as memory-light as a moves
table); a stochastic one gives every cell its probability (``K`` = the number of cells). A
cell that is not a legal move there (occupied, or ``NOT_A_CELL`` for an output that named no
cell) is a forfeit: the policy loses at once, as under the env's ``illegal_action="lose"``.

:func:`best_responses` walks the solved board's layers backwards once, for both seats at once,
and gives per seat a :class:`SeatResponse`: the worst result an opponent can bring about with
positive probability, the policy's exact expected result against a best responder, and the
shortest losing line. Each position gets a *key*, ``result index * span + plies to the end``,
so that the smallest key is the fastest loss (result index 0 loss, 1 draw, 2 win).

With ``reached_only`` the policy is asked only where it is to move on some game against it (a
forward pass first, following its support and every opponent reply): for a search player too
costly to ask at every position. The backward pass then reads its answers back.

:func:`move_rate`, beside it: how often a moves table keeps the solved game value.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.evaluation.answers import NOT_A_CELL, Ask
from gym_tictactoe.game import Rules, basics, solver

RESULTS = ("loss", "draw", "win")  # the policy's result, worst first: index = key // span
RESULT_SCORES = {"win": 1, "draw": 0, "loss": -1}  # for curves and logs
_MARKS = (game.X, game.O)

@dataclass(frozen=True)
class SeatResponse:
    """The best result an opponent can force against the policy playing ``seat``.

    ``losing_line`` (when ``result == "loss"``): the shortest such game, absolute cells from the
    empty board, both sides alternately; it ends with the opponent's winning move, or with the
    policy's illegal move (``NOT_A_CELL`` when the output named no cell). None otherwise.
    ``expected``: the policy's expected result against the best response, +1 a win ... -1 a
    loss; for a deterministic policy the score of ``result`` (the default). For a stochastic
    policy ``result`` is the worst result reachable with positive probability.
    """

    seat: str
    result: str
    losing_line: tuple[int, ...] | None
    expected: float | None = None

    def __post_init__(self) -> None:
        if self.expected is None:
            object.__setattr__(self, "expected", float(RESULT_SCORES[self.result]))

    def as_dict(self) -> dict[str, Any]:
        line = None if self.losing_line is None else list(self.losing_line)
        return {"seat": self.seat, "result": self.result, "losing_line": line,
                "expected": self.expected}


def span(rules: Rules) -> int:
    """More plies than any game has, so (result, plies) packs into one sortable int."""
    return max(16, rules.n_cells + 1)


def best_responses(rules: Rules, ask: Ask, *, stochastic: bool,
                   reached_only: bool = False) -> dict[str, SeatResponse]:
    """``{"X": SeatResponse, "O": SeatResponse}`` of the policy that ``ask`` answers for.

    ``stochastic``: ``ask`` gives weights, and the expected results are computed from them
    (else they follow from the results). ``reached_only``: ask only where the policy can be."""
    rules.check_solvable("exact evaluation over every position")
    walk = _Walk(rules, stochastic)
    if reached_only:
        ask = walk.reached_answers(ask)
    walk.backward(ask)
    return {game.MARK_NAMES[me]: walk.response(me, ask) for me in _MARKS}


def _support(cells: npt.NDArray[np.int64], legal: npt.NDArray[np.bool_]) -> npt.NDArray:
    """Each answer's column among the children: its cell, or ``n_cells`` (a forfeit) where the
    cell is not a legal move."""
    n = legal.shape[1]
    on_board = (cells >= 0) & (cells < n)
    clipped = np.clip(cells, 0, n - 1)
    ok = on_board & np.take_along_axis(legal, clipped, axis=1)
    return np.where(ok, clipped, n)


def _pick(child: npt.NDArray, support: npt.NDArray, forfeit: float) -> npt.NDArray:
    """The children's entries at the answers' columns, ``forfeit`` at forfeits."""
    n = child.shape[1]
    return np.where(support == n, forfeit,
                    np.take_along_axis(child, np.minimum(support, n - 1), axis=1))


class _Walk:
    """Per reachable position (``rules.reachable`` order) and seat: the key, and for stochastic
    policies the expected result (``values``: the layer being walked, ``below``: its
    children's, each as (first row, arrays by seat)); a dense code -> row index (int32: 172 MB
    on 16 cells) finds the children's rows without searching."""

    def __init__(self, rules: Rules, stochastic: bool) -> None:
        self.rules, self.span = rules, span(rules)
        self.no_key = len(RESULTS) * self.span  # above every key
        n = rules.reachable.size
        self.index = np.zeros(rules.n_codes, dtype=np.int32)
        self.index[rules.reachable] = np.arange(n, dtype=np.int32)
        # int8 keys: at most 3 * 17 + 1 on 16 cells (``no_key`` + 1), 10 MB a seat on 4x4.
        self.keys = {me: np.zeros(n, dtype=np.int8) for me in _MARKS}
        self.values: tuple[int, dict] | None = (n, {}) if stochastic else None
        self.below = self.values
        sizes = [layer.codes.size for layer in rules.positions]
        self.offsets = np.cumsum([0, *sizes[:-1]])

    def backward(self, ask: Ask) -> None:
        for layer, offset in zip(reversed(self.rules.positions), self.offsets[::-1],
                                 strict=True):
            if self.values is not None:  # two layers' values at a time: 4x4's would take 155 MB
                self.below = self.values
                self.values = (offset, {me: np.zeros(layer.codes.size) for me in _MARKS})
            self._terminal(layer, offset)
            live = np.flatnonzero(~layer.terminal)
            for start in range(0, live.size, basics._CHUNK):
                rows = live[start : start + basics._CHUNK]
                self._step(layer.codes[rows], offset + rows, layer.mark, ask)

    def _terminal(self, layer: game.Layer, offset: int) -> None:
        rows = offset + np.flatnonzero(layer.terminal)
        winner = layer.winner[layer.terminal]
        for me in _MARKS:
            won, drawn = winner == me, winner == game.NO_WINNER
            self.keys[me][rows] = (won * 2 + drawn) * self.span
            if self.values is not None:
                self.values[1][me][rows - offset] = np.where(won, 1.0, np.where(drawn, 0.0, -1.0))

    def _step(self, codes: npt.NDArray[np.int64], rows: npt.NDArray[np.intp], mark: int,
              ask: Ask) -> None:
        """Keys (and values) at unfinished positions ``codes``: the policy's mixture in the seat
        of ``mark``, who moves there; the best reply in the other seat."""
        legal, child_rows = self._children(codes, mark)
        cells, weights = ask(codes, mark)
        at = _pick(child_rows, _support(cells, legal), -1)
        other = int(game.SWAP[mark])
        self.keys[mark][rows] = self._chosen_keys(mark, at, weights).min(axis=1) + 1
        self.keys[other][rows] = np.where(legal, self.keys[other][child_rows],
                                          self.no_key).min(axis=1) + 1
        if self.values is not None and self.below is not None:  # below is set with values
            (offset, values), (first, below) = self.values, self.below
            chosen = np.where(at >= 0, below[mark][np.maximum(at - first, 0)], -1.0)  # forfeit
            values[mark][rows - offset] = (weights * chosen).sum(axis=1)
            values[other][rows - offset] = np.where(
                legal, below[other][np.maximum(child_rows - first, 0)], np.inf).min(axis=1)

    def _children(self, codes: npt.ArrayLike, mark: int) -> tuple[npt.NDArray, npt.NDArray]:
        """Which cells are legal moves at ``codes``, and the rows of the children."""
        children = self.rules.children_of(codes, mark)
        return children >= 0, self.index[np.maximum(children, 0)]

    def _chosen_keys(self, me: int, at: npt.NDArray, weights: Any) -> npt.NDArray:
        """Keys of the policy's answers (children's rows ``at``, -1 for a forfeit: a loss at
        once, key 0), above every key where an answer's weight is 0."""
        keys = np.where(at >= 0, self.keys[me][at], 0)
        return keys if weights is None else np.where(weights > 0, keys, self.no_key)

    def response(self, me: int, ask: Ask) -> SeatResponse:
        key = int(self.keys[me][0])  # row 0: the empty board
        result = RESULTS[key // self.span]
        expected = None if self.values is None else float(self.values[1][me][0])
        line = self.losing_line(me, ask) if result == "loss" else None
        return SeatResponse(game.MARK_NAMES[me], result, line, expected)

    def losing_line(self, me: int, ask: Ask) -> tuple[int, ...]:
        """From the empty board, the move of smallest key (lowest cell among equals) for both
        sides, the policy's among those it plays with positive probability, to the loss."""
        line: list[int]
        code, line = game.EMPTY_BOARD, []
        while not self.rules.is_terminal(code):
            mark = self.rules.to_move(code)
            legal, child_rows = self._children([code], mark)
            if mark == me:
                cells, weights = ask(np.array([code]), mark)
                at = _pick(child_rows, _support(cells, legal), -1)
                choice = int(np.argmin(self._chosen_keys(me, at, weights)[0]))
                cell = int(cells[0, choice])
                if at[0, choice] < 0:  # a forfeit: the line ends with the illegal move
                    return (*line, cell)
            else:
                keys = np.where(legal, self.keys[me][child_rows], self.no_key)
                cell = int(np.argmin(keys[0]))
            line.append(cell)
            code = self.rules.play(code, cell)
        return tuple(line)

    def reached_answers(self, ask: Ask) -> Ask:
        """Ask the policy only where it is to move on some game against it, layer by layer
        forwards; the answers are kept and given back to the backward pass (elsewhere a
        forfeit, which no position on such a game reads)."""
        reached = {me: np.zeros(self.keys[me].size, dtype=bool) for me in _MARKS}
        for me in _MARKS:
            reached[me][0] = True
        asked: list[tuple[npt.NDArray, npt.NDArray, Any]] = []
        for layer, offset in zip(self.rules.positions, self.offsets, strict=True):
            live = offset + np.flatnonzero(~layer.terminal)
            for me in _MARKS:
                rows = live[reached[me][live]]
                for start in range(0, rows.size, basics._CHUNK):
                    chunk = rows[start : start + basics._CHUNK]
                    asked += self._reach(chunk, layer.mark, me, ask, reached[me])
        return self._lookup(asked)

    def _reach(self, rows: npt.NDArray[np.intp], mark: int, me: int, ask: Ask,
               reached: npt.NDArray[np.bool_]) -> list:
        """Mark the children of ``rows`` that games against the policy (seat ``me``) reach:
        every reply of the opponent's, the policy's moves of positive weight; its answers."""
        codes = self.rules.reachable[rows]
        legal, child_rows = self._children(codes, mark)
        if me != mark:
            reached[child_rows[legal]] = True
            return []
        cells, weights = ask(codes, mark)
        at = _pick(child_rows, _support(cells, legal), -1)
        reached[at[(at >= 0) if weights is None else (at >= 0) & (weights > 0)]] = True
        return [(rows, cells, weights)]

    def _lookup(self, asked: list) -> Ask:
        """An ``ask`` that gives back the kept answers (a forfeit where none was asked)."""
        slot = np.full(self.keys[game.X].size, -1, dtype=np.int32)
        rows = np.concatenate([a[0] for a in asked])
        slot[rows] = np.arange(rows.size)
        cells = np.concatenate([a[1] for a in asked])
        weights = None if self.values is None else np.concatenate([a[2] for a in asked])

        def answer(codes: npt.NDArray[np.int64], mark: int) -> tuple[npt.NDArray, Any]:
            at = slot[self.index[codes]]
            found = at >= 0
            out = np.where(found[:, None], cells[np.maximum(at, 0)], NOT_A_CELL)
            if weights is None:
                return out, None
            forfeit = np.eye(1, weights.shape[1])  # all weight on the first (forfeit) answer
            return out, np.where(found[:, None], weights[np.maximum(at, 0)], forfeit)
        return answer


# --- the optimal-move rate, beside it ----------------------------------------------------------


@dataclass(frozen=True)
class Blunder:
    """A position where the policy's move (perhaps illegal) gives away the game value."""

    board: tuple[int, ...]  # absolute cells: 0 empty, 1 X, 2 O
    code: int
    move: int
    optimal_moves: tuple[int, ...]  # every value-keeping move

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "board": list(self.board),
                "optimal_moves": list(self.optimal_moves)}


MAX_BLUNDERS = 10_000  # listed; every 3x3 blunder fits, a random 4x4 policy has millions


@dataclass(frozen=True)
class MoveRate:
    """``rate``: the fraction of ``positions`` where the policy keeps the game value; the first
    ``MAX_BLUNDERS`` ``blunders`` in order of the number of marks on the board, then code, of
    ``n_blunders`` in all."""

    rate: float
    positions: int
    blunders: tuple[Blunder, ...]
    n_blunders: int | None = None  # None: len(blunders), every one listed

    def __post_init__(self) -> None:
        if self.n_blunders is None:
            object.__setattr__(self, "n_blunders", len(self.blunders))

    @property
    def optimal(self) -> int:
        assert self.n_blunders is not None  # __post_init__ replaced None
        return self.positions - self.n_blunders

    def __repr__(self) -> str:
        """One line; ``blunders`` holds up to ``MAX_BLUNDERS`` of them (read it for those)."""
        return (f"MoveRate(rate={self.rate:.4f}, positions={self.positions}, "
                f"n_blunders={self.n_blunders}, blunders=<{len(self.blunders)} listed>)")


def move_rate(rules: Rules, moves: npt.NDArray) -> MoveRate:
    """The optimal-move rate of a moves table (``evaluation.optimal_move_rate``)."""
    solution = solver.solve(rules)
    blunders: list[Blunder]
    kept, blunders = [], []
    for layer in rules.positions:
        for codes in basics._chunks(layer.codes[~layer.terminal]):
            cells = moves[codes].astype(np.int64)
            keeps = solution.keeps_value_of(codes, layer.mark)
            keep = _support(cells[:, None], keeps)[:, 0] < rules.n_cells  # illegal: a blunder
            kept.append(keep)
            if len(blunders) < MAX_BLUNDERS and not keep.all():
                blunders += _blunders(rules, codes[~keep], cells[~keep], keeps[~keep])
    kept_all = np.concatenate(kept)
    n_blunders = int((~kept_all).sum())
    return MoveRate(float(kept_all.mean()), int(kept_all.size),
                    tuple(blunders[:MAX_BLUNDERS]), n_blunders)


def _blunders(rules: Rules, codes, cells, keeps) -> list[Blunder]:
    boards = rules.cells_of(codes[:MAX_BLUNDERS]).tolist()
    return [Blunder(tuple(board), int(code), int(cell), tuple(np.flatnonzero(keep).tolist()))
            for board, code, cell, keep in zip(boards, codes, cells, keeps, strict=False)]

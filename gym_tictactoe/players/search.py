"""The alpha-beta player: game-tree search for m,n,k-games too big to tabulate (up to 15 x 15).

:class:`AlphaBetaPlayer` searches with negamax alpha-beta and iterative deepening
(:mod:`.negamax`, compiled with numba on first use and cached on disk), a transposition table,
threat detection and the line-counting evaluation of :mod:`.threats`. With no limits it
searches every line to the end of the game and plays perfectly, as the solver does: the best
game value, then the fastest win or the slowest loss, chosen uniformly at random among the
equally good moves. Its scores are on the solver's scale, for the side to move:
``+(cells + 1 - d)`` for a win ``d`` plies away, the negative for a loss, 0 for a draw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_int, check_number
from gym_tictactoe.game import MAX_SIDE
from gym_tictactoe.game.positions import Position
from gym_tictactoe.players.compiled import Search, compiled, lent_table, table_slots
from gym_tictactoe.players.protocol import Player
from gym_tictactoe.players.threats import geometry

# A generous ceiling: a million positions take a few seconds and a transposition table of 48 MB
# on 15x15 gomoku (docs/limits.md has the measured figures).
MAX_NODES = 1_000_000
# Chosen so that a default reply on 15x15 gomoku stays within 50 ms (median; see
# benchmarks/search_speed.py); the Python search had 2000 for the same time.
DEFAULT_MAX_NODES = 25_000
MAX_TIME_LIMIT = 60.0  # seconds per move; the node ceiling above stops the search first anyway
_DEFAULT = object()  # max_nodes not given: the default, or the ceiling when a time limit is set
DEFAULT_RADIUS = 1
DEFAULT_WIDTH = 12
FULL_WIDTH_CELLS = 64  # on boards up to 8 x 8 every empty cell is a candidate, whatever radius


@dataclass(frozen=True)
class SearchResult:
    """What one search found at the root.

    Attributes:
        moves: the equally best moves, increasing; the player picks one uniformly at random.
        score: for the side to move. When ``proven``, a game result on the solver's scale
            (``+(cells + 1 - plies)`` win, negative loss, 0 draw); otherwise the evaluation.
        proven: the score is a forced result of the tree searched. Always true without limits;
            with limits the candidate cells and the beam width leave moves out, so it is a
            strong indication, not a proof.
        depth: the deepest iteration completed (plies, not counting forced replies).
        nodes: positions searched.
    """

    moves: tuple[int, ...]
    score: int
    proven: bool
    depth: int
    nodes: int


class AlphaBetaPlayer(Player):
    """Alpha-beta search for any m,n,k-game; a player like the others
    (:mod:`gym_tictactoe.players.protocol`), whose ``act(board, mark, rng)`` checks the board it
    is given.

    Negamax alpha-beta with iterative deepening, a transposition table, threat detection (it wins
    when it can, blocks the opponent's winning cell and searches on through such forced replies
    without spending depth; making a four is searched one reply deeper than the frontier), move
    ordering (the table's move, then fours made, then by how much the move raises the
    line-counting evaluation, then nearest the centre) and seeded random tie-breaks among the
    equally best root moves.

    Limits: ``depth`` (plies per iteration, forced replies not counted), ``max_nodes``
    (positions searched per move) and ``time_limit`` (seconds per move): the first iteration
    always finishes, a later one that runs out is dropped, and one predicted to run out, from the
    cost of the one before, is not started. Node budgets are the default because they are
    deterministic: the same board, mark and ``rng`` state give the same move on any machine. A
    time limit makes the move depend on the machine's speed and load (a slow or busy machine
    searches less deeply), so seeded games are no longer reproducible with it. The clock is read
    every 64 positions, so a move overruns the limit by about a millisecond at most (or by the
    first iteration, which on 15 x 15 takes a few milliseconds).

    With limits the search is pruned forward to stay fast on big boards: on boards of more than
    64 cells the candidate moves are the empty cells within ``radius`` cells (king moves) of a
    stone, or every empty cell when none is that near; at most ``width`` of them are searched at
    each position, the best by the ordering; and the first move of a game is a centre-most cell.

    With ``depth=None, max_nodes=None`` (and no time limit) nothing is pruned forward and every
    line is searched to the end of the game: perfect play, as ``minimax`` (fastest win, slowest
    loss, uniformly random among the best moves, even the same choice from the same ``rng``
    state). That is allowed only on the boards the solver solves (at most 16 cells: tic-tac-toe
    in milliseconds, 4 x 4 in seconds); bigger boards need a limit. Any other search stops at
    the ceiling of 1,000,000 positions, also with ``max_nodes=None`` (and a depth or a time
    limit).

    Arguments:
        rows, cols: the board, 1 to 15 each. win_length: k in a row, 1 to max(rows, cols).
        depth: None or a positive number of plies.
        max_nodes: 1 to 1,000,000 positions per move (a few seconds and 48 MB at the ceiling
            on 15 x 15), or None (see above). The default, 25,000, answers a 15 x 15 gomoku
            position within 50 ms (median), usually after a 7-ply iteration; with a
            ``time_limit`` and no ``max_nodes`` the budget is the ceiling.
        time_limit: None (default) or seconds per move, above 0 and up to 60.
        radius: 1 to 14, see above (used only with limits, on boards of more than 64 cells).
        width: None or a positive number of moves per position, see above (only with limits).
    """

    name = "alphabeta"

    def __init__(self, rows: int = 3, cols: int = 3, win_length: int = 3, *,
                 depth: int | None = None, max_nodes: int | None = _DEFAULT,  # type: ignore
                 time_limit: float | None = None, radius: int = DEFAULT_RADIUS,
                 width: int | None = DEFAULT_WIDTH) -> None:
        self.rows = check_int(rows, "rows", 1, MAX_SIDE)
        self.cols = check_int(cols, "cols", 1, MAX_SIDE)
        longest = max(self.rows, self.cols)
        self.win_length = check_int(win_length, "win_length", 1, longest,
                                    note=f" (the longer side of a {rows}x{cols} board)")
        self.depth = check_int(depth, "depth", 1, self.rows * self.cols, none=True)
        self.time_limit = check_number(time_limit, "time_limit", 0, MAX_TIME_LIMIT,
                                       low_open=True, none=True, note=" (seconds a move)")
        if max_nodes is _DEFAULT:
            max_nodes = DEFAULT_MAX_NODES if self.time_limit is None else MAX_NODES
        self.max_nodes = check_int(max_nodes, "max_nodes", 1, MAX_NODES, none=True)
        self.radius = check_int(radius, "radius", 1, MAX_SIDE - 1)
        self.width = check_int(width, "width", 1, MAX_SIDE**2, none=True)
        # The board it plays on (the env refuses a player built for another board).
        self._set_board(rows, cols, win_length)
        self._geo = geometry(self.rows, self.cols, self.win_length)
        # Up to 8 x 8 every empty cell is a candidate: no cell needs counting what is near it.
        small = self._geo.cells <= FULL_WIDTH_CELLS
        self._near = self._geo.near(0 if small else self.radius)
        if self.exhaustive and self._geo.cells > game.SOLVED_CELLS:
            raise ValueError(
                f"depth=None with max_nodes=None searches to the end of the game, which is "
                f"feasible on boards of at most {game.SOLVED_CELLS} cells; the {self.rows}x"
                f"{self.cols} board has {self._geo.cells}: give max_nodes (1 to {MAX_NODES:,}), "
                f"depth or time_limit")

    @property
    def exhaustive(self) -> bool:
        """No limits: the search goes to the end of the game and plays perfectly."""
        return self.depth is None and self.max_nodes is None and self.time_limit is None

    @property
    def cost(self) -> str | None:
        """What one move costs where a search at every position is too much (``Costly``): a
        search with limits; None for the exhaustive search, which plays as ``minimax``."""
        if self.exhaustive:
            return None
        budget = "" if self.max_nodes is None else f" of up to {self.max_nodes:,} positions"
        return f"alpha-beta search{budget} a move"

    def move(self, position: Position, rng: np.random.Generator) -> int:
        return _drawn(self.search(position.cells, position.mark).moves, rng)

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        return _drawn(self.search(board, mark).moves, rng)

    def search(self, board: npt.NDArray[np.int8], mark: int) -> SearchResult:
        """Search ``board`` (absolute, row-major) for ``mark``, the side to move."""
        cells = self._checked(board, mark)
        blocks = self._geo.four_cells(cells, game.SWAP[mark])
        return self._immediate(cells, mark, blocks) or self._searched(cells, mark, blocks)

    def _immediate(self, cells: npt.NDArray[np.int8], mark: int,
                   blocks: set[int]) -> SearchResult | None:
        """The answer when no search is needed: a win now, two threats to block, the first move."""
        horizon, geo = self._geo.cells + 1, self._geo
        wins = geo.four_cells(cells, mark)
        if wins:
            return SearchResult(tuple(sorted(wins)), horizon - 1, True, 1, 0)
        if len(blocks) > 1:  # every move loses in two; with limits it still blocks one
            moves = np.flatnonzero(cells == game.EMPTY).tolist() if self.exhaustive \
                else sorted(blocks)
            return SearchResult(tuple(moves), 2 - horizon, True, 1, 0)
        if not cells.any() and not self.exhaustive:
            return SearchResult(tuple(self._geo.centre_cells()), 0, False, 0, 0)
        return None

    def _searched(self, cells: npt.NDArray[np.int8], mark: int,
                  blocks: set[int]) -> SearchResult:
        # Only the exhaustive search of a solvable board runs without a node ceiling.
        budget = self.max_nodes if self.max_nodes is not None or self.exhaustive else MAX_NODES
        core = compiled()
        slots = table_slots(None if self.exhaustive else budget, self._geo.cells)
        with lent_table(core, slots) as table:
            search = Search(core, self._geo, cells, self._near, budget=budget, table=table,
                            exhaustive=self.exhaustive, width=self.width,
                            time_limit=self.time_limit)
            moves = sorted(blocks) or search.ordered()
            classes = {move: move for move in moves}
            if self.exhaustive:  # one move of each class of equivalent moves is enough
                classes = self._geo.move_classes(cells, moves)
                moves = [move for move in moves if classes[move] == move]
            empties = int((cells == game.EMPTY).sum())
            deepest = 1 if len(moves) == 1 and not self.exhaustive else empties
            best, ties, depth = search.deepen(moves, min(self.depth or deepest, deepest))
        proven = self.exhaustive or abs(best) > core.PROVEN
        if abs(best) > core.PROVEN:  # WIN - plies becomes horizon - plies
            best += (self._geo.cells + 1 - core.WIN) * (1 if best > 0 else -1)
        ties = sorted(move for move, kind in classes.items() if kind in ties)
        return SearchResult(tuple(ties), best, proven, depth, search.nodes)

    def _checked(self, board: npt.NDArray[np.int8], mark: int) -> npt.NDArray[np.int8]:
        """The board as int8 cells, after checking it is a game in progress with ``mark`` to
        move; otherwise a ValueError saying what is wrong."""
        n, geo = self._geo.cells, self._geo
        try:
            cells = np.asarray(board)
        except (ValueError, TypeError):
            cells = np.empty(0, dtype=object)
        if cells.dtype.kind not in "iu" or cells.shape != (n,):
            raise ValueError(f"board must be a 1-D integer array of the {n} cells of the "
                             f"{self.rows}x{self.cols} board, row by row (0 empty, 1 X, 2 O); "
                             f"got {type(board).__name__} of shape {cells.shape}, {cells.dtype}")
        if cells.min() < game.EMPTY or cells.max() > game.O:
            raise ValueError(f"board cells must be 0 (empty), 1 (X) or 2 (O); got {cells.tolist()}")
        if (isinstance(mark, bool | np.bool_) or not isinstance(mark, int | np.integer)
                or mark not in (game.X, game.O)):
            raise ValueError(f"mark must be 1 (X) or 2 (O); got {mark!r}")
        xs, os = int((cells == game.X).sum()), int((cells == game.O).sum())
        if xs - os not in (0, 1):
            raise ValueError(f"impossible board: {xs} X and {os} O; X moves first, so X has as "
                             "many marks as O or one more")
        turn = game.X if xs == os else game.O
        if mark != turn:
            raise ValueError(f"it is {game.MARK_NAMES[turn]}'s turn on this board, not "
                             f"{game.MARK_NAMES[int(mark)]}'s")
        on_line = cells[geo.line_cells]
        for side in (game.X, game.O):
            if (on_line == side).all(axis=1).any():
                raise ValueError(f"the game is over: {game.MARK_NAMES[side]} has "
                                 f"{geo.k} in a row; there is no move to make")
        if xs + os == n:
            raise ValueError("the game is over: the board is full; there is no move to make")
        return cells.astype(np.int8)

    def __repr__(self) -> str:
        timed = "" if self.time_limit is None else f", time_limit={self.time_limit}"
        return (f"AlphaBetaPlayer({self.rows}, {self.cols}, {self.win_length}, depth={self.depth}, "
                f"max_nodes={self.max_nodes}{timed}, radius={self.radius}, width={self.width})")


def _drawn(moves: tuple[int, ...], rng: np.random.Generator) -> int:
    """One of the equally best ``moves``, uniformly, as the table players draw."""
    if len(moves) == 1:
        return moves[0]
    return moves[int(rng.random() * len(moves))]

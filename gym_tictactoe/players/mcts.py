"""Monte Carlo tree search: UCT with random playouts and MCTS-Solver, the ``mcts`` player.

The search is OpenSpiel's ``MCTSBot`` design (``open_spiel/python/algorithms/mcts.py``) with
random-rollout evaluation, compiled on the package's bitboards (:mod:`.mcts_tree` and
:mod:`.mcts_core`, numba, compiled on the first search and cached on disk; this module is their
Python edge). A tree grows one simulation at a time: a simulation descends by UCT (untried moves
first, then ``mean + c * sqrt(ln N / n)``) to a leaf, evaluates it with one uniformly random game
to the end, and backs the result up the path. A node is expanded on its second visit.

MCTS-Solver (Winands et al. 2008): game results found in the tree are proven and propagate. A
node where the side to move can complete a line is a proven win; one where the other side has
two such cells is a proven loss; a move into a proven loss is never selected again; a node with
a proven-winning move, or whose moves are all proven, is proven in turn, and a proven node is
never evaluated again. When the opponent threatens to complete a line, blocking it is the only
move searched. Proven results keep their distance (the solver's scale: ``+(cells + 1 - d)`` for
a win ``d`` plies away), so the player takes the fastest of the wins it proved and, when every
move is proven lost, the slowest of those losses (a distance is that of the line proven, not
always the shortest there is). The search stops early once the root is proven. On boards of
more than 64 cells the tree holds only moves within ``radius`` of a stone (the alpha-beta
player's rule); playouts use every empty cell.

The move: a proven win first, then the most visited move not proven to lose (ties: the better
mean result, then a seeded random order), then the slowest proven loss. Moves are shuffled when
a node is expanded, so untried moves are tried in a random order and ties are broken at random.

Random numbers: each search draws one 64-bit seed from the game's ``rng`` (or, with ``seed``,
from a generator of the seed and the position) and the compiled search runs its own stream from
it (splitmix64). The same seed gives the same moves on any machine; they are not the moves of
the interpreted search this one replaced (its shuffles and playouts drew from NumPy directly).

The AlphaZero agent has its own PUCT search with a network (``agents/alphazero/search.py``),
batched over many trees; this one is UCT with rollouts only.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from types import ModuleType

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_flag, check_int, check_number
from gym_tictactoe.game.positions import Position
from gym_tictactoe.game.proofs import call_compiled, import_compiled
from gym_tictactoe.players import Player
from gym_tictactoe.seeding import check_seed

MAX_SIMULATIONS = 1_000_000
# A tree keeps 32 bytes for each move of every node it expands (at most one node a simulation)
# and about 60 + 40 * words for each node: simulations x cells within this bound keeps a tree
# under 300 MB even if every node had every cell as a move (docs/limits.md has measured sizes).
MAX_TREE_SLOTS = 2**23
DEFAULT_SIMULATIONS = 1000
DEFAULT_EXPLORATION = 2.0  # OpenSpiel's MCTSBot examples use uct_c = 2 with results in [-1, 1]
MAX_EXPLORATION = 1000.0
FULL_WIDTH_CELLS = 64  # as the alpha-beta player: up to 8 x 8 every empty cell is a candidate
CHUNK = 10_000  # simulations per compiled call: Ctrl-C and growing the arrays happen between
FIRST_NODES = 1 << 12  # a tree's first arrays; they double when a search needs more
# A thread keeps its last tree's arrays for its next search of the board when they hold at most
# this many moves (about 12 MB): new arrays would cost a page fault every few simulations.
KEPT_EDGES = 1 << 18
_kept = threading.local()


@cache  # importlib's look-up costs more than a small search's arrays
def compiled() -> ModuleType:
    """The compiled tree module, imported (and numba with it) on first use."""
    return import_compiled("gym_tictactoe.players.mcts_tree")


@dataclass(frozen=True)
class MCTSResult:
    """What a search found: the move, the simulations it ran, and the root's proven result for
    the side to move (None when not proven; > 0 a win, < 0 a loss, 0 a draw)."""

    move: int
    simulations: int
    proven: int | None


@cache
def board_tables(rules: game.Rules, radius: int) -> tuple:
    """The compiled search's ``board`` tuple (see :mod:`.mcts_core`) for ``rules``."""
    wide = import_compiled("gym_tictactoe.game.wide")
    masks, starts, through = wide.tables(rules)
    words, rows, cols = masks.shape[1], rules.rows, rules.cols
    centre = [r * cols + c for r in {(rows - 1) // 2, rows // 2}
              for c in {(cols - 1) // 2, cols // 2}]
    near = np.zeros((rules.n_cells, words), np.uint64)
    for cell in range(rules.n_cells):
        r, c = divmod(cell, cols)
        near[cell] = wide.bits_of([i * cols + j
                                   for i in range(max(0, r - radius), min(rows, r + radius + 1))
                                   for j in range(max(0, c - radius), min(cols, c + radius + 1))],
                                  words)
    star = [wide.bits_of(ray[ray < rules.n_cells], words) for ray in rules.rays]
    return (masks, starts, through, near, wide.bits_of(range(rules.n_cells), words),
            wide.bits_of(centre, words), wide.lanes(rules),
            np.array(star, np.uint64).reshape(rules.n_cells, words))


class Tree:
    """One search from one position (absolute ``cells``, ``mark`` to move, unfinished), its
    random stream seeded from ``rng`` (a generator, or a seed sequence of its own).
    :meth:`search` runs it; :meth:`root_moves` reads the root. ``simulations``: the expected
    budget, which sizes the first arrays. ``arrays``: a finished tree's :attr:`arrays` to
    reuse (the search writes every entry before reading it: no zeroing, no fresh pages)."""

    def __init__(self, rules: game.Rules, cells: npt.NDArray[np.int8], mark: int,
                 rng: np.random.Generator | np.random.SeedSequence,
                 exploration: float = DEFAULT_EXPLORATION,
                 solve: bool = True, radius: int = 1,
                 simulations: int = DEFAULT_SIMULATIONS, arrays: tuple | None = None) -> None:
        self.core, self.board = compiled(), board_tables(rules, radius)
        self.exploration, self.n_cells = float(exploration), rules.n_cells
        words = self.board[0].shape[1]
        # Room for ``simulations`` (one node each), up to a first size that doubles on demand.
        room = min(simulations + 1, FIRST_NODES)
        self.cells, self.mark = np.asarray(cells, np.int8), int(mark)
        self.counters = np.array([0, 0, 0, solve, self.n_cells > FULL_WIDTH_CELLS,
                                  self.n_cells + 1], np.int64)
        self.seed = np.array([rng.integers(0, 2**64, dtype=np.uint64)], np.uint64) \
            if isinstance(rng, np.random.Generator) else rng.generate_state(1, np.uint64)
        if arrays is None:
            edges = min(room * self.n_cells, 8 * room) + self.n_cells
            arrays = (np.zeros((room, 5, words), np.uint64),
                      np.zeros((room, self.core.NODE_INTS), np.int64),
                      np.zeros((edges, 3), np.int64), np.zeros((3, edges)),
                      (np.zeros((2, self.n_cells + 2), np.int64),
                       np.zeros(self.n_cells, np.int64), np.zeros(self.n_cells, np.int64),
                       np.zeros((2, self.board[6][-1, 1]), np.uint64)))
        self.states, self.nodes, self.edges, self.stats, self.scratch = arrays

    @property
    def arrays(self) -> tuple:
        """The tree's arrays, for another search of the same board to reuse."""
        return self.states, self.nodes, self.edges, self.stats, self.scratch

    @property
    def simulations(self) -> int:
        return int(self.counters[self.core.SIMULATIONS])

    @property
    def proven(self) -> int | None:
        value = int(self.nodes[0, self.core.PROVEN])
        return None if self.counters[self.core.NODES] == 0 or value == self.core.UNPROVEN \
            else value

    def search(self, max_simulations: int) -> MCTSResult:
        """Simulate until ``max_simulations`` or until the root is proven; the move to play.
        None are run when the move is decided or forced (a win at once, one cell to block)."""
        core = self.core
        while True:
            tree = (self.states, self.nodes, self.edges, self.stats, self.counters, self.seed)
            budget = min(max_simulations, self.simulations + CHUNK)
            status, move = call_compiled(core.search, budget, max_simulations, self.exploration,
                                         tree, self.board, self.scratch, self.cells, self.mark)
            if status == core.DONE:
                return MCTSResult(int(move), self.simulations, self.proven)
            if status == core.ROOM:
                self._grow()

    def root_moves(self) -> tuple[list[int], list[int]]:
        """The root's moves not proven lost and those proven lost (empty before expansion)."""
        core, root = self.core, self.nodes[0]
        first, live, count = int(root[core.FIRST]), int(root[core.LIVE]), int(root[core.COUNT])
        moves = self.edges[first:first + count, core.MOVE].tolist() if first >= 0 else []
        return moves[:live], moves[live:]

    def _grow(self) -> None:
        """Twice the room for nodes or for moves, whichever the next simulation may lack."""
        if self.counters[self.core.NODES] >= len(self.states):
            self.states, self.nodes = _doubled(self.states), _doubled(self.nodes)
        if self.counters[self.core.EDGES] + self.n_cells > len(self.edges):
            self.edges, self.stats = _doubled(self.edges), _doubled(self.stats.T).T.copy()


def _doubled(array: npt.NDArray) -> npt.NDArray:
    grown = np.zeros((2 * len(array), *array.shape[1:]), array.dtype)
    grown[:len(array)] = array
    return grown


class MCTSPlayer(Player):
    """The ``mcts`` player: UCT with random playouts and MCTS-Solver, on any board.

    Arguments:
        max_simulations: simulations a move, 1 to 1,000,000 and at most 2**23 / cells (37,282 on
            15 x 15), which bounds the tree's memory. Fewer are run when the root is proven
            first, none when a move is forced (a win at once, one cell to block).
        exploration: the UCT constant c >= 0 (0: greedy on the mean result).
        solve: proven results propagate (MCTS-Solver); False is plain UCT.
        seed: None (default): the search draws from the game's ``rng``. An integer 0 <= seed <
            2**32: every search is seeded from the seed and the position alone, so the player
            is a deterministic policy (the same move whenever it meets a position), one that
            exact evaluation can score by walking the game tree.
        radius: on boards of more than 64 cells only empty cells within this many king moves
            of a stone are searched (the alpha-beta player's rule); 1 to 14.
        rows, cols, win_length: the board (3x3 by default).
    """

    name = "mcts"

    def __init__(self, max_simulations: int = DEFAULT_SIMULATIONS,
                 exploration: float = DEFAULT_EXPLORATION, *, solve: bool = True,
                 seed: int | None = None, radius: int = 1, rows: int = 3, cols: int = 3,
                 win_length: int = 3) -> None:
        self.rules = game.rules(rows, cols, win_length)
        most = min(MAX_SIMULATIONS, MAX_TREE_SLOTS // self.rules.n_cells)
        note = "" if most == MAX_SIMULATIONS else \
            f" on the {self.rules.name} board (2**23 / its {self.rules.n_cells} cells, " \
            "to bound the tree's memory)"
        self.max_simulations = check_int(max_simulations, "max_simulations", 1, most, note=note)
        self.exploration = check_number(exploration, "exploration", 0, MAX_EXPLORATION)
        self.solve = check_flag(solve, "solve")
        self.seed = check_seed(seed)
        self.radius = check_int(radius, "radius", 1, game.MAX_SIDE - 1)
        self.last: MCTSResult | None = None  # the last search (the benchmark reads it)

    @property
    def cost(self) -> str:
        """What one move costs (``protocol.Costly``: too much to ask at every position of a big
        board)."""
        return f"search of {self.max_simulations} simulations a move"

    def move(self, position: Position, rng: np.random.Generator) -> int:
        """The move at ``position`` (unfinished, this player to move): the player protocol."""
        mark = position.mark
        if mark not in (game.X, game.O):
            raise ValueError(f"mark must be 1 (X) or 2 (O); got {mark!r}")
        if position.terminal:
            raise ValueError("the game is over on this board: there is no move to search")
        return self.search(position.cells, mark, rng).move

    def search(self, cells: npt.NDArray[np.int8], mark: int,
               rng: np.random.Generator) -> MCTSResult:
        """Search the unfinished position ``cells`` (absolute), ``mark`` to move, with ``rng``,
        or with a seed of the player's seed and the position when the player has one."""
        source: np.random.Generator | np.random.SeedSequence = rng
        if self.seed is not None:
            source = np.random.SeedSequence([self.seed, _bits(cells == mark),
                                             _bits((cells != mark) & (cells != game.EMPTY))])
        kept = _kept.__dict__.setdefault("arrays", {})  # per thread: no lock, nothing shared
        tree = Tree(self.rules, cells, mark, source, self.exploration, self.solve, self.radius,
                    self.max_simulations, kept.pop((self.rules, self.radius), None))
        self.last = tree.search(self.max_simulations)
        if len(tree.edges) <= KEPT_EDGES:
            kept[self.rules, self.radius] = tree.arrays
        return self.last

    def __repr__(self) -> str:
        return (f"MCTSPlayer(max_simulations={self.max_simulations}, exploration="
                f"{self.exploration}, solve={self.solve}, seed={self.seed}{self._board_args()})")


def _bits(where: npt.NDArray[np.bool_]) -> int:
    """The cells where ``where`` holds as one integer (bit ``c`` is cell ``c``)."""
    return int.from_bytes(np.packbits(where, bitorder="little").tobytes(), "little")

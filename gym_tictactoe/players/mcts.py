"""Monte Carlo tree search: UCT with random playouts and MCTS-Solver, the ``mcts`` player.

The search is OpenSpiel's ``MCTSBot`` design (``open_spiel/python/algorithms/mcts.py``), written
for this package's boards: a tree of :class:`Node` s grown one simulation at a time, an
:class:`Evaluator` that scores a new leaf (``evaluate``) and gives move priors when a node is
expanded (``prior``), and a selection rule, UCT by default or PUCT (priors from a network, for an
AlphaZero-style player that reuses this search with its own evaluator). A simulation descends by
the selection rule to a leaf, evaluates it (:class:`RolloutEvaluator`: one uniformly random
game to the end), and backs the result up the path. A node is expanded on its second visit.

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
mean result, then a seeded random order), then the slowest proven loss. Moves are shuffled (from
the search's random stream) when a node is expanded, so untried moves are tried in a random
order and ties are broken at random.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.checks import check_choice, check_flag, check_int, check_number
from gym_tictactoe.game.positions import Position
from gym_tictactoe.players import Player
from gym_tictactoe.players.mcts_board import SearchBoard, State, Stream
from gym_tictactoe.seeding import check_seed

MAX_SIMULATIONS = 1_000_000
# A tree keeps four lists over the moves of every node it expands (at most one a simulation),
# some 100 bytes a move: simulations x cells stays within this bound, under 1 GB even if every
# node had every cell as a move. Measured far below it: 24 MB for 37,282 simulations on 15 x 15
# (candidates near the stones only), 43 MB for 932,067 on 3 x 3 (proven nodes grow no further).
MAX_TREE_SLOTS = 2**23
DEFAULT_SIMULATIONS = 1000
DEFAULT_EXPLORATION = 2.0  # OpenSpiel's MCTSBot examples use uct_c = 2 with results in [-1, 1]
MAX_EXPLORATION = 1000.0


_INVERSE_ROOTS = [math.inf]  # 1 / sqrt(n) by n, for the UCT bonus; grown to the largest budget


def _grow_inverse_roots(most: int) -> None:
    for n in range(len(_INVERSE_ROOTS), most + 2):
        _INVERSE_ROOTS.append(1 / math.sqrt(n))


class Node:
    """A position in the tree. Its moves' statistics sit in lists on the node (the selection
    loop reads them without touching the children); ``totals`` are for the side to move here.
    ``proven`` is None or the exact result for the side to move, on the solver's scale."""

    __slots__ = ("children", "draws", "lost", "moves", "n", "priors", "proven", "state",
                 "totals", "tried", "visits")

    def __init__(self, state: State, proven: int | None) -> None:
        self.state, self.proven = state, proven
        self.n = 0
        self.moves: list[int] | None = None  # until expanded
        self.lost: dict[int, int] = {}  # moves proven to lose, with their proven value


class Evaluator(Protocol):
    """Scores the leaves of a search (OpenSpiel's ``Evaluator``)."""

    def evaluate(self, board: SearchBoard, state: State, stream: Stream) -> float:
        """The expected result in [-1, 1] for the side to move at ``state``, a position still
        being played (``board.view(state)`` is its board from that side)."""
        ...

    def prior(self, board: SearchBoard, state: State, moves: list[int]) -> list[float] | None:
        """A probability for each of ``moves``, or None for uniform (UCT reads no priors)."""
        ...


class RolloutEvaluator:
    """The mean result of ``rollouts`` uniformly random games from the leaf (seed 002's
    playouts); uniform priors."""

    def __init__(self, rollouts: int = 1) -> None:
        self.rollouts = check_int(rollouts, "rollouts", 1, 1000)

    def evaluate(self, board: SearchBoard, state: State, stream: Stream) -> float:
        if self.rollouts == 1:
            return board.playout(state, stream)
        return sum(board.playout(state, stream) for _ in range(self.rollouts)) / self.rollouts

    def prior(self, board: SearchBoard, state: State, moves: list[int]) -> list[float] | None:
        return None


@dataclass(frozen=True)
class SearchResult:
    """What a search found: the move, the simulations it ran, and the root's proven result for
    the side to move (None when not proven; > 0 a win, < 0 a loss, 0 a draw)."""

    move: int
    simulations: int
    proven: int | None


class Tree:
    """One search from one root. :meth:`simulate` runs one simulation; a player calls
    :meth:`search`. ``selection``: ``"uct"`` (untried moves first, then ``mean + c *
    sqrt(ln N / n)``) or ``"puct"`` (``mean + c * prior * sqrt(N) / (1 + n)``). ``solve``:
    proven results propagate (MCTS-Solver); without it a node proven where it stands (a win at
    once, a full board, two cells to block) still scores exactly, but nothing is proven above
    it, as in plain UCT."""

    def __init__(self, board: SearchBoard, root: State, evaluator: Evaluator,
                 stream: Stream, exploration: float = DEFAULT_EXPLORATION,
                 selection: str = "uct", solve: bool = True) -> None:
        self.board, self.evaluator, self.stream = board, evaluator, stream
        self.exploration, self.solve = exploration, solve
        self.puct = check_choice(selection, "selection", ["uct", "puct"]) == "puct"
        self.win = board.n_cells + 1  # a win d plies away scores win - d
        self.root = self._node(root)
        self.simulations = 0

    def search(self, max_simulations: int) -> SearchResult:
        """Simulate until ``max_simulations`` or until the root is proven; the move to play."""
        root = self.root
        _grow_inverse_roots(max_simulations)
        if root.proven is None and root.moves is None:
            self._expand(root)
        if root.proven is None and len(root.moves) == 1 and not root.lost:
            return SearchResult(root.moves[0], 0, None)  # a forced block: nothing to search
        while self.simulations < max_simulations and root.proven is None:
            self.simulate()
        return SearchResult(self.best_move(), self.simulations, root.proven)

    def simulate(self) -> None:
        """One simulation: :meth:`descend`, evaluate the leaf unless it is proven, :meth:`backup`.
        A batched player (a network evaluating the leaves of many trees at once) calls those two
        itself, one pending leaf per tree."""
        path, leaf = self.descend()
        value = None
        if leaf.proven is None:
            value = self.evaluator.evaluate(self.board, leaf.state, self.stream)
        self.backup(path, leaf, value)

    def descend(self) -> tuple[list[tuple[Node, int]], Node]:
        """Follow the selection rule from the root to a leaf: a node visited for the first time
        (created here), or a proven one. The path is (node, index of the move taken) pairs."""
        node, path, board = self.root, [], self.board
        while node.proven is None and (node.n or node is self.root):
            if node.moves is None:
                self._expand(node)
            i = self._select(node)
            path.append((node, i))
            child = node.children[i]
            if child is None:
                node.children[i] = self._node(board.child(node.state, node.moves[i]))
                return path, node.children[i]
            node = child
        return path, node

    def backup(self, path: list[tuple[Node, int]], leaf: Node, value: float | None) -> None:
        """Add the leaf's result, ``value`` for its side to move (None: its proven result) to
        every node of the path, each from its own side; a result proven at the leaf's first
        visit proves what it decides above it (MCTS-Solver)."""
        self.simulations += 1
        proven = leaf.proven is not None and leaf.n == 0 and self.solve
        if value is None:
            value = (leaf.proven > 0) - (leaf.proven < 0)
        leaf.n += 1
        for node, i in reversed(path):
            value = -value
            node.n += 1
            node.visits[i] += 1
            node.totals[i] += value
            if proven:
                proven = self._prove(node, i)

    def best_move(self) -> int:
        """The move to play from the root (see the module's docstring)."""
        root = self.root
        if root.moves is None or (not root.moves and not root.lost):
            return self._decided_move()
        keys = {move: (2, value) for move, value in self._proven_wins()}
        for i, move in enumerate(root.moves):
            keys.setdefault(move, (1, root.visits[i], root.totals[i] / max(root.visits[i], 1)))
        for move, value in root.lost.items():
            keys[move] = (0, value)
        return max(keys, key=keys.__getitem__)  # the first best in the shuffled order

    # --- internals ----------------------------------------------------------------------------

    def _node(self, state: State) -> Node:
        _, _, my_wins, their_wins, _ = state
        if my_wins:
            return Node(state, self.win - 1)
        if self.board.full_board(state):
            return Node(state, 0)
        if their_wins & (their_wins - 1):  # two cells to block: one of them will be lost
            return Node(state, 2 - self.win)
        return Node(state, None)

    def _expand(self, node: Node) -> None:
        their_wins = node.state[3]
        moves = self.board.cells(their_wins) if their_wins else self.board.moves(node.state)
        draws = self.stream.take(len(moves))
        for i in range(len(moves) - 1, 0, -1):  # Fisher-Yates: untried moves in random order
            j = int(draws[i] * (i + 1))
            moves[i], moves[j] = moves[j], moves[i]
        node.moves, node.children = moves, [None] * len(moves)
        node.visits, node.totals = [0] * len(moves), [0.0] * len(moves)
        node.tried = node.draws = 0
        node.priors = self.evaluator.prior(self.board, node.state, moves) if self.puct else None
        if self.puct and node.priors is None:
            node.priors = [1.0 / len(moves)] * len(moves)

    def _select(self, node: Node) -> int:
        if self.puct:
            return self._select_puct(node)
        if node.tried < len(node.moves):
            node.tried += 1
            return node.tried - 1
        scale, root = self.exploration * math.sqrt(math.log(node.n)), _INVERSE_ROOTS
        # One comprehension and one max: the loop every simulation runs at every level.
        values = [total / visits + scale * root[visits]
                  for total, visits in zip(node.totals, node.visits, strict=True)]
        return values.index(max(values))  # the first best: the shuffled order breaks ties

    def _select_puct(self, node: Node) -> int:
        scale, best, choice = self.exploration * math.sqrt(node.n), -math.inf, 0
        for i, (total, visits, prior) in enumerate(
                zip(node.totals, node.visits, node.priors, strict=True)):
            value = (total / visits if visits else 0.0) + scale * prior / (1 + visits)
            if value > best:
                best, choice = value, i
        return choice

    def _prove(self, node: Node, i: int) -> bool:
        """The move ``i`` of ``node`` was just proven: whether ``node`` is proven now."""
        child_value = node.children[i].proven
        # One ply further, from the other side: a win in d is a loss in d + 1, and vice versa.
        value = (child_value > 0) - (child_value < 0) - child_value
        if value > 0:
            node.proven = value
        elif value < 0:  # never select it again
            node.lost[node.moves[i]] = value
            for stats in (node.moves, node.children, node.visits, node.totals):
                del stats[i]
            if node.priors is not None:
                del node.priors[i]
            node.tried -= i < node.tried
            if not node.moves:
                node.proven = max(node.lost.values())
        else:
            node.draws += 1
            if node.draws == len(node.moves):
                node.proven = 0
        return node.proven is not None

    def _proven_wins(self) -> list[tuple[int, int]]:
        root = self.root
        return [(move, -1 - child.proven)
                for move, child in zip(root.moves, root.children, strict=True)
                if child is not None and child.proven is not None and child.proven < 0]

    def _decided_move(self) -> int:
        """The move at a root proven before any search: a winning cell, or a cell to block."""
        _, _, my_wins, their_wins, _ = self.root.state
        cells = self.board.cells(my_wins or their_wins)
        return cells[int(self.stream.take(1)[0] * len(cells))]


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
        self.board = SearchBoard(self.rules, self.radius)
        self.evaluator = RolloutEvaluator()
        self.last: SearchResult | None = None  # the last search (the benchmark reads it)

    def move(self, position: Position, rng: np.random.Generator) -> int:
        """The move at ``position`` (unfinished, this player to move): the player protocol."""
        mark = position.mark
        if mark not in (game.X, game.O):
            raise ValueError(f"mark must be 1 (X) or 2 (O); got {mark!r}")
        bits = getattr(position, "bits", None)  # a big board's own bit masks, when it has them
        if bits is not None:
            root = self.board.root_bits(bits[mark], bits[game.SWAP[mark]])
        else:
            root = self.board.root(position.cells, mark)
        return self.search(root, rng).move

    def search(self, state: State, rng: np.random.Generator) -> SearchResult:
        """Search the position ``state`` (see ``SearchBoard.root``) with ``rng``, or with a
        generator of its own when the player has a seed."""
        if self.seed is not None:
            rng = np.random.default_rng([self.seed, state[0], state[1]])
        tree = Tree(self.board, state, self.evaluator, Stream(rng), self.exploration,
                    solve=self.solve)
        self.last = tree.search(self.max_simulations)
        return self.last

    def __repr__(self) -> str:
        return (f"MCTSPlayer(max_simulations={self.max_simulations}, exploration="
                f"{self.exploration}, solve={self.solve}, seed={self.seed}{self._board_args()})")

"""Table players: the built-in players that pick uniformly among the moves they mark as
candidates in each position (the lowest cell when deterministic), and the policy player.

On tabled boards the candidates of every code are a (codes, cells) mask, ``table``; elsewhere
``candidates`` computes them for arrays of boards (or ``_choices`` for one position, where a
player has a cheaper way). The vector env replies from the same masks for thousands of boards in
one look-up (``vector_opponents.TablePlayer`` / ``MaskPlayer``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.checks import check_flag
from gym_tictactoe.game import solver
from gym_tictactoe.game.positions import Position, code_of, from_board
from gym_tictactoe.players import heuristic
from gym_tictactoe.players.protocol import (
    AnswersBatch,
    BatchPlayer,
    LoopPlayer,
    Player,
    Policy,
    pick,
)
from gym_tictactoe.players.proved import ProvedMoves
from gym_tictactoe.players.vector_opponents import (
    MaskPlayer,
    PolicyPlayer,
    RandomCells,
    TablePlayer,
)


class TableOpponent(Player):
    """Plays uniformly at random among the moves it marks as candidates in each position: a
    per-code table on tabled boards, ``candidates`` over arrays of boards elsewhere."""

    name = "table"

    def __init__(self, deterministic: bool = False, *, rows: int = 3, cols: int = 3,
                 win_length: int = 3) -> None:
        self.deterministic = check_flag(deterministic, "deterministic")
        self._set_board(rows, cols, win_length)

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        """(codes, cells) bool mask of candidate moves, for every code of a tabled board."""
        raise NotImplementedError

    def candidates(self, cells: npt.NDArray[np.int8], marks: npt.NDArray[np.int8],
                   codes: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.bool_]:
        """(N, cells) candidate mask on boards ``cells`` for the sides ``marks`` to move;
        ``codes`` are the boards' codes where the caller has them."""
        raise NotImplementedError

    def move(self, position: Position, rng: np.random.Generator) -> int:
        if not self.rules.tabled:
            return pick(self._choices(position), rng, self.deterministic)
        table = self.table
        if table is not getattr(self, "_listed", None):
            # Each code's candidates as a tuple, listed on first use: indexing a tuple is much
            # cheaper than a NumPy row's nonzero(). A new table (a subclass may build one per
            # call) starts a new list.
            self._listed, self._choices_of = table, {}
        code = position.code
        choices = self._choices_of.get(code)
        if choices is None:
            choices = self._choices_of[code] = tuple(table[code].nonzero()[0].tolist())
        if len(choices) == 1 or (self.deterministic and choices):
            return choices[0]  # the common case, without a call to pick
        return pick(choices, rng, self.deterministic)

    def _choices(self, position: Position) -> Sequence[int]:
        """The candidate cells at one position of a board without tables, increasing."""
        marks = np.array([position.mark], np.int8)
        return np.flatnonzero(self.candidates(position.cells[None], marks)[0])

    def _batch(self, num_envs: int, rules: game.Rules,
               agents: npt.NDArray[np.int8]) -> BatchPlayer:
        if rules.tabled:
            return TablePlayer(self.table, self.deterministic, repr(self), rules)
        return MaskPlayer(self, agents)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(deterministic={self.deterministic}{self._board_args()})"


class RandomOpponent(TableOpponent):
    """A uniformly random legal move (seed 000's ``random_player``)."""

    name = "random"

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        return _legal_table(self.rules)

    def candidates(self, cells, marks, codes=None) -> npt.NDArray[np.bool_]:
        return cells == game.EMPTY  # the callers ask about unfinished games only

    def _choices(self, position: Position) -> Sequence[int]:
        return position.moves()

    def _batch(self, num_envs: int, rules: game.Rules,
               agents: npt.NDArray[np.int8]) -> BatchPlayer:
        if not rules.tabled and type(self) is RandomOpponent and not self.deterministic:
            return RandomCells()
        return super()._batch(num_envs, rules, agents)


class MinimaxOpponent(TableOpponent):
    """Perfect play: a random choice among the solver's best moves (fastest win, slowest loss).

    Choosing at random among equally good moves lets an agent meet every perfect line;
    ``deterministic=True`` always plays the lowest-numbered best cell. Boards of at most 16
    cells are solved (tables); boards of 17 to 64 cells are proved (an opening book, then the
    proof solver: every value-keeping move, no distances; see :mod:`.proved` for what it plays
    where a proof runs out of its budget); on bigger boards use ``"alphabeta"``.
    """

    name = "minimax"

    def __init__(self, deterministic: bool = False, *, rows: int = 3, cols: int = 3,
                 win_length: int = 3) -> None:
        super().__init__(deterministic, rows=rows, cols=cols, win_length=win_length)
        if not self.rules.solvable:
            self.solution, self.proved = None, ProvedMoves(self.rules)
            return
        self.solution = solver.solve(self.rules)
        # Signed bytes: indexing a memoryview gives a plain int, far cheaper than NumPy's scalars.
        self._scores = memoryview(self.solution.score).cast("b")

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        if self.solution is None:
            raise ValueError(f"minimax has no table on {self.rules.name}: its moves are proved")
        return self.solution.best

    def move(self, position: Position, rng: np.random.Generator) -> int:
        if self.solution is None:
            return self.proved.move(position, rng, self.deterministic)
        return super().move(position, rng)

    def _batch(self, num_envs: int, rules: game.Rules,
               agents: npt.NDArray[np.int8]) -> BatchPlayer:
        if self.solution is None:  # proofs answer one position at a time
            return LoopPlayer(self, rules, agents)
        return super()._batch(num_envs, rules, agents)

    def candidates(self, cells, marks, codes=None) -> npt.NDArray[np.bool_]:
        if self.solution is None:
            return self._proved_candidates(cells, marks)
        if codes is None:
            codes = np.asarray(cells, dtype=np.int64) @ self.rules.pow3
        # The callers ask about unfinished games only.
        return self.solution.best_at(codes, cells, marks)

    def _proved_candidates(self, cells, marks) -> npt.NDArray[np.bool_]:
        """Per board, the value-keeping moves; alphabeta's move (a fixed seed) where unproved."""
        out = np.zeros(np.shape(cells), dtype=bool)
        for row, (board, mark) in enumerate(zip(cells, marks, strict=True)):
            position = from_board(self.rules, board, int(mark))
            choices = self.proved.choices(code_of(position))
            if choices is None:
                choices = [self.proved.move(position, np.random.default_rng(0), True)]
            out[row, choices] = True
        return out

    def _choices(self, position: Position) -> Sequence[int]:
        """The moves of the best score for the side to move: each child's score read from the
        solution (the position's code plus the move)."""
        scores, code, powers, mark = self._scores, position.code, self.rules.pow3_int, \
            position.mark
        top, best = -256, []
        for cell in position.moves():
            child = scores[code + mark * powers[cell]]
            move = (child > 0) - (child < 0) - child  # sign(child) - child: win fast, lose slow
            if move > top:
                top, best = move, [cell]
            elif move == top:
                best.append(cell)
        return best


class HeuristicOpponent(TableOpponent):
    """Seed 003's rules, the first that applies: win, block, fork, block a fork, centre,
    opposite corner, corner, nearest the centre (see ``gym_tictactoe.players.heuristic``)."""

    name = "heuristic"

    @property
    def table(self) -> npt.NDArray[np.bool_]:
        return heuristic.table(self.rules)

    def candidates(self, cells, marks, codes=None) -> npt.NDArray[np.bool_]:
        return heuristic.candidates(self.rules, cells, marks)


@cache
def _legal_table(rules: game.Rules) -> npt.NDArray[np.bool_]:
    table = rules.tables.legal_mask.astype(bool)
    table.setflags(write=False)
    return table


class PolicyOpponent(Player):
    """Any Policy ``(observation, action_mask) -> action`` (a trained agent) as the opponent.

    The policy sees the board as the env's agent does: 1 its own mark, 2 the other's. A policy
    that answers a batch (``protocol.AnswersBatch``) answers for a whole batch of boards in one
    call.
    """

    name = "policy"

    def __init__(self, policy: Policy, *, rows: int = 3, cols: int = 3,
                 win_length: int = 3) -> None:
        if not callable(policy):
            raise ValueError(f"policy must be callable as policy(obs, mask); got {policy!r}")
        self.policy = policy
        self._set_board(rows, cols, win_length)

    def move(self, position: Position, rng: np.random.Generator) -> int:
        cells = position.cells
        # Returned as it is: the env checks it like the agent's own action and names the culprit.
        return self.policy(position.view(position.mark), (cells == game.EMPTY).astype(np.int8))

    def _batch(self, num_envs: int, rules: game.Rules,
               agents: npt.NDArray[np.int8]) -> BatchPlayer:
        if isinstance(self.policy, AnswersBatch):
            return PolicyPlayer(self, rules, agents)
        return LoopPlayer(self, rules, agents)

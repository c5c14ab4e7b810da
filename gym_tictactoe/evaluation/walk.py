"""The best response to a policy from the empty board of a board of 17 to 64 cells, by a walk
within a budget (see :mod:`.sampled`'s docstring): the policy's one move where it is to move,
every opponent reply elsewhere, and a position where the opponent is proved to win is a loss
for the policy (the opponent then wins by perfect play). Positions are remembered by code, so
the policy is asked once per position (a deterministic policy is assumed)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.checks import check_int, check_number
from gym_tictactoe.evaluation.sampled import PROOF_BUDGET, WALK_NODES, WALK_SECONDS, ask
from gym_tictactoe.game import NO_WINNER, Rules, book
from gym_tictactoe.game.proofs import check_provable

RESULTS = {-1: "loss", 0: "draw", 1: "win"}  # the policy's result


class _OutOfBudget(Exception):
    pass


@dataclass
class _Walk:
    """One seat's walk, by iterative deepening on the opponent's moves: every line of at most
    ``depth`` opponent moves first, so that a policy's early blunder is found before the walk
    sinks into one deep line; the policy's moves and the proofs are kept between rounds."""

    policy: Any
    rules: Rules
    me: int
    nodes: int
    deadline: float
    proof_budget: int
    visited: int = 0
    moves: dict[int, int] = field(default_factory=dict)  # the policy's move by code
    known: dict[int, int] = field(default_factory=dict)  # exact results by code

    def result(self, code: int, depth: int, line: list[int]) -> int | None:
        """The policy's result at ``code`` against the best response (None: cut at ``depth``
        opponent moves); ``line`` ends with the losing line when it is a loss."""
        if code in self.known:
            return self.known[code]
        self.visited += 1
        if self.visited > self.nodes or time.perf_counter() > self.deadline:
            raise _OutOfBudget
        rules = self.rules
        if rules.is_terminal(code):
            winner = rules.winner(code)
            found: int | None = 0 if winner == NO_WINNER else (1 if winner == self.me else -1)
        elif rules.to_move(code) == self.me:
            found = self._policy_node(code, depth, line)
        else:
            found = self._opponent_node(code, depth, line)
        if found is not None:
            self.known[code] = found
        return found

    def _policy_node(self, code: int, depth: int, line: list[int]) -> int | None:
        if code not in self.moves:
            cells = np.array(self.rules.decode(code), dtype=np.int8)
            move = ask(self.policy, self.rules, cells)
            legal = 0 <= move < self.rules.n_cells and cells[move] == game.EMPTY
            self.moves[code] = move if legal else -1 - move  # -1 - move: an illegal move
        move = self.moves[code]
        line.append(move if move >= 0 else -1 - move)
        if move < 0:
            return -1  # an illegal move loses at once
        found = self.result(self.rules.play(code, move), depth, line)
        if found != -1:
            line.pop()
        return found

    def _opponent_node(self, code: int, depth: int, line: list[int]) -> int | None:
        if book.to_move_value(code, self.rules, self.proof_budget) == 1:
            return -1  # the opponent is proved to win from here
        if depth == 0:
            return None
        worst, cut = 1, False
        for cell in self.rules.legal_moves(code):
            line.append(cell)
            found = self.result(self.rules.play(code, cell), depth - 1, line)
            if found == -1:
                return -1
            line.pop()
            cut |= found is None
            worst = min(worst, 1 if found is None else found)
        return None if cut else worst


def best_response(policy: Any, rules: Rules, seat: str, nodes: int = WALK_NODES,
                  seconds: float = WALK_SECONDS,
                  proof_budget: int = PROOF_BUDGET) -> dict[str, Any]:
    """``{"seat", "result", "losing_line", "nodes", "seconds", ...}``: ``result`` is the
    policy's ("loss", "draw", "win") against the best response from the empty board, or
    "undecided" when ``nodes`` positions or ``seconds`` ran out first; then
    ``no_loss_within`` says how far it got: no line of at most that many opponent moves reaches
    a position the opponent is proved to win (None: not even one move deep)."""
    check_provable(rules)
    if seat not in ("X", "O"):
        raise ValueError(f"seat must be 'X' or 'O'; got {seat!r}")
    nodes = int(check_int(nodes, "walk nodes", 1, 10**7) or 0)
    seconds = float(check_number(seconds, "walk seconds", 0.0, 86_400.0) or 0.0)
    began = time.perf_counter()
    walk = _Walk(policy, rules, game.X if seat == "X" else game.O, nodes, began + seconds,
                 proof_budget)
    line: list[int] = []
    found: str = "undecided"
    depth = 1
    try:
        while True:
            line.clear()
            result = walk.result(game.EMPTY_BOARD, depth, line)
            if result is not None:
                found = RESULTS[result]
                break
            depth += 1
    except _OutOfBudget:
        pass
    return {"seat": seat, "result": found,
            "losing_line": line if found == "loss" else None,
            "nodes": walk.visited, "node_budget": nodes, "seconds_budget": seconds,
            "seconds": round(time.perf_counter() - began, 1),
            "no_loss_within": depth - 1 if found == "undecided" and depth > 1 else None}

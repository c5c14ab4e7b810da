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
    policy: Any
    rules: Rules
    me: int
    nodes: int
    deadline: float
    proof_budget: int
    first_reply_depth: int  # plies before the opponent's first reply: 0 or 1
    visited: int = 0
    first_replies: int = 0
    memo: dict[int, int] = field(default_factory=dict)

    def result(self, code: int, line: list[int]) -> int:
        """The policy's result at ``code`` against the best response; ``line`` ends with the
        losing line when the result is a loss."""
        if code in self.memo:
            return self.memo[code]
        self.visited += 1
        if self.visited > self.nodes or time.perf_counter() > self.deadline:
            raise _OutOfBudget
        rules = self.rules
        if rules.is_terminal(code):
            winner = rules.winner(code)
            found = 0 if winner == NO_WINNER else (1 if winner == self.me else -1)
        elif rules.to_move(code) == self.me:
            found = self._policy_node(code, line)
        else:
            found = self._opponent_node(code, line)
        self.memo[code] = found
        return found

    def _policy_node(self, code: int, line: list[int]) -> int:
        cells = np.array(self.rules.decode(code), dtype=np.int8)
        move = ask(self.policy, self.rules, cells)
        line.append(move)
        if not 0 <= move < self.rules.n_cells or cells[move] != game.EMPTY:
            return -1  # an illegal move loses at once
        found = self.result(self.rules.play(code, move), line)
        if found != -1:
            line.pop()
        return found

    def _opponent_node(self, code: int, line: list[int]) -> int:
        if book.to_move_value(code, self.rules, self.proof_budget) == 1:
            return -1  # the opponent is proved to win from here
        worst = 1
        for cell in self.rules.legal_moves(code):
            line.append(cell)
            worst = min(worst, self.result(self.rules.play(code, cell), line))
            if worst == -1:
                return -1
            line.pop()
            if len(line) == self.first_reply_depth:
                self.first_replies += 1
        return worst


def best_response(policy: Any, rules: Rules, seat: str, nodes: int = WALK_NODES,
                  seconds: float = WALK_SECONDS,
                  proof_budget: int = PROOF_BUDGET) -> dict[str, Any]:
    """``{"seat", "result", "losing_line", "nodes", "seconds", ...}``: ``result`` is the
    policy's ("loss", "draw", "win") against the best response from the empty board, or
    "undecided" when ``nodes`` positions or ``seconds`` ran out first (then
    ``first_replies_walked`` of ``first_replies`` say how far it got)."""
    check_provable(rules)
    if seat not in ("X", "O"):
        raise ValueError(f"seat must be 'X' or 'O'; got {seat!r}")
    nodes = check_int(nodes, "walk nodes", 1, 10**7)
    seconds = check_number(seconds, "walk seconds", 0.0, 86_400.0)
    me = game.X if seat == "X" else game.O
    began = time.perf_counter()
    walk = _Walk(policy, rules, me, nodes, began + seconds, proof_budget,
                 first_reply_depth=0 if seat == "O" else 1)
    line: list[int] = []
    try:
        found: str = RESULTS[walk.result(game.EMPTY_BOARD, line)]
    except _OutOfBudget:
        found = "undecided"
    return {"seat": seat, "result": found,
            "losing_line": line if found == "loss" else None,
            "nodes": walk.visited, "node_budget": nodes, "seconds_budget": seconds,
            "seconds": round(time.perf_counter() - began, 1),
            "first_replies_walked": walk.first_replies,
            "first_replies": rules.n_cells - (0 if seat == "O" else 1)}

"""Exact answers on boards of 17 to 64 cells, for the solver's functions and ``facts``: one
:class:`~gym_tictactoe.game.proofs.Prover` per board (its table kept for the process) and the
proof cache on disk (:mod:`.proofcache`), so a question asked before is a look-up.

Each question has a node budget (``BUDGET``); one that runs out answers None ("unknown"), never a
guess. Values here are for X, as the table solver's are; the prover's are for the side to move.
"""

from __future__ import annotations

from functools import cache

from gym_tictactoe.game import NO_WINNER, O, Rules
from gym_tictactoe.game.proofcache import ProofCache
from gym_tictactoe.game.proofs import Prover, check_provable

BUDGET = 5 * 10**7  # nodes per question: a few minutes at most
TABLE_BYTES = 1 << 27


@cache
def prover(rules: Rules) -> Prover:
    check_provable(rules)
    return Prover(rules, budget=BUDGET, table_bytes=TABLE_BYTES)


@cache
def proof_cache(rules: Rules) -> ProofCache:
    return ProofCache(rules)


def to_move_value(code: int, rules: Rules) -> int | None:
    """The value for the side to move at ``code``: the proof cache, else a proof (kept)."""
    check_provable(rules)
    if rules.is_terminal(code):
        return 0 if rules.winner(code) == NO_WINNER else -1
    known = proof_cache(rules).get(code)
    if known is not None:
        return known
    value = prover(rules).value(code)
    if value is not None:
        proof_cache(rules).put(code, value)
    return value


def value(code: int, rules: Rules) -> int | None:
    """The game value for X under perfect play (+1, 0, -1), or None when not proved within the
    budget."""
    found = to_move_value(code, rules)
    if found is None:
        return None
    return -found if rules.to_move(code) == O else found


def move_values(code: int, rules: Rules) -> dict[int, int | None]:
    """Each legal move's value for the side to move at ``code`` (None: not proved)."""
    out: dict[int, int | None] = {}
    for cell in rules.legal_moves(code):
        child = rules.play(code, cell)
        found = to_move_value(child, rules)
        out[cell] = None if found is None else -found
    return out


def value_keeping_moves(code: int, rules: Rules) -> list[int] | None:
    """The moves that keep the position's game value, or None when some move's value is
    unknown (a move left out might be one of them)."""
    values = move_values(code, rules)
    if not values or None in values.values():
        return None if values else []
    best = max(v for v in values.values() if v is not None)
    return sorted(cell for cell, v in values.items() if v == best)

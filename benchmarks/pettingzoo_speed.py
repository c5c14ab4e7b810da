"""The two-agent AEC environment against PettingZoo's own tic-tac-toe, in one run.

    python -m benchmarks pettingzoo_speed [--quick]

Both play the same loop, PettingZoo's tutorial loop: ``for agent in env.agent_iter()``, ``last()``,
a uniformly random legal move from the observation's action mask (``None`` once terminated),
``step``. Both are the wrapped ``env()`` each package hands its users:
``gym_tictactoe.envs.pettingzoo.env()`` and
PettingZoo's ``tictactoe_v3.env()`` (its three wrappers).
A move is a mark put on the board. Bigger boards (6x6x4, gomoku 15x15x5) are measured for
information: PettingZoo has no m,n,k-game, so their ratio is to its 3x3 game.

``benchmarks/speed.py`` runs the same groups: ``groups()`` and ``TARGETS`` have the shapes of
``boards.groups()`` and ``boards.TARGETS``; both time them with ``benchmarks/timing.py``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.boards import pick
from benchmarks.commands import argument_parser
from benchmarks.timing import Play, check_targets, measure, print_groups, print_targets

OURS = "gym-tictactoe AEC env()"
PEER = "PettingZoo tictactoe_v3.env()"
GROUP = "PettingZoo AEC random play 3x3, moves/s"
BIG_GROUP = "PettingZoo AEC random play, bigger boards, moves/s"
BIG = {"6x6x4": (6, 6, 4), "15x15x5": (15, 15, 5)}


def aec_loop(env: Any) -> Play:
    """One game per call of PettingZoo's tutorial loop with random legal moves; the moves made."""
    rnd = random.Random(0)
    env.reset(seed=0)

    def play() -> int:
        env.reset()
        moves = 0
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            done = terminated or truncated
            env.step(None if done else pick(obs["action_mask"], rnd))
            moves += not done
        return moves
    return play


def ours(rows: int = 3, cols: int = 3, win_length: int = 3) -> Play:
    from gym_tictactoe.envs.pettingzoo import env

    return aec_loop(env(rows=rows, cols=cols, win_length=win_length))


def pettingzoo_tictactoe() -> Play:
    # tictactoe_v3.env itself, imported from its module rather than through the deprecated
    # pettingzoo.classic.tictactoe_v3 alias (which only warns and forwards to it).
    from pettingzoo.classic.tictactoe.tictactoe import env

    return aec_loop(env())


def groups() -> dict[str, dict[str, Callable[[], Play]]]:
    """Contender groups for ``timing.measure``: the first of each is ours."""
    big = {f"gym-tictactoe AEC {label}": (lambda s=size: ours(*s)) for label, size in BIG.items()}
    return {GROUP: {OURS: ours, PEER: pettingzoo_tictactoe},
            BIG_GROUP: {**big, PEER: pettingzoo_tictactoe}}


TARGETS = [  # (label, group, ours, peer, ratio needed)
    ("PettingZoo AEC >= 5x tictactoe_v3", GROUP, OURS, PEER, 5.0),
]


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--quick", action="store_true", help="shorter runs, fewer rounds")
    args = parser.parse_args(argv)
    rounds, seconds = (3, 0.2) if args.quick else (7, 0.6)
    notes: list[str] = []
    import gym_tictactoe

    print(f"gym_tictactoe from {Path(gym_tictactoe.__file__).parent}; load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    results = {group: measure(contenders, rounds, seconds, notes)
               for group, contenders in groups().items()}
    print_groups(results)
    checks = check_targets(results, TARGETS)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print_targets(checks, notes)
    return 0

"""How fast is gym-tictactoe? Its envs against PettingZoo, OpenSpiel and pgx, in one run.

    python -m benchmarks speed [--quick] [--json PATH]   # numbers to runs/benchmarks/speed.json
    python -m benchmarks speed --json benchmarks/results/speed.json   # the committed figures

Installs nothing: a contender whose package is missing (``pip install -e ".[bench]"``) is skipped
with a note; with ``--require-peers`` (``make bench``, which installs them) a missing one is an
error before any work (exit 1). The targets are floors the design aims at: each prints ``met``,
``below`` or ``skipped``; a target below is reported, not an error (a speed depends on the
machine and its load).

The contenders of a group take turns, one timed run each per round, so a load that comes and
goes falls on all alike; the table gives the median over rounds, the range, and ours
divided by each peer. Agents play uniformly random legal moves; a move is any mark put on a
board, the agent's or the opponent's.

* single env: ``gymnasium.make("TicTacToe-v0", opponent="minimax")`` (default wrappers) against
  PettingZoo's ``tictactoe_v3.env()`` (AEC) and OpenSpiel's ``tic_tac_toe`` driven from Python.
* vector env (minimax opponent) against pgx's ``tic_tac_toe`` under ``jax.jit(jax.vmap(...))``
  with auto-reset, compile time excluded, ``block_until_ready``.
* MaskablePPO timesteps/s on ``agents.sb3.vec_env.TicTacToeSB3VecEnv`` against SB3's ``DummyVecEnv``
  of monitored ``TicTacToeEnv`` s with as many boards: rollout collection alone, with the ceiling
  any env could reach (SB3 on a frozen env that costs nothing), and ``learn`` with one epoch.
* the solver's full build, and ``import gym_tictactoe`` after ``import gymnasium`` (new process).
* the two-player AEC env (``benchmarks/pettingzoo_speed.py``) against PettingZoo's
  ``tictactoe_v3.env()``, wrappers included.
* other boards (``benchmarks/boards.py``): 4x4x4 against 3x3; 6x6x4 and gomoku (15x15x5) against
  OpenSpiel's ``mnk`` and ``gomoku``; the alpha-beta player's reply time on 15x15x5; solving and
  loading the 16-cell boards.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from benchmarks import alphabeta, pettingzoo_speed
from benchmarks import boards as other_boards
from benchmarks.commands import argument_parser
from benchmarks.progress import RUNS, Progress, results_file, writable
from benchmarks.timing import (
    FROZEN,
    Play,
    check_targets,
    measure,
    missing_peers,
    print_groups,
    print_targets,
)

VECTOR_SIZES = (256, 4096, 65536)
SB3_BOARDS = (64, 256)
SB3_ROLLOUT = 4096  # transitions per rollout: 64 steps of 64 boards, 16 of 256
VERSIONS = ("gymnasium", "numpy", "torch", "stable-baselines3", "sb3-contrib", "pettingzoo",
            "open-spiel", "pgx", "jax")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--quick", action="store_true", help="shorter runs, fewer rounds")
    parser.add_argument("--json", type=results_file, default=RUNS / "speed.json",
                        help="where the numbers go as JSON (default: %(default)s)")
    parser.add_argument("--require-peers", action="store_true",
                        help="stop before any work (exit 1) if a peer's package is missing")
    return parser.parse_args(argv)


# --- contenders: each returns a Play, one unit of work (a game, a step, a rollout) ------------

def ours_single() -> Play:
    return other_boards.ours_single(3, 3, 3, "minimax")


def pettingzoo_single() -> Play:
    from pettingzoo.classic import tictactoe_v3

    return pettingzoo_speed.aec_loop(tictactoe_v3.env())


def openspiel_single() -> Play:
    return other_boards.openspiel("tic_tac_toe", {})


def ours_vector(boards: int) -> Play:
    import gymnasium as gym

    from gym_tictactoe import game
    from gym_tictactoe.players.vector_opponents import TablePlayer

    envs = gym.make_vec("TicTacToe-v0", num_envs=boards, opponent="minimax",
                        vectorization_mode="vector_entry_point")
    # The agent draws from the observation as the env's random opponent draws from the board:
    # a board and its relative view have the same legal cells, so one table serves.
    pow3, legal_mask = game.TICTACTOE.pow3, game.TICTACTOE.tables.legal_mask
    agent = TablePlayer(legal_mask, False, "agent", game.TICTACTOE)
    rng = np.random.default_rng(0)
    state = {"obs": envs.reset(seed=0)[0], "waiting": 0}

    def play() -> int:
        actions = agent.on_codes(state["obs"] @ pow3, rng)
        obs, _, terminated, _, info = envs.step(actions)
        # Boards that ended last step only reset now (NEXT_STEP): no agent move there.
        moves = boards - state["waiting"] + np.count_nonzero(info["_opponent_action"])
        state.update(obs=obs, waiting=np.count_nonzero(terminated))
        return moves
    return play


def pgx_vector(boards: int) -> Play:
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make("tic_tac_toe")
    step = jax.vmap(auto_reset(env.step, env.init))

    @jax.jit
    def advance(state: Any, key: jax.Array) -> tuple[Any, jax.Array]:
        key, move_key, reset_key = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(move_key, logits, axis=-1)
        return step(state, action, jax.random.split(reset_key, boards)), key

    key = jax.random.PRNGKey(0)
    carry = [advance(jax.jit(jax.vmap(env.init))(jax.random.split(key, boards)), key)]
    jax.block_until_ready(carry[0])  # compiled and run once before any timing

    def play() -> int:
        for _ in range(10):
            carry[0] = advance(*carry[0])
        jax.block_until_ready(carry[0])
        return 10 * boards  # every board moves every step (auto-reset in the same step)
    return play


def sb3_env(kind: str, boards: int) -> Any:
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.sb3.vec_env import TicTacToeSB3VecEnv
    from gym_tictactoe.envs.env import TicTacToeEnv

    class Frozen(TicTacToeSB3VecEnv):
        """Stuck at its first position, at no cost: what SB3 itself spends per step."""

        def step_wait(self) -> Any:
            none = np.zeros(self.num_envs, dtype=bool)
            return self.frozen, none.astype(np.float32), none, [{} for _ in none]

    if kind == "dummy":
        thunk = lambda: Monitor(TicTacToeEnv(opponent="minimax", agent_mark="random"))  # noqa: E731
        return DummyVecEnv([thunk] * boards)
    env = (Frozen if kind == "frozen" else TicTacToeSB3VecEnv)(boards, "minimax", "random", seed=0)
    env.frozen = env.reset()
    return env


def sb3_run(kind: str, boards: int, learn: bool) -> Play:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)  # fastest for these small networks (see agents/sb3/training.py)
    n_steps = SB3_ROLLOUT // boards
    model = MaskablePPO("MlpPolicy", sb3_env(kind, boards), n_steps=n_steps, batch_size=256,
                        n_epochs=1, seed=0, policy_kwargs={"net_arch": [64, 64]})
    _, callback = model._setup_learn(SB3_ROLLOUT)

    def play() -> int:
        if learn:  # two rollouts and two updates
            model.learn(2 * SB3_ROLLOUT, reset_num_timesteps=False)
            return 2 * SB3_ROLLOUT
        model.collect_rollouts(model.env, callback, model.rollout_buffer, n_steps)
        return SB3_ROLLOUT
    return play


def solver_seconds() -> float:
    from gym_tictactoe.game import solver

    solver.solve.cache_clear()
    start = time.perf_counter()
    solver.solve()
    return time.perf_counter() - start


def import_seconds() -> float:
    code = ("import time, gymnasium; start = time.perf_counter(); import gym_tictactoe; "
            "print(time.perf_counter() - start)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


# --- measuring and reporting --------------------------------------------------------------------

def steps() -> int:
    """The units of work ``main`` reports progress on: every group, the solves, alpha-beta."""
    others = len(other_boards.groups()) + len(pettingzoo_speed.groups())
    return 1 + len(VECTOR_SIZES) + 2 * len(SB3_BOARDS) + others + 1 + 2


def benchmark(quick: bool, notes: list[str], progress: Progress | None = None
              ) -> dict[str, dict[str, list[float]]]:
    rounds, seconds = (3, 0.2) if quick else (7, 0.6)
    results = _Reported(progress)
    results["single env, moves/s"] = measure(
        {"gym-tictactoe": ours_single, "PettingZoo env()": pettingzoo_single,
         "OpenSpiel": openspiel_single}, rounds, seconds, notes)
    for boards in VECTOR_SIZES:
        results[f"vector env B={boards}, board-moves/s"] = measure(
            {"gym-tictactoe": lambda b=boards: ours_vector(b),
             "pgx vmap+jit": lambda b=boards: pgx_vector(b)}, rounds, seconds * 2, notes)
    for learn, label in ((False, "rollouts"), (True, "learn, 1 epoch")):
        for boards in SB3_BOARDS:
            group = {"TicTacToeSB3VecEnv": lambda b=boards, lr=learn: sb3_run("adapter", b, lr),
                     "DummyVecEnv": lambda b=boards, lr=learn: sb3_run("dummy", b, lr)}
            if not learn:  # the ceiling: SB3 with an env that costs nothing
                group[FROZEN] = lambda b=boards: sb3_run("frozen", b, False)
            results[f"MaskablePPO {label}, {boards} boards, timesteps/s"] = measure(
                group, rounds, seconds * 2, notes)
    for group, contenders in {**other_boards.groups(), **pettingzoo_speed.groups()}.items():
        results[group] = measure(contenders, rounds, seconds * 2, notes)
    fixed = {"solver.solve() build": solver_seconds, "import gym_tictactoe": import_seconds}
    results["fixed costs, 1/s"] = {name: [1 / seconds() for _ in range(rounds + 4)]
                                   for name, seconds in fixed.items()}
    return dict(results)


class _Reported(dict):
    """The results by group; each group stored is a progress line with the time left."""

    def __init__(self, progress: Progress | None) -> None:
        super().__init__()
        self.progress = progress

    def __setitem__(self, group: str, rates: dict[str, list[float]]) -> None:
        super().__setitem__(group, rates)
        if self.progress is not None:
            self.progress.step(group)


# The engine redesign's floors (issue 20): what the env reached before it, not to lose.
TARGETS = [  # (label, group, ours, peer or None, ratio needed; None peer: seconds at most)
    ("single env >= 15x PettingZoo", "single env, moves/s", "gym-tictactoe",
     "PettingZoo env()", 15.0),
    ("single env >= 0.34x OpenSpiel", "single env, moves/s", "gym-tictactoe", "OpenSpiel", 0.34),
    ("vector B=4096 >= 3x pgx", "vector env B=4096, board-moves/s", "gym-tictactoe",
     "pgx vmap+jit", 3.0),
    *[(f"SB3 rollouts, {b} boards >= 3x Dummy", f"MaskablePPO rollouts, {b} boards, timesteps/s",
       "TicTacToeSB3VecEnv", "DummyVecEnv", 3.0) for b in SB3_BOARDS],
    ("solver build <= 0.05 s", "fixed costs, 1/s", "solver.solve() build", None, 0.05),
    ("import <= 0.2 s", "fixed costs, 1/s", "import gym_tictactoe", None, 0.2),
    *other_boards.TARGETS,
    *pettingzoo_speed.TARGETS,
]


def environment() -> dict[str, str]:
    found = {"python": sys.version.split()[0]}
    for name in VERSIONS:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "-"
    return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    missing = missing_peers() if args.require_peers else []
    if missing:
        print(f"speed.py: peers not installed: {', '.join(missing)} (pip install -e "
              "'.[bench]')", file=sys.stderr)
        return 1
    notes: list[str] = []
    print("versions:", ", ".join(f"{k} {v}" for k, v in environment().items()))
    writable(args.json, "speed.py")
    progress = Progress(steps())
    results = benchmark(args.quick, notes, progress)
    checks = check_targets(results, TARGETS)
    print_groups(results)
    solving = other_boards.solve_costs()
    progress.step("solving the 16-cell boards")
    checks += other_boards.print_solve_costs(solving)
    search = alphabeta.measure(count=20, games=4) if args.quick else alphabeta.measure()
    progress.step("alpha-beta on 15x15x5")
    print("\n" + alphabeta.report(search))
    median_ms = search["15x15x5"]["reply"]["median_ms"]
    checks.append({"target": f"alphabeta 15x15x5 median <= {alphabeta.TARGET_MS:.0f} ms",
                   "value": median_ms,
                   "status": "PASS" if median_ms <= alphabeta.TARGET_MS else "MISS"})
    print_targets(checks, notes)
    from agents.run.numerics import numerics

    args.json.parent.mkdir(parents=True, exist_ok=True)
    data = {"environment": environment(), "numerics": numerics(), "quick": args.quick,
            "rates": results, "solving": solving, "alphabeta": search,
            "medians": {g: {n: statistics.median(r) for n, r in v.items()}
                        for g, v in results.items()}, "targets": checks}
    args.json.write_text(json.dumps(data, indent=2))
    print(f"numbers written to {args.json}")
    return 0

"""How far does the default tabular Q-learning run get on 4x4 boards, and how fast does it train?

    python -m benchmarks q_boards                          # 4x4x3 and 4x4x4, 1,000,000 episodes
    python -m benchmarks q_boards --episodes 200000 --boards 4x4x3 --evals 2

Each board trains ``QLearningAgent(seed=SEED, rows=, cols=, win_length=)`` (default
hyper-parameters) against ``TRAINING_OPPONENT`` (epsilon over minimax) in both seats, with
train.py's exploring starts (``agents.EXPLORING_STARTS``; ``--start empty`` for none), in one
``train`` call as train.py does, evaluated exactly (``evaluation.evaluate``) ``--evals`` times at
even intervals. Boards run one after the other, each in a fresh process so its setup cost and
peak memory are its own. First, in this process, episodes per second on 3x3 and on 4x4x3 are
measured alternately (``--speed-episodes`` each, best of 3) and their ratio printed: the machine
is shared, so only same-run ratios compare. Results go to ``--out`` as JSON (by default under
runs/; the committed ``benchmarks/results/q_boards.json`` only when ``--out`` names it). Each
board's run says on stderr how far it is, with an estimate of the time left, at every evaluation.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.commands import argument_parser, child, command_line
from benchmarks.progress import RUNS, line, results_file, tabled_board, writable
from gym_tictactoe.cli.arguments import non_negative_int, positive_int, probability, seed_arg

DEFAULT_OUT = RUNS / "q_boards.json"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--episodes", type=positive_int, default=1_000_000, help="budget per board")
    parser.add_argument("--boards", nargs="+", type=tabled_board, default=["4x4x3", "4x4x4"],
                        help="ROWSxCOLSxK boards of at most 16 cells")
    parser.add_argument("--evals", type=positive_int, default=4, help="exact evaluations per run")
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--start", choices=("empty", "random"), default="random",
                        help="where episodes begin (default: random, as in train.py)")
    parser.add_argument("--start-probability", type=probability, default=None,
                        help="share of random starts (default: train.py's)")
    parser.add_argument("--speed-episodes", type=non_negative_int, default=20_000,
                        help="episodes per speed measurement (0: skip)")
    parser.add_argument("--out", type=results_file, default=DEFAULT_OUT,
                        help="results JSON path (default: %(default)s)")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # a child's board
    return parser.parse_args(argv)


def make(size: tuple[int, int, int], seed: int, options: dict[str, Any] | None = None):
    from agents.tabular.q_learning import TRAINING_OPPONENT, QLearningAgent
    from gym_tictactoe.envs.env import TicTacToeEnv

    board = dict(zip(("rows", "cols", "win_length"), size, strict=True))
    env = TicTacToeEnv(TRAINING_OPPONENT, agent_mark="random", **board, **(options or {}))
    return QLearningAgent(seed=seed, **board), env


def episodes_per_second(size: tuple[int, int, int], episodes: int) -> float:
    agent, env = make(size, 0)
    return episodes / agent.train(env, episodes).seconds


def speed(episodes: int) -> dict[str, Any]:
    """3x3 and 4x4x3 alternately, best of three each (setup excluded)."""
    sizes = {"3x3x3": (3, 3, 3), "4x4x3": (4, 4, 3)}
    for size in sizes.values():  # build the index and load the solution before timing
        make(size, 0)
    best = {name: 0.0 for name in sizes}
    for _ in range(3):
        for name, size in sizes.items():
            best[name] = max(best[name], episodes_per_second(size, episodes))
    return {"episodes": episodes, "episodes_per_second": best,
            "ratio_4x4x3_to_3x3": best["4x4x3"] / best["3x3x3"]}


def run_board(size: tuple[int, int, int], episodes: int, evals: int, seed: int,
              options: dict[str, Any]) -> dict:
    """One board's run: setup, training with exact evaluations, memory."""
    from gym_tictactoe import evaluation

    start = time.perf_counter()
    agent, env = make(size, seed, options)
    setup, curve, evaluating = time.perf_counter() - start, [], 0.0
    begun = time.perf_counter()

    def on_eval(agent, trained: int) -> None:
        nonlocal evaluating
        began = time.perf_counter()
        training = began - begun - evaluating  # so far, the evaluations left out
        report = evaluation.evaluate(agent)
        evaluating += time.perf_counter() - began
        curve.append({"episodes": trained, "train_seconds": round(training, 1),
                      "rate": report.move_rate.rate, "perfect": report.perfect,
                      **{seat: r.result for seat, r in report.best_response.items()}})
        so_far = line(trained, episodes, time.perf_counter() - begun)
        print(f"{agent.rules.name}: {trained:,} of {episodes:,} episodes, optimal-move rate "
              f"{report.move_rate.rate:.2%}; {so_far}", file=sys.stderr, flush=True)

    agent.train(env, episodes, eval_every=max(1, episodes // evals), on_eval=on_eval)
    index = agent.index
    return {"board": agent.rules.name, "env_options": options,
            "setup_seconds": round(setup, 1), "curve": curve,
            "perfect_results": evaluation.perfect_results(agent.rules),
            "positions": evaluation.optimal_move_rate(agent).positions,
            "eval_seconds": round(evaluating / len(curve), 1),
            "rows": agent.q.shape[0], "classes": classes(agent),
            "table_mb": round((agent.q.nbytes + agent.visits.nbytes) / 1e6),
            "index_mb": round(index.nbytes / 1e6),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def classes(agent) -> int:
    """Rows that positions with a move to make use (the dense layout has a row for every code)."""
    if not agent.rules.tabled:  # the compact layout: every row is used
        return agent.index.n_rows
    from gym_tictactoe import game

    rules, codes = agent.rules, []
    for layer in rules.positions:
        cells = rules.cells_of(layer.codes[~layer.terminal])
        seen = game.SWAP[cells] if layer.mark == game.O else cells
        codes.append(seen.astype(np.int64) @ rules.pow3)
    return int(np.unique(agent.index.locate(np.concatenate(codes))[0]).size)


def in_child(board: str, args: argparse.Namespace) -> dict[str, Any]:
    command, env = child("q_boards", "--one", board, "--episodes", str(args.episodes), "--evals",
                         str(args.evals), "--seed", str(args.seed), "--start", args.start)
    if args.start_probability is not None:
        command += ["--start-probability", str(args.start_probability)]
    print(f"{board}: setting up (the solution, solved or loaded from the cache) and training "
          f"{args.episodes:,} episodes", file=sys.stderr, flush=True)
    # The child's stderr (its progress lines, or a failure's traceback) goes straight through.
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False, env=env)
    if done.returncode:
        raise SystemExit(f"q_boards.py: {board} failed (exit {done.returncode}; its error above)")
    return json.loads(done.stdout.strip().splitlines()[-1])


def print_table(results: dict[str, Any]) -> None:
    pace = results.get("speed")
    if pace:
        eps = pace["episodes_per_second"]
        print(f"training speed (same run, best of 3 x {pace['episodes']:,} episodes): "
              f"3x3x3 {eps['3x3x3']:,.0f} episodes/s, 4x4x3 {eps['4x4x3']:,.0f} episodes/s "
              f"(ratio {pace['ratio_4x4x3_to_3x3']:.2f})\n")
    print(f"{'board':<7}{'episodes':>11}{'train s':>9}{'ep/s':>8}{'optimal moves':>15}"
          f"{'as X':>6}{'as O':>6}")
    for run in results["runs"]:
        for point in run["curve"]:
            rate = point["episodes"] / max(point["train_seconds"], 1e-9)
            print(f"{run['board']:<7}{point['episodes']:>11,}{point['train_seconds']:>9.1f}"
                  f"{rate:>8,.0f}{point['rate']:>15.2%}{point['X']:>6}{point['O']:>6}")
    print()
    for run in results["runs"]:
        perfect = run["perfect_results"]
        print(f"{run['board']}: perfect play gets {perfect['X']} as X, {perfect['O']} as O; "
              f"{run['positions']:,} positions share {run['classes']:,} rows of a table of "
              f"{run['rows']:,}; setup "
              f"{run['setup_seconds']} s, one exact evaluation {run['eval_seconds']} s; values + "
              f"visits {run['table_mb']} MB, index {run['index_mb']} MB, peak RSS "
              f"{run['peak_rss_mb']} MB")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from gym_tictactoe.game import parse_board

    if args.one:
        from agents import start_options  # train.py's rule for --start, --start-probability

        options = start_options(args.start, args.start_probability)
        print(json.dumps(run_board(parse_board(args.one), args.episodes, args.evals, args.seed,
                                   options)))
        return 0
    boards = [parse_board(board) for board in args.boards]  # usage errors before any work
    writable(args.out, "q_boards.py")
    results: dict[str, Any] = {"command": command_line(__name__),
                               "machine": f"{platform.machine()}, shared 2 cores",
                               "python": platform.python_version(), "seed": args.seed}
    if args.speed_episodes:
        print(f"episodes per second on 3x3 and 4x4x3: 3 rounds of {args.speed_episodes:,} "
              "episodes each", file=sys.stderr, flush=True)
        results["speed"] = speed(args.speed_episodes)
    results["runs"] = [in_child("x".join(map(str, size)), args) for size in boards]
    print_table(results)
    from gym_tictactoe.files import atomic_path

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(args.out) as temp, open(temp, "w") as file:
        json.dump(results, file, indent=2)
    return 0

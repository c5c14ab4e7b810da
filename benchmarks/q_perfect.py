"""How many episodes and how much wall time does batched tabular Q-learning need for perfect play
on a 16-cell board?

    python benchmarks/q_perfect.py --board 4x4x3 --minutes 20
    python benchmarks/q_perfect.py --board 4x4x3 --start-probability 1 --set epsilon_end=0.5

Trains ``QLearningAgent(seed=SEED, board)`` (train.py's hyper-parameters unless ``--set`` says
otherwise) with ``agents.q_batched.train_batched`` on ``--batch`` boards of the vector env against
``TRAINING_OPPONENT`` in both seats with train.py's exploring starts, and evaluates it exactly
(``evaluation.evaluate``: the optimal-move rate over every position, and a best response in each
seat) every ``--eval-every`` episodes, until perfect play or ``--minutes`` of wall time. Progress,
with an estimate of the time left, goes to stderr at every evaluation; the results JSON (curve,
episodes and seconds to perfect, peak memory) to ``--out`` (default under runs/).
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its sibling modules
from progress import RUNS, line, writable

from gym_tictactoe.cli.arguments import board_arg, positive_int, probability


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--board", type=board_arg, default="4x4x3", help="RxCxK, at most 16 cells")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=positive_int, default=4096, help="boards at once")
    parser.add_argument("--episodes", type=positive_int, default=200_000_000, help="budget")
    parser.add_argument("--minutes", type=float, default=20.0, help="wall-time bound")
    parser.add_argument("--eval-every", type=positive_int, default=2_000_000)
    parser.add_argument("--start-probability", type=probability, default=None,
                        help="share of exploring starts (default: train.py's)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a QLearningConfig hyper-parameter, e.g. epsilon_end=0.5")
    parser.add_argument("--out", type=Path, default=None,
                        help="results JSON (default: runs/benchmarks/q_perfect_BOARD.json)")
    return parser.parse_args(argv)


def hyper_parameters(pairs: list[str]) -> dict[str, float]:
    found = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        try:
            found[name] = int(value) if value.isdigit() else float(value)
        except ValueError:
            raise SystemExit(f"q_perfect.py: --set {pair!r}: expected NAME=NUMBER") from None
    return found


def run(args: argparse.Namespace) -> dict[str, Any]:
    from agents import q_batched, start_options
    from agents.q_learning import TRAINING_OPPONENT, QLearningAgent
    from gym_tictactoe import evaluation

    rules, begun = args.board, time.perf_counter()
    agent = QLearningAgent(seed=args.seed, rows=rules.rows, cols=rules.cols,
                           win_length=rules.win_length, **hyper_parameters(args.set))
    options = start_options("random", args.start_probability)
    envs = q_batched.make_envs(agent, args.batch, TRAINING_OPPONENT, **options)
    evaluation.evaluate(agent)  # the solution loaded and the evaluator warm before the clock
    setup, curve, evaluating = time.perf_counter() - begun, [], 0.0
    start, limit = time.perf_counter(), args.minutes * 60

    def on_eval(agent: QLearningAgent, trained: int) -> bool:
        nonlocal evaluating
        began = time.perf_counter()
        report = evaluation.evaluate(agent)
        evaluating += time.perf_counter() - began
        elapsed = time.perf_counter() - start
        curve.append({"episodes": trained, "seconds": round(elapsed, 1),
                      "train_seconds": round(elapsed - evaluating, 1),
                      "rate": report.move_rate.rate, "perfect": report.perfect,
                      **{seat: r.result for seat, r in report.best_response.items()}})
        so_far = line(elapsed, limit, elapsed)
        print(f"{rules.name} batch {args.batch}: {trained:,} episodes, optimal-move rate "
              f"{report.move_rate.rate:.4%}, best response X {curve[-1]['X']} O "
              f"{curve[-1]['O']}; {so_far} (bound {args.minutes:g} min)",
              file=sys.stderr, flush=True)
        return report.perfect or elapsed >= limit

    q_batched.train_batched(agent, envs, args.episodes, seed=args.seed,
                            eval_every=args.eval_every, on_eval=on_eval)
    first = next((point for point in curve if point["perfect"]), None)
    return {"command": " ".join(["python", *sys.argv]), "board": rules.name, "seed": args.seed,
            "batch": args.batch, "env_options": options, "opponent": TRAINING_OPPONENT,
            "hyperparameters": agent.config.__dict__, "machine":
            f"{platform.machine()}, 2 cores shared with other jobs, nice 10",
            "setup_seconds": round(setup, 1), "perfect_at_episodes": first and first["episodes"],
            "perfect_after_seconds": first and first["seconds"],
            "perfect_results": evaluation.perfect_results(agent.rules), "curve": curve,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out or RUNS / f"q_perfect_{args.board.name}.json"
    writable(out, "q_perfect.py")
    results = run(args)
    from gym_tictactoe.files import atomic_path

    with atomic_path(out) as temp, open(temp, "w") as file:
        json.dump(results, file, indent=2)
    first = results["perfect_at_episodes"]
    last = results["curve"][-1]
    print(f"{results['board']}: " + (f"perfect at {first:,} episodes, "
          f"{results['perfect_after_seconds']} s" if first else
          f"not perfect: {last['rate']:.4%} after {last['episodes']:,} episodes") +
          f"; peak RSS {results['peak_rss_mb']} MB; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How many episodes and how much wall time does batched tabular Q-learning need for perfect play
on a 16-cell board?

    python -m benchmarks q_perfect --board 4x4x3 --minutes 20
    python -m benchmarks q_perfect --board 4x4x3 --start-probability 1 --set epsilon_end=0.5
    python -m benchmarks q_perfect --board 4x4x4 --focus-share 0.5 --back-share 0.2 \
        --alpha-end 0.01 --alpha-episodes 40000000 --eval-every 4000000
    python -m benchmarks q_perfect --board 4x4x3 --self-play --focus-share 0.5

Trains ``QLearningAgent(seed=SEED, board)`` (train.py's hyper-parameters unless ``--set`` says
otherwise) with ``agents.tabular.batched.train_batched`` on ``--batch`` boards of the vector env
against ``TRAINING_OPPONENT`` in both seats with train.py's exploring starts, and evaluates it
exactly (``evaluation.evaluate``: the optimal-move rate over every position, and a best response in
each seat) every ``--eval-every`` episodes, until perfect play or ``--minutes`` of wall time.
Progress, with an estimate of the time left, goes to stderr at every evaluation; the results JSON
(curve, episodes and seconds to perfect, peak memory), rewritten at every evaluation so that a run
stopped early keeps its curve, to ``--out`` (default under runs/).

``--focus-share`` (with ``--back-share``, ``--ahead-share``) aims that share of the exploring
starts at the positions the last evaluation found played wrong (``agents.tabular.starts``);
``--alpha-end`` anneals the learning-rate floor at each evaluation (both ``agents.tabular.focus``,
which ``train.py --algo q`` applies with the same flags);
``--self-play`` trains against the agent's own snapshots as ``train.py --opponent self`` does.
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.tabular.focus import ALPHA_EPISODES
from benchmarks.commands import argument_parser, command_line
from benchmarks.progress import RUNS, line, results_file, writable, write_json
from gym_tictactoe.cli.arguments import board_arg, positive_int, probability, seed_arg


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from agents.run.flags import checked

    parser = argument_parser(__name__, __doc__)
    parser.add_argument("--board", type=board_arg, default="4x4x3", help="RxCxK, at most 16 cells")
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--batch", type=positive_int, default=4096, help="boards at once")
    parser.add_argument("--episodes", type=positive_int, default=200_000_000, help="budget")
    parser.add_argument("--minutes", type=checked(float, 0), default=20.0, help="wall-time bound")
    parser.add_argument("--eval-every", type=positive_int, default=2_000_000)
    parser.add_argument("--start-probability", type=probability, default=None,
                        help="share of exploring starts (default: train.py's)")
    parser.add_argument("--self-play", action="store_true",
                        help="train against a pool of the agent's own snapshots (train.py "
                             "--opponent self), not TRAINING_OPPONENT")
    parser.add_argument("--pool", type=positive_int, default=5, help="snapshots (--self-play)")
    parser.add_argument("--refresh-every", type=positive_int, default=10_000,
                        help="episodes between snapshots (--self-play)")
    _add_steering(parser)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a QLearningConfig hyper-parameter, e.g. epsilon_end=0.5")
    parser.add_argument("--out", type=results_file, default=None,
                        help="results JSON, rewritten at every checkpoint (default: "
                             "runs/benchmarks/q_perfect_BOARD_seedSEED.json)")
    args = parser.parse_args(argv)
    # Checked now, not at the first checkpoint minutes later.
    if args.focus_share + args.back_share + args.ahead_share > 1:
        parser.error("--focus-share + --back-share + --ahead-share must be at most 1 (the rest "
                     "of the random starts stays uniform)")
    if args.alpha_end == 0:
        parser.error("--alpha-end must be above 0 (a learning rate of 0 learns nothing)")
    return args


def _add_steering(parser: argparse.ArgumentParser) -> None:
    """The flags that steer the random starts and the learning rate (``agents.tabular.focus``)."""
    parser.add_argument("--focus-share", type=probability, default=0.0,
                        help="share of the random starts on the positions played wrong at the "
                             "last checkpoint (agents.tabular.starts)")
    parser.add_argument("--back-share", type=probability, default=0.0,
                        help="share of the random starts on those positions' predecessors")
    parser.add_argument("--ahead-share", type=probability, default=0.0,
                        help="share of the random starts on those positions' successors")
    parser.add_argument("--forget", action="store_true",
                        help="zero the visit counts of the positions played wrong at each "
                             "checkpoint (with --focus-share)")
    parser.add_argument("--alpha-end", type=probability, default=None,
                        help="anneal the learning-rate floor to this, geometrically")
    parser.add_argument("--alpha-episodes", type=positive_int, default=ALPHA_EPISODES,
                        help="over this many episodes (with --alpha-end)")


def hyper_parameters(pairs: list[str]) -> dict[str, float]:
    found = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        try:
            found[name] = int(value) if value.isdigit() else float(value)
        except ValueError:
            raise SystemExit(f"q_perfect.py: --set {pair!r}: expected NAME=NUMBER") from None
    return found


def run(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Train until perfect or out of time, writing the results to ``out`` at every checkpoint
    (a killed run keeps its curve)."""
    from agents import start_options
    from agents.self_play import SnapshotPool
    from agents.tabular import batched as q_batched
    from agents.tabular.q_learning import TRAINING_OPPONENT, QLearningAgent
    from gym_tictactoe import evaluation

    rules, begun = args.board, time.perf_counter()
    agent = QLearningAgent(seed=args.seed, rows=rules.rows, cols=rules.cols,
                           win_length=rules.win_length, **hyper_parameters(args.set))
    options = start_options("random", args.start_probability)
    pool = SnapshotPool(rules, args.pool) if args.self_play else None
    opponent = "self" if pool else TRAINING_OPPONENT
    envs = q_batched.make_envs(agent, args.batch, pool.opponent() if pool else opponent,
                               **options)
    evaluation.evaluate(agent)  # the solution loaded and the evaluator warm before the clock
    results = {"command": command_line(__name__), "board": rules.name,
               "seed": args.seed, "batch": args.batch, "env_options": options,
               "focus": {"share": args.focus_share, "back_share": args.back_share,
                         "ahead_share": args.ahead_share, "forget": args.forget},
               "alpha_schedule": {"end": args.alpha_end, "episodes": args.alpha_episodes},
               "opponent": opponent, "pool": pool and {"size": args.pool,
                                                          "refresh_every": args.refresh_every},
               "hyperparameters": agent.config.__dict__,
               "machine": f"{platform.machine()}, 2 cores shared with other jobs, nice 10",
               "setup_seconds": round(time.perf_counter() - begun, 1),
               "perfect_results": evaluation.perfect_results(rules), "curve": []}
    checkpoint = Checkpoint(args, agent, envs, results, out)
    if pool is None:
        q_batched.train_batched(agent, envs, args.episodes, seed=args.seed,
                                eval_every=args.eval_every, on_eval=checkpoint)
    else:
        q_batched.train_self_play(agent, pool, args.episodes, args.refresh_every,
                                  batch=args.batch, seed=args.seed, eval_every=args.eval_every,
                                  on_eval=checkpoint, envs=envs)
    return results


class Checkpoint:
    """``on_eval``: the exact evaluation, the focus of the starts and the learning rate for the
    next stretch, a progress line, and the results JSON rewritten."""

    def __init__(self, args: argparse.Namespace, agent: Any, envs: Any, results: dict,
                 out: Path) -> None:
        from agents.tabular.focus import Focus, Steering

        self.args, self.results, self.out = args, results, out
        self.start, self.evaluating = time.perf_counter(), 0.0
        focus = Focus(args.focus_share, args.back_share, args.ahead_share, args.forget,
                      args.alpha_end, args.alpha_episodes)
        self.steering = Steering(focus, agent, envs)  # the rule train.py --algo q applies too

    def __call__(self, agent: Any, trained: int) -> bool:
        from agents.tabular.focus import evaluate

        began = time.perf_counter()
        report, moves = evaluate(agent)
        steered = {"wrong": report.move_rate.n_blunders, **self.steering(agent, moves, trained)}
        self.evaluating += time.perf_counter() - began
        elapsed = time.perf_counter() - self.start
        point = {"episodes": trained, "seconds": round(elapsed, 1),
                 "train_seconds": round(elapsed - self.evaluating, 1),
                 "rate": report.move_rate.rate, "wrong": steered["wrong"],
                 "perfect": report.perfect, "alpha": agent.config.alpha,
                 **{seat: r.result for seat, r in report.best_response.items()}}
        self._record(point, elapsed)
        limit = self.args.minutes * 60
        print(f"{self.results['board']} seed {self.args.seed}: {trained:,} episodes, optimal-move "
              f"rate {point['rate']:.4%} ({point['wrong']:,} wrong), best response X "
              f"{point['X']} O {point['O']}; {line(elapsed, limit, elapsed)} (bound "
              f"{self.args.minutes:g} min)", file=sys.stderr, flush=True)
        return report.perfect or elapsed >= limit

    def _record(self, point: dict[str, Any], elapsed: float) -> None:
        results = self.results
        results["curve"].append(point)
        first = next((p for p in results["curve"] if p["perfect"]), None)
        results["perfect_at_episodes"] = first and first["episodes"]
        results["perfect_after_seconds"] = first and first["seconds"]
        results["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        write_json(self.out, results, quiet=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out or RUNS / f"q_perfect_{args.board.name}_seed{args.seed}.json"
    writable(out, "q_perfect.py")
    results = run(args, out)
    first = results["perfect_at_episodes"]
    last = results["curve"][-1]
    print(f"{results['board']} seed {results['seed']}: " + (
          f"perfect at {first:,} episodes, {results['perfect_after_seconds']} s" if first else
          f"not perfect: {last['rate']:.4%} after {last['episodes']:,} episodes") +
          f"; peak RSS {results['peak_rss_mb']} MB; wrote {out}", flush=True)
    return 0

"""Saved models on the command line: ``evaluate`` one model or two, and models as arena players.

A model is a file ``train.py`` writes (a Q-table ``.npz`` or an SB3 ``.zip``); the agents package
(and torch, for SB3 models) loads only when one is named. Two models must play the same board.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.checks import check_int
from gym_tictactoe.cli.match import RESULTS, play_game
from gym_tictactoe.extras import MissingExtra, require
from gym_tictactoe.players.opponents import Opponent, PolicyOpponent, parse_opponent
from gym_tictactoe.seeding import check_seed

MODEL_SUFFIXES = (".npz", ".zip")
EXIT_MISSING_EXTRA = 1


def is_model_path(spec: str) -> bool:
    """Whether an arena player spec names a model file rather than a built-in opponent."""
    return spec.lower().endswith(MODEL_SUFFIXES)


def load(path: str) -> tuple[Any, str]:
    """(policy, kind) of a model file; FileNotFoundError, ValueError or MissingExtra."""
    return _saved_models().load_policy(path)


def _saved_models() -> Any:
    """``agents.models``: the one place the package reaches up into ``agents``, whose files the
    model players are. Imported here, when a model file is named, so nothing else needs it."""
    import agents.models

    return agents.models


def board_of(policy: Any) -> game.Rules:
    return getattr(policy, "rules", game.TICTACTOE)


def model_player(path: str, rules: game.Rules) -> PolicyOpponent:
    """The model at ``path`` as an arena player on ``rules``'s board (ValueError if another)."""
    policy, _ = load(path)
    if board_of(policy) != rules:
        raise ValueError(f"{path} plays the {board_of(policy).name} board; this arena is on "
                         f"{rules.name} (choose it with --board {board_of(policy).name})")
    return PolicyOpponent(policy, **rules.kwargs)


def players_for(specs: Sequence[str], rules: game.Rules, command: str) -> list[Opponent] | None:
    """The specs as players on ``rules``'s board, or None after printing why one can't play."""
    try:
        return [_player(spec, rules) for spec in specs]
    except (ValueError, FileNotFoundError, MissingExtra) as error:
        print(f"gym-tictactoe {command}: error: {error}", file=sys.stderr)
        return None


def _player(spec: str, rules: game.Rules) -> Opponent:
    """A built-in opponent from its spec, or a saved model (a path ending .npz or .zip)."""
    if is_model_path(spec):
        return model_player(spec, rules)
    return parse_opponent(spec, rules)


@contextlib.contextmanager
def one_torch_thread(kinds: list[str]) -> Iterator[None]:
    """One torch thread while SB3 models play (several times faster for these tiny networks)."""
    if all(kind == "q" for kind in kinds):
        yield
        return
    with _saved_models().torch_threads(1):
        yield


def evaluate_command(args: argparse.Namespace) -> int:
    """``evaluate PATH``: one model, exactly. ``evaluate PATH PATH``: two models of one board
    against each other in both seats, and each one's exact measures."""
    from gym_tictactoe.evaluation import evaluate
    from gym_tictactoe.evaluation.report import evaluating_message, format_summary, summarize

    paths = args.paths
    if len(paths) > 2:
        return _error(f"give one model to evaluate or two to play each other; got {len(paths)}")
    if args.report is not None and len(paths) != 1:
        return _error(f"--report takes one model; got {len(paths)}")
    try:
        loaded = [load(path) for path in paths]
    except MissingExtra as error:
        print(f"gym-tictactoe evaluate: error: {error}", file=sys.stderr)
        return EXIT_MISSING_EXTRA
    except (FileNotFoundError, ValueError) as error:
        return _error(str(error))
    boards = [board_of(policy) for policy, _ in loaded]
    if len(loaded) == 2 and boards[0] is not boards[1]:
        return _error(f"{paths[0]} plays the {boards[0].name} board and {paths[1]} the "
                      f"{boards[1].name} board: two models must play the same board")
    if args.report is not None and (refused := _check_report(args.report, boards[0])) is not None:
        return refused
    with one_torch_thread([kind for _, kind in loaded]):
        if len(loaded) == 2:
            print(format_match(paths, [policy for policy, _ in loaded], args.games, args.seed))
            print()
        for path, (policy, kind) in zip(paths, loaded, strict=True):
            print(f"{path}: {kind} model")
            print(evaluating_message(args.games, board_of(policy)), flush=True)
            report = None if args.report is None else evaluate(policy)
            summary = summarize(policy, games=args.games, seed=args.seed, report=report)
            print(format_summary(summary))
            if args.report is not None:
                return _write_report(policy, path, args.report, report, summary)
    return 0


def _check_report(directory: str, rules: game.Rules) -> int | None:
    """None when ``--report directory`` can be written for a model of ``rules``'s board, else
    the exit code, after saying why not (before the evaluation's minutes on a big board)."""
    from gym_tictactoe.evaluation.policy_report import check_destination

    try:
        rules.check_solvable("--report")
        check_destination(directory)
        require("matplotlib", "plot", "--report")
    except MissingExtra as error:
        print(f"gym-tictactoe evaluate: error: {error}", file=sys.stderr)
        return EXIT_MISSING_EXTRA
    except ValueError as error:
        return _error(str(error))
    return None


def _write_report(policy: Any, path: str, directory: str, report: Any,
                  summary: dict[str, Any]) -> int:
    from gym_tictactoe.evaluation.policy_report import write_report

    try:
        index = write_report(policy, directory, report=report, summary=summary, title=path)
    except (OSError, ValueError) as error:
        detail = getattr(error, "strerror", None) or error
        return _error(f"cannot write the report to {directory}: {detail}")
    print(f"report: {index}")
    return 0


def match(policies: list[Any], games: int, seed: int) -> list[dict[str, int]]:
    """Per seating (first as X, then second as X): the X player's wins, the O player's, draws."""
    games, seed = check_int(games, "games", 0), check_seed(seed)
    rules, rng = board_of(policies[0]), np.random.default_rng(seed)
    players = [PolicyOpponent(policy, **rules.kwargs) for policy in policies]
    tallies = []
    for x, o in ((0, 1), (1, 0)):
        seated = {game.X: players[x], game.O: players[o]}
        winners = [rules.winner(play_game(seated, rng, rules=rules)) for _ in range(games)]
        tallies.append({name: winners.count(mark) for mark, name in RESULTS.items()})
    return tallies


def format_match(paths: list[str], policies: list[Any], games: int, seed: int) -> str:
    lines = [f"{paths[0]} against {paths[1]}: {games} games per seating, seed {seed}"]
    for (x, o), tally in zip(((0, 1), (1, 0)), match(policies, games, seed), strict=True):
        lines.append(f"  X {paths[x]}, O {paths[o]}: X wins {tally['X']}, O wins {tally['O']}, "
                     f"draws {tally['draw']}")
    return "\n".join(lines)


def _error(message: str) -> int:
    print(f"gym-tictactoe evaluate: error: {message}", file=sys.stderr)
    return 2

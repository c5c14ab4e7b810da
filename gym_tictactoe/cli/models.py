"""Saved models on the command line: ``evaluate`` one model or two, and models as players
(``arena --players``, ``play --opponent``).

A model is a file ``train.py`` writes (a Q-table ``.npz``, an SB3 ``.zip`` or an AlphaZero
``.npz``), loaded by the loader the agents package registers (``players.loaders``: the package
itself is never imported here, and torch, for SB3 and AlphaZero models, loads only when one is
named). Two models must play the same board. As a player a model is its path, or
``PATH:simulations=N`` for an AlphaZero network playing through a search of N simulations
(``evaluate --simulations N`` says the same for the models it evaluates).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.checks import check_int
from gym_tictactoe.cli.match import EXIT_MISSING_EXTRA, RESULTS, play_game
from gym_tictactoe.extras import MissingExtra, require
from gym_tictactoe.players.loaders import ModelLoader, model_loader
from gym_tictactoe.players.opponents import Opponent, PolicyOpponent, parse_opponent
from gym_tictactoe.players.protocol import cost_of
from gym_tictactoe.seeding import check_seed

MODEL_SUFFIXES = (".npz", ".zip")
# agents.alphazero.policy.MAX_SIMULATIONS, kept here so that checking a spec imports no torch
# (a test checks that the two agree).
MAX_SIMULATIONS = 10_000
# PATH or PATH:OPTIONS, PATH ending .npz or .zip (the last such ending: a folder may hold a dot)
_MODEL_SPEC = re.compile(r"(?P<path>.*\.(?:npz|zip))(?::(?P<options>.*))?",
                         re.IGNORECASE | re.DOTALL)
SPEC_HELP = (f"a model takes simulations=N: an AlphaZero network playing through a search of N "
             f"simulations, 1 to {MAX_SIMULATIONS:,}, and with it threats=on: a search that "
             "reads the immediate threats (plays a win, blocks a lone threat)")


@dataclass(frozen=True)
class ModelSpec:
    """A model as a player: its file and, for an AlphaZero network, its search's simulations
    (None: the raw network) and whether the search reads the immediate threats."""

    path: str
    simulations: int | None = None
    threats: bool = False


def is_model_path(spec: str) -> bool:
    """Whether a player spec names a model file (``PATH`` or ``PATH:simulations=N``) rather
    than a built-in opponent."""
    return _MODEL_SPEC.fullmatch(spec.strip()) is not None


def model_spec(spec: str, simulations: int | None = None, any_name: bool = False) -> ModelSpec:
    """The model player ``spec`` names; ``simulations``: the search's unless the spec gives
    its own. ValueError for an option other than simulations=N, 1 <= N <= MAX_SIMULATIONS.
    ``any_name``: a spec without a model's suffix is a path all the same (``evaluate`` tells
    a model by its contents; a player spec needs the suffix to be told from a built-in)."""
    found = _MODEL_SPEC.fullmatch(spec.strip())
    if found is None and any_name:
        return ModelSpec(spec, simulations)
    if found is None:
        raise ValueError(f"{spec!r} is not a model file: expected a path ending .npz or .zip, "
                         "optionally followed by :simulations=N")
    threats = False
    for item in filter(None, (found["options"] or "").split(",")):
        key, equals, value = (part.strip() for part in item.partition("="))
        if key == "simulations" and equals:
            simulations = simulations_value(value, f"simulations in {spec!r}")
        elif key == "threats" and value in ("on", "off"):
            threats = value == "on"
        else:
            raise ValueError(f"bad model option {item.strip()!r} in {spec!r}: {SPEC_HELP}")
    if threats and simulations is None:
        raise ValueError(f"threats=on in {spec!r} needs a search: add simulations=N")
    return ModelSpec(found["path"], simulations, threats)


def simulations_value(text: str, what: str = "--simulations") -> int:
    """A number of simulations from text, or a ValueError saying what is allowed."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_SIMULATIONS:
        raise ValueError(f"{what} must be an integer from 1 to {MAX_SIMULATIONS:,}; got {text!r}")
    return value


def load(spec: str | ModelSpec) -> tuple[Any, str]:
    """(policy, kind) of a model file, with its search when the spec gives simulations;
    FileNotFoundError, ValueError (also simulations for a model that is not AlphaZero) or
    MissingExtra."""
    spec = spec if isinstance(spec, ModelSpec) else model_spec(spec)
    return _saved_models().load_policy(spec.path, max_simulations=spec.simulations,
                                       threats=spec.threats)


def kind_of(spec: str) -> str:
    """``"q"``, ``"sb3"`` or ``"alphazero"``: the kind of model a spec's file holds."""
    return _saved_models().model_kind(model_spec(spec).path)


def _saved_models() -> ModelLoader:
    """The registered loader of saved models (``players.loaders``; the agents package's)."""
    return model_loader()


def board_of(policy: Any) -> game.Rules:
    return getattr(policy, "rules", game.TICTACTOE)


def model_player(spec: str, rules: game.Rules, command: str = "arena") -> PolicyOpponent:
    """The model ``spec`` names as a player on ``rules``'s board (ValueError if another)."""
    policy, _ = load(spec)
    if board_of(policy) != rules:
        path = model_spec(spec).path
        raise ValueError(f"{path} plays the {board_of(policy).name} board; this {command} is on "
                         f"{rules.name} (choose it with --board {board_of(policy).name})")
    return PolicyOpponent(policy, **rules.kwargs)


def players_for(specs: Sequence[str], rules: game.Rules, command: str) -> list[Opponent] | None:
    """The specs as players on ``rules``'s board, or None after printing why one can't play."""
    try:
        return [_player(spec, rules, command) for spec in specs]
    except (ValueError, FileNotFoundError, MissingExtra) as error:
        print(f"gym-tictactoe {command}: error: {error}", file=sys.stderr)
        return None


def _player(spec: str, rules: game.Rules, command: str) -> Opponent:
    """A built-in opponent from its spec, or a saved model (``is_model_path``)."""
    if is_model_path(spec):
        return model_player(spec, rules, command)
    return parse_opponent(spec, rules)


@contextlib.contextmanager
def one_torch_thread(kinds: list[str]) -> Iterator[None]:
    """What the loader holds while models of ``kinds`` play (one torch thread for networks:
    several times faster for these tiny ones); nothing without models."""
    if not kinds:
        yield
        return
    with _saved_models().playing(kinds):
        yield


# A search player gets the full exact evaluation on boards of at most this many positions with
# a move to make (3x3: 4,520, 3x4x3: 79,563, a few seconds at 50 simulations); beyond (4x4:
# millions), the best response alone, asked only where it can be on a game against it.
FULL_SEARCH_POSITIONS = 100_000


def evaluate_command(args: argparse.Namespace) -> int:
    """``evaluate PATH``: one model, exactly. ``evaluate PATH PATH``: two models of one board
    against each other in both seats, and each one's exact measures. ``--simulations N``: an
    AlphaZero model plays through a search of N simulations (a path's own ``:simulations=N``
    comes first)."""
    paths = args.paths
    if len(paths) > 2:
        return _error(f"give one model to evaluate or two to play each other; got {len(paths)}")
    if args.report is not None and len(paths) != 1:
        return _error(f"--report takes one model; got {len(paths)}")
    loaded = _load_models(paths, getattr(args, "simulations", None))
    if isinstance(loaded, int):
        return loaded
    boards = [board_of(policy) for policy, _ in loaded]
    if len(loaded) == 2 and boards[0] is not boards[1]:
        return _error(f"{paths[0]} plays the {boards[0].name} board and {paths[1]} the "
                      f"{boards[1].name} board: two models must play the same board")
    if args.report is not None and (refused := _check_report(
            args.report, boards[0], _reached_only(loaded[0][0]))) is not None:
        return refused
    with one_torch_thread([kind for _, kind in loaded]):
        if len(loaded) == 2:
            print(format_match(paths, [policy for policy, _ in loaded], args.games, args.seed))
            print()
        for path, (policy, kind) in zip(paths, loaded, strict=True):
            code = _evaluate_one(path, policy, kind, args)
    return code


def _load_models(paths: list[str], simulations: int | None) -> list[tuple[Any, str]] | int:
    """The models (policy, kind), or the exit code after saying why one can't be loaded."""
    try:
        return [load(model_spec(path, simulations, any_name=True)) for path in paths]
    except MissingExtra as error:
        print(f"gym-tictactoe evaluate: error: {error}", file=sys.stderr)
        return EXIT_MISSING_EXTRA
    except (FileNotFoundError, ValueError) as error:
        return _error(str(error))


def _reached_only(policy: Any) -> bool:
    """Whether ``policy`` is a search too costly to ask at every position of its board."""
    from gym_tictactoe.evaluation.report import unfinished_positions

    rules = board_of(policy)
    costly = cost_of(policy) is not None
    return costly and rules.solvable and unfinished_positions(rules) > FULL_SEARCH_POSITIONS


def _evaluate_one(path: str, policy: Any, kind: str, args: argparse.Namespace) -> int:
    """One model's summary printed (and its report written, with ``--report``); exit code."""
    from gym_tictactoe.evaluation import evaluate
    from gym_tictactoe.evaluation.report import evaluating_message, format_summary, summarize

    reached_only = _reached_only(policy)
    cost = cost_of(policy)
    print(f"{path}: {kind} model" + ("" if cost is None else f", {cost}"))
    print(evaluating_message(args.games, board_of(policy), reached_only), flush=True)
    began = time.perf_counter()
    rules = board_of(policy)
    report = None if args.report is None or graded(rules) else evaluate(policy)
    summary = summarize(policy, games=args.games, seed=args.seed, report=report,
                        reached_only=reached_only)
    text = format_summary(summary)
    print(text)
    if graded(rules):
        text = _grade(policy, rules, args, summary, text)
    if cost is not None or graded(rules):  # what it cost is worth knowing next time
        print(f"evaluated in {time.perf_counter() - began:.1f} s")
    if args.report is not None:
        return _write_report(policy, path, args.report, report, summary, text)
    return 0


def graded(rules: game.Rules) -> bool:
    """Whether ``evaluate`` grades on a sample (boards of 17 to 64 cells, proved)."""
    return not rules.solvable and rules.n_cells <= 64


def _grade(policy: Any, rules: game.Rules, args: argparse.Namespace, summary: dict[str, Any],
           text: str) -> str:
    """The sampled grade printed and kept in ``summary``; the whole text printed so far."""
    from gym_tictactoe.evaluation.grading import format_grade, grade

    print(f"grading on samples of {args.sample} positions, every verdict proved…", flush=True)
    summary["grading"] = grade(policy, rules, sample=args.sample, seed=args.seed,
                               walk_nodes=args.walk_nodes,
                               progress=lambda line: print(f"  {line}", flush=True))
    lines = format_grade(summary["grading"])
    print(lines)
    return f"{text}\n\n{lines}"


def _check_report(directory: str, rules: game.Rules, reached_only: bool = False) -> int | None:
    """None when ``--report directory`` can be written for a model of ``rules``'s board, else
    the exit code, after saying why not (before the evaluation's minutes on a big board)."""
    from gym_tictactoe.evaluation.policy_report import check_destination

    if reached_only:
        return _error(f"--report needs the model's move at every position; a search on the "
                      f"{rules.name} board is evaluated by its best response alone (a report "
                      f"with a search: boards of at most {FULL_SEARCH_POSITIONS:,} positions)")
    try:
        if graded(rules):  # a sampled grade: no pictures, no matplotlib
            check_destination(directory)
            return None
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
                  summary: dict[str, Any], text: str) -> int:
    from gym_tictactoe.evaluation.policy_report import write_graded_report, write_report

    try:
        if "grading" in summary:
            index = write_graded_report(directory, path, board_of(policy).name, text,
                                        summary["grading"], summary)
        else:
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

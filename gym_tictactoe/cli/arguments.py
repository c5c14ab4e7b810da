"""argparse types shared by the command line and train.py: each turns text into a checked value
or an ``ArgumentTypeError`` that says what is allowed (argparse prints it as one usage line)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from functools import cache, wraps
from typing import Any

from gym_tictactoe import game
from gym_tictactoe.cli.models import is_model_path, model_spec, simulations_value
from gym_tictactoe.game.starts import check_start_probability
from gym_tictactoe.players.opponents import OPPONENTS, make_opponent, parse_opponent
from gym_tictactoe.seeding import check_seed

_ARGUMENT = re.compile(r"\s*[A-Za-z_]\w*\s*=")  # "key=..." continues the spec before it


def _checked_text(check: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type from ``check``: its ValueError's message as argparse's one usage line."""
    @wraps(check)
    def argument_type(text: str) -> Any:
        try:
            return check(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return argument_type


@cache
def player_names() -> tuple[str, ...]:
    """Built-in opponents that need no arguments (a mixture or a policy needs objects)."""
    names = []
    for name in OPPONENTS:
        try:
            make_opponent(name)
        except ValueError:
            continue
        names.append(name)
    return tuple(names)


def player_list(text: str) -> list[str]:
    """An argparse type: comma-separated opponent specs. A piece that starts ``key=`` continues
    the spec before it, so ``random,epsilon:epsilon=0.3,inner=heuristic`` is two players."""
    specs: list[str] = []
    for piece in (piece.strip() for piece in text.split(",")):
        if specs and _ARGUMENT.match(piece):
            specs[-1] += f",{piece}"
        elif piece:
            specs.append(piece)
    if not specs:
        raise argparse.ArgumentTypeError(f"no player given; choose from {', '.join(player_names())}"
                                         " or any opponent spec")
    return [player_spec(spec) for spec in dict.fromkeys(specs)]


@_checked_text
def player_spec(text: str) -> str:
    """An argparse type: an opponent spec, or a model file (train.py's .npz or .zip, perhaps
    ``:simulations=N``), its options checked here and the file loaded by the command."""
    if is_model_path(text):
        model_spec(text)
    else:
        parse_opponent(text)
    return text.strip()


@_checked_text
def simulations_arg(text: str) -> int:
    """An argparse type: the simulations of an AlphaZero model's search, 1 to 10,000."""
    return simulations_value(text, "the number of simulations")


@_checked_text
def opponent_spec(text: str) -> str:
    """An argparse type: an opponent spec that ``parse_opponent`` accepts, kept as text."""
    parse_opponent(text)
    return text.strip()


def model_file(text: str) -> str:
    """An argparse type: the path of a model file, never empty (``Path("")`` is the current
    folder, which would be reported as "." when the user gave nothing)."""
    if not text:
        raise argparse.ArgumentTypeError(f"expected the path of a model file (train.py's "
                                         f"model.npz or model.zip); got {text!r}")
    return text


def positive_int(text: str, low: int = 1) -> int:
    """An argparse type: an integer of at least ``low`` (1 by default, or 0)."""
    kind = "a positive" if low == 1 else "a non-negative"
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        raise argparse.ArgumentTypeError(f"expected {kind} integer, got {text!r}")
    return value


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low:,} to {high:,}, "
                                             f"got {text!r}")
        return value
    return parse


def non_negative_int(text: str) -> int:
    """An argparse type: an integer of at least 0."""
    return positive_int(text, low=0)


def probability(text: str) -> float:
    """An argparse type: a number in [0, 1] (``starts.check_start_probability``'s rule)."""
    try:
        return check_start_probability(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a probability, a number in [0, 1]; "
                                         f"got {text!r}") from None


def seed_arg(text: str) -> int:
    """An argparse type: a seed, an integer with 0 <= seed < 2**32 (the one rule everywhere)."""
    try:
        return check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a seed, an integer with 0 <= seed < 2**32; "
                                         f"got {text!r}") from None


@_checked_text
def board_arg(text: str) -> game.Rules:
    """An argparse type: a board ``ROWSxCOLSxK`` (``4x4x3``; ``4x4`` means k = 4)."""
    return game.rules(*game.parse_board(text))

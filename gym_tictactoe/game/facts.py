"""The game's numbers for ``python -m gym_tictactoe facts``: counts of positions and games, the
game value and random play, computed exactly for any board of at most 16 cells.

On tabled boards (at most 12 cells) they take a fraction of a second. Bigger boards need the
solution (about a minute to solve a 4x4 board the first time, then cached on disk, ``cache.py``)
and a walk over every position (millions, seconds), so their numbers are kept beside the
solution, in ``facts-<board>.json``, and later runs read them in milliseconds. That file is
checked like every file we load: a regular file of at most a few kilobytes before a byte is read,
then every key and value; a file that fails is recounted and rewritten, with a warning, and
anything but a regular file there (a folder, a pipe, a dangling link) is left alone: the numbers
are counted without the cache.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gym_tictactoe import files, game
from gym_tictactoe.game import cache, solver

FORMAT = "gym-tictactoe facts v1"
NAMES = ("X", "O", "draw")
_MAX_BYTES = 4096  # a facts file is about 400 bytes
_COUNTS = ("positions", "terminal", "plies")
Say = Callable[[str], None]


def facts(rules: game.Rules = game.TICTACTOE, say: Say | None = None) -> list[tuple[str, str]]:
    """(label, value) lines about a solvable board, every number computed (or read back from
    this module's cache of what was computed). ``say`` gets a line before each slow step.
    Boards of 17 to 64 cells get the proved value of the empty board alone."""
    if not rules.solvable:
        return proven_facts(rules, say or (lambda _: None))
    numbers = _cached_numbers(rules, say or (lambda _: None))
    value = {1: "X wins", 0: "draw", -1: "O wins"}[numbers["value"]]
    games, random_play = numbers["games"], numbers["random"]
    lines = [
        ("board", f"{rules.rows} x {rules.cols}, {rules.win_length} in a row wins"),
        ("legal positions (reachable in a game)", f"{numbers['positions']:,}"),
        ("terminal positions", f"{numbers['terminal']:,}"),
        ("distinct games (move sequences)", f"{games['games']:,}"),
        ("  won by X / won by O / drawn", f"{games['X']:,} / {games['O']:,} / {games['draw']:,}"),
        ("value of the empty board, perfect play", f"{value} in {numbers['plies']} plies"),
        ("random vs random, exact: X / O / draw",
         " / ".join(f"{random_play[name]:.4f}" for name in NAMES)),
    ]
    if rules.tabled:  # one canonical code per position: a table look-up
        canonical = np.unique(rules.tables.canonical[rules.reachable]).size
        lines.insert(3, ("positions up to symmetry", f"{canonical:,}"))
    return lines


def proven_facts(rules: game.Rules, say: Say) -> list[tuple[str, str]]:
    """The board and its proved value (too many positions to count), or "unknown" with the
    budget that ran out."""
    from gym_tictactoe.game import proven  # the proof solver's edge: only beyond 16 cells

    proven.check_provable(rules)
    if proven.proof_cache(rules).get(game.EMPTY_BOARD) is None:
        say(f"proving the {rules.name} board (at most {proven.BUDGET:,} nodes; the value is then "
            f"kept in {proven.proof_cache(rules).path})…")
    value = proven.value(game.EMPTY_BOARD, rules)
    text = ("unknown: not proved within the budget" if value is None
            else {1: "X wins", 0: "draw", -1: "O wins"}[value] + " (proved)")
    return [("board", f"{rules.rows} x {rules.cols}, {rules.win_length} in a row wins"),
            ("value of the empty board, perfect play", text)]


def compute(rules: game.Rules, say: Say) -> dict[str, Any]:
    """The numbers of ``facts``, from the solution and the reachable positions."""
    if not rules.tabled and not cache.cache_path(rules).exists():
        say(f"solving the {rules.name} board (about a minute for 16 cells; once: the solution "
            f"is kept in {cache.cache_dir()})…")
    solution = _solve_quietly(rules)
    if not rules.tabled:
        say(f"counting the positions and games of the {rules.name} board (once: the counts are "
            "kept beside the solution)…")
    layers = rules.positions
    return {
        "positions": sum(layer.codes.size for layer in layers),
        "terminal": sum(int(layer.terminal.sum()) for layer in layers),
        "games": game.count_games(rules),
        "value": solver.value(game.EMPTY_BOARD, rules),
        "plies": int(solution.distance_of([game.EMPTY_BOARD])[0]),
        "random": game.random_play_outcome(rules),
    }


def _solve_quietly(rules: game.Rules) -> Any:
    """``solver.solve`` without the cache's own note on solving: ``compute`` said it already,
    in the caller's words."""
    disabled, cache.LOG.disabled = cache.LOG.disabled, True
    try:
        return solver.solve(rules)
    finally:
        cache.LOG.disabled = disabled


def facts_path(rules: game.Rules) -> Path:
    return cache.cache_dir() / f"facts-{rules.name}.json"


def _cached_numbers(rules: game.Rules, say: Say) -> dict[str, Any]:
    if rules.tabled:  # fast enough to compute every time
        return compute(rules, say)
    path = facts_path(rules)
    try:
        return _read(path, rules)
    except FileNotFoundError:
        pass  # not counted yet
    except files.NotRegularFile as error:  # neither readable nor ours to replace
        warnings.warn(f"counting the {rules.name} facts without the cache: {error}",
                      stacklevel=3)
        return compute(rules, say)
    except (OSError, ValueError) as error:
        warnings.warn(f"recounting the {rules.name} facts: the cache file {path} is "
                      f"unusable ({error})", stacklevel=3)
    numbers = compute(rules, say)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with files.atomic_path(path) as temp:
            temp.write_text(json.dumps({"format": FORMAT, "board": rules.name, **numbers}))
    except (OSError, ValueError) as error:  # a read-only cache must not stop the answer
        warnings.warn(f"could not keep the {rules.name} facts in {path}: {error}", stacklevel=3)
    return numbers


def _read(path: Path, rules: game.Rules) -> dict[str, Any]:
    """The numbers in a facts file, every key and value checked (a ValueError saying which)."""
    # Its type and size checked on the open file: a named pipe never blocks, a huge file is
    # never read.
    with files.open_regular(path, "facts file", _MAX_BYTES) as file:
        text = file.read(_MAX_BYTES)
    try:
        data = json.loads(text)
    except RecursionError:  # a few kilobytes of "[[[[..." nest deeper than the parser goes
        raise ValueError("it nests deeper than a facts file does") from None
    if not isinstance(data, dict) or [data.get("format"), data.get("board")] != [FORMAT,
                                                                                rules.name]:
        raise ValueError(f"it is not a {FORMAT} file for the {rules.name} board")
    keys = {"format", "board", *_COUNTS, "games", "value", "random"}
    if set(data) != keys:
        raise ValueError(f"its keys are {sorted(data)}, not {sorted(keys)}")
    games, random_play = data["games"], data["random"]
    counts = [data[key] for key in _COUNTS]
    if isinstance(games, dict) and set(games) == {"games", *NAMES}:
        counts += games.values()
    if not all(type(n) is int and n >= 0 for n in counts) or len(counts) != len(_COUNTS) + 4:
        raise ValueError("its counts are not all non-negative integers")
    if not (isinstance(random_play, dict) and set(random_play) == set(NAMES)
            and all(type(p) is float and 0 <= p <= 1 for p in random_play.values())):
        raise ValueError("its random-play probabilities are not three floats in [0, 1]")
    if type(data["value"]) is not int or data["value"] not in (-1, 0, 1):
        raise ValueError(f"its game value {data['value']!r} is not -1, 0 or 1")
    return data

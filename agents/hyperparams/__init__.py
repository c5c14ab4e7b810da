"""``train.py``'s defaults, per algorithm and board: one YAML file per algorithm in this folder
(``q.yml``, ``alphazero.yml``, ``dqn.yml``, ``ppo.yml``, ``maskable-ppo.yml``), as rl_zoo3 keeps
``hyperparams/<algo>.yml``.

Each file holds a ``default`` entry, which gives every key, and one entry per board (its name,
e.g. ``4x4x3``) that gives the keys it changes. A key is a ``train.py`` flag's name without its
dashes (``focus_share`` is ``--focus-share``); ``null`` means the run's own default, as the
comment beside the key says. A flag given overrides that one value. Every file is checked whole
when it is read: a missing key, an unknown key or a value of the wrong kind is a ValueError of
one line naming the file, the entry, the key and what is allowed.
"""

from __future__ import annotations

from argparse import ArgumentTypeError
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from gym_tictactoe import game
from gym_tictactoe.checks import check_choice, check_flag, check_int, check_number

FOLDER = Path(__file__).resolve().parent
DEFAULT = "default"
MAX_BYTES = 64 * 1024  # ours are a few hundred bytes; anything far larger is not one of them
ALGO_FILES = {"q": "q", "alphazero": "alphazero", "dqn": "dqn", "ppo": "ppo",
              "maskable-ppo": "maskable-ppo"}
Check = Callable[[Any, str], Any]


def _int(low: int = 1, none: bool = False) -> Check:
    return partial(check_int, low=low, none=none)


def _number(low: float = 0.0, high: float | None = None, low_open: bool = False,
            none: bool = False) -> Check:
    return partial(check_number, low=low, high=high, low_open=low_open, none=none)


def _choice(*allowed: Any) -> Check:
    return lambda value, name: check_choice(value, name, allowed)


def _opponent(none: bool = False) -> Check:
    """An opponent spec (``gym_tictactoe.players.opponents``), its syntax checked."""
    def check(value: Any, name: str) -> Any:
        from gym_tictactoe.cli.arguments import opponent_spec

        if value is None and none:
            return None
        if not isinstance(value, str):
            raise ValueError(f"{name} must be an opponent spec such as 'minimax' or "
                             f"'epsilon:epsilon=0.4'{' or null' if none else ''}; got {value!r}")
        try:
            return opponent_spec(value)
        except (ValueError, ArgumentTypeError) as error:
            raise ValueError(f"{name}: {error}") from None
    return check


STARTS = {"start": _choice("empty", "random"), "start_probability": _number(0.0, 1.0)}
DEVICE = {"device": _choice("cpu", "cuda", "auto")}
# The keys of each kind of algorithm and the values each takes (the flags' own bounds).
SCHEMAS: dict[str, dict[str, Check]] = {
    "q": {"episodes": _int(), "n_envs": _int(none=True), "eval_every": _int(none=True),
          "opponent": _opponent(), **STARTS, "focus_share": _number(0.0, 1.0),
          "back_share": _number(0.0, 1.0), "forget": check_flag,
          "alpha_end": _number(0.0, 1.0, low_open=True, none=True),
          "alpha_episodes": _int()},
    "alphazero": {"episodes": _int(none=True), "minutes": _number(0.0, low_open=True, none=True),
                  "eval_every": _int(none=True),
                  "eval_minutes": _number(0.0, low_open=True, none=True), **STARTS, **DEVICE,
                  "simulations": _int(), "c_puct": _number(low_open=True),
                  "dirichlet_alpha": _number(low_open=True), "noise_fraction": _number(0.0, 1.0),
                  "temperature": _number(), "temperature_moves": _int(0),
                  "games_per_round": _int(), "steps_per_round": _int(), "batch_size": _int(),
                  "buffer_size": _int(), "learning_rate": _number(0.0, 1.0, low_open=True),
                  "learning_rate_end": _number(0.0, 1.0, low_open=True, none=True),
                  "focus_share": _number(0.0, 1.0), "back_share": _number(0.0, 1.0),
                  "weight_decay": _number(0.0, 1.0), "channels": _int(), "blocks": _int(0),
                  "target": _choice("completed_q", "visits"), "threats": check_flag},
    "sb3": {"timesteps": _int(), "n_envs": _int(), "eval_every": _int(none=True),
            "opponent": _opponent(none=True), **STARTS, "canonical": check_flag, **DEVICE},
}


@dataclass(frozen=True)
class Hyperparameters:
    """One run's values: the file they came from, its entry for the board (``default`` when it
    has none) and every key's value (the default entry's, updated by the board's)."""

    file: Path
    entry: str
    values: dict[str, Any]


def schema_of(algo: str) -> dict[str, Check]:
    """The keys of ``algo``'s file and their checks."""
    return SCHEMAS[algo if algo in ("q", "alphazero") else "sb3"]


def path_of(algo: str, folder: Path = FOLDER) -> Path:
    """Where ``algo``'s file is."""
    return folder / f"{ALGO_FILES[algo]}.yml"


def shown_path(path: Path) -> str:
    """The file as messages name it: ``agents/hyperparams/q.yml`` for ours."""
    try:
        return str(path.resolve().relative_to(FOLDER.parent.parent))
    except ValueError:
        return str(path)


def load(algo: str, board: game.Rules, folder: Path = FOLDER) -> Hyperparameters:
    """``algo``'s values on ``board``: its file read and checked whole (a ValueError of one line
    for anything wrong in it), the board's entry over the default one."""
    path = path_of(algo, folder)
    entries = read(path, schema_of(algo))
    entry = board.name if board.name in entries else DEFAULT
    values = {**entries[DEFAULT], **(entries[entry] if entry != DEFAULT else {})}
    return Hyperparameters(path, entry, values)


def read(path: Path, schema: dict[str, Check]) -> dict[str, dict[str, Any]]:
    """Every entry of the file at ``path``, each value checked against ``schema``."""
    import yaml  # a core dependency: train.py reads these files for every algorithm

    from gym_tictactoe.files import open_regular

    where = shown_path(path)
    try:
        with open_regular(path, "hyperparameter file", MAX_BYTES) as file:
            data = yaml.safe_load(file)
    except (OSError, ValueError) as error:
        raise ValueError(f"{where}: cannot be read: {error}") from None
    except yaml.YAMLError as error:
        raise ValueError(f"{where}: not valid YAML: {' '.join(str(error).split())}") from None
    if not isinstance(data, dict) or not isinstance(data.get(DEFAULT), dict):
        raise ValueError(f"{where}: must map '{DEFAULT}' and board names (e.g. 4x4x3) to "
                         "entries of KEY: VALUE; it has no default entry")
    return {_entry_name(name, where): _entry(where, name, entry, schema)
            for name, entry in data.items()}


def _entry_name(name: Any, where: str) -> str:
    """``default`` or a board's name as ``train.py --board`` writes it."""
    if name == DEFAULT:
        return DEFAULT
    try:
        board = game.rules(*game.parse_board(str(name)))
    except ValueError as error:
        raise ValueError(f"{where}: entry {name!r} is neither '{DEFAULT}' nor a board "
                         f"(RxCxK): {error}") from None
    if board.name != name:
        raise ValueError(f"{where}: entry {name!r}: write the board as {board.name!r}")
    return board.name


def _entry(where: str, name: Any, entry: Any, schema: dict[str, Check]) -> dict[str, Any]:
    """One entry's values, checked: the default entry gives every key."""
    allowed = ", ".join(schema)
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: entry {name}: must be a mapping of KEY: VALUE (keys: "
                         f"{allowed}); got {entry!r}")
    for key in entry:
        if key not in schema:
            raise ValueError(f"{where}: entry {name}: unknown key {key!r}; allowed: {allowed}")
    if name == DEFAULT:
        missing = [key for key in schema if key not in entry]
        if missing:
            raise ValueError(f"{where}: entry {DEFAULT}: key {missing[0]!r} is missing (the "
                             f"default entry gives every key: {allowed})")
    checked = {}
    for key, value in entry.items():
        try:
            checked[key] = schema[key](value, key)
        except ValueError as error:
            raise ValueError(f"{where}: entry {name}: {error}") from None
    return checked


# A file value that only refines a setting the flags turned off is not applied: with --start
# empty, the random starts' share and their aim; with no aimed starts, forgetting their rows;
# with a fixed learning-rate floor, the span of its annealing; with AlphaZero's --minutes alone,
# a budget of games.
OFF_WITH_EMPTY_STARTS = ("start_probability", "focus_share", "back_share", "forget")


def fill(args: Any, folder: Path = FOLDER) -> dict[str, Any]:
    """Set each key of ``args.algo``'s file that the flags left unset (None) on ``args`` (an
    argparse namespace) to the file's value for ``args.board``; returns what results.json
    records: the file, its entry, every key's value in the run (None: not applied) and the
    keys the flags gave. A ValueError of one line for a bad file."""
    params = load(args.algo, args.board, folder)
    given = {key: getattr(args, key) for key in params.values if getattr(args, key) is not None}
    skipped = set(OFF_WITH_EMPTY_STARTS) if given.get("start") == "empty" else set()
    for key, value in params.values.items():
        if key not in given and key not in skipped:
            setattr(args, key, value)
    if "forget" in params.values:
        _unless(args, given, "forget", args.focus_share or args.back_share)
        _unless(args, given, "alpha_episodes", args.alpha_end is not None)
    if "minutes" in params.values:  # --minutes alone: a budget of training time only
        _unless(args, given, "episodes", "minutes" not in given)
    return {"file": shown_path(params.file), "entry": params.entry,
            "values": {key: getattr(args, key) for key in params.values},
            "from_flags": sorted(given)}


def _unless(args: Any, given: dict[str, Any], key: str, needed: Any) -> None:
    """Leave ``key`` unset when the file gave it (not a flag) and what it refines is off."""
    if key not in given and not needed:
        setattr(args, key, None)

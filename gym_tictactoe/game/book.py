"""The opening book of boards of 17 to 64 cells: the proved value of every position of the
first few plies, built once and cached on disk, so that a perfect reply in the opening is a
look-up instead of a proof of each move.

The book holds the value for the side to move of every position with at most ``plies(rules)``
stones, up to symmetry (keyed by the canonical code, as the proof cache is). A position with
fewer stones than that then has every move's value in the book. Positions whose proof ran out of
the build's node budget (``BUILD_BUDGET`` per position) are left out: never a guessed value.

``book-<board>.json`` sits beside the proof cache (``$GYM_TICTACTOE_CACHE``, else the user's
cache folder), under the same trust rules: a regular file of bounded size, checked before a byte
is read, then every key and value; a corrupt or foreign file is ignored with a warning and
rebuilt; a link, a folder, a named pipe or a device is ignored with a warning and never written;
saves are atomic. Beyond the book, :func:`move_values` asks the proof cache, then the prover.
"""

from __future__ import annotations

import json
import logging
import warnings
from functools import cache
from pathlib import Path

from gym_tictactoe import files
from gym_tictactoe.checks import check_int
from gym_tictactoe.game import NO_WINNER, Rules
from gym_tictactoe.game.cache import cache_dir
from gym_tictactoe.game.proofcache import checked_values, read_json

FORMAT = "gym-tictactoe book v1"
MAX_ENTRIES = 20_000
_MAX_BYTES = 48 * MAX_ENTRIES + 1024
BUILD_BUDGET = 10**7  # nodes per position while building
# Stones per book position, chosen per board from the measured cost of proving each layer (see
# docs/opponents.md). Elsewhere the book holds the empty board alone: on 6x6x4 proving the six
# positions of one stone did not finish in minutes.
PLIES = {"4x5x4": 4, "5x4x4": 4, "5x5x4": 3, "4x6x4": 2, "6x4x4": 2}
DEFAULT_PLIES = 0
LOG = logging.getLogger(__name__)  # under "gym_tictactoe", as the solver's own message


def plies(rules: Rules) -> int:
    return PLIES.get(rules.name, DEFAULT_PLIES)


def book_path(rules: Rules) -> Path:
    return cache_dir() / f"book-{rules.name}.json"


def layers(rules: Rules, depth: int) -> list[list[int]]:
    """The canonical codes of every reachable position with 0..``depth`` stones, a list per
    number of stones (finished positions included, never expanded)."""
    found = [[rules.canonical(0)]]
    for _ in range(depth):
        nxt = {rules.canonical(rules.play(code, cell))
               for code in found[-1] if not rules.is_terminal(code)
               for cell in rules.legal_moves(code)}
        found.append(sorted(nxt))
    return found


def build(rules: Rules, depth: int | None = None, budget: int = BUILD_BUDGET) -> dict[int, int]:
    """The book's values, proved now: ``depth`` stones at most (``plies(rules)`` by default)."""
    from gym_tictactoe.game import proven

    stones = plies(rules) if depth is None else int(check_int(depth, "depth", 0, rules.n_cells)
                                                    or 0)
    prover, values = proven.prover(rules), {}
    saved = prover.budget
    prover.budget = check_int(budget, "budget", 1, 1 << 62)
    try:
        for layer in layers(rules, stones):
            for code in layer:
                value = _terminal_value(rules, code)
                value = prover.value(code) if value is None else value
                if value is not None:
                    values[code] = value
    finally:
        prover.budget = saved
    if len(values) > MAX_ENTRIES:
        raise ValueError(f"a book of {len(values):,} positions is over {MAX_ENTRIES:,}: ask for "
                         f"fewer plies on {rules.name}")
    return values


def _terminal_value(rules: Rules, code: int) -> int | None:
    if not rules.is_terminal(code):
        return None
    return 0 if rules.winner(code) == NO_WINNER else -1


def read(path: Path, rules: Rules) -> tuple[int, dict[int, int]]:
    """(plies, values) of a book file, every field checked (a ValueError saying which)."""
    data = read_json(path, "opening book", _MAX_BYTES)
    if not isinstance(data, dict) or set(data) != {"format", "board", "plies", "values"} \
            or [data["format"], data["board"]] != [FORMAT, rules.name]:
        raise ValueError(f"it is not a {FORMAT} file for the {rules.name} board")
    depth = data["plies"]
    if type(depth) is not int or not 0 <= depth <= rules.n_cells:
        raise ValueError(f"its plies {depth!r} are not a number of stones on {rules.name}")
    return depth, checked_values(data["values"], rules, MAX_ENTRIES)


def write(path: Path, rules: Rules, depth: int, values: dict[int, int]) -> None:
    """Save atomically; only a missing file or a regular file of ours is replaced."""
    if path.is_symlink():
        raise files.NotRegularFile(f"{path} is a symbolic link")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "board": rules.name, "plies": depth,
            "values": {str(code): value for code, value in values.items()}}
    with files.atomic_path(path) as temp:
        temp.write_text(json.dumps(data))


def load_or_build(rules: Rules) -> dict[int, int]:
    """The board's book: read from disk, else built (and saved where the path allows)."""
    path, depth = book_path(rules), plies(rules)
    writable = True
    try:
        stored, values = read(path, rules)
        if stored == depth:
            return values
        warnings.warn(f"rebuilding the {rules.name} opening book {path}: it holds {stored} "
                      f"plies, not {depth}", stacklevel=2)
    except FileNotFoundError:
        pass
    except files.NotRegularFile as error:  # neither readable nor ours to replace
        writable = False
        warnings.warn(f"building the {rules.name} opening book without saving it: {error}",
                      stacklevel=2)
    except (OSError, ValueError) as error:
        warnings.warn(f"rebuilding the opening book {path}: it is unusable ({error})",
                      stacklevel=2)
    if depth:  # the empty board alone is one proof, not worth a word
        LOG.warning("gym_tictactoe: building the %s opening book once (proofs of every position "
                    "of up to %d stones: a minute or two; kept in %s)", rules.name, depth, path)
    values = build(rules, depth)
    if writable:
        try:
            write(path, rules, depth, values)
        except (OSError, ValueError) as error:  # a read-only cache must not stop the answer
            warnings.warn(f"could not keep the {rules.name} opening book in {path}: {error}",
                          stacklevel=2)
    return values


@cache
def book(rules: Rules) -> dict[int, int]:
    """The board's book, once per process."""
    return load_or_build(rules)


def to_move_value(code: int, rules: Rules, budget: int | None = None) -> int | None:
    """The value for the side to move at ``code``: the book (when ``code`` is within its
    plies), the proof cache, else a proof of at most ``budget`` nodes (the prover's own by
    default); None when unknown. New proofs are not written to the proof cache: that file is
    rewritten on every new value, too costly for the many questions of a game or a sample."""
    from gym_tictactoe.game import proven

    value = _terminal_value(rules, code)
    if value is not None:
        return value
    key = rules.canonical(code)
    found = book(rules).get(key) if _stones(rules, code) <= plies(rules) else None
    if found is None:
        found = proven.proof_cache(rules).values.get(key)
    if found is not None:
        return found
    prover = proven.prover(rules)
    saved = prover.budget
    if budget is not None:
        prover.budget = check_int(budget, "budget", 1, 1 << 62)
    try:
        return prover.value(code)
    finally:
        prover.budget = saved


def _stones(rules: Rules, code: int) -> int:
    return int((rules.decode(code) != 0).sum())


def move_values(code: int, rules: Rules, budget: int | None = None) -> dict[int, int | None]:
    """Each legal move's value for the side to move at ``code`` (None where unknown)."""
    out: dict[int, int | None] = {}
    for cell in rules.legal_moves(code):
        found = to_move_value(rules.play(code, cell), rules, budget)
        out[cell] = None if found is None else -found
    return out


def best_of(values: dict[int, int | None]) -> list[int] | None:
    """The value-keeping moves among ``values``: every move proved a win where there is one
    (no move does better), else those of the best value when every value is known; None when
    an unknown value might be better than the known ones."""
    wins = [cell for cell, value in values.items() if value == 1]
    if wins:
        return sorted(wins)
    if not values or None in values.values():
        return None if values else []
    best = max(v for v in values.values() if v is not None)
    return sorted(cell for cell, v in values.items() if v == best)

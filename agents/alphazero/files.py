"""AlphaZero model files: an ``.npz`` of two plain arrays, written atomically, read without
pickle.

``alphazero`` holds a JSON header: the format marker, the board, the network's settings, each
layer's name and shape in order, and the self-play games trained. ``weights`` holds every
layer's float32 values, concatenated in that order. Reading checks the header's layers against
the network its settings build (names and shapes) and the weights' size against their sum
before reading any weight, so a file never allocates more than its network needs; a weight that
is NaN or infinite is refused.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.alphazero.network import (
    NetworkSettings,
    PolicyValueNet,
    build,
    expected_shapes,
    state_arrays,
)
from agents.archives import open_zip
from gym_tictactoe import game
from gym_tictactoe.checks import check_int
from gym_tictactoe.files import atomic_path
from gym_tictactoe.files.npz import Entry, array_entry, check_finite, read_entry

FORMAT = "gym_tictactoe.alphazero/1"
HEADER, WEIGHTS = "alphazero", "weights"
MEMBERS = {f"{HEADER}.npy", f"{WEIGHTS}.npy"}
_HEADER_ENTRY = Entry("U", None, (), 256 * 1024)


@dataclass
class Model:
    """What a file holds: the board, the network (weights loaded) and the games it trained."""

    rules: game.Rules
    net: PolicyValueNet
    games: int


def save(path: str | os.PathLike, net: PolicyValueNet, rules: game.Rules, games: int = 0
         ) -> Path:
    """Write ``net`` for ``rules``'s board to ``path`` (that exact name) atomically."""
    arrays = state_arrays(net)
    header = {"format": FORMAT, "board": rules.kwargs, "network": net.settings.as_dict(),
              "layers": [[name, list(a.shape)] for name, a in arrays.items()],
              "games": int(games)}
    flat = np.concatenate([a.ravel() for a in arrays.values()]).astype(np.float32)
    path = Path(path)
    with atomic_path(path) as temp, open(temp, "wb") as file:
        # mypy matches the ** arrays to savez's allow_pickle (a bool) as well
        np.savez(file, **{HEADER: np.array(json.dumps(header)), WEIGHTS: flat})  # type: ignore[arg-type]
    return path


class _BadFile(ValueError):
    pass


def _bad(path: Path, problem: str) -> ValueError:
    return _BadFile(f"{path} is not an AlphaZero model file: {problem}; expected an .npz written "
                    f"by agents.alphazero.files.save (format {FORMAT!r})")


def load(path: str | os.PathLike, rules: game.Rules | None = None) -> Model:
    """The model at ``path``; with ``rules``, it must play that board. FileNotFoundError, or a
    ValueError saying what is wrong (another board, another algorithm's file, layer shapes
    that do not match the header, weights that are not finite, a damaged file)."""
    path = Path(path)
    bad = partial(_bad, path)
    with open_zip(path, bad, "AlphaZero model file") as archive:
        names = set(archive.namelist())
        if names != MEMBERS:
            raise bad(f"it holds {sorted(names)[:4]}, not {sorted(MEMBERS)}")
        header = read_header(read_entry(archive, HEADER, _HEADER_ENTRY, bad), bad)
        board, settings, shapes = check_header(header, bad)
        if rules is not None and board != rules:
            raise ValueError(f"{path} plays the {board.name} board, not {rules.name}")
        total = sum(int(np.prod(shape)) for shape in shapes.values())
        flat = read_entry(archive, WEIGHTS, array_entry("f", 4, (total,)), bad)
    check_finite(flat, WEIGHTS, bad)
    weights, at = {}, 0
    for name, shape in shapes.items():
        size = int(np.prod(shape))
        weights[name] = flat[at:at + size].reshape(shape)
        at += size
    return Model(board, build(settings, weights), header["games"])


def read_header(text: npt.NDArray, bad: Any, expected: str = FORMAT) -> dict[str, Any]:
    """The JSON header ``text``, a dict whose format is ``expected``; else ``bad(problem)``."""
    try:
        header = json.loads(str(text))
    except (ValueError, RecursionError) as error:
        raise bad(f"its header is not JSON ({str(error)[:80]})") from None
    if not isinstance(header, dict) or header.get("format") != expected:
        found = header.get("format") if isinstance(header, dict) else None
        raise bad(f"its header's format is {str(found)[:80]!r}")
    return header


def check_header(header: dict[str, Any], bad: Any
                  ) -> tuple[game.Rules, NetworkSettings, dict[str, tuple[int, ...]]]:
    """The board, settings and layer shapes of a header, each checked."""
    try:
        board = game.rules(**_fields(header, "board", ("rows", "cols", "win_length")))
        settings = NetworkSettings(**_fields(header, "network", ("channels", "blocks")))
        check_int(header.get("games"), "games", 0)
    except (TypeError, ValueError) as error:
        raise bad(f"its header is wrong: {error}") from None
    expected = expected_shapes(settings)
    layers: Any = header.get("layers")  # anything a file holds: checked by the loop below
    try:
        found = {str(name): tuple(int(n) for n in shape) for name, shape in layers}
    except (TypeError, ValueError):
        raise bad("its header's layers are not [name, shape] pairs") from None
    if list(found) != list(expected) or found != expected:
        wrong = next((n for n in expected if found.get(n) != expected[n]), "the layer names")
        raise bad(f"its layer {wrong!r} does not match the network its header describes "
                  f"(channels {settings.channels}, blocks {settings.blocks})")
    return board, settings, expected


def _fields(header: dict[str, Any], key: str, names: tuple[str, ...]) -> dict[str, Any]:
    part = header.get(key)
    if not isinstance(part, dict) or set(part) != set(names):
        raise ValueError(f"{key} must hold {', '.join(names)}")
    return part

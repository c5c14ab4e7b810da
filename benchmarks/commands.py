"""The command that wrote a committed results file, as the file records it (``"command"``), for
the docs tables: the README's summary states the command behind each figure, not a shorter one
that measures something else."""

from __future__ import annotations

import shlex
from typing import Any

SEED = "S"  # the seed, in a command shared by one results file per seed


def recorded(*files: dict[str, Any]) -> str:
    """The recorded command of ``files``, in backticks, ``--out PATH`` left out (where it wrote).
    Several files, one per seed in seed order, give one command: the seed as ``S`` and a value
    that differs as its values in seed order (``--minutes 14/9/9``); files whose commands differ
    in more than values, each command, joined by "; "."""
    commands = [_words(data["command"]) for data in files]
    if len(commands) > 1:
        commands = [_with_seed(words) for words in commands]
        merged = _merge(commands)
        if merged is not None:
            return f"`{' '.join(merged)}`"
    return "; ".join(f"`{' '.join(words)}`" for words in commands)


def _words(command: str) -> list[str]:
    words = shlex.split(command)
    if "--out" in words:
        at = words.index("--out")
        del words[at : at + 2]
    return words


def _with_seed(words: list[str]) -> list[str]:
    """The seed written out where a command left it to its default (0), after the board."""
    if "--seed" in words or "--board" not in words:
        return words
    at = words.index("--board") + 2
    return [*words[:at], "--seed", "0", *words[at:]]


def _merge(commands: list[list[str]]) -> list[str] | None:
    """One command for all, or None when they differ in more than values."""
    if len({len(words) for words in commands}) > 1:
        return None
    merged = []
    for at, values in enumerate(zip(*commands, strict=True)):
        if len(set(values)) == 1:
            merged.append(values[0])
        elif at and commands[0][at - 1] == "--seed":
            merged.append(SEED)
        elif any(value.startswith("--") for value in values):
            return None
        else:
            merged.append("/".join(values))
    return merged

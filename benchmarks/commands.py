"""A benchmark's command line: the parser each benchmark starts from, the command a results file
records (``"command"``), a benchmark run in a child process, and the recorded command read back
for the docs tables (the README's summary states the command behind each figure, not a shorter
one that measures something else)."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SEED = "S"  # the seed, in a command shared by one results file per seed
RUNNER = "python -m benchmarks"
ROOT = Path(__file__).resolve().parents[1]
# How results files written before the runner record a benchmark: ``python benchmarks/NAME.py``.
SCRIPT = re.compile(r"^python benchmarks/(?P<name>\w+)\.py(?=\s|$)")


def argument_parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of benchmark ``module`` (its ``__name__``): usage lines name the runner's
    command, the description is the first paragraph of its docstring."""
    name = module.rpartition(".")[2]
    return argparse.ArgumentParser(prog=f"{RUNNER} {name}",
                                   description=(doc or "").split("\n\n")[0])


def command_line(module: str, argv: Sequence[str] | None = None) -> str:
    """The command of this run of benchmark ``module`` (its ``__name__``) as its results file
    records it, ``python -m benchmarks NAME ARGS``: ``argv``, else the arguments the runner got
    after the name. An absolute path inside the repository is written from its root, so that
    the command reproduces in another checkout."""
    args = sys.argv[2:] if argv is None else argv
    return " ".join([RUNNER, module.rpartition(".")[2], *map(_from_root, args)])


def _from_root(arg: str) -> str:
    """``arg`` with a leading absolute path inside ``ROOT`` (alone, or after ``--flag=``) made
    relative to it."""
    flag, equals, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    inside = str(ROOT) + os.sep
    return flag + equals + value[len(inside):] if value.startswith(inside) else arg


def child(name: str, *args: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run benchmark ``name`` with ``args`` in a new process
    from any folder (the repository's root first on its path: the benchmarks are not
    installed)."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return [sys.executable, "-m", "benchmarks", name, *args], {**os.environ, "PYTHONPATH": path}


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
    words = shlex.split(SCRIPT.sub(lambda found: f"{RUNNER} {found['name']}", command))
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

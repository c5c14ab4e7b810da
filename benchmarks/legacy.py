"""The pure-Python search players as they were before the compiled core, loaded from git history
so that a benchmark can measure old against new in one run (no Python copy is kept in the
package): ``old_alphabeta()`` and ``old_mcts()`` give the old player classes.

The files are read with ``git show REV:PATH`` into a temporary package whose imports are
rewritten to point at each other; everything else they import (rules, checks) is today's.
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

# The last commit with the Python alpha-beta and mcts searches (branch core, before issue 26's
# compiled players replaced them).
REV = "9abc41813b528c1f1b603cce3affe00016e95dac"
PACKAGE = "legacy_search"
FILES = ("threats", "negamax", "search", "mcts_board", "mcts")
ROOT = Path(__file__).resolve().parent.parent
_loaded: dict[str, ModuleType] = {}


def _package() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="legacy-search-"))
    target = folder / PACKAGE
    target.mkdir()
    (target / "__init__.py").write_text("")
    for name in FILES:
        source = subprocess.run(["git", "show", f"{REV}:gym_tictactoe/players/{name}.py"],
                                cwd=ROOT, check=True, capture_output=True, text=True).stdout
        for other in FILES:
            source = source.replace(f"gym_tictactoe.players.{other} ", f"{PACKAGE}.{other} ")
        (target / f"{name}.py").write_text(source)
    return folder


def module(name: str) -> ModuleType:
    """The old module ``name`` (one of FILES)."""
    if not _loaded:
        # The package is imported from its folder by name, with no change to sys.path; its
        # modules then find each other through the package's own __path__.
        init = _package() / PACKAGE / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            PACKAGE, init, submodule_search_locations=[str(init.parent)])
        assert spec is not None and spec.loader is not None
        sys.modules[PACKAGE] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[PACKAGE])
        for other in FILES:
            _loaded[other] = importlib.import_module(f"{PACKAGE}.{other}")
    return _loaded[name]


def old_alphabeta() -> type:
    return module("search").AlphaBetaPlayer


def old_mcts() -> type:
    return module("mcts").MCTSPlayer


def record_alphabeta(path: Path, budgets: tuple[int, ...] = (300, 2000)) -> None:
    """Write the old player's answers on seeded positions of 6x6x4, 7x7x5 and 15x15x5 (the
    fixture ``tests/players/test_search_fixture.py`` holds the compiled player to)."""
    import json

    import numpy as np

    from gym_tictactoe import game

    player, cases = old_alphabeta(), []
    for rows, cols, k in ((6, 6, 4), (7, 7, 5), (15, 15, 5)):
        rules = game.rules(rows, cols, k)
        for seed in range(3):
            rng, board = np.random.default_rng(seed), np.zeros(rules.n_cells, np.int8)
            for ply in range(rules.n_cells - 1):
                mark = game.X if ply % 2 == 0 else game.O
                if ply >= 4 and ply % 6 == 4:
                    for budget in budgets:
                        found = player(rows, cols, k, max_nodes=budget).search(board, mark)
                        cases.append({"board": f"{rows}x{cols}x{k}", "max_nodes": budget,
                                      "cells": "".join(".XO"[v] for v in board),
                                      "moves": list(found.moves), "score": found.score,
                                      "depth": found.depth, "nodes": found.nodes})
                empty = np.flatnonzero(board == 0)
                board[int(empty[int(rng.random() * empty.size)])] = mark
                if rules.winner(rules.encode(board)) != game.NO_WINNER:
                    break
    path.write_text(json.dumps({"source": f"git {REV}: the Python alpha-beta player",
                                "cases": cases}, indent=0) + "\n")

"""Tic-tac-toe is the default board of the public entry points that document it (the envs, the
opponents, the solver, the SB3 helpers), and of nothing else: an internal function takes the
board's ``Rules`` from its caller, and ``gym_tictactoe.game`` keeps no 3x3 alias tables."""

import ast
import importlib
from pathlib import Path

import pytest

from gym_tictactoe import game

ROOT = Path(__file__).resolve().parents[1]
# Public functions whose documented default is tic-tac-toe, as the env's rows=cols=win_length=3.
DOCUMENTED = {
    "gym_tictactoe/game/solver.py": {"solve", "value", "best_moves", "value_keeping_moves"},
    "gym_tictactoe/game/counting.py": {"count_games", "random_play_outcome"},
    "gym_tictactoe/game/facts.py": {"facts"},
    "gym_tictactoe/players/opponents.py": {"resolve_opponent", "parse_opponent"},
    "agents/sb3/training.py": {"make_env", "make_vec_env", "make_training_env", "train",
                               "__init__"},
    "agents/sb3/files.py": {"save_model"},
    "agents/self_play.py": {"__init__"},
}


def defaults_to_tictactoe(name: str, default: ast.AST) -> bool:
    """Whether a parameter's default is ``TICTACTOE`` (under any module prefix) or, for a
    ``n_cells``, any number of cells at all (it was 3x3's 9)."""
    return name == "n_cells" or (isinstance(default, ast.Name) and default.id == "TICTACTOE") or (
        isinstance(default, ast.Attribute) and default.attr == "TICTACTOE")


def functions_defaulting_to_3x3(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args][-len(args.defaults):] \
                if args.defaults else []
            pairs = [*zip(positional, args.defaults, strict=True),
                     *((arg, d) for arg, d in zip(args.kwonlyargs, args.kw_defaults,
                                                  strict=True) if d is not None)]
            if any(defaults_to_tictactoe(arg.arg, default) for arg, default in pairs):
                found.add(node.name)
    return found


@pytest.mark.parametrize("path", sorted(
    str(path.relative_to(ROOT)) for folder in ("gym_tictactoe", "agents")
    for path in (ROOT / folder).rglob("*.py")))
def test_only_documented_entry_points_default_to_tictactoe(path):
    assert functions_defaulting_to_3x3(ROOT / path) <= DOCUMENTED.get(path, set())


def test_the_3x3_alias_block_is_gone():
    for name in ("CELLS", "WINNER", "TO_MOVE", "TERMINAL", "LEGAL_MASK", "IS_REACHABLE",
                 "N_CELLS", "N_CODES", "POW3", "ROWS", "encode", "decode", "play", "winner"):
        assert not hasattr(game, name), name
    with pytest.raises(ImportError):
        importlib.import_module("gym_tictactoe.game.tictactoe")
    # What they named is tic-tac-toe's own:
    assert game.TICTACTOE.tables.cells.shape == (game.TICTACTOE.n_codes, 9)

"""Run the project's programs as if some packages were not installed (the optional extras)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BLOCK_IMPORTS = """
import sys
from importlib.abc import MetaPathFinder

class Block(MetaPathFinder):  # as if these packages were not installed
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

BLOCKED = set(sys.argv[1].split(","))
sys.meta_path.insert(0, Block())
sys.argv = sys.argv[2:]
"""


def run_without(packages: str, *argv: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """``python -m gym_tictactoe ARGV`` (or a script, if ARGV starts with a .py) in a process
    where ``packages`` cannot be imported."""
    if argv[0].endswith(".py"):
        main = f"import runpy; runpy.run_path({argv[0]!r}, run_name='__main__')"
    else:
        main, argv = "import runpy; runpy.run_module('gym_tictactoe', run_name='__main__')", \
            ("gym_tictactoe", *argv)
    return subprocess.run([sys.executable, "-c", BLOCK_IMPORTS + main, packages, *argv],
                          cwd=cwd, capture_output=True, text=True, timeout=300, check=False)

"""Train an agent on TicTacToe-v0 from a checkout: ``python train.py --help``. The command line
is ``agents.run.cli``, installed as the console script ``gym-tictactoe-train``."""

import sys

from agents.run.cli import main, parse_args

__all__ = ["main", "parse_args"]

if __name__ == "__main__":
    sys.exit(main())

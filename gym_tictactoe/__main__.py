"""``python -m gym_tictactoe play | arena | facts``: see :mod:`gym_tictactoe.cli`."""

from gym_tictactoe.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

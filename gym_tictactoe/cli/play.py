"""``python -m gym_tictactoe play``: you against an opponent, in the terminal or a window.

In the terminal the board is printed once a turn, after the opponent's reply (small boards with
each empty cell's number, bigger ones compact with column letters and row numbers,
``text_board``), the last move in parentheses and, on a colour terminal, the winning line in
reverse video. A cell is typed as its number, ``row col`` or ``h8`` (``notation``); the prompt
has line editing (readline) where Python has it. After each game the running score is printed
and Enter plays another in the same seats, ``s`` swaps them, ``q`` quits. ``--gui`` plays in the
``human`` render's pygame window instead (``gui``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections import Counter
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.error import DependencyNotInstalled

from gym_tictactoe import game
from gym_tictactoe.cli.arguments import player_names, player_spec, seed_arg
from gym_tictactoe.cli.match import EXIT_MISSING_EXTRA, Quit, play_game, result_line
from gym_tictactoe.cli.models import players_for
from gym_tictactoe.envs import rendering
from gym_tictactoe.game import notation
from gym_tictactoe.players.opponents import Opponent

QUIT_WORDS = ("q", "quit")
AGAIN = {"": "same", "y": "same", "yes": "same", "same": "same", "s": "swap", "swap": "swap",
         **{word: "quit" for word in (*QUIT_WORDS, "n", "no")}}


def default_opponent(rules: game.Rules) -> str:
    """The strongest built-in player for the board: the perfect one where the board is solved
    (at most 16 cells), the search player elsewhere."""
    return "minimax" if rules.solvable else "alphabeta"


def add_play(subparsers: argparse._SubParsersAction, add_board) -> None:
    play = subparsers.add_parser(
        "play", help="play against an opponent in the terminal (or a window: --gui)",
        description="Play in the terminal. Type a cell as its number (0-8 on 3x3, as shown on "
        "the empty cells: the env's action numbers), as 'row col' from 0 at the top left, or "
        "as a letter and a number (h8: the column letters and row numbers on a big board's "
        "edges); q quits. After a game, play another in the same or swapped seats; the score "
        "is kept. End of input leaves (exit 0); Ctrl-C exits 130.",
    )
    play.add_argument("--opponent", default=None, type=player_spec,
                      help="who you play against: a name or spec, as train.py --opponent "
                      f"({', '.join(player_names())}; default: the strongest for the board, "
                      "minimax (which never loses) up to 16 cells, alphabeta beyond), or a "
                      "model file train.py wrote (an AlphaZero model with a search of N "
                      "simulations a move: model.npz:simulations=N)")
    play.add_argument("--as", dest="mark", default="X", choices=("X", "O"),
                      help="your mark; X moves first (default: X)")
    play.add_argument("--seed", type=seed_arg, default=None,
                      help="seed for the opponent's random choices, 0 <= seed < 2**32 "
                      "(default: fresh each run)")
    play.add_argument("--gui", action="store_true",
                      help="play in a window: click a cell (needs the render extra, pygame-ce)")
    add_board(play)
    play.set_defaults(run=play_command)


def play_command(args: argparse.Namespace) -> int:
    rules = args.board
    name = args.opponent or default_opponent(rules)
    players = players_for([name], rules, "play")
    if players is None:
        return 2
    match = Match(players[0], name, rules, np.random.default_rng(args.seed), args.mark)
    if args.gui:
        return _play_in_window(match)
    _line_editing()
    print(introduction(rules))
    print(board_text(game.EMPTY_BOARD, rules))
    return match.play_in_terminal()


def _play_in_window(match: Match) -> int:
    try:
        from gym_tictactoe.cli import gui

        return gui.play_in_window(match)
    except DependencyNotInstalled as error:
        print(f"gym-tictactoe play: error: {error}", file=sys.stderr)
        return EXIT_MISSING_EXTRA


def _line_editing() -> None:
    """Give input() line editing and history (arrows, Ctrl-A...) on a terminal."""
    if sys.stdin.isatty():
        # Importing readline is what hooks it into input(); Windows has none (plain input()).
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401


def introduction(rules: game.Rules) -> str:
    last = rules.n_cells - 1
    if notation.compact(rules.shape):
        return (f"{rules.name}: {rules.win_length} in a row wins. Type a cell as its column "
                f"letter and row number, as on the board's edges ("
                f"{notation.centre_phrase(rules.shape)}), or 'row col' "
                f"from 0 at the top left, or its number 0-{last}; q quits.")
    return (f"{rules.name}: {rules.win_length} in a row wins. Cells are numbered 0-{last}, row "
            f"by row, as on the empty board below; type a cell or 'row col' (from 0); q quits.")


def _centre(rules: game.Rules) -> int:
    return notation.centre_cells(rules.shape)[0]


class Match:
    """Games between the person and one opponent, seats swapped on request, score kept."""

    def __init__(self, opponent: Opponent, name: str, rules: game.Rules,
                 rng: np.random.Generator, mark: str = "X") -> None:
        self.opponent, self.name, self.rules, self.rng = opponent, name, rules, rng
        self.human = game.MARKS[mark]
        self.score: Counter[str] = Counter()
        self.colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")

    @property
    def names(self) -> dict[int, str]:
        return {self.human: "you", game.X + game.O - self.human: self.name}

    def swap(self) -> None:
        self.human = game.X + game.O - self.human

    def play(self, human: Any, on_move) -> game.Code:
        """One game, ``human`` moving for the person; the final position (tallied)."""
        other = game.X + game.O - self.human
        final = play_game({self.human: human, other: self.opponent}, self.rng, on_move,
                          rules=self.rules)
        won = self.rules.winner(final)
        self.score["draws" if won == game.NO_WINNER else self.names[won]] += 1
        return final

    def score_line(self) -> str:
        return (f"Score: you {self.score['you']}, {self.name} {self.score[self.name]}, "
                f"draws {self.score['draws']}.")

    def play_in_terminal(self) -> int:
        while True:
            try:
                self._terminal_game()
            except EOFError:  # stdin closed or Ctrl-D: leave quietly, nothing went wrong
                print("\nNo more input: game abandoned.")
                return 0
            except Quit:
                print("Game abandoned.")
                return 0
            try:
                again = _ask_again()
            except (EOFError, Quit):
                print("Bye.")
                return 0
            if again == "swap":
                self.swap()

    def _terminal_game(self) -> None:
        rules, names = self.rules, self.names
        print(f"\nYou are {game.MARK_NAMES[self.human]}, playing {self.name}.")

        def show(code: game.Code, mark: int, cell: int) -> None:
            where = notation.cell_name(cell, rules.shape)
            if mark == self.human and not rules.is_terminal(code):
                print(f"you ({game.MARK_NAMES[mark]}) played {where}.")  # the reply shows it
                return
            print(f"\n{names[mark]} ({game.MARK_NAMES[mark]}) played {where}:\n"
                  f"{board_text(code, rules, cell, self.colour)}")

        final = self.play(HumanPlayer(rules), show)
        print(f"\n{result_line(final, names, rules)}\n{self.score_line()}")


def _ask_again() -> str:
    """"same" or "swap" for another game; Quit when the person is done."""
    while True:
        text = input("Another game? Enter: same seats, s: swap seats, q: quit: ")
        answer = AGAIN.get(text.strip().lower())
        if answer == "quit":
            raise Quit
        if answer is not None:
            return answer
        print(f"  {text.strip()!r}: press Enter for the same seats, s to swap, q to quit")


class HumanPlayer:
    """The person at the terminal, as an opponent: asks ``input()`` until a legal cell or q."""

    def __init__(self, rules: game.Rules) -> None:
        self.rules = rules

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        shape = self.rules.shape
        prompt = (f"a cell such as {notation.cell_name(_centre(self.rules), shape)}"
                  if notation.compact(shape) else f"0-{self.rules.n_cells - 1}")
        while True:
            text = input(f"Your move ({game.MARK_NAMES[mark]}), {prompt} or q to quit: ")
            if text.strip().lower() in QUIT_WORDS:
                raise Quit
            try:
                return parse_cell(text, board, self.rules)
            except ValueError as reason:
                print(f"  {reason}")


def parse_cell(text: str, board: Any, rules: game.Rules) -> int:
    """The cell typed (a number, 'row col' or 'h8', ``notation``) if it is free on ``board``
    (a position code or its cells), or ValueError saying why it can't be played."""
    cell = notation.parse_cell(text, rules.shape)
    cells = rendering.board_cells(board, rules.shape)
    if cells[cell] != game.EMPTY:
        owner, name = game.MARK_NAMES[int(cells[cell])], notation.cell_name(cell, rules.shape)
        if notation.compact(rules.shape):
            raise ValueError(f"{name} is taken by {owner}: choose an empty cell (a dot)")
        free = " ".join(map(str, np.flatnonzero(cells == game.EMPTY).tolist()))
        raise ValueError(f"{name} is taken by {owner}: free cells are {free}")
    return cell


def board_text(code: game.Code, rules: game.Rules, last: int | None = None,
               colour: bool = False) -> str:
    """The board a person reads: the env's ansi render (``last``: the last move's cell)."""
    return rendering.ansi(rules.decode(code), rules.shape, last=last,
                          win_length=rules.win_length, colour=colour).rstrip("\n")


#END

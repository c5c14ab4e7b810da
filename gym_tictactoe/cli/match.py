"""One game between two players, as the command line plays it (``play``, ``arena``, ``evaluate
A B``), the exit codes, and the result of a game in words."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gym_tictactoe import game
from gym_tictactoe.checks import check_int
from gym_tictactoe.game import notation
from gym_tictactoe.game.positions import Position, code_of, new_position
from gym_tictactoe.players.opponents import Opponent
from gym_tictactoe.players.protocol import as_player

EXIT_INTERRUPTED = 130  # the shell's convention for a process ended by SIGINT
EXIT_MISSING_EXTRA = 1
RESULTS = {game.X: "X", game.O: "O", game.NO_WINNER: "draw"}
MoveCallback = Callable[[game.Code, int, int], None]


class Quit(Exception):
    """The person typed q or quit (or closed the window)."""


def play_game(
    players: dict[int, Opponent], rng: np.random.Generator, on_move: MoveCallback | None = None,
    *, rules: game.Rules, opening: int = 0,
) -> game.Code:
    """One game from the empty board between ``players[X]`` and ``players[O]``; the last position.

    ``on_move(code, mark, cell)`` is called after every move (the play command shows the board).
    ``opening``: the first plies are uniformly random legal moves from ``rng`` (the arena's
    ``--opening``), so that two deterministic players meet in more than one game; an opening
    never ends the game (see :func:`opening_move`).
    """
    opening = check_opening(opening, rules)
    seats = {mark: as_player(player, rules) for mark, player in players.items()}
    for player in seats.values():
        player.reset(rng)
    position, ply = new_position(rules), 0
    while not position.terminal:
        mark = position.mark
        cell = opening_move(position, rng) if ply < opening else None
        if cell is None:
            opening = 0  # every move would end the game: the players take over from here
            cell = int(seats[mark].move(position, rng))
        ply += 1
        if not (0 <= cell < rules.n_cells and position.play(cell)):
            raise ValueError(f"move {cell!r} is not legal here; legal moves: "
                             f"{np.flatnonzero(position.mask()).tolist()}")
        if on_move is not None:
            on_move(code_of(position), mark, cell)
    return code_of(position)


def check_opening(opening: int, rules: game.Rules) -> int:
    """``opening`` (random plies) if it leaves the game on ``rules`` undecided, at most one ply
    short of a full board; else a ValueError of one line naming the allowed range."""
    return check_int(opening, "opening", 0, rules.n_cells - 1,  # type: ignore[return-value]
                     note=f" on {rules.name} (random plies that leave the game undecided: "
                          f"fewer than its {rules.n_cells} cells)")


def opening_move(position: Position, rng: np.random.Generator) -> int | None:
    """A uniformly random legal move that does not end the game (a move that would win or fill
    the board is left out), or None where every legal move would end it. Where none would, the
    draw is the one a plain random move takes, so seeded openings stay as they were."""
    moves = np.flatnonzero(position.mask())
    quiet = [cell for cell in moves.tolist() if not _ends(position, cell)]
    return int(rng.choice(quiet)) if quiet else None


def _ends(position: Position, cell: int) -> bool:
    position.play(cell)
    ended = position.terminal
    position.undo(cell)
    return ended


def result_line(code: game.Code, names: dict[int, str], rules: game.Rules) -> str:
    """"You win", "You lose" or "Draw", with the winning line's cells."""
    won = rules.winner(code)
    if won == game.NO_WINNER:
        return "Draw: the board is full."
    lines = notation.winning_lines(rules.decode(code), rules)
    cells = " ".join(notation.cell_name(cell, rules.shape) for cell in lines[0])
    if names[won] == "you":
        return f"You win: {cells} in a row."
    if "you" in names.values():
        return f"You lose: {names[won]} ({game.MARK_NAMES[won]}) has {cells} in a row."
    return f"{names[won]} ({game.MARK_NAMES[won]}) wins: {cells} in a row."

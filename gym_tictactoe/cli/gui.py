"""``python -m gym_tictactoe play --gui``: the game in the ``human`` render's pygame window.

The person clicks an empty cell; a strip of text under the board says whose move it is, then the
result and what to do next, and the window's title says the same with the running score; the
picture marks the last move and the winning line (``picture``). After a game a click plays
another in the same seats, ``s`` swaps them, ``q``, Escape or closing the window quits. Results
and the score are printed in the terminal too.

Events come from ``next_event`` (pygame's ``event.wait`` by default), so tests drive the window
headless: SDL's dummy video driver, clicks posted to pygame's queue.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from gym_tictactoe import game
from gym_tictactoe.cli.match import Quit, result_line
from gym_tictactoe.envs import picture, rendering

AGAIN_HINT = "click: another game, s: swap seats, q: quit"
HIDDEN_DRIVERS = ("offscreen", "dummy")  # SDL drivers that show nothing
NO_DISPLAY = ("gym-tictactoe play: error: no display to open a window on ({why}): set DISPLAY, "
              "or play in the terminal without --gui")
STATUS_ROWS = 4  # lines of text under the board: a wrapped result and the hint
FONT_SIZES = range(20, 9, -2)  # pixels; the first whose wrapped text fits the strip


class Match(Protocol):
    """What the window asks of the play command's match (``play.Match``, which imports this
    module for its window: named here by its shape, so the import goes one way)."""

    rules: game.Rules
    human: int

    @property
    def names(self) -> dict[int, str]: ...

    def play(self, human: Any, on_move: Any) -> game.Position: ...

    def score_line(self) -> str: ...

    def swap(self) -> None: ...


def _no_display() -> bool:
    """Whether a Unix desktop-less session has no display to show a window on. Checked before
    SDL starts, which would print its own complaint (about XDG_RUNTIME_DIR) before ours."""
    if os.environ.get("SDL_VIDEODRIVER") or sys.platform in ("win32", "darwin"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _invisible(pygame: Any) -> bool:
    """Whether SDL found no display and fell back to a driver that shows nothing, unasked (the
    tests ask for the dummy one through SDL_VIDEODRIVER)."""
    driver = pygame.display.get_driver()
    return driver in HIDDEN_DRIVERS and os.environ.get("SDL_VIDEODRIVER") != driver


class WindowGame:
    """The window and the position it shows; ``next_event(self)`` is asked for each event."""

    def __init__(self, match: Match, next_event: Callable[[WindowGame], Any] | None = None,
                 window: rendering.Window | None = None) -> None:
        self.match, self.rules = match, match.rules
        self.window = window or rendering.Window(fps=60)
        self.pygame = self.window.pygame
        self.cell_size = picture.default_cell_size(self.rules.shape)
        self.layout = picture.layout(self.rules.shape, self.cell_size)
        self._next_event = next_event or (lambda _: self.pygame.event.wait())
        self.code: game.Code = game.EMPTY_BOARD
        self.last: int | None = None
        self.status: list[str] = []  # the paragraphs of text under the board

    def frame(self) -> npt.NDArray[np.uint8]:
        """The picture of the position now, the status text under it."""
        board = rendering.rgb_array(self.rules.decode(self.code), shape=self.rules.shape,
                                    cell_size=self.cell_size, last=self.last,
                                    win_length=self.rules.win_length)
        return np.vstack([board, status_strip(self.pygame, self.status, self.layout.width)])

    def show(self, status: str, hint: str = "") -> None:
        self.status = [status, hint] if hint else [status]
        self.window.set_caption(f"{self.rules.name}: {' '.join(self.status)} | "
                                f"{self.match.score_line()}")
        self.window.show(self.frame())

    def event(self) -> Any:
        """The next event; Quit when the window is closed or q / Escape is pressed."""
        pygame = self.pygame
        event = self._next_event(self)
        if event.type == pygame.QUIT or (
                event.type == pygame.KEYDOWN and event.key in (pygame.K_q, pygame.K_ESCAPE)):
            raise Quit
        return event

    def click(self) -> int | None:
        """The cell clicked (None for a click off the board or another event)."""
        event = self.event()
        if event.type == self.pygame.MOUSEBUTTONDOWN and event.button == 1:
            return self.layout.cell_at(*event.pos)
        return None

    def play_one(self) -> game.Code:
        """One game in the window; the final position."""
        self.code, self.last = game.EMPTY_BOARD, None
        names, human = self.match.names, self.match.human
        self.show(f"you are {game.MARK_NAMES[human]}")

        def on_move(code: game.Code, mark: int, cell: int) -> None:
            self.code, self.last = code, cell
            waiting = mark == human and not self.rules.is_terminal(code)
            self.show(f"{names[game.X + game.O - human]} is thinking..." if waiting else
                      f"your move ({game.MARK_NAMES[human]})")

        return self.match.play(WindowPlayer(self), on_move)

    def again(self) -> str:
        """"same" or "swap" after a game, from a click or the s key."""
        pygame = self.pygame
        while True:
            event = self.event()
            if event.type == pygame.MOUSEBUTTONDOWN:
                return "same"
            if event.type == pygame.KEYDOWN and event.key == pygame.K_s:
                return "swap"


class WindowPlayer:
    """The person at the window, as an opponent: the first click on an empty cell."""

    def __init__(self, window_game: WindowGame) -> None:
        self.window_game = window_game

    def act(self, board: npt.NDArray[np.int8], mark: int, rng: np.random.Generator) -> int:
        cells = np.asarray(board).ravel()
        if self.window_game.last is None:  # the first move of a game: the window shows it
            self.window_game.show(f"your move ({game.MARK_NAMES[mark]})")
        while True:
            cell = self.window_game.click()
            if cell is not None and cells[cell] == game.EMPTY:
                return cell


def play_in_window(match: Match, next_event: Callable[[WindowGame], Any] | None = None) -> int:
    """Games in a window until the person quits; the exit code (0, or 1 with no display)."""
    if _no_display():
        print(NO_DISPLAY.format(why="neither DISPLAY nor WAYLAND_DISPLAY is set"),
              file=sys.stderr)
        return 1
    window_game = WindowGame(match, next_event)
    try:
        window_game.show("opening")
        if _invisible(window_game.pygame):
            print(NO_DISPLAY.format(why="SDL fell back to its offscreen driver"), file=sys.stderr)
            return 1
        while True:
            final = window_game.play_one()
            result = result_line(final, match.names, match.rules)
            print(f"{result} {match.score_line()}", flush=True)
            window_game.show(result, AGAIN_HINT)
            if window_game.again() == "swap":
                match.swap()
    except Quit:
        print(f"Bye. {match.score_line()}")
        return 0
    finally:
        window_game.window.close()


def status_strip(pygame: Any, paragraphs: list[str], width: int) -> npt.NDArray[np.uint8]:
    """``paragraphs`` as centred lines of text on the picture's background, ``STATUS_ROWS``
    lines high whatever they say (the window keeps its size), in pygame's own font at the
    largest size whose word-wrapped lines fit."""
    if not pygame.font.get_init():
        pygame.font.init()
    for size in FONT_SIZES:
        font = pygame.font.Font(None, size)
        lines = [line for text in paragraphs for line in _wrap(font, text, width - size)]
        if len(lines) <= STATUS_ROWS:
            break
    height = STATUS_ROWS * pygame.font.Font(None, FONT_SIZES[0]).get_linesize()
    surface = pygame.Surface((width, height))
    surface.fill(picture.BACKGROUND)
    step = font.get_linesize()
    top = (height - len(lines[:STATUS_ROWS]) * step) // 2
    for row, line in enumerate(lines[:STATUS_ROWS]):
        text = font.render(line, True, picture.GRID_COLOUR, picture.BACKGROUND)
        surface.blit(text, ((width - text.get_width()) // 2, top + row * step))
    return pygame.surfarray.array3d(surface).swapaxes(0, 1)


def _wrap(font: Any, text: str, width: int) -> list[str]:
    """``text`` in lines of whole words no wider than ``width`` pixels (a longer word alone)."""
    lines: list[str] = []
    for word in text.split():
        if lines and font.size(f"{lines[-1]} {word}")[0] <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines
